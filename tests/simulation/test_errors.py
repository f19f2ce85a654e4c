"""Every mistake a user can make with the simulator is a library error with
context, raised before the state changes (issue 10): τ of the wrong shape
(a batch (1, nv) once gave a wrong step, (0, nv) read past the buffer),
controllers returning the wrong thing, bad arguments, force elements naming
joints that do not exist, and non-finite results from finite inputs."""
import math
import re
import warnings

import numpy as np
import pytest

import multibody as mb
from multibody.errors import InputError, ModelError, NonFiniteError, SimulationError
from multibody.forces import ExternalWrench, ForceElement, JointSpring, PointToPointSpring
from multibody.integrators import INTEGRATORS, Integrator

G = 9.81
DT = 1e-3


def double_pendulum(effort=None):
    b = mb.ModelBuilder("double_pendulum")
    I = np.diag([0.01, 0.01, 0.001])
    kw = {} if effort is None else dict(effort_limit=effort)
    b.add_body("l1", "world", "revolute", axis=(0, 1, 0), mass=1.0, com=(0, 0, -0.5), inertia=I, **kw)
    b.add_body("l2", "l1", "revolute", placement=(np.eye(3), (0, 0, -1.0)), axis=(0, 1, 0), mass=1.0,
               com=(0, 0, -0.5), inertia=I, **kw)
    return b.build()


MODEL = double_pendulum()
Q0 = np.array([0.3, -0.2])


def fresh(integrator="semi_implicit_euler", **kw):
    return mb.Simulator(MODEL, DT, integrator, q0=Q0, **kw)


def stepped(n, integrator="semi_implicit_euler", tau=(0.1, -0.2), **kw):
    sim = fresh(integrator, **kw)
    for _ in range(n):
        sim.step(np.array(tau))
    return sim


def assert_same_state(a, b):
    assert a.state.t == b.state.t
    np.testing.assert_array_equal(a.state.q, b.state.q)
    np.testing.assert_array_equal(a.state.v, b.state.v)


# --------------------------------------------------------------------- τ into step

BAD_TAU = {
    "batch of one": np.full((1, 2), 1e-3),
    "empty batch": np.ones((0, 2)),
    "empty": np.array([]),
    "too long": np.zeros(3),
    "scalar": 0.5,
    "matrix": np.zeros((2, 2)),
    "complex": np.array([1.0 + 1e-3j, 0.0]),
    "complex, real-valued": np.array([1.0 + 0j, 0.0]),
    "nan": np.array([np.nan, 0.0]),
    "inf": np.array([0.0, -np.inf]),
    "dict": {"l1": 1.0},
    "string": "12",
    "bytes": b"12",
    "ragged": [[1.0], [2.0, 3.0]],
    "object array": np.array([1.0, None], dtype=object),
    "booleans": np.array([True, False]),
    "none inside": [1.0, None],
    "strings inside": ["1", "2"],
}


# symplectic Euler is the slowest: one case for it
STEP_CASES = [(i, c) for i in sorted(INTEGRATORS) for c in sorted(BAD_TAU)
              if i != "symplectic_euler" or c in ("batch of one", "empty batch")]


@pytest.mark.parametrize("integrator,case", STEP_CASES)
def test_step_refuses_anything_but_one_tau_vector_before_moving(integrator, case):
    """A bad τ is an InputError naming tau, the step and the time; the state
    is untouched and the next good step is exactly the step of a simulator
    that never saw the bad τ. No ComplexWarning: complex input is an error."""
    sim, ref = stepped(3, integrator), stepped(3, integrator)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(InputError, match=r"tau at step 4 \(t = 0\.003 s\)"):
            sim.step(BAD_TAU[case])
    assert_same_state(sim, ref)
    sim.step([0.1, -0.2])
    ref.step([0.1, -0.2])
    assert_same_state(sim, ref)
    assert sim.state.t == pytest.approx(4 * DT, abs=1e-15)


