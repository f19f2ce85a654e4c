"""The frame spring: seed values (ArtiSynth T5), momentum conservation (its
two wrenches are equal and opposite, so with gravity off it changes no
component of the system's momentum), power balance, rest pose."""
import numpy as np
import pytest

import multibody as mb
from multibody.forces import FrameSpring, PointToPointSpring
from multibody.spatial import so3

from .helpers import state, tree


def two_free_bodies():
    b = mb.ModelBuilder("pair", gravity=(0, 0, 0))
    b.add_body("A", "world", "free", mass=1.0, inertia=np.diag([0.1, 0.2, 0.3]))
    b.add_body("B", "world", "free", mass=2.0, com=(0.1, 0, 0), inertia=np.diag([0.2, 0.2, 0.1]))
    return b.build()


def test_artisynth_T5_values():
    """Identity rotations, x1 = 0, x2 = (1,0,0), k_t = 10: f_A = (10,0,0),
    f_B = -f_A; frame 2 turned 0.5 rad about z with k_r = 4: τ_A = (0,0,2),
    τ_B = (0,0,-2). For free root bodies τ is the body wrench [n; f]."""
    model = two_free_bodies()
    q = model.neutral()
    q[7:10] = [1.0, 0.0, 0.0]
    tau = FrameSpring("A", "B", translational_stiffness=10.0).evaluate(model, q, np.zeros(12))[0]
    assert np.allclose(tau, [0, 0, 0, 10, 0, 0, 0, 0, 0, -10, 0, 0])
    q[10:14] = [np.cos(0.25), 0, 0, np.sin(0.25)]
    tau = FrameSpring("A", "B", rotational_stiffness=4.0).evaluate(model, q, np.zeros(12))[0]
    assert np.allclose(tau, [0, 0, 2, 0, 0, 0, 0, 0, -2, 0, 0, 0])
    # and the potential ½ k_r φ²
    assert FrameSpring("A", "B", rotational_stiffness=4.0).potential_energy(model, q) == pytest.approx(0.5)


def momentum_matrix(model, q):
    """A(q) with mb.momentum(q, v) = A v (momentum is linear in v)."""
    return np.column_stack([mb.momentum(model, q, e) for e in np.eye(model.nv)])


@pytest.mark.parametrize("seed", [71, 72])
def test_momentum_rate_from_the_spring_is_zero(seed):
    model = tree(seed, True, gravity=(0, 0, 0))
    q, v = state(model, seed)
    rng = np.random.default_rng(seed)
    frames = [f for f in model.frame_names if f != "world"]
    rest = (so3.exp(rng.uniform(-1, 1, 3)), rng.uniform(-.3, .3, 3))
    els = [FrameSpring(frames[2], frames[-1], 30.0, 8.0, 3.0, 2.0, rest_pose=rest),
           PointToPointSpring(frames[3], [0.1, 0, 0], frames[-3], [0, 0.2, 0], 20.0, 2.0, 0.1)]
    A = momentum_matrix(model, q)
    M = mb.crba(model, q)
    for e in els:
        tau = e.evaluate(model, q, v)[0]
        assert np.abs(tau).max() > 1.0
        # Jacobian identity: the base coordinates (which move every body) see Σ w_b = 0
        assert np.abs(tau[:6]).max() < 1e-11 * np.abs(tau).max()
        # momentum rate d(Av)/dt caused by τ: A M⁻¹ τ
        assert np.abs(A @ np.linalg.solve(M, tau)).max() < 1e-10 * np.abs(tau).max()
        # tiny integration: central difference of the momentum along the ODE
        # (O(ε²)), Richardson-extrapolated to O(ε⁴)
        assert np.abs(momentum_rate(model, q, v, tau)).max() < 1e-7 * np.abs(tau).max()
    # control: an external force shows up in full (linear part = the world force)
    from multibody.forces import ExternalWrench
    tau = ExternalWrench(frames[2], [0, 0, 0, 1.0, 2.0, 3.0]).evaluate(model, q, v)[0]
    assert np.allclose(momentum_rate(model, q, v, tau)[3:], [1.0, 2.0, 3.0], atol=1e-6)


def momentum_rate(model, q, v, tau, eps=1e-4):
    def rate(e):
        acc = mb.aba(model, q, v, tau)
        hp = mb.momentum(model, model.integrate(q, e * v + 0.5 * e ** 2 * acc), v + e * acc)
        hm = mb.momentum(model, model.integrate(q, -e * v + 0.5 * e ** 2 * acc), v - e * acc)
        return (hp - hm) / (2 * e)
    return (4 * rate(eps / 2) - rate(eps)) / 3


