"""Static triangle meshes and height fields against a convex shape (narrow phase, L3).

A *terrain* is a static geometry of shape ``hfield`` or ``mesh`` (docs/collision.md,
"Meshes and height fields"). Its data reach the kernels as one float64 *record* (rows of 3
numbers, built once in Python by :mod:`.terrain_data`), the geometry's rows of the table's
``vertices`` array (the rows a convex geometry uses for its hull vertices): the kernels take it
where the convex pairs take the hull, the ``verts`` of the shape tuple ``(t, size, R, p, verts)``.
Indices in a record are exact float64 integers.

Method. Each triangle of the surface near the other shape X is extruded into a convex *prism*
(6 vertices): a height-field triangle straight down to the field's base (``-base``), as MuJoCo's
``mjc_ConvexHField`` does; a mesh triangle along its inward normal by the size of X (the diagonal
of X's box in the mesh frame, plus the margin). GJK/EPA (:func:`~.gjk.convex_contacts`: the
signed distance, and for a box or a hull a clipped face manifold) gives the contacts of X with
each prism, in world coordinates, with the normal from the prism to X. The triangles visited:
for a height field the grid cells under X's bounding box in the field's frame (6 support
points, inflated by the margin; grid indexing, MuJoCo's sub-grid), skipping cells whose three
corners lie below X's lowest point minus the margin (MuJoCo's prism height test); for a mesh,
the leaves of a static bounding-volume tree of the triangles' boxes (median split, 4 triangles
per leaf) that overlap X's box, then each triangle's own box. A prism lies below its
triangle's plane: a triangle X lies farther above than the margin (one support point) is
skipped before GJK.

A prism is a solid of its own: its side walls and its triangle's edges are not all surfaces of
the terrain, and GJK/EPA against one prism reports contacts on them that the terrain does not
have (the internal-edge contacts of contact-anchors.md: a sphere rolling over the shared edge
of two coplanar triangles is pushed by a normal tilted toward the edge). Each contact is
therefore classified by where its witness point on the prism lies (``a = pos - dist/2 n``, in
the terrain frame) and kept only if the terrain has that feature:

* normal within ``FACE_COS`` of the triangle's (upward, outward) normal: a face contact, kept;
* witness below the triangle's plane (a side wall or the bottom): dropped, except on the outer
  walls of a height field (its border, a real wall of MuJoCo's solid);
* witness on an edge of the triangle: kept if the edge is on the terrain's border (a boundary
  edge of an open mesh, an edge on the field's border), or is convex (the neighbour across it
  turns down) and the normal lies in the cone of the two faces' normals (``n = a n1 + b n2``,
  a, b >= -``CONE_TOL``); dropped if the edge is flat (the faces' normals within ``FLAT_SIN``)
  or concave: there the neighbouring face, which the same search visits, gives the contact;
* witness at a vertex: kept if the vertex is active (on the border, or one of its edges is
  convex), dropped otherwise.

A separated shape's nearest point on the terrain is never on a flat or concave edge or an
inactive vertex unless the normal is a face normal, so the dropped contacts are always
replaced by a neighbour's (which the search visits: it is nearer). Triangles whose plane has
X's box centre behind it are skipped (one-sided surfaces: a thin closed mesh's far side, or a
shape sunk deeper than half its size). A penetrating X is another matter: EPA against one
prism finds the shortest escape from that prism alone, which for a shape a few millimetres deep
in bumpy ground is often across one of the triangle's edges, beyond the terrain's normal cone
there (measured: a box 5 mm deep whose every penetrating prism contact was of this kind). So
if a dropped contact is deeper than every kept one, it is kept too: the pair never reports
less penetration than its deepest prism (MuJoCo's answer, one contact per prism). On a flat
region such a contact is never deeper than the face contact of the prism under the shape (each
prism's EPA depth is at most its vertical depth), so a shape resting or sliding there keeps
face normals only.

Gathered contacts (at most ``TCAND_MAX``) merge when they coincide (position within
``MERGE_TOL`` times X's size, normals within ``MERGE_COS``: the same point from two prisms
sharing an edge; the deeper is kept); those sharing a normal are reduced to the corners of
their convex polygon (plus any deeper than every corner), so that a box resting on a flat
region keeps its 4 corners, as on a plane, not the grid points under it; more than
``MAX_CONTACTS`` (8) are reduced by :func:`~.gjk.reduce_contacts` (the deepest, then the
farthest from those chosen).

Frames and units: everything in metres; the record's coordinates are in the terrain's geometry
frame (``R``, ``p`` its world pose); staged contacts are world coordinates, the normal from the
first to the second shape of the sorted pair (a height field, code 1, is always first; a mesh,
code 8, always second).
"""
import math

