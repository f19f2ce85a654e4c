"""Hybrid dynamics (Featherstone §9.1–9.2): the accelerations are given at
some coordinates and the forces at the others; find the unknown forces and
accelerations. Solved in O(n) by the articulated-body hybrid algorithm
(Table 9.3), generalized to a per-coordinate split (see
:mod:`multibody.dynamics.hybrid_kernels`)."""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..errors import InputError, NonFiniteError
from ..model.checks import as_float_array, finite_result
from . import hybrid_kernels as HK
from ._common import config, data_for, external_forces, singular_body, velocity
from .inverse import raise_state_status

from .._typing import Array, ArrayLike

if TYPE_CHECKING:
    from ..model.data import Data
    from ..model.model import Model

F64 = np.dtype(np.float64)
BOOL = np.dtype(np.bool_)
NAMES = ("q", "v", "qdd_given", "tau_given")


def prescribed_mask(model, prescribed, q):
    """``prescribed`` checked: a boolean array of shape (nv,) or, for a batch
    q of shape (B, nq), (B, nv)."""
    m = np.asarray(prescribed)
    if m.dtype != np.bool_:
        raise InputError(f"prescribed must be a boolean mask over the {model.nv} velocity coordinates "
                         f"(True = acceleration given), got dtype {m.dtype}")
    ok = m.shape == (model.nv,) or (q.ndim == 2 and m.shape == (q.shape[0], model.nv))
    if not ok:
        expected = f"({model.nv},)" + (f" or ({q.shape[0]}, {model.nv})" if q.ndim == 2 else "")
        raise InputError(f"prescribed has shape {m.shape}, expected {expected}")
    return np.ascontiguousarray(m)


def _given(model, x, name, used, q):
    """A given vector (qdd_given or tau_given): shape like v; only the entries
    where ``used`` is True must be finite, the others are replaced by 0."""
    if x is None:
        return np.zeros(q.shape[:-1] + (model.nv,))
    a = as_float_array(x, name)
    if a.shape != q.shape[:-1] + (model.nv,) and a.shape != (model.nv,):
        expected = f"({model.nv},)" + (f" or ({q.shape[0]}, {model.nv})" if q.ndim == 2 else "")
        raise InputError(f"{name} has shape {a.shape}, expected {expected}")
    a = np.broadcast_to(a, q.shape[:-1] + (model.nv,))
    bad = used & ~np.isfinite(a)
    if bad.any():
        idx = tuple(int(i) for i in np.argwhere(bad)[0])
        raise NonFiniteError(f"{name} has a non-finite entry at index {idx[0] if len(idx) == 1 else idx} "
                         "(an entry that is used)")
    return np.ascontiguousarray(np.where(used, a, 0.0))


def _results(data, copy):
    """(q̈, τ) of a hybrid dynamics in ``data``: views, or copies."""
    return (data.ddq.copy(), data.tau.copy()) if copy else (data.ddq, data.tau)


