"""load_urdf against Pinocchio's own URDF parser (robots of example-robot-data
and a hand-written URDF using every joint type), against hand computations
(rotations from scipy, values written in the URDF text), and its errors."""
import os
import pathlib
import sys

import numpy as np
import pinocchio as pin
import pytest
from scipy.spatial.transform import Rotation

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from oracles import ROBOTS, Mapping, pin_model, robot_path  # noqa: E402

import multibody as mb  # noqa: E402
from multibody.errors import ModelError, ModelFileError  # noqa: E402
from multibody.io import load_urdf  # noqa: E402
from multibody.model.joints import C_P, C_R  # noqa: E402

TOL = 1e-10


def rpy(r, p, y):
    """URDF rpy (fixed axes x, y, z) by scipy, independent of multibody."""
    return Rotation.from_euler("xyz", [r, p, y]).as_matrix()


def hom(R, p):
    T = np.eye(4)
    T[:3, :3], T[:3, 3] = R, p
    return T


def pin_configurations(pm, n, seed=0):
    """``n`` random Pinocchio configurations inside the limits (unbounded
    coordinates drawn in [-2, 2])."""
    pin.seed(seed)
    lo = np.clip(pm.lowerPositionLimit, -2.0, 2.0)
    hi = np.clip(pm.upperPositionLimit, -2.0, 2.0)
    return [pin.randomConfiguration(pm, lo, hi) for _ in range(n)]


def pin_mass_matrix(pm, qp):
    M = pin.crba(pm, pm.createData(), qp)
    return np.triu(M) + np.triu(M, 1).T


def check_against_pinocchio(model, pm, nconf=10, seed=0):
    """Every comparison of the brief: joints, sizes, masses, inertias,
    placements, limits, frame kinematics and kinetic energy."""
    mp = Mapping(model, pm)
    # joints with coordinates: same names, same sizes (continuous: 1 angle vs (cos, sin))
    moving = [j for j in model.joints[1:] if j.nv > 0]
    assert sorted(j.name for j in moving) == sorted(pm.names[1:])
    extra_q = 0
    for j, pj in mp.joints:
        assert j.nv == pj.nv, j.name
        if pj.nq == 2 and j.nq == 1:  # continuous: (cos, sin) in Pinocchio
            assert "RUB" in pj.shortname() or "RevoluteUnbounded" in pj.shortname()
            extra_q += 1
        elif pj.nq == 4 and j.type == "planar":  # (x, y, cos, sin) in Pinocchio
            extra_q += 1
        else:
            assert j.nq == pj.nq, j.name
    assert model.nv == pm.nv and model.nq == pm.nq - extra_q
    # masses: bodies vs Pinocchio's joints; the world body holds what Pinocchio's universe holds
    assert abs(model.body_mass[1:].sum() - pin.computeTotalMass(pm)) < TOL
    assert abs(model.body_mass[0] - pm.inertias[0].mass) < TOL
    for j, pj in mp.joints:
        Y = pm.inertias[pj.id]
        i = j.child
        assert abs(model.body_mass[i] - Y.mass) < TOL, j.name
        np.testing.assert_allclose(model.body_com[i], Y.lever, atol=TOL, err_msg=j.name)
        np.testing.assert_allclose(model.body_inertia[i], Y.inertia, atol=TOL, err_msg=j.name)
        M = pm.jointPlacements[pj.id]
        np.testing.assert_allclose(model.tree[i, C_R:C_R + 9].reshape(3, 3), M.rotation, atol=TOL)
        np.testing.assert_allclose(model.tree[i, C_P:C_P + 3], M.translation, atol=TOL)
        ppar = pm.parents[pj.id]
        assert (model.joints[model.parents[i]].name if model.parents[i] else "universe") == pm.names[ppar]
        # limits
        if pj.nq == 1:
            assert model.lower_limit[j.q_slice][0] == pm.lowerPositionLimit[pj.idx_q]
            assert model.upper_limit[j.q_slice][0] == pm.upperPositionLimit[pj.idx_q]
    for ours, theirs in ((model.velocity_limit, pm.velocityLimit), (model.effort_limit, pm.effortLimit),
                         (model.damping, pm.damping), (model.friction, pm.friction)):
        theirs = np.asarray(theirs)  # Pinocchio's free flyer says "unbounded" with the largest double
        theirs = np.where(theirs == np.finfo(float).max, np.inf, theirs)
        np.testing.assert_array_equal(ours, mp.v_from_pin(theirs))
    # forward kinematics of every link frame (Pinocchio BODY frames), kinetic energy
    pd = pm.createData()
    names = [(model.frame_id(f.name), k) for k, f in enumerate(pm.frames) if f.type == pin.FrameType.BODY]
    assert ({pm.frames[k].name for _, k in names} | {"world"} ==
            {f.name for f in model.frames if f.kind in ("body", "fixed")} | {"world"})
    rng = np.random.default_rng(seed)
    for qp in pin_configurations(pm, nconf, seed):
        q = mp.q_from_pin(qp)
        pin.framesForwardKinematics(pm, pd, qp)
        F = mb.frame_placements(model, q)
        for ours, theirs in names:
            np.testing.assert_allclose(F[ours], pd.oMf[theirs].homogeneous, atol=TOL,
                                       err_msg=pm.frames[theirs].name)
        vp = rng.normal(size=pm.nv)
        ke = 0.5 * vp @ pin_mass_matrix(pm, qp) @ vp
        assert abs(mb.kinetic_energy(model, q, mp.v_from_pin(vp)) - ke) < TOL * max(1.0, ke)
    return mp


