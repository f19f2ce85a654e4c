"""The live viewer (viser): ports, updates (poses pushed = forward
kinematics), playback, and the page drawn by headless Chromium where
forward kinematics puts the bodies."""
import socket
import time

import numpy as np
import pytest

import multibody as mb
from multibody.errors import InputError
from multibody.viz import Viewer, show
from multibody.viz.browser import Browser
from multibody.viz.scene import Scene, body_colors

from ._helpers import check_drawing
from .conftest import ARM, CAMERA, needs_chromium, swing


def free_port():
    with socket.socket() as s:
        s.bind(("", 0))
        return s.getsockname()[1]


def wait(condition, timeout=10.0):
    end = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < end, "timed out"
        time.sleep(0.01)


def test_port_in_use_moves_to_the_next_free_one_and_says_so(arm, capsys):
    port = free_port()
    with socket.socket() as s:
        s.bind(("0.0.0.0", port))
        s.listen()
        with Viewer(arm, port=port) as v:
            assert v.port != port and v.url == f"http://localhost:{v.port}"
    out = capsys.readouterr().out
    assert f"port {port} is in use" in out and v.url in out


def test_pushed_poses_are_forward_kinematics(arm):
    q = arm.random_configuration(seed=1)
    with Viewer(arm, port=free_port(), verbose=False) as v:
        n = v.pushes
        v.update(q, t=0.5)
        wait(lambda: v.pushes > n and v.time == 0.5)
        fk = mb.forward_kinematics(arm, q)
        for i in range(1, arm.nbodies):
            node = v._nodes[i]
            R = mb.spatial.quaternion.to_rotation(np.asarray(node.wxyz, float))
            assert np.allclose(node.position, fk[i, :3, 3], atol=1e-12)
            assert np.allclose(R, fk[i, :3, :3], atol=1e-12)
        com = mb.center_of_mass(arm, q)
        assert np.allclose(v._total_com.position, com, atol=1e-12)


def test_bad_updates_raise_naming_q(arm):
    with Viewer(arm, port=free_port(), verbose=False) as v:
        with pytest.raises(InputError, match="q must be 7 finite numbers"):
            v.update(np.zeros(6))
        with pytest.raises(InputError, match="q must be 7 finite numbers"):
            v.update(np.full(7, np.nan))


def test_play_scrubs_a_trajectory_and_refuses_another_models(arm, tmp_path):
    other = mb.load_urdf(ARM, floating_base=True)
    with Viewer(arm, port=free_port(), verbose=False) as v:
        with pytest.raises(InputError, match="recorded on another model"):
            v.play(swing(other))
        tr = swing(arm, duration=1.0)
        v.play(tr, speed=2.0)
        wait(lambda: v.time is not None and v.time > 0.3)  # playing advances the time by itself
        assert v.time in set(tr.t.tolist())  # a recorded sample is shown


def test_show_makes_a_slider_per_joint_that_moves_it(arm):
    q = arm.neutral()
    with show(arm, q, port=free_port(), verbose=False) as v:
        assert list(v.sliders) == [j.name for j in arm.joints[1:] if j.nq == 1]
        assert v.sliders["joint4"].min == arm.lower_limit[3] and v.sliders["joint4"].max == arm.upper_limit[3]
        v.sliders["joint2"].value = 0.5  # as if dragged in the page
        q[1] = 0.5
        fk = mb.forward_kinematics(arm, q)
        wait(lambda: np.allclose(v._nodes[3].position, fk[3, :3, 3], atol=1e-12))


def test_chromium_draws_the_live_arm_where_forward_kinematics_puts_it(arm):
    needs_chromium()
    tr = swing(arm)
    colors = body_colors(arm.nbodies)
    scene = Scene(arm, colors="bodies")
    with Viewer(arm, port=free_port(), colors="bodies", flat=True, camera=CAMERA, verbose=False) as v, \
            Browser(1024, 600, timeout=90) as b:  # wide: viser's panel (top right) clears the arm
        b.goto(v.url, "document.querySelector('canvas') !== null", timeout=90)
        for k in (10, 60):
            v.update(tr.q[k], tr.t[k])
            wait(lambda: v.time == tr.t[k])
            # the page draws the pushed poses asynchronously (and lays its panel out): the check is retried
            # on fresh screenshots for up to 30 s, the last failure reported
            end = time.monotonic() + 30
            while True:
                img = b.screenshot()
                try:
                    # viser's client tone-maps colours (cyan 70, 240, 240 is drawn 151, 222, 220) and
                    # antialiases edges over more than one pixel: colours classified by the nearest body
                    # colour, pixels 2 px away from any edge
                    checked = check_drawing(img, scene, mb.forward_kinematics(arm, tr.q[k]), CAMERA, colors,
                                            tol=None, search=6, margin=2)
                    break
                except AssertionError:
                    if time.monotonic() > end:
                        raise
                    time.sleep(0.5)
            assert sum(b_ == e for b_, _, e in checked) >= 3
