"""Argument validation shared by every checked public function: shapes,
dtypes, finiteness and unit quaternions. Errors name the array and the
expected shape (DESIGN.md: bad input gets a clear error)."""
import numpy as np

from ..errors import InputError


def as_vector(x, name, size, batch=True, finite=True):
    """``x`` as a C-contiguous float64 array of shape ``(size,)`` or, if
    ``batch``, ``(B, size)``; raises :class:`InputError` otherwise or (if
    ``finite``) if any entry is not finite."""
    a = np.ascontiguousarray(x, dtype=np.float64)
    if a.ndim == 1 and a.shape[0] == size:
        pass
    elif batch and a.ndim == 2 and a.shape[1] == size:
        pass
    else:
        expected = f"({size},)" + (f" or (batch, {size})" if batch else "")
        raise InputError(f"{name} has shape {np.shape(x)}, expected {expected}")
    if finite and not np.isfinite(a).all():
        bad = tuple(int(i) for i in np.argwhere(~np.isfinite(a))[0])
        raise InputError(f"{name} has a non-finite entry at index {bad[0] if a.ndim == 1 else bad}")
    return a


QUATERNION_TOLERANCE = 1e-6


def check_quaternions(model, q, name="q"):
    """Raise :class:`InputError` if a quaternion block of ``q`` (spherical or
    free joints) is further than ``QUATERNION_TOLERANCE`` from unit norm."""
    for j in model._quat_joints:
        qs = model.joints[j].q_slice
        block = q[..., qs.start + (3 if model.joints[j].type == "free" else 0):qs.stop]
        err = np.abs(np.sum(block * block, axis=-1) - 1.0)
        if np.any(err > QUATERNION_TOLERANCE):
            raise InputError(
                f"{name}: the quaternion of joint '{model.joints[j].name}' "
                f"(q[{qs.start}:{qs.stop}]) is not unit norm (| |q|² - 1 | = {float(np.max(err)):.3g}); "
                "use model.normalize(q)")