import numpy as np
from numba import njit

from . import gjk
from .gjk import EPA_FAILED, put_row
from .narrow_workspace import (MAX_CONTACTS, PRISM, PRISM_POS, STAGE, STAGE_ROW, TCAND, TCAND_MAX, TFALL, TFLAG,
                               TRI, TSTACK, TSTACK_MAX)
from .shapes import CONVEX, HFIELD

UNSUPPORTED = -1     # as narrow.UNSUPPORTED: a terrain without its record

# edge flags of a triangle's edges
INACTIVE, CONVEX_EDGE, BOUNDARY = 0, 1, 2

# records: a mesh has a header row (nvert, nface, nnode), its vertices, FACE_ROWS rows per face
# (vertex indices; unit normal; the normal of the neighbour across each edge k = (corner k,
# corner k + 1); the edge flags; the vertex flags (1: active)), then NODE_ROWS rows per tree node
# (box low corner; high corner; (right child, 0, 0) or (first face, count, 1) for a leaf; the left
# child of node k is k + 1). A height field has a header row (nrow, ncol, base) and the heights,
# row-major (heights[r, c] at index r * ncol + c of the flattened rows that follow).
FACE_ROWS = 7
NODE_ROWS = 3

# the current triangle in work[TRI:]: corners (3 x 3, counter-clockwise about the normal, terrain
# frame), unit normal, neighbour normals (3 x 3), edge flags and vertex flags (-1: to compute), and
# for a height field the grid (row, column) of each corner and (row, column, triangle) of its cell
T_V, T_N, T_NB, T_EF, T_VF, T_GRID, T_CELL = 0, 9, 12, 21, 24, 27, 33

FACE_COS = 1e-10     # 1 - cos(normal, face normal) of a face contact
FLAT_SIN = 1e-6      # an edge whose faces' normals are this close (sine) is flat
WITNESS_TOL = 1e-6   # witness on an edge or a vertex: within this times the triangle's longest edge
CONE_TOL = 1e-6      # slack of the cone test of a convex edge
MERGE_TOL = 1e-7     # coinciding contacts: positions within this times the shape's size,
MERGE_COS = 1e-8     # and 1 - cos of their normals below this (two prisms' GJK on a curved shape: ~1e-8)
PLANAR_TOL = 1e-9    # contacts sharing a normal (1 - cos below NORMAL_TOL): collinear within this times the size
NORMAL_TOL = 1e-10   # 1 - cos of equal normals


@njit(cache=True, nogil=True)
def _axis_extent(X, R, p, k):
    """(low, high) of shape X along axis k of the frame (R, p): support points along -/+ R[:, k]."""
    ex, ey, ez = R[0, k], R[1, k], R[2, k]
    sx, sy, sz = gjk.support(X, ex, ey, ez, 1.0)
    hi = ex * (sx - p[0]) + ey * (sy - p[1]) + ez * (sz - p[2])
    sx, sy, sz = gjk.support(X, -ex, -ey, -ez, 1.0)
    lo = ex * (sx - p[0]) + ey * (sy - p[1]) + ez * (sz - p[2])
    return lo, hi


# ------------------------------------------------------------------ height-field triangles

@njit(cache=True, nogil=True, inline="always")
def _hz(Hf, ncol, r, c):
    return Hf[3 + r * ncol + c]


@njit(cache=True, nogil=True)
def _hf_normal(Hf, ncol, sx, sy, dx, dy, r0, c0, r1, c1, r2, c2):
    """Unit upward normal of the triangle of grid points (r0, c0), (r1, c1), (r2, c2)."""
    ax, ay, az = -sx + c0 * dx, -sy + r0 * dy, _hz(Hf, ncol, r0, c0)
    ux, uy, uz = -sx + c1 * dx - ax, -sy + r1 * dy - ay, _hz(Hf, ncol, r1, c1) - az
    vx, vy, vz = -sx + c2 * dx - ax, -sy + r2 * dy - ay, _hz(Hf, ncol, r2, c2) - az
    nx, ny, nz = uy * vz - uz * vy, uz * vx - ux * vz, ux * vy - uy * vx
    s = math.sqrt(nx * nx + ny * ny + nz * nz)
    if nz < 0.0:
        s = -s
    return nx / s, ny / s, nz / s


