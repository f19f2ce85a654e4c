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
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numba import njit

from ..kinematics.kernels import fk_kernel
from ..model.checks import finite_result
from ..model.joints import C_NV, C_PARENT, C_TYPE, C_V, VARYING_SUBSPACE, subspace_column, subspace_rate_into
from ..spatial.kernel_algebra import cross_motion, to_parent
from .._typing import Array, ArrayLike, Frame
from ..kinematics._common import frame_of, reference_code
from ..kinematics.kernels import LOCAL, WORLD
from ._common import config, data_for, velocity

if TYPE_CHECKING:
    from ..model.model import Model


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
    array; without, both are computed in the thread's workspace.

    Parameters
    ----------
    model : Model
        The model.
    q : array_like
        Configuration (nq,).
    v : array_like
        Velocity (nv,).
    data : Data, optional
        A workspace; the world joint Jacobian is left in ``data.J``.

    Returns
    -------
    dJ : ndarray
        (6, nv) the time derivative of the world joint Jacobian.

    Raises
    ------
    InputError
        Arrays of the wrong shape or with non-finite values.
    """
    q = config(model, q, batch=False)
    v = velocity(model, v, q)
    data = data_for(model, data)
    dJ = np.empty((6, model.nv))
    jacobian_rate_kernel(model._tree, q, v, data.poses, data.spatial[0], data.J, dJ)
    return finite_result("joint_jacobians_time_variation", dJ)


def frame_jacobian_time_variation(model: Model, q: ArrayLike, v: ArrayLike, frame: Frame,
                                  reference: str = "local") -> Array:
    """``J̇`` (6, nv): the time derivative of a frame's Jacobian
    (:func:`~multibody.kinematics.jacobian` in the same ``reference``)
    when the system moves with velocity ``v``.

    Pinocchio's ``computeJointJacobiansTimeVariation`` followed by
    ``getFrameJacobianTimeVariation`` (linear rows first there). From the
    world joint Jacobian ``J`` and its rate ``J̇_w``
    (:func:`joint_jacobians_time_variation`), on the columns that support
    the frame (the others are zero), with ``v_w = [ω; u]`` the frame's
    world spatial velocity, ``X`` the world-to-frame transform and ``p``
    the frame's origin (world):

    * "world": ``J̇_w``;
    * "local": ``X (J̇_w − v_w × J)`` (``Ẋ = −X (v_w ×)``);
    * "local_world_aligned": ``[J̇_ang; J̇_lin + J̇_ang × p + J_ang × ṗ]``,
      ``ṗ = u + ω × p`` the velocity of the frame origin.

    So ``J̇ v`` is the frame's acceleration at q̈ = 0,
    :func:`~multibody.kinematics.jacobian_dot_v`: spatial in "local" and
    "world", classical in "local_world_aligned" (whose Jacobian gives the
    origin's velocity).

    Parameters
    ----------
    model : Model
    q : array_like, shape (nq,)
        Configuration (one state).
    v : array_like, shape (nv,)
        Joint velocities.
    frame : str or int
        A frame's name or index, any placement on its body.
    reference : {"local", "world", "local_world_aligned"}

    Returns
    -------
    ndarray, shape (6, nv)
        Angular rows first; 1/s per coordinate rate (angular rows), m/s
        (linear rows, revolute coordinates).

    Raises
    ------
    InputError
        Unknown frame or reference, or a q, v of the wrong shape.
    """
    ref = reference_code(reference)
    body, place = frame_of(model, frame)
    q = config(model, q, batch=False)
    v = velocity(model, v, q)
    data = data_for(model, None)
    dJw = np.empty((6, model.nv))
    jacobian_rate_kernel(model._tree, q, v, data.poses, data.spatial[0], data.J, dJw)
    support: list[int] = []  # the columns of the joints from the frame's body to the root
    i = body
    while i > 0:
        j = model.joints[i]
        support.extend(range(j.v_slice.start, j.v_slice.stop))
        i = int(model.parents[i])
    cols = np.array(support, dtype=np.int64)
    J, dJ = data.J[:, cols], dJw[:, cols]
    w, u = data.spatial[0, body, :3], data.spatial[0, body, 3:]
    oMf = data.poses[0, body] @ place
    R, p = oMf[:3, :3], oMf[:3, 3]
    out = np.zeros((6, model.nv))
    if ref == WORLD:
        out[:, cols] = dJ
    elif ref == LOCAL:  # X (J̇ − v × J): [Rᵀ a; Rᵀ (b − p × a)] for a world motion [a; b]
        a = dJ[:3] - np.cross(w, J[:3], axisb=0, axisc=0)
        b = dJ[3:] - np.cross(w, J[3:], axisb=0, axisc=0) - np.cross(u, J[:3], axisb=0, axisc=0)
        out[:3, cols] = R.T @ a
        out[3:, cols] = R.T @ (b - np.cross(p, a, axisb=0, axisc=0))
    else:
        pdot = u + np.cross(w, p)
        out[:3, cols] = dJ[:3]
        out[3:, cols] = dJ[3:] + np.cross(dJ[:3], p, axisa=0, axisc=0) + np.cross(J[:3], pdot, axisa=0, axisc=0)
    return finite_result("frame_jacobian_time_variation", out)
