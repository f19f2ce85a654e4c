"""Inverse dynamics by the recursive Newton–Euler algorithm (Featherstone
ch. 5, Table 5.1): joint forces from positions, velocities and
accelerations, and the bias and gravity terms of the equation of motion
``τ = H(q) q̈ + C(q, q̇)`` (Eq. 1.1)."""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .._compiled import BAD_SHAPE, F64_1, INT, JIT, entry
from .._status import decode_state
from ..errors import NonFiniteError
from ..model.checks import finite_result
from . import kernels as K
from ._common import (Data, batch_output, config, data_for, external_forces, raise_status, single_state_out,
                      velocity, workspace)

from .._typing import Array, ArrayLike

if TYPE_CHECKING:
    from ..model.data import Data
    from ..model.model import Model

F64 = np.dtype(np.float64)
_RNEA = None


def _rnea_entry():
    global _RNEA
    from numba import types
    _RNEA = entry(K.rnea_fast, INT, F64_1, F64_1, F64_1, types.boolean)
    return _RNEA


def raise_state_status(model, q, st, names=("q", "v", "a")):
    """Turn a nonzero :func:`kernels.state_status` into the error it stands for."""
    _, which, index = decode_state(st)
    if which == 0:  # q: non-finite, or a quaternion not unit norm
        raise_status(model, q, st, names[0])
    raise NonFiniteError(f"{names[which]} has a non-finite entry at index {index}")


def rnea(model: Model, q: ArrayLike, v: ArrayLike, a: ArrayLike, f_ext: ArrayLike | None = None, gravity: bool = True,
         data: Data | None = None, out: Array | None = None) -> Array:
    """Joint forces ``τ`` (nv) that produce accelerations ``a`` at state
    (q, v): ``τ = H(q) a + C(q, v) − Σ Jᵢᵀ f_extᵢ``, including gravity
    (``model.gravity``, unless ``gravity=False``) and the armature term
    ``diag(armature) a``.

    ``f_ext``: (nbodies, 6) spatial forces [n; f] applied to each body,
    expressed in the **body frame** about the body origin (Pinocchio's
    convention); row 0 is ignored. Accepts one state or a batch (leading
    axis). With ``data`` (one state, also accepted in the place of
    ``f_ext``) the result is ``data.tau`` (overwritten by the next call)
    and ``data.f`` holds the joint reaction forces (body frames); without,
    a new array computed in the thread's cached workspace; a batch is written to ``out`` (B, nv) if given, else to a
    new array. Accuracy: round-off only; relative error ~1e-14 of the
    largest term for well-conditioned models (Featherstone §10.1).

    Parameters
    ----------
    model : Model
        The model.
    q : array_like
        Configuration, (nq,), or a batch (B, nq).
    v : array_like
        Generalized velocity, (nv,) (free joints: angular then linear, body
        frame), or a batch (B, nv).
    a : array_like
        Generalized acceleration q̈, (nv,) or (B, nv) (rad/s², m/s²; free
        joints: body-frame [ω̇; v̇]).
    f_ext : array_like, optional
        External spatial forces on the bodies, (nbodies, 6) (or a batch
        (B, nbodies, 6)), angular first (N·m; N), in body coordinates; row 0
        (the world) is ignored. Default: none. A :class:`~multibody.Data` here is taken as ``data``.
    gravity : bool
        Default True: include the model's gravity.
    data : Data, optional
        A workspace made for ``model`` (single state only); default: the calling
        thread's cached workspace.
    out : numpy.ndarray, optional
        For a batch: the float64 array the result is written to.

    Returns
    -------
    numpy.ndarray
        ``τ`` (N·m, N), (nv,) or (B, nv); ``data.tau`` with ``data``.

    Raises
    ------
    InputError
        If an array has the wrong shape or is not finite, or a name is not the
        model's.
    """
    if f_ext is not None and isinstance(f_ext, Data):  # rnea(model, q, v, a, data)
        f_ext, data = None, f_ext
    plain = data is None
    if plain:  # the thread's cached workspace (model.data.workspace, written out: 0.03 us)
        try:
            data = model._workspaces.data
        except AttributeError:
            data = workspace(model)
    if JIT and f_ext is None and out is None:
        try:
            fast = ((plain or data.model is model) and q.dtype is F64 and v.dtype is F64 and a.dtype is F64  # type: ignore[union-attr]
                    and q.ndim == 1 and v.ndim == 1 and a.ndim == 1)  # type: ignore[union-attr]
        except AttributeError:  # not arrays, or data not a Data: the general path says which
            fast = False
        if fast:
            st = (_RNEA or _rnea_entry())(data.handle, q, v, a, gravity)  # type: ignore[union-attr]
            if not st:
                return data.tau.copy() if plain else data.tau  # type: ignore[union-attr]
            if st != BAD_SHAPE:
                raise_state_status(model, q, st)
    q = config(model, q)
    v = velocity(model, v, q)
    a = velocity(model, a, q, "a")
    fe = external_forces(model, f_ext, q.shape[0] if q.ndim == 2 else None)
    if q.ndim == 2:
        out = batch_output(out, (q.shape[0], model.nv))
        fb = np.zeros((q.shape[0], model.nbodies, 6)) if fe is None else np.broadcast_to(
            fe, (q.shape[0], model.nbodies, 6)).copy()
        K.rnea_batch(model._tree, q, v, a, bool(gravity), fb, fe is not None, out)
        return finite_result("rnea", out)
    single_state_out(out)
    data = data_for(model, data)
    if fe is not None:
        data.f[:] = fe
    K.rnea_kernel(model._tree, q, v, a, bool(gravity), fe is not None, data.poses, data.spatial, data.tau)
    return finite_result("rnea", data.tau.copy() if plain else data.tau)


