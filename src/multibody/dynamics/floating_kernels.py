"""Compiled floating-base kernels (Featherstone §9.3–9.5): the
floating-base articulated-body algorithm (Table 9.4) and floating-base
inverse dynamics (Table 9.6).

The model's body 1 is the floating base, attached to the world by a free
joint whose velocity ``v[0:6] = [ω; v]`` is the base's spatial velocity in
**base coordinates** (Featherstone's choice ``S_1 = 1₆`` in floating-base
coordinates, §9.3), so ``q̈[0:6]`` is the base's spatial acceleration
``a_0`` in base coordinates. Every other body descends from the base.

Both kernels work in **floating-base coordinates**: one fixed frame that
coincides with the base frame at the current instant. Poses ``poses[0, i]``
are then relative to the base (``ᵇX_i``), so the result does not depend on
how far the base is from the world origin (the round-off source of
§10.1), and, as in world coordinates, composite and articulated inertias
add without congruence transforms. The gravity vector enters in base
coordinates, ``ᵇa_g = [0; R_bᵀ g]``, and the external forces are mapped from
the body frames to the base frame.
"""
import numpy as np
from numba import njit, prange

from .._status import ARG, NOT_FLOATING
from ..kinematics.kernels import set_world_pose, world_inertia_into
from ..model.joints import (C_ARMATURE, C_GRAVITY, C_NV, C_PARENT, C_Q, C_TYPE, C_V, FREE, REVOLUTE, VARYING_SUBSPACE,
                            joint_bias, joint_transform, set_local_pose, set_revolute_pose, subspace_column)
from ..spatial.kernel_algebra import cross_force, cross_motion, force_to_parent, to_parent
from .hybrid_kernels import workspace
from .kernels import articulated_init, articulated_to_parent, invert_spd_block, state_status


@njit(cache=True, nogil=True)
def base_motion_pass(tree, q, v, poses, jac, spatial):
    """Forward pass in floating-base coordinates (the base frame frozen at
    this instant): ``poses[1, i]`` = pose of body i in its parent (so
    ``poses[1, 1]`` is the base's world pose), ``poses[0, i]`` = pose of body
    i in the base frame (``poses[0, 1]`` = identity), ``jac[1]`` = motion
    subspaces in base coordinates, ``spatial[0]`` = body velocities and
    ``spatial[3] = v_i × (S q̇) + ᵇX_i c_J`` the velocity-product
    accelerations (Table 9.4, pass 1), all in base coordinates."""
    for r in range(6):
        spatial[0, 0, r] = 0.0
        spatial[3, 0, r] = 0.0
    for i in range(1, tree.shape[0]):
        jt = int(tree[i, C_TYPE])
        if jt == REVOLUTE:
            set_revolute_pose(tree, i, q[int(tree[i, C_Q])], poses)
        else:
            set_local_pose(tree, i, joint_transform(jt, tree, i, q, int(tree[i, C_Q])), poses)
        if i == 1:
            for r in range(4):
                for c in range(4):
                    poses[0, 1, r, c] = 1.0 if r == c else 0.0
        else:
            set_world_pose(tree, i, poses)
        # the same per-body step as kernels.world_motion_pass, written out on purpose: a shared
        # helper (even inline="always") made ABA 19% slower on Talos (measured)
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
def base_gravity(tree, poses, gravity_on):
    """``R_bᵀ g``: the gravity acceleration in base coordinates (3 scalars)."""
    if not gravity_on:
        return 0.0, 0.0, 0.0
    g0, g1, g2 = tree[0, C_GRAVITY], tree[0, C_GRAVITY + 1], tree[0, C_GRAVITY + 2]
    return (poses[1, 1, 0, 0] * g0 + poses[1, 1, 1, 0] * g1 + poses[1, 1, 2, 0] * g2,
            poses[1, 1, 0, 1] * g0 + poses[1, 1, 1, 1] * g1 + poses[1, 1, 2, 1] * g2,
            poses[1, 1, 0, 2] * g0 + poses[1, 1, 1, 2] * g1 + poses[1, 1, 2, 2] * g2)


