"""Collision geometry of loaded models against Pinocchio, coal and MuJoCo.

* Every example-robot-data URDF that Pinocchio loads (the sweep of
  ``test_example_robot_data.py``: the files are enumerated from the
  package) loads with its collision meshes, and its collision geometries
  match Pinocchio's ``GeometryModel`` (``pin.buildGeomFromUrdf(...,
  pin.COLLISION)``): the same number per link, in order, the same world
  placements at random configurations (``pin.updateGeometryPlacements``),
  the same primitive sizes, and for meshes the same convex hull as coal
  builds (``BVHModel.buildConvexHull``, qhull) from the mesh Pinocchio
  loaded with assimp: each hull lies inside the other's half-spaces.
* MJCF contact attributes equal MuJoCo's compiled arrays; mesh and height
  field data equal MuJoCo's; explicit pairs, excludes and filterparent.
* Missing and degenerate meshes: warning (and the geometry left out) or
  ``meshes="strict"`` error; ``meshes="skip"`` opens no file.
"""
import glob
import os
import warnings

import coal
import mujoco
import numpy as np
import pinocchio as pin
import pytest

import multibody as mb
from multibody.errors import ModelFileError, ModelWarning
from oracles import Mapping, robot_path, robots_dir

ROOT = robots_dir()
SHARE = os.path.dirname(os.path.dirname(ROOT))  # package://example-robot-data/... resolves from here
URDFS = sorted(os.path.relpath(f, ROOT) for f in glob.glob(os.path.join(ROOT, "*", "*", "*.urdf")))
#: quick to load (a few seconds in all); STL, OBJ (solo) and DAE (anymal, icub) meshes, fixed and
#: mirrored scales (talos); the rest of the sweep is marked slow
FAST = {"ur_description/urdf/ur5_robot.urdf", "talos_data/robots/talos_reduced.urdf",
        "solo_description/robots/solo12.urdf", "anymal_b_simple_description/robots/anymal.urdf",
        "icub_description/robots/icub_reduced.urdf", "panda_description/urdf/panda.urdf",
        "tiago_description/robots/tiago_no_hand.urdf", "go1_description/urdf/go1.urdf",
        "romeo_description/urdf/romeo_laas_small.urdf", "allegro_hand_description/urdf/allegro_right_hand.urdf"}
CASES = [pytest.param(rel, id=rel.split("/")[-1][:-5], marks=() if rel in FAST else pytest.mark.slow)
         for rel in URDFS]
TOL = 1e-9


def coal_hull_planes(geometry):
    """(points, normals, offsets) of coal's convex hull of a Pinocchio mesh
    (a BVH mesh, hulled here; or already a Convex, Pinocchio's
    ``<collision_checking><convex>``): inside means n·x + offset <= 0."""
    if isinstance(geometry, coal.BVHModelBase):
        geometry.buildConvexHull(False, "Qt")
        geometry = geometry.convex
    else:  # Pinocchio's Convex has no half-spaces (reading them crashes): hull its points again with coal
        points = coal.StdVec_Vec3s()
        for x in np.array(geometry.points()):
            points.append(x)
        geometry = coal.Convex.convexHull(points, False, "Qt")
    return np.array(geometry.points()), np.array(geometry.normals()), np.array(geometry.offsets())


def our_planes(g):
    V, F = g.vertices, g.faces
    a, b, c = V[F[:, 0]], V[F[:, 1]], V[F[:, 2]]
    n = np.cross(b - a, c - a)
    n /= np.linalg.norm(n, axis=1, keepdims=True)
    return n, -np.einsum("ij,ij->i", n, a)


def assert_same_hull(g, bvh, what):
    pts, n, d = coal_hull_planes(bvh)
    extent = np.ptp(pts, axis=0).max()
    tol = 1e-6 * max(extent, 1e-3)
    assert np.max(g.vertices @ n.T + d) <= tol, f"{what}: a vertex of our hull lies outside coal's"
    n2, d2 = our_planes(g)
    assert np.isfinite(n2).all(), f"{what}: a degenerate face"
    assert np.max(pts @ n2.T + d2) <= tol, f"{what}: a vertex of coal's hull lies outside ours"
    # our faces are oriented outwards: every vertex is on the inner side of every face
    assert np.max(g.vertices @ n2.T + d2) <= tol, f"{what}: faces not oriented outwards"


