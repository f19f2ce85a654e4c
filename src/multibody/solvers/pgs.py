"""Projected Gauss–Seidel for the contact problem of ``residual.py``
(ArtiSynth §0.15–0.16, seed-000 C15–C16; docs/contact.md).

One sweep visits the contacts in order; for each, the normal row, then the
tangent pair, each against the row velocities ``u = Wλ + b`` of the
current λ (a row's dot product: a sweep costs ``m²`` multiply-adds). Its
fixed points are exactly the solutions (Coulomb's law with maximal
dissipation over the disk or the box), because each step minimizes the
problem's local quadratic exactly:

* normal: ``λ_n ← max(0, λ_n − u_n / W_nn)``;
* box (ArtiSynth's Gauss–Seidel friction, seed-000 C16 with its erratum 9):
  each tangent row ``λ_ti ← clamp(λ_ti − u_ti / W_ii, −μλ_n, μλ_n)``;
* cone: the tangent pair ``λ_t ← argmin ½xᵀW_tt x + g·x`` over the disk
  ``‖x‖ ≤ μλ_n``, ``g = u_t − W_tt λ_t`` (:func:`disk_minimum`, a 2x2
  trust-region problem). The shortcut of projecting the unconstrained 2x2
  step ``λ_t − W_tt⁻¹u_t`` (or two scalar steps) onto the disk is not
  used: its fixed points have λ_t parallel to ``W_tt⁻¹u_t`` instead of
  ``u_t``, which violates maximal dissipation whenever W_tt is not a
  multiple of the identity.

Rows with ``W_ii ≤ IMMOVABLE · max_k W_kk`` (the Jacobian cannot move them)
are never divided by: a normal row gets ``λ_n = 0``; a box tangent row gets
the minimizer of its (linear) objective, ``−μλ_n sign(u_ti)``; the disk step
needs no division.
"""
import numpy as np
from numba import njit

from .._status import CONTACT_BAD_SHAPE, CONTACT_NON_FINITE, NOT_CONVERGED
from ..dynamics.closed_loop_kernels import PSD_RTOL, psd_apply, psd_factor
from .residual import (BOX, CONE, IMMOVABLE, ON_BOUNDARY, box_slip_residual, coupled_velocity, disk_slip_residual,
                       normal_residual)

# no coupling lists: every contact couples with every other (the dense problem of projected_gauss_seidel)
_ALL = np.zeros(0, np.int64)


@njit(cache=True, nogil=True)
def disk_minimum(a11, a12, a22, g1, g2, r):
    """``argmin ½xᵀAx + g·x`` over ``‖x‖ ≤ r`` for a symmetric positive
    semi-definite 2x2 ``A = [[a11, a12], [a12, a22]]`` (a trust-region
    problem, solved exactly): the unconstrained minimizer if it lies in the
    disk, else the point of the circle where ``(A + sI)x = −g``, ``s > 0``,
    with s the root of the secular equation ``1/‖x(s)‖ = 1/r`` (concave in
    s: safeguarded Newton, Moré & Sorensen 1983) in A's eigenbasis; x is then
    scaled onto the circle exactly. Returns ``(x1, x2)``."""
    if not r > 0.0:
        return 0.0, 0.0
    half = 0.5 * (a11 - a22)
    d = np.sqrt(half * half + a12 * a12)
    mean = 0.5 * (a11 + a22)
    e1 = max(mean - d, 0.0)  # e1 ≤ e2, clamped at 0 (round-off of a PSD matrix)
    e2 = max(mean + d, 0.0)
    theta = 0.5 * np.arctan2(a12, half)  # v2 = (cos θ, sin θ) belongs to e2, v1 = (−sin θ, cos θ) to e1
    c = np.cos(theta)
    s = np.sin(theta)
    h1 = -s * g1 + c * g2
    h2 = c * g1 + s * g2
    if (e1 > 0.0 or h1 == 0.0) and (e2 > 0.0 or h2 == 0.0):
        y1 = -h1 / e1 if e1 > 0.0 else 0.0
        y2 = -h2 / e2 if e2 > 0.0 else 0.0
        if y1 * y1 + y2 * y2 <= r * r:
            return -s * y1 + c * y2, c * y1 + s * y2
    # on the circle: s in (0, ‖g‖/r], where ‖x(s)‖ ≤ ‖g‖/s ≤ r
    lo = 0.0
    hi = np.sqrt(g1 * g1 + g2 * g2) / r
    sigma = hi
    for _ in range(100):
        p1 = h1 / (e1 + sigma)
        p2 = h2 / (e2 + sigma)
        n2 = p1 * p1 + p2 * p2
        n = np.sqrt(n2)
        if n > r:
            lo = sigma
        else:
            hi = sigma
        if abs(n - r) <= 1e-15 * r or hi - lo <= 1e-15 * hi:
            break
        # Newton on φ(s) = 1/‖x(s)‖ − 1/r, φ' = Σ h_i²/(e_i+s)³ / ‖x‖³
        dphi = (p1 * p1 / (e1 + sigma) + p2 * p2 / (e2 + sigma)) / (n2 * n)
        step = sigma - (1.0 / n - 1.0 / r) / dphi if dphi > 0.0 else -1.0
        sigma = step if lo < step < hi else 0.5 * (lo + hi)
    y1 = -h1 / (e1 + sigma)
    y2 = -h2 / (e2 + sigma)
    scale = r / np.sqrt(y1 * y1 + y2 * y2)
    y1 *= scale
    y2 *= scale
    return -s * y1 + c * y2, c * y1 + s * y2


