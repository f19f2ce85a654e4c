"""L1: model-file loaders.

* :func:`load_urdf` — URDF (parsed with the standard library's ElementTree).
* :func:`load_mjcf` — MuJoCo MJCF, compiled by the ``mujoco`` package itself
  (optional dependency: ``pip install multibody[mjcf]``).

Both return an immutable :class:`~multibody.model.Model` and raise
:class:`~multibody.errors.ModelFileError` naming the file and the offending
element on malformed input.
"""
from .urdf import load_urdf, resolve_mesh
from .mjcf import load_mjcf

__all__ = ["load_urdf", "load_mjcf", "resolve_mesh"]
