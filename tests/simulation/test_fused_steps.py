"""The fused compiled steps (integrators/_kernels.py) against the Python
integrators they replace on the hot path (integrators/explicit.py,
implicit.py: the reference mode, themselves held to MuJoCo, closed forms
and measured orders in test_integrators.py and test_rk4_against_mujoco.py),
and the compiled rollout loop against the step loop."""
import os
import sys
import warnings

import numpy as np
import pytest

import multibody as mb
from multibody.forces import ExternalWrench, JointCoulombFriction, JointDamper, JointSpring
from oracles import robot_path
from multibody.integrators import _kernels as K

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "contact"))
from scenes import coupled_ball  # noqa: E402

ALL = ["explicit_euler", "semi_implicit_euler", "symplectic_euler", "rk4", "implicit_euler", "trapezoidal",
       "bridson_marino"]
ARM = "src/multibody/data/robots/mb_arm.urdf"


@pytest.fixture(scope="module")
def arm():
    # with its SRDF, as shipped: without it the links overlapping at the joints are in contact
    return mb.load_urdf(ARM, srdf=ARM.replace(".urdf", ".srdf"))


@pytest.fixture(scope="module")
def talos():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mb.ModelWarning)
        return mb.load_urdf(robot_path("talos"), floating_base=True)


def _pair(model, name, steps, tau, **options):
    """(fused, Python) simulators stepped ``steps`` times with the same inputs;
    without contact unless asked (the integrators are compared here: the
    arm's and Talos' links overlap at their joints without their SRDF, and
    the Python integrators take the contact stage after their step, where
    fused implicit Euler solves it through its own matrix)."""
    options.setdefault("contact_solver", None)
    a = mb.Simulator(model, 1e-3, integrator=name, **options)
    b = mb.Simulator(model, 1e-3, integrator=name, **options)
    assert a.fused is not None
    b.fused = None  # the integrator's Python step
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mb.SimulationWarning)
        for k in range(steps):
            a.step(tau[k % len(tau)])
            b.step(tau[k % len(tau)])
    return a, b


def _close(a, b, tol):
    np.testing.assert_allclose(a.state.q, b.state.q, rtol=0, atol=tol)
    np.testing.assert_allclose(a.state.v, b.state.v, rtol=0, atol=tol * 10)
    assert a.state.t == b.state.t
    np.testing.assert_array_equal(a.last_tau, b.last_tau)
    for x, y in zip(a.last_clamped, b.last_clamped):
        np.testing.assert_array_equal(x, y)


# RK4 and Bridson-Marino with a Python element take the Python step (test below)
CASES = [(name, forces) for name in ALL for forces in ("none", "springs and dampers", "python element")
         if not (forces == "python element" and name in ("rk4", "bridson_marino"))]


@pytest.mark.parametrize("name, forces", CASES)
def test_fused_step_equals_the_python_integrator_on_the_arm(arm, name, forces):
    """The arm with its URDF damping, position limits (hit: large random
    torques) and effort limits (clamped), over 300 steps: the same states
    to round-off."""
    elements = {"none": (),
                "springs and dampers": (JointSpring(arm.joints[2].name, 40.0, rest=[0.3]),
                                        JointDamper(arm.joints[4].name, 0.7)),
                "python element": (ExternalWrench(arm.body_names[-1], [0.1, -0.2, 0.3, 1.0, 2.0, -3.0]),
                                   JointCoulombFriction(arm.joints[1].name, 0.5))}[forces]
    rng = np.random.default_rng(4)
    tau = rng.normal(scale=40.0, size=(7, arm.nv))
    a, b = _pair(arm, name, 300, tau, forces=elements, q0=arm.random_configuration(seed=2) * 0.5,
                 v0=rng.normal(size=arm.nv), restitution=0.3)
    assert a.constraint_residual() == 0.0  # limits enforced at the end of every step
    _close(a, b, 1e-11)


