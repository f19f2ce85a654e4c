"""Compiled dynamics kernels over the model table (Featherstone ch. 5–7).

* RNEA (Table 5.1) runs in body coordinates with the compact inertia
  (Table A.4 products); gravity enters as the base acceleration
  ``a_0 = −g`` (notes P5).
* CRBA (Table 6.2) and ABA (Table 7.1) run in **world coordinates**, as
  Pinocchio's WORLD convention: composite and articulated inertias then add
  without the per-body congruence transform ``Xᵀ I X`` (Eq. 2.66), which is
  the most expensive step of the body-coordinate forms. Motion subspaces
  are mapped to the world once per body (``S_w = Ad(oMi) S``) and their
  rate is ``Ṡ_w q̇ = v_i × S_w q̇ + Ad(oMi) c_J``.
* The sparse LᵀDL factorization of H (Table 6.3) uses the expanded parent
  array of the coordinates (Table 6.4), so it has no fill-in.

Workspaces are those of :class:`~multibody.model.data.Data`; inner loops
index them directly (docs/architecture.md).
"""
import numpy as np
from numba import njit, prange

from .._compiled import BAD_SHAPE, NEEDS_MATRIX, any_layout, chunk_count, diagonal_overflowed, overflowed
from .._status import ARG  # state statuses: ARG * argument + index + 1 (argument 0: q, 1: v, 2: a or tau)
from ..kinematics.kernels import fk_kernel, inertia_times, q_status, world_inertia_into
from ..model.data import SLOT_L, SLOT_M, allocated, handle_workspace, owned
from ..model.joints import (C_ARMATURE, C_AX1, C_GRAVITY, C_H, C_I, C_MASS, C_NV, C_PARENT, C_TYPE, C_V, REVOLUTE,
                            VARYING_SUBSPACE, joint_bias, subspace_column)
from ..spatial.kernel_algebra import cross_force, cross_motion, force_to_parent, rotate, to_child, to_parent


# The large kernels below are compiled once, for state vectors (q, v, a, tau in) of any layout ('A'),
# whoever calls them: the fast paths pass strided views ('A'), the batches, the simulator's steps and
# the general paths contiguous vectors ('C'), and each layout was a separate compilation of several
# seconds (a user calling ``aba`` and then simulating compiled ABA and its forward pass twice, ~10 s).
# The public names are inline wrappers that cast those vectors (``_compiled.any_layout``) and call
# them; the fast paths, whose vectors are 'A' already, call them directly (a cast costs a reference
# count). Outputs and the parent arrays are contiguous for every caller and are not cast. A literal
# ``False`` for ``fext_on`` is a type of its own (the fast paths and the steps pass it, and LLVM
# removes the external-force branch); the batches and the general path pass a run-time flag, a
# second specialization that only they compile (normalizing the flag cost the fast paths 2-3%).

@njit(cache=True, nogil=True, inline="always")
def rnea_kernel(tree, q, v, a, gravity_on, fext_on, poses, spatial, tau):
    """:func:`_rnea_kernel` with its vectors as any layout (one compilation for every caller)."""
    _rnea_kernel(tree, any_layout(q), any_layout(v), any_layout(a), gravity_on, fext_on, poses, spatial, tau)


@njit(cache=True, nogil=True)
def _rnea_kernel(tree, q, v, a, gravity_on, fext_on, poses, spatial, tau):
    """Recursive Newton–Euler (Featherstone Table 5.1, body coordinates):
    ``tau = H(q) a + C(q, v) − Σ Jᵢᵀ fextᵢ`` plus the armature term
    ``diag(armature) a``. ``spatial[2]`` holds the external forces on entry
    when ``fext_on`` (body coordinates, at the body origin) and the joint
    reaction forces ``f_i`` on exit; ``spatial[0]``/``[1]`` receive the body
    velocities and accelerations (offset by gravity, notes P5)."""
    fk_kernel(tree, q, poses)
    rnea_posed(tree, q, v, a, gravity_on, fext_on, poses, spatial, tau)


@njit(cache=True, nogil=True, inline="always")
def rnea_posed(tree, q, v, a, gravity_on, fext_on, poses, spatial, tau):
    """:func:`_rnea_kernel` after the forward kinematics: ``poses`` already
    holds the poses at q (for a caller that just ran CRBA at q). Its
    vectors as any layout: one compilation for every caller."""
    _rnea_posed(tree, any_layout(q), any_layout(v), any_layout(a), gravity_on, fext_on, poses, spatial,
                any_layout(tau))


