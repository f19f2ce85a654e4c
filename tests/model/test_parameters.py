"""Named model parameters (``Model.parameter_names``, ``parameters``,
``with_params``): a variant equals the model the ModelBuilder builds with
the changed values (arrays, the packed table, rnea / crba / aba), equals
Pinocchio with the same inertias on UR5, leaves the original unchanged,
pickles, and refuses bad values with an InputError naming the parameter."""
import pickle

import numpy as np
import pinocchio as pin
import pytest

import multibody as mb
from multibody.errors import InputError
from multibody.simulation.trajectory import model_fingerprint
from oracles import Mapping, pin_model, random_inertia, random_pose, robot_path

# (body, parent, joint type, extra builder keywords): every joint type with coordinates, a free base
TOPOLOGY = (("base", "world", "free", {}),
            ("b1", "base", "revolute", {"axis": (0.0, 0.6, 0.8)}),
            ("b2", "b1", "prismatic", {"axis": (1.0, 0.0, 0.0)}),
            ("b3", "b1", "spherical", {}),
            ("b4", "b3", "planar", {"axis": (0, 0, 1), "axis2": (1, 0, 0)}),
            ("b5", "b2", "cylindrical", {}),
            ("b6", "b5", "universal", {"axis": (1, 0, 0), "axis2": (0, 1, 0)}),
            ("b7", "b6", "helical", {"pitch": 0.05}),
            ("b8", "base", "translational", {}))
NQ = {"free": 7, "revolute": 1, "prismatic": 1, "spherical": 4, "planar": 3, "cylindrical": 2,
      "universal": 2, "helical": 1, "translational": 3}
NV = dict(NQ, free=6, spherical=3)
ARRAYS = ("body_mass", "body_com", "body_inertia", "lower_limit", "upper_limit", "velocity_limit",
          "effort_limit", "damping", "friction", "armature", "stiffness", "spring_reference", "gravity", "tree")


def spec(seed):
    """Builder keywords of every body of TOPOLOGY, with random physical
    values (joint name = "j_" + body name)."""
    rng = np.random.default_rng(seed)
    out = {}
    for body, parent, jt, kw in TOPOLOGY:
        m, c, I = random_inertia(rng)
        nq, nv = NQ[jt], NV[jt]
        d = dict(parent=parent, joint=jt, placement=random_pose(rng), joint_name="j_" + body, mass=m, com=c,
                 inertia=I, damping=rng.uniform(0, 1, nv), friction=rng.uniform(0, 1, nv),
                 armature=rng.uniform(0, 0.1, nv), stiffness=rng.uniform(0, 5, nv),
                 velocity_limit=rng.uniform(1, 5, nv), effort_limit=rng.uniform(10, 50, nv), **kw)
        if jt not in ("spherical", "free"):
            d["lower"], d["upper"] = -rng.uniform(0.5, 2, nq), rng.uniform(0.5, 2, nq)
            d["spring_reference"] = rng.uniform(-0.3, 0.3, nq)
        out[body] = d
    return out


def build(sp, gravity=(0.0, 0.0, -9.81)):
    b = mb.ModelBuilder("params", gravity=gravity)
    for body, kw in sp.items():
        kw = dict(kw)
        b.add_body(body, kw.pop("parent"), kw.pop("joint"), kw.pop("placement"), **kw)
    return b.build()


def states(model, n, seed):
    rng = np.random.default_rng(seed)
    for _ in range(n):
        yield (model.random_configuration(seed=rng), rng.normal(size=model.nv), rng.normal(size=model.nv),
               rng.normal(size=model.nv))


def assert_same_dynamics(a, b, n=4, rtol=1e-12):
    """rnea, crba and aba of models ``a`` and ``b`` agree at random states
    (relative to the magnitude of ``b``'s result)."""
    for q, v, acc, tau in states(a, n, seed=7):
        for got, expect in ((mb.rnea(a, q, v, acc), mb.rnea(b, q, v, acc)), (mb.crba(a, q), mb.crba(b, q)),
                            (mb.aba(a, q, v, tau), mb.aba(b, q, v, tau))):
            np.testing.assert_allclose(got, expect, rtol=0, atol=rtol * np.abs(expect).max())


