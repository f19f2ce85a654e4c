"""Compiled kernels of the articulated-body hybrid dynamics algorithm
(Featherstone §9.2, Tables 9.2/9.3), in world coordinates like
:func:`~multibody.dynamics.kernels.aba_kernel`.

The prescribed/free split is **per velocity coordinate** (a boolean mask over
the nv coordinates), which contains Table 9.3's per-joint split as a special
case. At body i let ``S = [S_p S_f]`` be the columns of its motion subspace
whose accelerations are prescribed (``p``) and free (``f``). The prescribed
part is a known acceleration, folded into the velocity-product term

    c_i = c_J + v_i × v_J + S_p q̈_p                   (Table 9.3, pass 1)

and the free part is handled by the ordinary articulated-body step with the
reduced subspace ``S_f``:

    U = Iᴬ S_f,  D = S_fᵀ U + diag(armature_f),  u = τ_f − S_fᵀ pᴬ,
    Iᵃ = Iᴬ − U D⁻¹ Uᵀ,  pᵃ = pᴬ + Iᵃ c + U D⁻¹ u      (Eqs. 7.39–7.40)

With no free coordinate this is Eqs. 9.9–9.10 (``Iᵃ = Iᴬ``,
``pᵃ = pᴬ + Iᴬ c``). Pass 3 runs from ``a_0 = −a_g``:

    a' = a_λ + c_i,  q̈_f = D⁻¹(u − Uᵀ a'),  a_i = a' + S_f q̈_f,
    τ_p = S_pᵀ (Iᴬ a_i + pᴬ) + diag(armature_p) q̈_p      (Eq. 9.6)

The joint equation of a coordinate k is ``τ_k = S_kᵀ f_i + armature_k q̈_k``
(rotor inertia, §9.6, as in :func:`rnea` and :func:`aba`), so the result is
exactly ``rnea`` when everything is prescribed and ``aba`` when nothing is.

Workspaces are those of :class:`~multibody.model.data.Data` (``dofs[0]`` =
τ out, ``dofs[1]`` = q̈ out, ``dofs[2]`` = u, ``dofs[3]`` scratch).
"""
import numpy as np
from numba import njit, prange

from .._status import ARG
from ..model.joints import C_ARMATURE, C_GRAVITY, C_NV, C_PARENT, C_V
from .kernels import articulated_init, invert_spd_block, state_status, world_motion_pass