@pytest.mark.parametrize("robot", ["ur5", "panda", "solo12", "talos"])
def test_robot_matches_pinocchio(robot):
    model = load_urdf(robot_path(robot), floating_base=ROBOTS[robot][1])
    pm = pin_model(robot)
    check_against_pinocchio(model, pm)
    if ROBOTS[robot][1]:
        assert model.joints[1].name == "root_joint" and model.joints[1].type == "free"
    # every URDF link is a frame
    import xml.etree.ElementTree as ET
    links = [el.get("name") for el in ET.parse(robot_path(robot)).getroot().findall("link")]
    assert set(links) <= set(model.frame_names)


def test_ur5_meshes_resolve_from_the_urdf_folder():
    model = load_urdf(robot_path("ur5"))
    meshes = [g.mesh for g in model.visual_geometries + model.collision_geometries if g.shape == "mesh"]
    assert meshes and all(os.path.isfile(m) for m in meshes)
    assert all(g.shape == "mesh" for g in model.visual_geometries)


def test_ur5_without_merging_keeps_fixed_links_as_bodies():
    path = robot_path("ur5")
    model = load_urdf(pathlib.Path(path), merge_fixed=False)
    pm = pin_model("ur5")
    import xml.etree.ElementTree as ET
    root = ET.parse(path).getroot()
    links = [el.get("name") for el in root.findall("link")]
    assert set(model.body_names) == set(links) | {"world"}
    fixed = [el.get("name") for el in root.findall("joint") if el.get("type") == "fixed"]
    assert "world" in links  # UR5's root link is "world": no extra root joint
    assert sorted(j.name for j in model.joints if j.type == "fixed") == sorted(fixed)
    # same total mass (Pinocchio: the universe's share plus the moving bodies)
    assert abs(model.body_mass.sum() - pin.computeTotalMass(pm) - pm.inertias[0].mass) < TOL
    mp = Mapping(model, pm)
    pd = pm.createData()
    for qp in pin_configurations(pm, 5, seed=3):
        pin.framesForwardKinematics(pm, pd, qp)
        F = mb.frame_placements(model, mp.q_from_pin(qp))
        for k, f in enumerate(pm.frames):
            if f.type == pin.FrameType.BODY:
                np.testing.assert_allclose(F[model.frame_id(f.name)], pd.oMf[k].homogeneous, atol=TOL)


def test_string_path_and_pathlib_give_the_same_model():
    path = robot_path("panda")
    a = load_urdf(path)
    b = load_urdf(pathlib.Path(path))
    c = load_urdf(open(path).read())
    for m in (b, c):
        assert m.joint_names == a.joint_names and m.frame_names == a.frame_names
        np.testing.assert_array_equal(m.tree, a.tree)
    assert a.name == "panda" and load_urdf(path, name="arm").name == "arm"


