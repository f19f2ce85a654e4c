"""Compiled end-of-step enforcement of joint position limits (the
algorithm of :class:`multibody.simulation.Simulator`'s docstring) and the
whole end of a step (finiteness, limits, velocity clamping)."""
import numpy as np
from numba import njit

from .._compiled import kept_at
from .._status import GIMBAL_LOCK, NON_FINITE, NON_FINITE_AFTER_LIMITS
from ..dynamics.closed_loop_kernels import apply_correction, constraint_gram, psd_apply, psd_factor, \
    range_space_acceleration, schur, solve_rows
from ..dynamics.kernels import crba_kernel, ltdl_kernel, ltdl_solve, rnea_kernel
from ..kinematics.kernels import fk_kernel, motion_kernel, motion_subspace_into
from ..model.joints import C_NV, C_PARENT, C_V
from ..model.configuration import chart_kernel, integrate_kernel
from ..solvers.lcp import principal_pivoting_lcp
from ..spatial.kernel_algebra import cross as _cross, rotate, to_parent


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
    q_out[:] = q1
    v_out[:] = v1
    if nr == 0:
        return 0
    phi = np.empty(nr)
    active = np.zeros(nr, np.bool_)
    n_active = 0
    for r in range(nr):
        phi[r] = sign[r] * (q1[q_index[r]] - bound[r])
        if phi[r] < 0.0:
            active[r] = True
            n_active += 1
    if n_active == 0:
        return 0
    crba_kernel(tree, lam, q1, poses, jac, inertia6, M)
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


@njit(cache=True, nogil=True, inline="always")  # inlined into the fused steps (integrators/_kernels.py)
def end_of_step_kernel(tree, lam, q1, v1, vmax, clamp_velocity, q_index, v_index, sign, bound, restitution,
                       threshold, poses, jac, inertia6, M, q_out, v_out, vel_mask):
    """Check that (q1, v1) is finite (else ``NON_FINITE``), enforce the
    position limits (:func:`enforce_limits_kernel`; its negative statuses
    pass through), clamp |v| to ``vmax`` where ``clamp_velocity``,
    marking ``vel_mask``, and keep Sueda's joints in a valid chart
    (:func:`~multibody.model.configuration.chart_kernel`; ``GIMBAL_LOCK -
    body`` for an Euler joint at gimbal lock). Writes (q_out, v_out); returns 0 when done, or
    ``NON_FINITE_AFTER_LIMITS`` if the result is not finite (the caller
    then takes the checked path, which names the quantity)."""
    s = 0.0
    for k in range(q1.shape[0]):
        s += q1[k]
    for k in range(v1.shape[0]):
        s += v1[k]
    if not np.isfinite(s):
        return NON_FINITE
    st = enforce_limits_kernel(tree, lam, q1, v1, q_index, v_index, sign, bound, restitution, threshold, poses,
                               jac, inertia6, M, q_out, v_out)
    if st < 0:
        return st
    for k in range(v_out.shape[0]):
        vel_mask[k] = False
        if clamp_velocity:
            if v_out[k] > vmax[k]:
                v_out[k] = vmax[k]
                vel_mask[k] = True
            elif v_out[k] < -vmax[k]:
                v_out[k] = -vmax[k]
                vel_mask[k] = True
    st = chart_kernel(tree, q_out, v_out)
    if st < 0:
        return GIMBAL_LOCK + st
    # a finite input must give a finite output: an impulse solve on an ill-conditioned mass
    # matrix could overflow, and nothing non-finite may reach the next step or a recording
    s = 0.0
    for k in range(q_out.shape[0]):
        s += q_out[k]
    for k in range(v_out.shape[0]):
        s += v_out[k]
    if not np.isfinite(s):
        return NON_FINITE_AFTER_LIMITS
    return 0


# The row kernels index the arrays they get (F[e, s, a, c], u[e, i], G[r, c]) and pass arrays with
# indices, never views: here a view costs ~15 ns (the reference count of its parent array goes up
# and down, atomically), as much as the arithmetic of a whole row of a small mechanism; and the small
# helpers are inlined (a call passing 4-D arrays cost ~15 ns, more than the 36 multiply-adds of a
# frame).
@njit(cache=True, nogil=True, inline="always")
def _frame(poses, i, P, r, F, e, s):
    """``F[e, s]`` (rows 0-2 of a 4x4) = world pose of the frame ``P[r]``
    on body i."""
    for a in range(3):
        for c in range(4):
            if i == 0:
                F[e, s, a, c] = P[r, a, c]
            else:
                x = poses[0, i, a, 3] if c == 3 else 0.0
                for m in range(3):
                    x += poses[0, i, a, m] * P[r, m, c]
                F[e, s, a, c] = x


@njit(cache=True, nogil=True, inline="always")
def _rot(F, e, s, x0, x1, x2):
    """``R x`` (3 scalars) for the rotation block of the frame ``F[e, s]``."""
    return (F[e, s, 0, 0] * x0 + F[e, s, 0, 1] * x1 + F[e, s, 0, 2] * x2,
            F[e, s, 1, 0] * x0 + F[e, s, 1, 1] * x1 + F[e, s, 1, 2] * x2,
            F[e, s, 2, 0] * x0 + F[e, s, 2, 1] * x1 + F[e, s, 2, 2] * x2)


