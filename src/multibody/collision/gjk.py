"""GJK distance and EPA penetration over support functions (narrow phase, L3).

A shape is the tuple ``A = (t, size, R, p, verts)``: shape code, half-sizes
(``shapes.py``), rotation and position of the geom frame in world, and the
convex-hull vertices (geom frame; empty for primitives). Its support
function (:func:`support`) is exact for every convex code: sphere,
capsule, ellipsoid, cylinder, box, convex (a linear scan of the vertices).

Spheres and capsules are handled as a *core* (a point, a segment) inflated
by a radius: GJK runs on the cores (finite convergence, exact witnesses)
and the radii are subtracted, so sphere/capsule pairs with any shape are
exact whenever the cores are disjoint. When the cores overlap (or touch
within ``CORE_EPS``), GJK runs again on the full shapes to enclose the
origin and EPA (van den Bergen 2001) expands the polytope of the Minkowski
difference ``A - B`` to the face nearest the origin.

Conventions: the normal points from A to B; a separated pair has witness
points ``a`` on A and ``b`` on B with ``b - a = dist * normal``; a
penetrating pair has ``a`` (the point of A deepest in B) and ``b`` with
``a - b = depth * normal``.

Tolerances (relative to ``scale``, the sum of the shapes' bounding radii):
GJK stops when its duality gap is below ``GJK_TOL * scale`` (exact for
polytopes and segments, which converge in finitely many steps), EPA when
the support gap of the nearest face is below ``EPA_TOL * scale``. EPA
returns ``EPA_INEXACT`` when it ran out of iterations or storage (the
best face so far is returned: finite, within the polytope) and
``EPA_FAILED`` when no enclosing polytope could be built (nothing
returned). No code path returns NaN for finite inputs.
"""
import math

import numpy as np
from numba import njit

from .narrow_workspace import (CLIP_MAX, EPA_E, EPA_EMAX, EPA_F, EPA_FMAX, EPA_FROW, EPA_V,
                               EPA_VMAX, EPA_VROW, FEAT_A, FEAT_B, FEAT_MAX, POLY_A, POLY_B,
                               CLIP0, CLIP1, CAND, SIMPLEX, SIMPLEX_ROW, STAGE, STAGE_ROW,
                               MAX_CONTACTS)
from .shapes import BOX, CAPSULE, CONVEX, CYLINDER, ELLIPSOID, SPHERE

GJK_ITERS = 128
GJK_TOL = 1e-13       # duality gap, times scale
GJK_INT = 1e-13       # |v| below which the origin is on the simplex (contact), times scale
CORE_EPS = 1e-9       # core distance below which the normal is taken from EPA, times scale
TOUCH_SHIFT = 1e-7    # shift, times scale, that separates touching shapes where EPA fails
FLAT = 1e-12          # a tetrahedron whose height is below this times its edge is flat (GJK)
EPA_TOL = 1e-11       # support gap of the nearest face, times scale
EPA_VIS = 1e-13       # visibility slack of a face from a new vertex, times scale

SEPARATED = 0
INTERSECTING = 1

EPA_OK = 0
EPA_INEXACT = 1
EPA_FAILED = 2

# support features of polytopes (box, convex) for the multi-point manifold: a vertex v is in
# the feature of the support vertex m along n when the segment m -> v is within this sine of
# the plane normal to n
FEATURE_SIN = 1e-3


@njit(cache=True, nogil=True)
def support(A, dx, dy, dz, full):
    """World support point of shape A along (dx, dy, dz) (need not be unit). Spheres and
    capsules give their core (centre, segment) unless ``full`` > 0 (a float flag: a literal
    bool argument would compile a specialization per value)."""
    t, size, R, p, verts = A
    lx = R[0, 0] * dx + R[1, 0] * dy + R[2, 0] * dz
    ly = R[0, 1] * dx + R[1, 1] * dy + R[2, 1] * dz
    lz = R[0, 2] * dx + R[1, 2] * dy + R[2, 2] * dz
    sx = 0.0
    sy = 0.0
    sz = 0.0
    if t == CAPSULE:
        sz = size[1] if lz >= 0.0 else -size[1]
    elif t == ELLIPSOID:
        a2 = size[0] * size[0]
        b2 = size[1] * size[1]
        c2 = size[2] * size[2]
        nrm = math.sqrt(a2 * lx * lx + b2 * ly * ly + c2 * lz * lz)
        if nrm > 0.0:
            sx = a2 * lx / nrm
            sy = b2 * ly / nrm
            sz = c2 * lz / nrm
        else:
            sx = size[0]
    elif t == CYLINDER:
        rho = math.sqrt(lx * lx + ly * ly)
        if rho > 0.0:
            sx = size[0] * lx / rho
            sy = size[0] * ly / rho
        sz = size[1] if lz >= 0.0 else -size[1]
    elif t == BOX:
        sx = size[0] if lx >= 0.0 else -size[0]
        sy = size[1] if ly >= 0.0 else -size[1]
        sz = size[2] if lz >= 0.0 else -size[2]
    elif t == CONVEX:
        best = -1e300
        for i in range(verts.shape[0]):
            h = verts[i, 0] * lx + verts[i, 1] * ly + verts[i, 2] * lz
            if h > best:
                best = h
                sx = verts[i, 0]
                sy = verts[i, 1]
                sz = verts[i, 2]
    if full > 0.0 and (t == SPHERE or t == CAPSULE):
        nl = math.sqrt(lx * lx + ly * ly + lz * lz)
        if nl > 0.0:
            sx += size[0] * lx / nl
            sy += size[0] * ly / nl
            sz += size[0] * lz / nl
    return (R[0, 0] * sx + R[0, 1] * sy + R[0, 2] * sz + p[0],
            R[1, 0] * sx + R[1, 1] * sy + R[1, 2] * sz + p[1],
            R[2, 0] * sx + R[2, 1] * sy + R[2, 2] * sz + p[2])


@njit(cache=True, nogil=True)
def core_radius(A):
    """Radius by which the core of A (what :func:`support` gives without ``full``) is
    inflated: the radius of a sphere or capsule, else 0."""
    t = A[0]
    if t == SPHERE or t == CAPSULE:
        return A[1][0]
    return 0.0


@njit(cache=True, nogil=True)
def bound_radius(A):
    """Radius of a ball about the geom origin that contains shape A."""
    t, size, R, p, verts = A
    if t == SPHERE:
        return size[0]
    if t == CAPSULE:
        return size[0] + size[1]
    if t == ELLIPSOID:
        return max(size[0], max(size[1], size[2]))
    if t == CYLINDER:
        return math.sqrt(size[0] * size[0] + size[1] * size[1])
    if t == BOX:
        return math.sqrt(size[0] * size[0] + size[1] * size[1] + size[2] * size[2])
    r2 = 0.0
    for i in range(verts.shape[0]):
        r2 = max(r2, verts[i, 0] * verts[i, 0] + verts[i, 1] * verts[i, 1] + verts[i, 2] * verts[i, 2])
    return math.sqrt(r2)


# ------------------------------------------------------------------------------ GJK simplex

@njit(cache=True, nogil=True, inline="always")
def _sx(work, i, k):
    return work[SIMPLEX + SIMPLEX_ROW * i + k]


@njit(cache=True, nogil=True)
def _seg_weights(work, i, j):
    """Barycentric weights of the point of segment (w_i, w_j) nearest the origin."""
    ax, ay, az = _sx(work, i, 0), _sx(work, i, 1), _sx(work, i, 2)
    ex, ey, ez = _sx(work, j, 0) - ax, _sx(work, j, 1) - ay, _sx(work, j, 2) - az
    ee = ex * ex + ey * ey + ez * ez
    if ee <= 0.0:
        return 1.0, 0.0
    s = -(ax * ex + ay * ey + az * ez) / ee
    if s <= 0.0:
        return 1.0, 0.0
    if s >= 1.0:
        return 0.0, 1.0
    return 1.0 - s, s


