"""Height fields and static triangle meshes against convex shapes (collision/terrain.py).

Oracles:
* MuJoCo 4 for height fields (``mjc_ConvexHField``: one GJK/EPA contact per prism, the
  prisms and the grid as here): ``mj_geomDistance`` gives the signed distance (the nearest
  or deepest prism) and its witness points, ``mj_collision`` the penetrating prisms'
  contacts. MuJoCo's ccd_tolerance is tightened to 1e-12 and multiccd disabled, as in
  test_narrow.py. The field's heights are read back from the compiled model (MuJoCo
  normalizes and stores them as float32) and given to the code under test.
  - Separated: the distance to the field (a union of prisms) is attained on its surface, which
    the kept contacts cover (terrain.py's docstring): our nearest contact is MuJoCo's distance
    (1e-9, measured ~1e-15) with its normal (1e-6 for polytopes, spheres and capsules, whose
    GJK is exact; for ellipsoids and cylinders, whose separated normal GJK only bounds where
    the separation is flat about it (a rim against an edge; test_narrow.py's docstring), 1e-7
    on the distance (measured 7e-9) and 1e-4 on the normal).
  - Penetrating: our deepest contact is MuJoCo's deepest (1e-9): every contact is one prism's
    exact GJK/EPA result, and the deepest prism's is kept even on an internal feature
    (terrain.py). Where MuJoCo's deepest point lies on the interior of a triangle (its
    witness on the field within the triangle, its normal the triangle's), so is our deepest
    contact's normal (1e-6). ``mj_geomDistance`` is the reference: ``mj_collision`` missed
    a penetrating prism that both it and this code find (a box 5 mm deep: -0.005023 against
    -0.005187), so it is only checked never to be deeper.
  - A box resting flat on a flat region: MuJoCo reports one contact per prism under it (its
    count is the number of prisms); this code reduces them to the box's 4 corners, which equal
    MuJoCo's own box-on-plane contacts at that height (1e-9).
* coal 3 for triangle meshes: ``coal.distance`` to a ``BVHModelOBBRSS`` (a triangle soup: the
  distance to the nearest triangle) of a sphere, a box and a capsule at separated poses over a
  bumpy open surface and around a closed non-convex mesh: distance 1e-9 (the nearest triangle
  is in front of the shape, so its prism's nearest point is on the triangle) and normal 1e-6.
* Closed forms: the internal edges of flat surfaces give no contact (a box over the diagonal of
  a two-triangle floor: face normals only), a convex ridge gives normals between its faces'.
"""
import warnings

import numpy as np
import pytest

import multibody as mb
from multibody.collision import narrow
from multibody.collision.narrow import MAX_CONTACTS, collide, narrow_workspace
from multibody.collision.shapes import (BOX, CAPSULE, CONVEX, CYLINDER, ELLIPSOID, HFIELD, MESH, PLANE,
                                        SPHERE, SHAPE_NAMES)
from multibody.collision.table import GeometryTable, bounding_box, bounding_radius
from multibody.errors import ModelError, ModelWarning

from .narrow_oracles import match_sets, mj_build, mj_contacts, quat, random_rotation
from .test_narrow import check_frames, np_support, rand_geom, rows

mujoco = pytest.importorskip("mujoco")

I3 = np.eye(3)
SHAPES = [SPHERE, CAPSULE, ELLIPSOID, CYLINDER, BOX, CONVEX]
MJ_TYPE = {SPHERE: "sphere", CAPSULE: "capsule", ELLIPSOID: "ellipsoid", CYLINDER: "cylinder", BOX: "box"}
NSIZE = {SPHERE: 1, CAPSULE: 2, ELLIPSOID: 3, CYLINDER: 2, BOX: 3}


def _f(v):
    return " ".join(repr(float(x)) for x in np.ravel(v))


# ------------------------------------------------------------------ MuJoCo's height field

