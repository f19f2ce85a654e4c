"""Experiments E1–E3 of Drumwright, "An Unconditionally Stable First-Order
Constraint Solver for Multibody Systems" (seed 003, §3.1, Figs 1–3), plus the
library's own ``semi_implicit_euler`` on a real 1-DOF model.

The system is the spring–mass–damper ``m ẍ + b ẋ + k x = f`` with m = 1 and
f = 0, i.e. ``y = [x, v]`` and ``y₁ = A y₀`` for each scheme:

* E1, explicit Euler (§3.1.1), h = 1e-5, k = 1e6, b ∈ {1, 10, 2e5, 2.1e5};
* E2, the paper's semi-implicit Euler (§3.1.2, damping implicit),
  h = 1e-3, b = 1, k ∈ {1e6, 1e7};
* E3, implicit Euler (§3.1.3), k = 1e6, b = 0, h ∈ {1e-5, 1e-2};
* the library: ``mb.Simulator(model, h, "semi_implicit_euler")`` on a 1 kg
  prismatic slider whose joint spring k and joint damper b are the model's
  own fields (``ModelBuilder.add_body(stiffness=k, damping=b)``), gravity off.
  That integrator takes the damping explicitly (``v⁺ = v + h v̇(q, v)``), so
  its bound is ``h²k/m < 4 − 2hb/m``, not the paper's ``4 + 2hb/m``; it is run
  just inside (k = 3.99e6) and just outside (k = 4.0e6) that bound at
  h = 1e-3, b = 1 (k = 4.0e6 lies *inside* the paper's bound 4.002e6).

The paper states neither initial conditions nor durations. Here every run
starts from x0 = 1 m, v0 = 0 and lasts as long as the table's ``steps``
column says (chosen to show decay, or growth without overflow).

"Predicted" is from the spectral radius ρ of the closed-form iteration
matrix (stable ρ < 1, neutral ρ = 1 to 1e-9, unstable ρ > 1); "observed" from
the simulated sequence, growth g = max|x| over the last 10 % of the samples
divided by max|x| over the first 10 % (grows g > 1.05, decays g < 0.95,
bounded otherwise).

Run: ``.venv/bin/python experiments/drumwright/e1_e3_spring.py [--out DIR]``
(default ``out/drumwright/``); prints the table and writes ``e1_e3.png``.
The test ``tests/drumwright/test_e1_e3_spring.py`` loads this file by path
(importlib), so ``experiments/`` needs no ``__init__.py``.
"""
import argparse
import os
import sys

import numpy as np

X0, V0 = 1.0, 0.0  # initial condition of every run (m, m/s); not given by the paper
MASS = 1.0

# ----------------------------------------------------------------------------------------------
# The schemes (one step each, scalar state, force f held over the step)
# ----------------------------------------------------------------------------------------------


def explicit_euler_step(x, v, h, k, b, m=MASS, f=0.0):
    """Explicit Euler, Drumwright §3.1.1–3.1.3 (seed 003), eqs 7–8:
    ``x₁ = x₀ + h v₀``, ``v₁ = v₀ + (h/m)(f − b v₀ − k x₀)``."""
    return x + h * v, v + (h / m) * (f - b * v - k * x)


def semi_implicit_euler_step(x, v, h, k, b, m=MASS, f=0.0):
    """The paper's semi-implicit (symplectic) Euler, Drumwright §3.1.1–3.1.3
    (seed 003), eqs 11–12, damping implicit: ``v₁ = v₀ + (h/m)(f − b v₁ − k x₀)``
    solved as ``v₁ = (v₀ + (h/m)(f − k x₀)) / (1 + h b/m)``, then
    ``x₁ = x₀ + h v₁``. Stable iff ``h²k/m < 4 + 2hb/m`` (b > 0)."""
    v1 = (v + (h / m) * (f - k * x)) / (1.0 + h * b / m)
    return x + h * v1, v1


