"""load_urdf's ``inertia=`` option: "warn" (default: keep non-physical
inertias as Pinocchio does, with a ModelWarning naming the link; repair only
moving bodies whose rotational inertia is singular or indefinite), "fix"
(MuJoCo's balanceinertia, checked against MuJoCo itself), "strict" (errors;
the error cases are in test_urdf_loader.BAD). Oracles: Pinocchio on the
same XML (kept values), MuJoCo's compiler (balanced values), closed forms
(the repair floor)."""
import re
import warnings

import numpy as np
import pinocchio as pin
import pytest

import multibody as mb
from multibody.errors import InputError, ModelError, ModelFileError, ModelWarning
from oracles import Mapping


def robot(*parts):
    return '<robot name="r">' + "".join(parts) + "</robot>"


def link(name, mass=None, inertia=None, com="0 0 0", rpy="0 0 0"):
    if mass is None:
        return f'<link name="{name}"/>'
    ixx, iyy, izz, ixy, ixz, iyz = inertia
    return (f'<link name="{name}"><inertial><origin xyz="{com}" rpy="{rpy}"/><mass value="{mass}"/>'
            f'<inertia ixx="{ixx}" iyy="{iyy}" izz="{izz}" ixy="{ixy}" ixz="{ixz}" iyz="{iyz}"/></inertial></link>')


def joint(name, parent, child, jtype="revolute", axis="0 1 0", xyz="0 0 0.3"):
    return (f'<joint name="{name}" type="{jtype}"><parent link="{parent}"/><child link="{child}"/>'
            f'<origin xyz="{xyz}"/><axis xyz="{axis}"/><limit lower="-2" upper="2" effort="1" velocity="1"/></joint>')


GOOD = (2.0, (0.02, 0.03, 0.04, 0.001, 0.0, 0.002))
TRIANGLE = (1.0, (0.01, 0.01, 0.05, 0.0, 0.0, 0.0))           # 0.01 + 0.01 < 0.05
FULL_TRIANGLE = (1.0, (0.01, 0.012, 0.05, 0.001, 0.0, 0.0))    # the same with a product of inertia


def load(text, **kw):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = mb.load_urdf(text, **kw)
    msgs = [str(w.message) for w in caught if issubclass(w.category, ModelWarning)]
    assert len(msgs) == len(caught), [str(w.message) for w in caught]
    return model, msgs


def assert_dynamics_match(model, pm, n=4, seed=0):
    """crba and aba against Pinocchio at random configurations (1e-10 relative)."""
    mp = Mapping(model, pm)
    pd = pm.createData()
    rng = np.random.default_rng(seed)
    for _ in range(n):
        qp = pin.randomConfiguration(pm, np.full(pm.nq, -2.0), np.full(pm.nq, 2.0))
        vp, taup = rng.normal(size=pm.nv), rng.normal(size=pm.nv)
        q, v, tau = mp.q_from_pin(qp), mp.v_from_pin(vp), mp.v_from_pin(taup)
        M = pin.crba(pm, pd, qp)
        M = np.triu(M) + np.triu(M, 1).T
        got = mp.v_to_pin_columns(mp.v_to_pin_columns(mb.crba(model, q)).T)
        np.testing.assert_allclose(got, M, rtol=0, atol=1e-10 * np.abs(M).max())
        a = pin.aba(pm, pd, qp, vp, taup)
        np.testing.assert_allclose(mp.v_to_pin_columns(mb.aba(model, q, v, tau)), a, rtol=0,
                                   atol=1e-10 * np.abs(a).max())


def two_links(b, extra=""):
    return robot(link("a", *GOOD), link("b", *b, com="0.1 0 0.2"), joint("j", "a", "b"), extra)


# ------------------------------------------------------------------ warn (default)
@pytest.mark.parametrize("floating", [False, True])
def test_warn_keeps_a_triangle_violation_as_pinocchio_does(floating):
    text = two_links(TRIANGLE)
    model, msgs = load(text, floating_base=floating)
    assert len(msgs) == 1 and re.search(r"kept as given.*link 'b' \(mass 1, principal moments \[0.01, 0.01, 0.05\]\)"
                                        r": the triangle inequality", msgs[0]), msgs
    b = model.body_names.index("b")
    np.testing.assert_allclose(model.body_inertia[b], np.diag([0.01, 0.01, 0.05]), rtol=1e-14, atol=0)  # as written
    pm = pin.buildModelFromXML(text, pin.JointModelFreeFlyer()) if floating else pin.buildModelFromXML(text)
    np.testing.assert_allclose(pm.inertias[pm.getJointId("j")].inertia, model.body_inertia[b], rtol=1e-14, atol=0)
    assert_dynamics_match(model, pm)