class Field:
    """A MuJoCo model of a height field (static, at pose (R, p)) and a free geom X, and the
    field as this code takes it: ``(HFIELD, (hx, hy, hmax, base), R, p, heights)``."""

    def __init__(self, elevation, size, X, R=I3, p=np.zeros(3)):
        nrow, ncol = elevation.shape
        t = X[0]
        if t == CONVEX:
            asset, spec = f'<mesh name="m" vertex="{_f(X[4])}"/>', 'type="mesh" mesh="m"'
        else:
            asset, spec = "", f'type="{MJ_TYPE[t]}" size="{_f(np.asarray(X[1])[:NSIZE[t]])}"'
        xml = f"""<mujoco><option ccd_tolerance="1e-12" ccd_iterations="500"><flag multiccd="disable"/></option>
          <asset>{asset}<hfield name="h" nrow="{nrow}" ncol="{ncol}" size="{_f(size)}" elevation="{_f(elevation)}"/>
          </asset><worldbody><geom type="hfield" hfield="h" pos="{_f(p)}" quat="{_f(quat(R))}"/>
          <body pos="{_f(X[3])}" quat="{_f(quat(X[2]))}"><freejoint/><geom {spec}/></body></worldbody></mujoco>"""
        self.m = m = mujoco.MjModel.from_xml_string(xml)
        self.d = mujoco.MjData(m)
        self.size = np.asarray(size, float)
        self.heights = m.hfield_data.reshape(nrow, ncol).astype(float) * self.size[2]
        self.t = t
        self.X0 = X
        self.verts = (m.mesh_vert[:m.mesh_vertnum[0]].astype(float) if t == CONVEX else np.zeros((0, 3)))
        self.pose(X[3], X[2])

    def pose(self, p, R):
        d = self.d
        d.qpos[:3] = p
        d.qpos[3:7] = quat(R)
        mujoco.mj_kinematics(self.m, d)

    def field(self):
        d = self.d
        return (HFIELD, tuple(self.size), d.geom_xmat[0].reshape(3, 3).copy(), d.geom_xpos[0].copy(), self.heights)

    def shape(self):
        d = self.d
        return (self.t, np.asarray(self.X0[1], float), d.geom_xmat[1].reshape(3, 3).copy(), d.geom_xpos[1].copy(),
                self.verts)

    def distance(self, distmax=0.03):
        """mj_geomDistance: (signed distance, witness on the field, witness on X). MuJoCo
        collides the prisms within ``distmax`` and keeps the first 50 contacts (mjMAXCONPAIR):
        a large distmax (1 m here, 0.2 m for the largest boxes) loses the nearest prism."""
        ft = np.zeros(6)
        dist = mujoco.mj_geomDistance(self.m, self.d, 0, 1, distmax, ft)
        return dist, ft[:3].copy(), ft[3:].copy()

    def contacts(self):
        mujoco.mj_collision(self.m, self.d)
        return [(c.dist, c.pos.copy(), c.frame[:3].copy()) for c in self.d.contact[:self.d.ncon]]

    def face_interior(self, dist, pos, normal, inset=1e-3):
        """Whether a contact of MuJoCo's lies on the interior of a triangle of the field: its
        witness on the field (pos - dist/2 normal) within a triangle (barycentric coordinates
        above ``inset``), on its plane, and its normal the triangle's."""
        R, p = self.d.geom_xmat[0].reshape(3, 3), self.d.geom_xpos[0]
        a = R.T @ (pos - 0.5 * dist * normal - p)
        n = R.T @ normal
        H, (hx, hy) = self.heights, self.size[:2]
        nrow, ncol = H.shape
        dx, dy = 2 * hx / (ncol - 1), 2 * hy / (nrow - 1)
        c, r = int(np.floor((a[0] + hx) / dx)), int(np.floor((a[1] + hy) / dy))
        if not (0 <= r < nrow - 1 and 0 <= c < ncol - 1):
            return False
        P = lambda rr, cc: np.array([-hx + cc * dx, -hy + rr * dy, H[rr, cc]])
        for tri in ((P(r + 1, c), P(r, c), P(r + 1, c + 1)), (P(r, c), P(r, c + 1), P(r + 1, c + 1))):
            A, B, C = tri
            m = np.cross(B - A, C - A)
            m /= np.linalg.norm(m)
            T = np.array([B - A, C - A]).T[:2]
            try:
                u, v = np.linalg.solve(T, a[:2] - A[:2])
            except np.linalg.LinAlgError:
                continue
            if min(u, v, 1 - u - v) > inset:
                return abs(m @ (a - A)) < 1e-9 and np.abs(n - m).max() < 1e-6
        return False


