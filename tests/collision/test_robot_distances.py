"""Signed distances of whole robots' collision pairs against coal, through
Pinocchio's geometry model (the oracle: ``pin.buildModelsFromUrdf``,
``pin.updateGeometryPlacements``, the mesh's convex hull
``BVHModel.buildConvexHull`` and ``coal.distance``).

Talos (with its SRDF: 883 candidate pairs, hulls of up to 953 vertices,
mirrored mesh scales, links merged through fixed joints), the Panda and
the UR5 (without SRDF: adjacent links overlap) at their neutral
configuration (Talos 1 m above the floor), the SRDF's reference postures
(Talos's half_sitting, the Panda's default) and a seeded random one. For
every candidate pair of :class:`~multibody.collision.table.GeometryTable`:

* the world placement of each geometry equals Pinocchio's ``oMg``;
* the signed distance (``narrow.signed_distance``) equals coal's;
* the deepest contact of the narrow phase the detection calls
  (``collide_pair`` with a margin just above the distance) is at the signed
  distance, no contact is deeper, and every contact's normal is the pair's
  normal (coal's, for separated pairs);
* through the simulator (``Simulator.step``, contacts at the start
  configuration): exactly the pairs closer than the contact distance
  (0.01 m for Talos, 0.05 m for the arms) are reported, each at coal's
  distance.

The arms are fixed to the world: their base link's mesh is a static
triangle mesh (docs/collision.md), not a hull. Its pairs are compared with
coal's distance to Pinocchio's mesh itself (a ``BVHModel``, a triangle
soup) where coal puts them apart (by more than 0.1 mm; a soup's
penetration is not a solid's): our nearest contact is at coal's distance
(1e-8 m), and the simulator reports those closer than the contact distance.

Tolerance: coal's GJK and EPA run at 1e-10 (coal's default, 1e-6, would
measure coal); separated distances and penetration depths of the hulls
agree to 2e-10 m (measured; the largest are separated pairs involving a
cylinder, whose support is exact in both codes), so 1e-8 m is asserted.
Before the manifold fix the deepest contact of a hull pair was off by up to
6.7e-4 m and its normal by 0.18 rad (Talos, random configurations): the
reference "face" of a tessellated hull was a sliver of near-coplanar
vertices. Normals of separated pairs (unique) agree with coal's to 1e-6.

Box-box pairs (the Panda's finger pads) use MuJoCo's box-box collider,
which reports no contact for some separated boxes within the margin
(MuJoCo 3 does the same on these poses): their narrow-phase contacts are
not compared, only their signed distance.
"""
import os
import warnings

import numpy as np
import pytest

import multibody as mb
from multibody.collision import narrow
from multibody.collision.detect import geometry_poses
from multibody.collision.shapes import BOX, CAPSULE, CONVEX, CYLINDER, MESH, SPHERE
from multibody.collision.table import GeometryTable
from oracles import ROBOTS, Mapping, robot_path, robots_dir

pin = pytest.importorskip("pinocchio")
coal = pytest.importorskip("coal")

TOL = 1e-8           # m, distances and depths (measured: 2e-10)
NORMAL_TOL = 1e-6    # normals of separated polytope pairs (measured: 1.6e-7)
#: the simulator's contact distance (m): its default for Talos; the arms' links are 1.4 cm apart
#: or more at these configurations
REACH = {"talos": 0.01, "panda": 0.05, "ur5": 0.05}
SRDF = {"talos": "talos_data/srdf/talos.srdf", "panda": "panda_description/srdf/panda.srdf"}
#: (robot, load its SRDF's disabled pairs)
CASES = [("talos", True), ("panda", False), ("ur5", False)]


