"""Narrow phase against MuJoCo (mj_collision, mj_geomDistance) and coal (distance,
computeContactPatch), on seeded random poses of every pair of convex shapes, plus the
measured anchor values of shared/notes/contact-anchors.md and the degenerate cases.

Tolerances:
* closed-form pairs: 1e-6 on distance, normal and position (the same formulas as MuJoCo's;
  observed agreement ~1e-15).
* GJK/EPA pairs: distance 1e-9. Normals 1e-9 for polytope pairs (finite convergence).
  When a curved surface is involved the normal is the minimiser of h(n), the support
  function of A - B; EPA approximates the curved Minkowski surface by facets, so its
  normal is tilted by ~sqrt(tolerance x curvature): MuJoCo (ccd_tolerance tightened to
  1e-12) carries up to ~1.4e-5 of that error (measured against a Nelder-Mead minimum of
  h), this code polishes smooth cases by Newton steps to ~1e-8. Two regimes: where h has
  a kink (a box's support switches corners) h grows linearly with the angle and the
  normal is well determined; where h is flat (a cylinder rim against a vertex: flat to
  1e-11 over 1e-4 rad) the angle is not, and the normal is judged by the value of h it
  gives. So the normal must be within 3e-5 of MuJoCo's, or give an h within 1e-9 of
  h(MuJoCo's normal) (h evaluated with numpy supports written here), and in any case lie
  within 1e-4 of it. Separated pairs: 1e-7 on h, because GJK stops on a distance gap
  of 1e-13 x scale, which bounds the normal only to ~sqrt(gap / distance) where the
  curvature is one-sided (measured 2.8e-8 on h for a cylinder rim 7.6 mm from a hull). Positions 3e-5 where the contact point is unique (a strictly
  convex shape is involved); where a flat part touches a flat part the deepest point is
  not unique and only distance and normal are compared.
MuJoCo's multiccd (on by default in 4.x: re-runs with the geoms rotated by 1e-3 rad) is
disabled in the single-contact comparisons: it reports perturbed normals and depths.
"""
import numpy as np
import pytest

from multibody.collision.narrow import (EPA_FAILURE, MAX_CONTACTS, UNSUPPORTED, collide,
                                        collide_pair, distance, narrow_workspace)
from multibody.collision.shapes import (BOX, CAPSULE, CONVEX, CYLINDER, ELLIPSOID, HFIELD, MESH,
                                        PLANE, SPHERE, SHAPE_NAMES)

from .narrow_oracles import (coal_distance, coal_patch, match_sets, mj_build, mj_contacts,
                            mj_distance, mj_geoms, random_rotation)

I3 = np.eye(3)
CODES = [PLANE, SPHERE, CAPSULE, ELLIPSOID, CYLINDER, BOX, CONVEX]
CLOSED = {(PLANE, SPHERE), (PLANE, CAPSULE), (PLANE, CYLINDER), (PLANE, BOX), (SPHERE, SPHERE),
          (SPHERE, CAPSULE), (SPHERE, CYLINDER), (SPHERE, BOX), (CAPSULE, CAPSULE), (BOX, BOX)}
ALL = [(a, b) for i, a in enumerate(CODES) for b in CODES[i:] if not (a == PLANE and b == PLANE)]
GJKP = [p for p in ALL if p not in CLOSED and p != (CAPSULE, BOX) and p[0] != PLANE]
CURVED = {SPHERE, CAPSULE, ELLIPSOID, CYLINDER}
STRICT = {SPHERE, ELLIPSOID}
MARGIN = 0.01


def pid(p):
    return f"{SHAPE_NAMES[p[0]]}-{SHAPE_NAMES[p[1]]}"


def rand_geom(t, rng):
    s = np.zeros(3)
    if t == SPHERE:
        s[0] = rng.uniform(.05, .15)
    elif t in (CAPSULE, CYLINDER):
        s[:2] = rng.uniform(.03, .1), rng.uniform(.05, .2)
    elif t in (ELLIPSOID, BOX):
        s[:] = rng.uniform(.04, .15, 3)
    v = np.zeros((0, 3))
    if t == CONVEX:
        v = rng.normal(size=(16, 3))
        v /= np.linalg.norm(v, axis=1)[:, None]
        v *= rng.uniform(.05, .15, 3)
    return [t, s, random_rotation(rng), np.zeros(3), v]


def bound(g):
    t, s = g[0], g[1]
    return {SPHERE: s[0], CAPSULE: s[0] + s[1], ELLIPSOID: max(s), CYLINDER: np.hypot(s[0], s[1]),
            BOX: np.linalg.norm(s), PLANE: 0.0, CONVEX: 0.15}[t]


def random_pair(pair, rng, spread=(0.4, 1.0)):
    g1, g2 = rand_geom(pair[0], rng), rand_geom(pair[1], rng)
    if pair[0] == PLANE:
        g1[2] = random_rotation(rng)
        g2[3] = g1[2] @ np.array([rng.uniform(-.1, .1), rng.uniform(-.1, .1), bound(g2) * rng.uniform(-.2, 1.0)])
    else:
        u = rng.normal(size=3)
        u /= np.linalg.norm(u)
        g2[3] = u * (bound(g1) + bound(g2)) * rng.uniform(*spread)
    return g1, g2


