"""A PD-gain sweep on the UR5: every pair (Kp, Kd) of a log-spaced grid
tracks the same reference — each joint 0.3 rad about a bent posture, a
1 Hz sine, with the gravity torques of the reference fed forward — for
one second (semi-implicit Euler at 1 ms, the arm's damping, limits and
effort limits), and the heat map shows the RMS tracking error. The same
gains act on every joint (the arm's effort limits, 150 N m at the
shoulder and elbow and 28 N m at the wrist, cap what high gains ask for).
A point whose rollout fails (e.g. diverges) is recorded with its error and
drawn grey, and the sweep goes on. The points run on a Dask
``LocalCluster`` (one process per core), or on the cluster whose
scheduler is given, or in this process (docs/scale.md).

    python examples/sweep_gains.py                              # 16 x 16 gains, LocalCluster
    python examples/sweep_gains.py --scheduler tcp://host:8786  # on a running Dask cluster
    python examples/sweep_gains.py --n 4 --in-process --out /tmp/sweep_gains.png
"""
import argparse
import glob
import os
import site
import sysconfig
import time

import numpy as np

import multibody as mb


def ur5_path():
    """The UR5 URDF of example-robot-data (``pip install example-robot-data``)."""
    for sp in site.getsitepackages() + [sysconfig.get_paths()["purelib"]]:
        found = glob.glob(os.path.join(sp, "cmeel.prefix", "share", "example-robot-data", "robots",
                                       "ur_description", "urdf", "ur5_robot.urdf"))
        if found:
            return found[0]
    raise SystemExit("the UR5 model comes with example-robot-data: pip install example-robot-data")


def tracking_problem(model, duration, dt):
    """The reference (steps, nq), the PD template following it with the
    gravity torques of the reference fed forward, and the RMS error metric."""
    steps = int(round(duration / dt))
    t = np.arange(steps) * dt  # row k is the target of step k + 1, at t_k
    posture = np.array([0.0, -1.2, 1.5, -1.8, -1.6, 0.0])[:model.nq]
    ref = posture + 0.3 * np.sin(2 * np.pi * 1.0 * t)[:, None]
    gravity = np.array([mb.gravity_forces(model, q) for q in ref])
    template = mb.PD(model, 1.0, 1.0, target=ref, feedforward=gravity)

    def tracking_error(traj):  # RMS over the run of the joint-space error (rad)
        return np.sqrt(np.mean(np.sum((traj.q[:-1] - ref) ** 2, axis=1)))
    return posture, template, tracking_error


def run(n=16, duration=1.0, dt=1e-3, client=None, n_workers=None, path=None):
    """The gain sweep: returns the :class:`multibody.SweepResult`."""
    model = mb.load_urdf(ur5_path())
    posture, template, tracking_error = tracking_problem(model, duration, dt)
    sim = mb.Simulator(model, dt, "semi_implicit_euler", q0=posture, contact_solver=None)
    design = mb.Grid({"kp": np.logspace(1, 4, n), "kd": np.logspace(-1, 2, n)})  # N m/rad, N m s/rad
    return mb.sweep(sim, design, duration=duration, controller=template,
                    metrics={"tracking_error": tracking_error}, client=client, n_workers=n_workers, path=path)


def plot(res, out):
    """The heat map of log10 RMS tracking error over (Kp, Kd); failed points grey."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    err = res.grid("tracking_error")
    kp, kd = res.grid("kp")[:, 0], res.grid("kd")[0]
    fig, ax = plt.subplots(figsize=(6.4, 4.8))
    ax.set_facecolor("0.75")  # the failed points (NaN)
    image = ax.pcolormesh(kd, kp, np.log10(err), shading="nearest", cmap="viridis")
    fig.colorbar(image, ax=ax, label="log10 RMS tracking error (rad)")
    best = np.unravel_index(np.nanargmin(err), err.shape)
    ax.plot(kd[best[1]], kp[best[0]], "r*", ms=12, label=f"best: Kp {kp[best[0]]:.3g}, Kd {kd[best[1]]:.3g}")
    ax.set(xscale="log", yscale="log", xlabel="Kd (N m s/rad)", ylabel="Kp (N m/rad)",
           title=f"UR5 PD gains: {res.ok.sum()} of {len(res)} points ran (grey: failed)")
    ax.legend(loc="lower left")
    fig.tight_layout()
    fig.savefig(out, dpi=100)
    plt.close(fig)
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=16, help="gains per axis (default 16: 256 rollouts)")
    ap.add_argument("--duration", type=float, default=1.0, help="seconds per rollout (default 1)")
    ap.add_argument("--scheduler", help="a Dask scheduler address (default: a new LocalCluster)")
    ap.add_argument("--workers", type=int, help="LocalCluster worker processes (default: one per core)")
    ap.add_argument("--in-process", action="store_true", help="run in this process, without Dask")
    ap.add_argument("--path", help="a directory to save the chunks in (a stopped sweep resumes from it)")
    ap.add_argument("--out", default="sweep_gains.png")
    args = ap.parse_args(argv)
    client = False if args.in_process else args.scheduler
    t0 = time.perf_counter()
    res = run(args.n, args.duration, client=client, n_workers=args.workers, path=args.path)
    wall = time.perf_counter() - t0
    err = res["tracking_error"]
    i = int(np.nanargmin(err))
    print(f"{len(res)} rollouts of {args.duration:g} s in {wall:.1f} s "
          f"({'in this process' if client is False else client or 'LocalCluster'}); {len(res.errors)} failed; "
          f"best Kp {res['kp'][i]:.3g} N m/rad, Kd {res['kd'][i]:.3g} N m s/rad: RMS error {err[i]:.2e} rad")
    if res.errors:
        print("first failure:", next(iter(res.errors.values()))[:200])
    print("saved", plot(res, args.out))
    return res


if __name__ == "__main__":  # (the guard Dask's worker processes need)
    main()