@njit(cache=True, nogil=True, inline="always")
def _frame_motion(poses, spatial, i, x0, x1, x2, out, o):
    """World angular velocity, origin velocity, angular acceleration and
    classical origin acceleration at v̇ = 0 of the point x of body i (from
    the body-coordinate velocity ``spatial[0]`` and bias acceleration
    ``spatial[1]``), into rows o .. o+3 of out (., 3)."""
    if i == 0:
        for a in range(4):
            for c in range(3):
                out[o + a, c] = 0.0
        return
    w = rotate(poses, 0, i, spatial[0, i, 0], spatial[0, i, 1], spatial[0, i, 2])
    v0 = rotate(poses, 0, i, spatial[0, i, 3], spatial[0, i, 4], spatial[0, i, 5])
    al = rotate(poses, 0, i, spatial[1, i, 0], spatial[1, i, 1], spatial[1, i, 2])
    a0 = rotate(poses, 0, i, spatial[1, i, 3], spatial[1, i, 4], spatial[1, i, 5])
    # spatial vectors at the body origin p → velocity and acceleration at the point x
    d0, d1, d2 = x0 - poses[0, i, 0, 3], x1 - poses[0, i, 1, 3], x2 - poses[0, i, 2, 3]
    c = _cross(w[0], w[1], w[2], d0, d1, d2)
    pd = (v0[0] + c[0], v0[1] + c[1], v0[2] + c[2])
    c1 = _cross(al[0], al[1], al[2], d0, d1, d2)
    c2 = _cross(w[0], w[1], w[2], pd[0], pd[1], pd[2])
    for a in range(3):
        out[o, a] = w[a]
        out[o + 1, a] = pd[a]
        out[o + 2, a] = al[a]
        # classical acceleration of the point: the spatial acceleration at the point (a0 + α × d)
        # plus ω × (velocity of the point)
        out[o + 3, a] = a0[a] + c1[a] + c2[a]


@njit(cache=True, nogil=True, inline="always")
def _point_k(a0, a1, a2, d0, d1, d2, MM):
    """k of the point row with direction a = R_A u and offset d = p_B − p_A
    (:mod:`multibody.constraints.loops`), from the frames' motions in rows
    0-3 (A) and 4-7 (B) of MM (:func:`_frame_motion`)."""
    x0, x1, x2 = _cross(a0, a1, a2, d0, d1, d2)
    wA0, wA1, wA2 = MM[0, 0], MM[0, 1], MM[0, 2]
    wa = _cross(wA0, wA1, wA2, a0, a1, a2)
    dd0, dd1, dd2 = MM[5, 0] - MM[1, 0], MM[5, 1] - MM[1, 1], MM[5, 2] - MM[1, 2]
    t1 = _cross(wa[0], wa[1], wa[2], d0, d1, d2)
    t2 = _cross(a0, a1, a2, dd0, dd1, dd2)
    return -(x0 * MM[2, 0] + x1 * MM[2, 1] + x2 * MM[2, 2]
             + wA0 * (t1[0] + t2[0]) + wA1 * (t1[1] + t2[1]) + wA2 * (t1[2] + t2[2])
             + wa[0] * dd0 + wa[1] * dd1 + wa[2] * dd2
             + a0 * (MM[7, 0] - MM[3, 0]) + a1 * (MM[7, 1] - MM[3, 1]) + a2 * (MM[7, 2] - MM[3, 2]))


@njit(cache=True, nogil=True, inline="always")
def _point_rows(tree, jac, ia, ib, F, e0, e1, u, row, with_v, MM, phi, G, k):
    """The point rows ``φ = (R_A u)·(p_B − p_A)`` of entries e0 .. e1−1,
    which share the frames ``F[e0]`` (a spherical or welded loop joint's
    three): φ, their G rows and (with_v) k. A row's G is ``a·z`` with
    ``a = R_A u`` and, per column of the two paths,
    ``z = d × ω − (v + ω × p_A)`` on A's and ``z = v + ω × p_B`` on B's
    (d = p_B − p_A; ω, v the world joint axis ``jac[1]``): z is computed
    once per column for all the rows. ``MM``: the frames' motions (rows
    0-7, with_v) and scratch (rows 8 .. 8 + e1 − e0)."""
    d0 = F[e0, 1, 0, 3] - F[e0, 0, 0, 3]
    d1 = F[e0, 1, 1, 3] - F[e0, 0, 1, 3]
    d2 = F[e0, 1, 2, 3] - F[e0, 0, 2, 3]
    nv = G.shape[1]
    for e in range(e0, e1):
        a = _rot(F, e0, 0, u[e, 0], u[e, 1], u[e, 2])
        m = 8 + e - e0
        MM[m, 0], MM[m, 1], MM[m, 2] = a[0], a[1], a[2]
        r = row[e]
        phi[r] = a[0] * d0 + a[1] * d1 + a[2] * d2
        k[r] = _point_k(a[0], a[1], a[2], d0, d1, d2, MM) if with_v else 0.0
        for c in range(nv):
            G[r, c] = 0.0
    for side in range(2):
        j = ia if side == 0 else ib
        px, py, pz = F[e0, side, 0, 3], F[e0, side, 1, 3], F[e0, side, 2, 3]
        while j > 0:
            for c in range(int(tree[j, C_V]), int(tree[j, C_V]) + int(tree[j, C_NV])):
                o0, o1, o2 = jac[1, 0, c], jac[1, 1, c], jac[1, 2, c]
                t = _cross(o0, o1, o2, px, py, pz)
                z0, z1, z2 = jac[1, 3, c] + t[0], jac[1, 4, c] + t[1], jac[1, 5, c] + t[2]
                if side == 0:
                    y = _cross(d0, d1, d2, o0, o1, o2)
                    z0, z1, z2 = y[0] - z0, y[1] - z1, y[2] - z2
                for e in range(e0, e1):
                    m = 8 + e - e0
                    G[row[e], c] += MM[m, 0] * z0 + MM[m, 1] * z1 + MM[m, 2] * z2
            j = int(tree[j, C_PARENT])


