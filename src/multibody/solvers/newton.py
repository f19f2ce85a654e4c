"""Newton's method on the primal problem of soft contact with pyramidal
friction cones — MuJoCo's default solver (Todorov 2014; MuJoCo's
documentation, "Computation", the Newton solver), written for the
velocity-level step (docs/contact.md, "Soft contact").

With A the step's velocity matrix (M for the explicit steps), v_f the
free velocity and, per contact, the pyramid edges ``J_e = J_n ± μ J_tk``
(k = 1, 2; the normal row alone when μ = 0), each with a target ``c_e``
and a weight ``D_e = 1/R_e``, the step's velocity minimizes

    φ(v) = ½ (v − v_f)ᵀ A (v − v_f) + Σ_e ½ D_e min(J_e v − c_e, 0)²,

a strictly convex piecewise quadratic. Its edge impulses are
``f_e = −D_e min(J_e v − c_e, 0) ≥ 0`` and ``v = v_f + A⁻¹ Σ_e J_eᵀ f_e``;
the contact impulse in its frame is ``λ_n = Σ f_e``, ``λ_tk = μ (f_k+ −
f_k−)``. MuJoCo's cost at the acceleration level is this one divided by
h², with the same minimizer.

Newton's method with an exact line search: the gradient ``A(v − v_f) +
Σ_active D_e y_e J_eᵀ`` (y_e = J_e v − c_e, active: y_e < 0) and the Hessian
``A + Σ_active D_e J_eᵀ J_e`` (dense, each contact's rows over the
coordinates they touch), a Cholesky factorization over the rows' envelopes, and along the
direction the root of the piecewise linear derivative (safeguarded Newton
in a bracket, exact once the active set of the root's piece is found). The
iteration ends when a full step keeps the active set (the quadratic model
was exact: v is the minimizer), when a step moves v by at most ``tol``
(m/s), or after ``max_iterations``.
"""
import numpy as np
from numba import njit

from .._status import CONTACT_BAD_SHAPE, CONTACT_NON_FINITE, NOT_CONVERGED


@njit(cache=True, nogil=True, inline="always")
def _edge_count(mu, k):
    """Contact k's edges: the four of the pyramid, or the normal row alone when μ = 0."""
    return 1 if mu[k] == 0.0 else 4


@njit(cache=True, nogil=True, inline="always")
def _edge(J, mu, c, k, e, x, nz, nnz):
    """(J_e·x, c_e) for edge e of contact k (e = 0, 1: ±t1, 2, 3: ±t2;
    the normal row alone, e = 0, when μ = 0), over the contact's
    coordinates ``nz[:nnz]``."""
    r = 3 * k
    sn = 0.0
    st = 0.0
    row_t = r + 1 + e // 2
    for j in range(nnz):
        i = nz[j]
        sn += J[r, i] * x[i]
        st += J[row_t, i] * x[i]
    s = 1.0 if e % 2 == 0 else -1.0
    if mu[k] == 0.0:
        return sn, c[r]
    return sn + s * mu[k] * st, c[r] + s * mu[k] * c[row_t]