@njit(cache=True, nogil=True)
def projected_gauss_seidel(W, b, mu, lam, model, tol, max_iterations, omega, velocity_tol=0.0):
    """Projected Gauss–Seidel sweeps over the contacts (module docstring)
    for the friction set ``model`` (``CONE`` or ``BOX`` of ``residual.py``),
    over-relaxed by ``omega`` (1: plain Gauss–Seidel; each relaxed value is
    projected back onto its set). ``lam`` (m,) is the warm start on entry
    (the previous step's impulses, or zeros) and the result on exit.

    Stops after the first sweep whose largest change of an entry of λ is at
    most ``tol`` times the largest ``|λ_i|`` (a λ = 0 that stays 0 stops at
    once), or whose velocity residual is at most ``velocity_tol`` (the
    units of b; 0: never). The velocity residual is the largest violation
    of the contact conditions each block met when the sweep visited it
    (λ and ``u = Wλ + b`` before its update): ``|min(W_nn λ_n, u_n)|`` for
    a normal row (:func:`~.residual.normal_residual`); for friction
    (:func:`~.residual.disk_slip_residual`,
    :func:`~.residual.box_slip_residual`), ``‖u_t‖`` where λ_t sticks
    inside its set, and where it lies on the boundary, the distance of u_t
    from the directions that the friction opposes (maximal dissipation:
    for the disk, the ray ``−s λ_t/‖λ_t‖``, s ≥ 0), plus the excess over
    the set in velocity units. It is the test that ends redundant problems: with more contact
    rows than the bodies' freedoms (a box on four corners), W is singular
    and λ keeps drifting along its null space long after the velocities
    have converged, so the relative change of λ alone may never fall to a
    tight ``tol`` (docs/contact.md, PGS's limits). Immovable rows are left
    out of it. Returns the number of sweeps done; ``NOT_CONVERGED`` after
    ``max_iterations`` sweeps (λ holds the last sweep), ``CONTACT_NON_FINITE``
    if an input is not finite (λ untouched) or λ overflowed, ``CONTACT_BAD_SHAPE`` for inconsistent sizes or
    an unknown model (λ untouched). Float64 C-contiguous arrays; allocates
    nothing."""
    st = _check(W, b, mu, lam, model, True)
    if st != 0:
        return st
    return _sweeps(W, b, mu, lam, model, tol, max_iterations, omega, velocity_tol, _ALL, _ALL)[0]


