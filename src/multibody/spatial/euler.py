"""Euler-angle charts of SO(3): URDF roll-pitch-yaw and Sueda's XZX angles.

Roll-pitch-yaw (URDF ``rpy``)
    ``rpy = (roll, pitch, yaw)`` and ``R = Rz(yaw) Ry(pitch) Rx(roll)`` with the
    *active* elementary rotations ``Rx, Ry, Rz`` (``Rz(a) = [[c,-s,0],[s,c,0],
    [0,0,1]]``), i.e. extrinsic rotations about the fixed x, then y, then z
    axes, which is the same as intrinsic z, y', x'' (scipy ``"xyz"`` /
    ``"ZYX"``). R is the orientation of the rotated frame in the fixed one.
    ArtiSynth §0.4 (notes/seed-000.md C4) uses this same rotation, but orders its
    angles ``(θ, φ, ψ) = (yaw, pitch, roll)``; its matrices are ours with the
    columns (for E) or rows (for E⁻¹) reversed. Featherstone's yaw-pitch-roll
    joint (§4.5, Eq. 4.7-4.8) is ``E = rx(q₃) ry(q₂) rz(q₁) = Rᵀ`` with
    ``q = (yaw, pitch, roll)`` and body-frame ω, i.e. our body map with the
    columns reversed.

    Angular-velocity maps, for ``ṙpy = d(roll, pitch, yaw)/dt``:

    * world (fixed-frame) ω, ``Ṙ Rᵀ = [ω]``:  ``ω = E_w(rpy) ṙpy``
    * body (rotated-frame) ω, ``Rᵀ Ṙ = [ω]``: ``ω = E_b(rpy) ṙpy``, ``E_b = Rᵀ E_w``

    All are singular at ``pitch = ±π/2`` (cos pitch = 0, gimbal lock).

XZX Euler angles (Sueda §2.4.5, notes/seed-001.md §F)
    ``R = Rx(q₁) Rz(q₂) Rx(q₃)``; the body-frame map ``ω = S(q) q̇`` (the
    angular rows of Sueda's joint ``S``) and its time derivative ``Ṡ(q, q̇)``.
    Singular at ``q₂ = 0, π``.

All functions are Numba-compiled (``@njit(cache=True, nogil=True)``), take and
return float64 arrays, and are usable from other kernels.
"""
import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def rpy_to_rotation(rpy):
    """Active rotation ``R = Rz(yaw) Ry(pitch) Rx(roll)`` of ``rpy = (roll,
    pitch, yaw)`` (URDF ``<origin rpy>``; ArtiSynth §0.4 R = Rz(θ)Ry(φ)Rx(ψ))."""
    cr, sr = np.cos(rpy[0]), np.sin(rpy[0])
    cp, sp = np.cos(rpy[1]), np.sin(rpy[1])
    cy, sy = np.cos(rpy[2]), np.sin(rpy[2])
    R = np.empty((3, 3))
    R[0, 0] = cy * cp
    R[0, 1] = cy * sp * sr - sy * cr
    R[0, 2] = cy * sp * cr + sy * sr
    R[1, 0] = sy * cp
    R[1, 1] = sy * sp * sr + cy * cr
    R[1, 2] = sy * sp * cr - cy * sr
    R[2, 0] = -sp
    R[2, 1] = cp * sr
    R[2, 2] = cp * cr
    return R


@njit(cache=True, nogil=True)
def rotation_to_rpy(R):
    """``(roll, pitch, yaw)`` with ``rpy_to_rotation(rpy) = R``; roll, yaw in
    ``(-π, π]``, pitch in ``[-π/2, π/2]``.

    Yaw is read from the first column; roll is then taken from
    ``M = Rz(yaw)ᵀ R = Ry(pitch) Rx(roll)``, whose relevant entries are O(1)
    even near gimbal lock, so ``R`` is reproduced to round-off whatever the
    (ill-determined) split between roll and yaw. At exact gimbal lock
    (``cos pitch = 0``) yaw is set to 0 and the rotation is carried by roll.
    """
    cp = np.sqrt(R[0, 0] * R[0, 0] + R[1, 0] * R[1, 0])
    if cp > 0.0:
        yaw = np.arctan2(R[1, 0], R[0, 0])
    else:
        yaw = 0.0
    cy, sy = np.cos(yaw), np.sin(yaw)
    m00 = cy * R[0, 0] + sy * R[1, 0]  # = cos pitch
    m11 = -sy * R[0, 1] + cy * R[1, 1]  # = cos roll
    m12 = -sy * R[0, 2] + cy * R[1, 2]  # = -sin roll
    out = np.empty(3)
    out[0] = np.arctan2(-m12, m11)
    out[1] = np.arctan2(-R[2, 0], m00)
    out[2] = yaw
    return out