def np_support(g, n):
    """Support point of a geom along n (full shape), numpy; independent of the code under
    test."""
    t, s, R, p, v = g[0], np.asarray(g[1], float), g[2], g[3], g[4]
    l = R.T @ n
    if t == SPHERE:
        x = s[0] * l / np.linalg.norm(l)
    elif t == CAPSULE:
        x = np.array([0, 0, s[1] * np.sign(l[2])]) + s[0] * l / np.linalg.norm(l)
    elif t == ELLIPSOID:
        x = s ** 2 * l / np.sqrt(np.sum(s ** 2 * l * l))
    elif t == CYLINDER:
        rho = np.hypot(l[0], l[1])
        x = np.array([s[0] * l[0] / rho, s[0] * l[1] / rho, s[1] * np.sign(l[2])])
    elif t == BOX:
        x = s * np.where(l >= 0, 1.0, -1.0)
    else:
        x = v[np.argmax(v @ l)]
    return R @ x + p


def h_pair(A, B, n):
    n = np.asarray(n, float) / np.linalg.norm(n)
    return float(n @ (np_support(A, n) - np_support(B, -n)))


def ours_in_mj_order(m, d, g1, g2, cons, margin=MARGIN):
    """Our contacts for the pair in the order MuJoCo reports (geom[0] first)."""
    G1, G2 = mj_geoms(m, d, g1, g2)
    A, B = (G1, G2) if cons[0][0] == (0, 1) else (G2, G1)
    return collide(A, B, margin=margin), A, B


def rows(dist, pos, normal):
    return np.c_[np.asarray(pos, float).reshape(-1, 3), np.asarray(dist, float)[:, None],
                 np.asarray(normal, float).reshape(-1, 3)]


def check_frames(frame):
    for F in frame:
        assert np.allclose(F @ F.T, I3, atol=1e-12)
        assert np.linalg.det(F) == pytest.approx(1.0, abs=1e-12)


def trials(pair, n, seed):
    rng = np.random.default_rng(seed + 1000 * pair[0] + pair[1])
    got = 0
    for _ in range(40 * n):
        g1, g2 = random_pair(pair, rng)
        m, d = mj_build(g1, g2, margin=MARGIN)
        cons = mj_contacts(m, d)
        if not cons:
            continue
        yield m, d, g1, g2, cons
        got += 1
        if got >= n:
            return


# ------------------------------------------------------------------ closed-form pairs

def _closed_form(pair, n, seed):
    """Compare n random touching poses with MuJoCo; returns how many were compared."""
    compared = 0
    for m, d, g1, g2, cons in trials(pair, n, seed):
        compared += 1
        (dist, pos, frame), A, B = ours_in_mj_order(m, d, g1, g2, cons)
        check_frames(frame)
        mine = rows(dist, pos, frame[:, 0])
        theirs = rows([c[1] for c in cons], [c[2] for c in cons], [c[3] for c in cons])
        assert match_sets(mine, theirs, 1e-6), (pid(pair), mine, theirs)
    return compared


@pytest.mark.parametrize("pair", sorted(CLOSED), ids=pid)
def test_closed_form_pairs_match_mujoco(pair):
    assert _closed_form(pair, 8, 0) == 8  # every trial found a MuJoCo contact to compare


@pytest.mark.slow
@pytest.mark.parametrize("pair", sorted(CLOSED), ids=pid)
def test_closed_form_pairs_match_mujoco_fuzz(pair):
    assert _closed_form(pair, 150, 1) == 150


# ------------------------------------------------------------------------ GJK/EPA pairs

def _gjk_pair(pair, n, seed):
    curved = pair[0] in CURVED or pair[1] in CURVED
    ntol = 3e-5 if curved else 1e-9
    strict = pair[0] in STRICT or pair[1] in STRICT
    compared = 0
    for m, d, g1, g2, cons in trials(pair, n, seed):
        compared += 1
        (dist, pos, frame), A, B = ours_in_mj_order(m, d, g1, g2, cons)
        assert len(cons) == 1
        check_frames(frame)
        k = int(np.argmin(dist))
        assert dist[k] == pytest.approx(cons[0][1], abs=1e-9), pid(pair)
        if curved:
            # The normal minimises h(n), the support function of A - B (the signed distance
            # is -min h); near kinks (a cylinder's rim against a vertex) h is flat to 1e-11
            # over 1e-4 rad, so the normal is compared through h, evaluated here with
            # independent numpy supports, and loosely in angle.
            close = np.abs(frame[k, 0] - cons[0][3]).max() < 3e-5
            as_good = h_pair(A, B, frame[k, 0]) <= h_pair(A, B, cons[0][3]) + (1e-9 if dist[k] < 0 else 1e-7)
            assert close or as_good, pid(pair)
            assert np.abs(frame[k, 0] - cons[0][3]).max() < 1e-4, pid(pair)
        else:
            assert np.abs(frame[k, 0] - cons[0][3]).max() < ntol, pid(pair)
        if strict or not curved:
            # polytope pairs: the deepest point is unique unless faces are parallel, which
            # random poses never give
            assert np.abs(pos[k] - cons[0][2]).max() < (3e-5 if curved else 1e-7), pid(pair)
        assert len(dist) <= MAX_CONTACTS and np.all(dist <= MARGIN)
    return compared