@njit(cache=True, nogil=True)
def soft_pyramid_newton(A, vf, J, mu, D, c, lam, v, H, g, d, y, z, nz, nnz, first, max_iterations, tol):
    """Minimize φ (module docstring) for n contacts: ``A`` (nv, nv)
    symmetric positive definite, ``vf`` (nv,), ``J`` (≥ 3n, nv) rows (n,
    t1, t2) per contact, ``mu`` (n,) ≥ 0, ``D`` (n,) > 0 the edges' weight
    per contact, ``c`` (3n,) the targets of the normal and tangent rows
    (``c_e = c_n ± μ c_tk``). ``lam`` (3n,): on entry the warm start
    (impulses; v starts at ``v_f + A⁻¹Jᵀλ``), on exit the impulses; ``v``
    (nv,) the minimizer. ``nz`` (n, nv) int64 and ``nnz`` (n,) int64:
    each contact's coordinates, increasing (every column where its rows
    may be nonzero); ``first`` (2, nv) int64: ``first[0]`` A's row
    envelopes (row i of A is zero before column ``first[0, i]``; for CRBA's
    M, the root of the coordinate's chain), ``first[1]`` a work row (the
    Hessian's): every product, factorization and solve runs over them.
    Work arrays: ``H`` (nv, nv), ``g``, ``d`` (nv,), ``y``, ``z`` (4n,).
    Returns the number of Newton iterations, NOT_CONVERGED at
    the cap (v and λ from the last iterate), CONTACT_NON_FINITE, or
    CONTACT_BAD_SHAPE."""
    nv = vf.shape[0]
    n = mu.shape[0]
    if A.shape[0] != nv or A.shape[1] != nv or J.shape[0] < 3 * n or J.shape[1] != nv or D.shape[0] != n \
            or c.shape[0] < 3 * n or lam.shape[0] < 3 * n or v.shape[0] != nv or y.shape[0] < 4 * n \
            or z.shape[0] < 4 * n or nz.shape[0] < n or nz.shape[1] != nv or H.shape[0] != nv \
            or H.shape[1] != nv or first.shape[0] != 2 or first.shape[1] != nv:
        return CONTACT_BAD_SHAPE
    check = 0.0
    for k in range(n):
        check += (mu[k] + D[k] + c[3 * k] + c[3 * k + 1] + c[3 * k + 2]) * 0.0
    if check != 0.0:
        return CONTACT_NON_FINITE
    fa, fh = first[0], first[1]
    # the start: v_f + A⁻¹Jᵀλ (the warm start) through the Cholesky factor of A
    for i in range(nv):
        g[i] = 0.0
    for k in range(n):
        for j in range(nnz[k]):
            i = nz[k, j]
            g[i] += J[3 * k, i] * lam[3 * k] + J[3 * k + 1, i] * lam[3 * k + 1] + J[3 * k + 2, i] * lam[3 * k + 2]
    fh[:] = fa
    _load_lower(H, A, fh)
    if not _cholesky(H, fh):
        return CONTACT_NON_FINITE
    _cholesky_solve(H, fh, g)
    for i in range(nv):
        v[i] = vf[i] + g[i]
        d[i] = v[i] - vf[i]
    status = NOT_CONVERGED
    for it in range(max_iterations):
        # edge values, gradient and Hessian at v (d holds v − v_f)
        _envelope_product(A, fa, d, g)
        fh[:] = fa
        for k in range(n):
            active = False
            for e in range(_edge_count(mu, k)):
                je, ce = _edge(J, mu, c, k, e, v, nz[k], nnz[k])
                y[4 * k + e] = je - ce
                active |= je - ce < 0.0
            if active:  # the contact couples its coordinates: the envelope widens to its first
                for j in range(nnz[k]):
                    fh[nz[k, j]] = min(fh[nz[k, j]], nz[k, 0])
        _load_lower(H, A, fh)
        for k in range(n):
            for e in range(_edge_count(mu, k)):
                if y[4 * k + e] < 0.0:
                    _add_edge(H, g, J, mu, k, e, D[k], y[4 * k + e], nz[k], nnz[k])
        if not _cholesky(H, fh):
            return CONTACT_NON_FINITE
        for i in range(nv):
            d[i] = -g[i]
        _cholesky_solve(H, fh, d)
        # the line search: the root of φ'(α) = dᵀA(v − v_f) + α dᵀAd + Σ D z_e min(y_e + α z_e, 0)
        _envelope_product(A, fa, d, g)  # g ← A d
        gd = 0.0
        dad = 0.0
        step = 0.0
        for i in range(nv):
            gd += g[i] * (v[i] - vf[i])
            dad += g[i] * d[i]
            step = max(step, abs(d[i]))
        for k in range(n):
            for e in range(_edge_count(mu, k)):
                z[4 * k + e] = _edge(J, mu, c, k, e, d, nz[k], nnz[k])[0]
        alpha, kept = _line_search(gd, dad, y, z, mu, D, n)
        if not (alpha == alpha):
            return CONTACT_NON_FINITE
        for i in range(nv):
            v[i] += alpha * d[i]
            d[i] = v[i] - vf[i]
        if kept or alpha * step <= tol:
            status = it + 1
            break
    # the impulses of the final v: λ_n = Σ f_e, λ_tk = μ (f_k+ − f_k−)
    for k in range(n):
        lam[3 * k] = lam[3 * k + 1] = lam[3 * k + 2] = 0.0
        for e in range(_edge_count(mu, k)):
            je, ce = _edge(J, mu, c, k, e, v, nz[k], nnz[k])
            f = -D[k] * min(je - ce, 0.0)
            lam[3 * k] += f
            if mu[k] > 0.0:
                lam[3 * k + 1 + e // 2] += (mu[k] if e % 2 == 0 else -mu[k]) * f
    return status


@njit(cache=True, nogil=True, inline="always")
def _add_edge(H, g, J, mu, k, e, w, ye, nz, nnz):
    """H += w J_eᵀJ_e (lower triangle) and g += w y_e J_eᵀ over the
    contact's coordinates (``nz`` increasing)."""
    r = 3 * k
    rt = r + 1 + e // 2
    s = (1.0 if e % 2 == 0 else -1.0) * mu[k]
    for a in range(nnz):
        i = nz[a]
        ji = J[r, i] + s * J[rt, i]
        g[i] += w * ye * ji
        for b in range(a + 1):
            j = nz[b]
            H[i, j] += w * ji * (J[r, j] + s * J[rt, j])


@njit(cache=True, nogil=True)
def _line_search(gd, dad, y, z, mu, D, n):
    """The root α > 0 of the nondecreasing piecewise linear
    ``φ'(α) = gd + α dad + Σ D z_e min(y_e + α z_e, 0)`` (gd < 0 for a
    descent direction): safeguarded Newton in a bracket, exact when the
    Newton step stays in its piece. Returns (α, kept): kept when the full
    step α = 1 keeps every edge on its side (φ is then quadratic on the
    segment and α = 1 its exact root)."""
    kept = True  # a full step that keeps every edge on its side is exact: the quadratic model held
    for k in range(n):
        for e in range(_edge_count(mu, k)):
            if (y[4 * k + e] < 0.0) != (y[4 * k + e] + z[4 * k + e] < 0.0):
                kept = False
    if kept:
        return 1.0, True
    lo = 0.0
    hi = 1.0
    while _slope(gd, dad, y, z, mu, D, n, hi)[0] < 0.0 and hi < 1e12:
        lo = hi
        hi *= 2.0
    alpha = 0.5 * (lo + hi)
    for _ in range(200):
        value, curvature = _slope(gd, dad, y, z, mu, D, n, alpha)
        if value == 0.0:
            break
        if value < 0.0:
            lo = alpha
        else:
            hi = alpha
        nxt = alpha - value / curvature
        if not (lo < nxt < hi):
            nxt = 0.5 * (lo + hi)
        if nxt == alpha or hi - lo <= 1e-15 * hi:
            break
        # the Newton step is the root if no edge changes sides between alpha and it
        same = True
        for k in range(n):
            for e in range(_edge_count(mu, k)):
                a = y[4 * k + e] + alpha * z[4 * k + e]
                b = y[4 * k + e] + nxt * z[4 * k + e]
                if (a < 0.0) != (b < 0.0):
                    same = False
        alpha = nxt
        if same:
            break
    return alpha, False


@njit(cache=True, nogil=True, inline="always")
def _slope(gd, dad, y, z, mu, D, n, alpha):
    """(φ'(α), φ''(α)) of :func:`_line_search`."""
    value = gd + alpha * dad
    curvature = dad
    for k in range(n):
        for e in range(_edge_count(mu, k)):
            t = y[4 * k + e] + alpha * z[4 * k + e]
            if t < 0.0:
                ze = z[4 * k + e]
                value += D[k] * ze * t
                curvature += D[k] * ze * ze
    return value, curvature


@njit(cache=True, nogil=True, inline="always")
def _load_lower(H, A, first):
    """The lower triangle of H ← A's over the envelope ``first`` (A is zero
    before its own envelope, which ``first`` contains)."""
    for i in range(H.shape[0]):
        for j in range(first[i], i + 1):
            H[i, j] = A[i, j]


@njit(cache=True, nogil=True, inline="always")
def _envelope_product(A, first, x, out):
    """out ← A x for a symmetric A zero outside the row envelopes ``first``
    (its lower triangle read)."""
    for i in range(x.shape[0]):
        out[i] = 0.0
    for i in range(x.shape[0]):
        s = A[i, i] * x[i]
        xi = x[i]
        for j in range(first[i], i):
            s += A[i, j] * x[j]
            out[j] += A[i, j] * xi
        out[i] += s


@njit(cache=True, nogil=True)
def _cholesky(H, first):
    """H ← its lower Cholesky factor L (H = L Lᵀ) in place, row by row over
    the rows' envelopes ``first`` (L keeps H's envelope: free bodies
    touching only the ground cost their 6x6 blocks, a stack its band);
    False if H is not positive definite (or not finite)."""
    n = H.shape[0]
    for i in range(n):
        f = first[i]
        for j in range(f, i):
            s = H[i, j]
            for k in range(max(f, first[j]), j):
                s -= H[i, k] * H[j, k]
            H[i, j] = s / H[j, j]
        s = H[i, i]
        for k in range(f, i):
            s -= H[i, k] * H[i, k]
        if not s > 0.0:
            return False
        H[i, i] = np.sqrt(s)
    return True


@njit(cache=True, nogil=True)
def _cholesky_solve(L, first, x):
    """x ← (L Lᵀ)⁻¹ x with the factor of :func:`_cholesky` (envelopes
    ``first``)."""
    n = L.shape[0]
    for i in range(n):
        s = x[i]
        for k in range(first[i], i):
            s -= L[i, k] * x[k]
        x[i] = s / L[i, i]
    for i in range(n - 1, -1, -1):
        x[i] /= L[i, i]
        xi = x[i]
        for k in range(first[i], i):
            x[k] -= L[i, k] * xi
