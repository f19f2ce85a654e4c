"""Closed-form narrow-phase pairs (L3): planes, spheres, capsules, and the
sphere/capsule-box pairs.

Every function takes the two shapes in canonical order (lower shape code
first, ``A = (t, size, R, p, verts)``), stages its contacts in ``work``
from slot 0 (distance, position, normal from A to B; see
``narrow_workspace``) and returns their count. The formulas are those of
MuJoCo's analytic colliders (``engine_collision_primitive.c``,
``engine_collision_box.c``: same contact sets, the degenerate fallbacks
included), written anew, except capsule-box and plane-convex, whose
contact choice is this module's own (documented in docs/collision.md).
"""
import math

import numpy as np
from numba import njit

from .gjk import put_contact, support
from .narrow_workspace import CAND

MINVAL = 1e-15            # MuJoCo's mjMINVAL: a length below this is zero
SIN45 = math.sqrt(0.5)


@njit(cache=True, nogil=True)
def normalize3(x, y, z):
    """Unit vector and the norm; (1, 0, 0) for a norm below MINVAL (as MuJoCo)."""
    n = math.sqrt(x * x + y * y + z * z)
    if n < MINVAL:
        return 1.0, 0.0, 0.0, n
    return x / n, y / n, z / n, n


# ------------------------------------------------------------------------------------ plane

@njit(cache=True, nogil=True)
def _plane_point(work, k, nx, ny, nz, ox, oy, oz, cx, cy, cz, r, margin):
    """Sphere (c, r) against the plane through o with normal n; stages at slot k."""
    cd = nx * (cx - ox) + ny * (cy - oy) + nz * (cz - oz)
    if cd > margin + r:
        return 0
    d = cd - r
    s = -(0.5 * d + r)
    put_contact(work, np.int64(k), d, cx + s * nx, cy + s * ny, cz + s * nz, nx, ny, nz)
    return 1


@njit(cache=True, nogil=True)
def plane_sphere(P, S, margin, work):
    R, o = P[2], P[3]
    c = S[3]
    return _plane_point(work, np.int64(0), R[0, 2], R[1, 2], R[2, 2], o[0], o[1], o[2], c[0], c[1], c[2], S[1][0], margin)


@njit(cache=True, nogil=True)
def plane_capsule(P, C, margin, work):
    """Both end spheres (up to 2 contacts)."""
    R, o = P[2], P[3]
    nx, ny, nz = R[0, 2], R[1, 2], R[2, 2]
    Rc, c, size = C[2], C[3], C[1]
    h = size[1]
    ax, ay, az = h * Rc[0, 2], h * Rc[1, 2], h * Rc[2, 2]
    n = _plane_point(work, np.int64(0), nx, ny, nz, o[0], o[1], o[2], c[0] + ax, c[1] + ay, c[2] + az, size[0], margin)
    n += _plane_point(work, np.int64(n), nx, ny, nz, o[0], o[1], o[2], c[0] - ax, c[1] - ay, c[2] - az, size[0], margin)
    return n