def bias_forces(model: Model, q: ArrayLike, v: ArrayLike, f_ext: ArrayLike | None = None,
                data: Data | None = None) -> Array:
    """``C(q, v)`` (nv): Coriolis, centrifugal and gravity forces minus the
    external forces, i.e. ``rnea(q, v, 0)`` (Featherstone Eq. 6.2;
    Pinocchio's nonLinearEffects).

    Parameters
    ----------
    model : Model
        The model.
    q : array_like
        Configuration, (nq,), or a batch (B, nq).
    v : array_like
        Generalized velocity, (nv,) (free joints: angular then linear, body
        frame), or a batch (B, nv).
    f_ext : array_like, optional
        External spatial forces on the bodies, (nbodies, 6) (or a batch
        (B, nbodies, 6)), angular first (N·m; N), in body coordinates; row 0
        (the world) is ignored. Default: none.
    data : Data, optional
        A workspace made for ``model`` (single state only); default: the calling
        thread's cached workspace.

    Returns
    -------
    numpy.ndarray
        ``C(q, v)`` (N·m, N), (nv,) or (B, nv).

    Raises
    ------
    InputError
        If an array has the wrong shape or is not finite, or a name is not the
        model's.
    """
    if f_ext is not None and isinstance(f_ext, Data):  # bias_forces(model, q, v, data)
        f_ext, data = None, f_ext
    q = config(model, q)
    zeros = np.zeros(q.shape[:-1] + (model.nv,))
    return rnea(model, q, v, zeros, f_ext=f_ext, data=data)


def gravity_forces(model: Model, q: ArrayLike, data: Data | None = None) -> Array:
    """``g(q)`` (nv): the joint forces that hold the system still against
    gravity, ``rnea(q, 0, 0)`` (Pinocchio's computeGeneralizedGravity).

    Parameters
    ----------
    model : Model
        The model.
    q : array_like
        Configuration, (nq,), or a batch (B, nq).
    data : Data, optional
        A workspace made for ``model`` (single state only); default: the calling
        thread's cached workspace.

    Returns
    -------
    numpy.ndarray
        ``g(q)`` (N·m, N), (nv,) or (B, nv).

    Raises
    ------
    InputError
        If ``q`` has the wrong shape, is not finite or has a non-unit
        quaternion.
    """
    q = config(model, q)
    zeros = np.zeros(q.shape[:-1] + (model.nv,))
    return rnea(model, q, zeros, zeros, data=data)
