"""The viewer: scene updates pushed per second while a simulation runs in
real time, and the size of a 5 s Talos HTML export.

    python benchmarks/viewer.py [--seconds 10] [--no-browser]

1. A 30-body revolute chain (tests/oracles.urdf_chain, one cylinder per
   link) is simulated at dt = 1 ms, paced to real time (the loop sleeps
   when ahead of the wall clock), calling ``viewer.update(q, t)`` after
   every step. The server side counts the updates its push thread sent
   (``viewer.pushes``: the pose of every body, the centre of mass) over
   the run; the viewer's cap is 60 per second. A headless Chromium page
   is connected during the run (unless --no-browser or none installed),
   so the updates are really sent over a websocket and drawn.
2. Talos (example-robot-data, floating base, 34 bodies, 159k visual
   triangles): a 5 s trajectory at 100 samples/s exported with
   ``export_html`` defaults (30 frames/s, meshes decimated to 5000
   triangles each): file size, and the page loaded in headless Chromium
   (it must report ready and play).
"""
import argparse
import os
import socket
import sys
import tempfile
import time
import warnings

import numpy as np

import multibody as mb
from multibody.simulation import Trajectory, model_fingerprint
from multibody.viz import Viewer, export_html
from multibody.viz.browser import Browser, find_chromium

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests"))
from oracles import robot_path, urdf_chain  # noqa: E402


def free_port():
    with socket.socket() as s:
        s.bind(("", 0))
        return s.getsockname()[1]


def live(seconds, browser):
    model = mb.load_urdf(urdf_chain(30))
    assert model.nbodies - 1 == 30
    sim = mb.Simulator(model, dt=1e-3)
    sim.step()  # compile before timing
    with Viewer(model, port=free_port(), verbose=False) as viewer:
        page = None
        if browser and find_chromium():
            page = Browser(800, 600, timeout=120)
            page.goto(viewer.url, "document.querySelector('canvas') !== null", timeout=120)
            time.sleep(2.0)
        try:
            start_pushes, start = viewer.pushes, time.perf_counter()
            t0 = sim.state.t
            steps = late = 0
            while True:
                wall = time.perf_counter() - start
                if wall >= seconds:
                    break
                while sim.state.t - t0 < wall:  # catch up with the wall clock
                    s = sim.step()
                    viewer.update(s.q, s.t)
                    steps += 1
                behind = (time.perf_counter() - start) - (sim.state.t - t0)
                late = max(late, behind)
                time.sleep(max(0.0, (sim.state.t - t0) - (time.perf_counter() - start)))
            elapsed = time.perf_counter() - start
            pushes = viewer.pushes - start_pushes
        finally:
            if page is not None:
                page.close()
    print(f"live: 30-body chain, {steps} steps of 1 ms in {elapsed:.2f} s wall (real-time factor "
          f"{steps * 1e-3 / elapsed:.3f}), browser connected: {page is not None}")
    print(f"live: {pushes} scene updates pushed by the server = {pushes / elapsed:.1f} per second "
          f"(target >= 30; cap 60)")
    return pushes / elapsed


def talos_html():
    model = mb.load_urdf(robot_path("talos"), floating_base=True)
    t = np.arange(501) / 100.0
    q = np.repeat(model.neutral()[None], len(t), axis=0)
    lo = np.where(np.isfinite(model.lower_limit), model.lower_limit, -1.0)
    hi = np.where(np.isfinite(model.upper_limit), model.upper_limit, 1.0)
    for j in model.joints[1:]:
        if j.nq == 1:
            i = j.q_slice.start
            q[:, i] = (lo[i] + hi[i]) / 2 + 0.4 * (hi[i] - lo[i]) * np.sin(2 * np.pi * t / 5.0 + i)
    n = len(t)
    tr = Trajectory(t=t, q=q, v=np.zeros((n, model.nv)), tau=np.zeros((n, model.nv)), kinetic=np.zeros(n),
                    potential=np.zeros(n), model_fingerprint=model_fingerprint(model))
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "talos.html")
        start = time.perf_counter()
        size = export_html(model, tr, path)
        took = time.perf_counter() - start
        print(f"html: Talos 5 s ({n} samples -> 151 frames at 30 fps, meshes <= 5000 triangles): "
              f"{size / 1e6:.2f} MB (target < 5 MB), written in {took:.2f} s")
        if find_chromium():
            with Browser(640, 480, timeout=120) as b:
                start = time.perf_counter()
                b.goto("file://" + path, "window.mbReady === true", timeout=120)
                ready = time.perf_counter() - start
                b.wait_for("window.mbPlayer.frame() > 3", timeout=60)
                print(f"html: ready in headless Chromium after {ready:.2f} s, playing (frame "
                      f"{b.evaluate('window.mbPlayer.frame()')})")
    return size


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--no-browser", action="store_true")
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    live(args.seconds, not args.no_browser)
    talos_html()


if __name__ == "__main__":
    main()
