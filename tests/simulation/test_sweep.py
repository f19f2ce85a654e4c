"""Parameter sweeps (mb.sweep, docs/scale.md): every point is the plain
rollout of its simulator (bitwise) and matches a closed form; designs,
seeds, gains and initial states; per-point error records; bad input;
saving and resuming; Dask workers (1 and 2, a killed worker) bitwise
equal to the sweep in this process."""
import glob
import importlib.util
import os
import warnings

import numpy as np
import pytest

import multibody as mb
from multibody.simulation.sweep import point_seed

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
STEPS = 40


def pendulum():
    """A damped double pendulum about y (two 1 kg links of 0.5 m)."""
    b = mb.ModelBuilder("double_pendulum")
    b.add_body("l1", "world", "revolute", axis=(0, 1, 0), mass=1.0, com=(0, 0, -0.25),
               inertia=np.diag([0.02, 0.02, 0.001]), damping=0.1, joint_name="j1")
    b.add_body("l2", "l1", "revolute", placement=(np.eye(3), (0, 0, -0.5)), axis=(0, 1, 0), mass=1.0,
               com=(0, 0, -0.25), inertia=np.diag([0.02, 0.02, 0.001]), damping=0.1, joint_name="j2")
    return b.build()


@pytest.fixture(scope="module")
def model():
    return pendulum()


@pytest.fixture(scope="module")
def sim(model):
    return mb.Simulator(model, 1e-3, q0=[0.6, -0.3])


def final_angle(traj):
    return traj.q[-1, 0]


def tip_path(traj):
    return traj.q[::10, 1]  # a vector metric


METRICS = {"angle": final_angle, "path": tip_path}


def assert_bitwise_equal(a, b):
    """Two sweep results hold the same bits (NaN where either failed)."""
    assert a.shape == b.shape and a.dims == b.dims
    for x, y in [(a.q, b.q), (a.v, b.v), (a.ok, b.ok)] + [(a.metrics[k], b.metrics[k]) for k in a.metrics] + \
            [(a.coords[k], b.coords[k]) for k in a.coords]:
        assert x.dtype == y.dtype and x.shape == y.shape and x.tobytes() == y.tobytes()
    assert list(a.error) == list(b.error)


def test_grid_numbers_points_in_c_order_and_random_designs_repeat():
    g = mb.Grid({"a": [1.0, 2.0, 3.0], "b": [10.0, 20.0]})
    assert g.shape == (3, 2) and g.dims == ("a", "b") and len(g) == 6
    assert [(p["a"], p["b"]) for p in map(g.point, range(6))] == \
        [(1, 10), (1, 20), (2, 10), (2, 20), (3, 10), (3, 20)]
    r1 = mb.RandomDesign({"x": (1.0, 2.0), "kp": (1.0, 1e4), "v0": ([0, -1], [1, 1])}, n=200, seed=3, log=["kp"])
    r2 = mb.RandomDesign({"x": (1.0, 2.0), "kp": (1.0, 1e4), "v0": ([0, -1], [1, 1])}, n=200, seed=3, log=["kp"])
    assert r1.digest() == r2.digest() and r1.shape == (200,)
    assert r1.digest() != mb.RandomDesign({"x": (1.0, 2.0)}, n=200, seed=4).digest()
    x, kp, v0 = r1.columns["x"], r1.columns["kp"], r1.columns["v0"]
    assert ((1 <= x) & (x <= 2)).all() and v0.shape == (200, 2) and (v0[:, 0] >= 0).all() and (v0[:, 1] < 1).all()
    # log-uniform: a quarter of the points in each decade of [1, 1e4] (binomial: 50 +- 7 per decade)
    counts = np.histogram(np.log10(kp), bins=4, range=(0, 4))[0]
    assert (np.abs(counts - 50) < 25).all(), counts


