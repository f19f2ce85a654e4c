"""Compiled analytic derivatives of inverse and forward dynamics
(Carpentier & Mansard, *Analytical Derivatives of Rigid Body Dynamics
Algorithms*, RSS 2018; Pinocchio's ``computeRNEADerivatives`` /
``computeABADerivatives``; derivation in ``shared/notes/derivatives.md``
§1–§2 and docs/derivatives.md).

Everything is in **world coordinates**, angular first. With ⁰Xᵢ the world
pose of body i, ``Sᵢ = Ad(⁰Xᵢ) Sᵢᴶ`` (6 x nᵢ), the world spatial inertia
``Yᵢ``, and a configuration perturbed on the tangent space
(``q ⊕ ε e_k``, the body-frame twist of ``Model.integrate``), every body of
the subtree of joint j moves rigidly by the twist ``S_k`` (k a column of
joint j), so ``∂S_d/∂q_k = S_k × S_d`` for every column d below k
(and, for joints whose ``Sᴶ`` is constant in the child frame, for the other
columns of joint j too). The forward pass stores per column (``blocks``):

* ``S``  world motion subspace,
* ``Ψ̇ = v_λ × S``           (∂v/∂q beyond the rigid motion; PR #770: the
  parent's velocity, not the body's),
* ``Ψ̈ = a_λ × S + v_λ × Ψ̇``,
* ``Γ = (vᵢ + v_λ) × S``     (∂a/∂q̇),

and per body the composite ``Yᶜ`` and ``Bᶜ = (v×*)Y − Y(v×) + (h ×̄*)``
(``h = Y v``) and the force ``fᶜ``. The backward pass forms per column
``F = Yᶜ S``, ``G = Bᶜᵀ S``, ``Q = Yᶜ Ψ̈ + Bᶜ Ψ̇``, ``R = Yᶜ Γ + Bᶜ S`` and
writes, for joint i and every column d of its subtree,
``∂τᵢ/∂q_d = Sᵢᵀ Q_d``, ``∂τᵢ/∂q̇_d = Sᵢᵀ R_d``, ``M[i, d] = Sᵢᵀ F_d`` and,
for d strictly below, ``∂τ_d/∂qᵢ = F_dᵀ Ψ̈ᵢ + G_dᵀ Ψ̇ᵢ``,
``∂τ_d/∂q̇ᵢ = F_dᵀ Γᵢ + G_dᵀ Sᵢ``; then ``Qᵢ += Sᵢ ×* fᶜᵢ`` (seen by the
ancestors only). Cost O(nv · depth) entries and O(n) 6x6 work.

Joints whose motion subspace varies in the child frame (universal and
Sueda's joints, ``VARYING_SUBSPACE`` on; Pinocchio's own derivatives are
wrong there, notes §6) add, for each of their columns k (derived in
docs/derivatives.md, "Joints with a varying subspace"): with
``∂ₖSᴶ = ∂Sᴶ/∂q_k = Ṡᴶ(q, e_k)`` (Ṡᴶ is linear in q̇ = v),
``cᴶ = Ṡᴶ(q, q̇) q̇``, ``e = Ad(∂ₖSᴶ q̇ᵢ)``:
``Ψ̇_k += e``, ``Ψ̈_k += Ad(∂ₖSᴶ q̈ᵢ + ∂cᴶ/∂q_k) + (vᵢ + v_λ) × e``,
``Γ_k += Ad(∂ₖSᴶ q̇ᵢ + Ṡᴶ(q, q̇) e_k)``, and on the joint's own rows
``∂τ_l/∂q_k += (Ad ∂ₖSᴶ_l)ᵀ fᶜᵢ``. ``∂cᴶ/∂q_k`` is closed form for the
universal joint; for Sueda's joints (exp_spherical and after) it is a
central difference of that one joint's ``cᴶ`` (h = 6e-6, relative error
~1e-10), the only numerical step of the algorithm.
"""
import numpy as np
from numba import carray, njit, prange

from .._compiled import BAD_SHAPE, chunk_count, diagonal_overflowed, f64_pointer, i64_pointer, overflowed
from .._status import ARG
from ..kinematics.kernels import fk_kernel, world_inertia_into
from ..model.data import handle_workspace, owned
from ..model.joints import (C_ARMATURE, C_AX2, C_GRAVITY, C_NV, C_PARENT, C_Q, C_TYPE, C_V, UNIVERSAL,
                            VARYING_SUBSPACE, joint_bias, subspace_column, subspace_rate_into)
from ..spatial.kernel_algebra import cross_force, cross_motion, force_to_parent, to_parent
from .kernels import _ws, aba_kernel, inverse_inertia_kernel, ltdl_kernel, state_status
from .minv_kernels import minv_aba_kernel, minv_workspace

# blocks (8, 6, nv): per velocity column
B_S, B_DV, B_DA, B_GAM, B_F, B_G, B_Q, B_R = 0, 1, 2, 3, 4, 5, 6, 7
N_BLOCKS = 8
LTDL_NV = 24  # up to this many coordinates, M⁻¹ of the ABA derivatives by LᵀDL (aba_derivatives_kernel)
H_SUEDA = 6e-6  # step of the central difference of a Sueda joint's c_J (cube root of machine epsilon)


