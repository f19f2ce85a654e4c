"""Power balance d(T + V)/dt = τᵀq̇ along trajectories of the ABA
(notes §5.5), integrated on the configuration manifold with RK4 stages
built by ``model.integrate`` and constant random joint forces.

Error budget. The stages combine body-frame velocities taken at different
configurations without the dexp⁻¹ correction of Munthe-Kaas RK, so on the
quaternion/SE(3)/SE(2) joints the scheme is second order; the trapezoid
rule for ∫τᵀq̇ dt is second order too. The residual r(h) = ΔE − W is
therefore C·h² + O(h³): the test checks that halving the step divides it by
4 (within 10 %) and that the Richardson-extrapolated residual
(4 r(h) − r(2h))/3 vanishes to 1e-7 of the energy exchanged. A wrong term in
the ABA breaks the balance at O(1), independently of h."""
import numpy as np
import pytest

import multibody as mb
from oracles import random_tree
from .helpers import with_armature

STEPS, H = 200, 1e-3


def energy(model, q, v):
    """Kinetic (bodies + rotors) plus gravitational potential energy, from
    the kinematics module (checked against Pinocchio in tests/kinematics)."""
    return (mb.kinetic_energy(model, q, v) + 0.5 * np.sum(np.asarray(model.armature) * v * v)
            + mb.potential_energy(model, q))


def rollout(model, q, v, tau, h, steps):
    """RK4 on the manifold; returns (energy change, work of τ by trapezoid, final q)."""
    E0, W, p0 = energy(model, q, v), 0.0, tau @ v
    f = lambda q, v: mb.aba(model, q, v, tau)  # noqa: E731
    for _ in range(steps):
        a1 = f(q, v)
        v2 = v + h / 2 * a1
        a2 = f(model.integrate(q, v, h / 2), v2)
        v3 = v + h / 2 * a2
        a3 = f(model.integrate(q, v2, h / 2), v3)
        v4 = v + h * a3
        a4 = f(model.integrate(q, v3, h), v4)
        q = model.integrate(q, (v + 2 * v2 + 2 * v3 + v4) / 6, h)
        v = v + h / 6 * (a1 + 2 * a2 + 2 * a3 + a4)
        p1 = tau @ v
        W += h / 2 * (p0 + p1)
        p0 = p1
    assert np.isfinite(q).all() and np.isfinite(v).all()
    return energy(model, q, v) - E0, W, q


@pytest.mark.parametrize("seed,floating", [(1, True), (2, False)], ids=["floating", "fixed"])
def test_energy_balance_along_aba_trajectory(seed, floating):
    b = random_tree(seed, n=8, floating=floating, pin_compatible=False, fixed=1)
    with_armature(b, seed)
    model = b.build(merge_fixed=False)
    rng = np.random.default_rng(seed)
    q, v, tau = model.random_configuration(seed=seed), rng.normal(size=model.nv), rng.normal(size=model.nv)
    dE1, W1, _ = rollout(model, q, v, tau, H, STEPS)
    dE2, W2, _ = rollout(model, q, v, tau, 2 * H, STEPS // 2)
    r1, r2 = dE1 - W1, dE2 - W2
    scale = max(abs(dE1), abs(W1))
    assert scale > 0.1  # the test exchanges a real amount of energy
    assert abs(r1) < 1e-4 * scale, (dE1, W1)  # C·h² with C = O(1)
    assert 3.6 < r2 / r1 < 4.4, (r1, r2)  # second-order convergence to the balance
    assert abs((4 * r1 - r2) / 3) < 1e-7 * scale, (r1, r2)


def test_energy_is_conserved_without_joint_forces():
    """τ = 0: the total energy is conserved to the same order, while gravity
    exchanges far more between potential and kinetic energy."""
    model = random_tree(3, n=6, floating=False, pin_compatible=False).build()
    rng = np.random.default_rng(3)
    q, v = model.random_configuration(seed=3), rng.normal(size=model.nv)
    tau = np.zeros(model.nv)
    dE1, W1, qT = rollout(model, q, v, tau, H, STEPS)
    dE2, _, _ = rollout(model, q, v, tau, 2 * H, STEPS // 2)
    assert W1 == 0.0
    assert 3.6 < dE2 / dE1 < 4.4
    exchanged = abs(mb.potential_energy(model, qT) - mb.potential_energy(model, q))
    assert exchanged > 0.1
    assert abs(dE1) < 1e-4 * exchanged