def random_field(rng, nrow=7, ncol=8):
    E = rng.uniform(0.0, 1.0, (nrow, ncol))
    E[0, 0], E[-1, -1] = 0.0, 1.0
    return E


def _hfield_trials(t, n, seed):
    """Compare n poses of shape t near a random field with MuJoCo; returns (compared separated,
    compared penetrating with a face-interior deepest contact, other penetrating)."""
    rng = np.random.default_rng(seed + 100 * t)
    size = (0.35, 0.3, 0.08, 0.05)
    counts = [0, 0, 0]
    work = narrow_workspace()
    for trial in range(n):
        X = rand_geom(t, rng)
        X[3] = np.array([rng.uniform(-0.22, 0.22), rng.uniform(-0.18, 0.18), 0.5])
        Rf = _small_tilt(rng) if trial % 3 == 0 else I3    # a tilted field now and then
        fld = Field(random_field(rng), size, X, Rf, rng.uniform(-0.05, 0.05, 3))
        # X's lowest point 5 cm above the field's top, then lowered along the field's z until
        # MuJoCo's distance is the target
        target = rng.uniform(0.001, 0.008) if trial % 2 else rng.uniform(-0.008, -0.0005)
        up = fld.d.geom_xmat[0].reshape(3, 3)[:, 2]
        p = fld.d.geom_xpos[0] + fld.d.geom_xmat[0].reshape(3, 3) @ X[3]
        low = up @ (np_support([t, X[1], X[2], np.zeros(3), fld.verts], -up))
        p = p + (fld.d.geom_xpos[0] @ up + size[2] + 0.05 - low - p @ up) * up
        for _ in range(6):
            fld.pose(p, X[2])
            dm, _, _ = fld.distance()
            p = p - (dm - target) * up
        fld.pose(p, X[2])
        dm, w1, w2 = fld.distance()
        F, S = fld.field(), fld.shape()
        margin = max(dm, 0.0) + 0.01
        dist, pos, frame = collide(F, S, margin, work)
        assert 1 <= len(dist) <= MAX_CONTACTS and np.all(dist <= margin), (SHAPE_NAMES[t], trial)
        check_frames(frame)
        k = int(np.argmin(dist))
        what = (SHAPE_NAMES[t], trial, dm)
        # a separated cylinder rim or ellipsoid against an edge: the separation is flat about
        # the normal (test_narrow.py's docstring; measured 7e-9 on a cylinder rim)
        curved = dm > 0 and t in (ELLIPSOID, CYLINDER)
        assert dist[k] == pytest.approx(dm, abs=1e-7 if curved else 1e-9), what
        n_mj = (w2 - w1) / dm
        if dm > 0:
            counts[0] += 1
            ntol = 1e-4 if t in (ELLIPSOID, CYLINDER) else 1e-6
            assert np.abs(frame[k, 0] - n_mj).max() < ntol, what
        elif fld.face_interior(dm, 0.5 * (w1 + w2), n_mj):
            counts[1] += 1
            assert np.abs(frame[k, 0] - n_mj).max() < 1e-6, what
        else:
            counts[2] += 1
        # mj_collision's contacts (one per penetrating prism) are never deeper
        assert all(c[0] >= dm - 1e-9 for c in fld.contacts()), what
    return counts


def _small_tilt(rng):
    """A rotation by up to 0.3 rad about a random horizontal axis."""
    u = np.r_[rng.normal(size=2), 0.0]
    u /= np.linalg.norm(u)
    a = rng.uniform(0, 0.3)
    K = np.array([[0, -u[2], u[1]], [u[2], 0, -u[0]], [-u[1], u[0], 0]])
    return I3 + np.sin(a) * K + (1 - np.cos(a)) * K @ K


