"""The joint-space inertia matrix H(q) by the composite-rigid-body
algorithm (Featherstone ch. 6), its sparse LᵀDL factorization without
fill-in (§6.5), its inverse, and the operational-space inverse inertia
``J H⁻¹ Jᵀ`` (§7.2.1)."""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from .._compiled import BAD_SHAPE, F64_1, INT, JIT, NEEDS_MATRIX, entry
from ..errors import InputError, NonFiniteError, SimulationError
from ..model.checks import as_float_array, finite_result
from . import kernels as K
from . import minv_kernels as MK
from ._common import batch_output, config, data_for, raise_status, single_state_out, velocity, workspace

from .._typing import Array, ArrayLike

if TYPE_CHECKING:
    from ..model.data import Data
    from ..model.model import Model

F64 = np.dtype(np.float64)
_CRBA = None


def _crba_entry():
    global _CRBA
    _CRBA = entry(K.crba_fast, INT, F64_1)
    return _CRBA


def crba(model: Model, q: ArrayLike, data: Data | None = None, out: Array | None = None) -> Array:
    """Joint-space inertia matrix ``H(q)`` (nv x nv, symmetric positive
    definite), including the armature on the diagonal. Built in world
    coordinates (Table 6.2 with Pinocchio's WORLD convention); its
    nonzeros follow the branch-induced sparsity (§6.4). One state (with
    ``data`` the result is ``data.M``) or a batch (B, nv, nv), written to
    ``out`` if given (reusing it spares a large batch the page faults of
    fresh memory: 14 µs per state for Talos on this machine), else to a new
    array. Accuracy: round-off; cond(H) grows up to ~4·N⁴ for chains (§10.2), which bounds
    what solves with H can achieve.

    Parameters
    ----------
    model : Model
        The model.
    q : array_like
        Configuration, (nq,), or a batch (B, nq).
    data : Data, optional
        A workspace made for ``model`` (single state only); default: the calling
        thread's cached workspace.
    out : numpy.ndarray, optional
        For a batch: the float64 array the result is written to.

    Returns
    -------
    numpy.ndarray
        ``H(q)`` (kg·m², kg), (nv, nv) or (B, nv, nv); ``data.M`` with
        ``data``.

    Raises
    ------
    InputError
        If ``q`` has the wrong shape, is not finite or has a non-unit
        quaternion.
    """
    plain = data is None
    if plain:  # the thread's cached workspace (model.data.workspace, written out: 0.03 us)
        try:
            data = model._workspaces.data
        except AttributeError:
            data = workspace(model)
    if JIT and out is None:
        try:
            fast = (plain or data.model is model) and q.dtype is F64 and q.ndim == 1  # type: ignore[union-attr]
        except AttributeError:  # not arrays, or data not a Data: the general path says which
            fast = False
        if fast:
            st = (_CRBA or _crba_entry())(data.handle, q)  # type: ignore[union-attr]
            if st == NEEDS_MATRIX:  # first use of this Data's nv x nv buffers
                data.allocate("M")  # type: ignore[union-attr]
                st = (_CRBA or _crba_entry())(data.handle, q)  # type: ignore[union-attr]
            if not st:
                return data._M.copy() if plain else data._M  # type: ignore[union-attr]  # (the property costs 0.3 us)
            if st != BAD_SHAPE:
                raise_status(model, q, st)
    q = config(model, q)
    if q.ndim == 2:
        out = batch_output(out, (q.shape[0], model.nv, model.nv))
        K.crba_batch(model._tree, model.dof_parent, q, out)
        return finite_result("crba", out)
    single_state_out(out)
    data = data_for(model, data)
    K.crba_kernel(model._tree, model.dof_parent, q, data.poses, data.jac, data.inertia6, data.M)
    return finite_result("crba", data.M.copy() if plain else data.M)


_VECTOR_JOINTS = ("universe", "fixed", "revolute", "prismatic", "helical", "cylindrical", "translational")


