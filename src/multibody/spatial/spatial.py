"""Featherstone's spatial vector algebra (Ch. 2 and App. A), angular first.

Motion vectors are ``m = [ω; v_O]``, force vectors ``f = [n_O; f]``
(Featherstone §2.2-2.3, notes/seed-002-part1.md P1).

Transforms. ``ᴮX_A`` maps motion vectors from A coordinates to B coordinates
(P2). Featherstone writes it as ``rot(E) xlt(r)`` with ``E = ᴮE_A`` the A→B
*coordinate* rotation and ``r`` the position of B's origin in A coordinates.
For a pose ``(R, p)`` of frame B in frame A (URDF style: ``x_A = R x_B + p``)
this is ``E = Rᵀ``, ``r = p``, which :func:`plucker` builds. ``rx, ry, rz``
(and ``rotx, roty, rotz``) are therefore the *transposes* of the active
rotation matrices, e.g. ``rz(θ) = [[c, s, 0], [-s, c, 0], [0, 0, 1]]``.
Force vectors transform with ``X* = X⁻ᵀ`` (P3). In terms of
:mod:`multibody.spatial.se3`, ``ᴮX_A = se3.Ad_inv(T)`` and
``ᴬX_B = se3.Ad(T)`` for the pose ``T`` of B in A.

Compact transforms. A transform can be kept as the pair ``(E, r)`` (Table
A.3 ``plx``); the ``apply_*``/``inv_apply_*`` kernels and :func:`compose_er`,
:func:`inverse_er` implement Table A.4 without forming 6x6 matrices.

Rigid-body inertia. 6x6 spatial inertia at a frame origin O (Eq. 2.63):
``I = [[Ī_O, ĥ], [ĥᵀ, m 1]]`` with ``h = m c`` (c = centre of mass) and
``Ī_O = Ī_C - m ĉĉ`` the rotational inertia about O. Inertia parameters
(:func:`inertia_to_params`) follow Pinocchio's ``Inertia.toDynamicParameters``.

Everything is Numba-compiled (``@njit(cache=True, nogil=True)``) except
:func:`composite_inertia` (uses ``numpy.linalg.eigh`` and returns a named
tuple), :func:`check_inertia` (raises :class:`~multibody.errors.ModelError`) and
the inertia diagnostics and repairs used by the loaders (:func:`principal_moments`,
:func:`inertia_defects`, :func:`balance_inertia`, :func:`lift_inertia`); these
are model-building helpers, not kernels.
"""
import math
from collections import namedtuple

import numpy as np
from numba import njit

from .._typing import Array, ArrayLike
from ..errors import ModelError
from . import so3
from ._small import mm3, mtm3, mv3, mtv3
from .kernel_algebra import cross_force as _crf6, cross_motion as _crm6


# --------------------------------------------------------------------------
# Coordinate rotations and basic transforms (Featherstone Table 2.2, §2.8)
# --------------------------------------------------------------------------

@njit(cache=True, nogil=True)
def rx(theta):
    """3x3 coordinate rotation ``[[1,0,0],[0,c,s],[0,-s,c]]`` (Featherstone
    Table 2.2): coordinates in A → coordinates in B when B is A rotated by θ
    about x. The transpose of the active rotation matrix."""
    c, s = np.cos(theta), np.sin(theta)
    E = np.zeros((3, 3))
    E[0, 0] = 1.0
    E[1, 1] = c
    E[1, 2] = s
    E[2, 1] = -s
    E[2, 2] = c
    return E


@njit(cache=True, nogil=True)
def ry(theta):
    """3x3 coordinate rotation ``[[c,0,-s],[0,1,0],[s,0,c]]`` (Featherstone Table 2.2)."""
    c, s = np.cos(theta), np.sin(theta)
    E = np.zeros((3, 3))
    E[0, 0] = c
    E[0, 2] = -s
    E[1, 1] = 1.0
    E[2, 0] = s
    E[2, 2] = c
    return E


@njit(cache=True, nogil=True)
def rz(theta):
    """3x3 coordinate rotation ``[[c,s,0],[-s,c,0],[0,0,1]]`` (Featherstone Table 2.2)."""
    c, s = np.cos(theta), np.sin(theta)
    E = np.zeros((3, 3))
    E[0, 0] = c
    E[0, 1] = s
    E[1, 0] = -s
    E[1, 1] = c
    E[2, 2] = 1.0
    return E


@njit(cache=True, nogil=True)
def rot(E):
    """6x6 Plücker rotation ``diag(E, E)`` for the coordinate rotation ``E``
    (Featherstone Eq. 2.24 / Table 2.2). For forces too: ``rot(E)* = rot(E)``."""
    X = np.zeros((6, 6))
    for i in range(3):
        for j in range(3):
            X[i, j] = E[i, j]
            X[3 + i, 3 + j] = E[i, j]
    return X


