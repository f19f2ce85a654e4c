"""Open-loop τ tables, batched rollouts (bitwise the single rollouts),
parameter variants, checkpoints and pickled simulators."""
import copy
import pickle
import warnings

import numpy as np
import pytest

import multibody as mb
from multibody.forces import JointSpring

ARM = "src/multibody/data/robots/mb_arm.urdf"


@pytest.fixture(scope="module")
def arm():
    return mb.load_urdf(ARM, srdf=ARM.replace(".urdf", ".srdf"))  # as shipped: its links overlap at the joints


def test_tau_table_equals_a_controller_replaying_it(arm):
    """rollout(tau=table) (one compiled loop) gives the samples of a
    Python controller returning row k at step k."""
    rng = np.random.default_rng(0)
    table = rng.normal(scale=20.0, size=(50, arm.nv))
    a = mb.Simulator(arm, 1e-3, "rk4", v0=np.ones(arm.nv))
    b = mb.Simulator(arm, 1e-3, "rk4", v0=np.ones(arm.nv))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mb.SimulationWarning)
        ta = a.rollout(steps=50, tau=table, record_every=5)
        tb = b.rollout(steps=50, controller=lambda t, q, v: table[int(round(t / 1e-3))], record_every=5)
    np.testing.assert_array_equal(ta.q, tb.q)
    np.testing.assert_array_equal(ta.tau, tb.tau)
    assert ta.effort_clamped.any()  # the arm's effort limits clipped some rows: compared on something
    held = a.rollout(steps=3, tau=table[0])
    np.testing.assert_array_equal(held.tau[1:], np.clip(np.tile(table[0], (3, 1)), -arm.effort_limit,
                                                          arm.effort_limit))


def test_bad_tau_tables_are_refused(arm):
    sim = mb.Simulator(arm, 1e-3)
    for bad in (np.zeros((4, arm.nv)), np.zeros(arm.nv + 1), "x", np.zeros((3, 3, 3))):
        with pytest.raises(mb.InputError, match="tau"):
            sim.rollout(steps=5, tau=bad)
    with pytest.raises(mb.InputError, match="not both"):
        sim.rollout(steps=5, tau=np.zeros(arm.nv), controller=lambda t, q, v: np.zeros(arm.nv))
    table = np.zeros((5, arm.nv))
    table[3, 1] = np.nan
    with pytest.raises(mb.InputError, match=r"step 4 .*index 1"):
        sim.rollout(steps=5, tau=table)
    assert sim._steps == 3  # the steps before the bad row were taken


@pytest.mark.parametrize("threads", [1, 2])
def test_batched_rollouts_are_bitwise_single_rollouts(arm, threads):
    rng = np.random.default_rng(1)
    B = 5
    q0 = np.array([arm.random_configuration(seed=s) * 0.5 for s in range(B)])
    v0 = rng.normal(size=(B, arm.nv))
    tau = rng.normal(scale=5.0, size=(B, 40, arm.nv))
    sim = mb.Simulator(arm, 1e-3, "implicit_euler", forces=(JointSpring(arm.joints[3].name, 20.0),))
    r = sim.rollout_batch(q0, v0, steps=40, tau=tau, record_every=4, threads=threads)
    assert r.q.shape == (B, 11, arm.nq) and len(r) == B and sim._steps == 0
    warnings.simplefilter("ignore", mb.SimulationWarning)  # the single rollouts warn of effort clamps
    for b in range(B):
        single = mb.Simulator(arm, 1e-3, "implicit_euler", forces=(JointSpring(arm.joints[3].name, 20.0),),
                              q0=q0[b], v0=v0[b])
        tr = single.rollout(steps=40, tau=tau[b], record_every=4)
        np.testing.assert_array_equal(r.q[b], tr.q)
        np.testing.assert_array_equal(r.v[b], tr.v)
        np.testing.assert_array_equal(r.tau[b], tr.tau)
        np.testing.assert_array_equal(r[b].kinetic, tr.kinetic)
    np.testing.assert_array_equal(r.t, tr.t)


