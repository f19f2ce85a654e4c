"""Joint position limits as unilateral constraints: the LCP solver against
brute-force enumeration, impacts against Newton's restitution law, and the
complementarity conditions of each step (Drumwright §2.2)."""
import itertools

import numpy as np
import pytest

import multibody as mb
from multibody.errors import InputError
from multibody.solvers import solve_spd_lcp

G = 9.81


def _enumerated_lcp(A, b):
    """The LCP by trying every active set (an exhaustive, independent oracle)."""
    n = len(b)
    for active in itertools.product([False, True], repeat=n):
        S = np.array(active)
        lam = np.zeros(n)
        if S.any():
            lam[S] = np.linalg.solve(A[np.ix_(S, S)], -b[S])
        w = A @ lam + b
        if (lam >= -1e-12).all() and (w >= -1e-12).all():
            return lam
    raise AssertionError("no solution")


@pytest.mark.parametrize("seed", range(20))
def test_spd_lcp_matches_enumeration(seed):
    rng = np.random.default_rng(seed)
    n = rng.integers(1, 7)
    B = rng.normal(size=(n, n))
    A = B @ B.T + 0.1 * np.eye(n)
    b = rng.normal(size=n)
    lam, w = solve_spd_lcp(A, b)
    assert np.allclose(lam, _enumerated_lcp(A, b), atol=1e-10)
    assert (lam >= 0).all() and (w >= -1e-12).all() and abs(lam @ w) < 1e-10


def test_spd_lcp_nnls_fallback_matches_enumeration(monkeypatch):
    """The NNLS path, used if principal pivoting does not finish."""
    import multibody.solvers.lcp as lcp
    monkeypatch.setattr(lcp, "principal_pivoting_lcp", lambda *args: -1)
    rng = np.random.default_rng(7)
    for _ in range(10):
        n = rng.integers(1, 7)
        B = rng.normal(size=(n, n))
        A, b = B @ B.T + 0.1 * np.eye(n), rng.normal(size=n)
        assert np.allclose(lcp.solve_spd_lcp(A, b)[0], _enumerated_lcp(A, b), atol=1e-10)


def slider(lower=-0.1, upper=0.5):
    b = mb.ModelBuilder("slider")
    b.add_body("block", "world", "prismatic", axis=(1, 0, 0), mass=2.0, inertia=np.eye(3) * 0.1,
               lower=lower, upper=upper)
    return b.build()


@pytest.mark.parametrize("e", [0.0, 0.5, 1.0])
def test_impact_obeys_newtons_restitution_law(e):
    """A free slider (no gravity) hits its lower limit at 2 m/s: it never
    passes the limit and leaves it with e times its approach speed."""
    model = slider()
    sim = mb.Simulator(model, 1e-3, "semi_implicit_euler", gravity=False, restitution=e, restitution_threshold=0.0,
                       q0=[0.0], v0=[-2.0])
    traj = sim.rollout(duration=0.2)
    assert traj.q.min() >= -0.1 - 1e-12
    assert traj.constraint_residual.max() <= 1e-12
    assert traj.v[-1, 0] == pytest.approx(2.0 * e, abs=1e-12)
    if e == 0.0:
        assert traj.q[-1, 0] == pytest.approx(-0.1, abs=1e-12)


@pytest.mark.parametrize("integrator", ["semi_implicit_euler", "symplectic_euler", "rk4", "implicit_euler"])
def test_pendulum_comes_to_rest_on_its_limit(integrator):
    """A pendulum released at 1.5 rad falls onto a limit at 0.3 rad, on the
    way to its equilibrium at 0 (e = 0): it stays on the admissible side (to
    the integrator's position accuracy), ends at rest pressed against the
    limit, and its energy only drops."""
    b = mb.ModelBuilder("pendulum")
    b.add_body("bob", "world", "revolute", axis=(0, 1, 0), mass=1.0, com=(0, 0, -1.0), inertia=np.eye(3) * 1e-3,
               lower=0.3, upper=2.0)
    sim = mb.Simulator(b.build(), 1e-3, integrator, q0=[1.5])
    traj = sim.rollout(duration=2.0)
    assert traj.q[:, 0].min() >= 0.3 - 1e-6
    assert traj.q[-1, 0] == pytest.approx(0.3, abs=1e-6) and abs(traj.v[-1, 0]) < 1e-6
    assert traj.energy.max() <= traj.energy[0] + 1e-3 * abs(traj.energy[0])