def test_warn_keeps_mass_zero_with_inertia_and_merges_it_like_pinocchio():
    """Bolt's feet: mass 0 with a rotational inertia on a fixed link; Pinocchio adds the inertia to
    the parent joint's body, and so does the merge."""
    text = robot(link("a", *GOOD), link("shin", *GOOD), link("foot", 0.0, (1e-3, 2e-3, 3e-3, 0, 0, 0), com="0 0 0.2"),
                 joint("knee", "a", "shin"), joint("ankle", "shin", "foot", "fixed"))
    model, msgs = load(text, floating_base=True)
    assert len(msgs) == 1 and "link 'foot' (mass 0," in msgs[0] and "mass 0 with a non-zero rotational" in msgs[0]
    pm = pin.buildModelFromXML(text, pin.JointModelFreeFlyer())
    Y = pm.inertias[pm.getJointId("knee")]
    i = model.body_names.index("shin")
    assert model.body_mass[i] == pytest.approx(Y.mass, abs=1e-15)
    np.testing.assert_allclose(model.body_com[i], Y.lever, atol=1e-15)
    np.testing.assert_allclose(model.body_inertia[i], Y.inertia, atol=1e-15)
    assert_dynamics_match(model, pm)


def test_warn_repairs_a_point_mass_on_a_moving_joint_minimally():
    """A point mass (zero rotational inertia) on a revolute joint: its rotational inertia is
    singular, so the smallest mass-free inertia is added that lifts the principal moments to
    max(1e-6 x largest, mass x (1 mm)^2) = 2e-6 kg m² here (closed form)."""
    text = two_links((2.0, (0, 0, 0, 0, 0, 0)))
    model, msgs = load(text)
    assert len(msgs) == 1 and re.search(r"repaired.*link 'b' \(moving joint 'j'\).*singular.*added a mass-free "
                                        r"inertia to link 'b' raising them to \[2e-06, 2e-06, 2e-06\]", msgs[0]), msgs
    b = model.body_names.index("b")
    np.testing.assert_allclose(model.body_inertia[b], 2e-6 * np.eye(3), rtol=1e-12, atol=0)
    assert model.body_mass[b] == 2.0
    np.testing.assert_array_equal(model.body_com[b], [0.1, 0.0, 0.2])
    pm = pin.buildModelFromXML(text)  # Pinocchio given the repaired values
    jid = pm.getJointId("j")
    pm.inertias[jid] = pin.Inertia(2.0, np.array([0.1, 0.0, 0.2]), 2e-6 * np.eye(3))
    assert_dynamics_match(model, pm)


def test_warn_repairs_an_indefinite_moving_body_along_its_negative_axis_only():
    """Principal moments (-0.01, 0.1, 0.1) on a moving body of 1 kg: only the negative one is
    raised, to max(1e-6 x 0.1, 1 kg x (1 mm)^2) = 1e-6, along its own axis; the others and the
    axes are kept (closed form)."""
    text = two_links((1.0, (-0.01, 0.1, 0.1, 0, 0, 0)))
    model, msgs = load(text)
    assert any("kept as given" in m and "link 'b'" in m and "not positive semi-definite" in m for m in msgs)
    assert any("repaired" in m and "indefinite" in m and "[1e-06, 0.1, 0.1]" in m for m in msgs), msgs
    b = model.body_names.index("b")
    np.testing.assert_allclose(model.body_inertia[b], np.diag([1e-6, 0.1, 0.1]), rtol=1e-12, atol=1e-18)


def test_a_body_made_positive_definite_by_its_fixed_links_is_not_repaired():
    """A thin rod on a moving joint with a fixed child carrying inertia across the rod: the
    composite is positive definite, so nothing changes (the dynamics can run)."""
    text = robot(link("a", *GOOD), link("rod", 1.0, (0.01, 0.01, 0.0, 0, 0, 0)), link("tip", *GOOD),
                 joint("j", "a", "rod"), joint("f", "rod", "tip", "fixed", xyz="0 0 0"))
    model, msgs = load(text)
    assert not any("repaired" in m for m in msgs)
    pm = pin.buildModelFromXML(text)
    i = model.body_names.index("rod")
    np.testing.assert_allclose(model.body_inertia[i], pm.inertias[pm.getJointId("j")].inertia, atol=1e-15)


def test_a_moving_subtree_without_mass_is_kept_and_named():
    """Romeo's fingers: a moving leaf with no <inertial>. Kept massless (as Pinocchio); the loader
    names it, and forward dynamics raise a SimulationError where Pinocchio returns NaN."""
    text = robot(link("a", *GOOD), link("finger"), joint("j", "a", "finger"))
    model, msgs = load(text, floating_base=True)
    assert len(msgs) == 1 and "no mass or inertia" in msgs[0] and "'finger' (joint 'j')" in msgs[0]
    pm = pin.buildModelFromXML(text, pin.JointModelFreeFlyer())
    q = model.neutral()
    assert not np.isfinite(pin.aba(pm, pm.createData(), pin.neutral(pm), np.zeros(pm.nv), np.ones(pm.nv))).all()
    with pytest.raises(mb.SimulationError, match="finger"):
        mb.aba(model, q, np.zeros(model.nv), np.ones(model.nv))


