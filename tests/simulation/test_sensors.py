"""Sensors (multibody.simulation.sensors, multibody.simulation.mjcf_sensors).

Oracles: MuJoCo's sensordata on the same MJCF at random states (every
mapped sensor type, with MuJoCo's qacc and with multibody's own forward
dynamics), MuJoCo's touch sensor on MuJoCo's own contacts, MuJoCo 4's delay
buffers; closed forms (an IMU at rest on a tilted fixed body reads −Rᵀg, in
free fall 0; a resting box's touch reads its weight); identities (the force
sensor at a joint projects to RNEA's joint force; over() of a semi-implicit
Euler trajectory is the reading with a = Δv/dt)."""
import warnings

import mujoco
import numpy as np
import pytest

import multibody as mb
from multibody.constraints.contact import Contact
from multibody.errors import InputError, ModelError, ModelWarning
from multibody.simulation.mjcf_sensors import load_sensors
from multibody.spatial import quaternion as Q, so3
from multibody.simulation.sensors import (IMU, Accelerometer, Clock, Force, FrameAngularVelocity, FrameAxis,
                                          FrameLinearAcceleration, FrameLinearVelocity, FrameOrientation,
                                          FramePose, FramePosition, Gyro, JointPosition, JointVelocity,
                                          Magnetometer, Sensors, SubtreeCenterOfMass, Torque, Touch, Velocimeter,
                                          Wrench, forward_acceleration, _ray_meets)

TOL = 1e-8

BODIES = """
  <option timestep="0.002" gravity="0.3 -0.2 -9.81"><flag contact="disable"/></option>
  <default><geom contype="0" conaffinity="0"/></default>
  <worldbody>
    <site name="world_site" pos="0.1 0.2 0.3" euler="10 20 30"/>
    <body name="base" pos="0.1 -0.2 1.0" euler="5 -10 15">
      <joint name="hinge1" type="hinge" axis="0.3 1 0.2" pos="0 0 0.1" damping="0.05"/>
      <geom name="g1" type="box" size="0.1 0.05 0.2" pos="0.02 0 -0.1" mass="1.3"/>
      <site name="s_base" pos="0.05 0.02 -0.2" euler="30 -20 45" type="box" size="0.05 0.06 0.07"/>
      <body name="slider" pos="0 0.1 -0.3" euler="0 15 0">
        <joint name="slide1" type="slide" axis="1 0.2 0" stiffness="3" springref="0.1"/>
        <geom type="capsule" size="0.03 0.1" pos="0 0 -0.05" mass="0.7"/>
        <site name="s_slider" pos="0.1 0 -0.05" quat="0.8 0.1 -0.3 0.5"/>
        <body name="ballb" pos="0.1 0 -0.2">
          <joint name="ball1" type="ball" pos="0 0.02 0.03"/>
          <inertial pos="0.01 0.02 -0.1" quat="0.9 0.1 0.2 0.3" mass="0.5" diaginertia="0.004 0.005 0.006"/>
          <geom type="sphere" size="0.04" pos="0 0 -0.1"/>
          <site name="s_ball" pos="0.0 0.03 -0.15" euler="-40 10 70" type="sphere" size="0.03"/>
          <camera name="cam" pos="0.1 0.0 -0.1" euler="10 0 5"/>
          <body name="welded" pos="0 0.05 -0.2" euler="0 0 30">
            <geom type="box" size="0.02 0.02 0.02" mass="0.2"/>
            <site name="s_welded" pos="0.01 0 0" euler="0 20 0"/>
          </body>
        </body>
      </body>
    </body>
    <body name="floater" pos="0.5 0.5 1.5" quat="0.9 0.1 0.3 -0.2">
      <freejoint name="free1"/>
      <geom type="ellipsoid" size="0.1 0.2 0.15" pos="0.02 -0.01 0.03" mass="2"/>
      <site name="imu" pos="0.05 -0.04 0.02" euler="15 25 -35"/>
      <body name="arm" pos="0.2 0 0">
        <joint name="hinge2" type="hinge" axis="0 0 1" pos="0.02 0.01 0"/>
        <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.02" mass="0.4"/>
        <site name="tip" pos="0.3 0 0" euler="0 90 0"/>
      </body>
    </body>
  </worldbody>
"""

SENSORS = """
  <sensor>
    <jointpos joint="hinge1"/><jointvel joint="slide1" name="slide_rate"/><ballquat joint="ball1"/>
    <ballangvel joint="ball1"/><jointpos joint="slide1" cutoff="0.05"/>
    <framepos objtype="site" objname="tip"/><framepos objtype="body" objname="ballb" reftype="site" refname="s_base"/>
    <framepos objtype="geom" objname="g1" reftype="xbody" refname="floater"/>
    <framequat objtype="xbody" objname="arm"/><framequat objtype="geom" objname="g1" reftype="camera" refname="cam"/>
    <framequat objtype="site" objname="s_ball" reftype="body" refname="arm"/>
    <framexaxis objtype="site" objname="imu"/><frameyaxis objtype="body" objname="floater" reftype="xbody" refname="slider"/>
    <framezaxis objtype="camera" objname="cam" reftype="site" refname="world_site"/>
    <framelinvel objtype="site" objname="tip"/><framelinvel objtype="site" objname="tip" reftype="site" refname="s_ball"/>
    <framelinvel objtype="body" objname="ballb" reftype="xbody" refname="floater"/>
    <frameangvel objtype="body" objname="arm" reftype="xbody" refname="base"/><frameangvel objtype="geom" objname="g1"/>
    <framelinacc objtype="site" objname="s_ball"/><framelinacc objtype="body" objname="arm"/>
    <frameangacc objtype="body" objname="ballb"/>
    <gyro site="imu"/><accelerometer site="imu" cutoff="4"/><velocimeter site="s_welded"/>
    <accelerometer site="tip"/><gyro site="s_welded" cutoff="0.5"/>
    <force site="s_slider"/><torque site="s_ball"/><force site="s_welded"/><torque site="tip"/><force site="imu"/>
    <torque site="s_base" cutoff="0.2"/><force site="world_site"/>
    <subtreecom body="slider"/><subtreelinvel body="floater"/><subtreeangmom body="base"/><subtreecom body="welded"/>
    <subtreecom body="world"/><subtreeangmom body="arm"/>
    <magnetometer site="s_base"/><clock/><tendonpos tendon="t"/>
  </sensor>
  <tendon><fixed name="t"><joint joint="hinge1" coef="1"/></fixed></tendon>
"""
XML = f'<mujoco model="sensors">{BODIES}{SENSORS}</mujoco>'


