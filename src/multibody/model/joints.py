"""The joint catalog: joint type codes, the per-joint parameter layout, and
the joint kernels (``jcalc`` in Featherstone §4.4).

A joint connects a parent body to its child. Its *joint frame* sits on the
parent at the constant tree placement ``(R_T, p_T)``; the child frame
coincides with the joint frame at the neutral configuration and moves by
the joint transform ``(R_J(q), p_J(q))``. So the child's pose in its parent
is ``(R_T R_J, p_T + R_T p_J)`` (notes P4: the tree transform comes first).

Velocity variables ``v`` of a joint are expressed in the **child frame**;
the motion subspace ``S`` (6 x nv, angular rows first) maps them to the
child's spatial velocity relative to the parent, in child coordinates:
``v_J = S v``. ``c_J = Ṡ v`` is the velocity-product term (Featherstone
Eq. 3.41). Joints whose ``nq != nv`` (planar, spherical, free) have their own
integrate / difference rules on the manifold.

Catalog (Featherstone Table 4.1 and §4.5, with notes P8/P9):

=============  ====  ==  ==============================================
type           nq    nv  q, v
=============  ====  ==  ==============================================
fixed          0     0
revolute       1     1   angle about ``axis``
prismatic      1     1   displacement along ``axis``
helical        1     1   angle about ``axis``; translation ``pitch·q``
cylindrical    2     2   (angle about, displacement along ``axis``)
planar         3     3   q = (x, y, θ) in the plane ⟂ ``axis``
                         (in-plane axes ``axis2``, ``axis3``);
                         v = (ω, vx, vy) in the child frame
spherical      4     3   q = unit quaternion (w,x,y,z); v = ω (child)
free           7     6   q = (p, quaternion); v = (ω, v) in the child
                         frame (DESIGN.md)
translational  3     3   q = p; v = ṗ (child axes = parent axes)
universal      2     2   R_J = exp(axis q₁) exp(axis2 q₂) (Sueda §2.4.6)
exp_spherical  3     3   R_J = exp([r]) (Sueda §2.4.8); v = ṙ
free3d         6     6   (R(r), R(r) t) (Sueda §2.4.11); v = (ṙ, ṫ)
euler          3     3   R_J = exp(axis q₁) exp(axis2 q₂) exp(axis3 q₃),
                         XZX by default (Sueda §2.4.5)
free2d         3     3   translation (x, y) then rotation θ about z
                         (Sueda §2.4.10); v = (ẋ, ẏ, θ̇)
spline         1     1   cubic B-spline curve of control frames
                         (Sueda §2.4.12)
spline_surface 2     2   bicubic surface (Sueda §2.4.13)
composite      n     n   product of 1-DoF parts (Sueda §2.4.9)
=============  ====  ==  ==============================================

The joints from ``exp_spherical`` on are Sueda's library (notes F): their
``v = q̇`` and ``S(q)`` varies in child coordinates; their transforms, S and
Ṡ come from :mod:`multibody.model.sueda_joints` through :func:`_sueda`,
an out-of-line call (the kernels inline the dispatch of this module, and
inlining those recursions into every kernel would multiply compile time),
with q and v passed through ``any_layout``: one compiled specialization
for every caller, contiguous or not.

Data layout: a model is one float64 table ``tree`` (nbodies x N_COL), one row
per body, whose columns are named below (integers are stored exactly as
floats). Kernels take the whole table and a body index and never slice it:
in Numba every array view costs reference counting, which made the per-body
loop 8x slower when rows were passed as views.
"""
import numpy as np
from numba import njit

from ..spatial import quaternion as quat
from ..spatial import so3
from ..spatial.quaternion import rotation_entries
from ..spatial.so3 import axis_angle_entries
from .._compiled import any_layout
from .sueda_joints import exponential_joint, product_of_exponentials

# joint type codes
FIXED = 0
REVOLUTE = 1
PRISMATIC = 2
HELICAL = 3
CYLINDRICAL = 4
PLANAR = 5
SPHERICAL = 6
FREE = 7
TRANSLATIONAL = 8
UNIVERSAL = 9
EXP_SPHERICAL = 10
FREE3D = 11
EULER = 12
FREE2D = 13
SPLINE = 14
SPLINE_SURFACE = 15
COMPOSITE = 16
# joint codes from here on have a motion subspace that varies in child coordinates (c_J = Ṡ v ≠ 0)
VARYING_SUBSPACE = UNIVERSAL

