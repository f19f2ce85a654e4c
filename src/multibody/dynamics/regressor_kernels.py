"""Compiled kernel of the joint-torque regressor (Featherstone §9.7, dynamic
equivalence: the equation of motion is linear in the inertia parameters;
Atkeson, An & Hollerbach 1986).

Body j's net force ``f_j = I_j a_j + v_j ×* I_j v_j`` (body coordinates,
gravity through ``a_0 = −a_g``) is linear in its parameters
``π_j = (m, h_x, h_y, h_z, Ī_xx, Ī_xy, Ī_yy, Ī_xz, Ī_yz, Ī_zz)`` (``h = m c``,
Ī about the body origin): ``f_j = A_j(v_j, a_j) π_j`` with, for
``v = [ω; u]`` and ``a = [α; l]``,

* m:  ``[0; l + ω × u]``,
* h:  ``n = h × (l + ω × u)``, ``f = α × h + ω × (ω × h)``,
* Ī:  ``n = Ī α + ω × Ī ω``, ``f = 0``.

Joint i carries ``τ_i = S_iᵀ Σ_{j ∈ ν(i)} ⁱX_j* f_j``, so the block of the
regressor for joint i and body j is ``S_iᵀ ⁱX_j* A_j`` when i supports j,
and zero otherwise. The kernel maps each ``A_j`` once to world coordinates
and takes its products with the world motion subspaces of the joints on
the path to the root: O(n·d) 6x10 products for depth d.
"""
import numpy as np
from numba import njit, prange

from ..kinematics.kernels import motion_kernel, workspace
from ..model.joints import C_GRAVITY, C_NV, C_PARENT, C_V
from ..spatial.kernel_algebra import force_to_parent, to_parent
from .kernels import state_status

# index pairs (row, col) of the rotational-inertia parameters Ixx, Ixy, Iyy, Ixz, Iyz, Izz
_IR = (0, 0, 1, 0, 1, 2)
_IC = (0, 1, 1, 2, 2, 2)


