"""Box-box contact (L3): separating-axis test over 15 axes, then a face
manifold by clipping or one edge-edge contact.

Stage 1 finds the axis of largest separation among the 3 + 3 face normals
and the 9 edge cross products, with the pair rejected as soon as one axis
separates by more than the margin (plus a rounding slack proportional to
the boxes' size). Face axes win near-ties: an edge axis must beat the best
face by a relative 1e-6, and an edge axis within ~8 degrees (cosine 0.99)
of the best face axis yields to it unless it is 5% deeper (ODE's and
Bullet's "fudge"). Stage 2: for a face axis, the incident box's face most
opposed to the reference normal is clipped against the reference face's
four side lines (Sutherland-Hodgman); vertices on the straight line
through their neighbours are dropped (an incident edge that grazes a side
line, as when equal boxes are stacked, leaves one mid-edge: it adds no
support, and soft contact would count it as one more spring; MuJoCo
reports the four corners); every remaining vertex within the
margin of the reference plane is a contact (up to 8), its distance the
height above that plane, its position midway. For an edge axis, one
contact at the midpoint of the closest points of the two supporting
edges. This is MuJoCo's rewritten box-box collider (commit 86e98601) and
ODE's ``dBoxBox`` scheme, written anew; constants as MuJoCo's.
"""
import math

import numpy as np
from numba import njit

from .gjk import put_contact
from .narrow_workspace import CLIP0, CLIP1

SEPEPS = 1e-13      # slack on the separation tests, times the summed half-sizes
PAREPS = 1e-16      # squared sine below which an edge cross axis is noise
SGNEPS = 1e-9       # axis component below which a supporting corner is ambiguous
DUPEPS = 1e-14      # squared relative radius for merging clipped vertices
EDGEBIAS = 1e-6     # relative handicap of edge axes on near-ties
COLLINEAR = 1e-9    # sine of the turn below which a clipped vertex lies on its neighbours' line
MAXVERT = 12


@njit(cache=True, nogil=True, inline="always")
def _with(t, k, v):
    """The 3-tuple t with component k replaced by v."""
    return (v if k == 0 else t[0], v if k == 1 else t[1], v if k == 2 else t[2])


@njit(cache=True, nogil=True)
def _clip_axis(work, src, n, dst, coord, sign, limit):
    """Clip the polygon at src (points (x, y, z)) to sign * p[coord] <= limit; returns the
    count written at dst, or -n when every vertex was inside (nothing written)."""
    inside = True
    for k in range(n):
        if sign * work[src + 3 * k + coord] - limit > 0.0:
            inside = False
            break
    if inside:
        return -n
    m = 0
    for k in range(n):
        k1 = k + 1 if k + 1 < n else 0
        dp = sign * work[src + 3 * k + coord] - limit
        dq = sign * work[src + 3 * k1 + coord] - limit
        if dp <= 0.0 and m < MAXVERT:
            for c in range(3):
                work[dst + 3 * m + c] = work[src + 3 * k + c]
            m += 1
        if ((dp < 0.0 and dq > 0.0) or (dp > 0.0 and dq < 0.0)) and m < MAXVERT:
            t = dp / (dp - dq)
            for c in range(3):
                a = work[src + 3 * k + c]
                work[dst + 3 * m + c] = a + t * (work[src + 3 * k1 + c] - a)
            m += 1
    return m


@njit(cache=True, nogil=True)
def _drop_collinear(work, at, n):
    """Remove, in place, the vertices of the polygon at ``at`` (n points
    (x, y, z), convex, in the reference plane's x, y) whose turn is
    straight to a sine of ``COLLINEAR`` (or which repeat their
    predecessor); returns the new count (at least 3 kept)."""
    k = 0
    while n > 3 and k < n:
        kp = k - 1 if k > 0 else n - 1
        kn = k + 1 if k + 1 < n else 0
        ax = work[at + 3 * k] - work[at + 3 * kp]
        ay = work[at + 3 * k + 1] - work[at + 3 * kp + 1]
        bx = work[at + 3 * kn] - work[at + 3 * k]
        by = work[at + 3 * kn + 1] - work[at + 3 * k + 1]
        if abs(ax * by - ay * bx) <= COLLINEAR * math.sqrt((ax * ax + ay * ay) * (bx * bx + by * by)):
            for j in range(3 * k, 3 * (n - 1)):
                work[at + j] = work[at + j + 3]
            n -= 1
        else:
            k += 1
    return n


