"""The command line with the real viewer (multibody.viz: viser, the HTML
export): the pages are written, the live viewer starts and stops and frees
its port, and a missing viser is one line naming the extra."""
import socket
import sys

import pytest

import multibody as mb
from multibody.cli import main


def run(capsys, *argv):
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _is_html(path):
    text = path.read_text()
    return text.lstrip().lower().startswith("<!doctype html") and "</html>" in text.lower()


def test_html_pages_of_a_simulation_a_trajectory_and_a_model(capsys, tmp_path):
    traj, page = tmp_path / "t.npz", tmp_path / "sim.html"
    rc, out, err = run(capsys, "simulate", "mb_arm", "--duration", "0.1", "--ground", "--out", str(traj),
                       "--html", str(page))
    assert rc == 0, err
    assert _is_html(page) and f"animation: {page}" in out
    for args, name in (([str(traj)], "traj.html"), (["mb_arm", "--q", "joint2=0.5"], "model.html")):
        rc, out, err = run(capsys, "view", *args, "--html", str(tmp_path / name))
        assert rc == 0, err
        assert _is_html(tmp_path / name)


def test_live_viewer_starts_and_frees_its_port(capsys, tmp_path, monkeypatch):
    pytest.importorskip("viser")
    monkeypatch.setattr("builtins.input", lambda *a: "")  # "press Enter": at once
    for args in (["view", "mb_arm"], ["simulate", "mb_arm", "--duration", "0.02", "--view"]):
        port = _free_port()
        rc, out, err = run(capsys, *args, "--port", str(port))
        assert rc == 0, err
        assert f"http://localhost:{port}" in out
        with socket.socket() as s:  # closed: the port can be bound again
            s.bind(("0.0.0.0", port))


def test_missing_viser_is_one_line_naming_the_extra(capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "viser", None)  # import viser raises ImportError
    monkeypatch.setattr("builtins.input", lambda *a: "")
    rc, out, err = run(capsys, "view", "mb_arm")
    assert rc == 1 and err.count("\n") == 1 and "multibody[viz]" in err and "viser" in err


def test_demo_writes_the_real_html(capsys, tmp_path):
    pytest.importorskip("matplotlib")
    rc, out, err = run(capsys, "demo", "--duration", "0.05", "--out", str(tmp_path))
    assert rc == 0, err
    assert _is_html(tmp_path / "demo.html") and f"animation: {tmp_path / 'demo.html'}" in out
    mb.Trajectory.load(tmp_path / "demo_trajectory.npz")
