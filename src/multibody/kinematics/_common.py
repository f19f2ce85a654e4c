"""Shared plumbing of the kinematics API: argument checks that turn a
kernel status into a clear error, reference-frame names, frame lookup."""
from __future__ import annotations

from ..errors import InputError, NonFiniteError
from ..model.checks import as_vector, check_quaternions
from ..model.configuration import q_status, q_status_rows
from ..model.data import Data, data_for, workspace  # noqa: F401  (re-exported)
from ..model.model import Model
from .._typing import Array, ArrayLike
from . import kernels as K

REFERENCES = {"world": K.WORLD, "local": K.LOCAL, "local_world_aligned": K.LOCAL_WORLD_ALIGNED}


def reference_code(reference):
    """The kernel code of a reference frame name ("world", "local", "local_world_aligned")."""
    try:
        code = REFERENCES.get(reference)
    except TypeError:  # unhashable
        code = None
    if code is not None:
        return code
    if isinstance(reference, Data):
        raise InputError("a Data workspace was passed where the reference frame goes: pass it as data=data")
    try:
        return REFERENCES[str(reference).lower()]
    except (KeyError, TypeError):
        raise InputError(f"unknown reference frame '{reference}' (use one of {', '.join(REFERENCES)})") from None


def raise_status(model, q, status, name="q"):
    """Raise the error a nonzero :func:`kernels.q_status` stands for."""
    if status > 0:
        raise NonFiniteError(f"{name} has a non-finite entry at index {status - 1}")
    check_quaternions(model, q, name)
    raise InputError(f"{name}: a quaternion is not unit norm (joint of body '{model.body_names[-status]}')")


def config(model: Model, q: ArrayLike, name: str = "q", batch: bool = True) -> Array:
    """``q`` checked: float64, shape (nq,) or (if ``batch``) (B, nq),
    finite, unit quaternions (one compiled pass,
    :func:`~multibody.model.configuration.q_status`)."""
    if not isinstance(model, Model):
        raise InputError(f"expected a multibody Model as the first argument, got {type(model).__name__}")
    q = as_vector(q, name, model.nq, batch=batch, finite=False)
    if q.ndim == 1:
        st = q_status(model._tree, q)
        if st:
            raise_status(model, q, st, name)
    else:
        row, st = q_status_rows(model._tree, q)
        if st:
            raise_status(model, q[row], st, f"{name}[{row}]")
    return q


def velocity(model: Model, v: ArrayLike, q: Array, name: str = "v") -> Array:
    """``v`` checked: float64, finite, of shape ``q.shape[:-1] + (nv,)``."""
    v = as_vector(v, name, model.nv)
    if v.shape[:-1] != q.shape[:-1]:
        raise InputError(f"{name} has shape {v.shape} but q has shape {q.shape}")
    return v


def frame_of(model, frame):
    """(body index, 4x4 placement in the body) of a frame given by name or index."""
    try:
        entry = model._frame_lookup.get(frame)
    except TypeError:  # unhashable
        entry = None
    if entry is not None:
        return entry
    if isinstance(frame, str):
        model.frame_id(frame)  # raises the error naming the frame
    raise InputError(f"frame {frame!r} is not a frame name or an index below {len(model.frames)}")
