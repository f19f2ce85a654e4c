"""Conservative elements: τ = -∂V/∂q along model.integrate, and the
structure of K. For a potential force the tangent-space stiffness is
K = -Hess V + ½ B(τ)-type terms: ``K - Kᵀ = B(τ)`` with ``B[k, l] =
τ·[e_l, e_k]`` over the coordinates of each spherical, free or planar
joint (their body-frame coordinates do not commute; BCH). Hence K is
symmetric (a) on trees of vector joints, even under tension, and (b) at
any equilibrium of the element (τ = 0), e.g. a spring at its rest length,
where it is also negative semidefinite."""
import numpy as np
import pytest

import multibody as mb
from multibody.forces import (ExternalWrench, FrameSpring, Gravity, JointSpring, PointForce, PointToPointSpring,
                              generalized_forces, total_potential_energy)

from .helpers import RTOL, bracket_matrix, catalogue, fd_gradient, state, tree

VECTOR_JOINTS = ("revolute", "prismatic", "helical", "cylindrical", "translational", "universal")


def has_potential(e):
    """Conservative elements, and spring-dampers with a known elastic
    energy: at v = 0 their damping force and its q-derivative vanish."""
    if isinstance(e, PointToPointSpring):
        return getattr(e.law, "energy", None) is not None
    return e.conservative or isinstance(e, FrameSpring)


def conservative(model, rng):
    """Elements evaluated at v = 0 with τ = -∂V/∂q."""
    els = [e for e in catalogue(model, rng) if has_potential(e)]
    # a constant world force without moment is conservative too
    frames = [f for f in model.frame_names if f != "world"]
    els.append(ExternalWrench(frames[2], [0, 0, 0, 1.0, -2.0, 0.5]))
    return els


@pytest.mark.parametrize("seed,floating", [(11, True), (12, False)])
def test_force_is_minus_potential_gradient(seed, floating):
    model = tree(seed, floating)
    q, _ = state(model, seed)
    zero = np.zeros(model.nv)
    els = conservative(model, np.random.default_rng(seed))
    names = {type(e).__name__ for e in els}
    assert names >= {"Gravity", "JointSpring", "PointForce", "PointToPointSpring", "FrameSpring", "ExternalWrench"}
    for e in els:
        tau = e.evaluate(model, q, zero)[0]
        grad = fd_gradient(lambda x: e.potential_energy(model, x), model, q)
        scale = max(1.0, np.abs(tau).max())
        assert np.abs(tau + grad).max() <= RTOL * scale, f"{e!r}: |τ + ∇V| = {np.abs(tau + grad).max():.3g}"
    # the gravity element's potential is mb.potential_energy
    assert Gravity().potential_energy(model, q) == pytest.approx(mb.potential_energy(model, q))
    assert total_potential_energy(els, model, q) == pytest.approx(sum(e.potential_energy(model, q) for e in els))


@pytest.mark.parametrize("seed,floating", [(21, True), (22, False)])
def test_asymmetry_of_K_is_the_lie_bracket_term(seed, floating):
    model = tree(seed, floating)
    q, _ = state(model, seed)
    zero = np.zeros(model.nv)
    for e in conservative(model, np.random.default_rng(seed)):
        tau, K, _ = e.evaluate(model, q, zero, jacobians=True)
        scale = max(1.0, np.abs(K).max(), np.abs(tau).max())
        B = bracket_matrix(model, tau)
        assert np.abs((K - K.T) - B).max() <= 1e-10 * scale, f"{e!r}"


def test_symmetric_on_vector_joint_trees_under_tension():
    b = __import__("oracles").random_tree(31, n=10, floating=False, joints=VECTOR_JOINTS, pin_compatible=False,
                                          fixed=2)
    model = b.build()
    q, _ = state(model, 3)
    zero = np.zeros(model.nv)
    for e in conservative(model, np.random.default_rng(5)):
        tau, K, _ = e.evaluate(model, q, zero, jacobians=True)
        assert np.abs(tau).max() > 1e-3  # loaded
        assert np.abs(K - K.T).max() <= 1e-10 * max(1.0, np.abs(K).max()), f"{e!r}"


@pytest.mark.parametrize("floating", [True, False])
def test_symmetric_negative_semidefinite_at_rest(floating):
    """Springs at their rest state: τ = 0, K symmetric and ≤ 0 (rank-one
    -k (Jᵀu)(uᵀJ) for the axial spring, -(k_t P2ᵀP2 + k_r J_ωᵀJ_ω) for the
    frame spring, -diag(k) for joint springs), even with damping when v = 0."""
    model = tree(41, floating)
    q, _ = state(model, 8)
    zero = np.zeros(model.nv)
    frames = [f for f in model.frame_names if f != "world"]
    probe = PointToPointSpring(frames[3], [0.1, 0.2, 0], frames[-2], [0, 0, 0.3], 1.0)
    l = np.linalg.norm(np.subtract(*probe.geometry(model, q)[:2]))
    Fa = mb.frame_pose(model, q, frames[1])
    Fb = mb.frame_pose(model, q, frames[-1])
    rest = np.linalg.inv(Fa) @ Fb
    els = [PointToPointSpring(frames[3], [0.1, 0.2, 0], frames[-2], [0, 0, 0.3], 25.0, 3.0, l),
           FrameSpring(frames[1], frames[-1], 10.0, 4.0, 1.0, 2.0, rest_pose=rest),
           FrameSpring("world", frames[4], 10.0, 4.0, 1.0, 2.0, rest_pose=mb.frame_pose(model, q, frames[4]))]
    els += [JointSpring(j.name, 2.0, rest=q[j.q_slice]) for j in model.joints[1:] if j.nv]
    tau, K, _ = generalized_forces(els, model, q, zero, jacobians=True)
    assert np.abs(tau).max() < 1e-10
    assert np.abs(K - K.T).max() <= 1e-12 * np.abs(K).max()
    assert np.linalg.eigvalsh(K).max() <= 1e-10 * np.abs(K).max()
    # the joint-spring part alone is -diag(k)
    Kj = sum(e.evaluate(model, q, zero, jacobians=True)[1] for e in els[3:])
    assert np.allclose(Kj, -2.0 * np.eye(model.nv), atol=1e-12)


def test_point_force_world_direction_potential():
    model = tree(3, True)
    q, _ = state(model, 1)
    e = PointForce("b2", [0.1, 0.0, 0.2], [0, 1, 1], 4.0)
    x = (mb.frame_pose(model, q, "b2") @ np.r_[0.1, 0.0, 0.2, 1.0])[:3]
    assert e.potential_energy(model, q) == pytest.approx(-4.0 * np.array([0, 1, 1]) / np.sqrt(2) @ x)
