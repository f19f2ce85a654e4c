"""Derivatives of a frame's spatial velocity and acceleration with respect
to q, v and q̈ (Pinocchio's ``computeForwardKinematicsDerivatives`` then
``getFrameVelocityDerivatives`` / ``getFrameAccelerationDerivatives``, and
the body versions ``getJoint{Velocity,Acceleration}Derivatives``), in the
three references of :mod:`multibody.kinematics.motion`.

One compiled kernel serves bodies and frames (a body is its own frame with
an identity placement). It reuses the forward quantities of the RNEA
derivatives (:mod:`.derivative_kernels`: per column k the world subspace
``S_k``, ``Ψ̇_k``, ``Ψ̈_k``, ``Γ_k``; the body's world spatial velocity
``v`` and acceleration ``a``), so every joint of the catalog, the joints
with a varying motion subspace included, is handled by the same code as
the dynamics' derivatives. For every column k that supports the frame's
body (q on the tangent space, docs/derivatives.md):

* world (spatial, at the world origin, world axes):
  ``∂v/∂q_k = Ψ̇_k − v × S_k``, ``∂a/∂q_k = S_k × a + Ψ̈_k − v × Ψ̇_k``,
  ``∂a/∂q̇_k = Γ_k − v × S_k``, ``∂v/∂q̇_k = ∂a/∂q̈_k = S_k``;
* local (the frame's axes at its origin, ``x_l = X x_w`` with X the
  world-to-frame transform): ``∂X/∂q_k = −X (S_k ×)`` removes the
  ``S_k ×`` terms: ``X Ψ̇_k``, ``X(Ψ̈_k − v × Ψ̇_k)``, ``X(Γ_k − v × S_k)``,
  ``X S_k``;
* local_world_aligned (world axes at the frame origin, ``x = R x_l`` with
  R the frame's world rotation, both halves): ``R ∂x_l`` plus, for the q
  derivatives, the rotation of the axes ``∂R/∂q_k = (ω_k ×) R``, ω_k the
  angular part of ``S_k``: ``+ ω_k × x`` on both halves.

The accelerations are spatial (Featherstone §2.11; :func:`frame_acceleration`
with ``classical=False``, Pinocchio's ``getFrameAcceleration``), without
gravity."""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numba import njit

from ..errors import InputError
from ..kinematics.kernels import LOCAL_WORLD_ALIGNED, WORLD, compose_into
from ..model.checks import finite_result
from ..model.joints import C_NV, C_PARENT, C_V
from ..spatial.kernel_algebra import cross, cross_motion, rotate, to_child
from .._typing import Array, ArrayLike, Frame
from ._common import config, velocity
from .derivative_kernels import B_DA, B_DV, B_GAM, B_S, rnea_derivatives_kernel

if TYPE_CHECKING:
    from ..model.model import Model


@njit(cache=True, nogil=True, inline="always")
def _aligned(F, e, w0, w1, w2, x):
    """``R e + ω × x`` on both halves, as 6 scalars: the frame-axes 6-vector
    ``e`` in world axes (R the rotation of ``F[0, 0]``) plus the change
    ``(ω ×) x`` of a world-aligned 6-vector ``x`` when the axes turn by ω."""
    r = rotate(F, 0, 0, e[0], e[1], e[2])
    t = rotate(F, 0, 0, e[3], e[4], e[5])
    c = cross(w0, w1, w2, x[0], x[1], x[2])
    d = cross(w0, w1, w2, x[3], x[4], x[5])
    return r[0] + c[0], r[1] + c[1], r[2] + c[2], t[0] + d[0], t[1] + d[1], t[2] + d[2]