def load(xml=XML, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ModelWarning)
        model = mb.load_mjcf(xml, **kw)
        mm = mujoco.MjModel.from_xml_string(xml)
        sensors = load_sensors(mm, model, warn=False)
    return model, mm, sensors


@pytest.fixture(scope="module")
def setup():
    model, mm, sensors = load()
    return model, mm, sensors, mb.Simulator(model, dt=mm.opt.timestep)


def mb_state(mm, model, qpos, qvel, qacc=None):
    """multibody (q, v, a) of MuJoCo's (qpos, qvel, qacc): free joints
    v = (ω_body, Rᵀ ṗ) from MuJoCo's (ṗ, ω_body), a = (ω̇_body, Rᵀ p̈ − ω × Rᵀ ṗ)."""
    q, v = np.zeros(model.nq), np.zeros(model.nv)
    a = None if qacc is None else np.zeros(model.nv)
    for j in range(mm.njnt):
        b = mm.jnt_bodyid[j]  # the loader's name of an unnamed joint: "<body>_joint<rank>"
        jb = model.joints[model.joint_id(mm.joint(j).name or f"{mm.body(b).name}_joint{j - mm.body_jntadr[b]}")]
        i, k = mm.jnt_qposadr[j], mm.jnt_dofadr[j]
        q[jb.q_slice] = qpos[i:i + jb.nq]
        if mm.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE:
            R = np.zeros(9)
            mujoco.mju_quat2Mat(R, qpos[i + 3:i + 7])
            R = R.reshape(3, 3)
            w, u = qvel[k + 3:k + 6], R.T @ qvel[k:k + 3]
            v[jb.v_slice] = np.r_[w, u]
            if a is not None:
                a[jb.v_slice] = np.r_[qacc[k + 3:k + 6], R.T @ qacc[k:k + 3] - np.cross(w, u)]
        else:
            v[jb.v_slice] = qvel[k:k + jb.nv]
            if a is not None:
                a[jb.v_slice] = qacc[k:k + jb.nv]
    return q, v, a


def random_mujoco_state(mm, rng):
    d = mujoco.MjData(mm)
    d.qpos[:] = rng.uniform(-1.2, 1.2, mm.nq)
    mujoco.mj_normalizeQuat(mm, d.qpos)
    d.qvel[:] = rng.normal(size=mm.nv)
    d.time = rng.uniform(0, 3)
    mujoco.mj_forward(mm, d)
    return d


def mujoco_readings(mm, d, sensors, names):
    """MuJoCo's reading of each sensor named in ``names`` (dict)."""
    out = {}
    for i in range(mm.nsensor):
        t = mujoco.mjtSensor(mm.sensor_type[i]).name.replace("mjSENS_", "").lower()
        name = mm.sensor(i).name or f"{t}{i}"
        if name in names:
            out[name] = d.sensordata[mm.sensor_adr[i]:mm.sensor_adr[i] + mm.sensor_dim[i]].copy()
    return out


def assert_same(ours, theirs, sensors, tol=TOL):
    assert set(ours) == set(theirs)
    for name, x in ours.items():
        y = theirs[name]
        if isinstance(sensors[name], FrameOrientation) and np.dot(x, y) < 0:
            y = -y  # a quaternion and its negative are one rotation (ours: w >= 0)
        np.testing.assert_allclose(x, y, atol=tol, rtol=0, err_msg=name)


# ------------------------------------------------------------------ MuJoCo oracles

@pytest.mark.parametrize("acceleration", ["mujoco", "multibody"])
def test_every_mapped_sensor_matches_mujoco(setup, acceleration):
    """read() against MuJoCo's sensordata at random states, a = MuJoCo's
    qacc or multibody's forward dynamics (joint damping and spring as
    MuJoCo's passive forces); the cutoffs through update() (no noise)."""
    model, mm, sensors, sim = setup
    rng = np.random.default_rng(7)
    cut = {s.name for s in sensors if s.cutoff}
    assert len(cut) == 4
    for _ in range(4):
        d = random_mujoco_state(mm, rng)
        q, v, a = mb_state(mm, model, d.qpos, d.qvel, d.qacc)
        if acceleration == "multibody":
            ours = forward_acceleration(sim, d.time, q, v, np.zeros(model.nv))
            np.testing.assert_allclose(ours, a, atol=1e-9)
            a = ours
        theirs = mujoco_readings(mm, d, sensors, sensors.names)
        ideal = sensors.read(model, d.time, q, v, a)
        assert_same({n: x for n, x in ideal.items() if n not in cut},
                    {n: x for n, x in theirs.items() if n not in cut}, sensors)
        assert any(np.abs(ideal[n]).max() > sensors[n].cutoff for n in cut)  # the cutoffs act
        sensors.reset()
        assert_same(sensors.update(model, d.time, q, v, a), theirs, sensors)