def changes(seed):
    """A mapping of new values for parameters of every kind."""
    rng = np.random.default_rng(seed)
    out = {"gravity": np.array([0.3, -0.2, -1.62])}
    for body in ("base", "b1", "b3", "b6"):
        m, c, I = random_inertia(rng)
        out.update({f"{body}.mass": m, f"{body}.com": c, f"{body}.inertia": I})
    out["b7.mass"] = 4.5  # mass alone
    out["b8.com"] = np.array([0.1, 0.2, -0.3])  # centre of mass alone
    out["b4.inertia"] = np.array([0.02, 0.03, 0.04])  # principal moments
    out.update({"j_b1.damping": 0.7, "j_b1.armature": 0.05, "j_b1.lower": -0.4, "j_b1.upper": 0.9,
                "j_b1.stiffness": 3.0, "j_b1.spring_reference": 0.2, "j_b1.effort_limit": 12.0,
                "j_b1.velocity_limit": 2.5, "j_b1.friction": 0.3,
                "j_base.damping": np.arange(6) * 0.1, "j_base.armature": np.full(6, 0.01),
                "j_base.lower": [-1, -2, -3, 0, 0, 0, 0], "j_base.upper": [1, 2, 3, 0, 0, 0, 0],
                "j_base.spring_reference": [0.1, 0.2, 0.3, 0.5, 0.5, 0.5, 0.5],
                "j_b3.armature": [0.01, 0.02, 0.03], "j_b3.spring_reference": [0, 1, 0, 0],
                "j_b4.damping": 0.25,  # a scalar for the three coordinates of a planar joint
                "j_b5.lower": [-1.0, -0.1], "j_b5.upper": [1.0, 0.1],
                "j_b6.effort_limit": np.inf, "j_b7.armature": 0.2, "j_b8.stiffness": [1.0, 2.0, 3.0]})
    return out


def rebuilt(sp, mapping):
    """The model built by the ModelBuilder from ``sp`` with the values of
    ``mapping`` (parameter names are the builder's keyword names)."""
    sp = {k: dict(v) for k, v in sp.items()}
    gravity = (0.0, 0.0, -9.81)
    for name, value in mapping.items():
        if name == "gravity":
            gravity = value
            continue
        owner, p = name.rsplit(".", 1)
        sp[owner[2:] if owner.startswith("j_") else owner][p] = value
    return build(sp, gravity)


def test_names_and_values():
    sp = spec(0)
    model = build(sp)
    names = model.parameter_names
    assert isinstance(names, tuple) and len(set(names)) == len(names) and names[-1] == "gravity"
    for body in sp:
        assert {f"{body}.mass", f"{body}.com", f"{body}.inertia"} <= set(names)
    assert "world.mass" not in names
    assert "j_b3.lower" not in names and "j_b3.upper" not in names  # quaternion coordinates: no limits
    p = model.parameters()
    assert set(p) == set(names)
    assert p["b1.mass"] == sp["b1"]["mass"] and isinstance(p["b1.mass"], float)
    np.testing.assert_array_equal(p["b1.com"], sp["b1"]["com"])
    np.testing.assert_allclose(p["b1.inertia"], sp["b1"]["inertia"], rtol=0, atol=1e-15)
    assert isinstance(p["j_b1.damping"], float) and p["j_b1.damping"] == sp["b1"]["damping"][0]
    assert p["j_b1.lower"] == sp["b1"]["lower"][0] and p["j_b1.spring_reference"] == sp["b1"]["spring_reference"][0]
    np.testing.assert_array_equal(p["j_base.damping"], sp["base"]["damping"])
    assert p["j_base.lower"].shape == (7,) and np.all(np.isinf(p["j_base.lower"]))
    np.testing.assert_array_equal(p["j_base.spring_reference"], [0, 0, 0, 1, 0, 0, 0])
    np.testing.assert_array_equal(p["j_b5.effort_limit"], sp["b5"]["effort_limit"])
    np.testing.assert_array_equal(p["gravity"], [0, 0, -9.81])
    p["b1.com"][0] = 99.0  # the values are copies
    p["gravity"][2] = 0.0
    assert model.body_com[model.body_id("b1"), 0] != 99.0 and model.gravity[2] == -9.81