@njit(cache=True, nogil=True)
def frame_motion_derivatives_kernel(tree, q, v, a, body, place, ref, off, poses, blocks, Yb, vec, idx, scratch, tau,
                                    dq, dv, M, fext0, out):
    """``out`` (5, 6, nv): ∂v/∂q, ∂v/∂q̇, ∂a/∂q, ∂a/∂q̇, ∂a/∂q̈ of the
    spatial velocity and acceleration (no gravity) of the frame at
    ``place`` (4x4, in the body) on ``body``, in reference ``ref`` (the
    kinematics kernels' codes), by the formulas of the module docstring.
    The forward quantities are those of the RNEA derivatives, run with
    ``off`` (a run-time False: no gravity, no external forces); its other
    arrays are its workspace."""
    # q, v, a as 'A' arrays and run-time flags: the RNEA derivatives' one compiled specialization (derivative_kernels)
    rnea_derivatives_kernel(tree, q[::1], v[::1], a[::1], off, fext0, off, off, poses, blocks, Yb, vec, idx, scratch,
                            tau, dq, dv, M)
    nv = v.shape[0]
    for s in range(5):
        for r in range(6):
            for c in range(nv):
                out[s, r, c] = 0.0
    b = body
    F = np.zeros((1, 1, 4, 4))  # the frame's world pose
    compose_into(poses[0, b], place, F[0, 0])
    F[0, 0, 3, 3] = 1.0
    w0, w1, w2, w3, w4, w5 = vec[0, b, 0], vec[0, b, 1], vec[0, b, 2], vec[0, b, 3], vec[0, b, 4], vec[0, b, 5]
    a0, a1, a2, a3, a4, a5 = vec[1, b, 0], vec[1, b, 1], vec[1, b, 2], vec[1, b, 3], vec[1, b, 4], vec[1, b, 5]
    # local_world_aligned: the frame's velocity and acceleration in world axes at its origin (R X v, R X a)
    vl = to_child(F, 0, 0, w0, w1, w2, w3, w4, w5)
    al = to_child(F, 0, 0, a0, a1, a2, a3, a4, a5)
    vr = _aligned(F, vl, 0.0, 0.0, 0.0, vl)
    ar = _aligned(F, al, 0.0, 0.0, 0.0, al)
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
            if ref == WORLD:
                sa = cross_motion(S0, S1, S2, S3, S4, S5, a0, a1, a2, a3, a4, a5)
                e0 = (d[0] - vs[0], d[1] - vs[1], d[2] - vs[2], d[3] - vs[3], d[4] - vs[4], d[5] - vs[5])
                e1 = (S0, S1, S2, S3, S4, S5)
                e2 = (sa[0] + blocks[B_DA, 0, k] - vd[0], sa[1] + blocks[B_DA, 1, k] - vd[1],
                      sa[2] + blocks[B_DA, 2, k] - vd[2], sa[3] + blocks[B_DA, 3, k] - vd[3],
                      sa[4] + blocks[B_DA, 4, k] - vd[4], sa[5] + blocks[B_DA, 5, k] - vd[5])
                e3 = (blocks[B_GAM, 0, k] - vs[0], blocks[B_GAM, 1, k] - vs[1], blocks[B_GAM, 2, k] - vs[2],
                      blocks[B_GAM, 3, k] - vs[3], blocks[B_GAM, 4, k] - vs[4], blocks[B_GAM, 5, k] - vs[5])
            else:
                e0 = to_child(F, 0, 0, d[0], d[1], d[2], d[3], d[4], d[5])
                e1 = to_child(F, 0, 0, S0, S1, S2, S3, S4, S5)
                e2 = to_child(F, 0, 0, blocks[B_DA, 0, k] - vd[0], blocks[B_DA, 1, k] - vd[1],
                              blocks[B_DA, 2, k] - vd[2], blocks[B_DA, 3, k] - vd[3], blocks[B_DA, 4, k] - vd[4],
                              blocks[B_DA, 5, k] - vd[5])
                e3 = to_child(F, 0, 0, blocks[B_GAM, 0, k] - vs[0], blocks[B_GAM, 1, k] - vs[1],
                              blocks[B_GAM, 2, k] - vs[2], blocks[B_GAM, 3, k] - vs[3], blocks[B_GAM, 4, k] - vs[4],
                              blocks[B_GAM, 5, k] - vs[5])
                if ref == LOCAL_WORLD_ALIGNED:  # world axes, plus the rotation of the axes for the q derivatives
                    e0 = _aligned(F, e0, S0, S1, S2, vr)
                    e1 = _aligned(F, e1, 0.0, 0.0, 0.0, vr)
                    e2 = _aligned(F, e2, S0, S1, S2, ar)
                    e3 = _aligned(F, e3, 0.0, 0.0, 0.0, ar)
            for r in range(6):
                out[0, r, k] = e0[r]
                out[1, r, k] = e1[r]
                out[2, r, k] = e2[r]
                out[3, r, k] = e3[r]
                out[4, r, k] = e1[r]
        i = int(tree[i, C_PARENT])