def test_mapping_keeps_names_order_and_lists_what_is_not_loaded(setup):
    model, mm, sensors, _ = setup
    assert sensors.names[:3] == ("jointpos0", "slide_rate", "ballquat2")
    assert len(sensors) == mm.nsensor - 3
    reasons = dict(sensors.not_loaded)
    assert set(reasons) == {"force29", "subtreecom37", "tendonpos42"}
    assert "merged into 'ballb_ball1'" in reasons["force29"] and "merge_fixed=False" in reasons["force29"]
    assert "no counterpart" in reasons["tendonpos42"]
    assert sensors.dt == mm.opt.timestep
    with pytest.warns(ModelWarning, match="3 MJCF sensor"):
        load_sensors(XML, model)
    # the order is MuJoCo's: vector() is sensordata without the sensors not loaded
    d = random_mujoco_state(mm, np.random.default_rng(1))
    q, v, a = mb_state(mm, model, d.qpos, d.qvel, d.qacc)
    theirs = mujoco_readings(mm, d, sensors, sensors.names)
    sensors.reset()
    ours = sensors.update(model, d.time, q, v, a)
    for name in sensors.names:  # MuJoCo's quaternion signs
        ours[name] = np.sign(ours[name] @ theirs[name]) * ours[name] if isinstance(sensors[name], FrameOrientation) \
            else ours[name]
    skip = {n for n, _ in sensors.not_loaded}
    keep = np.concatenate([np.arange(mm.sensor_adr[i], mm.sensor_adr[i] + mm.sensor_dim[i]) for i in range(mm.nsensor)
                           if (mm.sensor(i).name or mujoco.mjtSensor(mm.sensor_type[i]).name[7:].lower() + str(i))
                           not in skip])
    np.testing.assert_allclose(sensors.vector(ours), d.sensordata[keep], atol=TOL)


def test_welded_body_kept_by_merge_fixed_false_matches_mujoco():
    """A force sensor / subtree sensor on a body without joints needs that
    body in the model: with merge_fixed=False it is loaded and matches."""
    model, mm, sensors = load(merge_fixed=False)
    assert [n for n, _ in sensors.not_loaded] == ["tendonpos42"]
    d = random_mujoco_state(mm, np.random.default_rng(3))
    q, v, a = mb_state(mm, model, d.qpos, d.qvel, d.qacc)
    names = [n for n in ("force29", "subtreecom37", "velocimeter24", "torque28") if n in sensors]
    assert len(names) == 4
    ours = sensors.read(model, d.time, q, v, a)
    assert_same({n: ours[n] for n in names}, mujoco_readings(mm, d, sensors, names), sensors)


def test_delay_is_mujoco_history_buffer():
    """MuJoCo 4's delayed sensors (nsample, delay = k·timestep) read the
    value k steps earlier and zero before: initial='zero' after mapping."""
    xml = XML.replace("<clock/>", '<clock/><accelerometer site="s_base" name="late" delay="0.006" nsample="3"/>'
                                  '<jointpos joint="hinge2" name="late_q" delay="0.002" nsample="4"/>'
                                  '<gyro site="tip" name="periodic" nsample="2" interval="0.004"/>'
                                  '<jointpos joint="hinge2" name="too_late" delay="0.01" nsample="2"/>'
                                  '<jointpos joint="hinge2" name="between" delay="0.003" nsample="2"/>')
    model, mm, sensors = load(xml)
    reasons = dict(sensors.not_loaded)
    assert "interval" in reasons["periodic"] and "beyond its buffer" in reasons["too_late"]
    assert "whole number of time steps" in reasons["between"]
    assert sensors["late"].delay == pytest.approx(0.006) and sensors["late"].initial == "zero"
    sub = Sensors([sensors["late"], sensors["late_q"]], dt=mm.opt.timestep)
    d = mujoco.MjData(mm)
    d.qpos[:] = np.random.default_rng(0).uniform(-1, 1, mm.nq)
    mujoco.mj_normalizeQuat(mm, d.qpos)
    d.qvel[:] = np.random.default_rng(1).normal(size=mm.nv)
    ideal = []
    for k in range(8):
        mujoco.mj_forward(mm, d)
        q, v, a = mb_state(mm, model, d.qpos, d.qvel, d.qacc)
        got = sub.update(model, d.time, q, v, a)
        theirs = mujoco_readings(mm, d, sensors, ("late", "late_q"))
        np.testing.assert_allclose(got["late"], theirs["late"], atol=TOL)
        np.testing.assert_allclose(got["late_q"], theirs["late_q"], atol=TOL)
        ideal.append(sub.read(model, d.time, q, v, a)["late"])
        np.testing.assert_allclose(got["late"], ideal[k - 3] if k >= 3 else 0.0, atol=0)
        mujoco.mj_step(mm, d)
    assert np.abs(ideal[0]).max() > 0.1


def contacts_of(mm, d, model):
    """MuJoCo's contacts as multibody Contact records (bodies: the
    multibody body of each MuJoCo body's frame; force: MuJoCo's contact
    force on geom 2, world)."""
    out = []
    for i in range(d.ncon):
        c = d.contact[i]
        f = np.zeros(6)
        mujoco.mj_contactForce(mm, d, i, f)
        frame = c.frame.reshape(3, 3)
        bodies = [model.frame_body[model.frame_id(mm.body(mm.geom_bodyid[g]).name or "world")] for g in c.geom]
        out.append(Contact(mm.geom(c.geom[0]).name, mm.geom(c.geom[1]).name, int(bodies[0]), int(bodies[1]),
                           c.pos.copy(), frame.copy(), float(c.dist), np.zeros(3), frame.T @ f[:3]))
    return out


TOUCH = """
<mujoco model="touch">
  <option timestep="0.002"/>
  <worldbody>
    <geom name="floor" type="plane" size="0 0 1"/>
    <body name="box" pos="0 0 0.3" euler="0 0 20">
      <freejoint/>
      <geom name="bx" type="box" size="0.1 0.15 0.05" mass="2"/>
      <site name="bottom" pos="0 0 -0.05" type="box" size="0.11 0.16 0.01"/>
      <site name="deep" pos="0 0 0" type="box" size="0.2 0.2 0.01"/>
      <site name="corner" pos="0.1 0.15 -0.05" type="sphere" size="0.02"/>
      <site name="half" pos="0.05 0 -0.05" type="box" size="0.05 0.2 0.01"/>
      <site name="pill" pos="0 0.15 -0.05" type="capsule" size="0.02 0.12" euler="0 90 0"/>
      <site name="can" pos="-0.1 0 -0.05" type="cylinder" size="0.02 0.2" euler="90 0 0"/>
      <site name="egg" pos="-0.1 -0.15 -0.05" type="ellipsoid" size="0.03 0.01 0.02"/>
      <site name="top" pos="0 0 0.05" type="box" size="0.11 0.16 0.01"/>
    </body>
    <body name="ball" pos="0.5 0 0.3">
      <freejoint/>
      <geom name="bl" type="sphere" size="0.05" mass="1"/>
      <site name="ball_zone" type="sphere" size="0.06"/>
    </body>
  </worldbody>
  <sensor>
    <touch site="bottom"/><touch site="deep"/><touch site="corner"/><touch site="half"/><touch site="pill"/>
    <touch site="can"/><touch site="egg"/><touch site="top"/><touch site="ball_zone" cutoff="5"/>
  </sensor>
</mujoco>"""