@njit(cache=True, nogil=True, inline="always")
def _angle_row(tree, jac, ia, ib, F, e, u0, u1, u2, w0, w1, w2, with_v, MM, Gout, r):
    """Angle row ``φ = (R_A u)·(R_B w)`` of entry e (frames ``F[e]``):
    writes its G row into ``Gout[r]`` and returns (φ, k)."""
    a0, a1, a2 = _rot(F, e, 0, u0, u1, u2)
    b0, b1, b2 = _rot(F, e, 1, w0, w1, w2)
    x0, x1, x2 = _cross(a0, a1, a2, b0, b1, b2)       # c = a × b
    for c in range(Gout.shape[1]):
        Gout[r, c] = 0.0
    for side in range(2):
        j = ia if side == 0 else ib
        while j > 0:
            for c in range(int(tree[j, C_V]), int(tree[j, C_V]) + int(tree[j, C_NV])):
                s = x0 * jac[1, 0, c] + x1 * jac[1, 1, c] + x2 * jac[1, 2, c]
                Gout[r, c] += s if side == 0 else -s
            j = int(tree[j, C_PARENT])
    k = 0.0
    if with_v:
        wA0, wA1, wA2 = MM[0, 0], MM[0, 1], MM[0, 2]
        wB0, wB1, wB2 = MM[4, 0], MM[4, 1], MM[4, 2]
        wa = _cross(wA0, wA1, wA2, a0, a1, a2)
        wb = _cross(wB0, wB1, wB2, b0, b1, b2)
        t1 = _cross(wa[0], wa[1], wa[2], b0, b1, b2)
        t2 = _cross(a0, a1, a2, wb[0], wb[1], wb[2])
        k = -(x0 * (MM[2, 0] - MM[6, 0]) + x1 * (MM[2, 1] - MM[6, 1]) + x2 * (MM[2, 2] - MM[6, 2])
              + (wA0 - wB0) * (t1[0] + t2[0]) + (wA1 - wB1) * (t1[1] + t2[1]) + (wA2 - wB2) * (t1[2] + t2[2]))
    return a0 * b0 + a1 * b1 + a2 * b2, k


@njit(cache=True, nogil=True, inline="always")
def _same_frames(F, e, f):
    """True if the entries e and f have the same two frames."""
    for s in range(2):
        for a in range(3):
            for c in range(4):
                if F[e, s, a, c] != F[f, s, a, c]:
                    return False
    return True


@njit(cache=True, nogil=True, inline="always")
def entry_frames(poses, body_a, body_b, Pa, Pb, F):
    """``F[e, 0]``, ``F[e, 1]``: world poses (rows 0-2 of 4x4) of the two
    frames of every loop entry e, from the world poses ``poses[0]``. The
    rows of one loop joint share their frames: an entry whose bodies and
    placements equal the previous entry's copies its frames (12 loads
    instead of 36 multiply-adds per frame)."""
    for e in range(body_a.shape[0]):
        same = e > 0 and body_a[e] == body_a[e - 1] and body_b[e] == body_b[e - 1]
        if same:
            for a in range(3):
                for c in range(4):
                    if Pa[e, a, c] != Pa[e - 1, a, c] or Pb[e, a, c] != Pb[e - 1, a, c]:
                        same = False
        if same:
            for s in range(2):
                for a in range(3):
                    for c in range(4):
                        F[e, s, a, c] = F[e - 1, s, a, c]
        else:
            _frame(poses, body_a[e], Pa, e, F, e, 0)
            _frame(poses, body_b[e], Pb, e, F, e, 1)


@njit(cache=True, nogil=True, inline="always")
def phi_from_frames(q, row, kind, u, w, pitch, gear_row, gear_jq, gear_iq, ratio, offset, F, phi):
    """φ of every loop and gear row from the entries' frames ``F``
    (:func:`entry_frames`), without G: the residual a Newton iteration of
    the projection checks. The same arithmetic as the rows of
    :func:`constraint_rows_kernel`."""
    for e in range(kind.shape[0]):
        if kind[e] == 1:
            a = _rot(F, e, 0, u[e, 0], u[e, 1], u[e, 2])
            b = _rot(F, e, 1, w[e, 0], w[e, 1], w[e, 2])
            phi[row[e]] = a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
            continue
        a = _rot(F, e, 0, u[e, 0], u[e, 1], u[e, 2])
        ph = a[0] * (F[e, 1, 0, 3] - F[e, 0, 0, 3]) + a[1] * (F[e, 1, 1, 3] - F[e, 0, 1, 3]) \
            + a[2] * (F[e, 1, 2, 3] - F[e, 0, 2, 3])
        if kind[e] == 2:
            e0, e1, e2 = _cross(u[e, 0], u[e, 1], u[e, 2], w[e, 0], w[e, 1], w[e, 2])
            b = _rot(F, e, 1, w[e, 0], w[e, 1], w[e, 2])
            x = _rot(F, e, 0, w[e, 0], w[e, 1], w[e, 2])
            cc = x[0] * b[0] + x[1] * b[1] + x[2] * b[2]
            x = _rot(F, e, 0, e0, e1, e2)
            ss = x[0] * b[0] + x[1] * b[1] + x[2] * b[2]
            ph = ph - pitch[e] * np.arctan2(ss, cc)
        phi[row[e]] = ph
    for g in range(gear_row.shape[0]):
        phi[gear_row[g]] = q[gear_jq[g]] - ratio[g] * q[gear_iq[g]] - offset[g]