@njit(cache=True, nogil=True)
def derivative_workspace(nb, nq, nv):
    """The arrays of :func:`rnea_derivatives_kernel`: ``(poses, blocks, Yb,
    vec, idx, scratch)``."""
    poses = np.zeros((2, nb, 4, 4))
    for k in range(2):
        for i in range(nb):
            for r in range(4):
                poses[k, i, r, r] = 1.0
    return (poses, np.zeros((N_BLOCKS, 6, nv)), np.zeros((2, nb, 6, 6)), np.zeros((3, nb, 6)),
            np.zeros(nb, dtype=np.int64), np.zeros(2 * nv + nq + 72))


@njit(cache=True, nogil=True, inline="always")
def _mat6_vec(A, i, x0, x1, x2, x3, x4, x5):
    """``A[i] x`` (A[i] 6x6) as 6 scalars."""
    return (A[i, 0, 0] * x0 + A[i, 0, 1] * x1 + A[i, 0, 2] * x2 + A[i, 0, 3] * x3 + A[i, 0, 4] * x4 + A[i, 0, 5] * x5,
            A[i, 1, 0] * x0 + A[i, 1, 1] * x1 + A[i, 1, 2] * x2 + A[i, 1, 3] * x3 + A[i, 1, 4] * x4 + A[i, 1, 5] * x5,
            A[i, 2, 0] * x0 + A[i, 2, 1] * x1 + A[i, 2, 2] * x2 + A[i, 2, 3] * x3 + A[i, 2, 4] * x4 + A[i, 2, 5] * x5,
            A[i, 3, 0] * x0 + A[i, 3, 1] * x1 + A[i, 3, 2] * x2 + A[i, 3, 3] * x3 + A[i, 3, 4] * x4 + A[i, 3, 5] * x5,
            A[i, 4, 0] * x0 + A[i, 4, 1] * x1 + A[i, 4, 2] * x2 + A[i, 4, 3] * x3 + A[i, 4, 4] * x4 + A[i, 4, 5] * x5,
            A[i, 5, 0] * x0 + A[i, 5, 1] * x1 + A[i, 5, 2] * x2 + A[i, 5, 3] * x3 + A[i, 5, 4] * x4 + A[i, 5, 5] * x5)


@njit(cache=True, nogil=True, inline="always")
def _mat6t_vec(A, i, x0, x1, x2, x3, x4, x5):
    """``A[i]ᵀ x`` as 6 scalars."""
    return (A[i, 0, 0] * x0 + A[i, 1, 0] * x1 + A[i, 2, 0] * x2 + A[i, 3, 0] * x3 + A[i, 4, 0] * x4 + A[i, 5, 0] * x5,
            A[i, 0, 1] * x0 + A[i, 1, 1] * x1 + A[i, 2, 1] * x2 + A[i, 3, 1] * x3 + A[i, 4, 1] * x4 + A[i, 5, 1] * x5,
            A[i, 0, 2] * x0 + A[i, 1, 2] * x1 + A[i, 2, 2] * x2 + A[i, 3, 2] * x3 + A[i, 4, 2] * x4 + A[i, 5, 2] * x5,
            A[i, 0, 3] * x0 + A[i, 1, 3] * x1 + A[i, 2, 3] * x2 + A[i, 3, 3] * x3 + A[i, 4, 3] * x4 + A[i, 5, 3] * x5,
            A[i, 0, 4] * x0 + A[i, 1, 4] * x1 + A[i, 2, 4] * x2 + A[i, 3, 4] * x3 + A[i, 4, 4] * x4 + A[i, 5, 4] * x5,
            A[i, 0, 5] * x0 + A[i, 1, 5] * x1 + A[i, 2, 5] * x2 + A[i, 3, 5] * x3 + A[i, 4, 5] * x4 + A[i, 5, 5] * x5)


