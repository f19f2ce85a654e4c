"""Compiled kinematics kernels over the model table ``tree`` (layout in
:mod:`multibody.model.joints`). Poses are 4x4 arrays ``[[R, p], [0, 1]]``
(R: child axes in the parent/world frame); spatial vectors are angular
first. Body velocities and accelerations are in body coordinates
(Featherstone's ``v_i``, ``a_i``); world-frame quantities are "spatial"
(expressed at the world origin).

Passes follow Featherstone ch. 4–5 (Examples 4.1–4.4, the forward pass of
Table 5.1): ``v_i = ⁱX_λ v_λ + S q̇``, ``a_i = ⁱX_λ a_λ + S q̈ + c_J + v_i × v_J``.
Workspaces come from :class:`~multibody.model.data.Data`: ``poses[0]`` =
oMi, ``poses[1]`` = liMi; ``motion[0]`` = v, ``motion[1]`` = a;
``jac[0]`` = S, ``jac[1]`` = J, ``jac[2]`` = frame Jacobian. Inner loops index
these arrays directly instead of taking views (see joints.py for why).
"""
import numpy as np
from numba import njit, prange

from .._compiled import BAD_SHAPE, any_layout, chunk_count, overflowed_2d
from ..model.data import handle_workspace, owned
from ..model.configuration import q_status  # noqa: F401  (re-exported for the dynamics kernels)
from ..model.joints import (C_H, C_I, C_MASS, C_NV, C_PARENT, C_Q, C_TYPE, C_V, REVOLUTE,
                            joint_bias, joint_transform, motion_subspace_into, set_local_pose,
                            set_revolute_pose, set_revolute_poses, subspace_column)
from ..spatial.kernel_algebra import force_to_parent, rotate, to_child, to_parent

WORLD, LOCAL, LOCAL_WORLD_ALIGNED = 0, 1, 2


@njit(cache=True, nogil=True, inline="always")
def set_world_pose(tree, i, poses):
    """``oMi[i] = oMi[parent] · liMi[i]`` (Featherstone ``ⁱX₀ = ⁱX_λ ^λX₀``)."""
    p = int(tree[i, C_PARENT])
    for r in range(3):
        b0, b1, b2 = poses[0, p, r, 0], poses[0, p, r, 1], poses[0, p, r, 2]
        for c in range(4):
            poses[0, i, r, c] = b0 * poses[1, i, 0, c] + b1 * poses[1, i, 1, c] + b2 * poses[1, i, 2, c]
        poses[0, i, r, 3] += poses[0, p, r, 3]


@njit(cache=True, nogil=True)
def set_poses(tree, i, q, poses):
    """Local and world pose of body ``i`` for any joint type, out of line:
    inlined into the per-body loop next to the written-out revolute case,
    the whole joint catalog made that loop slower for every body. The
    catalog is :func:`set_local_pose_any`, shared with the frame Jacobian,
    and callers pass ``any_layout(q)``: one compiled specialization for the
    fast paths ('A') and the general ones ('C'); each copy of the catalog
    took 1.5-3 s to compile (the extra call costs Talos' forward kinematics
    ~0.03 µs, 2%, for its free joint)."""
    set_local_pose_any(tree, i, q, poses)
    set_world_pose(tree, i, poses)


@njit(cache=True, nogil=True, inline="always")
def fk_kernel(tree, q, poses):
    """World pose ``poses[0, i]`` and parent-relative pose ``poses[1, i]`` of every body."""
    for i in range(1, tree.shape[0]):
        if int(tree[i, C_TYPE]) == REVOLUTE:  # the common joint, written out (joints.revolute_factors)
            set_revolute_poses(tree, i, q[int(tree[i, C_Q])], poses)
        else:
            set_poses(tree, i, any_layout(q), poses)


@njit(cache=True)  # keeps the GIL: see _compiled (fast paths)
def fk_fast(handle, q):
    """:func:`fk_kernel` on the workspace behind a ``Data.handle`` after
    :func:`q_status`; returns the status."""
    w = handle_workspace(handle)
    if q.shape[0] != w.nq or not owned(handle):  # a foreign thread: the caller raises
        return BAD_SHAPE
    st = q_status(w.tree, q)  # inline: a call to a checked kernel cost 10% on a 6-DoF arm
    if st == 0:
        fk_kernel(w.tree, q, w.poses)
        s = 0.0
        for i in range(w.nb):  # an overflowing position (rotations are bounded): the general path raises
            s += (w.poses[0, i, 0, 3] + w.poses[0, i, 1, 3] + w.poses[0, i, 2, 3]) * 0.0
        if s != 0.0:
            return BAD_SHAPE
    return st