@njit(cache=True, nogil=True)
def _check(W, b, mu, lam, model, whole):
    """0, or CONTACT_BAD_SHAPE / CONTACT_NON_FINITE for the inputs of
    :func:`projected_gauss_seidel`; ``whole``: every entry of W, else its
    diagonal only (a non-finite entry elsewhere reaches λ in the first
    sweep, which reports it: the contact stage's W is built from finite
    rows, and a pass over all of it cost as much as a sweep)."""
    m = b.shape[0]
    nc = m // 3
    if m != 3 * nc or W.shape[0] != m or W.shape[1] != m or mu.shape[0] != nc or lam.shape[0] != m \
            or (model != CONE and model != BOX):
        return CONTACT_BAD_SHAPE
    check = 0.0  # x·0 is NaN for a non-finite x
    for i in range(m):
        check += (b[i] + lam[i] + W[i, i]) * 0.0
        if whole:
            for k in range(m):
                check += W[i, k] * 0.0
    for c in range(nc):
        check += mu[c] * 0.0
    return CONTACT_NON_FINITE if check != 0.0 else 0


@njit(cache=True, nogil=True, inline="always")
def _immovable(W):
    """The diagonal below which a row counts as immovable (``IMMOVABLE``)."""
    diag = 0.0
    for i in range(W.shape[0]):
        diag = max(diag, W[i, i])
    return IMMOVABLE * diag


@njit(cache=True, nogil=True)
def _sweeps(W, b, mu, lam, model, tol, max_iterations, omega, velocity_tol, ptr, idx):
    """The sweeps of :func:`projected_gauss_seidel` on checked inputs:
    (its result, the velocity residual of the last sweep); each row's
    velocity over the contacts coupled with it (``ptr``, ``idx``:
    :func:`~.residual.coupled_velocity`)."""
    nc = b.shape[0] // 3
    small = _immovable(W)
    residual = np.inf
    for it in range(max_iterations):
        change = 0.0
        size = 0.0
        check = 0.0
        residual = 0.0  # the velocity residual the blocks met (docstring)
        for c in range(nc):
            i = 3 * c
            old = lam[i]
            new = 0.0
            if W[i, i] > small:
                un = coupled_velocity(W, b, lam, i, ptr, idx)
                residual = max(residual, normal_residual(W[i, i], old, un))
                new = max(old - omega * un / W[i, i], 0.0)
            lam[i] = new
            change = max(change, abs(new - old))
            size = max(size, new)
            # the friction residual at the λ the block met: the bound and the row velocities before
            # the normal's update (u − W_tn dn; with the bound after it, a sliding λ_t whose λ_n grew
            # looked like a sticking one with the sliding velocity)
            dn = new - old
            r_old = mu[c] * old
            r = mu[c] * new
            if model == BOX:
                d1 = 0.0
                for j in range(i + 1, i + 3):
                    old = lam[j]
                    u = coupled_velocity(W, b, lam, j, ptr, idx)
                    if W[j, j] > small:
                        new = old - omega * u / W[j, j]
                        ub = u - W[j, i] * dn - (W[j, i + 1] * d1 if j == i + 2 else 0.0)
                        residual = max(residual, box_slip_residual(old, ub, r_old, W[j, j]))
                    else:  # the minimizer of the linear u·x over [−r, r]
                        new = -r if u > 0.0 else (r if u < 0.0 else 0.0)
                    new = min(max(new, -r), r)
                    lam[j] = new
                    d1 = new - old
                    change = max(change, abs(new - old))
                    size = max(size, abs(new))
            else:
                o1 = lam[i + 1]
                o2 = lam[i + 2]
                x1 = 0.0
                x2 = 0.0
                if r > 0.0 or r_old > 0.0:
                    a11 = W[i + 1, i + 1]
                    a12 = W[i + 1, i + 2]
                    a22 = W[i + 2, i + 2]
                    u1 = coupled_velocity(W, b, lam, i + 1, ptr, idx)
                    u2 = coupled_velocity(W, b, lam, i + 2, ptr, idx)
                    if r_old > 0.0:
                        residual = max(residual, disk_slip_residual(o1, o2, u1 - W[i + 1, i] * dn,
                                                                    u2 - W[i + 2, i] * dn, r_old, max(a11, a22)))
                if r > 0.0:
                    g1 = u1 - a11 * o1 - a12 * o2
                    g2 = u2 - a12 * o1 - a22 * o2
                    x1, x2 = disk_minimum(a11, a12, a22, g1, g2, r)
                    if omega != 1.0:
                        x1 = o1 + omega * (x1 - o1)
                        x2 = o2 + omega * (x2 - o2)
                        norm = np.sqrt(x1 * x1 + x2 * x2)
                        if norm > r:
                            x1 *= r / norm
                            x2 *= r / norm
                lam[i + 1] = x1
                lam[i + 2] = x2
                change = max(change, max(abs(x1 - o1), abs(x2 - o2)))
                size = max(size, max(abs(x1), abs(x2)))
            check += (lam[i] + lam[i + 1] + lam[i + 2]) * 0.0
        if check != 0.0:
            return CONTACT_NON_FINITE, residual
        if change <= tol * size or residual <= velocity_tol:
            return it + 1, residual
    return NOT_CONVERGED, residual