@njit(cache=True, nogil=True)
def plane_cylinder(P, C, margin, work):
    """The deepest rim point, the rim point of the other disk below it, and two more points
    of the deepest disk at +-120 degrees (up to 4, MuJoCo's choice)."""
    R, o = P[2], P[3]
    nx, ny, nz = R[0, 2], R[1, 2], R[2, 2]
    Rc, c, size = C[2], C[3], C[1]
    ax, ay, az = Rc[0, 2], Rc[1, 2], Rc[2, 2]
    pa = nx * ax + ny * ay + nz * az
    if pa > 0.0:
        ax, ay, az = -ax, -ay, -az
        pa = -pa
    d0 = nx * (c[0] - o[0]) + ny * (c[1] - o[1]) + nz * (c[2] - o[2])
    # radial direction towards the plane: -n with its axial part removed
    vx, vy, vz = pa * ax - nx, pa * ay - ny, pa * az - nz
    l2 = vx * vx + vy * vy + vz * vz
    if l2 >= MINVAL * MINVAL:
        s = size[0] / math.sqrt(l2)
        vx, vy, vz = vx * s, vy * s, vz * s
    else:
        vx, vy, vz = Rc[0, 0] * size[0], Rc[1, 0] * size[0], Rc[2, 0] * size[0]
    pv = vx * nx + vy * ny + vz * nz
    ax, ay, az = ax * size[1], ay * size[1], az * size[1]
    pa *= size[1]
    cnt = 0
    d = d0 + pa + pv
    if d > margin:
        return 0
    put_contact(work, np.int64(cnt), d, c[0] + vx + ax - 0.5 * d * nx, c[1] + vy + ay - 0.5 * d * ny,
                c[2] + vz + az - 0.5 * d * nz, nx, ny, nz)
    cnt += 1
    d = d0 - pa + pv
    if d <= margin:
        put_contact(work, np.int64(cnt), d, c[0] + vx - ax - 0.5 * d * nx, c[1] + vy - ay - 0.5 * d * ny,
                    c[2] + vz - az - 0.5 * d * nz, nx, ny, nz)
        cnt += 1
    pv1 = -0.5 * pv
    d = d0 + pa + pv1
    if d <= margin:
        sx, sy, sz = vy * az - vz * ay, vz * ax - vx * az, vx * ay - vy * ax
        sx, sy, sz, _ = normalize3(sx, sy, sz)
        s = size[0] * math.sqrt(3.0) / 2.0
        sx, sy, sz = sx * s, sy * s, sz * s
        for sgn in (1.0, -1.0):
            put_contact(work, np.int64(cnt), d, c[0] + sgn * sx + ax - 0.5 * vx - 0.5 * d * nx,
                        c[1] + sgn * sy + ay - 0.5 * vy - 0.5 * d * ny,
                        c[2] + sgn * sz + az - 0.5 * vz - 0.5 * d * nz, nx, ny, nz)
            cnt += 1
    return cnt


@njit(cache=True, nogil=True)
def plane_box(P, B, margin, work):
    """Corners on the plane's side of the box centre within margin, the first 4 in corner
    order (MuJoCo's choice)."""
    R, o = P[2], P[3]
    nx, ny, nz = R[0, 2], R[1, 2], R[2, 2]
    Rb, c, size = B[2], B[3], B[1]
    dist = nx * (c[0] - o[0]) + ny * (c[1] - o[1]) + nz * (c[2] - o[2])
    cnt = 0
    for i in range(8):
        x = size[0] if i & 1 else -size[0]
        y = size[1] if i & 2 else -size[1]
        z = size[2] if i & 4 else -size[2]
        wx = Rb[0, 0] * x + Rb[0, 1] * y + Rb[0, 2] * z
        wy = Rb[1, 0] * x + Rb[1, 1] * y + Rb[1, 2] * z
        wz = Rb[2, 0] * x + Rb[2, 1] * y + Rb[2, 2] * z
        ld = nx * wx + ny * wy + nz * wz
        if dist + ld > margin or ld > 0.0:
            continue
        d = dist + ld
        put_contact(work, np.int64(cnt), d, wx + c[0] - 0.5 * d * nx, wy + c[1] - 0.5 * d * ny,
                    wz + c[2] - 0.5 * d * nz, nx, ny, nz)
        cnt += 1
        if cnt >= 4:
            break
    return cnt


@njit(cache=True, nogil=True)
def plane_support(P, X, margin, work):
    """Plane against any convex shape by its support point along -n: one contact (the
    ellipsoid's pair)."""
    R, o = P[2], P[3]
    nx, ny, nz = R[0, 2], R[1, 2], R[2, 2]
    sx, sy, sz = support(X, -nx, -ny, -nz, 1.0)
    d = nx * (sx - o[0]) + ny * (sy - o[1]) + nz * (sz - o[2])
    if d > margin:
        return 0
    put_contact(work, np.int64(0), d, sx - 0.5 * d * nx, sy - 0.5 * d * ny, sz - 0.5 * d * nz, nx, ny, nz)
    return 1


