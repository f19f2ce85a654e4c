"""Integrators and the simulator against closed forms and the energy and
stability behaviour the seeds predict (ArtiSynth §0.9, Drumwright §3.1)."""
import functools
import warnings

import numpy as np
import pytest
from scipy.special import ellipk

import multibody as mb
from multibody.errors import InputError, SimulationError
from multibody.forces import JointDamper, JointSpring
from multibody.integrators import INTEGRATORS

G = 9.81


def pendulum(m=1.0, l=1.0, r=0.01):
    """A physical pendulum: a small sphere of radius r at distance l below a
    revolute joint about y."""
    b = mb.ModelBuilder("pendulum")
    b.add_body("bob", "world", "revolute", axis=(0, 1, 0), mass=m, com=(0, 0, -l),
               inertia=np.eye(3) * 0.4 * m * r * r)
    return b.build()


def double_pendulum():
    b = mb.ModelBuilder("double_pendulum")
    I = np.diag([0.01, 0.01, 0.001])
    b.add_body("l1", "world", "revolute", axis=(0, 1, 0), mass=1.0, com=(0, 0, -0.5), inertia=I)
    b.add_body("l2", "l1", "revolute", placement=(np.eye(3), (0, 0, -1.0)), axis=(0, 1, 0), mass=1.0,
               com=(0, 0, -0.5), inertia=I)
    return b.build()


def slider(m=1.0):
    b = mb.ModelBuilder("slider")
    b.add_body("block", "world", "prismatic", axis=(1, 0, 0), mass=m, inertia=np.eye(3) * 0.1)
    return b.build()


def test_rk4_pendulum_period_matches_the_elliptic_integral():
    m, l, r, theta0 = 1.0, 1.0, 0.01, 2.0  # a large amplitude: far from the small-angle period
    model = pendulum(m, l, r)
    Ip = 0.4 * m * r * r + m * l * l
    exact = 4.0 * np.sqrt(Ip / (m * G * l)) * ellipk(np.sin(theta0 / 2) ** 2)  # scipy's ellipk takes k²
    dt = 1e-3
    sim = mb.Simulator(model, dt, "rk4", q0=[theta0])
    traj = sim.rollout(duration=1.2 * exact)
    th, w, t = traj.q[:, 0], traj.v[:, 0], traj.t
    # θ returns to θ0 after one period: θ̇ crosses zero from above there; locate it by
    # cubic Hermite interpolation of θ̇ using θ̈ = −(m g l / Ip) sin θ (O(dt⁴) accurate)
    acc = -(m * G * l / Ip) * np.sin(th)
    k = np.nonzero((w[:-1] > 0) & (w[1:] <= 0) & (t[:-1] > 0.75 * exact))[0][0]
    lo, hi = 0.0, 1.0
    for _ in range(60):  # bisection on the Hermite interpolant of θ̇ on [t_k, t_k+1]
        s = 0.5 * (lo + hi)
        h00, h10, h01, h11 = 2 * s**3 - 3 * s**2 + 1, s**3 - 2 * s**2 + s, -2 * s**3 + 3 * s**2, s**3 - s**2
        ws = h00 * w[k] + h10 * dt * acc[k] + h01 * w[k + 1] + h11 * dt * acc[k + 1]
        lo, hi = (s, hi) if ws > 0 else (lo, s)
    period = t[k] + lo * dt
    assert abs(period - exact) / exact < 1e-6


_Q0, _V0 = np.array([0.4, -0.2]), np.array([0.1, 0.0])  # smooth, non-chaotic motion


@functools.lru_cache(maxsize=None)
def _reference_final_state(T):
    """RK4 at dt = 1e-4 (shared by the order tests)."""
    n_ref = int(round(T / 1e-4))
    ref = mb.Simulator(double_pendulum(), 1e-4, "rk4", q0=_Q0, v0=_V0).rollout(steps=n_ref, record_every=n_ref)
    return np.r_[ref.q[-1], ref.v[-1]]


def _final_state_error(name, dt, T=1.0):
    n = int(round(T / dt))
    out = mb.Simulator(double_pendulum(), dt, name, q0=_Q0, v0=_V0).rollout(steps=n, record_every=n)
    return np.linalg.norm(np.r_[out.q[-1], out.v[-1]] - _reference_final_state(T))