@njit(cache=True, nogil=True)
def contact_states(W, lam, mu, model, small, state):
    """The state of every row at λ into ``state`` (m, int64): 1 for a
    pressing normal row (λ_n > 0, not immovable) and for a friction row of
    a pressing contact strictly inside its bound (the disk's pair together,
    a box row on its own: sticking), else 0. Returns how many are 1."""
    nc = lam.shape[0] // 3
    a = 0
    for c in range(nc):
        i = 3 * c
        state[i] = state[i + 1] = state[i + 2] = 0
        if not (lam[i] > 0.0 and W[i, i] > small):
            continue
        state[i] = 1
        a += 1
        r = mu[c] * lam[i] * (1.0 - ON_BOUNDARY)
        if model == BOX:
            for j in range(i + 1, i + 3):
                if abs(lam[j]) < r:
                    state[j] = 1
                    a += 1
        elif lam[i + 1] * lam[i + 1] + lam[i + 2] * lam[i + 2] < r * r:
            state[i + 1] = state[i + 2] = 1
            a += 2
    return a


@njit(cache=True, nogil=True)
def velocity_residual(W, b, mu, lam, model, small, ptr=_ALL, idx=_ALL):
    """The velocity residual of λ (the largest over the contacts of the
    measures of :func:`projected_gauss_seidel`'s velocity test, at this λ
    rather than as a sweep meets them); rows with ``W_ii <= small`` are
    left out, as there."""
    nc = b.shape[0] // 3
    residual = 0.0
    for c in range(nc):
        i = 3 * c
        if W[i, i] > small:
            residual = max(residual, normal_residual(W[i, i], lam[i], coupled_velocity(W, b, lam, i, ptr, idx)))
        r = mu[c] * lam[i]
        if model == BOX:
            for j in range(i + 1, i + 3):
                if W[j, j] > small:
                    residual = max(residual, box_slip_residual(lam[j], coupled_velocity(W, b, lam, j, ptr, idx), r,
                                                               W[j, j]))
        elif r > 0.0:
            residual = max(residual, disk_slip_residual(lam[i + 1], lam[i + 2],
                                                        coupled_velocity(W, b, lam, i + 1, ptr, idx),
                                                        coupled_velocity(W, b, lam, i + 2, ptr, idx), r,
                                                        max(W[i + 1, i + 1], W[i + 2, i + 2])))
    return residual


# Blocks of the subspace step with at least CG_ROWS rows are first solved by conjugate gradients
# (Jacobi-preconditioned, from δ = 0), accepted at a relative residual of CG_TOL within
# CG_ITERATIONS, else factored. CG needs as many iterations as W_AA has distinct eigenvalues: many
# contacts on few bodies — a box on 900 compliant foundation elements: W_AA = J M⁻¹Jᵀ of rank 6 plus
# cfm·I — take 7, where the factor of the 900 rows cost 0.25 s a step. Its cost is counted as
# CG_EXPECTED iterations of a² multiply-adds.
CG_ROWS, CG_ITERATIONS, CG_TOL, CG_EXPECTED = 128, 40, 1e-13, 10.0
# round-off in the residual of A x: a fraction of tr(A)‖x‖ (tr(A) ≥ ‖A‖₂)
CG_FLOOR = 4e-16