@njit(cache=True, nogil=True)
def _rnea_posed(tree, q, v, a, gravity_on, fext_on, poses, spatial, tau):
    """:func:`rnea_posed`."""
    nb = tree.shape[0]
    g = 1.0 if gravity_on else 0.0
    for r in range(3):
        spatial[0, 0, r] = 0.0
        spatial[0, 0, 3 + r] = 0.0
        spatial[1, 0, r] = 0.0
        spatial[1, 0, 3 + r] = -g * tree[0, C_GRAVITY + r]
    for i in range(1, nb):
        p = int(tree[i, C_PARENT])
        iv = int(tree[i, C_V])
        vp = to_child(poses, 1, i, spatial[0, p, 0], spatial[0, p, 1], spatial[0, p, 2],
                      spatial[0, p, 3], spatial[0, p, 4], spatial[0, p, 5])
        ap = to_child(poses, 1, i, spatial[1, p, 0], spatial[1, p, 1], spatial[1, p, 2],
                      spatial[1, p, 3], spatial[1, p, 4], spatial[1, p, 5])
        vj0 = vj1 = vj2 = vj3 = vj4 = vj5 = 0.0
        aj0 = aj1 = aj2 = aj3 = aj4 = aj5 = 0.0
        for k in range(int(tree[i, C_NV])):
            s0, s1, s2, s3, s4, s5 = subspace_column(tree, i, q, k)
            qd = v[iv + k]
            qa = a[iv + k]
            vj0 += s0 * qd
            vj1 += s1 * qd
            vj2 += s2 * qd
            vj3 += s3 * qd
            vj4 += s4 * qd
            vj5 += s5 * qd
            aj0 += s0 * qa
            aj1 += s1 * qa
            aj2 += s2 * qa
            aj3 += s3 * qa
            aj4 += s4 * qa
            aj5 += s5 * qa
        w0, w1, w2 = vp[0] + vj0, vp[1] + vj1, vp[2] + vj2
        u0, u1, u2 = vp[3] + vj3, vp[4] + vj4, vp[5] + vj5
        c = joint_bias(tree, i, q, v)
        x = cross_motion(w0, w1, w2, u0, u1, u2, vj0, vj1, vj2, vj3, vj4, vj5)
        b0 = ap[0] + aj0 + c[0] + x[0]
        b1 = ap[1] + aj1 + c[1] + x[1]
        b2 = ap[2] + aj2 + c[2] + x[2]
        b3 = ap[3] + aj3 + c[3] + x[3]
        b4 = ap[4] + aj4 + c[4] + x[4]
        b5 = ap[5] + aj5 + c[5] + x[5]
        spatial[0, i, 0], spatial[0, i, 1], spatial[0, i, 2] = w0, w1, w2
        spatial[0, i, 3], spatial[0, i, 4], spatial[0, i, 5] = u0, u1, u2
        spatial[1, i, 0], spatial[1, i, 1], spatial[1, i, 2] = b0, b1, b2
        spatial[1, i, 3], spatial[1, i, 4], spatial[1, i, 5] = b3, b4, b5
        # f = I a + v ×* I v − f_ext
        Ia = inertia_times(tree, i, b0, b1, b2, b3, b4, b5)
        Iv = inertia_times(tree, i, w0, w1, w2, u0, u1, u2)
        y = cross_force(w0, w1, w2, u0, u1, u2, Iv[0], Iv[1], Iv[2], Iv[3], Iv[4], Iv[5])
        if fext_on:
            for r in range(6):
                spatial[2, i, r] = Ia[r] + y[r] - spatial[2, i, r]
        else:
            for r in range(6):
                spatial[2, i, r] = Ia[r] + y[r]
    for i in range(nb - 1, 0, -1):
        iv = int(tree[i, C_V])
        f0, f1, f2 = spatial[2, i, 0], spatial[2, i, 1], spatial[2, i, 2]
        f3, f4, f5 = spatial[2, i, 3], spatial[2, i, 4], spatial[2, i, 5]
        for k in range(int(tree[i, C_NV])):
            s0, s1, s2, s3, s4, s5 = subspace_column(tree, i, q, k)
            tau[iv + k] = (s0 * f0 + s1 * f1 + s2 * f2 + s3 * f3 + s4 * f4 + s5 * f5
                           + tree[i, C_ARMATURE + k] * a[iv + k])
        p = int(tree[i, C_PARENT])
        if p > 0:
            fp = force_to_parent(poses, 1, i, f0, f1, f2, f3, f4, f5)
            for r in range(6):
                spatial[2, p, r] += fp[r]


@njit(cache=True, nogil=True, inline="always")
def world_motion_pass(tree, q, v, poses, jac, spatial):
    """:func:`_world_motion_pass` with its vectors as any layout (one compilation)."""
    _world_motion_pass(tree, any_layout(q), any_layout(v), poses, jac, spatial)


@njit(cache=True, nogil=True)
def _world_motion_pass(tree, q, v, poses, jac, spatial):
    """Forward pass shared by CRBA and ABA (world coordinates): poses,
    world motion subspaces ``jac[1]`` (= joint Jacobian), world spatial
    velocities ``spatial[0]`` and the velocity-product accelerations
    ``spatial[3] = Ṡ_w q̇ = v_i × (S_w q̇) + Ad(oMi) c_J``."""
    fk_kernel(tree, q, poses)
    for r in range(6):
        spatial[0, 0, r] = 0.0
        spatial[3, 0, r] = 0.0
    for i in range(1, tree.shape[0]):
        p = int(tree[i, C_PARENT])
        iv = int(tree[i, C_V])
        vj0 = vj1 = vj2 = vj3 = vj4 = vj5 = 0.0
        for k in range(int(tree[i, C_NV])):
            s0, s1, s2, s3, s4, s5 = subspace_column(tree, i, q, k)
            m = to_parent(poses, 0, i, s0, s1, s2, s3, s4, s5)
            for r in range(6):
                jac[1, r, iv + k] = m[r]
            qd = v[iv + k]
            vj0 += m[0] * qd
            vj1 += m[1] * qd
            vj2 += m[2] * qd
            vj3 += m[3] * qd
            vj4 += m[4] * qd
            vj5 += m[5] * qd
        w0, w1, w2 = spatial[0, p, 0] + vj0, spatial[0, p, 1] + vj1, spatial[0, p, 2] + vj2
        u0, u1, u2 = spatial[0, p, 3] + vj3, spatial[0, p, 4] + vj4, spatial[0, p, 5] + vj5
        spatial[0, i, 0], spatial[0, i, 1], spatial[0, i, 2] = w0, w1, w2
        spatial[0, i, 3], spatial[0, i, 4], spatial[0, i, 5] = u0, u1, u2
        x = cross_motion(w0, w1, w2, u0, u1, u2, vj0, vj1, vj2, vj3, vj4, vj5)
        for r in range(6):
            spatial[3, i, r] = x[r]
        if int(tree[i, C_TYPE]) >= VARYING_SUBSPACE:  # S varies in the child frame: c_J ≠ 0
            c = joint_bias(tree, i, q, v)
            cw = to_parent(poses, 0, i, c[0], c[1], c[2], c[3], c[4], c[5])
            for r in range(6):
                spatial[3, i, r] += cw[r]


@njit(cache=True, nogil=True, inline="always")
def _row_dot(A, i, r, x0, x1, x2, x3, x4, x5):
    """Row r of the 6x6 matrix ``A[i]`` times the vector x."""
    return (A[i, r, 0] * x0 + A[i, r, 1] * x1 + A[i, r, 2] * x2
            + A[i, r, 3] * x3 + A[i, r, 4] * x4 + A[i, r, 5] * x5)


