"""BISP joint friction (formulations/bisp.py; Sueda §2.11, Alg. 8) against
oracles not written with it: REDMAX's plain step (μ = 0, pitfall 18),
closed forms of Coulomb friction on a pin, a slider and a ball carrying a
known weight (stick below the capacity, the sliding acceleration above it),
the energy of mb.kinetic_energy + mb.potential_energy against REDMAX's own
per-step energy error, and the friction bound read back from each step."""
import numpy as np
import pytest
from scipy.optimize import brentq

import multibody as mb
from multibody.errors import InputError, NonFiniteError
from multibody.formulations.bisp import BispSystem, JointFriction, bisp_step
from multibody.formulations.redmax import RedmaxSystem

G = 9.81


def rel(got, expect):
    return np.abs(np.asarray(got) - np.asarray(expect)).max() / max(1.0, np.abs(expect).max())


def single(joint, mass=2.0, inertia=(0.2, 0.3, 0.25), com=(0.0, 0.0, 0.0), **kw):
    """One body on ``joint`` to the world, gravity −z (9.81)."""
    b = mb.ModelBuilder("one")
    b.add_body("body", "world", joint, mass=mass, com=com, inertia=np.diag(inertia), **kw)
    return b.build()


def chain(types, friction=True, seed=0):
    """A hanging chain of the given joint types with springs, dampers and
    armature on every moving joint, off-axis centres of mass; the friction
    specs {name: JointFriction} for the types with a rule."""
    rng = np.random.default_rng(seed)
    b = mb.ModelBuilder("chain")
    parent, spec = "world", {}
    for i, jt in enumerate(types):
        kw = {}
        if jt in ("revolute", "helical", "prismatic", "universal"):
            a = rng.normal(size=3)
            kw["axis"] = a / np.linalg.norm(a)
        if jt == "helical":
            kw["pitch"] = 0.05
        if jt != "fixed":
            kw.update(damping=0.3, stiffness=2.0, armature=0.01)
        name = f"b{i}"
        b.add_body(name, parent, jt, placement=(np.eye(3), np.array([0.02, 0.0, -0.3 if i else 0.0])),
                   mass=1.0 + 0.3 * i, com=(0.03, -0.01, -0.12), inertia=np.diag([0.02, 0.03, 0.015]), **kw)
        if jt in ("revolute", "helical", "prismatic", "spherical", "exp_spherical"):
            spec[name] = JointFriction(0.4, radius=0.03, length=0.08)
        parent = name
    return b.build(merge_fixed=False), spec


def energy(model, q, v):
    return mb.kinetic_energy(model, q, v) + mb.potential_energy(model, q)


MIXED = ["revolute", "helical", "prismatic", "spherical", "fixed", "exp_spherical", "revolute", "universal"]


# ---------------------------------------------------------------------- μ = 0 is REDMAX (pitfall 18)
@pytest.mark.parametrize("operator", ["reduced", "maximal"])
def test_mu_zero_reproduces_redmax_step(operator):
    """With μ = 0 on every friction joint, BISP's step equals RedmaxSystem.step
    (same springs, dampers, armature, gravity) to round-off; adding the
    quadratic velocity vector again in line 26 (eq. 2.120 as printed) would
    miss it by far more: the test can fail (notes §4 typo 18)."""
    model, spec = chain(MIXED)
    system = RedmaxSystem(model)
    zero = {name: JointFriction(0.0, f.radius, f.length) for name, f in spec.items()}
    bisp = BispSystem(system, zero, operator=operator)
    rng = np.random.default_rng(3)
    h = 1e-3
    for _ in range(3):
        q = model.integrate(model.neutral(), rng.normal(size=model.nv))
        v, tau = 2 * rng.normal(size=model.nv), rng.normal(size=model.nv)
        q_r, v_r = system.step(q, v, tau, h)
        q_b, v_b = bisp.step(q, v, tau, h)
        assert rel(v_b, v_r) < 1e-12
        assert rel(q_b, q_r) < 1e-12
        assert bisp.last.converged and all((b == 0).all() for b in bisp.last.beta.values())
        # the double-counted QVV (−JᵀM_mJ̇v once more): h A⁻¹ QVV away from REDMAX
        qvv = system.forces(q, v) - system.jacobian_transpose_product(q, system.maximal_forces(q, v))
        A = system.mass_matrix(q) + np.diag(h * system.damping + h * h * system.stiffness)
        assert rel(v_b + h * np.linalg.solve(A, qvv), v_r) > 1e-6