@njit(cache=True, nogil=True)
def _hf_edge(Hf, nrow, ncol, sx, sy, dx, dy, r0, c0, r1, c1, fr1, fc1, fr2, fc2):
    """Flag and neighbour normal of the grid edge (r0, c0)-(r1, c1) between the triangle whose
    third corner is (fr1, fc1) and the neighbour whose third corner is (fr2, fc2) (outside the
    grid: no neighbour, a border edge)."""
    if fr2 < 0 or fr2 >= nrow or fc2 < 0 or fc2 >= ncol:
        return BOUNDARY, 0.0, 0.0, 1.0
    ax, ay, az = _hf_normal(Hf, ncol, sx, sy, dx, dy, r0, c0, r1, c1, fr1, fc1)
    bx, by, bz = _hf_normal(Hf, ncol, sx, sy, dx, dy, r0, c0, r1, c1, fr2, fc2)
    cx, cy, cz = ay * bz - az * by, az * bx - ax * bz, ax * by - ay * bx
    if math.sqrt(cx * cx + cy * cy + cz * cz) <= FLAT_SIN and ax * bx + ay * by + az * bz > 0.0:
        return INACTIVE, bx, by, bz
    wx = -sx + fc2 * dx - (-sx + c0 * dx)
    wy = -sy + fr2 * dy - (-sy + r0 * dy)
    wz = _hz(Hf, ncol, fr2, fc2) - _hz(Hf, ncol, r0, c0)
    if ax * wx + ay * wy + az * wz < 0.0:
        return CONVEX_EDGE, bx, by, bz
    return INACTIVE, bx, by, bz


@njit(cache=True, nogil=True)
def _hf_vertex_active(Hf, nrow, ncol, sx, sy, dx, dy, R, C):
    """Whether the grid vertex (R, C) is active: on the border, or one of its six edges convex."""
    if R <= 0 or C <= 0 or R >= nrow - 1 or C >= ncol - 1:
        return True
    # (edge end 0, edge end 1, third corner of each of the two triangles along it)
    f, _, _, _ = _hf_edge(Hf, nrow, ncol, sx, sy, dx, dy, R, C, R, C + 1, R + 1, C + 1, R - 1, C)
    if f != INACTIVE:
        return True
    f, _, _, _ = _hf_edge(Hf, nrow, ncol, sx, sy, dx, dy, R, C - 1, R, C, R + 1, C, R - 1, C - 1)
    if f != INACTIVE:
        return True
    f, _, _, _ = _hf_edge(Hf, nrow, ncol, sx, sy, dx, dy, R, C, R + 1, C, R + 1, C + 1, R, C - 1)
    if f != INACTIVE:
        return True
    f, _, _, _ = _hf_edge(Hf, nrow, ncol, sx, sy, dx, dy, R - 1, C, R, C, R, C + 1, R - 1, C - 1)
    if f != INACTIVE:
        return True
    f, _, _, _ = _hf_edge(Hf, nrow, ncol, sx, sy, dx, dy, R, C, R + 1, C + 1, R + 1, C, R, C + 1)
    if f != INACTIVE:
        return True
    f, _, _, _ = _hf_edge(Hf, nrow, ncol, sx, sy, dx, dy, R - 1, C - 1, R, C, R, C - 1, R - 1, C)
    return f != INACTIVE


@njit(cache=True, nogil=True)
def _hf_corner(work, Hf, ncol, sx, sy, dx, dy, k, r, c):
    o = TRI + T_V + 3 * k
    work[o] = -sx + c * dx
    work[o + 1] = -sy + r * dy
    work[o + 2] = _hz(Hf, ncol, r, c)
    work[TRI + T_GRID + 2 * k] = r
    work[TRI + T_GRID + 2 * k + 1] = c
    work[TRI + T_VF + k] = -1.0


@njit(cache=True, nogil=True)
def _hf_triangle(work, Hf, ncol, sx, sy, dx, dy, r, c, i):
    """Write triangle i (0: corners (r+1, c), (r, c), (r+1, c+1); 1: (r, c), (r, c+1),
    (r+1, c+1)) of grid cell (r, c) into work[TRI:] (MuJoCo's triangulation: the diagonal from
    (r, c) to (r+1, c+1)); its edge and vertex flags are left to compute when a contact needs
    them (:func:`_hf_tri_edge`). Returns the highest corner's height."""
    if i == 0:
        _hf_corner(work, Hf, ncol, sx, sy, dx, dy, 0, r + 1, c)
        _hf_corner(work, Hf, ncol, sx, sy, dx, dy, 1, r, c)
        _hf_corner(work, Hf, ncol, sx, sy, dx, dy, 2, r + 1, c + 1)
        nx, ny, nz = _hf_normal(Hf, ncol, sx, sy, dx, dy, r + 1, c, r, c, r + 1, c + 1)
    else:
        _hf_corner(work, Hf, ncol, sx, sy, dx, dy, 0, r, c)
        _hf_corner(work, Hf, ncol, sx, sy, dx, dy, 1, r, c + 1)
        _hf_corner(work, Hf, ncol, sx, sy, dx, dy, 2, r + 1, c + 1)
        nx, ny, nz = _hf_normal(Hf, ncol, sx, sy, dx, dy, r, c, r, c + 1, r + 1, c + 1)
    for k in range(3):
        work[TRI + T_EF + k] = -1.0
    work[TRI + T_CELL] = r
    work[TRI + T_CELL + 1] = c
    work[TRI + T_CELL + 2] = i
    work[TRI + T_N] = nx
    work[TRI + T_N + 1] = ny
    work[TRI + T_N + 2] = nz
    return max(work[TRI + T_V + 2], max(work[TRI + T_V + 5], work[TRI + T_V + 8]))