@njit(cache=True, nogil=True)
def rows_from_frames(tree, q, v, with_v, row, kind, body_a, body_b, u, w, pitch, gear_row, gear_jq, gear_jv, gear_iq,
                     gear_iv, ratio, offset, poses, jac, spatial, F, phi, G, k):
    """φ, G and (with_v) k of the rows (:func:`constraint_rows_kernel`)
    from the world poses, the world joint axes ``jac[1]`` (and, with_v,
    the body velocities and bias accelerations ``spatial``) and the
    entries' frames ``F``."""
    nv = G.shape[1]
    nr = kind.shape[0]
    MM = np.empty((8 + nr, 3))  # the frames' motions (A, B) and the point rows' directions
    H = np.empty((2, nv))       # G of the helical rows' angles
    e = 0
    while e < nr:
        r = row[e]
        ia, ib = body_a[e], body_b[e]
        if with_v:
            _frame_motion(poses, spatial, ia, F[e, 0, 0, 3], F[e, 0, 1, 3], F[e, 0, 2, 3], MM, 0)
            _frame_motion(poses, spatial, ib, F[e, 1, 0, 3], F[e, 1, 1, 3], F[e, 1, 2, 3], MM, 4)
        if kind[e] == 0:
            f = e + 1  # the point rows of one loop joint share their frames: one walk of the paths for all
            while f < nr and kind[f] == 0 and body_a[f] == ia and body_b[f] == ib and _same_frames(F, e, f):
                f += 1
            _point_rows(tree, jac, ia, ib, F, e, f, u, row, with_v, MM, phi, G, k)
            e = f
            continue
        if kind[e] == 1:
            phi[r], k[r] = _angle_row(tree, jac, ia, ib, F, e, u[e, 0], u[e, 1], u[e, 2], w[e, 0], w[e, 1], w[e, 2],
                                      with_v, MM, G, r)
        else:
            # θ = atan2(s, c), c = (R_A w)·(R_B w), s = (R_A (u × w))·(R_B w)
            _point_rows(tree, jac, ia, ib, F, e, e + 1, u, row, with_v, MM, phi, G, k)
            ph, kp = phi[r], k[r]
            e0, e1, e2 = _cross(u[e, 0], u[e, 1], u[e, 2], w[e, 0], w[e, 1], w[e, 2])
            cc, kc = _angle_row(tree, jac, ia, ib, F, e, w[e, 0], w[e, 1], w[e, 2], w[e, 0], w[e, 1], w[e, 2], with_v,
                                MM, H, 0)
            ss, ks = _angle_row(tree, jac, ia, ib, F, e, e0, e1, e2, w[e, 0], w[e, 1], w[e, 2], with_v, MM, H, 1)
            rho2 = cc * cc + ss * ss
            h = pitch[e]
            phi[r] = ph - h * np.arctan2(ss, cc)
            for c in range(nv):
                G[r, c] -= h * (cc * H[1, c] - ss * H[0, c]) / rho2
            if with_v:  # θ̈ = (c s̈ − s c̈)/ρ² − 2(c ṡ − s ċ)(c ċ + s ṡ)/ρ⁴
                cd = 0.0
                sd = 0.0
                for c in range(nv):
                    cd += H[0, c] * v[c]
                    sd += H[1, c] * v[c]
                k_theta = (cc * ks - ss * kc) / rho2 + 2.0 * (cc * sd - ss * cd) * (cc * cd + ss * sd) / (rho2 * rho2)
                k[r] = kp - h * k_theta
        e += 1
    for g in range(gear_row.shape[0]):
        r = gear_row[g]
        phi[r] = q[gear_jq[g]] - ratio[g] * q[gear_iq[g]] - offset[g]
        for c in range(nv):
            G[r, c] = 0.0
        G[r, gear_jv[g]] += 1.0
        G[r, gear_iv[g]] -= ratio[g]
        k[r] = 0.0