@njit(cache=True, nogil=True)
def _tri_weights(work, i, j, k):
    """Barycentric weights of the point of triangle (w_i, w_j, w_k) nearest the origin
    (Voronoi regions of Ericson, Real-Time Collision Detection, 5.1.5)."""
    ax, ay, az = _sx(work, i, 0), _sx(work, i, 1), _sx(work, i, 2)
    bx, by, bz = _sx(work, j, 0), _sx(work, j, 1), _sx(work, j, 2)
    cx, cy, cz = _sx(work, k, 0), _sx(work, k, 1), _sx(work, k, 2)
    abx, aby, abz = bx - ax, by - ay, bz - az
    acx, acy, acz = cx - ax, cy - ay, cz - az
    d1 = -(abx * ax + aby * ay + abz * az)
    d2 = -(acx * ax + acy * ay + acz * az)
    if d1 <= 0.0 and d2 <= 0.0:
        return 1.0, 0.0, 0.0
    d3 = -(abx * bx + aby * by + abz * bz)
    d4 = -(acx * bx + acy * by + acz * bz)
    if d3 >= 0.0 and d4 <= d3:
        return 0.0, 1.0, 0.0
    vc = d1 * d4 - d3 * d2
    if vc <= 0.0 and d1 >= 0.0 and d3 <= 0.0:
        s = d1 / (d1 - d3)
        return 1.0 - s, s, 0.0
    d5 = -(abx * cx + aby * cy + abz * cz)
    d6 = -(acx * cx + acy * cy + acz * cz)
    if d6 >= 0.0 and d5 <= d6:
        return 0.0, 0.0, 1.0
    vb = d5 * d2 - d1 * d6
    if vb <= 0.0 and d2 >= 0.0 and d6 <= 0.0:
        s = d2 / (d2 - d6)
        return 1.0 - s, 0.0, s
    va = d3 * d6 - d5 * d4
    if va <= 0.0 and d4 - d3 >= 0.0 and d5 - d6 >= 0.0:
        s = (d4 - d3) / ((d4 - d3) + (d5 - d6))
        return 0.0, 1.0 - s, s
    den = va + vb + vc
    if den > 0.0:
        v = vb / den
        w = vc / den
        return 1.0 - v - w, v, w
    # degenerate (collinear) triangle: best of its edges
    best = 1e300
    r0, r1, r2 = 1.0, 0.0, 0.0
    for e in range(3):
        p = i if e == 0 else (j if e == 1 else i)
        q = j if e == 0 else k
        l0, l1 = _seg_weights(work, np.int64(p), np.int64(q))
        x = l0 * _sx(work, p, 0) + l1 * _sx(work, q, 0)
        y = l0 * _sx(work, p, 1) + l1 * _sx(work, q, 1)
        z = l0 * _sx(work, p, 2) + l1 * _sx(work, q, 2)
        dd = x * x + y * y + z * z
        if dd < best:
            best = dd
            if e == 0:
                r0, r1, r2 = l0, l1, 0.0
            elif e == 1:
                r0, r1, r2 = 0.0, l0, l1
            else:
                r0, r1, r2 = l0, 0.0, l1
    return r0, r1, r2


@njit(cache=True, nogil=True)
def _face_outside(work, i, j, k, o):
    """True if the origin lies strictly on the far side of plane (i, j, k) from vertex o (or
    the tetrahedron is flat: o within ``FLAT`` times the longest edge at i of the plane,
    round-off — four coplanar support points, parallel faces of two hulls, leave a height
    of ~1e-18 m whose sign is noise)."""
    ax, ay, az = _sx(work, i, 0), _sx(work, i, 1), _sx(work, i, 2)
    ux, uy, uz = _sx(work, j, 0) - ax, _sx(work, j, 1) - ay, _sx(work, j, 2) - az
    vx, vy, vz = _sx(work, k, 0) - ax, _sx(work, k, 1) - ay, _sx(work, k, 2) - az
    wx, wy, wz = _sx(work, o, 0) - ax, _sx(work, o, 1) - ay, _sx(work, o, 2) - az
    nx, ny, nz = uy * vz - uz * vy, uz * vx - ux * vz, ux * vy - uy * vx
    so = -(nx * ax + ny * ay + nz * az)
    sd = nx * wx + ny * wy + nz * wz
    uu, vv, ww = ux * ux + uy * uy + uz * uz, vx * vx + vy * vy + vz * vz, wx * wx + wy * wy + wz * wz
    # flat: o's height over the plane below FLAT times the longest edge, or sd = (u × v)·w below FLAT
    # times |u||v||w| — the size of its round-off, which dominates when u and v are nearly parallel (a
    # needle-shaped tetrahedron from slowly converging support points on a curved surface: its sd's
    # sign is noise although its height is above FLAT times the edge)
    if sd * sd <= FLAT * FLAT * max((nx * nx + ny * ny + nz * nz) * max(uu, vv, ww), uu * vv * ww):
        return True
    return so * sd < 0.0


@njit(cache=True, nogil=True)
def _reduce(work, n, lam0, lam1, lam2, lam3):
    """Keep the simplex vertices of positive weight (compacted to the front); return their
    count and the weighted w, a, b."""
    m = 0
    vx = vy = vz = ax = ay = az = bx = by = bz = 0.0
    for i in range(n):
        lam = lam0 if i == 0 else (lam1 if i == 1 else (lam2 if i == 2 else lam3))
        if lam <= 0.0:
            continue
        o = SIMPLEX + SIMPLEX_ROW * i
        vx += lam * work[o]
        vy += lam * work[o + 1]
        vz += lam * work[o + 2]
        ax += lam * work[o + 3]
        ay += lam * work[o + 4]
        az += lam * work[o + 5]
        bx += lam * work[o + 6]
        by += lam * work[o + 7]
        bz += lam * work[o + 8]
        if m != i:
            d = SIMPLEX + SIMPLEX_ROW * m
            for c in range(SIMPLEX_ROW):
                work[d + c] = work[o + c]
        m += 1
    return m, vx, vy, vz, ax, ay, az, bx, by, bz


@njit(cache=True, nogil=True)
def _closest(work, n):
    """Point of the simplex (n = 2..4 vertices) nearest the origin; reduces the simplex to
    the supporting vertices. Returns (inside, m, v, a, b): inside when a tetrahedron
    encloses the origin."""
    if n == 2:
        l0, l1 = _seg_weights(work, np.int64(0), np.int64(1))
        m, vx, vy, vz, ax, ay, az, bx, by, bz = _reduce(work, np.int64(2), l0, l1, 0.0, 0.0)
        return False, m, vx, vy, vz, ax, ay, az, bx, by, bz
    if n == 3:
        l0, l1, l2 = _tri_weights(work, np.int64(0), np.int64(1), np.int64(2))
        m, vx, vy, vz, ax, ay, az, bx, by, bz = _reduce(work, np.int64(3), l0, l1, l2, 0.0)
        return False, m, vx, vy, vz, ax, ay, az, bx, by, bz
    best = 1e300
    r0, r1, r2, r3 = 1.0, 0.0, 0.0, 0.0
    anyout = False
    for f in range(4):
        i = 0 if f < 3 else 1
        j = 1 if f == 0 or f == 1 else 2
        k = 2 if f == 0 else 3
        o = 3 - f
        if not _face_outside(work, np.int64(i), np.int64(j), np.int64(k), np.int64(o)):
            continue
        anyout = True
        l0, l1, l2 = _tri_weights(work, np.int64(i), np.int64(j), np.int64(k))
        x = y = z = 0.0
        for c in range(3):
            s = l0 * _sx(work, i, c) + l1 * _sx(work, j, c) + l2 * _sx(work, k, c)
            if c == 0:
                x = s
            elif c == 1:
                y = s
            else:
                z = s
        dd = x * x + y * y + z * z
        if dd < best:
            best = dd
            w0 = w1 = w2 = w3 = 0.0
            for q in range(3):
                idx = i if q == 0 else (j if q == 1 else k)
                lq = l0 if q == 0 else (l1 if q == 1 else l2)
                if idx == 0:
                    w0 = lq
                elif idx == 1:
                    w1 = lq
                elif idx == 2:
                    w2 = lq
                else:
                    w3 = lq
            r0, r1, r2, r3 = w0, w1, w2, w3
    if not anyout:
        return True, 4, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
    m, vx, vy, vz, ax, ay, az, bx, by, bz = _reduce(work, np.int64(4), r0, r1, r2, r3)
    return False, m, vx, vy, vz, ax, ay, az, bx, by, bz


