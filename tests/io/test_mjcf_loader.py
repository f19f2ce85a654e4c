"""load_mjcf against MuJoCo itself: body poses (mj_kinematics), total mass,
centre of mass (subtree_com), joint-space inertia (mj_fullM, compared with
multibody's kinetic energy), and values written in the MJCF text."""
import os
import sys
import xml.etree.ElementTree as ET

import mujoco
import numpy as np
import pytest
from scipy.spatial.transform import Rotation

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from oracles import robot_path  # noqa: E402

import multibody as mb  # noqa: E402
from multibody.errors import ModelFileError  # noqa: E402
from multibody.io import load_mjcf  # noqa: E402

TOL = 1e-10

MODELS = {
    "double_pendulum": """
<mujoco model="double_pendulum">
  <worldbody>
    <body name="link1" pos="0 0 2" euler="0 20 0">
      <joint name="j1" type="hinge" axis="0 1 0" pos="0 0 0.5" range="-90 90" damping="0.3" armature="0.01" ref="15"/>
      <geom type="capsule" fromto="0 0 0 0 0 -1" size="0.05" mass="1"/>
      <body name="link2" pos="0 0 -1" quat="0.9 0.3 0.1 -0.2">
        <joint name="j2" type="hinge" axis="1 0.5 0" frictionloss="0.2" armature="0.02"/>
        <geom type="box" size="0.05 0.1 0.4" pos="0 0 -0.4" mass="2"/>
      </body>
    </body>
  </worldbody>
</mujoco>""",
    "cart_pole": """
<mujoco model="cart_pole">
  <option gravity="0 0 -3.7"/>
  <worldbody>
    <body name="cart" pos="0 0 0.1">
      <joint name="slider" type="slide" axis="1 0 0.2" range="-2 2" damping="1" ref="0.3" pos="0.5 0.5 0.5"/>
      <geom type="box" size=".2 .1 .05" mass="3"/>
      <body name="pole" pos="0 0 0.05">
        <joint name="hinge" type="hinge" axis="0 1 0" pos="0 0 0.1"/>
        <geom type="cylinder" fromto="0 0 0 0 0 0.8" size="0.02" mass="0.5"/>
      </body>
    </body>
  </worldbody>
</mujoco>""",
    "ball": """
<mujoco model="ball">
  <worldbody>
    <body name="bob" pos="0 0 1" euler="10 0 40">
      <joint name="ball" type="ball" pos="0 0 0.3" damping="0.1"/>
      <geom type="ellipsoid" size="0.1 0.2 0.3" pos="0 0.1 -0.2" mass="1.2"/>
      <body name="tail" pos="0 0 -0.5">
        <joint name="tail_hinge" type="hinge" axis="0 1 0" pos="0 0 0.1"/>
        <geom type="capsule" size="0.02 0.1" pos="0 0 -0.1" mass="0.3"/>
      </body>
    </body>
  </worldbody>
</mujoco>""",
    "free_body": """
<mujoco model="free_body">
  <worldbody>
    <body name="drone" pos="0 0 1" quat="0.9 0 0.1 0">
      <freejoint name="float"/>
      <geom type="box" size="0.2 0.2 0.05" pos="0.01 0.02 0" mass="1.5"/>
      <body name="camera" pos="0.2 0 0" euler="0 30 0">
        <geom type="sphere" size="0.03" pos="0.01 0 0" mass="0.1"/>
        <site name="lens" pos="0.03 0 0"/>
      </body>
      <body name="rotor" pos="0 0.2 0.1">
        <joint name="prop" type="hinge" axis="0 0 1" pos="0.01 0 0" armature="0.001"/>
        <geom type="cylinder" size="0.1 0.005" mass="0.05"/>
      </body>
    </body>
  </worldbody>
</mujoco>""",
    "two_hinges": """
<mujoco model="two_hinges">
  <worldbody>
    <body name="base" pos="0 0 0.5">
      <joint name="turn" type="hinge" axis="0 0 1"/>
      <geom type="cylinder" size="0.1 0.05" mass="2"/>
      <body name="gimbal" pos="0.1 0.2 0.3" euler="10 20 30">
        <joint name="yaw" type="hinge" axis="0 0 1" pos="0.05 0 0" range="-45 45"/>
        <joint name="pitch" type="hinge" axis="0 1 0" pos="0 0.1 0.05" ref="-20"/>
        <inertial pos="0.02 0.01 0" quat="0.8 0.2 0.3 0.1" mass="0.8" diaginertia="0.01 0.02 0.025"/>
        <geom type="box" size="0.1 0.05 0.02" pos="0.1 0 0" mass="0.8"/>
        <body name="finger" pos="0.2 0 0">
          <joint name="curl" type="hinge" axis="1 0 0" pos="0 0 0.02"/>
          <geom type="capsule" size="0.01 0.05" pos="0 0 0.05" mass="0.1"/>
        </body>
      </body>
    </body>
  </worldbody>
</mujoco>""",
    "connect": """
<mujoco model="connect">
  <worldbody>
    <body name="left" pos="-0.5 0 1">
      <joint name="jl" type="hinge" axis="0 1 0"/>
      <geom type="capsule" fromto="0 0 0 0.5 0 0" size="0.02" mass="1"/>
    </body>
    <body name="right" pos="0.5 0 1">
      <joint name="jr" type="hinge" axis="0 1 0"/>
      <geom type="capsule" fromto="0 0 0 -0.5 0 0" size="0.02" mass="1"/>
    </body>
  </worldbody>
  <equality>
    <connect name="tie" body1="left" body2="right" anchor="0.5 0 0"/>
    <joint name="same" joint1="jl" joint2="jr" polycoef="0.1 -1 0 0 0"/>
  </equality>
</mujoco>""",
}