def explicit_damping_semi_implicit_euler_step(x, v, h, k, b, m=MASS, f=0.0):
    """Semi-implicit Euler with the damping explicit — what the library's
    ``semi_implicit_euler`` does with joint damping (``v⁺ = v + h v̇(q, v)``,
    ``q⁺ = q + h v⁺``); the variant of Drumwright §3.1.1–3.1.3 (seed 003) eq 12
    with ``b v₀`` in place of ``b v₁``:
    ``v₁ = v₀ + (h/m)(f − k x₀ − b v₀)``, ``x₁ = x₀ + h v₁``.

    Derivation of its iteration matrix (f = 0): the velocity update is
    ``v₁ = −(hk/m) x₀ + (1 − hb/m) v₀``; substituting into ``x₁ = x₀ + h v₁``
    gives ``x₁ = (1 − h²k/m) x₀ + h(1 − hb/m) v₀``, so

        A = [[1 − h²k/m, h(1 − hb/m)], [−hk/m, 1 − hb/m]],

    with trace ``T = 2 − h²k/m − hb/m`` and determinant
    ``D = (1 − h²k/m)(1 − hb/m) + (h²k/m)(1 − hb/m) = 1 − hb/m``. A real 2x2
    matrix has both eigenvalues inside the unit circle iff (Jury)
    ``|D| < 1``, ``1 − T + D > 0`` and ``1 + T + D > 0``:
    ``1 − T + D = h²k/m > 0`` always; ``|D| < 1`` iff ``0 < hb/m < 2``; and
    ``1 + T + D = 4 − h²k/m − 2hb/m > 0`` iff ``h²k/m < 4 − 2hb/m``. Compared
    with the paper's implicit damping (``h²k/m < 4 + 2hb/m``) the explicit
    damper *lowers* the stiffness bound by 2hb/m; with b = 0 (D = 1) the
    method is only neutrally stable (|λ| = 1) inside ``h²k/m < 4``."""
    v1 = v + (h / m) * (f - k * x - b * v)
    return x + h * v1, v1


def implicit_euler_step(x, v, h, k, b, m=MASS, f=0.0):
    """Implicit Euler, Drumwright §3.1.1–3.1.3 (seed 003), eqs 13–14:
    ``v₁ = (v₀ + (h/m)(f − k x₀)) / (1 + hb/m + h²k/m)``, ``x₁ = x₀ + h v₁``.
    For b = 0 its eigenvalues have modulus ``1/√(1 + h²k/m)`` (artificial
    damping; 0.0995 per step at h = 1e-2, k = 1e6)."""
    v1 = (v + (h / m) * (f - k * x)) / (1.0 + h * b / m + h * h * k / m)
    return x + h * v1, v1


SCHEMES = {
    "explicit_euler": explicit_euler_step,
    "semi_implicit_euler (paper)": semi_implicit_euler_step,
    "semi_implicit_euler (explicit b)": explicit_damping_semi_implicit_euler_step,
    "implicit_euler": implicit_euler_step,
}


def iteration_matrix(scheme, h, k, b, m=MASS):
    """The closed-form iteration matrix ``A`` (``[x₁, v₁] = A [x₀, v₀]``, f = 0)
    of a scheme, Drumwright §3.1.1–3.1.3 (seed 003): explicit Euler eq 10;
    semi-implicit Euler with ``c = 1/(1 + hb/m)``:
    ``[[1 − c h²k/m, c h], [−c hk/m, c]]``; implicit Euler the same with
    ``c = 1/(1 + hb/m + h²k/m)``; the library's explicit-damping variant as
    derived in :func:`explicit_damping_semi_implicit_euler_step`."""
    if scheme == "explicit_euler":
        return np.array([[1.0, h], [-h * k / m, 1.0 - h * b / m]])
    if scheme in ("semi_implicit_euler (paper)", "implicit_euler"):
        c = 1.0 / (1.0 + h * b / m + (h * h * k / m if scheme == "implicit_euler" else 0.0))
        return np.array([[1.0 - c * h * h * k / m, c * h], [-c * h * k / m, c]])
    if scheme in ("semi_implicit_euler (explicit b)", "library semi_implicit_euler"):
        return np.array([[1.0 - h * h * k / m, h * (1.0 - h * b / m)], [-h * k / m, 1.0 - h * b / m]])
    raise ValueError(f"unknown scheme {scheme!r}")


