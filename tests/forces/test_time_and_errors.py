"""Time-dependent elements use t; bad arguments raise errors that name the
element."""
import numpy as np
import pytest

import multibody as mb
from multibody.errors import InputError, ModelError
from multibody.forces import (BodyDamping, ExternalWrench, FrameSpring, Gravity, JointCoulombFriction, JointDamper,
                              JointSpring, PointForce, PointToPointSpring, generalized_forces)

from .helpers import fd_jacobians, state, tree


@pytest.fixture(scope="module")
def model():
    return tree(91, True)


def test_time_dependent_wrench_uses_t(model):
    q, v = state(model, 1)
    fun = lambda t: np.array([0.0, np.sin(t), 0.0, 2.0 * t, 0.0, -1.0])  # noqa: E731
    for ref in ("world", "local"):
        e = ExternalWrench("b4", fun, ref)
        assert not e.conservative and e.potential_energy(model, q) == 0.0
        for t in (0.0, 0.5, 2.0):
            got = e.evaluate(model, q, v, t)[0]
            assert np.array_equal(got, ExternalWrench("b4", fun(t), ref).evaluate(model, q, v)[0])
        assert not np.allclose(e.evaluate(model, q, v, 0.5)[0], e.evaluate(model, q, v, 2.0)[0])
        tau, K, D = e.evaluate(model, q, v, 1.3, jacobians=True)
        Kf, Df = fd_jacobians(e, model, q, v, 1.3)
        assert np.abs(K - Kf).max() < 1e-6 * max(1, np.abs(Kf).max()) and not D.any()
    # magnitude of a point force as a function of time
    e = PointForce("b2", [0, 0, 0.1], [1, 0, 0], lambda t: 3.0 * t)
    assert np.allclose(e.evaluate(model, q, v, 2.0)[0], 2 * e.evaluate(model, q, v, 1.0)[0])
    # generalized_forces passes t on
    assert np.array_equal(generalized_forces([ExternalWrench("b4", fun)], model, q, v, 0.5)[0],
                          ExternalWrench("b4", fun).evaluate(model, q, v, 0.5)[0])


def test_constant_world_force_wrench_is_time_independent(model):
    q, v = state(model, 2)
    e = ExternalWrench("b3", [0, 0, 0, 1, 2, 3])
    assert e.conservative
    assert np.array_equal(e.evaluate(model, q, v, 0.0)[0], e.evaluate(model, q, v, 9.0)[0])


@pytest.mark.parametrize("make,match", [
    (lambda: JointSpring("j1", -1.0), "stiffness must be non-negative"),
    (lambda: JointSpring("j1", [1.0, np.nan]), "finite"),
    (lambda: JointDamper("j1", -0.1), "damping must be non-negative"),
    (lambda: JointCoulombFriction("j1", 1.0, v_eps=0.0), "v_eps must be positive"),
    (lambda: JointCoulombFriction("j1", -1.0), "friction must be non-negative"),
    (lambda: ExternalWrench("b1", [1, 2, 3]), "6 finite values"),
    (lambda: ExternalWrench("b1", np.zeros(6), reference="body"), "reference must be"),
    (lambda: PointForce("b1", [0, 0, 0], [0, 0, 0], 1.0), "direction has zero length"),
    (lambda: PointForce("b1", [0, 0], [0, 0, 1], 1.0), "point must be a finite 3-vector"),
    (lambda: BodyDamping("b1", -1.0), "linear damping must be non-negative"),
    (lambda: BodyDamping("b1", 1.0, [1, 2]), "angular damping must be a scalar or 3 values"),
    (lambda: PointToPointSpring("b1", [0, 0, 0], "b2", [0, 0, 0], -3.0), "stiffness must be non-negative"),
    (lambda: PointToPointSpring("b1", [0, 0, 0], "b2", [0, 0, 0], 3.0, rest_length=-1), "rest_length"),
    (lambda: PointToPointSpring("b1", [0, 0, 0], "b2", [0, 0, 0], 3.0, force_law="bogus"), "unknown force law"),
    (lambda: PointToPointSpring("b1", [0, 0, 0], "b2", [0, 0, 0], 3.0, force_law="strain"), "positive rest length"),
    (lambda: FrameSpring("b1", "b2", 1.0, -2.0), "rotational_stiffness must be non-negative"),
    (lambda: FrameSpring("b1", "b2", 1.0, 2.0, rest_pose=np.ones((3, 3))), "rest_pose"),
])
def test_bad_parameters(make, match):
    with pytest.raises(ModelError, match=match) as err:
        make()
    assert "(" in str(err.value).split(":")[0]  # the message starts with the element, e.g. JointSpring('j1')


@pytest.mark.parametrize("element,match", [
    (JointSpring("nope", 1.0), "no joint 'nope'"),
    (JointSpring("j0", [1.0, 2.0]), "stiffness must be a scalar or 1 values"),
    (JointSpring("j0", 1.0, rest=[0.0, 1.0]), "rest must be 1 finite values"),
    (JointSpring("j5", [1.0, 2.0, 3.0]), "must be isotropic"),
    (JointDamper(0, 1.0), "no velocity coordinates"),
    (ExternalWrench("nowhere", np.zeros(6)), "no frame 'nowhere'"),
    (PointToPointSpring("b1", [0, 0, 0], "missing", [0, 0, 0], 1.0), "no frame 'missing'"),
    (FrameSpring("b1", 99, 1.0), "no frame 99"),
])
def test_unknown_names_and_wrong_sizes(model, element, match):
    assert model.joints[model.joint_id("j5")].type == "spherical"
    q, v = state(model, 0)
    with pytest.raises(ModelError, match=match) as err:
        element.evaluate(model, q, v)
    assert repr(element) in str(err.value)


def test_bad_states_and_callables(model):
    q, v = state(model, 0)
    with pytest.raises(InputError, match="v has shape"):
        Gravity().evaluate(model, q, v[:-1])
    with pytest.raises(InputError, match="q has shape"):
        JointDamper("j0", 1.0).evaluate(model, q[:-1], v)
    bad_q = q.copy()
    bad_q[3:7] *= 2.0
    with pytest.raises(InputError, match="not unit norm"):
        ExternalWrench("b1", np.ones(6)).evaluate(model, bad_q, v)
    with pytest.raises(InputError, match=r"ExternalWrench\('b1'\).*returned shape"):
        ExternalWrench("b1", lambda t: np.ones(3)).evaluate(model, q, v, 1.0)
    with pytest.raises(InputError, match="force law returned"):
        PointToPointSpring("b1", [0, 0, 0], "b2", [0.1, 0, 0], force_law=lambda s, sd: s).evaluate(model, q, v)
    with pytest.raises(InputError, match="another model"):
        Gravity().evaluate(model, q, v, data=mb.Data(tree(92, False)))
    with pytest.raises(InputError, match="not a ForceElement"):
        generalized_forces([Gravity(), "spring"], model, q, v)


def test_named_elements_and_binding_per_model(model):
    e = JointSpring("j0", 2.0, name="knee spring")
    assert repr(e) == "knee spring"
    other = tree(93, True)
    q1, v1 = state(model, 1)
    q2, v2 = state(other, 1)
    # the same element object can serve two models (bindings are per model)
    t1 = e.evaluate(model, q1, v1)[0]
    t2 = e.evaluate(other, q2, v2)[0]
    assert t1.shape == (model.nv,) and t2.shape == (other.nv,)