@njit(cache=True, nogil=True)
def _varying_extras(tree, i, q, v, a, poses, blocks, vec, scratch, backward, dq):
    """The terms of a joint whose motion subspace varies in the child frame
    (module docstring). Forward (``backward`` False): adds to Ψ̇, Ψ̈ and Γ of
    the joint's columns. Backward: adds ``(Ad ∂ₖSᴶ_l)ᵀ fᶜᵢ`` to the joint's
    own rows of ``dq``. Out of line: called once per such joint."""
    nv = v.shape[0]
    nq = q.shape[0]
    iv = int(tree[i, C_V])
    iq = int(tree[i, C_Q])
    n = int(tree[i, C_NV])
    p = int(tree[i, C_PARENT])
    jt = int(tree[i, C_TYPE])
    ek = scratch[0:nv]
    qh = scratch[nv:nv + nq]
    Sd = scratch[2 * nv + nq:2 * nv + nq + 36].reshape((6, 6))
    Sv = scratch[2 * nv + nq + 36:2 * nv + nq + 72].reshape((6, 6))
    for r in range(nv):
        ek[r] = 0.0
    if not backward:
        subspace_rate_into(tree, i, q, v, Sv, 0)  # Ṡᴶ(q, q̇)
    for k in range(n):
        ek[iv + k] = 1.0
        subspace_rate_into(tree, i, q, ek, Sd, 0)  # ∂Sᴶ/∂q_k (child frame)
        ek[iv + k] = 0.0
        if backward:
            f0, f1, f2, f3, f4, f5 = vec[2, i, 0], vec[2, i, 1], vec[2, i, 2], vec[2, i, 3], vec[2, i, 4], vec[2, i, 5]
            for l in range(n):
                m = to_parent(poses, 0, i, Sd[0, l], Sd[1, l], Sd[2, l], Sd[3, l], Sd[4, l], Sd[5, l])
                dq[iv + l, iv + k] += m[0] * f0 + m[1] * f1 + m[2] * f2 + m[3] * f3 + m[4] * f4 + m[5] * f5
            continue
        # ∂cᴶ/∂q_k (child frame)
        if jt == UNIVERSAL:
            if k == 1:  # c = −q̇₁q̇₂ a₂ × S₀(q₂), ∂S₀/∂q₂ = −a₂ × S₀
                x0, x1, x2 = tree[i, C_AX2], tree[i, C_AX2 + 1], tree[i, C_AX2 + 2]
                s0, s1, s2, _, _, _ = subspace_column(tree, i, q, 0)
                c0, c1, c2 = x1 * s2 - x2 * s1, x2 * s0 - x0 * s2, x0 * s1 - x1 * s0
                w = v[iv] * v[iv + 1]
                dc = (w * (x1 * c2 - x2 * c1), w * (x2 * c0 - x0 * c2), w * (x0 * c1 - x1 * c0), 0.0, 0.0, 0.0)
            else:
                dc = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
        else:  # Sueda's joints (q additive, nq = nv): central difference of this joint's c_J
            for r in range(nq):
                qh[r] = q[r]
            qh[iq + k] = q[iq + k] + H_SUEDA
            cp = joint_bias(tree, i, qh, v)
            qh[iq + k] = q[iq + k] - H_SUEDA
            cm = joint_bias(tree, i, qh, v)
            h2 = 0.5 / H_SUEDA
            dc = ((cp[0] - cm[0]) * h2, (cp[1] - cm[1]) * h2, (cp[2] - cm[2]) * h2,
                  (cp[3] - cm[3]) * h2, (cp[4] - cm[4]) * h2, (cp[5] - cm[5]) * h2)
        e0 = e1 = e2 = e3 = e4 = e5 = 0.0
        t0, t1, t2, t3, t4, t5 = dc
        for l in range(n):
            qd = v[iv + l]
            qa = a[iv + l]
            e0 += Sd[0, l] * qd
            e1 += Sd[1, l] * qd
            e2 += Sd[2, l] * qd
            e3 += Sd[3, l] * qd
            e4 += Sd[4, l] * qd
            e5 += Sd[5, l] * qd
            t0 += Sd[0, l] * qa
            t1 += Sd[1, l] * qa
            t2 += Sd[2, l] * qa
            t3 += Sd[3, l] * qa
            t4 += Sd[4, l] * qa
            t5 += Sd[5, l] * qa
        ew = to_parent(poses, 0, i, e0, e1, e2, e3, e4, e5)
        tw = to_parent(poses, 0, i, t0, t1, t2, t3, t4, t5)
        gw = to_parent(poses, 0, i, e0 + Sv[0, k], e1 + Sv[1, k], e2 + Sv[2, k], e3 + Sv[3, k],
                       e4 + Sv[4, k], e5 + Sv[5, k])
        x = cross_motion(vec[0, i, 0] + vec[0, p, 0], vec[0, i, 1] + vec[0, p, 1], vec[0, i, 2] + vec[0, p, 2],
                         vec[0, i, 3] + vec[0, p, 3], vec[0, i, 4] + vec[0, p, 4], vec[0, i, 5] + vec[0, p, 5],
                         ew[0], ew[1], ew[2], ew[3], ew[4], ew[5])
        for r in range(6):
            blocks[B_DV, r, iv + k] += ew[r]
            blocks[B_DA, r, iv + k] += tw[r] + x[r]
            blocks[B_GAM, r, iv + k] += gw[r]


