"""Trajectory files (issue 10): atomic saves (a writer killed mid-save
leaves the previous file intact), the exact file name, metadata that keeps
its types, the fingerprint of the model a trajectory was recorded on, and a
library error naming the file for every file that cannot be read or
written."""
import json
import os
import signal
import stat
import subprocess
import sys
import tempfile
import textwrap
import time

import numpy as np
import pytest

import multibody as mb
from multibody.errors import InputError
from multibody.forces import JointSpring
from multibody.simulation import model_fingerprint

SRC = os.path.join(os.path.dirname(__file__), "..", "..", "src")


def double_pendulum(mass2=1.0, name="double_pendulum", gravity=(0.0, 0.0, -9.81)):
    b = mb.ModelBuilder(name, gravity=gravity)
    I = np.diag([0.01, 0.01, 0.001])
    b.add_body("l1", "world", "revolute", axis=(0, 1, 0), mass=1.0, com=(0, 0, -0.5), inertia=I)
    b.add_body("l2", "l1", "revolute", placement=(np.eye(3), (0, 0, -1.0)), axis=(0, 1, 0), mass=mass2,
               com=(0, 0, -0.5), inertia=I)
    return b.build()


MODEL = double_pendulum()


def recorded(steps=50, **kw):
    sim = mb.Simulator(MODEL, 1e-3, "rk4", forces=[JointSpring("l1", 3.0)], q0=[0.3, -0.2], **kw)
    return sim.rollout(steps=steps, controller=lambda t, q, v: -0.5 * v)


FIELDS = ("t", "q", "v", "tau", "kinetic", "potential", "effort_clamped", "velocity_clamped", "power",
          "constraint_residual")


def assert_same(a, b):
    for name in FIELDS:
        x, y = getattr(a, name), getattr(b, name)
        assert x.dtype == y.dtype and x.shape == y.shape, name
        np.testing.assert_array_equal(x, y, err_msg=name)
    assert a.power_labels == b.power_labels
    assert a.meta == b.meta and a.model_fingerprint == b.model_fingerprint


def no_temporary_files(directory):
    return [f for f in os.listdir(directory) if f.endswith(".tmp")] == []


# ------------------------------------------------------------------ round trip, name, metadata

def test_round_trip_is_bit_exact_with_every_field(tmp_path):
    traj = recorded()
    assert traj.power_labels == ("tau", "0:JointSpring('l1')")
    traj.save(tmp_path / "run.npz")
    back = mb.Trajectory.load(tmp_path / "run.npz")
    assert_same(back, traj)
    assert back.meta == {"model": "double_pendulum", "integrator": "rk4", "dt": 1e-3}
    assert no_temporary_files(tmp_path)


@pytest.mark.parametrize("name", ["run.traj", "run", "run.npz", "run.tar.gz", "ça va.traj"])
def test_the_file_name_given_is_the_file_name_written(tmp_path, name):
    traj = recorded(steps=3)
    traj.save(str(tmp_path / name))
    assert sorted(os.listdir(tmp_path)) == [name]
    assert_same(mb.Trajectory.load(str(tmp_path / name)), traj)


def test_metadata_round_trips_with_its_types(tmp_path):
    traj = recorded(steps=2)
    traj.meta.update(gain=2.5, tiny=5e-324, big=1.7976931348623157e308, nan=float("nan"), count=3,
                     huge_int=2 ** 80, flag=True, off=False, label="PD ø", nothing=None,
                     gains=[1.0, 2, "three", None, [True]], nested={"a": {"b": [1.5]}},
                     np_float=np.float64(0.1), np_int=np.int32(-7), np_bool=np.bool_(True), pair=(1, 2.0))
    traj.save(tmp_path / "m.npz")
    meta = mb.Trajectory.load(tmp_path / "m.npz").meta
    expected_types = dict(gain=float, tiny=float, big=float, nan=float, count=int, huge_int=int, flag=bool,
                          off=bool, label=str, nothing=type(None), gains=list, nested=dict, np_float=float,
                          np_int=int, np_bool=bool, pair=list, model=str, integrator=str, dt=float)
    assert {k: type(v) for k, v in meta.items()} == expected_types
    assert meta["gain"] == 2.5 and meta["tiny"] == 5e-324 and meta["big"] == 1.7976931348623157e308
    assert np.isnan(meta["nan"]) and meta["count"] == 3 and meta["huge_int"] == 2 ** 80
    assert meta["flag"] is True and meta["off"] is False and meta["nothing"] is None
    assert meta["label"] == "PD ø" and meta["gains"] == [1.0, 2, "three", None, [True]]
    assert type(meta["gains"][1]) is int and meta["nested"] == {"a": {"b": [1.5]}}
    assert meta["np_float"] == 0.1 and meta["np_int"] == -7 and meta["np_bool"] is True
    assert meta["pair"] == [1, 2.0]  # tuples come back as lists (JSON)