JOINT_TYPES = {
    "fixed": FIXED, "revolute": REVOLUTE, "prismatic": PRISMATIC, "helical": HELICAL,
    "cylindrical": CYLINDRICAL, "planar": PLANAR, "spherical": SPHERICAL, "free": FREE,
    "translational": TRANSLATIONAL, "universal": UNIVERSAL, "exp_spherical": EXP_SPHERICAL, "free3d": FREE3D,
    "euler": EULER, "free2d": FREE2D, "spline": SPLINE, "spline_surface": SPLINE_SURFACE, "composite": COMPOSITE,
}
JOINT_TYPE_NAMES = {v: k for k, v in JOINT_TYPES.items()}
#                  fixed rev pri hel cyl pla sph fre tra uni exs f3d eul f2d spl sur composite (-1: per joint)
NQ = np.array([0, 1, 1, 1, 2, 3, 4, 7, 3, 2, 3, 6, 3, 3, 1, 2, -1], dtype=np.int64)
NV = NQ.copy()
NV[SPHERICAL], NV[FREE] = 3, 6

# columns of the model table ``tree`` (one row per body)
C_TYPE = 0     # joint type code
C_PARENT = 1   # parent body index (-1 for the world)
C_Q = 2        # first index in q
C_V = 3        # first index in v
C_NQ = 4
C_NV = 5
C_R = 6        # 9: tree placement rotation R_T (row major): joint frame in parent frame
C_P = 15       # 3: tree placement translation p_T
C_RQ = 18      # 9: revolute joints: Q = R_T (1 − u uᵀ) (row major; see revolute_factors)
C_RA = 27      # 9: revolute joints: A = R_T [u]×
C_AX1 = 36     # 3: joint axis (unit)
C_AX2 = 39     # 3: second axis (universal) / first in-plane axis (planar)
C_AX3 = 42     # 3: second in-plane axis (planar)
C_PITCH = 45   # helical pitch (m/rad)
C_MASS = 46    # body mass m
C_H = 47       # 3: first moment h = m c (body frame)
C_I = 50       # 9: rotational inertia about the body origin, Ī = I_C - m [c][c] (Featherstone rbi)
C_ARMATURE = 59  # 6: rotor inertia (armature) of each of the joint's coordinates
N_COL = 65
# Row 0 (the world) has no joint; it holds model-wide data:
C_GRAVITY = C_AX1  # 3: gravity acceleration (world frame), in row 0
C_QUATERNIONS = C_PITCH  # number of quaternion joints (spherical, free), in row 0
# Models with product-of-exponentials joints (euler, free2d, spline, spline_surface, composite) have
# more columns: from C_EXTRA on, the joint's factors (layout in sueda_joints)
C_EXTRA = N_COL


@njit(cache=True, nogil=True)
def _sueda(tree, i, q, v, rate):
    """``(R_J, p_J, S, Ṡ)`` of body i's joint from Sueda's library (Ṡ zero
    unless ``rate``; ``v`` is read only then)."""
    jt = int(tree[i, C_TYPE])
    iq = int(tree[i, C_Q])
    iv = int(tree[i, C_V])
    if jt == EXP_SPHERICAL or jt == FREE3D:
        return exponential_joint(jt == FREE3D, q, iq, v, iv, rate)
    return product_of_exponentials(tree, i, C_EXTRA, q, iq, v, iv, int(tree[i, C_NQ]), rate)


@njit(cache=True, nogil=True)
def _sueda_transform(tree, i, q):
    R, p, _, _ = _sueda(tree, i, q, q, False)
    return (R[0, 0], R[0, 1], R[0, 2], R[1, 0], R[1, 1], R[1, 2], R[2, 0], R[2, 1], R[2, 2], p[0], p[1], p[2])


@njit(cache=True, nogil=True)
def _sueda_subspace(tree, i, q):
    return _sueda(tree, i, q, q, False)[2]