def test_with_params_equals_the_rebuilt_model():
    """Every kind of parameter changed at once gives the model the builder
    builds with those values: the same arrays (packed table included) and
    the same rnea, crba and aba."""
    sp = spec(1)
    model = build(sp)
    mapping = changes(2)
    got, expect = model.with_params(mapping), rebuilt(sp, mapping)
    for attr in ARRAYS:  # bitwise: the same values through the same functions (pack_inertias for the table)
        np.testing.assert_array_equal(getattr(got, attr), getattr(expect, attr), err_msg=attr)
    assert got.total_mass == pytest.approx(expect.total_mass, rel=1e-15)
    # nothing else differs: the same attributes, and the digest of everything the dynamics depend on
    assert set(got.__dict__) - {"_parameter_index", "_inertia_moments"} == set(expect.__dict__)
    assert model_fingerprint(got) == model_fingerprint(expect) != model_fingerprint(model)
    assert_same_dynamics(got, expect)
    # and the changed values read back
    p = got.parameters()
    assert p["b7.mass"] == 4.5 and p["j_b1.upper"] == 0.9 and p["j_b4.damping"].tolist() == [0.25] * 3
    np.testing.assert_array_equal(p["b4.inertia"], np.diag([0.02, 0.03, 0.04]))
    np.testing.assert_array_equal(p["j_base.lower"], [-1, -2, -3] + [-np.inf] * 4)  # as the builder does
    np.testing.assert_array_equal(p["gravity"], mapping["gravity"])


@pytest.mark.parametrize("name, value", [("b3.mass", 7.0), ("b6.com", (0.3, 0.0, -0.1)),
                                         ("b2.inertia", np.diag([0.1, 0.2, 0.25])), ("j_b6.armature", [0.3, 0.1]),
                                         ("gravity", (0.0, 9.81, 0.0)), ("j_b7.damping", 2.0)])
def test_one_parameter_equals_the_rebuilt_model(name, value):
    sp = spec(3)
    model = build(sp)
    got, expect = model.with_params({name: value}), rebuilt(sp, {name: value})
    for attr in ARRAYS:
        np.testing.assert_array_equal(getattr(got, attr), getattr(expect, attr), err_msg=attr)
    assert_same_dynamics(got, expect, n=2)


def test_the_original_is_unchanged_and_variants_are_independent():
    model = build(spec(4))
    before = {attr: np.array(getattr(model, attr)) for attr in ARRAYS}
    q, v, a, _ = next(states(model, 1, seed=0))
    tau0 = mb.rnea(model, q, v, a)
    heavy = model.with_params({"b1.mass": 50.0, "gravity": (0, 0, -20.0)})
    light = model.with_params({"b1.mass": 0.5})
    tau_heavy, tau_light = mb.rnea(heavy, q, v, a), mb.rnea(light, q, v, a)
    assert not np.allclose(tau_heavy, tau0) and not np.allclose(tau_light, tau0)
    np.testing.assert_array_equal(mb.rnea(model, q, v, a), tau0)  # the plain-call workspaces are per model
    np.testing.assert_array_equal(mb.rnea(heavy, q, v, a), tau_heavy)
    for attr in ARRAYS:
        np.testing.assert_array_equal(getattr(model, attr), before[attr], err_msg=attr)
    for m in (heavy, light):
        assert not m.tree.flags.writeable and not m.body_mass.flags.writeable and not m.gravity.flags.writeable
        assert m._tree is not model._tree
    assert light.gravity is model.gravity  # unchanged arrays are shared (read-only)
    with pytest.raises(InputError, match="another model"):  # a workspace of the original does not fit
        mb.rnea(heavy, q, v, a, data=mb.Data(model))
    # a variant of a variant
    back = heavy.with_params({"b1.mass": model.parameters()["b1.mass"], "gravity": model.gravity})
    for attr in ARRAYS:
        np.testing.assert_array_equal(getattr(back, attr), before[attr], err_msg=attr)


