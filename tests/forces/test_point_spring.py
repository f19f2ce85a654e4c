"""The axial spring against an independent evaluation (frame poses,
velocities and point Jacobians from the kinematics API), against the
seeds' worked values (ArtiSynth T4, Sueda eq. 1.37 with errata S2), and
its force laws."""
import numpy as np
import pytest

import multibody as mb
from multibody.forces import GreenStrainLaw, LinearLaw, PointToPointSpring, StrainLaw

from .helpers import fd_jacobians, state, tree


def independent(model, q, v, fa, pa, fb, pb, k, d, r):
    """τ = J_aᵀ f_a + J_bᵀ f_b with f_a = (k(l - r) + d l̇) u from the public kinematics."""
    def point(frame, p):
        F = mb.frame_pose(model, q, frame)
        x = F[:3, :3] @ p + F[:3, 3]
        J = mb.jacobian(model, q, frame, "local_world_aligned", point=p)[3:]
        return x, J, J @ v
    xa, Ja, va = point(fa, pa)
    xb, Jb, vb = point(fb, pb)
    u = (xb - xa) / np.linalg.norm(xb - xa)
    F = k * (np.linalg.norm(xb - xa) - r) + d * u @ (vb - va)
    return Ja.T @ (F * u) + Jb.T @ (-F * u)


@pytest.mark.parametrize("floating", [True, False])
def test_joint_forces_are_J_transpose_f(floating):
    model = tree(61, floating)
    rng = np.random.default_rng(0)
    frames = list(model.frame_names)
    for trial in range(6):
        q, v = state(model, trial)
        fa, fb = frames[rng.integers(len(frames))], frames[rng.integers(1, len(frames))]
        pa, pb = rng.uniform(-.3, .3, 3), rng.uniform(-.3, .3, 3)
        k, d, r = rng.uniform(1, 20), rng.uniform(0, 3), rng.uniform(0, 0.5)
        tau = PointToPointSpring(fa, pa, fb, pb, k, d, r).evaluate(model, q, v)[0]
        ref = independent(model, q, v, fa, pa, fb, pb, k, d, r)
        assert np.allclose(tau, ref, rtol=1e-10, atol=1e-10 * np.abs(ref).max())


def two_particles(x1, x2, floating=False):
    """Two bodies on translational joints (or free joints) at x1, x2."""
    b = mb.ModelBuilder("particles", gravity=(0, 0, 0))
    jt = "free" if floating else "translational"
    for name, x in (("p1", x1), ("p2", x2)):
        b.add_body(name, "world", jt, placement=(np.eye(3), x), mass=1.0, inertia=np.eye(3) * 0.1)
    return b.build()


def test_artisynth_T4_axial_spring():
    """ArtiSynth §0.12 / T4: x1 = 0, x2 = (2,0,0), k = 10, r = 1: f1 = (10,0,0),
    ∂f1/∂x1 = diag(-10,-5,-5), K = [[K11, -K11], [-K11, K11]]; §0.13: r = 0 gives -kI."""
    model = two_particles(np.zeros(3), np.array([2.0, 0, 0]))
    q, v = np.zeros(6), np.zeros(6)
    tau, K, D = PointToPointSpring("p1", [0, 0, 0], "p2", [0, 0, 0], 10.0, 0.0, 1.0).evaluate(
        model, q, v, jacobians=True)
    assert np.allclose(tau, [10, 0, 0, -10, 0, 0])
    K11 = np.diag([-10.0, -5.0, -5.0])
    assert np.allclose(K, np.block([[K11, -K11], [-K11, K11]]))
    assert not D.any()
    _, K0, _ = PointToPointSpring("p1", [0, 0, 0], "p2", [0, 0, 0], 10.0, 0.0, 0.0).evaluate(
        model, q, v, jacobians=True)
    assert np.allclose(K0[:3, :3], -10 * np.eye(3))
    # with damping the u Δẋᵀ U_p term makes K non-symmetric (ArtiSynth §0.12)
    vd = np.array([0, 0, 0, 0.3, 0.5, 0.0])
    _, Kd, Dd = PointToPointSpring("p1", [0, 0, 0], "p2", [0, 0, 0], 10.0, 2.0, 1.0).evaluate(
        model, q, vd, jacobians=True)
    dxdot = vd[3:] - vd[:3]
    u = np.array([1.0, 0, 0])
    Up = np.eye(3) - np.outer(u, u)
    K11d = -10 * np.outer(u, u) - (2.0 / 2.0) * np.outer(u, dxdot) @ Up - ((10 * 1 + 2 * 0.3) / 2.0) * Up
    assert np.allclose(Kd[:3, :3], K11d)
    assert np.allclose(Dd[:3, :3], -2.0 * np.outer(u, u))


def skew(a):
    return np.array([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]])