@njit(cache=True, nogil=True)
def _sueda_column(tree, i, q, k):
    S = _sueda(tree, i, q, q, False)[2]
    return S[0, k], S[1, k], S[2, k], S[3, k], S[4, k], S[5, k]


@njit(cache=True, nogil=True)
def _sueda_bias(tree, i, q, v):
    Sd = _sueda(tree, i, q, v, True)[3]
    iv = int(tree[i, C_V])
    c = np.zeros(6)
    for k in range(Sd.shape[1]):
        for r in range(6):
            c[r] += Sd[r, k] * v[iv + k]
    return c[0], c[1], c[2], c[3], c[4], c[5]


@njit(cache=True, nogil=True, inline="always")
def _axis(tree, i, col):
    return tree[i, col], tree[i, col + 1], tree[i, col + 2]


@njit(cache=True, nogil=True, inline="always")
def joint_transform(jt, tree, i, q, iq):
    """Joint transform of body ``i``: the child's pose in the joint frame,
    returned as 12 scalars (R_J row major, then p_J)."""
    if jt == REVOLUTE:
        x, y, z = _axis(tree, i, C_AX1)
        R = axis_angle_entries(x, y, z, q[iq])
        return R + (0.0, 0.0, 0.0)
    if jt == PRISMATIC:
        d = q[iq]
        return (1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0,
                tree[i, C_AX1] * d, tree[i, C_AX1 + 1] * d, tree[i, C_AX1 + 2] * d)
    if jt == HELICAL:
        x, y, z = _axis(tree, i, C_AX1)
        R = axis_angle_entries(x, y, z, q[iq])
        d = tree[i, C_PITCH] * q[iq]
        return R + (x * d, y * d, z * d)
    if jt == CYLINDRICAL:
        x, y, z = _axis(tree, i, C_AX1)
        R = axis_angle_entries(x, y, z, q[iq])
        d = q[iq + 1]
        return R + (x * d, y * d, z * d)
    if jt == PLANAR:
        x, y, z = _axis(tree, i, C_AX1)
        R = axis_angle_entries(x, y, z, q[iq + 2])
        a, b = q[iq], q[iq + 1]
        return R + (tree[i, C_AX2] * a + tree[i, C_AX3] * b,
                    tree[i, C_AX2 + 1] * a + tree[i, C_AX3 + 1] * b,
                    tree[i, C_AX2 + 2] * a + tree[i, C_AX3 + 2] * b)
    if jt == SPHERICAL:
        return rotation_entries(q[iq], q[iq + 1], q[iq + 2], q[iq + 3]) + (0.0, 0.0, 0.0)
    if jt == FREE:
        return (rotation_entries(q[iq + 3], q[iq + 4], q[iq + 5], q[iq + 6])
                + (q[iq], q[iq + 1], q[iq + 2]))
    if jt == TRANSLATIONAL:
        return (1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, q[iq], q[iq + 1], q[iq + 2])
    if jt == UNIVERSAL:
        x, y, z = _axis(tree, i, C_AX1)
        a00, a01, a02, a10, a11, a12, a20, a21, a22 = axis_angle_entries(x, y, z, q[iq])
        x, y, z = _axis(tree, i, C_AX2)
        b00, b01, b02, b10, b11, b12, b20, b21, b22 = axis_angle_entries(x, y, z, q[iq + 1])
        return (a00 * b00 + a01 * b10 + a02 * b20, a00 * b01 + a01 * b11 + a02 * b21,
                a00 * b02 + a01 * b12 + a02 * b22,
                a10 * b00 + a11 * b10 + a12 * b20, a10 * b01 + a11 * b11 + a12 * b21,
                a10 * b02 + a11 * b12 + a12 * b22,
                a20 * b00 + a21 * b10 + a22 * b20, a20 * b01 + a21 * b11 + a22 * b21,
                a20 * b02 + a21 * b12 + a22 * b22, 0.0, 0.0, 0.0)
    if jt >= EXP_SPHERICAL:
        return _sueda_transform(tree, i, any_layout(q))
    return (1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0)


