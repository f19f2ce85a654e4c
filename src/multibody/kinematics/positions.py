"""Forward kinematics: world poses of bodies and frames (Featherstone
Examples 4.1–4.4)."""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .._compiled import BAD_SHAPE, F64_1, F64_2C, INT, JIT, entry
from ..model.checks import finite_result
from . import kernels as K
from ._common import config, data_for, frame_of, raise_status, workspace

from .._typing import Array, ArrayLike, Frame

if TYPE_CHECKING:
    from ..model.data import Data
    from ..model.model import Model


def forward_kinematics(model: Model, q: ArrayLike, data: Data | None = None) -> Array:
    """World pose (4x4) of every body at configuration ``q``.

    ``q``: (nq,) or a batch (B, nq). Returns (nbodies, 4, 4) or
    (B, nbodies, 4, 4); index 0 is the world. With a :class:`~multibody.Data`
    workspace (single state) the poses are written to ``data.oMi`` (and the
    parent-relative poses to ``data.liMi``) and ``data.oMi`` is returned
    without allocating; ``q`` is still checked (shape, finite, unit
    quaternions), inside the kernel call. Without ``data`` the calling
    thread's cached workspace is used and a new array returned. Exact up to
    round-off.

    Parameters
    ----------
    model : Model
        The model.
    q : array_like
        Configuration, (nq,), or a batch (B, nq).
    data : Data, optional
        A workspace made for ``model`` (single state only); default: the calling
        thread's cached workspace.

    Returns
    -------
    numpy.ndarray
        World poses (4x4 homogeneous, m) of the bodies, (nbodies, 4, 4) or
        (B, nbodies, 4, 4); ``data.oMi`` itself when ``data`` is given.

    Raises
    ------
    InputError
        If ``q`` has the wrong shape, is not finite or has a non-unit
        quaternion.
    """
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
            st = (_FK or _fk_entry())(data.handle, q)  # type: ignore[union-attr]
            if not st:
                return data.oMi.copy() if plain else data.oMi  # type: ignore[union-attr]
            if st != BAD_SHAPE:
                raise_status(model, q, st)
    q = config(model, q)
    if q.ndim == 2:
        out = np.empty((q.shape[0], model.nbodies, 4, 4))
        K.fk_batch(model._tree, q, out)
        return finite_result("forward_kinematics", out)
    data = data_for(model, data)
    K.fk_kernel(model._tree, q, data.poses)
    return finite_result("forward_kinematics", data.oMi.copy() if plain else data.oMi)


F64 = np.dtype(np.float64)
_FK = None


def _fk_entry():
    global _FK
    _FK = entry(K.fk_fast, INT, F64_1)
    return _FK


def frame_placements(model: Model, q: ArrayLike, data: Data | None = None) -> Array:
    """World pose (4x4) of every frame of the model: (nframes, 4, 4), or
    (B, nframes, 4, 4) for a batch of configurations. With ``data`` (one
    state) the result is ``data.oMf``; without, a new array.

    Parameters
    ----------
    model : Model
        The model.
    q : array_like
        Configuration, (nq,), or a batch (B, nq).
    data : Data, optional
        A workspace made for ``model`` (single state only); default: the calling
        thread's cached workspace.

    Returns
    -------
    numpy.ndarray
        World poses (4x4 homogeneous, m) of the frames, (nframes, 4, 4) or
        (B, nframes, 4, 4).

    Raises
    ------
    InputError
        If ``q`` has the wrong shape, is not finite or has a non-unit
        quaternion.
    """
    plain = data is None
    data = data_for(model, data)
    oMi = forward_kinematics(model, q, data)
    if oMi.ndim == 4:
        out = np.tile(np.eye(4), (oMi.shape[0], len(model.frames), 1, 1))
        for b in range(oMi.shape[0]):
            K.frames_kernel(model.frame_body, model.frame_placement, oMi[b], out[b])
        return finite_result("frame_placements", out)
    K.frames_kernel(model.frame_body, model.frame_placement, oMi, data.oMf)
    return finite_result("frame_placements", data.oMf.copy() if plain else data.oMf)


def frame_pose(model: Model, q: ArrayLike, frame: Frame, data: Data | None = None) -> Array:
    """World pose (4x4, a new array) of one frame (name or index) at ``q``:
    the world pose of its body times its placement in the body. A batch of
    configurations gives (B, 4, 4). ``data``: the workspace the body poses
    are computed in (default: the thread's cached one).

    Parameters
    ----------
    model : Model
        The model.
    q : array_like
        Configuration, (nq,), or a batch (B, nq).
    frame : str or int
        A frame of the model, by name or index.
    data : Data, optional
        A workspace made for ``model`` (single state only); default: the calling
        thread's cached workspace.

    Returns
    -------
    numpy.ndarray
        The frame's world pose (4x4 homogeneous, m), or (B, 4, 4).

    Raises
    ------
    InputError
        If an array has the wrong shape or is not finite, or a name is not the
        model's.
    """
    body, place = frame_of(model, frame)
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
            out = np.empty((4, 4))
            st = (_FRAME or _frame_entry())(data.handle, q, body, place, out)  # type: ignore[union-attr]
            if not st:
                return out
            if st != BAD_SHAPE:
                raise_status(model, q, st)
    oMi = forward_kinematics(model, q, data_for(model, data))
    if oMi.ndim == 4:
        return finite_result("frame_pose", oMi[:, body] @ place)
    out = np.empty((4, 4))
    K.compose_pose(oMi, body, place, out)
    return finite_result("frame_pose", out)


_FRAME = None


def _frame_entry():
    global _FRAME
    _FRAME = entry(K.frame_pose_fast, INT, F64_1, INT, F64_2C, F64_2C)
    return _FRAME