@njit(cache=True, nogil=True)
def _put_point(work, o, ax, ay, az, bx, by, bz, dx, dy, dz):
    """Store a Minkowski-difference point at ``work[o:o+12]``: a − b, the
    support points a and b, and the unit search direction d (the layout of
    both the GJK simplex rows and the EPA vertex rows)."""
    dn = math.sqrt(dx * dx + dy * dy + dz * dz)
    if dn > 0.0:
        dx, dy, dz = dx / dn, dy / dn, dz / dn
    work[o + 9] = dx
    work[o + 10] = dy
    work[o + 11] = dz
    work[o] = ax - bx
    work[o + 1] = ay - by
    work[o + 2] = az - bz
    work[o + 3] = ax
    work[o + 4] = ay
    work[o + 5] = az
    work[o + 6] = bx
    work[o + 7] = by
    work[o + 8] = bz


@njit(cache=True, nogil=True)
def _put_simplex(work, i, ax, ay, az, bx, by, bz, dx, dy, dz):
    _put_point(work, SIMPLEX + SIMPLEX_ROW * i, ax, ay, az, bx, by, bz, dx, dy, dz)


@njit(cache=True, nogil=True)
def gjk(A, B, full, work, scale):
    """Distance between A and B (their cores unless ``full``). Returns
    ``(status, nsimplex, dist, ax, ay, az, bx, by, bz)``: ``SEPARATED`` with the witness
    points a on A and b on B, or ``INTERSECTING`` (the origin lies in, or within
    ``GJK_INT * scale`` of, the final simplex left in ``work`` for :func:`epa`)."""
    pA = A[3]
    pB = B[3]
    dx, dy, dz = pB[0] - pA[0], pB[1] - pA[1], pB[2] - pA[2]
    if dx == 0.0 and dy == 0.0 and dz == 0.0:
        dx = 1.0
    ax, ay, az = support(A, dx, dy, dz, full)
    bx, by, bz = support(B, -dx, -dy, -dz, full)
    _put_simplex(work, np.int64(0), ax, ay, az, bx, by, bz, dx, dy, dz)
    n = 1
    vx, vy, vz = ax - bx, ay - by, az - bz
    tol = GJK_TOL * scale
    eps = GJK_INT * scale
    for _ in range(GJK_ITERS):
        vv = vx * vx + vy * vy + vz * vz
        if vv <= eps * eps:
            return INTERSECTING, n, 0.0, ax, ay, az, bx, by, bz
        sax, say, saz = support(A, -vx, -vy, -vz, full)
        sbx, sby, sbz = support(B, vx, vy, vz, full)
        wx, wy, wz = sax - sbx, say - sby, saz - sbz
        if vv - (vx * wx + vy * wy + vz * wz) <= tol * math.sqrt(vv):
            break
        dup = False
        for i in range(n):
            ex = wx - _sx(work, i, 0)
            ey = wy - _sx(work, i, 1)
            ez = wz - _sx(work, i, 2)
            if ex * ex + ey * ey + ez * ez <= eps * eps:
                dup = True
        if dup:
            break
        _put_simplex(work, np.int64(n), sax, say, saz, sbx, sby, sbz, -vx, -vy, -vz)
        n += 1
        inside, m, nvx, nvy, nvz, nax, nay, naz, nbx, nby, nbz = _closest(work, n)
        if inside:
            return INTERSECTING, 4, 0.0, ax, ay, az, bx, by, bz
        n = m
        if nvx * nvx + nvy * nvy + nvz * nvz >= vv:
            break  # no progress: keep the previous estimate
        vx, vy, vz = nvx, nvy, nvz
        ax, ay, az, bx, by, bz = nax, nay, naz, nbx, nby, nbz
    return SEPARATED, n, math.sqrt(vx * vx + vy * vy + vz * vz), ax, ay, az, bx, by, bz


# ------------------------------------------------------------------------------------- EPA

@njit(cache=True, nogil=True, inline="always")
def _pv(work, i, k):
    return work[EPA_V + EPA_VROW * i + k]


@njit(cache=True, nogil=True)
def _add_vertex(work, i, A, B, dx, dy, dz):
    ax, ay, az = support(A, dx, dy, dz, 1.0)
    bx, by, bz = support(B, -dx, -dy, -dz, 1.0)
    _put_point(work, EPA_V + EPA_VROW * i, ax, ay, az, bx, by, bz, dx, dy, dz)


@njit(cache=True, nogil=True)
def _set_face(work, f, i, j, k):
    """Face f = (i, j, k) of the polytope, with its plane (outward for counter-clockwise
    winding seen from outside); a degenerate face gets distance +inf-like and no normal."""
    o = EPA_F + EPA_FROW * f
    work[o] = i
    work[o + 1] = j
    work[o + 2] = k
    ax, ay, az = _pv(work, i, 0), _pv(work, i, 1), _pv(work, i, 2)
    ux, uy, uz = _pv(work, j, 0) - ax, _pv(work, j, 1) - ay, _pv(work, j, 2) - az
    vx, vy, vz = _pv(work, k, 0) - ax, _pv(work, k, 1) - ay, _pv(work, k, 2) - az
    nx, ny, nz = uy * vz - uz * vy, uz * vx - ux * vz, ux * vy - uy * vx
    nn = math.sqrt(nx * nx + ny * ny + nz * nz)
    if nn > 0.0:
        nx /= nn
        ny /= nn
        nz /= nn
        work[o + 3] = nx
        work[o + 4] = ny
        work[o + 5] = nz
        work[o + 6] = nx * ax + ny * ay + nz * az
    else:
        work[o + 3] = 0.0
        work[o + 4] = 0.0
        work[o + 5] = 0.0
        work[o + 6] = 1e300
    work[o + 7] = 1.0


@njit(cache=True, nogil=True, inline="always")
def _face_areas(work, f, qx, qy, qz, nx, ny, nz):
    """Vertices (i, j, k) of face f and the doubled signed areas, along n, of the
    triangles q-j-k, q-k-i, q-i-j: the unnormalised barycentric coordinates of q."""
    o = EPA_F + EPA_FROW * f
    i, j, k = int(work[o]), int(work[o + 1]), int(work[o + 2])
    l0 = l1 = l2 = 0.0
    for r in range(3):
        p = j if r == 0 else (k if r == 1 else i)
        q = k if r == 0 else (i if r == 1 else j)
        ux, uy, uz = _pv(work, p, 0) - qx, _pv(work, p, 1) - qy, _pv(work, p, 2) - qz
        vx, vy, vz = _pv(work, q, 0) - qx, _pv(work, q, 1) - qy, _pv(work, q, 2) - qz
        s = nx * (uy * vz - uz * vy) + ny * (uz * vx - ux * vz) + nz * (ux * vy - uy * vx)
        if r == 0:
            l0 = s
        elif r == 1:
            l1 = s
        else:
            l2 = s
    return i, j, k, l0, l1, l2


@njit(cache=True, nogil=True)
def _face_result(work, f):
    """Depth, normal and witness points (barycentric on the face) of face f."""
    o = EPA_F + EPA_FROW * f
    nx, ny, nz, d = work[o + 3], work[o + 4], work[o + 5], work[o + 6]
    i, j, k, l0, l1, l2 = _face_areas(work, f, d * nx, d * ny, d * nz, nx, ny, nz)
    area = l0 + l1 + l2
    if area > 0.0:
        l0 /= area
        l1 /= area
        l2 /= area
    else:
        l0 = 1.0
        l1 = 0.0
        l2 = 0.0
    ax = l0 * _pv(work, i, 3) + l1 * _pv(work, j, 3) + l2 * _pv(work, k, 3)
    ay = l0 * _pv(work, i, 4) + l1 * _pv(work, j, 4) + l2 * _pv(work, k, 4)
    az = l0 * _pv(work, i, 5) + l1 * _pv(work, j, 5) + l2 * _pv(work, k, 5)
    bx = l0 * _pv(work, i, 6) + l1 * _pv(work, j, 6) + l2 * _pv(work, k, 6)
    by = l0 * _pv(work, i, 7) + l1 * _pv(work, j, 7) + l2 * _pv(work, k, 7)
    bz = l0 * _pv(work, i, 8) + l1 * _pv(work, j, 8) + l2 * _pv(work, k, 8)
    return d, nx, ny, nz, ax, ay, az, bx, by, bz


