"""The rotation group SO(3): hat/vee, exponential and logarithm, and the
left and right Jacobians of the exponential (dexp and its inverse).

Rotation vectors ``w`` have angle ``|w|`` (radians) about axis ``w/|w|``;
``exp(w)`` is the active rotation matrix (orientation of the rotated frame in
the fixed one). The Jacobians follow Müller & Terze §2 (eq. 11) and Sueda
§1.3 with the Rodrigues erratum of notes/seed-004.md (the ``(1-cos)/θ²``
coefficient). All functions are Numba-compiled and usable from kernels; small
angles use Taylor series, angles near π use the symmetric-part branch.
"""
import numpy as np
from numba import njit

from ._small import mm3

_SMALL = 1e-4  # log: below this sin θ the series of θ/sin θ is exact to double precision
# Below θ² = _SERIES_T2 the Jacobian coefficients use their Taylor series: the
# closed forms cancel at small θ (relative error of (θ - sin θ)/θ³ is about
# 6 eps/θ², 1e-9 at θ = 1e-4), and 8 terms in θ² keep the series exact to
# double precision up to θ = 0.5.
_SERIES_T2 = 0.25


@njit(cache=True, nogil=True)
def hat(w):
    """3x3 skew matrix ``[w]`` with ``[w] x = w × x`` (Featherstone's ``w×``, Sueda §1 ``[a]``)."""
    W = np.zeros((3, 3))
    W[0, 1] = -w[2]
    W[0, 2] = w[1]
    W[1, 0] = w[2]
    W[1, 2] = -w[0]
    W[2, 0] = -w[1]
    W[2, 1] = w[0]
    return W


@njit(cache=True, nogil=True)
def vee(W):
    """Inverse of :func:`hat` (Sueda's "unbracket"): the vector of the skew part of ``W``."""
    out = np.empty(3)
    out[0] = 0.5 * (W[2, 1] - W[1, 2])
    out[1] = 0.5 * (W[0, 2] - W[2, 0])
    out[2] = 0.5 * (W[1, 0] - W[0, 1])
    return out


@njit(cache=True, nogil=True)
def _exp_coeffs(t2):
    """(sin θ/θ, (1 - cos θ)/θ², (θ - sin θ)/θ³) for θ² = t2.

    Taylor series (Horner in θ²) below θ = 0.5, closed forms above; the
    second uses the half-angle form 2 sin²(θ/2) of 1 - cos θ, which does not
    cancel.
    """
    if t2 < _SERIES_T2:
        a = 1.0 + t2 * (-1.0 / 6.0 + t2 * (1.0 / 120.0 + t2 * (-1.0 / 5040.0 + t2 * (
            1.0 / 362880.0 + t2 * (-1.0 / 39916800.0 + t2 * (1.0 / 6227020800.0 + t2 * (
                -1.0 / 1307674368000.0)))))))
        b = 0.5 + t2 * (-1.0 / 24.0 + t2 * (1.0 / 720.0 + t2 * (-1.0 / 40320.0 + t2 * (
            1.0 / 3628800.0 + t2 * (-1.0 / 479001600.0 + t2 * (1.0 / 87178291200.0 + t2 * (
                -1.0 / 20922789888000.0)))))))
        c = 1.0 / 6.0 + t2 * (-1.0 / 120.0 + t2 * (1.0 / 5040.0 + t2 * (-1.0 / 362880.0 + t2 * (
            1.0 / 39916800.0 + t2 * (-1.0 / 6227020800.0 + t2 * (1.0 / 1307674368000.0 + t2 * (
                -1.0 / 355687428096000.0)))))))
        return a, b, c
    t = np.sqrt(t2)
    s = np.sin(t)
    sh = np.sin(0.5 * t) / (0.5 * t)
    return s / t, 0.5 * sh * sh, (t - s) / (t2 * t)


@njit(cache=True, nogil=True, inline="always")
def axis_angle_entries(x, y, z, angle):
    """The nine entries (row major) of the rotation by ``angle`` about the
    unit axis (x, y, z) (Rodrigues), as scalars: the allocation-free form
    kernels use."""
    c = np.cos(angle)
    s = np.sin(angle)
    t = 1.0 - c
    return (c + t * x * x, t * x * y - s * z, t * x * z + s * y,
            t * x * y + s * z, c + t * y * y, t * y * z - s * x,
            t * x * z - s * y, t * y * z + s * x, c + t * z * z)


@njit(cache=True, nogil=True)
def exp_into(w, R):
    """Write ``exp([w])`` into the 3x3 array ``R``; kernel form of :func:`exp`."""
    t2 = w[0] * w[0] + w[1] * w[1] + w[2] * w[2]
    a, b, _ = _exp_coeffs(t2)
    x, y, z = w[0], w[1], w[2]
    R[0, 0] = 1.0 - b * (y * y + z * z)
    R[1, 1] = 1.0 - b * (x * x + z * z)
    R[2, 2] = 1.0 - b * (x * x + y * y)
    R[0, 1] = -a * z + b * x * y
    R[1, 0] = a * z + b * x * y
    R[0, 2] = a * y + b * x * z
    R[2, 0] = -a * y + b * x * z
    R[1, 2] = -a * x + b * y * z
    R[2, 1] = a * x + b * y * z