@njit(cache=True, nogil=True, inline="always")
def world_compact_inertia(tree, i, poses, C):
    """``C[i, :10]`` = body i's inertia about the world origin in world axes
    in compact form (Featherstone Table A.4): Ī (xx, yy, zz, xy, xz, yz),
    m, first moment g = m·c (world). From ``poses[0, i]`` = (R, p):
    ``h = R h_b``, ``Ī = R Ī_b Rᵀ`` about p, moved to the origin by
    ``Ī_0 = Ī_p + 2(p·h)1 − p hᵀ − h pᵀ + m(|p|²1 − p pᵀ)``, ``g = h + m p``."""
    m = tree[i, C_MASS]
    hb0, hb1, hb2 = tree[i, C_H], tree[i, C_H + 1], tree[i, C_H + 2]
    R00, R01, R02 = poses[0, i, 0, 0], poses[0, i, 0, 1], poses[0, i, 0, 2]
    R10, R11, R12 = poses[0, i, 1, 0], poses[0, i, 1, 1], poses[0, i, 1, 2]
    R20, R21, R22 = poses[0, i, 2, 0], poses[0, i, 2, 1], poses[0, i, 2, 2]
    I00, I01, I02 = tree[i, C_I], tree[i, C_I + 1], tree[i, C_I + 2]
    I11, I12, I22 = tree[i, C_I + 4], tree[i, C_I + 5], tree[i, C_I + 8]
    # rows of R Ī_b
    a00 = R00 * I00 + R01 * I01 + R02 * I02
    a01 = R00 * I01 + R01 * I11 + R02 * I12
    a02 = R00 * I02 + R01 * I12 + R02 * I22
    a10 = R10 * I00 + R11 * I01 + R12 * I02
    a11 = R10 * I01 + R11 * I11 + R12 * I12
    a12 = R10 * I02 + R11 * I12 + R12 * I22
    a20 = R20 * I00 + R21 * I01 + R22 * I02
    a21 = R20 * I01 + R21 * I11 + R22 * I12
    a22 = R20 * I02 + R21 * I12 + R22 * I22
    h0 = R00 * hb0 + R01 * hb1 + R02 * hb2
    h1 = R10 * hb0 + R11 * hb1 + R12 * hb2
    h2 = R20 * hb0 + R21 * hb1 + R22 * hb2
    p0, p1, p2 = poses[0, i, 0, 3], poses[0, i, 1, 3], poses[0, i, 2, 3]
    d = 2.0 * (p0 * h0 + p1 * h1 + p2 * h2) + m * (p0 * p0 + p1 * p1 + p2 * p2)
    C[i, 0] = a00 * R00 + a01 * R01 + a02 * R02 + d - 2.0 * p0 * h0 - m * p0 * p0
    C[i, 1] = a10 * R10 + a11 * R11 + a12 * R12 + d - 2.0 * p1 * h1 - m * p1 * p1
    C[i, 2] = a20 * R20 + a21 * R21 + a22 * R22 + d - 2.0 * p2 * h2 - m * p2 * p2
    C[i, 3] = a00 * R10 + a01 * R11 + a02 * R12 - (p0 * h1 + h0 * p1) - m * p0 * p1
    C[i, 4] = a00 * R20 + a01 * R21 + a02 * R22 - (p0 * h2 + h0 * p2) - m * p0 * p2
    C[i, 5] = a10 * R20 + a11 * R21 + a12 * R22 - (p1 * h2 + h1 * p2) - m * p1 * p2
    C[i, 6] = m
    C[i, 7] = h0 + m * p0
    C[i, 8] = h1 + m * p1
    C[i, 9] = h2 + m * p2


@njit(cache=True, nogil=True, inline="always")
def crba_kernel(tree, lam, q, poses, jac, inertia6, M):
    """:func:`_crba_kernel` with its vectors as any layout (one compilation for every caller)."""
    _crba_kernel(tree, lam, any_layout(q), poses, jac, inertia6, M)


@njit(cache=True, nogil=True)
def _crba_kernel(tree, lam, q, poses, jac, inertia6, M):
    """Joint-space inertia ``M = H(q)`` (Featherstone Table 6.2) in world
    coordinates: composite inertias ``Ic_λ += Ic_i`` without transforms,
    ``H_ij = S_iᵀ Ic_j S_j`` for i on the path from j to the root, plus the
    armature on the diagonal. The composite inertias are kept in compact
    form (10 numbers, Table A.4; in the first 10 entries of each
    ``inertia6[i]``): adding them costs 10 operations instead of 36 and
    ``F = Ic S = (Ī s_ω + g × s_v, m s_v − g × s_ω)`` 27 instead of 36. Only
    the lower triangle's branch pattern is nonzero (§6.4); the full
    symmetric matrix is written. ``lam``: the model's ``dof_parent``."""
    nb = tree.shape[0]
    nv = M.shape[0]
    C = inertia6.reshape(inertia6.shape[0], 36)
    fk_kernel(tree, q, poses)
    for i in range(1, nb):
        world_compact_inertia(tree, i, poses, C)
        iv = int(tree[i, C_V])
        if int(tree[i, C_TYPE]) == REVOLUTE:  # S_w = (R u, p × R u): 15 products instead of 36
            u0, u1, u2 = tree[i, C_AX1], tree[i, C_AX1 + 1], tree[i, C_AX1 + 2]
            w0, w1, w2 = rotate(poses, 0, i, u0, u1, u2)
            px, py, pz = poses[0, i, 0, 3], poses[0, i, 1, 3], poses[0, i, 2, 3]
            jac[1, 0, iv], jac[1, 1, iv], jac[1, 2, iv] = w0, w1, w2
            jac[1, 3, iv], jac[1, 4, iv], jac[1, 5, iv] = py * w2 - pz * w1, pz * w0 - px * w2, px * w1 - py * w0
            continue
        for k in range(int(tree[i, C_NV])):
            s0, s1, s2, s3, s4, s5 = subspace_column(tree, i, q, k)
            m = to_parent(poses, 0, i, s0, s1, s2, s3, s4, s5)
            for r in range(6):
                jac[1, r, iv + k] = m[r]
    for r in range(nv):
        for c in range(nv):
            M[r, c] = 0.0
    for i in range(nb - 1, 0, -1):
        iv = int(tree[i, C_V])
        Ixx, Iyy, Izz, Ixy, Ixz, Iyz = C[i, 0], C[i, 1], C[i, 2], C[i, 3], C[i, 4], C[i, 5]
        mass, g0, g1, g2 = C[i, 6], C[i, 7], C[i, 8], C[i, 9]
        for k in range(iv, iv + int(tree[i, C_NV])):
            s0, s1, s2 = jac[1, 0, k], jac[1, 1, k], jac[1, 2, k]
            s3, s4, s5 = jac[1, 3, k], jac[1, 4, k], jac[1, 5, k]
            F0 = Ixx * s0 + Ixy * s1 + Ixz * s2 + g1 * s5 - g2 * s4
            F1 = Ixy * s0 + Iyy * s1 + Iyz * s2 + g2 * s3 - g0 * s5
            F2 = Ixz * s0 + Iyz * s1 + Izz * s2 + g0 * s4 - g1 * s3
            F3 = mass * s3 - (g1 * s2 - g2 * s1)
            F4 = mass * s4 - (g2 * s0 - g0 * s2)
            F5 = mass * s5 - (g0 * s1 - g1 * s0)
            # columns of k and of every coordinate supporting it, by the
            # expanded parent array λ (Table 6.4): an integer walk, where
            # walking the bodies' float table put a load and a float-to-int
            # conversion on the critical path of every entry (2x slower)
            l = k
            while l >= 0:
                h = (jac[1, 0, l] * F0 + jac[1, 1, l] * F1 + jac[1, 2, l] * F2
                     + jac[1, 3, l] * F3 + jac[1, 4, l] * F4 + jac[1, 5, l] * F5)
                M[k, l] = h
                M[l, k] = h
                l = lam[l]
            M[k, k] += tree[i, C_ARMATURE + k - iv]
        p = int(tree[i, C_PARENT])
        if p > 0:
            for r in range(10):
                C[p, r] += C[i, r]