@njit(cache=True, nogil=True)
def _hf_tri_edge(Hf, nrow, ncol, sx, sy, dx, dy, r, c, i, k):
    """Flag and neighbour normal of edge k (corner k to corner k + 1) of triangle i of cell
    (r, c) (:func:`_hf_triangle`): the neighbour across it is the other triangle of the cell
    (the diagonal) or a triangle of the next cell, whose third corner is given here."""
    if i == 0:
        if k == 0:    # (r+1, c) - (r, c): the cell to the left
            return _hf_edge(Hf, nrow, ncol, sx, sy, dx, dy, r + 1, c, r, c, r + 1, c + 1, r, c - 1)
        if k == 1:    # (r, c) - (r+1, c+1): the diagonal
            return _hf_edge(Hf, nrow, ncol, sx, sy, dx, dy, r, c, r + 1, c + 1, r + 1, c, r, c + 1)
        return _hf_edge(Hf, nrow, ncol, sx, sy, dx, dy, r + 1, c + 1, r + 1, c, r, c, r + 2, c + 1)  # the row above
    if k == 0:        # (r, c) - (r, c+1): the row below
        return _hf_edge(Hf, nrow, ncol, sx, sy, dx, dy, r, c, r, c + 1, r + 1, c + 1, r - 1, c)
    if k == 1:        # (r, c+1) - (r+1, c+1): the cell to the right
        return _hf_edge(Hf, nrow, ncol, sx, sy, dx, dy, r, c + 1, r + 1, c + 1, r, c, r + 1, c + 2)
    return _hf_edge(Hf, nrow, ncol, sx, sy, dx, dy, r + 1, c + 1, r, c, r, c + 1, r + 1, c)  # the diagonal


# ------------------------------------------------------------------ mesh triangles

@njit(cache=True, nogil=True)
def _mesh_triangle(work, rec, face_base, f):
    """Write face f of a mesh record into work[TRI:]."""
    fb = face_base + FACE_ROWS * f
    for k in range(3):
        v = 1 + int(rec[fb, k])
        for j in range(3):
            work[TRI + T_V + 3 * k + j] = rec[v, j]
            work[TRI + T_NB + 3 * k + j] = rec[fb + 2 + k, j]
        work[TRI + T_N + k] = rec[fb + 1, k]
        work[TRI + T_EF + k] = rec[fb + 5, k]
        work[TRI + T_VF + k] = rec[fb + 6, k]


# ------------------------------------------------------------------ classification

