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
from ..spatial.kernel_algebra import cross_motion, to_child, to_parent
from ._common import config, data_for, velocity
from .derivative_kernels import B_DA, B_DV, B_GAM, B_S, rnea_derivatives_kernel


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


# ------------------------------------------------------ body motion derivatives
@njit(cache=True, nogil=True)
def body_motion_derivatives_kernel(tree, q, v, a, body, local, off, poses, blocks, Yb, vec, idx, scratch, tau, dq,
                                   dv, M, fext0, out):
    """``out`` (5, 6, nv): ∂v/∂q, ∂v/∂q̇, ∂a/∂q, ∂a/∂q̇, ∂a/∂q̈ of body
    ``body``'s spatial velocity and acceleration (no gravity), world
    (spatial, at the world origin) or ``local`` (body frame). The forward
    quantities (S, Ψ̇, Ψ̈, Γ, v, a) are those of the RNEA derivatives, run
    with ``off`` (False) for gravity and external forces; then for each
    column k supporting the body (world): ``∂v/∂q_k = Ψ̇_k − v × S_k``,
    ``∂a/∂q_k = S_k × a + Ψ̈_k − v × Ψ̇_k``, ``∂a/∂q̇_k = Γ_k − v × S_k``,
    ``∂v/∂q̇_k = ∂a/∂q̈_k = S_k``; local: ``X Ψ̇_k``, ``X(Ψ̈_k − v × Ψ̇_k)``,
    ``X(Γ_k − v × S_k)``, ``X S_k`` with X the world-to-body transform (the
    rigid motion of the body frame removes the ``S_k ×`` terms)."""
    rnea_derivatives_kernel(tree, q, v, a, off, fext0, off, off, poses, blocks, Yb, vec, idx, scratch, tau, dq, dv, M)
    nv = v.shape[0]
    for s in range(5):
        for r in range(6):
            for c in range(nv):
                out[s, r, c] = 0.0
    b = body
    w0, w1, w2, w3, w4, w5 = vec[0, b, 0], vec[0, b, 1], vec[0, b, 2], vec[0, b, 3], vec[0, b, 4], vec[0, b, 5]
    a0, a1, a2, a3, a4, a5 = vec[1, b, 0], vec[1, b, 1], vec[1, b, 2], vec[1, b, 3], vec[1, b, 4], vec[1, b, 5]
    i = b
    while i > 0:
        iv = int(tree[i, C_V])
        for k in range(iv, iv + int(tree[i, C_NV])):
            S0, S1, S2 = blocks[B_S, 0, k], blocks[B_S, 1, k], blocks[B_S, 2, k]
            S3, S4, S5 = blocks[B_S, 3, k], blocks[B_S, 4, k], blocks[B_S, 5, k]
            d = (blocks[B_DV, 0, k], blocks[B_DV, 1, k], blocks[B_DV, 2, k], blocks[B_DV, 3, k],
                 blocks[B_DV, 4, k], blocks[B_DV, 5, k])
            vd = cross_motion(w0, w1, w2, w3, w4, w5, d[0], d[1], d[2], d[3], d[4], d[5])
            vs = cross_motion(w0, w1, w2, w3, w4, w5, S0, S1, S2, S3, S4, S5)
            if local:
                e0 = to_child(poses, 0, b, d[0], d[1], d[2], d[3], d[4], d[5])
                e1 = to_child(poses, 0, b, S0, S1, S2, S3, S4, S5)
                e2 = to_child(poses, 0, b, blocks[B_DA, 0, k] - vd[0], blocks[B_DA, 1, k] - vd[1],
                              blocks[B_DA, 2, k] - vd[2], blocks[B_DA, 3, k] - vd[3], blocks[B_DA, 4, k] - vd[4],
                              blocks[B_DA, 5, k] - vd[5])
                e3 = to_child(poses, 0, b, blocks[B_GAM, 0, k] - vs[0], blocks[B_GAM, 1, k] - vs[1],
                              blocks[B_GAM, 2, k] - vs[2], blocks[B_GAM, 3, k] - vs[3], blocks[B_GAM, 4, k] - vs[4],
                              blocks[B_GAM, 5, k] - vs[5])
            else:
                sa = cross_motion(S0, S1, S2, S3, S4, S5, a0, a1, a2, a3, a4, a5)
                e0 = (d[0] - vs[0], d[1] - vs[1], d[2] - vs[2], d[3] - vs[3], d[4] - vs[4], d[5] - vs[5])
                e1 = (S0, S1, S2, S3, S4, S5)
                e2 = (sa[0] + blocks[B_DA, 0, k] - vd[0], sa[1] + blocks[B_DA, 1, k] - vd[1],
                      sa[2] + blocks[B_DA, 2, k] - vd[2], sa[3] + blocks[B_DA, 3, k] - vd[3],
                      sa[4] + blocks[B_DA, 4, k] - vd[4], sa[5] + blocks[B_DA, 5, k] - vd[5])
                e3 = (blocks[B_GAM, 0, k] - vs[0], blocks[B_GAM, 1, k] - vs[1], blocks[B_GAM, 2, k] - vs[2],
                      blocks[B_GAM, 3, k] - vs[3], blocks[B_GAM, 4, k] - vs[4], blocks[B_GAM, 5, k] - vs[5])
            for r in range(6):
                out[0, r, k] = e0[r]
                out[1, r, k] = e1[r]
                out[2, r, k] = e2[r]
                out[3, r, k] = e3[r]
                out[4, r, k] = e1[r]
        i = int(tree[i, C_PARENT])


def body_motion_derivatives(model, q, v, a, body, reference="world"):
    """Derivatives of a body's spatial velocity and acceleration (Pinocchio's
    ``computeForwardKinematicsDerivatives`` then ``getJointVelocityDerivatives``
    / ``getJointAccelerationDerivatives``): returns ``(∂v/∂q, ∂v/∂v, ∂a/∂q,
    ∂a/∂v, ∂a/∂a)``, each (6, nv), angular rows first, for ``body`` (name or
    index) in ``reference`` "world" (spatial motion at the world origin,
    world axes) or "local" (body frame), the acceleration without gravity
    (as :func:`~multibody.kinematics.frame_acceleration`, spatial).
    Derivatives in q on the tangent space (docs/derivatives.md).
    ``∂v/∂v = ∂a/∂a`` is the body's Jacobian. One state; O(nv·depth) (it
    runs the RNEA derivatives' forward pass, and their backward pass too)."""
    from ..errors import InputError
    from .derivatives import _data_and_workspace
    q = config(model, q, batch=False)
    v = velocity(model, v, q)
    a = velocity(model, a, q, "a")
    if isinstance(body, str):
        if body not in model.body_names:
            raise InputError(f"body '{body}' is not a body of model '{model.name}'")
        body = model.body_names.index(body)
    if not (isinstance(body, (int, np.integer)) and 0 < body < model.nbodies):
        raise InputError(f"body must be a body name or an index in 1..{model.nbodies - 1}, got {body!r}")
    if reference not in ("world", "local"):
        raise InputError(f"reference must be 'world' or 'local', got {reference!r}")
    data, ws, _ = _data_and_workspace(model, None)
    out = np.empty((5, 6, model.nv))
    body_motion_derivatives_kernel(model._tree, q, v, a, int(body), reference == "local", False, *ws.rnea_arrays(),
                                   ws.fext0, out)
    return finite_result("body_motion_derivatives", *out)
