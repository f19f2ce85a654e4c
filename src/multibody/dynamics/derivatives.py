"""Analytic derivatives of inverse and forward dynamics (Carpentier &
Mansard, *Analytical Derivatives of Rigid Body Dynamics Algorithms*, RSS
2018; Pinocchio's ``computeRNEADerivatives`` and ``computeABADerivatives``).

Tangent-space convention (Pinocchio's, issue #1527): column k of a
derivative with respect to q is ``d/dε f(q ⊕ ε e_k)`` at ε = 0, with ``⊕``
= :meth:`Model.integrate` — for a free joint the SE(3) exponential of the
body-frame twist ``[ω; v]``, for a spherical joint ``q ⊗ exp(ω)``, for a
planar joint the SE(2) exponential, vector addition for the other joints.
So every derivative is ``nv x nv``, its columns in the order of ``v``
(angular first for free joints), and ``∂f/∂q_raw = ∂f/∂q · (∂q_raw ⊖ ...)``
is never needed: to move along a derivative, integrate with
``model.integrate(q, δv)``. Derivation and checks: docs/derivatives.md.
"""
import numpy as np

from .._compiled import BAD_SHAPE, F64_1, F64_1C, F64_2C, F64_3C, F64_4C, INT, JIT, entry
from ..errors import InputError, NonFiniteError
from ..model.checks import finite_result
from . import derivative_kernels as DK
from ._common import Data, config, external_forces, singular_body, velocity, workspace
from .inverse import raise_state_status

F64 = np.dtype(np.float64)


class _Workspace:
    """The derivative workspace of one Data (kept on it as ``_derivatives``):
    the arrays of :data:`derivative_kernels.D_ARRAYS`, published through a
    table of addresses (``handle``) for the fast kernels, as Data does."""

    def __init__(self, model):
        nb, nq, nv = model.nbodies, model.nq, model.nv
        self._slots = np.zeros(DK.N_DSLOTS, dtype=np.int64)
        self._slots[:3] = nb, nq, nv
        for k, (name, shape) in enumerate(DK.derivative_shapes(nb, nq, nv).items()):
            x = np.zeros(shape, dtype=np.int64 if name in ("idx", "midx") else np.float64)
            setattr(self, name, x)
            self._slots[3 + k] = x.ctypes.data
        assert tuple(DK.derivative_shapes(nb, nq, nv)) == DK.D_ARRAYS
        self.poses = np.tile(np.eye(4), (2, nb, 1, 1))  # the general path's (the fast paths use the Data's)
        self.handle = int(self._slots.ctypes.data)
        self._aws = None

    def rnea_arrays(self):
        return (self.poses, self.blocks, self.Yb, self.vec, self.idx, self.scratch, self.tau, self.dq, self.dv,
                self.M)

    def aba_arrays(self, model):
        """``(aws, dws, mws)`` of the general path's ABA derivatives."""
        if self._aws is None:
            nb, nv = model.nbodies, model.nv
            self._aws = (np.tile(np.eye(4), (2, nb, 1, 1)), np.zeros((3, 6, nv)), np.zeros((4, nb, 6)),
                         np.zeros((nb, 6, 6)), np.zeros((6, nv)), np.zeros((nv, 6)), np.zeros((4, nv)))
        return self._aws, self.rnea_arrays(), (self.P, self.F, self.midx, self.mwork)


def _data_and_workspace(model, data):
    """(Data, its derivative workspace, plain) for a call with ``data`` (or None)."""
    plain = data is None
    if plain:
        try:
            data = model._workspaces.data
        except AttributeError:
            data = workspace(model)
    try:
        return data, data._derivatives, plain
    except AttributeError:
        if not isinstance(data, Data):
            raise InputError(f"data must be a multibody Data workspace (mb.Data(model)), got {type(data).__name__}")
        if data.model is not model:
            raise InputError(f"data was created for another model than '{model.name}': use mb.Data(model)")
        data._derivatives = ws = _Workspace(model)
        return data, ws, plain


_RNEA_D = _ABA_D = None


def _rnea_entry():
    global _RNEA_D
    from numba import types
    _RNEA_D = entry(DK.rnea_derivatives_fast, INT, INT, F64_1, F64_1, F64_1, types.boolean)
    return _RNEA_D