#: plane–convex: the depth bands (shares of the hull's bounding radius above the deepest
#: vertex) sampled in turn: vertices touching the plane (round-off), then those nearly
#: touching (a tessellated sole's lowest points), then the rest within the margin
TOUCHING_BAND = 1e-6
RESTING_BAND = 1e-3


@njit(cache=True, nogil=True)
def plane_convex(P, X, margin, work, kmax):
    """Hull vertices within margin of the plane, at most kmax: the deepest (first index on
    ties), then repeatedly the vertex farthest from those chosen (farthest-point sampling),
    first among the vertices touching the plane, then among those nearly touching, then
    among the others (depth bands ``TOUCHING_BAND``, ``RESTING_BAND`` times the hull's
    bounding radius above the deepest, then the margin): a face resting on the plane gives
    its extreme corners, not vertices farther up that the margin reaches (a chamfer, a
    rounded sole's rim), and a hull resting on a facet keeps that facet's vertices."""
    R, o = P[2], P[3]
    nx, ny, nz = R[0, 2], R[1, 2], R[2, 2]
    Rx, c, verts = X[2], X[3], X[4]
    nvert = verts.shape[0]
    # the normal in the hull's frame: a vertex's depth is then 3 products (ld·v + l0), within
    # round-off of the exact depth below, which decides: it only skips the vertices clearly out
    # (most of a robot's link hull: hundreds of vertices, a few touching)
    lx = Rx[0, 0] * nx + Rx[1, 0] * ny + Rx[2, 0] * nz
    ly = Rx[0, 1] * nx + Rx[1, 1] * ny + Rx[2, 1] * nz
    lz = Rx[0, 2] * nx + Rx[1, 2] * ny + Rx[2, 2] * nz
    l0 = nx * (c[0] - o[0]) + ny * (c[1] - o[1]) + nz * (c[2] - o[2])
    dmin = math.inf
    rbound = 0.0
    for i in range(nvert):
        x, y, z = verts[i, 0], verts[i, 1], verts[i, 2]
        rbound = max(rbound, x * x + y * y + z * z)
    rbound = math.sqrt(rbound)
    slack = 1e-9 * (rbound + abs(l0))  # far above the two depths' round-off
    for i in range(nvert):
        x, y, z = verts[i, 0], verts[i, 1], verts[i, 2]
        if lx * x + ly * y + lz * z + l0 > dmin + slack:
            continue
        wz = (nx * (Rx[0, 0] * x + Rx[0, 1] * y + Rx[0, 2] * z + c[0] - o[0])
              + ny * (Rx[1, 0] * x + Rx[1, 1] * y + Rx[1, 2] * z + c[1] - o[1])
              + nz * (Rx[2, 0] * x + Rx[2, 1] * y + Rx[2, 2] * z + c[2] - o[2]))
        dmin = min(dmin, wz)
    limit = min(margin, dmin + TOUCHING_BAND * rbound)
    cnt = 0
    while cnt < kmax:
        best = -1
        bestv = 0.0
        for i in range(nvert):
            x, y, z = verts[i, 0], verts[i, 1], verts[i, 2]
            if lx * x + ly * y + lz * z + l0 > limit + slack:
                continue
            wx = Rx[0, 0] * x + Rx[0, 1] * y + Rx[0, 2] * z + c[0]
            wy = Rx[1, 0] * x + Rx[1, 1] * y + Rx[1, 2] * z + c[1]
            wz = Rx[2, 0] * x + Rx[2, 1] * y + Rx[2, 2] * z + c[2]
            d = nx * (wx - o[0]) + ny * (wy - o[1]) + nz * (wz - o[2])
            if d > limit:
                continue
            if cnt == 0:
                score = -d
            else:
                score = 1e300
                for q in range(cnt):
                    oq = 7 * q
                    # distance of the contact point (midway) to chosen ones
                    ex = wx - 0.5 * d * nx - work[oq + 1]
                    ey = wy - 0.5 * d * ny - work[oq + 2]
                    ez = wz - 0.5 * d * nz - work[oq + 3]
                    score = min(score, ex * ex + ey * ey + ez * ez)
                if score <= 0.0:
                    continue
            if best < 0 or score > bestv:
                best = i
                bestv = score
        if best < 0:
            if limit < margin:  # this band is exhausted: the next one
                wider = dmin + RESTING_BAND * rbound
                limit = wider if limit < wider < margin else margin
                continue
            break
        x, y, z = verts[best, 0], verts[best, 1], verts[best, 2]
        wx = Rx[0, 0] * x + Rx[0, 1] * y + Rx[0, 2] * z + c[0]
        wy = Rx[1, 0] * x + Rx[1, 1] * y + Rx[1, 2] * z + c[1]
        wz = Rx[2, 0] * x + Rx[2, 1] * y + Rx[2, 2] * z + c[2]
        d = nx * (wx - o[0]) + ny * (wy - o[1]) + nz * (wz - o[2])
        put_contact(work, np.int64(cnt), d, wx - 0.5 * d * nx, wy - 0.5 * d * ny, wz - 0.5 * d * nz, nx, ny, nz)
        cnt += 1
    return cnt