@njit(cache=True, nogil=True)
def box_box(B1, B2, margin, work):
    R1, p1, s1 = B1[2], B1[3], B1[1]
    R2, p2, s2 = B2[2], B2[3], B2[1]
    # rot[i, j]: component i (box1 frame) of axis j of box2
    r00 = R1[0, 0] * R2[0, 0] + R1[1, 0] * R2[1, 0] + R1[2, 0] * R2[2, 0]
    r01 = R1[0, 0] * R2[0, 1] + R1[1, 0] * R2[1, 1] + R1[2, 0] * R2[2, 1]
    r02 = R1[0, 0] * R2[0, 2] + R1[1, 0] * R2[1, 2] + R1[2, 0] * R2[2, 2]
    r10 = R1[0, 1] * R2[0, 0] + R1[1, 1] * R2[1, 0] + R1[2, 1] * R2[2, 0]
    r11 = R1[0, 1] * R2[0, 1] + R1[1, 1] * R2[1, 1] + R1[2, 1] * R2[2, 1]
    r12 = R1[0, 1] * R2[0, 2] + R1[1, 1] * R2[1, 2] + R1[2, 1] * R2[2, 2]
    r20 = R1[0, 2] * R2[0, 0] + R1[1, 2] * R2[1, 0] + R1[2, 2] * R2[2, 0]
    r21 = R1[0, 2] * R2[0, 1] + R1[1, 2] * R2[1, 1] + R1[2, 2] * R2[2, 1]
    r22 = R1[0, 2] * R2[0, 2] + R1[1, 2] * R2[1, 2] + R1[2, 2] * R2[2, 2]
    rot = ((r00, r01, r02), (r10, r11, r12), (r20, r21, r22))
    dx, dy, dz = p2[0] - p1[0], p2[1] - p1[1], p2[2] - p1[2]
    q1 = (R1[0, 0] * dx + R1[1, 0] * dy + R1[2, 0] * dz,
          R1[0, 1] * dx + R1[1, 1] * dy + R1[2, 1] * dz,
          R1[0, 2] * dx + R1[1, 2] * dy + R1[2, 2] * dz)       # centre 2 in frame 1
    q2 = (-(R2[0, 0] * dx + R2[1, 0] * dy + R2[2, 0] * dz),
          -(R2[0, 1] * dx + R2[1, 1] * dy + R2[2, 1] * dz),
          -(R2[0, 2] * dx + R2[1, 2] * dy + R2[2, 2] * dz))    # centre 1 in frame 2
    a1 = (s1[0], s1[1], s1[2])
    a2 = (s2[0], s2[1], s2[2])
    septol = margin + SEPEPS * (a1[0] + a1[1] + a1[2] + a2[0] + a2[1] + a2[2])

    # ---- stage 1: separating axes
    best = -1e300
    code = -1
    for i in range(3):
        rad2 = abs(rot[i][0]) * a2[0] + abs(rot[i][1]) * a2[1] + abs(rot[i][2]) * a2[2]
        sep = abs(q1[i]) - a1[i] - rad2
        if sep > septol:
            return 0
        if sep > best:
            best = sep
            code = i
    for j in range(3):
        rad1 = abs(rot[0][j]) * a1[0] + abs(rot[1][j]) * a1[1] + abs(rot[2][j]) * a1[2]
        sep = abs(q2[j]) - a2[j] - rad1
        if sep > septol:
            return 0
        if sep > best:
            best = sep
            code = 3 + j
    sep_face = best
    code_face = code
    for i in range(3):
        i1 = (i + 1) % 3
        i2 = (i + 2) % 3
        for j in range(3):
            # e_i x (axis j of box2), in frame 1: component i is zero
            u1 = -rot[i2][j]
            u2 = rot[i1][j]
            nn = u1 * u1 + u2 * u2
            if nn < PAREPS:
                continue
            inv = 1.0 / math.sqrt(nn)
            u1 *= inv
            u2 *= inv
            rad1 = a1[i1] * abs(u1) + a1[i2] * abs(u2)
            j1 = (j + 1) % 3
            j2 = (j + 2) % 3
            w1 = u1 * rot[i1][j1] + u2 * rot[i2][j1]
            w2 = u1 * rot[i1][j2] + u2 * rot[i2][j2]
            rad2 = a2[j1] * abs(w1) + a2[j2] * abs(w2)
            sep = abs(u1 * q1[i1] + u2 * q1[i2]) - rad1 - rad2
            if sep > septol:
                return 0
            if sep - EDGEBIAS * abs(sep) > best and sep > sep_face:
                best = sep
                code = 6 + 3 * i + j
    if code >= 6:
        # an edge axis close to the best face axis yields to it unless 5% deeper
        i = (code - 6) // 3
        j = (code - 6) % 3
        i1 = (i + 1) % 3
        i2 = (i + 2) % 3
        u = _with(_with((0.0, 0.0, 0.0), i1, -rot[i2][j]), i2, rot[i1][j])
        un = math.sqrt(u[0] * u[0] + u[1] * u[1] + u[2] * u[2])
        if code_face < 3:
            fd = abs(u[code_face]) / un
        else:
            f = code_face - 3
            fd = abs(u[0] * rot[0][f] + u[1] * rot[1][f] + u[2] * rot[2][f]) / un
        if fd > 0.99 and best < sep_face + 0.05 * abs(sep_face) + 1e-15:
            code = code_face
            best = sep_face

    # ---- stage 2a: edge-edge
    if code >= 6:
        i = (code - 6) // 3
        j = (code - 6) % 3
        i1 = (i + 1) % 3
        i2 = (i + 2) % 3
        j1 = (j + 1) % 3
        j2 = (j + 2) % 3
        ax = _with(_with((0.0, 0.0, 0.0), i1, -rot[i2][j]), i2, rot[i1][j])
        un = math.sqrt(ax[0] * ax[0] + ax[1] * ax[1] + ax[2] * ax[2])
        if ax[0] * q1[0] + ax[1] * q1[1] + ax[2] * q1[2] < 0.0:
            un = -un
        ax = (ax[0] / un, ax[1] / un, ax[2] / un)
        b2 = (ax[0] * rot[0][0] + ax[1] * rot[1][0] + ax[2] * rot[2][0],
              ax[0] * rot[0][1] + ax[1] * rot[1][1] + ax[2] * rot[2][1],
              ax[0] * rot[0][2] + ax[1] * rot[1][2] + ax[2] * rot[2][2])
        amb1 = -1
        if abs(ax[i1]) < SGNEPS:
            amb1 = i1
        elif abs(ax[i2]) < SGNEPS:
            amb1 = i2
        amb2 = -1
        if abs(b2[j1]) < SGNEPS:
            amb2 = j1
        elif abs(b2[j2]) < SGNEPS:
            amb2 = j2
        d2 = (rot[0][j], rot[1][j], rot[2][j])   # edge direction of box2, frame 1
        bb = d2[i]
        den = 1.0 - bb * bb
        bestg = 1e300
        w1x = w1y = w1z = w2x = w2y = w2z = 0.0
        for v1 in range(2 if amb1 >= 0 else 1):
            for v2 in range(2 if amb2 >= 0 else 1):
                c1 = _with(_with((0.0, 0.0, 0.0), i1, a1[i1] if ax[i1] >= 0.0 else -a1[i1]),
                           i2, a1[i2] if ax[i2] >= 0.0 else -a1[i2])
                if amb1 >= 0 and v1 == 1:
                    c1 = _with(c1, amb1, -c1[amb1])
                cc = _with(_with((0.0, 0.0, 0.0), j1, -a2[j1] if b2[j1] >= 0.0 else a2[j1]),
                           j2, -a2[j2] if b2[j2] >= 0.0 else a2[j2])
                if amb2 >= 0 and v2 == 1:
                    cc = _with(cc, amb2, -cc[amb2])
                c2x = rot[0][0] * cc[0] + rot[0][1] * cc[1] + rot[0][2] * cc[2] + q1[0]
                c2y = rot[1][0] * cc[0] + rot[1][1] * cc[1] + rot[1][2] * cc[2] + q1[1]
                c2z = rot[2][0] * cc[0] + rot[2][1] * cc[1] + rot[2][2] * cc[2] + q1[2]
                ex, ey, ez = c2x - c1[0], c2y - c1[1], c2z - c1[2]
                e1 = ex if i == 0 else (ey if i == 1 else ez)
                e2 = d2[0] * ex + d2[1] * ey + d2[2] * ez
                s = 0.0 if den < 1e-15 else (e1 - bb * e2) / den
                s = min(max(s, -a1[i]), a1[i])
                t = min(max(bb * s - e2, -a2[j]), a2[j])
                s = min(max(e1 + bb * t, -a1[i]), a1[i])
                x1 = c1[0] + (s if i == 0 else 0.0)
                y1 = c1[1] + (s if i == 1 else 0.0)
                z1 = c1[2] + (s if i == 2 else 0.0)
                x2, y2, z2 = c2x + t * d2[0], c2y + t * d2[1], c2z + t * d2[2]
                g = (x2 - x1) ** 2 + (y2 - y1) ** 2 + (z2 - z1) ** 2
                if g < bestg:
                    bestg = g
                    w1x, w1y, w1z, w2x, w2y, w2z = x1, y1, z1, x2, y2, z2
        dist = (w2x - w1x) * ax[0] + (w2y - w1y) * ax[1] + (w2z - w1z) * ax[2]
        if dist > septol:
            return 0
        mx, my, mz = 0.5 * (w1x + w2x), 0.5 * (w1y + w2y), 0.5 * (w1z + w2z)
        put_contact(work, np.int64(0), dist,
                    R1[0, 0] * mx + R1[0, 1] * my + R1[0, 2] * mz + p1[0],
                    R1[1, 0] * mx + R1[1, 1] * my + R1[1, 2] * mz + p1[1],
                    R1[2, 0] * mx + R1[2, 1] * my + R1[2, 2] * mz + p1[2],
                    R1[0, 0] * ax[0] + R1[0, 1] * ax[1] + R1[0, 2] * ax[2],
                    R1[1, 0] * ax[0] + R1[1, 1] * ax[1] + R1[1, 2] * ax[2],
                    R1[2, 0] * ax[0] + R1[2, 1] * ax[1] + R1[2, 2] * ax[2])
        return 1

    # ---- stage 2b: face contact
    ref1 = code < 3
    a = code if ref1 else code - 3
    sref = a1 if ref1 else a2
    sinc = a2 if ref1 else a1
    Rr = R1 if ref1 else R2
    pr = p1 if ref1 else p2
    qi = q1 if ref1 else q2                     # incident centre in the reference frame
    # inc[r][c]: component r (reference frame) of incident axis c
    if ref1:
        inc = rot
    else:
        inc = ((rot[0][0], rot[1][0], rot[2][0]), (rot[0][1], rot[1][1], rot[2][1]),
               (rot[0][2], rot[1][2], rot[2][2]))
    sgn = 1.0 if qi[a] >= 0.0 else -1.0
    bi = 0
    for k in range(1, 3):
        if abs(inc[a][k]) > abs(inc[a][bi]):
            bi = k
    ti = -1.0 if sgn * inc[a][bi] > 0.0 else 1.0
    ax_ = (a + 1) % 3
    ay_ = (a + 2) % 3
    bu = (bi + 1) % 3
    bv = (bi + 2) % 3
    # incident face: centre and half-edges in (x, y, z) = (ref axis ax_, ref axis ay_, height)
    cx = qi[ax_] + ti * sinc[bi] * inc[ax_][bi]
    cy = qi[ay_] + ti * sinc[bi] * inc[ay_][bi]
    cz = sgn * (qi[a] + ti * sinc[bi] * inc[a][bi]) - sref[a]
    ux, uy, uz = sinc[bu] * inc[ax_][bu], sinc[bu] * inc[ay_][bu], sgn * sinc[bu] * inc[a][bu]
    vx, vy, vz = sinc[bv] * inc[ax_][bv], sinc[bv] * inc[ay_][bv], sgn * sinc[bv] * inc[a][bv]
    for k in range(4):
        su = 1.0 if k == 0 or k == 3 else -1.0
        sv = 1.0 if k < 2 else -1.0
        work[CLIP0 + 3 * k] = cx + su * ux + sv * vx
        work[CLIP0 + 3 * k + 1] = cy + su * uy + sv * vy
        work[CLIP0 + 3 * k + 2] = cz + su * uz + sv * vz
    n = 4
    cur = CLIP0
    spare = CLIP1
    for pas in range(4):
        coord = 0 if pas < 2 else 1
        sign = 1.0 if pas % 2 == 0 else -1.0
        lim = sref[ax_] if coord == 0 else sref[ay_]
        m = _clip_axis(work, np.int64(cur), np.int64(n), np.int64(spare), np.int64(coord), sign, lim)
        if m >= 0:
            n = m
            cur, spare = spare, cur
    n = _drop_collinear(work, np.int64(cur), np.int64(n))
    # accept vertices within the margin band, merging near-duplicates
    dupe2 = DUPEPS * (sref[ax_] * sref[ax_] + sref[ay_] * sref[ay_])
    ns = -1.0 if not ref1 else 1.0
    nx, ny, nz = ns * sgn * Rr[0, a], ns * sgn * Rr[1, a], ns * sgn * Rr[2, a]
    cnt = 0
    for k in range(n):
        x, y, z = work[cur + 3 * k], work[cur + 3 * k + 1], work[cur + 3 * k + 2]
        if z > margin:
            continue
        dup = False
        for q in range(k):
            if work[cur + 3 * q + 2] > margin:
                continue
            ddx = work[cur + 3 * q] - x
            ddy = work[cur + 3 * q + 1] - y
            if ddx * ddx + ddy * ddy < dupe2:
                dup = True
                break
        if dup:
            continue
        lp = _with(_with(_with((0.0, 0.0, 0.0), ax_, x), ay_, y), a, sgn * (sref[a] + 0.5 * z))
        put_contact(work, np.int64(cnt), z,
                    Rr[0, 0] * lp[0] + Rr[0, 1] * lp[1] + Rr[0, 2] * lp[2] + pr[0],
                    Rr[1, 0] * lp[0] + Rr[1, 1] * lp[1] + Rr[1, 2] * lp[2] + pr[1],
                    Rr[2, 0] * lp[0] + Rr[2, 1] * lp[1] + Rr[2, 2] * lp[2] + pr[2],
                    nx, ny, nz)
        cnt += 1
        if cnt >= 8:
            break
    return cnt
