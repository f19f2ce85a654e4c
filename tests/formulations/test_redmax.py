"""REDMAX (formulations/redmax.py, Sueda §2–2.13) against oracles: M_r
against mb.crba and Pinocchio's crba, accelerations against mb.aba (held
to Pinocchio in tests/dynamics) and the project's closed-loop dynamics,
hybrid torques against mb.rnea and Pinocchio's rnea, J̇ against finite
differences of J, J v against the body twists of the kinematics, the
linearly implicit step against closed forms and a DOP853 reference."""
import warnings

import numpy as np
import pinocchio as pin
import pytest

import multibody as mb
from multibody.errors import InputError, NonFiniteError, SimulationError
from multibody.formulations.maximal import MaximalSystem
from multibody.formulations.redmax import HyperReducedSystem, RedmaxSystem
from oracles import ALL_JOINTS, ROBOTS, SUEDA_JOINTS, random_tree, robot_path
from dynamics.helpers import robot, sym_upper

TREES = ["tree_fixed", "tree_floating", "tree_fixed_armature", "tree_floating_armature", "tree_floating_gravity"]
RTOL = 1e-10


def rel(got, expect):
    """max |got − expect| relative to the oracle's magnitude (at least 1)."""
    return np.abs(np.asarray(got) - np.asarray(expect)).max() / max(1.0, np.abs(expect).max())


def plain(model, **kw):
    """REDMAX without the model's springs and dampers (the oracles' dynamics)."""
    return RedmaxSystem(model, joint_damping=False, joint_stiffness=False, **kw)


def state(model, seed, scale=1.0):
    rng = np.random.default_rng(seed)
    q = model.integrate(model.neutral(), rng.normal(size=model.nv) * scale)
    return q, rng.normal(size=model.nv), rng.normal(size=model.nv)


# ---------------------------------------------------------------------- M_r and accelerations vs oracles
@pytest.mark.parametrize("name", sorted(ROBOTS) + TREES)
def test_mass_matrix_and_accelerations_against_pinocchio(name):
    """M_r = JᵀM_mJ (+ armature) equals pin.crba and mb.crba; M_r⁻¹(f_r + τ),
    Kim's Alg. 9 and the O(n) f_r of Alg. 5–6 agree with mb.aba and pin.aba;
    RFD's M_r⁻¹x equals a dense solve (all 1e-10 relative)."""
    r = robot(name)
    model, pm = r.model, r.pm
    pd = pm.createData()
    system = plain(model)
    for k, (qp, q, vp, v, _, _, taup, tau, _) in enumerate(r.states(2, seed=11)):
        M = system.mass_matrix(q)
        assert rel(r.mat_to_pin(M), sym_upper(pin.crba(pm, pd, qp))) < RTOL
        assert rel(M, mb.crba(model, q)) < RTOL
        expect = pin.aba(pm, pd, qp, vp, taup).copy()
        assert rel(r.v_to_pin(system.acceleration(q, v, tau)), expect) < RTOL
        assert rel(system.acceleration(q, v, tau), mb.aba(model, q, v, tau)) < RTOL
        assert rel(r.v_to_pin(system.recursive_hybrid_dynamics(q, v, tau)[0]), expect) < RTOL
        bias = mb.rnea(model, q, v, np.zeros(model.nv))  # f_r is minus the RNEA bias
        assert rel(system.forces(q, v), -bias) < RTOL
        assert rel(system.recursive_forces(q, v), -bias) < RTOL
        X = np.random.default_rng(k).normal(size=(model.nv, 3))
        assert rel(system.inverse_inertia_times(q, X), np.linalg.solve(M, X)) < 1e-9  # cond(M)·ε
        assert rel(system.inverse_inertia_times(q, X[:, 0]), np.linalg.solve(M, X[:, 0])) < 1e-9


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("floating", [True, False])
@pytest.mark.parametrize("joints", [ALL_JOINTS, ALL_JOINTS + SUEDA_JOINTS], ids=["catalog", "with_sueda"])
def test_random_trees_with_every_joint_type(seed, floating, joints):
    """Random trees with every joint of ALL_JOINTS (universal's Ṡ ≠ 0
    included) and of Sueda's library (docs/joints.md: their S and Ṡ from
    the product-of-exponentials recursion), kept fixed bodies, floating
    and fixed base."""
    b = random_tree(seed + 40, n=2 * len(joints), floating=floating, fixed=2, joints=joints)
    model = b.build(merge_fixed=False)
    assert any(j.nv == 0 for j in model.joints[1:])  # the fixed bodies kept
    system = plain(model)
    q, v, tau = state(model, seed)
    assert rel(system.mass_matrix(q), mb.crba(model, q)) < RTOL
    a = mb.aba(model, q, v, tau)
    assert rel(system.acceleration(q, v, tau), a) < RTOL
    assert rel(system.recursive_hybrid_dynamics(q, v, tau)[0], a) < RTOL
    x = np.random.default_rng(seed).normal(size=model.nv)
    M = mb.crba(model, q)
    assert rel(system.inverse_inertia_times(q, x), np.linalg.solve(M, x)) < 1e-9