@njit(cache=True, nogil=True)
def invert_spd_block(D, n, out, row, scratch):
    """``out[row:row+n, :n] = D[:n, :n]⁻¹`` for a small symmetric positive
    definite D (a joint's articulated inertia ``SᵀIᴬS``), by Cholesky;
    ``scratch`` is (2, 6, 6). Returns False if D is not positive definite
    (a massless subtree)."""
    L = scratch[0]
    for i in range(n):
        for j in range(n):
            L[i, j] = 0.0
    for j in range(n):
        d = D[j, j]
        for k in range(j):
            d -= L[j, k] * L[j, k]
        if not d > 0.0:
            return False
        L[j, j] = np.sqrt(d)
        for i in range(j + 1, n):
            x = D[i, j]
            for k in range(j):
                x -= L[i, k] * L[j, k]
            L[i, j] = x / L[j, j]
    # columns of L⁻¹, then D⁻¹ = L⁻ᵀ L⁻¹
    Li = scratch[1]
    for c in range(n):
        for i in range(c, n):
            x = 1.0 if i == c else 0.0
            for k in range(c, i):
                x -= L[i, k] * Li[k, c]
            Li[i, c] = x / L[i, i]
    for i in range(n):
        for j in range(n):
            x = 0.0
            for k in range(max(i, j), n):
                x += Li[k, i] * Li[k, j]
            out[row + i, j] = x
    return True


@njit(cache=True, nogil=True)
def articulated_init(tree, poses, spatial, inertia6, fext_on):
    """First ABA pass after the motion pass (Table 7.1), in the frame of
    ``poses[0]``: ``Iᴬᵢ = Iᵢ`` into ``inertia6`` and ``pᴬᵢ = vᵢ ×* Iᵢ vᵢ −
    f_extᵢ`` into ``spatial[2]`` (which holds the body-frame external forces
    on entry when ``fext_on``). Shared by the ABA, floating-base and hybrid
    kernels."""
    for i in range(1, tree.shape[0]):
        world_inertia_into(tree, i, poses, inertia6)
        w0, w1, w2 = spatial[0, i, 0], spatial[0, i, 1], spatial[0, i, 2]
        w3, w4, w5 = spatial[0, i, 3], spatial[0, i, 4], spatial[0, i, 5]
        pA = cross_force(w0, w1, w2, w3, w4, w5, _row_dot(inertia6, i, 0, w0, w1, w2, w3, w4, w5),
                         _row_dot(inertia6, i, 1, w0, w1, w2, w3, w4, w5),
                         _row_dot(inertia6, i, 2, w0, w1, w2, w3, w4, w5),
                         _row_dot(inertia6, i, 3, w0, w1, w2, w3, w4, w5),
                         _row_dot(inertia6, i, 4, w0, w1, w2, w3, w4, w5),
                         _row_dot(inertia6, i, 5, w0, w1, w2, w3, w4, w5))
        if fext_on:
            fw = force_to_parent(poses, 0, i, spatial[2, i, 0], spatial[2, i, 1], spatial[2, i, 2],
                                 spatial[2, i, 3], spatial[2, i, 4], spatial[2, i, 5])
            for r in range(6):
                spatial[2, i, r] = pA[r] - fw[r]
        else:
            for r in range(6):
                spatial[2, i, r] = pA[r]


@njit(cache=True, nogil=True)
def articulated_to_parent(i, p, iv, n, U, Dinv, inertia6, spatial, dofs, UD, Ia, pa):
    """Multi-DoF step of the ABA backward pass (Featherstone Table 7.1):
    ``Iᵃ = Iᴬ − U D⁻¹ Uᵀ``, ``pᵃ = pᴬ + Iᵃ c + U D⁻¹ u``, added to the parent's
    ``Iᴬ`` and ``pᴬ``. ``UD``, ``Ia``, ``pa`` are scratch. Called once per
    multi-DoF joint (1-DoF joints take the kernels' written-out branch), so
    the out-of-line call costs nothing that matters."""
    for r in range(6):
        for l in range(n):
            x = 0.0
            for k in range(n):
                x += U[r, iv + k] * Dinv[iv + k, l]
            UD[r, l] = x
    for r in range(6):
        for c in range(6):
            x = inertia6[i, r, c]
            for k in range(n):
                x -= UD[r, k] * U[c, iv + k]
            Ia[r, c] = x
    for r in range(6):
        x = spatial[2, i, r]
        for c in range(6):
            x += Ia[r, c] * spatial[3, i, c]
        for k in range(n):
            x += UD[r, k] * dofs[2, iv + k]
        pa[r] = x
    for r in range(6):
        spatial[2, p, r] += pa[r]
        for c in range(6):
            inertia6[p, r, c] += Ia[r, c]


@njit(cache=True, nogil=True, inline="always")
def aba_kernel(tree, q, v, tau, gravity_on, fext_on, poses, jac, spatial, inertia6, U, Dinv, dofs):
    """:func:`_aba_kernel` with its vectors as any layout (one compilation for every caller)."""
    return _aba_kernel(tree, any_layout(q), any_layout(v), any_layout(tau), gravity_on, fext_on, poses, jac,
                       spatial, inertia6, U, Dinv, dofs)


