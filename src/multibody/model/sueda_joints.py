"""Sueda's joint library (seed 001, §2.4; notes/seed-001.md F): the joints
whose motion subspace ``S(q)`` varies in the child's coordinates.

Every joint here has ``v = q̇`` (nq = nv) and supplies its transform
``Q(q)``, ``S(q) = [Q⁻¹ ∂Q/∂q_i]`` (child coordinates, angular rows first,
Sueda eq. 2.29) and ``Ṡ(q, q̇)``. Two families:

* **Exponential coordinates** (§2.4.8, §2.4.11): the spherical joint
  ``R = exp([r])``, whose S is the right Jacobian ``J_r(r)`` of SO(3)
  (``ω_child = J_r(r) ṙ``), and the 3-D free joint, the composite of that
  spherical joint and a translation expressed in the rotated frame,
  ``Q = (R(r), R(r) t)``, ``S = [[J_r, 0], [−[t] J_r, 1]]``.
* **Products of exponentials** ``Q(q) = Π_k exp(ξ_k f_k(q))`` of fixed
  twists ``ξ_k`` with scalar functions ``f_k``: the Euler-angle spherical
  joint (§2.4.5, three rotations ``f_k = q_k``), composite joints of 1-DoF
  parts (§2.4.9; nested composites flatten, the product being
  associative), the 2-D free joint (§2.4.10, ``x``, ``y`` then ``θ``), the
  cubic B-spline curve joint (§2.4.12: ``ξ_k = ΔC_k = log(C_{k−1}⁻¹C_k)``
  and ``f_k`` the cumulative basis ``B̃_k``) and the spline surface joint
  (§2.4.13: ``ξ_k`` the six unit twists, ``f_k`` bicubic). One recursion
  gives S and Ṡ for all of them — Sueda's Alg. 3 and Alg. 4 are the same
  algorithm (with Alg. 3's erratum: ``B̃ᵢ′``, not ``B̃ᵢ``, in the S_q
  update): for each factor, with ``Ad_k = Ad(exp(ξ_k f_k)⁻¹)``,

      Ṡ_i ← Ad_k (Ṡ_i + ad(S_i) ξ_k ḟ_k) + ξ_k ∂ḟ_k/∂q_i
      S_i ← Ad_k S_i + ξ_k ∂f_k/∂q_i

  (``d/dt Ad(exp(−ξ f)) = −Ad_k ad(ξ) ḟ`` since ``Ad_k ξ = ξ``).

Factor data live in the model table after the fixed columns (``C_EXTRA``,
present only in models that have such joints): the number of factors,
then per factor its kind, index, segment count, twist and 16 bicubic
coefficients (``FACTOR_WIDTH`` columns).
"""
import numpy as np
from numba import njit

from ..spatial import se3, so3

# factor kinds
LINEAR = 0    # f = q[index]
BSPLINE = 1   # f = cumulative uniform cubic B-spline basis B̃_index(q[0]) over `segments` segments
BICUBIC = 2   # f = q̃(q[0])ᵀ P q̃(q[1]), q̃(x) = (1, x, x², x³), P 4x4 row major

# layout of one factor in the extra columns
F_KIND = 0
F_INDEX = 1
F_SEGMENTS = 2
F_TWIST = 3      # 6
F_POLY = 9       # 16
FACTOR_WIDTH = 25

# the cubic B-spline basis (Sueda §2.4.12): B_j(u) = Σ_m B[j, m] u^m / 6, and the cumulative
# basis B̃_j = Σ_{r ≥ j} B_r as monomial coefficients (B̃_1 = 1), rows j = 1..4 (index 0 unused)
_CUMULATIVE = np.array([[0.0, 0.0, 0.0, 0.0],
                        [6.0, 0.0, 0.0, 0.0],
                        [5.0, 3.0, -3.0, 1.0],
                        [1.0, 3.0, 3.0, -2.0],
                        [0.0, 0.0, 0.0, 1.0]]) / 6.0
BASIS = np.array([[1.0, -3.0, 3.0, -1.0], [4.0, 0.0, -6.0, 3.0], [1.0, 3.0, 3.0, -3.0], [0.0, 0.0, 0.0, 1.0]]) / 6.0


# ----------------------------------------------------------- exponential coordinates