@pytest.mark.parametrize("name", ["semi_implicit_euler", "rk4", "implicit_euler", "trapezoidal", "bridson_marino"])
def test_fused_step_equals_the_python_integrator_on_talos(talos, name):
    """Floating base (quaternion, body-frame velocity), 37 coordinates,
    gravity's exact stiffness in the implicit steps."""
    rng = np.random.default_rng(5)
    tau = rng.normal(scale=5.0, size=(3, talos.nv))
    a, b = _pair(talos, name, 40, tau, q0=talos.random_configuration(seed=5), v0=rng.normal(size=talos.nv),
                 limits=False)
    np.testing.assert_allclose(a.state.q, b.state.q, rtol=0, atol=1e-11)
    np.testing.assert_allclose(a.state.v, b.state.v, rtol=0, atol=1e-10)
    assert a.state.t == b.state.t
    np.testing.assert_array_equal(a.last_tau, b.last_tau)
    np.testing.assert_array_equal(a.last_clamped[0], b.last_clamped[0])


@pytest.mark.parametrize("name", ["implicit_euler", "trapezoidal"])
def test_fused_implicit_step_with_a_ball_joint_below_the_root(name):
    """A ball joint that is not the root joint makes gravity's K
    non-symmetric inside the tree: the velocity matrix is then factored by
    the non-symmetric tree LU (integrators/_kernels.py), not the block
    LᵀDL; the states still equal the Python integrator's."""
    b = mb.ModelBuilder()
    b.add_body("a", joint="revolute", axis=(1.0, 0.0, 0.0), mass=1.0, com=(0.0, 0.1, -0.2),
               inertia=np.diag([0.1, 0.2, 0.3]))
    b.add_body("b", parent="a", joint="spherical", placement=np.array([[1, 0, 0, 0], [0, 1, 0, 0.1], [0, 0, 1, -0.4],
                                                                       [0, 0, 0, 1.0]]),
               mass=2.0, com=(0.05, 0.0, -0.3), inertia=np.diag([0.2, 0.1, 0.15]))
    model = b.build()
    rng = np.random.default_rng(8)
    tau = rng.normal(scale=2.0, size=(3, model.nv))
    a, c = _pair(model, name, 200, tau, q0=model.random_configuration(seed=3), v0=rng.normal(size=model.nv))
    assert a.fused.ints[K.H_BLOCK] == -1
    np.testing.assert_allclose(a.state.q, c.state.q, rtol=0, atol=1e-11)
    np.testing.assert_allclose(a.state.v, c.state.v, rtol=0, atol=1e-10)


def test_python_elements_with_multi_stage_integrators_take_the_python_step(arm):
    """RK4 and Bridson–Marino evaluate the forces inside the step, where a
    Python element cannot be called: the simulator steps them in Python."""
    w = ExternalWrench(arm.body_names[-1], [0.0, 0.0, 0.0, 1.0, 0.0, 0.0])
    for name in ("rk4", "bridson_marino"):
        assert mb.Simulator(arm, 1e-3, integrator=name, forces=(w,)).fused is None
        assert mb.Simulator(arm, 1e-3, integrator=name).fused is not None



def test_symplectic_euler_reuses_the_mass_matrix_only_at_the_same_configuration(arm):
    """Symplectic Euler keeps M(q⁺) and its factor for the next step. Each
    step of ``a`` below equals, bit for bit, the first step of a fresh
    simulator from the same state: the step that reuses the kept matrices,
    a step after a reset to another configuration (not reusable), and one
    after a reset to the same q with another v (reusable: M depends on q
    only); the last one also equals the Python integrator."""
    rng = np.random.default_rng(11)
    q0, v0 = arm.random_configuration(seed=11) * 0.5, rng.normal(size=arm.nv)
    a = mb.Simulator(arm, 1e-3, integrator="symplectic_euler", q0=q0, v0=v0, limits=False, contact_solver=None)
    a.step()
    for reset in (None, (arm.random_configuration(seed=12) * 0.5, rng.normal(size=arm.nv)), "same q"):
        if reset == "same q":
            a.reset(a.state.q, rng.normal(size=arm.nv))
        elif reset is not None:
            a.reset(*reset)
        q, v = a.state.q.copy(), a.state.v.copy()
        fresh = mb.Simulator(arm, 1e-3, integrator="symplectic_euler", q0=q, v0=v, limits=False,
                             contact_solver=None)
        a.step()
        fresh.step()
        np.testing.assert_array_equal(a.state.q, fresh.state.q)
        np.testing.assert_array_equal(a.state.v, fresh.state.v)
    b = mb.Simulator(arm, 1e-3, integrator="symplectic_euler", q0=q, v0=v, limits=False, contact_solver=None)
    b.fused = None  # the integrator's Python step
    b.step()
    np.testing.assert_allclose(a.state.q, b.state.q, rtol=0, atol=1e-13)
    np.testing.assert_allclose(a.state.v, b.state.v, rtol=0, atol=1e-11)