def _aba_entry():
    global _ABA_D
    from numba import types
    _ABA_D = entry(DK.aba_derivatives_fast, INT, INT, F64_1, F64_1, F64_1, types.boolean)
    return _ABA_D


def _checked_entry(which):
    """The general single-state path's compiled entry of the checked kernel
    ``which`` (0: RNEA, 1: ABA derivatives), with the signature its fast
    path calls it with (state vectors 'A', every workspace C-contiguous,
    ``lam`` writable): one compilation of each kernel serves both
    (derivative_kernels, batches)."""
    from numba import types
    b, i1, i2 = types.boolean, types.int64[::1], types.int64[:, ::1]
    if which == 0:
        fn = entry(DK.rnea_derivatives_checked, F64_2C, F64_1, F64_1, F64_1, b, F64_2C, b, F64_4C, F64_3C, F64_4C,
                   F64_3C, i1, F64_1C, F64_1C, F64_2C, F64_2C, F64_2C)
    else:
        aws = types.Tuple((F64_4C, F64_3C, F64_3C, F64_3C, F64_2C, F64_2C, F64_2C))
        dws = types.Tuple((F64_4C, F64_3C, F64_4C, F64_3C, i1, F64_1C, F64_1C, F64_2C, F64_2C, F64_2C))
        mws = types.Tuple((F64_3C, F64_2C, i2, F64_3C))
        fn = entry(DK.aba_derivatives_checked, F64_2C, i1, F64_1, F64_1, F64_1, b, F64_2C, b, aws, dws, mws, F64_1C,
                   F64_2C, F64_2C, F64_2C)
    _CHECKED[which] = fn
    return fn


_CHECKED = [None, None]


def _states(model, q, v, x, xname, f_ext):
    """Checked (q, v, x, f_ext) and whether they are a batch."""
    q = config(model, q)
    v = velocity(model, v, q)
    x = velocity(model, x, q, xname)
    fe = external_forces(model, f_ext, q.shape[0] if q.ndim == 2 else None)
    return q, v, x, fe, q.ndim == 2