def pin_size(shape, geo):
    """Pinocchio/coal primitive sizes in multibody's user-facing convention."""
    if isinstance(geo, coal.Box):
        return tuple(2.0 * np.asarray(geo.halfSide))
    if isinstance(geo, coal.Sphere):
        return (geo.radius,)
    if isinstance(geo, (coal.Cylinder, coal.Capsule)):
        return (geo.radius, 2.0 * geo.halfLength)
    raise AssertionError(f"unexpected coal geometry {type(geo).__name__} for shape {shape}")


def test_the_sweep_covers_the_package():
    assert len(URDFS) >= 60 and FAST <= set(URDFS)


@pytest.mark.parametrize("rel", CASES)
def test_collision_geometry_matches_pinocchio(rel):
    path = os.path.join(ROOT, rel)
    try:
        pm = pin.buildModelFromUrdf(path)
        gm = pin.buildGeomFromUrdf(pm, path, pin.COLLISION, package_dirs=[SHARE])
    except Exception:  # noqa: BLE001 — a file Pinocchio refuses is test_example_robot_data's business
        pytest.skip("Pinocchio does not load it")
    with warnings.catch_warnings():
        warnings.simplefilter("error", ModelWarning)  # every mesh Pinocchio reads, we read
        warnings.filterwarnings("ignore", message=".*(inertia|mimic|mass)", category=ModelWarning)
        model = mb.load_urdf(path)
    assert model.skipped_geometries == ()
    ours = {}
    for g in model.collision_geometries:
        ours.setdefault(g.link, []).append(g)
    theirs = {}
    for go in gm.geometryObjects:
        theirs.setdefault(pm.frames[go.parentFrame].name, []).append(go)
    assert {k: len(v) for k, v in ours.items()} == {k: len(v) for k, v in theirs.items()}

    mp = Mapping(model, pm)
    pd, gd = pm.createData(), gm.createData()
    pin.seed(3)
    for _ in range(2):
        qp = pin.randomConfiguration(pm, np.clip(pm.lowerPositionLimit, -3, 3), np.clip(pm.upperPositionLimit, -3, 3))
        pin.updateGeometryPlacements(pm, pd, gm, gd, qp)
        oMi = mb.forward_kinematics(model, mp.q_from_pin(qp))
        for link, gs in ours.items():
            for g, go in zip(gs, theirs[link]):
                k = gm.getGeometryId(go.name)
                np.testing.assert_allclose(oMi[g.body] @ g.placement, gd.oMg[k].homogeneous, atol=TOL,
                                           err_msg=f"{rel}: geometry '{g.name}'")
    for link, gs in ours.items():
        for g, go in zip(gs, theirs[link]):
            what = f"{rel}: geometry '{g.name}'"
            if g.shape in ("convex", "mesh"):
                assert isinstance(go.geometry, (coal.BVHModelBase, coal.ConvexBase)), what
                np.testing.assert_allclose(g.scale, go.meshScale, err_msg=what)
                assert os.path.samefile(g.mesh, go.meshPath), what
                if g.shape == "convex":
                    assert_same_hull(g, go.geometry, what)
                else:  # a static triangle mesh (a link fixed to the world): Pinocchio's vertices, merged
                    assert g.body == 0 and model.joints[0].nv == 0, what
                    theirs_v = np.unique(np.asarray(go.geometry.vertices()), axis=0)
                    assert g.vertices.shape == theirs_v.shape, what
                    np.testing.assert_allclose(np.sort(g.vertices, axis=0), np.sort(theirs_v, axis=0),
                                               atol=1e-6, err_msg=what)
            else:
                np.testing.assert_allclose(g.size, pin_size(g.shape, go.geometry), rtol=1e-12, err_msg=what)
            # URDF has no contact parameters: MuJoCo's defaults (mjs_defaultGeom)
            assert (g.friction, g.condim, g.contype, g.conaffinity, g.margin, g.restitution) == \
                ((1.0, 0.005, 0.0001), 3, 1, 1, 0.0, 0.0), what


def test_floating_talos_base_is_convex_and_arrays_are_read_only():
    model = mb.load_urdf(robot_path("talos"), floating_base=True)
    base = next(g for g in model.collision_geometries if g.link == "base_link")
    assert base.shape == "convex" and base.body == 1
    for a in (base.vertices, base.faces, base.placement):
        assert not a.flags.writeable
    # the mirrored arm meshes (scale y = -1) are their own hulls mirrored, faces still outwards
    left = next(g for g in model.collision_geometries if g.link == "arm_left_1_link")
    right = next(g for g in model.collision_geometries if g.link == "arm_right_1_link")
    assert left.mesh == right.mesh and left.scale != right.scale
    for g in (left, right):
        n, d = our_planes(g)
        assert np.max(g.vertices @ n.T + d) <= 1e-9


