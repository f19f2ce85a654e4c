"""The velocity-level maximal-coordinate step (formulations/maximal.py,
Sueda §1.8, eq. 1.71–1.74, §1.12) and the force models in maximal
coordinates (formulations/maximal_forces.py, Sueda §1.9 with the errata of
notes/seed-001.md §4): first-order convergence to the reduced dynamics
integrated by scipy (``solve_ivp`` on ``mb.aba`` and on the reduced
closed-loop dynamics), the stabilizations, energy behaviour, the force
wrenches against the elements' own reduced forces (``Jᵀ f_m = τ``) and
their Jacobians against central differences on SE(3)."""
import warnings

import numpy as np
import pytest
from scipy.integrate import solve_ivp

import multibody as mb
from multibody.errors import InputError, ModelError, NonFiniteError
from multibody.forces import (BodyDamping, ExternalWrench, Gravity, JointDamper, JointSpring, PointForce,
                              PointToPointSpring)
from multibody.formulations.maximal import MaximalSystem
from multibody.formulations.maximal_forces import body_wrenches
from multibody.spatial import se3
from oracles import random_tree

VECTOR_JOINTS = ("revolute", "universal", "prismatic", "helical", "cylindrical")  # q̇ = v: solve_ivp on (q, v)


def double_pendulum():
    b = mb.ModelBuilder("double_pendulum")
    b.add_body("l1", "world", "revolute", axis=(0, 1, 0), mass=1.0, com=(0.5, 0, 0), inertia=0.02 * np.eye(3))
    b.add_body("l2", "l1", "revolute", axis=(0, 1, 0), placement=(np.eye(3), (1.0, 0, 0)), mass=0.7,
               com=(0.4, 0, 0.1), inertia=np.diag([0.01, 0.02, 0.03]))
    return b.build()


def vector_tree(seed=2, n=5):
    """A random tree (fixed base) of the vector joints, universal included."""
    return random_tree(seed, n=n, floating=False, joints=VECTOR_JOINTS).build()


def reference(model, q0, v0, T, acceleration=None):
    """(q, v) at T by scipy's DOP853 at rtol 1e-11 on the reduced dynamics
    (``mb.aba`` without forces, or ``acceleration(q, v)``); vector q only."""
    nq = model.nq
    acc = acceleration or (lambda q, v: mb.aba(model, q, v, np.zeros(model.nv)))
    sol = solve_ivp(lambda t, x: np.concatenate([x[nq:], acc(x[:nq], x[nq:])]), (0, T), np.concatenate([q0, v0]),
                    method="DOP853", rtol=1e-11, atol=1e-12)
    return sol.y[:nq, -1], sol.y[nq:, -1]


def run(system, C, V, h, steps, **kw):
    tau = np.zeros(system.model.nv)
    for _ in range(steps):
        C, V = system.step(C, V, tau, h, **kw)
    return C, V


def _ratios(model, q0, v0, T, hs, make=MaximalSystem, **kw):
    system = make(model)
    CT, VT = system.state(*reference(model, q0, v0, T, kw.pop("acceleration", None)))
    errs = []
    for h in hs:
        C, V = run(system, *system.state(q0, v0), h, int(round(T / h)), **kw)
        errs.append(max(np.abs(C - CT).max(), np.abs(V - VT).max()))
    return np.array(errs), errs[0] / errs[1], errs[1] / errs[2]


@pytest.mark.parametrize("stabilization", ["post", "baumgarte", "none"])
def test_double_pendulum_converges_at_first_order(stabilization):
    model = double_pendulum()
    errs, r1, r2 = _ratios(model, np.array([0.7, -0.4]), np.array([1.0, 2.0]), 0.2, (2e-3, 1e-3, 5e-4),
                           stabilization=stabilization)
    assert 1.8 < r1 < 2.2 and 1.8 < r2 < 2.2, (errs, r1, r2)


