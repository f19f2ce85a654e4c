"""Actuators (issue 15): MuJoCo's general actuator over a transmission.

* K = ∂τ/∂q and D = ∂τ/∂v of every actuator kind against central
  differences (random trees with every joint type; joints, fixed tendons
  across branches, spatial paths; clamped forces; muscles with MuJoCo's and
  Sueda's curves).
* The force laws and activation updates against their closed forms and
  MuJoCo's own functions (mju_muscleGain / Bias / Dynamics).
* The simulator: the fused compiled step against the integrators' Python
  step (every integrator), controls and activations through checkpoints,
  pickles, trajectories (and their files), control tables, control
  functions and batches; a stiff position servo that implicit Euler holds
  because its K and D are exact; errors naming the actuator.
"""
import copy
import pickle

import numpy as np
import pytest

import multibody as mb
from forces.helpers import fd_jacobians, state, tree
from multibody.errors import InputError, ModelError
from multibody.forces.actuators import (Actuator, ActuatorSet, Motor, Muscle, PositionServo, TendonSpring,
                                        VelocityServo)
from multibody.forces.transmission import FixedTendon, JointTransmission

ONE_DOF = ("revolute", "prismatic", "helical")


def one_dof_joints(model):
    return [j.name for j in model.joints[1:] if j.type in ONE_DOF]


def catalogue(model):
    """One actuator of every kind on ``model`` (a random tree)."""
    j = one_dof_joints(model)
    across = FixedTendon([(j[0], 0.7), (j[-1], -1.3)])  # two joints on different branches or depths
    return [Motor(j[0], gear=2.0, ctrlrange=(-1, 1), name="motor"),
            PositionServo(j[1], kp=30.0, kv=2.0, gear=1.5, name="position"),
            VelocityServo(j[-1], kv=3.0, name="velocity"),
            Actuator(across, gear=0.7, gaintype="affine", gainprm=(1, 2, 3), biastype="affine",
                     biasprm=(0.1, -4, -0.5), dyntype="filter", dynprm=(0.05,), name="affine"),
            Actuator(JointTransmission(j[1], 2.0), dyntype="integrator", gainprm=(4.0,), biastype="affine",
                     biasprm=(0.0, -4.0, -0.3), actearly=True, name="intvelocity"),
            Muscle(j[0], lengthrange=(-1.5, 1.5), force=50.0, name="muscle"),
            Muscle(across, lengthrange=(-2.0, 2.0), force=40.0, curves="sueda", vmax=3.0, name="sueda")]


def inputs(aset, seed):
    rng = np.random.default_rng(seed)
    aset.ctrl[:] = rng.uniform(-0.8, 0.8, aset.nu)
    aset.act[:] = rng.uniform(0.2, 0.8, aset.na)


@pytest.mark.parametrize("seed,floating", [(1, False), (2, True), (3, False)])
def test_every_actuator_against_finite_differences(seed, floating):
    model = tree(seed, floating)
    q, v = state(model, seed + 20)
    for act in catalogue(model):
        aset = ActuatorSet([act], model, dt=1e-3)
        inputs(aset, seed)
        tau, K, D = aset.evaluate(model, q, v, jacobians=True)
        Kf, Df = fd_jacobians(aset, model, q, v)
        scale = max(1.0, np.abs(tau).max(), np.abs(K).max(), np.abs(D).max())
        assert np.abs(K - Kf).max() <= 1e-6 * scale, (act, np.abs(K - Kf).max())
        assert np.abs(D - Df).max() <= 1e-6 * scale, (act, np.abs(D - Df).max())
        assert np.abs(tau).max() > 0, act


