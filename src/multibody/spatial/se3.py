"""The rigid-motion group SE(3) (Müller & Terze §2, Sueda §1.1-1.5).

Poses are 4x4 homogeneous matrices ``T = [[R, p], [0, 1]]``: the orientation
``R`` and origin ``p`` of a frame B in a frame A, so ``x_A = R x_B + p``.
Twists are angular first, ``xi = (ω, v)``; ``hat(xi) = [[ω̂, v], [0, 0]]``. A
*body* twist of a moving pose is ``T⁻¹Ṫ = hat(ω_b, v_b)`` (ω and the velocity
of the origin, both in B coordinates; Sueda eq. 1.5-1.9, Müller eq. 6); the
*spatial* twist is ``Ṫ T⁻¹``. ``Ad(T)`` maps a twist in B coordinates to A
coordinates (``Ad(T) xi_body = xi_spatial``) and equals Featherstone's
``ᴬX_B`` (see :mod:`multibody.spatial.spatial`).

Jacobians of the exponential (``C = exp(hat(xi))``, ``ξ̇`` the rate of xi)::

    dexp(xi)         right-trivialized (Müller & Terze eq. 10):  Ċ C⁻¹ = hat(dexp(xi) ξ̇)
                     = Barfoot's / so3's "left Jacobian" (spatial increments)
    dexp_body(xi)    left-trivialized, = dexp(-xi):              C⁻¹ Ċ = hat(dexp_body(xi) ξ̇)
                     = the "right Jacobian", Pinocchio's Jexp6 (body increments)
    dexp_inv(xi), dexp_inv_body(xi) = dexp_inv(-xi)               their inverses
                     (Müller & Terze's Munthe-Kaas step uses dexp⁻¹ at -Φ, i.e. dexp_inv_body)

Each is a polynomial of degree 4 in ``ad(xi)`` because
``ad⁵ + 2θ² ad³ + θ⁴ ad = 0`` (θ = |ω|, Selig). The coefficients are
evaluated by Taylor series below θ = 0.5 and in closed form above, so the
results are accurate to round-off for every twist, including ω = 0 (pure
translation) where ``dexp = I + ½ ad``.

All functions are Numba-compiled (``@njit(cache=True, nogil=True)``), take and
return float64 arrays, and are usable from other kernels. ``*_rp`` variants
take or return ``(R, p)`` instead of 4x4 matrices.
"""
import numpy as np
from numba import njit

from . import so3
from ._small import mm3

_SERIES_T2 = 0.25  # θ² below which the ad-polynomial coefficients use Taylor series


@njit(cache=True, nogil=True)
def hat(xi):
    """4x4 matrix ``[[ω̂, v], [0, 0]]`` of the twist ``xi = (ω, v)`` (Sueda §1.2)."""
    X = np.zeros((4, 4))
    X[0, 1] = -xi[2]
    X[0, 2] = xi[1]
    X[1, 0] = xi[2]
    X[1, 2] = -xi[0]
    X[2, 0] = -xi[1]
    X[2, 1] = xi[0]
    X[0, 3] = xi[3]
    X[1, 3] = xi[4]
    X[2, 3] = xi[5]
    return X


@njit(cache=True, nogil=True)
def vee(X):
    """Inverse of :func:`hat` (Sueda §1.2 "unbracket"): the twist ``(ω, v)`` of a
    4x4 se(3) matrix (ω from the skew part of the 3x3 block)."""
    xi = np.empty(6)
    xi[0] = 0.5 * (X[2, 1] - X[1, 2])
    xi[1] = 0.5 * (X[0, 2] - X[2, 0])
    xi[2] = 0.5 * (X[1, 0] - X[0, 1])
    xi[3] = X[0, 3]
    xi[4] = X[1, 3]
    xi[5] = X[2, 3]
    return xi


@njit(cache=True, nogil=True)
def from_rp(R, p):
    """4x4 pose ``[[R, p], [0, 1]]`` (Sueda §1.1, Müller C1)."""
    T = np.zeros((4, 4))
    T[:3, :3] = R
    T[:3, 3] = p
    T[3, 3] = 1.0
    return T


