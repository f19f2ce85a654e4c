"""Plots of a :class:`~multibody.simulation.Trajectory` with matplotlib."""


def plot_trajectory(traj, path, joints=None, extra=None, title=None, drift=True):
    """Write a PNG to ``path`` with, top to bottom: the energy (kinetic,
    potential, total); with ``drift`` the energy drift ``E(t) − E(0)`` and
    the work done by the recorded non-conservative sources (their power
    integrated in time), plus the constraint residual when any constraint
    acted; the positions of ``joints`` (coordinate indices; default: all,
    up to 7); and optional ``extra`` curves ``{label: (t, values)}`` on a
    log scale. Returns ``path``."""
    import matplotlib
    matplotlib.use("Agg")  # files only: no display needed
    import matplotlib.pyplot as plt
    import numpy as np

    residual = traj.constraint_residual is not None and np.any(traj.constraint_residual > 0)
    rows = 2 + int(bool(drift)) + int(bool(extra)) + int(bool(residual))
    fig, axes = plt.subplots(rows, 1, figsize=(8, 2.6 * rows), sharex=True)
    axes = list(np.atleast_1d(axes))
    ax = axes.pop(0)
    ax.plot(traj.t, traj.kinetic, label="kinetic")
    ax.plot(traj.t, traj.potential, label="potential")
    ax.plot(traj.t, traj.energy, "k", label="total")
    ax.set_ylabel("energy (J)")
    ax.legend(loc="best")
    if drift:
        ax = axes.pop(0)
        ax.plot(traj.t, traj.energy - traj.energy[0], "k", label="E(t) − E(0)")
        for k, label in enumerate(traj.power_labels):
            if label == "tau" or label == "joint damping":
                work = np.concatenate([[0.0], np.cumsum(0.5 * (traj.power[1:, k] + traj.power[:-1, k])
                                                       * np.diff(traj.t))])
                ax.plot(traj.t, work, "--", label=f"work of {label}")
        ax.set_ylabel("energy drift (J)")
        ax.legend(loc="best", fontsize="small")
    if residual:
        ax = axes.pop(0)
        ax.semilogy(traj.t, np.maximum(traj.constraint_residual, 1e-18))
        ax.set_ylabel("constraint residual")
    ax = axes.pop(0)
    cols = range(min(traj.q.shape[1], 7)) if joints is None else joints
    for k in cols:
        ax.plot(traj.t, traj.q[:, k], label=f"q[{k}]")
    ax.set_ylabel("joint position")
    ax.legend(loc="best", ncol=4, fontsize="small")
    if extra:
        ax = axes.pop(0)
        for label, (t, y) in extra.items():
            ax.semilogy(t, y, label=label)
        ax.legend(loc="best")
    ax.set_xlabel("time (s)")
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