def require_vector_joints(model, what):
    """Raise :class:`InputError` unless every joint of ``model`` has q̇ = v
    and constant, commuting child-frame subspace columns (revolute,
    prismatic, helical, cylindrical, translational, fixed): the joints for
    which ``∂/∂q`` at fixed v is a plain partial derivative."""
    for j in model.joints:
        if j.type not in _VECTOR_JOINTS:
            raise InputError(f"{what} needs joints with q̇ = v (revolute, prismatic, helical, cylindrical, "
                             f"translational); joint '{j.name}' is {j.type}")


def kinetic_energy_gradient(model: Model, q: ArrayLike, v: ArrayLike, data: Data | None = None) -> Array:
    """``∂T/∂q`` (nv) at fixed v of the kinetic energy ``T = ½ vᵀH(q)v``,
    i.e. ``½ vᵀ (∂H/∂q_k) v`` — the configuration force of Lagrange's
    equations ``d/dt(Hv) − ∂T/∂q = τ``, in O(n): perturbing joint k moves
    its subtree rigidly along ``S_k``, so ``∂T/∂q_k = −S_kᵀ(v_λ ×* h)`` with
    v_λ the parent body's velocity and h the subtree's spatial momentum
    (body coordinates; derived from Featherstone Eq. 2.67 with
    ∂S_j/∂q_k = S_k × S_j, Eq. 2.41). Defined for joints with q̇ = v
    (revolute, prismatic, helical, cylindrical, translational; else
    :class:`InputError`). One state. Units: N·m or N per coordinate.

    Parameters
    ----------
    model : Model
        The model.
    q : array_like
        Configuration, (nq,).
    v : array_like
        Generalized velocity, (nv,).
    data : Data, optional
        A workspace made for ``model`` (single state only); default: the calling
        thread's cached workspace.

    Returns
    -------
    numpy.ndarray
        ``∂T/∂q`` (N·m, N), (nv,).

    Raises
    ------
    InputError
        If an array has the wrong shape or is not finite, or a joint has
        q̇ ≠ v (free, spherical, planar, ...).
    """
    require_vector_joints(model, "kinetic_energy_gradient")
    q = config(model, q)
    v = velocity(model, v, q)
    if q.ndim != 1:
        raise InputError("kinetic_energy_gradient takes one state: q (nq,) and v (nv,)")
    data = data_for(model, data)
    out = np.empty(model.nv)
    K.kinetic_gradient_kernel(model._tree, q, v, data.poses, data.spatial, out)
    return finite_result("kinetic_energy_gradient", out)


def dof_parents(model: Model) -> npt.NDArray[np.int64]:
    """Expanded parent array λ' of the coordinates (Table 6.4): ``λ'[k]`` is
    the coordinate before k on the path to the root, or -1."""
    lam = np.full(model.nv, -1, dtype=np.int64)
    K.dof_parents(model._tree, lam)
    return lam