@njit(cache=True, nogil=True)
def constraint_rows_kernel(tree, q, v, with_v, row, kind, body_a, body_b, Pa, Pb, u, w, pitch, gear_row, gear_jq,
                           gear_jv, gear_iq, gear_iv, ratio, offset, poses, jac, spatial, phi, G, k):
    """φ, G and (with_v) k of the loop rows and gear rows described in
    :mod:`multibody.constraints.loops` (``kind`` 0: point row, 1: angle
    row, 2: helical row ``φ = (R_A u)·(p_B − p_A) − pitch·θ`` with θ the
    angle of B's w about the axis u from A's w; ``row[i]`` is the output
    row of entry i), with G's columns filled only on the paths from the two
    bodies to the root."""
    nv = G.shape[1]
    if with_v:
        motion_kernel(tree, q, v, np.zeros(nv), poses, jac, spatial)
    else:
        fk_kernel(tree, q, poses)
        for i in range(1, tree.shape[0]):
            motion_subspace_into(tree, i, q, jac[0], int(tree[i, C_V]))
    S = jac[0]
    for i in range(1, tree.shape[0]):
        for c in range(int(tree[i, C_V]), int(tree[i, C_V]) + int(tree[i, C_NV])):
            m = to_parent(poses, 0, i, S[0, c], S[1, c], S[2, c], S[3, c], S[4, c], S[5, c])
            for r in range(6):
                jac[1, r, c] = m[r]
    F = np.empty((kind.shape[0], 2, 4, 4))
    entry_frames(poses, body_a, body_b, Pa, Pb, F)
    rows_from_frames(tree, q, v, with_v, row, kind, body_a, body_b, u, w, pitch, gear_row, gear_jq, gear_jv, gear_iq,
                     gear_iv, ratio, offset, poses, jac, spatial, F, phi, G, k)


# ---------------------------------------------------------------- constrained steps
@njit(cache=True, nogil=True, inline="always")
def prepare_kernel(tree, lam, q, L, poses, jac, spatial, inertia6, frames_done, F, phi, G, Lf, X, AL, AD, scratch):
    """Everything the velocity-level KKT solves need at q: M(q) by CRBA
    into Lf (which leaves the world poses and joint axes the rows read), φ
    and G of the rows (the entries' frames ``F`` already at q if
    ``frames_done``), M's in-place LᵀDL factor ``Lf``, ``X = (M⁻¹Gᵀ)ᵀ``
    and the factor (AL, AD) of ``A = GM⁻¹Gᵀ``. Returns 0, or −2 if M is
    not positive definite. ``L``: the rows (:func:`loop_tuple`);
    ``scratch``: nc floats."""
    if rows_and_mass(tree, lam, q, L, poses, jac, spatial, inertia6, frames_done, F, phi, G, Lf, X, scratch) != 0:
        return -2
    schur(G, X, AL, AD)
    return 0


@njit(cache=True, nogil=True, inline="always")
def rows_and_mass(tree, lam, q, L, poses, jac, spatial, inertia6, frames_done, F, phi, G, Lf, X, scratch):
    """:func:`prepare_kernel` without A: M(q) by CRBA, its LᵀDL factor in
    Lf, φ and G of the rows, ``X = (M⁻¹Gᵀ)ᵀ``. Returns 0, or −2 if M is not
    positive definite."""
    row, kind, body_a, body_b, Pa, Pb, u, w, pitch, gear_row, gear_jq, gear_jv, gear_iq, gear_iv, ratio, offset = L
    crba_kernel(tree, lam, q, poses, jac, inertia6, Lf)
    if not frames_done:
        entry_frames(poses, body_a, body_b, Pa, Pb, F)
    # q stands in for the velocity, which the rows do not read without with_v
    rows_from_frames(tree, q, q, False, row, kind, body_a, body_b, u, w, pitch, gear_row, gear_jq, gear_jv, gear_iq,
                     gear_iv, ratio, offset, poses, jac, spatial, F, phi, G, scratch)
    if ltdl_kernel(lam, Lf) != 0:
        return -2
    solve_rows(lam, Lf, G, X)
    return 0


@njit(cache=True, nogil=True, inline="always")
def loop_tuple(row, kind, body_a, body_b, Pa, Pb, u, w, pitch, gear_row, gear_jq, gear_jv, gear_iq, gear_iv, ratio,
               offset):
    """The rows of :func:`constraint_rows_kernel` as one tuple ``L`` for the
    step kernels: a call with more than 30 arguments is compiled by
    CPython as a call with ``*args``, which Numba builds as a tuple copy of
    every array and cannot inline."""
    return (row, kind, body_a, body_b, Pa, Pb, u, w, pitch, gear_row, gear_jq, gear_jv, gear_iq, gear_iv, ratio,
            offset)


# The state the KKT solves keep at one configuration (the "set"): a flat float array ``meta`` =
# [valid flag, the configuration (nq), A's factor L (nc x nc), A's D (nc)] and the matrices Lf
# (nv x nv), G and X (nc x nv). The post-stabilization leaves the set at the final configuration of a
# step, which the next semi-implicit Euler step starts from: when the flag is set and the key equals
# its q bit for bit, the step reuses it (the same numbers it would compute).
@njit(cache=True, nogil=True, inline="always")
def set_views(meta, nq, nc):
    """(key, AL, AD): the views of a set's flat part ``meta``."""
    return meta[1:1 + nq], meta[1 + nq:1 + nq + nc * nc].reshape((nc, nc)), meta[1 + nq + nc * nc:1 + nq + nc * nc + nc]


@njit(cache=True, nogil=True, inline="always")
def fresh_set(nq, nv, nc):
    """A new, empty set: (meta, Lf, G, X)."""
    meta = np.empty(1 + nq + nc * nc + nc)
    meta[0] = 0.0
    return meta, np.empty((nv, nv)), np.empty((nc, nv)), np.empty((nc, nv))


@njit(cache=True, nogil=True, inline="always")
def table_set(store, A, B, C, nq, nv, nc):
    """The set kept in a step table: the flat part in ``store`` and Lf, G,
    X in the nv x nv matrices A, B, C (which the semi-implicit Euler step
    does not otherwise use), when they fit; else a :func:`fresh_set`."""
    if nc <= nv and 1 + nq + nc * nc + nc <= store.shape[0]:
        return store, A, B[:nc], C[:nc]
    return fresh_set(nq, nv, nc)