@pytest.mark.parametrize("name", ALL)
def test_compiled_rollout_is_bitwise_the_step_loop(arm, name):
    """rollout() without a controller (one compiled loop) and a loop of
    step() give identical samples, forces and clamp masks; the derived
    energies equal Simulator.energy at each sample."""
    q0 = arm.random_configuration(seed=7) * 0.8
    v0 = np.random.default_rng(7).normal(scale=3.0, size=arm.nv)
    a = mb.Simulator(arm, 1e-3, integrator=name, q0=q0, v0=v0, clamp_velocity=True, restitution=0.5)
    b = mb.Simulator(arm, 1e-3, integrator=name, q0=q0, v0=v0, clamp_velocity=True, restitution=0.5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mb.SimulationWarning)
        tr = a.rollout(steps=120, record_every=3)
        qs, vs, cl = [b.state.q], [b.state.v], [np.zeros((2, arm.nv), bool)]
        for k in range(120):
            b.step()
            if (k + 1) % 3 == 0:
                qs.append(b.state.q)
                vs.append(b.state.v)
                cl.append(np.array(b.last_clamped))
    np.testing.assert_array_equal(tr.q, qs)
    np.testing.assert_array_equal(tr.v, vs)
    np.testing.assert_array_equal(tr.velocity_clamped, np.array(cl)[:, 1])
    assert tr.velocity_clamped.any()  # the run did clamp: the masks were compared on something
    np.testing.assert_array_equal(a.state.q, b.state.q)
    assert a.state.t == b.state.t and tr.t[-1] == b.state.t and len(tr.t) == 41
    for i in (0, 17, 40):
        T, V = b.energy(tr.q[i], tr.v[i])
        assert tr.kinetic[i] == pytest.approx(T, rel=1e-14, abs=1e-14)
        assert tr.potential[i] == pytest.approx(V, rel=1e-14, abs=1e-14)


