"""Kernels over the whole configuration vector: integrate, difference,
normalize. Each loops over the joints and calls the joint rule of
:mod:`multibody.model.joints`; batched variants run in parallel."""
from numba import njit, prange

from .joints import C_Q, C_TYPE, C_V, difference_joint, integrate_joint, normalize_joint, qdot_joint


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