@pytest.mark.parametrize("t", SHAPES, ids=[SHAPE_NAMES[t] for t in SHAPES])
def test_height_field_matches_mujoco(t):
    sep, face, other = _hfield_trials(t, 20, 0)
    assert sep >= 8 and face >= 2 and sep + face + other == 20, (sep, face, other)


@pytest.mark.slow
@pytest.mark.parametrize("t", SHAPES, ids=[SHAPE_NAMES[t] for t in SHAPES])
def test_height_field_matches_mujoco_fuzz(t):
    sep, face, other = _hfield_trials(t, 200, 1)
    assert sep >= 80 and face >= 20, (sep, face, other)


@pytest.mark.parametrize("yaw", [0.0, 0.3, np.pi / 4])
def test_box_resting_flat_on_a_flat_region_gets_the_four_corners_of_mujocos_plane(yaw):
    """A flat field (one corner raised so that MuJoCo's normalisation keeps the others at one
    height): MuJoCo reports one contact per prism under the box; this code the box's four
    corners, as MuJoCo's box-on-plane."""
    E = np.full((9, 10), 0.5)
    E[0, 0], E[-1, -1] = 0.0, 1.0
    R = np.array([[np.cos(yaw), -np.sin(yaw), 0], [np.sin(yaw), np.cos(yaw), 0], [0, 0, 1]])
    X = [BOX, np.array([0.1, 0.07, 0.05]), R, np.array([0.02, -0.01, 0.5]), None]
    fld = Field(E, (0.45, 0.4, 0.1, 0.05), X)
    z0 = fld.heights[4, 4]
    assert z0 == pytest.approx(0.05, abs=1e-7) and np.all(fld.heights[1:-1, 1:-1] == z0)
    X[3][2] = z0 + 0.05 - 1e-4   # resting, 0.1 mm deep
    fld.pose(X[3], R)
    theirs = fld.contacts()
    assert len(theirs) > 4  # one per prism under the box
    dist, pos, frame = collide(fld.field(), fld.shape(), 0.0)
    plane = (PLANE, np.zeros(3), I3, np.array([0.0, 0.0, z0]))
    box = (BOX, X[1], R, X[3])
    m, d = mj_build(plane, box)
    ref = mj_contacts(m, d)
    assert len(dist) == 4 == len(ref)
    assert match_sets(rows(dist, pos, frame[:, 0]), rows([c[1] for c in ref], [c[2] for c in ref],
                                                         [c[3] for c in ref]), 1e-9)


# ------------------------------------------------------------------ coal's triangle soups

def bumpy_surface(rng, n=10, extent=1.0, amplitude=0.04):
    """An open triangulated surface: an n x n grid with random heights and a random diagonal
    per cell, counter-clockwise seen from above."""
    x = np.linspace(-extent / 2, extent / 2, n)
    X, Y = np.meshgrid(x, x)
    V = np.c_[X.ravel(), Y.ravel(), amplitude * rng.uniform(-1, 1, n * n)]
    F = []
    for r in range(n - 1):
        for c in range(n - 1):
            a, b, d, e = r * n + c, r * n + c + 1, (r + 1) * n + c, (r + 1) * n + c + 1
            F += [[a, b, e], [a, e, d]] if rng.uniform() < 0.5 else [[a, b, d], [b, e, d]]
    return V, np.array(F)