# ---------------------------------------------------------------------- the Jacobian and its products
@pytest.mark.parametrize("floating", [True, False])
def test_jacobian_products_rate_and_twists(floating):
    """J v = the body twists of MaximalSystem.state; J̇ = the central
    difference of J along model.integrate(q, v ε); Alg. 5 gives Jx and J̇x,
    Alg. 6 gives Jᵀy, equal to the dense products."""
    model = random_tree(7, n=2 * len(ALL_JOINTS), floating=floating).build()
    system = plain(model)
    q, v, x = state(model, 3)
    J, Jd = system.jacobian(q), system.jacobian_dot(q, v)
    assert J.shape == (6 * system.n, model.nv)
    constant = [j for j in ALL_JOINTS if j != "universal"]
    if floating:  # MaximalSystem takes the constant-subspace joints: compare on such a tree too
        model_c = random_tree(8, n=2 * len(constant), floating=True, joints=constant).build()
        qc, vc, _ = state(model_c, 4)
        _, V = MaximalSystem(model_c).state(qc, vc)
        assert rel((plain(model_c).jacobian(qc) @ vc).reshape(-1, 6), V) < 1e-13
    V = mb.body_motion(model, q, v)[0][1:]
    assert rel((J @ v).reshape(-1, 6), V) < 1e-13
    eps = 1e-6
    fd = (system.jacobian(model.integrate(q, v, eps)) - system.jacobian(model.integrate(q, v, -eps))) / (2 * eps)
    assert rel(Jd, fd) < 1e-7
    # J̇ v: the bias accelerations of the kinematics (body_motion with q̈ = 0)
    assert rel((Jd @ v).reshape(-1, 6), mb.body_motion(model, q, v)[1][1:]) < 1e-12
    y, z = system.jacobian_products(q, v, x)
    assert rel(y.ravel(), J @ x) < 1e-14 and rel(z.ravel(), Jd @ x) < 1e-14
    w = np.random.default_rng(1).normal(size=(system.n, 6))
    assert rel(system.jacobian_transpose_product(q, w), J.T @ w.ravel()) < 1e-14
    assert rel(system.jacobian_transpose_product(q, w.ravel()), J.T @ w.ravel()) < 1e-14


def test_alg2_erratum_matters():
    """The printed Alg. 2 line 7 (``ⁱ_pAd J(p,a)`` in place of ``ⁱ_pȦd
    J(p,a)``) fails the finite-difference check that the erratum passes."""
    model = random_tree(2, n=6, floating=False, joints=("revolute",)).build()
    system = plain(model)
    q, v, _ = state(model, 1)
    kin = system.kinematics(q, v)
    kin.Add = kin.Ad.copy()  # the typo
    eps = 1e-6
    fd = (system.jacobian(model.integrate(q, v, eps)) - system.jacobian(model.integrate(q, v, -eps))) / (2 * eps)
    assert rel(system.jacobian_dot(kin, None), fd) > 1e-2
    assert rel(system.jacobian_dot(q, v), fd) < 1e-7


