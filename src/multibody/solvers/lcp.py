"""Linear complementarity problems ``w = Aλ + b``, ``λ ≥ 0``, ``w ≥ 0``,
``λᵀw = 0`` (Drumwright §2, Featherstone §11.5)."""
from __future__ import annotations

import numpy as np
from numba import njit
from scipy.linalg import LinAlgError, cholesky, solve_triangular

from .._typing import Array, ArrayLike
from ..errors import SimulationError


@njit(cache=True, nogil=True)
def _solve_active(A, b, active, lam, L, idx, y):
    """``λ_S = −A_SS⁻¹ b_S`` (Cholesky of the active block into L), 0
    elsewhere; returns False if A_SS is not positive definite."""
    m = b.shape[0]
    n = 0
    for i in range(m):
        lam[i] = 0.0
        if active[i]:
            idx[n] = i
            n += 1
    for r in range(n):
        for c in range(r + 1):
            s = A[idx[r], idx[c]]
            for k in range(c):
                s -= L[r, k] * L[c, k]
            if r == c:
                if s <= 0.0:
                    return False
                L[r, r] = np.sqrt(s)
            else:
                L[r, c] = s / L[c, c]
    for r in range(n):  # L y = −b_S
        s = -b[idx[r]]
        for k in range(r):
            s -= L[r, k] * y[k]
        y[r] = s / L[r, r]
    for r in range(n - 1, -1, -1):  # Lᵀ x = y
        s = y[r]
        for k in range(r + 1, n):
            s -= L[k, r] * lam[idx[k]]
        lam[idx[r]] = s / L[r, r]
    return True


@njit(cache=True, nogil=True)
def principal_pivoting_lcp(A, b, lam, w, max_iterations):
    """Murty's least-index principal pivoting method (Murty 1974; Cottle,
    Pang & Stone §4.2) for an LCP with a symmetric positive definite A:
    keep a set S of positive λ, solve ``A_SS λ_S = −b_S``, and flip the
    first index whose basic variable (λ_i for i ∈ S, w_i otherwise) is
    negative; finite for P-matrices. It starts from S = {i : b_i < 0}, the
    usual answer for impacts. Writes λ and w; returns the number of
    iterations, or −1 (no convergence) / −2 (A_SS not positive definite)."""
    m = b.shape[0]
    active = np.empty(m, np.bool_)
    L = np.empty((m, m))
    idx = np.empty(m, np.int64)
    y = np.empty(m)
    scale = 0.0
    for i in range(m):
        scale = max(scale, abs(b[i]))
        active[i] = b[i] < 0.0
    tol = 1e-13 * max(scale, 1e-300)
    for it in range(max_iterations):
        if not _solve_active(A, b, active, lam, L, idx, y):
            return -2
        flip = -1
        for i in range(m):
            s = b[i]
            for k in range(m):
                s += A[i, k] * lam[k]
            w[i] = 0.0 if active[i] else s
            if flip < 0 and ((active[i] and lam[i] < -tol) or (not active[i] and s < -tol)):
                flip = i
        if flip < 0:
            for i in range(m):
                if lam[i] < 0.0:
                    lam[i] = 0.0
                if w[i] < 0.0:
                    w[i] = 0.0
            return it + 1
        active[flip] = not active[flip]
    return -1


def solve_spd_lcp(A: ArrayLike, b: ArrayLike) -> tuple[Array, Array]:
    """Solve the LCP ``w = Aλ + b ≥ 0``, ``λ ≥ 0``, ``λᵀw = 0`` exactly (to
    round-off) for a symmetric positive definite A (e.g. ``G M⁻¹ Gᵀ`` of
    independent constraints): compiled principal pivoting
    (:func:`principal_pivoting_lcp`); should it not finish — round-off on
    a nearly singular A — the LCP is solved as the convex QP
    ``min ½λᵀAλ + bᵀλ``, ``λ ≥ 0``, i.e. with ``A = LLᵀ`` the non-negative
    least squares ``min ‖Lᵀλ + L⁻¹b‖`` (Lawson–Hanson, ``scipy.optimize.nnls``).
    Returns ``(λ, w)``."""
    A = np.ascontiguousarray(A, dtype=float)
    b = np.ascontiguousarray(b, dtype=float)
    m = b.size
    lam, w = np.empty(m), np.empty(m)
    if m == 0 or principal_pivoting_lcp(A, b, lam, w, 50 + 10 * m * m) > 0:
        return lam, w
    try:
        L = cholesky(A, lower=True)
    except LinAlgError:
        raise SimulationError("the LCP matrix is not positive definite (dependent unilateral constraints)") \
            from None
    from scipy.optimize import nnls  # here: importing scipy.optimize cost 0.15 s of every start-up
    lam, _ = nnls(L.T, solve_triangular(L, -b, lower=True))
    return lam, A @ lam + b
