"""Collision and visual geometry of a model: :class:`Geometry`, explicit
contact pairs (:class:`CollisionPair`), the checks of their values and the
convex hull of a point set.

Shape names are those of the collision kernels (``multibody.collision.shapes``,
MuJoCo's order): plane, hfield, sphere, capsule, ellipsoid, cylinder, box,
convex, mesh. Sizes here are user-facing (URDF style: full box extents, full
cylinder and capsule lengths); the kernels' half-sizes are derived when the
geometry is packed. docs/collision.md is the user's guide.
"""
from dataclasses import dataclass, fields

import numpy as np

from ..errors import ModelError

#: the collision shapes, in the order of ``multibody.collision.shapes.SHAPE_NAMES`` (checked by a test;
#: L1 may not import L3)
SHAPES = ("plane", "hfield", "sphere", "capsule", "ellipsoid", "cylinder", "box", "convex", "mesh")
#: shapes only a static body (the world, or a body fixed to it) may own as collision geometry
STATIC_ONLY = ("mesh", "hfield")
#: number of size values of each shape (plane: 0 or 2)
SIZE_COUNT = {"plane": (0, 2), "hfield": (4,), "sphere": (1,), "capsule": (2,), "ellipsoid": (3,),
              "cylinder": (2,), "box": (3,), "convex": (0,), "mesh": (0,)}

# MuJoCo's defaults (mjs_defaultGeom): friction (sliding, torsional, rolling), solref (time constant,
# damping ratio), solimp (dmin, dmax, width, midpoint, power)
DEFAULT_FRICTION = (1.0, 0.005, 0.0001)
DEFAULT_SOLREF = (0.02, 1.0)
DEFAULT_SOLIMP = (0.9, 0.95, 0.001, 0.5, 2.0)
CONDIMS = (1, 3, 4, 6)

_ARRAYS = ("placement", "vertices", "faces", "heights")


def _frozen(a, dtype):
    if a is None:
        return None
    a = np.array(a, dtype=dtype, order="C")  # a copy: the caller's array stays the caller's
    a.setflags(write=False)
    return a


def _same(a, b):
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return a is b or (a is not None and b is not None and np.array_equal(a, b))
    return a == b