def joint_map(mm, model):
    """(multibody JointInfo, MuJoCo joint id) pairs, matched by name."""
    out = []
    for j in range(mm.njnt):
        out.append((model.joints[model.joint_id(mm.joint(j).name)], j))
    assert len(out) == sum(1 for jj in model.joints[1:] if jj.nv > 0)
    return out


def quat_matrix(q):
    """Rotation matrix of (w, x, y, z) by scipy (independent of multibody)."""
    return Rotation.from_quat(q, scalar_first=True).as_matrix()


def mj_to_mb(mm, model, qpos, qvel):
    """multibody (q, v) of MuJoCo (qpos, qvel): q = qpos; free joints
    v = (ω_body, Rᵀ v_world) from MuJoCo's (v_world, ω_body)."""
    q, v = np.zeros(model.nq), np.zeros(model.nv)
    for jb, j in joint_map(mm, model):
        a, d = mm.jnt_qposadr[j], mm.jnt_dofadr[j]
        q[jb.q_slice] = qpos[a:a + jb.nq]
        if mm.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE:
            R = quat_matrix(qpos[a + 3:a + 7])
            v[jb.v_slice] = np.r_[qvel[d + 3:d + 6], R.T @ qvel[d:d + 3]]
        else:
            v[jb.v_slice] = qvel[d:d + jb.nv]
    return q, v


def random_state(mm, rng):
    qpos = rng.uniform(-1.5, 1.5, mm.nq)
    d = mujoco.MjData(mm)
    d.qpos[:] = qpos
    mujoco.mj_normalizeQuat(mm, d.qpos)
    return d.qpos.copy(), rng.normal(size=mm.nv)


def mb_mass_matrix(model, q):
    """M from multibody's kinetic energy by polarization: M_ii = 2 T(e_i),
    M_ij = T(e_i + e_j) - T(e_i) - T(e_j)."""
    n = model.nv
    E = np.eye(n)
    V = np.concatenate([E] + [E[i] + E[i + 1:] for i in range(n)])
    T = mb.kinetic_energy(model, np.tile(q, (len(V), 1)), V)
    M = np.diag(2.0 * T[:n])
    k = n
    for i in range(n):
        for j in range(i + 1, n):
            M[i, j] = M[j, i] = T[k] - T[i] - T[j]
            k += 1
    return M