@njit(cache=True, nogil=True)
def fb_aba_kernel(tree, q, v, tau, gravity_on, fext_on, poses, jac, spatial, inertia6, U, Dinv, dofs):
    """Floating-base articulated-body algorithm (Featherstone Table 9.4) in
    floating-base coordinates. ``tau`` has nv entries (``tau[0:6]`` a wrench
    [n; f] applied to the base through its joint, base coordinates, and
    ``tau[6:]`` the joint forces) or nv−6 (the joint forces; no force on the
    base joint). Writes ``q̈`` to ``dofs[1]``: ``q̈[0:6]`` =
    base spatial acceleration (base coordinates, gravity included),
    ``q̈[6:]`` = joint accelerations. ``spatial[2]`` holds the external forces
    (body frames) on entry when ``fext_on``. Returns 0 or the index of the
    first body with a singular articulated inertia.

    Gravity is left out of the passes and added to a_0 at the end (relative
    accelerations do not depend on a uniform field, §9.4). Armature on the
    free joint (a rotor inertia on the base coordinates, not moved by
    gravity) is honoured exactly: ``(I₀ᴬ + A)(a_0 − a_g) = τ_0 − p₀ᴬ − A a_g``."""
    nb = tree.shape[0]
    sh = v.shape[0] - tau.shape[0]  # 0, or 6 when tau holds the joint forces only
    base_motion_pass(tree, q, v, poses, jac, spatial)
    S = jac[1]
    ap = np.empty(6)
    # pass 1: Iᴬ = I, pᴬ = v ×* I v − f_ext (base coordinates), base included
    articulated_init(tree, poses, spatial, inertia6, fext_on)
    # pass 2 over the joints of the tree (bodies 2..), accumulating into the
    # base too (no λ(i) ≠ 0 guard, Table 9.4)
    D = np.empty((6, 6))
    Ia = np.empty((6, 6))
    UD = np.empty((6, 6))
    pa = np.empty(6)
    scratch = np.empty((2, 6, 6))
    for i in range(nb - 1, 1, -1):
        iv = int(tree[i, C_V])
        n = int(tree[i, C_NV])
        p = int(tree[i, C_PARENT])
        if n == 0:  # fixed joint: rigidly part of the parent
            for r in range(6):
                spatial[2, p, r] += spatial[2, i, r]
                for c in range(6):
                    inertia6[p, r, c] += inertia6[i, r, c]
            continue
        if n == 1:
            # the common case written out: U = Iᴬs, D = sᵀU, Iᵃ = Iᴬ − U Uᵀ/D, pᵃ = pᴬ + Iᵃc + U u/D
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
            u = tau[iv - sh] - (s0 * spatial[2, i, 0] + s1 * spatial[2, i, 1] + s2 * spatial[2, i, 2]
                           + s3 * spatial[2, i, 3] + s4 * spatial[2, i, 4] + s5 * spatial[2, i, 5])
            dofs[2, iv] = u
            ud = u * dinv
            for r in range(6):
                ur = U[r, iv] * dinv
                x = spatial[2, i, r] + U[r, iv] * ud
                for c in range(6):
                    y = inertia6[i, r, c] - ur * U[c, iv]
                    inertia6[p, r, c] += y
                    x += y * spatial[3, i, c]
                spatial[2, p, r] += x
            continue
        for k in range(n):
            for r in range(6):
                U[r, iv + k] = (inertia6[i, r, 0] * S[0, iv + k] + inertia6[i, r, 1] * S[1, iv + k]
                                + inertia6[i, r, 2] * S[2, iv + k] + inertia6[i, r, 3] * S[3, iv + k]
                                + inertia6[i, r, 4] * S[4, iv + k] + inertia6[i, r, 5] * S[5, iv + k])
        for k in range(n):
            u = tau[iv + k - sh]
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
        articulated_to_parent(i, p, iv, n, U, Dinv, inertia6, spatial, dofs, UD, Ia, pa)
    # the base: a_0 = (I₀ᴬ + A)⁻¹ (τ_0 − p₀ᴬ − A a_g), then + a_g at the end
    ag3, ag4, ag5 = base_gravity(tree, poses, gravity_on)
    for r in range(6):
        for c in range(6):
            D[r, c] = inertia6[1, r, c]
        D[r, r] += tree[1, C_ARMATURE + r]
    if not invert_spd_block(D, 6, Dinv, 0, scratch):
        return 1
    for r in range(6):
        x = (tau[r] if sh == 0 else 0.0) - spatial[2, 1, r]
        if r == 3:
            x -= tree[1, C_ARMATURE + 3] * ag3
        elif r == 4:
            x -= tree[1, C_ARMATURE + 4] * ag4
        elif r == 5:
            x -= tree[1, C_ARMATURE + 5] * ag5
        pa[r] = x
    for r in range(6):
        x = 0.0
        for c in range(6):
            x += Dinv[r, c] * pa[c]
        spatial[1, 1, r] = x
    # pass 3 (gravity-free accelerations)
    for i in range(2, nb):
        p = int(tree[i, C_PARENT])
        iv = int(tree[i, C_V])
        n = int(tree[i, C_NV])
        for r in range(6):
            ap[r] = spatial[1, p, r] + spatial[3, i, r]
        for k in range(n):
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
    for r in range(3):
        dofs[1, r] = spatial[1, 1, r]
    dofs[1, 3] = spatial[1, 1, 3] + ag3
    dofs[1, 4] = spatial[1, 1, 4] + ag4
    dofs[1, 5] = spatial[1, 1, 5] + ag5
    return 0