@njit(cache=True, nogil=True)
def _keep(work, kind, Hf, nrow, ncol, sx, sy, dx, dy, base, ax, ay, az, nx, ny, nz):
    """Whether the terrain has the feature a prism contact lies on (module docstring): witness a
    and normal n in the terrain frame, the triangle in work[TRI:]."""
    t = TRI
    mx, my, mz = work[t + T_N], work[t + T_N + 1], work[t + T_N + 2]
    if nx * mx + ny * my + nz * mz >= 1.0 - FACE_COS:
        return True
    L = 0.0
    for k in range(3):
        k1 = (k + 1) % 3
        ex = work[t + 3 * k1] - work[t + 3 * k]
        ey = work[t + 3 * k1 + 1] - work[t + 3 * k + 1]
        ez = work[t + 3 * k1 + 2] - work[t + 3 * k + 2]
        L = max(L, math.sqrt(ex * ex + ey * ey + ez * ez))
    tol = WITNESS_TOL * L
    h = mx * (ax - work[t]) + my * (ay - work[t + 1]) + mz * (az - work[t + 2])
    if h < -tol:  # a side wall or the bottom of the prism
        if kind == HFIELD and az > -base + tol:
            return ax <= -sx + tol or ax >= sx - tol or ay <= -sy + tol or ay >= sy - tol
        return False
    on0 = on1 = on2 = False
    non = 0
    for k in range(3):
        k1 = (k + 1) % 3
        ex = work[t + 3 * k1] - work[t + 3 * k]
        ey = work[t + 3 * k1 + 1] - work[t + 3 * k + 1]
        ez = work[t + 3 * k1 + 2] - work[t + 3 * k + 2]
        ux, uy, uz = ey * mz - ez * my, ez * mx - ex * mz, ex * my - ey * mx  # outward, in the plane
        un = math.sqrt(ux * ux + uy * uy + uz * uz)
        s = (ux * (ax - work[t + 3 * k]) + uy * (ay - work[t + 3 * k + 1]) + uz * (az - work[t + 3 * k + 2])) / un
        if s >= -tol:
            non += 1
            if k == 0:
                on0 = True
            elif k == 1:
                on1 = True
            else:
                on2 = True
    if non == 0:  # a tilted normal at an interior witness (numerical): a face contact
        return True
    if non == 1:
        k = 0 if on0 else (1 if on1 else 2)
        flag = work[t + T_EF + k]
        if flag < 0.0:  # a height field's edge: computed when needed
            f, bx, by, bz = _hf_tri_edge(Hf, nrow, ncol, sx, sy, dx, dy, int(work[t + T_CELL]),
                                         int(work[t + T_CELL + 1]), int(work[t + T_CELL + 2]), k)
            flag = f
            work[t + T_EF + k] = f
            work[t + T_NB + 3 * k] = bx
            work[t + T_NB + 3 * k + 1] = by
            work[t + T_NB + 3 * k + 2] = bz
        if flag == BOUNDARY:
            return True
        if flag == INACTIVE:
            return False
        px, py, pz = work[t + T_NB + 3 * k], work[t + T_NB + 3 * k + 1], work[t + T_NB + 3 * k + 2]
        c = mx * px + my * py + mz * pz
        den = 1.0 - c * c
        if den <= 0.0:
            return False
        a1 = nx * mx + ny * my + nz * mz
        a2 = nx * px + ny * py + nz * pz
        return (a1 - c * a2) / den >= -CONE_TOL and (a2 - c * a1) / den >= -CONE_TOL
    # a vertex: edges k and k + 1 meet at corner k + 1, edges 2 and 0 at corner 0
    j = 1 if (on0 and on1) else (2 if (on1 and on2) else 0)
    if non == 3:  # a triangle smaller than the tolerance: the nearest corner
        best = 1e300
        for k in range(3):
            qx, qy, qz = ax - work[t + 3 * k], ay - work[t + 3 * k + 1], az - work[t + 3 * k + 2]
            q = qx * qx + qy * qy + qz * qz
            if q < best:
                best, j = q, k
    flag = work[t + T_VF + j]
    if flag < 0.0:  # a height field's vertex: computed when needed
        R = int(work[t + T_GRID + 2 * j])
        C = int(work[t + T_GRID + 2 * j + 1])
        return _hf_vertex_active(Hf, nrow, ncol, sx, sy, dx, dy, R, C)
    return flag > 0.5


# ------------------------------------------------------------------ gathered contacts

@njit(cache=True, nogil=True)
def _copy_row(work, src, dst):
    for q in range(STAGE_ROW):
        work[dst + q] = work[src + q]


