"""The inverse joint-space inertia ``H(q)⁻¹`` in O(n²) by the
articulated-body algorithm (Carpentier 2018, "Analytical inverse of the
joint space inertia matrix"; Pinocchio's ``computeMinverse``), in world
coordinates like :func:`~multibody.dynamics.kernels.aba_kernel`.

Derivation. ``H⁻¹ τ`` is the ABA (Featherstone Table 7.1) with v = 0, no
gravity and no external force, so every velocity-product term ``cᵢ`` is 0
and every quantity is linear in a symbolic τ:

* backward pass: the articulated bias force of body i is ``pᴬᵢ = Fᵢ τ``
  (Fᵢ 6 x nv, nonzero only on the coordinates strictly below joint i), so
  ``uᵢ = τᵢ − Sᵢᵀ pᴬᵢ = Rᵢ τ`` with ``Rᵢ = Eᵢ − SᵢᵀFᵢ`` (Eᵢ selects the
  rows of joint i), ``pᵃᵢ = pᴬᵢ + Uᵢ Dᵢ⁻¹ uᵢ`` gives
  ``F_λ += Fᵢ + Uᵢ Dᵢ⁻¹ Rᵢ``, and ``Iᴬ_λ += Iᴬᵢ − Uᵢ Dᵢ⁻¹ Uᵢᵀ`` as usual
  (``Uᵢ = Iᴬᵢ Sᵢ``, ``Dᵢ = SᵢᵀUᵢ + armature``);
* forward pass: ``aᵢ = Pᵢ τ`` (P₀ = 0), ``q̈ᵢ = Dᵢ⁻¹(uᵢ − Uᵢᵀ a_λ)`` gives
  the rows of joint i, ``H⁻¹[i, :] = Dᵢ⁻¹Rᵢ − (UᵢDᵢ⁻¹)ᵀ P_λ``, and
  ``Pᵢ = P_λ + Sᵢ H⁻¹[i, :]``.

Sparsity. Bodies are numbered depth first (``ModelBuilder._ordered``), so
the coordinates of the subtree of body i are the contiguous range
``[vᵢ, endᵢ)`` (``endᵢ`` found in the backward pass). Rᵢ lives on that range
and Fᵢ on ``[vᵢ + nᵢ, endᵢ)``. Sibling subtrees have disjoint ranges and
``F_λ`` on the range of child i receives only child i's contribution, so one
6 x nv array holds every F in place: the update is ``F[:, range i] ←
Fᵢ + UᵢDᵢ⁻¹Rᵢ`` (assigned on joint i's own columns, where Fᵢ = 0, so F needs
no zeroing). Only the upper triangle is computed (the rows of joint i from
column vᵢ on, which is all a descendant needs of Pᵢ), then mirrored.
Cost: O(n·nv) flops in total (O(n²) on a chain).

Memory of P. ``P_λ`` is needed only until λ's last moving child has been
processed (depth-first order), so that child updates it in place and other
children take the next slot: P is a stack of slots, as deep as the tree's
branching (one slot on a chain), and the in-place loop vectorizes.

Workspaces are arguments of :func:`minv_aba_kernel`; :func:`minv_checked`
and :func:`minv_batch` allocate the extra ones (``minv_workspace``: P, F,
idx, work) once per call (per state for a batch). Inner loops index the
arrays directly (docs/architecture.md).
"""
import numpy as np
from numba import njit, prange

from .._compiled import BAD_SHAPE, NEEDS_MATRIX, diagonal_overflowed
from .._status import ARG
from ..kinematics.kernels import fk_kernel, q_status, world_inertia_into
from ..model.data import SLOT_MINV, allocated, handle_workspace, owned
from ..model.joints import C_ARMATURE, C_NV, C_PARENT, C_V, subspace_column
from ..spatial.kernel_algebra import to_parent
from .kernels import _ws, invert_spd_block