@njit(cache=True, nogil=True)
def _refine(work, f, A, B, scale, d, nx, ny, nz, ax, ay, az, bx, by, bz):
    """Second-order normal for curved Minkowski faces. The face normal of the converged
    polytope is tilted by about (face size / curvature radius), i.e. the square root of the
    tolerance; the support map is smooth on curved parts, so the barycentric mean of the
    search directions that generated the face's vertices is accurate to second order. The
    penetration depth is the minimum over unit n of the support function h(n) of A - B, so
    the candidate is kept only if it lowers h below its value at the face normal (on flat
    parts, polytopes included, the face normal is exact and wins)."""
    i, j, k, l0, l1, l2 = _face_areas(work, f, d * nx, d * ny, d * nz, nx, ny, nz)
    tot = l0 + l1 + l2
    if not tot > 0.0:
        return d, nx, ny, nz, ax, ay, az, bx, by, bz
    mx = (l0 * _pv(work, i, 9) + l1 * _pv(work, j, 9) + l2 * _pv(work, k, 9)) / tot
    my = (l0 * _pv(work, i, 10) + l1 * _pv(work, j, 10) + l2 * _pv(work, k, 10)) / tot
    mz = (l0 * _pv(work, i, 11) + l1 * _pv(work, j, 11) + l2 * _pv(work, k, 11)) / tot
    mn = math.sqrt(mx * mx + my * my + mz * mz)
    if not mn > 0.5:
        return d, nx, ny, nz, ax, ay, az, bx, by, bz
    mx, my, mz = mx / mn, my / mn, mz / mn
    sax, say, saz = support(A, nx, ny, nz, 1.0)
    sbx, sby, sbz = support(B, -nx, -ny, -nz, 1.0)
    hf = nx * (sax - sbx) + ny * (say - sby) + nz * (saz - sbz)
    cax, cay, caz = support(A, mx, my, mz, 1.0)
    cbx, cby, cbz = support(B, -mx, -my, -mz, 1.0)
    hm = mx * (cax - cbx) + my * (cay - cby) + mz * (caz - cbz)
    if hm < hf - 1e-14 * scale and hm >= d - 1e-9 * scale:
        return hm, mx, my, mz, cax, cay, caz, cbx, cby, cbz
    return d, nx, ny, nz, ax, ay, az, bx, by, bz


@njit(cache=True, nogil=True)
def _dist_line(work, i, j, k):
    """Squared distance of vertex k from the line through vertices i, j, times |j - i|^2."""
    ex, ey, ez = _pv(work, j, 0) - _pv(work, i, 0), _pv(work, j, 1) - _pv(work, i, 1), _pv(work, j, 2) - _pv(work, i, 2)
    fx, fy, fz = _pv(work, k, 0) - _pv(work, i, 0), _pv(work, k, 1) - _pv(work, i, 1), _pv(work, k, 2) - _pv(work, i, 2)
    cx, cy, cz = ey * fz - ez * fy, ez * fx - ex * fz, ex * fy - ey * fx
    return cx * cx + cy * cy + cz * cz, ex * ex + ey * ey + ez * ez


@njit(cache=True, nogil=True)
def epa(A, B, nsimplex, work, scale):
    """Penetration of the full shapes A and B from the GJK simplex in ``work`` that encloses
    the origin. Returns ``(status, depth, nx, ny, nz, ax, ay, az, bx, by, bz)``: the
    normal n points from A to B, a is the point of A deepest in B and b the point of B
    with ``a - b = depth * n``."""
    eps = 1e-10 * scale       # degeneracy of the initial simplex
    eps_in = 4.0 * CORE_EPS * scale  # the origin may lie this far outside (touching pairs)
    for i in range(nsimplex):
        for c in range(12):
            work[EPA_V + EPA_VROW * i + c] = work[SIMPLEX + SIMPLEX_ROW * i + c]
    nv = nsimplex
    # blow the simplex up to a tetrahedron
    if nv == 1:
        for s in range(6):
            d = 1.0 if s % 2 == 0 else -1.0
            _add_vertex(work, np.int64(1), A, B, d if s < 2 else 0.0, d if 2 <= s < 4 else 0.0, d if s >= 4 else 0.0)
            ex = _pv(work, 1, 0) - _pv(work, 0, 0)
            ey = _pv(work, 1, 1) - _pv(work, 0, 1)
            ez = _pv(work, 1, 2) - _pv(work, 0, 2)
            if ex * ex + ey * ey + ez * ez > eps * eps:
                nv = 2
                break
    if nv == 2:
        ex, ey, ez = _pv(work, 1, 0) - _pv(work, 0, 0), _pv(work, 1, 1) - _pv(work, 0, 1), _pv(work, 1, 2) - _pv(work, 0, 2)
        en = math.sqrt(ex * ex + ey * ey + ez * ez)
        ex /= en
        ey /= en
        ez /= en
        # a unit vector u normal to e, and w = e x u
        if abs(ex) <= abs(ey) and abs(ex) <= abs(ez):
            ux, uy, uz = 0.0, -ez, ey
        elif abs(ey) <= abs(ez):
            ux, uy, uz = ez, 0.0, -ex
        else:
            ux, uy, uz = -ey, ex, 0.0
        un = math.sqrt(ux * ux + uy * uy + uz * uz)
        ux /= un
        uy /= un
        uz /= un
        wx, wy, wz = ey * uz - ez * uy, ez * ux - ex * uz, ex * uy - ey * ux
        for s in range(6):
            ang = s * (math.pi / 3.0)
            ca, sa = math.cos(ang), math.sin(ang)
            _add_vertex(work, np.int64(2), A, B, ca * ux + sa * wx, ca * uy + sa * wy, ca * uz + sa * wz)
            c2, e2 = _dist_line(work, np.int64(0), np.int64(1), np.int64(2))
            if c2 > eps * eps * e2:
                nv = 3
                break
    if nv == 3:
        ax, ay, az = _pv(work, 0, 0), _pv(work, 0, 1), _pv(work, 0, 2)
        ux, uy, uz = _pv(work, 1, 0) - ax, _pv(work, 1, 1) - ay, _pv(work, 1, 2) - az
        vx, vy, vz = _pv(work, 2, 0) - ax, _pv(work, 2, 1) - ay, _pv(work, 2, 2) - az
        nx, ny, nz = uy * vz - uz * vy, uz * vx - ux * vz, ux * vy - uy * vx
        nn = math.sqrt(nx * nx + ny * ny + nz * nz)
        if nn > 0.0:
            nx /= nn
            ny /= nn
            nz /= nn
            _add_vertex(work, np.int64(3), A, B, nx, ny, nz)
            hp = nx * (_pv(work, 3, 0) - ax) + ny * (_pv(work, 3, 1) - ay) + nz * (_pv(work, 3, 2) - az)
            # origin side: the tetrahedron must enclose the origin
            ho = -(nx * ax + ny * ay + nz * az)
            if hp <= eps or ho < -eps_in:
                _add_vertex(work, np.int64(3), A, B, -nx, -ny, -nz)
                hp = nx * (_pv(work, 3, 0) - ax) + ny * (_pv(work, 3, 1) - ay) + nz * (_pv(work, 3, 2) - az)
                if hp < -eps:
                    nv = 4
            else:
                nv = 4
    if nv < 4:
        return EPA_FAILED, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
    # the four faces, wound outward (away from the centroid)
    cx = 0.25 * (_pv(work, 0, 0) + _pv(work, 1, 0) + _pv(work, 2, 0) + _pv(work, 3, 0))
    cy = 0.25 * (_pv(work, 0, 1) + _pv(work, 1, 1) + _pv(work, 2, 1) + _pv(work, 3, 1))
    cz = 0.25 * (_pv(work, 0, 2) + _pv(work, 1, 2) + _pv(work, 2, 2) + _pv(work, 3, 2))
    for f in range(4):
        i = 0 if f < 3 else 1
        j = 1 if f == 0 or f == 1 else 2
        k = 2 if f == 0 else 3
        _set_face(work, np.int64(f), np.int64(i), np.int64(j), np.int64(k))
        o = EPA_F + EPA_FROW * f
        if work[o + 3] * (cx - _pv(work, i, 0)) + work[o + 4] * (cy - _pv(work, i, 1)) + work[o + 5] * (cz - _pv(work, i, 2)) > 0.0:
            _set_face(work, np.int64(f), np.int64(i), np.int64(k), np.int64(j))
        if work[o + 6] < -eps_in or work[o + 6] >= 1e300:
            return EPA_FAILED, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
    nf = 4
    nv = 4
    tol = EPA_TOL * scale
    vis = EPA_VIS * scale
    status = EPA_INEXACT
    best = 0
    while True:
        # nearest live face
        best = -1
        bd = 1e300
        for f in range(nf):
            o = EPA_F + EPA_FROW * f
            if work[o + 7] > 0.0 and work[o + 6] < bd:
                bd = work[o + 6]
                best = f
        if best < 0:
            return EPA_FAILED, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
        o = EPA_F + EPA_FROW * best
        nx, ny, nz = work[o + 3], work[o + 4], work[o + 5]
        if nv >= EPA_VMAX:
            break
        _add_vertex(work, np.int64(nv), A, B, nx, ny, nz)
        wx, wy, wz = _pv(work, nv, 0), _pv(work, nv, 1), _pv(work, nv, 2)
        if nx * wx + ny * wy + nz * wz - bd <= tol:
            status = EPA_OK
            break
        # remove the faces the new vertex sees; their boundary is the horizon
        ne = 0
        overflow = False
        for f in range(nf):
            of = EPA_F + EPA_FROW * f
            if work[of + 7] <= 0.0:
                continue
            i0 = int(work[of])
            h = work[of + 3] * (wx - _pv(work, i0, 0)) + work[of + 4] * (wy - _pv(work, i0, 1)) + work[of + 5] * (wz - _pv(work, i0, 2))
            if f != best and not h > vis:
                continue
            work[of + 7] = 0.0
            for e in range(3):
                p = int(work[of + e])
                q = int(work[of + (e + 1) % 3])
                found = -1
                for g in range(ne):
                    if work[EPA_E + 2 * g] == q and work[EPA_E + 2 * g + 1] == p:
                        found = g
                        break
                if found >= 0:
                    ne -= 1
                    work[EPA_E + 2 * found] = work[EPA_E + 2 * ne]
                    work[EPA_E + 2 * found + 1] = work[EPA_E + 2 * ne + 1]
                elif ne < EPA_EMAX:
                    work[EPA_E + 2 * ne] = p
                    work[EPA_E + 2 * ne + 1] = q
                    ne += 1
                else:
                    overflow = True
        if overflow or nf + ne > EPA_FMAX or ne < 3:
            # the polytope can no longer be trusted: report the face found before this step
            d, nx, ny, nz, ax, ay, az, bx, by, bz = _face_result(work, np.int64(best))
            d, nx, ny, nz, ax, ay, az, bx, by, bz = _refine(work, np.int64(best), A, B, scale, d, nx, ny, nz, ax, ay, az, bx, by, bz)
            return EPA_INEXACT, d, nx, ny, nz, ax, ay, az, bx, by, bz
        for g in range(ne):
            _set_face(work, np.int64(nf), np.int64(int(work[EPA_E + 2 * g])), np.int64(int(work[EPA_E + 2 * g + 1])), np.int64(nv))
            nf += 1
        nv += 1
    d, nx, ny, nz, ax, ay, az, bx, by, bz = _face_result(work, np.int64(best))
    d, nx, ny, nz, ax, ay, az, bx, by, bz = _refine(work, np.int64(best), A, B, scale, d, nx, ny, nz, ax, ay, az, bx, by, bz)
    return status, d, nx, ny, nz, ax, ay, az, bx, by, bz


