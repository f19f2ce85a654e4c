"""Type aliases of the public API's hints (checked by mypy: tests/docs/test_typing.py)."""
import os
from typing import Union

import numpy as np
import numpy.typing as npt

#: what the functions return: float64 arrays
Array = npt.NDArray[np.float64]
#: what they accept: arrays, nested sequences or numbers (converted with numpy, then checked)
ArrayLike = npt.ArrayLike
#: a frame, body or joint given by its name or its index
Frame = Union[str, int]
#: a file name
PathLike = Union[str, "os.PathLike[str]"]
#: a file name, or the file's text itself (a string starting with ``'<'``)
Source = Union[str, "os.PathLike[str]"]

__all__ = ["Array", "ArrayLike", "Frame", "PathLike", "Source"]