@njit(cache=True, nogil=True)
def rnea_derivatives_kernel(tree, q, v, a, gravity_on, fext, fext_on, posed, poses, blocks, Yb, vec, idx, scratch,
                            tau, dq, dv, M):
    """``tau = rnea(q, v, a)``, ``dq = ∂τ/∂q`` (tangent space), ``dv =
    ∂τ/∂q̇`` and ``M = ∂τ/∂q̈`` (armature included), by the algorithm of the
    module docstring. ``fext`` (nb, 6): body-frame external forces, read
    when ``fext_on``. ``posed``: ``poses`` holds the poses at q already
    (the ABA derivatives ran ABA at q). Workspaces from
    :func:`derivative_workspace`. The flags are run-time booleans for every
    caller: a literal ``False`` would be a second compilation (~minutes
    cold) of this large kernel."""
    nb = tree.shape[0]
    nv = v.shape[0]
    if not posed:
        fk_kernel(tree, q, poses)
    g = 1.0 if gravity_on else 0.0
    for r in range(3):
        vec[0, 0, r] = 0.0
        vec[0, 0, 3 + r] = 0.0
        vec[1, 0, r] = 0.0
        vec[1, 0, 3 + r] = -g * tree[0, C_GRAVITY + r]
    Yc = Yb[0]
    Bc = Yb[1]
    # ------------------------------------------------------------ forward pass
    for i in range(1, nb):
        p = int(tree[i, C_PARENT])
        iv = int(tree[i, C_V])
        n = int(tree[i, C_NV])
        idx[i] = iv + n
        world_inertia_into(tree, i, poses, Yc)
        vp0, vp1, vp2, vp3, vp4, vp5 = vec[0, p, 0], vec[0, p, 1], vec[0, p, 2], vec[0, p, 3], vec[0, p, 4], vec[0, p, 5]
        ap0, ap1, ap2, ap3, ap4, ap5 = vec[1, p, 0], vec[1, p, 1], vec[1, p, 2], vec[1, p, 3], vec[1, p, 4], vec[1, p, 5]
        vj0 = vj1 = vj2 = vj3 = vj4 = vj5 = 0.0
        aj0 = aj1 = aj2 = aj3 = aj4 = aj5 = 0.0
        for k in range(n):
            s0, s1, s2, s3, s4, s5 = subspace_column(tree, i, q, k)
            m = to_parent(poses, 0, i, s0, s1, s2, s3, s4, s5)
            for r in range(6):
                blocks[B_S, r, iv + k] = m[r]
            qd = v[iv + k]
            qa = a[iv + k]
            vj0 += m[0] * qd
            vj1 += m[1] * qd
            vj2 += m[2] * qd
            vj3 += m[3] * qd
            vj4 += m[4] * qd
            vj5 += m[5] * qd
            aj0 += m[0] * qa
            aj1 += m[1] * qa
            aj2 += m[2] * qa
            aj3 += m[3] * qa
            aj4 += m[4] * qa
            aj5 += m[5] * qa
        w0, w1, w2, w3, w4, w5 = vp0 + vj0, vp1 + vj1, vp2 + vj2, vp3 + vj3, vp4 + vj4, vp5 + vj5
        x = cross_motion(w0, w1, w2, w3, w4, w5, vj0, vj1, vj2, vj3, vj4, vj5)
        b0, b1, b2 = ap0 + aj0 + x[0], ap1 + aj1 + x[1], ap2 + aj2 + x[2]
        b3, b4, b5 = ap3 + aj3 + x[3], ap4 + aj4 + x[4], ap5 + aj5 + x[5]
        jt = int(tree[i, C_TYPE])
        if jt >= VARYING_SUBSPACE:  # S varies in the child frame: c_J ≠ 0
            c = joint_bias(tree, i, q, v)
            cw = to_parent(poses, 0, i, c[0], c[1], c[2], c[3], c[4], c[5])
            b0, b1, b2, b3, b4, b5 = b0 + cw[0], b1 + cw[1], b2 + cw[2], b3 + cw[3], b4 + cw[4], b5 + cw[5]
        vec[0, i, 0], vec[0, i, 1], vec[0, i, 2], vec[0, i, 3], vec[0, i, 4], vec[0, i, 5] = w0, w1, w2, w3, w4, w5
        vec[1, i, 0], vec[1, i, 1], vec[1, i, 2], vec[1, i, 3], vec[1, i, 4], vec[1, i, 5] = b0, b1, b2, b3, b4, b5
        for k in range(iv, iv + n):
            s0, s1, s2 = blocks[B_S, 0, k], blocks[B_S, 1, k], blocks[B_S, 2, k]
            s3, s4, s5 = blocks[B_S, 3, k], blocks[B_S, 4, k], blocks[B_S, 5, k]
            d = cross_motion(vp0, vp1, vp2, vp3, vp4, vp5, s0, s1, s2, s3, s4, s5)
            e = cross_motion(ap0, ap1, ap2, ap3, ap4, ap5, s0, s1, s2, s3, s4, s5)
            f = cross_motion(vp0, vp1, vp2, vp3, vp4, vp5, d[0], d[1], d[2], d[3], d[4], d[5])
            gm = cross_motion(w0 + vp0, w1 + vp1, w2 + vp2, w3 + vp3, w4 + vp4, w5 + vp5, s0, s1, s2, s3, s4, s5)
            for r in range(6):
                blocks[B_DV, r, k] = d[r]
                blocks[B_DA, r, k] = e[r] + f[r]
                blocks[B_GAM, r, k] = gm[r]
        if jt >= VARYING_SUBSPACE and n > 0:
            _varying_extras(tree, i, q, v, a, poses, blocks, vec, scratch, nb < 0, dq)  # run-time False
        # h = Y v, f = Y a + v ×* h − f_ext (world)
        h = _mat6_vec(Yc, i, w0, w1, w2, w3, w4, w5)
        ya = _mat6_vec(Yc, i, b0, b1, b2, b3, b4, b5)
        y = cross_force(w0, w1, w2, w3, w4, w5, h[0], h[1], h[2], h[3], h[4], h[5])
        if fext_on:
            fw = force_to_parent(poses, 0, i, fext[i, 0], fext[i, 1], fext[i, 2], fext[i, 3], fext[i, 4], fext[i, 5])
            for r in range(6):
                vec[2, i, r] = ya[r] + y[r] - fw[r]
        else:
            for r in range(6):
                vec[2, i, r] = ya[r] + y[r]
        # B = X + Xᵀ + (h ×̄*), X = (v×*) Y (Y symmetric, so −Y (v×) = Xᵀ)
        for c in range(6):
            xc = cross_force(w0, w1, w2, w3, w4, w5, Yc[i, 0, c], Yc[i, 1, c], Yc[i, 2, c], Yc[i, 3, c],
                             Yc[i, 4, c], Yc[i, 5, c])
            for r in range(6):
                Bc[i, r, c] = xc[r]
        for r in range(6):
            for c in range(r, 6):
                s = Bc[i, r, c] + Bc[i, c, r]
                Bc[i, r, c] = s
                Bc[i, c, r] = s
        n0, n1, n2, f0, f1, f2 = h
        # (h ×̄*) = [[−ñ, −f̃], [−f̃, 0]]
        Bc[i, 0, 1] += n2
        Bc[i, 0, 2] -= n1
        Bc[i, 1, 0] -= n2
        Bc[i, 1, 2] += n0
        Bc[i, 2, 0] += n1
        Bc[i, 2, 1] -= n0
        Bc[i, 0, 4] += f2
        Bc[i, 0, 5] -= f1
        Bc[i, 1, 3] -= f2
        Bc[i, 1, 5] += f0
        Bc[i, 2, 3] += f1
        Bc[i, 2, 4] -= f0
        Bc[i, 3, 1] += f2
        Bc[i, 3, 2] -= f1
        Bc[i, 4, 0] -= f2
        Bc[i, 4, 2] += f0
        Bc[i, 5, 0] += f1
        Bc[i, 5, 1] -= f0
    # ----------------------------------------------------------- backward pass
    for r in range(nv):
        for c in range(nv):
            dq[r, c] = 0.0
            dv[r, c] = 0.0
            M[r, c] = 0.0
    S = blocks[B_S]
    DV = blocks[B_DV]
    DA = blocks[B_DA]
    GM = blocks[B_GAM]
    F = blocks[B_F]
    G = blocks[B_G]
    Q = blocks[B_Q]
    R = blocks[B_R]
    for i in range(nb - 1, 0, -1):
        p = int(tree[i, C_PARENT])
        iv = int(tree[i, C_V])
        n = int(tree[i, C_NV])
        e = idx[i]
        f0, f1, f2, f3, f4, f5 = vec[2, i, 0], vec[2, i, 1], vec[2, i, 2], vec[2, i, 3], vec[2, i, 4], vec[2, i, 5]
        for k in range(iv, iv + n):
            s0, s1, s2, s3, s4, s5 = S[0, k], S[1, k], S[2, k], S[3, k], S[4, k], S[5, k]
            tau[k] = s0 * f0 + s1 * f1 + s2 * f2 + s3 * f3 + s4 * f4 + s5 * f5 + tree[i, C_ARMATURE + k - iv] * a[k]
            y = _mat6_vec(Yc, i, s0, s1, s2, s3, s4, s5)
            z = _mat6t_vec(Bc, i, s0, s1, s2, s3, s4, s5)
            ya = _mat6_vec(Yc, i, DA[0, k], DA[1, k], DA[2, k], DA[3, k], DA[4, k], DA[5, k])
            bv = _mat6_vec(Bc, i, DV[0, k], DV[1, k], DV[2, k], DV[3, k], DV[4, k], DV[5, k])
            yg = _mat6_vec(Yc, i, GM[0, k], GM[1, k], GM[2, k], GM[3, k], GM[4, k], GM[5, k])
            bs = _mat6_vec(Bc, i, s0, s1, s2, s3, s4, s5)
            for r in range(6):
                F[r, k] = y[r]
                G[r, k] = z[r]
                Q[r, k] = ya[r] + bv[r]
                R[r, k] = yg[r] + bs[r]
        for k in range(iv, iv + n):
            s0, s1, s2, s3, s4, s5 = S[0, k], S[1, k], S[2, k], S[3, k], S[4, k], S[5, k]
            for j in range(iv, e):  # row k over the subtree's columns
                dq[k, j] = s0 * Q[0, j] + s1 * Q[1, j] + s2 * Q[2, j] + s3 * Q[3, j] + s4 * Q[4, j] + s5 * Q[5, j]
                dv[k, j] = s0 * R[0, j] + s1 * R[1, j] + s2 * R[2, j] + s3 * R[3, j] + s4 * R[4, j] + s5 * R[5, j]
                M[k, j] = s0 * F[0, j] + s1 * F[1, j] + s2 * F[2, j] + s3 * F[3, j] + s4 * F[4, j] + s5 * F[5, j]
            a0, a1, a2, a3, a4, a5 = DA[0, k], DA[1, k], DA[2, k], DA[3, k], DA[4, k], DA[5, k]
            d0, d1, d2, d3, d4, d5 = DV[0, k], DV[1, k], DV[2, k], DV[3, k], DV[4, k], DV[5, k]
            g0, g1, g2, g3, g4, g5 = GM[0, k], GM[1, k], GM[2, k], GM[3, k], GM[4, k], GM[5, k]
            for j in range(iv + n, e):  # column k over the strict descendants' rows
                dq[j, k] = (F[0, j] * a0 + F[1, j] * a1 + F[2, j] * a2 + F[3, j] * a3 + F[4, j] * a4 + F[5, j] * a5
                            + G[0, j] * d0 + G[1, j] * d1 + G[2, j] * d2 + G[3, j] * d3 + G[4, j] * d4
                            + G[5, j] * d5)
                dv[j, k] = (F[0, j] * g0 + F[1, j] * g1 + F[2, j] * g2 + F[3, j] * g3 + F[4, j] * g4 + F[5, j] * g5
                            + G[0, j] * s0 + G[1, j] * s1 + G[2, j] * s2 + G[3, j] * s3 + G[4, j] * s4
                            + G[5, j] * s5)
                M[j, k] = M[k, j]
            M[k, k] += tree[i, C_ARMATURE + k - iv]
        if int(tree[i, C_TYPE]) >= VARYING_SUBSPACE and n > 0:
            _varying_extras(tree, i, q, v, a, poses, blocks, vec, scratch, nb > 0, dq)  # run-time True
        for k in range(iv, iv + n):  # Q += S ×* fᶜ, seen by the ancestors only
            x = cross_force(S[0, k], S[1, k], S[2, k], S[3, k], S[4, k], S[5, k], f0, f1, f2, f3, f4, f5)
            for r in range(6):
                Q[r, k] += x[r]
        if p > 0:
            for r in range(6):
                vec[2, p, r] += vec[2, i, r]
                for c in range(6):
                    Yc[p, r, c] += Yc[i, r, c]
                    Bc[p, r, c] += Bc[i, r, c]
            if idx[p] < e:
                idx[p] = e