def test_batched_parameter_sets_equal_rebuilt_models(arm):
    """Each member runs the model with its parameters: the same samples as
    a simulator of ``model.with_params`` (itself held to rebuilt models and
    Pinocchio in tests/model/test_parameters.py); a heavier last link falls
    differently."""
    body = arm.body_names[-1]
    masses = [0.5, 1.0, 2.0]
    sim = mb.Simulator(arm, 1e-3, "semi_implicit_euler")
    r = sim.rollout_batch(steps=30, params=[{f"{body}.mass": m} for m in masses])
    for b, m in enumerate(masses):
        ref = mb.Simulator(arm.with_params({f"{body}.mass": m}), 1e-3, "semi_implicit_euler").rollout(steps=30)
        np.testing.assert_array_equal(r.q[b], ref.q)
    assert not np.array_equal(r.q[0], r.q[2])


def test_batched_rollouts_with_ground_true():
    """A simulator given ``ground=True`` batches: the members are rebuilt
    from the model it was given (its own model already has the plane, and
    adding it twice was refused with a ModelError). Balls dropped on the
    ground, each bitwise its single rollout, with and without parameters."""
    b = mb.ModelBuilder()
    b.add_body("ball", joint="free", mass=1.0, inertia=np.eye(3) * 0.004)
    b.add_geometry("ball", "sphere", (0.1,), name="ball")
    model = b.build()
    q0 = np.array([model.neutral() for _ in range(3)])
    q0[:, 2] = [0.12, 0.15, 0.2]
    sim = mb.Simulator(model, 1e-3, ground=True, q0=q0[0])
    masses = [0.5, 1.0, 2.0]
    for params in (None, [{"ball.mass": m} for m in masses]):
        r = sim.rollout_batch(q0, steps=300, params=params)
        for k in range(3):
            member = model if params is None else model.with_params(params[k])
            ref = mb.Simulator(member, 1e-3, ground=True, q0=q0[k]).rollout(steps=300, progress=False)
            np.testing.assert_array_equal(r.q[k], ref.q)
        assert np.all(np.abs(r.q[:, -1, 2] - 0.1) < 2e-3)  # all three landed and rest on the plane


def test_batches_in_a_row_equal_batches_of_fresh_simulators():
    """rollout_batch keeps its member simulators between calls (restored
    to the simulator's checkpoint each time): every batch equals, bit for
    bit, the batch of a fresh copy of the simulator in the same state —
    after other batches, and after the simulator itself has stepped (its
    time and contact warm start moved on)."""
    b = mb.ModelBuilder()
    b.add_body("box", joint="free", mass=1.0, inertia=np.eye(3) * 0.004)
    b.add_geometry("box", "box", (0.1, 0.1, 0.1), name="box")
    model = b.build()
    q0 = np.array([model.neutral() for _ in range(3)])
    q0[:, 2] = [0.1, 0.101, 0.12]
    v0 = np.zeros((3, model.nv))
    v0[:, 3] = [0.5, 0.0, -0.3]  # sliding, resting, falling
    sim = mb.Simulator(model, 1e-3, ground=True, contact_solver="pgs", q0=q0[1])
    for k in range(3):
        fresh = copy.deepcopy(sim)  # pickled: a new simulator from the arguments and the checkpoint
        first = sim.rollout_batch(q0, v0, steps=60, threads=2)
        again = sim.rollout_batch(q0[::-1], v0[::-1], steps=60, threads=2)
        reference = fresh.rollout_batch(q0, v0, steps=60, threads=2)
        np.testing.assert_array_equal(first.q, reference.q)
        np.testing.assert_array_equal(again.q, reference.q[::-1])
        sim.rollout(steps=25, progress=False)  # the simulator moves on between rounds
    assert len(sim._batch_members) == 2