@njit(cache=True, nogil=True)
def regressor_kernel(tree, q, v, a, gravity_on, poses, jac, motion, Y):
    """``Y`` (nv x 10(nbodies−1)) with ``Y π = τ`` (rnea without armature),
    column block ``10(j−1) .. 10j−1`` for body j. ``poses``, ``jac`` and
    ``motion`` receive the kinematics (body velocities and accelerations,
    the latter without the gravity offset)."""
    nb = tree.shape[0]
    nv = Y.shape[0]
    motion_kernel(tree, q, v, a, poses, jac, motion)
    for i in range(1, nb):  # world motion subspaces
        iv = int(tree[i, C_V])
        for k in range(iv, iv + int(tree[i, C_NV])):
            m = to_parent(poses, 0, i, jac[0, 0, k], jac[0, 1, k], jac[0, 2, k], jac[0, 3, k], jac[0, 4, k],
                          jac[0, 5, k])
            for r in range(6):
                jac[1, r, k] = m[r]
    for r in range(nv):
        for c in range(Y.shape[1]):
            Y[r, c] = 0.0
    g = 1.0 if gravity_on else 0.0
    g0, g1, g2 = g * tree[0, C_GRAVITY], g * tree[0, C_GRAVITY + 1], g * tree[0, C_GRAVITY + 2]
    A = np.empty((6, 10))
    for j in range(1, nb):
        w0, w1, w2 = motion[0, j, 0], motion[0, j, 1], motion[0, j, 2]
        u0, u1, u2 = motion[0, j, 3], motion[0, j, 4], motion[0, j, 5]
        al0, al1, al2 = motion[1, j, 0], motion[1, j, 1], motion[1, j, 2]
        # linear acceleration with the gravity offset a_0 = −a_g, in body j: l − Rᵀ g
        l0 = motion[1, j, 3] - (poses[0, j, 0, 0] * g0 + poses[0, j, 1, 0] * g1 + poses[0, j, 2, 0] * g2)
        l1 = motion[1, j, 4] - (poses[0, j, 0, 1] * g0 + poses[0, j, 1, 1] * g1 + poses[0, j, 2, 1] * g2)
        l2 = motion[1, j, 5] - (poses[0, j, 0, 2] * g0 + poses[0, j, 1, 2] * g1 + poses[0, j, 2, 2] * g2)
        b0 = l0 + w1 * u2 - w2 * u1  # l + ω × u
        b1 = l1 + w2 * u0 - w0 * u2
        b2 = l2 + w0 * u1 - w1 * u0
        # mass
        A[0, 0], A[1, 0], A[2, 0] = 0.0, 0.0, 0.0
        A[3, 0], A[4, 0], A[5, 0] = b0, b1, b2
        # first moment, column k = e_k: n = e_k × b, f = α × e_k + ω × (ω × e_k)
        for k in range(3):
            e0 = 1.0 if k == 0 else 0.0
            e1 = 1.0 if k == 1 else 0.0
            e2 = 1.0 if k == 2 else 0.0
            A[0, 1 + k] = e1 * b2 - e2 * b1
            A[1, 1 + k] = e2 * b0 - e0 * b2
            A[2, 1 + k] = e0 * b1 - e1 * b0
            x0 = w1 * e2 - w2 * e1
            x1 = w2 * e0 - w0 * e2
            x2 = w0 * e1 - w1 * e0
            A[3, 1 + k] = al1 * e2 - al2 * e1 + w1 * x2 - w2 * x1
            A[4, 1 + k] = al2 * e0 - al0 * e2 + w2 * x0 - w0 * x2
            A[5, 1 + k] = al0 * e1 - al1 * e0 + w0 * x1 - w1 * x0
        # rotational inertia, basis E = e_r e_cᵀ + e_c e_rᵀ (or e_r e_rᵀ): n = E α + ω × E ω
        for k in range(6):
            r = _IR[k]
            c = _IC[k]
            ea0 = ea1 = ea2 = 0.0
            ew0 = ew1 = ew2 = 0.0
            ar = al0 if r == 0 else (al1 if r == 1 else al2)
            ac = al0 if c == 0 else (al1 if c == 1 else al2)
            wr = w0 if r == 0 else (w1 if r == 1 else w2)
            wc = w0 if c == 0 else (w1 if c == 1 else w2)
            # E x = e_r x_c + e_c x_r (r != c), e_r x_r (r == c)
            if r == 0:
                ea0 += ac
                ew0 += wc
            elif r == 1:
                ea1 += ac
                ew1 += wc
            else:
                ea2 += ac
                ew2 += wc
            if r != c:
                if c == 0:
                    ea0 += ar
                    ew0 += wr
                elif c == 1:
                    ea1 += ar
                    ew1 += wr
                else:
                    ea2 += ar
                    ew2 += wr
            A[0, 4 + k] = ea0 + w1 * ew2 - w2 * ew1
            A[1, 4 + k] = ea1 + w2 * ew0 - w0 * ew2
            A[2, 4 + k] = ea2 + w0 * ew1 - w1 * ew0
            A[3, 4 + k] = 0.0
            A[4, 4 + k] = 0.0
            A[5, 4 + k] = 0.0
        # to world coordinates: ⁰X_j* A_j
        for k in range(10):
            f = force_to_parent(poses, 0, j, A[0, k], A[1, k], A[2, k], A[3, k], A[4, k], A[5, k])
            for r in range(6):
                A[r, k] = f[r]
        col = 10 * (j - 1)
        i = j
        while i > 0:
            iv = int(tree[i, C_V])
            for k in range(iv, iv + int(tree[i, C_NV])):
                s0, s1, s2, s3, s4, s5 = jac[1, 0, k], jac[1, 1, k], jac[1, 2, k], jac[1, 3, k], jac[1, 4, k], \
                    jac[1, 5, k]
                for c in range(10):
                    Y[k, col + c] = (s0 * A[0, c] + s1 * A[1, c] + s2 * A[2, c] + s3 * A[3, c] + s4 * A[4, c]
                                     + s5 * A[5, c])
            i = int(tree[i, C_PARENT])


@njit(cache=True, nogil=True)
def regressor_checked(tree, q, v, a, gravity_on, poses, jac, motion, Y):
    """:func:`regressor_kernel` after ``state_status`` (q, v, a) in the same call."""
    st = state_status(tree, q, v, a)
    if st == 0:
        regressor_kernel(tree, q, v, a, gravity_on, poses, jac, motion, Y)
    return st


@njit(cache=True, nogil=True, parallel=True)
def regressor_batch(tree, q, v, a, gravity_on, out):
    nb = tree.shape[0]
    for b in prange(q.shape[0]):
        poses, jac, motion = workspace(nb, v.shape[1])
        regressor_kernel(tree, q[b], v[b], a[b], gravity_on, poses, jac, motion, out[b])