@njit(cache=True, nogil=True)
def minus_product(A, X, out):
    """``out = −A X`` for square C-contiguous matrices, by BLAS (``np.dot``:
    dgemm of SciPy's BLAS): measured 4–7× faster than compiled loops from
    nv = 18 up (2.1 vs 9.5 µs at nv = 38, 26 vs 183 µs at 100), and no
    slower at nv = 6 — the two products are O(nv³), the rest of the ABA
    derivatives O(nv²)."""
    n = A.shape[0]
    if n == 0:
        return
    np.dot(A, X, out)
    for r in range(n):
        for c in range(n):
            out[r, c] = -out[r, c]


@njit(cache=True, nogil=True)
def aba_derivatives_kernel(tree, lam, q, v, tau, gravity_on, fext, fext_on, aws, dws, mws, ddq, dq, dv, Minv):
    """``ddq = aba(q, v, tau)``, ``dq = ∂q̈/∂q``, ``dv = ∂q̈/∂q̇`` and
    ``Minv = ∂q̈/∂τ = M⁻¹``: q̈ by ABA, ``∂τ/∂q`` and ``∂τ/∂q̇`` of RNEA at
    a = q̈ (same external forces), M⁻¹ by the ABA-based O(n²) recursion,
    then ``∂q̈/∂x = −M⁻¹ ∂τ/∂x`` (notes §2). ``aws``: ABA workspace
    (poses, jac, spatial, inertia6, U, Dinv, dofs); ``dws``: the
    derivative workspace plus (tau, ∂τ/∂q, ∂τ/∂q̇, M) scratch (its poses
    are not used: the RNEA derivatives reuse ABA's poses at q); ``mws``:
    M⁻¹ workspace (P, F, idx, work); ``lam`` the model's ``dof_parent``.
    Returns 0 or the singular body.

    M⁻¹: up to ``LTDL_NV`` coordinates, from the M that the RNEA derivatives
    produce anyway, by the sparse LᵀDL factorization and its inverse
    (Featherstone Table 6.3; ``kernels.inverse_inertia_kernel``); above, by
    the O(n²) ABA-based recursion (``minv_kernels``), which does not grow
    with the depth squared. Measured (benchmarks, this machine): 0.5 vs
    1.1 µs on UR5, 2.5 vs 3.9 µs on Solo12, 15 vs 10 µs on Talos and 1070
    vs 37 µs on a 100-link chain."""
    poses, jac, spatial, inertia6, U, Dinv, dofs = aws
    _, blocks, Yb, vec, idx, scratch, tau2, tq, tv, Mw = dws  # (dws[0]: the poses, those of aws here)
    P, Fm, midx, mwork = mws
    if fext_on:
        for i in range(tree.shape[0]):
            for r in range(6):
                spatial[2, i, r] = fext[i, r]
    b = aba_kernel(tree, q, v, tau, gravity_on, fext_on, poses, jac, spatial, inertia6, U, Dinv, dofs)
    if b:
        return b
    for k in range(v.shape[0]):
        ddq[k] = dofs[1, k]
    rnea_derivatives_kernel(tree, q[::1], v[::1], ddq[::1], gravity_on, fext, fext_on, v.shape[0] >= 0, poses, blocks,
                            Yb, vec, idx, scratch, tau2, tq, tv, Mw)
    if v.shape[0] > LTDL_NV or ltdl_kernel(lam, Mw) != 0:
        b = minv_aba_kernel(tree, q, poses, jac, inertia6, U, Dinv, P, Fm, midx, mwork, Minv)
        if b:
            return b
    else:
        inverse_inertia_kernel(lam, Mw, Minv)
    minus_product(Minv, tq, dq)
    minus_product(Minv, tv, dv)
    return 0