# --------------------------------------------------------------------------- convex contact

@njit(cache=True, nogil=True)
def put_contact(work, k, d, px, py, pz, nx, ny, nz):
    """Stage contact k: distance, position, normal (from the first shape to the second)."""
    put_row(work, STAGE + STAGE_ROW * k, d, px, py, pz, nx, ny, nz)


@njit(cache=True, nogil=True, inline="always")
def put_row(work, o, d, px, py, pz, nx, ny, nz):
    """Write a contact row (distance, position, normal) at offset ``o`` of ``work``."""
    work[o] = d
    work[o + 1] = px
    work[o + 2] = py
    work[o + 3] = pz
    work[o + 4] = nx
    work[o + 5] = ny
    work[o + 6] = nz


@njit(cache=True, nogil=True)
def _hval(A, B, nx, ny, nz):
    """Support function of A - B along the unit n, and its gradient (the support point)."""
    ax, ay, az = support(A, nx, ny, nz, 1.0)
    bx, by, bz = support(B, -nx, -ny, -nz, 1.0)
    wx, wy, wz = ax - bx, ay - by, az - bz
    return nx * wx + ny * wy + nz * wz, wx, wy, wz


@njit(cache=True, nogil=True)
def _polish(A, B, d, nx, ny, nz, scale):
    """Newton steps on the unit sphere for min h(n), h the support function of A - B: the
    signed distance is -min h and the normal its minimiser, separated or penetrating. The
    gradient is the tangential part of the support point, the Hessian (curvature radii
    minus h) is taken by finite differences. Only steps that lower h are kept and the
    iteration stops where the Hessian is not positive definite (flat parts, polytopes:
    there GJK/EPA are exact). Returns (d, n)."""
    h, wx, wy, wz = _hval(A, B, nx, ny, nz)
    moved = False
    eps = 1e-6
    for _ in range(4):
        ux, uy, uz, vx, vy, vz = _basis(nx, ny, nz)
        gu = ux * wx + uy * wy + uz * wz
        gv = vx * wx + vy * wy + vz * wz
        mx, my, mz = nx + eps * ux, ny + eps * uy, nz + eps * uz
        mn = math.sqrt(mx * mx + my * my + mz * mz)
        _, px, py, pz = _hval(A, B, mx / mn, my / mn, mz / mn)
        mx, my, mz = nx + eps * vx, ny + eps * vy, nz + eps * vz
        mn = math.sqrt(mx * mx + my * my + mz * mz)
        _, qx, qy, qz = _hval(A, B, mx / mn, my / mn, mz / mn)
        huu = (ux * px + uy * py + uz * pz - gu) / eps - h
        hvu = (vx * px + vy * py + vz * pz - gv) / eps
        huv = (ux * qx + uy * qy + uz * qz - gu) / eps
        hvv = (vx * qx + vy * qy + vz * qz - gv) / eps - h
        hs = 0.5 * (hvu + huv)
        det = huu * hvv - hs * hs
        if not (huu > 0.0 and det > 0.0):
            break
        su = -(hvv * gu - hs * gv) / det
        sv = -(huu * gv - hs * gu) / det
        if abs(su) + abs(sv) < 1e-15:
            break
        mx, my, mz = nx + su * ux + sv * vx, ny + su * uy + sv * vy, nz + su * uz + sv * vz
        mn = math.sqrt(mx * mx + my * my + mz * mz)
        mx, my, mz = mx / mn, my / mn, mz / mn
        h2, w2x, w2y, w2z = _hval(A, B, mx, my, mz)
        if not h2 < h:
            break
        h, wx, wy, wz = h2, w2x, w2y, w2z
        nx, ny, nz = mx, my, mz
        moved = True
    if moved:
        return -h, nx, ny, nz
    return d, nx, ny, nz


