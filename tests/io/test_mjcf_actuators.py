"""MJCF actuators and tendons (issue 15) against MuJoCo itself.

The same file in MuJoCo (contacts off; limits off in both) under one
random control sequence: qpos, qvel and act of our ``semi_implicit_euler``
equal MuJoCo's Euler (``eulerdamp`` disabled: MuJoCo's Euler otherwise
integrates joint damping implicitly, which no integrator here does) and
our ``rk4`` MuJoCo's RK4, to 1e-8 — for a motor with gear and ctrlrange, a
position servo (also with a time constant), a velocity servo, an
integrated-velocity servo and a filter with actearly, a filter actuator, an actuator on
a fixed tendon, muscles on a joint and on a spatial tendon, and passive
tendon springs and dampers. Then the loader's records, its warning and
its errors.
"""
import warnings

import numpy as np
import pytest

import multibody as mb
from multibody.errors import ModelFileError, ModelWarning

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

JOINTS_ONLY = f"""<mujoco model="actuated">
<option timestep="0.002"><flag contact="disable" eulerdamp="disable"/></option>
{BODIES}
<tendon>
  <fixed name="coupler">
    <joint joint="shoulder" coef="1"/><joint joint="rail" coef="-0.5"/>
  </fixed>
</tendon>
<actuator>
  <motor name="motor" joint="shoulder" gear="3" ctrlrange="-1 1"/>
  <position name="position" joint="elbow" kp="15" kv="0.5"/>
  <velocity name="velocity" joint="rail" kv="4"/>
  <general name="filter" joint="elbow" dyntype="filter" dynprm="0.03" gainprm="2" ctrlrange="-2 2"/>
  <general name="tendon" tendon="coupler" gear="1.5" gaintype="affine" gainprm="1 0.5 0.1" biastype="affine"
           biasprm="0 -3 -0.2" forcerange="-4 4"/>
  <position name="smooth" joint="rail" kp="30" timeconst="0.02"/>
  <general name="integrator" joint="shoulder" dyntype="integrator" gainprm="8" biastype="affine" biasprm="0 -8 0"
           actrange="-0.5 0.5" actearly="true"/>
  <muscle name="biceps" joint="elbow" lengthrange="-1.5 1.5" force="30"/>
  <general name="early" joint="rail" dyntype="filter" dynprm="0.04" gainprm="3" actearly="true"/>
</actuator>
</mujoco>"""

# the same with passive tendon forces: a spring with a dead band and a damper on the fixed tendon
PASSIVE = JOINTS_ONLY.replace('<fixed name="coupler">',
                              '<fixed name="coupler" stiffness="4" springlength="0.05 0.15" damping="0.2">')

SPATIAL = f"""<mujoco model="muscled">
<option timestep="0.002"><flag contact="disable" eulerdamp="disable"/></option>
{BODIES}
<tendon>
  <spatial name="path" damping="0.3" stiffness="10" springlength="0.6 0.7">
    <site site="anchor"/><site site="s1"/><site site="s2"/>
  </spatial>
</tendon>
<actuator>
  <muscle name="flexor" tendon="path" force="40" lengthrange="0.4 1.1"/>
  <position name="servo" joint="rail" kp="10" kv="1"/>
</actuator>
</mujoco>"""


def mujoco_run(xml, integrator, controls, q0, v0):
    m = mujoco.MjModel.from_xml_string(xml)
    m.opt.integrator = integrator
    d = mujoco.MjData(m)
    d.qpos[:], d.qvel[:] = q0, v0
    out = []
    for u in controls:
        d.ctrl[:] = u
        mujoco.mj_step(m, d)
        out.append((d.qpos.copy(), d.qvel.copy(), d.act.copy(), d.actuator_force.copy()))
    return [np.array(x) for x in zip(*out)]


def controls(nu, steps, seed=1):
    rng = np.random.default_rng(seed)
    U = rng.uniform(-1.5, 1.5, size=(steps, nu))
    return np.repeat(U[::10], 10, axis=0)[:steps]  # held for 10 steps, as a controller at 50 Hz would


@pytest.mark.parametrize("xml", [JOINTS_ONLY, PASSIVE, SPATIAL],
                         ids=["joints_and_fixed_tendon", "tendon_spring", "spatial_tendon"])