def rnea_derivatives(model, q, v, a, f_ext=None, gravity=True, data=None):
    """Partial derivatives of inverse dynamics ``τ = rnea(q, v, a, f_ext)``:
    returns ``(∂τ/∂q, ∂τ/∂v, ∂τ/∂a)``, each (nv, nv), with ``∂τ/∂a = M(q)``
    (armature on the diagonal). ``∂τ/∂q`` is on the tangent space of the
    configuration manifold (module docstring: column k is the derivative
    along ``model.integrate(q, ε e_k)``, Pinocchio's convention), at fixed v
    and a; external forces ``f_ext`` (nbodies, 6) are body-frame [n; f]
    about each body origin (as :func:`rnea`) and turn with their bodies.
    Units: τ in N·m or N per coordinate.

    Algorithm: Carpentier & Mansard (RSS 2018), the recursion of
    Pinocchio's ``computeRNEADerivatives`` in world coordinates
    (notes/derivatives.md §1, docs/derivatives.md), O(nv·depth); joints
    whose motion subspace varies in the child frame (universal, Sueda's
    joints) are handled by the extra terms of docs/derivatives.md.

    One state, or a batch (leading axis: (B, nv, nv) each, computed in
    parallel). With ``data`` (one state) the results are views into the
    workspace that the next call overwrites (Pinocchio's habit); without, new
    arrays. ``rnea_derivatives.tau`` is not returned: ``τ`` itself is
    ``rnea(model, q, v, a)``.

    Parameters
    ----------
    model : Model
        The model.
    q : array_like
        Configuration (nq,), or a batch (B, nq).
    v : array_like
        Velocity (nv,), or (B, nv).
    a : array_like
        Acceleration (nv,), or (B, nv).
    f_ext : array_like, optional
        External forces (nbodies, 6) or (B, nbodies, 6), body-frame
        ``[n; f]`` about each body origin (N·m, N); default none.
    gravity : bool, default True
        Whether the model's gravity acts.
    data : Data, optional
        A workspace (one state): the results are views into it.

    Returns
    -------
    dtau_dq, dtau_dv, M : ndarray
        ∂τ/∂q, ∂τ/∂v and ∂τ/∂a = M, each (nv, nv) or (B, nv, nv).

    Raises
    ------
    InputError
        Arrays of the wrong shape or with non-finite values.
    """
    if f_ext is not None and isinstance(f_ext, Data):
        f_ext, data = None, f_ext
    data, ws, plain = _data_and_workspace(model, data)
    if JIT and f_ext is None:
        try:
            fast = ((plain or data.model is model) and q.dtype is F64 and v.dtype is F64 and a.dtype is F64
                    and q.ndim == 1 and v.ndim == 1 and a.ndim == 1)
        except AttributeError:  # not arrays: the general path says which
            fast = False
        if fast:
            st = (_RNEA_D or _rnea_entry())(data.handle, ws.handle, q, v, a, gravity)
            if not st:
                return (ws.dq.copy(), ws.dv.copy(), ws.M.copy()) if plain else (ws.dq, ws.dv, ws.M)
            if st != BAD_SHAPE:
                raise_state_status(model, q, st, ("q", "v", "a"))
    if not plain and data.model is not model:
        raise InputError(f"data was created for another model than '{model.name}': use mb.Data(model)")
    q, v, a, fe, batch = _states(model, q, v, a, "a", f_ext)
    if batch:
        B, nv = q.shape[0], model.nv
        tau, dq, dv, M = np.empty((B, nv)), np.empty((B, nv, nv)), np.empty((B, nv, nv)), np.empty((B, nv, nv))
        fb = np.zeros((B, model.nbodies, 6)) if fe is None else np.ascontiguousarray(
            np.broadcast_to(fe, (B, model.nbodies, 6)))
        if B == 1:
            DK.rnea_derivatives_rows(model._tree, q, v, a, bool(gravity), fb, fe is not None, tau, dq, dv, M, 0, 1)
        else:
            DK.rnea_derivatives_batch(model._tree, q, v, a, bool(gravity), fb, fe is not None, tau, dq, dv, M)
        return finite_result("rnea_derivatives", dq, dv, M)
    data.check_thread()
    st = (_CHECKED[0] or _checked_entry(0))(model._tree, q, v, a, bool(gravity),
                                             ws.fext0 if fe is None else np.ascontiguousarray(fe), fe is not None,
                                             *ws.rnea_arrays())
    if st:
        if st == BAD_SHAPE:
            raise NonFiniteError("rnea_derivatives: the result is not finite although the inputs are: they are too "
                                 "large for float64 (the computation overflowed)")
        raise_state_status(model, q, st, ("q", "v", "a"))
    if plain:
        return ws.dq.copy(), ws.dv.copy(), ws.M.copy()
    return ws.dq, ws.dv, ws.M


