"""Velocities, accelerations and Jacobians of bodies and frames.

Reference frames follow Pinocchio's conventions, with angular-first
6-vectors: ``"world"`` — spatial vector at the world origin in world axes;
``"local"`` — in the frame's own axes at its origin; ``"local_world_aligned"``
— world axes at the frame's origin.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .._compiled import BAD_SHAPE, F64_1, F64_2C, INT, JIT, entry, run_batch
from ..errors import InputError
from . import kernels as K
from ..model.checks import as_vector, finite_result
from ._common import config, data_for, frame_of, raise_status, reference_code, velocity, workspace

from .._typing import Array, ArrayLike, Frame

if TYPE_CHECKING:
    from ..model.data import Data
    from ..model.model import Model


def body_motion(model: Model, q: ArrayLike, v: ArrayLike, a: ArrayLike | None = None, reference: str = "local",
                data: Data | None = None) -> tuple[Array, Array]:
    """Spatial velocity and acceleration of every body: ``(vel, acc)``, each
    (nbodies, 6), angular first. ``reference="local"``: body coordinates
    (Featherstone's ``v_i``, ``a_i``); ``"world"``: spatial vectors at the
    world origin in world axes (``⁰X_i⁻¹ v_i``). ``a=None`` means q̈ = 0,
    giving the bias accelerations J̇q̇. Accelerations are spatial, not
    classical (notes P7; use :func:`frame_acceleration` for a point's).
    Batches give (B, nbodies, 6).

    Parameters
    ----------
    model : Model
        The model.
    q : array_like
        Configuration, (nq,), or a batch (B, nq).
    v : array_like
        Generalized velocity, (nv,) (free joints: angular then linear, body
        frame), or a batch (B, nv).
    a : array_like, optional
        Generalized acceleration q̈, (nv,) or (B, nv); default zero.
    reference : {"local", "world"}
        Body coordinates (default) or the world origin in world axes.
    data : Data, optional
        A workspace made for ``model`` (single state only); default: the calling
        thread's cached workspace.

    Returns
    -------
    vel, acc : numpy.ndarray
        Spatial velocities (rad/s; m/s) and spatial accelerations of the
        bodies, each (nbodies, 6) or (B, nbodies, 6), angular first.

    Raises
    ------
    InputError
        If an array has the wrong shape or is not finite, or a name is not the
        model's.
    """
    ref = reference_code(reference)
    if ref == K.LOCAL_WORLD_ALIGNED:
        raise InputError("body_motion takes reference 'local' or 'world'")
    q = config(model, q)
    v = velocity(model, v, q)
    a = np.zeros_like(v) if a is None else velocity(model, a, q, "a")
    if q.ndim == 2:
        out = np.empty((q.shape[0], 2, model.nbodies, 6))
        K.motion_batch(model._tree, q, v, a, out)
        vel, acc = out[:, 0], out[:, 1]
        if ref == K.WORLD:
            oMi = K.fk_batch_poses(model._tree, q)
            vel, acc = _to_world(oMi, vel), _to_world(oMi, acc)
        return finite_result("body_motion", vel, acc)
    plain = data is None
    data = data_for(model, data)
    K.motion_kernel(model._tree, q, v, a, data.poses, data.jac, data.spatial)
    if ref == K.WORLD:
        return finite_result("body_motion", _to_world(data.oMi, data.v), _to_world(data.oMi, data.a))
    return finite_result("body_motion", *((data.v.copy(), data.a.copy()) if plain else (data.v, data.a)))


def _to_world(oMi, m):
    """Motion vectors of bodies (body coordinates) as spatial world vectors."""
    R, p = oMi[..., :3, :3], oMi[..., :3, 3]
    w = np.einsum("...ij,...j->...i", R, m[..., :3])
    u = np.einsum("...ij,...j->...i", R, m[..., 3:]) + np.cross(p, w)
    return np.concatenate([w, u], axis=-1)


def _frame_motion(model, q, v, a, frame, reference, classical):
    """(velocity, acceleration) of a frame in ``reference``, each (6,) or (B, 6)."""
    ref = reference_code(reference)
    body, place = frame_of(model, frame)
    q = config(model, q)
    v = velocity(model, v, q)
    a = np.zeros_like(v) if a is None else velocity(model, a, q, "a")
    single = q.ndim == 1
    qb, vb, ab = (np.atleast_2d(x) for x in (q, v, a))
    out = np.empty((qb.shape[0], 2, 6))
    run_batch(K.frame_motion_batch, K.frame_motion_rows, qb.shape[0], model._tree, qb, vb, ab, body, place, ref,
              classical, out)
    return finite_result("frame motion", *((out[0, 0], out[0, 1]) if single else (out[:, 0], out[:, 1])))


def frame_velocity(model: Model, q: ArrayLike, v: ArrayLike, frame: Frame, reference: str = "local") -> Array:
    """Spatial velocity (6, angular first) of a frame (name or index) in the
    given reference (see the module docstring). Batches give (B, 6).

    Parameters
    ----------
    model : Model
        The model.
    q : array_like
        Configuration, (nq,), or a batch (B, nq).
    v : array_like
        Generalized velocity, (nv,) (free joints: angular then linear, body
        frame), or a batch (B, nv).
    frame : str or int
        A frame of the model, by name or index.
    reference : {"local", "world", "local_world_aligned"}
        The coordinates of the result (module docstring of
        :mod:`multibody.kinematics`).

    Returns
    -------
    numpy.ndarray
        The frame's spatial velocity (rad/s; m/s), (6,) or (B, 6).

    Raises
    ------
    InputError
        If an array has the wrong shape or is not finite, or a name is not the
        model's.
    """
    return _frame_motion(model, q, v, None, frame, reference, False)[0]


def frame_acceleration(model: Model, q: ArrayLike, v: ArrayLike, a: ArrayLike, frame: Frame, reference: str = "local",
                       classical: bool = False) -> Array:
    """Acceleration (6, angular first) of a frame given q, v and q̈ = ``a``.
    ``classical=False`` gives the spatial acceleration (Featherstone §2.11);
    ``classical=True`` replaces the linear part by the acceleration of the
    frame origin, ``v̇_O + ω × v_O`` (Eq. 2.47–2.50, notes P7).

    Parameters
    ----------
    model : Model
        The model.
    q : array_like
        Configuration, (nq,), or a batch (B, nq).
    v : array_like
        Generalized velocity, (nv,) (free joints: angular then linear, body
        frame), or a batch (B, nv).
    a : array_like
        Generalized acceleration q̈, (nv,) or (B, nv).
    frame : str or int
        A frame of the model, by name or index.
    reference : {"local", "world", "local_world_aligned"}
        The coordinates of the result (module docstring of
        :mod:`multibody.kinematics`).
    classical : bool
        Default False: the spatial acceleration; True: the classical
        acceleration of the frame origin in the linear part.

    Returns
    -------
    numpy.ndarray
        The frame's acceleration (rad/s²; m/s²), (6,) or (B, 6), angular
        first.

    Raises
    ------
    InputError
        If an array has the wrong shape or is not finite, or a name is not the
        model's.
    """
    if a is None:
        raise InputError("frame_acceleration needs the joint accelerations a (nv,); use jacobian_dot_v for a = 0")
    return _frame_motion(model, q, v, a, frame, reference, bool(classical))[1]


def jacobian_dot_v(model: Model, q: ArrayLike, v: ArrayLike, frame: Frame, reference: str = "local") -> Array:
    """``J̇(q, v) v`` for the frame Jacobian of :func:`jacobian` in the same
    reference: the frame's acceleration at q̈ = 0 — spatial for "local" and
    "world", classical (world-aligned) for "local_world_aligned", because
    that Jacobian's rows are the world-aligned origin velocity.

    Parameters
    ----------
    model : Model
        The model.
    q : array_like
        Configuration, (nq,), or a batch (B, nq).
    v : array_like
        Generalized velocity, (nv,) (free joints: angular then linear, body
        frame), or a batch (B, nv).
    frame : str or int
        A frame of the model, by name or index.
    reference : {"local", "world", "local_world_aligned"}
        The coordinates of the result (module docstring of
        :mod:`multibody.kinematics`).

    Returns
    -------
    numpy.ndarray
        ``J̇ v`` (rad/s²; m/s²), (6,) or (B, 6), angular first.

    Raises
    ------
    InputError
        If an array has the wrong shape or is not finite, or a name is not the
        model's.
    """
    ref = reference_code(reference)
    return _frame_motion(model, q, v, None, frame, reference, ref == K.LOCAL_WORLD_ALIGNED)[1]


F64 = np.dtype(np.float64)
_JAC = None


def _jac_entry():
    global _JAC
    _JAC = entry(K.frame_jacobian_fast, INT, F64_1, INT, F64_2C, INT)
    return _JAC


def joint_jacobians(model: Model, q: ArrayLike, data: Data | None = None) -> Array:
    """World-frame joint Jacobian (6 x nv): column k is the spatial motion
    (at the world origin, world axes) generated by unit velocity of
    coordinate k (Pinocchio's computeJointJacobians, angular rows first).

    Parameters
    ----------
    model : Model
        The model.
    q : array_like
        Configuration, (nq,).
    data : Data, optional
        A workspace made for ``model`` (single state only); default: the calling
        thread's cached workspace.

    Returns
    -------
    numpy.ndarray
        The (6, nv) world-frame joint Jacobian, angular rows first.

    Raises
    ------
    InputError
        If ``q`` has the wrong shape, is not finite or has a non-unit
        quaternion.
    """
    q = config(model, q, batch=False)
    plain = data is None
    data = data_for(model, data)
    K.joint_jacobians_kernel(model._tree, q, data.poses, data.jac)
    return finite_result("joint_jacobians", data.J.copy() if plain else data.J)


def jacobian(model: Model, q: ArrayLike, frame: Frame, reference: str = "world", point: ArrayLike | None = None,
             data: Data | None = None) -> Array:
    """Jacobian (6 x nv) of a frame (name or index), angular rows first, in
    the given reference (see the module docstring): ``J @ v`` is the frame's
    spatial velocity in that reference. ``point`` (3,), in the frame's own
    coordinates, moves the origin of the Jacobian to that point of the
    frame. ``q`` may be a batch (B, nq), giving (B, 6, nv). With ``data``
    (single state) the result is written to ``data.frame_J``; without, a
    new array (computed in the thread's cached workspace).

    Parameters
    ----------
    model : Model
        The model.
    q : array_like
        Configuration, (nq,), or a batch (B, nq).
    frame : str or int
        A frame of the model, by name or index.
    reference : {"world", "local", "local_world_aligned"}
        The coordinates of ``J @ v`` (default "world").
    point : array_like, optional
        A point (3,) in the frame's coordinates (m) to move the Jacobian's
        origin to; default the frame origin.
    data : Data, optional
        A workspace made for ``model`` (single state only); default: the calling
        thread's cached workspace.

    Returns
    -------
    numpy.ndarray
        The Jacobian, (6, nv) or (B, 6, nv), angular rows first; with ``data``
        the array ``data.frame_J``.

    Raises
    ------
    InputError
        If an array has the wrong shape or is not finite, or a name is not the
        model's.
    """
    ref = reference_code(reference)
    body, place = frame_of(model, frame)
    if point is not None:
        pt = as_vector(point, "point", 3, batch=False)
        place = place.copy()
        place[:3, 3] += place[:3, :3] @ pt
    plain = data is None
    if plain:  # the thread's cached workspace (model.data.workspace, written out: 0.03 us)
        try:
            data = model._workspaces.data
        except AttributeError:
            data = workspace(model)
    if JIT:
        try:
            fast = (plain or data.model is model) and q.dtype is F64 and q.ndim == 1  # type: ignore[union-attr]
        except AttributeError:  # not arrays, or data not a Data: the general path says which
            fast = False
        if fast:
            st = (_JAC or _jac_entry())(data.handle, q, body, place, ref)  # type: ignore[union-attr]
            if not st:
                return data.frame_J.copy() if plain else data.frame_J  # type: ignore[union-attr]
            if st != BAD_SHAPE:
                raise_status(model, q, st)
    q = config(model, q)
    if q.ndim == 2:
        out = np.empty((q.shape[0], 6, model.nv))
        K.frame_jacobian_batch(model._tree, q, body, place, ref, out)
        return finite_result("jacobian", out)
    data = data_for(model, data)
    K.frame_jacobian_kernel(model._tree, q, body, place, ref, data.poses, data.jac)
    return finite_result("jacobian", data.frame_J.copy() if plain else data.frame_J)
