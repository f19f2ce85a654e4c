"""Closed-loop forward dynamics by the range-space method (Featherstone
§8.5, method 2) with the sparse LᵀDL factorization of H (§6.5), compiled:
the one implementation behind ``closed_loop_forward_dynamics(...,
method="range_space")`` (:mod:`.closed_loop`, given K and k) and the
simulator's loop constraints (:mod:`multibody.constraints._kernels`, which
build K and k from the loop joints and add Baumgarte's terms, §8.3).

For ``H q̈ + C = τ + Kᵀλ`` with ``K q̈ = k``:

* ``q̈₀ = H⁻¹(τ − C)`` (RNEA for C, CRBA and the LᵀDL for H);
* ``X = (H⁻¹Kᵀ)ᵀ``, all rows in one walk of the expanded parent array per
  factor (Table 6.5; :func:`solve_rows`);
* ``A = K H⁻¹Kᵀ = K Xᵀ``, positive semidefinite (:func:`schur`); a
  redundant row (a planar four-bar in 3-D has three) has a pivot below
  ``PSD_RTOL`` times A's largest diagonal entry and is dropped, its λ 0
  (:func:`psd_factor`);
* ``λ = A⁺(k − K q̈₀)`` and ``q̈ = q̈₀ + Xᵀλ`` (:func:`apply_correction`).

The same pieces give the M-metric corrections of the constrained steps
(ArtiSynth §0.5–0.6): ``M⁻¹Gᵀ(GM⁻¹Gᵀ)⁺ r`` (:func:`apply_correction`).
"""
import numpy as np
from numba import njit

from .kernels import crba_kernel, ltdl_kernel, ltdl_solve, rnea_kernel

PSD_RTOL = 1e-12  # a row of GM⁻¹Gᵀ whose pivot is below PSD_RTOL x its largest diagonal entry is dependent


@njit(cache=True, nogil=True)
def psd_factor(A, D, rtol):
    """In place, for a symmetric positive semidefinite A (m x m; its lower
    triangle is read) whose dependent rows are consistent (a constraint
    Jacobian's ``G M⁻¹Gᵀ`` with redundant rows): ``A = L D Lᵀ`` without
    pivoting, the unit lower-triangular L written strictly below A's
    diagonal, dropping every row whose pivot falls below ``rtol`` times the
    largest diagonal entry (``D[j] = 0``: its multiplier is 0, as for a row
    removed from the system; any other D[j] is kept, a NaN too, so that a
    non-finite input shows in the result). Returns the rank."""
    m = D.shape[0]
    scale = 0.0
    for i in range(m):
        scale = max(scale, A[i, i])
    tol = rtol * scale
    rank = 0
    for j in range(m):
        d = A[j, j]
        for k in range(j):
            if D[k] != 0.0:
                d -= A[j, k] * A[j, k] * D[k]
        if d <= tol:
            D[j] = 0.0
            continue
        rank += 1
        D[j] = d
        for i in range(j + 1, m):
            s = A[i, j]
            for k in range(j):
                if D[k] != 0.0:
                    s -= A[i, k] * A[j, k] * D[k]
            A[i, j] = s / d
    return rank


@njit(cache=True, nogil=True, inline="always")
def psd_apply(L, D, b, x, y):
    """``x = A⁺ b`` from the factor (L, D) of :func:`psd_factor` (y: scratch, m)."""
    m = D.shape[0]
    for i in range(m):  # L y = b on the kept rows
        if D[i] != 0.0:
            s = b[i]
            for k in range(i):
                if D[k] != 0.0:
                    s -= L[i, k] * y[k]
            y[i] = s
    for i in range(m - 1, -1, -1):  # D Lᵀ x = y
        if D[i] != 0.0:
            s = y[i] / D[i]
            for k in range(i + 1, m):
                if D[k] != 0.0:
                    s -= L[k, i] * x[k]
            x[i] = s
        else:
            x[i] = 0.0


