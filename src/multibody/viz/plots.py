"""Plots of a :class:`~multibody.simulation.Trajectory` with matplotlib
(imported when a plot is drawn: the names below need only the model)."""
from __future__ import annotations

import operator
from typing import TYPE_CHECKING, Mapping, Sequence

from ..errors import InputError
from .._typing import ArrayLike, PathLike

if TYPE_CHECKING:
    from ..model.model import Model
    from ..simulation.trajectory import Trajectory

# the coordinates of the joints whose q is not one number per velocity: position, then the quaternion
_QUATERNION_PARTS = {"free": ("x", "y", "z", "qw", "qx", "qy", "qz"), "spherical": ("qw", "qx", "qy", "qz")}


def coordinate_names(model):
    """The name of each of the ``model.nq`` configuration coordinates: the
    joint's name for a one-coordinate joint; ``<joint>.x``, ``.y``, ``.z``,
    ``.qw``, ``.qx``, ``.qy``, ``.qz`` for a free joint (position, then the
    scalar-first quaternion), ``<joint>.qw`` … ``.qz`` for a spherical joint,
    and ``<joint>[k]`` for the k-th coordinate of any other joint."""
    names = []
    for j in model.joints[1:]:
        if j.nq == 1:
            names.append(j.name)
        elif j.type in _QUATERNION_PARTS:
            names += [f"{j.name}.{part}" for part in _QUATERNION_PARTS[j.type]]
        else:
            names += [f"{j.name}[{k}]" for k in range(j.nq)]
    return tuple(names)


def _joint_columns(traj, joints, model):
    """The coordinate indices and labels of the joint panel: ``joints`` are
    coordinate indices or (with ``model``) joint or coordinate names; the
    labels are the coordinates' names with ``model``, else ``q[i]``."""
    nq = traj.q.shape[1]
    if model is not None:
        if traj.model_fingerprint is not None:
            traj.check_model(model)  # labels from another model would name the wrong joints
        elif model.nq != nq:
            raise InputError(f"plot_trajectory: the trajectory has {nq} coordinates, model '{model.name}' has "
                             f"nq = {model.nq}")
        labels = coordinate_names(model)
    else:
        labels = tuple(f"q[{k}]" for k in range(nq))
    if joints is None:
        return list(range(min(nq, 7))), labels
    cols = []
    for item in joints:
        if isinstance(item, str):
            if model is None:
                raise InputError(f"plot_trajectory: joint {item!r} given by name needs model=")
            if item in labels:
                cols.append(labels.index(item))
            else:
                s = model.joints[model.joint_id(item)].q_slice
                cols += range(s.start, s.stop)
            continue
        try:
            k = operator.index(item) if not isinstance(item, bool) else None
        except TypeError:
            k = None
        if k is None:
            raise InputError(f"plot_trajectory: joints must be coordinate indices or names, got {item!r}")
        if not -nq <= k < nq:
            raise InputError(f"plot_trajectory: coordinate index {k} out of range for nq = {nq}")
        cols.append(k % nq)
    return cols, labels


def plot_trajectory(traj: Trajectory, path: PathLike, joints: Sequence[int | str] | None = None,
                    extra: Mapping[str, tuple[ArrayLike, ArrayLike]] | None = None, title: str | None = None,
                    drift: bool = True, model: Model | None = None) -> PathLike:
    """Write a PNG to ``path`` with, top to bottom: the energy (kinetic,
    potential, total); with ``drift`` the energy drift ``E(t) − E(0)`` and
    the work done by the recorded non-conservative sources (their power
    integrated in time), plus the constraint residual when any constraint
    acted; the positions of ``joints`` (coordinate indices, or with
    ``model`` joint names and :func:`coordinate_names`; default: the first
    7 coordinates); and optional ``extra`` curves ``{label: (t, values)}``
    on a log scale. With ``model`` (the model the trajectory was recorded
    on: checked by its fingerprint) the curves are labelled by the
    coordinates' names, else ``q[i]``. Returns ``path``."""
    cols, labels = _joint_columns(traj, joints, model)
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
                work = np.concatenate([[0.0], np.cumsum(0.5 * (traj.power[1:, k] + traj.power[:-1, k])  # type: ignore[index]
                                                       * np.diff(traj.t))])
                ax.plot(traj.t, work, "--", label=f"work of {label}")
        ax.set_ylabel("energy drift (J)")
        ax.legend(loc="best", fontsize="small")
    if residual:
        ax = axes.pop(0)
        ax.semilogy(traj.t, np.maximum(traj.constraint_residual, 1e-18))  # type: ignore[arg-type]
        ax.set_ylabel("constraint residual")
    ax = axes.pop(0)
    for k in cols:
        ax.plot(traj.t, traj.q[:, k], label=labels[k])
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
