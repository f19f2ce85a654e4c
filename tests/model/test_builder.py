"""ModelBuilder: structure, fixed-joint merging, and clear errors for
malformed models (each names the offending element)."""
import numpy as np
import pytest

import multibody as mb
from multibody.errors import InputError, ModelError
from oracles import random_tree

I3 = np.eye(3) * 0.01


def test_structure_and_slices():
    b = mb.ModelBuilder("m")
    b.add_body("base", "world", "free", mass=2, inertia=I3)
    b.add_body("arm", "base", "revolute", axis=(1, 0, 0), joint_name="shoulder", mass=1, inertia=I3)
    b.add_body("ball", "arm", "spherical", mass=1, inertia=I3)
    model = b.build()
    assert (model.nq, model.nv, model.nbodies) == (12, 10, 4)
    assert model.body_names == ("world", "base", "arm", "ball")
    assert model.joint_names == ("universe", "base", "shoulder", "ball")
    j = model.joints[2]
    assert (j.type, j.parent, j.child, j.q_slice, j.v_slice) == ("revolute", 1, 2, slice(7, 8), slice(6, 7))
    assert model.joints[3].q_slice == slice(8, 12) and model.joints[3].v_slice == slice(7, 10)
    assert model.total_mass == 4.0
    with pytest.raises(ValueError):
        model.tree[1, 0] = 5.0  # immutable


def test_children_may_be_added_before_parents():
    b = mb.ModelBuilder()
    b.add_body("c", "b", "revolute", mass=1, inertia=I3)
    b.add_body("b", "a", "revolute", mass=1, inertia=I3)
    b.add_body("a", "world", "revolute", mass=1, inertia=I3)
    model = b.build()
    assert model.body_names == ("world", "a", "b", "c")
    assert list(model.parents) == [-1, 0, 1, 2]


def test_merging_fixed_joints_preserves_kinematics_and_inertia():
    """Merged (frames) and kept (0-DoF bodies) fixed joints give the same
    frame poses, centre of mass, energy and Jacobians."""
    b = random_tree(31, n=8, floating=True, fixed=4)
    merged, kept = b.build(), b.build(merge_fixed=False)
    assert merged.nbodies == kept.nbodies - 4 and merged.nv == kept.nv
    assert abs(merged.total_mass - kept.total_mass) < 1e-12
    q = merged.random_configuration(seed=0)
    v = np.random.default_rng(0).normal(size=merged.nv)
    for f in ("f0", "f1", "f2", "f3", "b5"):
        np.testing.assert_allclose(mb.frame_pose(merged, q, f), mb.frame_pose(kept, q, f), atol=1e-12)
        np.testing.assert_allclose(mb.jacobian(merged, q, f, "local"), mb.jacobian(kept, q, f, "local"),
                                   atol=1e-12)
    np.testing.assert_allclose(mb.center_of_mass(merged, q), mb.center_of_mass(kept, q), atol=1e-12)
    assert abs(mb.kinetic_energy(merged, q, v) - mb.kinetic_energy(kept, q, v)) < 1e-10
    assert merged.frames[merged.frame_id("f0")].kind == "fixed"


@pytest.mark.parametrize("kwargs, match", [
    (dict(mass=-1.0, inertia=I3), "body 'x'"),
    (dict(mass=0.0, inertia=I3), "body 'x'"),
    (dict(mass=1.0, inertia=np.diag([1.0, 1.0, 3.0])), "body 'x'"),            # triangle inequality
    (dict(mass=1.0, inertia=np.diag([1.0, -1.0, 1.0])), "body 'x'"),           # not positive definite
    (dict(mass=1.0, inertia=np.array([[1, 0.2, 0], [0, 1, 0], [0, 0, 1.0]])), "body 'x'"),  # not symmetric
    (dict(mass=np.nan, inertia=I3), "body 'x'"),
    (dict(joint="revolute", axis=(0, 0, 0), mass=1.0, inertia=I3), "joint 'x'.*zero"),
    (dict(joint="screwball", mass=1.0, inertia=I3), "unknown type 'screwball'"),
    (dict(joint="revolute", lower=1.0, upper=-1.0, mass=1.0, inertia=I3), "joint 'x'.*lower"),
    (dict(joint="revolute", damping=-1.0, mass=1.0, inertia=I3), "joint 'x'.*damping"),
])
def test_bad_bodies_are_rejected_with_their_name(kwargs, match):
    b = mb.ModelBuilder()
    with pytest.raises(ModelError, match=match):
        b.add_body("x", "world", **{"joint": "free", **kwargs})


def test_topology_errors():
    b = mb.ModelBuilder()
    b.add_body("a", "ghost", "revolute", mass=1, inertia=I3)
    with pytest.raises(ModelError, match="body 'a': parent 'ghost' does not exist"):
        b.build()
    b = mb.ModelBuilder()
    b.add_body("a", "b", "revolute", mass=1, inertia=I3)
    b.add_body("b", "a", "revolute", mass=1, inertia=I3)
    with pytest.raises(ModelError, match="cycle.*a, b"):
        b.build()
    b = mb.ModelBuilder()
    b.add_body("a", "world", "revolute", mass=1, inertia=I3)
    with pytest.raises(ModelError, match="duplicate body name 'a'"):
        b.add_body("a", "world", "revolute", mass=1, inertia=I3)
    with pytest.raises(ModelError, match="frame 'f': body 'nope' does not exist"):
        b.add_frame("f", "nope")
    b.add_coupling("a", "missing")
    with pytest.raises(ModelError, match="unknown joint 'missing'"):
        b.build()


def test_bad_placement_is_rejected():
    b = mb.ModelBuilder()
    with pytest.raises(ModelError, match="joint 'x': placement"):
        b.add_body("x", "world", "revolute", placement=(np.diag([1.0, 1.0, -1.0]), np.zeros(3)), mass=1,
                   inertia=I3)


def test_kinematics_input_errors_name_the_array():
    model = random_tree(32, n=4, floating=True).build()
    q = model.neutral()
    data = mb.Data(model)
    with pytest.raises(InputError, match=rf"q has shape \(3,\), expected \({model.nq},\)"):
        mb.forward_kinematics(model, np.zeros(3))
    bad = q.copy()
    bad[8] = np.nan
    for call in (lambda x: mb.forward_kinematics(model, x), lambda x: mb.forward_kinematics(model, x, data),
                 lambda x: mb.jacobian(model, x, "b1", data=data), lambda x: mb.center_of_mass(model, x)):
        with pytest.raises(InputError, match="non-finite entry at index 8"):
            call(bad)
    bad = q.copy()
    bad[3:7] = [1.0, 0.1, 0.0, 0.0]
    for call in (lambda x: mb.forward_kinematics(model, x), lambda x: mb.forward_kinematics(model, x, data),
                 lambda x: mb.jacobian(model, x, "b1", data=data)):
        with pytest.raises(InputError, match="quaternion of joint 'base'"):
            call(bad)
    with pytest.raises(InputError, match="v has shape"):
        mb.kinetic_energy(model, q, np.zeros(model.nv + 1))
    with pytest.raises(InputError, match="no frame 'nope'"):
        mb.jacobian(model, q, "nope")
    with pytest.raises(InputError, match="unknown reference frame 'body'"):
        mb.jacobian(model, q, "b1", "body")