@pytest.mark.parametrize("pair", GJKP, ids=pid)
def test_gjk_pairs_match_mujoco(pair):
    assert _gjk_pair(pair, 6, 0) == 6  # every trial found a MuJoCo contact to compare


@pytest.mark.slow
@pytest.mark.parametrize("pair", GJKP, ids=pid)
def test_gjk_pairs_match_mujoco_fuzz(pair):
    assert _gjk_pair(pair, 100, 1) == 100


@pytest.mark.parametrize("pair", [(PLANE, ELLIPSOID), (PLANE, CONVEX)], ids=pid)
def test_plane_support_pairs_match_mujoco(pair):
    """Plane-ellipsoid: 1 contact at the support point; plane-convex: the deepest vertex is
    MuJoCo's first contact (MuJoCo adds up to 2 more vertices, this code up to 3)."""
    for m, d, g1, g2, cons in trials(pair, 8, 0):
        (dist, pos, frame), A, B = ours_in_mj_order(m, d, g1, g2, cons)
        assert dist.min() == pytest.approx(cons[0][1], abs=1e-12)
        k = int(np.argmin(dist))
        assert np.allclose(pos[k], cons[0][2], atol=1e-12)
        assert np.allclose(frame[:, 0], cons[0][3], atol=1e-15)
        if pair[1] == ELLIPSOID:
            assert len(dist) == 1
        else:
            # every MuJoCo contact is a hull vertex within margin: ours are too
            assert 1 <= len(dist) <= 4 and np.all(dist <= MARGIN)


def _chamfered_slab(noise=0.0, seed=0):
    """A convex hull with a flat square bottom (half-width 0.05 at z = -0.02), a wider ring
    5 mm above it (half-width 0.06, a chamfer) and a top face; ``noise``: random heights of
    that size added to the bottom corners (a tessellated sole)."""
    import itertools
    sq = list(itertools.product((-1.0, 1.0), (-1.0, 1.0)))
    rng = np.random.default_rng(seed)
    V = [(0.05 * x, 0.05 * y, -0.02 + noise * rng.random()) for x, y in sq]
    V += [(0.06 * x, 0.06 * y, -0.015) for x, y in sq] + [(0.06 * x, 0.06 * y, 0.02) for x, y in sq]
    return np.array(V)


def test_plane_convex_keeps_the_resting_face():
    """A hull resting on its flat bottom face with a chamfer within the margin: the contacts
    are the face's 4 corners, touching, not the deepest corner and 3 chamfer vertices 5 mm
    up (farthest-point sampling over every vertex within the margin chose those: the body
    then rested on one corner and sank and tilted). With its bottom corners at heights
    differing by < 1e-3 x the hull's radius they are still the 4 contacts."""
    plane = (PLANE, [], I3, np.zeros(3))
    for noise in (0.0, 5e-5):
        V = _chamfered_slab(noise)
        dist, pos, frame = collide(plane, (CONVEX, [], I3, np.array([0.0, 0.0, 0.02]), V), margin=0.01)
        assert len(dist) == 4
        np.testing.assert_allclose(np.sort(dist), np.sort(V[:4, 2] + 0.02), atol=1e-15)
        np.testing.assert_allclose(np.abs(pos[:, :2]), 0.05, atol=1e-15)
        assert np.allclose(frame[:, 0], [0.0, 0.0, 1.0])
    # lifted 1 cm up: only the margin reaches the hull; the deepest vertices are still the corners
    dist, pos, _ = collide(plane, (CONVEX, [], I3, np.array([0.0, 0.0, 0.025]), _chamfered_slab()), margin=0.01)
    assert len(dist) == 4 and np.allclose(dist, 0.005) and np.allclose(np.abs(pos[:, :2]), 0.05)


#: a configuration of Talos (talos_reduced.urdf, floating base) reached by a limp Talos
#: lying on the ground 18.08 s after a drop (tests/contact/test_verification.py's soak)
TALOS_Q = [
    -0.565522718045883, 0.1304495248725158, 0.22094895965334518, 0.7319798330869547, -0.12299269767937117,
    -0.6701281856748839, -0.002556371575728567, -0.13417567007940845, -0.15438518964312833, -0.261799387799,
    -0.08374471050382747, 0.523598775598, 0.5666522024245868, -0.2784620539407054, -0.2372764339169329,
    0.31979324183338703, -0.8796387955752458, 0.4801929340848882, -0.30755403326292047, -0.523598775598,
    -0.9591613334315428, -0.04429684984644293, -0.40638770551776227, 1.203552720649577, 1.0607500253044344,
    -0.698131700798, -0.19089789316724107, 0.6014283757885907, 0.13783366254189644, -0.9399091735629793,
    2.065132958713656, 0.21154002906945277, -0.12807933090838394, -1.4034736891217618, -0.17542560640066274,
    -1.1246233012729587, 2.1860697402825715, 0.0430648525040976, -0.5236]