def test_points_are_the_plain_rollouts_bitwise(model, sim):
    """Each point equals Simulator(model.with_params(p)).rollout from its
    state, whatever the chunking, through the batched path (no controller)
    and the per-point loop (a controller function) alike."""
    q0s = np.array([[0.6, -0.3], [0.1, 0.2]])
    design = mb.Design({"l2.mass": [0.5, 2.0, 1.0, 3.0], "j1.damping": [0.0, 0.3, 0.1, 0.0],
                        "q0": [q0s[0], q0s[1], q0s[1], q0s[0]]})
    batched = mb.sweep(sim, design, steps=STEPS, metrics=METRICS, client=False, chunk=3)
    looped = mb.sweep(sim, design, steps=STEPS, metrics=METRICS, client=False, chunk=1,
                      controller=lambda m, point: None)
    assert_bitwise_equal(batched, looped)
    for i in range(len(design)):
        p = design.point(i)
        ref = mb.Simulator(model.with_params({"l2.mass": p["l2.mass"], "j1.damping": p["j1.damping"]}), 1e-3,
                           q0=p["q0"]).rollout(steps=STEPS)
        assert batched.q[i].tobytes() == ref.q[-1].tobytes() and batched.v[i].tobytes() == ref.v[-1].tobytes()
        assert batched["angle"][i] == ref.q[-1, 0] and np.array_equal(batched["path"][i], ref.q[::10, 1])
    assert batched.ok.all() and not batched.errors and len(set(batched.q[:, 0])) == 4  # the points differ


def test_free_fall_under_swept_gravity_matches_the_closed_form():
    """A body on a vertical slider under gravity g, semi-implicit Euler:
    v_n = -g n h and z_n = z_0 - g h² n (n + 1) / 2 (exact recursion)."""
    b = mb.ModelBuilder("slider")
    b.add_body("box", "world", "prismatic", axis=(0, 0, 1), mass=2.0, inertia=np.eye(3) * 0.01)
    h, n = 1e-3, 25
    sim = mb.Simulator(b.build(), h, q0=[0.5])
    gs = [9.81, 1.62, 3.71, 24.79]
    res = mb.sweep(sim, mb.Grid({"gravity": [[0, 0, -g] for g in gs]}), steps=n, client=False)
    g = np.array(gs)
    np.testing.assert_allclose(res.v[:, 0], -g * n * h, rtol=1e-12)
    np.testing.assert_allclose(res.q[:, 0], 0.5 - g * h * h * n * (n + 1) / 2, rtol=1e-12)
    assert res.grid("gravity").shape == (4, 3)


def test_a_simulator_with_ground_sweeps_through_the_batch():
    """A simulator given ground=True (its model has the plane its arguments
    add): balls of swept mass dropped from swept heights, batched and
    looped, each point bitwise its plain rollout."""
    b = mb.ModelBuilder("ball")
    b.add_body("ball", joint="free", mass=1.0, inertia=np.eye(3) * 0.004)
    b.add_geometry("ball", "sphere", (0.1,), name="ball")
    model = b.build()
    q0s = [model.neutral() + np.r_[0, 0, z, 0, 0, 0, 0] for z in (0.12, 0.2)]
    sim = mb.Simulator(model, 1e-3, ground=True, q0=q0s[0])
    design = mb.Grid({"ball.mass": [0.5, 2.0], "q0": q0s})
    batched = mb.sweep(sim, design, steps=200, client=False)
    looped = mb.sweep(sim, design, steps=200, client=False, controller=lambda m, point: None)
    assert_bitwise_equal(batched, looped)
    for i in range(len(design)):
        p = design.point(i)
        ref = mb.Simulator(model.with_params({"ball.mass": p["ball.mass"]}), 1e-3, ground=True,
                           q0=p["q0"]).rollout(steps=200)
        assert batched.q[i].tobytes() == ref.q[-1].tobytes()
    assert batched.ok.all() and np.all(np.abs(batched.q[:, 2] - 0.1) < 2e-3)  # landed, resting