@njit(cache=True, nogil=True)
def _prune(work, m, tolp):
    """Reduce each group of gathered contacts sharing a normal (within NORMAL_TOL) to the
    corners of their polygon (gift wrapping in the plane normal to it; points on its edges
    dropped), keeping also any contact deeper than every corner; compacts the rows and returns
    their number."""
    G = TFLAG
    K = TFLAG + TCAND_MAX
    for i in range(m):
        work[G + i] = -1.0
        work[K + i] = 0.0
    for i in range(m):
        if work[G + i] >= 0.0:
            continue
        oi = TCAND + STAGE_ROW * i
        nx, ny, nz = work[oi + 4], work[oi + 5], work[oi + 6]
        work[G + i] = i
        size = 1
        for j in range(i + 1, m):
            oj = TCAND + STAGE_ROW * j
            if work[G + j] < 0.0 and work[oj + 4] * nx + work[oj + 5] * ny + work[oj + 6] * nz >= 1.0 - NORMAL_TOL:
                work[G + j] = i
                size += 1
        if size < 3:
            for j in range(i, m):
                if work[G + j] == i:
                    work[K + j] = 1.0
            continue
        ux, uy, uz, wx, wy, wz = gjk._basis(nx, ny, nz)
        start = -1
        su = sw = 1e300
        for j in range(i, m):
            if work[G + j] != i:
                continue
            oj = TCAND + STAGE_ROW * j
            u = ux * work[oj + 1] + uy * work[oj + 2] + uz * work[oj + 3]
            w = wx * work[oj + 1] + wy * work[oj + 2] + wz * work[oj + 3]
            if u < su - tolp or (u <= su + tolp and w < sw):
                su, sw, start = u, w, j
        cur = start
        for _ in range(size):
            work[K + cur] = 1.0
            oc = TCAND + STAGE_ROW * cur
            cu = ux * work[oc + 1] + uy * work[oc + 2] + uz * work[oc + 3]
            cw = wx * work[oc + 1] + wy * work[oc + 2] + wz * work[oc + 3]
            nxt = -1
            bu = bw = 0.0
            for j in range(i, m):
                if work[G + j] != i or j == cur:
                    continue
                oj = TCAND + STAGE_ROW * j
                u = ux * work[oj + 1] + uy * work[oj + 2] + uz * work[oj + 3] - cu
                w = wx * work[oj + 1] + wy * work[oj + 2] + wz * work[oj + 3] - cw
                if u * u + w * w <= tolp * tolp:
                    continue
                if nxt < 0:
                    nxt, bu, bw = j, u, w
                    continue
                cr = bu * w - bw * u
                lim = tolp * math.sqrt(bu * bu + bw * bw)
                if cr < -lim:
                    nxt, bu, bw = j, u, w  # clockwise of the candidate: wrap tighter
                elif abs(cr) <= lim and u * u + w * w > bu * bu + bw * bw:
                    nxt, bu, bw = j, u, w  # collinear: the farther point
            if nxt < 0 or nxt == start:
                break
            cur = nxt
        deepest = 1e300
        for j in range(i, m):
            if work[G + j] == i and work[K + j] > 0.5:
                deepest = min(deepest, work[TCAND + STAGE_ROW * j])
        for j in range(i, m):
            if work[G + j] == i and work[K + j] < 0.5 and work[TCAND + STAGE_ROW * j] < deepest - tolp:
                work[K + j] = 1.0
    k = 0
    for i in range(m):
        if work[K + i] > 0.5:
            if i != k:
                _copy_row(work, TCAND + STAGE_ROW * i, TCAND + STAGE_ROW * k)
            k += 1
    return k


@njit(cache=True, nogil=True)
def _gather(work, m, d, px, py, pz, nx, ny, nz, tolp):
    """Add a contact to the m gathered ones (merged with a coinciding one: the deeper is kept);
    returns the new count. ``tolp``: PLANAR_TOL times the shape's size."""
    tolm = tolp * (MERGE_TOL / PLANAR_TOL)
    for j in range(m):
        o = TCAND + STAGE_ROW * j
        qx, qy, qz = work[o + 1] - px, work[o + 2] - py, work[o + 3] - pz
        if qx * qx + qy * qy + qz * qz <= tolm * tolm and \
                work[o + 4] * nx + work[o + 5] * ny + work[o + 6] * nz >= 1.0 - MERGE_COS:
            if d < work[o]:
                put_row(work, o, d, px, py, pz, nx, ny, nz)
            return m
    if m >= TCAND_MAX:
        m = _prune(work, m, tolp)
    if m >= TCAND_MAX:  # still full: the new contact replaces the shallowest if it is deeper
        s = 0
        for j in range(1, m):
            if work[TCAND + STAGE_ROW * j] > work[TCAND + STAGE_ROW * s]:
                s = j
        if d < work[TCAND + STAGE_ROW * s]:
            put_row(work, TCAND + STAGE_ROW * s, d, px, py, pz, nx, ny, nz)
        return m
    put_row(work, TCAND + STAGE_ROW * m, d, px, py, pz, nx, ny, nz)
    return m + 1


# ------------------------------------------------------------------ one triangle