@pytest.mark.parametrize("frames", ["body", "com"])
def test_random_tree_converges_at_first_order(frames):
    """Revolute, universal, prismatic, helical and cylindrical joints."""
    model = vector_tree()
    rng = np.random.default_rng(0)
    q0, v0 = 0.5 * rng.normal(size=model.nq), rng.normal(size=model.nv)
    errs, r1, r2 = _ratios(model, q0, v0, 0.1, (2e-3, 1e-3, 5e-4),
                           make=lambda m: MaximalSystem(m, frames=frames))
    assert 1.8 < r1 < 2.2 and 1.8 < r2 < 2.2, (errs, r1, r2)


def test_post_stabilization_keeps_the_joints_and_none_drifts():
    """1000 steps of a chain of revolute joints: with post-stabilization the
    joints hold to round-off (g and the joint points' distance ≤ 1e-10);
    without stabilization they drift (> 1e-6: the test can fail); Baumgarte
    keeps the drift small but not at round-off."""
    model = random_tree(4, n=4, floating=False, joints=("revolute",)).build()
    system = MaximalSystem(model)
    rng = np.random.default_rng(1)
    C0, V0 = system.state(0.5 * rng.normal(size=model.nq), 2.0 * rng.normal(size=model.nv))
    C, V = run(system, C0, V0, 2e-3, 1000, stabilization="post")
    assert np.abs(system.position_errors(C)).max() < 1e-10 and system.joint_errors(C).max() < 1e-10
    Cn, _ = run(system, C0, V0, 2e-3, 1000, stabilization="none")
    drift = system.joint_errors(Cn).max()
    assert drift > 1e-6
    Cb, _ = run(system, C0, V0, 2e-3, 1000, stabilization="baumgarte", baumgarte=0.2)
    assert system.joint_errors(Cb).max() < 0.1 * drift
    # with velocity projection the rows hold at the new poses too
    C1, V1 = system.step(C, V, np.zeros(model.nv), 2e-3, project_velocities=True)
    G, _ = system.constraints(C1, None)
    assert np.abs(G @ V1.ravel()).max() < 1e-10


def test_energy_of_a_conservative_chain_stays_bounded():
    """2000 steps of a 4-link pendulum chain (gravity, no damping): the
    total energy oscillates within a few percent of its start (the
    semi-implicit, symplectic-Euler-like step) with no trend; the explicit
    Euler step (pose update with the old twist) would gain energy."""
    model = random_tree(5, n=4, floating=False, joints=("revolute",)).build()
    system = MaximalSystem(model)
    C, V = system.state(np.full(model.nq, 0.8), np.zeros(model.nv))
    E = []
    tau = np.zeros(model.nv)
    for _ in range(2000):
        C, V = system.step(C, V, tau, 1e-3)
        E.append(sum(system.energy(C, V)))
    E = np.array(E)
    E0 = sum(system.energy(*system.state(np.full(model.nq, 0.8), np.zeros(model.nv))))
    scale = np.abs(E0) + np.ptp([e for e in E])
    assert np.abs(E - E0).max() < 0.05 * scale
    assert abs(E[-500:].mean() - E[:500].mean()) < 0.02 * scale


def test_four_bar_with_loop_rows():
    """The MJCF four-bar (connect equality) with loops=True: post-stabilized
    loop closure to round-off, and the motion converges at first order to
    the reduced closed-loop dynamics (Featherstone §8.5) by scipy."""
    from multibody.constraints import Constraints
    from multibody.constraints.projection import project
    from multibody.formulations import ReducedSystem
    model = mb.load_mjcf("src/multibody/data/robots/four_bar.xml")
    constraints = Constraints(model)
    q0, v0, _ = project(model, constraints, model.neutral(), np.array([2.0, 0.0, 0.0]))
    reduced = ReducedSystem(model, gravity=True, joint_damping=False, constraints=constraints, baumgarte=0.0)
    acc = lambda q, v: reduced.acceleration(0.0, q, v, np.zeros(model.nv))  # noqa: E731
    errs, r1, r2 = _ratios(model, q0, v0, 0.2, (2e-3, 1e-3, 5e-4), make=lambda m: MaximalSystem(m, loops=True),
                           acceleration=acc)
    assert 1.7 < r1 < 2.3 and 1.7 < r2 < 2.3, (errs, r1, r2)
    system = MaximalSystem(model, loops=True)
    C, V = run(system, *system.state(q0, v0), 2e-3, 300)
    assert np.abs(system.position_errors(C)).max() < 1e-10 and system.joint_errors(C).max() < 1e-10


