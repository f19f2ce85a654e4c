"""Experiment E4 of Drumwright (seed 003, §4.4, Fig. 4): the 2-D pendulum
in absolute coordinates held by a stiff bilateral constraint.

The bob has the absolute coordinates q = (x, y, θ) — two prismatic joints
and a revolute one in series, so q̇ = v and M = diag(m, m, I) — and a
spherical loop joint ties its point u = (−L, 0) (body frame) to the world
origin: φ = [x; y] + R(θ)u (the third point row, along z, is identically 0:
a redundant row, harmless here, notes P8). The paper leaves the parameters
out; as in notes/seed-003.md E4: m = 1 kg, L = 1 m, I = 0.01 kg·m²,
g = 9.81 m/s², start horizontal at rest, 1 s, K = 1e15 N/m, B = 1 N·s/m,
solved by ``mb.Simulator(..., contact_solver="drumwright")`` (the loops'
law of :class:`multibody.Compliance`).

Measured: the largest joint deviation max‖φ‖ over the run (O(h²): 9.7e-4,
9.7e-6, 9.7e-8 m at h = 1e-2, 1e-3, 1e-4), bounded at h = 0.1; the
mechanical energy's oscillation (≈ 13·h J; the paper's "maintained to
precisely zero" does not reproduce); with and without the velocity-product
term (``gdot``, pitfall P2). Over 100 s at large h the explicit −M̂Ġv term
can inject energy (notes E4): ``--long`` runs that too.

Run: ``.venv/bin/python experiments/drumwright/e4_pendulum.py [--out DIR]``
(default out/drumwright/): prints the table, writes ``e4_pendulum.png``.
"""

import numpy as np

import multibody as mb

import drumwright_common

MASS, LENGTH, INERTIA, GRAVITY = 1.0, 1.0, 0.01, 9.81
STIFFNESS, DAMPING = 1e15, 1.0


def pendulum():
    """The pendulum model in absolute coordinates (module docstring)."""
    b = mb.ModelBuilder(gravity=(0.0, -GRAVITY, 0.0))
    b.add_body("slide_x", joint="prismatic", axis=(1, 0, 0))
    b.add_body("slide_y", parent="slide_x", joint="prismatic", axis=(0, 1, 0))
    b.add_body("bob", parent="slide_y", joint="revolute", axis=(0, 0, 1), mass=MASS,
               inertia=np.eye(3) * INERTIA)
    pivot = np.eye(4)
    pivot[0, 3] = -LENGTH
    b.add_loop_joint("world", "bob", "spherical", placement_b=pivot, name="pivot")
    return b.build()


def mechanical_energy(q, v):
    """½(m(ẋ² + ẏ²) + Iθ̇²) + m g y (J), without the constraint's spring."""
    return 0.5 * (MASS * (v[0] ** 2 + v[1] ** 2) + INERTIA * v[2] ** 2) + MASS * GRAVITY * q[1]


def run(h, duration=1.0, gdot=True, stiffness=STIFFNESS, damping=DAMPING, model=None):
    """Simulate; returns dict(t, phi (max |φ| per step), energy)."""
    model = pendulum() if model is None else model
    sim = mb.Simulator(model, dt=h, contact_solver="drumwright",
                       contact_model=mb.Compliance(loop_stiffness=stiffness, loop_damping=damping, gdot=gdot))
    q0 = model.neutral()
    q0[0] = LENGTH
    sim.reset(q0)
    n = int(round(duration / h))
    phi, energy = np.empty(n + 1), np.empty(n + 1)
    phi[0], energy[0] = 0.0, mechanical_energy(sim.state.q, sim.state.v)
    for k in range(1, n + 1):
        s = sim.step()
        phi[k] = np.abs(sim.system.constraints.evaluate(s.q)[0]).max()
        energy[k] = mechanical_energy(s.q, s.v)
    return dict(t=np.arange(n + 1) * h, phi=phi, energy=energy)


def main(argv=None):
    parser = drumwright_common.parser(__doc__)
    parser.add_argument("--long", action="store_true", help="also 100 s at h = 0.05 and 0.01, with and without gdot")
    args = parser.parse_args(argv)
    fig, axes = drumwright_common.subplots(1, 2, figsize=(11, 4))
    print(f"{'h':>8} {'gdot':>5} {'max|phi| (m)':>13} {'energy swing (J)':>17}")
    for h in (1e-1, 1e-2, 1e-3, 1e-4):
        for gdot in (True, False):
            r = run(h, gdot=gdot)
            swing = r["energy"].max() - r["energy"].min()
            print(f"{h:8.0e} {str(gdot):>5} {r['phi'].max():13.3e} {swing:17.3e}")
            if gdot:
                axes[0].semilogy(r["t"][1:], np.maximum(r["phi"][1:], 1e-18), label=f"h = {h:g}")
                axes[1].plot(r["t"], r["energy"] - r["energy"][0], label=f"h = {h:g}")
    if args.long:
        for h in (0.05, 0.01):
            for gdot in (True, False):
                try:
                    r = run(h, duration=100.0, gdot=gdot)
                    print(f"100 s, h = {h}, gdot = {gdot}: max|phi| {r['phi'].max():.3e}, energy "
                          f"{r['energy'][0]:.3f} -> {r['energy'][-1]:.3f} J")
                except mb.MultibodyError as e:
                    print(f"100 s, h = {h}, gdot = {gdot}: {e}")
    axes[0].set(xlabel="t (s)", ylabel="max |φ| (m)", title="E4: joint deviation, K = 1e15, B = 1")
    axes[1].set(xlabel="t (s)", ylabel="E − E₀ (J)", title="E4: mechanical energy")
    drumwright_common.save(fig, args.out, "e4_pendulum.png", legends=axes)


if __name__ == "__main__":
    main()
