"""Experiment E7 of Drumwright (seed 003, §6.4, Fig. 9): a block on a 15°
incline standing on four Hertzian feet, with Coulomb friction in the true
cone.

The RPI-MATLAB-Simulator's "sliding block" as the paper describes it: 1 kg,
0.1 × 0.2 × 0.05 m, four rigid spherical feet of radius r = 0.01 m at the
bottom corners on an elastic half-space with E* = 100 GPa (K_n = E*√r, φ_n
= d^{3/2}: ``mb.Compliance(stiffness=1e11, hertz=True)``, the secant form of
notes P7), B_n = 1 N·s/m, memoryless friction K_t = 0 with B_t = 10⁶/h, h =
0.01 s, g = 9.8 m/s², 1 s, μ ∈ {0, 0.125, 0.25, 0.375}. The block starts at
rest with its feet at the static Hertz depth (N = mg cos θ / 4 per foot).

The paper's objective weight ζ = 1/h belongs to its single QP/SOCP, whose
λ_n may exceed the max law (pitfall P6: a sliding block hops); the
simulator solves the max law for the normal impulses and maximal
dissipation in their cone instead (docs/drumwright.md), so ζ does not enter.
The script also runs the paper's program (``Compliance(formulation=
"paper")``) at μ = 0.125: the block leaves the slope by most of a metre.

Reference: Coulomb's ½g(sin θ − μ cos θ)t² = 1.268, 0.677, 0.085, 0 m.

Run: ``.venv/bin/python experiments/drumwright/e7_incline.py [--out DIR]``.
"""

import numpy as np

import multibody as mb

import drumwright_common

MASS, SIZE, RADIUS, MODULUS, GRAVITY, ANGLE, H = 1.0, (0.1, 0.2, 0.05), 0.01, 1e11, 9.8, np.radians(15.0), 0.01
FRICTIONS = (0.0, 0.125, 0.25, 0.375)


def rotation_y(angle):
    c, s = np.cos(angle), np.sin(angle)
    return np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])


def block(mu):
    """(model, q0, R): the block (body "block", free) on the incline through
    the origin tilted by ANGLE about y (downhill: the slope's −x), feet at
    the static Hertz depth; R the slope's rotation."""
    R = rotation_y(ANGLE)
    a, c, t = SIZE
    b = mb.ModelBuilder(gravity=(0.0, 0.0, -GRAVITY))
    inertia = MASS / 12.0 * np.diag([c * c + t * t, a * a + t * t, a * a + c * c])
    b.add_body("block", joint="free", mass=MASS, inertia=inertia)
    for i, (x, y) in enumerate(((1, 1), (1, -1), (-1, 1), (-1, -1))):
        b.add_geometry("block", "sphere", (RADIUS,), placement=(np.eye(3), np.array([x * a / 2, y * c / 2, -t / 2])),
                       name=f"foot{i}", friction=(mu, 0.0, 0.0))
    b.add_geometry("world", "plane", placement=(R, np.zeros(3)), name="slope", friction=(mu, 0.0, 0.0))
    model = b.build()
    depth = (MASS * GRAVITY * np.cos(ANGLE) / 4 / (MODULUS * np.sqrt(RADIUS))) ** (2.0 / 3.0)
    q0 = model.neutral()
    q0[:3] = R @ np.array([0.0, 0.0, t / 2 + RADIUS - depth])
    q0[3:7] = np.cos(ANGLE / 2), 0.0, np.sin(ANGLE / 2), 0.0
    return model, q0, R


def coulomb_distance(mu, t=1.0):
    """½g(sin θ − μ cos θ)t², 0 when μ ≥ tan θ (m)."""
    return max(0.0, 0.5 * GRAVITY * (np.sin(ANGLE) - mu * np.cos(ANGLE)) * t * t)


def run(mu, duration=1.0, h=H, formulation="max_law"):
    """Simulate; returns dict(t, downhill distance, height above the start
    along the slope's normal, total normal force and the largest friction
    force of a foot, PGS sweeps per step). ``formulation="paper"``: the
    paper's QP/SOCP with ζ = 1/h (clarabel, each step)."""
    model, q0, R = block(mu)
    sim = mb.Simulator(model, dt=h, q0=q0, contact_solver="drumwright",
                       contact_model=mb.Compliance(stiffness=MODULUS, damping=1.0, hertz=True,
                                                   formulation=formulation),
                       contact_iterations=20000)
    n = int(round(duration / h))
    out = {k: np.zeros(n + 1) for k in ("distance", "height", "normal", "friction", "sweeps")}
    for k in range(1, n + 1):
        s = sim.step()
        local = R.T @ (s.q[:3] - q0[:3])  # the slope's +x points downhill
        out["distance"][k], out["height"][k] = local[0], local[2]
        out["sweeps"][k] = sim.contact.iterations
        for c in sim.contact.contacts():  # the foot's share: geom 2 receives +impulse
            sign = 1.0 if c.geom2.startswith("foot") else -1.0
            out["normal"][k] += sign * c.impulse[0] / h
            out["friction"][k] = max(out["friction"][k], np.hypot(c.impulse[1], c.impulse[2]) / h)
    out["t"] = np.arange(n + 1) * h
    return out


def main(argv=None):
    parser = drumwright_common.parser(__doc__)
    args = parser.parse_args(argv)
    fig, axes = drumwright_common.subplots(1, 2, figsize=(11, 4))
    print(f"{'mu':>6} {'distance (m)':>13} {'Coulomb (m)':>12} {'ratio':>7} {'max lift (m)':>13} "
          f"{'normal (N)':>11} {'max |f_t| (N)':>14} {'sweeps':>7}")
    for mu in FRICTIONS:
        r = run(mu)
        ref = coulomb_distance(mu)
        ratio = r["distance"][-1] / ref if ref > 0 else float("nan")
        print(f"{mu:6.3f} {r['distance'][-1]:13.6g} {ref:12.4f} {ratio:7.4f} {r['height'].max():13.3e} "
              f"{r['normal'][-1]:11.4f} {r['friction'].max():14.4g} {int(r['sweeps'].max()):7d}")
        axes[0].plot(r["t"], r["distance"], label=f"μ = {mu}")
        axes[0].plot(r["t"], [coulomb_distance(mu, t) for t in r["t"]], "k:", lw=0.8)
        axes[1].plot(r["t"][1:], r["normal"][1:], label=f"μ = {mu}")
    paper = run(0.125, formulation="paper")
    print(f"the paper's QP/SOCP (zeta = 1/h), mu = 0.125: distance {paper['distance'][-1]:.4g} m, max lift "
          f"{paper['height'].max():.3g} m, max normal force {paper['normal'].max():.4g} N (pitfall P6)")
    axes[0].plot(paper["t"], paper["height"], "r--", label="lift, paper's QP, μ = 0.125")
    axes[0].set(xlabel="t (s)", ylabel="distance downhill (m)", title="E7: block on a 15° incline (dotted: Coulomb)")
    axes[1].set(xlabel="t (s)", ylabel="total normal force (N)", title=f"E7: normal force (mg cos θ = "
                f"{MASS * GRAVITY * np.cos(ANGLE):.3f} N)")
    drumwright_common.save(fig, args.out, "e7_incline.png", legends=axes)


if __name__ == "__main__":
    main()