def revolute_factors(R_T, u):
    """``(Q, A)`` with ``R_T R_J(θ) = R_T + (cos θ − 1) Q + sin θ A`` for a
    revolute joint about the unit axis ``u`` (Rodrigues,
    ``R_J = 1 + (cos θ − 1)(1 − u uᵀ) + sin θ [u]×``): ``Q = R_T (1 − u uᵀ)``,
    ``A = R_T [u]×``. Precomputed per body (columns C_RQ, C_RA, next to
    R_T and p_T so a revolute body's row is read from few cache lines) so
    the kernels form a revolute joint's pose in its parent with 18
    multiplications instead of Rodrigues' formula and a 3x3 product (45)."""
    u = np.asarray(u, dtype=float)
    A = R_T @ np.array([[0.0, -u[2], u[1]], [u[2], 0.0, -u[0]], [-u[1], u[0], 0.0]])
    return R_T - R_T @ np.outer(u, u), A


@njit(cache=True, nogil=True, inline="always")
def set_revolute_pose(tree, i, angle, poses):
    """:func:`set_local_pose` for a revolute joint at ``angle``, from the
    factors of :func:`revolute_factors` (the translation is ``p_T``)."""
    c, s = np.cos(angle) - 1.0, np.sin(angle)
    for r in range(3):
        for k in range(3):
            j = 3 * r + k
            poses[1, i, r, k] = tree[i, C_R + j] + c * tree[i, C_RQ + j] + s * tree[i, C_RA + j]
        poses[1, i, r, 3] = tree[i, C_P + r]


@njit(cache=True, nogil=True, inline="always")
def set_revolute_poses(tree, i, angle, poses):
    """:func:`set_revolute_pose`, then the world pose ``oMi = oMλ liMi`` from
    the local pose held in registers (reading it back from ``poses`` costs
    reloads: the compiler cannot prove the two blocks apart)."""
    c, s = np.cos(angle) - 1.0, np.sin(angle)
    l00 = tree[i, C_R] + c * tree[i, C_RQ] + s * tree[i, C_RA]
    l01 = tree[i, C_R + 1] + c * tree[i, C_RQ + 1] + s * tree[i, C_RA + 1]
    l02 = tree[i, C_R + 2] + c * tree[i, C_RQ + 2] + s * tree[i, C_RA + 2]
    l10 = tree[i, C_R + 3] + c * tree[i, C_RQ + 3] + s * tree[i, C_RA + 3]
    l11 = tree[i, C_R + 4] + c * tree[i, C_RQ + 4] + s * tree[i, C_RA + 4]
    l12 = tree[i, C_R + 5] + c * tree[i, C_RQ + 5] + s * tree[i, C_RA + 5]
    l20 = tree[i, C_R + 6] + c * tree[i, C_RQ + 6] + s * tree[i, C_RA + 6]
    l21 = tree[i, C_R + 7] + c * tree[i, C_RQ + 7] + s * tree[i, C_RA + 7]
    l22 = tree[i, C_R + 8] + c * tree[i, C_RQ + 8] + s * tree[i, C_RA + 8]
    t0, t1, t2 = tree[i, C_P], tree[i, C_P + 1], tree[i, C_P + 2]
    poses[1, i, 0, 0], poses[1, i, 0, 1], poses[1, i, 0, 2], poses[1, i, 0, 3] = l00, l01, l02, t0
    poses[1, i, 1, 0], poses[1, i, 1, 1], poses[1, i, 1, 2], poses[1, i, 1, 3] = l10, l11, l12, t1
    poses[1, i, 2, 0], poses[1, i, 2, 1], poses[1, i, 2, 2], poses[1, i, 2, 3] = l20, l21, l22, t2
    p = int(tree[i, C_PARENT])
    if p == 0:  # a child of the world: oMi = liMi (Pinocchio skips this product too)
        for r in range(3):
            for k in range(4):
                poses[0, i, r, k] = poses[1, i, r, k]
        return
    for r in range(3):
        b0, b1, b2, b3 = poses[0, p, r, 0], poses[0, p, r, 1], poses[0, p, r, 2], poses[0, p, r, 3]
        poses[0, i, r, 0] = b0 * l00 + b1 * l10 + b2 * l20
        poses[0, i, r, 1] = b0 * l01 + b1 * l11 + b2 * l21
        poses[0, i, r, 2] = b0 * l02 + b1 * l12 + b2 * l22
        poses[0, i, r, 3] = b0 * t0 + b1 * t1 + b2 * t2 + b3