@njit(cache=True, nogil=True)
def rotx(theta):
    """``rot(rx(θ))``: 6x6 motion transform to a frame rotated by θ about x (Table 2.2)."""
    return rot(rx(theta))


@njit(cache=True, nogil=True)
def roty(theta):
    """``rot(ry(θ))`` (Featherstone Table 2.2)."""
    return rot(ry(theta))


@njit(cache=True, nogil=True)
def rotz(theta):
    """``rot(rz(θ))`` (Featherstone Table 2.2)."""
    return rot(rz(theta))


@njit(cache=True, nogil=True)
def xlt(r):
    """6x6 translation ``[[1, 0], [-r̂, 1]]``: motion transform to a frame whose
    origin is at ``r`` (same axes) (Featherstone Eq. 2.24 / Table 2.2)."""
    X = np.zeros((6, 6))
    for i in range(6):
        X[i, i] = 1.0
    X[3, 1] = r[2]
    X[3, 2] = -r[1]
    X[4, 0] = -r[2]
    X[4, 2] = r[0]
    X[5, 0] = r[1]
    X[5, 1] = -r[0]
    return X


@njit(cache=True, nogil=True)
def er_to_matrix(E, r):
    """6x6 motion transform ``rot(E) xlt(r) = [[E, 0], [-E r̂, E]]`` of the
    compact transform ``(E, r)`` (Featherstone Eq. 2.24)."""
    X = np.zeros((6, 6))
    C = mm3(E, so3.hat(r))
    for i in range(3):
        for j in range(3):
            X[i, j] = E[i, j]
            X[3 + i, 3 + j] = E[i, j]
            X[3 + i, j] = -C[i, j]
    return X


@njit(cache=True, nogil=True)
def plucker(R, p):
    """Motion transform ``ᴮX_A = rot(Rᵀ) xlt(p) = [[Rᵀ, 0], [-Rᵀp̂, Rᵀ]]`` for
    the pose ``(R, p)`` of frame B in frame A (Featherstone Eq. 2.24 with
    ``E = Rᵀ``, notes P2). Maps A coordinates to B coordinates."""
    return er_to_matrix(R.T.copy(), p)


@njit(cache=True, nogil=True)
def plucker_force(R, p):
    """Force transform ``ᴮX_A* = [[Rᵀ, -Rᵀp̂], [0, Rᵀ]] = (ᴮX_A)⁻ᵀ`` for the pose
    ``(R, p)`` of B in A (Featherstone Eq. 2.25)."""
    Rt = R.T.copy()
    C = mm3(Rt, so3.hat(p))
    X = np.zeros((6, 6))
    for i in range(3):
        for j in range(3):
            X[i, j] = Rt[i, j]
            X[3 + i, 3 + j] = Rt[i, j]
            X[i, 3 + j] = -C[i, j]
    return X


@njit(cache=True, nogil=True)
def plucker_inverse(X):
    """Inverse of a motion transform ``X = [[E, 0], [C, E]]``:
    ``[[Eᵀ, 0], [Cᵀ, Eᵀ]]`` (Featherstone Eq. 2.26: ``ᴬX_B`` from ``ᴮX_A``)."""
    Y = np.zeros((6, 6))
    for i in range(3):
        for j in range(3):
            Y[i, j] = X[j, i]
            Y[3 + i, 3 + j] = X[j, i]
            Y[3 + i, j] = X[3 + j, i]
    return Y


@njit(cache=True, nogil=True)
def force_transform(X):
    """Force transform ``X* = X⁻ᵀ = [[E, C], [0, E]]`` of a motion transform
    ``X = [[E, 0], [C, E]]`` (Featherstone §2.8, Eq. 2.24-2.25, P3)."""
    Y = np.zeros((6, 6))
    for i in range(3):
        for j in range(3):
            Y[i, j] = X[i, j]
            Y[3 + i, 3 + j] = X[i, j]
            Y[i, 3 + j] = X[3 + i, j]
    return Y


@njit(cache=True, nogil=True)
def plucker_to_er(X):
    """``(E, r)`` of a motion transform ``X = rot(E) xlt(r)``: ``E = X₁₁``,
    ``r = vee(-Eᵀ X₂₁)``. For ``X = plucker(R, p)`` this is ``(Rᵀ, p)``."""
    E = X[:3, :3].copy()
    C = X[3:, :3]
    rh = mtm3(E, C)
    r = np.empty(3)
    r[0] = -0.5 * (rh[2, 1] - rh[1, 2])
    r[1] = -0.5 * (rh[0, 2] - rh[2, 0])
    r[2] = -0.5 * (rh[1, 0] - rh[0, 1])
    return E, r


