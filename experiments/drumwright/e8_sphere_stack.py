"""Experiment E8 of Drumwright (seed 003, §6.5, Fig. 10): a stack of up to
100 spheres falls onto the ground and onto each other and comes to rest.

The paper gives E = 1e11 and B = 1 per contact, three rows (n, r, s) per
touching pair, 500 steps of h = 10 ms (5 s), spheres in mid-air, evenly
spaced, perfectly aligned, at rest; nothing else. Chosen here: radius 0.1 m,
1 kg each, 0.05 m gaps between neighbours and above the ground, μ = 0.5,
g = 9.8, the Hertz law with E* = 1e11 Pa (``Compliance(stiffness=1e11,
hertz=True)``: r₁r₂/(r₁+r₂) = 0.05 m between two spheres), B_t = 10⁶/h.
The stack is perfectly aligned and nothing breaks the symmetry, so it
stays a column (physically an unstable equilibrium, as in the paper).

Contacts are made within 0.1 m (``contact_distance``): a speculative row
acts on the deformation the step predicts. With the paper's rule — rows
only for pairs already touching — a sphere arriving at v enters the one
below by v·h before its row exists, and the next step's implicit spring
pushes that overlap out in one step at ≈ v: elastic impacts at any h, and
the 50- and 100-sphere stacks never settled (kinetic energy 600 J and a
sphere thrown 30 m up after 5 s; ``--paper-rule`` shows it).

At rest sphere i (from the bottom, 0-based) sits at (2i + 1)r less the
Hertz compressions under it: contact k carries (N − k) m g, d_k =
(F_k/(E*√r_k))^{2/3}.

Run: ``.venv/bin/python experiments/drumwright/e8_sphere_stack.py [--out DIR]
[--counts 10 20 50 100]``: the settling of the largest stack and the wall
time of 5 s against the number of spheres (the paper's Fig. 10 plot, whose
numbers it does not give).
"""
import time

import numpy as np

import multibody as mb

import drumwright_common

RADIUS, MASS, GAP, MU, MODULUS, GRAVITY, H, DURATION = 0.1, 1.0, 0.05, 0.5, 1e11, 9.8, 0.01, 5.0
REACH = 0.1  # m: contacts within this distance are speculative rows (the top spheres arrive at ~7 m/s, 7 cm a step)


def stack(count):
    """(model, q0): ``count`` free spheres (bodies s0 … from the bottom) above a ground plane."""
    b = mb.ModelBuilder(gravity=(0.0, 0.0, -GRAVITY))
    for i in range(count):
        b.add_body(f"s{i}", joint="free", mass=MASS, inertia=np.eye(3) * 0.4 * MASS * RADIUS ** 2)
        b.add_geometry(f"s{i}", "sphere", (RADIUS,), name=f"s{i}", friction=(MU, 0.0, 0.0))
    b.add_geometry("world", "plane", name="ground", friction=(MU, 0.0, 0.0))
    model = b.build()
    q0 = model.neutral()
    for i in range(count):
        q0[7 * i + 2] = RADIUS + GAP + i * (2 * RADIUS + GAP)
    return model, q0


def rest_heights(count):
    """The heights (m) of the sphere centres at rest under the Hertz law."""
    z, heights = 0.0, []
    for k in range(count):  # contact k under sphere k carries the count − k spheres above it
        load = (count - k) * MASS * GRAVITY
        r = RADIUS if k == 0 else RADIUS / 2
        depth = (load / (MODULUS * np.sqrt(r))) ** (2.0 / 3.0)
        z += (RADIUS if k == 0 else 2 * RADIUS) - depth
        heights.append(z)
    return np.array(heights)


def run(count, duration=DURATION, h=H, reach=REACH):
    """Simulate; returns dict(t, heights (steps + 1, count), kinetic energy, lateral offset, wall time,
    sweeps per step)."""
    model, q0 = stack(count)
    sim = mb.Simulator(model, dt=h, q0=q0, contact_solver="drumwright",
                       contact_model=mb.Compliance(stiffness=MODULUS, damping=1.0, hertz=True),
                       max_contacts=2 * count, contact_iterations=5000, contact_distance=reach)
    n = int(round(duration / h))
    z = np.empty((n + 1, count))
    kinetic, lateral, sweeps = np.zeros(n + 1), np.zeros(n + 1), np.zeros(n + 1, int)
    z[0] = q0[2::7]
    start = time.perf_counter()
    for k in range(1, n + 1):
        s = sim.step()
        z[k] = s.q[2::7]
        sweeps[k] = sim.contact.iterations
    wall = time.perf_counter() - start
    for k in (n,):
        kinetic[k] = sim.energy()[0]
        lateral[k] = np.hypot(sim.state.q[0::7], sim.state.q[1::7]).max()
    return dict(t=np.arange(n + 1) * h, z=z, kinetic=kinetic[-1], lateral=lateral[-1], wall=wall, sweeps=sweeps)


def main(argv=None):
    parser = drumwright_common.parser(__doc__)
    parser.add_argument("--counts", type=int, nargs="+", default=[10, 20, 50, 100])
    parser.add_argument("--paper-rule", action="store_true", help="contacts only between touching pairs")
    args = parser.parse_args(argv)
    fig, axes = drumwright_common.subplots(1, 2, figsize=(11, 4))
    print(f"{'spheres':>8} {'wall (s)':>9} {'per step (ms)':>14} {'max sweeps':>11} {'kinetic (J)':>12} "
          f"{'max |z - rest| (m)':>19} {'lateral (m)':>12}")
    walls = []
    for count in args.counts:
        r = run(count, reach=0.0 if args.paper_rule else REACH)
        err = np.abs(r["z"][-1] - rest_heights(count)).max()
        walls.append(r["wall"])
        print(f"{count:8d} {r['wall']:9.2f} {1e3 * r['wall'] / (r['t'].size - 1):14.3f} {r['sweeps'].max():11d} "
              f"{r['kinetic']:12.3e} {err:19.3e} {r['lateral']:12.3e}")
        if count == max(args.counts):
            axes[0].plot(r["t"], r["z"][:, ::max(1, count // 10)], lw=0.8)
            axes[0].set(xlabel="t (s)", ylabel="height (m)", title=f"E8: {count} spheres (every {max(1, count // 10)}th)")
    axes[1].plot(args.counts, walls, "o-")
    axes[1].set(xlabel="spheres", ylabel="wall time of 5 s (s)", title="E8: cost against the number of spheres")
    drumwright_common.save(fig, args.out, "e8_sphere_stack.png")


if __name__ == "__main__":
    main()
