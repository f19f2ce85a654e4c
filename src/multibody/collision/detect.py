"""Collision detection of a whole model in one compiled pass (L3): the
world poses of the geometries, the broad phase over the candidate pairs of
:class:`~.table.GeometryTable`, and the narrow phase (:mod:`.narrow`) of the
pairs that pass it.

Broad phase, pair by pair over the statically filtered candidates:
bounding spheres about each geometry's frame origin (radius from
:func:`~.table.bounding_radius`; a plane is tested against the other
geometry's sphere), then, for two bounded geometries, their world
axis-aligned boxes — each the box around its bounding box in its own
frame (:func:`~.table.bounding_box`), turned into the world (half extents
``|R| h``). The spheres of a robot's elongated link hulls overlap
wherever two links are near; their boxes rarely do: at Solo12's standing
posture 55 of its 129 candidate pairs pass the spheres, none the boxes
(Talos: 152 and 2 of 935), and each that passes costs a GJK/EPA on hulls
of hundreds of vertices. The cost is linear in the number of candidate
pairs: right for robots and small scenes, not for piles of hundreds of
free bodies, which would want sweep-and-prune.
"""
import numpy as np
from numba import njit
from numba.extending import overload

from .._compiled import call_address
from .narrow import MAX_CONTACTS, UNSUPPORTED, collide_pair
from .shapes import PLANE

FAILED = -1  # detect() returns FAILED - pair when the narrow phase failed on a pair


@njit(cache=True, nogil=True, inline="always")
def geometry_poses(body_poses, body, local, R, p):
    """World rotation ``R[k]`` and position ``p[k]`` of every geometry from
    the world poses ``body_poses`` (nb, 4, 4) of the bodies and the
    placements ``local`` (ng, 4, 4) in them."""
    for k in range(body.shape[0]):
        b = body[k]
        for r in range(3):
            a0, a1, a2 = body_poses[b, r, 0], body_poses[b, r, 1], body_poses[b, r, 2]
            for c in range(3):
                R[k, r, c] = a0 * local[k, 0, c] + a1 * local[k, 1, c] + a2 * local[k, 2, c]
            p[k, r] = a0 * local[k, 0, 3] + a1 * local[k, 1, 3] + a2 * local[k, 2, 3] + body_poses[b, r, 3]


@njit(cache=True, nogil=True, inline="always")
def _may_touch(code, radius, box, R, p, a, b, reach):
    """Broad phase: can geometries a and b be within ``reach`` (m)?"""
    if code[a] == PLANE or code[b] == PLANE:
        P, X = (a, b) if code[a] == PLANE else (b, a)
        d = (R[P, 0, 2] * (p[X, 0] - p[P, 0]) + R[P, 1, 2] * (p[X, 1] - p[P, 1])
             + R[P, 2, 2] * (p[X, 2] - p[P, 2]))
        return d - radius[X] <= reach
    dx, dy, dz = p[a, 0] - p[b, 0], p[a, 1] - p[b, 1], p[a, 2] - p[b, 2]
    r = radius[a] + radius[b] + reach
    if dx * dx + dy * dy + dz * dz > r * r:
        return False
    if not (np.isfinite(box[a, 1, 0]) and np.isfinite(box[b, 1, 0])):
        return True
    for i in range(3):  # the world boxes: centre R c + p, half extents |R| h
        ca = p[a, i] + R[a, i, 0] * box[a, 0, 0] + R[a, i, 1] * box[a, 0, 1] + R[a, i, 2] * box[a, 0, 2]
        cb = p[b, i] + R[b, i, 0] * box[b, 0, 0] + R[b, i, 1] * box[b, 0, 1] + R[b, i, 2] * box[b, 0, 2]
        ha = abs(R[a, i, 0]) * box[a, 1, 0] + abs(R[a, i, 1]) * box[a, 1, 1] + abs(R[a, i, 2]) * box[a, 1, 2]
        hb = abs(R[b, i, 0]) * box[b, 1, 0] + abs(R[b, i, 1]) * box[b, 1, 1] + abs(R[b, i, 2]) * box[b, 1, 2]
        if abs(ca - cb) > ha + hb + reach:
            return False
    return True