def test_touch_matches_mujoco_on_mujocos_contacts():
    """MuJoCo's touch sensors against ours fed MuJoCo's contacts (points,
    frames, forces): zone types, the ray re-projection (the 'deep' zone
    lies above the contact points), sensors on geom 2 of the contact (the
    floor is geom 1), the cutoff."""
    model, mm, sensors = load(TOUCH)
    assert len(sensors) == 9 and all(isinstance(s, Touch) for s in sensors)
    d = mujoco.MjData(mm)
    checked = 0
    for step in range(400):
        mujoco.mj_step(mm, d)
        if step % 50 != 49:
            continue
        mujoco.mj_forward(mm, d)
        q, v, a = mb_state(mm, model, d.qpos, d.qvel, d.qacc)
        contacts = contacts_of(mm, d, model)
        sensors.reset()
        ours = sensors.update(model, d.time, q, v, a, contacts=contacts)
        theirs = mujoco_readings(mm, d, sensors, sensors.names)
        for n in sensors.names:
            np.testing.assert_allclose(ours[n], theirs[n], atol=1e-10, rtol=0, err_msg=f"{n} at step {step}")
        checked += d.ncon > 0
    assert checked >= 6
    assert theirs["touch0"][0] == pytest.approx(2 * 9.81, rel=1e-3) and theirs["touch7"][0] == 0.0
    # 'deep' is above the contacts: the rays leave the box downwards and miss it
    assert 0 < theirs["touch3"][0] < theirs["touch0"][0] and theirs["touch1"][0] == 0.0
    assert theirs["touch8"][0] == 5.0


@pytest.mark.parametrize("zone, size", [("sphere", (0.5,)), ("ellipsoid", (0.5, 1.0, 0.25)), ("box", (0.5, 1.0, 0.25)),
                                        ("cylinder", (0.5, 1.0)), ("capsule", (0.5, 1.0))])
def test_ray_meets_zone(zone, size):
    """Closed cases of the ray-zone test in the zone's frame: from inside,
    towards it, away from it, passing beside it."""
    R, p = np.eye(3), np.zeros(3)
    z = size[0] if zone == "sphere" else size[2] if len(size) == 3 else size[1] + (size[0] if zone == "capsule"
                                                                                 else 0.0)  # the zone's top
    meets = lambda x, d: _ray_meets(zone, np.array(size), R, p, np.array(x, float), np.array(d, float))  # noqa: E731
    assert meets([0, 0, 0], [1, 0, 0])                 # inside
    assert meets([0, 0, z + 1], [0, 0, -1])            # above, pointing at it
    assert not meets([0, 0, z + 1], [0, 0, 1])         # above, pointing away
    assert not meets([0, 0, z + 0.01], [1, 0, 0])      # just above, sideways
    assert meets([0, 0, z - 0.01], [1, 0, 0])          # just inside the top, sideways
    assert not meets([2, 0, 0], [0, 1, 0])             # beside it, parallel
    assert meets([2, 0, 0], [-1, 0, 0])
    # the same in a rotated and shifted zone frame
    from scipy.spatial.transform import Rotation
    Rz = Rotation.from_rotvec([0.3, -0.5, 0.9]).as_matrix()
    pz = np.array([0.2, -1.0, 0.5])
    assert _ray_meets(zone, np.array(size), Rz, pz, pz + Rz @ [0, 0, z + 1], Rz @ [0, 0, -1])
    assert not _ray_meets(zone, np.array(size), Rz, pz, pz + Rz @ [0, 0, z + 1], Rz @ [0, 0, 1])


# ------------------------------------------------------------------ closed forms and identities

def tilted_model():
    b = mb.ModelBuilder("tilted")
    R = so3.exp(np.array([0.4, -0.3, 0.7]))
    b.add_body("wedge", "world", "fixed", (R, [0.3, 0.1, 0.5]), mass=1.0, inertia=np.eye(3) * 0.01)
    b.add_frame("pad", "wedge", (so3.exp(np.array([-0.2, 0.5, 0.1])), [0.05, -0.02, 0.1]))
    b.add_body("pendulum", "wedge", "revolute", (np.eye(3), [0, 0, 0.2]), axis=[0, 1, 0], mass=0.5,
               com=[0, 0, -0.3], inertia=np.eye(3) * 0.02, joint_name="swing")
    b.add_frame("bob", "pendulum", (np.eye(3), [0, 0, -0.3]))
    b.add_body("stone", "world", "free", None, mass=0.3, inertia=np.eye(3) * 0.001, joint_name="float")
    b.add_frame("stone_imu", "stone", (so3.exp(np.array([1.0, 0.2, -0.4])), [0, 0, 0]))  # at its centre of mass
    return b.build(merge_fixed=False)


