"""The packed geometry table of a model (L3): what collision detection
reads each step, built once from ``model.collision_geometries`` and the
model's filtering records (docs/collision.md, "Which pairs may collide").

:func:`candidate_pairs` applies the static filter once: geometries on one
body never collide; static–static pairs (both on the world or on bodies
welded to it) never; explicit pairs (``model.collision_pairs``) always;
otherwise MuJoCo's rule — the masks match (``contype1 & conaffinity2`` or
``contype2 & conaffinity1``), the links are not excluded
(``model.excluded_link_pairs``: MJCF ``<exclude>``, SRDF
``<disable_collisions>``), and with ``model.filter_parent`` a body does not
collide with its parent (``model.collision_parent``) unless that parent is
the world. Pair parameters combine as MuJoCo's do: the geometry of higher
``priority`` gives its friction and condim; on equal priorities the
friction is the maximum and condim the maximum, solref and solimp the
mean (MuJoCo's mix with both geometries' default ``solmix`` of 1;
``solmix`` is not read) or, for direct-format solref (negative), the
element-wise minimum; restitution is the maximum (MuJoCo has none; a
bouncing ball on a dead floor bounces); margins add. :class:`GeometryTable` packs the rest into arrays the
detection kernel (:mod:`.detect`) takes.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .narrow import UNSUPPORTED, pair_family
from .shapes import CAPSULE, CYLINDER, ELLIPSOID, HFIELD, PLANE, SHAPE_CODES, SPHERE, BOX
from .terrain_data import terrain_record

if TYPE_CHECKING:
    from ..model import Geometry, Model


def kernel_size(g: Geometry) -> np.ndarray:
    """The kernel half-sizes (3,) of a :class:`~multibody.model.Geometry`
    (collision/shapes.py): the model's sizes are full extents and lengths."""
    s = np.zeros(3)
    size = tuple(g.size)
    if g.shape == "sphere":
        s[0] = size[0]
    elif g.shape in ("capsule", "cylinder"):
        s[0], s[1] = size[0], 0.5 * size[1]
    elif g.shape == "box":
        s[:] = 0.5 * np.asarray(size, float)
    elif g.shape == "ellipsoid":
        s[:] = size
    elif g.shape == "hfield":
        s[0], s[1], s[2] = 0.5 * size[0], 0.5 * size[1], size[2]
    return s


def bounding_radius(g: Geometry) -> float:
    """Radius (m) of a sphere about the geometry frame's origin that
    contains the geometry; inf for a plane."""
    code = SHAPE_CODES[g.shape]
    s = kernel_size(g)
    if code == PLANE:
        return np.inf
    if code == SPHERE:
        return s[0]
    if code in (CAPSULE, CYLINDER):
        return s[0] + s[1] if code == CAPSULE else float(np.hypot(s[0], s[1]))
    if code in (BOX, ELLIPSOID):
        return float(np.linalg.norm(s)) if code == BOX else float(s.max())
    if code == HFIELD:  # the farthest corner of the solid: heights in [0, size[2]], base at -size[3]
        return float(np.linalg.norm([s[0], s[1], max(s[2], g.size[3])]))
    if g.vertices is not None and len(g.vertices):
        return float(np.linalg.norm(g.vertices, axis=1).max())
    return 0.0


def bounding_box(g: Geometry) -> tuple[np.ndarray, np.ndarray]:
    """(centre (3,), half extents (3,)) (m) of a box in the geometry's frame
    that contains the geometry; infinite half extents for a plane or a
    geometry without a known extent."""
    code = SHAPE_CODES[g.shape]
    s = kernel_size(g)
    centre = np.zeros(3)
    if code == SPHERE:
        return centre, np.full(3, s[0])
    if code == CAPSULE:
        return centre, np.array([s[0], s[0], s[0] + s[1]])
    if code == CYLINDER:
        return centre, np.array([s[0], s[0], s[1]])
    if code in (BOX, ELLIPSOID):
        return centre, s.copy()
    if code == HFIELD:  # z from -base to the maximum height
        return np.array([0.0, 0.0, 0.5 * (s[2] - g.size[3])]), np.array([s[0], s[1], 0.5 * (s[2] + g.size[3])])
    if code != PLANE and g.vertices is not None and len(g.vertices):
        lo, hi = np.min(g.vertices, axis=0), np.max(g.vertices, axis=0)
        return 0.5 * (lo + hi), 0.5 * (hi - lo)
    return centre, np.full(3, np.inf)


