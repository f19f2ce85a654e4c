"""Kernels over the whole configuration vector: integrate, difference,
normalize. Each loops over the joints and calls the joint rule of
:mod:`multibody.model.joints`; batched variants run in parallel."""
import numpy as np
from numba import njit, prange

from .checks import QUATERNION_TOLERANCE
from .joints import (C_NQ, C_Q, C_QUATERNIONS, C_TYPE, C_V, EULER, EXP_SPHERICAL, FREE, FREE3D, SPHERICAL,
                     difference_joint, integrate_joint, motion_subspace_into, normalize_joint, qdot_joint)
from .sueda_joints import right_jacobian_and_rate

# |det| of an Euler joint's 3x3 motion subspace (|sin q₂| for XZX) below which a simulation stops at
# gimbal lock: there q̇ = S⁻¹ω is unbounded (at |det S| = 1e-4 the rates are 10⁴ times ω)
GIMBAL_LOCK_TOLERANCE = 1e-4


@njit(cache=True, nogil=True, inline="always")
def q_status(tree, q):
    """0 if ``q`` is finite with unit quaternions (within QUATERNION_TOLERANCE
    on |q|²); otherwise ``1 + index`` of the first non-finite entry, or
    ``-body`` for the first body whose quaternion is not unit. Checked APIs
    validate with this inside their kernel call instead of extra numpy passes."""
    z = 0.0
    for k in range(q.shape[0]):  # 0·x is NaN iff x is not finite: one test, no branch per entry
        z += 0.0 * q[k]
    if z != 0.0:
        for k in range(q.shape[0]):
            if not np.isfinite(q[k]):
                return 1 + k
    if tree[0, C_QUATERNIONS] == 0.0:
        return 0
    for i in range(1, tree.shape[0]):
        jt = int(tree[i, C_TYPE])
        if jt == SPHERICAL or jt == FREE:
            s = int(tree[i, C_Q]) + (3 if jt == FREE else 0)
            n2 = q[s] * q[s] + q[s + 1] * q[s + 1] + q[s + 2] * q[s + 2] + q[s + 3] * q[s + 3]
            if abs(n2 - 1.0) > QUATERNION_TOLERANCE:
                return -i
    return 0


@njit(cache=True, nogil=True)
def q_status_rows(tree, q):
    """(row, status) of the first row of a batch of configurations that
    fails :func:`q_status`, or (-1, 0)."""
    for b in range(q.shape[0]):
        st = q_status(tree, q[b])
        if st != 0:
            return b, st
    return -1, 0


@njit(cache=True, nogil=True)
def integrate_kernel(tree, q, v, dt, out):
    for i in range(1, tree.shape[0]):
        integrate_joint(int(tree[i, C_TYPE]), q, int(tree[i, C_Q]), v, int(tree[i, C_V]), dt, out, int(tree[i, C_NQ]))


@njit(cache=True, nogil=True)
def qdot_kernel(tree, q, v, out):
    for i in range(1, tree.shape[0]):
        qdot_joint(int(tree[i, C_TYPE]), q, int(tree[i, C_Q]), v, int(tree[i, C_V]), out, int(tree[i, C_NQ]))


@njit(cache=True, nogil=True, parallel=True)
def qdot_batch(tree, q, v, out):
    for b in prange(q.shape[0]):
        qdot_kernel(tree, q[b], v[b], out[b])


@njit(cache=True, nogil=True)
def difference_kernel(tree, q0, q1, out):
    for i in range(1, tree.shape[0]):
        difference_joint(int(tree[i, C_TYPE]), q0, q1, int(tree[i, C_Q]), int(tree[i, C_V]), out, int(tree[i, C_NQ]))


@njit(cache=True, nogil=True)
def normalize_kernel(tree, q):
    for i in range(1, tree.shape[0]):
        normalize_joint(int(tree[i, C_TYPE]), q, int(tree[i, C_Q]))


@njit(cache=True, nogil=True, parallel=True)
def integrate_batch(tree, q, v, dt, out):
    for b in prange(q.shape[0]):
        integrate_kernel(tree, q[b], v[b], dt, out[b])


@njit(cache=True, nogil=True, parallel=True)
def difference_batch(tree, q0, q1, out):
    for b in prange(q0.shape[0]):
        difference_kernel(tree, q0[b], q1[b], out[b])


@njit(cache=True, nogil=True, parallel=True)
def normalize_batch(tree, q):
    for b in prange(q.shape[0]):
        normalize_kernel(tree, q[b])


@njit(cache=True, nogil=True)
def chart_kernel(tree, q, v):
    """Keep Sueda's joints in a valid coordinate chart, in place, after a
    step: an exponential-coordinate joint (exp_spherical, free3d) whose
    rotation vector r has |r| > π is reparameterized to the same rotation,
    ``r ← (1 − 2π/|r|) r`` (|r| < π), with ``ṙ ← J_r(r_new)⁻¹ J_r(r) ṙ`` so
    that the angular velocity is unchanged (Sueda §2.4.8; the free joint's
    translation and its rate are unchanged: R and ω are). Returns 0, or
    ``-i`` for the first body i whose Euler joint is at gimbal lock
    (``|det S| < GIMBAL_LOCK_TOLERANCE``), where no chart change helps."""
    for i in range(1, tree.shape[0]):
        jt = int(tree[i, C_TYPE])
        if jt == EXP_SPHERICAL or jt == FREE3D:
            iq, iv = int(tree[i, C_Q]), int(tree[i, C_V])
            r0, r1, r2 = q[iq], q[iq + 1], q[iq + 2]
            n = np.sqrt(r0 * r0 + r1 * r1 + r2 * r2)
            if n > np.pi:
                J0 = right_jacobian_and_rate(r0, r1, r2, 0.0, 0.0, 0.0)[0]
                w = np.empty(3)  # J_r ṙ, written out: v may be a non-contiguous view
                for r in range(3):
                    w[r] = J0[r, 0] * v[iv] + J0[r, 1] * v[iv + 1] + J0[r, 2] * v[iv + 2]
                c = 1.0 - 2.0 * np.pi / n
                q[iq], q[iq + 1], q[iq + 2] = c * r0, c * r1, c * r2
                J1 = right_jacobian_and_rate(c * r0, c * r1, c * r2, 0.0, 0.0, 0.0)[0]
                rd = np.linalg.solve(J1, w)
                v[iv], v[iv + 1], v[iv + 2] = rd[0], rd[1], rd[2]
        elif jt == EULER:  # (S allocated here: the end of every step of every model runs this loop)
            S = np.empty((6, 3))
            motion_subspace_into(tree, i, q, S, 0)
            d = (S[0, 0] * (S[1, 1] * S[2, 2] - S[1, 2] * S[2, 1]) - S[0, 1] * (S[1, 0] * S[2, 2] - S[1, 2] * S[2, 0])
                 + S[0, 2] * (S[1, 0] * S[2, 1] - S[1, 1] * S[2, 0]))
            if abs(d) < GIMBAL_LOCK_TOLERANCE:
                return -i
    return 0