def test_a_path_actuator_against_finite_differences():
    """A muscle and a servo on a spatial path (Path: nonlinear, with a geometric term)."""
    from multibody.forces.paths import Path
    model = tree(4, False)
    names = [b for b in model.body_names[1:]]
    path = Path([(None, (0.1, 0.2, 0.3)), (names[1], (0.05, -0.02, 0.1)), (names[-1], (0.0, 0.1, -0.05))])
    q, v = state(model, 7)
    for act in (Muscle(path, lengthrange=(0.2, 3.0), force=30.0), PositionServo(path, kp=20.0, kv=1.5),
                TendonSpring(path, stiffness=40.0, damping=2.0, spring_length=(0.5, 0.7))):
        element = act if isinstance(act, TendonSpring) else ActuatorSet([act], model, dt=1e-3)
        if not isinstance(act, TendonSpring):
            inputs(element, 3)
        tau, K, D = element.evaluate(model, q, v, jacobians=True)
        Kf, Df = fd_jacobians(element, model, q, v)
        scale = max(1.0, np.abs(tau).max(), np.abs(K).max(), np.abs(D).max())
        assert np.abs(K - Kf).max() <= 1e-6 * scale, act
        assert np.abs(D - Df).max() <= 1e-6 * scale, act


def test_force_laws():
    servo = PositionServo("j", kp=10.0, kv=2.0)
    assert servo.force(0.3, -0.5, 1.0) == pytest.approx((10 * (1.0 - 0.3) + 2 * 0.5, -10.0, -2.0))
    assert VelocityServo("j", kv=4.0).force(0.3, -0.5, 1.0) == pytest.approx((4 * 1.5, 0.0, -4.0))
    limited = PositionServo("j", kp=10.0, forcerange=(-2, 3))
    assert limited.force(0.0, 0.0, 1.0) == (3.0, 0.0, 0.0)  # clamped: flat, zero derivatives
    assert limited.force(0.0, 0.0, -1.0) == (-2.0, 0.0, 0.0)
    general = Actuator("j", gaintype="affine", gainprm=(1, 2, 3), biastype="affine", biasprm=(4, 5, 6))
    l, ld, u = 0.3, -0.7, 1.1
    assert general.force(l, ld, u) == pytest.approx(((1 + 2 * l + 3 * ld) * u + 4 + 5 * l + 6 * ld,
                                                     2 * u + 5, 3 * u + 6))


def test_muscle_laws_equal_mujocos():
    mujoco = pytest.importorskip("mujoco")
    prm = np.array([0.75, 1.05, 3.2, 200, 0.5, 1.6, 1.5, 1.3, 1.2])
    muscle = Muscle("j", lengthrange=(-0.3, 0.4), force=3.2)
    rng = np.random.default_rng(0)
    for _ in range(100):
        l, ld, a = rng.uniform(-0.5, 0.6), rng.uniform(-2, 2), rng.uniform(0, 1)
        f = muscle.force(l, ld, a)[0]
        lr = np.array([-0.3, 0.4])
        expected = mujoco.mju_muscleGain(l, ld, lr, 1.0, prm) * a + mujoco.mju_muscleBias(l, lr, 1.0, prm)
        assert f == pytest.approx(expected, rel=1e-14, abs=1e-14)
    aset = ActuatorSet([muscle, Muscle("j", lengthrange=(-0.3, 0.4), force=3.2, tausmooth=0.3)],
                       _one_joint_model(limited=False))
    for _ in range(50):
        c, a = rng.uniform(-0.2, 1.2), rng.uniform(-0.1, 1.1)
        aset.ctrl[:] = c
        aset.act[:] = a
        before = aset.act.copy()
        aset.advance(1e-3)
        for k, smooth in enumerate((0.0, 0.3)):
            rate = mujoco.mju_muscleDynamics(c, a, np.array([0.01, 0.04, smooth]))
            assert aset.act[k] == before[k] + 1e-3 * rate


def _one_joint_model(limited=True):
    b = mb.ModelBuilder("one")
    kw = dict(lower=-1.0, upper=2.0) if limited else {}
    b.add_body("link", "world", "revolute", None, axis=(0, 1, 0), mass=1.0, com=(0, 0, -0.5),
               inertia=np.eye(3) * 0.01, joint_name="j", **kw)
    return b.build()


