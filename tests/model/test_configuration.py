"""Configuration-space operations against Pinocchio's integrate /
difference, and their identities on every joint type."""
import numpy as np
import pinocchio as pin
import pytest

import multibody as mb
from oracles import Mapping, random_tree, to_pinocchio


@pytest.fixture(scope="module")
def pair():
    model = random_tree(21, n=16, floating=True).build()
    pm = to_pinocchio(model)
    return model, pm, Mapping(model, pm)


def test_integrate_and_difference_match_pinocchio(pair):
    model, pm, mp = pair
    rng = np.random.default_rng(0)
    for _ in range(10):
        qp = pin.randomConfiguration(pm, -np.ones(pm.nq), np.ones(pm.nq))
        vp = rng.normal(size=pm.nv)
        q, v = mp.q_from_pin(qp), mp.v_from_pin(vp)
        q1 = model.integrate(q, v, 0.7)
        q1p = pin.integrate(pm, qp, 0.7 * vp)
        # compare poses: Pinocchio's planar angle is stored as (cos, sin), so it wraps
        np.testing.assert_allclose(mb.forward_kinematics(model, mp.q_from_pin(q1p)),
                                   mb.forward_kinematics(model, q1), atol=1e-12)
        np.testing.assert_allclose(model.difference(q, q1), mp.v_from_pin(pin.difference(pm, qp, q1p)),
                                   atol=1e-9)


def test_difference_inverts_integrate_on_every_joint():
    model = random_tree(22, n=16, floating=True, pin_compatible=False).build()
    rng = np.random.default_rng(1)
    Q = model.random_configuration(seed=1, size=20)
    V = rng.normal(size=(20, model.nv))
    Q1 = model.integrate(Q, V, 0.5)
    np.testing.assert_allclose(model.difference(Q, Q1), 0.5 * V, atol=1e-9)
    np.testing.assert_allclose(model.integrate(Q, model.difference(Q, Q1)), Q1, atol=1e-12)
    np.testing.assert_allclose(model.difference(Q, Q), 0.0, atol=1e-12)


def test_random_configuration_respects_limits_and_unit_quaternions():
    b = mb.ModelBuilder()
    b.add_body("a", joint="revolute", lower=-0.3, upper=0.2, mass=1, inertia=np.eye(3) * 0.1)
    b.add_body("b", "a", "spherical", mass=1, inertia=np.eye(3) * 0.1)
    b.add_body("c", "b", "prismatic", lower=0.1, upper=0.4, mass=1, inertia=np.eye(3) * 0.1)
    model = b.build()
    Q = model.random_configuration(seed=3, size=500)
    assert np.all((Q[:, 0] >= -0.3) & (Q[:, 0] <= 0.2))
    assert np.all((Q[:, 5] >= 0.1) & (Q[:, 5] <= 0.4))
    np.testing.assert_allclose(np.linalg.norm(Q[:, 1:5], axis=1), 1.0, atol=1e-14)
    np.testing.assert_array_equal(model.random_configuration(seed=3), model.random_configuration(seed=3))
    q0 = model.neutral()
    np.testing.assert_array_equal(q0, [0.0, 1.0, 0.0, 0.0, 0.0, 0.1])  # prismatic clipped into [0.1, 0.4]


def test_normalize_restores_unit_quaternions():
    model = random_tree(23, n=6, floating=True).build()
    q = model.random_configuration(seed=4)
    bad = q.copy()
    bad[3:7] *= 1.3
    fixed = model.normalize(bad)
    np.testing.assert_allclose(fixed, q, atol=1e-15)
    np.testing.assert_allclose(model.normalize(np.array([bad, bad]))[1], q, atol=1e-15)


def test_integrate_keeps_quaternions_unit_over_many_steps():
    model = random_tree(24, n=8, floating=True).build()
    q = model.random_configuration(seed=5)
    v = np.random.default_rng(5).normal(size=model.nv) * 3
    for _ in range(2000):
        q = model.integrate(q, v, 0.01)
    for j in model.joints[1:]:
        if j.type in ("spherical", "free"):
            quat = q[j.q_slice][-4:]
            assert abs(np.linalg.norm(quat) - 1.0) < 1e-12


def test_qdot_is_the_derivative_of_integrate():
    model = random_tree(25, n=16, floating=True, pin_compatible=False).build()
    rng = np.random.default_rng(6)
    Q = model.random_configuration(seed=6, size=4)
    V = rng.normal(size=(4, model.nv))
    eps = 1e-6
    fd = (model.integrate(Q, V, eps) - model.integrate(Q, V, -eps)) / (2 * eps)
    np.testing.assert_allclose(model.qdot(Q, V), fd, atol=1e-8)
    np.testing.assert_allclose(model.qdot(Q[0], V[0]), fd[0], atol=1e-8)
