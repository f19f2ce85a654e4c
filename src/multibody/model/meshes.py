"""Reading mesh files (STL, OBJ, DAE, ... through trimesh) for collision
geometry.

A loader makes one :class:`MeshReader` per model load: each file is read
once and each (file, scale) pair scaled once, however many links use it
(Talos uses each arm mesh twice, mirrored), and the builder then hulls each
distinct vertex array once. Only collision meshes are read; visual meshes
are recorded by name.
"""
import os

import numpy as np

from ..errors import ModelError
from .geometry import convex_hull

#: ``meshes=`` option of the loaders
MESH_MODES = ("warn", "strict", "skip")


class MeshError(Exception):
    """A mesh file that cannot be used (missing, unreadable, empty): the
    loaders turn it into a warning or a ModelFileError naming the geometry."""


def _trimesh():
    try:
        import trimesh
    except ImportError as e:  # pragma: no cover - trimesh is a dependency
        raise MeshError("reading mesh files needs the 'trimesh' package (pip install trimesh)") from e
    return trimesh


def read_mesh(filename, scale=(1.0, 1.0, 1.0)):
    """``(vertices (n, 3), faces (m, 3))`` of the triangles in mesh file
    ``filename``, vertices multiplied by ``scale`` (per axis), in the
    file's frame and units (a COLLADA ``<unit>`` and node transforms are
    applied by trimesh, as by assimp). Raises :class:`MeshError` if the
    file is missing, unreadable or holds no triangle."""
    if not os.path.isfile(filename):
        raise MeshError(f"mesh file '{filename}' not found")
    got = _binary_stl(filename)
    if got is not None:
        V, F = got
        return V * np.asarray(scale, dtype=np.float64), (F[:, [0, 2, 1]] if np.prod(np.sign(scale)) < 0 else F)
    trimesh = _trimesh()
    try:
        # process=False: no vertex merging or repair (hulls do not need it, and it is the slow part)
        mesh = trimesh.load(filename, force="mesh", process=False)
    except Exception as e:  # noqa: BLE001 - trimesh raises many kinds (ValueError, KeyError, ImportError...)
        msg = " ".join(str(e).split()) or type(e).__name__
        raise MeshError(f"mesh file '{filename}' cannot be read: {msg}") from None
    V = np.asarray(getattr(mesh, "vertices", np.zeros((0, 3))), dtype=np.float64)
    F = np.asarray(getattr(mesh, "faces", np.zeros((0, 3))), dtype=np.int64)
    if V.ndim != 2 or V.shape[1:] != (3,) or len(F) == 0 or F.ndim != 2 or F.shape[1] != 3:
        raise MeshError(f"mesh file '{filename}' holds no triangles")
    if not np.isfinite(V).all():
        raise MeshError(f"mesh file '{filename}' has non-finite vertices")
    V = V * np.asarray(scale, dtype=np.float64)
    if np.prod(np.sign(scale)) < 0:  # a mirroring scale turns the triangles inside out: restore their order
        F = F[:, [0, 2, 1]]
    return V, F


def merge_vertices(V, F):
    """``(vertices, faces)`` with bitwise-equal vertices merged (an STL file
    repeats each vertex for every triangle that uses it)."""
    V = np.ascontiguousarray(V, dtype=np.float64)
    _, first, inverse = np.unique(V.view(np.dtype((np.void, 24))).ravel(), return_index=True,
                                  return_inverse=True)
    return V[first], inverse.reshape(-1)[F]


_STL_RECORD = np.dtype([("normal", "<f4", 3), ("vertices", "<f4", (3, 3)), ("attributes", "<u2")])


def _binary_stl(filename):
    """``(vertices, faces)`` of a binary STL file (one vertex per triangle
    corner), read with numpy, or None if the file is not one (its size is
    not 84 + 50 n bytes for its n triangles): trimesh's general loader took
    1.5 ms per file, half of loading Talos's meshes."""
    size = os.path.getsize(filename)
    if size < 84:
        return None
    with open(filename, "rb") as f:
        head = f.read(84)
        n = int(np.frombuffer(head, "<u4", 1, 80)[0])
        if size != 84 + 50 * n or n == 0:
            return None
        records = np.fromfile(f, _STL_RECORD, n)
    V = records["vertices"].reshape(-1, 3).astype(np.float64)
    return V, np.arange(3 * n, dtype=np.int64).reshape(n, 3)


class MeshReader:
    """Reads each mesh file once per model load (see the module docstring).

    ``read(filename, scale, what)`` returns ``(vertices, faces, hull)``:
    the file's triangles with shared vertices merged and ``scale`` applied,
    and their convex hull ``(vertices, faces, volume)``
    (:func:`multibody.model.geometry.convex_hull`), as read-only arrays, the
    same objects for the same file and scale. The hull is computed once
    per file: the hull of scaled points is the scaled hull (a mirroring
    scale reverses the triangles). Raises :class:`MeshError` if the file
    cannot be used (missing, unreadable, no triangles, degenerate: no
    volume); the failure is remembered too."""

    def __init__(self):
        self._files = {}
        self._scaled = {}

    def _file(self, filename):
        got = self._files.get(filename)
        if got is None:
            try:
                V, F = merge_vertices(*read_mesh(filename))
                try:
                    hull = convex_hull(V, f"mesh file '{filename}'")
                except ModelError as e:
                    raise MeshError(str(e)) from None
                got = (V, F, hull)
            except MeshError as e:
                got = e
            self._files[filename] = got
        if isinstance(got, MeshError):
            raise got
        return got

    def read(self, filename, scale=(1.0, 1.0, 1.0)):
        key = (filename, tuple(float(s) for s in scale))
        got = self._scaled.get(key)
        if got is None:
            V, F, (hv, hf, volume) = self._file(filename)
            s = np.asarray(key[1])
            mirror = np.prod(np.sign(s)) < 0  # a mirroring scale turns the triangles inside out
            got = (V * s, F[:, [0, 2, 1]] if mirror else F,
                   (hv * s, hf[:, [0, 2, 1]] if mirror else hf, volume * abs(float(np.prod(s)))))
            for a in got[:2] + got[2][:2]:
                a.setflags(write=False)
            self._scaled[key] = got
        return got