def compare_with_mujoco(mm, model, nconf=10, seed=0):
    rng = np.random.default_rng(seed)
    # total mass (the world body holds the static bodies in both)
    assert abs(model.total_mass - mm.body_mass.sum()) < TOL
    np.testing.assert_allclose(model.gravity, mm.opt.gravity, atol=0)
    d = mujoco.MjData(mm)
    for _ in range(nconf):
        qpos, qvel = random_state(mm, rng)
        d.qpos[:], d.qvel[:] = qpos, qvel
        mujoco.mj_forward(mm, d)
        q, v = mj_to_mb(mm, model, qpos, qvel)
        # world pose of every MuJoCo body = the frame named after it
        F = mb.frame_placements(model, q)
        for i in range(1, mm.nbody):
            T = F[model.frame_id(mm.body(i).name)]
            np.testing.assert_allclose(T[:3, 3], d.xpos[i], atol=TOL, err_msg=mm.body(i).name)
            np.testing.assert_allclose(T[:3, :3], d.xmat[i].reshape(3, 3), atol=TOL, err_msg=mm.body(i).name)
        for s in range(mm.nsite):
            T = F[model.frame_id(mm.site(s).name)]
            np.testing.assert_allclose(T[:3, 3], d.site_xpos[s], atol=TOL)
            np.testing.assert_allclose(T[:3, :3], d.site_xmat[s].reshape(3, 3), atol=TOL)
        # centre of mass
        np.testing.assert_allclose(mb.center_of_mass(model, q), d.subtree_com[0], atol=TOL)
        # joint-space inertia: M_mj = Tᵀ (M_mb + diag(armature)) T with v = T qvel
        Mmj = np.zeros((mm.nv, mm.nv))
        mujoco.mj_fullM(*mj_fullM_args(mm, d, Mmj))
        Tm = np.column_stack([mj_to_mb(mm, model, qpos, e)[1] for e in np.eye(mm.nv)])
        Mmb = mb_mass_matrix(model, q) + np.diag(model.armature)
        np.testing.assert_allclose(Tm.T @ Mmb @ Tm, Mmj, atol=TOL)
        ke = 0.5 * qvel @ (Mmj - np.diag(mm.dof_armature)) @ qvel
        assert abs(mb.kinetic_energy(model, q, v) - ke) < TOL * max(1.0, ke)


def mj_fullM_args(m, d, dst):
    """mj_fullM's arguments (its signature changed in MuJoCo 4; see
    shared/bench/anchors.py)."""
    doc = mujoco.mj_fullM.__doc__ or ""
    return (m, d, dst) if "d: mujoco" in doc.split("\n")[0] else (m, dst, d.qM)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_matches_mujoco(name):
    mm = mujoco.MjModel.from_xml_string(MODELS[name])
    model = load_mjcf(MODELS[name])
    assert model.name == name
    compare_with_mujoco(mm, model)
    # q = qpos: the same number of coordinates, joints in MuJoCo's order
    assert model.nq == mm.nq and model.nv == mm.nv
    assert [jb.q_slice.start for jb, j in joint_map(mm, model)] == list(mm.jnt_qposadr)


def test_joint_types_limits_and_dof_parameters():
    model = load_mjcf(MODELS["double_pendulum"])
    j1, j2 = (model.joints[model.joint_id(n)] for n in ("j1", "j2"))
    assert j1.type == j2.type == "revolute"
    np.testing.assert_allclose((model.lower_limit[j1.q_slice][0], model.upper_limit[j1.q_slice][0]),
                               np.radians([-90, 90]), atol=1e-15)
    assert model.lower_limit[j2.q_slice] == -np.inf and model.upper_limit[j2.q_slice] == np.inf
    assert (model.damping[j1.v_slice], model.armature[j1.v_slice]) == (0.3, 0.01)
    assert (model.friction[j2.v_slice], model.armature[j2.v_slice]) == (0.2, 0.02)
    # hinge at pos (0, 0, 0.5): the joint is carried by "link1_j1", link1 is a frame below it
    assert model.body_names == ("world", "link1_j1", "link2")
    f = model.frames[model.frame_id("link1")]
    assert f.kind == "fixed" and model.body_names[f.body] == "link1_j1"
    np.testing.assert_allclose(f.placement[:3, 3], (0, 0, -0.5), atol=0)
    cart = load_mjcf(MODELS["cart_pole"])
    s = cart.joints[cart.joint_id("slider")]
    assert s.type == "prismatic" and (cart.lower_limit[s.q_slice], cart.upper_limit[s.q_slice]) == (-2, 2)
    np.testing.assert_allclose(s.axis, np.array([1, 0, 0.2]) / np.sqrt(1.04), atol=1e-15)
    np.testing.assert_allclose(cart.gravity, (0, 0, -3.7), atol=0)
    ball = load_mjcf(MODELS["ball"])
    assert ball.joints[ball.joint_id("ball")].type == "spherical"
    assert tuple(ball.damping[ball.joints[ball.joint_id("ball")].v_slice]) == (0.1, 0.1, 0.1)
    free = load_mjcf(MODELS["free_body"])
    fj = free.joints[free.joint_id("float")]
    assert fj.type == "free" and fj.parent == 0 and fj.nq == 7
    assert "camera" not in free.body_names and free.frames[free.frame_id("camera")].kind == "fixed"
    assert free.frames[free.frame_id("lens")].kind == "user"


