"""load_mjcf: the ``inertia=`` option (MuJoCo's ``balanceinertia``),
non-finite numbers refused naming the element, joint springs and motor
effort limits checked against MuJoCo's own forces, and the one warning
naming what is not converted."""
import warnings

import numpy as np
import pytest

import multibody as mb
from multibody.errors import InputError, ModelFileError, ModelWarning
from multibody.forces.joint import joint_spring_elements
from multibody.io import load_mjcf

mujoco = pytest.importorskip("mujoco")


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path, monkeypatch):
    # MuJoCo writes MUJOCO_LOG.TXT into the working directory when it warns (NaN in the XML)
    monkeypatch.chdir(tmp_path)


def loaded(xml, **kw):
    """(model, [ModelWarning messages]) of load_mjcf(xml)."""
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        model = load_mjcf(xml, **kw)
    return model, [str(x.message) for x in w if issubclass(x.category, ModelWarning)]


# --------------------------------------------------------------------------
# inertia= : MuJoCo's balanceinertia
# --------------------------------------------------------------------------

BAD_INERTIA = """<mujoco model="bad_inertia"{compiler}><worldbody>
  <body name="good" pos="0 0 1"><joint name="j0" axis="0 1 0"/><geom size="0.1" mass="1"/>
    <body name="lopsided" pos="0 0 -0.5">
      <joint name="j1" axis="1 0 0"/>
      <inertial pos="0.01 0.02 0.03" mass="2" {inertia}/>
    </body>
  </body></worldbody></mujoco>"""


def bad(inertia='diaginertia="0.1 0.1 0.5"', balance=None):
    compiler = f'><compiler balanceinertia="{balance}"/' if balance is not None else ""
    return BAD_INERTIA.format(compiler=compiler, inertia=inertia).replace('"><compiler', '"><compiler')


def fix_xml(xml):
    """The same model with balanceinertia written in the file: MuJoCo's repair, the oracle."""
    return xml.replace("<worldbody>", '<compiler balanceinertia="true"/><worldbody>', 1)


@pytest.mark.parametrize("inertia", ['diaginertia="0.1 0.1 0.5"',
                                     'fullinertia="0.3 0.2 0.05 0.01 0.02 -0.01"'])
def test_warn_balances_like_mujoco_and_names_the_body(inertia):
    xml = BAD_INERTIA.format(compiler="", inertia=inertia)
    with pytest.raises(ValueError, match="balanceinertia"):  # MuJoCo refuses it as written
        mujoco.MjModel.from_xml_string(xml)
    model, w = loaded(xml)
    assert len(w) == 1 and "body 'lopsided'" in w[0] and "balanceinertia" in w[0], w
    ref = mujoco.MjModel.from_xml_string(fix_xml(xml))
    i = model.body_id("lopsided")
    R = np.array(ref.body_iquat[2])
    Rm = np.empty(9)
    mujoco.mju_quat2Mat(Rm, R)
    Rm = Rm.reshape(3, 3)
    np.testing.assert_allclose(model.body_inertia[i], Rm @ np.diag(ref.body_inertia[2]) @ Rm.T, rtol=0, atol=1e-15)
    assert model.body_mass[i] == ref.body_mass[2] == 2.0
    # and the joint-space inertia is MuJoCo's (balanced model)
    d = mujoco.MjData(ref)
    d.qpos[:] = (0.3, -0.7)
    mujoco.mj_forward(ref, d)
    M = np.zeros((2, 2))
    mujoco.mj_fullM(ref, d, M)  # MuJoCo 4 signature (m, d, dst)
    np.testing.assert_allclose(mb.crba(model, np.array([0.3, -0.7])), M, rtol=1e-12, atol=1e-14)
    # fix: the same values, no warning
    fixed, w = loaded(xml, inertia="fix")
    assert w == []
    np.testing.assert_array_equal(fixed.body_inertia, model.body_inertia)


def test_strict_refuses_even_if_the_file_balances():
    xml = BAD_INERTIA.format(compiler="", inertia='diaginertia="0.1 0.1 0.5"')
    with pytest.raises(ModelFileError, match=r"MJCF string: MuJoCo could not compile it: .*A \+ B >= C.*"
                                             r"Element name 'lopsided'.*inertia='fix'"):
        load_mjcf(xml, inertia="strict")
    with pytest.raises(ModelFileError, match="A \\+ B >= C"):
        load_mjcf(fix_xml(xml), inertia="strict")
    # the file's own balanceinertia is honoured by "warn" (MuJoCo repairs as asked; nothing to warn about)
    model, w = loaded(fix_xml(xml))
    assert w == [] and np.allclose(np.linalg.eigvalsh(model.body_inertia[model.body_id("lopsided")]), 0.7 / 3)


