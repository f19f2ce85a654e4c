"""Derivatives of one simulator step (Simulator.step_derivatives):
against Richardson-extrapolated central differences of the simulator's
own step on the manifold (perturb with model.integrate, measure with
model.difference), against the closed form of a linear spring–mass–damper
step, against the closed form of a ball sliding on the ground (contact,
finite-difference fallback), and the refusals."""
import warnings
from dataclasses import replace

import numpy as np
import pytest

import multibody as mb
from multibody.errors import InputError
from multibody.forces import ExternalWrench, JointDamper, JointSpring
from multibody.forces.actuators import Motor, PositionServo
from multibody.model import Coupling
from multibody.simulation.step_derivatives import control_derivatives, step_derivatives_fd
from oracles import SUEDA_JOINTS, random_tree, robot_path

INTEGRATORS = ("semi_implicit_euler", "explicit_euler", "rk4", "implicit_euler")


def stepped(sim, q, v, tau):
    """(q⁺, v⁺) of sim.step from (q, v), the simulator left as it was."""
    cp = sim.checkpoint()
    try:
        sim.restore(replace(cp, q=q, v=v))
        sim.step(tau)
        return sim.state.q.copy(), sim.state.v.copy()
    finally:
        sim.restore(cp)


def step_differences(sim, q, v, tau, eps):
    """Central differences (2nv, 3nv) of sim.step along q ⊕ εe_k, v + εe_k,
    τ + εe_k; q⁺ measured by model.difference from the unperturbed q⁺."""
    model, nv = sim.model, sim.model.nv
    q1 = stepped(sim, q, v, tau)[0]
    cols = []
    for k in range(3 * nv):
        e = np.zeros(nv)
        e[k % nv] = eps
        args = [((model.integrate(q, s * e), v, tau), (q, v + s * e, tau), (q, v, tau + s * e))[k // nv]
                for s in (1.0, -1.0)]
        (qp, vp), (qm, vm) = (stepped(sim, *a) for a in args)
        cols.append(np.concatenate((model.difference(q1, qp) - model.difference(q1, qm), vp - vm)) / (2.0 * eps))
    return np.array(cols).T


def assert_matches_differences(sim, q, v, tau, eps=1e-3, rtol=1e-8):
    """The analytic derivative equals Richardson-extrapolated central
    differences (steps ε and ε/2: truncation O(ε⁴)) of the simulator's
    own step, relative to the largest entry; the nominal step is sim.step's."""
    d = sim.step_derivatives(q, v, tau)
    assert d.method == "analytic"
    q1, v1 = stepped(sim, q, v, tau)
    np.testing.assert_allclose(d.q1, q1, rtol=0, atol=1e-13)
    np.testing.assert_allclose(d.v1, v1, rtol=0, atol=1e-12)
    ref = (4.0 * step_differences(sim, q, v, tau, eps / 2) - step_differences(sim, q, v, tau, eps)) / 3.0
    J = np.hstack((d.A, d.B))
    assert J.shape == (2 * sim.model.nv, 3 * sim.model.nv)
    err = np.abs(J - ref).max() / np.abs(ref).max()
    assert err < rtol, f"{sim.integrator.name}: relative error {err:.2e}"
    return d


def double_pendulum():
    b = mb.ModelBuilder("double_pendulum")
    I = np.diag([0.01, 0.01, 0.001])
    b.add_body("l1", "world", "revolute", axis=(0, 1, 0), mass=1.0, com=(0, 0, -0.5), inertia=I, damping=0.3,
               stiffness=2.0)
    b.add_body("l2", "l1", "revolute", placement=(np.eye(3), (0, 0, -1.0)), axis=(0, 1, 0), mass=1.0,
               com=(0, 0, -0.5), inertia=I, damping=0.1, stiffness=1.0, effort_limit=5.0)
    return b.build()


@pytest.mark.parametrize("integrator", INTEGRATORS)
def test_double_pendulum_with_springs_and_dampers(integrator):
    sim = mb.Simulator(double_pendulum(), 1e-2, integrator, forces=[JointDamper("l2", 0.2)])
    assert_matches_differences(sim, np.array([0.5, -0.3]), np.array([1.0, 2.0]), np.array([0.3, -0.2]))


@pytest.mark.parametrize("integrator", INTEGRATORS)
def test_position_servo_actuator(integrator):
    """An actuator without activation dynamics is a force element with
    K and D; its control is held."""
    sim = mb.Simulator(double_pendulum(), 1e-2, integrator, actuators=[PositionServo("l2", kp=20.0, kv=1.0)])
    sim.control = [0.4]
    assert_matches_differences(sim, np.array([0.5, -0.3]), np.array([1.0, 2.0]), np.array([0.3, -0.2]))


@pytest.mark.parametrize("integrator", INTEGRATORS)
def test_lie_group_joints_on_the_tangent_space(integrator):
    """A free base with spherical, planar, universal, revolute and prismatic
    joints below it, a spring on the spherical joint (a K that varies with
    q: implicit Euler's differenced second derivatives), random state."""
    model = random_tree(3, n=5, floating=True,
                        joints=("spherical", "planar", "revolute", "universal", "prismatic")).build()
    rng = np.random.default_rng(1)
    sim = mb.Simulator(model, 2e-3, integrator, forces=[JointSpring("j0", 3.0), JointSpring("j2", 1.5)])
    q = model.random_configuration(rng)
    assert_matches_differences(sim, q, rng.normal(size=model.nv), rng.normal(size=model.nv))


@pytest.mark.parametrize("integrator", ["semi_implicit_euler", "rk4"])
def test_sueda_joints(integrator):
    """Sueda's joints (q̇ = v, plain addition on the tangent space); implicit
    Euler is refused on them by the gravity element's stiffness. A rotation
    vector beyond π after the step (the simulator's chart change) is refused."""
    model = random_tree(4, n=6, floating=False, joints=SUEDA_JOINTS, pin_compatible=False).build()
    rng = np.random.default_rng(3)
    sim = mb.Simulator(model, 2e-3, integrator, limits=False)
    q, v = model.integrate(model.neutral(), 0.3 * rng.normal(size=model.nv)), rng.normal(size=model.nv)
    assert_matches_differences(sim, q, v, rng.normal(size=model.nv))
    j = model.joints[1]
    assert j.type == "exp_spherical"
    q[j.q_slice] = [3.2, 0.0, 0.0]
    with pytest.raises(InputError, match="rotation vector of joint 'j0'"):
        sim.step_derivatives(q, v)


@pytest.mark.slow
@pytest.mark.parametrize("robot", ["ur5", "solo12"])
@pytest.mark.parametrize("integrator", INTEGRATORS)
def test_robots(robot, integrator):
    model = mb.load_urdf(robot_path(robot), floating_base=robot == "solo12")
    rng = np.random.default_rng(2)
    sim = mb.Simulator(model, 2e-3, integrator, limits=False, contact_solver=None)
    q = model.integrate(model.neutral(), 0.3 * rng.normal(size=model.nv))
    assert_matches_differences(sim, q, rng.normal(size=model.nv), rng.normal(size=model.nv))


def spring_mass_damper(m, k, c):
    b = mb.ModelBuilder("smd")
    b.add_body("block", "world", "prismatic", axis=(1, 0, 0), mass=m, inertia=np.eye(3))
    return b.build(), [JointSpring("block", k), JointDamper("block", c)]


@pytest.mark.parametrize("integrator", INTEGRATORS)
def test_linear_spring_mass_damper_closed_form(integrator):
    """x'' = (τ − kx − cx')/m: every step is linear, (A, B) in closed form."""
    m, k, c, h = 2.0, 300.0, 1.5, 0.01
    model, forces = spring_mass_damper(m, k, c)
    sim = mb.Simulator(model, h, integrator, forces=forces, gravity=False)
    d = sim.step_derivatives([0.1], [-0.4], [0.7])
    F, G = np.array([[0.0, 1.0], [-k / m, -c / m]]), np.array([[0.0], [1.0 / m]])
    if integrator == "semi_implicit_euler":
        A = np.array([[1 - h * h * k / m, h * (1 - h * c / m)], [-h * k / m, 1 - h * c / m]])
        B = np.array([[h * h / m], [h / m]])
    elif integrator == "explicit_euler":
        A, B = np.eye(2) + h * F, h * G
    elif integrator == "implicit_euler":  # (m + hc + h²k) v⁺ = m v − hkq + hτ,  q⁺ = q + h v⁺
        s = m + h * c + h * h * k
        dv = np.array([[-h * k / s, m / s]])
        A = np.vstack((np.array([[1.0, 0.0]]) + h * dv, dv))
        B = np.array([[h * h / s], [h / s]])
    else:  # RK4 on a linear ODE: the Taylor polynomial of exp(hF)
        hF = h * F
        A = np.eye(2) + hF + hF @ hF / 2 + hF @ hF @ hF / 6 + hF @ hF @ hF @ hF / 24
        B = (h * np.eye(2) + h * hF / 2 + h * hF @ hF / 6 + h * hF @ hF @ hF / 24) @ G
    np.testing.assert_allclose(d.A, A, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(d.B, B, rtol=1e-13, atol=1e-15)


def test_clamped_joint_force_has_a_zero_column():
    sim = mb.Simulator(double_pendulum(), 1e-2, "semi_implicit_euler")
    free = sim.step_derivatives([0.5, -0.3], [1.0, 2.0], [0.3, 4.0])
    clamped = sim.step_derivatives([0.5, -0.3], [1.0, 2.0], [0.3, 6.0])  # effort limit 5 on the second
    assert np.abs(free.B[:, 1]).max() > 1e-3
    assert not clamped.B[:, 1].any()
    np.testing.assert_allclose(clamped.B[:, 0], free.B[:, 0], rtol=1e-9)


def test_the_simulator_is_not_changed():
    sim = mb.Simulator(double_pendulum(), 1e-2, "rk4", q0=[0.2, 0.1])
    before = sim.checkpoint()
    d = sim.step_derivatives(tau=[0.1, 0.0])
    after = sim.checkpoint()
    assert after.t == before.t and np.array_equal(after.q, before.q) and np.array_equal(after.v, before.v)
    q1, v1 = stepped(sim, before.q, before.v, np.array([0.1, 0.0]))
    # the Python RK4 step; the simulator's fused compiled one sums in another order
    np.testing.assert_allclose(d.q1, q1, rtol=0, atol=1e-15)
    np.testing.assert_allclose(d.v1, v1, rtol=0, atol=1e-15)


def test_refusals_name_the_problem():
    model = double_pendulum()
    with pytest.raises(InputError, match="trapezoidal"):
        mb.Simulator(model, 1e-2, "trapezoidal").step_derivatives()
    with pytest.raises(InputError, match="loop-constraint"):
        mb.Simulator(model, 1e-2, constraints=[Coupling("l2", "l1", 1.0, 0.0)]).step_derivatives()
    with pytest.raises(InputError, match="redmax"):
        mb.Simulator(model, 1e-2, formulation="redmax").step_derivatives()
    with pytest.raises(InputError, match="tau has shape"):
        mb.Simulator(model, 1e-2).step_derivatives(tau=np.zeros(3))
    assert mb.Simulator(model, 1e-2).step_derivatives(tau=np.zeros((1, 2))).A.shape == (1, 4, 4)  # a batch of one
    b = mb.ModelBuilder("limited")
    b.add_body("block", "world", "prismatic", axis=(1, 0, 0), mass=1.0, inertia=np.eye(3), lower=-0.1, upper=0.1)
    sim = mb.Simulator(b.build(), 1e-2, "semi_implicit_euler", gravity=False, q0=[0.0995])
    assert sim.step_derivatives(v=[0.0]).method == "analytic"  # inside: fine
    with pytest.raises(InputError, match="position limit of joint 'block'"):
        sim.step_derivatives(v=[1.0])


def sliding_ball(mu, m, r):
    b = mb.ModelBuilder("ball")
    b.add_body("ball", joint="free", mass=m, inertia=np.eye(3) * 0.4 * m * r ** 2)
    b.add_geometry("ball", "sphere", (r,), name="ball", friction=(mu, 0.0, 0.0))
    b.add_geometry("world", "plane", name="ground", friction=(mu, 0.0, 0.0))
    return b.build()


def test_contact_finite_differences_on_a_sliding_ball():
    """A ball resting on the ground and sliding along x (Lemke's exact
    pivoting, pyramidal friction: the friction impulse is μ times the
    normal one, along −x). The normal impulse m(g h − v_z − h f_z/m) stops
    v_z; so ∂v⁺_x/∂v_z = μ, ∂v⁺_x/∂f_z = μh/m, the friction's torque
    ∂ω⁺_y/∂v_z = −μ m r/I, and v⁺_z does not depend on v_z or f_z."""
    mu, m, r, h = 0.5, 2.0, 0.1, 1e-3
    model = sliding_ball(mu, m, r)
    q = model.neutral()
    q[2] = r
    v = np.array([0.0, 0.0, 0.0, 1.0, 0.0, 0.0])   # [ω; v], body frame = world here
    sim = mb.Simulator(model, h, "semi_implicit_euler", contact_solver="lemke", friction="pyramid", q0=q, v0=v)
    d = sim.step_derivatives(fd_step=1e-6)
    assert d.method == "finite differences" and d.contacts == 1
    dvv, dvt = d.A[6:, 6:], d.B[6:]
    inertia = 0.4 * m * r * r
    for (row, col), value in {(3, 3): 1.0, (3, 5): mu, (5, 5): 0.0, (1, 5): -mu * m * r / inertia}.items():
        assert abs(dvv[row, col] - value) < 1e-7, (row, col, dvv[row, col], value)
    for (row, col), value in {(3, 3): h / m, (3, 5): mu * h / m, (5, 5): 0.0, (1, 5): -mu * h * r / inertia}.items():
        assert abs(dvt[row, col] - value) < 1e-9, (row, col, dvt[row, col], value)


@pytest.mark.parametrize("integrator", ["semi_implicit_euler", "rk4"])
def test_a_step_without_contacts_is_differentiated_analytically(integrator):
    """The ball in the air: the contact stage has no rows, the step is the
    contact-free one, and so is its derivative."""
    model = sliding_ball(0.5, 2.0, 0.1)
    q = model.neutral()
    q[2] = 1.0
    sim = mb.Simulator(model, 1e-3, integrator, contact_solver="lemke", friction="pyramid", q0=q)
    v = np.array([0.3, -0.2, 0.5, 1.0, 0.0, -0.4])
    d = assert_matches_differences(sim, q, v, np.array([0.1, 0.0, 0.0, 0.2, 0.0, 1.0]))
    assert d.contacts == 0
    with pytest.raises(InputError, match="positive"):
        step_derivatives_fd(sim, step=0.0)


def free_box():
    b = mb.ModelBuilder("box")
    b.add_body("box", joint="free", mass=1.0, inertia=np.eye(3) * 0.01)
    b.add_geometry("box", "box", (0.1, 0.1, 0.1), name="box")
    return b.build()


def settled_box():
    """A box (half-size 5 cm) that has slid 200 steps on the ground: four
    contacts, PGS warm-started by the last step (iterative: its answer
    depends on the warm start)."""
    model = free_box()
    q = model.neutral()
    q[2] = 0.0499
    sim = mb.Simulator(model, 1e-3, "semi_implicit_euler", ground=True, contact_iterations=50, q0=q,
                       v0=[0.1, 0.2, 0.0, 0.5, 0.0, 0.0])
    with warnings.catch_warnings():  # the iteration cap is the point: reported once, expected
        warnings.simplefilter("ignore", mb.errors.SimulationWarning)
        sim.rollout(steps=200)
    return sim


def assert_batch_is_sequential(sim, tau, contacts):
    """The fallback with its perturbed steps in one rollout_batch call
    (threads 2: a thread runs several members) is bitwise the one with the
    steps one after another by sim.step: the same compiled step from the
    same checkpoint (time, warm start, controls) on every member."""
    before = sim.checkpoint()
    batched = step_derivatives_fd(sim, tau=tau, threads=2)
    sequential = step_derivatives_fd(sim, tau=tau, batch=False)
    assert batched.contacts == sequential.contacts == contacts
    for name in ("A", "B", "q1", "v1"):
        assert np.array_equal(getattr(batched, name), getattr(sequential, name)), name
    q1, v1 = stepped(sim, before.q, before.v, tau)
    assert np.array_equal(batched.q1, q1) and np.array_equal(batched.v1, v1)
    after = sim.checkpoint()
    assert np.array_equal(after.q, before.q) and np.array_equal(after.v, before.v) and after.t == before.t
    for a, b in zip(after.warm_start, before.warm_start):
        assert np.array_equal(a, b)
    assert np.abs(batched.A).max() > 0.5  # not a zero matrix on both sides
    return batched


@pytest.mark.parametrize("v", [np.zeros(6), np.array([0.0, 0.0, 0.0, 1.0, 0.0, 0.0])], ids=["resting", "sliding"])
def test_batched_fallback_on_a_ball_is_the_sequential_one(v):
    model = sliding_ball(0.5, 2.0, 0.1)
    q = model.neutral()
    q[2] = 0.1
    sim = mb.Simulator(model, 1e-3, "semi_implicit_euler", contact_solver="lemke", friction="pyramid", q0=q, v0=v)
    sim.step()
    assert_batch_is_sequential(sim, np.array([0.0, 0.1, 0.0, 0.2, 0.0, 0.3]), 1)


def test_batched_fallback_on_a_box_is_the_sequential_one():
    sim = settled_box()
    assert len(sim.checkpoint().warm_start[0]) == 4
    assert_batch_is_sequential(sim, np.array([0.1, 0.0, 0.2, 0.3, 0.0, 0.1]), 4)


def test_fallback_without_a_fused_step_is_sequential():
    """RK4 with a Python force element has no fused step (rollout_batch
    refuses it): the fallback steps one after another, and the sliding
    ball's closed form (RK4 and semi-implicit Euler share the contact
    stage's impulse) still holds for ∂v⁺_x/∂v_z = μ."""
    mu, m, r = 0.5, 2.0, 0.1
    model = sliding_ball(mu, m, r)
    q = model.neutral()
    q[2] = r
    sim = mb.Simulator(model, 1e-3, "rk4", contact_solver="lemke", friction="pyramid", q0=q,
                       v0=[0.0, 0.0, 0.0, 1.0, 0.0, 0.0], forces=(ExternalWrench("ball", np.zeros(6)),))
    with pytest.raises(InputError, match="fused compiled step"):
        sim.rollout_batch(steps=1)
    d = sim.step_derivatives()
    assert d.method == "finite differences" and d.contacts == 1
    assert abs(d.A[9, 11] - mu) < 1e-7, d.A[9, 11]


def test_batched_states():
    """A leading axis of states: each is the single call's derivative
    (bitwise: the same code on the same numbers), contact and contact-free
    states mixed; the fallback's steps of all states in one batch."""
    sim = settled_box()
    s = sim.checkpoint()
    Q = np.tile(s.q, (3, 1))
    Q[1, 2] = 1.0  # in the air: analytic
    V = np.tile(s.v, (3, 1))
    V[2, 3] += 0.1
    tau = np.array([0.1, 0.0, 0.2, 0.3, 0.0, 0.1])
    d = sim.step_derivatives(Q, V, tau)
    assert d.A.shape == (3, 12, 12) and d.B.shape == (3, 12, 6) and d.q1.shape == (3, 7)
    assert d.method == ("finite differences", "analytic", "finite differences")
    assert list(d.contacts) == [4, 0, 4]
    for i in range(3):
        one = sim.step_derivatives(Q[i], V[i], tau)
        for name in ("A", "B", "q1", "v1"):
            assert np.array_equal(getattr(d, name)[i], getattr(one, name)), (i, name)
    with pytest.raises(InputError, match="common leading axis"):
        sim.step_derivatives(Q, V[:2])
    Q[1, 3:7] = 2.0  # not a unit quaternion
    with pytest.raises(InputError, match="state 1 of the batch"):
        sim.step_derivatives(Q, V)


@pytest.mark.parametrize("integrator", ["semi_implicit_euler", "implicit_euler"])
def test_control_derivatives_are_B_times_the_actuators_moment(integrator):
    """A motor (gear 2.5) and a position servo (kp 20: force kp(u − q) − kv q̇)
    on the double pendulum's joints: τ = Jᵀ f with f affine in u at fixed
    gain, so ∂(q⁺, v⁺)/∂u = B ∂τ/∂u = [2.5 B e₁, 20 B e₂] with the analytic
    B (the servo's K, D do not depend on u, so this holds for implicit Euler
    too). The differences of the step are round-off over ε off it; the
    batch is bitwise the sequential steps."""
    sim = mb.Simulator(double_pendulum(), 1e-2, integrator,
                       actuators=[Motor("l1", gear=2.5), PositionServo("l2", kp=20.0, kv=1.0)])
    q, v, tau = np.array([0.5, -0.3]), np.array([1.0, 2.0]), np.array([0.3, -0.2])
    u = np.array([0.4, -0.1])
    before = sim.checkpoint()
    Bu = control_derivatives(sim, q, v, tau, u, threads=2)
    assert np.array_equal(Bu, control_derivatives(sim, q, v, tau, u, batch=False))
    assert np.array_equal(sim.control, before.control)
    sim.control = u
    B = sim.step_derivatives(q, v, tau).B
    expected = B * np.array([2.5, 20.0])
    np.testing.assert_allclose(Bu, expected, rtol=0, atol=1e-8 * np.abs(expected).max())
    with pytest.raises(InputError, match="no actuators"):
        control_derivatives(mb.Simulator(double_pendulum(), 1e-2))