@njit(cache=True, nogil=True)
def exp_rp(xi):
    """``(R, p)`` of ``exp(hat(xi))``: ``R = so3.exp(ω)``, ``p = V(ω) v`` with
    ``V = so3.left_jacobian(ω)`` (Müller & Terze C4, the numerically better
    form; ``p = v`` at ω = 0)."""
    w = xi[:3]
    t2 = w[0] * w[0] + w[1] * w[1] + w[2] * w[2]
    a, b, c = so3._exp_coeffs(t2)
    R = np.empty((3, 3))
    so3.exp_into(w, R)
    v0, v1, v2 = xi[3], xi[4], xi[5]
    # ω × v and ω × (ω × v) instead of forming V
    x0 = w[1] * v2 - w[2] * v1
    x1 = w[2] * v0 - w[0] * v2
    x2 = w[0] * v1 - w[1] * v0
    y0 = w[1] * x2 - w[2] * x1
    y1 = w[2] * x0 - w[0] * x2
    y2 = w[0] * x1 - w[1] * x0
    p = np.empty(3)
    p[0] = v0 + b * x0 + c * y0
    p[1] = v1 + b * x1 + c * y1
    p[2] = v2 + b * x2 + c * y2
    return R, p


@njit(cache=True, nogil=True)
def exp_into(xi, T):
    """Write ``exp(hat(xi))`` into the 4x4 array ``T``; kernel form of :func:`exp`
    (Müller & Terze eq. 8-9)."""
    R, p = exp_rp(xi)
    for i in range(3):
        for j in range(3):
            T[i, j] = R[i, j]
        T[i, 3] = p[i]
        T[3, i] = 0.0
    T[3, 3] = 1.0


@njit(cache=True, nogil=True)
def exp(xi):
    """4x4 pose ``exp(hat(xi))`` of the twist ``xi = (ω, v)`` (Müller & Terze
    eq. 8-9 with the Rodrigues erratum of notes/seed-004.md; Sueda §1.3)."""
    T = np.empty((4, 4))
    exp_into(xi, T)
    return T


@njit(cache=True, nogil=True)
def log_rp(R, p):
    """Twist ``xi = (ω, v)`` with ``exp(hat(xi)) = (R, p)`` and ``|ω| <= π``:
    ``ω = so3.log(R)`` (robust near 0 and π), ``v = V(ω)⁻¹ p`` with
    ``V⁻¹ = so3.left_jacobian_inv(ω)`` (regular for ``|ω| < 2π``)."""
    w = so3.log(R)
    Vi = so3.left_jacobian_inv(w)
    xi = np.empty(6)
    xi[:3] = w
    for i in range(3):
        xi[3 + i] = Vi[i, 0] * p[0] + Vi[i, 1] * p[1] + Vi[i, 2] * p[2]
    return xi


@njit(cache=True, nogil=True)
def log(T):
    """Twist ``xi = (ω, v)`` with ``exp(xi) = T`` (Sueda §1.3), see :func:`log_rp`."""
    return log_rp(T[:3, :3], T[:3, 3])


@njit(cache=True, nogil=True)
def inverse_rp(R, p):
    """``(Rᵀ, -Rᵀ p)``, the inverse pose (Sueda eq. 1.4, Müller C1)."""
    Rt = R.T.copy()
    q = np.empty(3)
    for i in range(3):
        q[i] = -(Rt[i, 0] * p[0] + Rt[i, 1] * p[1] + Rt[i, 2] * p[2])
    return Rt, q


@njit(cache=True, nogil=True)
def inverse(T):
    """4x4 inverse ``[[Rᵀ, -Rᵀp], [0, 1]]`` of a pose (Sueda eq. 1.4)."""
    Rt, q = inverse_rp(T[:3, :3], T[:3, 3])
    return from_rp(Rt, q)


@njit(cache=True, nogil=True)
def compose(T1, T2):
    """Pose product ``T1 T2`` (Müller C1: ``(R1R2, p1 + R1p2)``)."""
    T = np.zeros((4, 4))
    for i in range(3):
        for j in range(4):
            T[i, j] = T1[i, 0] * T2[0, j] + T1[i, 1] * T2[1, j] + T1[i, 2] * T2[2, j]
        T[i, 3] += T1[i, 3]
    T[3, 3] = 1.0
    return T


@njit(cache=True, nogil=True)
def act(T, x):
    """Point ``x`` given in B coordinates mapped to A coordinates: ``R x + p``
    (Sueda eq. 1.1)."""
    out = np.empty(3)
    for i in range(3):
        out[i] = T[i, 0] * x[0] + T[i, 1] * x[1] + T[i, 2] * x[2] + T[i, 3]
    return out