def _arm():
    """A planar double pendulum with two branches' worth of coupling."""
    b = mb.ModelBuilder("arm")
    T = np.eye(4)
    T[2, 3] = -1.0
    b.add_body("l1", "world", "revolute", None, axis=(0, 1, 0), mass=1.0, com=(0, 0, -0.5),
               inertia=np.eye(3) * 0.02, joint_name="j1")
    b.add_body("l2", "l1", "revolute", T, axis=(0, 1, 0), mass=0.7, com=(0, 0, -0.4),
               inertia=np.eye(3) * 0.01, joint_name="j2")
    b.add_body("l3", "world", "prismatic", None, axis=(1, 0, 0), mass=0.5, com=(0, 0, 0),
               inertia=np.eye(3) * 0.01, joint_name="s")
    return b.build()


def _arm_actuators():
    return [Motor("j1", gear=2.0, ctrlrange=(-1, 1), name="m"), PositionServo("j2", kp=20.0, kv=1.0, name="p"),
            VelocityServo("s", kv=3.0, name="v"),
            Actuator(FixedTendon([("j1", 1.0), ("s", 0.5)]), dyntype="filter", dynprm=(0.05,), gainprm=(3.0,),
                     name="f"),
            PositionServo("j1", kp=5.0, timeconst=0.02, name="pe"),
            Actuator("s", dyntype="integrator", gainprm=(2.0,), biastype="affine", biasprm=(0, -2.0, -0.1),
                     actrange=(-0.2, 0.2), actearly=True, name="iv"),
            Muscle("j2", lengthrange=(-1.0, 1.0), force=5.0, name="mu")]


CONTROLS = np.array([0.5, 0.3, -0.4, 1.0, -0.2, 0.7, 0.8])
INTEGRATORS = ("semi_implicit_euler", "explicit_euler", "symplectic_euler", "implicit_euler", "trapezoidal",
               "bridson_marino", "rk4")


@pytest.mark.parametrize("integrator", INTEGRATORS)
def test_fused_step_equals_the_python_step(integrator):
    """Every integrator: the compiled step (actuators in its table) and the
    integrator's Python step (the ActuatorSet as a force element) give the
    same trajectory, activations and forces (to round-off)."""
    model = _arm()
    runs = []
    for fused in (True, False):
        sim = mb.Simulator(model, 1e-3, integrator, actuators=_arm_actuators(), contact_solver=None,
                           q0=[0.2, -0.3, 0.1], v0=[0.5, -1.0, 0.3])
        if not fused:
            sim.fused = None
        assert (sim.fused is not None) == fused
        sim.control = CONTROLS
        runs.append(sim.rollout(steps=150))
    a, b = runs
    assert np.abs(a.q - b.q).max() < 1e-11
    assert np.abs(a.v - b.v).max() < 1e-9
    assert np.abs(a.activation - b.activation).max() < 1e-12
    assert np.abs(a.actuator_force - b.actuator_force).max() < 1e-9
    assert np.abs(a.activation[-1]).max() > 0.1


def test_activation_updates_are_mujocos():
    """filterexact is exact for a held control; filter and integrator are Euler; actrange clamps."""
    model = _one_joint_model()
    acts = [Actuator("j", dyntype="filterexact", dynprm=(0.05,)), Actuator("j", dyntype="filter", dynprm=(0.05,)),
            Actuator("j", dyntype="integrator", actrange=(-0.1, 0.1))]
    sim = mb.Simulator(model, 1e-3, actuators=acts, contact_solver=None, gravity=False)
    sim.control = [1.0, 1.0, 1.0]
    traj = sim.rollout(steps=100)
    t = traj.t
    assert np.allclose(traj.activation[:, 0], 1.0 - np.exp(-t / 0.05), rtol=0, atol=1e-14)
    assert np.allclose(traj.activation[:, 1], 1.0 - (1.0 - 1e-3 / 0.05) ** np.arange(101), rtol=0, atol=1e-14)
    assert np.allclose(traj.activation[:, 2], np.minimum(t, 0.1), rtol=0, atol=1e-14)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # the explicit run overflows (without JIT numpy says so)
