"""Kernels over the whole configuration vector: integrate, difference,
normalize. Each loops over the joints and calls the joint rule of
:mod:`multibody.model.joints`; batched variants run in parallel."""
import numpy as np
from numba import njit, prange

from .checks import QUATERNION_TOLERANCE
from .joints import (C_Q, C_QUATERNIONS, C_TYPE, C_V, FREE, SPHERICAL, difference_joint, integrate_joint, normalize_joint,
                     qdot_joint)


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
        integrate_joint(int(tree[i, C_TYPE]), q, int(tree[i, C_Q]), v, int(tree[i, C_V]), dt, out)


@njit(cache=True, nogil=True)
def qdot_kernel(tree, q, v, out):
    for i in range(1, tree.shape[0]):
        qdot_joint(int(tree[i, C_TYPE]), q, int(tree[i, C_Q]), v, int(tree[i, C_V]), out)


@njit(cache=True, nogil=True, parallel=True)
def qdot_batch(tree, q, v, out):
    for b in prange(q.shape[0]):
        qdot_kernel(tree, q[b], v[b], out[b])


@njit(cache=True, nogil=True)
def difference_kernel(tree, q0, q1, out):
    for i in range(1, tree.shape[0]):
        difference_joint(int(tree[i, C_TYPE]), q0, q1, int(tree[i, C_Q]), int(tree[i, C_V]), out)


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