def hybrid_dynamics(model: Model, q: ArrayLike, v: ArrayLike, qdd_given: ArrayLike, tau_given: ArrayLike,
                    prescribed: ArrayLike, f_ext: ArrayLike | None = None, gravity: bool = True,
                    data: Data | None = None) -> tuple[Array, Array]:
    """Hybrid dynamics by the articulated-body hybrid algorithm
    (Featherstone §9.2, Table 9.3), O(n).

    ``prescribed``: boolean mask over the **nv velocity coordinates** (True =
    the acceleration of that coordinate is given in ``qdd_given``; False =
    its force is given in ``tau_given``). The split is per coordinate, more
    general than Table 9.3's per-joint split (the special case where each
    joint's coordinates are all True or all False): a multi-DoF joint may have
    some coordinates prescribed and others free (e.g. a free joint with its
    rotation prescribed and its translation free); its free columns then
    play the role of the joint's motion subspace in the articulated-body
    step. Entries of ``qdd_given`` / ``tau_given`` that are not used are
    ignored (they may be NaN); ``None`` means zeros.

    Returns ``(qdd, tau)``, both complete nv vectors: the given entries
    copied, the others computed, such that ``rnea(q, v, qdd, f_ext) == tau``
    and ``aba(q, v, tau, f_ext) == qdd``. Units: q̈ in the coordinates' units
    per s² (rad/s², m/s²; free/spherical joints: body-frame [ω̇; v̇]), τ in
    N·m or N (free joints: body-frame wrench [n; f]). Gravity
    (``model.gravity`` unless ``gravity=False``) and armature are included
    (``τ_k = S_kᵀ f + armature_k q̈_k``). ``f_ext`` as in
    :func:`~multibody.dynamics.inverse.rnea`: (nbodies, 6) spatial forces
    [n; f] in each body frame about its origin.

    One state or a batch (q of shape (B, nq); ``prescribed`` (nv,) shared
    or (B, nv)). With ``data`` (one state) the results are views
    ``data.ddq`` and ``data.tau`` (overwritten by the next call). Raises
    :class:`~multibody.errors.InputError` for bad shapes, non-finite used
    entries or a non-boolean mask, and
    :class:`~multibody.errors.SimulationError` if the articulated inertia
    along the free coordinates of a joint is singular (a massless subtree).

    Accuracy: round-off, like ``aba``/``rnea`` (~1e-12 relative on the
    example-robot-data robots); computed in world coordinates, so it degrades
    slowly with the distance of the bodies from the world origin
    (Featherstone §10.1).

    Parameters
    ----------
    model : Model
        The model.
    q : array_like
        Configuration, (nq,), or a batch (B, nq).
    v : array_like
        Generalized velocity, (nv,) (free joints: angular then linear, body
        frame), or a batch (B, nv).
    qdd_given : array_like or None
        The prescribed accelerations, (nv,) or (B, nv) (unused entries
        ignored; None: zeros).
    tau_given : array_like or None
        The given forces, (nv,) or (B, nv) (unused entries ignored; None:
        zeros).
    prescribed : array_like of bool
        The mask over the nv velocity coordinates, (nv,) or (B, nv).
    f_ext : array_like, optional
        External spatial forces on the bodies, (nbodies, 6) (or a batch
        (B, nbodies, 6)), angular first (N·m; N), in body coordinates; row 0
        (the world) is ignored. Default: none.
    gravity : bool
        Default True: include the model's gravity.
    data : Data, optional
        A workspace made for ``model`` (single state only); default: the calling
        thread's cached workspace.

    Returns
    -------
    qdd : numpy.ndarray
        The complete accelerations, (nv,) or (B, nv).
    tau : numpy.ndarray
        The complete forces, (nv,) or (B, nv).

    Raises
    ------
    InputError
        If an array has the wrong shape or is not finite, or a name is not the
        model's.
    SimulationError
        If the articulated inertia is singular (a massless subtree).
    """
    plain = data is None
    data = data_for(model, data)  # checks the model and the thread
    if f_ext is None:
        try:
            fast = (q.shape == model.q_shape and v.shape == model.v_shape and qdd_given.shape == model.v_shape  # type: ignore[union-attr]
                    and tau_given.shape == model.v_shape and prescribed.shape == model.v_shape  # type: ignore[union-attr]
                    and q.dtype == F64 and v.dtype == F64 and qdd_given.dtype == F64 and tau_given.dtype == F64  # type: ignore[union-attr]
                    and prescribed.dtype == BOOL)  # type: ignore[union-attr]
        except AttributeError:
            fast = False
        if fast:  # validated inside the kernel call
            st = HK.hybrid_checked(model._tree, q, v, qdd_given, tau_given, prescribed, bool(gravity), data.poses,
                                   data.jac, data.spatial, data.inertia6, data.U, data.Dinv, data.dofs)
            if st:
                if st < -HK.ARG:
                    singular_body(model, -st - HK.ARG, "hybrid_dynamics")
                raise_state_status(model, q, st, NAMES)
            return finite_result("hybrid_dynamics", *_results(data, plain))
    q = config(model, q)
    v = velocity(model, v, q)
    mask = prescribed_mask(model, prescribed, q)
    used = np.broadcast_to(mask, q.shape[:-1] + (model.nv,))
    qdd_in = _given(model, qdd_given, "qdd_given", used, q)
    tau_in = _given(model, tau_given, "tau_given", ~used, q)
    fe = external_forces(model, f_ext, q.shape[0] if q.ndim == 2 else None)
    if q.ndim == 2:
        B = q.shape[0]
        qdd = np.empty((B, model.nv))
        tau = np.empty((B, model.nv))
        status = np.zeros(B, dtype=np.int64)
        fb = np.zeros((B, model.nbodies, 6)) if fe is None else np.ascontiguousarray(
            np.broadcast_to(fe, (B, model.nbodies, 6)))
        HK.hybrid_batch(model._tree, q, v, qdd_in, tau_in, np.ascontiguousarray(used), bool(gravity), fb,
                        fe is not None, qdd, tau, status)
        if status.any():
            singular_body(model, int(status[status != 0][0]), "hybrid_dynamics")
        return finite_result("hybrid_dynamics", qdd, tau)
    if fe is not None:
        data.f[:] = fe
    b = HK.hybrid_kernel(model._tree, q, v, qdd_in, tau_in, mask, bool(gravity), fe is not None, data.poses,
                         data.jac, data.spatial, data.inertia6, data.U, data.Dinv, data.dofs)
    if b:
        singular_body(model, b, "hybrid_dynamics")
    return finite_result("hybrid_dynamics", *_results(data, plain))