# ----------------------------------------------------------------- batches
# Compile time: every compiled function links and re-optimizes the whole code of the kernels it calls, and
# each distinct argument type is one more such compilation (minutes cold: docs/derivatives.md). So every
# caller hands the state vectors to the two kernels as 1-d 'A' arrays (``x[::1]`` is typed 'A'; the fast
# paths' vectors are 'A' already), the flags as run-time booleans, and the Python paths call the checked
# entries with the fast paths' exact signature (derivatives.py): one specialization of each kernel.
@njit(cache=True, nogil=True)
def rnea_derivatives_rows(tree, q, v, a, gravity_on, fext, fext_on, tau, dq, dv, M, lo, hi):
    """States ``lo .. hi−1`` of a batch, serially, in one workspace."""
    poses, blocks, Yb, vec, idx, scratch = derivative_workspace(tree.shape[0], q.shape[1], v.shape[1])
    for b in range(lo, hi):
        rnea_derivatives_kernel(tree, q[b][::1], v[b][::1], a[b][::1], gravity_on, fext[b], fext_on, lo < 0, poses,
                                blocks, Yb, vec, idx, scratch, tau[b], dq[b], dv[b], M[b])


@njit(cache=True, nogil=True, parallel=True)
def rnea_derivatives_batch(tree, q, v, a, gravity_on, fext, fext_on, tau, dq, dv, M):
    B = q.shape[0]
    n = chunk_count(B)
    for c in prange(n):
        rnea_derivatives_rows(tree, q, v, a, gravity_on, fext, fext_on, tau, dq, dv, M, c * B // n,
                              (c + 1) * B // n)


@njit(cache=True, nogil=True)
def aba_workspaces(nb, nq, nv):
    """``(aws, dws, mws)`` of :func:`aba_derivatives_kernel`."""
    aws = _ws(nb, nv)
    dws = derivative_workspace(nb, nq, nv) + (np.zeros(nv), np.zeros((nv, nv)), np.zeros((nv, nv)),
                                              np.zeros((nv, nv)))
    return aws, dws, minv_workspace(nb, nv)


@njit(cache=True, nogil=True)
def aba_derivatives_rows(tree, lam, q, v, tau, gravity_on, fext, fext_on, ddq, dq, dv, Minv, status, lo, hi):
    aws, dws, mws = aba_workspaces(tree.shape[0], q.shape[1], v.shape[1])
    for b in range(lo, hi):
        status[b] = aba_derivatives_kernel(tree, lam, q[b][::1], v[b][::1], tau[b][::1], gravity_on, fext[b], fext_on,
                                           aws, dws, mws, ddq[b], dq[b], dv[b], Minv[b])


@njit(cache=True, nogil=True, parallel=True)
def aba_derivatives_batch(tree, lam, q, v, tau, gravity_on, fext, fext_on, ddq, dq, dv, Minv, status):
    B = q.shape[0]
    n = chunk_count(B)
    for c in prange(n):
        aba_derivatives_rows(tree, lam, q, v, tau, gravity_on, fext, fext_on, ddq, dq, dv, Minv, status, c * B // n,
                             (c + 1) * B // n)


# ------------------------------------------------- checked single-state entries
@njit(cache=True, nogil=True)
def rnea_derivatives_checked(tree, q, v, a, gravity_on, fext, fext_on, poses, blocks, Yb, vec, idx, scratch, tau,
                             dq, dv, M):
    """:func:`rnea_derivatives_kernel` after :func:`kernels.state_status` of
    (q, v, a); returns that status, or ``BAD_SHAPE`` if the result
    overflowed (finite inputs too large: the caller raises)."""
    st = state_status(tree, q, v, a)
    if st == 0:
        rnea_derivatives_kernel(tree, q[::1], v[::1], a[::1], gravity_on, fext, fext_on, q.shape[0] < 0, poses, blocks,
                                Yb, vec, idx, scratch, tau, dq, dv, M)
        if diagonal_overflowed(dq) or diagonal_overflowed(dv) or overflowed(tau):
            return BAD_SHAPE
    return st


@njit(cache=True, nogil=True)
def aba_derivatives_checked(tree, lam, q, v, tau, gravity_on, fext, fext_on, aws, dws, mws, ddq, dq, dv, Minv):
    """:func:`aba_derivatives_kernel` after :func:`kernels.state_status` of
    (q, v, tau); a singular body b gives ``-ARG - b``, an overflow
    ``BAD_SHAPE``."""
    st = state_status(tree, q, v, tau)
    if st == 0:
        b = aba_derivatives_kernel(tree, lam, q[::1], v[::1], tau[::1], gravity_on, fext, fext_on, aws, dws, mws, ddq,
                                   dq, dv, Minv)
        if b:
            return -ARG - b
        if diagonal_overflowed(dq) or diagonal_overflowed(dv) or overflowed(ddq):
            return BAD_SHAPE
    return st


# ------------------------------------------- fast paths (Data.handle + derivative handle)
# The derivative workspace publishes its arrays through a table of addresses, as Data does
# (docs/architecture.md, rule 5): the fast kernels take two integers and the state vectors instead of
# ~20 arrays (each unboxed for ~0.036 us). Slots: nb, nq, nv, then the addresses in this order.
D_ARRAYS = ("blocks", "Yb", "vec", "idx", "scratch", "tau", "dq", "dv", "M", "fext0",
            "P", "F", "midx", "mwork", "ddq", "adq", "adv", "Minv")
N_DSLOTS = 3 + len(D_ARRAYS)


def derivative_shapes(nb, nq, nv):
    """The shapes of :data:`D_ARRAYS` (``idx`` and ``midx`` int64, the rest float64)."""
    return {"blocks": (N_BLOCKS, 6, nv), "Yb": (2, nb, 6, 6), "vec": (3, nb, 6), "idx": (nb,),
            "scratch": (2 * nv + nq + 72,), "tau": (nv,), "dq": (nv, nv), "dv": (nv, nv), "M": (nv, nv),
            "fext0": (nb, 6), "P": (nb, 6, nv), "F": (6, nv), "midx": (2, nb), "mwork": (4, 6, 6),
            "ddq": (nv,), "adq": (nv, nv), "adv": (nv, nv), "Minv": (nv, nv)}


@njit(cache=True, nogil=True, inline="always")
def derivative_arrays(dh):
    """The arrays behind a derivative workspace's handle, in :data:`D_ARRAYS` order."""
    t = carray(i64_pointer(dh), (N_DSLOTS,))
    nb, nq, nv = t[0], t[1], t[2]
    return (carray(f64_pointer(t[3]), (N_BLOCKS, 6, nv)), carray(f64_pointer(t[4]), (2, nb, 6, 6)),
            carray(f64_pointer(t[5]), (3, nb, 6)), carray(i64_pointer(t[6]), (nb,)),
            carray(f64_pointer(t[7]), (2 * nv + nq + 72,)), carray(f64_pointer(t[8]), (nv,)),
            carray(f64_pointer(t[9]), (nv, nv)), carray(f64_pointer(t[10]), (nv, nv)),
            carray(f64_pointer(t[11]), (nv, nv)), carray(f64_pointer(t[12]), (nb, 6)),
            carray(f64_pointer(t[13]), (nb, 6, nv)), carray(f64_pointer(t[14]), (6, nv)),
            carray(i64_pointer(t[15]), (2, nb)), carray(f64_pointer(t[16]), (4, 6, 6)),
            carray(f64_pointer(t[17]), (nv,)), carray(f64_pointer(t[18]), (nv, nv)),
            carray(f64_pointer(t[19]), (nv, nv)), carray(f64_pointer(t[20]), (nv, nv)))


@njit(cache=True)  # keeps the GIL: see _compiled (fast paths)
def rnea_derivatives_fast(handle, dh, q, v, a, gravity_on):
    """:func:`rnea_derivatives_checked` (no external forces) on the Data
    behind ``handle`` (its poses) and the derivative workspace behind ``dh``."""
    w = handle_workspace(handle)
    if q.shape[0] != w.nq or v.shape[0] != w.nv or a.shape[0] != w.nv or not owned(handle):
        return BAD_SHAPE
    blocks, Yb, vec, idx, scratch, tau, dq, dv, M, fext0, P, F, midx, mwork, ddq, adq, adv, Minv = \
        derivative_arrays(dh)
    off = q.shape[0] < 0  # a run-time False (a literal would compile the kernels a second time)
    return rnea_derivatives_checked(w.tree, q, v, a, gravity_on, fext0, off, w.poses, blocks, Yb, vec, idx,
                                    scratch, tau, dq, dv, M)


@njit(cache=True)  # keeps the GIL: see _compiled (fast paths)
def aba_derivatives_fast(handle, dh, q, v, tau, gravity_on):
    """:func:`aba_derivatives_checked` (no external forces) on the Data
    behind ``handle`` (its ABA workspace) and the derivative workspace behind ``dh``."""
    w = handle_workspace(handle)
    if q.shape[0] != w.nq or v.shape[0] != w.nv or tau.shape[0] != w.nv or not owned(handle):
        return BAD_SHAPE
    blocks, Yb, vec, idx, scratch, tau2, dq, dv, M, fext0, P, F, midx, mwork, ddq, adq, adv, Minv = \
        derivative_arrays(dh)
    aws = (w.poses, w.jac, w.spatial, w.inertia6, w.U, w.Dinv, w.dofs)
    dws = (w.poses, blocks, Yb, vec, idx, scratch, tau2, dq, dv, M)
    off = q.shape[0] < 0  # a run-time False (a literal would compile the kernels a second time)
    return aba_derivatives_checked(w.tree, w.lam, q, v, tau, gravity_on, fext0, off, aws, dws, (P, F, midx, mwork), ddq,
                                   adq, adv, Minv)