@njit(cache=True)  # keeps the GIL: see _compiled (fast paths)
def frame_pose_fast(handle, q, body, place, out):
    """:func:`fk_fast`, then ``out`` = world pose of body ``body`` times
    ``place`` (4x4): the world pose of a frame; returns the status."""
    st = fk_fast(handle, q)
    if st == 0:
        compose_pose(handle_workspace(handle).poses[0], body, place, out)
        if overflowed_2d(out):  # the general path raises
            return BAD_SHAPE
    return st


@njit(cache=True, nogil=True)
def compose_pose(oMi, body, place, out):
    """``out`` (4x4) = ``oMi[body] @ place``."""
    compose_into(oMi[body], place, out)
    out[3, 0], out[3, 1], out[3, 2], out[3, 3] = 0.0, 0.0, 0.0, 1.0


@njit(cache=True, nogil=True)
def compose_into(A, B, C):
    """C = A B for the top 3x4 pose blocks (C must not alias A or B)."""
    for r in range(3):
        a0, a1, a2 = A[r, 0], A[r, 1], A[r, 2]
        for c in range(3):
            C[r, c] = a0 * B[0, c] + a1 * B[1, c] + a2 * B[2, c]
        C[r, 3] = a0 * B[0, 3] + a1 * B[1, 3] + a2 * B[2, 3] + A[r, 3]


@njit(cache=True, nogil=True)
def frames_kernel(fbody, fplace, oMi, oMf):
    """World pose of every frame from the body poses."""
    for f in range(fbody.shape[0]):
        compose_into(oMi[fbody[f]], fplace[f], oMf[f])


@njit(cache=True, nogil=True)
def motion_kernel(tree, q, v, a, poses, jac, motion):
    """Poses, motion subspaces (``jac[0]``), and body velocities
    ``motion[0]`` and accelerations ``motion[1]`` (spatial, body
    coordinates). ``a`` = zeros gives the bias accelerations ``J̇ q̇``
    (Featherstone Eq. 2.57 with q̈ = 0)."""
    fk_kernel(tree, q, poses)
    S = jac[0]
    vj = np.zeros(6)
    for r in range(6):
        motion[0, 0, r] = 0.0
        motion[1, 0, r] = 0.0
    for i in range(1, tree.shape[0]):
        p = int(tree[i, C_PARENT])
        iv = int(tree[i, C_V])
        nvj = int(tree[i, C_NV])
        motion_subspace_into(tree, i, q, S, iv)
        vp = to_child(poses, 1, i, motion[0, p, 0], motion[0, p, 1], motion[0, p, 2],
                      motion[0, p, 3], motion[0, p, 4], motion[0, p, 5])
        ap = to_child(poses, 1, i, motion[1, p, 0], motion[1, p, 1], motion[1, p, 2],
                      motion[1, p, 3], motion[1, p, 4], motion[1, p, 5])
        c = joint_bias(tree, i, q, v)
        for r in range(6):
            s = 0.0
            t = 0.0
            for k in range(nvj):
                s += S[r, iv + k] * v[iv + k]
                t += S[r, iv + k] * a[iv + k]
            vj[r] = s
            motion[0, i, r] = vp[r] + s
            motion[1, i, r] = ap[r] + t + c[r]
        # + v_i × v_J  (Featherstone Eq. 3.40)
        w0, w1, w2 = motion[0, i, 0], motion[0, i, 1], motion[0, i, 2]
        u0, u1, u2 = motion[0, i, 3], motion[0, i, 4], motion[0, i, 5]
        motion[1, i, 0] += w1 * vj[2] - w2 * vj[1]
        motion[1, i, 1] += w2 * vj[0] - w0 * vj[2]
        motion[1, i, 2] += w0 * vj[1] - w1 * vj[0]
        motion[1, i, 3] += w1 * vj[5] - w2 * vj[4] + u1 * vj[2] - u2 * vj[1]
        motion[1, i, 4] += w2 * vj[3] - w0 * vj[5] + u2 * vj[0] - u0 * vj[2]
        motion[1, i, 5] += w0 * vj[4] - w1 * vj[3] + u0 * vj[1] - u1 * vj[0]


@njit(cache=True, nogil=True)
def joint_jacobians_kernel(tree, q, poses, jac):
    """Poses, motion subspaces ``jac[0]`` and the world-frame joint Jacobian
    ``jac[1]``: column k is the spatial motion (at the world origin, world
    axes) produced by unit velocity of coordinate k, ``Ad(oMi) S_k``."""
    fk_kernel(tree, q, poses)
    S = jac[0]
    for i in range(1, tree.shape[0]):
        iv = int(tree[i, C_V])
        motion_subspace_into(tree, i, q, S, iv)
        for k in range(iv, iv + int(tree[i, C_NV])):
            m = to_parent(poses, 0, i, S[0, k], S[1, k], S[2, k], S[3, k], S[4, k], S[5, k])
            for r in range(6):
                jac[1, r, k] = m[r]