def test_frame_spring_damping_ignores_common_rigid_motion():
    """A velocity that moves both frames rigidly together (the whole tree
    about the free base) produces no damping force."""
    model = tree(73, True, gravity=(0, 0, 0))
    q, _ = state(model, 1)
    v = np.zeros(model.nv)
    v[:6] = [0.3, -1.0, 0.5, 2.0, 0.1, -0.4]
    e = FrameSpring("b2", "b6", 0.0, 0.0, 5.0, 3.0)
    assert np.abs(e.evaluate(model, q, v)[0]).max() < 1e-12


def test_rest_pose_is_equilibrium_and_power_is_dissipative():
    model = tree(74, False)
    q, v = state(model, 2)
    F1, F2 = mb.frame_pose(model, q, "b1"), mb.frame_pose(model, q, "b7")
    e = FrameSpring("b1", "b7", 10.0, 3.0, 2.0, 1.0, rest_pose=np.linalg.inv(F1) @ F2)
    assert np.abs(e.evaluate(model, q, np.zeros(model.nv))[0]).max() < 1e-12
    assert e.potential_energy(model, q) < 1e-24
    assert e.power(model, q, v) < 0


def skew(a):
    return np.array([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]])


def test_artisynth_C24_body_stiffness_matrix():
    """Without damping our forces are ArtiSynth's eqs 0.39/0.40 and, for two
    free root bodies (body-frame perturbations, body wrenches), K is the
    assembled matrix of §0.22.1 as printed (notes C24; the k_r signs of the
    intermediate eq 0.52 are flipped, erratum 12). ArtiSynth orders linear
    first: (f_A, τ_A, f_B, τ_B) x (δx_A, δθ_A, δx_B, δθ_B)."""
    rng = np.random.default_rng(0)
    b = mb.ModelBuilder("pair", gravity=(0, 0, 0))
    b.add_body("A", "world", "free", mass=1.0, inertia=np.eye(3) * .1)
    b.add_body("B", "world", "free", mass=1.0, inertia=np.eye(3) * .1)
    R1A, p1 = so3.exp(rng.normal(size=3) * .5), rng.normal(size=3) * .3
    R2B, p2 = so3.exp(rng.normal(size=3) * .5), rng.normal(size=3) * .3
    b.add_frame("f1", "A", (R1A, p1))
    b.add_frame("f2", "B", (R2B, p2))
    model = b.build()
    q = model.random_configuration(seed=3)
    q[:3], q[7:10] = rng.normal(size=3), rng.normal(size=3)
    kt, kr = 7.0, 3.0
    tau, K, _ = FrameSpring("f1", "f2", kt, kr).evaluate(model, q, np.zeros(12), jacobians=True)
    RAW, RBW = mb.frame_pose(model, q, "A")[:3, :3], mb.frame_pose(model, q, "B")[:3, :3]
    F1, F2 = mb.frame_pose(model, q, "f1"), mb.frame_pose(model, q, "f2")
    th = so3.log(F1[:3, :3].T @ F2[:3, :3])
    t = np.linalg.norm(th)
    u = th / t
    c = t / np.tan(t / 2)
    U = 0.5 * (c * np.eye(3) + (2 - c) * np.outer(u, u) - t * skew(u))       # ArtiSynth eq 0.45
    dx = F2[:3, 3] - F1[:3, 3]
    fA, fB = RAW.T @ (kt * dx), -RBW.T @ (kt * dx)                           # eqs 0.39, 0.40
    R1B = RBW.T @ F1[:3, :3]
    tA1, tB2 = kr * R1A @ th, -kr * R1B @ th
    RBA = RAW.T @ RBW
    RAB, RA1, RB1, I3 = RBA.T, R1A.T, R1B.T, np.eye(3)
    J01, J03 = kt * skew(p1) + skew(fA), -kt * RBA @ skew(p2)
    J21, J23 = -kt * RAB @ skew(p1), kt * skew(p2) + skew(fB)
    C24 = np.block([
        [-kt * I3, J01, kt * RBA, J03],
        [-kt * skew(p1), skew(p1) @ J01 - kr * R1A @ U.T @ RA1 + skew(tA1), kt * skew(p1) @ RBA,
         skew(p1) @ J03 + kr * R1A @ U @ RB1],
        [kt * RAB, J21, -kt * I3, J23],
        [kt * skew(p2) @ RAB, skew(p2) @ J21 + kr * R1B @ U.T @ RA1, -kt * skew(p2),
         skew(p2) @ J23 - kr * R1B @ U @ RB1 + skew(tB2)]])
    ours_order = np.r_[3:6, 0:3, 9:12, 6:9]
    assert np.allclose(K, C24[np.ix_(ours_order, ours_order)], atol=1e-12 * np.abs(K).max())
    assert np.allclose(tau, np.r_[tA1 + np.cross(p1, fA), fA, tB2 + np.cross(p2, fB), fB])
