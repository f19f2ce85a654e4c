"""Unit quaternions, scalar first ``(w, x, y, z)``, Hamilton product.

``to_rotation(q)`` is the active rotation matrix R (child axes in the parent
frame): ``R v = q (0, v) q*``. Featherstone's Eq. 4.12 is ``Rᵀ`` (notes P8).
Rate equations follow ArtiSynth §0.2: ``q̇ = ½ (0, ω) q`` with ω in the fixed
(world) frame and ``q̇ = ½ q (0, ω)`` with ω in the rotated (body) frame.
All functions are Numba-compiled and usable from kernels.
"""
import numpy as np
from numba import njit

from ._small import mv3


@njit(cache=True, nogil=True)
def multiply(p, q):
    """Hamilton product ``p q = (p_s q_s - p_v·q_v, p_s q_v + q_s p_v + p_v × q_v)``
    (ArtiSynth §0.2); ``R(p q) = R(p) R(q)``."""
    out = np.empty(4)
    out[0] = p[0] * q[0] - p[1] * q[1] - p[2] * q[2] - p[3] * q[3]
    out[1] = p[0] * q[1] + p[1] * q[0] + p[2] * q[3] - p[3] * q[2]
    out[2] = p[0] * q[2] - p[1] * q[3] + p[2] * q[0] + p[3] * q[1]
    out[3] = p[0] * q[3] + p[1] * q[2] - p[2] * q[1] + p[3] * q[0]
    return out


@njit(cache=True, nogil=True)
def conjugate(q):
    """Conjugate ``(w, -x, -y, -z)``; the inverse of a unit quaternion (ArtiSynth §0.2)."""
    out = np.empty(4)
    out[0] = q[0]
    out[1] = -q[1]
    out[2] = -q[2]
    out[3] = -q[3]
    return out


@njit(cache=True, nogil=True)
def normalize(q):
    """``q / |q|`` (the integrators keep quaternions unit, DESIGN.md)."""
    return q / np.sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3])


@njit(cache=True, nogil=True, inline="always")
def rotation_entries(w, x, y, z):
    """The nine entries (row major) of the rotation matrix of the unit
    quaternion (w, x, y, z), as scalars: the allocation-free form kernels use."""
    return (1.0 - 2.0 * (y * y + z * z), 2.0 * (x * y - w * z), 2.0 * (x * z + w * y),
            2.0 * (x * y + w * z), 1.0 - 2.0 * (x * x + z * z), 2.0 * (y * z - w * x),
            2.0 * (x * z - w * y), 2.0 * (y * z + w * x), 1.0 - 2.0 * (x * x + y * y))


@njit(cache=True, nogil=True)
def to_rotation_into(q, R):
    """Write the rotation matrix of unit quaternion ``q`` into ``R``; kernel form
    of :func:`to_rotation`."""
    e = rotation_entries(q[0], q[1], q[2], q[3])
    for k in range(9):
        R[k // 3, k % 3] = e[k]


@njit(cache=True, nogil=True)
def to_rotation(q):
    """Active rotation matrix ``R`` of the unit quaternion ``q`` (rotated-frame axes
    in the fixed frame, ``R v = q (0,v) q*``, ArtiSynth §0.2). Featherstone's
    Eq. 4.12 is ``Rᵀ`` (notes/seed-002-part1.md P8)."""
    R = np.empty((3, 3))
    to_rotation_into(q, R)
    return R


@njit(cache=True, nogil=True)
def from_rotation(R):
    """Unit quaternion (with ``w >= 0``) of rotation matrix ``R``, by Shepperd's
    method: take the largest of ``4w², 4x², 4y², 4z²`` to avoid cancellation.
    Inverse of :func:`to_rotation` (not in the seeds; Featherstone §4.5 only
    goes from Euler parameters to E)."""
    tr = R[0, 0] + R[1, 1] + R[2, 2]
    q = np.empty(4)
    k = 0
    best = tr
    for i in range(3):
        if R[i, i] > best:
            best = R[i, i]
            k = i + 1
    if k == 0:
        s = 2.0 * np.sqrt(1.0 + tr)
        q[0] = 0.25 * s
        q[1] = (R[2, 1] - R[1, 2]) / s
        q[2] = (R[0, 2] - R[2, 0]) / s
        q[3] = (R[1, 0] - R[0, 1]) / s
    elif k == 1:
        s = 2.0 * np.sqrt(1.0 + R[0, 0] - R[1, 1] - R[2, 2])
        q[0] = (R[2, 1] - R[1, 2]) / s
        q[1] = 0.25 * s
        q[2] = (R[0, 1] + R[1, 0]) / s
        q[3] = (R[0, 2] + R[2, 0]) / s
    elif k == 2:
        s = 2.0 * np.sqrt(1.0 + R[1, 1] - R[0, 0] - R[2, 2])
        q[0] = (R[0, 2] - R[2, 0]) / s
        q[1] = (R[0, 1] + R[1, 0]) / s
        q[2] = 0.25 * s
        q[3] = (R[1, 2] + R[2, 1]) / s
    else:
        s = 2.0 * np.sqrt(1.0 + R[2, 2] - R[0, 0] - R[1, 1])
        q[0] = (R[1, 0] - R[0, 1]) / s
        q[1] = (R[0, 2] + R[2, 0]) / s
        q[2] = (R[1, 2] + R[2, 1]) / s
        q[3] = 0.25 * s
    if q[0] < 0.0:
        q = -q
    return q / np.sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3])