def test_imu_at_rest_on_tilted_fixed_body_reads_minus_g():
    """An accelerometer on a fixed tilted body reads −Rᵀg (+9.81 up), its
    gyro 0; in free fall (a from forward dynamics) it reads 0."""
    model = tilted_model()
    sim = mb.Simulator(model, dt=1e-3)
    q = model.neutral()
    stone = model.joints[model.joint_id("float")]
    q[stone.q_slice.start:stone.q_slice.start + 3] = [1, 2, 3]
    v = np.zeros(model.nv)
    v[model.joints[model.joint_id("swing")].v_slice] = 0.7  # the pendulum swings: the pad does not care
    v[stone.v_slice.start:stone.v_slice.start + 3] = [0.3, -0.2, 0.5]  # the stone tumbles
    a = forward_acceleration(sim, 0.0, q, v, np.zeros(model.nv))
    S = Sensors([Accelerometer("pad"), Gyro("pad"), IMU("pad", name="imu"), Accelerometer("stone_imu"),
                 FrameLinearAcceleration("stone", proper=False)])
    r = S.read(model, 0.0, q, v, a)
    Rpad = mb.frame_pose(model, q, "pad")[:3, :3]
    g = model.gravity
    np.testing.assert_allclose(r["accelerometer(pad)"], -Rpad.T @ g, atol=1e-12)
    assert np.linalg.norm(r["accelerometer(pad)"]) == pytest.approx(9.81)
    np.testing.assert_allclose(r["gyro(pad)"], 0, atol=1e-14)
    np.testing.assert_allclose(r["imu"], np.r_[np.zeros(3), -Rpad.T @ g], atol=1e-12)
    np.testing.assert_allclose(r["accelerometer(stone_imu)"], 0, atol=1e-10)
    np.testing.assert_allclose(r["framelinacc(stone)"], g, atol=1e-10)


def test_force_sensor_at_a_joint_projects_to_rnea():
    """The wrench a joint transmits, in the joint frame, has the joint
    force of RNEA along the joint axis (no armature), and at rest the
    force sensor reads the subtree's weight, up."""
    model, mm, sensors = load()
    rng = np.random.default_rng(5)
    q = model.random_configuration(seed=5)
    v, a = rng.normal(size=model.nv), rng.normal(size=model.nv)
    tau = mb.rnea(model, q, v, a)
    S = Sensors([Wrench(joint="hinge1"), Wrench(joint="slide1"), Wrench(joint="hinge2")])
    r = S.read(model, 0.0, q, v, a)
    for name, j in (("hinge1", 0), ("slide1", 1), ("hinge2", 2)):
        info = model.joints[model.joint_id(name)]
        axis = np.array(info.axis)
        w = r[f"wrench({name})"]
        along = w[:3] @ axis if info.type == "revolute" else w[3:] @ axis
        assert along == pytest.approx(tau[info.v_slice][0], abs=1e-10), name
    # at rest: the subtree's weight, pointing up, in the frame's axes
    q0 = model.neutral()
    z = np.zeros(model.nv)
    sim = mb.Simulator(model, dt=0.002, joint_springs=False)
    a0 = forward_acceleration(sim, 0.0, q0, z, mb.gravity_forces(model, q0))  # held still
    np.testing.assert_allclose(a0, 0, atol=1e-10)
    r = Sensors([Force("s_slider"), SubtreeCenterOfMass("slider")]).read(model, 0.0, q0, z, a0)
    R = mb.frame_pose(model, q0, "s_slider")[:3, :3]
    ms = model.body_mass[model.body_id("slider")] + model.body_mass[model.body_id("ballb_ball1")]
    np.testing.assert_allclose(R @ r["force(s_slider)"], -ms * model.gravity, atol=1e-10)


def test_batch_read_equals_single_reads(setup):
    model, mm, sensors, sim = setup
    rng = np.random.default_rng(2)
    Q = np.array([model.random_configuration(seed=s) for s in range(3)])
    V, A = rng.normal(size=(3, model.nv)), rng.normal(size=(3, model.nv))
    t = np.array([0.1, 0.2, 0.3])
    batch = sensors.read(model, t, Q, V, A)
    for k in range(3):
        one = sensors.read(model, t[k], Q[k], V[k], A[k])
        for n in sensors.names:
            np.testing.assert_allclose(batch[n][k], one[n], atol=1e-13, err_msg=n)


# ------------------------------------------------------------------ along a trajectory

def test_over_trajectory_is_reading_with_velocity_differences(setup):
    """Semi-implicit Euler: v_{k+1} = v_k + dt·q̈_k, so over() (q̈ by forward
    dynamics under tau[k + 1]) equals read() with a = Δv/dt; the last
    sample holds the last step's τ."""
    model, mm, sensors, _ = setup
    sim = mb.Simulator(model, dt=0.002, q0=model.random_configuration(seed=4))
    n = 12
    tau = np.random.default_rng(0).normal(size=(n, model.nv))
    traj = sim.rollout(steps=n, tau=tau)
    ideal = sensors.over(traj, sim, measured=False)
    A = np.diff(traj.v, axis=0) / sim.dt
    ref = sensors.read(model, traj.t[:-1], traj.q[:-1], traj.v[:-1], A)
    for name in sensors.names:
        assert ideal[name].shape == (n + 1, sensors.dims(model)[name])
        np.testing.assert_allclose(ideal[name][:-1], ref[name], atol=1e-9, err_msg=name)
    last = forward_acceleration(sim, traj.t[-1], traj.q[-1], traj.v[-1], traj.tau[-1])
    r = sensors.read(model, traj.t[-1], traj.q[-1], traj.v[-1], last)
    np.testing.assert_allclose(ideal["accelerometer23"][-1], r["accelerometer23"], atol=1e-12)
    # measured: update() along the samples after reset(), with the same seed
    noisy = Sensors([Accelerometer("imu", noise=0.1, delay=0.004), JointPosition("ball1", noise=0.02),
                     Gyro("tip", noise=[0.01, 0.02, 0.03], resolution=0.01, cutoff=2.0)], dt=sim.dt, seed=3)
    got = noisy.over(traj, sim)
    for k in range(n + 1):
        a = A[k] if k < n else last
        step = noisy.update(model, traj.t[k], traj.q[k], traj.v[k], a)
        for name in noisy.names:
            np.testing.assert_allclose(got[name][k], step[name], atol=1e-9, err_msg=f"{name} at {k}")
    again = noisy.over(traj, sim)
    assert all(np.array_equal(again[x], got[x]) for x in noisy.names)
    other = noisy.over(traj, sim, seed=4)
    assert not np.allclose(other["accelerometer(imu)"], got["accelerometer(imu)"])