# --------------------------------------------------------------------------
# a hand-written URDF with every joint type
# --------------------------------------------------------------------------

def inertial(m, xyz, rpy_, ixx, iyy, izz, ixy=0.0, ixz=0.0, iyz=0.0):
    return (f'<inertial><origin xyz="{xyz}" rpy="{rpy_}"/><mass value="{m}"/>'
            f'<inertia ixx="{ixx}" ixy="{ixy}" ixz="{ixz}" iyy="{iyy}" iyz="{iyz}" izz="{izz}"/></inertial>')


ALL_JOINTS = f"""<?xml version="1.0"?>
<robot name="zoo">
  <material name="blue"><color rgba="0 0 1 1"/></material>
  <link name="base">
    {inertial(2.0, "0.1 0 0.05", "0.3 -0.2 0.5", 0.02, 0.03, 0.04, 0.001, -0.002, 0.003)}
    <collision name="base_box"><origin xyz="0 0 0.1" rpy="0 0 0.5"/><geometry><box size="0.4 0.3 0.2"/></geometry></collision>
    <visual><origin xyz="0.1 0.2 0.3" rpy="0.1 0.2 0.3"/><geometry><mesh filename="package://zoo_pkg/meshes/base.stl" scale="0.001 0.002 0.003"/></geometry><material name="blue"/></visual>
  </link>
  <link name="upper">
    {inertial(1.5, "0 0 0.2", "0.4 0.1 -0.3", 0.05, 0.06, 0.02, 0.002, 0.001, -0.001)}
    <collision><geometry><cylinder radius="0.05" length="0.4"/></geometry><origin xyz="0 0 0.2"/></collision>
  </link>
  <link name="wheel">{inertial(0.7, "0.01 0 0", "0 0 0", 0.01, 0.01, 0.015)}</link>
  <link name="slider">{inertial(0.9, "0 0.02 0", "1.0 0 0", 0.004, 0.005, 0.006)}</link>
  <link name="tool">
    {inertial(0.3, "0 0 0.03", "0 0.7 0", 0.001, 0.002, 0.0015)}
    <collision><origin xyz="0 0 0.05" rpy="0.5 0 0"/><geometry><sphere radius="0.02"/></geometry></collision>
    <visual><geometry><sphere radius="0.02"/></geometry><material name="red"><color rgba="1 0 0 0.5"/></material></visual>
  </link>
  <link name="tip"/>
  <link name="drone">{inertial(1.2, "0 0 0.01", "0 0 0.2", 0.02, 0.02, 0.03)}</link>
  <link name="puck">{inertial(0.4, "0.01 0.02 0", "0 0 0", 0.001, 0.001, 0.0015)}</link>
  <link name="twin">{inertial(0.2, "0 0 0.05", "0 0 0", 0.0008, 0.0008, 0.0002)}</link>

  <joint name="shoulder" type="revolute">
    <parent link="base"/><child link="upper"/>
    <origin xyz="0 0 0.3" rpy="0.1 -0.2 0.3"/><axis xyz="0 1 1"/>
    <limit lower="-1.5" upper="2.0" effort="40" velocity="3.5"/>
    <dynamics damping="0.7" friction="0.2"/>
  </joint>
  <joint name="spin" type="continuous">
    <parent link="upper"/><child link="wheel"/>
    <origin xyz="0 0.1 0.4"/><axis xyz="1 0 0"/><limit effort="5" velocity="20"/>
  </joint>
  <joint name="slide" type="prismatic">
    <parent link="upper"/><child link="slider"/>
    <origin xyz="0.05 0 0.1" rpy="0 0.3 0"/><axis xyz="0 0 2"/>
    <limit lower="-0.1" upper="0.25" effort="100" velocity="0.5"/><dynamics damping="3"/>
  </joint>
  <joint name="tool_mount" type="fixed">
    <parent link="slider"/><child link="tool"/><origin xyz="0 0 0.12" rpy="0 0 1.2"/>
  </joint>
  <joint name="tip_mount" type="fixed">
    <parent link="tool"/><child link="tip"/><origin xyz="0 0 0.08"/>
  </joint>
  <joint name="fly" type="floating">
    <parent link="base"/><child link="drone"/><origin xyz="1 0 0.5" rpy="0 0.2 0"/>
  </joint>
  <joint name="glide" type="planar">
    <parent link="drone"/><child link="puck"/><origin xyz="0 0 -0.1"/><axis xyz="0 0 1"/>
  </joint>
  <joint name="twin_joint" type="revolute">
    <parent link="upper"/><child link="twin"/><origin xyz="0 -0.1 0.4"/><axis xyz="1 0 0"/>
    <limit lower="-3" upper="3" effort="1" velocity="1"/>
    <mimic joint="shoulder" multiplier="-2.0" offset="0.25"/>
  </joint>
</robot>
"""