@njit(cache=True, nogil=True)
def exp(w):
    """Unit quaternion of rotation vector ``w``: ``(cos(θ/2), sin(θ/2) w/θ)``
    (ArtiSynth §0.2, Featherstone Eq. 4.10-4.11); series below θ = 1e-4."""
    t2 = w[0] * w[0] + w[1] * w[1] + w[2] * w[2]
    q = np.empty(4)
    if t2 < 1e-8:
        q[0] = 1.0 - t2 / 8.0
        k = 0.5 - t2 / 48.0
    else:
        t = np.sqrt(t2)
        q[0] = np.cos(0.5 * t)
        k = np.sin(0.5 * t) / t
    q[1] = k * w[0]
    q[2] = k * w[1]
    q[3] = k * w[2]
    return q


@njit(cache=True, nogil=True)
def log(q):
    """Rotation vector of unit quaternion ``q``, angle in ``[0, π]`` (``q`` and
    ``-q`` give the same result); inverse of :func:`exp`."""
    w = q[0]
    v = q[1:4].copy()
    if w < 0.0:
        w = -w
        v = -v
    s = np.sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2])
    if s < 1e-8:
        k = 2.0 / w * (1.0 - s * s / (3.0 * w * w))
    else:
        k = 2.0 * np.arctan2(s, w) / s
    return k * v


@njit(cache=True, nogil=True)
def rotate(q, v):
    """``R(q) v = q (0,v) q*``: ``v`` given in the rotated frame, returned in the
    fixed frame (ArtiSynth §0.2)."""
    return mv3(to_rotation(q), v)


@njit(cache=True, nogil=True)
def rate_world(q, w):
    """``q̇ = ½ (0, ω) q`` for ω in the fixed (world) frame (ArtiSynth eq. 0.1)."""
    p = np.zeros(4)
    p[1:4] = w
    return 0.5 * multiply(p, q)


@njit(cache=True, nogil=True)
def rate_body(q, w):
    """``q̇ = ½ q (0, ω)`` for ω in the rotated (body) frame (ArtiSynth §0.2)."""
    p = np.zeros(4)
    p[1:4] = w
    return 0.5 * multiply(q, p)


@njit(cache=True, nogil=True)
def integrate_body(q, w):
    """``q ⊗ exp(w)``: rotate by the body-frame rotation vector ``w``, renormalized
    (the free-joint update of DESIGN.md; ArtiSynth §0.2 body-frame convention)."""
    return normalize(multiply(q, exp(w)))


@njit(cache=True, nogil=True)
def difference_body(q0, q1):
    """Body-frame rotation vector ``w`` with ``q1 = q0 ⊗ exp(w)`` (shortest arc);
    inverse of :func:`integrate_body`."""
    return log(multiply(conjugate(q0), q1))