@njit(cache=True, nogil=True, inline="always")
def set_local_pose(tree, i, J, poses):
    """Write the pose of body ``i`` in its parent, ``(R_T R_J, p_T + R_T p_J)``
    (Featherstone ``ⁱX_λ = X_J X_T``, notes P4), to the top 3x4 block of
    ``poses[1, i]``, given the joint transform ``J`` = :func:`joint_transform`.

    The caller calls :func:`joint_transform` itself: Numba does not inline
    an ``inline="always"`` function called from another inlined one, and an
    out-of-line joint_transform made the per-body loop 4x slower."""
    J00, J01, J02, J10, J11, J12, J20, J21, J22, x, y, z = J
    for r in range(3):
        a0, a1, a2 = tree[i, C_R + 3 * r], tree[i, C_R + 3 * r + 1], tree[i, C_R + 3 * r + 2]
        poses[1, i, r, 0] = a0 * J00 + a1 * J10 + a2 * J20
        poses[1, i, r, 1] = a0 * J01 + a1 * J11 + a2 * J21
        poses[1, i, r, 2] = a0 * J02 + a1 * J12 + a2 * J22
        poses[1, i, r, 3] = a0 * x + a1 * y + a2 * z + tree[i, C_P + r]


@njit(cache=True, nogil=True, inline="always")
def motion_subspace_into(tree, i, q, S, iv):
    """Columns ``iv .. iv+nv-1`` of ``S`` (6 x nv) receive the motion subspace
    of body ``i``'s joint in child coordinates, angular rows first
    (Featherstone Table 4.1)."""
    jt = int(tree[i, C_TYPE])
    if jt == REVOLUTE or jt == HELICAL:
        h = tree[i, C_PITCH] if jt == HELICAL else 0.0
        for r in range(3):
            S[r, iv] = tree[i, C_AX1 + r]
            S[3 + r, iv] = h * tree[i, C_AX1 + r]
    elif jt == PRISMATIC:
        for r in range(3):
            S[r, iv] = 0.0
            S[3 + r, iv] = tree[i, C_AX1 + r]
    elif jt == CYLINDRICAL:
        for r in range(3):
            S[r, iv] = tree[i, C_AX1 + r]
            S[3 + r, iv] = 0.0
            S[r, iv + 1] = 0.0
            S[3 + r, iv + 1] = tree[i, C_AX1 + r]
    elif jt == PLANAR:
        for r in range(3):
            S[r, iv] = tree[i, C_AX1 + r]
            S[3 + r, iv] = 0.0
            S[r, iv + 1] = 0.0
            S[3 + r, iv + 1] = tree[i, C_AX2 + r]
            S[r, iv + 2] = 0.0
            S[3 + r, iv + 2] = tree[i, C_AX3 + r]
    elif jt == SPHERICAL or jt == FREE or jt == TRANSLATIONAL:
        n = 6 if jt == FREE else 3
        off = 3 if jt == TRANSLATIONAL else 0
        for c in range(n):
            for r in range(6):
                S[r, iv + c] = 1.0 if r == c + off else 0.0
    elif jt == UNIVERSAL:
        # child-frame image of axis 1: exp(axis2 q2)ᵀ axis1 (Sueda §2.4.6)
        s0, s1, s2 = _universal_axis1(tree, i, q[int(tree[i, C_Q]) + 1])
        S[0, iv], S[1, iv], S[2, iv] = s0, s1, s2
        for r in range(3):
            S[3 + r, iv] = 0.0
            S[r, iv + 1] = tree[i, C_AX2 + r]
            S[3 + r, iv + 1] = 0.0
    elif jt >= EXP_SPHERICAL:
        Sj = _sueda_subspace(tree, i, any_layout(q))
        for c in range(Sj.shape[1]):
            for r in range(6):
                S[r, iv + c] = Sj[r, c]


