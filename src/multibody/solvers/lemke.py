"""Lemke's complementary pivoting for a general LCP, and the polyhedral
friction LCPs of the contact problem built on it (docs/contact.md,
"Contact solvers"; seed-000 C10 Anitescu–Stewart, §6 "A complete LCP
solver").

``LCP(A, q)``: find z with ``w = A z + q ≥ 0``, ``z ≥ 0``, ``zᵀw = 0``.
Lemke's method (Lemke 1965; Murty, *Linear Complementarity, Linear and
Nonlinear Programming*, ch. 2; Cottle, Pang & Stone §4.4) adds an
artificial variable z0 with the covering vector e = (1, …, 1):
``w = A z + q + e z0``, starts from ``z0 = −min q``, and pivots
complementarily (the complement of the variable that just left enters)
until z0 leaves the basis (a solution) or the entering column has no
positive entry (a secondary ray). The leaving variable is chosen by the
lexicographic minimum-ratio test on the rows ``(q̄_i, (B⁻¹)_i) / d_i``,
which never ties, so no basis repeats: the method is finite on degenerate
problems, where a plain minimum-ratio test with a fixed tie rule can cycle
(resting contacts make the friction LCPs degenerate: their γ rows have
q = 0). When z0 ties for leaving it leaves (the basis is then a solution).
Lemke processes every LCP whose matrix is copositive-plus (positive
semi-definite matrices included): it then ends on a ray only if the LCP
is infeasible. The Stewart–Trinkle matrices of ``pyramid_lcp`` and
``box_lcp`` are copositive and Lemke solves them (Anitescu & Potra 1997).

The kernels take float64 C-contiguous arrays and allocate their dense
tableau (n x (2n+2)) and scratch once per call.
"""
import numpy as np
from numba import njit

from .._status import CONTACT_BAD_SHAPE, CONTACT_NON_FINITE, INACCURATE, PIVOT_CAP, RAY

_TIE = 1e-11    # ratios (of the scaled problem) this close are ties, broken lexicographically
_PIVOT = 1e-12  # entries of the entering column below this (relative to its largest) are 0


@njit(cache=True, nogil=True)
def _pivot(T, r, j):
    """Gauss–Jordan pivot of the tableau on row r, column j."""
    rows, cols = T.shape
    p = T[r, j]
    for c in range(cols):
        T[r, c] /= p
    for i in range(rows):
        if i != r:
            f = T[i, j]
            if f != 0.0:
                for c in range(cols):
                    T[i, c] -= f * T[r, c]
                T[i, j] = 0.0
    T[r, j] = 1.0


@njit(cache=True, nogil=True)
def _leaving(T, basis, j, n, first, candidates):
    """The row whose basic variable leaves when column j enters: the
    lexicographic minimum of ``(q̄_i, (B⁻¹)_i) / d_i`` over the rows with
    ``d_i = T[i, j] > 0`` (``first``: z0 entering the initial basis, every
    row with d_i = 1); z0's row if it ties for the minimum ratio; −1 if no
    row qualifies (a ray)."""
    rhs = 2 * n + 1
    dmax = 0.0
    for i in range(n):
        dmax = max(dmax, abs(T[i, j]))
    theta = np.inf
    for i in range(n):
        d = 1.0 if first else T[i, j]
        if d > _PIVOT * dmax:
            theta = min(theta, T[i, rhs] / d)
    if theta == np.inf:
        return -1
    count = 0
    for i in range(n):
        d = 1.0 if first else T[i, j]
        if d > _PIVOT * dmax and T[i, rhs] / d <= theta + _TIE * (1.0 + abs(theta)):
            if basis[i] == 2 * n:
                return i
            candidates[count] = i
            count += 1
    for k in range(n):  # B⁻¹ is the tableau's w block (the initial basis is the identity)
        if count == 1:
            break
        low = np.inf
        for a in range(count):
            i = candidates[a]
            low = min(low, T[i, k] / (1.0 if first else T[i, j]))
        kept = 0
        for a in range(count):
            i = candidates[a]
            if T[i, k] / (1.0 if first else T[i, j]) <= low + _TIE * (1.0 + abs(low)):
                candidates[kept] = i
                kept += 1
        count = kept
    return candidates[0]


