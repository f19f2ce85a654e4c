"""Oracles for the narrow-phase tests: MuJoCo (mj_collision, mj_geomDistance) and coal
(collide, distance, computeContactPatch) on two geoms at given world poses.

MuJoCo re-centres mesh vertices on the mesh's inertial frame and stores them as float32,
so a convex geom is read *back* from the compiled model (its vertices, its world pose)
and those exact values are given to the code under test: both then see the same solid.
"""
import numpy as np

import mujoco

from multibody.collision.shapes import BOX, CAPSULE, CONVEX, CYLINDER, ELLIPSOID, PLANE, SPHERE

MJ_TYPE = {PLANE: "plane", SPHERE: "sphere", CAPSULE: "capsule", ELLIPSOID: "ellipsoid",
           CYLINDER: "cylinder", BOX: "box", CONVEX: "mesh"}
NSIZE = {PLANE: 3, SPHERE: 1, CAPSULE: 2, ELLIPSOID: 3, CYLINDER: 2, BOX: 3, CONVEX: 0}


def _f(v):
    return " ".join(repr(float(x)) for x in np.ravel(v))


def quat(R):
    q = np.zeros(4)
    mujoco.mju_mat2Quat(q, np.ascontiguousarray(R, float).ravel())
    return q


def mj_build(g1, g2, margin=0.0, tol=1e-12, iters=500, multiccd=False):
    """MuJoCo model of geom 1 on a mocap body and geom 2 on a free body (two static bodies
    never collide). ``gK = (code, size3, R, p, verts)``; the pair margin is ``margin``
    (put on geom 2). ``tol``/``iters``: ccd_tolerance / ccd_iterations of MuJoCo's GJK/EPA
    (its defaults 1e-6 / 35 limit its own accuracy; tightened so that the comparison
    measures the code under test)."""
    assets = []
    geoms = []
    for k, g in enumerate((g1, g2)):
        t, size = g[0], np.asarray(g[1], float)
        if t == CONVEX:
            assets.append(f'<mesh name="m{k}" vertex="{_f(g[4])}"/>')
            spec = f'type="mesh" mesh="m{k}"'
        else:
            s = size[:NSIZE[t]] if t != PLANE else [1, 1, 0.1]
            spec = f'type="{MJ_TYPE[t]}" size="{_f(s)}"'
        geoms.append(spec)
    flags = '<flag multiccd="enable"/>' if multiccd else '<flag multiccd="disable"/>'
    xml = f"""<mujoco><option ccd_tolerance="{tol}" ccd_iterations="{iters}">{flags}</option>
      <asset>{''.join(assets)}</asset><worldbody>
      <body mocap="true" pos="{_f(g1[3])}" quat="{_f(quat(g1[2]))}"><geom {geoms[0]}/></body>
      <body pos="{_f(g2[3])}" quat="{_f(quat(g2[2]))}"><freejoint/>
        <geom {geoms[1]} margin="{margin!r}"/></body>
    </worldbody></mujoco>"""
    m = mujoco.MjModel.from_xml_string(xml)
    d = mujoco.MjData(m)
    mujoco.mj_kinematics(m, d)
    return m, d


def mj_geoms(m, d, g1, g2):
    """The two geoms as MuJoCo sees them: world pose from geom_xpos/xmat, mesh vertices from
    the compiled model (float32 -> float64)."""
    out = []
    for k, g in enumerate((g1, g2)):
        R = d.geom_xmat[k].reshape(3, 3).copy()
        p = d.geom_xpos[k].copy()
        verts = np.zeros((0, 3))
        if g[0] == CONVEX:
            mid = m.geom_dataid[k]
            a, n = m.mesh_vertadr[mid], m.mesh_vertnum[mid]
            verts = m.mesh_vert[a:a + n].astype(float)
        out.append((g[0], np.asarray(g[1], float), R, p, verts))
    return out


def mj_contacts(m, d):
    """Contacts of mj_collision: list of (geom ids, dist, pos, normal)."""
    mujoco.mj_collision(m, d)
    return [(tuple(c.geom), c.dist, c.pos.copy(), c.frame[:3].copy()) for c in d.contact[:d.ncon]]


def mj_distance(m, d, distmax=10.0):
    """mj_geomDistance(geom 0, geom 1): (signed distance, point on 0, point on 1)."""
    fromto = np.zeros(6)
    dist = mujoco.mj_geomDistance(m, d, 0, 1, distmax, fromto)
    return dist, fromto[:3].copy(), fromto[3:].copy()


def coal_geom(g):
    import coal
    t, s = g[0], np.asarray(g[1], float)
    if t == SPHERE:
        return coal.Sphere(s[0])
    if t == CAPSULE:
        return coal.Capsule(s[0], 2 * s[1])
    if t == ELLIPSOID:
        return coal.Ellipsoid(s[0], s[1], s[2])
    if t == CYLINDER:
        return coal.Cylinder(s[0], 2 * s[1])
    if t == BOX:
        return coal.Box(2 * s[0], 2 * s[1], 2 * s[2])
    if t == PLANE:
        return coal.Halfspace(np.array([0.0, 0, 1]), 0.0)
    if t == CONVEX:
        pts = coal.StdVec_Vec3s()
        for v in g[4]:
            pts.append(np.asarray(v, float))
        return coal.Convex.convexHull(pts, True, "")
    raise ValueError(t)


def coal_tf(g):
    import coal
    return coal.Transform3s(np.asarray(g[2], float), np.asarray(g[3], float))


def coal_distance(g1, g2, tol=1e-12):
    """coal.distance (signed): (d, normal, p1, p2)."""
    import coal
    req = coal.DistanceRequest()
    req.gjk_tolerance = tol
    req.epa_tolerance = tol
    req.gjk_max_iterations = 1000
    req.epa_max_iterations = 1000
    res = coal.DistanceResult()
    dist = coal.distance(coal_geom(g1), coal_tf(g1), coal_geom(g2), coal_tf(g2), req, res)
    return dist, np.array(res.normal), np.array(res.getNearestPoint1()), np.array(res.getNearestPoint2())


def coal_patch(g1, g2):
    """Contact patches of coal.computeContactPatch (list of (k, 3) point arrays)."""
    import coal
    o1, o2, T1, T2 = coal_geom(g1), coal_geom(g2), coal_tf(g1), coal_tf(g2)
    req = coal.CollisionRequest(coal.CollisionRequestFlag.CONTACT, 4)
    res = coal.CollisionResult()
    coal.collide(o1, T1, o2, T2, req, res)
    preq = coal.ContactPatchRequest()
    pres = coal.ContactPatchResult(preq)
    coal.computeContactPatch(o1, T1, o2, T2, res, preq, pres)
    return [np.array([p.getPoint(k) for k in range(p.size())])
            for p in (pres.getContactPatch(i) for i in range(pres.numContactPatches()))]


def random_rotation(rng):
    q = rng.normal(size=4)
    q /= np.linalg.norm(q)
    R = np.zeros(9)
    mujoco.mju_quat2Mat(R, q)
    return R.reshape(3, 3)


def match_sets(A, B, tol):
    """Greedy matching of two point sets (rows); True if every row of A is within tol of a
    distinct row of B and the counts agree."""
    A = np.atleast_2d(A)
    B = np.atleast_2d(B)
    if len(A) != len(B):
        return False
    used = np.zeros(len(B), bool)
    for a in A:
        dd = np.linalg.norm(B - a, axis=1)
        dd[used] = np.inf
        k = int(np.argmin(dd))
        if dd[k] > tol:
            return False
        used[k] = True
    return True