def test_gjk_on_a_flat_simplex_of_separated_hulls():
    """Talos' torso_2_link and arm_left_2_link hulls at TALOS_Q, 12.2 mm apart: GJK's last
    tetrahedron had four coplanar support points (parallel faces of the hulls; a height of
    1e-18 m over 0.18 m edges), the signs of its face tests were round-off, and it declared
    the origin inside: EPA then failed (status -2) and the simulator stopped with a
    SimulationError on a pair that was not even in contact. The distance is coal's."""
    import os
    import multibody as mb
    from oracles import robots_dir
    model = mb.load_urdf(os.path.join(robots_dir(), "talos_data/robots/talos_reduced.urdf"), floating_base=True)
    X = mb.forward_kinematics(model, np.array(TALOS_Q))
    geoms = []
    for name in ("torso_2_link_0", "arm_left_2_link_0"):
        g = next(g for g in model.collision_geometries if g.name == name)
        T = X[g.body] @ g.placement
        geoms.append((CONVEX, [], T[:3, :3], T[:3, 3], g.vertices))
    d, p1, p2, normal, status = distance(*geoms)
    import coal  # coal_distance's hulls keep their triangles, which qhull refuses for these meshes
    hulls = []
    for g in geoms:
        pts = coal.StdVec_Vec3s()
        pts.extend([np.asarray(v, float) for v in g[4]])
        hulls.append((coal.Convex.convexHull(pts, False, ""), coal.Transform3s(g[2], g[3])))
    res = coal.DistanceResult()
    expected = coal.distance(*hulls[0], *hulls[1], coal.DistanceRequest(), res)
    n_co = np.array(res.normal)
    assert expected == pytest.approx(0.0121571581, abs=1e-10)
    assert status == 0 and d == pytest.approx(expected, abs=1e-12)
    assert np.allclose(normal, n_co, atol=1e-6)
    assert collide(*geoms, margin=0.01)[0].size == 0  # beyond the margin: no contact, no failure


def test_capsule_box_against_coal_and_mujoco():
    """Capsule-box uses its own contact choice (not MuJoCo's): its deepest contact is the
    true signed distance when the capsule's axis is outside the box (compared with coal's
    and MuJoCo's GJK distance), and a capsule lying flat on a face gives MuJoCo's 2 end
    contacts."""
    rng = np.random.default_rng(5)
    done = 0
    for _ in range(400):
        g1, g2 = random_pair((CAPSULE, BOX), rng, spread=(0.5, 1.0))
        out = collide(g1, g2, margin=MARGIN)
        dco, nco, p1, p2 = coal_distance(g1, g2)
        # axis segment outside the box: the capsule's core does not enter it
        core = [CAPSULE, np.array([1e-9, g1[1][1], 0]), g1[2], g1[3], g1[4]]
        if distance(core, g2)[0] <= 0 or dco > MARGIN:
            continue
        assert len(out[0]) >= 1
        k = int(np.argmin(out[0]))
        assert out[0][k] == pytest.approx(dco, abs=1e-9)
        if dco > 1e-6:
            assert np.allclose(out[2][k, 0], nco, atol=1e-6)
        m, d = mj_build(g1, g2, margin=MARGIN)
        assert out[0][k] == pytest.approx(mj_distance(m, d)[0], abs=1e-9)
        done += 1
    assert done >= 20
    # flush: a capsule along x lying on the top face, 1 mm deep
    Rx = np.array([[0, 0, 1.0], [0, 1, 0], [-1, 0, 0]])  # capsule z axis -> world x
    for g1, g2 in [([CAPSULE, [.05, .08, 0], Rx, [0.01, 0.02, 0.149]], [BOX, [.1, .1, .1], I3, [0, 0, 0]])]:
        m, d = mj_build(g1, g2)
        cons = mj_contacts(m, d)
        (dist, pos, frame), _, _ = ours_in_mj_order(m, d, g1, g2, cons, margin=0.0)
        assert len(dist) == 2 == len(cons)
        assert match_sets(rows(dist, pos, frame[:, 0]), rows(*zip(*[c[1:] for c in cons])), 1e-12)


# --------------------------------------------------------------------- separated pairs

