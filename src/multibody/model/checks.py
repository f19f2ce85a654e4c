"""Argument validation shared by every checked public function: shapes,
dtypes, finiteness and unit quaternions. Errors name the array and the
expected shape (DESIGN.md: bad input gets a clear error)."""
from __future__ import annotations

import numbers

import numpy as np

from ..errors import InputError, NonFiniteError
from .._typing import Array, ArrayLike
from .data import Data


def as_float_array(x: ArrayLike, name: str) -> Array:
    """``x`` as a C-contiguous float64 array: from a float or integer
    array, number or (nested, rectangular) sequence of them. Anything else
    (complex values, booleans, strings, dicts, ragged lists, None, a Data
    workspace) raises
    :class:`InputError` naming ``name`` — numpy would raise its own errors
    or, for complex values, drop the imaginary part with only a warning."""
    if type(x) is np.ndarray and x.dtype == np.float64:
        return x if x.flags.c_contiguous else np.ascontiguousarray(x)
    if isinstance(x, Data):
        raise InputError(f"{name}: got a Data workspace; multibody's argument order is (model, q, ..., "
                         "data=data), not Pinocchio's (model, data, q, ...)")
    if isinstance(x, (str, bytes, dict, set)) or x is None:
        raise InputError(f"{name} must be an array of real numbers, got a {type(x).__name__}")
    try:
        a = np.asarray(x)
    except (TypeError, ValueError) as e:  # ragged nested sequences
        raise InputError(f"{name} is not a rectangular array of numbers: {e}") from None
    if a.dtype.kind == "c":
        raise InputError(f"{name} has complex values (dtype {a.dtype}); it must be real")
    if a.dtype.kind not in "iuf":
        raise InputError(f"{name} must be an array of real numbers, got {type(x).__name__} of dtype {a.dtype}")
    return np.asarray(a, dtype=np.float64, order="C")  # (np.ascontiguousarray makes a 0-d array 1-d)


def as_vector(x: ArrayLike, name: str, size: int, batch: bool = True, finite: bool = True) -> Array:
    """``x`` as a C-contiguous float64 array of shape ``(size,)`` or, if
    ``batch``, ``(B, size)`` (B ≥ 1); raises :class:`InputError` otherwise
    or (if ``finite``) if any entry is not finite."""
    a = as_float_array(x, name)
    if a.ndim == 1 and a.shape[0] == size:
        pass
    elif batch and a.ndim == 2 and a.shape[1] == size and a.shape[0] > 0:
        pass
    else:
        expected = f"({size},)" + (f" or (batch, {size}) with batch >= 1" if batch else " (one state)")
        raise InputError(f"{name} has shape {np.shape(x)}, expected {expected}")
    if finite and not np.isfinite(a).all():
        bad = tuple(int(i) for i in np.argwhere(~np.isfinite(a))[0])
        raise NonFiniteError(f"{name} has a non-finite entry at index {bad[0] if a.ndim == 1 else bad}")
    return a


def real_number(x, name, finite=True):
    """``x`` as a Python float: a real number (Python or NumPy, or a 0-d
    real array), finite if ``finite``; bools, strings, complex numbers and
    None raise :class:`InputError` naming ``name``."""
    if isinstance(x, np.ndarray) and x.ndim == 0 and x.dtype.kind in "iuf":
        x = x[()]
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, numbers.Real):
        raise InputError(f"{name} must be a real number, got {x!r} ({type(x).__name__})")
    x = float(x)
    if finite and not np.isfinite(x):
        raise InputError(f"{name} must be finite, got {x}")
    return x


def finite_result(what, *results):
    """Return ``results`` (one array, or a tuple) after checking that they
    are finite: computed from finite inputs, a non-finite result means the
    inputs were so large that the computation overflowed (e.g. |v| = 1e200:
    v² is inf). Raises :class:`InputError` naming ``what``."""
    for x in results:
        if not np.isfinite(x).all():
            raise NonFiniteError(f"{what}: the result is not finite although the inputs are: they are too large "
                             "for float64 (the computation overflowed)")
    return results[0] if len(results) == 1 else results


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