@njit(cache=True, nogil=True)
def exp(w):
    """Active rotation matrix ``exp([w]) = I + (sin θ/θ)[w] + ((1-cos θ)/θ²)[w]²``
    of the rotation vector ``w`` (Rodrigues; Müller & Terze eq. 9 with the
    ``/θ²`` erratum of notes/seed-004.md, Sueda §1.3). Series below θ = 0.5."""
    R = np.empty((3, 3))
    exp_into(w, R)
    return R


@njit(cache=True, nogil=True)
def log(R):
    """Rotation vector ``w`` with ``exp([w]) = R`` and ``|w| <= π`` (Sueda §1.3).

    Near π the antisymmetric part vanishes, so the axis is taken from the
    symmetric part ``(R + Rᵀ)/2 = I + (1 - cos θ) (u uᵀ - I)`` (largest
    diagonal entry for stability) and its sign from the antisymmetric part.
    """
    tr = R[0, 0] + R[1, 1] + R[2, 2]
    c = 0.5 * (tr - 1.0)
    if c > 1.0:
        c = 1.0
    elif c < -1.0:
        c = -1.0
    v = np.empty(3)
    v[0] = 0.5 * (R[2, 1] - R[1, 2])
    v[1] = 0.5 * (R[0, 2] - R[2, 0])
    v[2] = 0.5 * (R[1, 0] - R[0, 1])  # = sin θ · u
    s = np.sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2])
    theta = np.arctan2(s, c)
    if c > -0.7:
        # away from π: θ / sin θ with a series near 0
        if s < _SMALL:
            k = 1.0 + s * s / 6.0 + 3.0 * s ** 4 / 40.0
        else:
            k = theta / s
        return k * v
    # near π: u from the symmetric part
    B = np.empty((3, 3))
    one_c = 1.0 - c
    for i in range(3):
        for j in range(3):
            B[i, j] = 0.5 * (R[i, j] + R[j, i]) / one_c
        B[i, i] -= c / one_c  # B = u uᵀ
    i = 0
    if B[1, 1] > B[i, i]:
        i = 1
    if B[2, 2] > B[i, i]:
        i = 2
    u = np.empty(3)
    norm = np.sqrt(max(B[i, i], 0.0))
    for j in range(3):
        u[j] = B[i, j] / norm
    if u[0] * v[0] + u[1] * v[1] + u[2] * v[2] < 0.0:
        u = -u
    return theta * u


@njit(cache=True, nogil=True)
def left_jacobian(w):
    """Left Jacobian ``J_l(w) = I + (1-cos θ)/θ² [w] + (θ - sin θ)/θ³ [w]²``.

    It is the right-trivialized dexp: ``d/dt exp(w) · exp(w)ᵀ = [J_l(w) ẇ]``
    (Müller & Terze §2, dexp). It is also the matrix ``V`` of the SE(3)
    exponential's translation part.
    """
    t2 = w[0] * w[0] + w[1] * w[1] + w[2] * w[2]
    _, b, c = _exp_coeffs(t2)
    W = hat(w)
    return np.eye(3) + b * W + c * mm3(W, W)


@njit(cache=True, nogil=True)
def right_jacobian(w):
    """Right Jacobian ``J_r(w) = J_l(-w)``: ``exp(w)ᵀ d/dt exp(w) = [J_r(w) ẇ]``,
    the left-trivialized (body-frame) dexp (Müller & Terze C5); Pinocchio's ``Jexp3``."""
    return left_jacobian(-w)


@njit(cache=True, nogil=True)
def _inv_coeff(t2):
    """(1 - (θ/2) cot(θ/2)) / θ² for θ² = t2; its Taylor series
    1/12 + θ²/720 + θ⁴/30240 + … below θ = 0.5 (the closed form cancels there)."""
    if t2 < _SERIES_T2:
        return 1.0 / 12.0 + t2 * (1.0 / 720.0 + t2 * (1.0 / 30240.0 + t2 * (1.0 / 1209600.0 + t2 * (
            1.0 / 47900160.0 + t2 * (691.0 / 1307674368000.0 + t2 * (1.0 / 74724249600.0 + t2 * (
                3617.0 / 10670622842880000.0 + t2 * (43867.0 / 5109094217170944000.0))))))))
    t = np.sqrt(t2)
    return (1.0 - 0.5 * t * np.cos(0.5 * t) / np.sin(0.5 * t)) / t2


@njit(cache=True, nogil=True)
def left_jacobian_inv(w):
    """Inverse of :func:`left_jacobian` (dexp⁻¹, Müller & Terze eq. 11):
    ``I - ½[w] + (1 - (θ/2)cot(θ/2))/θ² [w]²``; singular at θ = 2π."""
    W = hat(w)
    return np.eye(3) - 0.5 * W + _inv_coeff(w[0] * w[0] + w[1] * w[1] + w[2] * w[2]) * mm3(W, W)


@njit(cache=True, nogil=True)
def right_jacobian_inv(w):
    """Inverse of :func:`right_jacobian`, i.e. ``left_jacobian_inv(-w)``: the
    body-frame dexp⁻¹ used by left-trivialized Munthe-Kaas steps (Müller &
    Terze C5/C9); Pinocchio's ``Jlog3`` at ``exp(w)``."""
    return left_jacobian_inv(-w)