# Column loops run over unsigned indices: Numba then skips the negative-index
# wraparound, and LLVM vectorizes the loops (2x on a 100-link chain).
U64 = np.uint64


@njit(cache=True, nogil=True)
def minv_aba_kernel(tree, q, poses, jac, inertia6, U, Dinv, P, F, idx, work, Minv):
    """``Minv = H(q)⁻¹`` (full symmetric nv x nv, armature included) by the
    ABA-based recursion of the module docstring. Returns 0, or the index
    of the first body (deepest first) whose ``D = SᵀIᴬS + armature`` is not
    positive definite (a massless subtree); Minv is then incomplete.

    Workspaces: ``poses`` (2, nb, 4, 4), ``jac`` (≥2, 6, nv) (``jac[1]``
    receives the world motion subspaces), ``inertia6`` (nb, 6, 6)
    (articulated inertias), ``U`` (6, nv) and ``Dinv`` (nv, 6) (as in
    aba_kernel), ``P`` (nb, 6, nv) slots for the acceleration maps (only the
    first few are used), ``F`` (6, nv) the bias-force maps, ``idx`` int64
    (2, nb) each body's subtree end and P slot, ``work`` (4, 6, 6) small
    scratch. None needs initializing."""
    nb = tree.shape[0]
    nv = Minv.shape[0]
    fk_kernel(tree, q, poses)
    S = jac[1]
    for i in range(1, nb):
        world_inertia_into(tree, i, poses, inertia6)
        iv = int(tree[i, C_V])
        n = int(tree[i, C_NV])
        idx[0, i] = iv + n
        for k in range(n):
            s0, s1, s2, s3, s4, s5 = subspace_column(tree, i, q, k)
            m = to_parent(poses, 0, i, s0, s1, s2, s3, s4, s5)
            for r in range(6):
                S[r, iv + k] = m[r]
    D = work[2]
    # ---------------------------------------------------------- backward pass
    for i in range(nb - 1, 0, -1):
        iv = int(tree[i, C_V])
        n = int(tree[i, C_NV])
        p = int(tree[i, C_PARENT])
        e = idx[0, i]
        if n == 1:
            s0, s1, s2, s3, s4, s5 = S[0, iv], S[1, iv], S[2, iv], S[3, iv], S[4, iv], S[5, iv]
            for r in range(6):
                U[r, iv] = (inertia6[i, r, 0] * s0 + inertia6[i, r, 1] * s1 + inertia6[i, r, 2] * s2
                            + inertia6[i, r, 3] * s3 + inertia6[i, r, 4] * s4 + inertia6[i, r, 5] * s5)
            u0, u1, u2, u3, u4, u5 = U[0, iv], U[1, iv], U[2, iv], U[3, iv], U[4, iv], U[5, iv]
            d = s0 * u0 + s1 * u1 + s2 * u2 + s3 * u3 + s4 * u4 + s5 * u5 + tree[i, C_ARMATURE]
            if not d > 0.0:
                return i
            dinv = 1.0 / d
            Dinv[iv, 0] = dinv
            Minv[iv, iv] = dinv  # R = 1 on the own column (F is 0 there) and 0 beyond the subtree
            for j in range(U64(e), U64(nv)):
                Minv[iv, j] = 0.0
            if p == 0:
                for j in range(U64(iv + 1), U64(e)):
                    Minv[iv, j] = -(s0 * F[0, j] + s1 * F[1, j] + s2 * F[2, j]
                                    + s3 * F[3, j] + s4 * F[4, j] + s5 * F[5, j]) * dinv
                continue
            F[0, iv], F[1, iv], F[2, iv] = u0 * dinv, u1 * dinv, u2 * dinv
            F[3, iv], F[4, iv], F[5, iv] = u3 * dinv, u4 * dinv, u5 * dinv
            for j in range(U64(iv + 1), U64(e)):
                f0, f1, f2, f3, f4, f5 = F[0, j], F[1, j], F[2, j], F[3, j], F[4, j], F[5, j]
                m = -(s0 * f0 + s1 * f1 + s2 * f2 + s3 * f3 + s4 * f4 + s5 * f5) * dinv
                Minv[iv, j] = m
                F[0, j] = f0 + u0 * m
                F[1, j] = f1 + u1 * m
                F[2, j] = f2 + u2 * m
                F[3, j] = f3 + u3 * m
                F[4, j] = f4 + u4 * m
                F[5, j] = f5 + u5 * m
            for r in range(6):  # Iᴬ_λ += Iᴬ − U Uᵀ / d
                ur = U[r, iv] * dinv
                for c in range(6):
                    inertia6[p, r, c] += inertia6[i, r, c] - ur * U[c, iv]
            if idx[0, p] < e:
                idx[0, p] = e
            continue
        if n == 0:  # a fixed joint: the body is rigidly part of its parent (F unchanged)
            if p > 0:
                for r in range(6):
                    for c in range(6):
                        inertia6[p, r, c] += inertia6[i, r, c]
                if idx[0, p] < e:
                    idx[0, p] = e
            continue
        for k in range(n):
            for r in range(6):
                U[r, iv + k] = (inertia6[i, r, 0] * S[0, iv + k] + inertia6[i, r, 1] * S[1, iv + k]
                                + inertia6[i, r, 2] * S[2, iv + k] + inertia6[i, r, 3] * S[3, iv + k]
                                + inertia6[i, r, 4] * S[4, iv + k] + inertia6[i, r, 5] * S[5, iv + k])
        for k in range(n):
            for l in range(n):
                x = 0.0
                for r in range(6):
                    x += S[r, iv + k] * U[r, iv + l]
                D[k, l] = x
            D[k, k] += tree[i, C_ARMATURE + k]
        if not invert_spd_block(D, n, Dinv, iv, work):
            return i
        # own columns: R = identity, so the rows are D⁻¹; R = 0 beyond the subtree
        for k in range(n):
            for l in range(n):
                Minv[iv + k, iv + l] = Dinv[iv + k, l]
            for j in range(U64(e), U64(nv)):
                Minv[iv + k, j] = 0.0
        # below: D⁻¹R = −(S D⁻¹)ᵀ F (D⁻¹ is symmetric); SD = S D⁻¹ in work[3]
        for r in range(6):
            for k in range(n):
                x = 0.0
                for l in range(n):
                    x += S[r, iv + l] * Dinv[iv + l, k]
                work[3, r, k] = x
        for k in range(n):
            d0, d1, d2 = work[3, 0, k], work[3, 1, k], work[3, 2, k]
            d3, d4, d5 = work[3, 3, k], work[3, 4, k], work[3, 5, k]
            for j in range(U64(iv + n), U64(e)):
                Minv[iv + k, j] = -(d0 * F[0, j] + d1 * F[1, j] + d2 * F[2, j]
                                    + d3 * F[3, j] + d4 * F[4, j] + d5 * F[5, j])
        if p == 0:
            continue
        # F_λ on the subtree: U D⁻¹ on the own columns, F + U (D⁻¹R) below
        for r in range(6):
            for l in range(n):
                x = 0.0
                for k in range(n):
                    x += U[r, iv + k] * Dinv[iv + k, l]
                F[r, iv + l] = x
            for k in range(n):
                u = U[r, iv + k]
                for j in range(U64(iv + n), U64(e)):
                    F[r, j] += u * Minv[iv + k, j]
        for r in range(6):  # Iᴬ_λ += Iᴬ − (U D⁻¹) Uᵀ
            for c in range(6):
                x = inertia6[i, r, c]
                for k in range(n):
                    x -= F[r, iv + k] * U[c, iv + k]
                inertia6[p, r, c] += x
        if idx[0, p] < e:
            idx[0, p] = e
    # ----------------------------------------------------------- forward pass
    UD = D
    for i in range(1, nb):
        iv = int(tree[i, C_V])
        n = int(tree[i, C_NV])
        if n == 0:
            continue
        e = idx[0, i]
        inner = e > iv + n  # moving descendants need P_i (on the columns ≥ iv + n)
        a = int(tree[i, C_PARENT])  # the nearest moving ancestor (a fixed body moves with its parent)
        while a > 0 and int(tree[a, C_NV]) == 0:
            a = int(tree[a, C_PARENT])
        # the slot of P_i: P_a's own slot when i is a's last moving child (P_a is not needed after i)
        sa = idx[1, a] if a > 0 else -1
        sl = sa if a > 0 and e == idx[0, a] else sa + 1
        idx[1, i] = sl
        if n == 1:
            s0, s1, s2, s3, s4, s5 = S[0, iv], S[1, iv], S[2, iv], S[3, iv], S[4, iv], S[5, iv]
            if a == 0:  # P_λ = 0: the rows are D⁻¹R, and P_i = S_i H⁻¹[i, :]
                if inner:
                    for j in range(U64(iv + 1), U64(nv)):
                        m = Minv[iv, j]
                        P[sl, 0, j], P[sl, 1, j], P[sl, 2, j] = s0 * m, s1 * m, s2 * m
                        P[sl, 3, j], P[sl, 4, j], P[sl, 5, j] = s3 * m, s4 * m, s5 * m
                continue
            dinv = Dinv[iv, 0]
            w0, w1, w2 = U[0, iv] * dinv, U[1, iv] * dinv, U[2, iv] * dinv
            w3, w4, w5 = U[3, iv] * dinv, U[4, iv] * dinv, U[5, iv] * dinv
            Minv[iv, iv] -= (w0 * P[sa, 0, iv] + w1 * P[sa, 1, iv] + w2 * P[sa, 2, iv]
                             + w3 * P[sa, 3, iv] + w4 * P[sa, 4, iv] + w5 * P[sa, 5, iv])
            if not inner:
                for j in range(U64(iv + 1), U64(nv)):
                    Minv[iv, j] -= (w0 * P[sa, 0, j] + w1 * P[sa, 1, j] + w2 * P[sa, 2, j]
                                    + w3 * P[sa, 3, j] + w4 * P[sa, 4, j] + w5 * P[sa, 5, j])
            elif sl == sa:  # in place, indexed by one variable so that LLVM vectorizes it
                for j in range(U64(iv + 1), U64(nv)):
                    p0, p1, p2 = P[sa, 0, j], P[sa, 1, j], P[sa, 2, j]
                    p3, p4, p5 = P[sa, 3, j], P[sa, 4, j], P[sa, 5, j]
                    m = Minv[iv, j] - (w0 * p0 + w1 * p1 + w2 * p2 + w3 * p3 + w4 * p4 + w5 * p5)
                    Minv[iv, j] = m
                    P[sa, 0, j], P[sa, 1, j], P[sa, 2, j] = p0 + s0 * m, p1 + s1 * m, p2 + s2 * m
                    P[sa, 3, j], P[sa, 4, j], P[sa, 5, j] = p3 + s3 * m, p4 + s4 * m, p5 + s5 * m
            else:
                for j in range(U64(iv + 1), U64(nv)):
                    p0, p1, p2 = P[sa, 0, j], P[sa, 1, j], P[sa, 2, j]
                    p3, p4, p5 = P[sa, 3, j], P[sa, 4, j], P[sa, 5, j]
                    m = Minv[iv, j] - (w0 * p0 + w1 * p1 + w2 * p2 + w3 * p3 + w4 * p4 + w5 * p5)
                    Minv[iv, j] = m
                    P[sl, 0, j], P[sl, 1, j], P[sl, 2, j] = p0 + s0 * m, p1 + s1 * m, p2 + s2 * m
                    P[sl, 3, j], P[sl, 4, j], P[sl, 5, j] = p3 + s3 * m, p4 + s4 * m, p5 + s5 * m
            continue
        if a > 0:
            for r in range(6):  # UD = U D⁻¹
                for l in range(n):
                    x = 0.0
                    for k in range(n):
                        x += U[r, iv + k] * Dinv[iv + k, l]
                    UD[r, l] = x
            for k in range(n):
                w0, w1, w2, w3, w4, w5 = UD[0, k], UD[1, k], UD[2, k], UD[3, k], UD[4, k], UD[5, k]
                for j in range(U64(iv), U64(nv)):
                    Minv[iv + k, j] -= (w0 * P[sa, 0, j] + w1 * P[sa, 1, j] + w2 * P[sa, 2, j]
                                        + w3 * P[sa, 3, j] + w4 * P[sa, 4, j] + w5 * P[sa, 5, j])
        if inner:
            for r in range(6):
                if a == 0:
                    for j in range(U64(iv + n), U64(nv)):
                        P[sl, r, j] = 0.0
                elif sl != sa:
                    for j in range(U64(iv + n), U64(nv)):
                        P[sl, r, j] = P[sa, r, j]
                for k in range(n):
                    x = S[r, iv + k]
                    for j in range(U64(iv + n), U64(nv)):
                        P[sl, r, j] += x * Minv[iv + k, j]
    for r in range(nv):  # mirror the upper triangle
        for c in range(U64(r + 1), U64(nv)):
            Minv[c, r] = Minv[r, c]
    return 0


