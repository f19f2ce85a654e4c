"""Argument handling shared by the dynamics API: checked states, external
forces, workspaces and kernel statuses turned into clear errors."""
import numpy as np

from ..errors import InputError, NonFiniteError, SimulationError
from ..kinematics._common import config, raise_status, velocity  # noqa: F401  (re-exported)
from ..model.checks import as_float_array
from ..model.joints import motion_subspace_into
from ..model.data import Data, data_for, workspace  # noqa: F401  (re-exported)


def external_forces(model, f_ext, batch=None):
    """``f_ext`` as a float64 (nbodies, 6) array (or (B, nbodies, 6)): one
    spatial force [n; f] per body, in the body frame, about the body origin;
    row 0 (the world) is ignored. ``None`` gives ``None``."""
    if f_ext is None:
        return None
    f = as_float_array(f_ext, "f_ext")
    shape = (model.nbodies, 6)
    if f.shape != shape and not (batch is not None and f.shape == (batch,) + shape):
        raise InputError(f"f_ext has shape {f.shape}, expected {shape}"
                         + (f" or ({batch}, {model.nbodies}, 6)" if batch else "")
                         + " (one [n; f] per body, body frame)")
    if not np.isfinite(f).all():
        raise NonFiniteError(f"f_ext has a non-finite entry at index {tuple(np.argwhere(~np.isfinite(f))[0])}")
    return f


def batch_output(out, shape):
    """The array a batched call writes its results to: ``out`` if given (a
    writable C-contiguous float64 array of exactly ``shape``, reused across
    calls so large batches do not pay the page faults of fresh memory),
    else a new one."""
    if out is None:
        return np.empty(shape)
    if not (isinstance(out, np.ndarray) and out.shape == shape and out.dtype == np.float64
            and out.flags.c_contiguous and out.flags.writeable):
        got = f"shape {out.shape}, dtype {out.dtype}" if isinstance(out, np.ndarray) else type(out).__name__
        raise InputError(f"out must be a writable C-contiguous float64 array of shape {shape}; got {got}")
    return out


def single_state_out(out):
    """``out`` is for batches: a single state's result lives in ``data``."""
    if out is not None:
        raise InputError("out is for batches of states; a single state's result is written to data")


def singular_body(model, body, what, q=None):
    """Raise the SimulationError of a singular articulated inertia at
    ``body``: a massless subtree, or, for a joint whose motion subspace
    loses rank at ``q`` (an Euler joint at gimbal lock), that joint."""
    j = model.joints[body]
    if q is not None and j.nv:
        S = np.zeros((6, j.nv))
        motion_subspace_into(model._tree, body, np.asarray(q, dtype=float), S, 0)
        sv = np.linalg.svd(S, compute_uv=False)
        if sv[-1] < 1e-6 * max(1.0, sv[0]):
            raise SimulationError(f"{what}: joint '{j.name}' ({j.type}) is at a singular configuration (gimbal lock: "
                                  f"its motion subspace has rank {int(np.sum(sv >= 1e-6 * max(1.0, sv[0])))} < "
                                  f"{j.nv} at q = {np.round(np.asarray(q)[j.q_slice], 6).tolist()})")
    raise SimulationError(f"{what}: the articulated inertia of body '{model.body_names[body]}' is singular "
                          "along its joint (a massless subtree?)")