def test_several_joints_on_one_body_are_chained():
    model = load_mjcf(MODELS["two_hinges"])
    # yaw then pitch (anchor not at the origin): two massless bodies, gimbal a frame
    assert model.body_names == ("world", "base", "gimbal_yaw", "gimbal_pitch", "finger_curl")
    i_yaw, i_pitch = model.body_id("gimbal_yaw"), model.body_id("gimbal_pitch")
    assert model.body_mass[i_yaw] == 0.0 and model.parents[i_pitch] == i_yaw
    assert abs(model.body_mass[i_pitch] - 0.8) < 1e-15  # explicit <inertial>
    assert model.frames[model.frame_id("gimbal")].body == i_pitch


def test_without_merging_welded_bodies_stay_bodies():
    xml = MODELS["free_body"]
    mm = mujoco.MjModel.from_xml_string(xml)
    model = load_mjcf(xml, merge_fixed=False)
    assert "camera" in model.body_names and model.joints[model.body_id("camera")].type == "fixed"
    compare_with_mujoco(mm, model, nconf=3)


def test_inertia_and_geometry_conversion():
    model = load_mjcf(MODELS["two_hinges"])
    mm = mujoco.MjModel.from_xml_string(MODELS["two_hinges"])
    # gimbal's explicit inertial, by hand: R diag(I) Rᵀ about the COM, in the gimbal frame,
    # which sits at Trans(-pitch anchor) in body "gimbal_pitch"
    R = quat_matrix(np.array([0.8, 0.2, 0.3, 0.1]) / np.linalg.norm([0.8, 0.2, 0.3, 0.1]))
    i = model.body_id("gimbal_pitch")
    np.testing.assert_allclose(model.body_inertia[i], R @ np.diag([0.01, 0.02, 0.025]) @ R.T, atol=1e-12)
    np.testing.assert_allclose(model.body_com[i], np.array([0.02, 0.01, 0]) - (0, 0.1, 0.05), atol=1e-15)
    geoms = {g.shape: g for g in model.collision_geometries}
    assert geoms["box"].size == (0.2, 0.1, 0.04)            # MuJoCo half sizes -> full extents
    assert geoms["capsule"].size == (0.01, 0.1)             # (radius, full length)
    assert geoms["cylinder"].size == (0.1, 0.1)
    # geometry world poses against MuJoCo's geom_xpos / geom_xmat
    d = mujoco.MjData(mm)
    d.qpos[:] = np.random.default_rng(1).uniform(-1, 1, mm.nq)
    mujoco.mj_kinematics(mm, d)
    oMi = mb.forward_kinematics(model, d.qpos.copy())
    assert len(model.collision_geometries) == mm.ngeom == len(model.visual_geometries)
    for k, g in enumerate(model.collision_geometries):
        T = oMi[g.body] @ g.placement
        np.testing.assert_allclose(T[:3, 3], d.geom_xpos[k], atol=TOL)
        np.testing.assert_allclose(T[:3, :3], d.geom_xmat[k].reshape(3, 3), atol=TOL)
    ell = load_mjcf(MODELS["ball"])
    assert next(g for g in ell.collision_geometries if g.shape == "ellipsoid").size == (0.1, 0.2, 0.3)


def test_visual_only_geoms_and_planes():
    xml = """<mujoco><worldbody>
      <geom name="floor" type="plane" size="3 4 0.1"/>
      <body name="b"><joint name="j" type="slide" axis="0 0 1"/>
        <geom name="shell" type="sphere" size="0.1" contype="0" conaffinity="0" rgba="1 0 0 0.5"/>
        <geom name="core" type="sphere" size="0.05"/></body>
    </worldbody></mujoco>"""
    model = load_mjcf(xml)
    assert [g.name for g in model.collision_geometries] == ["floor", "core"]
    assert [g.name for g in model.visual_geometries] == ["floor", "shell", "core"]
    floor = model.collision_geometries[0]
    assert floor.body == 0 and floor.shape == "plane" and floor.size == (6.0, 8.0)
    assert model.visual_geometries[1].rgba == (1.0, 0.0, 0.0, 0.5)