@njit(cache=True, nogil=True)
def hybrid_kernel(tree, q, v, qdd_in, tau_in, mask, gravity_on, fext_on, poses, jac, spatial, inertia6, U,
                  Dinv, dofs):
    """Articulated-body hybrid dynamics (Featherstone Table 9.3, per
    coordinate, world coordinates). ``mask[k]`` True: ``qdd_in[k]`` is given
    and ``dofs[0, k]`` receives τ_k; False: ``tau_in[k]`` is given and
    ``dofs[1, k]`` receives q̈_k. Both outputs are complete (the given
    entries are copied). ``spatial[2]`` holds the external forces (body
    coordinates) on entry when ``fext_on``. Returns 0, or the index of the
    first body whose articulated inertia is singular along its free
    coordinates (a massless subtree)."""
    nb = tree.shape[0]
    world_motion_pass(tree, q, v, poses, jac, spatial)
    S = jac[1]
    Iv = np.empty(6)
    ap = np.empty(6)
    fidx = np.empty(6, dtype=np.int64)
    # pass 1: c_i += S_p q̈_p, then Iᴬ = I, pᴬ = v ×* I v − f_ext
    for i in range(1, nb):
        iv = int(tree[i, C_V])
        for k in range(iv, iv + int(tree[i, C_NV])):
            if mask[k]:
                x = qdd_in[k]
                for r in range(6):
                    spatial[3, i, r] += S[r, k] * x
    articulated_init(tree, poses, spatial, inertia6, fext_on)
    # pass 2: articulated inertias, reduced to the free coordinates
    D = np.empty((6, 6))
    Ia = np.empty((6, 6))
    UD = np.empty((6, 6))
    pa = np.empty(6)
    scratch = np.empty((2, 6, 6))
    for i in range(nb - 1, 0, -1):
        iv = int(tree[i, C_V])
        n = int(tree[i, C_NV])
        p = int(tree[i, C_PARENT])
        nf = 0
        for k in range(n):
            if not mask[iv + k]:
                fidx[nf] = k
                nf += 1
        if nf == 0:  # inverse-dynamics (or fixed) joint: Iᵃ = Iᴬ, pᵃ = pᴬ + Iᴬ c (Eqs. 9.9-9.10)
            if p > 0:
                for r in range(6):
                    x = spatial[2, i, r]
                    for c in range(6):
                        x += inertia6[i, r, c] * spatial[3, i, c]
                        inertia6[p, r, c] += inertia6[i, r, c]
                    spatial[2, p, r] += x
            continue
        if nf == 1:
            # the common case written out: U = Iᴬs, D = sᵀU, Iᵃ = Iᴬ − U Uᵀ/D, pᵃ = pᴬ + Iᵃc + U u/D
            k = iv + fidx[0]
            s0, s1, s2, s3, s4, s5 = S[0, k], S[1, k], S[2, k], S[3, k], S[4, k], S[5, k]
            for r in range(6):
                U[r, k] = (inertia6[i, r, 0] * s0 + inertia6[i, r, 1] * s1 + inertia6[i, r, 2] * s2
                           + inertia6[i, r, 3] * s3 + inertia6[i, r, 4] * s4 + inertia6[i, r, 5] * s5)
            d = (s0 * U[0, k] + s1 * U[1, k] + s2 * U[2, k] + s3 * U[3, k] + s4 * U[4, k] + s5 * U[5, k]
                 + tree[i, C_ARMATURE + fidx[0]])
            if not d > 0.0:
                return i
            dinv = 1.0 / d
            Dinv[iv, 0] = dinv
            u = tau_in[k] - (s0 * spatial[2, i, 0] + s1 * spatial[2, i, 1] + s2 * spatial[2, i, 2]
                             + s3 * spatial[2, i, 3] + s4 * spatial[2, i, 4] + s5 * spatial[2, i, 5])
            dofs[2, k] = u
            if p == 0:
                continue
            ud = u * dinv
            for r in range(6):
                ur = U[r, k] * dinv
                x = spatial[2, i, r] + U[r, k] * ud
                for c in range(6):
                    y = inertia6[i, r, c] - ur * U[c, k]
                    inertia6[p, r, c] += y
                    x += y * spatial[3, i, c]
                spatial[2, p, r] += x
            continue
        for a in range(nf):
            k = iv + fidx[a]
            for r in range(6):
                U[r, k] = (inertia6[i, r, 0] * S[0, k] + inertia6[i, r, 1] * S[1, k]
                           + inertia6[i, r, 2] * S[2, k] + inertia6[i, r, 3] * S[3, k]
                           + inertia6[i, r, 4] * S[4, k] + inertia6[i, r, 5] * S[5, k])
        for a in range(nf):
            k = iv + fidx[a]
            u = tau_in[k]
            for r in range(6):
                u -= S[r, k] * spatial[2, i, r]
            dofs[2, k] = u
            for b in range(nf):
                l = iv + fidx[b]
                x = 0.0
                for r in range(6):
                    x += S[r, k] * U[r, l]
                D[a, b] = x
            D[a, a] += tree[i, C_ARMATURE + fidx[a]]
        if not invert_spd_block(D, nf, Dinv, iv, scratch):
            return i
        if p == 0:
            continue
        for r in range(6):  # UD = U D⁻¹ (6 x nf)
            for b in range(nf):
                x = 0.0
                for a in range(nf):
                    x += U[r, iv + fidx[a]] * Dinv[iv + a, b]
                UD[r, b] = x
        for r in range(6):  # Iᵃ = Iᴬ − U D⁻¹ Uᵀ
            for c in range(6):
                x = inertia6[i, r, c]
                for a in range(nf):
                    x -= UD[r, a] * U[c, iv + fidx[a]]
                Ia[r, c] = x
        for r in range(6):  # pᵃ = pᴬ + Iᵃ c + U D⁻¹ u
            x = spatial[2, i, r]
            for c in range(6):
                x += Ia[r, c] * spatial[3, i, c]
            for a in range(nf):
                x += UD[r, a] * dofs[2, iv + fidx[a]]
            pa[r] = x
        for r in range(6):
            spatial[2, p, r] += pa[r]
            for c in range(6):
                inertia6[p, r, c] += Ia[r, c]
    # pass 3: accelerations from a_0 = −a_g; τ at the prescribed coordinates
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
        nf = 0
        for k in range(n):
            if not mask[iv + k]:
                fidx[nf] = k
                nf += 1
        for a in range(nf):  # u − Uᵀ a'
            k = iv + fidx[a]
            x = dofs[2, k]
            for r in range(6):
                x -= U[r, k] * ap[r]
            dofs[3, k] = x
        for a in range(nf):
            x = 0.0
            for b in range(nf):
                x += Dinv[iv + a, b] * dofs[3, iv + fidx[b]]
            k = iv + fidx[a]
            dofs[1, k] = x
            dofs[0, k] = tau_in[k]
            for r in range(6):
                ap[r] += S[r, k] * x
        for r in range(6):
            spatial[1, i, r] = ap[r]
        if nf == n:
            continue
        for r in range(6):  # f_i = Iᴬ a_i + pᴬ (Eq. 9.6)
            Iv[r] = (inertia6[i, r, 0] * ap[0] + inertia6[i, r, 1] * ap[1] + inertia6[i, r, 2] * ap[2]
                     + inertia6[i, r, 3] * ap[3] + inertia6[i, r, 4] * ap[4] + inertia6[i, r, 5] * ap[5]
                     + spatial[2, i, r])
        for k in range(n):
            if mask[iv + k]:
                l = iv + k
                x = tree[i, C_ARMATURE + k] * qdd_in[l]
                for r in range(6):
                    x += S[r, l] * Iv[r]
                dofs[0, l] = x
                dofs[1, l] = qdd_in[l]
    return 0