@njit(cache=True, nogil=True)
def Ad_rp(R, p):
    """6x6 adjoint ``[[R, 0], [p̂R, R]]`` of the pose ``(R, p)``, angular first
    (Sueda eq. 1.14-1.15): maps a twist in B coordinates to A coordinates.
    Equal to Featherstone's ``ᴬX_B`` (motion transform)."""
    A = np.zeros((6, 6))
    PR = mm3(so3.hat(p), R)
    A[:3, :3] = R
    A[3:, 3:] = R
    A[3:, :3] = PR
    return A


@njit(cache=True, nogil=True)
def Ad(T):
    """6x6 adjoint of a 4x4 pose, see :func:`Ad_rp`. ``Ad(T1 T2) = Ad(T1) Ad(T2)``."""
    return Ad_rp(T[:3, :3], T[:3, 3])


@njit(cache=True, nogil=True)
def Ad_inv(T):
    """``Ad(T)⁻¹ = Ad(T⁻¹) = [[Rᵀ, 0], [-Rᵀp̂, Rᵀ]]``: twist in A coordinates
    to B coordinates (Sueda §1.5; Featherstone ``ᴮX_A``)."""
    Rt, q = inverse_rp(T[:3, :3], T[:3, 3])
    return Ad_rp(Rt, q)


@njit(cache=True, nogil=True)
def Ad_dual(T):
    """Wrench transform ``Ad(T)⁻ᵀ = [[R, p̂R], [0, R]]`` (angular first,
    ``(n, f)``): maps a wrench in B coordinates (moment about B's origin) to A
    coordinates (moment about A's origin). Featherstone's ``ᴬX_B*``; Sueda §1.5
    "wrenches transform with Adᵀ" is the inverse direction."""
    R = T[:3, :3]
    P = so3.hat(T[:3, 3])
    A = np.zeros((6, 6))
    A[:3, :3] = R
    A[3:, 3:] = R
    A[:3, 3:] = mm3(P, R)
    return A


@njit(cache=True, nogil=True)
def ad(xi):
    """6x6 ``ad(xi) = [[ω̂, 0], [v̂, ω̂]]`` (Müller & Terze eq. 7, Sueda eq. 1.16-1.20):
    ``ad(x) y = [x, y]`` (Lie bracket); equal to Featherstone's ``crm``."""
    A = np.zeros((6, 6))
    W = so3.hat(xi[:3])
    V = so3.hat(xi[3:])
    A[:3, :3] = W
    A[3:, 3:] = W
    A[3:, :3] = V
    return A


@njit(cache=True, nogil=True)
def ad_dual(xi):
    """``-ad(xi)ᵀ = [[ω̂, v̂], [0, ω̂]]``, the coadjoint action on wrenches
    (Featherstone's ``crf``). Body Newton-Euler (Sueda eq. 1.21):
    ``M φ̇ = ad(φ)ᵀ M φ + f = -ad_dual(φ) M φ + f``."""
    A = np.zeros((6, 6))
    W = so3.hat(xi[:3])
    V = so3.hat(xi[3:])
    A[:3, :3] = W
    A[3:, 3:] = W
    A[:3, 3:] = V
    return A


@njit(cache=True, nogil=True)
def bracket(x, y):
    """Lie bracket ``[x, y] = (ωx × ωy, ωx × vy - ωy × vx)`` (Müller C2)."""
    out = np.empty(6)
    w, v, u, s = x[:3], x[3:], y[:3], y[3:]
    out[0] = w[1] * u[2] - w[2] * u[1]
    out[1] = w[2] * u[0] - w[0] * u[2]
    out[2] = w[0] * u[1] - w[1] * u[0]
    out[3] = w[1] * s[2] - w[2] * s[1] + v[1] * u[2] - v[2] * u[1]
    out[4] = w[2] * s[0] - w[0] * s[2] + v[2] * u[0] - v[0] * u[2]
    out[5] = w[0] * s[1] - w[1] * s[0] + v[0] * u[1] - v[1] * u[0]
    return out