@pytest.mark.parametrize("name", ["explicit_euler", "semi_implicit_euler", "symplectic_euler", "implicit_euler",
                                  "rk4"])
def test_measured_order_matches_the_stated_order(name):
    order = INTEGRATORS[name].order
    # step sizes inside each method's asymptotic range on this problem
    dts = {"rk4": [0.04, 0.02, 0.01], "explicit_euler": [1e-3, 5e-4, 2.5e-4]}.get(name, [0.004, 0.002, 0.001])
    dts = np.array(dts)
    errors = [_final_state_error(name, dt) for dt in dts]
    measured = np.polyfit(np.log(dts), np.log(errors), 1)[0]  # slope of log(error) against log(dt)
    assert abs(measured - order) < 0.3, (name, measured)


def _energy_error(model, name, q0, T, dt):
    traj = mb.Simulator(model, dt, name, q0=q0).rollout(duration=T, record_every=10)
    E = traj.energy - traj.energy[0]
    return np.array([np.abs(w).max() for w in np.array_split(E, 10)]), E[-1]


def test_semi_implicit_euler_energy_is_bounded_when_symplectic():
    """For a pendulum (constant mass matrix, separable Hamiltonian)
    semi-implicit Euler is symplectic: over 100 s the energy error
    oscillates without drift (the last tenth is no larger than the first)."""
    windows, _ = _energy_error(pendulum(), "semi_implicit_euler", [1.0], 100.0, 5e-3)
    assert windows[-1] < 1.2 * windows[0] and windows.max() < 0.05


def test_energy_behaviour_on_a_double_pendulum():
    """Over 100 s: symplectic Euler's energy error stays bounded (the last
    tenth of the run is no worse than the first), explicit Euler gains
    energy, implicit Euler loses it (numerical damping). The velocity form
    of semi-implicit Euler is not symplectic when M depends on q: it drifts
    — slowly, far less than the non-symplectic Eulers."""
    model = double_pendulum()
    q0, T, dt = [0.6, -0.3], 100.0, 2e-3
    w_sympl, last_sympl = _energy_error(model, "symplectic_euler", q0, T, dt)
    w_semi, _ = _energy_error(model, "semi_implicit_euler", q0, T, dt)
    w_expl, last_expl = _energy_error(model, "explicit_euler", q0, T, dt)
    w_impl, last_impl = _energy_error(model, "implicit_euler", q0, T, dt)
    E0 = 1.0 * G * 0.5 * (3 - 3 * np.cos(0.6)) + 1.0 * G * 0.5 * (1 - np.cos(0.3))  # energy scale, J
    assert w_sympl[-1] < 1.2 * w_sympl[:3].max() and w_sympl.max() < 0.01 * E0    # bounded: no drift
    assert last_expl > 0 and w_expl[-1] > 5 * w_expl[0]          # grows
    assert last_impl < 0 and w_impl[-1] > 3 * w_impl[0]          # decays
    assert w_semi[-1] > 2 * w_semi[0]                             # the velocity form drifts
    assert w_semi[0] < 0.1 * min(w_expl[0], w_impl[0])            # over the first 10 s


def test_symplectic_euler_needs_joints_with_qdot_equal_v():
    b = mb.ModelBuilder("ball")
    b.add_body("ball", "world", "free", mass=1.0, inertia=np.eye(3))
    with pytest.raises(InputError, match="symplectic_euler.*'ball'.*free|symplectic_euler.*free"):
        mb.Simulator(b.build(), 1e-3, "symplectic_euler")