def test_model_warnings_can_be_turned_into_errors():
    with warnings.catch_warnings():
        warnings.simplefilter("error", ModelWarning)
        with pytest.raises(ModelWarning, match="link 'b'"):
            mb.load_urdf(two_links(TRIANGLE))


# ------------------------------------------------------------------ fix
def mujoco_balanced(mass, comps):
    """MuJoCo's compiled body inertia (principal moments) with balanceinertia="true" — the oracle."""
    mujoco = pytest.importorskip("mujoco")
    ixx, iyy, izz, ixy, ixz, iyz = comps
    xml = (f'<mujoco><compiler balanceinertia="true"/><worldbody><body><joint type="hinge"/>'
           f'<inertial pos="0 0 0" mass="{mass}" fullinertia="{ixx} {iyy} {izz} {ixy} {ixz} {iyz}"/>'
           f'</body></worldbody></mujoco>')
    return np.array(mujoco.MjModel.from_xml_string(xml).body_inertia[1])


@pytest.mark.parametrize("case", [TRIANGLE, FULL_TRIANGLE])
def test_fix_balances_like_mujoco(case):
    model, msgs = load(two_links(case), inertia="fix")
    b = model.body_names.index("b")
    want = mujoco_balanced(*case)
    assert np.ptp(want) == 0.0  # MuJoCo made it isotropic: the mean of the principal moments
    np.testing.assert_allclose(model.body_inertia[b], want[0] * np.eye(3), rtol=1e-12, atol=0)
    assert len(msgs) == 1 and "link 'b'" in msgs[0] and "balanceinertia" in msgs[0]


def test_fix_leaves_physical_inertias_alone_and_drops_massless_inertia():
    text = robot(link("a", *GOOD), link("b", *GOOD), link("foot", 0.0, (1e-3, 2e-3, 3e-3, 0, 0, 0)),
                 joint("j", "a", "b"), joint("f", "b", "foot", "fixed"))
    model, msgs = load(text, inertia="fix")
    pm = pin.buildModelFromXML(robot(link("a", *GOOD), link("b", *GOOD), joint("j", "a", "b")))
    i = model.body_names.index("b")
    np.testing.assert_allclose(model.body_inertia[i], pm.inertias[pm.getJointId("j")].inertia, atol=1e-15)
    assert len(msgs) == 1 and "link 'foot'" in msgs[0] and "inertia dropped" in msgs[0]


# ------------------------------------------------------------------ always errors
@pytest.mark.parametrize("mode", ["warn", "fix", "strict"])
@pytest.mark.parametrize("where, match", [
    ('<mass value="1"/><inertia ixx="1e308" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/>', "exceed 1e\\+100"),
    ('<mass value="1e308"/><inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/>', "exceed 1e\\+100"),
    ('<origin xyz="1e308 0 0"/><mass value="1e99"/><inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/>',
     "not finite"),
])
def test_huge_inertial_values_are_model_file_errors(mode, where, match):
    """A URDF inertia of 1e308 once escaped as numpy's LinAlgError; values whose products overflow
    the dynamics are refused with a ModelFileError naming the link."""
    text = robot(link("a", *GOOD), f'<link name="b"><inertial>{where}</inertial></link>', joint("j", "a", "b"))
    with pytest.raises(ModelFileError, match=f"(link|body) 'b'.*{match}"):
        mb.load_urdf(text, inertia=mode)


def test_unknown_inertia_mode_is_an_input_error():
    with pytest.raises(InputError, match="inertia='lenient' is not one of"):
        mb.load_urdf(two_links(GOOD), inertia="lenient")


def test_strict_mode_keeps_the_old_errors():
    with pytest.raises(ModelFileError, match="link 'b' <inertial>.*triangle inequality"):
        mb.load_urdf(two_links(TRIANGLE), inertia="strict")


# ------------------------------------------------------------------ the builder stays strict by default
def test_builder_is_strict_unless_told():
    b = mb.ModelBuilder()
    with pytest.raises(ModelError, match="triangle inequality"):
        b.add_body("x", "world", "revolute", mass=1.0, inertia=np.diag([0.01, 0.01, 0.05]))
    with pytest.raises(ModelError, match="mass must be finite and positive"):
        b.add_body("y", "world", "revolute", mass=0.0, inertia=np.diag([0.01, 0.01, 0.01]))
    b.add_body("x", "world", "revolute", mass=1.0, inertia=np.diag([0.01, 0.01, 0.05]), physical_inertia=False)
    b.add_body("y", "x", "revolute", mass=0.0, inertia=np.diag([0.01, 0.01, 0.01]), physical_inertia=False)
    with pytest.raises(ModelError, match="non-negative"):
        b.add_body("z", "y", "revolute", mass=-1.0, inertia=np.eye(3), physical_inertia=False)
    model = b.build()
    np.testing.assert_allclose(model.body_inertia[1], np.diag([0.01, 0.01, 0.05]), rtol=1e-14, atol=0)