@njit(cache=True, nogil=True)
def _aba_kernel(tree, q, v, tau, gravity_on, fext_on, poses, jac, spatial, inertia6, U, Dinv, dofs):
    """Articulated-body algorithm (Featherstone Table 7.1) in world
    coordinates: returns 0 and writes ``q̈`` to ``dofs[1]``, or returns the
    index of the first body whose articulated inertia is singular along its
    joint (a massless subtree). ``spatial[2]`` holds the external forces
    (body coordinates) on entry when ``fext_on``. Joint armature is added to
    ``D = Sᵀ Iᴬ S`` (rotor inertia, §9.6)."""
    nb = tree.shape[0]
    _world_motion_pass(tree, q, v, poses, jac, spatial)  # q, v: 'A' already
    S = jac[1]
    articulated_init(tree, poses, spatial, inertia6, fext_on)
    work = np.empty((6, 6, 6))  # one allocation (~20 ns each: seven cost 14% of a 6-DoF arm's ABA)
    D, Ia, UD, scratch, ap, pa = work[0], work[1], work[2], work[3:5], work[5, 0], work[5, 1]
    for i in range(nb - 1, 0, -1):
        iv = int(tree[i, C_V])
        n = int(tree[i, C_NV])
        p = int(tree[i, C_PARENT])
        if n == 1:
            # the common case, written out: U = Iᴬs, D = sᵀU, Iᵃ = Iᴬ − U Uᵀ/D, pᵃ = pᴬ + Iᵃc + U u/D
            s0, s1, s2, s3, s4, s5 = S[0, iv], S[1, iv], S[2, iv], S[3, iv], S[4, iv], S[5, iv]
            for r in range(6):
                U[r, iv] = (inertia6[i, r, 0] * s0 + inertia6[i, r, 1] * s1 + inertia6[i, r, 2] * s2
                            + inertia6[i, r, 3] * s3 + inertia6[i, r, 4] * s4 + inertia6[i, r, 5] * s5)
            d = (s0 * U[0, iv] + s1 * U[1, iv] + s2 * U[2, iv] + s3 * U[3, iv] + s4 * U[4, iv]
                 + s5 * U[5, iv] + tree[i, C_ARMATURE])
            if not d > 0.0:
                return i
            dinv = 1.0 / d
            Dinv[iv, 0] = dinv
            u = tau[iv] - (s0 * spatial[2, i, 0] + s1 * spatial[2, i, 1] + s2 * spatial[2, i, 2]
                           + s3 * spatial[2, i, 3] + s4 * spatial[2, i, 4] + s5 * spatial[2, i, 5])
            dofs[2, iv] = u
            if p == 0:
                continue
            ud = u * dinv
            for r in range(6):
                ur = U[r, iv] * dinv
                x = spatial[2, i, r] + U[r, iv] * ud
                for c in range(6):
                    a = inertia6[i, r, c] - ur * U[c, iv]
                    inertia6[p, r, c] += a
                    x += a * spatial[3, i, c]
                spatial[2, p, r] += x
            continue
        if n == 0:  # a fixed joint: the body is rigidly part of its parent
            if p > 0:
                for r in range(6):
                    spatial[2, p, r] += spatial[2, i, r]
                    for c in range(6):
                        inertia6[p, r, c] += inertia6[i, r, c]
            continue
        for k in range(n):
            for r in range(6):
                U[r, iv + k] = (inertia6[i, r, 0] * S[0, iv + k] + inertia6[i, r, 1] * S[1, iv + k] + inertia6[i, r, 2] * S[2, iv + k]
                                + inertia6[i, r, 3] * S[3, iv + k] + inertia6[i, r, 4] * S[4, iv + k] + inertia6[i, r, 5] * S[5, iv + k])
        for k in range(n):
            u = tau[iv + k]
            for r in range(6):
                u -= S[r, iv + k] * spatial[2, i, r]
            dofs[2, iv + k] = u
            for l in range(n):
                x = 0.0
                for r in range(6):
                    x += S[r, iv + k] * U[r, iv + l]
                D[k, l] = x
            D[k, k] += tree[i, C_ARMATURE + k]
        if not invert_spd_block(D, n, Dinv, iv, scratch):
            return i
        if p == 0:
            continue
        articulated_to_parent(i, p, iv, n, U, Dinv, inertia6, spatial, dofs, UD, Ia, pa)
    g = 1.0 if gravity_on else 0.0
    for r in range(3):
        spatial[1, 0, r] = 0.0
        spatial[1, 0, 3 + r] = -g * tree[0, C_GRAVITY + r]
    for i in range(1, nb):
        p = int(tree[i, C_PARENT])
        iv = int(tree[i, C_V])
        n = int(tree[i, C_NV])
        for r in range(6):
            ap[r] = spatial[1, p, r] + spatial[3, i, r]
        for k in range(n):  # u − Uᵀ a'
            x = dofs[2, iv + k]
            for r in range(6):
                x -= U[r, iv + k] * ap[r]
            dofs[3, iv + k] = x
        for k in range(n):
            x = 0.0
            for l in range(n):
                x += Dinv[iv + k, l] * dofs[3, iv + l]
            dofs[1, iv + k] = x
        for r in range(6):
            x = ap[r]
            for k in range(n):
                x += S[r, iv + k] * dofs[1, iv + k]
            spatial[1, i, r] = x
    return 0


@njit(cache=True, nogil=True)
def dof_parents(tree, out):
    """Expanded parent array of the coordinates (Featherstone Table 6.4):
    ``out[k]`` is the coordinate before k on the path to the root (-1 at the
    root), skipping bodies without coordinates."""
    for i in range(1, tree.shape[0]):
        iv = int(tree[i, C_V])
        n = int(tree[i, C_NV])
        if n == 0:
            continue
        p = int(tree[i, C_PARENT])
        while p > 0 and int(tree[p, C_NV]) == 0:
            p = int(tree[p, C_PARENT])
        out[iv] = int(tree[p, C_V]) + int(tree[p, C_NV]) - 1 if p > 0 else -1
        for k in range(1, n):
            out[iv + k] = iv + k - 1


LONG_RUN = 16  # measured: below this, the run form's loop set-up costs more than it saves (Talos +20%)


@njit(cache=True, nogil=True)
def coordinate_runs(lam):
    """``rs[j]``: first coordinate of the run of consecutive coordinates
    ``rs[j], rs[j]+1, …, j`` each the parent of the next (``lam[m] = m − 1``),
    so the ancestors of j are the ranges ``rs[j]..j``, ``rs[lam[rs[j]]]..``,
    …. An empty array when no run is LONG_RUN long: the factorization and
    solves then walk ``lam`` one coordinate at a time."""
    n = lam.shape[0]
    longest = run = 0
    for j in range(1, n):
        run = run + 1 if lam[j] == j - 1 else 0
        longest = max(longest, run)
    if longest + 1 < LONG_RUN:
        return np.empty(0, np.int64)
    rs = np.empty(n, np.int64)
    for j in range(n):
        rs[j] = rs[j - 1] if j > 0 and lam[j] == j - 1 else j
    return rs


@njit(cache=True, nogil=True)
def ltdl_kernel(lam, H):
    """In-place sparse ``H = Lᵀ D L`` (Featherstone Table 6.3): D on the
    diagonal, the unit lower-triangular L strictly below it, with the
    branch-induced sparsity of H (no fill-in). Returns the first coordinate
    with a non-positive pivot + 1, or 0.

    The row update ``H[i, j] −= a H[k, j]`` over the ancestors j of i runs
    over contiguous ranges when the tree has long chains
    (:func:`coordinate_runs`): a loop the compiler vectorizes, where
    following ``lam`` puts a dependent load on every step (chain of 100:
    250 → 104 µs)."""
    n = H.shape[0]
    rs = coordinate_runs(lam)
    runs = rs.shape[0] > 0
    for k in range(n - 1, -1, -1):
        d = H[k, k]
        if not d > 0.0:
            return k + 1
        i = lam[k]
        while i >= 0:
            a = H[k, i] / d
            j = i
            if runs:
                while j >= 0:
                    s = rs[j]
                    for m in range(s, j + 1):
                        H[i, m] -= a * H[k, m]
                    j = lam[s]
            else:
                while j >= 0:
                    H[i, j] -= a * H[k, j]
                    j = lam[j]
            H[k, i] = a
            i = lam[i]
    return 0