def test_step_by_step_equals_over_the_rollout():
    """Sensors.step (one simulator step, the measurement of the state it
    left) along a run gives what over() gives along the rollout of the
    same run, noise and delay included, contacts included."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ModelWarning)
        model = mb.load_mjcf(TOUCH)
    mm = mujoco.MjModel.from_xml_string(TOUCH)
    q0 = mb_state(mm, model, mm.qpos0, np.zeros(mm.nv))[0]
    q0[2] = q0[9] = 0.05  # resting on the floor
    S = Sensors([Touch("bottom", zone="box", size=(0.11, 0.16, 0.01), noise=0.5), IMU("box", noise=0.1, delay=0.004),
                 Force("box", delay=0.002, initial="nan"), JointPosition(model.joint_names[1], noise=0.01)],
                dt=0.002, seed=9)
    n = 30
    tau = 0.5 * np.random.default_rng(0).normal(size=(n, model.nv))
    sim = mb.Simulator(model, dt=0.002, q0=q0)
    steps = [S.step(sim, tau[k]) for k in range(n)]
    sim = mb.Simulator(model, dt=0.002, q0=q0)
    traj = sim.rollout(steps=n, tau=tau, contacts=True)
    over = S.over(traj, sim)
    for name in S.names:
        np.testing.assert_allclose(np.array([x[name] for x in steps]), over[name][:n], atol=1e-9, err_msg=name)
    assert np.isnan(over["force(box)"][0]).all() and (over["touch(bottom)"] != 0).all()


def test_touch_and_force_along_a_simulated_contact():
    """A box resting on the ground in multibody's simulator: the bottom
    touch pad reads its weight, the top one nothing, the accelerometer
    +9.81 up; the contact forces are external forces of the force sensor."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ModelWarning)
        model = mb.load_mjcf(TOUCH)
    mm = mujoco.MjModel.from_xml_string(TOUCH)
    sim = mb.Simulator(model, dt=0.002, q0=mb_state(mm, model, mm.qpos0, np.zeros(mm.nv))[0])
    traj = sim.rollout(steps=250, contacts=True)
    S = Sensors([Touch("bottom", zone="box", size=(0.11, 0.16, 0.01)), Touch("top", zone="box", size=(0.11, 0.16, 0.01)),
                 Touch("box"), Accelerometer("box"), Force("box"), Touch("ball", name="ball_touch")])
    r = S.over(traj, sim, measured=False)
    rest = slice(-20, None)
    np.testing.assert_allclose(r["touch(bottom)"][rest], 2 * 9.81, rtol=1e-6)
    np.testing.assert_allclose(r["touch(box)"][rest], 2 * 9.81, rtol=1e-6)
    np.testing.assert_allclose(r["ball_touch"][rest], 9.81, rtol=1e-6)
    assert (r["touch(top)"] == 0).all() and (r["touch(bottom)"][:5] == 0).all()  # falling at first
    R = np.array([mb.frame_pose(model, traj.q[k], "box")[:3, :3] for k in range(-20, 0)])
    np.testing.assert_allclose(np.einsum("kij,kj->ki", R, r["accelerometer(box)"][rest]), [[0, 0, 9.81]] * 20,
                               atol=1e-6)
    np.testing.assert_allclose(r["force(box)"][rest], 0, atol=1e-8)  # a free body: no joint force
    with pytest.raises(InputError, match="contacts=True"):
        S.over(sim.rollout(steps=2), sim)


# ------------------------------------------------------------------ measurement model

def test_noise_statistics_and_seeds():
    """Gaussian noise: mean and standard deviation over many samples (real
    readings per component; quaternions as rotation vectors in the sensor
    axes); the same seed gives the same readings, another seed others."""
    model, _, _ = load()
    q = model.random_configuration(seed=1)
    sig = np.array([0.1, 0.02])
    S = Sensors([JointPosition("hinge1", noise=0.05), JointPosition("ball1", noise=0.03),
                 JointPosition("free1", noise=[0.01, 0.02, 0.03, 0.04, 0.05, 0.06]),
                 Clock(noise=0.2), JointVelocity("slide1", noise=0.5, seed=11)], seed=5)
    n = 4000
    R = {k: [] for k in S.names}
    for _ in range(n):
        for k, x in S.update(model, 0.0, q, np.zeros(model.nv)).items():
            R[k].append(x)
    R = {k: np.array(x) for k, x in R.items()}
    tol = 4.0 / np.sqrt(n)
    dq = R["jointpos(hinge1)"][:, 0] - q[0]
    assert abs(dq.mean()) < 0.05 * tol and abs(dq.std() / 0.05 - 1) < 0.05
    assert abs(R["clock(t)"].mean()) < 0.2 * tol and abs(R["clock(t)"].std() / 0.2 - 1) < 0.05
    ball = model.joints[model.joint_id("ball1")].q_slice
    rot = np.array([Q.log(Q.multiply(Q.conjugate(q[ball]), x)) for x in R["jointpos(ball1)"]])
    np.testing.assert_allclose(rot.mean(axis=0), 0, atol=0.03 * tol)
    np.testing.assert_allclose(rot.std(axis=0) / 0.03, 1, atol=0.05)
    np.testing.assert_allclose(np.linalg.norm(R["jointpos(ball1)"], axis=1), 1, atol=1e-12)
    free = model.joints[model.joint_id("free1")].q_slice
    P = R["jointpos(free1)"]
    np.testing.assert_allclose(P[:, :3].std(axis=0) / [0.01, 0.02, 0.03], 1, atol=0.05)
    rot = np.array([Q.log(Q.multiply(Q.conjugate(q[free][3:]), x)) for x in P[:, 3:]])
    np.testing.assert_allclose(rot.std(axis=0) / [0.04, 0.05, 0.06], 1, atol=0.05)
    # components are independent
    assert abs(np.corrcoef(P[:, 0], P[:, 1])[0, 1]) < tol
    # seeds: the same readings again after reset, other readings with another seed
    S.reset()
    first = [S.update(model, 0.0, q, np.zeros(model.nv)) for _ in range(3)]
    assert all(np.array_equal(first[0][k], R[k][0]) for k in S.names)
    import pickle
    copy = pickle.loads(pickle.dumps(S))  # starts as after reset()
    again = copy.update(model, 0.0, q, np.zeros(model.nv))
    assert all(np.array_equal(again[k], R[k][0]) for k in S.names)
    S.reset(seed=6)
    other = S.update(model, 0.0, q, np.zeros(model.nv))
    assert not np.array_equal(other["jointpos(hinge1)"], first[0]["jointpos(hinge1)"])
    assert np.array_equal(other["jointvel(slide1)"], first[0]["jointvel(slide1)"])  # its own seed