# --------------------------------------------------------------------------
# Compact transforms (E, r): Featherstone Tables A.3-A.4
# --------------------------------------------------------------------------

@njit(cache=True, nogil=True)
def apply_motion_into(E, r, m, out):
    """``out = X m = [E ω; E(v - r × ω)]`` for ``X = rot(E) xlt(r)`` (Table A.4)."""
    w0, w1, w2 = m[0], m[1], m[2]
    a0 = m[3] - (r[1] * w2 - r[2] * w1)
    a1 = m[4] - (r[2] * w0 - r[0] * w2)
    a2 = m[5] - (r[0] * w1 - r[1] * w0)
    for i in range(3):
        out[i] = E[i, 0] * w0 + E[i, 1] * w1 + E[i, 2] * w2
        out[3 + i] = E[i, 0] * a0 + E[i, 1] * a1 + E[i, 2] * a2


@njit(cache=True, nogil=True)
def apply_motion(E, r, m):
    """``X m`` for the compact transform ``(E, r)``, see :func:`apply_motion_into`."""
    out = np.empty(6)
    apply_motion_into(E, r, m, out)
    return out


@njit(cache=True, nogil=True)
def inv_apply_motion_into(E, r, m, out):
    """``out = X⁻¹ m = [Eᵀω; Eᵀv + r × Eᵀω]`` (Table A.4)."""
    w = mtv3(E, m[:3])
    v = mtv3(E, m[3:])
    out[0] = w[0]
    out[1] = w[1]
    out[2] = w[2]
    out[3] = v[0] + r[1] * w[2] - r[2] * w[1]
    out[4] = v[1] + r[2] * w[0] - r[0] * w[2]
    out[5] = v[2] + r[0] * w[1] - r[1] * w[0]


@njit(cache=True, nogil=True)
def inv_apply_motion(E, r, m):
    """``X⁻¹ m`` for the compact transform ``(E, r)`` (Table A.4)."""
    out = np.empty(6)
    inv_apply_motion_into(E, r, m, out)
    return out


@njit(cache=True, nogil=True)
def apply_force_into(E, r, f, out):
    """``out = X* f = [E(n - r × f); E f]`` (Table A.4)."""
    f0, f1, f2 = f[3], f[4], f[5]
    a0 = f[0] - (r[1] * f2 - r[2] * f1)
    a1 = f[1] - (r[2] * f0 - r[0] * f2)
    a2 = f[2] - (r[0] * f1 - r[1] * f0)
    for i in range(3):
        out[i] = E[i, 0] * a0 + E[i, 1] * a1 + E[i, 2] * a2
        out[3 + i] = E[i, 0] * f0 + E[i, 1] * f1 + E[i, 2] * f2


@njit(cache=True, nogil=True)
def apply_force(E, r, f):
    """``X* f`` for the compact transform ``(E, r)`` (Table A.4)."""
    out = np.empty(6)
    apply_force_into(E, r, f, out)
    return out


@njit(cache=True, nogil=True)
def inv_apply_force_into(E, r, f, out):
    """``out = Xᵀ f = (X*)⁻¹ f = [Eᵀn + r × Eᵀf; Eᵀf]`` (Table A.4); the
    force step of the backward passes (``^λX_i* f = Xupᵀ f``, notes P3)."""
    n = mtv3(E, f[:3])
    g = mtv3(E, f[3:])
    out[0] = n[0] + r[1] * g[2] - r[2] * g[1]
    out[1] = n[1] + r[2] * g[0] - r[0] * g[2]
    out[2] = n[2] + r[0] * g[1] - r[1] * g[0]
    out[3] = g[0]
    out[4] = g[1]
    out[5] = g[2]


@njit(cache=True, nogil=True)
def inv_apply_force(E, r, f):
    """``Xᵀ f`` for the compact transform ``(E, r)`` (Table A.4)."""
    out = np.empty(6)
    inv_apply_force_into(E, r, f, out)
    return out


@njit(cache=True, nogil=True)
def compose_er(E1, r1, E2, r2):
    """Compact ``X1 X2 = (E1 E2, r2 + E2ᵀ r1)`` (Table A.4)."""
    return mm3(E1, E2), r2 + mtv3(E2, r1)


@njit(cache=True, nogil=True)
def inverse_er(E, r):
    """Compact ``X⁻¹ = (Eᵀ, -E r)`` (Table A.4)."""
    return E.T.copy(), -mv3(E, r)


# --------------------------------------------------------------------------
# Cross products (Featherstone §2.9, Eqs. 2.31-2.34)
# --------------------------------------------------------------------------