def test_gravity_closed_form():
    """A free body at rest falls with the new gravity: its body-frame
    acceleration is (0, Rᵀ g) at any orientation."""
    b = mb.ModelBuilder("ball")
    b.add_body("ball", "world", "free", mass=2.0, inertia=np.eye(3) * 0.01)
    model = b.build()
    g = np.array([0.5, -1.0, -1.62])
    moon = model.with_params({"gravity": g})
    q = model.random_configuration(seed=3)
    R = pin.Quaternion(*q[3:]).toRotationMatrix()  # Eigen's (w, x, y, z) constructor
    np.testing.assert_allclose(mb.aba(moon, q, np.zeros(6), np.zeros(6)), np.r_[0, 0, 0, R.T @ g], atol=1e-14)
    np.testing.assert_allclose(mb.aba(model, q, np.zeros(6), np.zeros(6)), np.r_[0, 0, 0, R.T @ [0, 0, -9.81]],
                               atol=1e-14)


def test_armature_and_inertia_closed_form():
    """A pendulum about z with its centre of mass at distance d:
    M = I_zz + m d² + armature (the parallel-axis theorem)."""
    b = mb.ModelBuilder("pendulum")
    b.add_body("rod", "world", "revolute", mass=1.0, com=(0.5, 0, 0), inertia=np.diag([0.01, 0.02, 0.03]))
    model = b.build()
    v = model.with_params({"rod.mass": 3.0, "rod.com": (0.0, 0.4, 0.7), "rod.inertia": np.diag([0.1, 0.2, 0.25]),
                           "rod.armature": 0.05})
    assert mb.crba(v, np.zeros(1))[0, 0] == pytest.approx(0.25 + 3.0 * 0.4 ** 2 + 0.05, rel=1e-14)


def test_ur5_against_pinocchio():
    """UR5 with every body's mass, centre of mass and inertia changed (and
    gravity, and armature): crba, rnea and aba equal Pinocchio's on its
    model given the same inertias (pm.inertias[j] = pin.Inertia(...))."""
    model = mb.load_urdf(robot_path("ur5"))
    pm = pin_model("ur5")
    rng = np.random.default_rng(5)
    mapping = {"gravity": np.array([0.4, 0.3, -9.0])}
    pm.gravity = pin.Motion(np.r_[mapping["gravity"], 0.0, 0.0, 0.0])
    for j in model.joints[1:]:
        m, c, I = random_inertia(rng)
        body = model.body_names[j.child]
        mapping.update({f"{body}.mass": m, f"{body}.com": c, f"{body}.inertia": I})
        pm.inertias[pm.getJointId(j.name)] = pin.Inertia(m, c, I)
        arm = rng.uniform(0.01, 0.1)
        mapping[f"{j.name}.armature"] = arm
        pm.armature[pm.joints[pm.getJointId(j.name)].idx_v] = arm
    varied = model.with_params(mapping)
    assert varied.total_mass == pytest.approx(sum(pm.inertias[i].mass for i in range(1, pm.njoints)), rel=1e-14)
    mp = Mapping(varied, pm)
    pd = pm.createData()
    rng = np.random.default_rng(6)
    for _ in range(5):
        qp = pin.randomConfiguration(pm)
        vp, ap, taup = rng.normal(size=(3, pm.nv))
        q, v, a, tau = mp.q_from_pin(qp), mp.v_from_pin(vp), mp.v_from_pin(ap), mp.v_from_pin(taup)
        for got, expect in ((mp.v_to_pin_columns(mb.rnea(varied, q, v, a)), pin.rnea(pm, pd, qp, vp, ap)),
                            (mp.v_to_pin_columns(mb.aba(varied, q, v, tau)), pin.aba(pm, pd, qp, vp, taup)),
                            (mb.crba(varied, q), np.triu(pin.crba(pm, pd, qp)) + np.triu(pd.M, 1).T)):
            np.testing.assert_allclose(got, expect, rtol=0, atol=1e-9 * np.abs(expect).max())
        # the original still matches Pinocchio's original, not the varied one
        assert not np.allclose(mb.rnea(model, q, v, a), mp.v_from_pin(pin.rnea(pm, pd, qp, vp, ap)))