@pytest.mark.parametrize("k", [1e8])
def test_stiff_spring_implicit_stable_semi_implicit_obeys_its_bound(k):
    """A 1 kg slider on a joint spring k (and damper b): implicit Euler is
    stable at dt = 1e-2; semi-implicit Euler is unstable there and stable
    just inside its bound h²k/m < 4 − 2hb/m, unstable just outside (it takes
    the damper explicitly: Drumwright §3.1.2's 4 + 2hb/m is the bound of the
    paper's scheme, which takes it implicitly; tests/drumwright)."""
    m, b = 1.0, 10.0
    model = slider(m)
    forces = [JointSpring("block", k, rest=0.0), JointDamper("block", b)]
    sim = mb.Simulator(model, 1e-2, "implicit_euler", forces=forces, gravity=False, q0=[0.01])
    traj = sim.rollout(steps=200)
    assert np.all(np.abs(traj.q) <= 0.01 + 1e-12)
    with pytest.raises(SimulationError, match="diverged at step"), np.errstate(all="ignore"):
        mb.Simulator(model, 1e-2, "semi_implicit_euler", forces=forces, gravity=False, q0=[0.01]).rollout(
            steps=1000)
    # the bound on h: h² k + 2 h b − 4 m = 0
    h_max = (-2 * b + np.sqrt(4 * b * b + 16 * m * k)) / (2 * k)
    for h, stable in ((0.98 * h_max, True), (1.02 * h_max, False)):
        traj = None
        try:
            with np.errstate(all="ignore"):  # the unstable run overflows on its way to the error
                traj = mb.Simulator(model, h, "semi_implicit_euler", forces=forces, gravity=False,
                                    q0=[0.01]).rollout(steps=3000)
        except SimulationError:
            pass
        grew = traj is None or np.abs(traj.q[-100:]).max() > 0.01
        assert grew != stable, (h / h_max, stable)


def test_torque_free_body_conserves_angular_momentum_with_rk4():
    b = mb.ModelBuilder("free_body")
    b.add_body("body", "world", "free", mass=2.0, inertia=np.diag([0.1, 0.2, 0.3]))
    model = b.build()
    v0 = np.array([0.5, 2.0, -0.3, 0.1, 0.0, 0.2])  # spinning near the unstable middle axis
    sim = mb.Simulator(model, 1e-3, "rk4", gravity=False, v0=v0)
    traj = sim.rollout(steps=1000, record_every=1000)
    h0 = mb.momentum(model, traj.q[0], traj.v[0])
    h1 = mb.momentum(model, traj.q[-1], traj.v[-1])
    assert np.linalg.norm(h1 - h0) < 1e-10 * np.linalg.norm(h0)


def test_rollouts_are_deterministic_and_trajectories_round_trip(tmp_path):
    model = double_pendulum()
    run = lambda: mb.Simulator(model, 1e-3, "rk4", q0=[0.3, 0.2]).rollout(  # noqa: E731
        steps=300, controller=lambda t, q, v: -0.5 * v)
    a, b = run(), run()
    np.testing.assert_array_equal(a.q, b.q)
    np.testing.assert_array_equal(a.v, b.v)
    np.testing.assert_array_equal(a.tau[1:], -0.5 * a.v[:-1])  # the controller saw the state before each step
    a.save(tmp_path / "traj.npz")
    c = mb.Trajectory.load(tmp_path / "traj.npz")
    np.testing.assert_array_equal(c.q, a.q)
    np.testing.assert_array_equal(c.energy, a.energy)
    assert c.meta["integrator"] == "rk4"


def test_bad_simulator_input():
    model = double_pendulum()
    with pytest.raises(InputError, match="unknown integrator 'leapfrog'"):
        mb.Simulator(model, 1e-3, "leapfrog")
    with pytest.raises(InputError, match="dt must be a positive"):
        mb.Simulator(model, 0.0)
    sim = mb.Simulator(model, 1e-3)
    with pytest.raises(InputError, match="tau at step 1 .*has shape"):
        sim.step(np.zeros(3))
    with pytest.raises(InputError, match="non-finite"):
        sim.reset(q=[np.nan, 0.0])
    with pytest.raises(InputError, match="exactly one of duration and steps"):
        sim.rollout()
    with pytest.raises(InputError, match="cannot read trajectory file"):
        mb.Trajectory.load("/nonexistent/trajectory.npz")


def _spring_mass(k=400.0, b=0.0):
    """A 2 kg slider on a joint spring (and damper): constant mass matrix."""
    model = slider(2.0)
    forces = [JointSpring("block", k, rest=0.0)] + ([JointDamper("block", b)] if b else [])
    return model, forces


