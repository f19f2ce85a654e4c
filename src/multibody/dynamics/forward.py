"""Forward dynamics: the articulated-body algorithm (Featherstone ch. 7,
Table 7.1) and, as a second method, CRBA + sparse LᵀDL (§6.5)."""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numba import types

from .._compiled import BAD_SHAPE, F64_1, INT, JIT, NEEDS_MATRIX, entry
from ..errors import InputError
from ..model.checks import finite_result
from . import kernels as K
from ._common import (Data, batch_output, config, data_for, external_forces, single_state_out, singular_body,
                      velocity, workspace)
from .inertia import not_positive_definite
from .inverse import raise_state_status

from .._typing import Array, ArrayLike

if TYPE_CHECKING:
    from ..model.data import Data
    from ..model.model import Model

F64 = np.dtype(np.float64)
_ABA = None
_FD_CRBA = None


def _aba_entry():
    global _ABA
    _ABA = entry(K.aba_fast, INT, F64_1, F64_1, F64_1, types.boolean)
    return _ABA


def aba(model: Model, q: ArrayLike, v: ArrayLike, tau: ArrayLike, f_ext: ArrayLike | None = None, gravity: bool = True,
        data: Data | None = None, out: Array | None = None) -> Array:
    """Joint accelerations ``q̈`` (nv) under joint forces ``tau`` and
    external forces, by the articulated-body algorithm in O(n)
    (Featherstone Table 7.1, in world coordinates like Pinocchio's WORLD
    convention). Armature is included. ``f_ext`` as in
    :func:`~multibody.dynamics.inverse.rnea` (body frames). One state or a
    batch. With ``data`` (one state, also accepted in the place of
    ``f_ext``) the result is ``data.ddq``; without, a new array computed in
    the thread's cached workspace; a batch is written to ``out`` (B, nv) if
    given, else to a new array. Accuracy:
    round-off, ~1e-12 relative on the example-robot-data robots; it degrades
    with the inertia ratios of the bodies (Featherstone §10.1).

    Parameters
    ----------
    model : Model
        The model.
    q : array_like
        Configuration, (nq,), or a batch (B, nq).
    v : array_like
        Generalized velocity, (nv,) (free joints: angular then linear, body
        frame), or a batch (B, nv).
    tau : array_like
        Joint forces, (nv,) or (B, nv) (N·m, N; free joints: body-frame
        wrench [n; f]).
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
        ``q̈``, (nv,) or (B, nv); ``data.ddq`` with ``data``.

    Raises
    ------
    InputError
        If an array has the wrong shape or is not finite, or a name is not the
        model's.
    SimulationError
        If the articulated inertia is singular (a massless subtree).
    """
    if f_ext is not None and isinstance(f_ext, Data):  # aba(model, q, v, tau, data)
        f_ext, data = None, f_ext
    plain = data is None
    if plain:  # the thread's cached workspace (model.data.workspace, written out: 0.03 us)
        try:
            data = model._workspaces.data
        except AttributeError:
            data = workspace(model)
    if JIT and f_ext is None and out is None:
        try:
            fast = ((plain or data.model is model) and q.dtype is F64 and v.dtype is F64 and tau.dtype is F64  # type: ignore[union-attr]
                    and q.ndim == 1 and v.ndim == 1 and tau.ndim == 1)  # type: ignore[union-attr]
        except AttributeError:  # not arrays, or data not a Data: the general path says which
            fast = False
        if fast:
            st = (_ABA or _aba_entry())(data.handle, q, v, tau, gravity)  # type: ignore[union-attr]
            if not st:
                return data.ddq.copy() if plain else data.ddq  # type: ignore[union-attr]
            if st < -K.ARG:
                singular_body(model, -st - K.ARG, "aba", q)
            if st != BAD_SHAPE:
                raise_state_status(model, q, st, ("q", "v", "tau"))
    q = config(model, q)
    v = velocity(model, v, q)
    tau = velocity(model, tau, q, "tau")
    fe = external_forces(model, f_ext, q.shape[0] if q.ndim == 2 else None)
    if q.ndim == 2:
        out = batch_output(out, (q.shape[0], model.nv))
        status = np.zeros(q.shape[0], dtype=np.int64)
        fb = np.zeros((q.shape[0], model.nbodies, 6)) if fe is None else np.broadcast_to(
            fe, (q.shape[0], model.nbodies, 6)).copy()
        K.aba_batch(model._tree, q, v, tau, bool(gravity), fb, fe is not None, out, status)
        if status.any():
            k = int(np.argmax(status != 0))
            singular_body(model, int(status[k]), "aba", q[k])
        return finite_result("aba", out)
    single_state_out(out)
    data = data_for(model, data)
    if fe is not None:
        data.f[:] = fe
    b = K.aba_kernel(model._tree, q, v, tau, bool(gravity), fe is not None, data.poses, data.jac, data.spatial,
                     data.inertia6, data.U, data.Dinv, data.dofs)
    if b:
        singular_body(model, b, "aba", q)
    return finite_result("aba", data.ddq.copy() if plain else data.ddq)