@njit(cache=True, nogil=True)
def _refine(A, q, z, basic, G, y, perm):
    """Recompute the basic z of the final basis from the data: solve
    ``A_SS z_S = −q_S`` (S the basic z's) by Gaussian elimination with
    partial pivoting, which removes the round-off the pivots accumulated.
    Returns False (z untouched) if A_SS is numerically singular or the new z
    or w is negative beyond round-off."""
    n = q.shape[0]
    s = 0
    for i in range(n):
        if basic[i]:
            perm[s] = i
            s += 1
    for r in range(s):
        for c in range(s):
            G[r, c] = A[perm[r], perm[c]]
        y[r] = -q[perm[r]]
    for col in range(s):
        p = col
        for r in range(col + 1, s):
            if abs(G[r, col]) > abs(G[p, col]):
                p = r
        if not abs(G[p, col]) > 1e-14:
            return False
        if p != col:
            for c in range(s):
                G[p, c], G[col, c] = G[col, c], G[p, c]
            y[p], y[col] = y[col], y[p]
        for r in range(col + 1, s):
            f = G[r, col] / G[col, col]
            if f != 0.0:
                for c in range(col, s):
                    G[r, c] -= f * G[col, c]
                y[r] -= f * y[col]
    for r in range(s - 1, -1, -1):
        t = y[r]
        for c in range(r + 1, s):
            t -= G[r, c] * y[c]
        y[r] = t / G[r, r]
    for r in range(s):
        if y[r] < -1e-9:
            return False
    for i in range(n):  # the nonbasic z are 0: w_i = q_i + A_iS z_S ≥ 0 off S
        if not basic[i]:
            t = q[i]
            for r in range(s):
                t += A[i, perm[r]] * y[r]
            if t < -1e-9:
                return False
    for i in range(n):
        z[i] = 0.0
    for r in range(s):
        z[perm[r]] = max(y[r], 0.0)
    return True


@njit(cache=True, nogil=True)
def lemke_lcp(A, q, z, w, max_pivots):
    """Solve ``LCP(A, q)``: ``w = A z + q ≥ 0``, ``z ≥ 0``, ``zᵀw = 0`` by
    Lemke's method with the lexicographic minimum-ratio test (module
    docstring) on the problem scaled to ``max|A_ij| = max|q_i| = 1``; the
    final basic z is recomputed from the data (``A_SS z_S = −q_S``). Writes
    z and ``w = A z + q``; returns the number of pivots (0 when q ≥ 0, the
    answer z = 0), ``RAY`` (secondary ray: no solution found; for a
    copositive-plus A the LCP is infeasible), ``PIVOT_CAP`` (``max_pivots``
    reached), ``INACCURATE`` (the final basis's z, w violate w ≥ 0 or
    zᵀw = 0 by more than 1e-9 in the scaled units: a degenerate,
    ill-conditioned problem), ``CONTACT_NON_FINITE`` (a non-finite A or q)
    or ``CONTACT_BAD_SHAPE``; z and w are meaningful only on success. Allocates
    the tableau (n x (2n+2)) and O(n²) scratch once per call."""
    n = q.shape[0]
    if A.shape[0] != n or A.shape[1] != n or z.shape[0] != n or w.shape[0] != n:
        return CONTACT_BAD_SHAPE
    qs = 0.0
    As = 0.0
    check = 0.0
    qmin = 0.0
    for i in range(n):
        qs = max(qs, abs(q[i]))
        qmin = min(qmin, q[i])
        check += q[i] * 0.0
        for k in range(n):
            As = max(As, abs(A[i, k]))
            check += A[i, k] * 0.0
    if check != 0.0:
        return CONTACT_NON_FINITE
    if qmin >= 0.0:
        for i in range(n):
            z[i] = 0.0
            w[i] = q[i]
        return 0
    if As == 0.0:
        As = 1.0
    z0 = 2 * n
    rhs = 2 * n + 1
    T = np.zeros((n, 2 * n + 2))
    for i in range(n):
        T[i, i] = 1.0
        for k in range(n):
            T[i, n + k] = -A[i, k] / As
        T[i, z0] = -1.0
        T[i, rhs] = q[i] / qs
    basis = np.arange(n)
    candidates = np.empty(n, np.int64)
    r = _leaving(T, basis, z0, n, True, candidates)
    entering = z0
    pivots = 0
    done = False
    while pivots < max_pivots:
        leaving = basis[r]
        _pivot(T, r, entering)
        basis[r] = entering
        pivots += 1
        if leaving == z0:
            done = True
            break
        entering = leaving + n if leaving < n else leaving - n
        r = _leaving(T, basis, entering, n, False, candidates)
        if r < 0:
            return RAY
    if not done:
        return PIVOT_CAP
    # the solution of the scaled problem (z' = As z / qs), refined from the scaled data
    basic = np.zeros(n, np.bool_)
    for i in range(n):
        z[i] = 0.0
    for i in range(n):
        v = basis[i]
        if n <= v < 2 * n:
            basic[v - n] = True
            z[v - n] = max(T[i, rhs], 0.0)
    As_ = np.empty((n, n))
    qs_ = np.empty(n)
    for i in range(n):
        qs_[i] = q[i] / qs
        for k in range(n):
            As_[i, k] = A[i, k] / As
    _refine(As_, qs_, z, basic, np.empty((n, n)), np.empty(n), np.empty(n, np.int64))
    for i in range(n):
        z[i] *= qs / As
    zmax = 0.0
    for i in range(n):
        t = q[i]
        for k in range(n):
            t += A[i, k] * z[k]
        w[i] = t
        zmax = max(zmax, z[i])
    # the answer checked against the LCP (in the scaled units of the pivots: w/qs, z As/qs): a
    # degenerate, ill-conditioned problem can end on a basis that is not a solution beyond round-off
    bound = 1e-9 * max(1.0, zmax * As / qs)
    for i in range(n):
        if w[i] < -1e-9 * qs or abs(z[i] * w[i]) * As / (qs * qs) > bound:
            return INACCURATE
    return pivots