def spectral_radius(A):
    return float(np.max(np.abs(np.linalg.eigvals(A))))


def classify_rho(rho, tol=1e-9):
    return "stable" if rho < 1.0 - tol else ("unstable" if rho > 1.0 + tol else "neutral")


def simulate(step, h, k, b, steps, x0=X0, v0=V0, m=MASS):
    """``steps`` steps of a scheme from (x0, v0): arrays x, v of steps + 1 samples."""
    x, v = np.empty(steps + 1), np.empty(steps + 1)
    x[0], v[0] = x0, v0
    xi, vi = float(x0), float(v0)
    for n in range(steps):
        xi, vi = step(xi, vi, h, k, b, m)
        x[n + 1], v[n + 1] = xi, vi
    return x, v


def growth(x):
    """max|x| over the last 10 % of the samples / max|x| over the first 10 %."""
    w = max(2, len(x) // 10)
    return float(np.max(np.abs(x[-w:])) / np.max(np.abs(x[:w])))


def classify_growth(g):
    return "grows" if g > 1.05 else ("decays" if g < 0.95 else "bounded")


# ----------------------------------------------------------------------------------------------
# The library on a real model
# ----------------------------------------------------------------------------------------------


def library_slider(k, b, m=MASS):
    """A 1-DOF prismatic slider of mass m (kg) along x, with the model's own
    joint spring (stiffness k N/m about q = 0) and viscous joint damper
    (b N·s/m), gravity off (the model's and the simulator's)."""
    import multibody as mb
    builder = mb.ModelBuilder("drumwright_slider", gravity=(0.0, 0.0, 0.0))
    builder.add_body("block", "world", "prismatic", axis=(1.0, 0.0, 0.0), mass=m, inertia=np.eye(3) * 0.1,
                     damping=b, stiffness=k, spring_reference=0.0)
    return builder.build()


def simulate_library(h, k, b, steps, x0=X0, v0=V0, m=MASS):
    """``steps`` steps of ``mb.Simulator(model, h, "semi_implicit_euler")`` on
    :func:`library_slider`; arrays x, v of steps + 1 samples."""
    import multibody as mb
    sim = mb.Simulator(library_slider(k, b, m), h, "semi_implicit_euler", gravity=False, q0=[x0], v0=[v0])
    traj = sim.rollout(steps=steps)
    return traj.q[:, 0].copy(), traj.v[:, 0].copy()


# ----------------------------------------------------------------------------------------------
# The cases
# ----------------------------------------------------------------------------------------------

# (experiment, scheme, h, k, b, steps)
CASES = [
    ("E1", "explicit_euler", 1e-5, 1e6, 1.0, 100_000),
    ("E1", "explicit_euler", 1e-5, 1e6, 10.0, 100_000),
    ("E1", "explicit_euler", 1e-5, 1e6, 2e5, 100_000),
    ("E1", "explicit_euler", 1e-5, 1e6, 2.1e5, 500),
    ("E2", "semi_implicit_euler (paper)", 1e-3, 1e6, 1.0, 1000),
    ("E2", "semi_implicit_euler (paper)", 1e-3, 1e7, 1.0, 50),
    ("E2'", "semi_implicit_euler (paper)", 1e-3, 3.99e6, 1.0, 2000),
    ("E2'", "semi_implicit_euler (paper)", 1e-3, 4.0e6, 1.0, 2000),
    ("E3", "implicit_euler", 1e-5, 1e6, 0.0, 10_000),
    ("E3", "implicit_euler", 1e-2, 1e6, 0.0, 10),
    ("lib", "library semi_implicit_euler", 1e-3, 1e6, 1.0, 1000),
    ("lib", "library semi_implicit_euler", 1e-3, 1e7, 1.0, 50),
    ("lib", "library semi_implicit_euler", 1e-3, 3.99e6, 1.0, 2000),
    ("lib", "library semi_implicit_euler", 1e-3, 4.0e6, 1.0, 2000),
    # the eigenvalues quoted in notes/seed-003.md C2 (±0.949; −1.051, 0.951; |λ|² ≈ 1.1) are those
    # of h²k/m = 0.1, e.g. k = 1e9 at h = 1e-5, not of the paper's k = 1e6 (h²k/m = 1e-4)
    ("E1*", "explicit_euler", 1e-5, 1e9, 1.0, 200),
    ("E1*", "explicit_euler", 1e-5, 1e9, 2e5, 200),
    ("E1*", "explicit_euler", 1e-5, 1e9, 2.1e5, 200),
]


def run_case(experiment, scheme, h, k, b, steps):
    A = iteration_matrix(scheme, h, k, b)
    rho = spectral_radius(A)
    with np.errstate(over="ignore", invalid="ignore"):
        if scheme == "library semi_implicit_euler":
            x, v = simulate_library(h, k, b, steps)
        else:
            x, v = simulate(SCHEMES[scheme], h, k, b, steps)
    g = growth(x)
    predicted, observed = classify_rho(rho), classify_growth(g)
    expected = {"stable": "decays", "unstable": "grows", "neutral": "bounded"}[predicted]
    return dict(experiment=experiment, scheme=scheme, h=h, k=k, b=b, steps=steps, eig=np.linalg.eigvals(A),
                rho=rho, predicted=predicted, max_x=float(np.max(np.abs(x))), growth=g, observed=observed,
                agree=observed == expected, t=np.arange(steps + 1) * h, x=x, v=v)


def run_all(cases=CASES):
    return [run_case(*c) for c in cases]


def format_table(rows):
    head = (f"{'exp':4} {'scheme':32} {'h':>7} {'k':>8} {'b':>7} {'steps':>6} {'rho':>10} {'predicted':>9} "
            f"{'max|x|':>10} {'growth':>9} {'observed':>8} ok")
    lines = [head, "-" * len(head)]
    for r in rows:
        lines.append(f"{r['experiment']:4} {r['scheme']:32} {r['h']:7.0e} {r['k']:8.3g} {r['b']:7.3g} "
                     f"{r['steps']:6d} {r['rho']:10.6f} {r['predicted']:>9} {r['max_x']:10.3e} "
                     f"{r['growth']:9.2e} {r['observed']:>8} {'yes' if r['agree'] else 'NO'}")
    return "\n".join(lines)


def plot(rows, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    def panel(ax, r, label=None, style="-", color=None):
        big = r["max_x"] > 1e3
        y = np.abs(r["x"]) if big else r["x"]
        ax.plot(r["t"], y, style, lw=0.7, color=color, label=label)
        if big:
            ax.set_yscale("log")
        ax.set_xlabel("t (s)")
        ax.set_ylabel("|x| (m)" if big else "x (m)")

    def title(r):
        return f"{r['experiment']} {r['scheme']}\nh={r['h']:.0e} k={r['k']:.3g} b={r['b']:.3g}  ρ={r['rho']:.5f}"

    by = {(r["experiment"], r["scheme"], r["h"], r["k"], r["b"]): r for r in rows}
    fig = plt.figure(figsize=(18, 12.5))
    gs = fig.add_gridspec(3, 4, hspace=0.65, wspace=0.3)
    # Fig 1: explicit Euler
    for j, b in enumerate((1.0, 10.0, 2e5, 2.1e5)):
        r = by[("E1", "explicit_euler", 1e-5, 1e6, b)]
        ax = fig.add_subplot(gs[0, j])
        panel(ax, r)
        ax.set_title(title(r), fontsize=8)
    # Fig 2: the paper's semi-implicit Euler
    for j, k in enumerate((1e6, 1e7)):
        r = by[("E2", "semi_implicit_euler (paper)", 1e-3, k, 1.0)]
        ax = fig.add_subplot(gs[1, j])
        panel(ax, r)
        ax.set_title(title(r), fontsize=8)
    # the library's semi-implicit Euler against the paper's just inside / outside its bound
    for j, k in enumerate((3.99e6, 4.0e6)):
        lib = by[("lib", "library semi_implicit_euler", 1e-3, k, 1.0)]
        pap = by[("E2'", "semi_implicit_euler (paper)", 1e-3, k, 1.0)]
        ax = fig.add_subplot(gs[1, 2 + j])
        log = max(lib["max_x"], pap["max_x"]) > 1e3
        for r, style, color, label in ((pap, "-", "tab:gray", f"paper (implicit b), ρ={pap['rho']:.5f}"),
                                       (lib, "-", "tab:red", f"library (explicit b), ρ={lib['rho']:.5f}")):
            ax.plot(r["t"], np.abs(r["x"]) if log else r["x"], style, lw=0.6, color=color, label=label)
        if log:
            ax.set_yscale("log")
        ax.set_xlabel("t (s)")
        ax.set_ylabel("|x| (m)" if log else "x (m)")
        ax.legend(fontsize=7, loc="upper left")
        ax.set_title(f"lib: mb.Simulator semi_implicit_euler, h=1e-3 k={k:.3g} b=1\n"
                     f"bounds: library k<3.998e6, paper k<4.002e6", fontsize=8)
    # Fig 3: implicit Euler
    ax = fig.add_subplot(gs[2, :2])
    for h, style, color in ((1e-5, "-", "tab:blue"), (1e-2, "--", "tab:red")):
        r = by[("E3", "implicit_euler", h, 1e6, 0.0)]
        ax.plot(r["t"], r["x"], style, lw=0.8 if h < 1e-3 else 1.5, color=color,
                marker=None if h < 1e-3 else "o", ms=3, label=f"h={h:.0e}, per-step |λ|={r['rho']:.5f}")
    ax.set_xlabel("t (s)")
    ax.set_ylabel("x (m)")
    ax.legend(fontsize=8)
    ax.set_title("E3 implicit Euler, k=1e6, b=0 (amplitude should not attenuate)", fontsize=9)
    ax = fig.add_subplot(gs[2, 2:])
    ax.axis("off")
    ax.text(0, 1, format_table(rows), family="monospace", fontsize=5.2, va="top")
    fig.suptitle(f"Drumwright (seed 003) §3.1, Figs 1–3: m=1, f=0, x0={X0} m, v0={V0} m/s", fontsize=11)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=os.path.join("out", "drumwright"), help="output directory")
    args = parser.parse_args(argv)
    rows = run_all()
    print(f"initial condition x0 = {X0} m, v0 = {V0} m/s; m = {MASS} kg, f = 0; duration = steps * h")
    print(format_table(rows))
    # the library against its closed-form iteration matrix, step by step
    for r in rows:
        if r["scheme"] == "library semi_implicit_euler":
            A = iteration_matrix("semi_implicit_euler (explicit b)", r["h"], r["k"], r["b"])
            y, worst = np.array([X0, V0]), 0.0
            for n in range(1, r["steps"] + 1):
                y = A @ y
                worst = max(worst, abs(r["x"][n] - y[0]) / max(1.0, abs(y[0])))
            Ap = iteration_matrix("semi_implicit_euler (paper)", r["h"], r["k"], r["b"])
            print(f"library k={r['k']:.3g}: max rel. deviation from the explicit-damping matrix A^n y0 = "
                  f"{worst:.1e}; first step x1 = {r['x'][1]:.9f} (explicit b: {A[0] @ [X0, V0]:.9f}, "
                  f"paper's implicit b: {Ap[0] @ [X0, V0]:.9f})")
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, "e1_e3.png")
    plot(rows, path)
    print(f"wrote {path}")
    return 0 if all(r["agree"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
