"""The time derivative of the world-frame joint Jacobian (Pinocchio's
``computeJointJacobiansTimeVariation``), used with the constraint and
contact rows (``J̇ q̇`` terms) and by the derivatives of the dynamics.

Column k of the world joint Jacobian (:func:`~multibody.kinematics.joint_jacobians`,
spatial motion at the world origin, world axes, angular first) is
``J_k = Ad(⁰Xᵢ) Sᴶ_k`` for the body i that joint k moves. Its time
derivative along the motion ``q̇ ↔ v`` is

``J̇_k = vᵢ × J_k + Ad(⁰Xᵢ) Ṡᴶ_k``

(Featherstone Eq. 2.41 for the moving frame, with ``vᵢ`` body i's world
spatial velocity; the second term is nonzero only for joints whose
subspace varies in the child frame: universal and Sueda's joints). One
compiled pass, O(nv)."""
import numpy as np
from numba import njit

from ..kinematics.kernels import fk_kernel
from ..model.checks import finite_result
from ..model.joints import C_NV, C_PARENT, C_TYPE, C_V, VARYING_SUBSPACE, subspace_column, subspace_rate_into
from ..spatial.kernel_algebra import cross_motion, to_parent
from ._common import config, data_for, velocity


@njit(cache=True, nogil=True)
def jacobian_rate_kernel(tree, q, v, poses, vel, J, dJ):
    """``J`` (6, nv) the world joint Jacobian and ``dJ`` its time
    derivative at (q, v); ``vel`` (nb, 6) receives the bodies' world
    spatial velocities."""
    fk_kernel(tree, q, poses)
    Sd = np.zeros((6, 6))
    for r in range(6):
        vel[0, r] = 0.0
    for i in range(1, tree.shape[0]):
        p = int(tree[i, C_PARENT])
        iv = int(tree[i, C_V])
        n = int(tree[i, C_NV])
        w0, w1, w2, w3, w4, w5 = vel[p, 0], vel[p, 1], vel[p, 2], vel[p, 3], vel[p, 4], vel[p, 5]
        for k in range(n):
            s0, s1, s2, s3, s4, s5 = subspace_column(tree, i, q, k)
            m = to_parent(poses, 0, i, s0, s1, s2, s3, s4, s5)
            qd = v[iv + k]
            w0, w1, w2, w3, w4, w5 = w0 + m[0] * qd, w1 + m[1] * qd, w2 + m[2] * qd, w3 + m[3] * qd, \
                w4 + m[4] * qd, w5 + m[5] * qd
            for r in range(6):
                J[r, iv + k] = m[r]
        vel[i, 0], vel[i, 1], vel[i, 2], vel[i, 3], vel[i, 4], vel[i, 5] = w0, w1, w2, w3, w4, w5
        varying = int(tree[i, C_TYPE]) >= VARYING_SUBSPACE and n > 0
        if varying:
            subspace_rate_into(tree, i, q, v, Sd, 0)
        for k in range(n):
            x = cross_motion(w0, w1, w2, w3, w4, w5, J[0, iv + k], J[1, iv + k], J[2, iv + k], J[3, iv + k],
                             J[4, iv + k], J[5, iv + k])
            for r in range(6):
                dJ[r, iv + k] = x[r]
            if varying:
                c = to_parent(poses, 0, i, Sd[0, k], Sd[1, k], Sd[2, k], Sd[3, k], Sd[4, k], Sd[5, k])
                for r in range(6):
                    dJ[r, iv + k] += c[r]


def joint_jacobians_time_variation(model, q, v, data=None):
    """``J̇`` (6, nv): the time derivative of the world-frame joint Jacobian
    (:func:`~multibody.kinematics.joint_jacobians`: spatial motion at the
    world origin, world axes, angular rows first) when the system moves with
    velocity ``v`` — Pinocchio's ``computeJointJacobiansTimeVariation``
    (``data.dJ``, linear rows first there). Column k is
    ``vᵢ × J_k + Ad(⁰Xᵢ) Ṡᴶ_k`` for the body i of coordinate k (module
    docstring). Units: 1/s per coordinate rate (angular rows), m/s (linear
    rows, revolute coordinates). One state. With ``data``, the Jacobian is
    left in ``data.J`` (as joint_jacobians does) and the result is a new
    array; without, both are computed in the thread's workspace."""
    q = config(model, q, batch=False)
    v = velocity(model, v, q)
    data = data_for(model, data)
    dJ = np.empty((6, model.nv))
    jacobian_rate_kernel(model._tree, q, v, data.poses, data.spatial[0], data.J, dJ)
    return finite_result("joint_jacobians_time_variation", dJ)