def test_valid_inertia_is_untouched_in_every_mode():
    xml = BAD_INERTIA.format(compiler="", inertia='diaginertia="0.1 0.2 0.25"')
    models = [loaded(xml, inertia=mode) for mode in ("warn", "strict", "fix")]
    assert all(w == [] for _, w in models)
    ref = mujoco.MjModel.from_xml_string(xml)
    for model, _ in models:
        np.testing.assert_allclose(np.linalg.eigvalsh(model.body_inertia[model.body_id("lopsided")]),
                                   np.sort(ref.body_inertia[2]), rtol=1e-14)


def test_inertia_option_with_a_spec_leaves_the_spec_alone():
    spec = mujoco.MjSpec.from_string(BAD_INERTIA.format(compiler="", inertia='diaginertia="0.1 0.1 0.5"'))
    _, w = loaded(spec)
    assert len(w) == 1 and "'lopsided'" in w[0]
    assert spec.compiler.balanceinertia is False or spec.compiler.balanceinertia == 0
    with pytest.raises(ModelFileError, match="MjSpec: MuJoCo could not compile it"):
        load_mjcf(spec, inertia="strict")


def test_singular_moving_body_is_mujocos_error_in_every_mode():
    xml = BAD_INERTIA.format(compiler="", inertia='diaginertia="0 0 0"')
    for mode in ("warn", "strict", "fix"):
        with pytest.raises(ModelFileError, match="mjMINVAL"):
            load_mjcf(xml, inertia=mode)


def test_unknown_inertia_mode():
    with pytest.raises(InputError, match="inertia must be one of 'warn', 'strict', 'fix', got 'lenient'"):
        load_mjcf("<mujoco/>", inertia="lenient")


# --------------------------------------------------------------------------
# non-finite numbers
# --------------------------------------------------------------------------

TEMPLATE = """<mujoco><option gravity="{grav}"/><worldbody>
<body name="a" pos="{bpos}">
  <joint name="h" type="hinge" axis="{axis}" range="{rng}" damping="{damp}" stiffness="{stiff}"
         springref="{sref}" armature="{arm}" frictionloss="{fl}"/>
  <geom name="g" type="box" size="0.1 0.1 0.1" mass="1"/><site name="s" pos="{spos}"/>
  <body name="b" pos="0 0 -1"><joint name="k" type="slide"/><geom size=".1" mass="{mass}"/></body>
</body></worldbody>
<equality><connect name="e" body1="b" body2="a" anchor="{anchor}"/></equality>
<actuator><motor name="mo" joint="h" gear="{gear}" ctrlrange="{ctrl}" ctrllimited="true"/></actuator></mujoco>"""
FINE = dict(grav="0 0 -9.81", bpos="0 0 0", axis="0 1 0", rng="-1 1", damp="0", stiff="0", sref="0", arm="0",
            fl="0", spos="0 0 0", mass="1", anchor="0 0 0", gear="1", ctrl="-1 1")
NAMED = {"grav": "option gravity", "bpos": "body 'a': pos", "axis": "joint 'h': axis", "rng": "joint 'h': range",
         "damp": "joint 'h': damping", "stiff": "joint 'h': stiffness", "sref": "joint 'h': springref",
         "arm": "joint 'h': armature", "fl": "joint 'h': frictionloss", "spos": "site 's': pos",
         "mass": "body 'b': mass", "anchor": "equality 'e' (connect): data", "gear": "actuator 'mo': gear",
         "ctrl": "actuator 'mo': ctrlrange"}


def test_template_loads():
    model, w = loaded(TEMPLATE.format(**FINE))
    assert model.nq == 2 and w == []


