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

from .._compiled import BAD_SHAPE, JIT
from ..errors import InputError, NonFiniteError
from ..model.checks import finite_result
from . import derivative_kernels as DK
from ._common import Data, config, external_forces, singular_body, velocity, workspace
from .inverse import raise_state_status

F64 = np.dtype(np.float64)


class _Workspace:
    """The derivative workspaces of one Data (kept on it as ``_derivatives``)."""

    def __init__(self, model):
        nb, nq, nv = model.nbodies, model.nq, model.nv
        self.fext0 = np.zeros((nb, 6))
        self.poses = np.tile(np.eye(4), (2, nb, 1, 1))
        self.blocks = np.zeros((DK.N_BLOCKS, 6, nv))
        self.Yb = np.zeros((2, nb, 6, 6))
        self.vec = np.zeros((3, nb, 6))
        self.idx = np.zeros(nb, dtype=np.int64)
        self.scratch = np.zeros(2 * nv + nq + 72)
        self.tau = np.zeros(nv)
        self.dq = np.zeros((nv, nv))
        self.dv = np.zeros((nv, nv))
        self.M = np.zeros((nv, nv))
        self._aba = None

    def aba(self, model):
        """``(aws, dws, mws, ddq, dq, dv, Minv)`` of the ABA derivatives (allocated on first use)."""
        if self._aba is None:
            nb, nv = model.nbodies, model.nv
            aws = (np.tile(np.eye(4), (2, nb, 1, 1)), np.zeros((3, 6, nv)), np.zeros((4, nb, 6)),
                   np.zeros((nb, 6, 6)), np.zeros((6, nv)), np.zeros((nv, 6)), np.zeros((4, nv)))
            dws = (self.poses, self.blocks, self.Yb, self.vec, self.idx, self.scratch, self.tau, self.dq, self.dv,
                   self.M)
            mws = (np.zeros((nb, 6, nv)), np.zeros((6, nv)), np.zeros((2, nb), dtype=np.int64), np.zeros((4, 6, 6)))
            self._aba = (aws, dws, mws, np.zeros(nv), np.zeros((nv, nv)), np.zeros((nv, nv)), np.zeros((nv, nv)))
        return self._aba


def _workspace(model, data):
    """(Data, its derivative workspace, plain) for a call with ``data`` (or None)."""
    plain = data is None
    if plain:
        try:
            data = model._workspaces.data
        except AttributeError:
            data = workspace(model)
    elif getattr(data, "model", None) is not model:
        if not isinstance(data, Data):
            raise InputError(f"data must be a multibody Data workspace (mb.Data(model)), got {type(data).__name__}")
        raise InputError(f"data was created for another model than '{model.name}': use mb.Data(model)")
    else:
        data.check_thread()
    ws = data.__dict__.get("_derivatives")
    if ws is None:
        ws = data.__dict__["_derivatives"] = _Workspace(model)
    return ws, plain


def _states(model, q, v, x, xname, f_ext):
    """Checked (q, v, x, f_ext) and whether they are a batch."""
    q = config(model, q)
    v = velocity(model, v, q)
    x = velocity(model, x, q, xname)
    fe = external_forces(model, f_ext, q.shape[0] if q.ndim == 2 else None)
    return q, v, x, fe, q.ndim == 2


def _fast(q, v, x, f_ext):
    try:
        return (JIT and f_ext is None and q.dtype is F64 and v.dtype is F64 and x.dtype is F64
                and q.ndim == 1 and v.ndim == 1 and x.ndim == 1)
    except AttributeError:
        return False


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
    ``rnea(model, q, v, a)``."""
    if f_ext is not None and isinstance(f_ext, Data):
        f_ext, data = None, f_ext
    ws, plain = _workspace(model, data)
    if not _fast(q, v, a, f_ext) or q.shape[0] != model.nq or v.shape[0] != model.nv or a.shape[0] != model.nv:
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
    else:
        fe = None
    st = DK.rnea_derivatives_checked(model._tree, q, v, a, bool(gravity), ws.fext0 if fe is None else fe,
                                     fe is not None, ws.poses, ws.blocks, ws.Yb, ws.vec, ws.idx, ws.scratch, ws.tau,
                                     ws.dq, ws.dv, ws.M)
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
    without, new arrays."""
    if f_ext is not None and isinstance(f_ext, Data):
        f_ext, data = None, f_ext
    ws, plain = _workspace(model, data)
    if not _fast(q, v, tau, f_ext) or q.shape[0] != model.nq or v.shape[0] != model.nv or tau.shape[0] != model.nv:
        q, v, tau, fe, batch = _states(model, q, v, tau, "tau", f_ext)
        if batch:
            B, nv = q.shape[0], model.nv
            ddq, dq, dv, Mi = np.empty((B, nv)), np.empty((B, nv, nv)), np.empty((B, nv, nv)), np.empty((B, nv, nv))
            status = np.zeros(B, dtype=np.int64)
            fb = np.zeros((B, model.nbodies, 6)) if fe is None else np.ascontiguousarray(
                np.broadcast_to(fe, (B, model.nbodies, 6)))
            args = (model._tree, q, v, tau, bool(gravity), fb, fe is not None, ddq, dq, dv, Mi, status)
            if B == 1:
                DK.aba_derivatives_rows(*args, 0, 1)
            else:
                DK.aba_derivatives_batch(*args)
            if status.any():
                k = int(np.argmax(status != 0))
                singular_body(model, int(status[k]), "aba_derivatives", q[k])
            return finite_result("aba_derivatives", dq, dv, Mi)
    else:
        fe = None
    aws, dws, mws, ddq, dq, dv, Mi = ws.aba(model)
    st = DK.aba_derivatives_checked(model._tree, q, v, tau, bool(gravity), ws.fext0 if fe is None else fe,
                                    fe is not None, aws, dws, mws, ddq, dq, dv, Mi)
    if st:
        if st == BAD_SHAPE:
            raise NonFiniteError("aba_derivatives: the result is not finite although the inputs are: they are too "
                                 "large for float64 (the computation overflowed)")
        if st < -DK.ARG:
            singular_body(model, -st - DK.ARG, "aba_derivatives", q)
        raise_state_status(model, q, st, ("q", "v", "tau"))
    if plain:
        return dq.copy(), dv.copy(), Mi.copy()
    return dq, dv, Mi