def test_geom_colours_are_those_mujoco_draws():
    """A geom's rgba overrides its material's only when set: the colours of
    the visual geometries equal those of MuJoCo's own scene
    (mjv_updateScene, no rendering needed)."""
    xml = """<mujoco><asset><material name="red" rgba="1 0 0 1"/><material name="blue" rgba="0 0 1 0.5"/></asset>
      <worldbody><body name="b"><freejoint/>
        <geom name="a" type="box" size=".1 .1 .1" material="red"/>
        <geom name="c" type="sphere" size=".1" pos="0 0 .3" material="blue" rgba="0 1 0 1"/>
        <geom name="d" type="sphere" size=".1" pos="0 0 .6" rgba=".2 .3 .4 1"/>
        <geom name="e" type="sphere" size=".1" pos="0 0 .9"/>
      </body></worldbody></mujoco>"""
    m = mujoco.MjModel.from_xml_string(xml)
    d = mujoco.MjData(m)
    mujoco.mj_forward(m, d)
    scene = mujoco.MjvScene(m, maxgeom=10)
    mujoco.mjv_updateScene(m, d, mujoco.MjvOption(), None, mujoco.MjvCamera(), mujoco.mjtCatBit.mjCAT_ALL, scene)
    drawn = {mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_GEOM, scene.geoms[i].objid): scene.geoms[i].rgba
             for i in range(scene.ngeom)}
    assert sorted(drawn) == ["a", "c", "d", "e"]
    ours = {g.name: g.rgba for g in load_mjcf(xml).visual_geometries}
    for name, rgba in drawn.items():
        np.testing.assert_allclose(ours[name], rgba, rtol=0, atol=1e-7, err_msg=name)
    assert ours["a"] == (1.0, 0.0, 0.0, 1.0)  # the material's (MuJoCo's geom_rgba says grey)


def test_equality_constraints():
    model = load_mjcf(MODELS["connect"])
    eqs = {e.name: e for e in model.equalities}
    tie = eqs["tie"]
    assert (tie.kind, tie.body1, tie.body2) == ("connect", "left", "right")
    # anchor (0.5, 0, 0) in left's frame is (-0.5, 0, 0) in right's frame at qpos0
    np.testing.assert_allclose(tie.data[:6], (0.5, 0, 0, -0.5, 0, 0), atol=1e-15)
    same = eqs["same"]
    assert (same.kind, same.body1, same.body2) == ("joint", "jl", "jr")
    np.testing.assert_allclose(same.data[:5], (0.1, -1, 0, 0, 0), atol=0)


def test_mesh_geometry_points_to_the_file(tmp_path):
    # a box whose vertices are off-centre: MuJoCo recentres it; the geometry's
    # placement must map the file's (scaled) vertices onto MuJoCo's
    V = np.array([[0, 0, 0], [1, 0, 0], [0, 2, 0], [0, 0, 3], [1, 2, 3], [1, 2, 0], [1, 0, 3], [0, 2, 3]],
                 dtype=float) + (0.5, -1, 2)
    faces = [(1, 2, 6), (1, 6, 3), (4, 7, 5), (4, 5, 8), (1, 2, 7), (1, 7, 4), (3, 6, 5), (3, 5, 8),
             (1, 3, 8), (1, 8, 4), (2, 6, 5), (2, 5, 7)]
    obj = tmp_path / "part.obj"
    obj.write_text("".join("v %.17g %.17g %.17g\n" % tuple(v) for v in V) + "".join("f %d %d %d\n" % f for f in faces))
    xml = f"""<mujoco><asset><mesh name="part" file="{obj}" scale="1 2 0.5"/></asset>
      <worldbody><body name="b" pos="0 0 1"><joint name="j" type="hinge" axis="1 0 0"/>
        <geom type="mesh" mesh="part" pos="0.1 0.2 0.3" euler="10 20 30"/></body></worldbody></mujoco>"""
    (tmp_path / "m.xml").write_text(xml)
    mm = mujoco.MjModel.from_xml_path(str(tmp_path / "m.xml"))
    model = load_mjcf(tmp_path / "m.xml")
    g = model.collision_geometries[0]
    # a mesh on a moving body is its convex hull (a "convex" geometry), still naming the file
    assert g.shape == "convex" and g.mesh == str(obj) and g.scale == (1.0, 2.0, 0.5)
    d = mujoco.MjData(mm)
    d.qpos[:] = 0.7
    mujoco.mj_kinematics(mm, d)
    T = mb.forward_kinematics(model, np.array([0.7]))[g.body] @ g.placement
    ours = (V * g.scale) @ T[:3, :3].T + T[:3, 3]
    vc = mm.mesh_vert[mm.mesh_vertadr[0]:mm.mesh_vertadr[0] + mm.mesh_vertnum[0]]
    theirs = vc @ d.geom_xmat[0].reshape(3, 3).T + d.geom_xpos[0]
    dist = np.linalg.norm(ours[:, None, :] - theirs[None, :, :], axis=-1)
    assert dist.shape == (8, 8) and dist.min(axis=1).max() < 1e-6 and dist.min(axis=0).max() < 1e-6  # float32