@pytest.mark.parametrize("name", ["trapezoidal", "bridson_marino"])
def test_second_order_integrators_on_a_spring_mass_system(name):
    """Measured order 2 against the closed form x(t) = x0 cos(ωt)."""
    model, forces = _spring_mass()
    w = np.sqrt(400.0 / 2.0)
    errors, dts = [], np.array([4e-3, 2e-3, 1e-3])
    for dt in dts:
        n = int(round(1.0 / dt))
        traj = mb.Simulator(model, dt, name, forces=forces, gravity=False, q0=[0.1]).rollout(steps=n,
                                                                                            record_every=n)
        errors.append(abs(traj.q[-1, 0] - 0.1 * np.cos(w * traj.t[-1])))
    measured = np.polyfit(np.log(dts), np.log(errors), 1)[0]
    assert abs(measured - INTEGRATORS[name].order) < 0.3, measured


def test_trapezoidal_conserves_the_energy_of_a_linear_spring_mass_system():
    model, forces = _spring_mass()
    traj = mb.Simulator(model, 0.05, "trapezoidal", forces=forces, gravity=False, q0=[0.1]).rollout(steps=2000)
    E = traj.energy
    assert np.abs(E - E[0]).max() < 1e-12 * E[0]


def test_trapezoidal_is_stable_on_a_stiff_spring():
    model, forces = _spring_mass(k=1e8, b=10.0)
    traj = mb.Simulator(model, 1e-2, "trapezoidal", forces=forces, gravity=False, q0=[0.01]).rollout(steps=500)
    assert np.abs(traj.q).max() <= 0.01 + 1e-12


def test_model_joint_damping_equals_a_joint_damper_element():
    """model.damping (URDF <dynamics damping>) acts like JointDamper
    elements; joint_damping=False switches it off."""
    b = mb.ModelBuilder("damped")
    b.add_body("a", "world", "revolute", axis=(0, 1, 0), mass=1.0, com=(0, 0, -0.5), inertia=np.eye(3) * 0.01,
               damping=0.7)
    b.add_body("c", "a", "revolute", placement=(np.eye(3), (0, 0, -1.0)), axis=(0, 1, 0), mass=1.0,
               com=(0, 0, -0.5), inertia=np.eye(3) * 0.01, damping=0.3)
    damped = b.build()
    for name in ("semi_implicit_euler", "implicit_euler"):
        run = mb.Simulator(damped, 1e-3, name, q0=[0.5, -0.2]).rollout(steps=400)
        ref = mb.Simulator(damped, 1e-3, name, joint_damping=False, q0=[0.5, -0.2],
                           forces=[JointDamper("a", 0.7), JointDamper("c", 0.3)]).rollout(steps=400)
        np.testing.assert_allclose(run.q, ref.q, atol=1e-12)
        free = mb.Simulator(damped, 1e-3, name, joint_damping=False, q0=[0.5, -0.2]).rollout(steps=400)
        assert np.abs(free.q - run.q).max() > 1e-4


def test_effort_and_velocity_limits_clamp_and_are_reported():
    """Effort limits clamp τ by default, velocity limits only with
    clamp_velocity=True; the first clamp of each kind in a run is one
    SimulationWarning, and the trajectory records every clamp."""
    b = mb.ModelBuilder("limited")
    b.add_body("block", "world", "prismatic", axis=(1, 0, 0), mass=1.0, inertia=np.eye(3) * 0.1,
               effort_limit=2.0, velocity_limit=0.5)
    model = b.build()
    push = lambda t, q, v: np.array([10.0])  # noqa: E731
    with pytest.warns(mb.SimulationWarning) as record:
        default = mb.Simulator(model, 1e-2, "semi_implicit_euler", gravity=False).rollout(steps=100, controller=push)
    assert len(record) == 1 and "effort limits at step 1" in str(record[0].message)
    np.testing.assert_array_equal(default.tau[1:, 0], 2.0)       # clamped to the effort limit
    assert default.effort_clamped[1:].all() and not default.effort_clamped[0].any()
    np.testing.assert_allclose(default.v[:, 0], 2.0 * default.t, atol=1e-12)  # v = (τ_max / m) t, not clamped
    assert not default.velocity_clamped.any()
    sim = mb.Simulator(model, 1e-2, "semi_implicit_euler", gravity=False, clamp_velocity=True)
    with pytest.warns(mb.SimulationWarning) as record:
        traj = sim.rollout(steps=100, controller=push)
    first = int(np.argmax(traj.velocity_clamped[:, 0]))
    assert [str(r.message).split(" clamped")[0] for r in record] == ["joint forces", "velocities"]
    assert f"step {first}" in str(record[1].message)
    assert np.abs(traj.v).max() <= 0.5 + 1e-15               # clamped to the velocity limit
    unclamped = np.cumsum(np.full(100, 2.0 * 1e-2))  # v after k + 1 steps of 2 m/s² × 0.01 s
    assert first == int(np.argmax(unclamped > 0.5)) + 1 and traj.velocity_clamped[first:].all()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing is clamped: no warning
        free = mb.Simulator(model, 1e-2, "semi_implicit_euler", gravity=False, clamp_effort=False,
                            clamp_velocity=False).rollout(steps=100, controller=push)
    assert free.v[-1, 0] > 9.9 and not free.effort_clamped.any()


