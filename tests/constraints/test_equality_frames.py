"""MJCF connect / weld equalities whose body is welded to its parent (no
joint): the loader merges such a body into its parent as a frame, and the
equality must act on the host body at that frame's placement. Oracle:
MuJoCo simulating the same file with a stiff equality (solref 0.5 ms,
solimp 0.9999, contacts off, RK4) — the setting of test_against_mujoco.py."""
import numpy as np
import pytest

import multibody as mb
from multibody.constraints import Constraints
from multibody.errors import ModelError
from oracles import mujoco_stiff_trajectory

mujoco = pytest.importorskip("mujoco")

# the shipped four-bar, with the loop closed at a body "tip" welded (rotated,
# offset) to the coupler instead of at the coupler itself
FOUR_BAR_TIP = """<mujoco model="four_bar_tip">
  <compiler angle="radian"/>
  <worldbody>
    <body name="crank" euler="0 -1.0 0">
      <joint name="crank" type="hinge" axis="0 1 0"/>
      <geom type="capsule" fromto="0 0 0 0.4 0 0" size="0.01" mass="1"/>
      <body name="coupler" pos="0.4 0 0" euler="0 0.6771068525 0">
        <joint name="coupler" type="hinge" axis="0 1 0"/>
        <geom type="capsule" fromto="0 0 0 1.2 0 0" size="0.01" mass="1"/>
        <body name="tip" pos="1.1 0 0" euler="0.3 0.2 0.1">
          <geom type="sphere" size="0.05" mass="0.3"/>
        </body>
      </body>
    </body>
    <body name="rocker" pos="1 0 0" euler="0 -1.1122632476 0">
      <joint name="rocker" type="hinge" axis="0 1 0"/>
      <geom type="capsule" fromto="0 0 0 0.8 0 0" size="0.01" mass="1"/>
    </body>
  </worldbody>
  <equality>
    <connect name="closure" body1="tip" body2="rocker" anchor="0.0985 0.0199 0.0099"/>
  </equality>
</mujoco>"""

# a free box held by a weld equality to "hand", a body welded to a swinging arm
WELDED_BOX = """<mujoco model="welded_box">
  <worldbody>
    <body name="arm" pos="0 0 1">
      <joint name="swing" type="hinge" axis="0.2 1 0.1"/>
      <geom type="capsule" fromto="0 0 0 0 0 -0.8" size="0.02" mass="1"/>
      <body name="hand" pos="0.05 0 -0.8" euler="20 -10 35">
        <geom type="box" size="0.05 0.03 0.02" mass="0.2"/>
      </body>
    </body>
    <body name="box" pos="0.5 0.1 0.5" euler="0 90 0">
      <freejoint name="float"/>
      <geom type="box" size="0.1 0.05 0.03" mass="0.5"/>
    </body>
  </worldbody>
  <equality>
    <weld name="hold" body1="box" body2="hand"/>
  </equality>
</mujoco>"""


def test_connect_to_a_welded_body_matches_mujoco():
    model = mb.load_mjcf(FOUR_BAR_TIP)
    assert "tip" not in model.body_names and model.frames[model.frame_id("tip")].kind == "fixed"
    dt, steps, every = 1e-4, 3000, 500
    ref = mujoco_stiff_trajectory(FOUR_BAR_TIP, dt, steps, every)
    traj = mb.Simulator(model, dt, "rk4", contact_solver=None).rollout(steps=steps, record_every=every)
    assert np.abs(traj.q[1:] - ref).max() < 1e-6
    assert np.abs(traj.q[-1] - traj.q[0]).max() > 0.5   # the mechanism moved


def test_weld_to_a_welded_body_matches_mujoco():
    model = mb.load_mjcf(WELDED_BOX)
    assert "hand" not in model.body_names
    dt, steps, every = 1e-4, 3000, 500
    ref = mujoco_stiff_trajectory(WELDED_BOX, dt, steps, every)
    sim = mb.Simulator(model, dt, "rk4", contact_solver=None)
    # MuJoCo starts at qpos0, where the free box sits at its compiled pose (model.neutral() has it at the origin)
    sim.reset(q=mujoco.MjModel.from_xml_string(WELDED_BOX).qpos0)
    traj = sim.rollout(steps=steps, record_every=every)
    assert np.abs(traj.q[1:] - ref).max() < 1e-6
    assert np.abs(traj.q[-1] - traj.q[0]).max() > 0.1   # it swung