@njit(cache=True, nogil=True, inline="always")
def _universal_axis1(tree, i, q2):
    x, y, z = _axis(tree, i, C_AX2)
    R = axis_angle_entries(x, y, z, q2)
    a0, a1, a2 = _axis(tree, i, C_AX1)
    return (R[0] * a0 + R[3] * a1 + R[6] * a2, R[1] * a0 + R[4] * a1 + R[7] * a2,
            R[2] * a0 + R[5] * a1 + R[8] * a2)


@njit(cache=True, nogil=True, inline="always")
def subspace_column(tree, i, q, k):
    """Column ``k`` of body ``i``'s motion subspace S (child coordinates,
    angular first) as 6 scalars; the scalar twin of
    :func:`motion_subspace_into` for kernels that use one column at a time."""
    jt = int(tree[i, C_TYPE])
    if jt == REVOLUTE:
        return (tree[i, C_AX1], tree[i, C_AX1 + 1], tree[i, C_AX1 + 2], 0.0, 0.0, 0.0)
    if jt == PRISMATIC or (jt == CYLINDRICAL and k == 1):
        return (0.0, 0.0, 0.0, tree[i, C_AX1], tree[i, C_AX1 + 1], tree[i, C_AX1 + 2])
    if jt == HELICAL:
        h = tree[i, C_PITCH]
        return (tree[i, C_AX1], tree[i, C_AX1 + 1], tree[i, C_AX1 + 2],
                h * tree[i, C_AX1], h * tree[i, C_AX1 + 1], h * tree[i, C_AX1 + 2])
    if jt == CYLINDRICAL or (jt == PLANAR and k == 0):
        return (tree[i, C_AX1], tree[i, C_AX1 + 1], tree[i, C_AX1 + 2], 0.0, 0.0, 0.0)
    if jt == PLANAR:
        c = C_AX2 if k == 1 else C_AX3
        return (0.0, 0.0, 0.0, tree[i, c], tree[i, c + 1], tree[i, c + 2])
    if jt == SPHERICAL or jt == FREE or jt == TRANSLATIONAL:
        e = k + 3 if jt == TRANSLATIONAL else k
        return (1.0 if e == 0 else 0.0, 1.0 if e == 1 else 0.0, 1.0 if e == 2 else 0.0,
                1.0 if e == 3 else 0.0, 1.0 if e == 4 else 0.0, 1.0 if e == 5 else 0.0)
    if jt == UNIVERSAL:
        if k == 0:
            s0, s1, s2 = _universal_axis1(tree, i, q[int(tree[i, C_Q]) + 1])
            return (s0, s1, s2, 0.0, 0.0, 0.0)
        return (tree[i, C_AX2], tree[i, C_AX2 + 1], tree[i, C_AX2 + 2], 0.0, 0.0, 0.0)
    if jt >= EXP_SPHERICAL:
        return _sueda_column(tree, i, any_layout(q), k)
    return (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)


@njit(cache=True, nogil=True)
def subspace_rate_into(tree, i, q, v, Sd, iv):
    """Columns ``iv .. iv+nv-1`` of ``Sd`` (6 x nv) receive ``Ṡ``, the time
    derivative of body ``i``'s motion subspace (child coordinates, angular
    first) when the joint moves with velocity ``v`` (Sueda §2.4: each
    joint's Ṡ(q, q̇); ``Ṡ v`` is :func:`joint_bias`). Zero for the joints
    whose S is constant in child coordinates; for the universal joint the
    first column ``exp(axis2 q₂)ᵀ axis1`` turns at ``−q̇₂ axis2 ×``."""
    jt = int(tree[i, C_TYPE])
    for c in range(int(tree[i, C_NV])):
        for r in range(6):
            Sd[r, iv + c] = 0.0
    if jt == UNIVERSAL:
        s0, s1, s2 = _universal_axis1(tree, i, q[int(tree[i, C_Q]) + 1])
        a0, a1, a2 = _axis(tree, i, C_AX2)
        k = -v[int(tree[i, C_V]) + 1]
        Sd[0, iv], Sd[1, iv], Sd[2, iv] = k * (a1 * s2 - a2 * s1), k * (a2 * s0 - a0 * s2), k * (a0 * s1 - a1 * s0)
    elif jt >= EXP_SPHERICAL:
        Sj = _sueda(tree, i, any_layout(q), any_layout(v), True)[3]
        for c in range(Sj.shape[1]):
            for r in range(6):
                Sd[r, iv + c] = Sj[r, c]