def test_coupled_limits_satisfy_complementarity():
    """A double pendulum hitting limits on both joints at once: the impulse
    ``M(v⁺ − v⁻) = Gᵀλ`` and the position correction ``M(q⁺ − q⁻) = Gᵀμ``
    push away from the limits (λ, μ ≥ 0); where λ > 0 the new velocity is
    0 (e = 0), where μ > 0 the joint ends exactly on its limit
    (complementarity); no limit is violated and every joint that the step
    pushed past its limit ends at rest or moving away."""
    b = mb.ModelBuilder("double")
    I = np.diag([0.01, 0.01, 0.001])
    b.add_body("l1", "world", "revolute", axis=(0, 1, 0), mass=1.0, com=(0, 0, -0.5), inertia=I, lower=-0.2)
    b.add_body("l2", "l1", "revolute", placement=(np.eye(3), (0, 0, -1.0)), axis=(0, 1, 0), mass=1.0,
               com=(0, 0, -0.5), inertia=I, lower=-0.1)
    model = b.build()
    lower = np.array([-0.2, -0.1])
    rng = np.random.default_rng(0)
    dt = 1e-3
    hits = 0
    for _ in range(20):
        q0 = lower + rng.uniform(0, 2e-3, 2)
        v0 = rng.uniform(-4, 1, 2)
        free = mb.Simulator(model, dt, limits=False, q0=q0, v0=v0).step()
        s = mb.Simulator(model, dt, q0=q0, v0=v0).step()
        M = mb.crba(model, free.q)
        lam = M @ (s.v - free.v)
        mu = M @ (s.q - free.q)
        assert (lam >= -1e-10).all() and (mu >= -1e-10).all()
        assert (s.q >= lower - 1e-14).all() and s.q.min() > -np.inf
        for k in range(2):
            assert lam[k] < 1e-10 or abs(s.v[k]) < 1e-10
            assert mu[k] < 1e-10 or abs(s.q[k] - lower[k]) < 1e-14
            if free.q[k] < lower[k]:  # violated by the step: it ends at rest or moving away
                hits += 1
                assert s.v[k] >= -1e-10
    assert hits >= 10


def test_limit_input_errors():
    with pytest.raises(InputError, match="restitution"):
        mb.Simulator(slider(), 1e-3, restitution=1.5)
    b = mb.ModelBuilder("ball")
    b.add_body("ball", "world", "free", mass=1.0, inertia=np.eye(3), lower=[-1, -1, -1, 0, 0, 0, 0])
    with pytest.raises(InputError, match="joint 'ball'.*limits"):
        mb.Simulator(b.build(), 1e-3)


def test_power_accounts_for_the_energy_change():
    """``E(T) − E(0) = ∫ Σ (non-conservative power) dt`` on a damped,
    driven double pendulum (RK4, trapezoidal quadrature of the recorded
    power)."""
    b = mb.ModelBuilder("double")
    I = np.diag([0.01, 0.01, 0.001])
    b.add_body("l1", "world", "revolute", axis=(0, 1, 0), mass=1.0, com=(0, 0, -0.5), inertia=I, damping=0.3)
    b.add_body("l2", "l1", "revolute", placement=(np.eye(3), (0, 0, -1.0)), axis=(0, 1, 0), mass=1.0,
               com=(0, 0, -0.5), inertia=I, damping=0.2)
    model = b.build()
    sim = mb.Simulator(model, 1e-3, "rk4", forces=[mb.forces.JointSpring("l2", 5.0, rest=0.2)], q0=[0.8, -0.4])
    traj = sim.rollout(duration=3.0, controller=lambda t, q, v: np.array([0.5 * np.sin(3 * t), 0.0]))
    assert traj.power_labels == ("tau", "0:JointSpring('l2')", "joint damping")
    nonconservative = traj.power[:, 0] + traj.power[:, 2]
    # τ is held over each step and recorded at its end: use the step's own τ with the mean of the velocities
    work_tau = sum(traj.tau[k + 1] @ (0.5 * (traj.v[k] + traj.v[k + 1])) * 1e-3 for k in range(len(traj.t) - 1))
    work_damp = np.trapezoid(traj.power[:, 2], traj.t)
    assert traj.energy[-1] - traj.energy[0] == pytest.approx(work_tau + work_damp, abs=1e-5)
    assert np.abs(nonconservative).max() > 0.1  # the test exercises both sources


def test_progress_bar_stays_silent_off_a_terminal(capsys):
    mb.Simulator(slider(), 1e-3).rollout(steps=1500, progress=True)
    captured = capsys.readouterr()
    assert captured.err == "" and captured.out == ""


def test_numpy_fallback_agrees_with_the_compiled_end_of_step():
    """The NumPy limit solver (used if the compiled pivoting does not
    finish) gives the same step as the compiled one."""
    b = mb.ModelBuilder("double")
    I = np.diag([0.01, 0.01, 0.001])
    b.add_body("l1", "world", "revolute", axis=(0, 1, 0), mass=1.0, com=(0, 0, -0.5), inertia=I, lower=-0.2)
    b.add_body("l2", "l1", "revolute", placement=(np.eye(3), (0, 0, -1.0)), axis=(0, 1, 0), mass=1.0,
               com=(0, 0, -0.5), inertia=I, lower=-0.1, upper=0.3)
    model = b.build()
    rng = np.random.default_rng(3)
    for _ in range(10):
        q0, v0 = np.array([-0.2, -0.1]) + rng.uniform(0, 1e-3, 2), rng.uniform(-3, 1, 2)
        sim = mb.Simulator(model, 1e-3, restitution=0.4, restitution_threshold=0.0, q0=q0, v0=v0)
        q1, v1 = sim.integrator.step(sim.system, 0.0, sim.state.q, sim.state.v, np.zeros(2), 1e-3)
        s = sim.step()
        q, v = sim._enforce_limits_numpy(q1, v1)
        assert np.allclose(q, s.q, atol=1e-14) and np.allclose(v, s.v, atol=1e-12)