def test_rows_on_a_frame_equal_rows_on_its_host_body():
    # identity: the loop joint written on the frame "tip" gives the same φ, G, k
    # as the one written on its host "coupler" with the frame's placement composed
    model = mb.load_mjcf(FOUR_BAR_TIP)
    eq = model.equalities[0]
    f = model.frames[model.frame_id("tip")]
    Pa = np.eye(4)
    Pa[:3, 3] = eq.data[:3]
    Pb = np.eye(4)
    Pb[:3, 3] = eq.data[3:6]
    host = mb.model.LoopJoint("explicit", model.body_names[f.body], "rocker", "spherical", f.placement @ Pa, Pb,
                              np.array([0, 0, 1.0]), np.array([0, 1.0, 0]))
    on_frame = Constraints(model)
    on_host = Constraints(model, extra=[host], equalities=False)
    rng = np.random.default_rng(3)
    for _ in range(3):
        q, v = rng.uniform(-1, 1, model.nq), rng.uniform(-1, 1, model.nv)
        for a, b in zip(on_frame.evaluate(q, v), on_host.evaluate(q, v)):
            np.testing.assert_array_equal(a, b)


def test_unknown_body_or_frame_is_named():
    model = mb.load_mjcf(FOUR_BAR_TIP)
    bad = mb.model.LoopJoint("bad", "nowhere", "rocker", "spherical", np.eye(4), np.eye(4),
                             np.array([0, 0, 1.0]), np.array([0, 1.0, 0]))
    with pytest.raises(ModelError, match="loop joint 'bad' references unknown body or frame 'nowhere'"):
        Constraints(model, extra=[bad])


# a weld and a connect written between sites placed so that they coincide at qpos0
SITES = """<mujoco model="sites">
  <worldbody>
    <body name="arm" pos="0 0 1">
      <joint name="swing" type="hinge" axis="0.2 1 0.1"/>
      <geom type="capsule" fromto="0 0 0 0 0 -0.8" size="0.02" mass="1"/>
      <site name="grip" pos="0.05 0 -0.8" euler="20 -10 35"/>
      <body name="hand" pos="0 0 -0.8"><site name="eye" pos="0.1 0.1 0"/></body>
    </body>
    <body name="box" pos="0.05 0 0.2" euler="20 -10 35">
      <freejoint name="float"/>
      <geom type="box" size="0.1 0.05 0.03" mass="0.5"/>
      <site name="handle"/>
    </body>
    <body name="bob" pos="0.1 0.1 0.2">
      <freejoint name="bob"/>
      <geom type="sphere" size="0.05" mass="0.2" pos="0.1 0 0"/>
      <site name="hook"/>
    </body>
  </worldbody>
  <equality>
    <weld name="hold" site1="handle" site2="grip"/>
    <connect name="hang" site1="hook" site2="eye"/>
  </equality>
</mujoco>"""


def test_site_equalities_match_mujoco():
    xml = SITES
    mm = mujoco.MjModel.from_xml_string(xml)
    d = mujoco.MjData(mm)
    mujoco.mj_forward(mm, d)
    eq_rows = d.efc_type[:d.nefc] == mujoco.mjtConstraint.mjCNSTR_EQUALITY
    assert eq_rows.sum() == 9 and np.abs(d.efc_pos[:d.nefc][eq_rows]).max() < 1e-12  # sites coincide at qpos0
    model = mb.load_mjcf(xml)
    dt, steps, every = 1e-4, 3000, 500
    ref = mujoco_stiff_trajectory(xml, dt, steps, every)
    sim = mb.Simulator(model, dt, "rk4", contact_solver=None)
    sim.reset(q=mm.qpos0)
    traj = sim.rollout(steps=steps, record_every=every)
    assert np.abs(traj.q[1:] - ref).max() < 1e-6
    assert np.abs(traj.q[-1] - traj.q[0]).max() > 0.1
