"""Experiment E5 of Drumwright (seed 003, §5.4, Fig. 6): a pendulum hitting
a soft range-of-motion limit.

A revolute pendulum (θ = 0 hanging down, the limit θ ≥ 0 with K = 1e12
N·m/rad, B = 0; m = 1 kg at L = 1 m, a small rotational inertia 1e-4 kg·m²,
M̂ ≈ mL²), started at the moment of impact with the speed of a fall from
θ = π/2 (notes E5: the smallest h stays affordable), run by
``mb.Simulator(..., contact_solver="drumwright")`` until it leaves the
limit. The effective restitution e is the exit speed over the impact
speed. Oracles:

* the max law advanced by implicit Euler on the linear contact subsystem
  (Drumwright eqs. 68 and 13–14: ``v₁ = (v₀ − hω²x₀)/(1 + (ωh)²)`` while
  ``x₀ + h v₁ < 0``, else free), a two-line recurrence: the simulator must
  agree to round-off (gravity's torque at θ ≈ 0 is ~mgLθ, negligible);
* the notes' continuous estimate e ≈ (1 + (ωh)²)^(−π/(2·atan(ωh))), which
  counts a fractional number of steps in contact: within 5% for ωh ≤ 1,
  34% off at ωh = 10 (h = 1e-5, the contact lasts two steps).

"For h ≥ 1e-5 the impact looks dead" (the paper): e = 0.0097. Restitution
rises towards 1 as h → 0 with 1 − e ≈ (π/2)ωh.

Run: ``.venv/bin/python experiments/drumwright/e5_range_limit.py [--out DIR]``.
"""

import numpy as np

import multibody as mb

import drumwright_common

MASS, LENGTH, INERTIA, GRAVITY, STIFFNESS = 1.0, 1.0, 1e-4, 9.81, 1e12
STEPS = (1e-5, 1e-6, 1e-7, 1e-8)


def pendulum():
    b = mb.ModelBuilder(gravity=(0.0, 0.0, -GRAVITY))
    b.add_body("bob", joint="revolute", axis=(0, 1, 0), mass=MASS, com=(0, 0, -LENGTH),
               inertia=np.eye(3) * INERTIA, lower=0.0, upper=3.0)
    return b.build()


def impact_speed(model):
    """θ̇ at θ = 0 after a fall from rest at θ = π/2 (energy: ½M̂θ̇² = mgL)."""
    Mhat = mb.crba(model, model.neutral())[0, 0]
    return np.sqrt(2.0 * MASS * GRAVITY * LENGTH / Mhat)


def simulate(h, stiffness=STIFFNESS, damping=0.0, model=None, max_steps=100000):
    """(e, steps, trajectory θ) of one impact."""
    model = pendulum() if model is None else model
    sim = mb.Simulator(model, dt=h, contact_solver="drumwright",
                       contact_model=mb.Compliance(limit_stiffness=stiffness, limit_damping=damping))
    w0 = impact_speed(model)
    sim.reset(np.zeros(1), np.array([-w0]))  # θ decreasing towards the limit θ = 0
    theta = [0.0]
    for k in range(1, max_steps + 1):
        s = sim.step()
        theta.append(s.q[0])
        if s.q[0] > 0.0 and s.v[0] > 0.0:
            return s.v[0] / w0, k, np.array(theta)
    raise RuntimeError(f"the pendulum did not leave the limit within {max_steps} steps")


def recurrence(h, omega):
    """The max law under implicit Euler on ẍ = −ω²x, from x = 0, v = −1: the
    exit velocity (the restitution) and the number of steps."""
    x, v, k = 0.0, -1.0, 0
    while True:
        k += 1
        pressed = (v - h * omega * omega * x) / (1.0 + (omega * h) ** 2)
        if x + h * pressed < 0.0:  # the spring is compressed at the end of the step: λ > 0
            v = pressed
        x += h * v
        if x > 0.0 and v > 0.0:
            return v, k


def continuous_estimate(h, omega):
    """The notes' e ≈ (1 + (ωh)²)^(−π/(2·atan(ωh)))."""
    x = omega * h
    return (1.0 + x * x) ** (-np.pi / (2.0 * np.arctan(x)))


def main(argv=None):
    parser = drumwright_common.parser(__doc__)
    args = parser.parse_args(argv)
    model = pendulum()
    omega = np.sqrt(STIFFNESS / mb.crba(model, model.neutral())[0, 0])
    fig, axes = drumwright_common.subplots(1, 2, figsize=(11, 4))
    print(f"{'h':>8} {'omega h':>8} {'steps':>6} {'e (sim)':>10} {'recurrence':>11} {'estimate':>10}")
    es = []
    for h in STEPS:
        e, k, theta = simulate(h, model=model)
        r, _ = recurrence(h, omega)
        c = continuous_estimate(h, omega)
        es.append(e)
        print(f"{h:8.0e} {omega * h:8.3g} {k:6d} {e:10.5f} {r:11.5f} {c:10.5f}")
        t = np.arange(theta.size) * h
        axes[0].plot(t / (np.pi / omega), theta / (impact_speed(model) / omega), label=f"h = {h:g}")
    hs = np.logspace(-9, -4.5, 50)
    axes[1].loglog(hs, [1 - continuous_estimate(h, omega) for h in hs], "k--", label="1 − estimate")
    axes[1].loglog(STEPS, 1 - np.array(es), "o", label="1 − e (simulator)")
    axes[0].set(xlabel="t / (π/ω)", ylabel="θ / (θ̇₀/ω)", title="E5: impact on a soft limit, K = 1e12, B = 0")
    axes[1].set(xlabel="h (s)", ylabel="1 − e", title="E5: lost restitution, linear in h")
    drumwright_common.save(fig, args.out, "e5_range_limit.png", legends=axes)


if __name__ == "__main__":
    main()
