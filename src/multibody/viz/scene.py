"""What the viewers draw: a model's geometry as triangle meshes attached to
its bodies, and the world poses of those bodies at a configuration.

Both the live viewer (:mod:`multibody.viz.viewer`, viser) and the HTML
export (:mod:`multibody.viz.html`, three.js) draw the same
:class:`Scene`: every geometry — primitive or mesh file — becomes one
triangle mesh in its body's frame (primitives through
``trimesh.creation``, mesh files read with trimesh), so the two renderers
need no shape code of their own and agree by construction.

Frames and units: vertices in metres in the *body* frame (the geometry's
placement is folded in), body poses 4x4 in the world frame from
:func:`multibody.forward_kinematics`.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING, Mapping, Sequence

import numpy as np

from ..errors import InputError, ModelWarning
from ..kinematics import forward_kinematics
from ..model.meshes import MeshError, merge_vertices, read_mesh
from ..spatial.quaternion import from_rotation
from .._typing import Array, ArrayLike

if TYPE_CHECKING:
    from ..model.model import Model

#: colour (rgba) of a visual geometry without a material
DEFAULT_RGBA = (0.55, 0.57, 0.62, 1.0)
#: colour (rgba) collision geometry is drawn in (translucent orange, so the visual mesh shows through)
COLLISION_RGBA = (1.0, 0.45, 0.1, 0.45)
#: side (m) of the cube drawn for a mesh file that cannot be read and whose extent nothing else gives
MARKER_SIZE = 0.05
#: extent (m) drawn for an infinite plane
PLANE_EXTENT = 4.0

# a palette of saturated, well separated hues for colours="bodies" (tests classify pixels by them)
_PALETTE = np.array([(230, 25, 75), (60, 180, 75), (0, 130, 200), (245, 130, 48), (145, 30, 180),
                     (70, 240, 240), (240, 50, 230), (210, 245, 60), (0, 128, 128), (170, 110, 40),
                     (128, 0, 0), (0, 0, 128)], dtype=float) / 255.0


@dataclass(frozen=True)
class Part:
    """One drawn geometry: ``name`` (the model geometry's), ``body`` (index),
    ``vertices`` (n, 3) float32 in the body frame (m), ``faces`` (m, 3)
    int32, ``rgba`` (4 floats in [0, 1]), ``collision`` (True for collision
    geometry, drawn only when asked)."""
    name: str
    body: int
    vertices: np.ndarray
    faces: np.ndarray
    rgba: tuple
    collision: bool


def body_colors(nbodies):
    """(nbodies, 3) distinct rgb colours in [0, 1] (the world, body 0, grey)."""
    out = np.empty((nbodies, 3))
    out[0] = (0.5, 0.5, 0.5)
    for i in range(1, nbodies):
        out[i] = _PALETTE[(i - 1) % len(_PALETTE)]
    return out


def _primitive(g):
    """(vertices, faces) of a primitive geometry in its own frame, or None for a shape not drawn."""
    import trimesh
    c, s = trimesh.creation, g.size
    if g.shape == "box":
        m = c.box(extents=s)
    elif g.shape == "sphere":
        m = c.icosphere(subdivisions=2, radius=s[0])
    elif g.shape == "ellipsoid":
        m = c.icosphere(subdivisions=2, radius=1.0)
        m.vertices = m.vertices * np.asarray(s)
    elif g.shape == "cylinder":
        m = c.cylinder(radius=s[0], height=s[1], sections=24)
    elif g.shape == "capsule":  # size = (radius, length of the cylindrical part): trimesh's height
        m = c.capsule(height=s[1], radius=s[0], count=[16, 16])
    elif g.shape == "plane":
        ex, ey = (s[0] or PLANE_EXTENT, s[1] or PLANE_EXTENT) if len(s) == 2 else (PLANE_EXTENT, PLANE_EXTENT)
        V = np.array([[-ex, -ey, 0], [ex, -ey, 0], [ex, ey, 0], [-ex, ey, 0]]) / 2
        return V, np.array([[0, 1, 2], [0, 2, 3]])
    elif g.shape == "hfield":
        H = g.heights
        nr, nc = H.shape
        x = np.linspace(-s[0] / 2, s[0] / 2, nc)
        y = np.linspace(-s[1] / 2, s[1] / 2, nr)
        X, Y = np.meshgrid(x, y)  # rows along y, as Geometry.heights
        V = np.column_stack([X.ravel(), Y.ravel(), H.ravel()])
        k = np.arange(nr * nc).reshape(nr, nc)[:-1, :-1].ravel()
        F = np.concatenate([np.column_stack([k, k + 1, k + nc + 1]), np.column_stack([k, k + nc + 1, k + nc])])
        return V, F
    else:
        return None
    return np.asarray(m.vertices), np.asarray(m.faces)


def decimate(vertices, faces, max_faces):
    """A triangle mesh with at most about ``max_faces`` triangles: quadric
    edge collapse (``fast_simplification``, the Fast-Quadric-Mesh-
    Simplification library). Meshes already small enough, or a missing
    library, return the input (with a warning for the latter)."""
    if max_faces is None or len(faces) <= max_faces:
        return vertices, faces
    try:
        import fast_simplification
    except ImportError:  # pragma: no cover - a dependency of multibody[viz]
        warnings.warn("meshes are drawn undecimated: pip install fast-simplification (multibody[viz])",
                      ModelWarning, stacklevel=3)
        return vertices, faces
    V, F = fast_simplification.simplify(np.asarray(vertices, np.float32), np.asarray(faces, np.int32),
                                        target_reduction=1.0 - max_faces / len(faces))
    return V, F


class Scene:
    """The drawable geometry of ``model``.

    ``parts``: :class:`Part` list — the visual geometries, then (when
    ``collision``) the collision geometries; ``colors``: None (the files'
    materials), ``"bodies"`` (one distinct flat colour per body,
    :func:`body_colors`: used to check drawings against forward
    kinematics) or a mapping body name -> rgb(a). ``max_faces``: mesh files
    with more triangles are decimated to about that many
    (:func:`decimate`; None keeps them whole).

    A mesh file that cannot be read (missing, corrupt, no triangles) is
    drawn as a box — the bounding box of the same file's collision hull if
    the loader read one, else a ``MARKER_SIZE`` cube at the geometry's
    origin — with a :class:`~multibody.errors.ModelWarning` naming the
    file and the geometry. Each file is read once per scene.
    """

    def __init__(self, model: Model, collision: bool = True, colors: str | Mapping[str, Sequence[float]] | None = None,
                 max_faces: int | None = None) -> None:
        self.model = model
        self.nbodies = model.nbodies
        self.body_names = tuple(model.body_names)
        self._files: dict = {}
        if colors is None or isinstance(colors, str) and colors == "bodies":
            self._body_rgb = body_colors(model.nbodies) if colors == "bodies" else None
        elif isinstance(colors, dict):
            self._body_rgb = {model.body_id(k): tuple(float(x) for x in v) for k, v in colors.items()}
        else:
            raise InputError(f"colors must be None, 'bodies' or a dict body name -> rgb, got {colors!r}")
        # the hulls the loader read, by file: the extent of a visual mesh whose file cannot be read
        self._hulls = {(g.mesh, tuple(g.scale)): g.vertices for g in model.collision_geometries
                       if g.mesh and g.vertices is not None}
        self.parts = []
        problems: list = []
        for kind, geoms in (("visual", model.visual_geometries),
                            ("collision", model.collision_geometries if collision else ())):
            for g in geoms:
                part = self._part(g, kind == "collision", max_faces, problems)
                if part is not None:
                    self.parts.append(part)
        if problems:
            warnings.warn(f"model '{model.name}': {len(problems)} mesh file(s) cannot be read, drawn as their "
                          "bounding box: " + "; ".join(problems), ModelWarning, stacklevel=3)

    def _rgba(self, g, collision):
        if collision:
            return COLLISION_RGBA
        if isinstance(self._body_rgb, np.ndarray):
            return tuple(self._body_rgb[g.body]) + (1.0,)
        if isinstance(self._body_rgb, dict) and g.body in self._body_rgb:
            c = self._body_rgb[g.body]
            return tuple(c) + (1.0,) * (4 - len(c))
        return tuple(float(x) for x in g.rgba) if g.rgba is not None else DEFAULT_RGBA

    def _mesh_file(self, g, max_faces, problems):
        key = (g.mesh, tuple(g.scale), max_faces)
        got = self._files.get(key)
        if got is None:
            try:
                V, F = merge_vertices(*read_mesh(g.mesh, g.scale))
                got = decimate(V, F, max_faces)
            except MeshError as e:
                hull = self._hulls.get((g.mesh, tuple(g.scale)))
                lo, hi = (hull.min(axis=0), hull.max(axis=0)) if hull is not None else \
                    (np.full(3, -MARKER_SIZE / 2), np.full(3, MARKER_SIZE / 2))
                import trimesh
                box = trimesh.creation.box(bounds=np.array([lo, np.maximum(hi, lo + 1e-6)]))
                got = (np.asarray(box.vertices), np.asarray(box.faces))
                problems.append(f"geometry '{g.name}' ({e})")
            self._files[key] = got
        return got

    def _part(self, g, collision, max_faces, problems):
        if g.vertices is not None and g.faces is not None:  # convex hulls and meshes the loader read
            V, F = g.vertices, g.faces
            if g.shape == "mesh" or not collision:
                V, F = decimate(V, F, max_faces)
        elif g.mesh and g.shape in ("mesh", "convex"):
            V, F = self._mesh_file(g, max_faces, problems)
        else:
            got = _primitive(g)
            if got is None:
                return None  # a shape with nothing to draw (MuJoCo's "sdf")
            V, F = got
        T = np.asarray(g.placement)
        V = np.asarray(V, dtype=float) @ T[:3, :3].T + T[:3, 3]
        return Part(g.name, int(g.body), V.astype(np.float32), np.asarray(F, dtype=np.int32),
                    self._rgba(g, collision), collision)

    def poses(self, q: ArrayLike) -> Array:
        """World poses (nbodies, 4, 4) of the bodies at ``q`` (nq,), or a
        batch (B, nbodies, 4, 4) for q (B, nq)."""
        return forward_kinematics(self.model, np.asarray(q, dtype=float))

    def com_local(self) -> Array:
        """(nbodies, 3) centre of mass of each body in its own frame (m)."""
        return np.asarray(self.model.body_com, dtype=float)


def default_camera(points, fov=45.0, direction=(1.0, -1.6, 0.8)):
    """A camera that frames the points (n, 3): ``{"position", "target",
    "fov"}`` (m, degrees, vertical field of view), looking at their
    bounding box's centre from ``direction`` (z up) far enough that the
    bounding sphere fits the view."""
    P = np.asarray(points, dtype=float).reshape(-1, 3)
    lo, hi = P.min(axis=0), P.max(axis=0)
    target = (lo + hi) / 2
    radius = max(float(np.linalg.norm(hi - lo)) / 2, 0.2)
    d = np.asarray(direction, dtype=float)
    dist = 1.15 * radius / np.sin(np.radians(fov) / 2)
    return {"position": (target + dist * d / np.linalg.norm(d)).tolist(), "target": target.tolist(), "fov": fov}


def pose_to_pq(T):
    """Positions (n, 3) and unit quaternions (n, 4), w first, of poses (n, 4, 4)."""
    T = np.asarray(T, dtype=float)
    return T[:, :3, 3].copy(), np.array([from_rotation(np.ascontiguousarray(R)) for R in T[:, :3, :3]])
