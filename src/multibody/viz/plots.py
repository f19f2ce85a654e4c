"""Plots of a :class:`~multibody.simulation.Trajectory` with matplotlib."""


def plot_trajectory(traj, path, joints=None, extra=None, title=None):
    """Write a PNG with the energy (kinetic, potential, total), the
    positions of ``joints`` (coordinate indices; default: all, up to 7) and
    optional ``extra`` curves ``{label: (t, values)}`` to ``path``."""
    import matplotlib
    matplotlib.use("Agg")  # files only: no display needed
    import matplotlib.pyplot as plt

    rows = 2 + (1 if extra else 0)
    fig, axes = plt.subplots(rows, 1, figsize=(8, 3 * rows), sharex=True)
    ax = axes[0]
    ax.plot(traj.t, traj.kinetic, label="kinetic")
    ax.plot(traj.t, traj.potential, label="potential")
    ax.plot(traj.t, traj.energy, "k", label="total")
    ax.set_ylabel("energy (J)")
    ax.legend(loc="best")
    ax = axes[1]
    cols = range(min(traj.q.shape[1], 7)) if joints is None else joints
    for k in cols:
        ax.plot(traj.t, traj.q[:, k], label=f"q[{k}]")
    ax.set_ylabel("joint position")
    ax.legend(loc="best", ncol=4, fontsize="small")
    if extra:
        ax = axes[2]
        for label, (t, y) in extra.items():
            ax.semilogy(t, y, label=label)
        ax.legend(loc="best")
    axes[-1].set_xlabel("time (s)")
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