@pytest.mark.parametrize("pair", [p for p in ALL if p[0] != PLANE], ids=pid)
def test_separated_distance_vs_mujoco_and_coal(pair):
    rng = np.random.default_rng(7 + 10 * pair[0] + pair[1])
    curved = pair[0] in CURVED or pair[1] in CURVED
    for _ in range(5):
        g1, g2 = random_pair(pair, rng, spread=(1.05, 1.6))
        m, d = mj_build(g1, g2)
        G1, G2 = mj_geoms(m, d, g1, g2)
        dm, f0, f1 = mj_distance(m, d)
        ds, q1, q2, n, st = distance(G1, G2)
        assert st == 0 and ds > 0
        assert ds == pytest.approx(dm, abs=1e-9)
        assert np.allclose(q2 - q1, ds * n, atol=1e-12)
        dc, nc, c1, c2 = coal_distance(G1, G2)
        assert ds == pytest.approx(dc, abs=1e-9)
        # witness points are unique here (random poses: no parallel flat parts)
        wt = 3e-5 if curved else 1e-7
        if pair[0] in STRICT or pair[1] in STRICT or not curved:
            assert np.allclose(q1, f0, atol=wt) and np.allclose(q2, f1, atol=wt)
            assert np.allclose(q1, c1, atol=wt) and np.allclose(q2, c2, atol=wt)


def test_plane_distance_and_penetrating_distance_vs_coal():
    rng = np.random.default_rng(11)
    for t in (SPHERE, CAPSULE, ELLIPSOID, CYLINDER, BOX, CONVEX):
        g1, g2 = random_pair((PLANE, t), rng)
        dc, nc, c1, c2 = coal_distance(g1, g2)
        ds, q1, q2, n, st = distance(g1, g2)
        assert ds == pytest.approx(dc, abs=1e-9) and np.allclose(n, nc, atol=1e-12)
        ds2, r1, r2, n2, _ = distance(g2, g1)          # swapped: flipped normal, same points
        assert ds2 == pytest.approx(ds, abs=1e-15) and np.allclose(n2, -n)
        assert np.allclose(r1, q2) and np.allclose(r2, q1)
    # deep penetration: MuJoCo's GJK/EPA (coal's EPA is not used here: on the cylinder-
    # ellipsoid case below it returns -0.2567 where MuJoCo and this code agree on -0.15714)
    for pair in [(ELLIPSOID, BOX), (BOX, CONVEX), (CYLINDER, ELLIPSOID), (CONVEX, CONVEX)]:
        g1, g2 = random_pair(pair, rng, spread=(0.05, 0.25))
        m, d = mj_build(g1, g2)
        G1, G2 = mj_geoms(m, d, g1, g2)
        ds, q1, q2, n, st = distance(G1, G2)
        dm, f0, f1 = mj_distance(m, d)
        assert ds < 0 and ds == pytest.approx(dm, abs=1e-8)
        assert np.allclose(q2 - q1, ds * n, atol=1e-12)


def test_needle_simplex_on_a_cylinder_is_not_taken_for_an_intersection():
    """A cylinder 4 cm from a box (the arm's link3 and hand, met by a PD run:
    `multibody simulate` with implicit Euler). GJK's support points creep
    along the cylinder's curved side, and the last simplex is a needle
    (three vertices within 1e-6 m, 0.17 m from the fourth) whose face tests
    had a sign that was round-off: GJK reported an intersection and EPA
    failed (a SimulationError in the step). Against coal."""
    cyl = (CYLINDER, (0.055, 0.158),
           np.array([[-0.7043804004108727, 0.6821679484014989, 0.1962017881944722],
                     [-0.676922670490294, -0.5623855693153388, -0.47486647555091854],
                     [-0.21359763503678497, -0.46730007660982914, 0.8579083218544625]]),
           np.array([0.06199869229771571, -0.15005824951382402, 0.6040990297035755]))
    box = (BOX, (0.03, 0.09, 0.04),
           np.array([[0.37203241232325823, -0.8930591922188419, 0.25305565272162245],
                     [0.8729929846275639, 0.2440091815260804, -0.42230648600516457],
                     [0.3153967865593991, 0.3780275102745853, 0.8704137340963795]]),
           np.array([-0.11421039889214392, -0.08730355202446612, 0.4063811016335387]))
    dc, nc, c1, c2 = coal_distance(cyl, box)
    ds, q1, q2, n, st = distance(cyl, box)
    assert dc > 0.04 and ds == pytest.approx(dc, abs=1e-9)
    assert np.allclose(q1, c1, atol=1e-6) and np.allclose(q2, c2, atol=1e-6)
    assert len(collide(cyl, box)[0]) == 0  # separated: no contact (it raised the EPA failure)