@njit(cache=True, nogil=True)
def crm(v):
    """6x6 motion cross-product matrix ``v× = [[ω̂, 0], [v̂_O, ω̂]]`` (Eq. 2.31);
    equals ``se3.ad(v)``."""
    X = np.zeros((6, 6))
    W = so3.hat(v[:3])
    V = so3.hat(v[3:])
    for i in range(3):
        for j in range(3):
            X[i, j] = W[i, j]
            X[3 + i, 3 + j] = W[i, j]
            X[3 + i, j] = V[i, j]
    return X


@njit(cache=True, nogil=True)
def crf(v):
    """6x6 force cross-product matrix ``v×* = [[ω̂, v̂_O], [0, ω̂]] = -crm(v)ᵀ``
    (Eq. 2.32); equals ``se3.ad_dual(v)``."""
    X = np.zeros((6, 6))
    W = so3.hat(v[:3])
    V = so3.hat(v[3:])
    for i in range(3):
        for j in range(3):
            X[i, j] = W[i, j]
            X[3 + i, 3 + j] = W[i, j]
            X[i, 3 + j] = V[i, j]
    return X


@njit(cache=True, nogil=True)
def cross_motion_into(v, m, out):
    """``out = v × m = [ω × m_ω; ω × m_v + v_O × m_ω]`` (Eq. 2.33)."""
    out[0], out[1], out[2], out[3], out[4], out[5] = _crm6(v[0], v[1], v[2], v[3], v[4], v[5],
                                                          m[0], m[1], m[2], m[3], m[4], m[5])


@njit(cache=True, nogil=True)
def cross_motion(v, m):
    """Spatial motion cross product ``v × m`` (Eq. 2.33)."""
    out = np.empty(6)
    cross_motion_into(v, m, out)
    return out


@njit(cache=True, nogil=True)
def cross_force_into(v, f, out):
    """``out = v ×* f = [ω × n + v_O × f; ω × f]`` (Eq. 2.34)."""
    out[0], out[1], out[2], out[3], out[4], out[5] = _crf6(v[0], v[1], v[2], v[3], v[4], v[5],
                                                          f[0], f[1], f[2], f[3], f[4], f[5])


@njit(cache=True, nogil=True)
def cross_force(v, f):
    """Spatial force cross product ``v ×* f`` (Eq. 2.34)."""
    out = np.empty(6)
    cross_force_into(v, f, out)
    return out


# --------------------------------------------------------------------------
# Rigid-body inertia (Featherstone §2.13, Table A.4; Sueda §1.7)
# --------------------------------------------------------------------------

@njit(cache=True, nogil=True)
def mcI(m, c, Ic):
    """6x6 spatial inertia at the frame origin of a body with mass ``m``,
    centre of mass ``c`` and rotational inertia ``Ic`` about the centre of mass
    (Featherstone Eq. 2.63): ``[[Ic + m ĉĉᵀ, m ĉ], [m ĉᵀ, m 1]]``."""
    C = so3.hat(c)
    CCt = mtm3(C, C)  # ĉᵀĉ = ĉĉᵀ = |c|²1 - c cᵀ
    I = np.zeros((6, 6))
    for i in range(3):
        for j in range(3):
            I[i, j] = Ic[i, j] + m * CCt[i, j]
            I[i, 3 + j] = m * C[i, j]
            I[3 + i, j] = m * C[j, i]
        I[3 + i, 3 + i] = m
    return I


@njit(cache=True, nogil=True)
def inertia_to_params(I6):
    """10 inertia parameters ``π = (m, m cx, m cy, m cz, Ixx, Ixy, Iyy, Ixz,
    Iyz, Izz)`` of a 6x6 spatial inertia, with ``I··`` the entries of the
    rotational inertia about the FRAME ORIGIN (``Ī_O``, not the centroid;
    ``Ixy`` is the matrix entry, i.e. minus the product of inertia).

    The order is Pinocchio's ``Inertia.toDynamicParameters`` (lower triangle
    row by row); the model is linear in π (Featherstone ``rbi``, Table A.3)."""
    pi = np.empty(10)
    pi[0] = I6[3, 3]
    # h from the skew block ĥ = I6[:3, 3:]
    pi[1] = 0.5 * (I6[2, 4] - I6[1, 5])
    pi[2] = 0.5 * (I6[0, 5] - I6[2, 3])
    pi[3] = 0.5 * (I6[1, 3] - I6[0, 4])
    pi[4] = I6[0, 0]
    pi[5] = I6[0, 1]
    pi[6] = I6[1, 1]
    pi[7] = I6[0, 2]
    pi[8] = I6[1, 2]
    pi[9] = I6[2, 2]
    return pi