def _static(model):
    """(nbodies,) bool: bodies welded to the world (no coordinate moves them)."""
    static = np.zeros(model.nbodies, bool)
    static[0] = True
    for i in range(1, model.nbodies):
        static[i] = static[model.parents[i]] and model.joints[i].nv == 0
    return static


def _combined(g1, g2):
    """(μ, restitution, condim, margin, solref, solimp) of an automatic pair
    (module docstring; MuJoCo's mj_contactParam)."""
    if g1.priority != g2.priority:
        top = g1 if g1.priority > g2.priority else g2
        mu, condim, solref, solimp = top.friction[0], top.condim, tuple(top.solref), tuple(top.solimp)
    else:
        mu, condim = max(g1.friction[0], g2.friction[0]), max(g1.condim, g2.condim)
        if g1.solref[0] > 0 and g2.solref[0] > 0:
            solref = tuple(0.5 * (a + b) for a, b in zip(g1.solref, g2.solref))
        else:
            solref = tuple(min(a, b) for a, b in zip(g1.solref, g2.solref))
        solimp = tuple(0.5 * (a + b) for a, b in zip(g1.solimp, g2.solimp))
    return mu, max(g1.restitution, g2.restitution), condim, g1.margin + g2.margin, solref, solimp


def candidate_pairs(model: Model) -> list[tuple]:
    """The geometry pairs that may collide, after the static filter (module
    docstring): a list of ``(i, j, mu, restitution, margin, solref,
    solimp)`` with ``i < j`` indices into ``model.collision_geometries``, μ
    the sliding friction coefficient (0 for condim 1), margin (m) the
    distance below which a contact is made, and MuJoCo's solref (2,) and
    solimp (5,) of the pair (soft contact, docs/contact.md). Automatic
    pairs of two height fields or triangle meshes are left out (they are
    static, and have no collider); :class:`GeometryTable` drops the pairs
    no collider takes."""
    geoms = model.collision_geometries
    index = {g.name: k for k, g in enumerate(geoms)}
    static = _static(model)
    excluded = {frozenset(p) for p in model.excluded_link_pairs}
    parent = model.collision_parent
    pairs = {}
    for a in range(len(geoms)):
        g1 = geoms[a]
        for b in range(a + 1, len(geoms)):
            g2 = geoms[b]
            b1, b2 = g1.body, g2.body
            if b1 == b2 or (static[b1] and static[b2]):
                continue
            if not (g1.contype & g2.conaffinity or g2.contype & g1.conaffinity):
                continue
            if frozenset((g1.link, g2.link)) in excluded:
                continue
            if model.filter_parent and ((parent[b1] == b2 and b2 != 0) or (parent[b2] == b1 and b1 != 0)):
                continue
            if g1.shape in ("mesh", "hfield") and g2.shape in ("mesh", "hfield"):
                continue
            mu, e, condim, margin, solref, solimp = _combined(g1, g2)
            pairs[(a, b)] = (a, b, 0.0 if condim == 1 else mu, e, margin, solref, solimp)
    for p in model.collision_pairs:  # explicit: always, with their own parameters
        a, b = sorted((index[p.geom1], index[p.geom2]))
        e = max(geoms[a].restitution, geoms[b].restitution)
        pairs[(a, b)] = (a, b, 0.0 if p.condim == 1 else p.friction[0], e, p.margin, tuple(p.solref),
                         tuple(p.solimp))
    return [pairs[k] for k in sorted(pairs)]