@njit(cache=True, nogil=True)
def _triangle(T, X, margin, thick, cx, cy, cz, tolp, m, work, kind, Hf, nrow, ncol, sx, sy, dx, dy, base):
    """Contacts of X with the prism of the triangle in work[TRI:] (module docstring), gathered
    into the m contacts so far; returns (new m, EPA failed)."""
    t = TRI
    mx, my, mz = work[t + T_N], work[t + T_N + 1], work[t + T_N + 2]
    if mx * (cx - work[t]) + my * (cy - work[t + 1]) + mz * (cz - work[t + 2]) <= 0.0:
        return m, False  # X's centre behind the triangle's plane: one-sided
    R, p = T[2], T[3]
    # the prism lies below its triangle's plane: nothing if X is farther above it than the margin
    wx, wy, wz = R[0, 0] * mx + R[0, 1] * my + R[0, 2] * mz, R[1, 0] * mx + R[1, 1] * my + R[1, 2] * mz, \
        R[2, 0] * mx + R[2, 1] * my + R[2, 2] * mz
    qx, qy, qz = gjk.support(X, -wx, -wy, -wz, 1.0)
    if (wx * (qx - p[0]) + wy * (qy - p[1]) + wz * (qz - p[2])
            - mx * work[t] - my * work[t + 1] - mz * work[t + 2]) > margin:
        return m, False
    # the prism about its centroid (terrain frame), and the centroid's world position
    gx = gy = gz = 0.0
    for k in range(3):
        x, y, z = work[t + 3 * k], work[t + 3 * k + 1], work[t + 3 * k + 2]
        if kind == HFIELD:
            bx, by, bz = x, y, -base
        else:
            bx, by, bz = x - thick * mx, y - thick * my, z - thick * mz
        work[PRISM + 3 * k] = x
        work[PRISM + 3 * k + 1] = y
        work[PRISM + 3 * k + 2] = z
        work[PRISM + 9 + 3 * k] = bx
        work[PRISM + 9 + 3 * k + 1] = by
        work[PRISM + 9 + 3 * k + 2] = bz
        gx += x + bx
        gy += y + by
        gz += z + bz
    gx /= 6.0
    gy /= 6.0
    gz /= 6.0
    for k in range(6):
        work[PRISM + 3 * k] -= gx
        work[PRISM + 3 * k + 1] -= gy
        work[PRISM + 3 * k + 2] -= gz
    for r in range(3):
        work[PRISM_POS + r] = R[r, 0] * gx + R[r, 1] * gy + R[r, 2] * gz + p[r]
    P = (np.int64(CONVEX), T[1], R, work[PRISM_POS:PRISM_POS + 3], work[PRISM:PRISM + 18].reshape((6, 3)))
    n, st = gjk.convex_contacts(P, X, margin, work)
    if st == EPA_FAILED:
        return m, True
    for k in range(n):
        o = STAGE + STAGE_ROW * k
        d = work[o]
        px, py, pz = work[o + 1], work[o + 2], work[o + 3]
        nx, ny, nz = work[o + 4], work[o + 5], work[o + 6]
        # witness on the prism and normal, terrain frame
        wx, wy, wz = px - 0.5 * d * nx - p[0], py - 0.5 * d * ny - p[1], pz - 0.5 * d * nz - p[2]
        ax = R[0, 0] * wx + R[1, 0] * wy + R[2, 0] * wz
        ay = R[0, 1] * wx + R[1, 1] * wy + R[2, 1] * wz
        az = R[0, 2] * wx + R[1, 2] * wy + R[2, 2] * wz
        lx = R[0, 0] * nx + R[1, 0] * ny + R[2, 0] * nz
        ly = R[0, 1] * nx + R[1, 1] * ny + R[2, 1] * nz
        lz = R[0, 2] * nx + R[1, 2] * ny + R[2, 2] * nz
        if _keep(work, kind, Hf, nrow, ncol, sx, sy, dx, dy, base, ax, ay, az, lx, ly, lz):
            m = _gather(work, m, d, px, py, pz, nx, ny, nz, tolp)
        elif d < 0.0 and d < work[TFALL]:
            put_row(work, TFALL, d, px, py, pz, nx, ny, nz)
    return m, False


# ------------------------------------------------------------------ the pair