def test_tree_elimination_equals_superlu():
    """The O(n) block elimination and SuperLU give the same step (an
    identity between two solvers of one system), with the universal joint."""
    model = random_tree(1, n=10, floating=True, joints=("revolute", "spherical", "universal", "planar"),
                        fixed=1).build()
    system = MaximalSystem(model)
    rng = np.random.default_rng(2)
    C, V = system.state(model.integrate(model.neutral(), 0.5 * rng.normal(size=model.nv)), rng.normal(size=model.nv))
    tau = rng.normal(size=model.nv)
    a = system.step(C, V, tau, 1e-3, solver="tree", stabilization="baumgarte")
    b = system.step(C, V, tau, 1e-3, solver="sparse", stabilization="baumgarte")
    assert np.abs(a[0] - b[0]).max() < 1e-12 and np.abs(a[1] - b[1]).max() < 1e-10


# ---------------------------------------------------------------- force models

def _force_model():
    model = random_tree(3, n=6, floating=True, joints=("revolute", "prismatic", "helical", "spherical")).build()
    nm = model.body_names
    jn = [j.name for j in model.joints]
    elements = [Gravity(), PointForce(nm[2], point=(0.1, 0.2, 0.3), direction=(1, 2, 3), magnitude=2.0),
                PointForce(nm[3], point=(0.1, -0.2, 0.3), direction=(1, 0, 3), magnitude=2.0,
                           direction_reference="local"),
                BodyDamping(nm[4], linear=(1, 2, 3), angular=0.5),
                PointToPointSpring(nm[2], (0.1, 0, 0.2), nm[5], (0, 0.3, 0), stiffness=30, damping=2, rest_length=0.3),
                PointToPointSpring(None, (0.1, 0, 0.2), nm[3], (0, 0.3, 0), stiffness=30, damping=2,
                                   rest_length=0.3, force_law="green"),
                PointToPointSpring(nm[6], (0.0, 0.1, 0.0), nm[4], (0.2, 0, 0), stiffness=10, force_law="strain",
                                   rest_length=0.5, damping=1.0)]
    for name in jn[2:5]:  # revolute, prismatic, helical
        elements += [JointSpring(name, 5.0, rest=[0.3]), JointDamper(name, 1.5)]
    return model, elements