# ---------------------------------------------------------------------- hybrid dynamics (§2.9, Alg. 9)
@pytest.mark.parametrize("name", ["talos", "ur5", "tree_floating_armature", "tree_fixed"])
def test_hybrid_dynamics(name):
    """All joints prescribed: the torques equal mb.rnea and pin.rnea (dense
    KKT and Kim's Alg. 9). Every other joint prescribed: the free
    accelerations and prescribed torques satisfy M v̇ + c = τ (mb.crba,
    mb.rnea), and the two methods agree."""
    r = robot(name)
    model, pm = r.model, r.pm
    pd = pm.createData()
    system = plain(model)
    qp, q, vp, v, ap, a, _, tau, _ = next(r.states(1, seed=5))
    everything = {j.name: a[j.v_slice] for j in model.joints[1:] if j.nv}
    expect = pin.rnea(pm, pd, qp, vp, ap)
    for method in (system.hybrid_dynamics, system.recursive_hybrid_dynamics):
        acc, out = method(q, v, np.zeros(model.nv), everything)
        assert np.array_equal(acc, a)
        assert rel(r.v_to_pin(out), expect) < RTOL
        assert rel(out, mb.rnea(model, q, v, a)) < RTOL
    some = {j.name: a[j.v_slice] for j in model.joints[1::2] if j.nv}
    mask = np.zeros(model.nv, bool)
    for j in model.joints[1::2]:
        mask[j.v_slice] = True
    results = [m(q, v, tau, some) for m in (system.hybrid_dynamics, system.recursive_hybrid_dynamics)]
    for acc, out in results:
        assert np.array_equal(acc[mask], a[mask]) and np.array_equal(out[~mask], tau[~mask])
        lhs = mb.crba(model, q) @ acc + mb.rnea(model, q, v, np.zeros(model.nv))
        assert rel(lhs, out) < RTOL
    assert rel(results[0][0], results[1][0]) < RTOL and rel(results[0][1], results[1][1]) < RTOL


# ---------------------------------------------------------------------- linearly implicit Euler (§2.5)
def test_step_without_springs_is_semi_implicit_euler():
    """K = D = 0: ``v⁺ = v + h M⁻¹f`` (mb.aba), ``q⁺ = integrate(q, v⁺ h)``, dense and O(n)."""
    model = random_tree(3, n=10, floating=True).build()
    system = plain(model)
    q, v, tau = state(model, 2)
    h = 1e-3
    v1 = v + h * mb.aba(model, q, v, tau)
    for method in ("dense", "recursive"):
        q_next, v_next = system.step(q, v, tau, h, method=method)
        assert rel(v_next, v1) < RTOL
        assert rel(q_next, model.integrate(q, v1, h)) < 1e-13


def spring_pendulum(k, d=0.0, m=2.0, L=0.5, gravity=False):
    """A point-like bob (mass m, tiny inertia) at L on a revolute joint about
    y, with joint stiffness k and damping d; I = m L² + 1e-4."""
    b = mb.ModelBuilder("spring_pendulum", gravity=np.array([0, 0, -9.81]) if gravity else np.zeros(3))
    b.add_body("bob", "world", "revolute", axis=(0, 1, 0), mass=m, com=(0, 0, -L), inertia=np.eye(3) * 1e-4,
               stiffness=k, damping=d, joint_name="hinge")
    return b.build(), m * L * L + 1e-4


def test_spring_period_and_damped_decay():
    """Small oscillations of the joint spring: the period is 2π√(I/k) (to
    1e-4 at h = 1e-3; backward Euler's phase error is (ωh)²/3); with
    damping d the angle follows the damped oscillator's closed form
    (to 1 % of the amplitude at h = 2e-4) and the energy never increases."""
    k = 30.0
    model, I = spring_pendulum(k)
    system = RedmaxSystem(model)
    h, q, v = 1e-3, np.array([0.01]), np.zeros(1)
    crossings, t = [], 0.0
    while len(crossings) < 4:
        q1, v1 = system.step(q, v, np.zeros(1), h)
        if q[0] < 0 <= q1[0]:
            crossings.append(t + h * (-q[0]) / (q1[0] - q[0]))
        q, v, t = q1, v1, t + h
    period = np.diff(crossings).mean()
    assert period == pytest.approx(2 * np.pi * np.sqrt(I / k), rel=1e-4)
    d = 0.5
    model, I = spring_pendulum(k, d)
    system = RedmaxSystem(model)
    h, T, theta0 = 2e-4, 1.0, 0.01
    q, v = np.array([theta0]), np.zeros(1)
    energy = [0.5 * k * theta0 ** 2]
    for _ in range(int(round(T / h))):
        q, v = system.step(q, v, np.zeros(1), h)
        energy.append(0.5 * I * v[0] ** 2 + 0.5 * k * q[0] ** 2)
    assert np.all(np.diff(energy) <= 0.0)
    w, zeta = np.sqrt(k / I), d / (2 * np.sqrt(k * I))
    wd = w * np.sqrt(1 - zeta ** 2)
    exact = theta0 * np.exp(-zeta * w * T) * (np.cos(wd * T) + zeta * w / wd * np.sin(wd * T))
    assert abs(q[0] - exact) < 1e-2 * theta0