@njit(cache=True, nogil=True)
def rpy_rates_to_world_omega_matrix(rpy):
    """``E_w`` with ``ω_world = E_w ṙpy`` for ``ṙpy = (roll, pitch, yaw)``
    rates: columns are ``Rz Ry e_x``, ``Rz e_y``, ``e_z``.

    ``E_w = [[cy cp, -sy, 0], [sy cp, cy, 0], [-sp, 0, 1]]``; this is ArtiSynth
    §0.4's ``E = [[0,-sθ,cθcφ],[0,cθ,sθcφ],[1,0,-sφ]]`` (rates ``(θ̇, φ̇, ψ̇) =
    (yaw, pitch, roll)``) with its columns reversed.
    """
    cp, sp = np.cos(rpy[1]), np.sin(rpy[1])
    cy, sy = np.cos(rpy[2]), np.sin(rpy[2])
    E = np.zeros((3, 3))
    E[0, 0] = cy * cp
    E[0, 1] = -sy
    E[1, 0] = sy * cp
    E[1, 1] = cy
    E[2, 0] = -sp
    E[2, 2] = 1.0
    return E


@njit(cache=True, nogil=True)
def world_omega_to_rpy_rates_matrix(rpy):
    """``E_w⁻¹`` with ``ṙpy = E_w⁻¹ ω_world`` (ArtiSynth §0.4 eq. 0.2, rows
    reversed to our (roll, pitch, yaw) order); singular at ``cos pitch = 0``.

    ``[[cy/cp, sy/cp, 0], [-sy, cy, 0], [sp cy/cp, sp sy/cp, 1]]``. Its rows are
    ArtiSynth's joint-limit constraint wrenches for roll, pitch and yaw.
    """
    cp, sp = np.cos(rpy[1]), np.sin(rpy[1])
    cy, sy = np.cos(rpy[2]), np.sin(rpy[2])
    Ei = np.zeros((3, 3))
    Ei[0, 0] = cy / cp
    Ei[0, 1] = sy / cp
    Ei[1, 0] = -sy
    Ei[1, 1] = cy
    Ei[2, 0] = sp * cy / cp
    Ei[2, 1] = sp * sy / cp
    Ei[2, 2] = 1.0
    return Ei


@njit(cache=True, nogil=True)
def world_omega_to_rpy_rates_matrix_dot(rpy, rpy_dot):
    """Time derivative of :func:`world_omega_to_rpy_rates_matrix` along
    ``rpy_dot`` (ArtiSynth §0.4 row derivatives, rows reversed to (roll,
    pitch, yaw)); with ``t = tan(pitch)``, ``ṗ``, ``ẏ`` the pitch and yaw rates:

    * roll row:  ``((-sy ẏ + cy t ṗ)/cp, (cy ẏ + sy t ṗ)/cp, 0)``
    * pitch row: ``(-cy ẏ, -sy ẏ, 0)``
    * yaw row:   ``(-sy t ẏ + (1+t²) cy ṗ, cy t ẏ + (1+t²) sy ṗ, 0)``
    """
    cp, sp = np.cos(rpy[1]), np.sin(rpy[1])
    cy, sy = np.cos(rpy[2]), np.sin(rpy[2])
    t = sp / cp
    pd = rpy_dot[1]
    yd = rpy_dot[2]
    D = np.zeros((3, 3))
    D[0, 0] = (-sy * yd + cy * t * pd) / cp
    D[0, 1] = (cy * yd + sy * t * pd) / cp
    D[1, 0] = -cy * yd
    D[1, 1] = -sy * yd
    D[2, 0] = -sy * t * yd + (1.0 + t * t) * cy * pd
    D[2, 1] = cy * t * yd + (1.0 + t * t) * sy * pd
    return D


@njit(cache=True, nogil=True)
def rpy_rates_to_body_omega_matrix(rpy):
    """``E_b = Rᵀ E_w`` with ``ω_body = E_b ṙpy`` (ω in the rotated frame):
    ``[[1, 0, -sp], [0, cr, sr cp], [0, -sr, cr cp]]``.

    Featherstone §4.5 Eq. 4.8 (S of the yaw-pitch-roll spherical joint, rates
    ``(yaw, pitch, roll)``) is this matrix with the columns reversed.
    """
    cr, sr = np.cos(rpy[0]), np.sin(rpy[0])
    cp, sp = np.cos(rpy[1]), np.sin(rpy[1])
    E = np.zeros((3, 3))
    E[0, 0] = 1.0
    E[0, 2] = -sp
    E[1, 1] = cr
    E[1, 2] = sr * cp
    E[2, 1] = -sr
    E[2, 2] = cr * cp
    return E