def test_every_joint_type_matches_pinocchio():
    model = load_urdf(ALL_JOINTS)
    pm = pin.buildModelFromXML(ALL_JOINTS)
    check_against_pinocchio(model, pm, nconf=10, seed=1)
    types = {j.name: j.type for j in model.joints}
    assert types == {"universe": "universe", "shoulder": "revolute", "spin": "revolute", "slide": "prismatic",
                     "fly": "free", "glide": "planar", "twin_joint": "revolute"}
    # the base is fixed and merged into the world; the fixed links into the slider
    assert model.frames[model.frame_id("base")].body == 0
    for ln in ("tool", "tip"):
        f = model.frames[model.frame_id(ln)]
        assert f.kind == "fixed" and model.body_names[f.body] == "slider"
    assert "tool" not in model.body_names and len(model.body_names) == 7
    # values written above
    j = model.joints[model.joint_id("shoulder")]
    assert (model.lower_limit[j.q_slice], model.upper_limit[j.q_slice]) == (-1.5, 2.0)
    assert (model.velocity_limit[j.v_slice], model.effort_limit[j.v_slice]) == (3.5, 40.0)
    assert (model.damping[j.v_slice], model.friction[j.v_slice]) == (0.7, 0.2)
    np.testing.assert_allclose(j.axis, np.array([0, 1, 1]) / np.sqrt(2), atol=1e-15)
    s = model.joints[model.joint_id("spin")]
    assert model.lower_limit[s.q_slice] == -np.inf and model.upper_limit[s.q_slice] == np.inf
    assert (model.velocity_limit[s.v_slice], model.effort_limit[s.v_slice]) == (20.0, 5.0)
    p = model.joints[model.joint_id("slide")]
    np.testing.assert_allclose(p.axis, (0, 0, 1), atol=0)
    assert (model.lower_limit[p.q_slice], model.upper_limit[p.q_slice], model.damping[p.v_slice]) == (-0.1, 0.25, 3.0)
    assert [(c.joint, c.mimicked, c.multiplier, c.offset) for c in model.couplings] == \
        [("twin_joint", "shoulder", -2.0, 0.25)]


def test_inertial_rpy_rotates_the_inertia_into_the_link_frame():
    model = load_urdf(ALL_JOINTS)
    # "upper": hand computation I_link = R I Rᵀ with R from scipy
    I = np.array([[0.05, 0.002, 0.001], [0.002, 0.06, -0.001], [0.001, -0.001, 0.02]])
    R = rpy(0.4, 0.1, -0.3)
    i = model.body_id("upper")
    np.testing.assert_allclose(model.body_inertia[i], R @ I @ R.T, atol=1e-15)
    np.testing.assert_allclose(model.body_com[i], (0, 0, 0.2), atol=0)
    assert model.body_mass[i] == 1.5
    # "slider" with the merged "tool" (composite by hand: parallel-axis theorem)
    m1, c1, I1 = 0.9, np.array([0, 0.02, 0]), rpy(1.0, 0, 0) @ np.diag([0.004, 0.005, 0.006]) @ rpy(1.0, 0, 0).T
    Rt, pt = rpy(0, 0, 1.2), np.array([0, 0, 0.12])
    m2, c2 = 0.3, Rt @ np.array([0, 0, 0.03]) + pt
    I2 = Rt @ rpy(0, 0.7, 0) @ np.diag([0.001, 0.002, 0.0015]) @ rpy(0, 0.7, 0).T @ Rt.T
    m = m1 + m2
    c = (m1 * c1 + m2 * c2) / m
    par = lambda d: d @ d * np.eye(3) - np.outer(d, d)  # noqa: E731
    k = model.body_id("slider")
    assert abs(model.body_mass[k] - m) < 1e-15
    np.testing.assert_allclose(model.body_com[k], c, atol=1e-15)
    np.testing.assert_allclose(model.body_inertia[k], I1 + m1 * par(c1 - c) + I2 + m2 * par(c2 - c), atol=1e-15)