def closed_mesh():
    """A closed non-convex solid: a U-shaped block (the polygon below, in x-z, 0.1 m units,
    extruded 0.3 m along y), outward triangles; checked with trimesh."""
    import trimesh
    P = 0.1 * np.array([(-3, 0), (3, 0), (3, 1), (3, 3), (1, 3), (1, 1), (-1, 1), (-1, 3), (-3, 3), (-3, 1)], float)
    caps = [(0, 1, 2), (0, 2, 5), (0, 5, 6), (0, 6, 9), (5, 2, 3), (5, 3, 4), (9, 6, 7), (9, 7, 8)]
    n = len(P)
    V = np.array([[x, y, z] for y in (-0.15, 0.15) for x, z in P])
    F = []
    for a, b, c in caps:  # counter-clockwise in (x, z): normal -y; the y = +0.15 cap reversed
        F += [[a, c, b], [n + a, n + b, n + c]]
    for k in range(n):
        j = (k + 1) % n
        F += [[k, j, n + j], [k, n + j, n + k]]
    F = np.array(F)
    mesh = trimesh.Trimesh(V, F, process=False)
    if mesh.volume < 0:
        F = F[:, ::-1].copy()
        mesh = trimesh.Trimesh(V, F, process=False)
    assert mesh.is_watertight and mesh.is_winding_consistent and mesh.volume == pytest.approx(0.6 * 0.3 * 0.3 - 0.2 * 0.2 * 0.3)
    return V, F


def coal_soup(V, F):
    import coal
    b = coal.BVHModelOBBRSS()
    b.beginModel(len(F), len(V))
    b.addVertices(np.asarray(V, float))
    b.addTriangles(np.asarray(F, np.int64))
    b.endModel()
    return b


def coal_distance_to(soup, R, p, X):
    import coal
    from .narrow_oracles import coal_geom
    req = coal.DistanceRequest()
    req.gjk_tolerance = req.epa_tolerance = 1e-12
    res = coal.DistanceResult()
    d = coal.distance(soup, coal.Transform3s(R, p), coal_geom(X), coal.Transform3s(X[2], X[3]), req, res)
    return d, np.array(res.normal)


@pytest.mark.parametrize("mesh", ["bumpy", "closed"])
@pytest.mark.parametrize("t", [SPHERE, BOX, CAPSULE], ids=[SHAPE_NAMES[t] for t in (SPHERE, BOX, CAPSULE)])
def test_mesh_distance_matches_coal(t, mesh):
    pytest.importorskip("coal")
    rng = np.random.default_rng(7 + t)
    V, F = bumpy_surface(rng) if mesh == "bumpy" else closed_mesh()
    soup = coal_soup(V, F)
    work = narrow_workspace()
    compared = 0
    for trial in range(16):
        Rm, pm = random_rotation(rng), rng.uniform(-0.1, 0.1, 3)
        X = rand_geom(t, rng)
        # a point near the surface, then X placed outside it along a random direction
        if mesh == "bumpy":
            q = V[rng.integers(len(V))].copy()
            q[:2] += rng.uniform(-0.05, 0.05, 2)
            u = np.array([rng.uniform(-0.5, 0.5), rng.uniform(-0.5, 0.5), 1.0])
        else:
            f = F[rng.integers(len(F))]
            w = rng.dirichlet(np.ones(3))
            q = w @ V[f]
            u = np.cross(V[f[1]] - V[f[0]], V[f[2]] - V[f[0]])
            u = u / np.linalg.norm(u) + 0.4 * rng.normal(size=3)
        u /= np.linalg.norm(u)
        X[3] = Rm @ (q + u * 0.4) + pm
        d0, _ = coal_distance_to(soup, Rm, pm, X)
        target = rng.uniform(0.002, 0.03)
        for _ in range(3):
            X[3] = X[3] - Rm @ u * (d0 - target)
            d0, _ = coal_distance_to(soup, Rm, pm, X)
        dc, nc = coal_distance_to(soup, Rm, pm, X)
        if not dc > 1e-3:
            continue
        dist, pos, frame = collide((MESH, (), Rm, pm, V, F), tuple(X), dc + 0.01, work)
        assert len(dist) and np.all(dist <= dc + 0.01)
        check_frames(frame)
        k = int(np.argmin(dist))
        assert dist[k] == pytest.approx(dc, abs=1e-9), (trial, dist, dc)
        assert np.abs(frame[k, 0] - nc).max() < 1e-6, (trial, frame[k, 0], nc)   # mesh to X (coal's o1 -> o2)
        compared += 1
    assert compared >= 8


# ------------------------------------------------------------------ internal edges and ridges