# ------------------------------------------------------------------------- sphere, capsule

@njit(cache=True, nogil=True)
def _sphere_sphere(work, k, c1x, c1y, c1z, r1, z1x, z1y, z1z, c2x, c2y, c2z, r2, z2x, z2y, z2z, margin):
    """Spheres (c1, r1), (c2, r2); coincident centres take the normal z1 x z2 of the geoms'
    z axes, then (1, 0, 0) (MuJoCo's fallback)."""
    dx, dy, dz = c1x - c2x, c1y - c2y, c1z - c2z
    cd2 = dx * dx + dy * dy + dz * dz
    mind = margin + r1 + r2
    if cd2 > mind * mind:
        return 0
    d = math.sqrt(cd2) - r1 - r2
    nx, ny, nz, ln = normalize3(-dx, -dy, -dz)
    if ln < MINVAL:
        nx, ny, nz, _ = normalize3(z1y * z2z - z1z * z2y, z1z * z2x - z1x * z2z, z1x * z2y - z1y * z2x)
    s = r1 + 0.5 * d
    put_contact(work, np.int64(k), d, c1x + s * nx, c1y + s * ny, c1z + s * nz, nx, ny, nz)
    return 1


@njit(cache=True, nogil=True)
def sphere_sphere(S1, S2, margin, work):
    R1, c1, R2, c2 = S1[2], S1[3], S2[2], S2[3]
    return _sphere_sphere(work, np.int64(0), c1[0], c1[1], c1[2], S1[1][0], R1[0, 2], R1[1, 2], R1[2, 2],
                          c2[0], c2[1], c2[2], S2[1][0], R2[0, 2], R2[1, 2], R2[2, 2], margin)


@njit(cache=True, nogil=True)
def sphere_capsule(S, C, margin, work):
    R1, c1, R2, c2 = S[2], S[3], C[2], C[3]
    h = C[1][1]
    ax, ay, az = R2[0, 2], R2[1, 2], R2[2, 2]
    x = ax * (c1[0] - c2[0]) + ay * (c1[1] - c2[1]) + az * (c1[2] - c2[2])
    x = min(max(x, -h), h)
    return _sphere_sphere(work, np.int64(0), c1[0], c1[1], c1[2], S[1][0], R1[0, 2], R1[1, 2], R1[2, 2],
                          c2[0] + x * ax, c2[1] + x * ay, c2[2] + x * az, C[1][0], ax, ay, az, margin)