def _batch_in_child(conn, sim, q0):
    conn.send(sim.rollout_batch(q0, steps=20, threads=2).q)
    conn.close()


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="fork is a POSIX start method")
def test_a_forked_child_runs_batches_on_threads_of_its_own(arm):
    """rollout_batch keeps its thread pool between calls; a process forked
    after a batch (multiprocessing's default start on Linux) has none of the
    parent's threads: its batch on 2 threads must start threads of its own,
    not wait forever on the parent's, and give the parent's numbers."""
    import multiprocessing
    sim = mb.Simulator(arm, 1e-3)
    q0 = np.array([arm.neutral() + 0.1 * k for k in range(4)])
    here = sim.rollout_batch(q0, steps=20, threads=2).q  # the pool exists in this process now
    ctx = multiprocessing.get_context("fork")
    parent, child = ctx.Pipe()
    proc = ctx.Process(target=_batch_in_child, args=(child, sim, q0))
    proc.start()
    try:
        assert parent.poll(120), "the forked child's batch did not finish in 120 s"
        np.testing.assert_array_equal(parent.recv(), here)
    finally:
        proc.join(10)
        if proc.is_alive():
            proc.kill()
    assert proc.exitcode == 0


def test_batch_input_errors(arm):
    sim = mb.Simulator(arm, 1e-3)
    with pytest.raises(mb.InputError, match="batch sizes"):
        sim.rollout_batch(np.zeros((3, arm.nq)), np.zeros((4, arm.nv)), steps=2)
    with pytest.raises(mb.InputError, match="q0 must have shape"):
        sim.rollout_batch(np.zeros((3, arm.nq + 1)), steps=2)
    with pytest.raises(mb.InputError, match="params must be a sequence"):
        sim.rollout_batch(steps=2, params={"gravity": [0, 0, -1]})
    with pytest.raises(mb.InputError, match="unknown|no parameter"):
        sim.rollout_batch(steps=2, params=[{"no.such": 1.0}])
    with pytest.raises(mb.InputError, match="fused compiled step"):
        mb.Simulator(arm, 1e-3, "rk4", forces=(mb.forces.ExternalWrench(arm.body_names[-1], np.ones(6)),)) \
            .rollout_batch(steps=2)
    b = mb.ModelBuilder()
    b.add_body("ball", joint="free", mass=1.0, inertia=np.eye(3) * 0.004)
    ball = b.build()
    q0 = np.array([ball.neutral(), ball.neutral()])
    q0[1, 3] = 2.0  # not a unit quaternion: named by member, with and without parameters
    for params in (None, [{"ball.mass": 1.0}, {"ball.mass": 2.0}]):
        with pytest.raises(mb.InputError, match=r"q0\[1\]: the quaternion of joint 'ball'"):
            mb.Simulator(ball, 1e-3).rollout_batch(q0, steps=2, params=params)


def test_a_failing_member_is_named(arm):
    sim = mb.Simulator(arm, 1e-3, "explicit_euler", clamp_effort=False, limits=False)
    v0 = np.zeros((3, arm.nv))
    v0[1] = 1e150
    with pytest.raises(mb.SimulationError, match=r"rollout 1 of the batch: .*step \d+"):
        sim.rollout_batch(v0=v0, steps=50)


def test_checkpoint_restore_and_pickle_continue_bitwise(arm):
    sim = mb.Simulator(arm, 1e-3, "trapezoidal", v0=np.linspace(-1, 1, arm.nv), clamp_velocity=True)
    for _ in range(20):
        sim.step()
    cp = sim.checkpoint()
    clone = pickle.loads(pickle.dumps(sim))
    deep = copy.deepcopy(sim)
    assert clone.options == sim.options and clone.options.integrator == "trapezoidal"
    a = sim.rollout(steps=30)
    for other in (clone, deep):
        np.testing.assert_array_equal(other.rollout(steps=30).q, a.q)
    sim.restore(cp)
    np.testing.assert_array_equal(sim.rollout(steps=30).q, a.q)
    cp2 = pickle.loads(pickle.dumps(cp))
    assert cp2.t == cp.t and cp2.steps == cp.steps == 20 and np.array_equal(cp2.q, cp.q)
    with pytest.raises(mb.InputError, match="Checkpoint"):
        sim.restore((0.0, cp.q, cp.v))


