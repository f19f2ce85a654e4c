"""Compiled end-of-step enforcement of joint position limits (the
algorithm of :class:`multibody.simulation.Simulator`'s docstring)."""
import numpy as np
from numba import njit

from ..dynamics.kernels import crba_kernel, ltdl_kernel, ltdl_solve
from ..model.configuration import integrate_kernel
from ..solvers.lcp import principal_pivoting_lcp


@njit(cache=True, nogil=True)
def enforce_limits_kernel(tree, lam, q1, v1, q_index, v_index, sign, bound, restitution, threshold,
                          poses, jac, inertia6, M, q_out, v_out):
    """Rows with φ(q1) < 0 get impulses from the velocity LCP and a shift
    from the position LCP, both with ``A = G M⁻¹Gᵀ`` (M by CRBA and the
    sparse LᵀDL, Featherstone Tables 6.2–6.3); rows the shift pushes past
    their limit are added and the LCPs solved again. Writes (q_out, v_out);
    returns the number of active rows, −1 if M is not positive definite,
    −2 if an LCP did not finish (the caller falls back to NNLS)."""
    nr = sign.shape[0]
    nv = v1.shape[0]
    phi = np.empty(nr)
    active = np.zeros(nr, np.bool_)
    n_active = 0
    for r in range(nr):
        phi[r] = sign[r] * (q1[q_index[r]] - bound[r])
        if phi[r] < 0.0:
            active[r] = True
            n_active += 1
    q_out[:] = q1
    v_out[:] = v1
    if n_active == 0:
        return 0
    crba_kernel(tree, q1, poses, jac, inertia6, M)
    if ltdl_kernel(lam, M) != 0:
        return -1
    X = np.empty((nr, nv))  # row r: M⁻¹ Gᵣᵀ, computed when row r becomes active
    done = np.zeros(nr, np.bool_)
    dq = np.empty(nv)
    rows = np.empty(nr, np.int64)
    while True:
        m = 0
        for r in range(nr):
            if active[r]:
                rows[m] = r
                m += 1
                if not done[r]:
                    for k in range(nv):
                        X[r, k] = 0.0
                    X[r, v_index[r]] = sign[r]
                    ltdl_solve(lam, M, X[r])
                    done[r] = True
        A = np.empty((m, m))
        b_vel = np.empty(m)
        b_pos = np.empty(m)
        for a in range(m):
            ra = rows[a]
            for c in range(m):
                A[a, c] = sign[ra] * X[rows[c], v_index[ra]]
            vn = sign[ra] * v1[v_index[ra]]
            target = -restitution * vn if (restitution > 0.0 and vn < -threshold) else 0.0
            b_vel[a] = vn - target
            b_pos[a] = phi[ra]
        impulse, shift, w = np.empty(m), np.empty(m), np.empty(m)
        it = 50 + 10 * m * m
        if principal_pivoting_lcp(A, b_vel, impulse, w, it) < 0 or principal_pivoting_lcp(A, b_pos, shift, w, it) < 0:
            return -2
        for k in range(nv):
            dq[k] = 0.0
        for a in range(m):
            x = shift[a]
            if x != 0.0:
                for k in range(nv):
                    dq[k] += X[rows[a], k] * x
        integrate_kernel(tree, q1, dq, 1.0, q_out)
        pushed = False
        for r in range(nr):
            if not active[r] and sign[r] * (q_out[q_index[r]] - bound[r]) < 0.0:
                active[r] = True
                pushed = True
        if not pushed:
            for a in range(m):
                x = impulse[a]
                if x != 0.0:
                    for k in range(nv):
                        v_out[k] += X[rows[a], k] * x
            return m