def test_no_friction_joints_is_redmax():
    model, _ = chain(["revolute", "spherical", "prismatic"])
    system = RedmaxSystem(model)
    q = model.integrate(model.neutral(), np.full(model.nv, 0.4))
    v, tau = np.linspace(-1, 1, model.nv), np.ones(model.nv)
    q_b, v_b = bisp_step(system, q, v, tau, 2e-3, {})
    q_r, v_r = system.step(q, v, tau, 2e-3)
    assert rel(v_b, v_r) < 1e-12 and rel(q_b, q_r) < 1e-12


# ---------------------------------------------------------------------- stick / slip closed forms
MU, R, L = 0.4, 0.05, 0.1


def roll(bisp, q, v, tau, h, steps):
    out = []
    for _ in range(steps):
        q, v = bisp.step(q, v, tau, h)
        out.append((q, v, bisp.last))
    return out


@pytest.mark.parametrize("frac", [0.3, 0.95])
def test_wheel_on_horizontal_axle_sticks_below_capacity(frac):
    """A wheel (centre of mass on a horizontal axle, y) of weight m g: the
    pin's radial load is m g, the friction torque capacity μ m g r. A torque
    below it: the wheel never moves (|v| ≤ 1e-10 over 300 steps) and the
    friction torque equals the applied one."""
    m = 2.0
    model = single("revolute", mass=m, axis=(0, 1, 0))
    bisp = BispSystem(RedmaxSystem(model), {"body": JointFriction(MU, R, L)})
    tau = frac * MU * m * G * R
    h = 1e-3
    for q, v, last in roll(bisp, model.neutral(), np.zeros(1), [tau], h, 300):
        assert abs(v[0]) <= 1e-10
        assert abs(R * last.beta["body"].sum() / h - tau) <= 1e-10 * tau
        assert rel(np.linalg.norm(last.alpha["body"].reshape(2, 2), axis=1), [m * G * h / 2] * 2) < 1e-10


@pytest.mark.parametrize("frac", [1.05, 3.0])
def test_wheel_on_horizontal_axle_slides_above_capacity(frac):
    """Above the capacity the wheel accelerates at (τ − μ m g r)/I_axle: its
    reaction stays m g (the centre does not move), so the linearly implicit
    step integrates the constant acceleration exactly: v_k = k h (τ − μ m g
    r)/I to round-off, and the friction is at its bound at both ends."""
    m, I = 2.0, 0.3
    model = single("revolute", mass=m, inertia=(0.2, I, 0.25), axis=(0, 1, 0))
    bisp = BispSystem(RedmaxSystem(model), {"body": JointFriction(MU, R, L)})
    tau = frac * MU * m * G * R
    h = 1e-3
    for k, (q, v, last) in enumerate(roll(bisp, model.neutral(), np.zeros(1), [tau], h, 200), 1):
        assert rel(v, [k * h * (tau - MU * m * G * R) / I]) < 1e-10
        assert rel(last.beta["body"], [MU * m * G * h / 2] * 2) < 1e-10


def test_pendulum_first_step_against_discrete_closed_form():
    """A pendulum (centre of mass d below a horizontal axle) released from
    rest with a torque above μ m g r: in the first step the pin also
    carries the tangential force m d θ̈, so θ̈ solves I_p θ̈ = τ − μ r m
    √(g² + d²θ̈²) (I_p about the axle); found by brentq, it equals v⁺/h. Below
    the capacity the pendulum hangs still (|v| ≤ 1e-10 over 300 steps)."""
    m, d, Iyy = 1.5, 0.2, 0.02
    model = single("revolute", mass=m, inertia=(0.03, Iyy, 0.01), com=(0, 0, -d), axis=(0, 1, 0))
    system = RedmaxSystem(model)
    Ip = Iyy + m * d * d
    cap = MU * m * G * R
    tau = 4.0 * cap
    acc = brentq(lambda a: Ip * a - tau + MU * R * m * np.hypot(G, d * a), 0.0, tau / Ip, xtol=1e-15)
    h = 1e-3
    _, v1 = bisp_step(system, model.neutral(), np.zeros(1), [tau], h, {"body": JointFriction(MU, R, L)})
    assert rel(v1 / h, [acc]) < 1e-9
    assert abs(acc - (tau - cap) / Ip) > 1e-3 * acc  # the d²θ̈² term is seen
    bisp = BispSystem(system, {"body": JointFriction(MU, R, L)})
    for q, v, _ in roll(bisp, model.neutral(), np.zeros(1), [0.9 * cap], h, 300):
        assert abs(v[0]) <= 1e-10