@dataclass(frozen=True, eq=False)
class Geometry:
    """A collision or visual shape rigidly attached to ``body``.

    Placement and shape:

    * ``name``; ``body``: index of the model body that carries it;
      ``link``: name of the link (URDF link, MuJoCo body, builder body) it was
      declared on — the body's name unless that link was merged into the body
      through a fixed joint (collision exclusions name links).
    * ``placement``: 4x4 pose of the geometry frame in the body frame (m).
    * ``shape`` and ``size`` (m, geometry frame): "plane" (the half-space
      z <= 0, infinite for collision; ``size`` = () or the full extents
      (x, y) of its drawing, 0 = infinite), "sphere" (radius,), "capsule" and
      "cylinder" (radius, full length) along z, "ellipsoid" (semi-axes
      a, b, c), "box" (full extents x, y, z), "convex" (the convex hull of
      ``vertices``, ``size`` = ()), "mesh" (a triangle mesh ``vertices`` /
      ``faces``; as collision geometry only on a static body), "hfield" (a
      height field, static only: ``size`` = (full extent x, full extent y,
      maximum height z, base depth below z = 0), ``heights``). Visual
      geometries may also carry other names a loader met (MuJoCo "sdf").
    * ``mesh``: the mesh file (resolved path, or the string of the model file
      if not found), ``scale``: its per-axis scale factors (already applied
      to ``vertices``). ``rgba``: colour or None.
    * ``vertices``: (n, 3) float64 in the geometry frame (m), scale applied.
      "convex": the vertices of the convex hull (every one is a hull
      vertex); "mesh": the triangle mesh's vertices. None otherwise.
      ``faces``: (m, 3) int64 rows of vertex indices; "convex": the hull's
      triangles, counter-clockwise seen from outside (normals
      ``(v1 - v0) x (v2 - v0)`` point outwards); "mesh": the file's
      triangles. ``heights``: "hfield" only, (nrow, ncol) float64 heights
      (m, >= 0) of the grid; ``heights[r, c]`` is the height at
      ``x = -size[0]/2 + c size[0]/(ncol-1)``, ``y = -size[1]/2 + r
      size[1]/(nrow-1)`` (MuJoCo's layout: rows along y).

    Contact parameters (MuJoCo's meanings and defaults; recorded for the
    contact solvers, which document which ones they use):

    * ``friction`` = (sliding, torsional, rolling) coefficients, default
      (1, 0.005, 0.0001); ``restitution`` in [0, 1], default 0 (MuJoCo has
      none).
    * ``contype``, ``conaffinity``: bit masks (default 1, 1); two geometries
      may collide automatically if ``contype1 & conaffinity2`` or
      ``contype2 & conaffinity1`` is non-zero.
    * ``condim`` in {1, 3, 4, 6} (default 3): frictionless, sliding,
      + torsional, + rolling friction.
    * ``margin`` (m, default 0): contacts are made at distances below
      ``margin + gap`` and active below ``margin``; ``gap`` (m, default 0).
    * ``priority`` (default 0): of two geometries, the higher priority's
      parameters are used; equal priorities combine (friction: max).
    * ``solref`` (2, default (0.02, 1)), ``solimp`` (5, default (0.9, 0.95,
      0.001, 0.5, 2)): MuJoCo's soft-constraint parameters, recorded only.

    Arrays are read-only. Two geometries compare equal when all their
    fields are equal (arrays element-wise).
    """
    name: str
    body: int
    placement: np.ndarray
    shape: str
    size: tuple = ()
    mesh: str | None = None
    scale: tuple = (1.0, 1.0, 1.0)
    rgba: tuple | None = None
    friction: tuple = DEFAULT_FRICTION
    restitution: float = 0.0
    contype: int = 1
    conaffinity: int = 1
    condim: int = 3
    margin: float = 0.0
    gap: float = 0.0
    priority: int = 0
    solref: tuple = DEFAULT_SOLREF
    solimp: tuple = DEFAULT_SOLIMP
    vertices: np.ndarray | None = None
    faces: np.ndarray | None = None
    heights: np.ndarray | None = None
    link: str | None = None

    def __post_init__(self):
        # read-only copies: the dataclass is frozen, its arrays must be too
        set_ = object.__setattr__
        set_(self, "placement", _frozen(self.placement, np.float64))
        set_(self, "vertices", _frozen(self.vertices, np.float64))
        set_(self, "faces", _frozen(self.faces, np.int64))
        set_(self, "heights", _frozen(self.heights, np.float64))

    def __setstate__(self, state):
        # unpickled arrays are writable: freeze them again
        self.__dict__.update(state)
        for k in _ARRAYS:
            a = state.get(k)
            if isinstance(a, np.ndarray):
                a.setflags(write=False)

    def __eq__(self, other):
        if type(other) is not type(self):
            return NotImplemented
        return all(_same(getattr(self, f.name), getattr(other, f.name)) for f in fields(self))

    def __repr__(self):
        # arrays by shape: a hull has hundreds of vertices
        def show(v):
            return f"<{v.shape[0]}x{v.shape[1]} array>" if isinstance(v, np.ndarray) and v.ndim == 2 and \
                v.shape != (4, 4) else repr(v)
        inner = ", ".join(f"{f.name}={show(getattr(self, f.name))}" for f in fields(self))
        return f"Geometry({inner})"

    def __hash__(self):
        return hash((self.name, self.body, self.shape, self.size))

    def replace(self, **changes):
        """A copy with the fields ``changes`` replaced (unchecked)."""
        kw = {f.name: getattr(self, f.name) for f in fields(self)}
        kw.update(changes)
        return Geometry(**kw)