@pytest.mark.parametrize("key", sorted(NAMED))
@pytest.mark.parametrize("bad", ["nan", "-inf"])
def test_non_finite_numbers_are_refused_naming_the_element(key, bad):
    kw = dict(FINE)
    kw[key] = " ".join([bad] + FINE[key].split()[1:])
    xml = TEMPLATE.format(**kw)
    try:
        compiled = mujoco.MjModel.from_xml_string(xml)
    except ValueError:
        compiled = None
    if key == "mass" and bad == "nan":
        # MjSpec's NaN means "not given": MuJoCo computes the geom's mass from its density (and
        # prints its NaN warning); multibody takes MuJoCo's compiled, finite mass
        model, _ = loaded(xml)
        assert model.body_mass[model.body_id("b")] == compiled.body_mass[2] == pytest.approx(1000 * 4 / 3 * np.pi / 1e3)
        return
    with pytest.raises(ModelFileError) as e:
        load_mjcf(xml)
    msg = str(e.value)
    if compiled is not None and key != "mass":
        # MuJoCo compiled it: multibody's own check names the element
        assert f"MJCF string: {NAMED[key]} is not finite" in msg, msg
    else:  # MuJoCo refused it (geom mass: -inf is refused, a NaN mass falls back to the density)
        assert "MJCF string:" in msg


def test_nan_range_of_an_unlimited_joint_is_refused():
    # MuJoCo's autolimits leaves range="nan 1" unlimited; before, neutral() came back NaN for limited="true"
    for extra in ("", ' limited="true"'):
        xml = f'<mujoco><worldbody><body><joint name="h" range="nan 1"{extra}/><geom size=".1"/></body></worldbody></mujoco>'
        with pytest.raises(ModelFileError, match=r"joint 'h': range is not finite: \[nan, "):
            load_mjcf(xml)


# --------------------------------------------------------------------------
# joint springs, motor effort limits, the warning for what is dropped
# --------------------------------------------------------------------------

SPRINGS = """<mujoco model="springs"><worldbody>
  <body name="a" pos="0 0 2" euler="10 20 30">
    <joint name="h" type="hinge" axis="0.3 1 0" stiffness="3" springref="20" pos="0 0 0.1"/>
    <geom size=".1" mass="1"/>
    <body name="c" pos="0 0 -1">
      <joint name="s" type="slide" axis="1 0 1" stiffness="5" springref="0.1" ref="0.05"/>
      <geom size=".1" mass="1"/>
      <body name="d" pos="0 0 -1" quat="0.9 0.1 0.3 0.2">
        <joint name="b" type="ball" stiffness="2" pos="0 0 .1"/><geom size=".1" mass="1"/>
      </body>
    </body>
  </body>
  <body name="f" pos="1 2 3" euler="30 -20 50"><freejoint name="fr"/><geom size=".1" mass="1"/></body>
  <body name="g" pos="-1 0 1"><joint name="plain" axis="1 0 0"/><geom size=".1" mass="1"/></body>
</worldbody></mujoco>"""


def test_joint_springs_equal_mujocos_spring_forces():
    spec = mujoco.MjSpec.from_string(SPRINGS)
    spec.joints[3].stiffness = [7.0, 0.0, 0.0]  # linear term only; the free joint (freejoint takes no stiffness attribute)
    mm = spec.compile()
    model, w = loaded(spec)
    assert w == []
    np.testing.assert_array_equal(model.spring_reference, mm.qpos_spring)
    springs = joint_spring_elements(model)
    assert sorted(s.joint for s in springs) == ["b", "fr", "h", "s"]
    d = mujoco.MjData(mm)
    rng = np.random.default_rng(7)
    for _ in range(4):
        d.qpos[:] = mm.qpos_spring + rng.normal(scale=0.4, size=mm.nq)
        for adr in (mm.jnt_qposadr[2], mm.jnt_qposadr[3] + 3):  # ball and free quaternions
            d.qpos[adr:adr + 4] /= np.linalg.norm(d.qpos[adr:adr + 4])
        d.qvel[:] = 0
        mujoco.mj_forward(mm, d)
        q = d.qpos.copy()
        tau = sum(s.evaluate(model, q, np.zeros(model.nv))[0] for s in springs)
        # MuJoCo's free-joint dofs are (linear in the world, angular in the body); multibody's (ω, v_body)
        R = d.xmat[mm.jnt_bodyid[3]].reshape(3, 3)
        v0 = mm.jnt_dofadr[3]
        ref = d.qfrc_spring.copy()
        ref[v0:v0 + 6] = np.r_[ref[v0 + 3:v0 + 6], R.T @ ref[v0:v0 + 3]]
        np.testing.assert_allclose(tau, ref, rtol=1e-12, atol=1e-12)
        assert np.abs(ref).max() > 0.5