@njit(cache=True, nogil=True)
def sphere_cylinder(S, C, margin, work):
    """Side (sphere against the axis point), cap (sphere against the cap plane) or rim
    (sphere against the nearest rim point), whichever region the centre is in; a centre
    inside takes the nearer of side and cap."""
    R1, c1, R2, c2 = S[2], S[3], C[2], C[3]
    r = S[1][0]
    rad, h = C[1][0], C[1][1]
    ax, ay, az = R2[0, 2], R2[1, 2], R2[2, 2]
    vx, vy, vz = c1[0] - c2[0], c1[1] - c2[1], c1[2] - c2[2]
    x = ax * vx + ay * vy + az * vz
    qx, qy, qz = vx - x * ax, vy - x * ay, vz - x * az
    q2 = qx * qx + qy * qy + qz * qz
    side = abs(x) < h
    cap = q2 < rad * rad
    if side and cap:
        if h - abs(x) < rad - math.sqrt(q2):
            side = False
        else:
            cap = False
    if side:
        return _sphere_sphere(work, np.int64(0), c1[0], c1[1], c1[2], r, R1[0, 2], R1[1, 2], R1[2, 2],
                              c2[0] + x * ax, c2[1] + x * ay, c2[2] + x * az, rad, ax, ay, az, margin)
    if cap:
        sg = 1.0 if x > 0.0 else -1.0
        fx, fy, fz = sg * ax, sg * ay, sg * az   # outward cap normal
        cd = fx * vx + fy * vy + fz * vz - h
        if cd > margin + r:
            return 0
        d = cd - r
        s = -(0.5 * d + r)
        put_contact(work, np.int64(0), d, c1[0] + s * fx, c1[1] + s * fy, c1[2] + s * fz, -fx, -fy, -fz)
        return 1
    s = rad / math.sqrt(q2)
    hh = h if x > 0.0 else -h
    return _sphere_sphere(work, np.int64(0), c1[0], c1[1], c1[2], r, R1[0, 2], R1[1, 2], R1[2, 2],
                          c2[0] + qx * s + hh * ax, c2[1] + qy * s + hh * ay, c2[2] + qz * s + hh * az,
                          0.0, ax, ay, az, margin)


@njit(cache=True, nogil=True)
def _sphere_box_local(cx, cy, cz, r, size, margin):
    """Sphere with centre c (box frame) against the box: (hit, dist, pos, normal) in the box
    frame, the normal from the sphere to the box. A centre inside takes the nearest face."""
    kx = min(max(cx, -size[0]), size[0])
    ky = min(max(cy, -size[1]), size[1])
    kz = min(max(cz, -size[2]), size[2])
    tx, ty, tz, dist = normalize3(kx - cx, ky - cy, kz - cz)
    if dist - r > margin:
        return False, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
    if dist <= MINVAL:
        closest = 2.0 * (size[0] + size[1] + size[2])
        k = 0
        for i in range(6):
            a = i // 2
            ca = cx if a == 0 else (cy if a == 1 else cz)
            face = size[a] if i % 2 else -size[a]
            if closest > abs(face - ca):
                closest = abs(face - ca)
                k = i
        s = -1.0 if k % 2 else 1.0
        a = k // 2
        nx = s if a == 0 else 0.0
        ny = s if a == 1 else 0.0
        nz = s if a == 2 else 0.0
        f = 0.5 * (r - closest)
        return True, -closest - r, cx + f * nx, cy + f * ny, cz + f * nz, nx, ny, nz
    px = 0.5 * (kx + cx + tx * r)
    py = 0.5 * (ky + cy + ty * r)
    pz = 0.5 * (kz + cz + tz * r)
    return True, dist - r, px, py, pz, tx, ty, tz


@njit(cache=True, nogil=True)
def _stage_local(work, k, Rb, c, d, px, py, pz, nx, ny, nz):
    put_contact(work, np.int64(k), d,
                Rb[0, 0] * px + Rb[0, 1] * py + Rb[0, 2] * pz + c[0],
                Rb[1, 0] * px + Rb[1, 1] * py + Rb[1, 2] * pz + c[1],
                Rb[2, 0] * px + Rb[2, 1] * py + Rb[2, 2] * pz + c[2],
                Rb[0, 0] * nx + Rb[0, 1] * ny + Rb[0, 2] * nz,
                Rb[1, 0] * nx + Rb[1, 1] * ny + Rb[1, 2] * nz,
                Rb[2, 0] * nx + Rb[2, 1] * ny + Rb[2, 2] * nz)