def test_touching_cylinders_where_epa_fails():
    """Two of the arm's cylinders (link1 and link3, met by the README's
    example) touching within round-off: the rim of one on the side of the
    other, coal's distance 1.9e-12 m. GJK's distance and EPA's depth are ~0
    and EPA's polytope is flat: the narrow phase raised "no penetration depth
    could be computed" (a SimulationError in the step). The shapes are now
    measured with one moved 1e-7 of their size apart and moved back
    (gjk._touching_distance). Against coal."""
    c1 = (CYLINDER, (0.06, 0.084),
          np.array([[0.9883486673488376, 0.15220680585892576, 0.0],
                    [-0.15220680585892576, 0.9883486673488376, 0.0],
                    [0.0, 0.0, 1.0]]), np.array([0.0, 0.0, 0.184]))
    c2 = (CYLINDER, (0.055, 0.093),
          np.array([[-0.10362419544138093, 0.18849606533229024, 0.9765916544151764],
                    [0.29753787885383026, 0.9427888947379832, -0.1504005006836589],
                    [-0.9490696690792988, 0.2749878784837195, -0.15378046013955488]]),
          np.array([0.15430165807111368, -0.0237621318996102, 0.30870268729335887]))
    dc, nc, c1p, c2p = coal_distance(c1, c2)
    ds, q1, q2, n, st = distance(c1, c2)
    assert abs(dc) < 1e-11 and abs(ds - dc) < 1e-10
    assert np.allclose(n, nc, atol=1e-3) and np.allclose(q1, c1p, atol=1e-6) and np.allclose(q2, c2p, atol=1e-6)
    dist, pos, frame = collide(c1, c2)
    assert len(dist) == 1 and abs(dist[0]) < 1e-10 and np.allclose(pos[0], c1p, atol=1e-6)
    assert np.allclose(frame[0, 0], nc, atol=1e-3)


# ------------------------------------------------------------------ anchors and patches

def test_measured_anchor_values():
    r = collide((SPHERE, [.1], I3, [0, 0, 0]), (SPHERE, [.1], I3, [.15, 0, 0]))
    assert r[0][0] == pytest.approx(-0.05) and np.allclose(r[1][0], [.075, 0, 0]) and np.allclose(r[2][0, 0], [1, 0, 0])
    ds, q1, q2, n, _ = distance((SPHERE, [.1], I3, [0, 0, 0]), (SPHERE, [.1], I3, [.15, 0, 0]))
    assert np.allclose([q1[0], q2[0]], [.10, .05])
    dist, pos, fr = collide((PLANE, [], I3, [0, 0, 0]), (BOX, [.1, .1, .1], I3, [0, 0, .099]))
    assert len(dist) == 4 and np.allclose(dist, -0.001) and np.allclose(pos[:, 2], -0.0005)
    assert np.allclose(fr[:, 0], [0, 0, 1])
    dist, pos, fr = collide((CAPSULE, [.05, .1], I3, [0, 0, 0]), (BOX, [.1, .1, .1], I3, [0, 0, .23]))
    assert dist.min() == pytest.approx(-0.02) and np.allclose(pos[np.argmin(dist)], [0, 0, .14])
    ds, q1, q2, n, _ = distance((CAPSULE, [.05, .1], I3, [0, 0, 0]), (BOX, [.1, .1, .1], I3, [0, 0, .23]))
    assert ds == pytest.approx(-0.02) and q1[2] == pytest.approx(.15) and q2[2] == pytest.approx(.13)
    ds, q1, q2, n, _ = distance((CAPSULE, [.05, .1], I3, [0, 0, 0]), (CYLINDER, [.05, .1], I3, [0, .3, 0]))
    assert ds == pytest.approx(0.2, abs=1e-12) and q1[1] == pytest.approx(.05) and q2[1] == pytest.approx(.25)
    ds, q1, q2, n, _ = distance((CYLINDER, [.05, .1], I3, [0, 0, 0]), (BOX, [.1, .1, .1], I3, [0, 0, .5]))
    assert ds == pytest.approx(0.3, abs=1e-12) and q1[2] == pytest.approx(.1) and q2[2] == pytest.approx(.4)


def _rz(a):
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1.0]])


@pytest.mark.parametrize("twist,count", [(0.0, 4), (np.pi / 4, 8), (0.3, 8)])
def test_box_box_face_polygon_matches_mujoco_and_coal(twist, count):
    g1 = (BOX, [.1, .1, .1], I3, [0, 0, 0])
    g2 = (BOX, [.1, .1, .1], _rz(twist), [0.0, 0.0, .199])
    dist, pos, fr = collide(g1, g2)
    assert len(dist) == count and np.allclose(dist, -0.001) and np.allclose(fr[:, 0], [0, 0, 1])
    m, d = mj_build(list(g1) + [None], list(g2) + [None])
    cons = mj_contacts(m, d)
    assert match_sets(rows(dist, pos, fr[:, 0]), rows(*zip(*[c[1:] for c in cons])), 1e-9)
    (patch,) = coal_patch(g1, g2)
    # coal's patch lies on its mid plane: compare in-plane coordinates
    assert match_sets(pos[:, :2], patch[:, :2], 1e-9)
    # the same polygon from the hull of the box's corners (convex-box and convex-convex)
    corners = np.array([[x, y, z] for z in (-.1, .1) for y in (-.1, .1) for x in (-.1, .1)])
    for a, b in [((CONVEX, [], g1[2], g1[3], corners), g2), (g1, (CONVEX, [], g2[2], g2[3], corners)),
                 ((CONVEX, [], g1[2], g1[3], corners), (CONVEX, [], g2[2], g2[3], corners))]:
        dd, pp, ff = collide(a, b)
        assert match_sets(rows(dd, pp, ff[:, 0]), rows(dist, pos, fr[:, 0]), 1e-9)


