"""An elbow driven by two antagonist Hill muscles (docs/biomechanics.md).

The upper arm is fixed, the forearm (1.5 kg, hanging along −y at θ = 0)
turns on an elbow hinge about z under gravity. A flexor and an extensor
run from the upper arm over a via point beside the elbow to the forearm
(:class:`multibody.forces.HillMuscle` on a 3-point path, Sueda's curves).
Their activations are functions of time: the flexor is switched on in a
smooth pulse, then both co-contract. Implicit Euler (the muscles' exact
stiffness and damping enter its Newton matrix) with a little joint
damping. The plot shows the elbow angle, the activations, the fiber
lengths and the tensions.

    python examples/muscle_arm.py            # 3 s, writes muscle_arm.png
    python examples/muscle_arm.py --quick    # 0.5 s (what the tests run)
"""
import argparse

import numpy as np

import multibody as mb
from multibody.forces import HillMuscle

# origin, via point (upper arm = world frame), insertion (forearm frame): metres
FLEXOR = dict(points=[("world", (0.02, 0.25, 0)), ("world", (0.03, 0.0, 0)), ("forearm", (0.015, -0.05, 0))],
              max_force=400.0, optimal_length=0.1, tendon_slack_length=0.17)
EXTENSOR = dict(points=[("world", (-0.02, 0.25, 0)), ("world", (-0.025, 0.0, 0)), ("forearm", (-0.02, -0.02, 0))],
                max_force=300.0, optimal_length=0.09, tendon_slack_length=0.19)


def smooth_step(t, t0, t1):
    """0 before t0, 1 after t1, C¹ in between."""
    x = np.clip((t - t0) / (t1 - t0), 0.0, 1.0)
    return x * x * (3.0 - 2.0 * x)


def flexor_activation(t):
    return 0.05 + 0.55 * smooth_step(t, 0.2, 0.5) - 0.3 * smooth_step(t, 1.5, 1.8)


def extensor_activation(t):
    return 0.05 + 0.4 * smooth_step(t, 1.5, 1.8)


def build():
    b = mb.ModelBuilder("elbow", gravity=(0.0, -9.81, 0.0))
    b.add_body("forearm", "world", "revolute", axis=(0, 0, 1), mass=1.5, com=(0, -0.15, 0),
               inertia=np.diag([0.012, 0.001, 0.012]), damping=0.2)
    model = b.build()
    muscles = [HillMuscle(m["points"], m["max_force"], m["optimal_length"], m["tendon_slack_length"], 10.0, act,
                          name=name)
               for name, m, act in (("flexor", FLEXOR, flexor_activation), ("extensor", EXTENSOR, extensor_activation))]
    return model, muscles


def run(duration=3.0, dt=2e-3):
    """Simulate; returns (trajectory, records): the records are one dict of
    arrays per muscle (HillMuscle.state at every recorded step)."""
    model, muscles = build()
    sim = mb.Simulator(model, dt, integrator="implicit_euler", forces=muscles)
    sim.reset(q=np.array([0.3]))
    traj = sim.rollout(duration=duration, progress=False)
    records = {}
    for m in muscles:
        states = [m.state(model, q, v, t) for q, v, t in zip(traj.q, traj.v, traj.t)]
        records[m.name] = {k: np.array([s[k] for s in states]) for k in states[0]}
    return traj, records


def plot(traj, records, path="muscle_arm.png"):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(4, 1, figsize=(7, 9), sharex=True)
    ax[0].plot(traj.t, np.degrees(traj.q[:, 0]), "k")
    ax[0].set_ylabel("elbow angle (deg)")
    for name, rec in records.items():
        ax[1].plot(traj.t, rec["activation"], label=name)
        ax[2].plot(traj.t, 100 * rec["fiber_length"], label=name)
        ax[3].plot(traj.t, rec["tension"], label=name)
    ax[1].set_ylabel("activation")
    ax[2].set_ylabel("fiber length (cm)")
    ax[3].set_ylabel("tension (N)")
    ax[3].set_xlabel("time (s)")
    for a in ax[1:]:
        a.legend(loc="upper right")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="simulate 0.5 s only")
    parser.add_argument("--duration", type=float, default=3.0)
    parser.add_argument("--out", default="muscle_arm.png")
    args = parser.parse_args()
    traj, records = run(0.5 if args.quick else args.duration)
    print(f"final elbow angle {np.degrees(traj.q[-1, 0]):.2f} deg; tensions "
          + ", ".join(f"{k} {r['tension'][-1]:.1f} N" for k, r in records.items()))
    print("wrote", plot(traj, records, args.out))