def test_compiled_rollout_reports_the_first_clamp_once(arm):
    """The compiled loop stops after the first clamping step of a run to
    warn (once per kind), then goes on; every clamp is in the recording."""
    sim = mb.Simulator(arm, 1e-3, integrator="rk4", v0=np.full(arm.nv, 50.0), clamp_velocity=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tr = sim.rollout(steps=50)
    found = [w for w in caught if issubclass(w.category, mb.SimulationWarning)]
    assert len(found) == 1 and "velocities clamped" in str(found[0].message) and "step 1 " in str(found[0].message)
    assert tr.velocity_clamped[1:].any(axis=1).all()
    assert np.all(np.abs(tr.v[1:]) <= arm.velocity_limit + 1e-12)


def test_trajectory_derived_quantities_are_lazy_and_pickle(arm, tmp_path):
    import pickle
    sim = mb.Simulator(arm, 1e-3, integrator="implicit_euler", v0=np.ones(arm.nv))
    tr = sim.rollout(steps=20)
    assert "kinetic" not in tr.__dict__  # nothing derived yet
    tr2 = pickle.loads(pickle.dumps(tr))
    np.testing.assert_array_equal(tr2.energy, tr.energy)
    labels, P = tr.power_labels, tr.power
    assert labels == ("tau", "joint damping") and P.shape == (21, 2)
    np.testing.assert_allclose(P[:, 1], -np.einsum("ij,ij->i", arm.damping * tr.v, tr.v), rtol=1e-15)
    tr.save(tmp_path / "t.npz")
    np.testing.assert_array_equal(mb.Trajectory.load(tmp_path / "t.npz").kinetic, tr.kinetic)


def test_a_failing_step_in_the_compiled_rollout_is_named(arm):
    """A step the fused kernel cannot take is re-run on the checked path,
    which names it; the state stays at its start."""
    sim = mb.Simulator(arm, 1.0, integrator="explicit_euler", v0=np.full(arm.nv, 1e150), clamp_effort=False,
                       limits=False)
    with pytest.raises(mb.SimulationError, match=r"step \d+ \(t = "):
        sim.rollout(steps=100)
    assert np.isfinite(sim.state.q).all() and np.isfinite(sim.state.v).all()


@pytest.mark.parametrize("robot", ["four_bar", "delta"])
@pytest.mark.parametrize("name", ["explicit_euler", "semi_implicit_euler", "rk4"])
def test_fused_constrained_steps_equal_the_python_integrator(robot, name):
    """Hard loop constraints in the fused step (closed-loop accelerations,
    the KKT velocity step, the post-stabilization): the Python path's
    states; the loops stay closed."""
    model = mb.load_mjcf(f"src/multibody/data/robots/{robot}.xml")
    rng = np.random.default_rng(6)
    tau = rng.normal(scale=0.05, size=(1, model.nv))
    a, b = _pair(model, name, 60, tau)  # explicit Euler leaves the delta's loops by step ~100
    _close(a, b, 1e-12)
    assert a.constraint_residual() < 1e-12


def bare_four_bar():
    """A planar four-bar without geometry (contact_solver="drumwright" then
    has no contact stage): crank 1 m, coupler 1.2 m, rocker 1 m, 1 kg
    each, closed by a revolute loop joint whose five rows hold two
    independent ones (the others are zero rows: GM⁻¹Gᵀ is singular). q0
    closes the loop."""
    b = mb.ModelBuilder(gravity=(0.0, 0.0, -9.81))
    inertia = np.diag([0.01, 0.1, 0.1])
    pose = np.eye(4)
    b.add_body("crank", joint="revolute", axis=(0, 1, 0), mass=1.0, com=(0.5, 0, 0), inertia=inertia)
    pose[0, 3] = 1.0
    b.add_body("coupler", parent="crank", joint="revolute", placement=pose.copy(), axis=(0, 1, 0), mass=1.0,
               com=(0.6, 0, 0), inertia=inertia)
    pose[0, 3] = 1.2
    b.add_body("rocker", parent="coupler", joint="revolute", placement=pose.copy(), axis=(0, 1, 0), mass=1.0,
               com=(0.5, 0, 0), inertia=inertia)
    tip, pivot = np.eye(4), np.eye(4)
    tip[0, 3], pivot[0, 3] = 1.0, 1.2
    b.add_loop_joint("rocker", "world", "revolute", placement_a=tip, placement_b=pivot, axis=(0, 1, 0))
    return b.build(), np.array([-np.pi / 2, np.pi / 2, np.pi / 2])


@pytest.mark.parametrize("robot,law", [("bare_four_bar", "artisynth"), ("delta", "artisynth"),
                                       ("bare_four_bar", "drumwright"), ("bare_four_bar", "drumwright_gdot")])
def test_fused_soft_constraints_equal_the_python_step(robot, law):
    """Soft loops in the fused semi-implicit Euler step (the regularized
    KKT step by its Schur complement, constraints/_kernels.soft_sie_step):
    the Python path's states (ReducedSystem.velocity_solve, the KKT matrix
    by LU) — ArtiSynth's law, Drumwright's without and with the Ġv terms
    (M̂ by SVD in both, NumPy's and LAPACK's through Numba). (Drumwright's
    law comes with contact_solver="drumwright": on the delta, whose
    geometry makes a contact stage, loops and contacts take the Python step.)"""
    if robot == "delta":
        model, q0 = mb.load_mjcf("src/multibody/data/robots/delta.xml"), None
    else:
        model, q0 = bare_four_bar()
    rng = np.random.default_rng(7)
    tau = rng.normal(scale=0.05, size=(1, model.nv))
    if law == "artisynth":
        options = dict(compliance=1e-6, constraint_damping=1e-3)
    else:
        options = dict(contact_solver="drumwright", contact_model=mb.Compliance(
            loop_stiffness=1e6, loop_damping=10.0, gdot=law == "drumwright_gdot"))
    a, b = _pair(model, "semi_implicit_euler", 60, tau, q0=q0, **options)
    assert a.contact is None and a.system.soft and a.system.constraint_law == law[:10]
    assert a.system.gdot == (law == "drumwright_gdot")
    scale = max(1.0, np.abs(b.state.v).max())  # the same round-off, relative to the speeds reached
    _close(a, b, 1e-11 * scale)
    assert 1e-9 < a.constraint_residual() < 1e-2  # soft: the loops give a little
    assert 1e-9 < a.constraint_residual() < 1e-3  # soft: the loops give a little


@pytest.mark.parametrize("case", ["rigid", "drumwright", "delta_drumwright"])
def test_fused_loops_with_contacts_equal_the_python_step(case):
    """Loops and contacts in one problem in the fused semi-implicit Euler
    step (the loops' T = M⁻¹Gᵀ(GM⁻¹Gᵀ + cfm·I)⁺G computed in the step,
    constraints/_kernels.loop_projector) against the Python step (NumPy's
    KKT solve, then the compiled contact stage with ContactTable.hold_loops):
    a sphere sliding on the ground with x coupled to z, hard coupling and
    rigid contact (then the post-stabilization) or Drumwright's compliant
    rows; the delta robot's loops under Drumwright's law with the contacts
    of its platform and forearms on a ground it falls onto."""
    if case == "delta_drumwright":
        model = mb.load_mjcf("src/multibody/data/robots/delta.xml").with_ground(height=-0.42)  # reached at ~45 ms
        q0, v0 = None, None
    else:
        model = coupled_ball()
        q0, v0 = np.array([0.5 * 0.0999 + 0.1, 0.0, 0.0999]), np.array([0.3, -0.2, -0.1])
    if case == "rigid":
        options = dict(contact_solver="pgs")
    else:
        options = dict(contact_solver="drumwright", contact_model=mb.Compliance(
            stiffness=1e6, damping=100.0, friction_damping=1e4, loop_stiffness=1e5, loop_damping=10.0))
    # PGS to round-off: at its default tolerance (1e-8 m/s) the two paths' rounding stops it at different sweeps
    options["contact_tolerance"] = 1e-14
    # no joint forces on the delta: its forearms' spherical joints spin up to 200 rad/s about their axes
    tau = np.random.default_rng(8).normal(scale=0.05, size=model.nv) * (case != "delta_drumwright")
    a = mb.Simulator(model, 1e-3, integrator="semi_implicit_euler", q0=q0, v0=v0, **options)
    b = mb.Simulator(model, 1e-3, integrator="semi_implicit_euler", q0=q0, v0=v0, **options)
    assert a.fused is not None
    b.fused = None
    # step by step from the same state: the delta's soft motion doubles a difference every few steps
    # (a 3e-13 m/s change of its start grows to 1e-8 within 50 steps), so runs side by side only agree
    # to the sensitivity of the motion
    contacts = 0
    for _ in range(80):
        b.reset(a.state.q, a.state.v)
        a.step(tau)
        b.step(tau)
        scale = max(1.0, np.abs(b.state.v).max())
        np.testing.assert_allclose(a.state.q, b.state.q, rtol=0, atol=1e-14 * scale)
        np.testing.assert_allclose(a.state.v, b.state.v, rtol=0, atol=1e-12 * scale)
        contacts += a.contact.count
    assert contacts > 0


def test_soft_constraints_and_implicit_constrained_steps_take_the_python_step():
    model = mb.load_mjcf("src/multibody/data/robots/four_bar.xml")
    assert mb.Simulator(model, 1e-3, "rk4", compliance=1e-6).fused is None
    assert mb.Simulator(model, 1e-3, "implicit_euler").fused is None
    assert mb.Simulator(model, 1e-3, "rk4", loop_method="kkt").fused is None