@njit(cache=True, nogil=True)
def fb_id_kernel(tree, q, v, qdd, gravity_on, fext_on, poses, jac, spatial, inertia6, Dinv, dofs):
    """Floating-base inverse dynamics (Featherstone §9.5, Table 9.6) in
    floating-base coordinates: given the joint accelerations ``qdd`` (nv−6
    entries, coordinates 6..nv−1) and no force on the base joint, writes the
    base acceleration and the joint accelerations to ``dofs[1]`` (``[a_0;
    qdd]``, a_0 in base coordinates with gravity) and the joint forces
    to ``dofs[0]`` (``dofs[0, 0:6]`` = 0). ``spatial[2]`` holds the external
    forces (body frames) on entry when ``fext_on``; on exit it holds the
    composite bias forces ``p_iᶜ`` and ``inertia6`` the composite inertias
    ``I_iᶜ`` (base coordinates). Returns 0, or 1 if ``I_0ᶜ`` is singular.

    Pass 1: ``a_0ʳ = −a_g``, ``a_iʳ = a_λʳ + c_i + S_i q̈_i``,
    ``p_iᶜ = I_i a_iʳ + v_i ×* I_i v_i − f_iˣ``; pass 2: ``I_λᶜ += I_iᶜ``,
    ``p_λᶜ += p_iᶜ``; pass 3: ``a_0 = −(I_0ᶜ + A)⁻¹ p_0ᶜ`` and
    ``τ_i = S_iᵀ(I_iᶜ a_0 + p_iᶜ) + A_i q̈_i`` (A: armature)."""
    nb = tree.shape[0]
    base_motion_pass(tree, q, v, poses, jac, spatial)
    S = jac[1]
    ag3, ag4, ag5 = base_gravity(tree, poses, gravity_on)
    for r in range(3):
        spatial[1, 1, r] = 0.0
    spatial[1, 1, 3], spatial[1, 1, 4], spatial[1, 1, 5] = -ag3, -ag4, -ag5
    Iv = np.empty(6)
    for i in range(1, nb):
        iv = int(tree[i, C_V])
        if i > 1:
            p = int(tree[i, C_PARENT])
            for r in range(6):
                x = spatial[1, p, r] + spatial[3, i, r]
                for k in range(iv, iv + int(tree[i, C_NV])):
                    x += S[r, k] * qdd[k - 6]
                spatial[1, i, r] = x
        world_inertia_into(tree, i, poses, inertia6)
        w0, w1, w2 = spatial[0, i, 0], spatial[0, i, 1], spatial[0, i, 2]
        w3, w4, w5 = spatial[0, i, 3], spatial[0, i, 4], spatial[0, i, 5]
        for r in range(6):
            Iv[r] = (inertia6[i, r, 0] * w0 + inertia6[i, r, 1] * w1 + inertia6[i, r, 2] * w2
                     + inertia6[i, r, 3] * w3 + inertia6[i, r, 4] * w4 + inertia6[i, r, 5] * w5)
        y = cross_force(w0, w1, w2, w3, w4, w5, Iv[0], Iv[1], Iv[2], Iv[3], Iv[4], Iv[5])
        if fext_on:
            fw = force_to_parent(poses, 0, i, spatial[2, i, 0], spatial[2, i, 1], spatial[2, i, 2],
                                 spatial[2, i, 3], spatial[2, i, 4], spatial[2, i, 5])
        else:
            fw = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
        for r in range(6):
            spatial[2, i, r] = (inertia6[i, r, 0] * spatial[1, i, 0] + inertia6[i, r, 1] * spatial[1, i, 1]
                                + inertia6[i, r, 2] * spatial[1, i, 2] + inertia6[i, r, 3] * spatial[1, i, 3]
                                + inertia6[i, r, 4] * spatial[1, i, 4] + inertia6[i, r, 5] * spatial[1, i, 5]
                                + y[r] - fw[r])
    for i in range(nb - 1, 1, -1):
        p = int(tree[i, C_PARENT])
        for r in range(6):
            spatial[2, p, r] += spatial[2, i, r]
            for c in range(6):
                inertia6[p, r, c] += inertia6[i, r, c]
    D = np.empty((6, 6))
    scratch = np.empty((2, 6, 6))
    for r in range(6):
        for c in range(6):
            D[r, c] = inertia6[1, r, c]
        D[r, r] += tree[1, C_ARMATURE + r]
    if not invert_spd_block(D, 6, Dinv, 0, scratch):
        return 1
    a0 = np.empty(6)
    for r in range(6):
        x = 0.0
        for c in range(6):
            x -= Dinv[r, c] * spatial[2, 1, c]
        a0[r] = x
        dofs[1, r] = x
        dofs[0, r] = 0.0
    for i in range(2, nb):
        iv = int(tree[i, C_V])
        n = int(tree[i, C_NV])
        if n == 0:
            continue
        for r in range(6):
            Iv[r] = (inertia6[i, r, 0] * a0[0] + inertia6[i, r, 1] * a0[1] + inertia6[i, r, 2] * a0[2]
                     + inertia6[i, r, 3] * a0[3] + inertia6[i, r, 4] * a0[4] + inertia6[i, r, 5] * a0[5]
                     + spatial[2, i, r])
        for k in range(n):
            l = iv + k
            x = tree[i, C_ARMATURE + k] * qdd[l - 6]
            for r in range(6):
                x += S[r, l] * Iv[r]
            dofs[0, l] = x
            dofs[1, l] = qdd[l - 6]
    return 0