def frame_motion_derivatives(model: Model, q: ArrayLike, v: ArrayLike, a: ArrayLike, frame: Frame,
                             reference: str = "local") -> tuple[Array, Array, Array, Array, Array]:
    """Derivatives of a frame's spatial velocity and acceleration.

    Pinocchio's ``computeForwardKinematicsDerivatives`` followed by
    ``getFrameVelocityDerivatives`` and ``getFrameAccelerationDerivatives``
    (angular rows first here, linear first there). The velocity is
    :func:`~multibody.kinematics.frame_velocity` and the acceleration
    :func:`~multibody.kinematics.frame_acceleration` with
    ``classical=False`` (spatial, without gravity), both in ``reference``;
    formulas in the module docstring. Derivatives in q on the tangent space:
    column k is ``d/dε`` along ``model.integrate(q, ε e_k)``
    (docs/derivatives.md).

    Parameters
    ----------
    model : Model
    q : array_like, shape (nq,)
        Configuration (one state).
    v, a : array_like, shape (nv,)
        Joint velocities and accelerations q̈.
    frame : str or int
        A frame's name or index (``model.frames``; every body has a frame
        of its name), with any placement on its body.
    reference : {"local", "world", "local_world_aligned"}
        "local": the frame's axes at its origin; "world": spatial vectors
        at the world origin, world axes; "local_world_aligned": world axes
        at the frame's origin.

    Returns
    -------
    dv_dq, dv_dv, da_dq, da_dv, da_da : ndarray, shape (6, nv) each
        ``∂v/∂q``, ``∂v/∂v``, ``∂a/∂q``, ``∂a/∂v``, ``∂a/∂a``, angular rows
        first; units of v per unit of the coordinate (1/s and m/s per rad
        for a revolute coordinate), of a likewise. ``∂v/∂v = ∂a/∂a`` is the
        frame's Jacobian (:func:`~multibody.kinematics.jacobian`).

    Raises
    ------
    InputError
        Unknown frame or reference, or a q, v, a of the wrong shape.
    NonFiniteError
        Non-finite inputs or results.

    Notes
    -----
    One compiled pass, O(nv·depth): it runs the forward (and, unused,
    backward) pass of :func:`rnea_derivatives`, whose compiled code it
    shares."""
    from ..kinematics._common import frame_of, reference_code
    ref = reference_code(reference)
    body, place = frame_of(model, frame)
    return _motion_derivatives(model, q, v, a, body, place, ref, "frame_motion_derivatives")


def body_motion_derivatives(model: Model, q: ArrayLike, v: ArrayLike, a: ArrayLike, body: int | str,
                            reference: str = "world") -> tuple[Array, Array, Array, Array, Array]:
    """:func:`frame_motion_derivatives` of a body (name or index 1..nbodies−1)
    — Pinocchio's ``getJointVelocityDerivatives`` /
    ``getJointAccelerationDerivatives`` — with "world" as the default
    reference. Same returns and errors.

    Parameters
    ----------
    model : Model
        The model.
    q : array_like
        Configuration (nq,).
    v : array_like
        Velocity (nv,).
    a : array_like
        Acceleration (nv,).
    body : int or str
        The body, by name or index (1 .. nbodies − 1).
    reference : {"world", "local", "local_world_aligned"}
        Where the motion is expressed (as :func:`frame_motion_derivatives`).

    Returns
    -------
    dv_dq, dv_dv, da_dq, da_dv, da_da : ndarray
        Each (6, nv), angular rows first; ``dv_dv = da_da`` is the body's
        Jacobian.

    Raises
    ------
    InputError
        An unknown body or reference, or arrays of the wrong shape.
    """
    from ..kinematics._common import reference_code
    if isinstance(body, str):
        if body not in model.body_names:
            raise InputError(f"body '{body}' is not a body of model '{model.name}'")
        body = model.body_names.index(body)
    if not (isinstance(body, (int, np.integer)) and 0 < body < model.nbodies):
        raise InputError(f"body must be a body name or an index in 1..{model.nbodies - 1}, got {body!r}")
    return _motion_derivatives(model, q, v, a, int(body), np.eye(4), reference_code(reference),
                               "body_motion_derivatives")


def _motion_derivatives(model, q, v, a, body, place, ref, what):
    from .derivatives import _data_and_workspace
    q = config(model, q, batch=False)
    v = velocity(model, v, q)
    a = velocity(model, a, q, "a")
    data, ws, _ = _data_and_workspace(model, None)
    out = np.empty((5, 6, model.nv))
    frame_motion_derivatives_kernel(model._tree, q, v, a, body, place, ref, False, *ws.rnea_arrays(), ws.fext0,
                                    out)
    return finite_result(what, *out)