def test_batch_tau_of_one_was_a_wrong_step_and_now_is_refused_but_a_vector_still_works():
    """The measured symptom: τ = (1, nv) went into the compiled step typed for
    one vector. The same numbers as a vector give the step of the closed
    form v⁺ = v + h M⁻¹(τ − C) (first step from rest)."""
    sim = mb.Simulator(MODEL, DT, q0=Q0)
    with pytest.raises(InputError, match=r"shape \(1, 2\), expected \(2,\)"):
        sim.step(np.full((1, 2), 2e-3))
    tau = np.full(2, 2e-3)
    M = mb.crba(MODEL, Q0)
    C = mb.rnea(MODEL, Q0, np.zeros(2), np.zeros(2))
    expected_v = DT * np.linalg.solve(M, tau - C)
    np.testing.assert_allclose(sim.step(tau).v, expected_v, rtol=1e-12, atol=1e-15)


def test_tau_is_copied_so_a_reused_buffer_cannot_change_the_recording():
    buf = np.array([0.1, 0.2])

    def controller(t, q, v):
        buf[:] = [t, -t]  # the same array every call
        return buf

    traj = fresh().rollout(steps=5, controller=controller)
    np.testing.assert_array_equal(traj.tau[1:, 0], traj.t[:-1])  # each row the τ of its own step


def test_controller_arguments_are_copies():
    """A controller writing into q and v cannot change the state."""
    def vandal(t, q, v):
        q[:] = 100.0
        v[:] = 100.0
        return np.zeros(2)

    a = fresh().rollout(steps=5, controller=vandal)
    b = fresh().rollout(steps=5)
    np.testing.assert_array_equal(a.q, b.q)
    np.testing.assert_array_equal(a.v, b.v)