def test_planar_joint_with_a_tilted_normal():
    # Pinocchio ignores a planar joint's axis, so check by hand: the child
    # turns about the normal and slides in the plane perpendicular to it.
    urdf = ALL_JOINTS.replace('<axis xyz="0 0 1"/>\n  </joint>\n  <joint name="twin_joint"',
                              '<axis xyz="1 0 0"/>\n  </joint>\n  <joint name="twin_joint"')
    assert urdf != ALL_JOINTS
    model = load_urdf(urdf)
    j = model.joints[model.joint_id("glide")]
    q = model.neutral()
    qd = q.copy()
    qd[j.q_slice] = (0.3, -0.2, 0.7)
    oM = mb.forward_kinematics(model, q)
    oMd = mb.forward_kinematics(model, qd)
    rel = np.linalg.inv(oM[j.child]) @ oMd[j.child]  # displacement in the joint frame
    np.testing.assert_allclose(rel[:3, :3], Rotation.from_rotvec([0.7, 0, 0]).as_matrix(), atol=1e-14)
    assert abs(rel[0, 3]) < 1e-15 and abs(np.hypot(rel[1, 3], rel[2, 3]) - np.hypot(0.3, 0.2)) < 1e-15


def test_geometry_and_materials():
    model = load_urdf(ALL_JOINTS)
    pm = pin.buildModelFromXML(ALL_JOINTS)
    coll = {g.name: g for g in model.collision_geometries}
    vis = {g.name: g for g in model.visual_geometries}
    assert set(coll) == {"base_box", "upper_0", "tool_0"} and set(vis) == {"base_0", "tool_0"}
    box = coll["base_box"]
    assert box.shape == "box" and box.size == (0.4, 0.3, 0.2) and box.body == 0
    assert coll["upper_0"].shape == "cylinder" and coll["upper_0"].size == (0.05, 0.4)
    assert coll["tool_0"].shape == "sphere" and coll["tool_0"].size == (0.02,)
    mesh = vis["base_0"]
    assert mesh.shape == "mesh" and mesh.scale == (0.001, 0.002, 0.003)
    assert mesh.mesh == "package://zoo_pkg/meshes/base.stl"  # not found: kept as written
    assert mesh.rgba == (0.0, 0.0, 1.0, 1.0) and vis["tool_0"].rgba == (1.0, 0.0, 0.0, 0.5)
    # placements: world pose of a geometry = Pinocchio's link frame pose @ <origin> (by hand)
    mp = Mapping(model, pm)
    pd = pm.createData()
    qp = pin_configurations(pm, 1, seed=5)[0]
    pin.framesForwardKinematics(pm, pd, qp)
    oMi = mb.forward_kinematics(model, mp.q_from_pin(qp))
    expected = {"base_box": ("base", hom(rpy(0, 0, 0.5), [0, 0, 0.1])),
                "upper_0": ("upper", hom(np.eye(3), [0, 0, 0.2])),
                "tool_0": ("tool", hom(rpy(0.5, 0, 0), [0, 0, 0.05]))}
    for name, (link, T) in expected.items():
        g = coll[name]
        ref = pd.oMf[pm.getFrameId(link, pin.FrameType.BODY)].homogeneous @ T
        np.testing.assert_allclose(oMi[g.body] @ g.placement, ref, atol=TOL, err_msg=name)
    np.testing.assert_allclose(mesh.placement, hom(rpy(0.1, 0.2, 0.3), [0.1, 0.2, 0.3]), atol=1e-15)


@pytest.fixture
def package_tree(tmp_path):
    """tmp/ws/zoo_pkg/{meshes/base.stl, urdf/zoo.urdf}"""
    pkg = tmp_path / "ws" / "zoo_pkg"
    (pkg / "meshes").mkdir(parents=True)
    (pkg / "urdf").mkdir()
    (pkg / "meshes" / "base.stl").write_text("solid x\nendsolid x\n")
    (pkg / "urdf" / "zoo.urdf").write_text(ALL_JOINTS)
    return tmp_path, pkg