def test_delay_resolution_cutoff_exact():
    """A delay of k steps gives the measurement made k steps earlier,
    exactly; before that: the first measurement, NaN or zero. Resolution
    rounds to the step, cutoff saturates."""
    model, _, _ = load()
    S = Sensors([Clock(name="now"), Clock(name="first", delay=0.006), Clock(name="nan", delay=0.002, initial="nan"),
                 Clock(name="zero", delay=0.004, initial="zero"), Clock(name="coarse", resolution=0.005, cutoff=0.02),
                 JointPosition("hinge1", name="enc", resolution=2 * np.pi / 4096)], dt=0.002)
    q = model.neutral()
    q[0] = 0.123456
    out = [S.update(model, 0.002 * k, q) for k in range(15)]
    t = 0.002 * np.arange(15)
    col = lambda n: np.array([o[n][0] for o in out])  # noqa: E731
    np.testing.assert_array_equal(col("now"), t)
    np.testing.assert_array_equal(col("first"), np.r_[[0.0] * 3, t[:-3]])
    assert np.isnan(col("nan")[0]) and np.array_equal(col("nan")[1:], t[:-1])
    np.testing.assert_array_equal(col("zero"), np.r_[0.0, 0.0, t[:-2]])
    np.testing.assert_allclose(col("coarse"), np.minimum(0.005 * np.round(t / 0.005), 0.02), atol=1e-15)
    step = 2 * np.pi / 4096
    assert col("enc")[0] == pytest.approx(step * round(0.123456 / step), abs=1e-15)
    with pytest.raises(InputError, match="does not follow the last update"):
        S.update(model, 1.0, q)
    S.reset()
    assert S.update(model, 1.0, q)["first"][0] == 1.0


# ------------------------------------------------------------------ errors

def test_errors_name_the_sensor():
    model, _, _ = load()
    q, v = model.neutral(), np.zeros(model.nv)
    with pytest.raises(ModelError, match=r"sensors\[1\]: sensor 'imu' \(Accelerometer\): model 'sensors' has no "
                                          r"frame 'nowhere'"):
        Sensors([Gyro("tip"), Accelerometer("nowhere", name="imu")], model=model)
    with pytest.raises(ModelError, match="sensor 'jointpos\\(elbow\\)' \\(JointPosition\\): .* no joint 'elbow'"):
        Sensors([JointPosition("elbow")]).read(model, 0.0, q)
    with pytest.raises(ModelError, match="no reference frame 'nope'"):
        Sensors([FramePosition("tip", reference="nope")], model=model)
    with pytest.raises(ModelError, match="no body 'nobody'"):
        Sensors([SubtreeCenterOfMass("nobody")], model=model)
    with pytest.raises(InputError, match="sensor 'gyro\\(tip\\)' \\(Gyro\\): noise must be finite"):
        Gyro("tip", noise=-0.1)
    with pytest.raises(InputError, match="noise has 2 values"):
        Sensors([Gyro("tip", noise=[0.1, 0.2])], model=model)
    with pytest.raises(InputError, match="sensor 'late' .*delay 0.003 s is not a whole multiple of the time step"):
        Sensors([Gyro("tip", name="late", delay=0.003)], dt=0.002)
    with pytest.raises(InputError, match="delay .* -0.1"):
        Gyro("tip", delay=-0.1)
    with pytest.raises(InputError, match="cutoff and resolution apply to real readings, not to a quaternion"):
        Sensors([JointPosition("ball1", cutoff=1.0)], model=model)
    with pytest.raises(InputError, match="cutoff and resolution"):
        FrameOrientation("tip", resolution=0.1).bind(model)
    with pytest.raises(InputError, match="two sensors are named 'gyro\\(tip\\)'"):
        Sensors([Gyro("tip"), Gyro("tip")])
    with pytest.raises(InputError, match="sensor 'accelerometer\\(tip\\)' .*needs the joint accelerations a"):
        Sensors([Accelerometer("tip")]).read(model, 0.0, q, v)
    with pytest.raises(InputError, match="needs the velocity v"):
        Sensors([Velocimeter("tip")]).read(model, 0.0, q)
    with pytest.raises(InputError, match="needs the contacts"):
        Sensors([Touch("tip")]).read(model, 0.0, q, v, v)
    with pytest.raises(InputError, match="a delay needs the time step"):
        Sensors([Gyro("tip", delay=0.01)]).update(model, 0.0, q, v)
    with pytest.raises(InputError, match="a box zone needs 3 positive"):
        Touch("tip", zone="box", size=(1, 2))
    with pytest.raises(InputError, match="initial must be one of"):
        Gyro("tip", initial="last")
    with pytest.raises(InputError, match="local=True and a reference frame"):
        FrameAngularVelocity("tip", local=True, reference="imu")
    with pytest.raises(InputError, match="takes no reference frame"):
        Gyro("tip", reference="imu")
    with pytest.raises(InputError, match="give a frame or a joint"):
        Force()
    with pytest.raises(InputError, match="axis must be"):
        FrameAxis("tip", "w")
    with pytest.raises(InputError, match="not a rigid pose"):
        FramePose("tip", placement=np.diag([2.0, 1, 1, 1]))
    with pytest.raises(InputError, match="q has shape"):
        Sensors([Gyro("tip")]).read(model, 0.0, np.zeros(3), v)
    with pytest.raises(InputError, match="no sensor named 'x'"):
        Sensors([Gyro("tip")])["x"]
    with pytest.raises(InputError, match="Sensors takes a list"):
        Sensors(3)
    with pytest.raises(InputError, match="needs the multibody Model"):
        load_sensors(XML, "model")