@njit(cache=True, nogil=True)
def set_local_pose_any(tree, i, q, poses):
    """``poses[1, i]`` for any joint type, out of line (see :func:`set_poses`)."""
    set_local_pose(tree, i, joint_transform(int(tree[i, C_TYPE]), tree, i, q, int(tree[i, C_Q])), poses)


@njit(cache=True, nogil=True)
def frame_jacobian_kernel(tree, q, body, place, ref, poses, jac):
    """``jac[2]`` = Jacobian of the frame at ``place`` (4x4 in ``body``) at q,
    in reference ``ref``: WORLD (spatial at the world origin), LOCAL (frame
    axes, at the frame origin) or LOCAL_WORLD_ALIGNED (world axes, at the
    frame origin) — Pinocchio's three conventions.

    One pass from the body up to the root, as in Pinocchio's
    computeFrameJacobian: with ``M = (R, p)`` the frame's pose in body
    ``i`` (held in scalars: an array for it was an allocation per call),
    the column of coordinate k of joint i in frame coordinates is
    ``Ad(M⁻¹) S_k``; then ``M ← liMi M``. At the root ``M`` is the frame's
    world pose, which maps the columns to the requested reference. Only the
    supporting bodies are visited (``poses[1]`` is updated for them;
    ``poses[0]`` is not); other columns are zero."""
    nv = jac.shape[2]
    for r in range(6):
        for k in range(nv):
            jac[2, r, k] = 0.0
    r00, r01, r02, p0 = place[0, 0], place[0, 1], place[0, 2], place[0, 3]
    r10, r11, r12, p1 = place[1, 0], place[1, 1], place[1, 2], place[1, 3]
    r20, r21, r22, p2 = place[2, 0], place[2, 1], place[2, 2], place[2, 3]
    i = body
    while i > 0:
        if int(tree[i, C_TYPE]) == REVOLUTE:
            set_revolute_pose(tree, i, q[int(tree[i, C_Q])], poses)
        else:
            set_local_pose_any(tree, i, any_layout(q), poses)
        iv = int(tree[i, C_V])
        for k in range(int(tree[i, C_NV])):
            s0, s1, s2, s3, s4, s5 = subspace_column(tree, i, q, k)
            u0 = s3 + s1 * p2 - s2 * p1  # Ad(M⁻¹) s = (Rᵀ ω, Rᵀ (v − p × ω))
            u1 = s4 + s2 * p0 - s0 * p2
            u2 = s5 + s0 * p1 - s1 * p0
            jac[2, 0, iv + k] = r00 * s0 + r10 * s1 + r20 * s2
            jac[2, 1, iv + k] = r01 * s0 + r11 * s1 + r21 * s2
            jac[2, 2, iv + k] = r02 * s0 + r12 * s1 + r22 * s2
            jac[2, 3, iv + k] = r00 * u0 + r10 * u1 + r20 * u2
            jac[2, 4, iv + k] = r01 * u0 + r11 * u1 + r21 * u2
            jac[2, 5, iv + k] = r02 * u0 + r12 * u1 + r22 * u2
        a00, a01, a02, a03 = poses[1, i, 0, 0], poses[1, i, 0, 1], poses[1, i, 0, 2], poses[1, i, 0, 3]
        a10, a11, a12, a13 = poses[1, i, 1, 0], poses[1, i, 1, 1], poses[1, i, 1, 2], poses[1, i, 1, 3]
        a20, a21, a22, a23 = poses[1, i, 2, 0], poses[1, i, 2, 1], poses[1, i, 2, 2], poses[1, i, 2, 3]
        r00, r10, r20 = a00 * r00 + a01 * r10 + a02 * r20, a10 * r00 + a11 * r10 + a12 * r20, \
            a20 * r00 + a21 * r10 + a22 * r20
        r01, r11, r21 = a00 * r01 + a01 * r11 + a02 * r21, a10 * r01 + a11 * r11 + a12 * r21, \
            a20 * r01 + a21 * r11 + a22 * r21
        r02, r12, r22 = a00 * r02 + a01 * r12 + a02 * r22, a10 * r02 + a11 * r12 + a12 * r22, \
            a20 * r02 + a21 * r12 + a22 * r22
        p0, p1, p2 = a00 * p0 + a01 * p1 + a02 * p2 + a03, a10 * p0 + a11 * p1 + a12 * p2 + a13, \
            a20 * p0 + a21 * p1 + a22 * p2 + a23
        i = int(tree[i, C_PARENT])
    if ref == LOCAL:
        return
    i = body
    while i > 0:
        iv = int(tree[i, C_V])
        for k in range(iv, iv + int(tree[i, C_NV])):
            w0, w1, w2 = jac[2, 0, k], jac[2, 1, k], jac[2, 2, k]  # R x: frame axes to world axes
            x0 = r00 * w0 + r01 * w1 + r02 * w2
            x1 = r10 * w0 + r11 * w1 + r12 * w2
            x2 = r20 * w0 + r21 * w1 + r22 * w2
            u0, u1, u2 = jac[2, 3, k], jac[2, 4, k], jac[2, 5, k]
            y0 = r00 * u0 + r01 * u1 + r02 * u2
            y1 = r10 * u0 + r11 * u1 + r12 * u2
            y2 = r20 * u0 + r21 * u1 + r22 * u2
            if ref == WORLD:  # and the linear part moved to the world origin: + p × ω
                y0 += p1 * x2 - p2 * x1
                y1 += p2 * x0 - p0 * x2
                y2 += p0 * x1 - p1 * x0
            jac[2, 0, k], jac[2, 1, k], jac[2, 2, k] = x0, x1, x2
            jac[2, 3, k], jac[2, 4, k], jac[2, 5, k] = y0, y1, y2
        i = int(tree[i, C_PARENT])