@njit(cache=True, nogil=True)
def is_floating(tree):
    """True if joint 1 is a free joint from the world and every other body
    descends from body 1 (regular numbering: its parent is not the world)."""
    if tree.shape[0] < 2 or int(tree[1, C_TYPE]) != FREE or int(tree[1, C_PARENT]) != 0:
        return False
    for i in range(2, tree.shape[0]):
        if int(tree[i, C_PARENT]) == 0:
            return False
    return True


@njit(cache=True, nogil=True)
def fb_aba_checked(tree, q, v, tau, gravity_on, poses, jac, spatial, inertia6, U, Dinv, dofs):
    """:func:`fb_aba_kernel` (no external forces) after validating the model
    (``NOT_FLOATING``) and the state (``state_status`` codes) in the same
    call; ``−ARG − body`` for a singular articulated inertia."""
    if not is_floating(tree):
        return NOT_FLOATING
    st = state_status(tree, q, v, tau)
    if st != 0:
        return st
    b = fb_aba_kernel(tree, q, v, tau, gravity_on, False, poses, jac, spatial, inertia6, U, Dinv, dofs)
    if b:
        return -ARG - b
    return 0


@njit(cache=True, nogil=True)
def fb_id_checked(tree, q, v, qdd, gravity_on, poses, jac, spatial, inertia6, Dinv, dofs):
    """:func:`fb_id_kernel` (no external forces) after validating the model
    and the state in the same call (codes as :func:`fb_aba_checked`)."""
    if not is_floating(tree):
        return NOT_FLOATING
    st = state_status(tree, q, v, qdd)
    if st != 0:
        return st
    if fb_id_kernel(tree, q, v, qdd, gravity_on, False, poses, jac, spatial, inertia6, Dinv, dofs):
        return -ARG - 1
    return 0


@njit(cache=True, nogil=True, parallel=True)
def fb_aba_batch(tree, q, v, tau, gravity_on, fext, fext_on, out, status):
    nb = tree.shape[0]
    for b in prange(q.shape[0]):
        poses, jac, spatial, inertia6, U, Dinv, dofs = workspace(nb, v.shape[1])
        if fext_on:
            spatial[2] = fext[b]
        status[b] = fb_aba_kernel(tree, q[b], v[b], tau[b], gravity_on, fext_on, poses, jac, spatial, inertia6,
                                  U, Dinv, dofs)
        out[b] = dofs[1]


@njit(cache=True, nogil=True, parallel=True)
def fb_id_batch(tree, q, v, qdd, gravity_on, fext, fext_on, qdd_out, tau_out, status):
    nb = tree.shape[0]
    for b in prange(q.shape[0]):
        poses, jac, spatial, inertia6, U, Dinv, dofs = workspace(nb, v.shape[1])
        if fext_on:
            spatial[2] = fext[b]
        status[b] = fb_id_kernel(tree, q[b], v[b], qdd[b], gravity_on, fext_on, poses, jac, spatial, inertia6,
                                 Dinv, dofs)
        qdd_out[b] = dofs[1]
        tau_out[b] = dofs[0]