@njit(cache=True, nogil=True)
def sphere_box(S, B, margin, work):
    c1 = S[3]
    Rb, c, size = B[2], B[3], B[1]
    vx, vy, vz = c1[0] - c[0], c1[1] - c[1], c1[2] - c[2]
    lx = Rb[0, 0] * vx + Rb[1, 0] * vy + Rb[2, 0] * vz
    ly = Rb[0, 1] * vx + Rb[1, 1] * vy + Rb[2, 1] * vz
    lz = Rb[0, 2] * vx + Rb[1, 2] * vy + Rb[2, 2] * vz
    hit, d, px, py, pz, nx, ny, nz = _sphere_box_local(lx, ly, lz, S[1][0], size, margin)
    if not hit:
        return 0
    _stage_local(work, np.int64(0), Rb, c, d, px, py, pz, nx, ny, nz)
    return 1


@njit(cache=True, nogil=True)
def capsule_capsule(C1, C2, margin, work):
    """Closest points of the segments, then spheres; parallel axes give up to 2 contacts
    from the segment ends (MuJoCo's scheme)."""
    R1, p1, s1 = C1[2], C1[3], C1[1]
    R2, p2, s2 = C2[2], C2[3], C2[1]
    z1x, z1y, z1z = R1[0, 2], R1[1, 2], R1[2, 2]
    z2x, z2y, z2z = R2[0, 2], R2[1, 2], R2[2, 2]
    a1x, a1y, a1z = z1x * s1[1], z1y * s1[1], z1z * s1[1]
    a2x, a2y, a2z = z2x * s2[1], z2y * s2[1], z2z * s2[1]
    dx, dy, dz = p1[0] - p2[0], p1[1] - p2[1], p1[2] - p2[2]
    ma = a1x * a1x + a1y * a1y + a1z * a1z
    mb = -(a1x * a2x + a1y * a2y + a1z * a2z)
    mc = a2x * a2x + a2y * a2y + a2z * a2z
    u = -(a1x * dx + a1y * dy + a1z * dz)
    v = a2x * dx + a2y * dy + a2z * dz
    det = ma * mc - mb * mb
    r1, r2 = s1[0], s2[0]
    if abs(det) >= MINVAL:
        x1 = (mc * u - mb * v) / det
        x2 = (ma * v - mb * u) / det
        if x1 > 1.0:
            x1 = 1.0
            x2 = (v - mb) / mc
        elif x1 < -1.0:
            x1 = -1.0
            x2 = (v + mb) / mc
        if x2 > 1.0:
            x2 = 1.0
            x1 = min(max((u - mb) / ma, -1.0), 1.0)
        elif x2 < -1.0:
            x2 = -1.0
            x1 = min(max((u + mb) / ma, -1.0), 1.0)
        return _sphere_sphere(work, np.int64(0), p1[0] + x1 * a1x, p1[1] + x1 * a1y, p1[2] + x1 * a1z, r1, z1x, z1y, z1z,
                              p2[0] + x2 * a2x, p2[1] + x2 * a2y, p2[2] + x2 * a2z, r2, z2x, z2y, z2z, margin)
    # parallel axes: ends of segment 1, then ends of segment 2, until 2 contacts
    n = 0
    for e in range(4):
        if e < 2:
            x1 = 1.0 if e == 0 else -1.0
            x2 = min(max((v - mb) / mc if e == 0 else (v + mb) / mc, -1.0), 1.0)
        else:
            x2 = 1.0 if e == 2 else -1.0
            x1 = min(max((u - mb) / ma if e == 2 else (u + mb) / ma, -1.0), 1.0)
        n += _sphere_sphere(work, np.int64(n), p1[0] + x1 * a1x, p1[1] + x1 * a1y, p1[2] + x1 * a1z, r1, z1x, z1y, z1z,
                            p2[0] + x2 * a2x, p2[1] + x2 * a2y, p2[2] + x2 * a2z, r2, z2x, z2y, z2z, margin)
        if e >= 1 and n >= 2:
            break
    return n


