"""Principal pivoting for the frictionless contact LCP, with the columns of
its matrix computed on demand (ArtiSynth §0.8, seed-000 C8; docs/contact.md,
"Contact solvers").

``LCP(A, b)``: find z with ``w = A z + b ≥ 0``, ``z ≥ 0``, ``zᵀw = 0``, A
symmetric positive semi-definite (a Delassus matrix ``J M⁻¹ Jᵀ``: singular
when contacts are redundant). The method is Dantzig's principal pivoting
as Baraff adapted it to contact ("Fast contact force computation for
nonpenetrating rigid bodies", SIGGRAPH 1994, §5–6; Cottle & Dantzig 1968):
the indices are split into the clamped set C (``w_i = 0``, ``z_i ≥ 0``:
pressing contacts) and the rest (``z_i = 0``, ``w_i ≥ 0``). Each index d
with ``w_d < 0`` is driven: z_d grows along the direction ``Δz_C = −A_CC⁻¹
A_Cd``, ``Δz_d = 1``, which keeps ``w_C = 0``, until the first of w_d
reaching 0 (d joins C), a clamped z_i reaching 0 (i leaves C) or a free
w_i reaching 0 (i joins C). Each step is one principal pivot transform of
§0.8 (the set C ↔ the basis α). For a positive semi-definite A, ``A_CC``
stays positive definite (Baraff §6: a direction along which
``A_{C∪d}`` is singular has ``Δw_d = 0`` and ends on a clamped index
leaving), so the method only meets a ray when the LCP is infeasible.

Columns on demand (§0.8: "column j of the LCP matrix is computed and cached
the first time z_j enters the basis"): the kernel asks
``column(data, j, out)`` for column j of A only when index j is driven or
clamped, so the contacts that never press (speculative contacts that do
not close, b ≥ 0) cost no column — for the contact stage, no solve with M
and no products with the other rows (constraints/_contact.py). At the end
the clamped z_C are re-solved from the data, ``A_CC z_C = −b_C``.

Each pivot refactors ``A_CC`` (dense Cholesky, |C|³/6): no rank-one
updates yet, so the method suits the tens of pressing contacts of a
robot, not piles of hundreds.
"""
import numpy as np
from numba import njit

from .._status import CONTACT_BAD_SHAPE, CONTACT_NON_FINITE, PIVOT_CAP, RAY

_TINY = 1e-13  # relative: entries of a direction below this times its scale are 0


@njit(cache=True, nogil=True)
def dense_column(A, j, out):
    """Column j of the dense matrix A into ``out``: the column provider of
    :func:`principal_pivoting` for a matrix formed in advance."""
    for i in range(A.shape[0]):
        out[i] = A[i, j]


@njit(cache=True, nogil=True)
def _cholesky_solve(K, cols, k, rhs, L, x):
    """Solve ``A_CC x = rhs`` for the k clamped indices ``cols[:k]`` with
    A's cached columns ``K`` (K[j] = column j); False if A_CC is not
    positive definite (a pivot below 1e-14 of the largest diagonal)."""
    big = 0.0
    for a in range(k):
        big = max(big, K[cols[a], cols[a]])
    for a in range(k):
        for c in range(a + 1):
            s = K[cols[c], cols[a]]
            for e in range(c):
                s -= L[a, e] * L[c, e]
            if a == c:
                if s <= 1e-14 * big:
                    return False
                L[a, a] = np.sqrt(s)
            else:
                L[a, c] = s / L[c, c]
    for a in range(k):
        s = rhs[a]
        for e in range(a):
            s -= L[a, e] * x[e]
        x[a] = s / L[a, a]
    for a in range(k - 1, -1, -1):
        s = x[a]
        for e in range(a + 1, k):
            s -= L[e, a] * x[e]
        x[a] = s / L[a, a]
    return True


@njit(cache=True, nogil=True)
def principal_pivoting(A, b, z, w, K, done, clamped, cols, L, x, dz, max_pivots):
    """:func:`pivoting` on the dense matrix A (:func:`dense_column`)."""
    return pivoting(dense_column, A, b, z, w, K, done, clamped, cols, L, x, dz, max_pivots)