@njit(cache=True, nogil=True)
def _right_jacobian_coefficients(t2):
    """``(b, c, b′, c′)``: ``b = (1 − cos θ)/θ²`` and ``c = (θ − sin θ)/θ³``
    (:func:`so3._exp_coeffs`) and their derivatives with respect to
    ``t2 = θ²``, ``b′ = (sinθ/θ − 2b)/(2θ²)``, ``c′ = (b − 3c)/(2θ²)``, by
    their Taylor series below θ = 0.5, where those closed forms cancel."""
    a, b, c = so3._exp_coeffs(t2)
    if t2 < 0.25:
        db = -1.0 / 24.0 + t2 * (2.0 / 720.0 + t2 * (-3.0 / 40320.0 + t2 * (4.0 / 3628800.0 + t2 * (
            -5.0 / 479001600.0 + t2 * (6.0 / 87178291200.0 - t2 * 7.0 / 20922789888000.0)))))
        dc = -1.0 / 120.0 + t2 * (2.0 / 5040.0 + t2 * (-3.0 / 362880.0 + t2 * (4.0 / 39916800.0 + t2 * (
            -5.0 / 6227020800.0 + t2 * (6.0 / 1307674368000.0 - t2 * 7.0 / 355687428096000.0)))))
        return b, c, db, dc
    return b, c, (a - 2.0 * b) / (2.0 * t2), (b - 3.0 * c) / (2.0 * t2)


@njit(cache=True, nogil=True)
def _hat(x0, x1, x2):
    return so3.hat(np.array([x0, x1, x2]))


@njit(cache=True, nogil=True)
def right_jacobian_and_rate(r0, r1, r2, d0, d1, d2):
    """``(J_r, J̇_r)`` of SO(3) at the rotation vector r moving at ṙ = d:
    ``J_r = 1 − b [r] + c [r]²`` (``ω_child = J_r ṙ``; Sueda §2.4.8's
    ``[S_i] = Rᵀ ∂R/∂q_i``) and its time derivative
    ``−ḃ[r] − b[ṙ] + ċ[r]² + c([ṙ][r] + [r][ṙ])``, ``ḃ = 2 b′ rᵀṙ``.
    (Equal to the notes' eq. 2.46–2.47 form, without its division by
    ``rᵀr``, which is singular at r = 0.)"""
    t2 = r0 * r0 + r1 * r1 + r2 * r2
    b, c, db, dc = _right_jacobian_coefficients(t2)
    K = _hat(r0, r1, r2)
    Kd = _hat(d0, d1, d2)
    K2 = K @ K
    J = np.eye(3) - b * K + c * K2
    s = 2.0 * (r0 * d0 + r1 * d1 + r2 * d2)
    Jd = -db * s * K - b * Kd + dc * s * K2 + c * (Kd @ K + K @ Kd)
    return J, Jd


# ----------------------------------------------------------- products of exponentials

@njit(cache=True, nogil=True)
def _monomials(x):
    """q̃, q̃′, q̃″ of Sueda eq. 2.66: (1, x, x², x³) and its derivatives."""
    m = np.array([1.0, x, x * x, x * x * x])
    d = np.array([0.0, 1.0, 2.0 * x, 3.0 * x * x])
    dd = np.array([0.0, 0.0, 2.0, 6.0 * x])
    return m, d, dd


@njit(cache=True, nogil=True)
def _cumulative_basis(j, segments, x):
    """``(B̃_j, B̃_j′, B̃_j″)`` at the spline parameter x of a uniform cubic
    B-spline with ``segments`` segments (control points 1..segments+3):
    the segment s = ⌊x⌋ (clamped, so the end segments extrapolate their
    cubic), u = x − s; control point j is the (j − s)-th of the segment's
    window: B̃ = 1 before the window, 0 after it."""
    s = int(np.floor(x))
    if s < 0:
        s = 0
    if s > segments - 1:
        s = segments - 1
    k = j - s
    if k <= 1:
        return 1.0, 0.0, 0.0
    if k > 4:
        return 0.0, 0.0, 0.0
    m, d, dd = _monomials(x - s)
    f = df = ddf = 0.0
    for r in range(4):
        f += _CUMULATIVE[k, r] * m[r]
        df += _CUMULATIVE[k, r] * d[r]
        ddf += _CUMULATIVE[k, r] * dd[r]
    return f, df, ddf