@njit(cache=True)  # keeps the GIL: see _compiled (fast paths)
def frame_jacobian_fast(handle, q, body, place, ref):
    """:func:`frame_jacobian_kernel` on the workspace behind a
    ``Data.handle`` after :func:`q_status`; returns the status."""
    w = handle_workspace(handle)
    if q.shape[0] != w.nq or not owned(handle):  # a foreign thread: the caller raises
        return BAD_SHAPE
    st = q_status(w.tree, q)
    if st == 0:
        frame_jacobian_kernel(w.tree, q, body, place, ref, w.poses, w.jac)
        if overflowed_2d(w.jac[2]):  # the general path raises
            return BAD_SHAPE
    return st


@njit(cache=True, nogil=True)
def motion_in_reference(F, m, ref, out):
    """A motion vector ``m`` of a frame with world pose ``F[0, 0]``, given in
    the frame's coordinates, written to ``out`` in reference ``ref`` (WORLD:
    spatial at the world origin; LOCAL; LOCAL_WORLD_ALIGNED: world axes at
    the frame origin)."""
    if ref == LOCAL:
        for r in range(6):
            out[r] = m[r]
        return
    if ref == WORLD:
        w = to_parent(F, 0, 0, m[0], m[1], m[2], m[3], m[4], m[5])
    else:
        a = rotate(F, 0, 0, m[0], m[1], m[2])
        b = rotate(F, 0, 0, m[3], m[4], m[5])
        w = (a[0], a[1], a[2], b[0], b[1], b[2])
    for r in range(6):
        out[r] = w[r]


@njit(cache=True, nogil=True)
def frame_motion_kernel(tree, q, v, a, body, place, ref, classical, poses, jac, motion, out):
    """``out[0]``: velocity, ``out[1]``: acceleration of the frame at ``place``
    on ``body``, in reference ``ref``; ``classical`` replaces the linear
    acceleration by the frame origin's ``v̇_O + ω × v_O`` (Featherstone
    Eq. 2.50) in the same axes (so WORLD then means world-aligned axes at
    the frame origin: a classical acceleration belongs to a point)."""
    motion_kernel(tree, q, v, a, poses, jac, motion)
    F = np.empty((2, 1, 4, 4))  # F[0, 0]: the frame's world pose; F[1, 0]: its placement in the body
    compose_into(poses[0, body], place, F[0, 0])
    for r in range(4):
        for c in range(4):
            F[1, 0, r, c] = place[r, c]
    vl = np.array(to_child(F, 1, 0, motion[0, body, 0], motion[0, body, 1], motion[0, body, 2],
                           motion[0, body, 3], motion[0, body, 4], motion[0, body, 5]))
    al = np.array(to_child(F, 1, 0, motion[1, body, 0], motion[1, body, 1], motion[1, body, 2],
                           motion[1, body, 3], motion[1, body, 4], motion[1, body, 5]))
    if classical:
        al[3] += vl[1] * vl[5] - vl[2] * vl[4]
        al[4] += vl[2] * vl[3] - vl[0] * vl[5]
        al[5] += vl[0] * vl[4] - vl[1] * vl[3]
        if ref == WORLD:
            ref = LOCAL_WORLD_ALIGNED
    motion_in_reference(F, vl, ref, out[0])
    motion_in_reference(F, al, ref, out[1])


@njit(cache=True, nogil=True)
def com_kernel(tree, poses, motion, out):
    """``out[0]`` = centre of mass (world), ``out[1]`` = its velocity, from
    poses and body velocities; returns the total mass."""
    mtot = 0.0
    for r in range(3):
        out[0, r] = 0.0
        out[1, r] = 0.0
    for i in range(1, tree.shape[0]):
        m = tree[i, C_MASS]
        if m == 0.0:
            continue
        mtot += m
        h0, h1, h2 = tree[i, C_H], tree[i, C_H + 1], tree[i, C_H + 2]
        w0, w1, w2 = motion[0, i, 0], motion[0, i, 1], motion[0, i, 2]
        # m × body-frame velocity of the COM: m v + ω × h
        mv0 = m * motion[0, i, 3] + w1 * h2 - w2 * h1
        mv1 = m * motion[0, i, 4] + w2 * h0 - w0 * h2
        mv2 = m * motion[0, i, 5] + w0 * h1 - w1 * h0
        for r in range(3):
            R0, R1, R2 = poses[0, i, r, 0], poses[0, i, r, 1], poses[0, i, r, 2]
            out[0, r] += R0 * h0 + R1 * h1 + R2 * h2 + m * poses[0, i, r, 3]
            out[1, r] += R0 * mv0 + R1 * mv1 + R2 * mv2
    if mtot > 0.0:
        for r in range(3):
            out[0, r] /= mtot
            out[1, r] /= mtot
    return mtot