@njit(cache=True, nogil=True)
def params_to_inertia(pi):
    """6x6 spatial inertia ``[[Ī_O, ĥ], [ĥᵀ, m 1]]`` of the parameter vector
    of :func:`inertia_to_params` (Featherstone ``rbi(m, h, Ī)``, Table A.3)."""
    I = np.zeros((6, 6))
    H = so3.hat(pi[1:4])
    Ib = np.empty((3, 3))
    Ib[0, 0] = pi[4]
    Ib[0, 1] = pi[5]
    Ib[1, 0] = pi[5]
    Ib[1, 1] = pi[6]
    Ib[0, 2] = pi[7]
    Ib[2, 0] = pi[7]
    Ib[1, 2] = pi[8]
    Ib[2, 1] = pi[8]
    Ib[2, 2] = pi[9]
    for i in range(3):
        for j in range(3):
            I[i, j] = Ib[i, j]
            I[i, 3 + j] = H[i, j]
            I[3 + i, j] = H[j, i]
        I[3 + i, 3 + i] = pi[0]
    return I


@njit(cache=True, nogil=True)
def transform_inertia(R, p, I6):
    """Spatial inertia given in a child frame C (6x6 at C's origin, C axes)
    re-expressed in the parent frame P, where ``(R, p)`` is the pose of C in P:
    ``ᴾI = ᴾX_C* ᶜI ᶜX_P = Xᵀ ᶜI X`` with ``X = plucker(R, p)`` (Featherstone
    Eq. 2.66, a congruence).

    Computed with Table A.4's compact ``XᵀIX = rbi(m, Eᵀh + m r,
    EᵀĪE - r̂(Eᵀh)^ - (Eᵀh + m r)^ r̂)`` with ``E = Rᵀ, r = p``; ``I6`` must
    have the rigid-body structure ``[[Ī, ĥ], [ĥᵀ, m 1]]``.
    """
    m = I6[3, 3]
    h = np.empty(3)
    h[0] = 0.5 * (I6[2, 4] - I6[1, 5])
    h[1] = 0.5 * (I6[0, 5] - I6[2, 3])
    h[2] = 0.5 * (I6[1, 3] - I6[0, 4])
    Ib = I6[:3, :3]
    Rh = mv3(R, h)
    hp = Rh + m * p
    P = so3.hat(p)
    Ibp = mm3(mm3(R, Ib), R.T.copy()) - mm3(P, so3.hat(Rh)) - mm3(so3.hat(hp), P)
    out = np.zeros((6, 6))
    H = so3.hat(hp)
    for i in range(3):
        for j in range(3):
            # symmetrize: the two rank-one corrections are only symmetric in sum
            out[i, j] = 0.5 * (Ibp[i, j] + Ibp[j, i])
            out[i, 3 + j] = H[i, j]
            out[3 + i, j] = H[j, i]
        out[3 + i, 3 + i] = m
    return out


@njit(cache=True, nogil=True)
def sum_inertias(R, p, I6s):
    """``Σₖ transform_inertia(R[k], p[k], I6s[k])``: the spatial inertia of a
    composite body at a common frame's origin, in its axes, given each part's
    6x6 inertia in its own frame with pose ``(R[k], p[k])`` in the common frame
    (Featherstone §2.13 "inertias add"; Sueda eq. 1.25 ``Σ Adᵀ M_k Ad``).
    Shapes: ``R (n,3,3)``, ``p (n,3)``, ``I6s (n,6,6)``."""
    out = np.zeros((6, 6))
    for k in range(I6s.shape[0]):
        out += transform_inertia(R[k], p[k], I6s[k])
    return out


CompositeInertia = namedtuple(
    "CompositeInertia",
    ["I6", "mass", "com", "Ic", "principal_axes", "principal_moments"],
)
CompositeInertia.__doc__ = """Result of :func:`composite_inertia`.

I6: 6x6 spatial inertia at the common frame's origin, common axes.
mass: total mass. com: centre of mass in the common frame.
Ic: 3x3 rotational inertia about the centre of mass, common axes.
principal_axes: rotation matrix (det +1) whose columns are the principal axes
(in common-frame coordinates), so ``Ic = V diag(moments) Vᵀ``.
principal_moments: ascending principal moments of inertia.
"""