def test_plane_box_patch_matches_coal():
    g1 = (PLANE, [], I3, [0, 0, 0])
    g2 = (BOX, [.1, .1, .1], _rz(0.4), [0.01, 0.02, .099])
    dist, pos, fr = collide(g1, g2)
    (patch,) = coal_patch(g1, g2)
    assert len(dist) == 4 and match_sets(pos[:, :2], patch[:, :2], 1e-9)
    corners = np.array([[x, y, z] for z in (-.1, .1) for y in (-.1, .1) for x in (-.1, .1)])
    d2, p2, f2 = collide(g1, (CONVEX, [], g2[2], g2[3], corners))
    assert match_sets(rows(d2, p2, f2[:, 0]), rows(dist, pos, fr[:, 0]), 1e-12)


def test_box_box_crossed_edges_one_contact():
    R1 = np.array([[1.0, 0, 0], [0, np.sqrt(.5), -np.sqrt(.5)], [0, np.sqrt(.5), np.sqrt(.5)]])  # edge along x on top
    R2 = np.array([[np.sqrt(.5), 0, -np.sqrt(.5)], [0, 1.0, 0], [np.sqrt(.5), 0, np.sqrt(.5)]])  # edge along y at bottom
    h = .1 * np.sqrt(2)
    g1 = (BOX, [.1, .1, .1], R1, [0, 0, 0])
    g2 = (BOX, [.1, .1, .1], R2, [0, 0, 2 * h - .002])
    dist, pos, fr = collide(g1, g2)
    assert len(dist) == 1 and dist[0] == pytest.approx(-0.002) and np.allclose(fr[0, 0], [0, 0, 1])
    m, d = mj_build(list(g1) + [None], list(g2) + [None])
    cons = mj_contacts(m, d)
    assert len(cons) == 1 and match_sets(rows(dist, pos, fr[:, 0]), rows(*zip(*[c[1:] for c in cons])), 1e-9)


# ------------------------------------------------------------------------- degenerate

def test_coincident_sphere_centres_fall_back_like_mujoco():
    for R2 in (I3, random_rotation(np.random.default_rng(3))):
        g1 = [SPHERE, [.1, 0, 0], I3, [.3, .2, .1], None]
        g2 = [SPHERE, [.05, 0, 0], R2, [.3, .2, .1], None]
        dist, pos, fr = collide(g1, g2)
        m, d = mj_build(g1, g2)
        cons = mj_contacts(m, d)
        assert dist[0] == pytest.approx(cons[0][1]) == pytest.approx(-.15)
        assert np.allclose(fr[0, 0], cons[0][3], atol=1e-12) and np.allclose(pos[0], cons[0][2], atol=1e-12)
        assert np.all(np.isfinite(fr))


def test_parallel_capsules_two_contacts_like_mujoco():
    g1 = [CAPSULE, [.05, .2, 0], I3, [0, 0, 0], None]
    g2 = [CAPSULE, [.04, .1, 0], I3, [.08, 0, .15], None]
    dist, pos, fr = collide(g1, g2)
    m, d = mj_build(g1, g2)
    cons = mj_contacts(m, d)
    assert len(dist) == 2 == len(cons)
    assert match_sets(rows(dist, pos, fr[:, 0]), rows(*zip(*[c[1:] for c in cons])), 1e-12)


def test_deep_box_box_beyond_half_sizes_mujoco_1800():
    """A thin plate sunk deeper than its own half-thickness into a big box still gives a
    face contact, with the depth along the plate's normal (google-deepmind/mujoco#1800)."""
    g1 = [BOX, [.5, .5, .5], I3, [0, 0, 0], None]
    g2 = [BOX, [.1, .1, .01], _rz(0.2), [0.05, 0, .5 + .01 - .05], None]
    dist, pos, fr = collide(g1, g2)
    m, d = mj_build(g1, g2)
    cons = mj_contacts(m, d)
    assert len(dist) >= 4 and np.allclose(dist, -0.05) and np.allclose(fr[:, 0], [0, 0, 1])
    assert match_sets(rows(dist, pos, fr[:, 0]), rows(*zip(*[c[1:] for c in cons])), 1e-9)


def test_flush_faces_no_phantom_depth_mujoco_3476():
    """Resting flush (distance exactly 0): 4 contacts at distance 0 for box-box, box-convex
    and convex-convex, never a depth of a box width (google-deepmind/mujoco#3476)."""
    corners = np.array([[x, y, z] for z in (-.1, .1) for y in (-.1, .1) for x in (-.1, .1)])
    lo = (BOX, [.1, .1, .1], I3, [0, 0, 0])
    hi = (BOX, [.1, .1, .1], I3, [0.03, 0.0, .2])
    for a, b in [(lo, hi), ((CONVEX, [], I3, [0, 0, 0], corners), hi),
                 ((CONVEX, [], I3, [0, 0, 0], corners), (CONVEX, [], I3, [0.03, 0, .2], corners))]:
        dist, pos, fr = collide(a, b)
        assert len(dist) == 4 and np.allclose(dist, 0, atol=1e-12) and np.allclose(fr[:, 0], [0, 0, 1])