def strip_geometry(text):
    """URDF text without <visual>/<collision> (mesh files are unreachable for
    MuJoCo's URDF importer through package:// URIs)."""
    root = ET.fromstring(text)
    for link in root.iter("link"):
        for tag in ("visual", "collision"):
            for el in link.findall(tag):
                link.remove(el)
    return ET.tostring(root, encoding="unicode")


@pytest.mark.parametrize("robot,floating", [("panda", False), ("solo12", True)])
def test_robot_converted_from_urdf(robot, floating):
    text = open(robot_path(robot)).read()
    spec = mujoco.MjSpec.from_string(strip_geometry(text))
    if floating:
        spec.worldbody.first_body().add_freejoint(name="root_joint")
    mm = spec.compile()
    model = load_mjcf(mm)
    compare_with_mujoco(mm, model, nconf=5, seed=2)
    # the same through MJCF text (which MuJoCo writes with fewer digits: compare with its own compile)
    xml = spec.to_xml()
    model2 = load_mjcf(xml)
    assert model2.joint_names == model.joint_names and model2.frame_names == model.frame_names
    compare_with_mujoco(mujoco.MjModel.from_xml_string(xml), model2, nconf=2, seed=3)
    if robot == "panda":  # <mimic> became a joint equality in MuJoCo
        mim = ET.fromstring(text).find(".//joint/mimic/..")
        eq = [e for e in model.equalities if e.kind == "joint"]
        assert [(e.body1, e.body2) for e in eq] == [(mim.get("name"), mim.find("mimic").get("joint"))]


# --------------------------------------------------------------------------
# errors
# --------------------------------------------------------------------------

def test_missing_file():
    with pytest.raises(ModelFileError, match=r"MJCF file 'no/such/model\.xml' does not exist"):
        load_mjcf("no/such/model.xml")


def test_malformed_xml(tmp_path):
    with pytest.raises(ModelFileError, match=r"MJCF string: MuJoCo could not load it: XML parse error"):
        load_mjcf("<mujoco><worldbody><body></mujoco>")
    path = tmp_path / "broken.xml"
    path.write_text("<mujoco>\n<worldbody>\n")
    with pytest.raises(ModelFileError, match=r"MJCF file '.*broken\.xml': MuJoCo could not load it: XML parse error"):
        load_mjcf(path)


def test_mujoco_compile_errors_are_reported():
    with pytest.raises(ModelFileError, match=r"Schema violation: unrecognized attribute: 'colour'"):
        load_mjcf('<mujoco><worldbody><geom size="1" colour="red"/></worldbody></mujoco>')
    with pytest.raises(ModelFileError, match=r"free joint can only be used on top level"):
        load_mjcf('<mujoco><worldbody><body><geom size="1"/><body><freejoint/><geom size="1"/></body>'
                  '</body></worldbody></mujoco>')


def test_missing_mujoco_gives_an_install_hint(monkeypatch):
    monkeypatch.setitem(sys.modules, "mujoco", None)
    with pytest.raises(ImportError, match=r"pip install multibody\[mjcf\]"):
        load_mjcf(MODELS["ball"])