@njit(cache=True, nogil=True)
def com_jacobian_kernel(tree, poses, jac, Jcom):
    """Jacobian of the centre of mass (3 x nv, world): column k is
    ``(M_k v_Ok + ω_k × Σ_{i∈ν(k)} m_i x_i) / M`` with subtree masses M_k and
    first moments accumulated in one backward pass (O(n))."""
    nb = tree.shape[0]
    msub = np.zeros(nb)
    hsub = np.zeros((nb, 3))
    for i in range(nb - 1, 0, -1):
        m = tree[i, C_MASS]
        msub[i] += m
        for r in range(3):
            hsub[i, r] += (poses[0, i, r, 0] * tree[i, C_H] + poses[0, i, r, 1] * tree[i, C_H + 1]
                           + poses[0, i, r, 2] * tree[i, C_H + 2] + m * poses[0, i, r, 3])
        p = int(tree[i, C_PARENT])
        msub[p] += msub[i]
        for r in range(3):
            hsub[p, r] += hsub[i, r]
    mtot = msub[0]
    for i in range(1, nb):
        iv = int(tree[i, C_V])
        h0, h1, h2 = hsub[i, 0], hsub[i, 1], hsub[i, 2]
        for k in range(iv, iv + int(tree[i, C_NV])):
            w0, w1, w2 = jac[1, 0, k], jac[1, 1, k], jac[1, 2, k]
            Jcom[0, k] = (msub[i] * jac[1, 3, k] + w1 * h2 - w2 * h1) / mtot
            Jcom[1, k] = (msub[i] * jac[1, 4, k] + w2 * h0 - w0 * h2) / mtot
            Jcom[2, k] = (msub[i] * jac[1, 5, k] + w0 * h1 - w1 * h0) / mtot


@njit(cache=True, nogil=True, inline="always")
def inertia_times(tree, i, w0, w1, w2, u0, u1, u2):
    """``I_i m`` as 6 scalars: the body-frame momentum of body i moving with
    m = (ω, v) (Featherstone Table A.4: I v = (Ī ω + h × v, m v − h × ω))."""
    m = tree[i, C_MASS]
    h0, h1, h2 = tree[i, C_H], tree[i, C_H + 1], tree[i, C_H + 2]
    return (tree[i, C_I] * w0 + tree[i, C_I + 1] * w1 + tree[i, C_I + 2] * w2 + h1 * u2 - h2 * u1,
            tree[i, C_I + 3] * w0 + tree[i, C_I + 4] * w1 + tree[i, C_I + 5] * w2 + h2 * u0 - h0 * u2,
            tree[i, C_I + 6] * w0 + tree[i, C_I + 7] * w1 + tree[i, C_I + 8] * w2 + h0 * u1 - h1 * u0,
            m * u0 - (h1 * w2 - h2 * w1), m * u1 - (h2 * w0 - h0 * w2), m * u2 - (h0 * w1 - h1 * w0))


@njit(cache=True, nogil=True)
def kinetic_energy_kernel(tree, motion):
    """``T = ½ Σ v_iᵀ I_i v_i`` (Featherstone Eq. 2.67)."""
    T = 0.0
    for i in range(1, tree.shape[0]):
        f = inertia_times(tree, i, motion[0, i, 0], motion[0, i, 1], motion[0, i, 2],
                          motion[0, i, 3], motion[0, i, 4], motion[0, i, 5])
        for r in range(6):
            T += motion[0, i, r] * f[r]
    return 0.5 * T


@njit(cache=True, nogil=True)
def potential_energy_kernel(tree, poses, gravity):
    """``V = −Σ m_i gᵀ x_i`` with ``x_i`` the world centre of mass of body i."""
    V = 0.0
    for i in range(1, tree.shape[0]):
        m = tree[i, C_MASS]
        for r in range(3):
            x = (poses[0, i, r, 0] * tree[i, C_H] + poses[0, i, r, 1] * tree[i, C_H + 1]
                 + poses[0, i, r, 2] * tree[i, C_H + 2] + m * poses[0, i, r, 3])
            V -= gravity[r] * x
    return V


