"""Dissipative elements: D is symmetric negative semidefinite and the power
τ·v is ≤ 0 (joint and body dampers, Coulomb friction, the damping of the
axial and frame springs, which is all their power at the rest state)."""
import numpy as np
import pytest

from multibody.forces import (BodyDamping, FrameSpring, JointCoulombFriction, JointDamper, PointToPointSpring,
                              generalized_forces)

from .helpers import state, tree


def dampers(model, rng):
    frames = [f for f in model.frame_names if f != "world"]
    pick = lambda: frames[rng.integers(len(frames))]  # noqa: E731
    els = []
    for j in model.joints[1:]:
        if j.nv:
            els.append(JointDamper(j.name, rng.uniform(0.0, 2.0, j.nv)))
            els.append(JointCoulombFriction(j.name, rng.uniform(0.0, 2.0, j.nv), v_eps=0.1))
    els += [BodyDamping(pick(), rng.uniform(0, 3, 3), rng.uniform(0, 3, 3)) for _ in range(3)]
    # spring-dampers with zero stiffness: pure dampers
    els += [PointToPointSpring(pick(), rng.uniform(-.2, .2, 3), pick(), rng.uniform(-.2, .2, 3), 0.0, 4.0, 0.2),
            PointToPointSpring("world", rng.uniform(-.2, .2, 3), pick(), rng.uniform(-.2, .2, 3), 0.0, 4.0, 0.2),
            FrameSpring(pick(), pick(), 0.0, 0.0, 3.0, 2.0),
            FrameSpring("world", pick(), 0.0, 0.0, 3.0, 2.0)]
    return els


@pytest.mark.parametrize("seed,floating", [(51, True), (52, False)])
def test_damping_matrices_are_negative_semidefinite(seed, floating):
    model = tree(seed, floating)
    rng = np.random.default_rng(seed)
    for trial in range(3):
        q, v = state(model, 100 * seed + trial)
        for e in dampers(model, rng):
            tau, K, D = e.evaluate(model, q, v, jacobians=True)
            scale = max(1.0, np.abs(D).max())
            assert np.abs(D - D.T).max() <= 1e-12 * scale, f"{e!r}: D not symmetric"
            assert np.linalg.eigvalsh(D).max() <= 1e-10 * scale, f"{e!r}: D has a positive eigenvalue"
            assert tau @ v <= 1e-12 * scale * (v @ v), f"{e!r}: positive power {tau @ v}"
            assert e.power(model, q, v) == pytest.approx(tau @ v)


def test_linear_dampers_are_linear_in_v():
    """τ = D v for viscous elements (D independent of v)."""
    model = tree(53, True)
    q, v = state(model, 1)
    els = [e for e in dampers(model, np.random.default_rng(1)) if not isinstance(e, JointCoulombFriction)]
    tau, _, D = generalized_forces(els, model, q, v, jacobians=True)
    assert np.allclose(tau, D @ v, atol=1e-12 * np.abs(tau).max())


def test_spring_damper_is_passive_only_through_damping():
    """A stretched spring-damper: its elastic power is -dV/dt and the rest,
    τ·v + dV/dt = -F_ṡ ṡ², is ≤ 0."""
    model = tree(54, False)
    q, v = state(model, 2)
    e = PointToPointSpring("b1", [0.1, 0, 0], "b5", [0, 0.1, 0], 12.0, 3.0, 0.05)
    tau = e.evaluate(model, q, v)[0]
    h = 1e-6
    V = lambda x: e.potential_energy(model, x)  # noqa: E731
    dVdt = (V(model.integrate(q, v, h)) - V(model.integrate(q, v, -h))) / (2 * h)
    _, _, _, sdot = e.geometry(model, q, v)
    assert tau @ v + dVdt == pytest.approx(-3.0 * sdot ** 2, rel=1e-6, abs=1e-8)