@njit(cache=True, nogil=True)
def ltdl_solve(lam, L, x):
    """``x ← H⁻¹ x`` from the in-place factor of :func:`ltdl_kernel`
    (Table 6.5: x = L⁻¹ D⁻¹ L⁻ᵀ x), over contiguous ranges of ancestors
    when the tree has long chains (:func:`coordinate_runs`)."""
    n = L.shape[0]
    rs = coordinate_runs(lam)
    if rs.shape[0] == 0:
        _ltdl_solve_range(lam, L, x, 0, n)
        return
    for i in range(n - 1, -1, -1):
        xi = x[i]
        j = lam[i]
        while j >= 0:
            s = rs[j]
            for m in range(s, j + 1):
                x[m] -= L[i, m] * xi
            j = lam[s]
    for i in range(n):
        x[i] /= L[i, i]
    for i in range(n):
        acc = x[i]
        j = lam[i]
        while j >= 0:
            s = rs[j]
            for m in range(s, j + 1):
                acc -= L[i, m] * x[m]
            j = lam[s]
        x[i] = acc


@njit(cache=True, nogil=True, inline="always")
def ltdl_solve_span(lam, L, x, lo, hi):
    """:func:`ltdl_solve` on the coordinates ``lo .. hi−1`` only, for a
    span closed under ``lam`` whose coordinates' ancestors all lie in it
    (the coordinates of one branch of the world, numbered contiguously):
    H is block diagonal by branch, so x's part in the span is solved on
    its own (x outside it untouched). The whole range is ltdl_solve."""
    if lo == 0 and hi == L.shape[0]:
        ltdl_solve(lam, L, x)
    else:
        _ltdl_solve_range(lam, L, x, lo, hi)


@njit(cache=True, nogil=True, inline="always")
def _ltdl_solve_range(lam, L, x, lo, hi):
    """Table 6.5 on the coordinates ``lo .. hi−1`` (their ancestors in the
    range), following ``lam`` one coordinate at a time."""
    for i in range(hi - 1, lo - 1, -1):  # L⁻ᵀ
        xi = x[i]
        j = lam[i]
        while j >= 0:
            x[j] -= L[i, j] * xi
            j = lam[j]
    for i in range(lo, hi):
        x[i] /= L[i, i]
    for i in range(lo, hi):  # L⁻¹
        acc = x[i]
        j = lam[i]
        while j >= 0:
            acc -= L[i, j] * x[j]
            j = lam[j]
        x[i] = acc


@njit(cache=True, nogil=True)
def ltl_kernel(lam, H):
    """In-place sparse ``H = Lᵀ L`` (Featherstone Table 6.3, the LᵀL column):
    L lower triangular with H's branch-induced sparsity (no fill-in), in the
    lower triangle of H. Returns the first coordinate with a non-positive
    pivot + 1, or 0."""
    n = H.shape[0]
    for k in range(n - 1, -1, -1):
        if not H[k, k] > 0.0:
            return k + 1
        H[k, k] = np.sqrt(H[k, k])
        i = lam[k]
        while i >= 0:
            H[k, i] /= H[k, k]
            i = lam[i]
        i = lam[k]
        while i >= 0:
            j = i
            while j >= 0:
                H[i, j] -= H[k, i] * H[k, j]
                j = lam[j]
            i = lam[i]
    return 0


@njit(cache=True, nogil=True)
def ltl_solve(lam, L, x):
    """``x ← H⁻¹ x = L⁻¹ L⁻ᵀ x`` from the factor of :func:`ltl_kernel` (Table 6.5)."""
    n = L.shape[0]
    for i in range(n - 1, -1, -1):  # L⁻ᵀ
        x[i] /= L[i, i]
        j = lam[i]
        while j >= 0:
            x[j] -= L[i, j] * x[i]
            j = lam[j]
    for i in range(n):  # L⁻¹
        j = lam[i]
        while j >= 0:
            x[i] -= L[i, j] * x[j]
            j = lam[j]
        x[i] /= L[i, i]


@njit(cache=True, nogil=True)
def l_multiply(lam, L, x, y, transpose, unit):
    """``y = L x`` or ``y = Lᵀ x`` for a sparse lower-triangular factor
    (Table 6.5); ``unit`` takes the diagonal as 1 (the L of LᵀDL)."""
    n = L.shape[0]
    for i in range(n):
        y[i] = x[i] if unit else L[i, i] * x[i]
    for i in range(n):
        j = lam[i]
        while j >= 0:
            if transpose:
                y[j] += L[i, j] * x[i]
            else:
                y[i] += L[i, j] * x[j]
            j = lam[j]


@njit(cache=True, nogil=True)
def ltdl_multiply(lam, H, x, y):
    """``y = H x`` using only the branch-induced nonzeros of the lower
    triangle of H (Table 6.5)."""
    n = H.shape[0]
    for i in range(n):
        y[i] = H[i, i] * x[i]
    for i in range(n - 1, -1, -1):
        j = lam[i]
        while j >= 0:
            y[i] += H[i, j] * x[j]
            y[j] += H[i, j] * x[i]
            j = lam[j]


# ------------------------------------------------------------ checked entries


@njit(cache=True, nogil=True, inline="always")
def state_status(tree, q, v, x):
    """0 if q (finite, unit quaternions), v and x are valid; otherwise the
    kinematics q_status (q), or ``ARG * argument + index + 1`` for the first
    non-finite entry of v (argument 1) or x (argument 2)."""
    st = q_status(tree, q)
    if st != 0:
        return st
    z = 0.0
    for k in range(v.shape[0]):  # 0·x is NaN iff x is not finite
        z += 0.0 * v[k]
    for k in range(x.shape[0]):  # x may be shorter than v (floating-base and hybrid callers)
        z += 0.0 * x[k]
    if z == 0.0:
        return 0
    for k in range(v.shape[0]):
        if not np.isfinite(v[k]):
            return ARG + k + 1
    for k in range(x.shape[0]):
        if not np.isfinite(x[k]):
            return 2 * ARG + k + 1
    return 0


@njit(cache=True, nogil=True)
def aba_checked(tree, q, v, tau, gravity_on, fext_on, poses, jac, spatial, inertia6, U, Dinv, dofs):
    st = state_status(tree, q, v, tau)
    if st == 0:
        b = aba_kernel(tree, q, v, tau, gravity_on, fext_on, poses, jac, spatial, inertia6, U, Dinv, dofs)
        if b:
            return -ARG - b  # singular articulated inertia at body b
    return st