@njit(cache=True, nogil=True)
def _box_sdf(x, y, z, size):
    """Signed distance of a point (box frame) to the box."""
    qx = abs(x) - size[0]
    qy = abs(y) - size[1]
    qz = abs(z) - size[2]
    ox, oy, oz = max(qx, 0.0), max(qy, 0.0), max(qz, 0.0)
    return math.sqrt(ox * ox + oy * oy + oz * oz) + min(max(qx, max(qy, qz)), 0.0)


@njit(cache=True, nogil=True)
def _segment_box_deepest(cx, cy, cz, hx, hy, hz, size, work):
    """The parameter t in [-1, 1] minimising the box's signed distance of c + t h (convex
    in t), exactly: inside the box the distance is the largest of 6 affine functions of t
    (minimum at an end or where two cross); outside, a quadratic on each interval between
    the t where a coordinate crosses a face plane. First minimum in a fixed candidate
    order on ties."""
    best_t = -1.0
    best = _box_sdf(cx - hx, cy - hy, cz - hz, size)
    v = _box_sdf(cx + hx, cy + hy, cz + hz, size)
    if v < best:
        best, best_t = v, 1.0
    # crossings of the affine pieces s*(c_i + t h_i) - size_i (interior minimum)
    for p in range(6):
        i = p // 2
        si = 1.0 if p % 2 == 0 else -1.0
        ci = cx if i == 0 else (cy if i == 1 else cz)
        hi = hx if i == 0 else (hy if i == 1 else hz)
        for q in range(p + 1, 6):
            j = q // 2
            sj = 1.0 if q % 2 == 0 else -1.0
            cj = cx if j == 0 else (cy if j == 1 else cz)
            hj = hx if j == 0 else (hy if j == 1 else hz)
            den = si * hi - sj * hj
            if den == 0.0:
                continue
            t = (sj * cj - size[j] - si * ci + size[i]) / den
            if -1.0 < t < 1.0:
                v = _box_sdf(cx + t * hx, cy + t * hy, cz + t * hz, size)
                if v < best:
                    best, best_t = v, t
    if best < 0.0:
        return best_t, best
    # outside: breakpoints where a coordinate meets a face plane
    nb = 0
    work[CAND + nb] = -1.0
    nb += 1
    work[CAND + nb] = 1.0
    nb += 1
    for i in range(3):
        ci = cx if i == 0 else (cy if i == 1 else cz)
        hi = hx if i == 0 else (hy if i == 1 else hz)
        if hi == 0.0:
            continue
        for sg in (1.0, -1.0):
            t = (sg * size[i] - ci) / hi
            if -1.0 < t < 1.0:
                work[CAND + nb] = t
                nb += 1
    for b in range(nb):
        t0 = work[CAND + b]
        v = _box_sdf(cx + t0 * hx, cy + t0 * hy, cz + t0 * hz, size)
        if v < best:
            best, best_t = v, t0
        t1 = 2.0
        for e in range(nb):
            te = work[CAND + e]
            if t0 < te < t1:
                t1 = te
        if t1 > 1.0:
            continue
        tm = 0.5 * (t0 + t1)
        num = 0.0
        den = 0.0
        for i in range(3):
            ci = cx if i == 0 else (cy if i == 1 else cz)
            hi = hx if i == 0 else (hy if i == 1 else hz)
            xm = ci + tm * hi
            if xm > size[i]:
                num += hi * (ci - size[i])
                den += hi * hi
            elif xm < -size[i]:
                num += hi * (ci + size[i])
                den += hi * hi
        if den > 0.0:
            t = min(max(-num / den, t0), t1)
            v = _box_sdf(cx + t * hx, cy + t * hy, cz + t * hz, size)
            if v < best:
                best, best_t = v, t
    return best_t, best