@njit(cache=True, nogil=True)
def _smooth(A, B, full):
    """Whether a curved surface can carry the contact: ellipsoid or cylinder, or (for EPA
    on the full shapes) a sphere or capsule."""
    ta = A[0]
    tb = B[0]
    if ta == ELLIPSOID or ta == CYLINDER or tb == ELLIPSOID or tb == CYLINDER:
        return True
    return full > 0.0 and (ta == SPHERE or ta == CAPSULE or tb == SPHERE or tb == CAPSULE)


@njit(cache=True, nogil=True)
def _repolish(A, B, d, ax, ay, az, bx, by, bz, nx, ny, nz, scale, full):
    """:func:`_polish` for curved pairs; the witness points keep their midpoint and are
    re-spread along the new normal."""
    if not _smooth(A, B, full):
        return d, ax, ay, az, bx, by, bz, nx, ny, nz
    d2, mx, my, mz = _polish(A, B, d, nx, ny, nz, scale)
    if d2 == d and mx == nx and my == ny and mz == nz:
        return d, ax, ay, az, bx, by, bz, nx, ny, nz
    cx, cy, cz = 0.5 * (ax + bx), 0.5 * (ay + by), 0.5 * (az + bz)
    return (d2, cx - 0.5 * d2 * mx, cy - 0.5 * d2 * my, cz - 0.5 * d2 * mz,
            cx + 0.5 * d2 * mx, cy + 0.5 * d2 * my, cz + 0.5 * d2 * mz, mx, my, mz)


@njit(cache=True, nogil=True)
def shape_distance(A, B, work):
    """Signed distance of the convex shapes A and B. Returns
    ``(status, dist, ax, ay, az, bx, by, bz, nx, ny, nz)``: witness a on A and b on B
    (``b - a = dist * n`` both when separated and when penetrating), normal n from A to B;
    status is an ``EPA_*`` code (``EPA_FAILED``: nothing computed)."""
    scale = bound_radius(A) + bound_radius(B)
    rA = core_radius(A)
    rB = core_radius(B)
    st, ns, dc, ax, ay, az, bx, by, bz = gjk(A, B, 0.0, work, scale)
    if st == SEPARATED and dc > CORE_EPS * scale:
        nx, ny, nz = (bx - ax) / dc, (by - ay) / dc, (bz - az) / dc
        d = dc - rA - rB
        ax, ay, az, bx, by, bz = ax + rA * nx, ay + rA * ny, az + rA * nz, bx - rB * nx, by - rB * ny, bz - rB * nz
        d, ax, ay, az, bx, by, bz, nx, ny, nz = _repolish(A, B, d, ax, ay, az, bx, by, bz, nx, ny, nz, scale, 0.0)
        ax, ay, az, bx, by, bz = _pin_witness(A, B, d, nx, ny, nz, ax, ay, az, bx, by, bz)
        return EPA_OK, d, ax, ay, az, bx, by, bz, nx, ny, nz
    if rA > 0.0 or rB > 0.0:
        st, ns, dc, ax, ay, az, bx, by, bz = gjk(A, B, 1.0, work, scale)
        if st == SEPARATED and dc > CORE_EPS * scale:
            nx, ny, nz = (bx - ax) / dc, (by - ay) / dc, (bz - az) / dc
            return EPA_OK, dc, ax, ay, az, bx, by, bz, nx, ny, nz
    es, depth, nx, ny, nz, ax, ay, az, bx, by, bz = epa(A, B, ns, work, scale)
    if es == EPA_FAILED:
        return _touching_distance(A, B, work, scale)
    d, ax, ay, az, bx, by, bz, nx, ny, nz = _repolish(A, B, -depth, ax, ay, az, bx, by, bz, nx, ny, nz, scale, 1.0)
    ax, ay, az, bx, by, bz = _pin_witness(A, B, d, nx, ny, nz, ax, ay, az, bx, by, bz)
    return es, d, ax, ay, az, bx, by, bz, nx, ny, nz


@njit(cache=True, nogil=True)
def _touching_distance(A, B, work, scale):
    """:func:`shape_distance` of shapes that touch within round-off, where EPA fails: the
    Minkowski difference has the origin on its boundary, GJK's distance and EPA's depth are
    both ~0 and EPA's polytope is flat (two cylinders, the rim of one on the side of the
    other). B is moved away from A by ``TOUCH_SHIFT * scale`` along the line of their
    centres, GJK measures the now positive distance d' and its normal n, and the distance
    of the shapes in place is ``d' - shift · (u · n)`` (n is the gradient of the distance
    with respect to B's position): exact while the shift (1e-7 of the shapes' size) leaves
    the closest features as they are. Returns ``EPA_FAILED`` if the shapes still intersect after the shift (a
    penetration deeper than the shift, where EPA should not have failed)."""
    p0, p1, p2 = B[3][0], B[3][1], B[3][2]
    ux, uy, uz = p0 - A[3][0], p1 - A[3][1], p2 - A[3][2]
    nu = math.sqrt(ux * ux + uy * uy + uz * uz)
    if nu > 0.0:
        ux, uy, uz = ux / nu, uy / nu, uz / nu
    else:
        ux, uy, uz = 0.0, 0.0, 1.0
    e = TOUCH_SHIFT * scale
    shifted = np.empty(3)  # a C array like the contact tables' rows: GJK is not compiled again
    shifted[0], shifted[1], shifted[2] = p0 + e * ux, p1 + e * uy, p2 + e * uz
    st, ns, dc, ax, ay, az, bx, by, bz = gjk(A, (B[0], B[1], B[2], shifted, B[4]), 1.0, work, scale)
    if st != SEPARATED or dc <= CORE_EPS * scale:
        return EPA_FAILED, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0
    nx, ny, nz = (bx - ax) / dc, (by - ay) / dc, (bz - az) / dc
    d = dc - e * (ux * nx + uy * ny + uz * nz)  # the distance's gradient in B's position is n
    # a: GJK's witness on A (a point of the touching features, not an arbitrary support point
    # of a flat face); b = a + d n keeps the contract b - a = d n
    return EPA_OK, d, ax, ay, az, ax + d * nx, ay + d * ny, az + d * nz, nx, ny, nz


@njit(cache=True, nogil=True)
def _pin_witness(A, B, d, nx, ny, nz, ax, ay, az, bx, by, bz):
    """Witness points from the unique support point of a strictly convex shape (sphere,
    ellipsoid) along the normal: a barycentric combination of polytope vertices lies inside
    such a shape, off its surface, when the other shape touches it with a flat part (the
    Minkowski face is then large and its vertices come from distant search directions)."""
    if A[0] == ELLIPSOID or A[0] == SPHERE:
        ax, ay, az = support(A, nx, ny, nz, 1.0)
        return ax, ay, az, ax + d * nx, ay + d * ny, az + d * nz
    if B[0] == ELLIPSOID or B[0] == SPHERE:
        bx, by, bz = support(B, -nx, -ny, -nz, 1.0)
        return bx - d * nx, by - d * ny, bz - d * nz, bx, by, bz
    return ax, ay, az, bx, by, bz


# ------------------------------------------------------------------------ polytope manifold

@njit(cache=True, nogil=True)
def _poly_count(A):
    if A[0] == BOX:
        return 8
    return A[4].shape[0]


@njit(cache=True, nogil=True)
def _poly_vertex(A, i):
    t, size, R, p, verts = A
    if t == BOX:
        x = size[0] if i & 1 else -size[0]
        y = size[1] if i & 2 else -size[1]
        z = size[2] if i & 4 else -size[2]
    else:
        x, y, z = verts[i, 0], verts[i, 1], verts[i, 2]
    return (R[0, 0] * x + R[0, 1] * y + R[0, 2] * z + p[0],
            R[1, 0] * x + R[1, 1] * y + R[1, 2] * z + p[1],
            R[2, 0] * x + R[2, 1] * y + R[2, 2] * z + p[2])