def test_sphere_deep_in_box_mujoco_2206():
    """The centre inside the box: depth = distance to the nearest face + radius, normal that
    face's (google-deepmind/mujoco#2206)."""
    g1 = [SPHERE, [.05, 0, 0], I3, [.02, .07, -.01], None]
    g2 = [BOX, [.1, .1, .1], I3, [0, 0, 0], None]
    dist, pos, fr = collide(g1, g2)
    assert dist[0] == pytest.approx(-(.1 - .07) - .05) and np.allclose(fr[0, 0], [0, -1, 0])
    m, d = mj_build(g1, g2)
    cons = mj_contacts(m, d)
    assert match_sets(rows(dist, pos, fr[:, 0]), rows(*zip(*[c[1:] for c in cons])), 1e-12)


@pytest.mark.parametrize("pair", [p for p in ALL if p[0] != PLANE], ids=pid)
def test_touching_and_deep_penetration_finite(pair):
    """Zero distance and penetrations deeper than the half-sizes (centres up to coincident):
    a contact, finite values, never NaN, and the status is not a failure."""
    rng = np.random.default_rng(17 + pair[0] * 10 + pair[1])
    work = narrow_workspace()
    for _ in range(8):
        g1, g2 = random_pair(pair, rng, spread=(0.0, 0.3))
        dist, pos, fr = collide(g1, g2, work=work)
        assert len(dist) >= 1 and np.all(np.isfinite(dist)) and np.all(np.isfinite(pos)) and np.all(np.isfinite(fr))
        assert np.all(dist < 0)
        check_frames(fr)
    # touching: sphere-shaped geoms 2r apart
    g = {SPHERE: [.1, 0, 0], ELLIPSOID: [.1, .1, .1]}
    if pair[0] in g and pair[1] in g:
        dist, pos, fr = collide((pair[0], g[pair[0]], I3, [0, 0, 0]), (pair[1], g[pair[1]], I3, [.2, 0, 0]))
        assert len(dist) == 1 and abs(dist[0]) < 1e-9 and np.allclose(fr[0, 0], [1, 0, 0], atol=1e-4)


@pytest.mark.parametrize("pair", ALL, ids=pid)
def test_argument_order_symmetry(pair):
    """Swapping the arguments gives the same contacts with flipped normals."""
    rng = np.random.default_rng(23 + pair[0] * 10 + pair[1])
    seen = 0
    for _ in range(60):
        g1, g2 = random_pair(pair, rng)
        d1, p1, f1 = collide(g1, g2, margin=MARGIN)
        d2, p2, f2 = collide(g2, g1, margin=MARGIN)
        if len(d1) == 0 and len(d2) == 0:
            continue
        tol = 1e-12 if pair[0] != pair[1] else (3e-5 if pair[0] in CURVED else 1e-9)
        if pair[0] == pair[1] and pair[0] in CURVED | {CONVEX} and pair[0] not in STRICT:
            # same-type GJK pairs run with the roles of A and B exchanged: only the
            # unique quantities (distance, normal) are compared
            assert min(d1) == pytest.approx(min(d2), abs=1e-9)
            assert np.allclose(f1[np.argmin(d1), 0], -f2[np.argmin(d2), 0], atol=tol)
        else:
            assert match_sets(rows(d1, p1, f1[:, 0]), rows(d2, p2, -f2[:, 0]), tol), pid(pair)
        seen += 1
        if seen >= 5:
            break
    assert seen >= 3


def test_unsupported_pairs_and_capacity():
    work = narrow_workspace()
    z = np.zeros((0, 3))
    zf = np.zeros((0, 3), dtype=np.int64)
    dist, pos, frame = np.zeros(3), np.zeros((3, 3)), np.zeros((3, 3, 3))
    s = np.array([.1, .1, .1])
    for t1, t2 in [(PLANE, PLANE), (HFIELD, SPHERE), (BOX, MESH), (MESH, MESH)]:
        n = collide_pair(t1, s, I3, np.zeros(3), z, zf, t2, s, I3, np.zeros(3), z, zf, 0.0,
                         dist, pos, frame, 0, 3, work)
        assert n == UNSUPPORTED
    # a face contact of 4 points into 2 free rows: the first 2 are written
    n = collide_pair(PLANE, s, I3, np.zeros(3), z, zf, BOX, s, I3, np.array([0, 0, .099]), z, zf, 0.0,
                     dist, pos, frame, 1, 3, work)
    assert n == 2 and np.allclose(dist[1:], -0.001) and dist[0] == 0.0
    assert EPA_FAILURE < 0