@pytest.mark.parametrize("index", range(13))
def test_force_wrenches_match_the_elements_and_their_jacobians(index):
    """Per element: ``Jᵀ f_m`` equals the element's reduced τ
    (``element.evaluate``; J column by column from ``state(q, e_k)``), and
    K, D equal central differences of f_m on SE(3) (``C_k exp(±ε e_r)``) and
    in V to 1e-6 relative."""
    model, elements = _force_model()
    e = elements[index]
    system = MaximalSystem(model, gravity=False)
    rng = np.random.default_rng(1)
    q = model.integrate(model.neutral(), 0.5 * rng.normal(size=model.nv))
    v = rng.normal(size=model.nv)
    C, V = system.state(q, v)
    n = system.n
    J = np.stack([system.state(q, np.eye(model.nv)[i])[1].ravel() for i in range(model.nv)], axis=1)
    f, K, D = body_wrenches(system, [e], C, V)
    tau = e.evaluate(model, q, v)[0]
    assert np.abs(J.T @ f.ravel() - tau).max() < 1e-10 * max(1.0, np.abs(tau).max())
    Kd, Dd = np.zeros((6 * n, 6 * n)), np.zeros((6 * n, 6 * n))
    for (i, j), B in K.items():
        Kd[6 * i:6 * i + 6, 6 * j:6 * j + 6] += B
    for (i, j), B in D.items():
        Dd[6 * i:6 * i + 6, 6 * j:6 * j + 6] += B
    eps = 1e-6
    Kfd, Dfd = np.zeros_like(Kd), np.zeros_like(Dd)
    for col in range(6 * n):
        k, r = divmod(col, 6)
        xi = np.zeros(6)
        xi[r] = eps
        Cp, Cm = C.copy(), C.copy()
        Cp[k], Cm[k] = C[k] @ se3.exp(xi), C[k] @ se3.exp(-xi)
        Kfd[:, col] = (body_wrenches(system, [e], Cp, V)[0] - body_wrenches(system, [e], Cm, V)[0]).ravel() / (2 * eps)
        Vp, Vm = V.copy(), V.copy()
        Vp[k, r] += eps
        Vm[k, r] -= eps
        Dfd[:, col] = (body_wrenches(system, [e], C, Vp)[0] - body_wrenches(system, [e], C, Vm)[0]).ravel() / (2 * eps)
    assert np.abs(Kd - Kfd).max() < 1e-6 * max(1.0, np.abs(Kfd).max())
    assert np.abs(Dd - Dfd).max() < 1e-6 * max(1.0, np.abs(Dfd).max())


def _slider(k=40.0, m=0.4):
    b = mb.ModelBuilder("slider")
    b.add_body("mass", "world", "prismatic", axis=(1, 0, 0), mass=m, inertia=1e-3 * np.eye(3))
    return b.build(), PointToPointSpring(None, (0, 0, 0), "mass", (0, 0, 0), stiffness=k)


def test_mass_on_a_spring_oscillates_at_its_frequency():
    """A 0.4 kg slider on a zero-rest-length spring of 40 N/m: ω = √(k/m) =
    10 rad/s. The linearly implicit step (h = 1 ms) follows the closed form
    of its own leading-order behaviour, ``x₀ e^{−hω²t/2} cos ωt`` (the h²K
    term damps at rate hω²/2), to 0.2 % of x₀ over a period, and its zero
    crossings are π/ω apart to 1e-3 s."""
    model, spring = _slider()
    system = MaximalSystem(model, gravity=False)
    h, w, x0 = 1e-3, 10.0, 0.1
    C, V = system.state(np.array([x0]), np.zeros(1))
    xs = [x0]
    for _ in range(int(2 * np.pi / w / h)):
        C, V = system.step(C, V, np.zeros(1), h, forces=[spring])
        xs.append(C[0, 0, 3])
    t = h * np.arange(len(xs))
    assert np.abs(np.array(xs) - x0 * np.exp(-h * w * w * t / 2) * np.cos(w * t)).max() < 2e-3 * x0
    crossings = t[1:][np.diff(np.sign(xs)) != 0]
    assert abs((crossings[1] - crossings[0]) - np.pi / w) < 1e-3


def test_linearly_implicit_step_is_dissipative_and_stable():
    """The linearly implicit Euler (M − hD − h²K) with a stiff spring far
    beyond explicit stability (hω = 10): the energy never grows and decays
    (numerical damping); with BodyDamping on a pendulum the energy falls
    monotonically (to within the 1e-9 of the step's splitting)."""
    model, spring = _slider(k=4e4, m=0.04)  # ω = 1000 rad/s, h = 10 ms
    system = MaximalSystem(model, gravity=False)
    C, V = system.state(np.array([0.1]), np.zeros(1))
    E = [0.5 * 4e4 * 0.1 ** 2]
    for _ in range(50):
        C, V = system.step(C, V, np.zeros(1), 1e-2, forces=[spring])
        E.append(system.energy(C, V)[0] + 0.5 * 4e4 * C[0, 0, 3] ** 2)
    assert np.all(np.diff(E) <= 1e-12) and E[-1] < 0.5 * E[0]
    model = double_pendulum()
    system = MaximalSystem(model)
    damping = [BodyDamping("l1", linear=2.0, angular=0.2), BodyDamping("l2", linear=2.0, angular=0.2)]
    C, V = system.state(np.array([1.0, 0.5]), np.zeros(2))
    E = []
    for _ in range(300):
        C, V = system.step(C, V, np.zeros(2), 2e-3, forces=damping)
        E.append(sum(system.energy(C, V)))
    assert np.all(np.diff(E) < 1e-9) and E[-1] < E[0] - 0.1