@njit(cache=True, nogil=True)
def momentum_kernel(tree, poses, motion, out):
    """Spatial momentum of the system at the world origin, world axes,
    ``Σ ⁰X_i* I_i v_i`` = (angular about the origin; linear), into ``out``."""
    for r in range(6):
        out[r] = 0.0
    for i in range(1, tree.shape[0]):
        f = inertia_times(tree, i, motion[0, i, 0], motion[0, i, 1], motion[0, i, 2],
                          motion[0, i, 3], motion[0, i, 4], motion[0, i, 5])
        h = force_to_parent(poses, 0, i, f[0], f[1], f[2], f[3], f[4], f[5])
        for r in range(6):
            out[r] += h[r]


@njit(cache=True, nogil=True, inline="always")
def world_inertia_into(tree, i, poses, out):
    """``out[i]`` = spatial inertia (6x6, angular first) of body i at the
    world origin in world axes, from its world pose ``poses[0, i]``
    (Featherstone Eq. 2.66 in compact form: h = R h_b, Ī = R Ī_b Rᵀ, then
    the origin moves from p to 0)."""
    m = tree[i, C_MASS]
    hb0, hb1, hb2 = tree[i, C_H], tree[i, C_H + 1], tree[i, C_H + 2]
    for r in range(3):  # R Ī_b Rᵀ, row by row
        R0, R1, R2 = poses[0, i, r, 0], poses[0, i, r, 1], poses[0, i, r, 2]
        a0 = R0 * tree[i, C_I] + R1 * tree[i, C_I + 3] + R2 * tree[i, C_I + 6]
        a1 = R0 * tree[i, C_I + 1] + R1 * tree[i, C_I + 4] + R2 * tree[i, C_I + 7]
        a2 = R0 * tree[i, C_I + 2] + R1 * tree[i, C_I + 5] + R2 * tree[i, C_I + 8]
        for c in range(3):
            out[i, r, c] = a0 * poses[0, i, c, 0] + a1 * poses[0, i, c, 1] + a2 * poses[0, i, c, 2]
    h0 = poses[0, i, 0, 0] * hb0 + poses[0, i, 0, 1] * hb1 + poses[0, i, 0, 2] * hb2
    h1 = poses[0, i, 1, 0] * hb0 + poses[0, i, 1, 1] * hb1 + poses[0, i, 1, 2] * hb2
    h2 = poses[0, i, 2, 0] * hb0 + poses[0, i, 2, 1] * hb1 + poses[0, i, 2, 2] * hb2
    p0, p1, p2 = poses[0, i, 0, 3], poses[0, i, 1, 3], poses[0, i, 2, 3]
    # moving the origin from p to 0: Ī_0 = Ī_p + 2(p·h)1 − p hᵀ − h pᵀ + m(|p|²1 − p pᵀ)
    d = 2.0 * (p0 * h0 + p1 * h1 + p2 * h2) + m * (p0 * p0 + p1 * p1 + p2 * p2)
    out[i, 0, 0] += d - 2.0 * p0 * h0 - m * p0 * p0
    out[i, 1, 1] += d - 2.0 * p1 * h1 - m * p1 * p1
    out[i, 2, 2] += d - 2.0 * p2 * h2 - m * p2 * p2
    x01 = -(p0 * h1 + h0 * p1) - m * p0 * p1
    x02 = -(p0 * h2 + h0 * p2) - m * p0 * p2
    x12 = -(p1 * h2 + h1 * p2) - m * p1 * p2
    out[i, 0, 1] += x01
    out[i, 1, 0] += x01
    out[i, 0, 2] += x02
    out[i, 2, 0] += x02
    out[i, 1, 2] += x12
    out[i, 2, 1] += x12
    g0, g1, g2 = h0 + m * p0, h1 + m * p1, h2 + m * p2  # first moment about the world origin
    out[i, 0, 3], out[i, 0, 4], out[i, 0, 5] = 0.0, -g2, g1
    out[i, 1, 3], out[i, 1, 4], out[i, 1, 5] = g2, 0.0, -g0
    out[i, 2, 3], out[i, 2, 4], out[i, 2, 5] = -g1, g0, 0.0
    out[i, 3, 0], out[i, 3, 1], out[i, 3, 2] = 0.0, g2, -g1  # symmetric: the lower-left block is [g]ᵀ
    out[i, 4, 0], out[i, 4, 1], out[i, 4, 2] = -g2, 0.0, g0
    out[i, 5, 0], out[i, 5, 1], out[i, 5, 2] = g1, -g0, 0.0
    out[i, 3, 3], out[i, 3, 4], out[i, 3, 5] = m, 0.0, 0.0
    out[i, 4, 3], out[i, 4, 4], out[i, 4, 5] = 0.0, m, 0.0
    out[i, 5, 3], out[i, 5, 4], out[i, 5, 5] = 0.0, 0.0, m