def composite_inertia(R: ArrayLike, p: ArrayLike, I6s: ArrayLike) -> CompositeInertia:
    """Composite rigid body of Sueda §1.7.1 (eq. 1.25-1.26). NOT jitted (model
    building, uses ``numpy.linalg.eigh`` and returns a named tuple).

    Parts: 6x6 spatial inertias ``I6s[k]`` (angular first, about each part
    frame's origin, in its axes) with poses ``(R[k], p[k])`` in a common frame.
    Returns :class:`CompositeInertia`: the summed inertia at the common origin
    (:func:`sum_inertias`), total mass ``m = Σ mₖ``, centre of mass
    ``c = Σ mₖcₖ / m``, the rotational inertia about c, and its principal
    axes as a right-handed rotation (a column of the eigenvector matrix is
    flipped when its determinant is -1, as Sueda prescribes).
    """
    Rs = np.ascontiguousarray(R, dtype=np.float64).reshape(-1, 3, 3)
    ps = np.ascontiguousarray(p, dtype=np.float64).reshape(-1, 3)
    parts = np.ascontiguousarray(I6s, dtype=np.float64).reshape(-1, 6, 6)
    I6 = sum_inertias(Rs, ps, parts)
    m = I6[3, 3]
    h = np.array([I6[2, 4] - I6[1, 5], I6[0, 5] - I6[2, 3], I6[1, 3] - I6[0, 4]]) * 0.5
    c = h / m
    C = so3.hat(c)
    Ic = I6[:3, :3] - m * (C @ C.T)  # parallel axis theorem, Eq. 2.63 inverted
    Ic = 0.5 * (Ic + Ic.T)
    moments, V = np.linalg.eigh(Ic)
    if np.linalg.det(V) < 0.0:
        V[:, 2] = -V[:, 2]
    return CompositeInertia(I6, m, c, Ic, V, moments)


# --------------------------------------------------------------------------
# Inertia of primitives about their centre of mass
# --------------------------------------------------------------------------

@njit(cache=True, nogil=True)
def box_inertia(m, size):
    """3x3 rotational inertia about the centroid of a solid cuboid of mass m and
    side lengths ``size = (lx, ly, lz)`` along x, y, z (Sueda eq. 1.24):
    ``m/12 diag(ly²+lz², lx²+lz², lx²+ly²)``."""
    x2, y2, z2 = size[0] * size[0], size[1] * size[1], size[2] * size[2]
    I = np.zeros((3, 3))
    I[0, 0] = m * (y2 + z2) / 12.0
    I[1, 1] = m * (x2 + z2) / 12.0
    I[2, 2] = m * (x2 + y2) / 12.0
    return I


@njit(cache=True, nogil=True)
def sphere_inertia(m, r):
    """3x3 rotational inertia ``(2/5) m r² 1`` of a solid sphere about its centre."""
    I = np.zeros((3, 3))
    k = 0.4 * m * r * r
    I[0, 0] = k
    I[1, 1] = k
    I[2, 2] = k
    return I


@njit(cache=True, nogil=True)
def cylinder_inertia(m, r, length):
    """3x3 rotational inertia about the centroid of a solid cylinder of radius
    r and length ``length`` along z: ``diag(m(3r²+L²)/12, same, m r²/2)``."""
    I = np.zeros((3, 3))
    t = m * (3.0 * r * r + length * length) / 12.0
    I[0, 0] = t
    I[1, 1] = t
    I[2, 2] = 0.5 * m * r * r
    return I


@njit(cache=True, nogil=True)
def capsule_inertia(m, r, length):
    """3x3 rotational inertia about the centroid of a solid capsule along z: a
    cylinder of radius r and length ``length`` (distance between the
    hemisphere centres) capped by two hemispheres of radius r; uniform density,
    so the mass splits by volume (cylinder πr²L, sphere 4πr³/3).

    Each hemisphere (mass m_h, centroid 3r/8 from its flat face) contributes
    ``(2/5) m_h r²`` about z and ``(83/320) m_h r² + m_h (L/2 + 3r/8)²``
    about x; summed over both: ``m_s (2r²/5 + L²/4 + 3rL/8)``.
    """
    vc = length
    vs = 4.0 * r / 3.0  # volumes divided by π r²
    mc = m * vc / (vc + vs)
    ms = m * vs / (vc + vs)
    I = np.zeros((3, 3))
    t = mc * (3.0 * r * r + length * length) / 12.0 + ms * (
        0.4 * r * r + 0.25 * length * length + 0.375 * r * length)
    I[0, 0] = t
    I[1, 1] = t
    I[2, 2] = 0.5 * mc * r * r + 0.4 * ms * r * r
    return I


#: Largest magnitude accepted for a mass (kg) or an inertia entry (kg m²).
#: No physical system comes near it; beyond it the products and sums the
#: model builder and the dynamics form (parallel-axis terms, composite
#: inertias, squares of inertias) can overflow float64.
INERTIA_LIMIT = 1e100

#: Principal moments at or above ``-INERTIA_RTOL · max |moment|`` count as
#: non-negative (round-off of an inertia tensor written with a few digits).
INERTIA_RTOL = 1e-12