# ---------------------------------------------------------------- bad input

def test_bad_input_is_refused_by_name():
    model = double_pendulum()
    system = MaximalSystem(model)
    C, V = system.state(np.array([0.1, 0.2]), np.zeros(2))
    tau = np.zeros(2)
    with pytest.raises(InputError, match=r"C \(the poses\) must have shape \(2, 4, 4\)"):
        system.step(C[:1], V, tau, 1e-3)
    with pytest.raises(InputError, match=r"V \(the body twists\) must have shape \(2, 6\)"):
        system.step(C, V.ravel(), tau, 1e-3)
    with pytest.raises(InputError, match=r"tau must have shape \(2,\)"):
        system.step(C, V, np.zeros(3), 1e-3)
    bad = C.copy()
    bad[1, 0, 3] = np.nan
    with pytest.raises(NonFiniteError, match="C holds a non-finite value at body 'l2'"):
        system.step(bad, V, tau, 1e-3)
    bad = V.copy()
    bad[0, 2] = np.inf
    with pytest.raises(NonFiniteError, match="V holds a non-finite value at body 'l1'"):
        system.step(C, bad, tau, 1e-3)
    with pytest.raises(NonFiniteError, match="joint 'l2'|index 1"):
        system.step(C, V, np.array([0.0, np.nan]), 1e-3)
    for h in (0.0, -1e-3, np.nan, np.inf, "1e-3", True):
        with pytest.raises(InputError, match="time step h"):
            system.step(C, V, tau, h)
    with pytest.raises(InputError, match="stabilization"):
        system.step(C, V, tau, 1e-3, stabilization="projection")
    with pytest.raises(InputError, match="baumgarte"):
        system.step(C, V, tau, 1e-3, stabilization="baumgarte", baumgarte=5.0)
    with pytest.raises(InputError, match="ExternalWrench"):
        system.step(C, V, tau, 1e-3, forces=[ExternalWrench("l1", np.ones(6))])
    with pytest.raises(ModelError, match="no joint 'nope'"):
        system.step(C, V, tau, 1e-3, forces=[JointSpring("nope", 1.0)])
    b = mb.ModelBuilder()
    b.add_body("a", joint="spherical", joint_name="ball", mass=1.0, inertia=np.eye(3))
    ball = b.build()
    s = MaximalSystem(ball)
    with pytest.raises(InputError, match="joint 'ball' is spherical"):
        s.step(*s.state(ball.neutral(), np.zeros(3)), np.zeros(3), 1e-3, forces=[JointSpring("ball", 1.0)])
    b = mb.ModelBuilder()
    b.add_body("a", joint="revolute", joint_name="motor", mass=1.0, inertia=np.eye(3), armature=0.1)
    with pytest.raises(InputError, match="'motor' has rotor inertia"):
        MaximalSystem(b.build())
    with pytest.raises(InputError, match="solver='tree'"):
        MaximalSystem(mb.load_mjcf("src/multibody/data/robots/four_bar.xml"), loops=True).step(
            *MaximalSystem(mb.load_mjcf("src/multibody/data/robots/four_bar.xml")).state(np.zeros(3), np.zeros(3)),
            np.zeros(3), 1e-3, solver="tree")