def test_sueda_eq_1_37_is_minus_K():
    """Sueda §1.9.3: zero-rest-length spring between two free bodies; the
    printed block matrix times k equals -∂f/∂q (errata S2)."""
    rng = np.random.default_rng(3)
    model = two_particles(np.zeros(3), np.zeros(3), floating=True)
    q = model.random_configuration(seed=4)
    q[:3], q[7:10] = rng.normal(size=3), rng.normal(size=3)
    x1, x2 = rng.uniform(-.5, .5, 3), rng.uniform(-.5, .5, 3)
    k = 7.0
    _, K, _ = PointToPointSpring("p1", x1, "p2", x2, k, 0.0, 0.0).evaluate(model, q, np.zeros(12), jacobians=True)
    R1, p1 = mb.frame_pose(model, q, "p1")[:3, :3], mb.frame_pose(model, q, "p1")[:3, 3]
    R2, p2 = mb.frame_pose(model, q, "p2")[:3, :3], mb.frame_pose(model, q, "p2")[:3, 3]
    w1, w2 = R1 @ x1 + p1, R2 @ x2 + p2
    X1, X2, R12, R21 = skew(x1), skew(x2), R1.T @ R2, R2.T @ R1
    M = np.block([
        [X1 @ skew(R1.T @ (p1 - w2)), X1, X1 @ R12 @ X2, -X1 @ R12],
        [skew(R1.T @ (p1 - w2)), np.eye(3), R12 @ X2, -R12],
        [X2 @ R21 @ X1, -X2 @ R21, X2 @ skew(R2.T @ (p2 - w1)), X2],
        [R21 @ X1, -R21, skew(R2.T @ (p2 - w1)), np.eye(3)]])
    assert np.allclose(K, -k * M, atol=1e-12)
    # and Sueda's force f = k(Γ1ᵀR1ᵀΔx; -Γ2ᵀR2ᵀΔx) with Γ = ([x]ᵀ I)
    tau = PointToPointSpring("p1", x1, "p2", x2, k, 0.0, 0.0).evaluate(model, q, np.zeros(12))[0]
    dx = w2 - w1
    assert np.allclose(tau, k * np.r_[X1 @ R1.T @ dx, R1.T @ dx, -X2 @ R2.T @ dx, -R2.T @ dx])


def test_directional_point_force_sueda_K():
    """Sueda §1.9.2 on one free body: f = kΓᵀRᵀa, K = k[[ [x][Rᵀa], 0 ], [ [Rᵀa], 0 ]] (= +∂f/∂q)."""
    from multibody.forces import PointForce
    model = two_particles(np.zeros(3), np.zeros(3), floating=True)
    q = model.random_configuration(seed=9)
    x, a, k = np.array([0.2, -0.1, 0.3]), np.array([0.0, 0.6, 0.8]), 5.0
    tau, K, _ = PointForce("p1", x, a, k).evaluate(model, q, np.zeros(12), jacobians=True)
    R = mb.frame_pose(model, q, "p1")[:3, :3]
    b = R.T @ a
    assert np.allclose(tau[:6], k * np.r_[skew(x) @ b, b])
    assert np.allclose(K[:6, :6], k * np.block([[skew(x) @ skew(b), np.zeros((3, 3))], [skew(b), np.zeros((3, 3))]]))
    assert not K[6:].any() and not K[:, 6:].any()


@pytest.mark.parametrize("law", [LinearLaw(3.0, 0.5), StrainLaw(4.0, 1.0, 0.7), GreenStrainLaw(5.0, 0.2, 0.6)])
def test_force_laws_derivatives_and_energy(law):
    h = 1e-6
    for s, sd in ((0.1, 0.3), (-0.2, -0.5), (0.4, 0.0)):
        F, Fs, Fr = law(s, sd)
        assert Fs == pytest.approx((law(s + h, sd)[0] - law(s - h, sd)[0]) / (2 * h), rel=1e-7, abs=1e-9)
        assert Fr == pytest.approx((law(s, sd + h)[0] - law(s, sd - h)[0]) / (2 * h), rel=1e-7, abs=1e-9)
        assert law(s, 0.0)[0] == pytest.approx((law.energy(s + h) - law.energy(s - h)) / (2 * h), rel=1e-7, abs=1e-9)
    assert law(0.0, 0.0)[0] == 0.0 and law.energy(0.0) == 0.0


def test_nonlinear_callable_law_and_world_attachment():
    model = tree(62, True)
    q, v = state(model, 3)
    law = lambda s, sd: (np.sinh(s) + 0.3 * sd ** 3, np.cosh(s), 0.9 * sd ** 2)  # noqa: E731
    e = PointToPointSpring("world", [0.2, 0, 0.1], "b4", [0, 0.1, 0], force_law=law, rest_length=0.2)
    tau, K, D = e.evaluate(model, q, v, jacobians=True)
    Kf, Df = fd_jacobians(e, model, q, v)
    scale = max(1.0, np.abs(Kf).max(), np.abs(tau).max())
    assert np.abs(K - Kf).max() < 1e-6 * scale and np.abs(D - Df).max() < 1e-6 * scale
    assert e.potential_energy(model, q) == 0.0 and not e.conservative


def test_zero_length_is_zero():
    model = two_particles(np.zeros(3), np.zeros(3))
    tau, K, D = PointToPointSpring("p1", [0, 0, 0], "p2", [0, 0, 0], 5.0, 1.0, 0.5).evaluate(
        model, np.zeros(6), np.ones(6), jacobians=True)
    assert not tau.any() and not K.any() and not D.any()