FLOOR_V = np.array([[-1, -1, 0], [1, -1, 0], [1, 1, 0], [-1, 1, 0.]])
FLOOR_F = np.array([[0, 1, 2], [0, 2, 3]])


def test_a_box_over_the_diagonal_of_a_flat_floor_gets_face_normals_only():
    """The shared edge of two coplanar triangles is not a feature of the floor: a box sliding
    over it (separated, touching, penetrating) gets normals +z only, and 4 contacts when flat."""
    rng = np.random.default_rng(3)
    floor = (MESH, (), I3, np.zeros(3), FLOOR_V, FLOOR_F)
    for trial in range(20):
        yaw = rng.uniform(0, np.pi)
        R = np.array([[np.cos(yaw), -np.sin(yaw), 0], [np.sin(yaw), np.cos(yaw), 0], [0, 0, 1]])
        s = rng.uniform(0, 0.5)
        gap = rng.uniform(-1e-4, 5e-3)
        box = (BOX, (0.1, 0.15, 0.05), R, np.array([s, s + rng.uniform(-0.1, 0.1), 0.05 + gap]))
        dist, pos, frame = collide(box, floor, 0.01)
        assert len(dist) == 4, (trial, dist)
        # GJK's normal of a separated face pair: the closest points' difference, ~1e-16 / gap
        np.testing.assert_allclose(frame[:, 0], np.tile([0, 0, -1.0], (4, 1)), atol=1e-9)
        np.testing.assert_allclose(dist, gap, atol=1e-12)
    for trial in range(20):  # a sphere rolling over it: one contact, straight down
        s = rng.uniform(-0.5, 0.5)
        ball = (SPHERE, (0.1,), I3, np.array([s + rng.uniform(-0.06, 0.06), s, 0.1 + rng.uniform(-1e-4, 5e-3)]))
        dist, pos, frame = collide(floor, ball, 0.01)
        assert len(dist) == 1
        np.testing.assert_allclose(frame[0, 0], [0, 0, 1.0], atol=1e-12)
        assert dist[0] == pytest.approx(ball[3][2] - 0.1, abs=1e-12)


def test_a_convex_ridge_gives_normals_between_its_faces():
    """A roof (two triangles... four: two slopes of 0.3 rad meeting at x = 0): a sphere above
    the ridge line touches the ridge edge, its normal from the edge to the centre, within the
    cone of the slopes' normals; one on a slope gets that slope's normal."""
    a = 0.3
    V = np.array([[-1, -1, -np.tan(a)], [0, -1, 0], [0, 1, 0], [-1, 1, -np.tan(a)], [1, -1, -np.tan(a)],
                  [1, 1, -np.tan(a)]])
    F = np.array([[0, 1, 2], [0, 2, 3], [1, 4, 5], [1, 5, 2]])
    roof = (MESH, (), I3, np.zeros(3), V, F)
    for x in (-0.02, -0.005, 0.0, 0.01, 0.025):
        c = np.array([x, 0.1, 0.1 + 1e-3])
        dist, pos, frame = collide(roof, (SPHERE, (0.1,), I3, c), 0.05)
        k = int(np.argmin(dist))
        n_left, n_right = np.array([-np.sin(a), 0, np.cos(a)]), np.array([np.sin(a), 0, np.cos(a)])
        # exact: the nearest point of the roof to the centre
        if abs(x) <= (0.1 + 1e-3) * np.tan(a):  # above the edge's normal cone
            expect_n = c / np.linalg.norm(c * [1, 0, 1]) * [1, 0, 1]
            expect_d = np.linalg.norm(c * [1, 0, 1]) - 0.1
        else:
            expect_n = n_right if x > 0 else n_left
            expect_d = expect_n @ c - 0.1
        assert dist[k] == pytest.approx(expect_d, abs=1e-12)
        np.testing.assert_allclose(frame[k, 0], expect_n, atol=1e-12)