@njit(cache=True, nogil=True)
def capsule_box(C, B, margin, work):
    """Up to 2 contacts. The first is the sphere-box contact at the point of the axis
    segment deepest in (or nearest to) the box. If its normal is a face normal of the box
    and the axis is within 45 degrees of that face, the second is the end, farther from
    the first, of the part of the segment over the face, measured along the same face
    normal (kept if within margin)."""
    Rc, pc, sc = C[2], C[3], C[1]
    Rb, c, size = B[2], B[3], B[1]
    r, h = sc[0], sc[1]
    vx, vy, vz = pc[0] - c[0], pc[1] - c[1], pc[2] - c[2]
    cx = Rb[0, 0] * vx + Rb[1, 0] * vy + Rb[2, 0] * vz
    cy = Rb[0, 1] * vx + Rb[1, 1] * vy + Rb[2, 1] * vz
    cz = Rb[0, 2] * vx + Rb[1, 2] * vy + Rb[2, 2] * vz
    ax = Rb[0, 0] * Rc[0, 2] + Rb[1, 0] * Rc[1, 2] + Rb[2, 0] * Rc[2, 2]
    ay = Rb[0, 1] * Rc[0, 2] + Rb[1, 1] * Rc[1, 2] + Rb[2, 1] * Rc[2, 2]
    az = Rb[0, 2] * Rc[0, 2] + Rb[1, 2] * Rc[1, 2] + Rb[2, 2] * Rc[2, 2]
    hx, hy, hz = h * ax, h * ay, h * az
    t1, _ = _segment_box_deepest(cx, cy, cz, hx, hy, hz, size, work)
    hit, d, px, py, pz, nx, ny, nz = _sphere_box_local(cx + t1 * hx, cy + t1 * hy, cz + t1 * hz, r, size, margin)
    if not hit:
        return 0
    _stage_local(work, np.int64(0), Rb, c, d, px, py, pz, nx, ny, nz)
    # second contact along a face normal
    nzero = (1 if nx != 0.0 else 0) + (1 if ny != 0.0 else 0) + (1 if nz != 0.0 else 0)
    if nzero != 1 or h <= 0.0:
        return 1
    a = 0 if nx != 0.0 else (1 if ny != 0.0 else 2)
    fa = -(nx + ny + nz)          # outward face normal is fa * e_a (towards the capsule)
    aa = ax if a == 0 else (ay if a == 1 else az)
    if abs(aa) > SIN45:
        return 1
    lo, hi = -1.0, 1.0
    for j in range(3):
        if j == a:
            continue
        cj = cx if j == 0 else (cy if j == 1 else cz)
        hj = hx if j == 0 else (hy if j == 1 else hz)
        if hj == 0.0:
            if abs(cj) > size[j]:
                return 1
            continue
        ta = (-size[j] - cj) / hj
        tb = (size[j] - cj) / hj
        lo = max(lo, min(ta, tb))
        hi = min(hi, max(ta, tb))
    if lo > hi:
        return 1
    t2 = lo if abs(lo - t1) >= abs(hi - t1) else hi
    if abs(t2 - t1) * h <= 1e-9 * (h + r):
        return 1
    qx, qy, qz = cx + t2 * hx, cy + t2 * hy, cz + t2 * hz
    qa = qx if a == 0 else (qy if a == 1 else qz)
    d2 = fa * qa - size[a] - r
    if d2 > margin:
        return 1
    s = -fa * (r + 0.5 * d2)
    px2 = qx + (s if a == 0 else 0.0)
    py2 = qy + (s if a == 1 else 0.0)
    pz2 = qz + (s if a == 2 else 0.0)
    _stage_local(work, np.int64(1), Rb, c, d2, px2, py2, pz2, nx, ny, nz)
    return 2