@njit(cache=True, nogil=True)
def _conjugate_gradients(A, rhs, x, target):
    """``A x = rhs`` by Jacobi-preconditioned conjugate gradients from x =
    0 (A symmetric positive semidefinite, both triangles written); True
    when within CG_ITERATIONS iterations the residual r is below
    ``CG_TOL‖rhs‖``, or below ``target`` in every entry (the caller's
    velocity tolerance: r is a velocity), or at round-off (``‖r‖ ≤
    CG_FLOOR·tr(A)‖x‖``: a right side that is already small, a
    warm-started step's residual velocities, cannot be reduced 1e13
    times); else False (x is then not used)."""
    n = rhs.shape[0]
    buf = np.empty((4, n))
    r, z, p, w = buf[0], buf[1], buf[2], buf[3]
    norm0 = 0.0
    trace = 0.0
    for i in range(n):
        if not A[i, i] > 0.0:
            return False
        trace += A[i, i]
        x[i] = 0.0
        r[i] = rhs[i]
        norm0 += rhs[i] * rhs[i]
    if norm0 == 0.0:
        return True
    norm0 = np.sqrt(norm0)
    rz = 0.0
    for i in range(n):
        z[i] = r[i] / A[i, i]
        p[i] = z[i]
        rz += r[i] * z[i]
    for _ in range(CG_ITERATIONS):
        pw = 0.0
        for i in range(n):
            s = 0.0
            for j in range(n):
                s += A[i, j] * p[j]
            w[i] = s
            pw += p[i] * s
        if not pw > 0.0:  # A is singular along p (rigid redundant rows): the factor drops such rows
            return False
        alpha = rz / pw
        rr = 0.0
        xx = 0.0
        for i in range(n):
            x[i] += alpha * p[i]
            r[i] -= alpha * w[i]
            rr += r[i] * r[i]
            xx += x[i] * x[i]
        if np.sqrt(rr) <= max(CG_TOL * norm0, CG_FLOOR * trace * np.sqrt(xx)):
            return True
        if target > 0.0:
            big = 0.0
            for i in range(n):
                big = max(big, abs(r[i]))
            if big <= target:
                return True
        rz_new = 0.0
        for i in range(n):
            z[i] = r[i] / A[i, i]
            rz_new += r[i] * z[i]
        beta = rz_new / rz
        rz = rz_new
        for i in range(n):
            p[i] = z[i] + beta * p[i]
    return False