def test_contacts_from_below_a_thin_sheet_and_from_behind_are_ignored():
    """One-sided surfaces: a shape whose centre is behind a triangle's plane gets no contact
    from it (a thin closed slab: the far side's prisms would otherwise pull a shape under the
    slab through it)."""
    floor = (MESH, (), I3, np.zeros(3), FLOOR_V, FLOOR_F)
    below = (SPHERE, (0.1,), I3, np.array([0.1, 0.2, -0.099]))
    assert len(collide(floor, below, 0.01)[0]) == 0
    # a slab 5 mm thick: a sphere touching its underside gets the underside's normal only
    import trimesh
    slab = trimesh.creation.box((1.0, 1.0, 0.005))
    S = (MESH, (), I3, np.zeros(3), np.asarray(slab.vertices, float), np.asarray(slab.faces, np.int64))
    ball = (SPHERE, (0.05,), I3, np.array([0.1, 0.05, -0.0025 - 0.05 + 1e-4]))
    dist, pos, frame = collide(S, ball, 0.01)
    assert len(dist) == 1 and dist[0] == pytest.approx(-1e-4, abs=1e-12)
    np.testing.assert_allclose(frame[0, 0], [0, 0, -1.0], atol=1e-12)


def test_argument_order_flips_the_normal():
    rng = np.random.default_rng(5)
    V, F = bumpy_surface(rng)
    mesh = (MESH, (), I3, np.zeros(3), V, F)
    box = (BOX, (0.05, 0.04, 0.03), random_rotation(rng), np.array([0.1, 0.05, 0.07]))
    d1, p1, f1 = collide(mesh, box, 0.1)
    d2, p2, f2 = collide(box, mesh, 0.1)
    assert len(d1) and match_sets(rows(d1, p1, f1[:, 0]), rows(d2, p2, -f2[:, 0]), 1e-12)
    hf = (HFIELD, (0.5, 0.5, 0.05, 0.02), I3, np.zeros(3), rng.uniform(0, 0.05, (6, 6)))
    d1, p1, f1 = collide(hf, box, 0.1)
    d2, p2, f2 = collide(box, hf, 0.1)
    assert len(d1) and match_sets(rows(d1, p1, f1[:, 0]), rows(d2, p2, -f2[:, 0]), 1e-12)


def test_families_and_unsupported_terrain_pairs():
    family = getattr(narrow.pair_family, "py_func", narrow.pair_family)
    for t in SHAPES:
        assert family(HFIELD, t) == narrow.TERRAIN and family(t, MESH) == narrow.TERRAIN
    for a, b in [(PLANE, HFIELD), (PLANE, MESH), (HFIELD, HFIELD), (HFIELD, MESH), (MESH, MESH)]:
        assert family(a, b) == narrow.UNSUPPORTED
    with pytest.raises(ValueError, match="no collider"):
        collide((PLANE, (), I3, np.zeros(3)), (MESH, (), I3, np.zeros(3), FLOOR_V, FLOOR_F))
    # the compiled entry with a terrain given without its record (its rows of the table): no collider
    z, zf, s = np.zeros((0, 3)), np.zeros((0, 3), np.int64), np.array([0.1, 0.1, 0.1])
    dist, pos, frame = np.zeros(8), np.zeros((8, 3)), np.zeros((8, 3, 3))
    for t1, t2 in [(HFIELD, SPHERE), (BOX, MESH)]:
        n = narrow.collide_pair(t1, s, I3, np.zeros(3), z, zf, t2, s, I3, np.zeros(3), z, zf, 0.0, dist, pos, frame,
                                0, 8, narrow_workspace())
        assert n == narrow.UNSUPPORTED


# ------------------------------------------------------------------ the model and the table

def _terrain_model(shape, **kw):
    b = mb.ModelBuilder()
    b.add_body("ball", joint="free", mass=1.0, inertia=np.eye(3) * 0.004)
    b.add_geometry("ball", "sphere", (0.1,), name="ball")
    b.add_geometry("world", shape, name="terrain", **kw)
    return b.build()