def test_gains_set_the_template_controller(model, sim):
    target = np.array([0.2, 0.1])
    pd = mb.PD(model, 5.0, 0.5, target=target)
    res = mb.sweep(sim, mb.Grid({"kp": [1.0, 30.0], "kd": [[0.1, 0.2], [2.0, 1.0]]}), steps=STEPS,
                   controller=pd, metrics={"error": lambda tr: np.abs(tr.q[-1] - target).max()}, client=False)
    assert res.grid("error").shape == (2, 2)
    for i in range(4):
        kp, kd = res["kp"][i], res["kd"][i]
        ref = mb.Simulator(model, 1e-3, q0=[0.6, -0.3]).rollout(steps=STEPS, controller=mb.PD(model, kp, kd, target))
        assert res.q[i].tobytes() == ref.q[-1].tobytes()
        assert res["error"][i] == np.abs(ref.q[-1] - target).max()
    assert pd.gains[0, 0] == 5.0  # the template is unchanged
    ct = mb.ComputedTorque(model, 1.0, 1.0, target=target)
    res = mb.sweep(sim, mb.Grid({"kp": [100.0]}), steps=STEPS, controller=ct, client=False)
    ref = mb.Simulator(model, 1e-3, q0=[0.6, -0.3]).rollout(steps=STEPS,
                                                             controller=mb.ComputedTorque(model, 100.0, 1.0, target))
    assert res.q[0].tobytes() == ref.q[-1].tobytes()


def test_each_point_has_the_seed_of_its_index(sim):
    """Seeds are SeedSequence(seed).spawn(n)[i]'s, whatever the chunking;
    a 'seed' coordinate sets them."""
    def noisy(model, point):  # a constant random torque drawn from the point's seed
        tau = np.random.default_rng(point["seed"]).normal(size=model.nv)
        return lambda t, q, v: tau
    design = mb.Design({"user_gain": [1.0] * 5})
    a = mb.sweep(sim, design, steps=10, controller=noisy, seed=7, client=False, chunk=2)
    b = mb.sweep(sim, design, steps=10, controller=noisy, seed=7, client=False, chunk=5)
    assert_bitwise_equal(a, b)
    spawned = np.random.SeedSequence(7).spawn(5)
    assert [point_seed(7, i) for i in range(5)] == [int(s.generate_state(1, np.uint64)[0]) for s in spawned]
    assert a.coords["seed"].tolist() == [point_seed(7, i) for i in range(5)]
    assert len(set(a.q[:, 0])) == 5  # five different draws
    other = mb.sweep(sim, design, steps=10, controller=noisy, seed=8, client=False)
    assert not np.array_equal(other.q, a.q)
    given = mb.sweep(sim, mb.Grid({"seed": [11, 11, 12]}), steps=10, controller=noisy, client=False)
    assert given.coords["seed"].tolist() == [11, 11, 12]
    assert given.q[0].tobytes() == given.q[1].tobytes() and given.q[0, 0] != given.q[2, 0]


def test_failing_points_are_recorded_and_the_sweep_goes_on(model, sim):
    """A non-physical parameter, a diverging rollout and a failing metric:
    each recorded for its point (type, message, coordinates), the other
    points computed as in a sweep without them."""
    def metric(tr):
        if tr.q[0, 0] < 0.5:
            raise ValueError("starts too low")
        return tr.q[-1, 0]
    pd = mb.PD(model, 1.0, 0.0)
    start = [0.6, -0.3]
    design = mb.Design({"l1.mass": [1.0, -2.0, 1.0, 1.0], "kp": [1.0, 1.0, 1e30, 0.0],
                        "q0": [start, start, start, [0.1, 0.0]]})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # the diverging point's overflow
        res = mb.sweep(sim, design, steps=STEPS, controller=pd, metrics={"angle": metric}, client=False, chunk=2)
    assert res.ok.tolist() == [True, False, False, False]
    errors = res.errors
    assert errors[1].startswith("point 1 (l1.mass=-2, kp=1, q0=[ 0.6, -0.3]): InputError: parameter 'l1.mass'")
    assert errors[2].startswith("point 2 (l1.mass=1, kp=1e+30, q0=[ 0.6, -0.3]): SimulationError") and \
        "step" in errors[2]
    assert errors[3] == "point 3 (l1.mass=1, kp=0, q0=[0.1, 0. ]): metric 'angle' raised ValueError: starts too low"
    assert np.isnan(res.q[1:]).all() and np.isnan(res["angle"][1:]).all()
    alone = mb.sweep(sim, mb.Design({"l1.mass": [1.0], "kp": [1.0], "q0": [start]}), steps=STEPS, controller=pd,
                     metrics={"angle": metric}, client=False)
    assert res.q[0].tobytes() == alone.q[0].tobytes() and res["angle"][0] == alone["angle"][0]