def test_stiff_position_servo_needs_its_stiffness():
    """A servo with kp·h²/m far above 4: explicit and semi-implicit Euler
    blow up (or oscillate out), implicit Euler (exact K and D) settles on
    the target."""
    model = _one_joint_model(limited=False)
    servo = [PositionServo("j", kp=2e5, kv=50.0)]
    sim = mb.Simulator(model, 1e-2, "implicit_euler", actuators=servo, contact_solver=None, gravity=False)
    sim.control = [0.4]
    sim.rollout(steps=300)
    assert abs(sim.state.q[0] - 0.4) < 1e-6
    explicit = mb.Simulator(model, 1e-2, "semi_implicit_euler", actuators=servo, contact_solver=None, gravity=False)
    explicit.control = [0.4]
    with pytest.raises(mb.SimulationError):
        explicit.rollout(steps=300)


def test_implicit_step_with_a_tendon_across_branches_is_dense():
    """A fixed tendon coupling two branches puts K and D outside M's
    branch pattern: the fused implicit step solves densely, as the Python one."""
    model = _arm()
    tendon = [PositionServo(FixedTendon([("j2", 1.0), ("s", -2.0)]), kp=300.0, kv=5.0)]
    out = []
    for fused in (True, False):
        sim = mb.Simulator(model, 5e-3, "implicit_euler", actuators=tendon, contact_solver=None, q0=[0.1, 0.2, 0.3])
        assert sim.fused is not None and sim.fused.ints[mb.integrators._kernels.H_DENSE] == 1
        if not fused:
            sim.fused = None
        sim.control = [0.2]
        out.append(sim.rollout(steps=100).q)
    assert np.abs(out[0] - out[1]).max() < 1e-12


def test_controls_and_activations_in_checkpoints_pickles_and_trajectories(tmp_path):
    model = _arm()
    sim = mb.Simulator(model, 1e-3, "rk4", actuators=_arm_actuators(), contact_solver=None, q0=[0.2, -0.3, 0.1])
    assert (sim.nu, sim.na) == (7, 4)
    assert sim.actuator_names == ("m", "p", "v", "f", "pe", "iv", "mu")
    sim.control = CONTROLS
    sim.rollout(steps=20)
    cp = sim.checkpoint()
    clone = pickle.loads(pickle.dumps(sim))
    deep = copy.deepcopy(sim)
    assert np.array_equal(clone.control, CONTROLS) and np.array_equal(clone.activation, sim.activation)
    rest = sim.rollout(steps=30)
    for other in (clone, deep):
        assert np.array_equal(other.rollout(steps=30).q, rest.q)
    sim.control = np.zeros(7)
    sim.restore(cp)
    assert np.array_equal(sim.control, CONTROLS)
    again = sim.rollout(steps=30)
    assert np.array_equal(again.q, rest.q) and np.array_equal(again.activation, rest.activation)
    # the trajectory's records: row k ≥ 1 is step k's control and forces, the activations after it
    assert rest.control.shape == (31, 7) and rest.activation.shape == (31, 4)
    assert np.array_equal(rest.control[1:], np.tile(CONTROLS, (30, 1))) and not rest.control[0].any()
    assert np.array_equal(rest.activation[-1], sim.activation)
    assert np.array_equal(rest.actuator_force[-1], sim.actuator_force)
    assert "actuators" in rest.power_labels
    path = tmp_path / "run.npz"
    rest.save(path)
    back = mb.Trajectory.load(path, model=sim.model)
    for name in ("control", "activation", "actuator_force"):
        assert np.array_equal(getattr(back, name), getattr(rest, name))
    assert back.actuator_names == sim.actuator_names
    assert np.allclose(back.power, rest.power)


def test_actuator_power_is_force_times_rate():
    model = _arm()
    sim = mb.Simulator(model, 1e-3, actuators=_arm_actuators(), contact_solver=None, v0=[0.3, -0.2, 0.4])
    sim.control = CONTROLS
    traj = sim.rollout(steps=10)
    k = traj.power_labels.index("actuators")
    for i in range(1, 11):
        rates = sim.actuator_lengths(traj.q[i], traj.v[i])[1]
        assert traj.power[i, k] == pytest.approx(traj.actuator_force[i] @ rates, rel=1e-12, abs=1e-12)