def principal_moments(Ic: ArrayLike) -> tuple[Array, Array]:
    """Principal moments (ascending) and axes (columns of V, ``Ic = V diag(λ) Vᵀ``)
    of the symmetric part of the 3x3 matrix ``Ic`` — or of each matrix of a
    stack ``(..., 3, 3)`` in one call — computed on ``Ic / max|Ic|`` so that
    huge (finite) entries cannot overflow inside LAPACK. NOT jitted. ``Ic``
    must be finite; returns ``(λ, V)`` of shapes ``(..., 3)`` and ``(..., 3, 3)``."""
    I = np.asarray(Ic, dtype=np.float64)
    s = np.max(np.abs(I), axis=(-2, -1), keepdims=True)
    s = np.where(s > 0.0, s, 1.0)
    w, V = np.linalg.eigh(0.5 * (I + np.swapaxes(I, -1, -2)) / s)
    return w * s[..., 0], V


def check_inertia(m: float, Ic: ArrayLike, name: str, physical: bool = True,
                  moments: ArrayLike | None = None) -> tuple[float, Array]:
    """Validate inertia data (NOT jitted; called by the model builder).

    ``m`` must be finite and > 0; ``Ic`` (rotational inertia about the centre
    of mass) a finite, symmetric (to 1e-9 relative), positive-definite 3x3
    matrix whose principal moments satisfy the triangle inequality
    ``I₁ + I₂ >= I₃`` up to a relative tolerance of 1e-9 (so ideal thin plates,
    which sit at equality, pass). Masses and entries above
    :data:`INERTIA_LIMIT` in magnitude are refused (they overflow the
    dynamics). With ``physical=False`` only the representation is checked:
    finite, within the limit, symmetric, mass >= 0 (a caller such as
    ``load_urdf(inertia="warn")`` keeps non-physical values on purpose).
    Raises :class:`~multibody.errors.ModelError` naming ``name`` otherwise.
    Returns ``(float(m), Ic)`` with ``Ic`` as a float64 (3, 3) array, exactly
    symmetrized. ``moments``: the ascending principal moments of ``Ic`` if
    the caller computed them already (one batched :func:`principal_moments`
    call for many bodies costs about what one call costs).
    """
    try:
        mf = float(m)
    except (TypeError, ValueError):
        raise ModelError(f"{name}: mass must be a number, got {m!r}") from None
    if not np.isfinite(mf) or mf < 0.0 or (physical and mf == 0.0):
        raise ModelError(f"{name}: mass must be finite and {'positive' if physical else 'non-negative'}, "
                         f"got {mf!r}")
    if mf > INERTIA_LIMIT:
        raise ModelError(f"{name}: mass {mf!r} kg exceeds {INERTIA_LIMIT:g} kg (it would overflow the dynamics)")
    try:
        I = np.array(Ic, dtype=np.float64)
    except (TypeError, ValueError):
        raise ModelError(f"{name}: inertia must be a 3x3 array of numbers") from None
    if I.shape != (3, 3):
        raise ModelError(f"{name}: inertia must have shape (3, 3), got {I.shape}")
    v = I.ravel().tolist()  # checks in Python scalars: cheaper than numpy reductions on 9 numbers
    if not all(map(math.isfinite, v)):
        raise ModelError(f"{name}: inertia has non-finite entries: {I.tolist()}")
    scale = max(map(abs, v))
    if scale > INERTIA_LIMIT:
        raise ModelError(f"{name}: inertia entries up to {scale:g} kg m² exceed {INERTIA_LIMIT:g} "
                         "(they would overflow the dynamics)")
    if max(abs(v[1] - v[3]), abs(v[2] - v[6]), abs(v[5] - v[7])) > 1e-9 * scale:
        raise ModelError(f"{name}: inertia is not symmetric: {I.tolist()}")
    I = 0.5 * (I + I.T)
    if not physical:
        return mf, I
    lam = principal_moments(I)[0] if moments is None else np.asarray(moments, dtype=np.float64)
    if not lam[0] > 0.0:
        raise ModelError(
            f"{name}: inertia is not positive definite (principal moments {lam.tolist()})")
    if lam[0] + lam[1] < lam[2] - 1e-9 * (lam[0] + lam[1] + lam[2]):
        raise ModelError(
            f"{name}: principal moments {lam.tolist()} violate the triangle inequality "
            f"I1 + I2 >= I3 (no physical mass distribution has them)")
    return mf, I