@dataclass(frozen=True)
class CollisionPair:
    """An explicit contact pair (MJCF ``<contact><pair>``): geometries
    ``geom1`` and ``geom2`` (names) are always checked for contact, whatever
    their ``contype``/``conaffinity``, the parent filter and the exclusions,
    with these parameters instead of the geometries' own: ``condim``,
    ``friction`` (5: tangent 1, tangent 2, torsional, rolling 1, rolling 2),
    ``solref``, ``solreffriction``, ``solimp``, ``margin``, ``gap`` (m)."""
    geom1: str
    geom2: str
    name: str | None = None
    condim: int = 3
    friction: tuple = (1.0, 1.0, 0.005, 0.0001, 0.0001)
    solref: tuple = DEFAULT_SOLREF
    solreffriction: tuple = (0.0, 0.0)
    solimp: tuple = DEFAULT_SOLIMP
    margin: float = 0.0
    gap: float = 0.0


# ------------------------------------------------------------------ checks
_DEFAULTS = dict(friction=DEFAULT_FRICTION, restitution=0.0, contype=1, conaffinity=1, condim=3, margin=0.0,
                 gap=0.0, priority=0, solref=DEFAULT_SOLREF, solimp=DEFAULT_SOLIMP)

def _floats(value, n, what):
    """``value`` as a tuple of ``n`` finite floats (ModelError naming ``what``)."""
    try:
        a = np.asarray(value, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        raise ModelError(f"{what} must be {n} real number(s), got {value!r}") from None
    if n is not None and a.shape != (n,):
        raise ModelError(f"{what} must be {n} number(s), got {value!r}")
    if not np.isfinite(a).all():
        raise ModelError(f"{what} must be finite, got {a.tolist()}")
    return tuple(float(x) for x in a)


def _number(value, what):
    return _floats(value, 1, what)[0]


def _integer(value, what):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        if isinstance(value, (float, np.floating)) and float(value).is_integer():
            return int(value)
        raise ModelError(f"{what} must be an integer, got {value!r}")
    return int(value)


def contact_parameters(what, friction=DEFAULT_FRICTION, restitution=0.0, contype=1, conaffinity=1, condim=3,
                       margin=0.0, gap=0.0, priority=0, solref=DEFAULT_SOLREF, solimp=DEFAULT_SOLIMP):
    """The contact parameters of a geometry (see :class:`Geometry`),
    checked and normalized (tuples of floats, ints); ``what`` names the
    geometry in the :class:`~multibody.errors.ModelError` raised for a
    negative or non-finite friction, a restitution outside [0, 1], a condim
    not in {1, 3, 4, 6}, a negative margin or gap, non-integer masks."""
    if (friction is DEFAULT_FRICTION and solref is DEFAULT_SOLREF and solimp is DEFAULT_SOLIMP and restitution == 0.0
            and contype == 1 and conaffinity == 1 and condim == 3 and margin == 0.0 and gap == 0.0 and priority == 0
            and all(type(x) in (int, float) for x in (restitution, contype, conaffinity, condim, margin, gap,
                                                      priority))):
        return dict(_DEFAULTS)  # the common case (every URDF geometry): the checks cost 6 ms on Talos
    friction = _floats(friction, 3, f"{what}: friction")
    if min(friction) < 0:
        raise ModelError(f"{what}: friction must be non-negative, got {friction}")
    restitution = _number(restitution, f"{what}: restitution")
    if not 0.0 <= restitution <= 1.0:
        raise ModelError(f"{what}: restitution must be in [0, 1], got {restitution}")
    contype, conaffinity = _integer(contype, f"{what}: contype"), _integer(conaffinity, f"{what}: conaffinity")
    if contype < 0 or conaffinity < 0:
        raise ModelError(f"{what}: contype and conaffinity are bit masks (non-negative), got {contype}, {conaffinity}")
    condim = _integer(condim, f"{what}: condim")
    if condim not in CONDIMS:
        raise ModelError(f"{what}: condim must be 1, 3, 4 or 6, got {condim}")
    margin, gap = _number(margin, f"{what}: margin"), _number(gap, f"{what}: gap")
    if margin < 0 or gap < 0:
        raise ModelError(f"{what}: margin and gap must be non-negative (m), got {margin}, {gap}")
    return dict(friction=friction, restitution=restitution, contype=contype, conaffinity=conaffinity,
                condim=condim, margin=margin, gap=gap, priority=_integer(priority, f"{what}: priority"),
                solref=_floats(solref, 2, f"{what}: solref"), solimp=_floats(solimp, 5, f"{what}: solimp"))


def check_size(shape, size, what):
    """``size`` of a collision ``shape`` as a tuple of floats: the right
    count, finite, positive (a plane's extents and an hfield's base may be
    0). Raises ModelError naming ``what``."""
    size = _floats(size, None, f"{what}: size")
    counts = SIZE_COUNT[shape]
    if len(size) not in counts:
        raise ModelError(f"{what}: a {shape} takes {' or '.join(map(str, counts))} size value(s), got {size}")
    if shape == "plane" or shape == "hfield":
        low = size if shape == "plane" else size[3:]
        if any(s < 0 for s in low) or (shape == "hfield" and min(size[:3]) <= 0):
            raise ModelError(f"{what}: {shape} sizes must be positive, got {size}")
    elif any(s <= 0 for s in size):
        raise ModelError(f"{what}: {shape} sizes must be positive, got {size}")
    return size


def check_mesh(vertices, faces, what):
    """``(vertices (n, 3) float64, faces (m, 3) int64)`` of a triangle mesh,
    checked: finite vertices, faces indexing them. ModelError naming ``what``."""
    try:
        V = np.asarray(vertices, dtype=float)
        F = None if faces is None else np.asarray(faces)
    except (TypeError, ValueError):
        raise ModelError(f"{what}: vertices must be an (n, 3) array of numbers") from None
    if V.ndim != 2 or V.shape[1] != 3 or len(V) == 0:
        raise ModelError(f"{what}: vertices must have shape (n, 3), got {V.shape}")
    if not np.isfinite(V).all():
        raise ModelError(f"{what}: vertices are not finite")
    if F is not None:
        if F.ndim != 2 or F.shape[1] != 3 or F.dtype.kind not in "iu":
            raise ModelError(f"{what}: faces must be an (m, 3) integer array, got shape {F.shape} ({F.dtype})")
        if len(F) and (F.min() < 0 or F.max() >= len(V)):
            raise ModelError(f"{what}: faces index vertices outside 0..{len(V) - 1}")
        F = F.astype(np.int64)
    return V, F


def check_triangles(vertices, faces, what, strict=True):
    """Check a static triangle mesh (vertices (n, 3), faces (m, 3) into them,
    shared vertices merged): at least one triangle, none degenerate (a
    repeated vertex, or an area below 1e-12 times the square of the mesh's
    extent: it has no normal). ``strict``: a degenerate triangle is a
    ModelError naming ``what`` and the first one; otherwise (meshes read
    from files, where zero-area slivers are common) degenerate triangles are
    dropped (they carry no surface). Returns ``(faces kept, number of edges
    whose two triangles wind them the same way)``: an inconsistent
    orientation, for the caller to warn about (the front of a triangle, the
    side contacts come from, is the side its corners turn counter-clockwise
    about)."""
    V = np.asarray(vertices, dtype=float).reshape(-1, 3)
    F = np.asarray(faces, dtype=np.int64).reshape(-1, 3)
    if len(F) == 0:
        raise ModelError(f"{what}: a triangle mesh needs at least one triangle (faces is empty)")
    extent = float(np.ptp(V[np.unique(F)], axis=0).max())
    area2 = np.linalg.norm(np.cross(V[F[:, 1]] - V[F[:, 0]], V[F[:, 2]] - V[F[:, 0]]), axis=1)
    bad = (F[:, 0] == F[:, 1]) | (F[:, 1] == F[:, 2]) | (F[:, 0] == F[:, 2]) | ~(area2 > 1e-12 * extent ** 2)
    if bad.any() and (strict or bad.all()):
        k = int(np.flatnonzero(bad)[0])
        raise ModelError(f"{what}: degenerate triangle {k} (vertices {tuple(int(i) for i in F[k])}: "
                         f"{'a repeated vertex' if len(set(F[k].tolist())) < 3 else 'zero area'}); "
                         f"{int(bad.sum())} of {len(F)} triangles are degenerate")
    F = F[~bad]
    directed = np.concatenate([F[:, [0, 1]], F[:, [1, 2]], F[:, [2, 0]]])
    _, counts = np.unique(directed, axis=0, return_counts=True)
    return F, int((counts > 1).sum())


def degenerate(points):
    """Why the point set (n, 3) has no convex volume — fewer than 4 points,
    or all (nearly) collinear or coplanar: its smallest principal extent
    below 1e-9 times its largest — or None if it has one."""
    P = np.asarray(points, dtype=float).reshape(-1, 3)
    if len(P) < 4:
        return f"{len(P)} vertices; a solid needs 4 non-coplanar ones"
    s = np.linalg.svd(P - P.mean(axis=0), compute_uv=False)
    if not s[2] > 1e-9 * s[0]:
        return "its vertices are coplanar or collinear: no volume"
    return None


def convex_hull(points, what):
    """The convex hull of ``points`` (n, 3): ``(vertices, faces, volume)``
    with ``vertices`` the hull's vertices (a subset of the points, in their
    order), ``faces`` its triangles (indices into ``vertices``), oriented
    counter-clockwise seen from outside, and its volume (m³). Computed by
    qhull (``scipy.spatial.ConvexHull``, the library trimesh and coal use).
    A degenerate point set (fewer than 4 points, all coplanar, or a hull
    of zero volume) raises ModelError naming ``what``."""
    from scipy.spatial import ConvexHull, QhullError
    P = np.asarray(points, dtype=float).reshape(-1, 3)
    flat = degenerate(P)
    if flat:
        raise ModelError(f"{what}: degenerate mesh: {flat}")
    extent = float(np.ptp(P, axis=0).max())
    try:
        # QbB: scale to the unit cube first (trimesh's option: robust for small parts in metres)
        hull = ConvexHull(P, qhull_options="QbB Pp Qt")
    except (QhullError, ValueError) as e:
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise ModelError(f"{what}: degenerate mesh: its points are coplanar or collinear (qhull: {first})") from None
    if not hull.volume > 1e-12 * extent ** 3:
        raise ModelError(f"{what}: degenerate mesh: its convex hull has volume {hull.volume:.3g} m³ "
                         f"for an extent of {extent:.3g} m")
    simplices, normals = hull.simplices, hull.equations[:, :3]
    a, b, c = P[simplices[:, 0]], P[simplices[:, 1]], P[simplices[:, 2]]
    n = np.cross(b - a, c - a)
    # qhull triangulates a facet with coplanar points into some zero-area triangles: dropped (their
    # normal is undefined; the surface they cover is nil)
    good = np.linalg.norm(n, axis=1) > 1e-12 * extent ** 2
    simplices, n, normals = simplices[good], n[good], normals[good]
    # qhull does not orient its simplices: flip those whose normal opposes the facet's outward normal
    flip = np.einsum("ij,ij->i", n, normals) < 0
    simplices[flip] = simplices[flip][:, [0, 2, 1]]
    keep = np.unique(simplices)  # the hull's vertices, in the points' order
    index = np.full(len(P), -1, dtype=np.int64)
    index[keep] = np.arange(len(keep))
    return P[keep], index[simplices], float(hull.volume)


def mesh_volume(vertices, faces):
    """Signed volume enclosed by a closed, outward-oriented triangle mesh
    (divergence theorem); for an open or inconsistently oriented soup the
    number has no meaning."""
    a, b, c = vertices[faces[:, 0]], vertices[faces[:, 1]], vertices[faces[:, 2]]
    return float(np.einsum("ij,ij->i", a, np.cross(b, c)).sum() / 6.0)


def is_convex(vertices, faces, hull_volume, rtol=1e-3):
    """Whether the closed triangle mesh is (within ``rtol`` of its volume)
    its own convex hull: |mesh volume| >= (1 - rtol) hull volume."""
    return abs(mesh_volume(vertices, faces)) >= (1.0 - rtol) * hull_volume


__all__ = ["Geometry", "CollisionPair", "SHAPES", "STATIC_ONLY", "DEFAULT_FRICTION", "DEFAULT_SOLREF",
           "DEFAULT_SOLIMP", "contact_parameters", "check_size", "check_mesh", "check_triangles", "convex_hull",
           "degenerate"]