class Robot:
    """Our model, Pinocchio's model and geometry model, and coal's hulls."""

    def __init__(self, name, use_srdf):
        path = robot_path(name)
        floating = ROBOTS[name][1]
        srdf = os.path.join(robots_dir(), SRDF[name]) if name in SRDF else None
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            self.model = mb.load_urdf(path, floating_base=floating, srdf=srdf if use_srdf else None)
        share = os.path.dirname(os.path.dirname(robots_dir()))
        root = [pin.JointModelFreeFlyer()] if floating else []
        self.pm, self.gm, _ = pin.buildModelsFromUrdf(path, share, *root)
        if srdf:
            pin.loadReferenceConfigurations(self.pm, srdf)
        self.name, self.floating = name, floating
        self.map = Mapping(self.model, self.pm)
        self.table = GeometryTable(self.model)
        self.pin_index = {g.name: i for i, g in enumerate(self.gm.geometryObjects)}
        self._hulls = {}

    def coal_shape(self, k):
        """coal's shape of our geometry k: the convex hull of Pinocchio's mesh, or its primitive;
        Pinocchio's mesh itself (a triangle soup) for a static triangle mesh."""
        if k not in self._hulls:
            g = self.gm.geometryObjects[self.pin_index[self.table.geometries[k].name]].geometry
            if isinstance(g, coal.BVHModelBase) and self.table.code[k] != MESH:
                g.buildConvexHull(True, "Qt")
                g = g.convex
            self._hulls[k] = g
        return self._hulls[k]

    def configurations(self):
        """{name: Pinocchio configuration}: neutral, the SRDF's postures, a seeded random one."""
        pm = self.pm
        out = {}
        q = pin.neutral(pm)
        if self.floating:
            q[2] = 1.0
        out["neutral"] = q
        for entry in pm.referenceConfigurations:
            out[entry.key()] = np.array(entry.data())
        rng = np.random.default_rng(7)
        q = pin.neutral(pm)
        lo, hi = pm.lowerPositionLimit, pm.upperPositionLimit
        start = 0
        if self.floating:
            q[:3] = rng.uniform(-0.5, 0.5, 3) + [0, 0, 1]
            u = rng.normal(size=4)
            q[3:7] = u / np.linalg.norm(u)
            start = 7
        q[start:] = rng.uniform(lo[start:], hi[start:])
        for c in self.model.couplings:  # URDF <mimic> (the Panda's fingers): the simulator would project
            j, m = (pm.joints[pm.getJointId(n)].idx_q for n in (c.joint, c.mimicked))
            q[j] = c.multiplier * q[m] + c.offset
        out["random"] = q
        return out


def support(G, n):
    """World support point of geometry G = (code, half-sizes, R, p, hull vertices) along n
    (numpy, independent of the code under test)."""
    t, s, R, p, v = G
    u = R.T @ n
    if t == CONVEX:
        x = v[np.argmax(v @ u)]
    elif t == BOX:
        x = s * np.where(u >= 0, 1.0, -1.0)
    elif t == CYLINDER:
        rho = np.hypot(u[0], u[1])
        x = np.array([s[0] * u[0] / rho, s[0] * u[1] / rho, s[1] * np.sign(u[2])])
    elif t in (SPHERE, CAPSULE):
        x = s[0] * u / np.linalg.norm(u) + (np.array([0, 0, s[1] * np.sign(u[2])]) if t == CAPSULE else 0)
    else:
        raise AssertionError(f"no support for shape code {t}")
    return R @ x + p


def separation(A, B, n):
    """min over B of n.x - max over A of n.x: the signed distance is its maximum over unit n."""
    n = n / np.linalg.norm(n)
    return float(n @ support(B, -n) - n @ support(A, n))


def coal_distance(o1, T1, o2, T2):
    req = coal.DistanceRequest()
    req.enable_signed_distance = True
    req.gjk_tolerance = req.epa_tolerance = 1e-10
    req.gjk_max_iterations = req.epa_max_iterations = 1000
    res = coal.DistanceResult()
    d = coal.distance(o1, T1, o2, T2, req, res)
    return d, np.array(res.normal)


@pytest.fixture(scope="module", params=CASES, ids=[f"{n}{'-srdf' if s else ''}" for n, s in CASES])
def robot(request):
    return Robot(*request.param)


def compare(robot, qp):
    """Per candidate pair of hulls and primitives: (names, our signed distance, our contacts,
    coal's distance and normal); per pair with a static triangle mesh: (names, our contacts,
    coal's distance to the mesh); also checks the geometry placements."""
    model, T, pm, gm = robot.model, robot.table, robot.pm, robot.gm
    q = robot.map.q_from_pin(qp)
    pd, gd = pm.createData(), gm.createData()
    pin.updateGeometryPlacements(pm, pd, gm, gd, qp)
    ng = len(T.code)
    R, p = np.zeros((ng, 3, 3)), np.zeros((ng, 3))
    geometry_poses(np.ascontiguousarray(mb.forward_kinematics(model, q)), T.body, T.local, R, p)
    oMg = [gd.oMg[robot.pin_index[g.name]] for g in T.geometries]
    for k, g in enumerate(T.geometries):
        np.testing.assert_allclose(R[k], oMg[k].rotation, atol=1e-12, err_msg=g.name)
        np.testing.assert_allclose(p[k], oMg[k].translation, atol=1e-12, err_msg=g.name)
    work = narrow.narrow_workspace()
    rows, terrain = [], []
    for a, b in T.pairs:
        if MESH in (T.code[a], T.code[b]):
            G = [(MESH, (), R[k], p[k], T.geometries[k].vertices, T.geometries[k].faces) if T.code[k] == MESH else
                 (T.code[k], T.size[k], R[k], p[k], T.vertices[T.vstart[k]:T.vstart[k + 1]]) for k in (a, b)]
            dc, _ = coal_distance(robot.coal_shape(a), oMg[a], robot.coal_shape(b), oMg[b])
            terrain.append(((T.geometries[a].name, T.geometries[b].name), narrow.collide(*G, max(dc, 0.0) + 1e-3, work),
                            dc))
            continue
        A = (T.code[a], T.size[a], R[a], p[a], T.vertices[T.vstart[a]:T.vstart[a + 1]])
        B = (T.code[b], T.size[b], R[b], p[b], T.vertices[T.vstart[b]:T.vstart[b + 1]])
        dc, nc = coal_distance(robot.coal_shape(a), oMg[a], robot.coal_shape(b), oMg[b])
        d, _, _, n, _ = narrow.distance(A, B, work)
        contacts = narrow.collide(A, B, max(dc, 0.0) + 1e-3, work)
        rows.append(((T.geometries[a].name, T.geometries[b].name), d, n, contacts, dc, nc,
                     T.code[a] == BOX and T.code[b] == BOX, (A, B)))
    return q, rows, terrain