class InertiaFactor:
    """Sparse factorization of a joint-space inertia matrix exploiting
    branch-induced sparsity (Featherstone §6.5, Tables 6.3–6.5): no
    fill-in, cost O(n d²) for depth d, solves and products in O(nnz).

    ``kind="ltdl"`` (default): ``H = Lᵀ D L`` with L unit lower triangular
    and D diagonal (no square roots). ``kind="ltl"``: ``H = Lᵀ L`` with L
    lower triangular. In both, L has nonzeros only where H has them."""

    def __init__(self, model, H, kind="ltdl"):
        H = np.array(H, dtype=np.float64)
        if H.shape != (model.nv, model.nv):
            raise InputError(f"H has shape {H.shape}, expected ({model.nv}, {model.nv})")
        if kind not in ("ltdl", "ltl"):
            raise InputError(f"unknown factorization kind '{kind}' (use 'ltdl' or 'ltl')")
        self.kind = kind
        self.lam = dof_parents(model)
        self._LD = H
        st = (K.ltdl_kernel if kind == "ltdl" else K.ltl_kernel)(self.lam, self._LD)
        if st:
            raise not_positive_definite(model, st - 1)

    @property
    def D(self):
        """The diagonal D of LᵀDL (ones for LᵀL)."""
        return np.diag(self._LD).copy() if self.kind == "ltdl" else np.ones(self._LD.shape[0])

    @property
    def L(self):
        """The lower-triangular factor (unit diagonal for LᵀDL)."""
        L = np.tril(self._LD, -1 if self.kind == "ltdl" else 0)
        if self.kind == "ltdl":
            L[np.diag_indices_from(L)] = 1.0
        return L

    def solve(self, b: ArrayLike) -> Array:
        """``H⁻¹ b`` for b of shape (nv,) or (nv, k) (Table 6.5)."""
        b = np.array(b, dtype=np.float64)
        if b.shape[0] != self._LD.shape[0]:
            raise InputError(f"b has shape {b.shape}, expected ({self._LD.shape[0]}, ...)")
        solve = K.ltdl_solve if self.kind == "ltdl" else K.ltl_solve
        if b.ndim == 1:
            solve(self.lam, self._LD, b)
            return b
        cols = np.ascontiguousarray(b.T)
        for c in cols:
            solve(self.lam, self._LD, c)
        return cols.T.copy()

    def inverse(self) -> Array:
        """``H⁻¹`` (nv x nv) from the factor: ``L⁻¹ D⁻¹ L⁻ᵀ`` column by column,
        each column of ``L⁻ᵀ`` touching only the ancestors of its coordinate
        (O(n · nnz)). :func:`inverse_inertia` is faster from q (O(n²))."""
        n = self._LD.shape[0]
        out = np.empty((n, n))
        if self.kind == "ltdl":
            K.inverse_inertia_kernel(self.lam, self._LD, out)
        else:
            out[:] = self.solve(np.eye(n))
        return out

    def L_multiply(self, x, transpose=False):
        """``L x`` (or ``Lᵀ x``) with the sparse factor (Table 6.5)."""
        n = self._LD.shape[0]
        x = np.ascontiguousarray(x, dtype=np.float64)
        if x.shape != (n,):
            raise InputError(f"x has shape {x.shape}, expected ({n},)")
        y = np.empty_like(x)
        K.l_multiply(self.lam, self._LD, x, y, bool(transpose), self.kind == "ltdl")
        return y

    def multiply(self, x: ArrayLike, H: Array) -> Array:
        """``H x`` using only the branch-induced nonzeros of H (Table 6.5)."""
        n = self._LD.shape[0]
        x = np.ascontiguousarray(x, dtype=np.float64)
        H = np.ascontiguousarray(H, dtype=np.float64)
        if x.shape != (n,):
            raise InputError(f"x has shape {x.shape}, expected ({n},)")
        if H.shape != (n, n):
            raise InputError(f"H has shape {H.shape}, expected ({n}, {n})")
        y = np.empty_like(x)
        K.ltdl_multiply(self.lam, H, x, y)
        return y


def not_positive_definite(model, k):
    """The error for an H whose LᵀDL pivot at coordinate k is not positive."""
    return SimulationError(f"the joint-space inertia is not positive definite at coordinate {k} "
                           f"(joint '{model.joints[_joint_of_dof(model, k)].name}'; a massless subtree?)")


def _joint_of_dof(model, k):
    for j in model.joints[1:]:
        if j.v_slice.start <= k < j.v_slice.stop:
            return j.index
    return 0