def test_package_uris_resolve(package_tree, tmp_path):
    root, pkg = package_tree
    want = str(pkg / "meshes" / "base.stl")

    def mesh_of(model):
        return next(g.mesh for g in model.visual_geometries if g.shape == "mesh")

    assert mesh_of(load_urdf(ALL_JOINTS, package_dirs=str(root / "ws"))) == want        # <dir>/P/...
    assert mesh_of(load_urdf(ALL_JOINTS, package_dirs=[tmp_path / "nothing", pkg])) == want  # <dir> named P
    assert mesh_of(load_urdf(pkg / "urdf" / "zoo.urdf")) == want                         # parents of the file
    assert mesh_of(load_urdf(ALL_JOINTS, package_dirs=[tmp_path / "nothing"])) == "package://zoo_pkg/meshes/base.stl"


def test_floating_base_and_massless_links():
    urdf = """<robot name="r">
      <link name="body"><inertial><mass value="3"/><inertia ixx="0.1" iyy="0.2" izz="0.25" ixy="0" ixz="0" iyz="0"/></inertial></link>
      <link name="marker"><inertial><mass value="0"/><inertia ixx="0" iyy="0" izz="0" ixy="0" ixz="0" iyz="0"/></inertial></link>
      <link name="arm"/>
      <joint name="m" type="fixed"><parent link="body"/><child link="marker"/><origin xyz="0 0 1"/></joint>
      <joint name="a" type="revolute"><parent link="body"/><child link="arm"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
    </robot>"""
    with pytest.warns(mb.ModelWarning, match=r"no mass or inertia.*'arm' \(joint 'a'\)"):  # a massless leaf
        model = load_urdf(urdf, floating_base=True)
    check_against_pinocchio(model, pin.buildModelFromXML(urdf, pin.JointModelFreeFlyer()), nconf=3)
    assert model.joints[1].name == "root_joint" and model.joints[1].type == "free"
    assert model.body_mass[model.body_id("arm")] == 0.0 and model.total_mass == 3.0
    assert "marker" in model.frame_names


def test_point_mass_on_a_fixed_link_is_folded_into_its_parent():
    # Pinocchio accepts point masses; multibody's builder needs positive-definite
    # inertias, so the loader folds a fixed point-mass link into its parent.
    urdf = """<robot name="r">
      <link name="base"/>
      <link name="arm"><inertial><origin xyz="0 0 0.2"/><mass value="2"/><inertia ixx="0.03" iyy="0.03" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
      <link name="payload"><inertial><origin xyz="0.1 0 0"/><mass value="0.5"/><inertia ixx="0" iyy="0" izz="0" ixy="0" ixz="0" iyz="0"/></inertial></link>
      <joint name="j" type="revolute"><parent link="base"/><child link="arm"/><axis xyz="0 1 0"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
      <joint name="p" type="fixed"><parent link="arm"/><child link="payload"/><origin xyz="0 0 0.4" rpy="0 0 1"/></joint>
    </robot>"""
    for merge in (True, False):
        model = load_urdf(urdf, merge_fixed=merge)
        assert abs(model.body_mass.sum() - 2.5) < 1e-15
        pm = pin.buildModelFromXML(urdf)
        mp = Mapping(model, pm)
        for qp in pin_configurations(pm, 3):
            q = mp.q_from_pin(qp)
            vp = np.array([1.3])
            ke = 0.5 * vp @ pin_mass_matrix(pm, qp) @ vp
            assert abs(mb.kinetic_energy(model, q, mp.v_from_pin(vp)) - ke) < TOL
            pdat = pm.createData()
            np.testing.assert_allclose(mb.center_of_mass(model, q), pin.centerOfMass(pm, pdat, qp), atol=TOL)


# --------------------------------------------------------------------------
# malformed input
# --------------------------------------------------------------------------

GOOD_LINK = '<link name="{}"><inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial></link>'


def robot(*parts):
    return '<robot name="bad">' + "".join(parts) + "</robot>"