@njit(cache=True, nogil=True)
def _feature(A, nx, ny, nz, work, off):
    """The support feature of polytope A along n: its vertices whose segment from the support
    vertex lies within ``FEATURE_SIN`` of the plane normal to n (up to FEAT_MAX), written
    at ``off``; returns their count."""
    nvert = _poly_count(A)
    hm = -1e300
    mx = my = mz = 0.0
    for i in range(nvert):
        x, y, z = _poly_vertex(A, np.int64(i))
        h = nx * x + ny * y + nz * z
        if h > hm:
            hm = h
            mx, my, mz = x, y, z
    m = 0
    for i in range(nvert):
        x, y, z = _poly_vertex(A, np.int64(i))
        dx, dy, dz = x - mx, y - my, z - mz
        drop = -(nx * dx + ny * dy + nz * dz)
        if drop <= FEATURE_SIN * math.sqrt(dx * dx + dy * dy + dz * dz) and m < FEAT_MAX:
            work[off + 3 * m] = x
            work[off + 3 * m + 1] = y
            work[off + 3 * m + 2] = z
            m += 1
    return m


@njit(cache=True, nogil=True)
def _basis(nx, ny, nz):
    """Unit u, w with (u, w, n) right-handed orthonormal."""
    if abs(nx) <= abs(ny) and abs(nx) <= abs(nz):
        ux, uy, uz = 0.0, -nz, ny
    elif abs(ny) <= abs(nz):
        ux, uy, uz = nz, 0.0, -nx
    else:
        ux, uy, uz = -ny, nx, 0.0
    un = math.sqrt(ux * ux + uy * uy + uz * uz)
    ux /= un
    uy /= un
    uz /= un
    return ux, uy, uz, ny * uz - nz * uy, nz * ux - nx * uz, nx * uy - ny * ux


@njit(cache=True, nogil=True)
def _hull2d(work, off, m, nx, ny, nz, out, tol):
    """Convex hull (gift wrapping) of the m points at ``off`` projected on the plane normal to
    n, counter-clockwise about n; indices written at ``out``; returns the hull size."""
    ux, uy, uz, wx, wy, wz = _basis(nx, ny, nz)
    # start: lowest u, then lowest w
    start = 0
    su = 1e300
    sw = 1e300
    for i in range(m):
        x, y, z = work[off + 3 * i], work[off + 3 * i + 1], work[off + 3 * i + 2]
        u = ux * x + uy * y + uz * z
        w = wx * x + wy * y + wz * z
        if u < su - tol or (u <= su + tol and w < sw):
            su, sw, start = u, w, i
    h = 0
    cur = start
    for _ in range(m):
        if h >= FEAT_MAX:
            break
        work[out + h] = cur
        h += 1
        cu = ux * work[off + 3 * cur] + uy * work[off + 3 * cur + 1] + uz * work[off + 3 * cur + 2]
        cw = wx * work[off + 3 * cur] + wy * work[off + 3 * cur + 1] + wz * work[off + 3 * cur + 2]
        nxt = -1
        nu = nw = 0.0
        for i in range(m):
            if i == cur:
                continue
            x, y, z = work[off + 3 * i], work[off + 3 * i + 1], work[off + 3 * i + 2]
            u = ux * x + uy * y + uz * z - cu
            w = wx * x + wy * y + wz * z - cw
            if u * u + w * w <= tol * tol:
                continue
            if nxt < 0:
                nxt, nu, nw = i, u, w
                continue
            c = nu * w - nw * u  # > 0: i is to the left of the candidate direction
            if c < 0.0 and abs(c) > tol * math.sqrt(nu * nu + nw * nw):
                nxt, nu, nw = i, u, w  # i is clockwise of the candidate: wrap tighter
            elif abs(c) <= tol * math.sqrt(nu * nu + nw * nw) and u * u + w * w > nu * nu + nw * nw:
                nxt, nu, nw = i, u, w  # collinear: take the farther point
        if nxt < 0 or nxt == start:
            break
        cur = nxt
    return h


@njit(cache=True, nogil=True)
def _clip(work, src, n, dst, px, py, pz, sx, sy, sz):
    """Clip the polygon at src (n points) to the half-space s . (x - p) <= 0 (Sutherland-
    Hodgman), written at dst; returns the new count."""
    m = 0
    for k in range(n):
        k1 = k + 1 if k + 1 < n else 0
        ax, ay, az = work[src + 3 * k], work[src + 3 * k + 1], work[src + 3 * k + 2]
        bx, by, bz = work[src + 3 * k1], work[src + 3 * k1 + 1], work[src + 3 * k1 + 2]
        da = sx * (ax - px) + sy * (ay - py) + sz * (az - pz)
        db = sx * (bx - px) + sy * (by - py) + sz * (bz - pz)
        if da <= 0.0 and m < CLIP_MAX:
            work[dst + 3 * m] = ax
            work[dst + 3 * m + 1] = ay
            work[dst + 3 * m + 2] = az
            m += 1
        if ((da < 0.0 and db > 0.0) or (da > 0.0 and db < 0.0)) and m < CLIP_MAX and n > 1:
            s = da / (da - db)
            work[dst + 3 * m] = ax + s * (bx - ax)
            work[dst + 3 * m + 1] = ay + s * (by - ay)
            work[dst + 3 * m + 2] = az + s * (bz - az)
            m += 1
        if n == 2:
            # a segment has one edge: its far end is emitted here
            if db <= 0.0 and m < CLIP_MAX:
                work[dst + 3 * m] = bx
                work[dst + 3 * m + 1] = by
                work[dst + 3 * m + 2] = bz
                m += 1
            break
    return m


@njit(cache=True, nogil=True)
def reduce_contacts(work, src, n, k0, kmax):
    """Stage at most kmax of the n candidate contacts at src (rows of STAGE_ROW) from staged
    slot k0: all of them if they fit, else the deepest and then, repeatedly, the candidate
    farthest from those already chosen (deterministic: first index on ties). Returns the
    number staged."""
    if n <= kmax:
        for i in range(n):
            o = src + STAGE_ROW * i
            put_contact(work, np.int64(k0 + i), work[o], work[o + 1], work[o + 2], work[o + 3],
                        work[o + 4], work[o + 5], work[o + 6])
        return n
    first = 0
    for i in range(1, n):
        if work[src + STAGE_ROW * i] < work[src + STAGE_ROW * first]:
            first = i
    chosen = 0
    nxt = first
    while chosen < kmax and nxt >= 0:
        o = src + STAGE_ROW * nxt
        put_contact(work, np.int64(k0 + chosen), work[o], work[o + 1], work[o + 2], work[o + 3],
                    work[o + 4], work[o + 5], work[o + 6])
        work[o] = 1e300  # mark as taken (its distance is already staged)
        chosen += 1
        nxt = -1
        bestd = -1.0
        for i in range(n):
            oi = src + STAGE_ROW * i
            if work[oi] >= 1e300:
                continue
            dmin = 1e300
            for c in range(chosen):
                oc = STAGE + STAGE_ROW * (k0 + c)
                dx = work[oi + 1] - work[oc + 1]
                dy = work[oi + 2] - work[oc + 2]
                dz = work[oi + 3] - work[oc + 3]
                dmin = min(dmin, dx * dx + dy * dy + dz * dz)
            if dmin > bestd:
                bestd = dmin
                nxt = i
    return chosen