# ------------------------------------------- fast paths (a Data.handle)
@njit(cache=True)  # keeps the GIL: see _compiled (fast paths)
def rnea_fast(handle, q, v, a, gravity_on):
    """:func:`rnea_kernel` (no external forces) on the workspace behind a
    ``Data.handle`` after :func:`state_status`; τ in ``dofs[0]``."""
    w = handle_workspace(handle)
    if q.shape[0] != w.nq or v.shape[0] != w.nv or a.shape[0] != w.nv or not owned(handle):
        return BAD_SHAPE
    st = state_status(w.tree, q, v, a)
    if st == 0:
        _rnea_kernel(w.tree, q, v, a, gravity_on, False, w.poses, w.spatial, w.dofs[0])  # q, v, a: 'A' already
        if overflowed(w.dofs[0]):  # finite inputs too large: the general path raises
            return BAD_SHAPE
    return st


@njit(cache=True)  # keeps the GIL: see _compiled (fast paths)
def crba_fast(handle, q):
    """:func:`crba_kernel` on the workspace behind a ``Data.handle`` after
    :func:`q_status`; H in ``M``."""
    w = handle_workspace(handle)
    if q.shape[0] != w.nq or not owned(handle):  # a foreign thread: the caller raises
        return BAD_SHAPE
    if not allocated(handle, SLOT_M):
        return NEEDS_MATRIX
    st = q_status(w.tree, q)
    if st == 0:
        _crba_kernel(w.tree, w.lam, q, w.poses, w.jac, w.inertia6, w.M)  # q: 'A' already
        if diagonal_overflowed(w.M):  # the general path raises
            return BAD_SHAPE
    return st


@njit(cache=True)  # keeps the GIL: see _compiled (fast paths)
def aba_fast(handle, q, v, tau, gravity_on):
    """:func:`aba_checked` on the workspace behind a ``Data.handle``; q̈ in ``dofs[1]``."""
    w = handle_workspace(handle)
    if q.shape[0] != w.nq or v.shape[0] != w.nv or tau.shape[0] != w.nv or not owned(handle):
        return BAD_SHAPE
    st = state_status(w.tree, q, v, tau)  # aba_checked written out: one call level fewer
    if st == 0:
        b = _aba_kernel(w.tree, q, v, tau, gravity_on, False, w.poses, w.jac, w.spatial, w.inertia6, w.U, w.Dinv,
                        w.dofs)  # q, v, tau: 'A' already
        if b:
            return -ARG - b
        if overflowed(w.dofs[1]):  # the general path raises
            return BAD_SHAPE
    return st


@njit(cache=True)  # keeps the GIL: see _compiled (fast paths)
def fd_crba_fast(handle, q, v, tau, gravity_on):
    """:func:`fd_crba_checked` on the workspace behind a ``Data.handle``; q̈ in ``dofs[1]``."""
    w = handle_workspace(handle)
    if q.shape[0] != w.nq or v.shape[0] != w.nv or tau.shape[0] != w.nv or not owned(handle):
        return BAD_SHAPE
    if not allocated(handle, SLOT_M) or not allocated(handle, SLOT_L):
        return NEEDS_MATRIX
    st = fd_crba_checked(w.tree, w.lam, q, v, tau, gravity_on, w.poses, w.jac, w.spatial, w.inertia6, w.M, w.L,
                         w.dofs[1])
    if st == 0 and overflowed(w.dofs[1]):  # the general path raises
        return BAD_SHAPE
    return st


# ----------------------------------------------------------------- batches
@njit(cache=True, nogil=True)
def _ws(nb, nv):
    poses = np.zeros((2, nb, 4, 4))
    for k in range(2):
        for i in range(nb):
            for r in range(4):
                poses[k, i, r, r] = 1.0
    return (poses, np.zeros((3, 6, nv)), np.zeros((4, nb, 6)), np.zeros((nb, 6, 6)), np.zeros((6, nv)),
            np.zeros((nv, 6)), np.zeros((4, nv)))