def collide_via(address, table, i, start, t1, size1, R1, p1, verts1, faces1, t2, size2, R2, p2, verts2, faces2,
                margin, dist, pos, frame, cap, work):
    """The contacts of pair i (:func:`~.narrow.collide_pair`, rows from
    ``start``). In compiled code a call of the C entry point at ``address``
    with (``table``, i, start), which reads the same data from the table
    behind ``table``: one entry point per family of colliders
    (:data:`~.narrow.FAMILIES`), so that detection compiles only the
    families of a table's pairs (constraints/_contact.py)."""
    return collide_pair(t1, size1, R1, p1, verts1, faces1, t2, size2, R2, p2, verts2, faces2, margin, dist, pos,
                        frame, start, cap, work)


# numba's type stubs leave ``cache`` out of the jit options (it is one)
@overload(collide_via, jit_options=dict(cache=True))  # type: ignore[typeddict-unknown-key]
def _collide_via_compiled(address, table, i, start, t1, size1, R1, p1, verts1, faces1, t2, size2, R2, p2, verts2,
                          faces2, margin, dist, pos, frame, cap, work):
    def impl(address, table, i, start, t1, size1, R1, p1, verts1, faces1, t2, size2, R2, p2, verts2, faces2, margin,
             dist, pos, frame, cap, work):
        if address == 0:  # a pair no collider takes (the table leaves them out): fail, never jump to 0
            return UNSUPPORTED
        return call_address(address, table, i, start)
    return impl


@njit(cache=True, nogil=True, inline="always")
def detect(body_poses, code, body, local, size, radius, box, vstart, vertices, faces, pairs, margin, reach, R, p,
           dist, pos, frame, cpair, ckey, work, colliders, table):
    """All contacts of the model at the body poses ``body_poses`` (nb, 4,
    4, world): for each candidate pair ``pairs[i]`` = (a, b) whose
    geometries are within ``margin[i] + reach`` (m), its contacts (at most
    8, :data:`~.narrow.MAX_CONTACTS`) written from row n on into ``dist``,
    ``pos``, ``frame`` (the narrow phase's: normal from a to b), with
    ``cpair`` = i and ``ckey`` = 8 i + (index within the pair): the key
    that matches a contact with the previous step's. ``R``, ``p``: the
    geometries' world poses (written). Returns (n, dropped): the number of
    contacts written, and how many pairs lost contacts for want of room:
    the capacity is ``dist.shape[0] − MAX_CONTACTS`` (the buffers hold one
    more pair, so that a pair that fills them exactly loses nothing and is
    not counted); or (FAILED − i, 0) if the narrow phase
    failed on pair i. ``colliders`` (npair, int64): in compiled code the
    narrow phase of pair i is the C entry point at ``colliders[i]``,
    called with (``table``, i, the first row to write)
    (:func:`collide_via`)."""
    geometry_poses(body_poses, body, local, R, p)
    end = dist.shape[0]
    cap = end - MAX_CONTACTS  # the capacity; the buffers have room for one more pair's contacts after it
    n = 0
    dropped = 0
    for i in range(pairs.shape[0]):
        a, b = pairs[i, 0], pairs[i, 1]
        m = margin[i] + reach
        if not _may_touch(code, radius, box, R, p, a, b, m):
            continue
        start = min(n, cap)  # when full, the pair is collided after the capacity only to count what is lost
        k = collide_via(colliders[i], table, i, start, code[a], size[a], R[a], p[a], vertices[vstart[a]:vstart[a + 1]],
                        faces, code[b], size[b], R[b], p[b], vertices[vstart[b]:vstart[b + 1]], faces, m, dist, pos,
                        frame, end, work)
        if k < 0:
            return FAILED - i, 0
        if start + k > cap:  # the pair's contacts beyond the capacity are lost
            dropped += 1
            k = cap - start
        for j in range(k):
            cpair[start + j] = i
            ckey[start + j] = 8 * i + j
        n = start + k
    return n, dropped