def test_pickle_round_trip():
    model = build(spec(6))
    varied = model.with_params(changes(7))
    varied.parameter_names  # builds the cached index (not pickled)
    back = pickle.loads(pickle.dumps(varied))
    for attr in ARRAYS:
        np.testing.assert_array_equal(getattr(back, attr), getattr(varied, attr), err_msg=attr)
    assert back.parameter_names == varied.parameter_names
    assert_same_dynamics(back, varied, n=2, rtol=0.0)
    again = back.with_params({"b2.mass": 9.0})
    assert again.parameters()["b2.mass"] == 9.0 and back.parameters()["b2.mass"] != 9.0


@pytest.mark.parametrize("mapping, match", [
    ({"b1.mas": 2.0}, r"no parameter 'b1\.mas'.*'b1\.mass'"),
    ({"j_b1.effort": 2.0}, r"'j_b1\.effort_limit'"),
    ({"nobody.mass": 2.0}, r"no parameter 'nobody\.mass'"),
    ({3: 2.0}, "names are strings"),
    ({"j_b3.lower": 0.0}, r"no parameter 'j_b3\.lower'"),
    ({"b1.mass": -1.0}, r"'b1\.mass'.*mass must be finite and positive"),
    ({"b1.mass": 0.0}, r"'b1\.mass'.*positive"),  # mass 0 with an inertia
    ({"b1.mass": np.nan}, r"'b1\.mass'"),
    ({"b1.mass": "2"}, r"'b1\.mass'.*real number"),
    ({"b1.mass": None}, r"'b1\.mass'.*None"),
    ({"b1.com": (0.0, 1.0)}, r"'b1\.com'.*3-vector"),
    ({"b1.com": (0.0, np.inf, 0.0)}, r"'b1\.com'.*not finite"),
    ({"b1.inertia": np.diag([1.0, 1.0, 3.0])}, r"'b1\.inertia'.*triangle inequality"),
    ({"b1.inertia": np.diag([1.0, 1.0, -0.5])}, r"'b1\.inertia'.*positive definite"),
    ({"b1.inertia": [[1, 0.5, 0], [0, 1, 0], [0, 0, 1]]}, r"'b1\.inertia'.*not symmetric"),
    ({"b1.inertia": np.eye(2)}, r"'b1\.inertia'.*3x3"),
    ({"b1.inertia": np.full((3, 3), np.nan)}, r"'b1\.inertia'.*non-finite"),
    ({"b1.mass": 2.0, "b1.inertia": np.zeros((3, 3))}, r"'b1\.mass', 'b1\.inertia'.*positive definite"),
    ({"j_b1.lower": 1.0, "j_b1.upper": 0.5}, r"'j_b1\.lower', 'j_b1\.upper'.*exceeds"),
    ({"j_b1.lower": 5.0}, r"'j_b1\.lower'.*exceeds"),
    ({"j_b1.lower": np.nan}, r"'j_b1\.lower'.*NaN"),
    ({"j_b1.lower": np.inf}, r"'j_b1\.lower'.*excludes"),
    ({"j_b5.lower": [0.0, 0.0, 0.0]}, r"'j_b5\.lower'.*2 values"),
    ({"j_b1.damping": -0.1}, r"'j_b1\.damping'.*non-negative"),
    ({"j_b1.damping": np.inf}, r"'j_b1\.damping'.*finite"),
    ({"j_b5.damping": [0.1, -0.1]}, r"'j_b5\.damping'.*non-negative"),
    ({"j_b1.armature": -1.0}, r"'j_b1\.armature'.*non-negative"),
    ({"j_b1.friction": np.nan}, r"'j_b1\.friction'"),
    ({"j_b1.effort_limit": -5.0}, r"'j_b1\.effort_limit'.*non-negative"),
    ({"j_b1.velocity_limit": np.nan}, r"'j_b1\.velocity_limit'"),
    ({"j_b1.stiffness": -1.0}, r"'j_b1\.stiffness'.*non-negative"),
    ({"j_b1.spring_reference": np.inf}, r"'j_b1\.spring_reference'.*finite"),
    ({"j_b3.spring_reference": [1.0, 1.0, 0.0, 0.0]}, r"'j_b3\.spring_reference'.*not unit"),
    ({"j_b1.damping": "x"}, r"'j_b1\.damping'"),
    ({"j_b1.damping": True}, r"'j_b1\.damping'"),
    ({"gravity": (0.0, -9.81)}, r"'gravity'.*3-vector"),
    ({"gravity": (0.0, 0.0, np.nan)}, r"'gravity'.*finite"),
    ({"gravity": 1j}, r"'gravity'.*complex"),
])
def test_bad_values_name_the_parameter(mapping, match):
    model = build(spec(8))
    before = model.parameters()
    with pytest.raises(InputError, match=match):
        model.with_params(mapping)
    after = model.parameters()
    for name in before:  # nothing of the original changed
        np.testing.assert_array_equal(after[name], before[name])