def test_bounding_volumes_and_table_records():
    H = np.random.default_rng(1).uniform(0, 0.3, (5, 6))
    model = _terrain_model("hfield", size=(2.0, 1.0, 0.3, 0.1), heights=H,
                           placement=(I3, np.array([0.0, 0.0, 0.0])))
    g = next(x for x in model.collision_geometries if x.name == "terrain")
    c, h = bounding_box(g)
    np.testing.assert_allclose(c, [0, 0, 0.1]) and np.testing.assert_allclose(h, [1.0, 0.5, 0.2])
    assert bounding_radius(g) == pytest.approx(np.sqrt(1 + 0.25 + 0.3 ** 2))
    table = GeometryTable(model)
    assert len(table.pairs) == 1 and not table.unsupported
    k = [x.name for x in table.geometries].index("terrain")
    rec = table.vertices[table.vstart[k]:table.vstart[k + 1]]
    assert tuple(rec[0]) == (5, 6, 0.1) and np.array_equal(rec.ravel()[3:33], H.ravel())
    model = _terrain_model("mesh", vertices=FLOOR_V, faces=FLOOR_F)
    table = GeometryTable(model)
    k = [x.name for x in table.geometries].index("terrain")
    rec = table.vertices[table.vstart[k]:table.vstart[k + 1]]
    assert tuple(rec[0]) == (4, 2, 1)  # 4 vertices, 2 triangles, one tree node (a leaf)


def test_a_plane_on_a_moving_body_with_a_terrain_is_unsupported():
    b = mb.ModelBuilder()
    b.add_body("paddle", joint="free", mass=1.0, inertia=np.eye(3) * 0.004)
    b.add_geometry("paddle", "plane", name="paddle")
    b.add_geometry("world", "mesh", vertices=FLOOR_V, faces=FLOOR_F, name="floor")
    table = GeometryTable(b.build())
    assert table.unsupported == [("floor", "paddle")] and len(table.pairs) == 0


def test_bad_terrain_input_is_named():
    V = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [2, 0, 0.]])
    with pytest.raises(ModelError, match="geometry 'terrain'.*degenerate triangle 1.*zero area"):
        _terrain_model("mesh", vertices=V, faces=np.array([[0, 1, 2], [0, 1, 3]]))
    with pytest.raises(ModelError, match="geometry 'terrain'.*degenerate triangle 0.*repeated vertex"):
        _terrain_model("mesh", vertices=V, faces=np.array([[0, 0, 2], [0, 1, 2]]))
    with pytest.raises(ModelError, match="geometry 'terrain'.*at least one triangle"):
        _terrain_model("mesh", vertices=V, faces=np.zeros((0, 3), np.int64))
    with pytest.raises(ModelError, match="geometry 'terrain'.*outside"):
        _terrain_model("mesh", vertices=V, faces=np.array([[0, 1, 7]]))
    with pytest.raises(ModelError, match="geometry 'terrain'.*not finite"):
        _terrain_model("mesh", vertices=np.where(V == 2, np.nan, V), faces=np.array([[0, 1, 2]]))
    H = np.zeros((4, 4))
    H[1, 2] = np.nan
    with pytest.raises(ModelError, match="geometry 'terrain'.*finite"):
        _terrain_model("hfield", size=(1, 1, 0.1, 0.1), heights=H)
    with pytest.raises(ModelError, match="geometry 'terrain'.*size"):
        _terrain_model("hfield", size=(1, 1, 0.1), heights=np.zeros((4, 4)))
    with pytest.raises(ModelError, match="geometry 'terrain'.*in \\[0"):
        _terrain_model("hfield", size=(1, 1, 0.1, 0.1), heights=np.full((4, 4), 0.2))
    with pytest.raises(ModelError, match="geometry 'terrain'.*nrow, ncol >= 2"):
        _terrain_model("hfield", size=(1, 1, 0.1, 0.1), heights=np.zeros((1, 4)))
    with pytest.warns(ModelWarning, match="geometry 'terrain'.*not consistently oriented"):
        _terrain_model("mesh", vertices=FLOOR_V, faces=np.array([[0, 1, 2], [0, 3, 2]]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _terrain_model("mesh", vertices=FLOOR_V, faces=FLOOR_F)
