"""The command line: every command's output, files and exit status (0
success, 1 error as one line, 2 usage), run in-process through
``multibody.cli.main``; a few real processes check the entry points."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import multibody as mb
from multibody import viz
from multibody.cli import main
from multibody.cli.convert import read_csv, write_csv
from multibody.viz.plots import coordinate_names

ARM = os.path.join(os.path.dirname(mb.__file__), "data", "robots", "mb_arm.urdf")


def run(capsys, *argv):
    """(exit status, stdout, stderr) of ``multibody *argv`` in this process."""
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def arm():
    return mb.load_urdf(ARM, srdf=ARM.replace(".urdf", ".srdf"))


# ------------------------------------------------------------------ help, version, usage

def test_no_arguments_prints_the_help(capsys):
    rc, out, err = run(capsys)
    assert rc == 0 and out.startswith("usage: multibody") and "simulate" in out and err == ""


def test_version_and_usage_errors(capsys):
    rc, out, _ = run(capsys, "--version")
    assert rc == 0 and out.strip() == f"multibody {mb.__version__}"
    rc, _, err = run(capsys, "frobnicate")
    assert rc == 2 and "invalid choice" in err
    rc, _, err = run(capsys, "info")  # a missing argument
    assert rc == 2 and "required: MODEL" in err
    rc, _, err = run(capsys, "simulate", "mb_arm", "--dt", "-1")
    assert rc == 2 and "--dt" in err and "positive" in err
    rc, _, err = run(capsys, "simulate", "mb_arm", "--integrator", "leapfrog")
    assert rc == 2 and "invalid choice" in err
    rc, _, err = run(capsys, "simulate", "mb_arm", "--kp", "10")
    assert rc == 2 and "--controller pd" in err


def test_entry_points_exit_statuses(tmp_path):
    """The real processes: python -m multibody and the console script."""
    bad = tmp_path / "bad.urdf"
    bad.write_text("<robot name='x'><link")
    script = os.path.join(os.path.dirname(sys.executable), "multibody")
    for cmd in ([sys.executable, "-m", "multibody"], [script]):
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        assert p.returncode == 0 and p.stdout.startswith("usage: multibody"), p.stderr
        p = subprocess.run(cmd + ["info", str(bad)], capture_output=True, text=True, timeout=300)
        assert p.returncode == 1 and p.stderr.count("\n") == 1 and "multibody: error:" in p.stderr
        assert "bad.urdf" in p.stderr and "not well-formed" in p.stderr
    p = subprocess.run([script, "info"], capture_output=True, text=True, timeout=300)
    assert p.returncode == 2 and "required" in p.stderr
    p = subprocess.run([script, "--debug", "info", str(bad)], capture_output=True, text=True, timeout=300)
    assert p.returncode == 1 and "Traceback" in p.stderr and p.stderr.rstrip().splitlines()[-1].startswith(
        "multibody: error:")


# ------------------------------------------------------------------ info

def test_info_urdf_text_and_json(capsys):
    model = arm()
    rc, out, err = run(capsys, "info", ARM)
    assert rc == 0 and err == ""
    assert "nq = 7, nv = 7, bodies = 7 (+ world)" in out and "total mass = 17.9 kg" in out
    for name in model.joint_names[1:] + ("tool", "hand_0"):
        assert name in out
    rc, out, _ = run(capsys, "info", "mb_arm", "--json")
    d = json.loads(out)
    assert (d["nq"], d["nv"], d["format"]) == (7, 7, "urdf")
    assert [j["name"] for j in d["joints"]] == list(model.joint_names[1:])
    assert [j["lower"][0] for j in d["joints"]] == list(model.lower_limit)
    assert [j["effort_limit"][0] for j in d["joints"]] == list(model.effort_limit)
    assert len(d["collision_geometries"]) == len(model.collision_geometries)
    assert [f["name"] for f in d["frames"]] == list(model.frame_names)


def test_info_masses_agree_with_pinocchio(capsys):
    pin = pytest.importorskip("pinocchio")
    rc, out, _ = run(capsys, "info", ARM, "--json", "--floating-base")
    d = json.loads(out)
    p = pin.buildModelFromUrdf(ARM, pin.JointModelFreeFlyer())
    assert d["nq"] == p.nq and d["nv"] == p.nv
    assert d["joints"][0]["coordinates"] == ["root_joint." + c for c in ("x", "y", "z", "qw", "qx", "qy", "qz")]
    assert abs(d["total_mass"] - pin.computeTotalMass(p)) < 1e-12
    assert sorted(b["mass"] for b in d["body_list"]) == pytest.approx(sorted(i.mass for i in p.inertias[1:]),
                                                                         abs=1e-12)


def test_info_mjcf(capsys):
    pytest.importorskip("mujoco")
    rc, out, _ = run(capsys, "info", "delta")
    assert rc == 0 and "model 'delta' (MJCF" in out and "nq = 19, nv = 15" in out
    assert "equality constraints (2)" in out and "actuators (3)" in out
    rc, out, _ = run(capsys, "info", "delta", "--json")
    d = json.loads(out)
    assert [j["type"] for j in d["joints"]].count("spherical") == 4
    assert d["joints"][1]["coordinates"] == ["elbow1.qw", "elbow1.qx", "elbow1.qy", "elbow1.qz"]


def test_info_errors_are_one_line(capsys, tmp_path):
    rc, _, err = run(capsys, "info", str(tmp_path / "missing.urdf"))
    assert rc == 1 and err.count("\n") == 1 and "no model file" in err and "missing.urdf" in err
    rc, _, err = run(capsys, "info", str(tmp_path))
    assert rc == 1 and "is a directory" in err
    bad = tmp_path / "robot.xml"
    bad.write_text("<sdf version='1.6'/>")
    rc, _, err = run(capsys, "info", str(bad))
    assert rc == 1 and "neither a URDF" in err
    bad = tmp_path / "robot.urdf"
    bad.write_text("<robot name='r'><link name='a'/><joint name='j' type='revolute'><parent link='a'/>"
                   "<child link='nope'/></joint></robot>")
    rc, _, err = run(capsys, "info", str(bad))
    assert rc == 1 and err.startswith("multibody: error:") and err.count("\n") == 1 and "nope" in err
    rc, _, err = run(capsys, "info", "delta", "--floating-base")
    assert rc == 1 and "--floating-base applies to URDF" in err


# ------------------------------------------------------------------ simulate

def test_simulate_is_the_library_rollout(capsys, tmp_path):
    """The trajectory written is bitwise the Simulator's with the same
    options, records where its model comes from, and the plot is written."""
    pytest.importorskip("matplotlib")
    out_path, png = tmp_path / "t.npz", tmp_path / "t.png"
    rc, out, err = run(capsys, "simulate", "mb_arm", "--duration", "0.2", "--dt", "2e-3", "--integrator", "rk4",
                       "--q0", "joint2=0.3", "joint4=-1", "--out", str(out_path), "--plot", str(png))
    assert rc == 0, err
    assert "simulated 0.2 s of 'mb_arm' with rk4" in out and f"trajectory: {out_path}" in out
    model = arm()
    traj = mb.Trajectory.load(out_path, model=model)
    q0 = model.neutral()
    q0[1], q0[3] = 0.3, -1.0
    ref = mb.Simulator(model, 2e-3, "rk4", q0=q0).rollout(duration=0.2, progress=False)
    np.testing.assert_array_equal(traj.q, ref.q)
    np.testing.assert_array_equal(traj.v, ref.v)
    assert traj.meta["model_file"] == ARM and traj.meta["controller"] is None and traj.meta["ground"] is False
    assert png.read_bytes().startswith(b"\x89PNG")


def test_simulate_pd_holds_and_reaches_its_target(capsys, tmp_path):
    """Gravity compensation at the target makes it an equilibrium: started
    there, the arm does not move; started elsewhere it converges; computed
    torque converges to round-off."""
    path = tmp_path / "t.npz"
    rc, out, err = run(capsys, "simulate", "mb_arm", "--duration", "0.5", "--q0", "joint2=0.5", "joint4=-1.5",
                       "--target", "joint2=0.5", "joint4=-1.5", "--out", str(path))
    assert rc == 0, err
    traj = mb.Trajectory.load(path)
    assert np.abs(traj.q - traj.q[0]).max() < 1e-9 and traj.meta["controller"] == "pd"
    assert traj.meta["target"] == list(traj.q[0])
    rc, out, err = run(capsys, "simulate", "mb_arm", "--duration", "3", "--target", "joint2=0.5", "joint4=-1.5",
                       "--out", str(path))
    traj = mb.Trajectory.load(path)
    target = arm().neutral()
    target[1], target[3] = 0.5, -1.5
    assert rc == 0 and np.abs(traj.q[-1] - target).max() < 5e-3 and np.abs(traj.v[-1]).max() < 1e-2
    rc, out, err = run(capsys, "simulate", "mb_arm", "--duration", "3", "--controller", "computed_torque",
                       "--target", ",".join(str(x) for x in target), "--out", str(path))
    traj = mb.Trajectory.load(path)
    assert rc == 0 and np.abs(traj.q[-1] - target).max() < 1e-8 and "computed_torque: largest" in out


def test_simulate_bad_targets(capsys):
    rc, _, err = run(capsys, "simulate", "mb_arm", "--target", "elbow=1")
    assert rc == 1 and "no joint or coordinate 'elbow'" in err and "joint1" in err
    rc, _, err = run(capsys, "simulate", "mb_arm", "--target", "1", "2")
    assert rc == 1 and "has 2 values; model 'mb_arm' has nq = 7" in err
    rc, _, err = run(capsys, "simulate", "mb_arm", "--target", "joint1=x")
    assert rc == 1 and "'x' is not a number" in err
    rc, _, err = run(capsys, "simulate", "mb_arm", "--q0", "joint1=nan")
    assert rc == 1 and "--q0" in err
    rc, _, err = run(capsys, "simulate", "mb_arm", "--controller", "pd", "--kp", "1", "2")
    assert rc == 1 and "--kp takes 1 or nv = 7 numbers" in err
    rc, _, err = run(capsys, "simulate", "mb_arm", "--floating-base", "--controller", "computed_torque")
    assert rc == 1 and "free joint" in err
    rc, _, err = run(capsys, "simulate", "mb_arm", "--out", "/no/such/folder/t.npz")
    assert rc == 1 and "does not exist" in err


def _fake_viewer(monkeypatch, calls):
    """multibody.viz with a recording export_html and Viewer (the real ones
    are helper D's; these tests check the wiring)."""
    def export_html(model, trajectory, path, fps=30):
        calls.append(("export_html", model.name, trajectory, str(path)))
        open(path, "w").write("<html></html>")

    class Viewer:
        def __init__(self, model, port=None, collision=False):
            self.url = f"http://127.0.0.1:{port or 7000}/"
            calls.append(("Viewer", model.name, port))

        def play(self, trajectory):
            calls.append(("play", trajectory))

        def update(self, q, t=0.0, contacts=None):
            calls.append(("update", np.array(q), t))

        def close(self):
            calls.append(("close",))

    def show(model, q=None, port=None, collision=False):
        viewer = Viewer(model, port)
        viewer.update(model.neutral() if q is None else q)
        return viewer

    monkeypatch.setattr(viz, "export_html", export_html, raising=False)
    monkeypatch.setattr(viz, "Viewer", Viewer, raising=False)
    monkeypatch.setattr(viz, "show", show, raising=False)


def test_simulate_html_and_view(capsys, tmp_path, monkeypatch):
    calls = []
    _fake_viewer(monkeypatch, calls)
    html = tmp_path / "t.html"
    rc, out, err = run(capsys, "simulate", "mb_arm", "--duration", "0.05", "--ground", "--html", str(html), "--view",
                       "--port", "8123")
    assert rc == 0, err
    # the viewer opens first and is shown the run live (rollout(view=)), then the page is written and
    # the recording played back
    assert calls[0] == ("Viewer", "mb_arm", 8123)
    updates = [c for c in calls if c[0] == "update"]
    names = [c[0] for c in calls if c[0] != "update"]
    assert names == ["Viewer", "export_html", "play", "close"]
    exported, played = (next(c for c in calls if c[0] == k) for k in ("export_html", "play"))
    assert exported[1] == "mb_arm" and exported[3] == str(html) and html.exists()
    traj = exported[2]
    assert played[1] is traj and len(traj.t) == 51
    assert [u[2] for u in updates] == [traj.t[0], traj.t[33], traj.t[50]]  # 30 frames per simulated second
    np.testing.assert_array_equal(updates[-1][1], traj.q[-1])
    assert f"animation: {html}" in out and "in the viewer at http://127.0.0.1:8123/" in out
    assert "live at http://127.0.0.1:8123/" in out


def test_viewer_missing_is_one_line_naming_the_extra(capsys, tmp_path, monkeypatch):
    for name in ("export_html", "Viewer", "show"):
        monkeypatch.delattr(viz, name, raising=False)
    for args in (["simulate", "mb_arm", "--html", str(tmp_path / "t.html")], ["simulate", "mb_arm", "--view"],
                 ["view", "mb_arm"]):
        rc, out, err = run(capsys, *args)
        assert rc == 1 and err.count("\n") == 1 and "pip install multibody[viz]" in err and out == ""


# ------------------------------------------------------------------ view

def test_view_model_and_trajectory(capsys, tmp_path, monkeypatch):
    calls = []
    _fake_viewer(monkeypatch, calls)
    monkeypatch.setattr("builtins.input", lambda *a: "")
    rc, out, err = run(capsys, "view", "mb_arm", "--q", "joint2=0.4")
    assert rc == 0, err
    q = arm().neutral()
    q[1] = 0.4
    assert calls[0] == ("Viewer", "mb_arm", None) and calls[1][0] == "update" and calls[-1] == ("close",)
    np.testing.assert_array_equal(calls[1][1], q)
    path = tmp_path / "t.npz"
    assert run(capsys, "simulate", "mb_arm", "--duration", "0.02", "--out", str(path))[0] == 0
    calls.clear()
    rc, out, err = run(capsys, "view", str(path))
    assert rc == 0 and calls[0][:2] == ("Viewer", "mb_arm") and calls[1][0] == "play"
    np.testing.assert_array_equal(calls[1][1].q, mb.Trajectory.load(path).q)
    html = tmp_path / "t.html"
    rc, out, err = run(capsys, "view", str(path), "--model", ARM, "--html", str(html))
    assert rc == 0 and html.exists() and calls[-1][0] == "export_html"


def test_view_refuses_a_trajectory_of_another_model(capsys, tmp_path):
    pytest.importorskip("mujoco")
    path = tmp_path / "t.npz"
    assert run(capsys, "simulate", "mb_arm", "--duration", "0.01", "--out", str(path))[0] == 0
    rc, _, err = run(capsys, "view", str(path), "--model", "delta")
    assert rc == 1 and "recorded on another model ('mb_arm') than 'delta'" in err
    rc, _, err = run(capsys, "view", str(path), "--model", ARM, "--floating-base")
    assert rc == 1 and "another model" in err
    bare = tmp_path / "bare.npz"
    traj = mb.Trajectory.load(path)
    del traj.meta["model_file"]
    traj.save(bare)
    rc, _, err = run(capsys, "view", str(bare))
    assert rc == 1 and "does not name its model file: give it with --model MODEL" in err


# ------------------------------------------------------------------ convert

def _hand_made_trajectory():
    """A trajectory with every array non-trivial: actuators, power, masks,
    awkward floats (−0.0, tiny and huge numbers)."""
    rng = np.random.default_rng(3)
    N = 6
    q = rng.standard_normal((N, 3)) * np.array([1e-300, 1.0, 1e300])
    q[0, 1] = -0.0
    return mb.Trajectory(t=np.arange(N) * 0.1, q=q, v=rng.standard_normal((N, 2)), tau=rng.standard_normal((N, 2)),
                         kinetic=rng.random(N), potential=rng.standard_normal(N),
                         effort_clamped=rng.random((N, 2)) > 0.5, velocity_clamped=rng.random((N, 2)) > 0.5,
                         power=rng.standard_normal((N, 2)), power_labels=("tau", "joint damping"),
                         constraint_residual=rng.random(N), model_fingerprint="ab" * 32,
                         meta={"model": "m", "gains": [1, 2.5], "note": "x,y\n"},
                         control=rng.standard_normal((N, 2)), activation=rng.standard_normal((N, 1)),
                         actuator_force=rng.standard_normal((N, 2)), actuator_names=("m1", "m2"))


def test_convert_npz_csv_round_trip_is_lossless(capsys, tmp_path):
    traj = _hand_made_trajectory()
    a, csv, b, csv2 = (tmp_path / n for n in ("a.npz", "a.csv", "b.npz", "b.csv"))
    traj.save(a)
    assert run(capsys, "convert", str(a), str(csv))[0] == 0
    assert run(capsys, "convert", str(csv), str(b))[0] == 0
    assert run(capsys, "convert", str(b), str(csv2))[0] == 0
    assert csv.read_bytes() == csv2.read_bytes()
    x, y = mb.Trajectory.load(a), mb.Trajectory.load(b)
    for name in ("t", "q", "v", "tau", "kinetic", "potential", "effort_clamped", "velocity_clamped", "power",
                 "constraint_residual", "control", "activation", "actuator_force"):
        u, w = getattr(x, name), getattr(y, name)
        assert u.dtype == w.dtype and u.shape == w.shape and u.tobytes() == w.tobytes(), name  # bit for bit
    assert (x.meta, x.model_fingerprint, x.power_labels, x.actuator_names) == \
        (y.meta, y.model_fingerprint, y.power_labels, y.actuator_names)
    assert csv.read_text().splitlines()[2].startswith("t,q[0],q[1],q[2],v[0],v[1],tau[0]")


def test_convert_refuses_what_it_cannot_do(capsys, tmp_path):
    rc, _, err = run(capsys, "convert", ARM, str(tmp_path / "arm.xml"))
    assert rc == 1 and "model files are not converted" in err
    rc, _, err = run(capsys, "convert", str(tmp_path / "a.npz"), str(tmp_path / "b.npz"))
    assert rc == 1 and "nothing to convert" in err
    rc, _, err = run(capsys, "convert", str(tmp_path / "a.npz"), str(tmp_path / "b.csv"))
    assert rc == 1 and "no such file" in err
    bad = tmp_path / "bad.csv"
    bad.write_text("t,q[0]\n0,1\n")
    rc, _, err = run(capsys, "convert", str(bad), str(tmp_path / "b.npz"))
    assert rc == 1 and "not a multibody trajectory CSV" in err
    traj = _hand_made_trajectory()
    write_csv(traj, tmp_path / "ok.csv")
    lines = (tmp_path / "ok.csv").read_text().splitlines()
    (tmp_path / "short.csv").write_text("\n".join(lines[:4] + [lines[4].rsplit(",", 1)[0]]) + "\n")
    rc, _, err = run(capsys, "convert", str(tmp_path / "short.csv"), str(tmp_path / "b.npz"))
    assert rc == 1 and "line 5" in err
    traj.sensors = {"s": np.zeros((len(traj.t), 1))}
    traj.save(tmp_path / "s.npz")
    rc, _, err = run(capsys, "convert", str(tmp_path / "s.npz"), str(tmp_path / "s.csv"))
    assert rc == 1 and "sensors" in err and "keep the .npz" in err
    assert read_csv(tmp_path / "ok.csv").q.tobytes() == traj.q.tobytes()


# ------------------------------------------------------------------ bench, demo

def test_bench_times_every_call(capsys):
    rc, out, err = run(capsys, "bench", "--integrators", "semi_implicit_euler", "--steps", "3", "--repeat", "1")
    assert rc == 0, err
    for name in ("forward_kinematics", "jacobian('tool')", "rnea", "crba", "aba", "Simulator.step "
                 "(semi_implicit_euler)", "rollout 3 steps (semi_implicit_euler), per step"):
        assert name in out
    rc, _, err = run(capsys, "bench", "--steps", "0")
    assert rc == 2


def test_demo_command_writes_plot_trajectory_and_html(capsys, tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")
    calls = []
    _fake_viewer(monkeypatch, calls)
    rc, out, err = run(capsys, "demo", "--duration", "0.05", "--out", str(tmp_path))
    assert rc == 0, err
    for name in ("demo.png", "demo_trajectory.npz", "demo.html"):
        assert str(tmp_path / name) in out and (tmp_path / name).exists()
    assert calls[0][:2] == ("export_html", "mb_arm")
    traj = mb.Trajectory.load(tmp_path / "demo_trajectory.npz", model=arm())
    assert traj.meta["model_file"] == ARM
    assert f"multibody view {tmp_path / 'demo_trajectory.npz'}" in out


def test_plot_labels_joints_by_name(tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")
    from matplotlib.figure import Figure
    model = mb.load_urdf(ARM, floating_base=True, srdf=ARM.replace(".urdf", ".srdf"))
    traj = mb.Simulator(model, 1e-3).rollout(steps=3, progress=False)
    legends = []
    monkeypatch.setattr(Figure, "savefig", lambda fig, path, **kw: legends.append(
        [t.get_text() for t in fig.axes[2].get_legend().get_texts()]))
    viz.plot_trajectory(traj, tmp_path / "p.png", model=model, joints=["root_joint.z", "joint2", 9])
    assert legends[-1] == ["root_joint.z", "joint2", "joint3"]
    viz.plot_trajectory(traj, tmp_path / "p.png", model=model)
    assert legends[-1] == list(coordinate_names(model)[:7])
    viz.plot_trajectory(traj, tmp_path / "p.png", joints=[8])
    assert legends[-1] == ["q[8]"]
    with pytest.raises(mb.InputError, match="another model"):
        viz.plot_trajectory(traj, tmp_path / "p.png", model=arm())
    with pytest.raises(mb.InputError, match="needs model="):
        viz.plot_trajectory(traj, tmp_path / "p.png", joints=["joint2"])



def test_interrupt_and_internal_errors(capsys, monkeypatch):
    """Ctrl-C is status 130; a bug (an exception outside the library's
    errors) is one line from the console entry point and propagates to a
    Python caller."""
    import multibody.cli.info as info

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(info, "info", interrupted)
    rc, _, err = run(capsys, "info", "mb_arm")
    assert rc == 130 and err == "multibody: interrupted\n"

    def bug(*args, **kwargs):
        raise ZeroDivisionError("division by zero")

    monkeypatch.setattr(info, "info", bug)
    with pytest.raises(ZeroDivisionError):
        main(["info", "mb_arm"])
    monkeypatch.setattr(sys, "argv", ["multibody", "info", "mb_arm"])
    assert main() == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "internal error" in err and "ZeroDivisionError: division by zero" in err