@njit(cache=True, nogil=True)
def _friction_index(mu):
    """Per contact its index among the contacts with μ > 0 (−1 for μ = 0), and their number."""
    nc = mu.shape[0]
    friction = np.empty(nc, np.int64)
    nf = 0
    for c in range(nc):
        friction[c] = nf if mu[c] > 0.0 else -1
        if mu[c] > 0.0:
            nf += 1
    return friction, nf


@njit(cache=True, nogil=True)
def friction_lcp(W, b, mu, cs, sn, group, ngroups):
    """The LCP ``(A, q)`` of polyhedral friction (Stewart & Trinkle 1996;
    Anitescu & Stewart, seed-000 C10) for the tangent directions
    ``d_j = (cs_j, sn_j)`` split into ``ngroups`` groups (``group[j]``).
    Unknowns: λ_n of every contact; then, for the contacts with μ > 0 only,
    in their order, the direction impulses β (k each); then one γ per group
    of each such contact (≈ the sliding speed):

        [u_n; D̃ᵀu_t + E γ; μλ_n − Eᵀβ] ⊥ [λ_n; β; γ], each ≥ 0,

    with ``λ_t = Σ_j β_j d_j``, ``u = Wλ + b`` and E the incidence of the
    directions in their groups (one group: ``Σβ ≤ μλ_n``). Allocates A and
    q; the caller checked the shapes."""
    nc = b.shape[0] // 3
    k = cs.shape[0]
    friction, nf = _friction_index(mu)
    gamma0 = nc + nf * k
    N = gamma0 + nf * ngroups
    A = np.zeros((N, N))
    q = np.zeros(N)
    for c in range(nc):
        q[c] = b[3 * c]
        for d in range(nc):
            A[c, d] = W[3 * c, 3 * d]
        f = friction[c]
        if f < 0:
            continue
        for j in range(k):
            bj = nc + f * k + j
            q[bj] = cs[j] * b[3 * c + 1] + sn[j] * b[3 * c + 2]
            for d in range(nc):  # the normal rows of every contact against β_j of c (W symmetric)
                v = cs[j] * W[3 * d, 3 * c + 1] + sn[j] * W[3 * d, 3 * c + 2]
                A[d, bj] = v
                A[bj, d] = v
                g = friction[d]
                if g < 0:
                    continue
                for i in range(k):
                    A[nc + g * k + i, bj] = (
                        cs[i] * (cs[j] * W[3 * d + 1, 3 * c + 1] + sn[j] * W[3 * d + 1, 3 * c + 2])
                        + sn[i] * (cs[j] * W[3 * d + 2, 3 * c + 1] + sn[j] * W[3 * d + 2, 3 * c + 2]))
            gj = gamma0 + f * ngroups + group[j]
            A[bj, gj] = 1.0
            A[gj, bj] = -1.0
        for g in range(ngroups):
            A[gamma0 + f * ngroups + g, c] = mu[c]
    return A, q


