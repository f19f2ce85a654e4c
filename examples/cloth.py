"""A cloth hanging from a swinging bar: a mass-spring grid (structural, shear
and bend springs) whose top row is attached to a rigid bar on a revolute
joint, stepped by linearly implicit Euler with the attachments eliminated
(multibody.formulations.ParticleSystem in a multibody.Simulator;
docs/deformables.md).

    python examples/cloth.py                 # 30 x 30 cloth, 2 s, cloth.png
    python examples/cloth.py --n 8 --duration 0.5 --out /tmp/cloth.png
"""
import argparse
import time

import numpy as np

import multibody as mb
from multibody.formulations import ParticleSystem


def build(n=30, size=0.6, mass=0.3, stiffness=None, damping=0.02, bend=None, particle_damping=0.2,
          bar_mass=1.0, swing=2.0):
    """The bar (revolute about x at the origin, its attachment line 5 cm
    below the axis) and an n × n cloth lying horizontally from it; the bar
    starts with angular velocity ``swing`` (rad/s). Spring stiffness scales
    with n so that the cloth's stretch under its own weight does not depend
    on the resolution."""
    b = mb.ModelBuilder("bar")
    b.add_body("bar", "world", "revolute", axis=(1, 0, 0), mass=bar_mass, com=(size / 2, 0, -0.05),
               inertia=np.diag([1e-3, bar_mass * size ** 2 / 12, bar_mass * size ** 2 / 12]), damping=0.01)
    model = b.build()
    k = 20.0 * n if stiffness is None else stiffness
    ps = ParticleSystem(model, particle_damping=particle_damping, v=np.array([swing]))
    d = size / (n - 1)
    idx = ps.add_grid(n, n, (0, 0, -0.05), (d, 0, 0), (0, d, 0), mass=mass, stiffness=k, damping=damping,
                      bend_stiffness=0.05 * k if bend is None else bend)
    for i in range(n):
        ps.attach(int(idx[i, 0]), "bar")
    return ps, idx


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=30, help="particles per side (default 30)")
    ap.add_argument("--duration", type=float, default=2.0)
    ap.add_argument("--dt", type=float, default=0.01)
    ap.add_argument("--out", default="cloth.png")
    args = ap.parse_args(argv)
    ps, idx = build(args.n)
    # the bar and the cloth in one simulator: it starts from the particle system's state (the bar swinging)
    sim = mb.Simulator(ps.model, args.dt, "implicit_euler", particles=ps)
    t0 = time.perf_counter()
    tr = sim.rollout(args.duration)
    wall = time.perf_counter() - t0
    steps = len(tr.t) - 1
    X = tr.particle_position  # (samples, particles, 3): every particle's world position
    print(f"{args.n}x{args.n} cloth ({ps.n} particles, {len(ps._structure().si)} springs): {steps} implicit Euler "
          f"steps of {args.dt * 1e3:g} ms in {wall:.2f} s ({1e3 * wall / max(steps, 1):.2f} ms/step); "
          f"bar angle {tr.q[-1, 0]:+.3f} rad, lowest point z = {X[-1, :, 2].min():+.3f} m, "
          f"energy {tr.energy[0]:.4f} -> {tr.energy[-1]:.4f} J")

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig = plt.figure(figsize=(10, 4))
    ax = fig.add_subplot(1, 2, 1, projection="3d")
    for k in np.linspace(0, steps, 4).astype(int):
        Xk = X[k][idx]
        ax.plot_wireframe(Xk[..., 0], Xk[..., 1], Xk[..., 2], linewidth=0.4, color=plt.cm.viridis(k / max(steps, 1)))
    ax.set_xlabel("x (m)")
    ax.set_ylabel("y (m)")
    ax.set_zlabel("z (m)")
    ax.set_title("cloth at t = 0 … %.2f s" % tr.t[-1])
    ax2 = fig.add_subplot(1, 2, 2)
    ax2.plot(tr.t, tr.q[:, 0], label="bar angle (rad)")
    ax2.plot(tr.t, X[:, idx[-1, -1], 2], label="free corner z (m)")
    ax2.set_xlabel("t (s)")
    ax2.legend()
    fig.tight_layout()
    fig.savefig(args.out, dpi=90)
    print("saved", args.out)
    return tr


if __name__ == "__main__":
    main()