def test_private_caches_are_not_inherited():
    """A variant keeps the Model's own private attributes (its structure)
    and drops any other private attribute (a cache derived from the values
    that a later layer might keep on the model)."""
    from multibody.model.parameters import _MODEL_PRIVATE
    model = build(spec(11))
    own = {k for k in model.__dict__ if k.startswith("_")}
    assert own <= _MODEL_PRIVATE, f"Model sets private attributes with_params does not know: {own - _MODEL_PRIVATE}"
    model._some_cache = "derived from the original's values"
    model.source = "kept"
    varied = model.with_params({"b1.mass": 2.0})
    assert not hasattr(varied, "_some_cache") and varied.source == "kept"


def test_not_a_mapping():
    model = build(spec(9))
    with pytest.raises(InputError, match="mapping"):
        model.with_params([("b1.mass", 2.0)])
    assert model.with_params({}).parameters().keys() == model.parameters().keys()


def test_massless_body_and_merged_links():
    """Mass 0 with a zero inertia is a massless body, as in the builder; on
    a loaded robot the inertial parameters are those of the body with the
    links merged into it by fixed joints (UR5's wrist_3_link holds ee_link)."""
    model = build(spec(10))
    light = model.with_params({"b7.mass": 0.0, "b7.inertia": np.zeros((3, 3))})
    assert light.parameters()["b7.mass"] == 0.0
    assert light.total_mass == pytest.approx(model.total_mass - model.parameters()["b7.mass"], rel=1e-14)
    ur5 = mb.load_urdf(robot_path("ur5"))
    assert "ee_link.mass" not in ur5.parameter_names and "wrist_3_link.mass" in ur5.parameter_names
    pm = pin_model("ur5")
    assert ur5.parameters()["wrist_3_link.mass"] == pytest.approx(pm.inertias[pm.getJointId("wrist_3_joint")].mass,
                                                                  rel=1e-14)
