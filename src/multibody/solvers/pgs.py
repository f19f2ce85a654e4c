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
from .residual import BOX, CONE, IMMOVABLE, box_slip_residual, disk_slip_residual, normal_residual, row_velocity


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
    m = b.shape[0]
    nc = m // 3
    if m != 3 * nc or W.shape[0] != m or W.shape[1] != m or mu.shape[0] != nc or lam.shape[0] != m \
            or (model != CONE and model != BOX):
        return CONTACT_BAD_SHAPE
    diag = 0.0
    check = 0.0  # x·0 is NaN for a non-finite x
    for i in range(m):
        diag = max(diag, W[i, i])
        check += (b[i] + lam[i]) * 0.0
        for k in range(m):
            check += W[i, k] * 0.0
    for c in range(nc):
        check += mu[c] * 0.0
    if check != 0.0:
        return CONTACT_NON_FINITE
    small = IMMOVABLE * diag
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
                un = row_velocity(W, b, lam, i)
                residual = max(residual, normal_residual(W[i, i], old, un))
                new = max(old - omega * un / W[i, i], 0.0)
            lam[i] = new
            change = max(change, abs(new - old))
            size = max(size, new)
            r = mu[c] * new
            if model == BOX:
                for j in range(i + 1, i + 3):
                    old = lam[j]
                    u = row_velocity(W, b, lam, j)
                    if W[j, j] > small:
                        new = old - omega * u / W[j, j]
                        residual = max(residual, box_slip_residual(old, u, r, W[j, j]))
                    else:  # the minimizer of the linear u·x over [−r, r]
                        new = -r if u > 0.0 else (r if u < 0.0 else 0.0)
                    new = min(max(new, -r), r)
                    lam[j] = new
                    change = max(change, abs(new - old))
                    size = max(size, abs(new))
            else:
                o1 = lam[i + 1]
                o2 = lam[i + 2]
                x1 = 0.0
                x2 = 0.0
                if r > 0.0:
                    a11 = W[i + 1, i + 1]
                    a12 = W[i + 1, i + 2]
                    a22 = W[i + 2, i + 2]
                    u1 = row_velocity(W, b, lam, i + 1)
                    u2 = row_velocity(W, b, lam, i + 2)
                    residual = max(residual, disk_slip_residual(o1, o2, u1, u2, r, max(a11, a22)))
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
            return CONTACT_NON_FINITE
        if change <= tol * size or residual <= velocity_tol:
            return it + 1
    return NOT_CONVERGED