def test_bad_input_gets_a_clear_error(model, sim):
    with pytest.raises(mb.InputError, match=r"'l2\.mas'.*did you mean 'l2\.mass'"):
        mb.sweep(sim, mb.Grid({"l2.mas": [1.0, 2.0]}), steps=5, client=False)
    with pytest.raises(mb.InputError, match="'stiff'.*nor a parameter"):
        mb.sweep(sim, mb.Grid({"stiff": [1.0]}), steps=5, client=False)
    with pytest.raises(mb.InputError, match="varies kp: give the PD"):
        mb.sweep(sim, mb.Grid({"kp": [1.0]}), steps=5, client=False)
    with pytest.raises(mb.InputError, match="'q0' needs vectors of 2"):
        mb.sweep(sim, mb.Grid({"q0": [[0.0, 0.0, 0.0]]}), steps=5, client=False)
    with pytest.raises(mb.InputError, match="equally shaped"):
        mb.Grid({"v0": [[0.0, 1.0], [1.0]]})
    with pytest.raises(mb.InputError, match="low <= high"):
        mb.RandomDesign({"l1.mass": (2.0, 1.0)}, n=4)
    with pytest.raises(mb.InputError, match="seeds are integers"):
        mb.Grid({"seed": [1, 2.5]})
    with pytest.raises(mb.InputError, match="one value per point"):
        mb.Design({"a": [1.0, 2.0], "b": [1.0]})
    with pytest.raises(mb.InputError, match="client must be"):
        mb.sweep(sim, mb.Grid({"l1.mass": [1.0]}), steps=5, client=3)


def test_unreachable_scheduler_is_named():
    pytest.importorskip("distributed")
    sim = mb.Simulator(pendulum(), 1e-3)
    with pytest.raises(mb.InputError, match=r"cannot reach the Dask scheduler at 'tcp://127\.0\.0\.1:1' within 1 s"):
        mb.sweep(sim, mb.Grid({"l1.mass": [1.0]}), steps=5, client="tcp://127.0.0.1:1", timeout=1)


def test_a_stopped_sweep_resumes_without_recomputing(sim, tmp_path):
    """Stopped at point 5 (KeyboardInterrupt inside a metric), the saved
    chunks are kept; the rerun computes only the points not saved and
    gives bitwise the uninterrupted result."""
    design = mb.Grid({"l2.mass": [0.5, 1.0, 1.5, 2.0], "j2.damping": [0.0, 0.2]})
    calls = []

    def stopping(tr):
        calls.append(1)
        if len(calls) == 6:
            raise KeyboardInterrupt
        return final_angle(tr)
    with pytest.raises(KeyboardInterrupt):
        mb.sweep(sim, design, steps=STEPS, metrics={"angle": stopping}, client=False, chunk=2, path=tmp_path)
    assert len(glob.glob(str(tmp_path / "chunk-*.npz"))) == 2 and not glob.glob(str(tmp_path / "*.tmp"))
    calls.clear()

    def counting(tr):
        calls.append(1)
        return final_angle(tr)
    resumed = mb.sweep(sim, design, steps=STEPS, metrics={"angle": counting}, client=False, chunk=3, path=tmp_path)
    assert len(calls) == 4  # points 4..7 only
    whole = mb.sweep(sim, design, steps=STEPS, metrics={"angle": final_angle}, client=False)
    assert_bitwise_equal(resumed, whole)
    calls.clear()
    again = mb.sweep(sim, design, steps=STEPS, metrics={"angle": counting}, client=False, path=tmp_path)
    assert not calls and again.path == str(tmp_path)
    assert_bitwise_equal(again, whole)
    with pytest.raises(mb.InputError, match="holds another sweep.*steps"):
        mb.sweep(sim, design, steps=STEPS + 1, metrics={"angle": final_angle}, client=False, path=tmp_path)