def test_signed_distances_of_the_collision_pairs_equal_coals(robot):
    """At the neutral configuration, every reference posture of the SRDF
    (if it has any) and a seeded random configuration."""
    configs = robot.configurations()
    for cname in configs:
        q, rows, terrain = compare(robot, configs[cname])
        for pair, (dist, pos, frame), dc in terrain:
            if dc > 1e-4:
                assert dist.min() == pytest.approx(dc, abs=TOL), f"{cname}: {pair}"
        seen = {"separated": 0, "penetrating": 0}
        for pair, d, n, (dist, pos, frame), dc, nc, boxbox, (A, B) in rows:
            what = f"{cname}: {pair}"
            seen["separated" if dc > 0 else "penetrating"] += 1
            assert d == pytest.approx(dc, abs=TOL), what
            if dc > 0 and A[0] in (BOX, CONVEX) and B[0] in (BOX, CONVEX):
                assert np.abs(n - nc).max() < NORMAL_TOL, what
            elif dc > 0:
                # a curved shape (Talos's wrist cylinders): the separation is flat about the
                # normal (measured: normals 1e-5 apart, distances 2e-10): judged by its value
                assert separation(A, B, n) >= separation(A, B, nc) - 1e-12, what
                assert separation(A, B, n) == pytest.approx(dc, abs=TOL), what
            if boxbox and not len(dist):
                continue
            assert len(dist), what
            assert dist.min() == pytest.approx(dc, abs=TOL), what          # the deepest contact
            m = frame[0, 0]
            assert np.ptp(frame[:, 0], axis=0).max() < 1e-12, what         # one normal per pair
            # the signed distance is the maximum over unit n of the separation along n (the
            # negated depth when penetrating): the contacts' normal attains it
            assert separation(A, B, m) == pytest.approx(dc, abs=TOL), what
        assert seen["separated"] > 0
        if cname == "neutral" and robot.name != "ur5":
            assert seen["penetrating"] > 0  # hulls of neighbouring links overlap: both kinds compared


@pytest.mark.parametrize("config", ["neutral", "random"])
def test_the_simulator_reports_the_pairs_closer_than_the_contact_distance(robot, config):
    """The contacts of a step (at its start configuration) are exactly the
    pairs coal puts closer than the contact distance, at coal's distance:
    placements, bounding spheres, the pair table and the names as the step
    uses them."""
    q, rows, terrain = compare(robot, robot.configurations()[config])
    reach = REACH[robot.name]
    close = {frozenset(r[0]): r[4] for r in rows if r[4] < reach - 1e-6 and not r[6]}
    close.update({frozenset(t[0]): t[2] for t in terrain if 1e-4 < t[2] < reach - 1e-6})
    soup = {frozenset(t[0]) for t in terrain if t[2] <= 1e-4}   # coal's soup: no solid's depth to compare
    boxbox = {frozenset(r[0]) for r in rows if r[6]}
    assert close
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PGS may stop at its sweep cap on overlapping hulls
        sim = mb.Simulator(robot.model, 1e-3, "semi_implicit_euler", q0=q, limits=False, contact_distance=reach)
        assert np.array_equal(sim.state.q, q)  # the configuration compared (not projected)
        sim.step()
    assert sim.contact.count < sim.contact.capacity  # none dropped
    reported = {}
    for c in sim.contact.contacts():
        key = frozenset((c.geom1, c.geom2))
        reported[key] = min(reported.get(key, np.inf), c.distance)
    far = {tuple(k): d for k, d in reported.items() if k not in close and k not in boxbox and k not in soup}
    assert all(d > reach - 1e-6 for d in far.values()), far   # only pairs at the threshold itself
    assert set(close) <= set(reported)
    for k, dc in close.items():
        assert reported[k] == pytest.approx(dc, abs=TOL), tuple(k)
