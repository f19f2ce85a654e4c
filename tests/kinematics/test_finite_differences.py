"""Every Jacobian against finite differences taken on the configuration
manifold with ``model.integrate`` (central differences, step 1e-6), on
random trees with every joint type, including planar joints with a
general normal (which Pinocchio cannot represent)."""
import numpy as np
import pytest

import multibody as mb
from multibody.spatial import se3
from oracles import random_tree

EPS = 1e-6


@pytest.fixture(scope="module", params=[(11, True), (12, False)], ids=["floating", "fixed"])
def model(request):
    seed, floating = request.param
    return random_tree(seed, n=10, floating=floating, pin_compatible=False, fixed=2).build()


def _log_local(T0, T1):
    """Body twist ξ with T1 = T0 exp(ξ) (angular first)."""
    return se3.log(np.linalg.inv(T0) @ T1)


def test_frame_jacobian_local_matches_finite_differences(model):
    for q in model.random_configuration(seed=1, size=3):
        for frame in ("b3", "b9", "f0", "f1"):
            J = mb.jacobian(model, q, frame, "local")
            for k in range(model.nv):
                dv = np.zeros(model.nv)
                dv[k] = 1.0
                Tp = mb.frame_pose(model, model.integrate(q, dv, EPS), frame)
                Tm = mb.frame_pose(model, model.integrate(q, dv, -EPS), frame)
                fd = _log_local(Tm, Tp) / (2 * EPS)
                np.testing.assert_allclose(J[:, k], fd, atol=1e-7)


def test_jacobian_references_are_consistent_with_local(model):
    q = model.random_configuration(seed=2)
    v = np.random.default_rng(2).normal(size=model.nv)
    T = mb.frame_pose(model, q, "b7")
    R, p = T[:3, :3], T[:3, 3]
    local = mb.jacobian(model, q, "b7", "local") @ v
    world = mb.jacobian(model, q, "b7", "world") @ v
    lwa = mb.jacobian(model, q, "b7", "local_world_aligned") @ v
    np.testing.assert_allclose(lwa, np.r_[R @ local[:3], R @ local[3:]], atol=1e-12)
    np.testing.assert_allclose(world, np.r_[lwa[:3], lwa[3:] + np.cross(p, lwa[:3])], atol=1e-12)
    np.testing.assert_allclose(mb.frame_velocity(model, q, v, "b7", "world"), world, atol=1e-12)


def test_point_jacobian_matches_finite_differences(model):
    q = model.random_configuration(seed=3)
    point = np.array([0.1, -0.2, 0.3])
    J = mb.jacobian(model, q, "b5", "local_world_aligned", point=point)
    v = np.random.default_rng(3).normal(size=model.nv)

    def x(t):
        T = mb.frame_pose(model, model.integrate(q, v, t), "b5")
        return T[:3, :3] @ point + T[:3, 3]
    np.testing.assert_allclose(J[3:] @ v, (x(EPS) - x(-EPS)) / (2 * EPS), atol=1e-7)


def test_com_jacobian_and_velocity_match_finite_differences(model):
    q = model.random_configuration(seed=4)
    v = np.random.default_rng(4).normal(size=model.nv)
    fd = (mb.center_of_mass(model, model.integrate(q, v, EPS))
          - mb.center_of_mass(model, model.integrate(q, v, -EPS))) / (2 * EPS)
    np.testing.assert_allclose(mb.com_jacobian(model, q) @ v, fd, atol=1e-7)
    np.testing.assert_allclose(mb.center_of_mass(model, q, v)[1], fd, atol=1e-7)


def test_jdot_v_matches_finite_differences(model):
    """Along q(t) = q ⊕ v t the velocity v is constant (q̈ = 0), so
    d/dt [J(q(t)) v] = J̇ v."""
    q = model.random_configuration(seed=5)
    v = np.random.default_rng(5).normal(size=model.nv)
    for ref in ("local", "world", "local_world_aligned"):
        Jp = mb.jacobian(model, model.integrate(q, v, EPS), "b8", ref)
        Jm = mb.jacobian(model, model.integrate(q, v, -EPS), "b8", ref)
        np.testing.assert_allclose(mb.jacobian_dot_v(model, q, v, "b8", ref), (Jp - Jm) @ v / (2 * EPS),
                                   atol=1e-6)


def test_energy_and_momentum_identities(model):
    """½vᵀ(Σ JᵢᵀIᵢJᵢ)v is the kinetic energy, the centroidal momentum
    matrix maps v to the centroidal momentum, and the linear momentum is
    M·vcom."""
    q = model.random_configuration(seed=6)
    v = np.random.default_rng(6).normal(size=model.nv)
    T = 0.0
    for i in range(1, model.nbodies):
        J = mb.jacobian(model, q, model.body_names[i], "local")
        m, c, Ic = model.body_mass[i], model.body_com[i], model.body_inertia[i]
        C = np.array([[0, -c[2], c[1]], [c[2], 0, -c[0]], [-c[1], c[0], 0]])
        I6 = np.block([[Ic - m * C @ C, m * C], [-m * C, m * np.eye(3)]])
        T += 0.5 * v @ J.T @ I6 @ J @ v
    assert abs(mb.kinetic_energy(model, q, v) - T) < 1e-10 * (1 + T)
    h = mb.centroidal_momentum(model, q, v)
    np.testing.assert_allclose(mb.centroidal_momentum_matrix(model, q) @ v, h, atol=1e-10)
    np.testing.assert_allclose(h[3:], model.total_mass * mb.center_of_mass(model, q, v)[1], atol=1e-10)


def test_potential_energy_gradient_is_gravity_force(model):
    """dV/dt along q ⊕ vt equals −M gᵀ vcom."""
    q = model.random_configuration(seed=7)
    v = np.random.default_rng(7).normal(size=model.nv)
    fd = (mb.potential_energy(model, model.integrate(q, v, EPS))
          - mb.potential_energy(model, model.integrate(q, v, -EPS))) / (2 * EPS)
    vcom = mb.center_of_mass(model, q, v)[1]
    assert abs(fd + model.total_mass * model.gravity @ vcom) < 1e-6


def test_body_motion_world_and_local_agree_with_frame_velocity(model):
    q = model.random_configuration(seed=8)
    v = np.random.default_rng(8).normal(size=model.nv)
    a = np.random.default_rng(9).normal(size=model.nv)
    vel_l, acc_l = (x.copy() for x in mb.body_motion(model, q, v, a))
    vel_w, acc_w = mb.body_motion(model, q, v, a, reference="world")
    for i in (2, 6, model.nbodies - 1):
        name = model.body_names[i]
        np.testing.assert_allclose(vel_l[i], mb.frame_velocity(model, q, v, name, "local"), atol=1e-12)
        np.testing.assert_allclose(vel_w[i], mb.frame_velocity(model, q, v, name, "world"), atol=1e-12)
        np.testing.assert_allclose(acc_w[i], mb.frame_acceleration(model, q, v, a, name, "world"), atol=1e-12)
    Vb, Ab = mb.body_motion(model, np.array([q, q]), np.array([v, v]), np.array([a, a]), reference="world")
    np.testing.assert_allclose(Vb[1], vel_w, atol=1e-14)
    np.testing.assert_allclose(Ab[0], acc_w, atol=1e-14)