@pytest.mark.parametrize("value,match", [
    (object(), r"meta\['bad'\] is a object"),
    (np.zeros(3), r"meta\['bad'\] is a ndarray.*tolist"),
    ({1: "x"}, r"meta\['bad'\] has the key 1"),
    ([1, {2, 3}], r"meta\['bad'\]\[1\] is a set"),
    (1 + 2j, r"meta\['bad'\] is a complex"),
])
def test_metadata_that_json_cannot_hold_is_refused_and_the_old_file_kept(tmp_path, value, match):
    path = tmp_path / "m.npz"
    good = recorded(steps=2)
    good.save(path)
    bad = recorded(steps=3)
    bad.meta["bad"] = value
    with pytest.raises(InputError, match=match):
        bad.save(path)
    assert_same(mb.Trajectory.load(path), good)
    assert no_temporary_files(tmp_path)


def test_new_files_get_the_umask_permissions_and_symlinks_are_kept(tmp_path):
    old = os.umask(0o022)
    try:
        recorded(steps=2).save(tmp_path / "a.npz")
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(tmp_path / "a.npz").st_mode) == 0o644
    os.symlink(tmp_path / "a.npz", tmp_path / "link.npz")
    traj = recorded(steps=4)
    traj.save(tmp_path / "link.npz")
    assert os.path.islink(tmp_path / "link.npz")
    assert_same(mb.Trajectory.load(tmp_path / "a.npz"), traj)


# ------------------------------------------------------------------ model fingerprint

def test_the_fingerprint_identifies_the_model():
    """Same model built twice: same fingerprint. Any change to what the
    dynamics depends on (a mass, a joint axis, a joint name, gravity, a
    limit) changes it; the model's name does not."""
    fp = model_fingerprint(MODEL)
    assert len(fp) == 64 and int(fp, 16) >= 0
    assert model_fingerprint(double_pendulum()) == fp
    assert model_fingerprint(double_pendulum(name="renamed")) == fp
    assert model_fingerprint(double_pendulum(mass2=1.0 + 1e-12)) != fp
    variants = []
    for change in ("axis", "joint_name", "lower", "damping"):
        b = mb.ModelBuilder("double_pendulum")
        I = np.diag([0.01, 0.01, 0.001])
        b.add_body("l1", "world", "revolute", axis=(0, 1, 0), mass=1.0, com=(0, 0, -0.5), inertia=I)
        kw = dict(axis=(0, 1, 0))
        if change == "axis":
            kw["axis"] = (1, 0, 0)
        elif change == "joint_name":
            kw["joint_name"] = "elbow"
        elif change == "lower":
            kw.update(lower=-1.0, upper=1.0)
        else:
            kw["damping"] = 0.1
        b.add_body("l2", "l1", "revolute", placement=(np.eye(3), (0, 0, -1.0)), mass=1.0, com=(0, 0, -0.5),
                   inertia=I, **kw)
        variants.append(model_fingerprint(b.build()))
    variants.append(model_fingerprint(double_pendulum(gravity=(0.0, 0.0, -9.80665))))
    assert len(set(variants + [fp])) == 6


def test_rollouts_carry_the_fingerprint_and_loading_checks_it(tmp_path):
    traj = recorded(steps=5)
    assert traj.model_fingerprint == model_fingerprint(MODEL)
    traj.check_model(MODEL)
    path = tmp_path / "r.npz"
    traj.save(path)
    mb.Trajectory.load(path, model=double_pendulum())  # the same model, built again
    heavier = double_pendulum(mass2=2.0)
    with pytest.raises(InputError, match=r"r\.npz': this trajectory was recorded on another model "
                                         r"\('double_pendulum'\) than 'double_pendulum'"):
        mb.Trajectory.load(path, model=heavier)
    with pytest.raises(InputError, match="recorded on another model"):
        traj.check_model(heavier)
    other = mb.ModelBuilder("slider")
    other.add_body("block", "world", "prismatic", axis=(1, 0, 0), mass=1.0, inertia=np.eye(3) * 0.1)
    with pytest.raises(InputError, match="recorded on another model"):
        mb.Trajectory.load(path, model=other.build())