class GeometryTable:
    """The collision geometry of ``model`` as arrays (geometry k =
    ``model.collision_geometries[k]``):

    * ``code`` (ng,) int64 shape codes, ``body`` (ng,) int64,
      ``local`` (ng, 4, 4) placement in the body (m), ``size`` (ng, 3)
      kernel half-sizes, ``radius`` (ng,) bounding radius (inf: plane),
      ``box`` (ng, 2, 3) a bounding box in the geometry's frame (centre,
      half extents; :func:`bounding_box`),
      ``vstart`` (ng + 1,) int64 offsets into ``vertices`` (nvert, 3), the
      hull vertices of "convex" geometries in their frames, and the
      records of "hfield" and "mesh" geometries (rows of 3 numbers:
      :func:`~.terrain_data.terrain_record`, what :mod:`.terrain` reads);
    * ``pairs`` (npair, 2) int64 candidate pairs (:func:`candidate_pairs`),
      ``mu``, ``restitution``, ``margin`` (npair,), ``solref`` (npair, 2)
      and ``solimp`` (npair, 5) their parameters.

    Pairs no collider takes (:func:`~.narrow.pair_family`: a plane on a
    moving body with a height field or a mesh; as explicit pairs also two
    of those, or two planes) are dropped, with ``unsupported`` listing
    them (names)."""

    def __init__(self, model: Model) -> None:
        geoms = model.collision_geometries
        ng = len(geoms)
        self.geometries = geoms
        self.code = np.array([SHAPE_CODES[g.shape] for g in geoms], np.int64)
        self.body = np.array([g.body for g in geoms], np.int64)
        self.local = np.ascontiguousarray(np.array([g.placement for g in geoms], float).reshape(ng, 4, 4))
        self.size = np.ascontiguousarray(np.array([kernel_size(g) for g in geoms], float).reshape(ng, 3))
        self.radius = np.array([bounding_radius(g) for g in geoms], float)
        self.box = np.ascontiguousarray(np.array([bounding_box(g) for g in geoms], float).reshape(ng, 2, 3))
        kept, self.unsupported = [], []
        family = getattr(pair_family, "py_func", pair_family)  # the Python function: nothing to compile
        for pair in candidate_pairs(model):
            a, b = pair[:2]
            if family(*sorted((int(self.code[a]), int(self.code[b])))) == UNSUPPORTED:
                self.unsupported.append((geoms[a].name, geoms[b].name))
            else:
                kept.append(pair)
        # per geometry, its rows of `vertices`: a hull's vertices, the record of a height field or a
        # mesh that is in a pair (built once here; the kernels read nothing else of it)
        used = {int(k) for pair in kept for k in pair[:2]}
        rows = []
        for k, g in enumerate(geoms):
            if g.shape == "convex" and g.vertices is not None:
                rows.append(np.asarray(g.vertices, float).reshape(-1, 3))
            elif g.shape in ("hfield", "mesh") and k in used:
                rows.append(terrain_record(g))
            else:
                rows.append(np.zeros((0, 3)))
        self.vstart = np.concatenate(([0], np.cumsum([len(r) for r in rows]))).astype(np.int64)
        self.vertices = np.ascontiguousarray(np.concatenate(rows or [np.zeros((0, 3))]))
        self.pairs = np.array([(a, b) for a, b, *_ in kept], np.int64).reshape(len(kept), 2)
        self.mu = np.array([k[2] for k in kept], float)
        self.restitution = np.array([k[3] for k in kept], float)
        self.margin = np.array([k[4] for k in kept], float)
        self.solref = np.array([k[5] for k in kept], float).reshape(len(kept), 2)
        self.solimp = np.array([k[6] for k in kept], float).reshape(len(kept), 5)

    def __len__(self):
        return len(self.pairs)