@njit(cache=True, nogil=True)
def _ad_poly(xi, k1, k2, k3, k4):
    """``I + k1 ad + k2 ad² + k3 ad³ + k4 ad⁴`` using the block structure
    ``ad^n = [[Wⁿ, 0], [Lₙ, Wⁿ]]`` with ``L₁ = V``, ``Lₙ₊₁ = V Wⁿ + W Lₙ``
    (3x3 products only) and ``W³ = -θ² W``, ``W⁴ = -θ² W²``."""
    W = so3.hat(xi[:3])
    V = so3.hat(xi[3:])
    t2 = xi[0] * xi[0] + xi[1] * xi[1] + xi[2] * xi[2]
    W2 = mm3(W, W)
    VW = mm3(V, W)
    L2 = VW + mm3(W, V)
    L3 = mm3(V, W2) + mm3(W, L2)
    L4 = -t2 * VW + mm3(W, L3)
    A = k1 * W + (k2 - t2 * k4) * W2 - t2 * k3 * W  # k1 W + k2 W² + k3 W³ + k4 W⁴
    L = k1 * V + k2 * L2 + k3 * L3 + k4 * L4
    D = np.zeros((6, 6))
    for i in range(3):
        for j in range(3):
            D[i, j] = A[i, j]
            D[3 + i, 3 + j] = A[i, j]
            D[3 + i, j] = L[i, j]
        D[i, i] += 1.0
        D[3 + i, 3 + i] += 1.0
    return D


@njit(cache=True, nogil=True)
def _dexp_coeffs(t2):
    """Coefficients of ``dexp = I + a1 ad + a2 ad² + a3 ad³ + a4 ad⁴`` (Selig):
    a1 = (4 - θ sin θ - 4 cos θ)/(2θ²), a2 = (4θ - 5 sin θ + θ cos θ)/(2θ³),
    a3 = (2 - θ sin θ - 2 cos θ)/(2θ⁴), a4 = (2θ - 3 sin θ + θ cos θ)/(2θ⁵);
    Taylor series below θ = 0.5 (the numerators cancel to O(θ²)…O(θ⁵))."""
    if t2 < _SERIES_T2:
        a1 = 0.5 + t2 * t2 * (-1.0 / 720.0 + t2 * (1.0 / 20160.0 + t2 * (-1.0 / 1209600.0 + t2 * (
            1.0 / 119750400.0 + t2 * (-1.0 / 17435658240.0 + t2 * (1.0 / 3487131648000.0))))))
        a2 = 1.0 / 6.0 + t2 * t2 * (-1.0 / 5040.0 + t2 * (1.0 / 181440.0 + t2 * (-1.0 / 13305600.0 + t2 * (
            1.0 / 1556755200.0 + t2 * (-1.0 / 261534873600.0 + t2 * (1.0 / 59281238016000.0))))))
        a3 = 1.0 / 24.0 + t2 * (-1.0 / 360.0 + t2 * (1.0 / 13440.0 + t2 * (-1.0 / 907200.0 + t2 * (
            1.0 / 95800320.0 + t2 * (-1.0 / 14529715200.0 + t2 * (1.0 / 2988969984000.0 + t2 * (
                -1.0 / 800296713216000.0)))))))
        a4 = 1.0 / 120.0 + t2 * (-1.0 / 2520.0 + t2 * (1.0 / 120960.0 + t2 * (-1.0 / 9979200.0 + t2 * (
            1.0 / 1245404160.0 + t2 * (-1.0 / 217945728000.0 + t2 * (1.0 / 50812489728000.0 + t2 * (
                -1.0 / 15205637551104000.0)))))))
        return a1, a2, a3, a4
    t = np.sqrt(t2)
    s = np.sin(t)
    c = np.cos(t)
    a1 = (4.0 - t * s - 4.0 * c) / (2.0 * t2)
    a2 = (4.0 * t - 5.0 * s + t * c) / (2.0 * t2 * t)
    a3 = (2.0 - t * s - 2.0 * c) / (2.0 * t2 * t2)
    a4 = (2.0 * t - 3.0 * s + t * c) / (2.0 * t2 * t2 * t)
    return a1, a2, a3, a4