@pytest.mark.parametrize("ours, theirs", [("semi_implicit_euler", "mjINT_EULER"), ("rk4", "mjINT_RK4")])
def test_trajectories_equal_mujocos(xml, ours, theirs):
    model = mb.load_mjcf(xml)
    steps = 400
    U = controls(len(model.actuators), steps)
    q0, v0 = np.array([0.3, -0.4, 0.1]), np.array([0.5, -1.0, 0.2])
    Q, V, A, F = mujoco_run(xml, getattr(mujoco.mjtIntegrator, theirs), U, q0, v0)
    sim = mb.Simulator(model, 0.002, ours, limits=False, contact_solver=None, q0=q0, v0=v0)
    assert sim.nu == len(model.actuators)
    traj = sim.rollout(steps=steps, control=U)
    assert np.abs(traj.q[1:] - Q).max() < 1e-8
    assert np.abs(traj.v[1:] - V).max() < 1e-8
    assert np.abs(traj.activation[1:] - A).max() < 1e-8
    assert np.abs(traj.q[-1] - q0).max() > 0.1  # it moved
    if ours == "semi_implicit_euler":  # MuJoCo's actuator_force after mj_step is the step's (RK4's: its last stage's)
        assert np.abs(traj.actuator_force[1:] - F).max() < 1e-7
    # the fused compiled step where every transmission is linear and nothing else is in Python
    assert (sim.fused is not None and not sim.fused.external) == (xml is JOINTS_ONLY)


def test_the_loader_records_actuators_and_tendons():
    model = mb.load_mjcf(JOINTS_ONLY)
    specs = {a.name: a for a in model.actuators}
    assert list(specs) == ["motor", "position", "velocity", "filter", "tendon", "smooth", "integrator", "biceps",
                           "early"]
    assert specs["motor"].gear == 3.0 and specs["motor"].ctrlrange == (-1.0, 1.0)
    assert specs["position"].biastype == "affine" and specs["position"].biasprm[:3] == (0.0, -15.0, -0.5)
    assert specs["smooth"].dyntype == "filterexact" and specs["integrator"].actearly
    assert specs["tendon"].transmission == "tendon" and specs["tendon"].forcerange == (-4.0, 4.0)
    assert specs["biceps"].lengthrange == (-1.5, 1.5) and specs["biceps"].gainprm[2] == 30.0
    (coupler,) = model.tendons
    assert coupler.kind == "fixed" and coupler.joints == (("shoulder", 1.0), ("rail", -0.5))
    (coupler,) = mb.load_mjcf(PASSIVE).tendons
    assert (coupler.stiffness, coupler.damping, coupler.spring_length) == (4.0, 0.2, (0.05, 0.15))
    assert model.effort_limit[0] == 3.0  # the motor's effort limit, as before
    path = mb.load_mjcf(SPATIAL).tendons[0]
    assert path.kind == "spatial" and [p[0] for p in path.points] == ["world", "upper", "lower"]
    # a simulator drives the file's actuators unless told otherwise
    assert mb.Simulator(model, 1e-3, contact_solver=None).actuator_names == tuple(specs)
    assert mb.Simulator(model, 1e-3, contact_solver=None, actuators=()).nu == 0


def test_automatic_muscle_force_is_mujocos():
    """A muscle without force: MuJoCo's scale / acc0, resolved at load."""
    xml = JOINTS_ONLY.replace('force="30"', "")
    m = mujoco.MjModel.from_xml_string(xml)
    spec = mb.load_mjcf(xml).actuators[-2]
    assert spec.gainprm[2] == pytest.approx(200.0 / m.actuator_acc0[-2], rel=1e-15)


def test_the_warning_names_only_what_is_not_loaded():
    xml = JOINTS_ONLY.replace("</actuator>", """<motor name="onsite" site="s1" gear="0 0 0 0 1 0"/></actuator>
        <sensor><jointpos joint="elbow" name="enc"/></sensor>""").replace(
        '<fixed name="coupler"', '<fixed name="limited" range="-1 1"><joint joint="elbow" coef="1"/></fixed>'
        '<fixed name="coupler"')
    with pytest.warns(ModelWarning) as record:
        model = mb.load_mjcf(xml)
    (message,) = [str(w.message) for w in record if "not converted" in str(w.message)]
    assert "onsite (its transmission)" in message and "length limits of 1 tendon(s) ('limited')" in message
    assert "'enc'" in message and "load_sensors" in message
    for loaded in ("'motor'", "'position'", "'coupler'", "'biceps'"):
        assert loaded not in message
    assert len(model.actuators) == 9
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mb.load_mjcf(JOINTS_ONLY)  # everything in it is loaded: no warning


@pytest.mark.parametrize("bad, match", [
    ('<motor name="m" joint="nope"/>', "unknown transmission target 'nope' for actuator"),
    ('<motor name="m" joint="elbow" ctrlrange="1 -1"/>', r"actuator 'm': ctrlrange \(1, -1\) has low > high"),
    ('<general name="m" joint="elbow" gainprm="nan"/>', r"actuator 'm': gainprm is not finite"),
    ('<motor name="m" joint="elbow" forcerange="2 -2"/>', r"actuator 'm': forcerange \(2, -2\) has low > high"),
])
def test_bad_actuators_are_errors_naming_them(bad, match):
    xml = f"<mujoco>{BODIES}<actuator>{bad}</actuator></mujoco>"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # MuJoCo's own warning about the NaN
        with pytest.raises(ModelFileError, match=match):
            mb.load_mjcf(xml)