# Dask: one LocalCluster of two worker processes for the module (starting one takes seconds)

@pytest.fixture(scope="module")
def client():
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0")
    c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()


def test_in_process_and_two_workers_give_the_same_bits(sim, client, tmp_path):
    """(One worker: the killed-worker test below, on a LocalCluster of one.)"""
    design = mb.Grid({"l2.mass": [0.5, 1.0, 2.0], "j1.damping": [0.0, 0.5], "v0": [[0.0, 0.0], [1.0, -1.0]]})
    here = mb.sweep(sim, design, steps=STEPS, metrics=METRICS, client=False)
    two = mb.sweep(sim, design, steps=STEPS, metrics=METRICS, client=client, chunk=2, path=tmp_path)
    assert len(client.nthreads()) == 2
    by_address = mb.sweep(sim, design, steps=STEPS, metrics=METRICS, client=client.scheduler.address)
    assert client.scheduler.address.startswith("tcp://127.0.0.1:")
    assert_bitwise_equal(here, two)
    assert_bitwise_equal(here, by_address)
    assert here.ok.all() and here.grid("angle").shape == (3, 2, 2)


@pytest.mark.parametrize("workers", [1, 2])
def test_a_killed_worker_loses_and_duplicates_nothing(sim, client, tmp_path, workers):
    """The first task to evaluate the metric kills its worker process; Dask
    reruns the task (on the other worker, or on the only worker once its
    nanny has restarted it, which also lost the shipped job): every point
    is saved exactly once, bitwise as computed in this process. One
    worker: the default LocalCluster (client=None), started by the sweep."""
    marker = str(tmp_path / "killed")

    def killing(tr):
        if not os.path.exists(marker):
            open(marker, "w").close()
            os._exit(1)
        return final_angle(tr)
    design = mb.Grid({"l2.mass": [0.5, 1.0, 1.5, 2.0, 2.5, 3.0]})
    res = mb.sweep(sim, design, steps=STEPS, metrics={"angle": killing}, client=client if workers == 2 else None,
                   n_workers=1, chunk=2, path=tmp_path / "sweep")
    assert os.path.exists(marker)  # a worker was killed
    saved = []
    for f in glob.glob(str(tmp_path / "sweep" / "chunk-*.npz")):
        with np.load(f) as z:
            saved += z["index"].tolist()
    assert sorted(saved) == list(range(6))
    here = mb.sweep(sim, design, steps=STEPS, metrics={"angle": final_angle}, client=False)
    assert_bitwise_equal(res, here)


def _example():
    spec = importlib.util.spec_from_file_location("sweep_gains", os.path.join(ROOT, "examples", "sweep_gains.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_gain_sweep_example_draws_its_heat_map(tmp_path, capsys):
    example = _example()
    assert "python examples/sweep_gains.py" in example.__doc__
    path = tmp_path / "sweep_gains.png"
    res = example.main(["--n", "2", "--duration", "0.05", "--in-process", "--out", str(path)])
    with open(path, "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"
    assert res.grid("tracking_error").shape == (2, 2) and res.ok.all()
    assert "saved" in capsys.readouterr().out