def _fd_crba_entry():
    global _FD_CRBA
    _FD_CRBA = entry(K.fd_crba_fast, INT, F64_1, F64_1, F64_1, types.boolean)
    return _FD_CRBA


def forward_dynamics(model: Model, q: ArrayLike, v: ArrayLike, tau: ArrayLike, f_ext: ArrayLike | None = None,
                     method: str = "aba", gravity: bool = True, data: Data | None = None) -> Array:
    """Joint accelerations ``q̈ = H⁻¹(τ − C)``. ``method="aba"``: the O(n)
    articulated-body algorithm; ``method="crba"``: H by CRBA and C by RNEA,
    solved with the sparse LᵀDL factorization (O(n d²); Featherstone §10.3
    predicts it wins on short, branched trees and loses on long chains —
    see benchmarks/dynamics.py). Both agree to round-off.

    Parameters
    ----------
    model : Model
        The model.
    q : array_like
        Configuration, (nq,), or a batch (B, nq).
    v : array_like
        Generalized velocity, (nv,) (free joints: angular then linear, body
        frame), or a batch (B, nv).
    tau : array_like
        Joint forces, (nv,) or (B, nv) (N·m, N; free joints: body-frame
        wrench [n; f]).
    f_ext : array_like, optional
        External spatial forces on the bodies, (nbodies, 6) (or a batch
        (B, nbodies, 6)), angular first (N·m; N), in body coordinates; row 0
        (the world) is ignored. Default: none.
    method : {"aba", "crba"}
        The algorithm (default "aba").
    gravity : bool
        Default True: include the model's gravity.
    data : Data, optional
        A workspace made for ``model`` (single state only); default: the calling
        thread's cached workspace.

    Returns
    -------
    numpy.ndarray
        ``q̈``, (nv,) or (B, nv).

    Raises
    ------
    InputError
        If an array has the wrong shape or is not finite, or a name is not the
        model's.
    """
    if f_ext is not None and isinstance(f_ext, Data):  # forward_dynamics(model, q, v, tau, data)
        f_ext, data = None, f_ext
    if method == "aba":
        return aba(model, q, v, tau, f_ext=f_ext, gravity=gravity, data=data)
    if method != "crba":
        raise InputError(f"unknown forward dynamics method '{method}' (use 'aba' or 'crba')")
    plain = data is None
    if plain:  # the thread's cached workspace (model.data.workspace, written out: 0.03 us)
        try:
            data = model._workspaces.data
        except AttributeError:
            data = workspace(model)
    if JIT and f_ext is None:
        try:
            fast = ((plain or data.model is model) and q.dtype is F64 and v.dtype is F64 and tau.dtype is F64  # type: ignore[union-attr]
                    and q.ndim == 1 and v.ndim == 1 and tau.ndim == 1)  # type: ignore[union-attr]
        except AttributeError:  # not arrays, or data not a Data: the general path says which
            fast = False
        if fast:
            st = (_FD_CRBA or _fd_crba_entry())(data.handle, q, v, tau, gravity)  # type: ignore[union-attr]
            if st == NEEDS_MATRIX:  # first use of this Data's nv x nv buffers
                data.allocate("M")  # type: ignore[union-attr]
                data.allocate("L")  # type: ignore[union-attr]
                st = (_FD_CRBA or _fd_crba_entry())(data.handle, q, v, tau, gravity)  # type: ignore[union-attr]
            if not st:
                return data.ddq.copy() if plain else data.ddq  # type: ignore[union-attr]
            if st < -K.ARG:
                raise not_positive_definite(model, -st - K.ARG - 1)
            if st != BAD_SHAPE:
                raise_state_status(model, q, st, ("q", "v", "tau"))
    q = config(model, q)
    v = velocity(model, v, q)
    tau = velocity(model, tau, q, "tau")
    fe = external_forces(model, f_ext, q.shape[0] if q.ndim == 2 else None)
    lam = model.dof_parent
    if q.ndim == 2:
        out = np.empty((q.shape[0], model.nv))
        status = np.zeros(q.shape[0], dtype=np.int64)
        fb = np.zeros((q.shape[0], model.nbodies, 6)) if fe is None else np.broadcast_to(
            fe, (q.shape[0], model.nbodies, 6)).copy()
        K.fd_crba_batch(model._tree, lam, q, v, tau, bool(gravity), fb, fe is not None, out, status)
        if status.any():
            raise not_positive_definite(model, int(status[status != 0][0]) - 1)
        return finite_result("forward_dynamics", out)
    data = data_for(model, data)
    if fe is not None:
        data.f[:] = fe
    st = K.fd_crba_kernel(model._tree, lam, q, v, tau, bool(gravity), fe is not None, data.poses, data.jac,
                          data.spatial, data.inertia6, data.M, data.L, data.ddq)
    if st:
        raise not_positive_definite(model, st - 1)
    return finite_result("forward_dynamics", data.ddq.copy() if plain else data.ddq)