def _chain_with_springs():
    """Four revolute links (random axes and inertias) with joint springs
    about 0.2 rad and dampers."""
    rng = np.random.default_rng(5)
    b = mb.ModelBuilder("spring_chain")
    parent = "world"
    for k, (stiff, damp) in enumerate(((20.0, 0.3), (10.0, 0.2), (5.0, 0.1), (2.0, 0.05))):
        axis = rng.normal(size=3)
        b.add_body(f"l{k}", parent, "revolute", placement=(np.eye(3), (0.0, 0.0, -0.3 if k else 0.0)),
                   axis=axis / np.linalg.norm(axis), mass=1.0, com=(0.05, 0.0, -0.15),
                   inertia=np.diag([0.01, 0.012, 0.004]), stiffness=stiff, damping=damp, spring_reference=[0.2],
                   joint_name=f"j{k}")
        parent = f"l{k}"
    return b.build()


def test_step_converges_at_first_order():
    """A spring-damper chain under gravity: the step's error at t = 0.2 s
    against DOP853 (rtol 1e-12) on mb.aba with τ = −K(q − q₀) − D v halves
    with h (first order), for the dense and the O(n) solve."""
    from scipy.integrate import solve_ivp
    model = _chain_with_springs()
    K, D, q_ref = model.stiffness, model.damping, model.spring_reference
    assert np.all(K > 0) and np.all(D > 0)
    q0, v0 = np.array([0.3, -0.2, 0.5, 0.1]), np.zeros(4)
    T = 0.2

    def rhs(_, x):
        q, v = x[:4], x[4:]
        return np.r_[v, mb.aba(model, q, v, -K * (q - q_ref) - D * v)]
    ref = solve_ivp(rhs, (0, T), np.r_[q0, v0], method="DOP853", rtol=1e-12, atol=1e-12).y[:4, -1]
    system = RedmaxSystem(model)
    for method in ("dense", "recursive"):
        errors = []
        for n in (100, 200, 400):
            q, v = q0, v0
            for _ in range(n):
                q, v = system.step(q, v, np.zeros(4), T / n, method=method)
            errors.append(np.abs(q - ref).max())
        ratios = np.array(errors[:-1]) / np.array(errors[1:])
        assert np.all((ratios > 1.8) & (ratios < 2.2)), (method, errors)


def test_acceleration_includes_the_models_springs_and_dampers():
    model = _chain_with_springs()
    q, v, tau = state(model, 6)
    expect = mb.aba(model, q, v, tau - model.stiffness * (q - model.spring_reference) - model.damping * v)
    assert rel(RedmaxSystem(model).acceleration(q, v, tau), expect) < RTOL
    M = mb.crba(model, q) + np.diag(1e-2 * model.damping + 1e-4 * model.stiffness)
    x = np.arange(1.0, 5.0)
    assert rel(RedmaxSystem(model).inverse_inertia_times(q, x, h=1e-2), np.linalg.solve(M, x)) < 1e-12