def inverse_inertia(model: Model, q: ArrayLike, data: Data | None = None) -> Array:
    """``H(q)⁻¹`` (nv x nv, symmetric, armature included) by the ABA-based
    recursion (Carpentier 2018; Pinocchio's ``computeMinverse``): the
    articulated-body algorithm with v = 0 and a symbolic τ, in world
    coordinates, O(n²) on chains (see ``minv_kernels``). One state or a
    batch (B, nv, nv); one compiled call. With ``data`` its workspaces hold
    the ABA quantities afterwards (``data.J`` the world motion subspaces,
    ``data.inertia6`` the articulated inertias, ``data.U``, ``data.Dinv``)
    and the result is ``data.Minv`` (overwritten by the next call);
    without, a new array. Accuracy: relative error ~cond(H)·1e-16.
    A massless subtree (``SᵀIᴬS`` singular) raises SimulationError.

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
        ``H(q)⁻¹``, (nv, nv) or (B, nv, nv); ``data.Minv`` with ``data``.

    Raises
    ------
    InputError
        If an array has the wrong shape or is not finite, or a name is not the
        model's.
    SimulationError
        If the articulated inertia is singular (a massless subtree).
    """
    plain = data is None
    if plain:  # the thread's cached workspace (model.data.workspace, written out: 0.03 us)
        try:
            data = model._workspaces.data
        except AttributeError:
            data = workspace(model)
    if JIT:
        try:
            fast = (plain or data.model is model) and q.dtype is F64 and q.ndim == 1  # type: ignore[union-attr]
        except AttributeError:  # not arrays, or data not a Data: the general path says which
            fast = False
        if fast:
            st = (_MINV or _minv_entry())(data.handle, q)  # type: ignore[union-attr]
            if st == NEEDS_MATRIX:  # first use of this Data's nv x nv buffers
                data.allocate("Minv")  # type: ignore[union-attr]
                st = (_MINV or _minv_entry())(data.handle, q)  # type: ignore[union-attr]
            if not st:
                return data._Minv.copy() if plain else data._Minv  # type: ignore[union-attr]
            if st != BAD_SHAPE:
                _raise_minv_status(model, q, st)
    q = config(model, q)
    if q.ndim == 2:
        out = np.empty((q.shape[0], model.nv, model.nv))
        status = np.zeros(q.shape[0], dtype=np.int64)
        MK.minv_batch(model._tree, q, out, status)
        bad = np.flatnonzero(status)
        if bad.size:
            raise _not_positive_definite_at_body(model, int(status[bad[0]]))
        return finite_result("inverse_inertia", out)
    data = data_for(model, data)
    st = MK.minv_checked(model._tree, q, data.poses, data.jac, data.inertia6, data.U, data.Dinv, data.Minv)
    if st:
        _raise_minv_status(model, q, st)
    return finite_result("inverse_inertia", data.Minv.copy() if plain else data.Minv)


_MINV = None


def _minv_entry():
    global _MINV
    _MINV = entry(MK.minv_fast, INT, F64_1)
    return _MINV


def _not_positive_definite_at_body(model, body):
    """The error for a body whose ``D = SᵀIᴬS + armature`` is not positive
    definite: H is then singular, named by the body's first coordinate."""
    return not_positive_definite(model, model.joints[body].v_slice.start)


def _raise_minv_status(model, q, st):
    if st <= -K.ARG:
        raise _not_positive_definite_at_body(model, -st - K.ARG)
    raise_status(model, q, st)


def operational_space_inverse_inertia(model: Model, q: ArrayLike, J: ArrayLike) -> Array:
    """``Λ⁻¹ = J H⁻¹ Jᵀ`` for a Jacobian ``J`` (m x nv): the inverse
    operational-space (or contact-space) inertia (Featherstone §7.2.1,
    Eq. 7.10), by sparse solves with the LᵀDL factor of H.

    Parameters
    ----------
    model : Model
        The model.
    q : array_like
        Configuration, (nq,).
    J : array_like
        A Jacobian, (m, nv).

    Returns
    -------
    numpy.ndarray
        ``Λ⁻¹``, (m, m), symmetric.

    Raises
    ------
    InputError
        If an array has the wrong shape or is not finite, or a name is not the
        model's.
    """
    q = config(model, q)
    if q.ndim != 1:
        raise InputError("operational_space_inverse_inertia takes one configuration q of shape "
                         f"({model.nq},), got {q.shape}")
    J = as_float_array(J, "J")
    if J.ndim != 2 or J.shape[1] != model.nv or J.shape[0] == 0:
        raise InputError(f"J has shape {J.shape}, expected (m, {model.nv}) with m >= 1")
    if not np.isfinite(J).all():
        raise NonFiniteError(f"J has a non-finite entry at index {tuple(int(i) for i in np.argwhere(~np.isfinite(J))[0])}")
    fac = InertiaFactor(model, crba(model, q))
    X = fac.solve(J.T)
    return finite_result("operational_space_inverse_inertia", J @ X)