@njit(cache=True, nogil=True, inline="always")
def joint_bias(tree, i, q, v):
    """Velocity-product term ``c_J = Ṡ v`` of body ``i``'s joint (Featherstone
    Eq. 3.41, c_J = S̊ q̇) as 6 scalars. Zero for every joint whose S is
    constant in child coordinates; for the universal joint
    ``c_J = [-v₁ v₂ axis2 × (exp(axis2 q₂)ᵀ axis1); 0]``; Sueda's joints
    form Ṡ v from :func:`_sueda`."""
    jt = int(tree[i, C_TYPE])
    if jt > UNIVERSAL:
        return _sueda_bias(tree, i, any_layout(q), any_layout(v))
    if jt == UNIVERSAL:
        iq = int(tree[i, C_Q])
        iv = int(tree[i, C_V])
        s0, s1, s2 = _universal_axis1(tree, i, q[iq + 1])
        a0, a1, a2 = _axis(tree, i, C_AX2)
        k = -v[iv] * v[iv + 1]
        return (k * (a1 * s2 - a2 * s1), k * (a2 * s0 - a0 * s2), k * (a0 * s1 - a1 * s0), 0.0, 0.0, 0.0)
    return (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)


@njit(cache=True, nogil=True)
def _planar_exp(x, y, th, w, vx, vy, out, iq):
    """SE(2) update: pose (x, y, θ) composed with exp of the body twist
    (ω, vx, vy)·1, written to ``out[iq:iq+3]``."""
    if abs(w) < 1e-8:
        a = 1.0 - w * w / 6.0
        b = 0.5 * w
    else:
        a = np.sin(w) / w
        b = (1.0 - np.cos(w)) / w
    lx = a * vx - b * vy
    ly = b * vx + a * vy
    c = np.cos(th)
    s = np.sin(th)
    out[iq] = x + c * lx - s * ly
    out[iq + 1] = y + s * lx + c * ly
    out[iq + 2] = th + w


@njit(cache=True, nogil=True, inline="always")
def _copy_into(x, out, k):
    """``out[k:k+len(x)] = x``, written out: a slice assignment compiles Numba's
    shape-mismatch error message (2 s of the demo's start-up)."""
    for r in range(x.shape[0]):
        out[k + r] = x[r]


@njit(cache=True, nogil=True)
def qdot_joint(jt, q, iq, v, iv, out, n):
    """``out[iq:iq+nq] = q̇``, the time derivative of the joint's coordinates
    when it moves with velocity ``v`` (Featherstone's qdfn, §4.4): the
    quaternion rate ``½ q ⊗ (0, ω)`` (ArtiSynth §0.2, ω in the child frame),
    ``ṗ = R v`` for the free joint, the rotated in-plane velocity for the
    planar joint (notes P9), ``q̇ = v`` otherwise (the joint's ``n``
    coordinates)."""
    if jt == SPHERICAL or jt == FREE:
        k = iq + (3 if jt == FREE else 0)
        w0, w1, w2 = v[iv], v[iv + 1], v[iv + 2]
        qw, qx, qy, qz = q[k], q[k + 1], q[k + 2], q[k + 3]
        out[k] = 0.5 * (-qx * w0 - qy * w1 - qz * w2)
        out[k + 1] = 0.5 * (qw * w0 + qy * w2 - qz * w1)
        out[k + 2] = 0.5 * (qw * w1 + qz * w0 - qx * w2)
        out[k + 3] = 0.5 * (qw * w2 + qx * w1 - qy * w0)
        if jt == FREE:
            R = rotation_entries(qw, qx, qy, qz)
            for r in range(3):
                out[iq + r] = R[3 * r] * v[iv + 3] + R[3 * r + 1] * v[iv + 4] + R[3 * r + 2] * v[iv + 5]
    elif jt == PLANAR:
        c = np.cos(q[iq + 2])
        s = np.sin(q[iq + 2])
        out[iq] = c * v[iv + 1] - s * v[iv + 2]
        out[iq + 1] = s * v[iv + 1] + c * v[iv + 2]
        out[iq + 2] = v[iv]
    else:
        for r in range(n):
            out[iq + r] = v[iv + r]