@pytest.mark.parametrize("case", sorted(BAD_TAU))
def test_a_controller_returning_a_bad_tau_stops_before_the_state_advances(case):
    """The third call returns a bad τ: InputError naming the controller's
    tau, step 3 and t = 0.002 s; the state is the one after two steps."""
    calls = []

    def controller(t, q, v):
        calls.append(t)
        return BAD_TAU[case] if len(calls) == 3 else np.array([0.1, -0.2])

    sim, ref = fresh(), stepped(2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(InputError, match=r"the controller's tau at step 3 \(t = 0\.002 s\)"):
            sim.rollout(steps=10, controller=controller)
    assert len(calls) == 3
    assert_same_state(sim, ref)


@pytest.mark.parametrize("integrator", ["semi_implicit_euler", "rk4", "implicit_euler"])
def test_bad_tau_is_refused_with_effort_limits_too(integrator):
    """With effort limits τ is clipped: the clipping must not see a batch."""
    model = double_pendulum(effort=5.0)
    sim = mb.Simulator(model, DT, integrator)
    for bad in (np.ones((1, 2)) * 10, np.ones((0, 2)), np.array([np.nan, 1.0])):
        with pytest.raises(InputError, match="tau at step 1"):
            sim.step(bad)
    with pytest.warns(mb.SimulationWarning, match="effort limits at step 1"):
        sim.step([10.0, -10.0])
    assert sim.last_clamped[0].all() and np.array_equal(sim.last_tau, [5.0, -5.0])


# --------------------------------------------------------------------- arguments

@pytest.mark.parametrize("kwargs,match", [
    (dict(dt="0.001"), r"dt \(the time step, s\) must be a real number, got '0.001'"),
    (dict(dt=None), "dt .*must be a real number"),
    (dict(dt=np.nan), "dt must be a positive number of seconds, got nan"),
    (dict(dt=np.inf), "dt must be a positive number of seconds, got inf"),
    (dict(dt=-1e-3), "dt must be a positive number of seconds"),
    (dict(dt=0), "dt must be a positive number of seconds"),
    (dict(dt=True), "dt .*must be a real number"),
    (dict(dt=1e-3 + 0j), "dt .*must be a real number"),
    (dict(dt=np.array([1e-3])), "dt .*must be a real number"),
    (dict(restitution=np.nan), r"restitution must be in \[0, 1\], got nan"),
    (dict(restitution="0.5"), "restitution must be a real number"),
    (dict(restitution=1.5), r"restitution must be in \[0, 1\]"),
    (dict(restitution_threshold=np.nan), "restitution_threshold must be a finite number >= 0"),
    (dict(restitution_threshold=-1.0), "restitution_threshold must be a finite number >= 0"),
    (dict(compliance="soft"), "compliance must be a real number"),
    (dict(baumgarte=np.nan), "baumgarte must be a finite number"),
    (dict(q0=[0.1, 0.2, 0.3]), r"q has shape \(3,\), expected \(2,\)"),
    (dict(q0=[[0.1, 0.2]]), r"q has shape \(1, 2\), expected \(2,\)"),
    (dict(q0=[np.nan, 0.0]), "q has a non-finite entry at index 0"),
    (dict(q0={"l1": 0.1}), "q must be an array of real numbers, got a dict"),
    (dict(q0=[0.1 + 1j, 0.0]), "q has complex values"),
    (dict(v0=[np.inf, 0.0]), "v has a non-finite entry at index 0"),
    (dict(v0=np.zeros((0, 2))), r"v has shape \(0, 2\)"),
    (dict(v0="fast"), "v must be an array of real numbers, got a str"),
    (dict(integrator="leapfrog"), "unknown integrator 'leapfrog'"),
    (dict(integrator=3), "integrator must be a name or an Integrator"),
    (dict(forces="spring"), "forces must be a list of force elements"),
    (dict(forces=[JointSpring("l1", 1.0), 3]), r"forces\[1\] = 3 is not a ForceElement"),
    (dict(constraints=3), "constraints must be True, False, a Constraints or a list"),
])
def test_bad_simulator_arguments(kwargs, match):
    args = dict(dt=DT)
    args.update(kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(InputError, match=match):
            mb.Simulator(MODEL, **args)


@pytest.mark.parametrize("model", ["robot.urdf", None, MODEL.tree])
def test_the_model_must_be_a_model(model):
    with pytest.raises(InputError, match="Simulator needs a multibody Model"):
        mb.Simulator(model, DT)


@pytest.mark.parametrize("kwargs,match", [
    (dict(duration=np.nan), "duration must be a finite number of seconds >= 0, got nan"),
    (dict(duration=np.inf), "duration must be a finite number of seconds >= 0"),
    (dict(duration=-1.0), "duration must be a finite number of seconds >= 0"),
    (dict(duration="1"), r"duration \(s\) must be a real number"),
    (dict(steps=1.5), "steps must be an integer, got 1.5"),
    (dict(steps=-1), "steps must be >= 0, got -1"),
    (dict(steps="3"), "steps must be an integer, got '3'"),
    (dict(steps=np.nan), "steps must be an integer"),
    (dict(steps=True), "steps must be an integer"),
    (dict(steps=3, record_every=0), "record_every must be >= 1, got 0"),
    (dict(steps=3, record_every=1.5), "record_every must be an integer, got 1.5"),
    (dict(steps=3, record_every="a"), "record_every must be an integer"),
    (dict(steps=3, controller=42), "controller must be a function"),
    (dict(), "give exactly one of duration and steps"),
    (dict(duration=1.0, steps=3), "give exactly one of duration and steps"),
])
def test_bad_rollout_arguments(kwargs, match):
    sim = fresh()
    with pytest.raises(InputError, match=match):
        sim.rollout(**kwargs)
    assert sim.state.t == 0.0


def test_integral_step_counts_given_as_floats_are_accepted():
    traj = fresh().rollout(steps=4.0, record_every=2.0)
    np.testing.assert_allclose(traj.t, [0.0, 2 * DT, 4 * DT], atol=1e-15)
    assert len(fresh().rollout(duration=np.float64(0.005)).t) == 6
    assert len(fresh().rollout(steps=np.int64(3)).t) == 4


@pytest.mark.parametrize("call,match", [
    (lambda s: s.reset(t=np.nan), r"t \(the start time, s\) must be finite"),
    (lambda s: s.reset(t="0"), r"t \(the start time, s\) must be a real number"),
    (lambda s: s.reset(q=np.zeros((1, 2))), r"q has shape \(1, 2\)"),
    (lambda s: s.energy(q=np.zeros((3, 2))), r"q has shape \(3, 2\)"),
    (lambda s: s.energy(v=[0.0, np.nan]), "v has a non-finite entry at index 1"),
    (lambda s: s.power(np.zeros((1, 2))), r"tau has shape \(1, 2\)"),
    (lambda s: s.power([1j, 0.0]), "tau has complex values"),
    (lambda s: s.constraint_residual(q="x"), "q must be an array of real numbers"),
])
def test_bad_arguments_of_the_other_methods(call, match):
    sim = fresh()
    with pytest.raises(InputError, match=match):
        call(sim)


# --------------------------------------------------------------------- force elements

@pytest.mark.parametrize("element,match", [
    (JointSpring("nope", 1.0), r"JointSpring\('nope'\): model 'double_pendulum' has no joint 'nope'"),
    (JointSpring(7, 1.0), "joint index 7 out of range"),
    (JointSpring("l1", [1.0, 2.0]), "stiffness must be a scalar or 1 values"),
    (ExternalWrench("nowhere", np.zeros(6)), "has no frame 'nowhere'"),
    (PointToPointSpring("l1", [0, 0, 0], "missing", [0, 0, 0], 1.0), "has no frame 'missing'"),
])
def test_force_elements_are_checked_against_the_model_when_the_simulator_is_built(element, match):
    """A misnamed joint or frame is a ModelError from the constructor naming
    the element and its position, not "the integration diverged" at step 1."""
    with pytest.raises(ModelError, match=r"forces\[1\]: .*" + match) as err:
        mb.Simulator(MODEL, DT, forces=[JointSpring("l2", 1.0), element])
    assert repr(element) in str(err.value)
    assert not isinstance(err.value, SimulationError)


def test_a_single_force_element_is_accepted_as_a_list_of_one():
    spring = JointSpring("l1", 50.0, rest=0.0)
    a = mb.Simulator(MODEL, DT, forces=spring, q0=Q0).rollout(steps=20)
    b = mb.Simulator(MODEL, DT, forces=[spring], q0=Q0).rollout(steps=20)
    np.testing.assert_array_equal(a.q, b.q)


class _Faulty(ForceElement):
    """τ = 0 until ``t_bad``, then ``value`` (a non-finite or a wrong shape)."""

    def __init__(self, t_bad, value):
        super().__init__("faulty")
        self.t_bad, self.value = t_bad, value

    def _evaluate(self, st, b, jacobians):
        nv = st.model.nv
        tau = np.zeros(nv) if st.t < self.t_bad - 1e-12 else np.array(self.value, dtype=float)
        return tau, (np.zeros((nv, nv)) if jacobians else None), (np.zeros((nv, nv)) if jacobians else None)


# the step in which each integrator first evaluates the forces at t >= 3.5 ms: at the start of
# the step (t_k = (k - 1) dt) or, for rk4 and rkmk4 (t + dt/2, t + dt) and bridson_marino (t + dt),
# later in it
FIRST_STEP_SEEING = {name: 5 for name in INTEGRATORS}
FIRST_STEP_SEEING.update(rk4=4, rkmk4=4, bridson_marino=4)


@pytest.mark.parametrize("integrator", sorted(INTEGRATORS))
def test_a_force_element_turning_non_finite_is_named_with_the_step_and_time(integrator):
    """Every integrator path ends in a finiteness check: the error names the
    step, the time and the element, and the state stays at the start of
    the failing step."""
    k = FIRST_STEP_SEEING[integrator]
    sim = fresh(integrator, forces=[JointSpring("l1", 1.0), _Faulty(3.5 * DT, [0.0, np.nan])])
    # the same elements, the faulty one never faulting: the same code path (a Python element keeps
    # RK4 and Bridson-Marino off the fused step), so the states must agree bitwise
    ref = fresh(integrator, forces=[JointSpring("l1", 1.0), _Faulty(np.inf, [0.0, np.nan])])
    for _ in range(k - 1):
        sim.step()
        ref.step()
    with np.errstate(all="ignore"), pytest.raises(SimulationError) as err:
        sim.step()
    msg = str(err.value)
    t0 = (k - 1) * DT
    assert f"diverged at step {k} (t = {t0:.6g} s -> {t0 + DT:.6g} s, {integrator}" in msg, msg
    assert "force element 1 (faulty) gives a non-finite generalized force tau[1] = nan" in msg, msg
    assert_same_state(sim, ref)


@pytest.mark.parametrize("integrator", ["semi_implicit_euler", "implicit_euler", "rk4"])
def test_a_force_element_returning_the_wrong_shape_is_an_error_not_a_broadcast(integrator):
    k = FIRST_STEP_SEEING[integrator]
    sim = fresh(integrator, forces=[_Faulty(3.5 * DT, [1.0])])
    for _ in range(k - 1):
        sim.step()
    with pytest.raises(InputError, match=rf"step {k} .*faulty: returned a generalized force of shape \(1,\), "
                                         r"expected \(2,\)"):
        sim.step()
    assert sim.state.t == pytest.approx((k - 1) * DT, abs=1e-15)


def test_an_element_callable_failing_mid_run_keeps_its_class_and_gets_the_step():
    """ExternalWrench's wrench(t) returning 3 values at t >= 2 ms: its
    InputError, naming the step and the time — not "diverged"; the
    trajectory's power, derived from the samples, names the sample."""
    wrench = ExternalWrench("l2", lambda t: np.zeros(6) if t < 2e-3 - 1e-12 else np.zeros(3))
    with pytest.raises(InputError, match=r"at step 3 \(t = 0\.002 s -> 0\.003 s.*returned shape \(3,\)") as err:
        fresh(forces=[wrench]).rollout(steps=5, record_every=5)
    assert "diverged" not in str(err.value)
    # the powers are derived from the recording when first read: a run that stops before the
    # steps meet the failing time records fine, and reading its power names the sample
    tr = fresh(forces=[wrench]).rollout(steps=2)
    with pytest.raises(InputError, match=r"sample 2 \(t = 0\.002 s\).*returned shape"):
        tr.power


class _Raising(ForceElement):
    """Raises ``error`` when evaluated at t >= 2 ms."""

    def __init__(self, error):
        super().__init__("raising")
        self._error = error

    def _evaluate(self, st, b, jacobians):
        nv = st.model.nv
        if st.t >= 2e-3 - 1e-12:
            raise self._error
        return np.zeros(nv), (np.zeros((nv, nv)) if jacobians else None), (np.zeros((nv, nv)) if jacobians else None)


@pytest.mark.parametrize("integrator", ["semi_implicit_euler", "rk4"])
def test_the_simulator_classifies_errors_by_type_not_by_words(integrator):
    """A NonFiniteError raised inside a step is the state diverging (a
    SimulationError naming the step); an InputError whose message merely
    contains "singular" or "non-finite" keeps its class (the old rule,
    matching words, called it divergence)."""
    sim = fresh(integrator, forces=[_Raising(NonFiniteError("x has a NaN"))])
    step = {"semi_implicit_euler": 3, "rk4": 2}[integrator]  # RK4 samples the forces at t + dt too
    with pytest.raises(SimulationError, match=rf"the integration diverged at step {step} .*x has a NaN"):
        sim.rollout(steps=5, progress=False)
    for words in ("a singular choice", "a non-finite mood"):
        sim = fresh(integrator, forces=[_Raising(InputError(words))])
        with pytest.raises(InputError, match=words) as err:
            sim.rollout(steps=5, progress=False)
        assert not isinstance(err.value, SimulationError) and "diverged" not in str(err.value)


# --------------------------------------------------------------------- non-finite results

@pytest.mark.parametrize("integrator", sorted(INTEGRATORS))
def test_non_finite_results_from_finite_inputs_are_caught_and_named(integrator):
    """τ = ±1e308 is finite; the states it drives to overflow are not. Within
    a few steps every integrator stops with a SimulationError naming the
    step, the time and what turned non-finite; every state it returned was
    finite, and the state stays at the start of the failing step."""
    sim = fresh(integrator)
    for k in range(1, 6):
        before = sim.state
        try:
            with np.errstate(all="ignore"):
                s = sim.step([1e308, -1e308])
        except SimulationError as e:
            msg = str(e)
            break
        assert np.isfinite(s.q).all() and np.isfinite(s.v).all()
    else:
        pytest.fail(f"{integrator}: no error in 5 steps at tau = 1e308")
    t0 = (k - 1) * DT
    assert f"diverged at step {k} (t = {t0:.6g} s -> {t0 + DT:.6g} s, {integrator}" in msg, msg
    # what turned non-finite: a coordinate of the state after the update, or the dynamics function
    # whose result overflowed inside the step, or (symplectic Euler) the momentum solve
    assert re.search(r"non-finite (velocity v|configuration q)\[\d\] = (nan|-?inf)|non-finite entry|"
                     r"(aba|rnea|crba|kinetic_energy_gradient): the result is not finite|"
                     r"non-finite values reached a linear solve", msg), msg
    assert sim.state is before


class _BadShapes(Integrator):
    """A user's integrator returning a batch: the compiled end of step must
    not be given it."""
    name = "bad_shapes"

    def step(self, system, t, q, v, tau, dt):
        return q[None, :].copy(), v[None, :].copy()


def test_a_user_integrator_returning_the_wrong_shape_is_refused():
    sim = mb.Simulator(MODEL, DT, _BadShapes(), q0=Q0)
    with pytest.raises(SimulationError, match=r"integrator 'bad_shapes' returned q of shape \(1, 2\)"):
        sim.step()
    np.testing.assert_array_equal(sim.state.q, Q0)


class _Lists(Integrator):
    """A user's explicit Euler returning lists and float32 arrays."""
    name = "lists"

    def step(self, system, t, q, v, tau, dt):
        a = system.acceleration(t, q, v, tau)
        return list(system.model._integrate(q, v, dt)), (v + dt * a).astype(np.float32)


def test_a_user_integrator_returning_lists_is_converted():
    a = mb.Simulator(MODEL, DT, _Lists(), q0=Q0)
    b = mb.Simulator(MODEL, DT, "explicit_euler", q0=Q0)
    a.step([0.1, 0.2])
    b.step([0.1, 0.2])
    np.testing.assert_array_equal(a.state.q, b.state.q)
    np.testing.assert_array_equal(a.state.v, b.state.v.astype(np.float32))
    assert a.state.q.dtype == np.float64 and a.state.v.dtype == np.float64


def test_step_numbers_in_messages_count_successful_steps():
    """After a refused τ the counter is not advanced: the next error names the
    same step."""
    sim = stepped(2)
    for _ in range(2):
        with pytest.raises(InputError, match=r"step 3 \(t = 0\.002 s\)"):
            sim.step([np.nan, 0.0])
    sim.step()
    with pytest.raises(InputError, match=r"step 4 \(t = 0\.003 s\)"):
        sim.step(np.ones((1, 2)))
    assert math.isclose(sim.state.t, 3 * DT)


def test_a_grid_of_tau_shapes_dtypes_and_values():
    """Every combination of shape, dtype and value: accepted exactly when it
    is nv finite real numbers (then the step equals the step with the same
    numbers as float64), otherwise an InputError with the state untouched;
    never a warning or a non-library exception."""
    nv = MODEL.nv
    shapes = [(), (0,), (1,), (nv,), (nv + 1,), (1, nv), (0, nv), (nv, 1), (2, nv), (nv, nv)]
    dtypes = [np.float64, np.float32, np.int64, np.uint8, np.bool_, np.complex128, object, str]
    values = [0.0, 1.0, np.nan, np.inf]
    ref = stepped(1)
    accepted = refused = 0
    for shape in shapes:
        for dtype in dtypes:
            for value in values:
                with np.errstate(all="ignore"), warnings.catch_warnings():
                    warnings.simplefilter("ignore")  # casting nan to an integer warns: not under test
                    x = np.full(shape, value).astype(dtype)
                sim = stepped(1)
                numeric = x.dtype.kind in "iuf"
                valid = shape == (nv,) and numeric and np.isfinite(x.astype(float)).all()
                with warnings.catch_warnings():
                    warnings.simplefilter("error")
                    if valid:
                        s = sim.step(x)
                        same = stepped(1)
                        same.step(x.astype(np.float64))
                        assert_same_state(sim, same)
                        accepted += 1
                    else:
                        with pytest.raises(InputError, match=r"tau at step 2 \(t = 0\.001 s\)"):
                            sim.step(x)
                        assert_same_state(sim, ref)
                        refused += 1
    assert accepted >= 8 and refused > 250, (accepted, refused)


def test_strided_tau_views_are_read_correctly():
    """The compiled check takes any stride: a view of every other entry is
    the same τ as its contiguous copy."""
    base = np.array([0.3, 99.0, -0.4, 99.0])
    a, b = fresh(), fresh()
    a.step(base[::2])
    b.step(np.ascontiguousarray(base[::2]))
    assert_same_state(a, b)
    np.testing.assert_array_equal(a.last_tau, [0.3, -0.4])


@pytest.mark.parametrize("method", ["kkt ", "lu", 3])
def test_an_unknown_loop_method_is_refused_when_the_simulator_is_built(method):
    """(it used to be accepted, and failed only when a closed loop first acted)"""
    b = mb.ModelBuilder("pendulum")
    b.add_body("l1", "world", "revolute", axis=(0, 1, 0), mass=1.0, com=(0, 0, -0.5), inertia=np.eye(3) * 0.01)
    with pytest.raises(InputError, match="loop_method"):
        mb.Simulator(b.build(), 1e-3, loop_method=method)