@njit(cache=True, nogil=True)
def _factor_value(tree, b, q, iq, qd, iqd, n, rate):
    """``(f, ∂f/∂q (n), ∂ḟ/∂q (n), ḟ)`` of the factor whose data start at
    column b, at the joint coordinates ``q[iq:iq+n]`` moving at
    ``qd[iqd:iqd+n]`` (the last two zero unless ``rate``)."""
    kind = int(tree[b + F_KIND])
    g = np.zeros(n)
    gd = np.zeros(n)
    if kind == LINEAR:
        j = int(tree[b + F_INDEX])
        g[j] = 1.0
        return q[iq + j], g, gd, (qd[iqd + j] if rate else 0.0)
    if kind == BSPLINE:
        f, df, ddf = _cumulative_basis(int(tree[b + F_INDEX]), int(tree[b + F_SEGMENTS]), q[iq])
        g[0] = df
        fd = 0.0
        if rate:
            gd[0] = ddf * qd[iqd]
            fd = df * qd[iqd]
        return f, g, gd, fd
    # BICUBIC: f = q̃₁ᵀ P q̃₂
    m1, d1, dd1 = _monomials(q[iq])
    m2, d2, dd2 = _monomials(q[iq + 1])
    P = np.empty((4, 4))
    for r in range(4):
        for c in range(4):
            P[r, c] = tree[b + F_POLY + 4 * r + c]
    Pm2 = P @ m2
    Pd2 = P @ d2
    f = m1 @ Pm2
    g[0] = d1 @ Pm2
    g[1] = m1 @ Pd2
    fd = 0.0
    if rate:
        h00 = dd1 @ Pm2
        h01 = d1 @ Pd2
        h11 = m1 @ (P @ dd2)
        gd[0] = h00 * qd[iqd] + h01 * qd[iqd + 1]
        gd[1] = h01 * qd[iqd] + h11 * qd[iqd + 1]
        fd = g[0] * qd[iqd] + g[1] * qd[iqd + 1]
    return f, g, gd, fd


@njit(cache=True, nogil=True)
def _to_child(R, p, x):
    """``Ad(Q_k⁻¹) x`` for Q_k = (R, p): ``(Rᵀω; Rᵀ(v − p × ω))``."""
    w0, w1, w2, v0, v1, v2 = x[0], x[1], x[2], x[3], x[4], x[5]
    a0 = v0 - (p[1] * w2 - p[2] * w1)
    a1 = v1 - (p[2] * w0 - p[0] * w2)
    a2 = v2 - (p[0] * w1 - p[1] * w0)
    y = np.empty(6)
    for r in range(3):
        y[r] = R[0, r] * w0 + R[1, r] * w1 + R[2, r] * w2
        y[3 + r] = R[0, r] * a0 + R[1, r] * a1 + R[2, r] * a2
    return y


@njit(cache=True, nogil=True)
def product_of_exponentials(tree, i, base, q, iq, qd, iqd, n, rate):
    """``(R, p, S, Ṡ)`` of the product-of-exponentials joint of body i
    (factor data from column ``base``): the transform ``Q = Π_k exp(ξ_k f_k)``
    and the 6 x n motion subspace and its rate by the recursion of the
    module docstring (Sueda Alg. 3 and 4). Ṡ is zero unless ``rate``."""
    m = int(tree[i, base])
    R = np.eye(3)
    p = np.zeros(3)
    S = np.zeros((6, n))
    Sd = np.zeros((6, n))
    xi = np.empty(6)
    for k in range(m):
        b = base + 1 + FACTOR_WIDTH * k
        for r in range(6):
            xi[r] = tree[i, b + F_TWIST + r]
        f, g, gd, fd = _factor_value(tree[i], b, q, iq, qd, iqd, n, rate)
        Rk, pk = se3.exp_rp(xi * f)
        for c in range(n):
            if rate:
                y = Sd[:, c] + se3.bracket(S[:, c].copy(), xi) * fd
                y = _to_child(Rk, pk, y)
                for r in range(6):
                    Sd[r, c] = y[r] + xi[r] * gd[c]
            y = _to_child(Rk, pk, S[:, c].copy())
            for r in range(6):
                S[r, c] = y[r] + xi[r] * g[c]
        p = p + R @ pk
        R = R @ Rk
    return R, p, S, Sd