@njit(cache=True, nogil=True)
def terrain_contacts(A, B, margin, work):
    """Contacts of a terrain (height field or triangle mesh, its record as the shape's
    ``verts``) and a convex shape, the sorted pair (A's code <= B's: a height field is A, a
    mesh is B), within ``margin`` (m); staged from slot 0 with the normal from A to B. Returns
    ``(count, status)``: ``(UNSUPPORTED, 0)`` for a terrain without its record, status
    ``EPA_FAILED`` when no contact was found and EPA failed on a prism."""
    flip = A[0] != HFIELD
    T = B if flip else A
    X = A if flip else B
    rec = T[4]
    if rec.shape[0] == 0:
        return UNSUPPORTED, 0
    if X[0] == CONVEX and X[4].shape[0] == 0:
        return 0, 0
    R, p = T[2], T[3]
    lox, hix = _axis_extent(X, R, p, 0)
    loy, hiy = _axis_extent(X, R, p, 1)
    loz, hiz = _axis_extent(X, R, p, 2)
    cx, cy, cz = 0.5 * (lox + hix), 0.5 * (loy + hiy), 0.5 * (loz + hiz)
    size = math.sqrt((hix - lox) ** 2 + (hiy - loy) ** 2 + (hiz - loz) ** 2)
    tolp = PLANAR_TOL * size
    Hf = rec.reshape(rec.shape[0] * 3)
    work[TFALL] = 1e300
    m = 0
    failed = False
    kind = T[0]
    # the height field's grid (typed alike for a mesh: _triangle is compiled once)
    nrow, ncol = int(rec[0, 0]), int(rec[0, 1])
    sx, sy, top, base, dx, dy = T[1][0], T[1][1], T[1][2], rec[0, 2], 0.0, 0.0
    if kind == HFIELD:
        if (lox - margin > sx or hix + margin < -sx or loy - margin > sy or hiy + margin < -sy
                or loz - margin > top or hiz + margin < -base):
            return 0, 0
        dx = 2.0 * sx / (ncol - 1)
        dy = 2.0 * sy / (nrow - 1)
        cmin = max(0, int(math.floor((lox - margin + sx) / dx)))
        cmax = min(ncol - 1, int(math.ceil((hix + margin + sx) / dx)))
        rmin = max(0, int(math.floor((loy - margin + sy) / dy)))
        rmax = min(nrow - 1, int(math.ceil((hiy + margin + sy) / dy)))
        for r in range(rmin, rmax):
            for c in range(cmin, cmax):
                for i in range(2):
                    zt = _hf_triangle(work, Hf, ncol, sx, sy, dx, dy, r, c, i)
                    if zt + margin < loz:  # the prism lies below X (MuJoCo's height test)
                        continue
                    m, bad = _triangle(T, X, margin, 0.0, cx, cy, cz, tolp, m, work, kind, Hf, nrow, ncol,
                                       sx, sy, dx, dy, base)
                    failed = failed or bad
    else:
        nv, nf = nrow, ncol
        face_base = 1 + nv
        node_base = face_base + FACE_ROWS * nf
        thick = size + margin
        work[TSTACK] = 0.0
        sp = 1
        while sp > 0:
            sp -= 1
            k = int(work[TSTACK + sp])
            o = node_base + NODE_ROWS * k
            if (rec[o, 0] > hix + margin or rec[o + 1, 0] < lox - margin or rec[o, 1] > hiy + margin
                    or rec[o + 1, 1] < loy - margin or rec[o, 2] > hiz + margin or rec[o + 1, 2] < loz - margin):
                continue
            if rec[o + 2, 2] > 0.5:
                first = int(rec[o + 2, 0])
                for f in range(first, first + int(rec[o + 2, 1])):
                    _mesh_triangle(work, rec, face_base, f)
                    out = False
                    for j in range(3):
                        lo = min(work[TRI + j], min(work[TRI + 3 + j], work[TRI + 6 + j]))
                        hi = max(work[TRI + j], max(work[TRI + 3 + j], work[TRI + 6 + j]))
                        if j == 0:
                            out = out or lo > hix + margin or hi < lox - margin
                        elif j == 1:
                            out = out or lo > hiy + margin or hi < loy - margin
                        else:
                            out = out or lo > hiz + margin or hi < loz - margin
                    if out:
                        continue
                    m, bad = _triangle(T, X, margin, thick, cx, cy, cz, tolp, m, work, kind, Hf, nrow, ncol,
                                       sx, sy, dx, dy, base)
                    failed = failed or bad
            elif sp + 2 <= TSTACK_MAX:
                work[TSTACK + sp] = rec[o + 2, 0]
                work[TSTACK + sp + 1] = k + 1
                sp += 2
    # the deepest prism's contact, if dropped and deeper than every kept one, is kept too
    deepest = 1e300
    for k in range(m):
        deepest = min(deepest, work[TCAND + STAGE_ROW * k])
    if work[TFALL] < 0.0 and work[TFALL] < deepest - tolp:
        o = TFALL
        m = _gather(work, m, work[o], work[o + 1], work[o + 2], work[o + 3], work[o + 4], work[o + 5], work[o + 6],
                    tolp)
    if m == 0:
        return 0, (EPA_FAILED if failed else 0)
    m = _prune(work, m, tolp)
    n = gjk.reduce_contacts(work, np.int64(TCAND), np.int64(m), np.int64(0), np.int64(MAX_CONTACTS))
    if flip:
        for k in range(n):
            o = STAGE + STAGE_ROW * k
            work[o + 4] = -work[o + 4]
            work[o + 5] = -work[o + 5]
            work[o + 6] = -work[o + 6]
    return n, 0