def test_control_tables_functions_and_steps_agree():
    model = _arm()
    rng = np.random.default_rng(4)
    table = rng.uniform(-1, 1, (40, 7))

    def make():
        return mb.Simulator(model, 1e-3, "semi_implicit_euler", actuators=_arm_actuators(), contact_solver=None,
                            q0=[0.2, -0.3, 0.1])

    compiled = make().rollout(steps=40, control=table)
    sim = make()
    k = iter(range(40))
    python = sim.rollout(steps=40, control=lambda t, q, v: table[next(k)])
    stepped = make()
    for u in table:
        stepped.step(control=u)
    assert np.array_equal(compiled.q, python.q) and np.array_equal(compiled.activation, python.activation)
    assert np.array_equal(compiled.actuator_force, python.actuator_force)
    assert np.array_equal(compiled.q[-1], stepped.state.q)
    assert np.array_equal(stepped.control, table[-1])  # a control stays set


def test_batch_members_equal_single_rollouts():
    model = _arm()
    sim = mb.Simulator(model, 1e-3, "rk4", actuators=_arm_actuators(), contact_solver=None)
    rng = np.random.default_rng(5)
    controls = rng.uniform(-1, 1, (3, 25, 7))
    q0 = np.array([[0.1, 0.2, 0.0], [0.0, -0.2, 0.1], [0.3, 0.0, -0.1]])
    runs = sim.rollout_batch(q0=q0, steps=25, control=controls, threads=2)
    for b in range(3):
        single = mb.Simulator(model, 1e-3, "rk4", actuators=_arm_actuators(), contact_solver=None, q0=q0[b])
        traj = single.rollout(steps=25, control=controls[b])
        assert np.array_equal(runs.q[b], traj.q) and np.array_equal(runs.activation[b], traj.activation)
        assert np.array_equal(runs[b].actuator_force, traj.actuator_force)


def test_controls_are_checked():
    sim = mb.Simulator(_arm(), 1e-3, actuators=_arm_actuators(), contact_solver=None)
    for bad in ([1.0, 2.0], np.full(7, np.nan), "abc", np.zeros((1, 7)), np.full(7, 1j)):
        with pytest.raises(InputError, match="control"):
            sim.control = bad
        with pytest.raises(InputError, match="control"):
            sim.step(control=bad)
    assert sim.state.t == 0.0
    with pytest.raises(InputError, match="control"):
        sim.rollout(steps=3, control=np.zeros((2, 7)))
    with pytest.raises(InputError, match="control"):
        sim.rollout(steps=3, control=lambda t, q, v: np.zeros(3))
    with pytest.raises(InputError, match="activation"):
        sim.activation = np.zeros(2)
    plain = mb.Simulator(_arm(), 1e-3, contact_solver=None, actuators=())
    assert plain.nu == 0 and plain.control.shape == (0,) and plain.rollout(steps=2).control.shape == (3, 0)


def test_bad_actuators_are_model_errors_naming_them():
    model = _arm()
    with pytest.raises(ModelError, match=r"actuators\[1\]: Motor\('x'\).*no joint 'nope'"):
        mb.Simulator(model, 1e-3, actuators=[Motor("j1"), Motor("nope", name="x")])
    with pytest.raises(ModelError, match=r"Motor\('m'\): ctrlrange \(1.0, -1.0\) has low > high"):
        Motor("j1", ctrlrange=(1, -1), name="m")
    with pytest.raises(ModelError, match=r"Actuator\('g'\): gainprm must be finite"):
        Actuator("j1", gainprm=(np.nan,), name="g")
    with pytest.raises(ModelError, match=r"PositionServo\('p'\): kp must be"):
        PositionServo("j1", kp=-1.0, name="p")
    with pytest.raises(ModelError, match="time constant"):
        Actuator("j1", dyntype="filter", dynprm=(0.0,))
    with pytest.raises(ModelError, match="needs a lengthrange"):
        ActuatorSet([Muscle("j1")], model)
    free = tree(2, True)
    with pytest.raises(ModelError, match="1-DoF joint"):
        ActuatorSet([Motor(free.joints[1].name)], free)
    with pytest.raises(ModelError, match="two actuators are named"):
        ActuatorSet([Motor("j1", name="a"), Motor("j2", name="a")], model)