MOTORS = """<mujoco><worldbody>
  <body name="a"><joint name="h1" axis="0 1 0"/><geom size=".1" mass="1"/>
    <body name="b" pos="0 0 -1"><joint name="h2" axis="0 1 0" actuatorfrclimited="true" actuatorfrcrange="-4 5"/>
      <geom size=".1" mass="1"/>
      <body name="c" pos="0 0 -1"><joint name="s3" type="slide"/><geom size=".1" mass="1"/>
        <body name="e" pos="0 0 -1"><joint name="h4"/><geom size=".1" mass="1"/></body>
      </body>
    </body>
  </body></worldbody>
  <actuator>
    <motor name="m1" joint="h1" gear="2" ctrlrange="-1 3"/>
    <motor name="m2" joint="h2" gear="-3" ctrlrange="-1 1"/>
    <motor name="m3a" joint="s3" gear="1.5" ctrlrange="-2 2" forcerange="-1 1"/>
    <general name="m3b" joint="s3" gear="1" gainprm="4" ctrlrange="-0.5 0.25"/>
    <motor name="m4" joint="h4" gear="10"/>
    <position name="servo" joint="h1" kp="50"/>
    <velocity name="damper" joint="h2" kv="3"/>
  </actuator></mujoco>"""


def test_motor_effort_limits_are_mujocos_largest_actuator_force():
    model, w = loaded(MOTORS)
    mm = mujoco.MjModel.from_xml_string(MOTORS)
    d = mujoco.MjData(mm)
    motors = [mm.actuator(n).id for n in ("m1", "m2", "m3a", "m3b")]
    # oracle: MuJoCo's qfrc_actuator at every corner of the motors' control ranges
    largest = np.zeros(mm.nv)
    for corner in np.array(np.meshgrid(*[[0, 1]] * len(motors))).T.reshape(-1, len(motors)):
        d.ctrl[:] = 0
        for a, c in zip(motors, corner):
            d.ctrl[a] = mm.actuator_ctrlrange[a, c]
        mujoco.mj_forward(mm, d)
        largest = np.maximum(largest, np.abs(d.qfrc_actuator))
    expected = largest.copy()
    expected[3] = np.inf  # h4's motor has no ctrlrange: unlimited
    np.testing.assert_allclose(model.effort_limit, expected, rtol=1e-15)
    # h1: |2|·3; h2: |-3|·1 = 3 under actuatorfrcrange 5; s3: 1.5·min(2, 1) + 1·4·0.5
    np.testing.assert_allclose(model.effort_limit[:3], (6.0, 3.0, 3.5), rtol=1e-15)
    # the position and velocity actuators are loaded as actuators (docs/actuators.md), not dropped
    assert w == []
    assert [a.name for a in model.actuators] == ["m1", "m2", "m3a", "m3b", "m4", "servo", "damper"]


def test_one_warning_names_everything_dropped():
    xml = """<mujoco><option density="1.2"/><worldbody>
      <body name="a"><joint name="h" stiffness="3 1 2"/><geom name="ga" size=".1" mass="1"/><site pos="0 0 0"/>
        <body name="b" pos="0 0 -1" gravcomp="1"><joint name="k" type="ball" range="0 30"/><geom name="gb" size=".1"/></body>
      </body>
      <body name="target" mocap="true"/></worldbody>
      <tendon><fixed name="t1"><joint joint="h" coef="1"/></fixed><fixed name="t2"><joint joint="h" coef="2"/></fixed></tendon>
      <contact><pair geom1="ga" geom2="gb"/><exclude body1="a" body2="b"/></contact>
      <equality><joint name="off" joint1="h" active="false"/></equality>
      <actuator><position name="p" joint="h"/><motor name="m" tendon="t1"/></actuator>
      <sensor><jointpos name="enc" joint="h"/><framepos objtype="body" objname="a"/></sensor>
      <keyframe><key name="home" qpos="0 1 0 0 0"/></keyframe></mujoco>"""
    model, w = loaded(xml)
    assert len(w) == 1, w
    # contact pairs and excludes are converted (model.collision_pairs, model.excluded_link_pairs), not dropped
    assert "contact" not in w[0]
    assert [(p.geom1, p.geom2) for p in model.collision_pairs] == [("ga", "gb")]
    assert model.excluded_link_pairs == (("a", "b"),)
    # actuators and tendons are loaded (model.actuators, model.tendons); sensors are read by load_sensors
    assert "actuator" not in w[0] and "tendon" not in w[0]
    assert [a.name for a in model.actuators] == ["p", "m"] and [t.name for t in model.tendons] == ["t1", "t2"]
    for part in ("2 sensor(s) ('enc', 'sensor1'; multibody.load_sensors reads them)", "1 keyframe(s) ('home')",
                 "1 inactive equality constraint(s) ('off')", "the cone limit of 1 ball joint(s) ('k')",
                 "1 mocap bod(ies) ('target'", "gravity compensation of 1 bod(ies) ('b')",
                 "fluid forces (option density)", "1 unnamed site(s)",
                 "the nonlinear spring/damper terms (stiffness and damping polynomials, spring yield) of 1 joint(s) "
                 "('h'; their linear stiffness and damping are kept)"):
        assert part in w[0], (part, w[0])
    # a model using only what is converted loads silently
    _, w = loaded(TEMPLATE.format(**FINE))
    assert w == []