@njit(cache=True, nogil=True)
def hybrid_checked(tree, q, v, qdd_in, tau_in, mask, gravity_on, poses, jac, spatial, inertia6, U, Dinv, dofs):
    """:func:`hybrid_kernel` (no external forces) after validating the state
    in the same call. Status: 0; the ``state_status`` code of q or v;
    ``2 ARG + k + 1`` / ``3 ARG + k + 1`` for a non-finite used entry k of
    ``qdd_in`` / ``tau_in``; ``−ARG − body`` for a singular articulated inertia."""
    st = state_status(tree, q, v, v[:0])
    if st != 0:
        return st
    for k in range(v.shape[0]):
        if mask[k]:
            if not np.isfinite(qdd_in[k]):
                return 2 * ARG + k + 1
        elif not np.isfinite(tau_in[k]):
            return 3 * ARG + k + 1
    b = hybrid_kernel(tree, q, v, qdd_in, tau_in, mask, gravity_on, False, poses, jac, spatial, inertia6, U,
                      Dinv, dofs)
    if b:
        return -ARG - b
    return 0


@njit(cache=True, nogil=True)
def workspace(nb, nv):
    """Fresh (poses, jac, spatial, inertia6, U, Dinv, dofs) for one state."""
    poses = np.zeros((2, nb, 4, 4))
    for k in range(2):
        for i in range(nb):
            for r in range(4):
                poses[k, i, r, r] = 1.0
    return (poses, np.zeros((3, 6, nv)), np.zeros((4, nb, 6)), np.zeros((nb, 6, 6)), np.zeros((6, nv)),
            np.zeros((nv, 6)), np.zeros((4, nv)))


@njit(cache=True, nogil=True, parallel=True)
def hybrid_batch(tree, q, v, qdd_in, tau_in, mask, gravity_on, fext, fext_on, qdd_out, tau_out, status):
    nb = tree.shape[0]
    for b in prange(q.shape[0]):
        poses, jac, spatial, inertia6, U, Dinv, dofs = workspace(nb, v.shape[1])
        if fext_on:
            spatial[2] = fext[b]
        status[b] = hybrid_kernel(tree, q[b], v[b], qdd_in[b], tau_in[b], mask[b], gravity_on, fext_on, poses,
                                  jac, spatial, inertia6, U, Dinv, dofs)
        qdd_out[b] = dofs[1]
        tau_out[b] = dofs[0]