def inertia_defects(m: float, Ic: ArrayLike) -> list[str]:
    """What makes the inertia ``(m, Ic)`` (mass in kg, 3x3 finite rotational
    inertia about the centre of mass) non-physical, as a list of phrases
    (empty if it is physical). NOT jitted.

    Checked: a mass of 0 with a non-zero ``Ic``; a negative principal
    moment (below ``-INERTIA_RTOL · max |moment|``: the tensor is not positive
    semi-definite); principal moments violating the triangle inequality
    ``I₁ + I₂ >= I₃`` (1e-9 relative tolerance, as :func:`check_inertia`).
    Zero moments alone (a point mass, a thin rod) are physical idealizations
    and not listed.
    """
    out = []
    negative, triangle = _moment_defects(principal_moments(Ic)[0])
    if m == 0.0 and np.any(np.asarray(Ic)):
        out.append("mass 0 with a non-zero rotational inertia")
    if negative:
        out.append("a negative principal moment (not positive semi-definite)")
    if triangle:
        out.append("the triangle inequality I1 + I2 >= I3 is violated")
    return out


def _moment_defects(lam):
    """(a principal moment is negative beyond round-off, the triangle
    inequality fails) for the ascending principal moments ``lam``."""
    negative = lam[0] < -INERTIA_RTOL * float(np.max(np.abs(lam)))
    return negative, lam[0] + lam[1] < lam[2] - 1e-9 * float(np.sum(np.abs(lam)))


def balance_inertia(Ic: ArrayLike) -> Array:
    """MuJoCo's ``balanceinertia`` repair of a rotational inertia (NOT jitted).

    MuJoCo's compiler (``<compiler balanceinertia="true">``) replaces the
    three principal moments of an inertia that violates ``I₁ + I₂ >= I₃``
    by their mean (a full inertia is first diagonalized), which makes the
    inertia isotropic and keeps its trace. Here the same is done when the
    triangle inequality fails or a principal moment is negative (beyond
    round-off, see :func:`inertia_defects`); if the mean is not positive the
    result is zero. Any other ``Ic`` is returned unchanged (symmetrized).
    Returns the 3x3 repaired inertia (kg m², about the centre of mass).
    """
    I = np.asarray(Ic, dtype=np.float64)
    I = 0.5 * (I + I.T)
    lam = principal_moments(I)[0]
    if not any(_moment_defects(lam)):
        return I
    mean = float(np.sum(lam)) / 3.0
    return max(mean, 0.0) * np.eye(3)


def lift_inertia(m: float, Ic: ArrayLike, rfloor: float = 1e-6,
                 mfloor: float = 1e-6) -> tuple[Array, Array]:
    """The smallest-norm repair making a rotational inertia positive definite
    (NOT jitted): principal moments below ``floor = max(rfloor · λ_max,
    mfloor · m)`` are raised to ``floor`` along their principal axes; the
    others and the axes are unchanged (the added tensor is positive
    semi-definite and carries no mass). ``mfloor · m`` (kg m²; ``mfloor`` in m²,
    the default is a radius of gyration of 1 mm) gives a scale to a point mass
    whose moments are all 0. Returns ``(Ic_new, dI)`` with ``Ic_new = Ic + dI``.
    """
    I = np.asarray(Ic, dtype=np.float64)
    I = 0.5 * (I + I.T)
    lam, V = principal_moments(I)
    floor = max(rfloor * float(lam[2]), mfloor * float(m))
    if floor <= 0.0:
        return I, np.zeros((3, 3))
    add = np.maximum(floor - lam, 0.0)
    dI = (V * add) @ V.T
    dI = 0.5 * (dI + dI.T)
    return I + dI, dI


# --------------------------------------------------------------------------
# XtoV (Featherstone App. A)
# --------------------------------------------------------------------------

@njit(cache=True, nogil=True)
def xtov(X):
    """Motion vector of a small-angle motion transform (Featherstone App. A,
    ``XtoV``): ``v = ½[X23-X32, X31-X13, X12-X21, X53-X62, X61-X43, X42-X51]``
    (1-based). ``v`` is invariant (``X v = v``), ``xtov(xlt(r)) = [0; r]``, and
    for ``X = ᴮX_A`` it approximates the displacement of B relative to A (used
    for loop-closure position errors, §8.3)."""
    v = np.empty(6)
    v[0] = 0.5 * (X[1, 2] - X[2, 1])
    v[1] = 0.5 * (X[2, 0] - X[0, 2])
    v[2] = 0.5 * (X[0, 1] - X[1, 0])
    v[3] = 0.5 * (X[4, 2] - X[5, 1])
    v[4] = 0.5 * (X[5, 0] - X[3, 2])
    v[5] = 0.5 * (X[3, 1] - X[4, 0])
    return v


@njit(cache=True, nogil=True)
def xtov_pose(R, p):
    """``xtov(plucker(R, p))`` for the pose ``(R, p)`` of B in A: about
    ``[ω; p]`` with ``R ≈ exp(ω)`` for small displacements."""
    return xtov(plucker(R, p))