def joint(name, parent, child, jtype="revolute", extra='<limit lower="-1" upper="1" effort="1" velocity="1"/>'):
    return (f'<joint name="{name}" type="{jtype}"><parent link="{parent}"/><child link="{child}"/>'
            f'{extra}</joint>')


def inertial_link(name, mass, ixx=1, iyy=1, izz=1, ixy=0):
    return (f'<link name="{name}"><inertial><mass value="{mass}"/><inertia ixx="{ixx}" iyy="{iyy}" '
            f'izz="{izz}" ixy="{ixy}" ixz="0" iyz="0"/></inertial></link>')


A, B, C = (GOOD_LINK.format(n) for n in "abc")

BAD = {
    "unknown joint type": (robot(A, B, joint("j1", "a", "b", "hinge")), r"joint 'j1' has unknown type 'hinge'"),
    "missing parent link": (robot(A, B, joint("j1", "nope", "b")), r"joint 'j1': parent link 'nope' does not exist"),
    "missing child link": (robot(A, B, joint("j1", "a", "nope")), r"joint 'j1': child link 'nope' does not exist"),
    "child of two joints": (robot(A, B, C, joint("j1", "a", "b"), joint("j2", "c", "b")),
                            r"link 'b' is the child of two joints: 'j1' and 'j2'"),
    "cycle": (robot(A, B, joint("j1", "a", "b"), joint("j2", "b", "a")), r"kinematic cycle"),
    "cycle beside a root": (robot(A, B, C, joint("j1", "b", "c"), joint("j2", "c", "b")),
                            r"kinematic cycle among links 'b', 'c'"),
    "several roots": (robot(A, B, C, joint("j1", "a", "b")), r"several root links.*'a', 'c'"),
    "negative mass": (robot(inertial_link("a", -1)), r"link 'a' <inertial>: mass must be positive"),
    "zero mass with inertia": (robot(inertial_link("a", 0)), r"link 'a' <inertial>: mass is 0 but the inertia"),
    "not positive definite": (robot(inertial_link("a", 1, ixx=1, iyy=1, izz=1, ixy=2)),
                              r"link 'a' <inertial>.*not positive definite"),
    "triangle inequality": (robot(inertial_link("a", 1, ixx=1, iyy=1, izz=3)),
                            r"link 'a' <inertial>.*triangle inequality"),
    "zero axis": (robot(A, B, joint("j1", "a", "b", extra='<axis xyz="0 0 0"/>')), r"joint 'j1': <axis xyz> is zero"),
    "non-numeric origin": (robot(A, B, joint("j1", "a", "b", extra='<origin xyz="1 two 3"/>')),
                           r"joint 'j1' <origin>: attribute xyz=\"1 two 3\" is not numeric"),
    "wrong count": (robot(A, B, joint("j1", "a", "b", extra='<origin rpy="1 2"/>')),
                    r"joint 'j1' <origin>: attribute rpy=\"1 2\" must have 3 number"),
    "non-numeric mass": (robot('<link name="a"><inertial><mass value="heavy"/></inertial></link>'),
                         r"link 'a' <inertial> <mass>: attribute value=\"heavy\" is not numeric"),
    "non-numeric limit": (robot(A, B, joint("j1", "a", "b", extra='<limit lower="low" upper="1"/>')),
                          r"joint 'j1' <limit>: attribute lower=\"low\" is not numeric"),
    "non-finite inertia": (robot('<link name="a"><inertial><mass value="1"/><inertia ixx="nan"/></inertial></link>'),
                           r"link 'a' <inertial> <inertia>: attribute ixx=\"nan\" is not finite"),
    "lower above upper": (robot(A, B, joint("j1", "a", "b", extra='<limit lower="1" upper="-1"/>')),
                          r"joint 'j1' <limit>: lower 1.0 exceeds upper -1.0"),
    "duplicate link": (robot(A, A), r"duplicate link 'a'"),
    "duplicate joint": (robot(A, B, C, joint("j1", "a", "b"), joint("j1", "a", "c")), r"duplicate joint 'j1'"),
    "point mass on a moving joint": (robot(A, inertial_link("b", 1, 0, 0, 0), joint("j1", "a", "b")),
                                     r"link 'b' <inertial>: singular inertia.*moving joint 'j1'"),
    "unknown geometry": (robot('<link name="a"><visual><geometry><torus r="1"/></geometry></visual></link>'),
                         r"link 'a' <visual> 0: unknown geometry <torus>"),
    "missing child element": (robot(A, '<joint name="j1" type="fixed"><parent link="a"/></joint>'),
                              r"joint 'j1': missing <child link=...>"),
    "world not at the root": (robot(A, GOOD_LINK.format("world"), joint("j1", "a", "world")),
                              r"link 'world' is reserved"),
}