@njit(cache=True, nogil=True)
def integrate_joint(jt, q, iq, v, iv, dt, out, n):
    """``out[iq:iq+nq] = q ⊕ v·dt`` on the joint's configuration manifold:
    vector addition, except SE(2) for planar, ``q ⊗ exp(ω dt)`` for
    quaternions and the SE(3) exponential for the free joint (as Pinocchio);
    ``n`` is the joint's number of coordinates."""
    if jt == SPHERICAL:
        w = np.empty(3)
        for r in range(3):
            w[r] = v[iv + r] * dt
        _copy_into(quat.integrate_body(q[iq:iq + 4], w), out, iq)
    elif jt == FREE:
        xi = np.empty(3)
        for r in range(3):
            xi[r] = v[iv + r] * dt
        R = np.empty((3, 3))
        quat.to_rotation_into(q[iq + 3:iq + 7], R)
        V = so3.left_jacobian(xi)
        for r in range(3):
            acc = 0.0
            for k in range(3):
                lin_k = V[k, 0] * v[iv + 3] + V[k, 1] * v[iv + 4] + V[k, 2] * v[iv + 5]
                acc += R[r, k] * lin_k * dt
            out[iq + r] = q[iq + r] + acc
        _copy_into(quat.integrate_body(q[iq + 3:iq + 7], xi), out, iq + 3)
    elif jt == PLANAR:
        _planar_exp(q[iq], q[iq + 1], q[iq + 2], v[iv] * dt, v[iv + 1] * dt, v[iv + 2] * dt, out, iq)
    else:
        for r in range(n):
            out[iq + r] = q[iq + r] + v[iv + r] * dt


@njit(cache=True, nogil=True)
def difference_joint(jt, q0, q1, iq, iv, out, n):
    """``out[iv:iv+nv] = q1 ⊖ q0``: the velocity that :func:`integrate_joint`
    maps from ``q0`` to ``q1`` in unit time (SE(3)/SE(2) logarithms)."""
    if jt == SPHERICAL:
        _copy_into(quat.difference_body(q0[iq:iq + 4], q1[iq:iq + 4]), out, iv)
    elif jt == FREE:
        w = quat.difference_body(q0[iq + 3:iq + 7], q1[iq + 3:iq + 7])
        R0 = quat.to_rotation(q0[iq + 3:iq + 7])
        dp = R0.T @ (q1[iq:iq + 3] - q0[iq:iq + 3])
        out[iv:iv + 3] = w
        out[iv + 3:iv + 6] = so3.left_jacobian_inv(w) @ dp
    elif jt == PLANAR:
        w = q1[iq + 2] - q0[iq + 2]
        c = np.cos(q0[iq + 2])
        s = np.sin(q0[iq + 2])
        dx = q1[iq] - q0[iq]
        dy = q1[iq + 1] - q0[iq + 1]
        lx = c * dx + s * dy
        ly = -s * dx + c * dy
        if abs(w) < 1e-8:
            a = 1.0 - w * w / 6.0
            b = 0.5 * w
        else:
            a = np.sin(w) / w
            b = (1.0 - np.cos(w)) / w
        det = a * a + b * b
        out[iv] = w
        out[iv + 1] = (a * lx + b * ly) / det
        out[iv + 2] = (-b * lx + a * ly) / det
    else:
        for r in range(n):
            out[iv + r] = q1[iq + r] - q0[iq + r]


@njit(cache=True, nogil=True)
def normalize_joint(jt, q, iq):
    """Renormalize the joint's quaternion in place (spherical, free):
    ``q / |q|`` as :func:`quaternion.normalize` computes it, written out
    (see :func:`_copy_into`)."""
    if jt == SPHERICAL or jt == FREE:
        k = iq if jt == SPHERICAL else iq + 3
        s = np.sqrt(q[k] * q[k] + q[k + 1] * q[k + 1] + q[k + 2] * q[k + 2] + q[k + 3] * q[k + 3])
        for r in range(4):
            q[k + r] = q[k + r] / s