@njit(cache=True, nogil=True, inline="always")
def _project_velocity(G, X, AL, AD, v, phi, mu, y, dv, v_out):
    """The velocity projection ``v_out = v − M⁻¹Gᵀ(GM⁻¹Gᵀ)⁺Gv`` (ArtiSynth
    §0.5) with the factors of :func:`prepare_kernel`; phi, mu, y, dv: scratch."""
    nc, nv = G.shape[0], v.shape[0]
    for i in range(nc):
        s = 0.0
        for c in range(nv):
            s += G[i, c] * v[c]
        phi[i] = s
    apply_correction(X, AL, AD, phi, mu, y, dv)
    for c in range(nv):
        v_out[c] = v[c] - dv[c]


@njit(cache=True, nogil=True, inline="always")
def loop_projector(X, AL, AD, G, T, mu, y):
    """``T = M⁻¹Gᵀ A⁺ G = Xᵀ A⁺ G`` (nv x nv) from X = (M⁻¹Gᵀ)ᵀ and the
    factor (AL, AD) of A = GM⁻¹Gᵀ (:func:`schur`; of A + cfm·I for soft
    loops): the operator that takes out of a contact impulse's effect what
    the loops' impulses answer with (``C.loop_T`` of the contact stage,
    :meth:`~multibody.constraints.contact.ContactTable.hold_loops`).
    mu, y: scratch (nc)."""
    nc, nv = G.shape
    S, col = np.empty((nc, nv)), np.empty(nc)
    for j in range(nv):
        for r in range(nc):
            col[r] = G[r, j]
        psd_apply(AL, AD, col, mu, y)
        for r in range(nc):
            S[r, j] = mu[r]
    for i in range(nv):
        for j in range(nv):
            s = 0.0
            for r in range(nc):
                s += X[r, i] * S[r, j]
            T[i, j] = s


@njit(cache=True, nogil=True)
def sie_step(tree, lam, q, v, tau, dt, gravity_on, L, poses, jac, spatial, inertia6, meta, Lf, G, X, q_out, v_out):
    """:func:`constrained_sie_kernel` with the set (meta, Lf, G, X): reused
    when it holds q, else computed at q (:func:`prepare_kernel`) and kept.
    ``L``: the rows (:func:`loop_tuple`)."""
    nq, nv, nc = q.shape[0], v.shape[0], G.shape[0]
    key, AL, AD = set_views(meta, nq, nc)
    hit = kept_at(meta[0], key, q)
    nr = L[1].shape[0]
    b = np.empty(32 * nr + 3 * nc + 2 * nv)
    F = b[:32 * nr].reshape((nr, 2, 4, 4))
    o = 32 * nr
    phi, mu, y = b[o:o + nc], b[o + nc:o + 2 * nc], b[o + 2 * nc:o + 3 * nc]
    a, c = b[o + 3 * nc:o + 3 * nc + nv], b[o + 3 * nc + nv:o + 3 * nc + 2 * nv]
    if not hit:
        meta[0] = 0.0
        if prepare_kernel(tree, lam, q, L, poses, jac, spatial, inertia6, False, F, phi, G, Lf, X, AL, AD, mu) != 0:
            return -2
        for i in range(nq):
            key[i] = q[i]
        meta[0] = 1.0
    for i in range(nv):
        a[i] = 0.0
    rnea_kernel(tree, q, v, a, gravity_on, False, poses, spatial, c)
    for i in range(nv):  # the free velocity v* = v + h M⁻¹(τ − C)
        a[i] = tau[i] - c[i]
    ltdl_solve(lam, Lf, a)
    for i in range(nv):
        a[i] = v[i] + dt * a[i]
    _project_velocity(G, X, AL, AD, a, phi, mu, y, c, v_out)
    integrate_kernel(tree, q, v_out, dt, q_out)
    return 0