#: cases refused only with inertia="strict" (the default "warn" keeps or repairs them: test_urdf_inertia.py)
STRICT_ONLY = {"zero mass with inertia", "not positive definite", "triangle inequality",
               "point mass on a moving joint"}


@pytest.mark.parametrize("case", sorted(BAD))
def test_malformed_urdf(case):
    text, message = BAD[case]
    with pytest.raises(ModelFileError, match=message):
        load_urdf(text, inertia="strict" if case in STRICT_ONLY else "warn")


def test_mimic_of_an_unknown_joint_is_ignored_with_a_warning():
    """Pinocchio ignores <mimic> by default and loads alex_psyonic_hands, whose mimics name joints
    that do not exist: the coupling is dropped with a ModelWarning naming the joints."""
    text = robot(A, B, joint("j1", "a", "b", extra='<mimic joint="ghost"/>'))
    with pytest.warns(mb.ModelWarning, match=r"<mimic> of joints that do not exist.*joint 'j1' mimics 'ghost'"):
        model = load_urdf(text)
    assert len(model.couplings) == 0


def test_malformed_urdf_messages_name_the_file(tmp_path):
    path = tmp_path / "bad.urdf"
    path.write_text(BAD["zero axis"][0])
    with pytest.raises(ModelFileError, match=r"URDF file '.*bad\.urdf': joint 'j1': <axis xyz> is zero"):
        load_urdf(path)


def test_missing_file():
    with pytest.raises(ModelFileError, match=r"URDF file 'no/such/robot\.urdf' does not exist"):
        load_urdf("no/such/robot.urdf")


def test_not_well_formed_xml(tmp_path):
    with pytest.raises(ModelFileError, match=r"URDF string is not well-formed XML: mismatched tag: line 1"):
        load_urdf('<robot name="x"><link name="a"></robot>')
    path = tmp_path / "broken.urdf"
    path.write_text('<robot name="x">\n<link name="a">\n')
    with pytest.raises(ModelFileError, match=r"broken\.urdf' is not well-formed XML"):
        load_urdf(str(path))


def test_unknown_encoding_in_the_xml_declaration(tmp_path):
    """A file whose XML declaration names an encoding Python does not know
    (found by the URDF fuzzer: 'utf-4.0') is a ModelFileError, not
    LookupError. A string is text already: its declaration is not used."""
    text = '<?xml version="1.0" encoding="utf-4.0"?>\n<robot name="x"><link name="a"/></robot>\n'
    assert load_urdf(text).name == "x"
    path = tmp_path / "odd.urdf"
    path.write_text(text)
    with pytest.raises(ModelFileError, match=r"odd\.urdf' declares an encoding that cannot be read"):
        load_urdf(str(path))


def test_no_robot_root():
    with pytest.raises(ModelFileError, match=r"the root element is <sdf>, expected <robot>"):
        load_urdf('<sdf version="1.6"><model name="m"/></sdf>')


def test_floating_world_root_is_refused():
    with pytest.raises(ModelFileError, match=r"root link is named 'world'"):
        load_urdf(robot(GOOD_LINK.format("world")), floating_base=True)


def test_errors_are_model_errors():
    assert issubclass(ModelFileError, ModelError)
    with pytest.raises(ModelError):
        load_urdf(BAD["cycle"][0])


def test_root_named_world_is_the_world():
    urdf = robot('<link name="world"/>', A, joint("j1", "world", "a", extra='<origin xyz="0 0 1"/><limit lower="-1" upper="1" effort="2" velocity="3"/>'))
    model = load_urdf(urdf)
    pm = pin.buildModelFromXML(urdf)
    check_against_pinocchio(model, pm, nconf=3)
    assert model.body_names == ("world", "a") and model.frame_names.count("world") == 1