@njit(cache=True, nogil=True)
def _solve_friction_lcp(W, b, mu, cs, sn, group, ngroups, lam, max_pivots):
    """:func:`friction_lcp` solved by :func:`lemke_lcp`; writes λ (m,) in the
    (n, t1, t2) layout (λ_n = z_n, ``λ_t = Σ β_j d_j``) and returns Lemke's
    status: its pivots over every attempt (λ untouched on a failure). On a
    ray, the pivot cap or an inaccurate basis it tries again with W regularized by ε times its
    largest diagonal entry, ε = 1e-12, 1e-10, 1e-8, 1e-6 (a degenerate
    problem's false ray in floating point; the comment in the code)."""
    m = b.shape[0]
    nc = m // 3
    if m != 3 * nc or W.shape[0] != m or W.shape[1] != m or mu.shape[0] != nc or lam.shape[0] != m:
        return CONTACT_BAD_SHAPE
    k = cs.shape[0]
    A, q = friction_lcp(W, b, mu, cs, sn, group, ngroups)
    z = np.empty(q.shape[0])
    w = np.empty(q.shape[0])
    status = lemke_lcp(A, q, z, w, max_pivots)
    # Redundant resting contacts make the LCP degenerate and W singular (a stack of five boxes:
    # condition 4e34), and in floating point Lemke's method can end on a ray of a problem PGS
    # solves to 1e-15, or on a basis that is no solution: try again on W + εI, ε = 1e-12 ... 1e-6
    # of its largest diagonal entry (the exact solution of a problem that close to the posed one;
    # which ε works is erratic on a degenerate problem: a 27-box pile's failed at 0, 1e-12, 1e-9,
    # 1e-8 and was solved at 1e-10, 1e-7, 1e-6)
    friction, nf = _friction_index(mu)
    scale = 0.0
    for c in range(nc):
        scale = max(scale, W[3 * c, 3 * c])
    total = max(status, 0)
    current = 0.0  # the regularization already in A
    for eps in (1e-12, 1e-10, 1e-8, 1e-6):
        if status != RAY and status != PIVOT_CAP and status != INACCURATE:
            break
        total += max_pivots if status == PIVOT_CAP else 0
        added = eps * scale - current
        current = eps * scale
        for c in range(nc):
            A[c, c] += added
            f = friction[c]
            if f >= 0:
                for j in range(k):  # unit directions: the tangent block's diagonal grows by the same
                    A[nc + f * k + j, nc + f * k + j] += added
        status = lemke_lcp(A, q, z, w, max_pivots)
        total += max(status, 0)
    if status < 0:
        return status
    status = total
    for c in range(nc):
        lam[3 * c] = z[c]
        t1 = 0.0
        t2 = 0.0
        f = friction[c]
        if f >= 0:
            for j in range(k):
                t1 += z[nc + f * k + j] * cs[j]
                t2 += z[nc + f * k + j] * sn[j]
        lam[3 * c + 1] = t1
        lam[3 * c + 2] = t2
    return status


@njit(cache=True, nogil=True)
def pyramid_directions(k):
    """The k directions ``d_j = (cos 2πj/k, sin 2πj/k)`` (exact zeros and
    ones on the axes) and their group (all 0: one bound)."""
    cs = np.empty(k)
    sn = np.empty(k)
    for j in range(k):
        cs[j] = np.cos(2.0 * np.pi * j / k)
        sn[j] = np.sin(2.0 * np.pi * j / k)
        for x in (cs, sn):  # cos(π/2) is 6e-17: snap to the axes
            if abs(x[j]) < 1e-15:
                x[j] = 0.0
            elif abs(abs(x[j]) - 1.0) < 1e-15:
                x[j] = np.sign(x[j])
    return cs, sn, np.zeros(k, np.int64)


@njit(cache=True, nogil=True)
def box_directions():
    """The directions ±t1, ±t2 of box friction and their groups (one bound per axis)."""
    return (np.array([1.0, -1.0, 0.0, 0.0]), np.array([0.0, 0.0, 1.0, -1.0]),
            np.array([0, 0, 1, 1], np.int64))


@njit(cache=True, nogil=True)
def pyramid_lcp(W, b, mu, k, lam, max_pivots):
    """The contact problem with the k-sided friction pyramid (k ≥ 3,
    directions ``d_j = (cos 2πj/k, sin 2πj/k)`` in the (t1, t2) plane, one
    bound ``Σ_j β_j ≤ μλ_n``: the friction set is the polygon of the d_j;
    k = 4 gives the diamond ``|λ_t1| + |λ_t2| ≤ μλ_n``, not the box) as the
    Stewart–Trinkle LCP solved by :func:`lemke_lcp` (see :func:`friction_lcp`;
    contacts with μ = 0 contribute their normal row only, so all μ = 0 is
    ``LCP(W_nn, b_n)``). Writes λ (m,); returns Lemke's status. Allocates
    the LCP (N = nc + (k+1)·#{μ>0}) and Lemke's tableau once per call."""
    if k < 3:
        return CONTACT_BAD_SHAPE
    cs, sn, group = pyramid_directions(k)
    return _solve_friction_lcp(W, b, mu, cs, sn, group, 1, lam, max_pivots)


@njit(cache=True, nogil=True)
def box_lcp(W, b, mu, lam, max_pivots):
    """The contact problem with box friction (``|λ_ti| ≤ μλ_n`` for each
    tangent row, maximal dissipation per row: ArtiSynth's box friction with
    the bound μλ_n of the unknown λ_n rather than an estimate) as an LCP:
    the directions ±t1, ±t2 with one bound per axis,
    ``β_{+i} + β_{−i} ≤ μλ_n``, solved by :func:`lemke_lcp`. Writes λ (m,);
    returns Lemke's status. Allocates the LCP (N = nc + 6·#{μ>0}) and
    Lemke's tableau once per call."""
    cs, sn, group = box_directions()
    return _solve_friction_lcp(W, b, mu, cs, sn, group, 2, lam, max_pivots)