def test_pickle_and_equality_keep_geometry():
    import pickle
    model = mb.load_urdf(robot_path("ur5"))  # rooted at "world": its base mesh is a static triangle mesh
    again = pickle.loads(pickle.dumps(model))
    assert again.collision_geometries == model.collision_geometries
    assert [g.shape for g in again.collision_geometries[:2]] == ["mesh", "convex"]
    g = again.collision_geometries[1]
    assert not g.vertices.flags.writeable and not g.placement.flags.writeable
    assert g != g.replace(friction=(0.5, 0.005, 0.0001))


# ------------------------------------------------------------- mesh problems
def urdf_with(filename, collision=True, link_kw=""):
    tag = "collision" if collision else "visual"
    return (f'<robot name="r"><link name="base"/><link name="arm"><inertial><mass value="1"/>'
            f'<inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial>'
            f'<{tag} name="hull"><geometry><mesh filename="{filename}"/></geometry></{tag}>'
            f'<collision name="ball"><geometry><sphere radius="0.1"/></geometry></collision></link>'
            f'<joint name="j" type="continuous"><parent link="base"/><child link="arm"/></joint></robot>')


def test_missing_mesh_warns_and_is_left_out(tmp_path):
    with pytest.warns(ModelWarning, match=r"link 'arm' <collision> 'hull': mesh file 'package://nowhere/x.stl' "
                                          r"not found"):
        model = mb.load_urdf(urdf_with("package://nowhere/x.stl"))
    assert [g.name for g in model.collision_geometries] == ["ball"]
    (g, reason), = model.skipped_geometries
    assert g.name == "hull" and g.link == "arm" and "not found" in reason
    with pytest.raises(ModelFileError, match=r"link 'arm' <collision> 'hull': mesh file .*x.stl' not found"):
        mb.load_urdf(urdf_with("package://nowhere/x.stl"), meshes="strict")


def test_unreadable_and_degenerate_meshes(tmp_path):
    bad = tmp_path / "bad.stl"
    bad.write_bytes(b"\x00\x01 not a mesh")
    flat = tmp_path / "flat.obj"
    flat.write_text("v 0 0 0\nv 1 0 0\nv 0 1 0\nv 1 1 0\nf 1 2 3\nf 2 4 3\n")
    for f, why in ((bad, "cannot be read|holds no triangles"), (flat, "degenerate")):
        path = tmp_path / f"r_{f.stem}.urdf"
        path.write_text(urdf_with(f.name))
        with pytest.warns(ModelWarning, match=f"'hull': mesh file '{f}'.*({why})"):
            model = mb.load_urdf(path)
        assert [g.name for g, _ in model.skipped_geometries] == ["hull"]
        with pytest.raises(ModelFileError, match=f"'hull': mesh file .*({why})"):
            mb.load_urdf(path, meshes="strict")


def test_skip_opens_no_mesh_file(monkeypatch):
    import multibody.model.meshes as meshes

    def refuse(*a, **k):
        raise AssertionError("a mesh file was opened")
    monkeypatch.setattr(meshes, "read_mesh", refuse)
    model = mb.load_urdf(robot_path("talos"), floating_base=True, meshes="skip")
    assert all(g.shape != "convex" for g in model.collision_geometries)
    assert len(model.skipped_geometries) == 47 and all("meshes='skip'" in r for _, r in model.skipped_geometries)
    with pytest.raises(mb.InputError, match="meshes"):
        mb.load_urdf(robot_path("ur5"), meshes="fast")


def test_visual_meshes_are_not_opened():
    model = mb.load_urdf(urdf_with("package://nowhere/x.stl", collision=False), meshes="strict")
    assert [g.shape for g in model.visual_geometries] == ["mesh"] and model.visual_geometries[0].vertices is None