# ---------------------------------------------------------------------- hyper-reduced coordinates (§2.6)
def test_hyper_reduced_equals_the_constrained_reduced_dynamics():
    """v = T v_R (T: all angles equal, plus one free joint): M_R = TᵀM T
    (mb.crba); the accelerations equal the reduced dynamics (mb.crba,
    mb.rnea) with the rows Nᵀv = 0 (N ⟂ range T) by a KKT solve; the step
    equals the same KKT step."""
    model = random_tree(9, n=5, floating=False, joints=("revolute",)).build()
    T = np.zeros((5, 2))
    T[:4, 0] = 1.0
    T[4, 1] = 1.0
    hyper = HyperReducedSystem(plain(model), T)
    q, _, _ = state(model, 2)
    vR, tauR = np.array([0.7, -1.1]), np.array([0.3, 0.2])
    v = T @ vR
    M, c = mb.crba(model, q), mb.rnea(model, q, v, np.zeros(5))
    assert rel(hyper.mass_matrix(q), T.T @ M @ T) < RTOL
    N = np.linalg.svd(T)[0][:, 2:]  # rows Nᵀ v = 0 ⇔ v ∈ range(T)
    K = np.block([[M, -N], [N.T, np.zeros((3, 3))]])
    tau = T @ np.linalg.solve(T.T @ T, tauR)  # joint forces doing the work of τ_R: Tᵀτ = τ_R
    a = np.linalg.solve(K, np.r_[tau - c, np.zeros(3)])[:5]
    assert rel(T @ hyper.acceleration(q, vR, tauR), a) < RTOL
    h = 1e-3
    q1, vR1 = hyper.step(q, vR, tauR, h)
    assert rel(T @ vR1, v + h * a) < RTOL
    assert rel(q1, model.integrate(q, T @ vR1, h)) < 1e-14


# ---------------------------------------------------------------------- constraints (§2.8)
@pytest.mark.parametrize("rows", ["reduced", "maximal", "both"])
def test_four_bar_constrained_accelerations(rows):
    """The four-bar (revolute loop joint, 5 rows of rank 2): REDMAX's KKT
    accelerations with reduced rows G_r, maximal rows G_m J, or both stacked
    satisfy the rows (G v̇ = k of the project's constraints) to 1e-10 and
    equal ReducedSystem's closed-loop forward dynamics (no Baumgarte); the
    velocity-level step keeps G v⁺ = 0."""
    from constraints.mechanisms import four_bar
    from multibody.constraints import Constraints, project_velocity
    from multibody.formulations import ReducedSystem
    model, q = four_bar()
    C = Constraints(model)
    v = project_velocity(model, C, q, np.array([1.5, -0.4, 0.8]))
    tau = np.array([0.7, -0.3, 0.2])
    kw = {"reduced": dict(constraints=C), "maximal": dict(maximal_loops=True),
          "both": dict(constraints=C, maximal_loops=True)}[rows]
    system = plain(model, **kw)
    _, G, k = C.evaluate(q, v)
    acc, lam = system.constrained_acceleration(q, v, tau)
    assert np.abs(G @ acc - k).max() < 1e-10
    ref = ReducedSystem(model, joint_damping=False, constraints=C, baumgarte=0.0).acceleration(0.0, q, v, tau)
    assert rel(acc, ref) < 1e-10
    Gbar, _ = system.constraint_rows(q, v)
    assert Gbar.shape[0] == {"reduced": 5, "maximal": 5, "both": 10}[rows]
    # the constraint force Ḡᵀλ is what the joint forces miss: M v̇ + c − τ
    assert rel(Gbar.T @ lam, mb.crba(model, q) @ acc + mb.rnea(model, q, v, np.zeros(3)) - tau) < 1e-10
    q1, v1 = system.step(q, v, tau, 1e-3)
    assert np.abs(C.evaluate(q)[1] @ v1).max() < 1e-10


def test_mjcf_four_bar_equality_as_maximal_rows():
    """The MJCF four-bar's connect equality as maximal rows equals the
    project's closed-loop dynamics too."""
    from multibody.constraints import Constraints
    from multibody.constraints.projection import project
    from multibody.formulations import ReducedSystem
    model = mb.load_mjcf("src/multibody/data/robots/four_bar.xml")
    C = Constraints(model)
    rng = np.random.default_rng(5)
    q, v, _ = project(model, C, model.integrate(model.neutral(), 0.05 * rng.normal(size=model.nv)),
                      rng.normal(size=model.nv))
    tau = rng.normal(size=model.nv)
    acc, _ = plain(model, maximal_loops=True).constrained_acceleration(q, v, tau)
    ref = ReducedSystem(model, joint_damping=False, constraints=C, baumgarte=0.0).acceleration(0.0, q, v, tau)
    assert rel(acc, ref) < 1e-9