@njit(cache=True, nogil=True)
def soft_sie_step(tree, lam, q, v, tau, dt, gravity_on, L, poses, jac, spatial, inertia6, erp, cfm, gdot, Lf, G, X,
                  hold, loop_T, q_out, v_out):
    """Semi-implicit Euler with compliant bilateral constraints: the
    regularized KKT step ``[M −Gᵀ; G cfm·I][v⁺; Λ] = [M v*; g]`` solved by
    its Schur complement, ``Λ = (GM⁻¹Gᵀ + cfm·I)⁻¹(g − Gv*)``,
    ``v⁺ = v* + M⁻¹GᵀΛ``, then ``q⁺ = q ⊕ h v⁺``; v* = v + hM⁻¹(τ − C).
    ``g = −erp·φ``, and with ``gdot`` Drumwright's velocity-product terms
    ``−hĠv − h·cfm·M̂Ġv`` (eq. 53, M̂ = (GM⁻¹Gᵀ)⁺ by SVD, Ġv = −k of
    :func:`constraint_rows_kernel`; pitfall P2 of notes/seed-003.md).
    Drumwright's law (§4.2, notes C7) is ``erp = K/(hK + B)``,
    ``cfm = 1/(h(hK + B))``; ArtiSynth's soft constraint (§0.11) ``erp = γ/h``,
    ``cfm = γα/h²`` (:meth:`multibody.formulations.ReducedSystem.loop_regularization`).
    cfm > 0 makes the Schur complement positive definite, redundant rows
    included. Lf, G, X: scratch of the set's shapes (:func:`fresh_set`).
    ``hold``: also ``loop_T = M⁻¹Gᵀ(GM⁻¹Gᵀ + cfm·I)⁻¹G`` (nv x nv), with
    which a contact stage after the step holds the loops
    (:func:`loop_projector`). Returns 0, or −2 if M is not positive
    definite."""
    row, kind, body_a, body_b, Pa, Pb, u, w, pitch, gear_row, gear_jq, gear_jv, gear_iq, gear_iv, ratio, offset = L
    nv, nc = v.shape[0], G.shape[0]
    nr = kind.shape[0]
    b = np.empty(32 * nr + 5 * nc + 2 * nv + nc * nc)
    F = b[:32 * nr].reshape((nr, 2, 4, 4))
    o = 32 * nr
    phi, k, g, y, D = b[o:o + nc], b[o + nc:o + 2 * nc], b[o + 2 * nc:o + 3 * nc], b[o + 3 * nc:o + 4 * nc], \
        b[o + 4 * nc:o + 5 * nc]
    o += 5 * nc
    a, c = b[o:o + nv], b[o + nv:o + 2 * nv]
    W = b[o + 2 * nv:o + 2 * nv + nc * nc].reshape((nc, nc))
    if gdot:  # k at (q, v) first: the rows below overwrite the poses' velocities
        constraint_rows_kernel(tree, q, v, True, row, kind, body_a, body_b, Pa, Pb, u, w, pitch, gear_row, gear_jq,
                               gear_jv, gear_iq, gear_iv, ratio, offset, poses, jac, spatial, phi, G, k)
    for i in range(nv):
        a[i] = 0.0
    rnea_kernel(tree, q, v, a, gravity_on, False, poses, spatial, c)
    if rows_and_mass(tree, lam, q, L, poses, jac, spatial, inertia6, False, F, phi, G, Lf, X, y) != 0:
        return -2
    for i in range(nv):  # the free velocity v* = v + h M⁻¹(τ − C)
        a[i] = tau[i] - c[i]
    ltdl_solve(lam, Lf, a)
    for i in range(nv):
        a[i] = v[i] + dt * a[i]
    constraint_gram(G, X, W)  # its lower triangle, which the factor reads
    for i in range(nc):
        s = 0.0
        for m in range(nv):
            s += G[i, m] * a[m]
        g[i] = -erp * phi[i] - s
    if gdot:
        for i in range(nc):  # the whole of W for its pseudo-inverse
            for j in range(i):
                W[j, i] = W[i, j]
        Mk = np.linalg.pinv(W) @ k
        for i in range(nc):
            g[i] += dt * k[i] + dt * cfm * Mk[i]
    for i in range(nc):
        W[i, i] += cfm
    psd_factor(W, D, 0.0)
    psd_apply(W, D, g, k, y)  # Λ into k
    if hold:
        loop_projector(X, W, D, G, loop_T, g, y)
    for m in range(nv):
        s = a[m]
        for i in range(nc):
            s += X[i, m] * k[i]
        v_out[m] = s
    integrate_kernel(tree, q, v_out, dt, q_out)
    return 0


@njit(cache=True, nogil=True)
def project_step(tree, lam, q, v, L, poses, jac, spatial, inertia6, tol, max_iterations, meta, Lf, G, X, q_out, v_out):
    """:func:`project_kernel` in the set (meta, Lf, G, X), which it leaves
    at the final configuration. ``L``: the rows (:func:`loop_tuple`)."""
    row, kind, body_a, body_b, Pa, Pb, u, w, pitch, gear_row, gear_jq, gear_jv, gear_iq, gear_iv, ratio, offset = L
    nq, nv, nc = q.shape[0], v.shape[0], G.shape[0]
    key, AL, AD = set_views(meta, nq, nc)
    nr = kind.shape[0]
    b = np.empty(32 * nr + 3 * nc + nv + nq)
    F = b[:32 * nr].reshape((nr, 2, 4, 4))
    o = 32 * nr
    phi, mu, y = b[o:o + nc], b[o + nc:o + 2 * nc], b[o + 2 * nc:o + 3 * nc]
    dq, qt = b[o + 3 * nc:o + 3 * nc + nv], b[o + 3 * nc + nv:o + 3 * nc + nv + nq]
    meta[0] = 0.0
    for i in range(nq):
        q_out[i] = q[i]
    # one call of prepare_kernel: at the first iterate, and at a later one when it is the last
    # (G and M for the velocity projection) or the Newton step needs them
    prepare, frames_done, here, it = True, False, False, 0
    while True:
        if prepare:
            if prepare_kernel(tree, lam, q_out, L, poses, jac, spatial, inertia6, frames_done, F, phi, G, Lf, X, AL,
                              AD, mu) != 0:
                return -2
            prepare, here = False, True  # the set is at the current iterate
        err = 0.0
        for i in range(nc):
            err = max(err, abs(phi[i]))
        if err <= tol or it < max_iterations:
            if not here:
                prepare = True
                continue
            if err <= tol:
                break
        else:
            return -1
        apply_correction(X, AL, AD, phi, mu, y, dq)
        for c in range(nv):
            dq[c] = -dq[c]
        for i in range(nq):
            qt[i] = q_out[i]
        integrate_kernel(tree, qt, dq, 1.0, q_out)
        it += 1
        # the residual alone (forward kinematics and the frames) decides whether G and M are needed here
        fk_kernel(tree, q_out, poses)
        entry_frames(poses, body_a, body_b, Pa, Pb, F)
        phi_from_frames(q_out, row, kind, u, w, pitch, gear_row, gear_jq, gear_iq, ratio, offset, F, phi)
        here, frames_done = False, True
    _project_velocity(G, X, AL, AD, v, phi, mu, y, dq, v_out)
    for i in range(nq):
        key[i] = q_out[i]
    meta[0] = 1.0
    return it