# -------------------------------------------------------------------- MJCF
MJCF = """<mujoco><option><flag filterparent="{fp}"/></option>
  <asset><mesh name="tet" vertex="0 0 0  1 0 0  0 1 0  0 0 1  0.2 0.2 0.2" scale="1 2 0.5"/>
    <hfield name="hill" nrow="3" ncol="4" size="2 1 0.5 0.1"
            elevation="0 1 2 3  4 5 6 7  8 9 10 11"/></asset>
  <default><geom solref="0.01 0.8"/></default>
  <worldbody>
    <geom name="floor" type="plane" size="0 0 1" friction="0.7 0.01 0.001" priority="2"/>
    <geom name="terrain" type="hfield" hfield="hill" pos="3 0 0"/>
    <body name="a" pos="0 0 1"><joint name="ja" type="hinge" axis="0 1 0"/>
      <geom name="ga" type="box" size="0.1 0.2 0.3" condim="6" margin="0.01" gap="0.002" contype="2"
            conaffinity="5" solimp="0.8 0.9 0.01 0.4 3"/>
      <body name="b" pos="0 0 -1"><joint name="jb1" type="hinge" pos="0 0 0.2"/>
        <joint name="jb2" type="slide" axis="1 0 0"/>
        <geom name="gb" type="mesh" mesh="tet" pos="0.1 0 0" condim="1" friction="0.3 0 0"/>
        <geom name="ghost" type="sphere" size="0.05" contype="0" conaffinity="0"/>
        <body name="c"><geom name="gc" type="capsule" size="0.05 0.2"/></body></body></body>
  </worldbody>
  <contact><pair name="p1" geom1="ghost" geom2="floor" condim="4" friction="0.5 0.6 0.01 0.002 0.003"
                 margin="0.02" gap="0.01" solref="0.03 1.1" solreffriction="0.04 0.9" solimp="0.7 0.8 0.002 0.3 1"/>
    <exclude body1="a" body2="c"/></contact></mujoco>"""


def test_mjcf_contact_attributes_equal_mujocos():
    xml = MJCF.format(fp="enable")
    mm = mujoco.MjModel.from_xml_string(xml)
    model = mb.load_mjcf(xml)
    coll = {g.name: g for g in model.collision_geometries}
    assert set(coll) == {"floor", "terrain", "ga", "gb", "ghost", "gc"}  # ghost: named by a pair
    for k in range(mm.ngeom):
        g = coll[mm.geom(k).name]
        np.testing.assert_array_equal(g.friction, mm.geom_friction[k])
        np.testing.assert_array_equal(g.solref, mm.geom_solref[k])
        np.testing.assert_array_equal(g.solimp, mm.geom_solimp[k])
        assert (g.contype, g.conaffinity, g.condim, g.priority) == \
            (mm.geom_contype[k], mm.geom_conaffinity[k], mm.geom_condim[k], mm.geom_priority[k])
        assert (g.margin, g.gap) == (mm.geom_margin[k], mm.geom_gap[k])
        assert g.link == mm.body(mm.geom_bodyid[k]).name  # MuJoCo's body (world: "world")
    assert (coll["ga"].condim, coll["ga"].contype, coll["ga"].conaffinity) == (6, 2, 5)  # the file's values

    (p,) = model.collision_pairs
    # MuJoCo's compiled order (it puts the lower geom type first: floor, then ghost)
    assert (p.name, p.geom1, p.geom2, p.condim) == ("p1", mm.geom(mm.pair_geom1[0]).name,
                                                     mm.geom(mm.pair_geom2[0]).name, mm.pair_dim[0])
    assert {p.geom1, p.geom2} == {"ghost", "floor"}
    for field in ("friction", "solref", "solreffriction", "solimp"):
        np.testing.assert_array_equal(getattr(p, field), getattr(mm, "pair_" + field)[0])
    assert (p.margin, p.gap) == (mm.pair_margin[0], mm.pair_gap[0])
    sig = int(mm.exclude_signature[0])
    assert model.excluded_link_pairs == ((mm.body(sig >> 16).name, mm.body(sig & 0xFFFF).name),)
    assert model.filter_parent is True
    assert mb.load_mjcf(MJCF.format(fp="disable")).filter_parent is False

    # mesh: MuJoCo's compiled vertices, in the frame where the geometry's placement puts MuJoCo's geom
    d = mujoco.MjData(mm)
    d.qpos[:] = (0.3, -0.5, 0.2)
    mujoco.mj_kinematics(mm, d)
    oMi = mb.forward_kinematics(model, d.qpos.copy())
    k = mm.geom("gb").id
    gb = coll["gb"]
    assert gb.shape == "convex" and gb.scale == (1.0, 2.0, 0.5)
    T = oMi[gb.body] @ gb.placement
    ours = gb.vertices @ T[:3, :3].T + T[:3, 3]
    vm = mm.mesh_vert[mm.mesh_vertadr[0]:mm.mesh_vertadr[0] + mm.mesh_vertnum[0]]
    theirs = vm @ d.geom_xmat[k].reshape(3, 3).T + d.geom_xpos[k]
    # the hull drops the interior vertex (0.2, 0.2, 0.2): 4 of MuJoCo's 5 vertices
    dist = np.linalg.norm(ours[:, None] - theirs[None], axis=-1)
    assert len(ours) == 4 and dist.min(axis=1).max() < 1e-6
    # the visual geometry keeps MuJoCo's full mesh
    vis = next(g for g in model.visual_geometries if g.name == "gb")
    assert vis.shape == "mesh" and len(vis.vertices) == mm.mesh_vertnum[0]
    np.testing.assert_array_equal(vis.faces, mm.mesh_face[mm.mesh_faceadr[0]:][:mm.mesh_facenum[0]])

    # height field: MuJoCo's normalized data times the elevation, rows along y
    hf = coll["terrain"]
    assert hf.shape == "hfield" and hf.body == 0
    np.testing.assert_array_equal(hf.size, (2 * mm.hfield_size[0][0], 2 * mm.hfield_size[0][1],
                                            mm.hfield_size[0][2], mm.hfield_size[0][3]))
    np.testing.assert_allclose(hf.heights, mm.hfield_data.reshape(3, 4) * 0.5, rtol=1e-6)
    # the layout (heights[r, c] at x = -sx/2 + c sx/(ncol-1), y = -sy/2 + r sy/(nrow-1)) against MuJoCo's
    # own ray cast onto the terrain (MuJoCo flips the XML's rows when it compiles the field)
    geomid = np.zeros(1, dtype=np.int32)
    p0 = oMi[hf.body] @ hf.placement
    sx, sy = hf.size[:2]
    for r in range(3):
        for c in range(4):
            x, y = -sx / 2 + c * sx / 3, -sy / 2 + r * sy / 2
            x, y = np.clip([x, y], [-sx / 2 + 1e-6, -sy / 2 + 1e-6], [sx / 2 - 1e-6, sy / 2 - 1e-6])
            start = p0[:3, :3] @ (x, y, 5.0) + p0[:3, 3]
            dist = mujoco.mj_ray(mm, d, start, np.array([0, 0, -1.0]), None, 1, -1, geomid)
            assert geomid[0] == mm.geom("terrain").id
            np.testing.assert_allclose(5.0 - dist, hf.heights[r, c], atol=1e-6, err_msg=(r, c))