def aba_derivatives(model, q, v, tau, f_ext=None, gravity=True, data=None):
    """Partial derivatives of forward dynamics ``q̈ = aba(q, v, τ, f_ext)``:
    returns ``(∂q̈/∂q, ∂q̈/∂v, ∂q̈/∂τ)``, each (nv, nv), with
    ``∂q̈/∂τ = M(q)⁻¹``. ``∂q̈/∂q`` is on the tangent space (module
    docstring, Pinocchio's convention); ``f_ext`` as in :func:`aba`
    (body-frame forces that turn with their bodies). Units: q̈ per N·m (or N)
    for ∂q̈/∂τ, 1/s² for ∂q̈/∂q, 1/s for ∂q̈/∂v (rotational coordinates).

    Algorithm (Carpentier & Mansard RSS 2018; notes/derivatives.md §2):
    differentiating ``rnea(q, v, aba(q, v, τ)) = τ`` gives
    ``∂q̈/∂q = −M⁻¹ ∂τ/∂q|ₐ₌q̈``, ``∂q̈/∂v = −M⁻¹ ∂τ/∂v|ₐ₌q̈``,
    ``∂q̈/∂τ = M⁻¹``: q̈ by ABA, the RNEA derivatives at a = q̈, M⁻¹ by the
    O(n²) ABA-based recursion of :func:`inverse_inertia`, then two dense
    products (O(nv³), as Pinocchio's). The accelerations themselves are
    ``aba(model, q, v, tau)``.

    One state, or a batch (leading axis). With ``data`` (one state) the
    results are views into the workspace that the next call overwrites;
    without, new arrays.

    Parameters
    ----------
    model : Model
        The model.
    q : array_like
        Configuration (nq,), or a batch (B, nq).
    v : array_like
        Velocity (nv,), or (B, nv).
    tau : array_like
        Joint forces (nv,), or (B, nv) (N·m or N per coordinate).
    f_ext : array_like, optional
        External forces (nbodies, 6) or (B, nbodies, 6), body-frame
        ``[n; f]`` about each body origin (N·m, N); default none.
    gravity : bool, default True
        Whether the model's gravity acts.
    data : Data, optional
        A workspace (one state): the results are views into it.

    Returns
    -------
    dddq_dq, dddq_dv, Minv : ndarray
        ∂q̈/∂q, ∂q̈/∂v and ∂q̈/∂τ = M⁻¹, each (nv, nv) or (B, nv, nv).

    Raises
    ------
    InputError
        Arrays of the wrong shape or with non-finite values.
    """
    if f_ext is not None and isinstance(f_ext, Data):
        f_ext, data = None, f_ext
    data, ws, plain = _data_and_workspace(model, data)
    if JIT and f_ext is None:
        try:
            fast = ((plain or data.model is model) and q.dtype is F64 and v.dtype is F64 and tau.dtype is F64
                    and q.ndim == 1 and v.ndim == 1 and tau.ndim == 1)
        except AttributeError:  # not arrays: the general path says which
            fast = False
        if fast:
            st = (_ABA_D or _aba_entry())(data.handle, ws.handle, q, v, tau, gravity)
            if not st:
                return (ws.adq.copy(), ws.adv.copy(), ws.Minv.copy()) if plain else (ws.adq, ws.adv, ws.Minv)
            if st < -DK.ARG:
                singular_body(model, -st - DK.ARG, "aba_derivatives", q)
            if st != BAD_SHAPE:
                raise_state_status(model, q, st, ("q", "v", "tau"))
    if not plain and data.model is not model:
        raise InputError(f"data was created for another model than '{model.name}': use mb.Data(model)")
    q, v, tau, fe, batch = _states(model, q, v, tau, "tau", f_ext)
    if batch:
        B, nv = q.shape[0], model.nv
        ddq, dq, dv, Mi = np.empty((B, nv)), np.empty((B, nv, nv)), np.empty((B, nv, nv)), np.empty((B, nv, nv))
        status = np.zeros(B, dtype=np.int64)
        fb = np.zeros((B, model.nbodies, 6)) if fe is None else np.ascontiguousarray(
            np.broadcast_to(fe, (B, model.nbodies, 6)))
        # lam writable: the type the fast path compiled the kernels for (derivative_kernels, batches)
        args = (model._tree, model.dof_parent.copy(), q, v, tau, bool(gravity), fb, fe is not None, ddq, dq, dv, Mi,
                status)
        if B == 1:
            DK.aba_derivatives_rows(*args, 0, 1)
        else:
            DK.aba_derivatives_batch(*args)
        if status.any():
            k = int(np.argmax(status != 0))
            singular_body(model, int(status[k]), "aba_derivatives", q[k])
        return finite_result("aba_derivatives", dq, dv, Mi)
    data.check_thread()
    aws, dws, mws = ws.aba_arrays(model)
    st = (_CHECKED[1] or _checked_entry(1))(model._tree, model.dof_parent.copy(), q, v, tau, bool(gravity),
                                             ws.fext0 if fe is None else np.ascontiguousarray(fe), fe is not None,
                                             aws, dws, mws, ws.ddq, ws.adq, ws.adv, ws.Minv)
    if st:
        if st == BAD_SHAPE:
            raise NonFiniteError("aba_derivatives: the result is not finite although the inputs are: they are too "
                                 "large for float64 (the computation overflowed)")
        if st < -DK.ARG:
            singular_body(model, -st - DK.ARG, "aba_derivatives", q)
        raise_state_status(model, q, st, ("q", "v", "tau"))
    if plain:
        return ws.adq.copy(), ws.adv.copy(), ws.Minv.copy()
    return ws.adq, ws.adv, ws.Minv