@njit(cache=True, nogil=True)
def body_omega_to_rpy_rates_matrix(rpy):
    """``E_b⁻¹`` with ``ṙpy = E_b⁻¹ ω_body``:
    ``[[1, sr sp/cp, cr sp/cp], [0, cr, -sr], [0, sr/cp, cr/cp]]``;
    singular at ``cos pitch = 0``."""
    cr, sr = np.cos(rpy[0]), np.sin(rpy[0])
    cp, sp = np.cos(rpy[1]), np.sin(rpy[1])
    Ei = np.zeros((3, 3))
    Ei[0, 0] = 1.0
    Ei[0, 1] = sr * sp / cp
    Ei[0, 2] = cr * sp / cp
    Ei[1, 1] = cr
    Ei[1, 2] = -sr
    Ei[2, 1] = sr / cp
    Ei[2, 2] = cr / cp
    return Ei


@njit(cache=True, nogil=True)
def xzx_to_rotation(q):
    """``R = Rx(q₁) Rz(q₂) Rx(q₃)`` (active rotations), Sueda §2.4.5 eq. 2.31."""
    c1, s1 = np.cos(q[0]), np.sin(q[0])
    c2, s2 = np.cos(q[1]), np.sin(q[1])
    c3, s3 = np.cos(q[2]), np.sin(q[2])
    R = np.empty((3, 3))
    R[0, 0] = c2
    R[0, 1] = -s2 * c3
    R[0, 2] = s2 * s3
    R[1, 0] = c1 * s2
    R[1, 1] = c1 * c2 * c3 - s1 * s3
    R[1, 2] = -s1 * c3 - c1 * c2 * s3
    R[2, 0] = s1 * s2
    R[2, 1] = c1 * s3 + s1 * c2 * c3
    R[2, 2] = c1 * c3 - s1 * c2 * s3
    return R


@njit(cache=True, nogil=True)
def rotation_to_xzx(R):
    """XZX angles ``q`` with ``xzx_to_rotation(q) = R``; ``q₂`` in ``[0, π]``,
    ``q₁, q₃`` in ``(-π, π]``. At the singularity (``sin q₂ = 0``) ``q₁ = 0``.

    As in :func:`rotation_to_rpy`, ``q₃`` and ``q₂`` are read from
    ``Rx(q₁)ᵀ R = Rz(q₂) Rx(q₃)`` so that ``R`` is reproduced to round-off
    near the singularity.
    """
    s2 = np.sqrt(R[1, 0] * R[1, 0] + R[2, 0] * R[2, 0])
    if s2 > 0.0:
        q1 = np.arctan2(R[2, 0], R[1, 0])
    else:
        q1 = 0.0
    c1, s1 = np.cos(q1), np.sin(q1)
    m10 = c1 * R[1, 0] + s1 * R[2, 0]  # = sin q2
    m21 = -s1 * R[1, 1] + c1 * R[2, 1]  # = sin q3
    m22 = -s1 * R[1, 2] + c1 * R[2, 2]  # = cos q3
    out = np.empty(3)
    out[0] = q1
    out[1] = np.arctan2(m10, R[0, 0])
    out[2] = np.arctan2(m21, m22)
    return out


@njit(cache=True, nogil=True)
def xzx_body_rate_matrix(q):
    """``S(q)`` (3x3) with body-frame ``ω = S(q) q̇`` for XZX angles, i.e. the
    angular rows of Sueda §2.4.5's joint matrix (the linear rows are zero):
    columns ``(c2, -c3 s2, s2 s3)``, ``(0, s3, c3)``, ``(1, 0, 0)``."""
    c2, s2 = np.cos(q[1]), np.sin(q[1])
    c3, s3 = np.cos(q[2]), np.sin(q[2])
    S = np.zeros((3, 3))
    S[0, 0] = c2
    S[1, 0] = -c3 * s2
    S[2, 0] = s2 * s3
    S[1, 1] = s3
    S[2, 1] = c3
    S[0, 2] = 1.0
    return S


@njit(cache=True, nogil=True)
def xzx_body_rate_matrix_dot(q, qd):
    """``Ṡ(q, q̇)``, the time derivative of :func:`xzx_body_rate_matrix`
    (Sueda §2.4.5): columns ``(-s2 q̇₂, s3 s2 q̇₃ - c3 c2 q̇₂, c2 s3 q̇₂ + s2 c3 q̇₃)``,
    ``(0, c3 q̇₃, -s3 q̇₃)``, ``0``."""
    c2, s2 = np.cos(q[1]), np.sin(q[1])
    c3, s3 = np.cos(q[2]), np.sin(q[2])
    S = np.zeros((3, 3))
    S[0, 0] = -s2 * qd[1]
    S[1, 0] = s3 * s2 * qd[2] - c3 * c2 * qd[1]
    S[2, 0] = c2 * s3 * qd[1] + s2 * c3 * qd[2]
    S[1, 1] = c3 * qd[2]
    S[2, 1] = -s3 * qd[2]
    return S