def test_mjcf_collision_parent_skips_the_joint_bodies():
    """Body b has two joints, so the loader inserts a massless body b_jb1
    between a and b; MuJoCo's parent filter pairs b with a (its parent)."""
    model = mb.load_mjcf(MJCF.format(fp="enable"))
    assert model.body_names[model.parents[model.body_id("b")]] == "b_jb1"
    cp = model.collision_parent
    assert model.body_names[cp[model.body_id("b")]] == "a"
    assert cp[model.body_id("a")] == 0            # the world: MuJoCo does not filter it
    gc = next(g for g in model.collision_geometries if g.name == "gc")
    assert gc.link == "c" and model.body_names[gc.body] == "b"  # c is welded (merged) into b


def test_mjcf_mesh_option():
    xml = MJCF.format(fp="enable")
    model = mb.load_mjcf(xml, meshes="skip")
    assert [g.name for g, _ in model.skipped_geometries] == ["gb"]
    with pytest.raises(mb.InputError, match="meshes"):
        mb.load_mjcf(xml, meshes="maybe")


def test_mjcf_hfield_on_a_moving_body_is_refused():
    bad = MJCF.format(fp="enable").replace('<geom name="gc" type="capsule" size="0.05 0.2"/>',
                                           '<geom name="gc" type="hfield" hfield="hill"/>')
    try:
        mujoco.MjModel.from_xml_string(bad)
    except ValueError:
        pytest.skip("MuJoCo refuses an hfield on a moving body itself")
    with pytest.raises(ModelFileError, match="geometry 'gc'.*height field can only belong to a static body"):
        mb.load_mjcf(bad)


def test_binary_stl_reader_equals_trimesh():
    """Binary STL files are read with numpy (fast path); ASCII STL and other
    formats through trimesh. Both give trimesh's triangles."""
    import trimesh
    from multibody.model.meshes import _binary_stl, read_mesh
    files = sorted(glob.glob(os.path.join(ROOT, "talos_data", "meshes", "**", "*.[sS][tT][lL]"), recursive=True))
    fast = 0
    for f in files:
        V, F = read_mesh(f, scale=(1.0, -2.0, 0.5))
        ref = trimesh.load(f, force="mesh", process=False)
        np.testing.assert_array_equal(V[F], np.asarray(ref.vertices)[ref.faces][:, [0, 2, 1]] * (1.0, -2.0, 0.5),
                                      err_msg=f)  # a mirroring scale reverses the triangles
        fast += _binary_stl(f) is not None
    assert fast >= 20 and len(files) >= fast