@njit(cache=True, nogil=True)
def project_kernel(tree, lam, q, v, row, kind, body_a, body_b, Pa, Pb, u, w, pitch, gear_row, gear_jq, gear_jv,
                   gear_iq, gear_iv, ratio, offset, poses, jac, spatial, inertia6, M, tol, max_iterations, q_out, v_out):
    """Post-stabilization (ArtiSynth §0.5): Newton iterations
    ``q ← q ⊕ −M⁻¹Gᵀ(GM⁻¹Gᵀ)⁺φ`` until ``max|φ| ≤ tol``, then the velocity
    projection ``v ← v − M⁻¹Gᵀ(GM⁻¹Gᵀ)⁺Gv`` at the final q. Returns the
    number of Newton iterations, or −1 if they did not converge, −2 if M is
    not positive definite. (``M`` is not used: the factors are computed in
    a set of their own, :func:`project_step`.)"""
    meta, Lf, G, X = fresh_set(q.shape[0], v.shape[0], phi_size(row, gear_row))
    L = loop_tuple(row, kind, body_a, body_b, Pa, Pb, u, w, pitch, gear_row, gear_jq, gear_jv, gear_iq, gear_iv,
                   ratio, offset)
    return project_step(tree, lam, q, v, L, poses, jac, spatial, inertia6, tol, max_iterations, meta, Lf, G, X, q_out,
                        v_out)


@njit(cache=True, nogil=True, inline="always")
def phi_size(row, gear_row):
    n = 0
    for r in row:
        n = max(n, r + 1)
    for r in gear_row:
        n = max(n, r + 1)
    return n


@njit(cache=True, nogil=True)
def constrained_acceleration_kernel(tree, lam, q, v, tau, gravity_on, baumgarte, row, kind, body_a, body_b, Pa,
                                    Pb, u, w, pitch, gear_row, gear_jq, gear_jv, gear_iq, gear_iv, ratio, offset, poses,
                                    jac, spatial, inertia6, M, out):
    """Closed-loop forward dynamics of the loop rows at (q, v):
    :func:`~multibody.dynamics.closed_loop_kernels.range_space_acceleration`
    (Featherstone §8.5, method 2) with ``K q̈ = k_stab``,
    ``k_stab = k − 2ω Kv − ω²φ`` (§8.3, ω = ``baumgarte``). Returns 0, or
    −2 if H is not positive definite."""
    nv = v.shape[0]
    nc = phi_size(row, gear_row)
    phi, K, k = np.empty(nc), np.empty((nc, nv)), np.empty(nc)
    constraint_rows_kernel(tree, q, v, True, row, kind, body_a, body_b, Pa, Pb, u, w, pitch, gear_row, gear_jq, gear_jv,
                           gear_iq, gear_iv, ratio, offset, poses, jac, spatial, phi, K, k)
    for i in range(nc):
        t = 0.0
        for j in range(nv):
            t += K[i, j] * v[j]
        k[i] = k[i] - 2.0 * baumgarte * t - baumgarte * baumgarte * phi[i]
    return range_space_acceleration(tree, lam, q, v, tau, gravity_on, K, k, poses, jac, spatial, inertia6, M, out,
                                    np.empty(nc))


@njit(cache=True, nogil=True)
def constrained_sie_kernel(tree, lam, q, v, tau, dt, gravity_on, row, kind, body_a, body_b, Pa, Pb, u, w, pitch,
                           gear_row, gear_jq, gear_jv, gear_iq, gear_iv, ratio, offset, poses, jac, spatial,
                           inertia6, M, q_out, v_out):
    """Semi-implicit Euler with hard bilateral constraints (ArtiSynth
    §0.9.1, §0.10): the free velocity ``v* = v + hM⁻¹(τ − C)`` (τ with every
    applied force, joint damping included) is
    corrected to ``v⁺ = v* − M⁻¹Gᵀ(GM⁻¹Gᵀ)⁺Gv*`` (the KKT step
    ``[M −Gᵀ; G 0]`` solved by its Schur complement), then
    ``q⁺ = q ⊕ h v⁺``. Returns 0, or −2 if M is not positive definite.
    (``M`` is not used: the factors are computed in a set of their own,
    :func:`sie_step`.)"""
    meta, Lf, G, X = fresh_set(q.shape[0], v.shape[0], phi_size(row, gear_row))
    L = loop_tuple(row, kind, body_a, body_b, Pa, Pb, u, w, pitch, gear_row, gear_jq, gear_jv, gear_iq, gear_iv,
                   ratio, offset)
    return sie_step(tree, lam, q, v, tau, dt, gravity_on, L, poses, jac, spatial, inertia6, meta, Lf, G, X, q_out,
                    v_out)