@pytest.mark.parametrize("frac", [0.6, 2.5])
def test_horizontal_slider(frac):
    """A block of weight m g on a horizontal prismatic joint (x) pulled by a
    joint force F: it stays (|v| ≤ 1e-10) for F < μ m g and accelerates at
    (F − μ m g)/m above (exactly, step by step)."""
    m = 3.0
    model = single("prismatic", mass=m, axis=(1, 0, 0))
    bisp = BispSystem(RedmaxSystem(model), {"body": JointFriction(MU, length=L)})
    F = frac * MU * m * G
    h = 1e-3
    for k, (q, v, _) in enumerate(roll(bisp, model.neutral(), np.zeros(1), [F], h, 200), 1):
        expect = k * h * max(F - MU * m * G, 0.0) / m
        assert abs(v[0] - expect) <= 1e-10 * max(1.0, expect)


@pytest.mark.parametrize("joint", ["spherical", "exp_spherical"])
@pytest.mark.parametrize("frac", [0.7, 2.0])
def test_ball_joint(joint, frac):
    """A ball (isotropic inertia k, centre at the joint) of weight m g with a
    body-frame torque τ: below μ m g r it stays; above, its body angular
    velocity grows as k h (‖τ‖ − μ m g r) τ̂ / I_k (no gyroscopic term for an
    isotropic body; the load stays m g while it turns)."""
    m, k = 2.0, 0.05
    model = single(joint, mass=m, inertia=(k, k, k))
    system = RedmaxSystem(model)
    bisp = BispSystem(system, {"body": JointFriction(MU, radius=R)})
    direction = np.array([0.3, -0.5, 0.8]) / np.linalg.norm([0.3, -0.5, 0.8])
    cap = MU * m * G * R
    tau_body = frac * cap * direction
    h = 1e-3
    q, v = model.neutral(), np.zeros(3)
    for step in range(1, 101):
        S = system.kinematics(q).S[0][:3]
        q, v = bisp.step(q, v, S.T @ tau_body, h)  # τ conjugate to v: Sᵀ times the body torque
        omega = system.kinematics(q, v).phi[0][:3]
        expect = step * h * max(frac - 1.0, 0.0) * cap / k * direction
        assert np.abs(omega - expect).max() <= 1e-10 * max(1.0, np.abs(expect).max())
        assert abs(np.linalg.norm(bisp.last.alpha["body"]) - m * G * h) <= 1e-10 * m * G * h


# ---------------------------------------------------------------------- energy and the friction bound
def test_friction_never_adds_energy():
    """A swinging 3-link chain with friction on every pin: from each state
    of the frictional rollout, the energy gained by the BISP step
    (mb.kinetic_energy + mb.potential_energy) is at most what REDMAX's
    frictionless step from the same state gains (the integrator's own
    error), and the chain loses energy overall; |β| ≤ μ‖α‖ at every joint
    and step (the bound the QP used, and the final α's)."""
    b = mb.ModelBuilder("swing")
    parent = "world"
    for i in range(3):
        b.add_body(f"l{i}", parent, "revolute", placement=(np.eye(3), np.array([0, 0, -0.3 if i else 0.0])),
                   axis=(0, 1, 0), mass=1.0 + 0.2 * i, com=(0.01, 0.0, -0.15), inertia=np.diag([0.02, 0.025, 0.01]))
        parent = f"l{i}"
    model = b.build()
    system = RedmaxSystem(model)
    spec = {f"l{i}": JointFriction(0.3, 0.03, 0.06) for i in range(3)}
    bisp = BispSystem(system, spec)
    q = model.integrate(model.neutral(), np.array([1.2, -0.5, 0.8]))
    v = np.array([0.5, 0.0, -1.0])
    E0, h = energy(model, q, v), 2e-3
    for _ in range(200):
        e = energy(model, q, v)
        q_r, v_r = system.step(q, v, np.zeros(3), h)
        q, v = bisp.step(q, v, np.zeros(3), h)
        assert bisp.last.converged
        assert energy(model, q, v) - e <= max(energy(model, q_r, v_r) - e, 0.0) + 1e-12 * abs(E0)
        check_bound(bisp, spec)
    assert energy(model, q, v) < E0 - 0.5


def check_bound(bisp, spec):
    last = bisp.last
    for name, f in spec.items():
        c = next(c for c in bisp.contacts if c.name == name)
        for g, (nr, fr, _) in enumerate(c.groups):
            beta = np.linalg.norm(last.beta[name][fr])
            assert beta <= last.bound[name][g] * (1 + 1e-9) + 1e-15
            assert beta <= f.mu * np.linalg.norm(last.alpha[name][nr]) * (1 + 1e-8) + 1e-15  # final α: within tol


