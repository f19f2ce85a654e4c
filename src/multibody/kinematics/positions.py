"""Forward kinematics: world poses of bodies and frames (Featherstone
Examples 4.1–4.4)."""
import numpy as np

from .._compiled import BAD_SHAPE, F64_1, INT, JIT, entry
from . import kernels as K
from ._common import config, data_for, frame_of, raise_status


def forward_kinematics(model, q, data=None):
    """World pose (4x4) of every body at configuration ``q``.

    ``q``: (nq,) or a batch (B, nq). Returns (nbodies, 4, 4) or
    (B, nbodies, 4, 4); index 0 is the world. With a :class:`~multibody.Data`
    workspace (single state) the poses are written to ``data.oMi`` (and the
    parent-relative poses to ``data.liMi``) and ``data.oMi`` is returned
    without allocating; ``q`` is still checked (shape, finite, unit
    quaternions), inside the kernel call. Exact up to round-off.
    """
    if JIT and data is not None and data.model is model:
        try:
            fast = q.dtype is F64 and q.ndim == 1
        except AttributeError:  # not an array: take the general path
            fast = False
        if fast:
            st = (_FK or _fk_entry())(data.handle, q)
            if not st:
                return data.oMi
            if st != BAD_SHAPE:
                raise_status(model, q, st)
    q = config(model, q)
    if q.ndim == 2:
        out = np.empty((q.shape[0], model.nbodies, 4, 4))
        K.fk_batch(model._tree, q, out)
        return out
    data = data_for(model, data)
    K.fk_kernel(model._tree, q, data.poses)
    return data.oMi


F64 = np.dtype(np.float64)
_FK = None


def _fk_entry():
    global _FK
    _FK = entry(K.fk_fast, INT, F64_1)
    return _FK


def frame_placements(model, q, data=None):
    """World pose (4x4) of every frame of the model: (nframes, 4, 4), or
    (B, nframes, 4, 4) for a batch of configurations."""
    oMi = forward_kinematics(model, q, data)
    if oMi.ndim == 4:
        out = np.tile(np.eye(4), (oMi.shape[0], len(model.frames), 1, 1))
        for b in range(oMi.shape[0]):
            K.frames_kernel(model.frame_body, model.frame_placement, oMi[b], out[b])
        return out
    data = data_for(model, data)
    K.frames_kernel(model.frame_body, model.frame_placement, oMi, data.oMf)
    return data.oMf


def frame_pose(model, q, frame):
    """World pose (4x4) of one frame (name or index); batch gives (B, 4, 4)."""
    body, place = frame_of(model, frame)
    oMi = forward_kinematics(model, q)
    return oMi[..., body, :, :] @ place