@njit(cache=True, nogil=True)
def exponential_joint(free, q, iq, qd, iqd, rate):
    """``(R, p, S, Ṡ)`` of the exponential-coordinate spherical joint
    (``free`` False; Sueda §2.4.8) or of the 3-D free joint (``free`` True;
    §2.4.11: q = (r, t), ``Q = (R(r), R(r) t)``,
    ``S = [[J_r, 0], [−[t] J_r, 1]]``,
    ``Ṡ = [[J̇_r, 0], [−[ṫ] J_r − [t] J̇_r, 0]]``)."""
    r0, r1, r2 = q[iq], q[iq + 1], q[iq + 2]
    d0 = d1 = d2 = 0.0
    if rate:
        d0, d1, d2 = qd[iqd], qd[iqd + 1], qd[iqd + 2]
    J, Jd = right_jacobian_and_rate(r0, r1, r2, d0, d1, d2)
    R = so3.exp(np.array([r0, r1, r2]))
    n = 6 if free else 3
    S = np.zeros((6, n))
    Sd = np.zeros((6, n))
    S[:3, :3] = J
    if rate:
        Sd[:3, :3] = Jd
    p = np.zeros(3)
    if free:
        T = _hat(q[iq + 3], q[iq + 4], q[iq + 5])
        S[3:, :3] = -T @ J
        for r in range(3):
            S[3 + r, 3 + r] = 1.0
        for r in range(3):  # R t, written out: q may be a non-contiguous view
            p[r] = R[r, 0] * q[iq + 3] + R[r, 1] * q[iq + 4] + R[r, 2] * q[iq + 5]
        if rate:
            Td = _hat(qd[iqd + 3], qd[iqd + 4], qd[iqd + 5])
            Sd[3:, :3] = -Td @ J - T @ Jd
    return R, p, S, Sd


# ----------------------------------------------------------- building the factor data

def spline_factors(frames):
    """Factor rows (kind, index, segments, twist) of a cubic B-spline curve
    joint through the control frames ``C_1 .. C_n`` (4x4 poses, n ≥ 4):
    ``ΔC_k = log(C_{k−1}⁻¹ C_k)`` for k = 2..n (Sueda §2.4.12, Alg. 3). The
    caller folds C_1 into the joint's placement."""
    rows = []
    for k in range(1, len(frames)):
        d = se3.log(se3.inverse(frames[k - 1]) @ frames[k])
        rows.append((BSPLINE, k + 1, len(frames) - 3, d, None))
    return rows


def surface_factors(controls):
    """Factor rows of the spline surface joint (Sueda §2.4.13, Alg. 4): six
    factors along the unit twists — translations x, y, z then rotations
    x, y, z (``Q = T·R``) — each with ``f_k = q̃₁ᵀ Bᵀ C_k B q̃₂``."""
    rows = []
    for k in range(6):
        xi = np.zeros(6)
        xi[3 + k if k < 3 else k - 3] = 1.0
        rows.append((BICUBIC, 0, 0, xi, BASIS.T @ controls[k] @ BASIS))
    return rows


def linear_factors(twists):
    """Factor rows ``exp(ξ_k q_k)`` (one coordinate per twist, in order)."""
    return [(LINEAR, k, 0, np.asarray(x, dtype=float), None) for k, x in enumerate(twists)]


def pack_factors(rows):
    """The extra-column block of a product-of-exponentials joint: the factor
    count, then ``FACTOR_WIDTH`` columns per factor."""
    out = np.zeros(1 + FACTOR_WIDTH * len(rows))
    out[0] = len(rows)
    for k, (kind, index, segments, xi, P) in enumerate(rows):
        b = 1 + FACTOR_WIDTH * k
        out[b + F_KIND], out[b + F_INDEX], out[b + F_SEGMENTS] = kind, index, segments
        out[b + F_TWIST:b + F_TWIST + 6] = xi
        if P is not None:
            out[b + F_POLY:b + F_POLY + 16] = np.asarray(P, dtype=float).ravel()
    return out