@njit(cache=True, nogil=True)
def centroidal_matrix_kernel(tree, poses, jac, com, Ag):
    """Centroidal momentum matrix ``A_G`` (6 x nv; rows: angular about the
    COM, linear; world axes). Column k is the momentum of the subtree
    supported by coordinate k moving with the world twist ``J_k``, summed
    body by body in world coordinates and moved to the COM."""
    nb = tree.shape[0]
    for k in range(Ag.shape[1]):
        for r in range(6):
            Ag[r, k] = 0.0
    for j in range(nb - 1, 0, -1):
        # each body j contributes to the columns of every joint on its path to the root
        i = j
        while i > 0:
            iv = int(tree[i, C_V])
            for k in range(iv, iv + int(tree[i, C_NV])):
                m = to_child(poses, 0, j, jac[1, 0, k], jac[1, 1, k], jac[1, 2, k], jac[1, 3, k],
                             jac[1, 4, k], jac[1, 5, k])
                f = inertia_times(tree, j, m[0], m[1], m[2], m[3], m[4], m[5])
                h = force_to_parent(poses, 0, j, f[0], f[1], f[2], f[3], f[4], f[5])
                # angular momentum about the COM instead of the world origin: n_G = n_O − c × f
                Ag[0, k] += h[0] - (com[1] * h[5] - com[2] * h[4])
                Ag[1, k] += h[1] - (com[2] * h[3] - com[0] * h[5])
                Ag[2, k] += h[2] - (com[0] * h[4] - com[1] * h[3])
                Ag[3, k] += h[3]
                Ag[4, k] += h[4]
                Ag[5, k] += h[5]
            i = int(tree[i, C_PARENT])


# ----------------------------------------------------------------- batches
@njit(cache=True, nogil=True)
def workspace(nb, nv):
    """Fresh (poses, jac, motion) workspaces for one state (batch kernels)."""
    poses = np.zeros((2, nb, 4, 4))
    for k in range(2):
        for i in range(nb):
            for r in range(4):
                poses[k, i, r, r] = 1.0
    return poses, np.zeros((3, 6, nv)), np.zeros((2, nb, 6))