def test_load_sensors_noise_is_metadata_unless_asked():
    xml = XML.replace('<gyro site="imu"/>', '<gyro site="imu" noise="0.2"/>')
    model, mm, sensors = load(xml)
    g = sensors["gyro22"]
    assert g.mujoco_noise == 0.2 and not g.noise.any()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ModelWarning)
        noisy = load_sensors(xml, model, noise=True, seed=2)
    assert noisy["gyro22"].noise == 0.2 and noisy.seed == 2
    d = random_mujoco_state(mm, np.random.default_rng(0))
    q, v, a = mb_state(mm, model, d.qpos, d.qvel, d.qacc)
    gyro = Sensors([noisy["gyro22"]], seed=2)
    x = np.array([gyro.update(model, d.time + 0.002 * k, q, v, a)["gyro22"] for k in range(500)])
    ideal = gyro.read(model, d.time, q, v, a)["gyro22"]
    np.testing.assert_allclose(x.std(axis=0), 0.2, rtol=0.15)
    np.testing.assert_allclose(x.mean(axis=0), ideal, atol=0.05)
    assert isinstance(noisy["magnetometer40"], Magnetometer) and isinstance(noisy["framelinvel14"], FrameLinearVelocity)
    assert isinstance(noisy["velocimeter24"], Velocimeter) and isinstance(noisy["slide_rate"], JointVelocity)
    assert isinstance(noisy["framequat8"], FrameOrientation) and isinstance(noisy["torque28"], Torque)


MUSCLE_ARM = """<mujoco model="elbow_muscles">
  <option timestep="0.002" integrator="Euler"><flag contact="disable" eulerdamp="disable"/></option>
  <worldbody>
    <site name="flex_origin" pos="0.02 0.25 0"/><site name="flex_via" pos="0.03 0 0"/>
    <body name="forearm">
      <joint name="elbow" type="hinge" axis="0 0 1" damping="0.2"/>
      <inertial pos="0 -0.15 0" mass="1.5" diaginertia="0.012 0.001 0.012"/>
      <site name="flex_insertion" pos="0.015 -0.05 0"/>
      <site name="wrist" pos="0.01 -0.28 0.02" euler="10 0 30"/>
    </body>
  </worldbody>
  <tendon>
    <spatial name="flexor_path"><site site="flex_origin"/><site site="flex_via"/><site site="flex_insertion"/></spatial>
  </tendon>
  <actuator>
    <muscle name="flexor" tendon="flexor_path" force="400" lengthrange="0.24 0.32"/>
    <position name="servo" joint="elbow" kp="3"/>
  </actuator>
  <sensor>
    <accelerometer name="acc" site="wrist"/><gyro name="gyro" site="wrist"/>
    <jointpos name="angle" joint="elbow"/><force name="load" site="wrist"/>
  </sensor>
</mujoco>"""


def test_rollout_records_sensors_of_an_actuated_arm_as_mujoco():
    """Simulator.rollout(sensors=...) with a muscle (activation dynamics)
    and a servo under a control table: the recorded readings equal
    MuJoCo's sensordata along MuJoCo's own run of the same file (the
    accelerations belong to each sample's step, with the controls of that
    step and the activations at its start; the muscle's pull on the forearm
    reaches it at the tendon's insertion, not through the elbow, so the
    force sensor leaves it out, as MuJoCo's does)."""
    model = mb.load_mjcf(MUSCLE_ARM)
    S = load_sensors(MUSCLE_ARM, model)
    n = 40
    rng = np.random.default_rng(3)
    ctrl = np.column_stack([np.clip(0.5 + 0.5 * np.sin(np.arange(n) / 5.0), 0, 1), rng.normal(size=n)])
    sim = mb.Simulator(model, 0.002, q0=np.array([0.3]))
    traj = sim.rollout(steps=n, control=ctrl, sensors=S)
    m = mujoco.MjModel.from_xml_string(MUSCLE_ARM)
    d = mujoco.MjData(m)
    d.qpos[0] = 0.3
    expected = {name: [] for name in S.names}
    for k in range(n):
        d.ctrl[:] = ctrl[k]
        mujoco.mj_step(m, d)    # sensordata of the state the step started from, with its controls
        for name in S.names:
            adr, dim = m.sensor(name).adr[0], m.sensor(name).dim[0]
            expected[name].append(d.sensordata[adr:adr + dim].copy())
    assert abs(traj.q[-1, 0] - d.qpos[0]) < 1e-12
    for name in S.names:
        np.testing.assert_allclose(traj.sensors[name][:n], np.array(expected[name]), rtol=0, atol=1e-8,
                                   err_msg=name)
    assert abs(traj.sensors["acc"][:n]).max() > 1.0 and sim.na == 1


def test_trajectory_file_keeps_sensor_readings(tmp_path):
    model = mb.load_mjcf(MUSCLE_ARM)
    S = load_sensors(MUSCLE_ARM, model)
    sim = mb.Simulator(model, 0.002, q0=np.array([0.3]))
    traj = sim.rollout(steps=5, control=np.array([0.4, 0.1]), sensors=S)
    traj.save(tmp_path / "arm.npz")
    back = mb.Trajectory.load(tmp_path / "arm.npz", model)
    assert list(back.sensors) == list(traj.sensors) == list(S.names)
    for name in S.names:
        np.testing.assert_array_equal(back.sensors[name], traj.sensors[name])
    plain = sim.rollout(steps=2)
    plain.save(tmp_path / "plain.npz")
    assert mb.Trajectory.load(tmp_path / "plain.npz").sensors is None
    with pytest.raises(InputError, match="sensor 'acc'"):
        mb.Trajectory(t=traj.t, q=traj.q, v=traj.v, tau=traj.tau, kinetic=traj.kinetic, potential=traj.potential,
                      sensors={"acc": np.zeros((2, 3))})
    with pytest.raises(InputError, match="Sensors collection"):
        sim.rollout(steps=1, sensors=[JointPosition("elbow")])