def test_a_trajectory_without_fingerprint_cannot_be_checked(tmp_path):
    src = recorded(steps=3)
    by_hand = mb.Trajectory(src.t, src.q, src.v, src.tau, src.kinetic, src.potential)
    with pytest.raises(InputError, match="carries no model fingerprint"):
        by_hand.check_model(MODEL)
    by_hand.save(tmp_path / "h.npz")
    back = mb.Trajectory.load(tmp_path / "h.npz")
    assert back.model_fingerprint is None
    with pytest.raises(InputError, match="carries no model fingerprint"):
        mb.Trajectory.load(tmp_path / "h.npz", model=MODEL)
    with_fp = mb.Trajectory(src.t, src.q, src.v, src.tau, src.kinetic, src.potential,
                            model_fingerprint=model_fingerprint(MODEL))
    with_fp.check_model(MODEL)


# ------------------------------------------------------------------ unreadable and unwritable files

@pytest.mark.parametrize("change,match", [
    (dict(v=np.zeros(3)), r"t must have shape \(N,\) and v \(N, nv\)"),
    (dict(q=np.zeros((4, 2))), r"Trajectory is inconsistent: q has dtype float64 and shape \(4, 2\)"),
    (dict(t=["a", "b", "c"]), "Trajectory.t must be an array of numbers"),
    (dict(power=np.zeros((3, 5))), r"power has dtype float64 and shape \(3, 5\), expected float \(3, 2\)"),
    (dict(meta=[("a", 1)]), "Trajectory.meta must be a dict"),
    (dict(power_labels=("tau", 3)), "power_labels must be a tuple of strings"),
    (dict(model_fingerprint=123), "model_fingerprint must be a string or None"),
])
def test_a_trajectory_built_by_hand_is_checked(change, match):
    src = recorded(steps=2)
    fields = {name: getattr(src, name) for name in FIELDS}
    fields.update(meta=src.meta, power_labels=src.power_labels, model_fingerprint=src.model_fingerprint)
    fields.update(change)
    with pytest.raises(InputError, match=match):
        mb.Trajectory(**fields)


def test_a_trajectory_built_from_lists_saves_and_loads(tmp_path):
    traj = mb.Trajectory([0.0, 0.1], [[0.0], [1.0]], [[0.0], [2.0]], [[0.0], [3.0]], [0.0, 1.0], [0.0, -1.0])
    traj.save(tmp_path / "lists.npz")
    back = mb.Trajectory.load(tmp_path / "lists.npz")
    assert_same(back, traj)
    np.testing.assert_array_equal(back.v, [[0.0], [2.0]])
    assert back.effort_clamped.dtype == bool and back.power.shape == (2, 0)


def test_missing_and_non_files_are_named(tmp_path):
    with pytest.raises(InputError, match=r"cannot read trajectory file '.*nothere\.npz': no such file"):
        mb.Trajectory.load(tmp_path / "nothere.npz")
    with pytest.raises(InputError, match=r"cannot read trajectory file '.*': .*directory"):
        mb.Trajectory.load(tmp_path)
    for bad in (None, 3, ["a.npz"], ""):
        with pytest.raises(InputError, match="needs a file name"):
            mb.Trajectory.load(bad)
        with pytest.raises(InputError, match="needs a file name"):
            recorded(steps=1).save(bad)


@pytest.mark.parametrize("where", ["missing directory", "file as directory", "directory as file"])
def test_unwritable_paths_are_named_and_leave_nothing_behind(tmp_path, where):
    (tmp_path / "plain").write_text("x")
    (tmp_path / "dir").mkdir()
    path = {"missing directory": tmp_path / "no" / "t.npz", "file as directory": tmp_path / "plain" / "t.npz",
            "directory as file": tmp_path / "dir"}[where]
    with pytest.raises(InputError, match=r"cannot write trajectory file '" + str(path)):
        recorded(steps=2).save(path)
    assert no_temporary_files(tmp_path) and no_temporary_files(tmp_path / "dir")
    assert (tmp_path / "plain").read_text() == "x"


def test_a_read_only_directory_gives_an_error_naming_the_file(tmp_path):
    """As root the permission bits do not stop a write: the save then runs in
    a child that drops to the unprivileged user 65534 after importing."""
    d = tempfile.mkdtemp(prefix="mb-ro-")
    try:
        os.chmod(d, 0o555)
        code = textwrap.dedent("""
            import os, sys
            import numpy as np
            import multibody as mb
            tr = mb.Trajectory(np.zeros(2), np.zeros((2, 1)), np.zeros((2, 1)), np.zeros((2, 1)), np.zeros(2),
                               np.zeros(2))
            if os.geteuid() == 0:
                os.setgid(65534)
                os.setuid(65534)
            try:
                tr.save(os.path.join(sys.argv[1], "t.npz"))
            except mb.InputError as e:
                print("InputError:", e)
            else:
                print("saved")
        """)
        r = subprocess.run([sys.executable, "-c", code, d], capture_output=True, text=True, timeout=120,
                           env=dict(os.environ, PYTHONPATH=os.path.abspath(SRC)))
        assert r.returncode == 0, r.stderr
        assert r.stdout.startswith(f"InputError: cannot write trajectory file '{d}/t.npz': Permission denied"), \
            r.stdout
        assert os.listdir(d) == []
    finally:
        os.chmod(d, 0o755)
        os.rmdir(d)