@njit(cache=True, nogil=True)
def _dexp_inv_coeffs(t2):
    """Selig's ``c2 = 2/θ² + (θ + 3 sin θ)/(4θ(cos θ - 1))`` and
    ``c4 = 1/θ⁴ + (θ + sin θ)/(4θ³(cos θ - 1))`` (Müller & Terze eq. 10, notes
    C5), with ``cos θ - 1 = -2 sin²(θ/2)``; Taylor series below θ = 0.5:
    c2 = 1/12 - θ⁴/30240 - …, c4 = -1/720 - θ²/15120 - …"""
    if t2 < _SERIES_T2:
        c2 = 1.0 / 12.0 + t2 * t2 * (-1.0 / 30240.0 + t2 * (-1.0 / 604800.0 + t2 * (-1.0 / 15966720.0 + t2 * (
            -691.0 / 326918592000.0 + t2 * (-1.0 / 14944849920.0 + t2 * (-3617.0 / 1778437140480000.0 + t2 * (
                -43867.0 / 729870602452992000.0)))))))
        c4 = -1.0 / 720.0 + t2 * (-1.0 / 15120.0 + t2 * (-1.0 / 403200.0 + t2 * (-1.0 / 11975040.0 + t2 * (
            -691.0 / 261534873600.0 + t2 * (-1.0 / 12454041600.0 + t2 * (-3617.0 / 1524374691840000.0 + t2 * (
                -43867.0 / 638636777146368000.0 + t2 * (-174611.0 / 89206406966476800000.0))))))))
        return c2, c4
    t = np.sqrt(t2)
    s = np.sin(t)
    sh = np.sin(0.5 * t)
    cm1 = -2.0 * sh * sh
    c2 = 2.0 / t2 + (t + 3.0 * s) / (4.0 * t * cm1)
    c4 = 1.0 / (t2 * t2) + (t + s) / (4.0 * t2 * t * cm1)
    return c2, c4


@njit(cache=True, nogil=True)
def dexp(xi):
    """Right-trivialized differential of exp (Müller & Terze eq. 10, C5):
    ``Ċ C⁻¹ = hat(dexp(xi) ξ̇)`` for ``C = exp(hat(xi))``, i.e.
    ``exp(xi + δ) ≈ exp(dexp(xi) δ) exp(xi)``. Equals ``Σ adᵏ/(k+1)!`` and the
    block matrix ``[[J_l(ω), 0], [Q, J_l(ω)]]`` (angular first)."""
    t2 = xi[0] * xi[0] + xi[1] * xi[1] + xi[2] * xi[2]
    a1, a2, a3, a4 = _dexp_coeffs(t2)
    return _ad_poly(xi, a1, a2, a3, a4)


@njit(cache=True, nogil=True)
def dexp_body(xi):
    """Left-trivialized differential ``dexp(-xi)``: the body twist of
    ``C = exp(hat(xi))`` is ``C⁻¹ Ċ = hat(dexp_body(xi) ξ̇)``
    (Müller & Terze C5, ``V̂ = dexp_{-X}(Ẋ)``); Pinocchio's ``Jexp6``."""
    t2 = xi[0] * xi[0] + xi[1] * xi[1] + xi[2] * xi[2]
    a1, a2, a3, a4 = _dexp_coeffs(t2)
    return _ad_poly(xi, -a1, a2, -a3, a4)


@njit(cache=True, nogil=True)
def dexp_inv(xi):
    """Inverse of :func:`dexp`, Selig's closed form
    ``I - ½ ad + c2(θ) ad² + c4(θ) ad⁴`` (Müller & Terze eq. 10, notes C5);
    singular at θ = |ω| = 2πk, k ≥ 1."""
    t2 = xi[0] * xi[0] + xi[1] * xi[1] + xi[2] * xi[2]
    c2, c4 = _dexp_inv_coeffs(t2)
    return _ad_poly(xi, -0.5, c2, 0.0, c4)


@njit(cache=True, nogil=True)
def dexp_inv_body(xi):
    """Inverse of :func:`dexp_body`, ``dexp_inv(-xi) = I + ½ ad + c2 ad² + c4 ad⁴``:
    the Munthe-Kaas increment rate ``Φ̇ = dexp_inv_body(Φ) V`` for a body
    twist V (Müller & Terze eq. 36-37, C9); Pinocchio's ``Jlog6`` at ``exp(Φ)``."""
    t2 = xi[0] * xi[0] + xi[1] * xi[1] + xi[2] * xi[2]
    c2, c4 = _dexp_inv_coeffs(t2)
    return _ad_poly(xi, 0.5, c2, 0.0, c4)