# Inlined into its two callers (principal_pivoting above, and the contact stage's solver with the
# columns on demand, constraints/_contact.py): the column provider is then a global function of the
# caller, and the caller's compiled code can be cached (a function passed as an argument cannot).
@njit(cache=True, nogil=True, inline="always")
def pivoting(column, data, b, z, w, K, done, clamped, cols, L, x, dz, max_pivots):
    """Solve ``LCP(A, b)`` (module docstring) for the m = len(b) indices,
    A symmetric positive semi-definite given by its columns:
    ``column(data, j, out)`` writes column j of A into ``out`` (m,).
    Writes z and w = A z + b (m,). Work arrays: ``K`` (m, m) — K[j] holds
    column j once computed (``done[j]`` = 1); ``done``, ``clamped``,
    ``cols`` (m,) int64; ``L`` (m, m); ``x``, ``dz`` (m,). ``done`` must
    be 0 on entry (or mark columns already in K). Returns the
    number of pivots (≥ 0), ``RAY`` (an index cannot be driven: the LCP
    is infeasible, or A is not positive semi-definite), ``PIVOT_CAP``,
    ``CONTACT_NON_FINITE`` or ``CONTACT_BAD_SHAPE`` (z and w then hold the
    iterate where it stopped, not a solution). The number of columns computed is ``done.sum()``."""
    m = b.shape[0]
    if (z.shape[0] != m or w.shape[0] != m or K.shape[0] < m or K.shape[1] < m or done.shape[0] < m
            or clamped.shape[0] < m or cols.shape[0] < m or L.shape[0] < m or L.shape[1] < m or x.shape[0] < m
            or dz.shape[0] < m):
        return CONTACT_BAD_SHAPE
    scale = 0.0
    for i in range(m):
        if not np.isfinite(b[i]):
            return CONTACT_NON_FINITE
        scale = max(scale, abs(b[i]))
        clamped[i] = 0
        z[i] = 0.0
        w[i] = b[i]
    tol = 1e-12 * scale
    pivots = 0
    while True:
        d = -1
        worst = -tol
        for i in range(m):  # the most violated free index
            if not clamped[i] and w[i] < worst:
                worst = w[i]
                d = i
        if d < 0:
            break
        if not done[d]:
            column(data, d, K[d])
            done[d] = 1
        while True:  # drive w_d to 0
            k = 0
            for i in range(m):
                if clamped[i]:
                    cols[k] = i
                    k += 1
            for a in range(k):
                dz[a] = -K[d, cols[a]]
            if k and not _cholesky_solve(K, cols, k, dz, L, x):
                return RAY
            # Δw = A_{:,C} x + A_{:,d}; its entries on C are 0 by construction
            dwd = K[d, d]
            for a in range(k):
                dwd += K[cols[a], d] * x[a]
            size = abs(K[d, d])
            step = np.inf
            leave = -1
            if dwd > _TINY * size:
                step = -w[d] / dwd
                leave = d
            # another index blocks only if it does so clearly first: on a tie the driven one wins (two
            # identical contacts tie exactly, and letting the other join C would then cycle)
            for a in range(k):
                if x[a] < -_TINY:
                    t = -z[cols[a]] / x[a]
                    if t < step * (1.0 - 1e-12):
                        step = t
                        leave = cols[a]
            for i in range(m):
                if clamped[i] or i == d:
                    continue
                dwi = K[d, i]
                for a in range(k):
                    dwi += K[cols[a], i] * x[a]
                dz[i] = dwi
                if w[i] >= 0.0 and dwi < -_TINY * size:  # a violated index is driven later: it does not block
                    t = -w[i] / dwi
                    if t < step * (1.0 - 1e-12):
                        step = t
                        leave = i
            if leave < 0:
                return RAY
            step = max(step, 0.0)
            pivots += 1
            if pivots > max_pivots:
                return PIVOT_CAP
            z[d] += step
            w[d] += step * dwd
            for a in range(k):
                z[cols[a]] += step * x[a]
            for i in range(m):
                if not clamped[i] and i != d:
                    w[i] += step * dz[i]
            if leave == d:
                clamped[d] = 1
                w[d] = 0.0
                break
            if clamped[leave]:  # a pressing index lets go
                clamped[leave] = 0
                z[leave] = 0.0
            else:  # a free index starts pressing
                clamped[leave] = 1
                w[leave] = 0.0
                if not done[leave]:
                    column(data, leave, K[leave])
                    done[leave] = 1
    # re-solve the clamped set from the data (the updates accumulate round-off), then w
    k = 0
    for i in range(m):
        if clamped[i]:
            cols[k] = i
            dz[k] = -b[i]
            k += 1
    if k and not _cholesky_solve(K, cols, k, dz, L, x):
        return RAY
    for i in range(m):
        z[i] = 0.0
    for a in range(k):
        z[cols[a]] = max(x[a], 0.0)
    for i in range(m):
        s = b[i]
        for a in range(k):
            s += K[cols[a], i] * z[cols[a]]
        w[i] = 0.0 if clamped[i] else s
    return pivots
