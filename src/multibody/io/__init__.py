"""L1: model-file loaders.

* :func:`load_urdf` — URDF (parsed with the standard library's ElementTree).
* :func:`load_mjcf` — MuJoCo MJCF, compiled by the ``mujoco`` package itself
  (optional dependency: ``pip install multibody[mjcf]``).
* :func:`load_srdf` — an SRDF companion file: disabled collisions and
  named reference postures, added to a loaded model.

Both return an immutable :class:`~multibody.model.Model` and raise
:class:`~multibody.errors.ModelFileError` naming the file and the offending
element on malformed input.
"""
from .urdf import load_urdf, resolve_mesh
from .mjcf import load_mjcf
from .srdf import load_srdf

__all__ = ["load_urdf", "load_mjcf", "load_srdf", "resolve_mesh"]