@njit(cache=True, nogil=True, inline="always")
def solve_rows(lam, Lf, G, X):
    """Rows of ``X = (M⁻¹Gᵀ)ᵀ`` from the in-place LᵀDL factor Lf of M
    (Featherstone Table 6.5, all nc right-hand sides in one walk of the
    expanded parent array λ)."""
    nc, nv = G.shape
    for r in range(nc):
        for c in range(nv):
            X[r, c] = G[r, c]
    for i in range(nv - 1, -1, -1):  # L⁻ᵀ
        j = lam[i]
        while j >= 0:
            l = Lf[i, j]
            for r in range(nc):
                X[r, j] -= l * X[r, i]
            j = lam[j]
    for i in range(nv):
        d = Lf[i, i]
        for r in range(nc):
            X[r, i] /= d
    for i in range(nv):  # L⁻¹
        j = lam[i]
        while j >= 0:
            l = Lf[i, j]
            for r in range(nc):
                X[r, i] -= l * X[r, j]
            j = lam[j]


@njit(cache=True, nogil=True, inline="always")
def constraint_gram(G, X, A):
    """``A = G M⁻¹Gᵀ = G Xᵀ`` (its lower triangle) into A."""
    nc, nv = G.shape
    for i in range(nc):
        for j in range(i + 1):
            s = 0.0
            for c in range(nv):
                s += G[i, c] * X[j, c]
            A[i, j] = s


@njit(cache=True, nogil=True, inline="always")
def schur(G, X, AL, AD):
    """``A = G M⁻¹Gᵀ = G Xᵀ`` (lower triangle) into AL, then its
    :func:`psd_factor` in place (AL, AD); returns the rank."""
    constraint_gram(G, X, AL)
    return psd_factor(AL, AD, PSD_RTOL)


@njit(cache=True, nogil=True, inline="always")
def apply_correction(X, AL, AD, r, mu, y, out):
    """``out = M⁻¹Gᵀ (GM⁻¹Gᵀ)⁺ r = Xᵀ A⁺ r`` from X and the factor of A
    (:func:`schur`); mu, y: scratch (nc)."""
    psd_apply(AL, AD, r, mu, y)
    nc, nv = X.shape
    for c in range(nv):
        s = 0.0
        for i in range(nc):
            s += X[i, c] * mu[i]
        out[c] = s


@njit(cache=True, nogil=True)
def free_acceleration(tree, lam, q, v, tau, gravity_on, poses, jac, spatial, inertia6, M, Lf, a):
    """``a = H⁻¹(τ − C(q, v))`` (RNEA with zero acceleration for C, CRBA
    into M, its sparse LᵀDL factor into Lf: Featherstone Tables 5.1,
    6.2–6.3). Returns 0, or −2 if H is not positive definite."""
    nv = v.shape[0]
    c = np.empty(nv)
    rnea_kernel(tree, q, v, np.zeros(nv), gravity_on, False, poses, spatial, c)
    crba_kernel(tree, lam, q, poses, jac, inertia6, M)
    Lf[:, :] = M
    if ltdl_kernel(lam, Lf) != 0:
        return -2
    for i in range(nv):
        a[i] = tau[i] - c[i]
    ltdl_solve(lam, Lf, a)
    return 0


@njit(cache=True, nogil=True)
def range_space_acceleration(tree, lam, q, v, tau, gravity_on, K, k, poses, jac, spatial, inertia6, M, out,
                             multipliers):
    """Closed-loop forward dynamics (Featherstone §8.5, method 2; see the
    module docstring): ``out = q̈`` of the tree under the joint forces τ
    (N, N·m) and the constraints ``K q̈ = k`` (K: nc x nv), and
    ``multipliers = λ`` with the constraint forces ``Kᵀλ``, 0 on rows
    dropped as redundant. Gravity if ``gravity_on``. Returns 0, or −2 if H
    is not positive definite."""
    nv, nc = v.shape[0], K.shape[0]
    Lf = np.empty((nv, nv))
    if free_acceleration(tree, lam, q, v, tau, gravity_on, poses, jac, spatial, inertia6, M, Lf, out) != 0:
        return -2
    r = np.empty(nc)
    for i in range(nc):
        s = 0.0
        for j in range(nv):
            s += K[i, j] * out[j]
        r[i] = k[i] - s
    X = np.empty((nc, nv))
    solve_rows(lam, Lf, K, X)
    AL, AD = np.empty((nc, nc)), np.empty(nc)
    schur(K, X, AL, AD)
    dq = np.empty(nv)
    apply_correction(X, AL, AD, r, multipliers, np.empty(nc), dq)
    for i in range(nv):
        out[i] += dq[i]
    return 0