def mixed_rollout(operators, steps):
    """(model, spec, per step [(v⁺, BispSystem) per operator]) on the mixed chain."""
    model, spec = chain(MIXED)
    system = RedmaxSystem(model)
    solvers = [BispSystem(system, spec, operator=op, max_iterations=400) for op in operators]
    rng = np.random.default_rng(7)
    q = model.integrate(model.neutral(), 0.5 * rng.normal(size=model.nv))
    v = rng.normal(size=model.nv)
    tau = 0.5 * rng.normal(size=model.nv)
    for _ in range(steps):
        out = [bisp.step(q, v, tau, 2e-3) for bisp in solvers]
        yield spec, [(v1, bisp) for (_, v1), bisp in zip(out, solvers)]
        q, v = out[0]


def test_bound_on_a_mixed_chain():
    """Every rule (pin, helical pin, block, ball, exp-ball) with springs,
    dampers and armature, a fixed body and a universal joint without
    friction: the step converges and |β| ≤ μ‖α‖ at every joint and step."""
    for spec, [(_, bisp)] in mixed_rollout(["reduced"], 20):
        assert bisp.last.converged
        check_bound(bisp, spec)


@pytest.mark.slow
def test_the_two_friction_operators_agree():
    """The two friction operators (reduced T A⁻¹ Tᵀ, Sueda's literal maximal
    T M_m⁻¹ Tᵀ) reach the same velocities — the same Coulomb fixed point by
    different iterations (the maximal one needs ~160 rounds a step here)."""
    for spec, [(v1, red), (v2, mx)] in mixed_rollout(["reduced", "maximal"], 8):
        assert red.last.converged and mx.last.converged
        assert rel(v2, v1) < 1e-8
        check_bound(mx, spec)


# ---------------------------------------------------------------------- bad input
def test_bad_input_names_the_joint():
    model, spec = chain(["revolute", "universal", "prismatic"])
    system = RedmaxSystem(model)
    with pytest.raises(InputError, match="'nope'"):
        BispSystem(system, {"nope": JointFriction(0.1, 0.1, 0.1)})
    with pytest.raises(InputError, match="'b0'.*mu"):
        BispSystem(system, {"b0": JointFriction(-0.1, 0.1, 0.1)})
    with pytest.raises(NonFiniteError, match="'b0'.*mu"):
        BispSystem(system, {"b0": JointFriction(float("nan"), 0.1, 0.1)})
    with pytest.raises(NonFiniteError, match="'b2'.*length"):
        BispSystem(system, {"b2": {"mu": 0.1, "length": float("inf")}})
    with pytest.raises(InputError, match="'b0'.*radius"):
        BispSystem(system, {"b0": JointFriction(0.1, length=0.1)})
    with pytest.raises(InputError, match="'b1' is universal"):
        BispSystem(system, {"b1": JointFriction(0.1, 0.1, 0.1)})
    with pytest.raises(InputError, match="'b0'"):
        BispSystem(system, {"b0": {"mu": 0.1, "radius": 0.1, "length": 0.1, "colour": 1}})
    with pytest.raises(InputError, match="operator"):
        BispSystem(system, spec, operator="free")
    massless = mb.ModelBuilder("m")
    massless.add_body("a", "world", "revolute", axis=(0, 1, 0))
    massless.add_body("b", "a", "revolute", axis=(1, 0, 0), mass=1.0, inertia=np.eye(3) * 0.1)
    with pytest.raises(InputError, match="'a'.*positive definite"):
        BispSystem(RedmaxSystem(massless.build()), {"a": JointFriction(0.1, 0.1, 0.1)})


def test_rounds_cap_warns_and_uses_the_last_iterate():
    """The staggered rounds capped below what the mixed chain needs: a
    SimulationWarning says so (the contact solvers' default policy), the
    step is taken and reports converged = False."""
    model, spec = chain(MIXED)
    system = RedmaxSystem(model)
    bisp = BispSystem(system, spec, max_iterations=1)
    rng = np.random.default_rng(7)
    q = model.integrate(model.neutral(), 0.5 * rng.normal(size=model.nv))
    with pytest.warns(mb.SimulationWarning, match="did not converge in 1 rounds"):
        bisp.step(q, rng.normal(size=model.nv), 0.5 * rng.normal(size=model.nv), 2e-3)
    assert not bisp.last.converged