@njit(cache=True, nogil=True)
def minv_workspace(nb, nv):
    """The extra workspaces of :func:`minv_aba_kernel`: ``(P, F, idx, work)``."""
    return np.empty((nb, 6, nv)), np.empty((6, nv)), np.empty((2, nb), dtype=np.int64), np.empty((4, 6, 6))


@njit(cache=True, nogil=True)
def minv_checked(tree, q, poses, jac, inertia6, U, Dinv, Minv):
    """:func:`minv_aba_kernel` after the kinematics check of q (status of
    ``q_status``), with its extra workspaces allocated here. A body b whose
    D is not positive definite gives ``-ARG - b``."""
    st = q_status(tree, q)
    if st == 0:
        P, F, idx, work = minv_workspace(tree.shape[0], Minv.shape[0])
        b = minv_aba_kernel(tree, q, poses, jac, inertia6, U, Dinv, P, F, idx, work, Minv)
        if b:
            return -ARG - b
    return st


@njit(cache=True, nogil=True, parallel=True)
def minv_batch(tree, q, out, status):
    """``out[b] = H(q[b])⁻¹`` for a batch (q already checked); ``status[b]``
    is the kernel's (0 or the singular body)."""
    nb = tree.shape[0]
    nv = out.shape[1]
    for b in prange(q.shape[0]):
        poses, jac, spatial, inertia6, U, Dinv, dofs = _ws(nb, nv)
        P, F, idx, work = minv_workspace(nb, nv)
        status[b] = minv_aba_kernel(tree, q[b], poses, jac, inertia6, U, Dinv, P, F, idx, work, out[b])


@njit(cache=True)  # keeps the GIL: see _compiled (fast paths)
def minv_fast(handle, q):
    """:func:`minv_checked` on the workspace behind a ``Data.handle``; H⁻¹ in ``Minv``."""
    w = handle_workspace(handle)
    if q.shape[0] != w.nq or not owned(handle):  # a foreign thread: the caller raises
        return BAD_SHAPE
    if not allocated(handle, SLOT_MINV):
        return NEEDS_MATRIX
    st = minv_checked(w.tree, q, w.poses, w.jac, w.inertia6, w.U, w.Dinv, w.Minv)
    if st == 0 and diagonal_overflowed(w.Minv):  # the general path raises
        return BAD_SHAPE
    return st