def _stiff_chain(n=5, k=1e8):
    """A chain of n links on revolute joints about y, each joint a spring of
    stiffness k (N·m/rad) with rest angle 0; no gravity, so q = 0 is the
    equilibrium."""
    b = mb.ModelBuilder("stiff_chain")
    parent = "world"
    for i in range(n):
        b.add_body(f"l{i}", parent, "revolute", placement=(np.eye(3), (0, 0, -0.3 if i else 0.0)), axis=(0, 1, 0),
                   mass=1.0, com=(0, 0, -0.15), inertia=np.diag([0.01, 0.01, 0.002]))
        parent = f"l{i}"
    model = b.build()
    return model, [JointSpring(f"l{i}", k, rest=0.0) for i in range(n)]


@pytest.mark.parametrize("name", ["implicit_euler", "trapezoidal"])
def test_stiff_chain_is_stable_with_implicit_integrators(name):
    """k = 1e8 at dt = 1e-2 (h²k/m ~ 1e4 ≫ 4): implicit Euler's energy
    decays, the trapezoidal rule's stays at its initial value (it conserves
    a linear oscillator's energy; the chain is linear near q = 0)."""
    model, springs = _stiff_chain()
    q0 = 1e-6 * np.random.default_rng(0).normal(size=model.nq)
    traj = mb.Simulator(model, 1e-2, name, forces=springs, gravity=False, q0=q0).rollout(steps=500)
    E = traj.energy
    if name == "implicit_euler":
        assert E[-1] < 0.01 * E[0] and np.all(np.diff(E) <= 1e-12 * E[0])
    else:
        assert np.abs(E / E[0] - 1).max() < 1e-3


def test_stiff_chain_semi_implicit_euler_obeys_its_bound():
    """Semi-implicit Euler on the same chain diverges at dt = 1e-2 and is
    stable just inside the bound h²λ_max < 4 (Drumwright §3.1.2 with b = 0;
    λ_max the largest eigenvalue of M⁻¹K at the equilibrium, the chain's
    highest squared natural frequency), unstable just outside."""
    from scipy.linalg import eigh
    model, springs = _stiff_chain()
    q0 = 1e-6 * np.random.default_rng(0).normal(size=model.nq)
    with pytest.raises(SimulationError, match="diverged at step"), np.errstate(all="ignore"):
        mb.Simulator(model, 1e-2, "semi_implicit_euler", forces=springs, gravity=False, q0=q0).rollout(steps=1000)
    lam_max = eigh(1e8 * np.eye(model.nv), mb.crba(model, model.neutral()), eigvals_only=True).max()
    h_max = 2.0 / np.sqrt(lam_max)
    for h, stable in ((0.98 * h_max, True), (1.02 * h_max, False)):
        traj = None
        try:
            with np.errstate(all="ignore"):
                traj = mb.Simulator(model, h, "semi_implicit_euler", forces=springs, gravity=False,
                                    q0=q0).rollout(steps=3000, record_every=10)
        except SimulationError:
            pass
        grew = traj is None or not np.all(traj.energy[-10:] < 10 * traj.energy[0])
        assert grew != stable, (h / h_max, stable)