# ---------------------------------------------------------------------- errors
def test_bad_input_is_reported():
    model, _ = spring_pendulum(1.0)
    system = RedmaxSystem(model)
    q, v = np.zeros(1), np.zeros(1)
    with pytest.raises(InputError, match=r"q has shape \(2,\), expected \(1,\)"):
        system.acceleration(np.zeros(2), v, v)
    with pytest.raises(NonFiniteError, match="tau has a non-finite entry"):
        system.acceleration(q, v, np.array([np.nan]))
    with pytest.raises(InputError, match="time step h must be a finite number > 0"):
        system.step(q, v, v, 0.0)
    with pytest.raises(InputError, match="method must be 'dense' or 'recursive'"):
        system.step(q, v, v, 1e-3, method="magic")
    with pytest.raises(InputError, match="prescribed joint 'elbow' is not a joint of the model"):
        system.hybrid_dynamics(q, v, v, {"elbow": [0.0]})
    with pytest.raises(InputError, match=r"joint 'hinge' must have shape \(1,\)"):
        system.recursive_hybrid_dynamics(q, v, v, {"hinge": [0.0, 1.0]})
    with pytest.raises(NonFiniteError, match="joint 'hinge' is not finite"):
        system.hybrid_dynamics(q, v, v, {"hinge": [np.inf]})
    with pytest.raises(InputError, match="prescribed must be a dict"):
        system.hybrid_dynamics(q, v, v, ["hinge"])
    with pytest.raises(InputError, match=r"y must have shape \(1, 6\)"):
        system.jacobian_transpose_product(q, np.zeros(5))
    with pytest.raises(InputError, match=r"x must have shape \(1,\) or \(1, m\)"):
        system.inverse_inertia_times(q, np.zeros(3))
    with pytest.raises(InputError, match="needs the velocity v"):
        system.jacobian_dot(system.kinematics(q), None)
    with pytest.raises(InputError, match="J_rR must have shape"):
        HyperReducedSystem(system, np.ones((2, 1)))
    with pytest.raises(InputError, match="full column rank"):
        HyperReducedSystem(RedmaxSystem(random_tree(1, n=3, floating=False).build()), np.ones((3, 2)))
    from constraints.mechanisms import four_bar
    from multibody.constraints import Constraints
    fb = four_bar()[0]
    with pytest.raises(InputError, match="hyper-reduced coordinates take a system without constraints"):
        HyperReducedSystem(RedmaxSystem(fb, constraints=Constraints(fb)), np.ones((3, 1)))


def test_singular_systems_name_the_joint():
    """A massless body on a prismatic joint: M_r is singular; the dense path
    and the recursive ones name the joint."""
    b = mb.ModelBuilder()
    b.add_body("a", joint="revolute", axis=(0, 0, 1), joint_name="motor", mass=1.0, com=(0.3, 0, 0),
               inertia=np.eye(3) * 0.1)
    b.add_body("ghost", "a", "prismatic", axis=(1, 0, 0), joint_name="slide", mass=0.0, inertia=np.zeros((3, 3)),
               physical_inertia=False)
    model = b.build()
    system = plain(model)
    z = np.zeros(2)
    with pytest.raises(SimulationError, match="not positive definite \\(at joint 'slide'"):
        system.acceleration(z, z, z)
    with pytest.raises(SimulationError, match="joint 'slide'"):
        system.inverse_inertia_times(z, z)
    with pytest.raises(SimulationError, match="joint 'slide'"):
        system.recursive_hybrid_dynamics(z, z, z)


def test_couplings_refused_as_maximal_rows():
    b = mb.ModelBuilder()
    b.add_body("a", joint="revolute", joint_name="j1", mass=1.0, inertia=np.eye(3))
    b.add_body("b", parent="a", joint="revolute", joint_name="j2", mass=1.0, inertia=np.eye(3))
    b.add_coupling("j2", "j1")
    model = b.build()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        RedmaxSystem(model)
    with pytest.raises(InputError, match="not joint couplings \\(joint 'j2'\\)"):
        RedmaxSystem(model, maximal_loops=True)
