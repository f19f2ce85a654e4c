"""Narrow phase (L3): contacts and signed distance of one pair of geoms.

Compiled entry points (``@njit(cache=True, nogil=True)``; no allocation):

``collide_pair(t1, size1, R1, p1, verts1, faces1, t2, size2, R2, p2, verts2, faces2,
margin, dist, pos, frame, start, cap, work) -> n``
    Writes the pair's contacts with ``dist <= margin`` into rows
    ``start .. start + n - 1`` of ``dist`` (cap,), ``pos`` (cap, 3) and
    ``frame`` (cap, 3, 3), and returns n >= 0, or a negative status:
    ``UNSUPPORTED`` (a pair with no collider: plane-plane, a plane, height
    field or mesh with a height field or mesh, or a terrain given without
    its record) or ``EPA_FAILURE`` (no penetration could be computed;
    nothing written). ``dist`` is the signed distance
    (< 0: penetration), ``pos`` the point midway between the two surfaces,
    ``frame`` the rows (normal, t1, t2), orthonormal and right-handed, the
    normal pointing from geom 1 (the first argument) to geom 2, whatever the
    argument order (internally the pair is sorted by shape code, MuJoCo's
    order, and the normal flipped back). At most ``MAX_CONTACTS`` (8) per
    pair; when ``cap - start`` is smaller, the first ones are written.
``signed_distance(t1, size1, R1, p1, verts1, t2, size2, R2, p2, verts2, out, work)
-> (d, status)``
    Signed distance of two convex geoms (or a plane and a convex geom),
    with ``out`` (3, 3) = [witness on geom 1, witness on geom 2, unit
    normal from 1 to 2]; ``p2 - p1 = d * normal`` (when penetrating, p1 is
    the point of geom 1 deepest in geom 2). status 0, ``EPA_INEXACT`` (1,
    iteration limit: the best estimate is returned) or ``EPA_FAILURE``
    / ``UNSUPPORTED`` (nothing written, d = 0).

Arguments: ``tK`` shape codes (``shapes.py``), ``sizeK`` float64 (3,)
half-sizes, ``RK`` (3, 3) float64 rotation and ``pK`` (3,) position of the
geom frame in world, ``vertsK`` (n, 3) float64 hull vertices in the geom
frame for ``convex``; for a height field or a static triangle mesh (a
*terrain*, :mod:`.terrain`) its record (:func:`~.terrain_data.terrain_record`:
grid or triangles, edge flags, bounding-volume tree); else an empty (0, 3)
array. ``facesK`` (m, 3) int64: unused (hull vertices suffice for the
convex pairs, the record carries a mesh's triangles). All arrays
C-contiguous (another layout compiles another specialization). ``work``
from :func:`narrow_workspace`, one per thread.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from . import boxbox, gjk, primitives
from .gjk import EPA_FAILED, EPA_INEXACT
from .narrow_workspace import MAX_CONTACTS, STAGE, STAGE_ROW, WORK_SIZE, narrow_workspace
from .shapes import BOX, CAPSULE, CONVEX, CYLINDER, ELLIPSOID, HFIELD, MESH, PLANE, SPHERE
from .terrain import terrain_contacts

UNSUPPORTED = -1
EPA_FAILURE = -2

__all__ = ["collide_pair", "signed_distance", "narrow_workspace", "contact_frame", "MAX_CONTACTS",
           "UNSUPPORTED", "EPA_FAILURE", "EPA_INEXACT", "WORK_SIZE", "collide", "distance"]


@njit(cache=True, nogil=True)
def contact_frame(nx, ny, nz):
    """Tangents (t1, t2) completing the unit normal n to a right-handed orthonormal frame:
    t1 = normalize(n x e) for the world axis e least aligned with n (first on ties),
    t2 = n x t1."""
    ax, ay, az = abs(nx), abs(ny), abs(nz)
    if ax <= ay and ax <= az:      # e = x: n x e = (0, nz, -ny)
        tx, ty, tz = 0.0, nz, -ny
    elif ay <= az:                 # e = y: n x e = (-nz, 0, nx)
        tx, ty, tz = -nz, 0.0, nx
    else:                          # e = z: n x e = (ny, -nx, 0)
        tx, ty, tz = ny, -nx, 0.0
    tn = math.sqrt(tx * tx + ty * ty + tz * tz)
    tx, ty, tz = tx / tn, ty / tn, tz / tn
    return tx, ty, tz, ny * tz - nz * ty, nz * tx - nx * tz, nx * ty - ny * tx


# The colliders by family, so that a contact table compiles only the families of its pairs
# (constraints/_contact.py, one C entry point each): the closed forms of primitives.py, box–box
# (boxbox.py), the convex pairs (GJK/EPA and the support-function planes), and a static height
# field or triangle mesh with a convex shape (terrain.py). Compiled together they took ~25 s cold,
# box–box alone 10 s.
CLOSED_FORM, BOX_BOX, SUPPORT, TERRAIN = 0, 1, 2, 3
FAMILIES = (CLOSED_FORM, BOX_BOX, SUPPORT, TERRAIN)


@njit(cache=True, nogil=True)
def pair_family(ta, tb):
    """The family of the collider of the shape codes ta <= tb (sorted, as
    :func:`collide_pair` sorts them): CLOSED_FORM, BOX_BOX, SUPPORT, TERRAIN
    (a height field or triangle mesh with a sphere, capsule, ellipsoid,
    cylinder, box or hull), or UNSUPPORTED (plane–plane, and a plane,
    height field or mesh with a height field or mesh)."""
    if ta == HFIELD or tb == MESH:
        if ta == PLANE or ta == HFIELD and tb == HFIELD or tb == MESH and (ta == HFIELD or ta == MESH):
            return UNSUPPORTED
        return TERRAIN
    if ta == PLANE:
        if tb == SPHERE or tb == CAPSULE or tb == CYLINDER or tb == BOX:
            return CLOSED_FORM
        if tb == ELLIPSOID or tb == CONVEX:
            return SUPPORT
        return UNSUPPORTED
    if ta == SPHERE and (tb == SPHERE or tb == CAPSULE or tb == CYLINDER or tb == BOX):
        return CLOSED_FORM
    if ta == CAPSULE and (tb == CAPSULE or tb == BOX):
        return CLOSED_FORM
    if ta == BOX and tb == BOX:
        return BOX_BOX
    return SUPPORT


@njit(cache=True, nogil=True)
def closed_form_contacts(A, B, margin, work):
    """The CLOSED_FORM pairs of the sorted pair (A's code <= B's), staged; (n, status)."""
    ta = A[0]
    tb = B[0]
    if ta == PLANE:
        if tb == SPHERE:
            return primitives.plane_sphere(A, B, margin, work), 0
        if tb == CAPSULE:
            return primitives.plane_capsule(A, B, margin, work), 0
        if tb == CYLINDER:
            return primitives.plane_cylinder(A, B, margin, work), 0
        return primitives.plane_box(A, B, margin, work), 0
    if ta == SPHERE:
        if tb == SPHERE:
            return primitives.sphere_sphere(A, B, margin, work), 0
        if tb == CAPSULE:
            return primitives.sphere_capsule(A, B, margin, work), 0
        if tb == CYLINDER:
            return primitives.sphere_cylinder(A, B, margin, work), 0
        return primitives.sphere_box(A, B, margin, work), 0
    if tb == CAPSULE:
        return primitives.capsule_capsule(A, B, margin, work), 0
    return primitives.capsule_box(A, B, margin, work), 0


@njit(cache=True, nogil=True)
def box_box_contacts(A, B, margin, work):
    """The BOX_BOX pair, staged; (n, status)."""
    return boxbox.box_box(A, B, margin, work), 0


@njit(cache=True, nogil=True)
def support_contacts(A, B, margin, work):
    """The SUPPORT pairs of the sorted pair (A's code <= B's): a plane and an
    ellipsoid or hull (the support point's depth), else GJK/EPA with
    manifolds; a hull without vertices touches nothing. Staged; (n, status)."""
    if (A[0] == CONVEX and A[4].shape[0] == 0) or (B[0] == CONVEX and B[4].shape[0] == 0):
        return 0, 0
    if A[0] == PLANE:
        if B[0] == CONVEX:
            return primitives.plane_convex(A, B, margin, work, np.int64(4)), 0
        return primitives.plane_support(A, B, margin, work), 0
    return gjk.convex_contacts(A, B, margin, work)


@njit(cache=True, nogil=True)
def _dispatch(A, B, margin, work):
    """Contacts of the sorted pair (A's code <= B's) by its family, staged; returns (n, status)."""
    family = pair_family(A[0], B[0])
    if family == CLOSED_FORM:
        return closed_form_contacts(A, B, margin, work)
    if family == BOX_BOX:
        return box_box_contacts(A, B, margin, work)
    if family == SUPPORT:
        return support_contacts(A, B, margin, work)
    if family == TERRAIN:
        return terrain_contacts(A, B, margin, work)
    return UNSUPPORTED, 0


@njit(cache=True, nogil=True)
def collide_pair(t1, size1, R1, p1, verts1, faces1, t2, size2, R2, p2, verts2, faces2, margin,
                 dist, pos, frame, start, cap, work):
    """Contacts of geom 1 and geom 2 within ``margin``: see the module docstring."""
    return collide_pair_by(_dispatch, t1, size1, R1, p1, verts1, t2, size2, R2, p2, verts2, margin, dist, pos,
                           frame, start, cap, work)


@njit(cache=True, nogil=True, inline="always")
def collide_pair_by(colliders, t1, size1, R1, p1, verts1, t2, size2, R2, p2, verts2, margin, dist, pos, frame,
                    start, cap, work):
    """:func:`collide_pair` with the staged contacts of the sorted pair from
    ``colliders(A, B, margin, work)`` (:func:`_dispatch`, or one family's
    function for a pair known to be of it)."""
    A = (t1, size1, R1, p1, verts1)
    B = (t2, size2, R2, p2, verts2)
    swap = t1 > t2
    if swap:
        n, status = colliders(B, A, margin, work)
    else:
        n, status = colliders(A, B, margin, work)
    if n < 0:
        return n
    if status == EPA_FAILED:
        return EPA_FAILURE
    sg = -1.0 if swap else 1.0
    m = 0
    for k in range(n):
        r = start + k
        if r >= cap:
            break
        o = STAGE + STAGE_ROW * k
        dist[r] = work[o]
        pos[r, 0] = work[o + 1]
        pos[r, 1] = work[o + 2]
        pos[r, 2] = work[o + 3]
        nx, ny, nz = sg * work[o + 4], sg * work[o + 5], sg * work[o + 6]
        tx, ty, tz, bx, by, bz = contact_frame(nx, ny, nz)
        frame[r, 0, 0] = nx
        frame[r, 0, 1] = ny
        frame[r, 0, 2] = nz
        frame[r, 1, 0] = tx
        frame[r, 1, 1] = ty
        frame[r, 1, 2] = tz
        frame[r, 2, 0] = bx
        frame[r, 2, 1] = by
        frame[r, 2, 2] = bz
        m += 1
    return m


@njit(cache=True, nogil=True)
def _plane_distance(P, X, flip, out):
    """Signed distance of the half-space P (z <= 0 of its frame) and the convex shape X;
    ``flip`` > 0 when X is geom 1 (a float flag: a literal bool compiles twice)."""
    R, o = P[2], P[3]
    nx, ny, nz = R[0, 2], R[1, 2], R[2, 2]
    sx, sy, sz = gjk.support(X, -nx, -ny, -nz, 1.0)
    d = nx * (sx - o[0]) + ny * (sy - o[1]) + nz * (sz - o[2])
    qx, qy, qz = sx - d * nx, sy - d * ny, sz - d * nz      # on the plane
    a = 1 if flip > 0.0 else 0
    b = 0 if flip > 0.0 else 1
    out[a, 0], out[a, 1], out[a, 2] = qx, qy, qz
    out[b, 0], out[b, 1], out[b, 2] = sx, sy, sz
    sg = -1.0 if flip > 0.0 else 1.0
    out[2, 0], out[2, 1], out[2, 2] = sg * nx, sg * ny, sg * nz
    return d


@njit(cache=True, nogil=True)
def signed_distance(t1, size1, R1, p1, verts1, t2, size2, R2, p2, verts2, out, work):
    """Signed distance and witness points of geom 1 and geom 2: see the module docstring."""
    A = (t1, size1, R1, p1, verts1)
    B = (t2, size2, R2, p2, verts2)
    if t1 == HFIELD or t1 == MESH or t2 == HFIELD or t2 == MESH or (t1 == PLANE and t2 == PLANE):
        return 0.0, UNSUPPORTED
    if (t1 == CONVEX and verts1.shape[0] == 0) or (t2 == CONVEX and verts2.shape[0] == 0):
        return 0.0, UNSUPPORTED
    if t1 == PLANE:
        return _plane_distance(A, B, 0.0, out), 0
    if t2 == PLANE:
        return _plane_distance(B, A, 1.0, out), 0
    st, d, ax, ay, az, bx, by, bz, nx, ny, nz = gjk.shape_distance(A, B, work)
    if st == EPA_FAILED:
        return 0.0, EPA_FAILURE
    out[0, 0], out[0, 1], out[0, 2] = ax, ay, az
    out[1, 0], out[1, 1], out[1, 2] = bx, by, bz
    out[2, 0], out[2, 1], out[2, 2] = nx, ny, nz
    return d, st


# ------------------------------------------------------------------ Python conveniences

_EMPTY_V = np.zeros((0, 3))
_EMPTY_F = np.zeros((0, 3), dtype=np.int64)


def _geom(g):
    t, size, R, p = g[0], g[1], g[2], g[3]
    verts = g[4] if len(g) > 4 and g[4] is not None else _EMPTY_V
    faces = g[5] if len(g) > 5 and g[5] is not None else _EMPTY_F
    s = np.zeros(3)
    if t == HFIELD:  # (HFIELD, (half x, half y, max height, base), R, p, heights)
        from .terrain_data import hfield_record
        s[:] = size[:3]
        verts = hfield_record(verts, size[3])
    elif t == MESH:  # (MESH, (), R, p, vertices, faces)
        from .terrain_data import mesh_record
        verts, faces = mesh_record(verts, faces), _EMPTY_F
    else:
        s[:len(size)] = size
    return (int(t), s, np.ascontiguousarray(R, dtype=float), np.ascontiguousarray(p, dtype=float),
            np.ascontiguousarray(verts, dtype=float).reshape(-1, 3),
            np.ascontiguousarray(faces, dtype=np.int64).reshape(-1, 3))


def collide(g1: tuple, g2: tuple, margin: float = 0.0, work: np.ndarray | None = None
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Contacts of two geoms given as tuples ``(code, size, R, p[, verts[, faces]])``
    (sizes may be shorter than 3); a height field as ``(HFIELD, (half x, half y, max height,
    base), R, p, heights)``, a triangle mesh as ``(MESH, (), R, p, vertices, faces)`` (their
    records are built on each call). Returns ``(dist, pos, frame)`` arrays of the contacts
    (n,), (n, 3), (n, 3, 3); raises ValueError for an unsupported pair or an EPA failure.
    A convenience for tests and scripts: the compiled path is :func:`collide_pair`."""
    a = _geom(g1)
    b = _geom(g2)
    work = narrow_workspace() if work is None else work
    dist = np.zeros(MAX_CONTACTS)
    pos = np.zeros((MAX_CONTACTS, 3))
    frame = np.zeros((MAX_CONTACTS, 3, 3))
    n = collide_pair(a[0], a[1], a[2], a[3], a[4], a[5], b[0], b[1], b[2], b[3], b[4], b[5],
                     float(margin), dist, pos, frame, 0, MAX_CONTACTS, work)
    if n == UNSUPPORTED:
        raise ValueError(f"no collider for shape codes {a[0]} and {b[0]}")
    if n == EPA_FAILURE:
        raise ValueError("penetration could not be computed (EPA failure)")
    return dist[:n].copy(), pos[:n].copy(), frame[:n].copy()


def distance(g1: tuple, g2: tuple, work: np.ndarray | None = None
             ) -> tuple[float, np.ndarray, np.ndarray, np.ndarray, int]:
    """Signed distance of two geoms (tuples as in :func:`collide`): ``(d, p1, p2, normal,
    status)``."""
    a = _geom(g1)
    b = _geom(g2)
    work = narrow_workspace() if work is None else work
    out = np.zeros((3, 3))
    d, st = signed_distance(a[0], a[1], a[2], a[3], a[4], b[0], b[1], b[2], b[3], b[4], out, work)
    if st == UNSUPPORTED or st == EPA_FAILURE:
        raise ValueError(f"no signed distance for shape codes {a[0]} and {b[0]} (status {st})")
    return d, out[0].copy(), out[1].copy(), out[2].copy(), st