@njit(cache=True, nogil=True, parallel=True)
def fk_batch(tree, q, oMi):
    B = q.shape[0]
    n = chunk_count(B)
    for c in prange(n):  # one workspace per chunk (docs/architecture.md, rule 4)
        poses, jac, motion = workspace(tree.shape[0], 0)
        for b in range(c * B // n, (c + 1) * B // n):
            fk_kernel(tree, q[b], poses)
            oMi[b] = poses[0]


def fk_batch_poses(tree, q):
    """World poses (B, nb, 4, 4) of a batch of configurations."""
    out = np.empty((q.shape[0], tree.shape[0], 4, 4))
    fk_batch(tree, q, out)
    return out


@njit(cache=True, nogil=True, parallel=True)
def frame_jacobian_batch(tree, q, body, place, ref, out):
    B = q.shape[0]
    n = chunk_count(B)
    for c in prange(n):  # one workspace per chunk (docs/architecture.md, rule 4)
        poses, jac, motion = workspace(tree.shape[0], out.shape[2])
        for b in range(c * B // n, (c + 1) * B // n):
            frame_jacobian_kernel(tree, q[b], body, place, ref, poses, jac)
            out[b] = jac[2]


@njit(cache=True, nogil=True, parallel=True)
def motion_batch(tree, q, v, a, out):
    B = q.shape[0]
    n = chunk_count(B)
    for c in prange(n):  # one workspace per chunk (docs/architecture.md, rule 4)
        poses, jac, motion = workspace(tree.shape[0], v.shape[1])
        for b in range(c * B // n, (c + 1) * B // n):
            motion_kernel(tree, q[b], v[b], a[b], poses, jac, motion)
            out[b] = motion


@njit(cache=True, nogil=True)
def frame_motion_rows(tree, q, v, a, body, place, ref, classical, out, lo, hi):
    """States ``lo .. hi-1`` of :func:`frame_motion_batch`, serially: one state or one chunk of a batch
    (a single state never launches the parallel kernel)."""
    poses, jac, motion = workspace(tree.shape[0], v.shape[1])
    for b in range(lo, hi):
        frame_motion_kernel(tree, q[b], v[b], a[b], body, place, ref, classical, poses, jac, motion, out[b])


@njit(cache=True, nogil=True, parallel=True)
def frame_motion_batch(tree, q, v, a, body, place, ref, classical, out):
    B = q.shape[0]
    n = chunk_count(B)
    for c in prange(n):  # one workspace per chunk (docs/architecture.md, rule 4)
        frame_motion_rows(tree, q, v, a, body, place, ref, classical, out, c * B // n, (c + 1) * B // n)


@njit(cache=True, nogil=True)
def com_rows(tree, q, v, out, lo, hi):
    """States ``lo .. hi-1`` of :func:`com_batch`, serially: one state or one chunk of a batch
    (a single state never launches the parallel kernel)."""
    poses, jac, motion = workspace(tree.shape[0], v.shape[1])
    for b in range(lo, hi):
        motion_kernel(tree, q[b], v[b], np.zeros(v.shape[1]), poses, jac, motion)
        com_kernel(tree, poses, motion, out[b])


@njit(cache=True, nogil=True, parallel=True)
def com_batch(tree, q, v, out):
    B = q.shape[0]
    n = chunk_count(B)
    for c in prange(n):  # one workspace per chunk (docs/architecture.md, rule 4)
        com_rows(tree, q, v, out, c * B // n, (c + 1) * B // n)


@njit(cache=True, nogil=True)
def com_jacobian_rows(tree, q, out, lo, hi):
    """States ``lo .. hi-1`` of :func:`com_jacobian_batch`, serially: one state or one chunk of a batch
    (a single state never launches the parallel kernel)."""
    poses, jac, motion = workspace(tree.shape[0], out.shape[2])
    for b in range(lo, hi):
        joint_jacobians_kernel(tree, q[b], poses, jac)
        com_jacobian_kernel(tree, poses, jac, out[b])


@njit(cache=True, nogil=True, parallel=True)
def com_jacobian_batch(tree, q, out):
    B = q.shape[0]
    n = chunk_count(B)
    for c in prange(n):  # one workspace per chunk (docs/architecture.md, rule 4)
        com_jacobian_rows(tree, q, out, c * B // n, (c + 1) * B // n)


@njit(cache=True, nogil=True)
def energy_rows(tree, q, v, gravity, out, lo, hi):
    """States ``lo .. hi-1`` of :func:`energy_batch`, serially: one state or one chunk of a batch
    (a single state never launches the parallel kernel)."""
    poses, jac, motion = workspace(tree.shape[0], v.shape[1])
    for b in range(lo, hi):
        motion_kernel(tree, q[b], v[b], np.zeros(v.shape[1]), poses, jac, motion)
        out[b, 0] = kinetic_energy_kernel(tree, motion)
        out[b, 1] = potential_energy_kernel(tree, poses, gravity)


@njit(cache=True, nogil=True, parallel=True)
def energy_batch(tree, q, v, gravity, out):
    B = q.shape[0]
    n = chunk_count(B)
    for c in prange(n):  # one workspace per chunk (docs/architecture.md, rule 4)
        energy_rows(tree, q, v, gravity, out, c * B // n, (c + 1) * B // n)


@njit(cache=True, nogil=True)
def momentum_rows(tree, q, v, out, lo, hi):
    """States ``lo .. hi-1`` of :func:`momentum_batch`, serially: one state or one chunk of a batch
    (a single state never launches the parallel kernel)."""
    poses, jac, motion = workspace(tree.shape[0], v.shape[1])
    for b in range(lo, hi):
        motion_kernel(tree, q[b], v[b], np.zeros(v.shape[1]), poses, jac, motion)
        momentum_kernel(tree, poses, motion, out[b, 0])
        cv = np.empty((2, 3))
        com_kernel(tree, poses, motion, cv)
        h = out[b, 0]
        out[b, 1, 0] = h[0] - (cv[0, 1] * h[5] - cv[0, 2] * h[4])
        out[b, 1, 1] = h[1] - (cv[0, 2] * h[3] - cv[0, 0] * h[5])
        out[b, 1, 2] = h[2] - (cv[0, 0] * h[4] - cv[0, 1] * h[3])
        out[b, 1, 3:] = h[3:]


@njit(cache=True, nogil=True, parallel=True)
def momentum_batch(tree, q, v, out):
    """out[b, 0]: spatial momentum at the world origin; out[b, 1]: centroidal."""
    B = q.shape[0]
    n = chunk_count(B)
    for c in prange(n):  # one workspace per chunk (docs/architecture.md, rule 4)
        momentum_rows(tree, q, v, out, c * B // n, (c + 1) * B // n)


@njit(cache=True, nogil=True)
def centroidal_matrix_rows(tree, q, out, lo, hi):
    """States ``lo .. hi-1`` of :func:`centroidal_matrix_batch`, serially: one state or one chunk of a batch
    (a single state never launches the parallel kernel)."""
    poses, jac, motion = workspace(tree.shape[0], out.shape[2])
    for b in range(lo, hi):
        joint_jacobians_kernel(tree, q[b], poses, jac)
        cv = np.empty((2, 3))
        com_kernel(tree, poses, motion, cv)
        centroidal_matrix_kernel(tree, poses, jac, cv[0], out[b])


@njit(cache=True, nogil=True, parallel=True)
def centroidal_matrix_batch(tree, q, out):
    B = q.shape[0]
    n = chunk_count(B)
    for c in prange(n):  # one workspace per chunk (docs/architecture.md, rule 4)
        centroidal_matrix_rows(tree, q, out, c * B // n, (c + 1) * B // n)
