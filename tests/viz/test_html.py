"""HTML export: self-contained, sized, checked against the model's
fingerprint, and drawn by headless Chromium where forward kinematics puts
the bodies (ray-cast oracle: tests/viz/_helpers.py)."""
import re

import numpy as np
import pytest

import multibody as mb
from multibody.errors import InputError
from multibody.simulation import Trajectory
from multibody.viz import export_html
from multibody.viz.browser import Browser
from multibody.viz.html import frame_indices, scene_data
from multibody.viz.scene import Scene, body_colors

from ._helpers import check_drawing
from .conftest import ARM, CAMERA, needs_chromium, swing


def test_frame_indices_pick_the_last_sample_at_or_before_each_frame_time():
    t = np.array([0.0, 0.01, 0.02, 0.05, 0.1, 0.2])
    # frame times 0, 0.05, 0.1, 0.15, 0.2 -> samples 0, 3, 4, 4 (0.1 <= 0.15 < 0.2), 5
    assert frame_indices(t, 20).tolist() == [0, 3, 4, 5]
    assert frame_indices(t, None).tolist() == list(range(6))
    with pytest.raises(InputError, match="fps"):
        frame_indices(t, 0)


def test_page_is_self_contained(arm, tmp_path):
    path = tmp_path / "arm.html"
    size = export_html(arm, swing(arm), path)
    page = path.read_text()
    assert size == path.stat().st_size
    # nothing loaded from elsewhere: no script or stylesheet sources, no module imports
    assert not re.search(r"<script[^>]*\bsrc=|<link\b|\bimport\s*\(|^\s*import\b", page, re.M)
    assert len(re.findall(r"^<script", page, re.M)) == 4 and "window.OrbitControls = OrbitControls" in page


def test_poses_in_the_page_are_forward_kinematics(arm):
    import base64
    tr = swing(arm)
    data = scene_data(arm, tr, fps=10)
    keep = frame_indices(tr.t, 10)
    poses = np.frombuffer(base64.b64decode(data["poses"]), np.float32).reshape(len(keep), arm.nbodies - 1, 3, 4)
    fk = mb.forward_kinematics(arm, tr.q[keep])
    assert np.allclose(poses, fk[:, 1:, :3, :], atol=1e-6)
    assert data["t"] == tr.t[keep].tolist()


def test_trajectory_of_another_model_is_refused_by_its_fingerprint(arm, tmp_path):
    other = mb.load_urdf(ARM, floating_base=True)
    path = tmp_path / "other.npz"
    swing(other).save(path)
    tr = Trajectory.load(path)
    with pytest.raises(InputError, match="recorded on another model"):
        export_html(arm, tr, tmp_path / "x.html")
    hand = swing(arm)
    hand.model_fingerprint = None  # a hand-made trajectory: only its shape can be checked
    hand.q = hand.q[:, :-1]
    with pytest.raises(InputError, match=r"trajectory.q must have shape \(N, 7\)"):
        export_html(arm, hand, tmp_path / "x.html")


def test_unwritable_path_names_the_file(arm, tmp_path):
    with pytest.raises(InputError, match="cannot write HTML file"):
        export_html(arm, swing(arm), tmp_path / "no" / "such" / "dir.html")


def test_chromium_draws_the_arm_where_forward_kinematics_puts_it(arm, tmp_path):
    needs_chromium()
    tr = swing(arm)
    path = tmp_path / "arm.html"
    export_html(arm, tr, path, colors="bodies", flat=True, ui=False, autoplay=False, camera=CAMERA)
    scene = Scene(arm, colors="bodies")
    colors = body_colors(arm.nbodies)
    images = []
    with Browser(640, 480) as b:
        b.goto(path.as_uri(), "window.mbReady === true")
        for k in (10, 60):  # two times of the trajectory (0.2 s and 1.2 s)
            shown = b.evaluate(f"window.mbPlayer.setTime({float(tr.t[k])!r})")
            assert shown == pytest.approx(tr.t[k])
            img = b.screenshot()
            checked = check_drawing(img, scene, mb.forward_kinematics(arm, tr.q[k]), CAMERA, colors)
            # every moving body was checked, and three or more are seen at their own centre (not all hidden)
            assert len(checked) == arm.nbodies - 1
            assert sum(b_ == e for b_, _, e in checked) >= 3
            images.append((img, checked))
    (a, ca), (b_img, cb) = images
    assert any(pa != pb for (_, pa, _), (_, pb, _) in zip(ca, cb))  # the arm moved between the two times


def test_exported_page_plays_in_chromium(arm, tmp_path):
    needs_chromium()
    path = tmp_path / "arm.html"
    export_html(arm, swing(arm), path)
    with Browser(480, 360) as b:
        b.goto(path.as_uri(), "window.mbReady === true")
        assert b.evaluate("window.mbPlayer.playing()")
        b.wait_for("window.mbPlayer.frame() > 5", timeout=30)  # playing: the frame advances by itself
        img = b.screenshot()
    assert img.shape == (360, 480, 3) and len(np.unique(img.reshape(-1, 3), axis=0)) > 50  # something drawn


@pytest.mark.slow
def test_talos_five_seconds_under_5_mb_and_plays(tmp_path):
    from oracles import robot_path
    talos = mb.load_urdf(robot_path("talos"), floating_base=True)
    tr = swing(talos, duration=5.0, rate=100.0)
    path = tmp_path / "talos.html"
    size = export_html(talos, tr, path)  # defaults: 30 frames/s, meshes decimated to 5000 triangles
    assert size < 5_000_000
    needs_chromium()
    with Browser(480, 360, timeout=120) as b:
        b.goto(path.as_uri(), "window.mbReady === true", timeout=120)
        assert b.evaluate("window.mbPlayer.times.length") == 151
        b.wait_for("window.mbPlayer.frame() > 3", timeout=60)