def test_a_failing_write_keeps_the_old_file_and_removes_the_temporary(tmp_path, monkeypatch):
    """A full disk (ENOSPC while writing): InputError naming the file, the
    previous file intact, no temporary file left."""
    path = tmp_path / "t.npz"
    good = recorded(steps=2)
    good.save(path)

    def full_disk(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(np, "savez", full_disk)
    with pytest.raises(InputError, match=r"cannot write trajectory file '.*t\.npz': No space left on device"):
        recorded(steps=3).save(path)
    monkeypatch.undo()
    assert_same(mb.Trajectory.load(path), good)
    assert no_temporary_files(tmp_path)


def _save_bytes(traj, tmp_path):
    path = tmp_path / "orig.npz"
    traj.save(path)
    return path.read_bytes()


def test_every_truncation_gives_an_error_naming_the_file(tmp_path):
    traj = recorded(steps=20)
    data = _save_bytes(traj, tmp_path)
    path = tmp_path / "cut.npz"
    lengths = sorted(set(np.linspace(0, len(data) - 1, 120).astype(int)) | {0, 1, 21, len(data) - 22})
    for n in lengths:
        path.write_bytes(data[:n])
        with pytest.raises(InputError, match=r"trajectory file '.*cut\.npz'|'.*cut\.npz' is not a multibody"):
            mb.Trajectory.load(path)


def test_corrupted_bytes_give_an_error_or_the_exact_data_never_other_data(tmp_path):
    """2,000 single-byte corruptions at fixed random places: each load is
    either an InputError naming the file or the original data (a byte the
    format does not use); nothing else escapes and no wrong data is
    returned (the zip CRCs cover the arrays)."""
    traj = recorded(steps=20)
    data = bytearray(_save_bytes(traj, tmp_path))
    path = tmp_path / "bad.npz"
    rng = np.random.default_rng(10)
    errors = same = 0
    for _ in range(2000):
        damaged = bytearray(data)
        k = int(rng.integers(len(data)))
        damaged[k] ^= int(rng.integers(1, 256))
        path.write_bytes(bytes(damaged))
        try:
            back = mb.Trajectory.load(path)
        except InputError as e:
            assert "bad.npz" in str(e)
            errors += 1
        else:
            assert_same(back, traj)
            same += 1
    assert errors > 1000 and errors + same == 2000


@pytest.mark.parametrize("content,match", [
    (b"", "truncated or corrupted"),
    (b"not a zip file at all", "truncated or corrupted"),
    ("npz without header", "is not a multibody trajectory file"),
    ("wrong format", "is not a multibody trajectory file"),
    ("future version", "has format version 3"),
    ("header not json", "truncated or corrupted"),
    ("inconsistent q", r"is inconsistent: q has dtype float64 and shape \(4, 2\)"),
    ("object array", "truncated or corrupted"),
])
def test_files_that_are_not_trajectories(tmp_path, content, match):
    path = tmp_path / "x.npz"
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        traj = recorded(steps=2)
        header = {"format": "multibody-trajectory", "version": 2, "model_fingerprint": None,
                  "power_labels": list(traj.power_labels), "meta": {}}
        arrays = {name: getattr(traj, name) for name in FIELDS}
        if content == "npz without header":
            np.savez(path, **arrays)
        else:
            if content == "wrong format":
                header["format"] = "something-else"
            elif content == "future version":
                header["version"] = 3
            elif content == "inconsistent q":
                arrays["q"] = np.zeros((4, 2))
            elif content == "object array":
                arrays["t"] = np.array([1.0, None], dtype=object)
            text = "{not json" if content == "header not json" else json.dumps(header)
            with open(path, "wb") as f:
                np.savez(f, header=np.array(text), **arrays)
    with pytest.raises(InputError, match=r"x\.npz.*" + match + "|" + match + r".*x\.npz"):
        mb.Trajectory.load(path)


def test_an_old_format_file_is_refused_clearly(tmp_path):
    """Files of format 1 (meta as strings, no header) are not read: there
    were no users yet; the error says so."""
    path = tmp_path / "old.npz"
    traj = recorded(steps=2)
    np.savez(path, t=traj.t, q=traj.q, v=traj.v, tau=traj.tau, kinetic=traj.kinetic, potential=traj.potential,
             meta_keys=np.array(["dt"]), meta_values=np.array(["0.001"]))
    with pytest.raises(InputError, match="not a multibody trajectory file .*before format 2"):
        mb.Trajectory.load(path)


# ------------------------------------------------------------------ atomicity

CHILD_SLOW_SAVE = textwrap.dedent("""
    # save a trajectory whose first large array write then stalls: the parent kills this process there
    import sys, time
    import numpy as np
    import numpy.lib.format as fmt
    import multibody as mb
    path, N = sys.argv[1], int(sys.argv[2])
    rng = np.random.default_rng(1)
    traj = mb.Trajectory(np.arange(N) * 1e-3, rng.normal(size=(N, 7)), rng.normal(size=(N, 7)),
                         rng.normal(size=(N, 7)), rng.normal(size=N), rng.normal(size=N))
    write_array = fmt.write_array

    def stalling(fp, array, *args, **kwargs):
        write_array(fp, array, *args, **kwargs)
        if array.nbytes > 100_000:  # past any buffering: these bytes reach the file
            print("WRITING", flush=True)
            time.sleep(120)

    fmt.write_array = stalling
    traj.save(path)
    print("SAVED", flush=True)
""")


def _run_child(code, *args):
    return subprocess.Popen([sys.executable, "-c", code, *map(str, args)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=dict(os.environ, PYTHONPATH=os.path.abspath(SRC)))


def test_a_writer_killed_mid_save_leaves_the_previous_file_intact(tmp_path):
    """The child has written part of the new file when it is killed
    (SIGKILL: no cleanup runs). The previous file loads unchanged; what is
    left is at most the child's temporary file, which load never reads.
    (With the former in-place np.savez, the file was truncated here.)"""
    path = tmp_path / "run.traj"
    good = recorded(steps=30)
    good.save(path)
    child = _run_child(CHILD_SLOW_SAVE, path, 50_000)
    try:
        line = child.stdout.readline()
        assert line.strip() == "WRITING", (line, child.stderr.read() if child.poll() is not None else "")
        os.kill(child.pid, signal.SIGKILL)
        child.wait(timeout=30)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert child.returncode == -signal.SIGKILL
    assert_same(mb.Trajectory.load(path), good)
    partial = [f for f in os.listdir(tmp_path) if f.endswith(".tmp")]
    assert len(partial) == 1 and os.path.getsize(tmp_path / partial[0]) > 100_000  # the new data went there
    assert sorted(os.listdir(tmp_path)) == sorted(["run.traj"] + partial)


CHILD_SAVE_LOOP = textwrap.dedent("""
    # save two different large trajectories to one file, alternately, until killed
    import sys
    import numpy as np
    import multibody as mb
    path, N = sys.argv[1], int(sys.argv[2])
    trajs = []
    for seed in (1, 2):
        rng = np.random.default_rng(seed)
        t = mb.Trajectory(np.arange(N) * 1e-3, rng.normal(size=(N, 7)), rng.normal(size=(N, 7)),
                          rng.normal(size=(N, 7)), rng.normal(size=N), rng.normal(size=N), meta={"seed": seed})
        trajs.append(t)
    trajs[0].save(path)
    print("READY", flush=True)
    k = 0
    while True:
        k += 1
        trajs[k % 2].save(path)
""")


def test_killing_a_saving_loop_at_any_moment_leaves_a_complete_file(tmp_path):
    """No stalling: a child saves two 4 MB trajectories in turn and is killed
    at several moments. Each time the file is one of the two, complete."""
    path = tmp_path / "loop.npz"
    N = 20_000
    expected = {}
    for seed in (1, 2):
        rng = np.random.default_rng(seed)
        expected[seed] = rng.normal(size=(N, 7))
    for delay in (0.05, 0.13, 0.31):
        child = _run_child(CHILD_SAVE_LOOP, path, N)
        try:
            assert child.stdout.readline().strip() == "READY"
            time.sleep(delay)
            os.kill(child.pid, signal.SIGKILL)
            child.wait(timeout=30)
        finally:
            if child.poll() is None:
                child.kill()
                child.wait()
        back = mb.Trajectory.load(path)
        np.testing.assert_array_equal(back.q, expected[back.meta["seed"]])
        for f in os.listdir(tmp_path):
            if f.endswith(".tmp"):
                os.unlink(tmp_path / f)