@pytest.mark.parametrize("kind", ["pd", "computed torque"])
def test_builtin_controllers_in_the_compiled_loop_equal_python_controllers(arm, kind):
    """PD and computed torque with tabulated targets: the compiled loop's
    samples equal a Python controller computing the same formula with
    model.difference and mb.rnea (to round-off), on RK4 with effort limits."""
    n = 80
    rng = np.random.default_rng(3)
    target = arm.neutral() + 0.3 * np.sin(np.linspace(0, 2, n))[:, None] * rng.normal(size=arm.nv)
    kp, kd = np.full(arm.nv, 80.0), np.full(arm.nv, 6.0)
    if kind == "pd":
        ctrl = mb.PD(arm, kp, kd, target=target)

        def python(k, q, v):
            return kp * arm.difference(q, target[k]) - kd * v
    else:
        acc = rng.normal(size=arm.nv)
        ctrl = mb.ComputedTorque(arm, kp, kd, target=target, acceleration=acc)

        def python(k, q, v):
            return mb.rnea(arm, q, v, acc + kp * arm.difference(q, target[k]) - kd * v) + arm.damping * v
    a = mb.Simulator(arm, 1e-3, "rk4", v0=np.ones(arm.nv))
    b = mb.Simulator(arm, 1e-3, "rk4", v0=np.ones(arm.nv))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mb.SimulationWarning)
        ta = a.rollout(steps=n, controller=ctrl)
        tb = b.rollout(steps=n, controller=lambda t, q, v: python(int(round(t / 1e-3)), q, v))
    np.testing.assert_allclose(ta.q, tb.q, rtol=0, atol=1e-12)
    np.testing.assert_allclose(ta.tau, tb.tau, rtol=1e-12, atol=1e-10)


def test_computed_torque_gives_the_closed_loop_error_dynamics(arm):
    """Without damping, limits or effort limits, computed torque cancels the
    dynamics: each joint's error obeys ë + K_d ė + K_p e = 0,
    critically damped here (K_p = ω², K_d = 2ω): e(t) = e₀(1 + ωt)e^{−ωt}
    (closed form), up to the zero-order hold of τ over a step, O(ω h) =
    1e-3 relative at h = 0.1 ms."""
    w, h = 10.0, 1e-4
    target = arm.neutral() + 0.2
    ctrl = mb.ComputedTorque(arm, w * w, 2 * w, target=target)
    # (with the arm's damping on, the cancellation of b⊙v held over a step errs by O(b h / I): 3% on
    # the light last link; the damping term is held to the Python formula in the test above)
    sim = mb.Simulator(arm, h, "rk4", joint_damping=False, limits=False, clamp_effort=False,
                       contact_solver=None)  # the control law alone: no self-contact
    tr = sim.rollout(duration=0.5, controller=ctrl, record_every=500)
    e = target - tr.q  # revolute joints: the difference is the subtraction
    expected = np.outer((1 + w * tr.t) * np.exp(-w * tr.t), e[0])
    np.testing.assert_allclose(e, expected, rtol=0, atol=1e-3 * 0.2)
    assert np.abs(e[-1]).max() < 0.2 * 0.05  # converged: the comparison is not trivially small


def test_builtin_controller_errors(arm):
    with pytest.raises(mb.InputError, match="kp"):
        mb.PD(arm, -1.0, 1.0)
    with pytest.raises(mb.InputError, match="target"):
        mb.PD(arm, 1.0, 1.0, target=np.zeros(arm.nq + 1))
    with pytest.raises(mb.InputError, match="1 or 5 rows"):
        mb.Simulator(arm, 1e-3).rollout(steps=5, controller=mb.PD(arm, 1.0, 1.0, target=np.zeros((4, arm.nq))))
    other = arm.with_params({"gravity": [0, 0, -1.0]})
    with pytest.raises(mb.InputError, match="controls model"):
        mb.Simulator(other, 1e-3).rollout(steps=5, controller=mb.PD(arm, 1.0, 1.0))
    with pytest.raises(mb.InputError, match="indexed by step"):
        mb.PD(arm, 1.0, 1.0, target=np.zeros((4, arm.nq)))(0.0, arm.neutral(), np.zeros(arm.nv))
