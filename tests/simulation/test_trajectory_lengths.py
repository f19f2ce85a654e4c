"""Trajectories record the actuators' transmission lengths and rates
(``actuator_length``, ``actuator_velocity``: a muscle's tendon is rigid,
so its fiber length follows from this length) — checked against MuJoCo's
``actuator_length`` / ``actuator_velocity`` (mj_forward at every recorded
state) for joint, fixed-tendon and spatial-tendon transmissions; saved,
loaded, pickled and carried by batch members."""
import pickle
import warnings

import numpy as np
import pytest

import multibody as mb

mujoco = pytest.importorskip("mujoco")

BODIES = """
<worldbody>
  <site name="anchor" pos="0.2 0 0.1"/>
  <body name="upper">
    <joint name="shoulder" axis="0 1 0" damping="0.3"/>
    <geom type="capsule" fromto="0 0 0 0 0 -0.5" size="0.04" mass="1.2"/>
    <site name="s1" pos="0.05 0 -0.2"/>
    <body name="lower" pos="0 0 -0.5">
      <joint name="elbow" axis="0 1 0" damping="0.1"/>
      <geom type="capsule" fromto="0 0 0 0 0 -0.4" size="0.035" mass="0.8"/>
      <site name="s2" pos="0.04 0 -0.15"/>
    </body>
  </body>
  <body name="cart" pos="0 0.5 0">
    <joint name="rail" type="slide" axis="1 0 0" damping="0.2"/>
    <geom type="box" size="0.1 0.05 0.05" mass="2"/>
  </body>
</worldbody>
"""

# joint and fixed-tendon transmissions with gears (a joint muscle among them)
JOINTS = f"""<mujoco model="joints">
<option timestep="0.002"><flag contact="disable"/></option>
{BODIES}
<tendon>
  <fixed name="coupler"><joint joint="shoulder" coef="1"/><joint joint="rail" coef="-0.5"/></fixed>
</tendon>
<actuator>
  <motor name="motor" joint="shoulder" gear="3"/>
  <general name="tendon" tendon="coupler" gear="1.5"/>
  <muscle name="biceps" joint="elbow" gear="0.04" lengthrange="-0.1 0.1" force="30"/>
</actuator>
</mujoco>"""

# a muscle on a spatial tendon through three sites
SPATIAL = f"""<mujoco model="muscled">
<option timestep="0.002"><flag contact="disable"/></option>
{BODIES}
<tendon>
  <spatial name="path"><site site="anchor"/><site site="s1"/><site site="s2"/></spatial>
</tendon>
<actuator>
  <muscle name="flexor" tendon="path" force="40" lengthrange="0.4 1.1"/>
  <position name="servo" joint="rail" kp="10" kv="1"/>
</actuator>
</mujoco>"""


def run(xml, steps=150, every=1):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = mb.load_mjcf(xml)
    sim = mb.Simulator(model, 0.002, "semi_implicit_euler", limits=False, contact_solver=None,
                       q0=[0.3, -0.4, 0.1], v0=[0.5, -1.0, 0.2])
    rng = np.random.default_rng(3)
    U = np.repeat(rng.uniform(0, 1, size=(steps // 10 + 1, sim.nu)), 10, axis=0)[:steps]
    return sim, sim.rollout(steps=steps, control=U, record_every=every)


@pytest.mark.parametrize("xml", [JOINTS, SPATIAL], ids=["joints_and_fixed_tendon", "spatial_tendon"])
def test_recorded_lengths_are_mujocos(xml):
    sim, traj = run(xml, every=3)
    m = mujoco.MjModel.from_xml_string(xml)
    d = mujoco.MjData(m)
    assert traj.actuator_length.shape == traj.actuator_velocity.shape == (len(traj.t), sim.nu)
    for k in range(len(traj.t)):
        d.qpos[:], d.qvel[:] = traj.q[k], traj.v[k]
        mujoco.mj_forward(m, d)
        assert np.abs(traj.actuator_length[k] - d.actuator_length).max() < 1e-12
        assert np.abs(traj.actuator_velocity[k] - d.actuator_velocity).max() < 1e-12
    assert np.ptp(traj.actuator_length, axis=0).min() > 1e-3           # every length changed
    # the simulator's actuator_lengths at the last state is the last row
    L, Ld = sim.actuator_lengths()
    np.testing.assert_array_equal(L, traj.actuator_length[-1])
    np.testing.assert_array_equal(Ld, traj.actuator_velocity[-1])


def test_lengths_are_saved_loaded_pickled_and_in_batch_members(tmp_path):
    sim, traj = run(JOINTS, steps=40)
    back = pickle.loads(pickle.dumps(traj))
    np.testing.assert_array_equal(back.actuator_length, traj.actuator_length)
    traj.save(tmp_path / "arm.npz")
    loaded = mb.Trajectory.load(tmp_path / "arm.npz")
    np.testing.assert_array_equal(loaded.actuator_length, traj.actuator_length)
    np.testing.assert_array_equal(loaded.actuator_velocity, traj.actuator_velocity)
    # a file written before the lengths were recorded: NaN (not recorded), not zeros
    with np.load(tmp_path / "arm.npz") as z:
        members = {k: z[k] for k in z.files if k not in ("actuator_length", "actuator_velocity")}
    np.savez(tmp_path / "old.npz", **members)
    old = mb.Trajectory.load(tmp_path / "old.npz")
    assert old.actuator_length.shape == (41, 3) and np.isnan(old.actuator_length).all()
    # batch members: their own lengths
    sim.reset(q=[0.3, -0.4, 0.1])
    batch = sim.rollout_batch(q0=[[0.3, -0.4, 0.1], [0.1, 0.2, -0.3]], steps=20)
    for b in range(2):
        member = batch[b]
        for k in (0, 20):
            np.testing.assert_array_equal(member.actuator_length[k], sim.actuator_lengths(member.q[k], member.v[k])[0])
    # no actuators: (N, 0)
    model = mb.load_mjcf(JOINTS.replace("<actuator>", "<!--").replace("</actuator>", "-->"))
    plain = mb.Simulator(model, 0.002, contact_solver=None, limits=False).rollout(steps=3)
    assert plain.actuator_length.shape == (4, 0)
