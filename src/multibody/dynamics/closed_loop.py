"""Forward and inverse dynamics of systems with closed kinematic loops
(Featherstone ch. 8): the tree's equation of motion ``H q̈ + C = τ + Kᵀλ``
with the loop constraints at acceleration level ``K q̈ = k``.

K and k come from the caller (:class:`multibody.constraints.Constraints`
gives ``G`` = K and k, with Baumgarte terms added by the caller,
Featherstone §8.3: ``k_stab = k − 2α K v − β² φ``). Redundant rows
(rank(K) < rows, e.g. a planar four-bar of revolute joints in 3-D) are
handled by every method: a rank-revealing QR with column pivoting
(LAPACK geqp3) selects independent rows or columns, the numerically stable
counterpart of the complete-pivoting LU of §8.8.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from scipy.linalg import qr, solve, solve_triangular
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from ..errors import InputError
from ..model.checks import finite_result
from ._common import config, data_for, velocity
from .closed_loop_kernels import range_space_acceleration
from .inertia import crba, not_positive_definite
from .inverse import rnea
from .kernels import ltdl_kernel

from .._typing import Array, ArrayLike

if TYPE_CHECKING:
    from ..model.data import Data
    from ..model.model import Model

METHODS = ("kkt", "range_space", "null_space")


def _rank(R, rtol=1e-10):
    d = np.abs(np.diag(R))
    if d.size == 0 or d[0] == 0.0:
        return 0
    return int(np.sum(d > rtol * d[0]))


def independent_rows(K):
    """Indices of a maximal set of linearly independent rows of K (QR of Kᵀ
    with column pivoting)."""
    if K.shape[0] == 0:
        return np.zeros(0, np.int64)
    _, R, piv = qr(K.T, mode="economic", pivoting=True)
    return np.sort(piv[:_rank(R)])


def _qr_null_space(K, k):
    """(G, g) of one loop cluster by QR with column pivoting (see
    :func:`null_space_basis`)."""
    n = K.shape[1]
    Q, R, piv = qr(K, pivoting=True)
    r = _rank(R)
    G = np.zeros((n, n - r))
    G[piv[:r]] = -solve_triangular(R[:r, :r], R[:r, r:])
    G[piv[r:]] = np.eye(n - r)
    g = np.zeros(n)
    g[piv[:r]] = solve_triangular(R[:r, :r], (Q.T @ k)[:r])
    return G, g


def loop_clusters(K):
    """Minimal loop clusters of K (Featherstone §8.9): the connected
    components of the graph joining a constraint row to the coordinates it
    involves. Returns a list of (rows, coordinates) index arrays; the
    coordinates of no row are left out."""
    nc, n = K.shape
    rows, cols = np.nonzero(K)
    graph = coo_matrix((np.ones(len(rows)), (rows, nc + cols)), shape=(nc + n, nc + n))
    count, label = connected_components(graph, directed=False)
    clusters = []
    for c in np.unique(label[:nc]):
        members = np.flatnonzero(label == c)
        clusters.append((members[members < nc], members[members >= nc] - nc))
    return clusters


def null_space_basis(K: Array, k: Array) -> tuple[Array, Array]:
    """``(G, g)`` with ``K G = 0`` (G: n x (n − r), full column rank) and
    ``K g = k`` (Featherstone §8.8, Eqs. 8.48–8.51), exploiting the loop
    clusters of §8.9: G is block diagonal — one block per cluster, from
    ``K_c P = Q R`` (column pivoting): ``G_c = P [−R₁₁⁻¹R₁₂; 1]``,
    ``g_c = P [R₁₁⁻¹(Qᵀk)₁; 0]``, so the independent variables y are a
    subset of the coordinates — and identity columns for the coordinates in
    no loop."""
    nc, n = K.shape
    if nc == 0:
        return np.eye(n), np.zeros(n)
    blocks, g = [], np.zeros(n)
    free = np.ones(n, bool)
    for rows, cols in loop_clusters(K):
        Gc, gc = _qr_null_space(K[np.ix_(rows, cols)], k[rows])
        blocks.append((cols, Gc))
        g[cols] = gc
        free[cols] = False
    free_cols = np.flatnonzero(free)
    G = np.zeros((n, len(free_cols) + sum(b.shape[1] for _, b in blocks)))
    G[free_cols, np.arange(len(free_cols))] = 1.0
    c = len(free_cols)
    for cols, Gc in blocks:
        G[np.ix_(cols, np.arange(c, c + Gc.shape[1]))] = Gc
        c += Gc.shape[1]
    return G, g


def closed_loop_forward_dynamics(model: Model, q: ArrayLike, v: ArrayLike, tau: ArrayLike, K: ArrayLike, k: ArrayLike,
                                 method: str = "kkt", gravity: bool = True,
                                 data: Data | None = None) -> tuple[Array, Array | None]:
    """``(q̈, λ)`` of the tree under joint forces ``tau`` (nv) and the loop
    constraints ``K q̈ = k`` (K: nc x nv), with constraint forces ``Kᵀλ``
    (Featherstone Eq. 8.6). Methods of §8.5, which agree to round-off:

    * ``"kkt"`` (method 1): the symmetric indefinite system
      ``[H Kᵣᵀ; Kᵣ 0][q̈; −λᵣ] = [τ − C; kᵣ]`` on independent rows r;
    * ``"range_space"`` (method 2): λ first, ``A = K H⁻¹Kᵀ`` (PSD) with
      ``H = LᵀDL`` the sparse factorization (§6.5), ``A λ = k − K H⁻¹(τ − C)``
      solved on independent rows, then ``q̈ = H⁻¹(τ − C) + H⁻¹Kᵀλ``: the
      compiled kernel the simulator's loop constraints use
      (:mod:`.closed_loop_kernels`);
    * ``"null_space"`` (method 3, §8.8): ``q̈ = G ÿ + g`` and
      ``(GᵀHG) ÿ = Gᵀ(τ − C − H g)`` — no λ (returned as None).

    λ is the minimum-norm multiplier on the rows given (dependent rows get
    none). ``data``: an optional workspace for the tree algorithms. Raises
    InputError for an unknown method or wrong shapes."""
    if method not in METHODS:
        raise InputError(f"unknown closed-loop method '{method}' (use one of {', '.join(METHODS)})")
    nv = model.nv
    K = np.asarray(K, dtype=float)
    k = np.asarray(k, dtype=float)
    if K.ndim != 2 or K.shape[1] != nv or k.shape != (K.shape[0],):
        raise InputError(f"K must be (nc, {nv}) and k (nc,), got {K.shape} and {k.shape}")
    if method == "range_space":
        return _range_space(model, q, v, tau, K, k, gravity, data)
    H = crba(model, q, data).copy()
    rhs = np.asarray(tau, dtype=float) - rnea(model, q, v, np.zeros(nv), gravity=gravity, data=data)
    if method == "null_space":
        G, g = null_space_basis(K, k)
        A = G.T @ H @ G
        ydd = solve(A, G.T @ (rhs - H @ g), assume_a="pos") if A.size else np.zeros(0)
        return G @ ydd + g, None
    rows = independent_rows(K)  # method 1
    Kr, kr = K[rows], k[rows]
    lam = np.zeros(K.shape[0])
    m = len(rows)
    A = np.zeros((nv + m, nv + m))
    A[:nv, :nv], A[:nv, nv:], A[nv:, :nv] = H, Kr.T, Kr
    x = solve(A, np.concatenate([rhs, kr]), assume_a="sym")
    lam[rows] = -x[nv:]
    return x[:nv], lam


def _range_space(model, q, v, tau, K, k, gravity, data):
    """Method 2 of :func:`closed_loop_forward_dynamics`: the compiled
    :func:`~.closed_loop_kernels.range_space_acceleration` (the simulator's
    loop constraints use the same kernel) on the independent rows of K."""
    q = config(model, q)
    if q.ndim != 1:
        raise InputError(f"closed_loop_forward_dynamics takes one state: q must be ({model.nq},), got {q.shape}")
    v, tau = velocity(model, v, q), velocity(model, tau, q, "tau")
    data = data_for(model, data)
    data.allocate("M")
    rows = independent_rows(K)
    qdd, lam_r = np.empty(model.nv), np.empty(len(rows))
    if range_space_acceleration(model._tree, model.dof_parent, q, v, tau, bool(gravity), np.ascontiguousarray(K[rows]),
                                np.ascontiguousarray(k[rows]), data.poses, data.jac, data.spatial, data.inertia6, data.M,
                                qdd, lam_r):
        raise not_positive_definite(model, ltdl_kernel(model.dof_parent, data.M.copy()) - 1)  # the failed pivot
    lam = np.zeros(K.shape[0])
    lam[rows] = lam_r
    return finite_result("closed_loop_forward_dynamics", qdd), lam


def closed_loop_inverse_dynamics(model: Model, q: ArrayLike, v: ArrayLike, a: ArrayLike, K: ArrayLike,
                                 actuated: ArrayLike | None = None, weights: ArrayLike | None = None,
                                 passive: ArrayLike | None = None, gravity: bool = True) -> Array:
    """Actuator forces ``u`` that produce the (loop-consistent) motion
    (q, v, q̈ = a) of a closed-loop system (Featherstone §8.12, Eqs.
    8.61–8.63): with ``τ_ID = rnea(q, v, a)`` and G a basis of K's null
    space, the actuator forces on the coordinates ``actuated`` (boolean
    mask or indices; default: all) satisfy ``G_uᵀ u = Gᵀ τ_ID``. Redundantly
    actuated systems get the solution minimizing ``Σ w_i u_i²``
    (``weights``, default 1); an underactuated system whose motion the
    actuators cannot produce raises InputError with the residual.
    ``passive`` (nv): known generalized forces that also acted (joint
    damping, springs), subtracted from τ_ID. Returns τ (nv) with u on the
    actuated coordinates and 0 elsewhere."""
    nv = model.nv
    K = np.asarray(K, dtype=float)
    if actuated is None:
        idx = np.arange(nv)
    else:
        act = np.asarray(actuated)
        idx = np.flatnonzero(act) if act.dtype == bool else np.unique(act.astype(np.int64))
    w = np.ones(len(idx)) if weights is None else np.asarray(weights, dtype=float)
    if w.shape != (len(idx),) or not (w > 0).all():
        raise InputError(f"weights must be {len(idx)} positive numbers, one per actuated coordinate")
    tau_id = rnea(model, q, v, a, gravity=gravity)
    if passive is not None:
        tau_id = tau_id - np.asarray(passive, dtype=float)
    G, _ = null_space_basis(K, np.zeros(K.shape[0]))
    A = G[idx].T / np.sqrt(w)          # scaled unknowns s = √w u: minimum ‖s‖ is minimum Σ w u²
    b = G.T @ tau_id
    s, *_ = np.linalg.lstsq(A, b, rcond=None)
    residual = np.abs(A @ s - b).max() if b.size else 0.0
    if residual > 1e-9 * max(1.0, np.abs(b).max()):
        raise InputError(f"the actuated coordinates cannot produce this motion (underactuated; "
                         f"residual {residual:.3g})")
    tau = np.zeros(nv)
    tau[idx] = s / np.sqrt(w)
    return tau