def test_welded_point_masses_that_mujoco_accepts_load():
    # bodies without joints may carry a point mass (zero moments) or moments without mass: MuJoCo
    # accepts both; they merge into their parent (or stay fixed bodies) with MuJoCo's values
    import os
    import sys
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from test_mjcf_loader import compare_with_mujoco
    xml = """<mujoco model="points"><worldbody>
      <body name="a" pos="0 0 1"><joint name="j" axis="0 1 0"/><geom size=".1" mass="1"/>
        <body name="point" pos="0.3 0 -0.2"><inertial pos="0.1 0 0" mass="0.5" diaginertia="0 0 0"/></body>
        <body name="spinner" pos="0 0.2 0"><inertial pos="0 0 0" mass="0" diaginertia="0.01 0.02 0.02"/></body>
        <body name="b" pos="0 0 -1"><joint name="k" axis="1 0 0"/><geom size=".1" mass="1"/></body>
      </body></worldbody></mujoco>"""
    mm = mujoco.MjModel.from_xml_string(xml)
    for merge in (True, False):
        model, w = loaded(xml, merge_fixed=merge)
        assert w == [] and ("point" in model.body_names) is not merge
        compare_with_mujoco(mm, model)


def test_spring_model_simulates_like_mujoco():
    # hinge + slide + ball with springs and damping, no gravity, contacts off: MuJoCo's RK4 against
    # multibody's RK4 with the loaded springs passed as forces (damping is applied by the simulator)
    xml = """<mujoco model="springy"><option gravity="0 0 0"/><worldbody>
      <body name="a" euler="10 0 20"><joint name="h" axis="0 1 0.3" stiffness="4" springref="30" damping="0.2"/>
        <geom type="capsule" fromto="0 0 0 0.5 0 0" size="0.03" mass="1"/>
        <body name="c" pos="0.5 0 0"><joint name="s" type="slide" axis="1 0 0" stiffness="30" springref="0.1" damping="0.5"/>
          <geom size=".05" mass="0.4"/>
          <body name="d" pos="0.1 0 0"><joint name="b" type="ball" stiffness="0.8" damping="0.01"/>
            <geom type="box" size=".1 .02 .03" pos="0.1 0 0" mass="0.3"/></body></body></body>
      </worldbody></mujoco>"""
    mm = mujoco.MjModel.from_xml_string(xml)
    mm.opt.timestep = 1e-4
    mm.opt.integrator = mujoco.mjtIntegrator.mjINT_RK4
    mm.opt.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_CONTACT)
    d = mujoco.MjData(mm)
    steps, every = 5000, 1000
    ref = []
    for k in range(steps):
        mujoco.mj_step(mm, d)
        if (k + 1) % every == 0:
            ref.append(d.qpos.copy())
    model, w = loaded(xml)
    assert w == []
    sim = mb.Simulator(model, 1e-4, "rk4")  # the model's springs are applied by default (joint_springs=True)
    sim.reset(q=mm.qpos0)
    traj = sim.rollout(steps=steps, record_every=every)
    assert np.abs(traj.q[1:] - np.array(ref)).max() < 1e-8
    assert np.abs(traj.q[-1] - traj.q[0]).max() > 0.05   # the springs moved it (springref != qpos0)