@njit(cache=True, nogil=True)
def _active_solve(W, b, lam, state, rows, Ws, D, u, x, y, ptr, idx, marks, velocity_tol):
    """The candidate of a subspace step for the rows in ``state`` (their
    indices into ``rows``, grouped by component of the coupling graph):
    ``x = λ_A + δ``, ``W_AA δ = −u_A`` with W_AA's dependent rows dropped
    (δ = 0 there), factored by component (by conjugate gradients first when
    a component has CG_ROWS rows or more, to a tenth of ``velocity_tol``).
    Returns the number a of rows."""
    m = b.shape[0]
    nc = m // 3
    coupled = ptr.shape[0] > 0
    labels, seen = marks[:nc], marks[2 * nc:3 * nc]
    a = 0
    for k in range(_count_components(coupled, labels, nc)):  # the rows grouped by component, in order within
        for i in range(m):
            if state[i] != 0 and (not coupled or labels[i // 3] == k):
                rows[a] = i
                a += 1
    if a == 0:
        return 0
    if coupled:
        for c in range(nc):
            seen[c] = 0
    start = 0
    while start < a:  # W_AA is block diagonal by component: each block factored on its own
        end = start + 1
        while end < a and (not coupled or labels[rows[end] // 3] == labels[rows[start] // 3]):
            end += 1
        size = end - start
        A = Ws[:size * size].reshape((size, size))
        for p in range(size):
            if coupled:  # W's uncoupled blocks are not written: 0 (seen[d] = p + 1: d coupled with row p's contact)
                c = rows[start + p] // 3
                for e in range(ptr[c], ptr[c + 1]):
                    seen[idx[e]] = start + p + 1
            for q in range(p + 1):
                A[p, q] = A[q, p] = W[rows[start + p], rows[start + q]] \
                    if not coupled or seen[rows[start + q] // 3] == start + p + 1 else 0.0
            x[start + p] = -coupled_velocity(W, b, lam, rows[start + p], ptr, idx)
        if size < CG_ROWS or not _conjugate_gradients(A, x[start:end], u[start:end], 0.1 * velocity_tol):
            psd_factor(A, D[start:end], PSD_RTOL)
            psd_apply(A, D[start:end], x[start:end], u[start:end], y[start:end])  # u = δ
        start = end
    for p in range(a):
        x[p] = lam[rows[p]] + u[p]  # the candidate λ_A
    return a


@njit(cache=True, nogil=True)
def subspace_step(W, b, mu, lam, model, state, small, rows, Ws, D, u, x, y, keep, ptr, idx, marks, velocity_tol):
    """The subspace minimization of PGS-SM (Silcowitz, Niebe & Erleben,
    "Projected Gauss–Seidel subspace minimization method for interactive
    rigid body dynamics", 2010), for the disk as for the box: with the
    contact states ``state`` of λ (:func:`contact_states`) — pressing
    normal rows and sticking friction rows A; the others fixed at their λ —
    solve the conditions of those states, ``u_A = (Wλ + b)_A = 0``, for the
    change of λ_A: ``W_AA δ = −u_A``, W_AA's dependent rows dropped
    (:func:`~multibody.dynamics.closed_loop_kernels.psd_factor`: redundant
    contacts, a box on four corners, make W singular; their δ is 0). The
    normal rows' set is corrected by block pivoting (up to
    max(``PIVOT_ROUNDS``, contacts) solves: contacts with a negative impulse leave it,
    resting ones left approaching join it, sticking) until it holds; the
    new λ (a sliding λ_t brought back onto its new bound along its
    direction) replaces ``lam`` only if then the sticking λ_t are within
    μλ_n and its :func:`velocity_residual` is smaller; returns whether it
    did (``state`` holds the set it ended with). Scratch: ``rows`` (m, int64), ``Ws`` (m², flat),
    ``D``, ``u``, ``x``, ``y``, ``keep`` (m); with coupling lists (``ptr``
    not empty) W is read on the coupled blocks only, and W_AA is factored
    by component of the coupling graph (:func:`_components`: a pile's
    separate stacks are separate blocks, a³ → Σ a_k³; blocks of CG_ROWS
    rows or more by conjugate gradients first, to a tenth of
    ``velocity_tol``: :func:`_active_solve`); ``marks`` (m, int64): the
    contacts' component labels (its first m/3, set by
    :func:`_components`), then scratch."""
    m = b.shape[0]
    nc = m // 3
    keep[:m] = lam
    settled = False
    a = 0
    for _ in range(max(PIVOT_ROUNDS, nc)):  # a column of contacts may join one per round
        a = _active_solve(W, b, lam, state, rows, Ws, D, u, x, y, ptr, idx, marks, velocity_tol)
        if a == 0:
            break
        for p in range(a):
            if x[p] != x[p]:  # NaN
                lam[:] = keep[:m]
                return False
            lam[rows[p]] = x[p]
        # block pivoting on the normal rows (Júdice & Pires 1994): a contact whose normal impulse
        # the solution makes negative leaves the set (its impulse 0), a resting one that it leaves
        # approaching joins it (sticking): the sweeps need not have found every state first (a
        # column of 50 spheres gained one contact every few hundred sweeps, each step refused until then)
        changed = False
        for c in range(nc):
            i = 3 * c
            if state[i] != 0 and lam[i] < 0.0:
                state[i] = state[i + 1] = state[i + 2] = 0
                lam[i] = lam[i + 1] = lam[i + 2] = 0.0
                changed = True
        for c in range(nc):
            i = 3 * c
            if state[i] == 0 and W[i, i] > small and lam[i] == 0.0 and \
                    coupled_velocity(W, b, lam, i, ptr, idx) < 0.0:
                state[i] = 1
                if mu[c] > 0.0:
                    state[i + 1] = state[i + 2] = 1
                changed = True
        if not changed:
            settled = True
            break
    if not settled:
        lam[:] = keep[:m]
        return False
    # sticking friction within its bound at the candidate
    for c in range(nc):
        i = 3 * c
        if state[i] == 0:
            continue
        r = mu[c] * lam[i]
        if model == BOX:
            for j in range(i + 1, i + 3):
                if state[j] != 0 and abs(lam[j]) > r:
                    lam[:] = keep[:m]
                    return False
        elif state[i + 1] != 0 and lam[i + 1] * lam[i + 1] + lam[i + 2] * lam[i + 2] > r * r:
            lam[:] = keep[:m]
            return False
    before = velocity_residual(W, b, mu, keep[:m], model, small, ptr, idx)
    for c in range(nc):  # a sliding λ_t onto its (new) bound, along its direction
        i = 3 * c
        r = mu[c] * lam[i]
        if model == BOX:
            for j in range(i + 1, i + 3):
                lam[j] = min(max(lam[j], -r), r)
        else:
            t = np.sqrt(lam[i + 1] * lam[i + 1] + lam[i + 2] * lam[i + 2])
            if t > r:
                s = r / t if t > 0.0 else 0.0
                lam[i + 1] *= s
                lam[i + 2] *= s
    if velocity_residual(W, b, mu, lam, model, small, ptr, idx) < before:
        return True
    lam[:] = keep[:m]
    return False

@njit(cache=True, nogil=True)
def _components(ptr, idx, labels, queue):
    """The connected components of the contacts' coupling graph (contact c
    coupled with ``idx[ptr[c]:ptr[c + 1]]``): ``labels[c]`` its component,
    by breadth-first search (``queue``: scratch, nc). Returns their
    number."""
    nc = ptr.shape[0] - 1
    for c in range(nc):
        labels[c] = -1
    k = 0
    for c in range(nc):
        if labels[c] >= 0:
            continue
        labels[c] = k
        queue[0] = c
        head, tail = 0, 1
        while head < tail:
            d = queue[head]
            head += 1
            for e in range(ptr[d], ptr[d + 1]):
                f = idx[e]
                if labels[f] < 0:
                    labels[f] = k
                    queue[tail] = f
                    tail += 1
        k += 1
    return k


@njit(cache=True, nogil=True, inline="always")
def _count_components(coupled, labels, nc):
    """The number of components labelled in ``labels`` (1 without coupling lists: one block)."""
    if not coupled:
        return 1
    k = 0
    for c in range(nc):
        k = max(k, labels[c] + 1)
    return k


@njit(cache=True, nogil=True, inline="always")
def _block_cost(a):
    """The multiply-adds of solving one block of a rows (in a sweep's: the
    factor's cost FACTOR_COST · a³/6, or CG_EXPECTED products with it)."""
    a = float(a)
    return FACTOR_COST * a * a * a / 6.0 if a < CG_ROWS else CG_EXPECTED * a * a


@njit(cache=True, nogil=True)
def _subspace_cost(state, labels, coupled, nc, sizes):
    """The subspace step's cost, Σ :func:`_block_cost` over the components
    of the active rows (``state``; ``sizes``: scratch, nc)."""
    if not coupled:  # one block (``sizes`` is not touched: without coupling lists it may alias the states)
        a = 0
        for i in range(3 * nc):
            if state[i] != 0:
                a += 1
        return _block_cost(a)
    K = _count_components(coupled, labels, nc)
    for k in range(K):
        sizes[k] = 0
    for i in range(3 * nc):
        if state[i] != 0:
            sizes[labels[i // 3]] += 1
    total = 0.0
    for k in range(K):
        total += _block_cost(sizes[k])
    return total


# A multiply-add of the subspace step's factor costs about this many of a sweep's (measured on a
# stack of five boxes: psd_factor's loops skip dropped rows and do not vectorize; a sweep's do)
FACTOR_COST = 3.0
# Stagnation: the solve stops (NOT_CONVERGED) when a window of this many sweeps lowered the
# velocity residual by less than 1 - STALL_RATE and a subspace step at the current contact states
# was refused. Talos standing on eight redundant foot contacts with Coulomb's disk: Gauss–Seidel
# cycles at a residual of 2.1e-7 m/s (100 000 sweeps do not lower it), and 500 sweeps a step were
# most of the step's cost; a slowly converging stack loses 16 % of its residual per window.
STALL_SWEEPS, STALL_RATE = 25, 0.99
# The block-pivoting rounds of a subspace step (contacts joining or leaving the pressing set) before it
# gives up
PIVOT_ROUNDS = 8


@njit(cache=True, nogil=True)
def projected_gauss_seidel_subspace(W, b, mu, lam, model, tol, max_iterations, omega, velocity_tol, states, Ws, V,
                                    ptr=_ALL, idx=_ALL):
    """:func:`projected_gauss_seidel` with PGS-SM's subspace steps
    (:func:`subspace_step`) where they pay: after a sweep that did not end
    the solve, one is taken if the contact states held over that sweep
    (the sweeps have found them, so the step is likely exact), have not
    already failed one, and the sweeps still needed — estimated from the
    velocity residual's rate of decrease over the last sweep, log(tol/r) /
    log(rate) — would cost more than the step's solve (:func:`_subspace_cost`,
    against m² a sweep). Gauss–Seidel alone
    crawls on resting contacts with more rows than freedoms: a stack of
    five boxes at rest decreases its residual by 0.7 % a sweep, 100–200
    sweeps a step at 1e-8 m/s, where the states are right after two;
    where the sweeps converge fast no step is taken. The same stopping
    tests, counted over all sweeps, and the same results (the sweep after
    a subspace step measures its residual); it gives up early
    (NOT_CONVERGED, λ the last sweep) when Gauss–Seidel has stalled:
    ``STALL_SWEEPS`` sweeps lowered the residual by less than 1 % and a
    subspace step was refused at the current states. Scratch: ``states`` (2, ≥ m)
    int64 (3 rows with coupling lists), ``Ws`` (≥ m²), ``V`` (5, ≥ m).
    ``ptr``, ``idx``: each contact's coupled contacts
    (:func:`~.residual.coupled_velocity`; the contact stage's: those
    sharing a branch of the world — W is then read on their blocks only,
    the others need not be written), or empty: all. Checks
    W's diagonal only for finiteness (:func:`_check`)."""
    st = _check(W, b, mu, lam, model, False)
    if st != 0:
        return st
    m = b.shape[0]
    small = _immovable(W)
    before, now = states[0], states[1]
    marks = states[states.shape[0] - 1]
    nc = m // 3
    coupled = ptr.shape[0] > 0
    if coupled:  # the coupling graph's components (fixed for the solve): the subspace step's blocks
        _components(ptr, idx, marks[:nc], marks[nc:2 * nc])
    contact_states(W, lam, mu, model, small, before)
    failed = False  # a subspace step at the current states was refused
    previous = np.inf
    window = np.inf  # the velocity residual at the start of the current window of STALL_SWEEPS sweeps
    for done in range(max_iterations):
        it, residual = _sweeps(W, b, mu, lam, model, tol, 1, omega, velocity_tol, ptr, idx)
        if it >= 0:
            return done + it
        if it != NOT_CONVERGED:
            return it
        if done % STALL_SWEEPS == STALL_SWEEPS - 1:
            if failed and residual > STALL_RATE * window:  # Gauss–Seidel cycles, and no subspace step helps
                return NOT_CONVERGED
            window = residual
        a = contact_states(W, lam, mu, model, small, now)
        held = True
        for i in range(m):
            if now[i] != before[i]:
                held = False
                before[i] = now[i]
        if not held:
            failed = False
        left = float(max_iterations - done - 1)  # the sweeps still needed, at most those allowed
        rate = residual / previous  # 0 after the first sweep or a subspace step (previous = ∞): no rate yet
        if velocity_tol > 0.0 and 0.0 < rate < 1.0:
            left = min(left, np.log(velocity_tol / residual) / np.log(rate))
        previous = residual
        sweep = m * m if not coupled else 9 * ptr[nc]  # the multiply-adds of a sweep: W's coupled blocks
        if held and not failed and a > 0 and \
                left * sweep > _subspace_cost(now, marks[:nc], coupled, nc, marks[nc:2 * nc]):
            if subspace_step(W, b, mu, lam, model, now, small, before, Ws, V[0], V[1], V[2], V[3], V[4], ptr, idx,
                             marks, velocity_tol):
                contact_states(W, lam, mu, model, small, before)
                previous = np.inf
            else:
                failed = True
                contact_states(W, lam, mu, model, small, before)
    return NOT_CONVERGED
