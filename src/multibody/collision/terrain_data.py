"""Records of static triangle meshes and height fields (L3, Python): the float64 rows
(n, 3) that :mod:`.terrain`'s kernels read, built once per geometry when a
:class:`~.table.GeometryTable` is made. Layouts: :mod:`.terrain` (``FACE_ROWS``,
``NODE_ROWS``); integers are stored as exact float64 values.

A mesh record carries, besides the vertices and triangles, what the kernels need to tell the
surface's own features from those of the prisms it is cut into: each triangle's unit normal
(front side: counter-clockwise winding), for each edge the normal of the triangle across it
and whether the edge is a border (no neighbour, or more than one: non-manifold), convex (the
neighbour turns away from the front side by more than ``FLAT_SIN``) or neither (flat or
concave: inactive), for each corner whether its vertex is active (one of its edges a border or
convex), and a bounding-volume tree over the triangles' boxes (median split along the longest
axis of the centroids' box, at most 4 triangles per leaf, nodes in depth-first order).
"""
import numpy as np

from .terrain import BOUNDARY, CONVEX_EDGE, FACE_ROWS, FLAT_SIN, INACTIVE, NODE_ROWS

LEAF_SIZE = 4


def hfield_record(heights, base):
    """The record of a height field: header (nrow, ncol, base depth, m), then the heights
    (m), row-major."""
    H = np.ascontiguousarray(heights, dtype=float)
    nrow, ncol = H.shape
    flat = np.zeros(3 * (1 + -(-H.size // 3)))
    flat[:3] = nrow, ncol, float(base)
    flat[3:3 + H.size] = H.ravel()
    return flat.reshape(-1, 3)


def face_normals(V, F):
    """Unit normals (m, 3) of the triangles F of vertices V (counter-clockwise: front) and the
    triangles' doubled areas (m,)."""
    n = np.cross(V[F[:, 1]] - V[F[:, 0]], V[F[:, 2]] - V[F[:, 0]])
    a = np.linalg.norm(n, axis=1)
    return n / np.where(a > 0, a, 1.0)[:, None], a


def edge_table(V, F):
    """Per triangle and edge k = (corner k, corner k + 1): the flag (BOUNDARY, CONVEX_EDGE or
    INACTIVE) and the neighbour's normal (m, 3, 3; the triangle's own on a border); per corner,
    whether the vertex is active (m, 3)."""
    m = len(F)
    N, _ = face_normals(V, F)
    flags = np.full((m, 3), BOUNDARY, np.int64)
    nb = np.repeat(N[:, None, :], 3, axis=1).copy()
    ends = np.stack([F, np.roll(F, -1, axis=1)], axis=2).reshape(-1, 2)   # (3m, 2): edge k of face f at 3f + k
    key = np.sort(ends, axis=1)
    order = np.lexsort((key[:, 1], key[:, 0]))
    ks = key[order]
    start = np.r_[0, np.flatnonzero(np.any(np.diff(ks, axis=0) != 0, axis=1)) + 1]
    count = np.diff(np.r_[start, len(ks)])
    s = start[count == 2]            # edges of exactly two triangles; the others are borders
    e1, e2 = order[s], order[s + 1]
    for (f, k), (g, l) in ((np.divmod(e1, 3), np.divmod(e2, 3)), (np.divmod(e2, 3), np.divmod(e1, 3))):
        nb[f, k] = N[g]
        turn = np.linalg.norm(np.cross(N[f], N[g]), axis=1)
        flat = (turn <= FLAT_SIN) & (np.einsum("ij,ij->i", N[f], N[g]) > 0)
        # the neighbour's third corner below this triangle's plane: the edge is convex
        below = np.einsum("ij,ij->i", N[f], V[F[g, (l + 2) % 3]] - V[F[f, k]]) < 0
        flags[f, k] = np.where(~flat & below, CONVEX_EDGE, INACTIVE)
    active = np.zeros(len(V), bool)
    live = flags != INACTIVE
    for k in range(3):
        active[F[live[:, k], k]] = True
        active[F[live[:, k], (k + 1) % 3]] = True
    return flags, nb, active[F]


def bvh(V, F, leaf=LEAF_SIZE):
    """A bounding-volume tree over the triangles' boxes: (order (m,) the triangles in leaf
    order, nodes (k, 3, 3) rows (low corner, high corner, (right child, 0, 0) or (first, count,
    1))), nodes in depth-first order (the left child of node k is k + 1)."""
    T = V[F]
    lo_t, hi_t = T.min(axis=1), T.max(axis=1)
    cen = 0.5 * (lo_t + hi_t)
    order, nodes = [], []

    def build(idx):
        k = len(nodes)
        nodes.append(None)
        lo, hi = lo_t[idx].min(axis=0), hi_t[idx].max(axis=0)
        c = cen[idx]
        ext = c.max(axis=0) - c.min(axis=0)
        ax = int(np.argmax(ext))
        if len(idx) <= leaf or not ext[ax] > 0:
            nodes[k] = (lo, hi, (len(order), len(idx), 1))
            order.extend(idx.tolist())
            return k
        half = len(idx) // 2
        part = np.argpartition(c[:, ax], half)
        build(idx[part[:half]])
        right = build(idx[part[half:]])
        nodes[k] = (lo, hi, (right, 0, 0))
        return k

    build(np.arange(len(F)))
    return np.array(order, np.int64), np.array([[lo, hi, tail] for lo, hi, tail in nodes], float)


def mesh_record(vertices, faces):
    """The record of a triangle mesh (vertices (n, 3) m, faces (m, 3) counter-clockwise seen
    from the front): header (n, m, number of tree nodes), vertices, FACE_ROWS rows per
    triangle in the tree's leaf order, NODE_ROWS rows per tree node."""
    V = np.ascontiguousarray(vertices, dtype=float).reshape(-1, 3)
    F = np.ascontiguousarray(faces, dtype=np.int64).reshape(-1, 3)
    N, _ = face_normals(V, F)
    flags, nb, vflags = edge_table(V, F)
    order, nodes = bvh(V, F)
    faces_rows = np.zeros((len(F), FACE_ROWS, 3))
    faces_rows[:, 0] = F[order]
    faces_rows[:, 1] = N[order]
    faces_rows[:, 2:5] = nb[order]
    faces_rows[:, 5] = flags[order]
    faces_rows[:, 6] = vflags[order]
    head = np.array([[len(V), len(F), len(nodes)]], float)
    return np.ascontiguousarray(np.concatenate(
        [head, V, faces_rows.reshape(-1, 3), nodes.reshape(-1, 3)]))


def terrain_record(g):
    """The record of a model :class:`~multibody.model.Geometry` of shape "hfield" or "mesh"."""
    if g.shape == "hfield":
        return hfield_record(g.heights, g.size[3])
    return mesh_record(g.vertices, g.faces)