@njit(cache=True, nogil=True, parallel=True)
def rnea_batch(tree, q, v, a, gravity_on, fext, fext_on, out):
    nb = tree.shape[0]
    B = q.shape[0]
    n = chunk_count(B)
    for c in prange(n):  # one workspace per chunk, not per state
        poses, jac, spatial, inertia6, U, Dinv, dofs = _ws(nb, v.shape[1])
        for b in range(c * B // n, (c + 1) * B // n):
            if fext_on:
                spatial[2] = fext[b]
            rnea_kernel(tree, q[b], v[b], a[b], gravity_on, fext_on, poses, spatial, out[b])


@njit(cache=True, nogil=True, parallel=True)
def crba_batch(tree, lam, q, out):
    nb = tree.shape[0]
    B = q.shape[0]
    n = chunk_count(B)
    for c in prange(n):
        poses, jac, spatial, inertia6, U, Dinv, dofs = _ws(nb, out.shape[1])
        for b in range(c * B // n, (c + 1) * B // n):
            crba_kernel(tree, lam, q[b], poses, jac, inertia6, out[b])


@njit(cache=True, nogil=True, parallel=True)
def aba_batch(tree, q, v, tau, gravity_on, fext, fext_on, out, status):
    nb = tree.shape[0]
    B = q.shape[0]
    n = chunk_count(B)
    for c in prange(n):
        poses, jac, spatial, inertia6, U, Dinv, dofs = _ws(nb, v.shape[1])
        for b in range(c * B // n, (c + 1) * B // n):
            if fext_on:
                spatial[2] = fext[b]
            status[b] = aba_kernel(tree, q[b], v[b], tau[b], gravity_on, fext_on, poses, jac, spatial,
                                   inertia6, U, Dinv, dofs)
            out[b] = dofs[1]


@njit(cache=True, nogil=True)
def fd_crba_kernel(tree, lam, q, v, tau, gravity_on, fext_on, poses, jac, spatial, inertia6, M, L, out):
    """Forward dynamics by CRBA + sparse LᵀDL (Featherstone §6.5):
    ``q̈ = H⁻¹(τ − C)`` with ``C`` from RNEA at q̈ = 0. ``M`` receives H,
    ``L`` its in-place factor. Returns the LᵀDL status (0 = success)."""
    zero = np.zeros(v.shape[0])
    rnea_kernel(tree, q, v, zero, gravity_on, fext_on, poses, spatial, out)
    for k in range(out.shape[0]):
        out[k] = tau[k] - out[k]
    crba_kernel(tree, lam, q, poses, jac, inertia6, M)
    for r in range(M.shape[0]):
        for c in range(M.shape[0]):
            L[r, c] = M[r, c]
    st = ltdl_kernel(lam, L)
    if st == 0:
        ltdl_solve(lam, L, out)
    return st


@njit(cache=True, nogil=True)
def fd_crba_checked(tree, lam, q, v, tau, gravity_on, poses, jac, spatial, inertia6, M, L, out):
    """:func:`fd_crba_kernel` (no external forces) after validating q, v, tau;
    returns the state status, or ``-ARG - k - 1`` for a non-positive pivot at k."""
    st = state_status(tree, q, v, tau)
    if st == 0:
        f = fd_crba_kernel(tree, lam, q, v, tau, gravity_on, False, poses, jac, spatial, inertia6, M, L, out)
        if f:
            return -ARG - f
    return st


@njit(cache=True, nogil=True, parallel=True)
def fd_crba_batch(tree, lam, q, v, tau, gravity_on, fext, fext_on, out, status):
    nb = tree.shape[0]
    nv = v.shape[1]
    B = q.shape[0]
    n = chunk_count(B)
    for c in prange(n):
        poses, jac, spatial, inertia6, U, Dinv, dofs = _ws(nb, nv)
        M = np.empty((nv, nv))
        L = np.empty((nv, nv))
        for b in range(c * B // n, (c + 1) * B // n):
            if fext_on:
                spatial[2] = fext[b]
            status[b] = fd_crba_kernel(tree, lam, q[b], v[b], tau[b], gravity_on, fext_on, poses, jac, spatial,
                                       inertia6, M, L, out[b])


@njit(cache=True, nogil=True)
def inverse_inertia_kernel(lam, L, Minv):
    """``Minv = H⁻¹`` from the in-place LᵀDL factor: ``H⁻¹ = L⁻¹ D⁻¹ L⁻ᵀ``.
    Column c of ``L⁻ᵀ`` is nonzero only on c and its ancestors, so each
    column costs O(depth) before the final O(nnz) sweep with ``L⁻¹``. H⁻¹ is
    symmetric, so column c is written as row c (contiguous)."""
    n = L.shape[0]
    for c in range(n):
        for r in range(n):
            Minv[c, r] = 0.0
        Minv[c, c] = 1.0
        i = c  # L⁻ᵀ e_c: only c and its ancestors are touched, deepest first
        while i >= 0:
            j = lam[i]
            while j >= 0:
                Minv[c, j] -= L[i, j] * Minv[c, i]
                j = lam[j]
            i = lam[i]
    for c in range(n):
        for r in range(n):
            Minv[c, r] /= L[r, r]
        for i in range(n):  # L⁻¹
            j = lam[i]
            while j >= 0:
                Minv[c, i] -= L[i, j] * Minv[c, j]
                j = lam[j]


@njit(cache=True, nogil=True)
def minv_kernel(tree, lam, q, poses, jac, inertia6, M, Minv):
    """``Minv = H(q)⁻¹``: CRBA, the in-place sparse LᵀDL of a copy (in
    ``M``), and :func:`inverse_inertia_kernel`. Returns the LᵀDL status."""
    crba_kernel(tree, lam, q, poses, jac, inertia6, M)
    st = ltdl_kernel(lam, M)
    if st == 0:
        inverse_inertia_kernel(lam, M, Minv)
    return st


@njit(cache=True, nogil=True)
def kinetic_gradient_kernel(tree, q, v, poses, spatial, out):
    """:func:`kinetic_gradient_posed` after the forward kinematics at q."""
    fk_kernel(tree, q, poses)
    kinetic_gradient_posed(tree, q, v, poses, spatial, out)


@njit(cache=True, nogil=True)
def kinetic_gradient_posed(tree, q, v, poses, spatial, out):
    """``out = ∂T/∂q`` at fixed v, ``T = ½ vᵀH(q)v`` (= ½ vᵀ (∂H/∂q) v),
    for joints whose coordinates move the child frame along constant
    child-frame subspace columns that commute (q̇ = v: revolute, prismatic,
    helical, cylindrical, translational). Perturbing q_k moves every body
    of the subtree rigidly by S_k, so (body coordinates of joint i, derived
    from T = ½ Σ v_bᵀ I_b v_b)
    ``∂T/∂q_k = −S_kᵀ (v_λ(i) ×* h_sub(i))`` with v_λ the parent's velocity
    and h_sub the spatial momentum of the subtree. ``spatial[0]`` gets the
    body velocities, ``[1]`` the parent velocities, ``[2]`` the subtree
    momenta (body coordinates). ``poses`` already holds the poses at q (a
    caller iterating on v at fixed q runs the kinematics once)."""
    nb = tree.shape[0]
    for r in range(6):
        spatial[0, 0, r] = 0.0
    for i in range(1, nb):
        p = int(tree[i, C_PARENT])
        iv = int(tree[i, C_V])
        vp = to_child(poses, 1, i, spatial[0, p, 0], spatial[0, p, 1], spatial[0, p, 2],
                      spatial[0, p, 3], spatial[0, p, 4], spatial[0, p, 5])
        w0, w1, w2, u0, u1, u2 = vp
        for k in range(int(tree[i, C_NV])):
            s0, s1, s2, s3, s4, s5 = subspace_column(tree, i, q, k)
            qd = v[iv + k]
            w0 += s0 * qd
            w1 += s1 * qd
            w2 += s2 * qd
            u0 += s3 * qd
            u1 += s4 * qd
            u2 += s5 * qd
        spatial[0, i, 0], spatial[0, i, 1], spatial[0, i, 2] = w0, w1, w2
        spatial[0, i, 3], spatial[0, i, 4], spatial[0, i, 5] = u0, u1, u2
        for r in range(6):
            spatial[1, i, r] = vp[r]
        h = inertia_times(tree, i, w0, w1, w2, u0, u1, u2)
        for r in range(6):
            spatial[2, i, r] = h[r]
    for i in range(nb - 1, 0, -1):
        iv = int(tree[i, C_V])
        n0, n1, n2 = spatial[2, i, 0], spatial[2, i, 1], spatial[2, i, 2]
        f0, f1, f2 = spatial[2, i, 3], spatial[2, i, 4], spatial[2, i, 5]
        x = cross_force(spatial[1, i, 0], spatial[1, i, 1], spatial[1, i, 2], spatial[1, i, 3],
                        spatial[1, i, 4], spatial[1, i, 5], n0, n1, n2, f0, f1, f2)
        for k in range(int(tree[i, C_NV])):
            s0, s1, s2, s3, s4, s5 = subspace_column(tree, i, q, k)
            out[iv + k] = -(s0 * x[0] + s1 * x[1] + s2 * x[2] + s3 * x[3] + s4 * x[4] + s5 * x[5])
        p = int(tree[i, C_PARENT])
        if p > 0:
            fp = force_to_parent(poses, 1, i, n0, n1, n2, f0, f1, f2)
            for r in range(6):
                spatial[2, p, r] += fp[r]