@njit(cache=True, nogil=True)
def manifold(A, B, d, cx, cy, cz, nx, ny, nz, margin, work, scale):
    """Multi-point contact of two polytopes (box, convex) at signed distance ``d`` along
    the unit normal n (from A to B; GJK/EPA's, with the contact point (cx, cy, cz)
    midway between the witnesses): the support features of A along n and of B along -n;
    if one is a face (3+ vertices, the *reference*, the better aligned with n if both),
    the other (the *incident* polygon, edge or vertex) is clipped against the reference
    face's side planes, and each clipped vertex within ``margin`` is a contact with
    normal n, distance = its height along n above A's support plane (incident vertex of
    B) or below B's (incident vertex of A), position = midway between the vertex and that
    plane. The box-box scheme, for hulls. Every height is >= d (a point of B lies no
    lower along n than B's support plane, which is d above A's); when no clipped vertex
    reaches d (the closest points were clipped away) the GJK/EPA contact is added, so the
    deepest contact is always the signed distance. A hull's support feature need not be
    one of its faces: on a tessellated curved surface it is a patch of near-coplanar
    vertices, or a sliver triangle whose normal is far from n (measured on Talos's hulls:
    0.18 rad), hence heights and normals along n, not along the reference polygon's own
    normal. Returns the number of contacts staged (at most MAX_CONTACTS), 0 when neither
    feature is a face or no vertex survives."""
    ma = _feature(A, nx, ny, nz, work, np.int64(FEAT_A))
    mb = _feature(B, -nx, -ny, -nz, work, np.int64(FEAT_B))
    tol = 1e-12 * scale
    ha = _hull2d(work, np.int64(FEAT_A), np.int64(ma), nx, ny, nz, np.int64(POLY_A), tol) if ma >= 3 else ma
    hb = _hull2d(work, np.int64(FEAT_B), np.int64(mb), nx, ny, nz, np.int64(POLY_B), tol) if mb >= 3 else mb
    if ma < 3:
        for i in range(ma):
            work[POLY_A + i] = i
    if mb < 3:
        for i in range(mb):
            work[POLY_B + i] = i
    # face normals (Newell), outward: A's along +n, B's along -n
    best_al = -1.0
    ref_is_a = True
    rnx = rny = rnz = 0.0
    for side in range(2):
        h = ha if side == 0 else hb
        off = FEAT_A if side == 0 else FEAT_B
        pol = POLY_A if side == 0 else POLY_B
        if h < 3:
            continue
        fx = fy = fz = 0.0
        for k in range(h):
            i = int(work[pol + k])
            j = int(work[pol + (k + 1) % h])
            xi, yi, zi = work[off + 3 * i], work[off + 3 * i + 1], work[off + 3 * i + 2]
            xj, yj, zj = work[off + 3 * j], work[off + 3 * j + 1], work[off + 3 * j + 2]
            fx += (yi - yj) * (zi + zj)
            fy += (zi - zj) * (xi + xj)
            fz += (xi - xj) * (yi + yj)
        fn = math.sqrt(fx * fx + fy * fy + fz * fz)
        if fn <= tol * tol:
            continue
        fx /= fn
        fy /= fn
        fz /= fn
        sgn = 1.0 if side == 0 else -1.0
        al = sgn * (fx * nx + fy * ny + fz * nz)
        if al < 0.0:  # the hull ran clockwise about the outward direction
            fx, fy, fz = -fx, -fy, -fz
            al = -al
        if al > best_al + 1e-12:
            best_al = al
            ref_is_a = side == 0
            rnx, rny, rnz = fx, fy, fz
    if best_al < 0.0:
        return 0
    roff = FEAT_A if ref_is_a else FEAT_B
    rpol = POLY_A if ref_is_a else POLY_B
    rh = ha if ref_is_a else hb
    ioff = FEAT_B if ref_is_a else FEAT_A
    ipol = POLY_B if ref_is_a else POLY_A
    ih = hb if ref_is_a else ha
    if ih < 2:
        return 0
    # incident polygon into CLIP0
    for k in range(ih):
        i = int(work[ipol + k])
        for c in range(3):
            work[CLIP0 + 3 * k + c] = work[ioff + 3 * i + c]
    n = ih
    src = CLIP0
    dst = CLIP1
    # side planes of the reference polygon; outward if it winds counter-clockwise about rn
    wind = 0.0
    i0 = int(work[rpol])
    i1 = int(work[rpol + 1])
    i2 = int(work[rpol + 2])
    ux = work[roff + 3 * i1] - work[roff + 3 * i0]
    uy = work[roff + 3 * i1 + 1] - work[roff + 3 * i0 + 1]
    uz = work[roff + 3 * i1 + 2] - work[roff + 3 * i0 + 2]
    vx = work[roff + 3 * i2] - work[roff + 3 * i1]
    vy = work[roff + 3 * i2 + 1] - work[roff + 3 * i1 + 1]
    vz = work[roff + 3 * i2 + 2] - work[roff + 3 * i1 + 2]
    wind = rnx * (uy * vz - uz * vy) + rny * (uz * vx - ux * vz) + rnz * (ux * vy - uy * vx)
    ws = 1.0 if wind >= 0.0 else -1.0
    for k in range(rh):
        i = int(work[rpol + k])
        j = int(work[rpol + (k + 1) % rh])
        px, py, pz = work[roff + 3 * i], work[roff + 3 * i + 1], work[roff + 3 * i + 2]
        ex = work[roff + 3 * j] - px
        ey = work[roff + 3 * j + 1] - py
        ez = work[roff + 3 * j + 2] - pz
        # outward side normal = e x rn for counter-clockwise winding
        sx = ws * (ey * rnz - ez * rny)
        sy = ws * (ez * rnx - ex * rnz)
        sz = ws * (ex * rny - ey * rnx)
        n = _clip(work, np.int64(src), np.int64(n), np.int64(dst), px, py, pz, sx, sy, sz)
        src, dst = dst, src
        if n == 0:
            return 0
    # heights along n: above A's support plane (incident vertices of B), below B's (of A)
    sx, sy, sz = support(A, nx, ny, nz, 1.0)
    ha = nx * sx + ny * sy + nz * sz
    sx, sy, sz = support(B, -nx, -ny, -nz, 1.0)
    hb = nx * sx + ny * sy + nz * sz
    sg = 1.0 if ref_is_a else -1.0
    base = ha if ref_is_a else -hb
    m = 0
    lowest = 1e300
    for k in range(n):
        x, y, z = work[src + 3 * k], work[src + 3 * k + 1], work[src + 3 * k + 2]
        hgt = sg * (nx * x + ny * y + nz * z) - base
        if hgt > margin:
            continue
        dup = False
        for q in range(m):
            oq = CAND + STAGE_ROW * q
            dx, dy, dz = work[oq + 1] - x, work[oq + 2] - y, work[oq + 3] - z
            if dx * dx + dy * dy + dz * dz <= (1e-9 * scale) ** 2:
                dup = True
        if dup:
            continue
        o = CAND + STAGE_ROW * m
        work[o] = hgt
        work[o + 1] = x - 0.5 * sg * hgt * nx
        work[o + 2] = y - 0.5 * sg * hgt * ny
        work[o + 3] = z - 0.5 * sg * hgt * nz
        work[o + 4] = nx
        work[o + 5] = ny
        work[o + 6] = nz
        lowest = min(lowest, hgt)
        m += 1
    if m == 0:
        return 0
    if lowest > d + 1e-9 * scale:  # the closest points were clipped away: the GJK/EPA contact joins
        slot = m
        if m == CLIP_MAX:  # no free row (never seen): it replaces the highest candidate
            slot = 0
            for q in range(1, m):
                if work[CAND + STAGE_ROW * q] > work[CAND + STAGE_ROW * slot]:
                    slot = q
        put_row(work, CAND + STAGE_ROW * slot, d, cx, cy, cz, nx, ny, nz)
        if m < CLIP_MAX:
            m += 1
    return reduce_contacts(work, np.int64(CAND), np.int64(m), np.int64(0), np.int64(MAX_CONTACTS))


@njit(cache=True, nogil=True)
def convex_contacts(A, B, margin, work):
    """Contacts of two convex shapes by GJK/EPA (one point; a clipped manifold for two
    polytopes in face or edge contact). Stages them from slot 0; returns
    ``(count, status)`` with an ``EPA_*`` status."""
    st, d, ax, ay, az, bx, by, bz, nx, ny, nz = shape_distance(A, B, work)
    if st == EPA_FAILED:
        return 0, st
    if d > margin:
        return 0, st
    put_contact(work, np.int64(0), d, 0.5 * (ax + bx), 0.5 * (ay + by), 0.5 * (az + bz), nx, ny, nz)
    ta = A[0]
    tb = B[0]
    if (ta == BOX or ta == CONVEX) and (tb == BOX or tb == CONVEX):
        scale = bound_radius(A) + bound_radius(B)
        m = manifold(A, B, d, 0.5 * (ax + bx), 0.5 * (ay + by), 0.5 * (az + bz), nx, ny, nz, margin, work, scale)
        if m > 0:
            return m, st
    return 1, st
