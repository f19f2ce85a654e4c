"""Regenerate the viewer's pictures in docs/img: viewer_html.png and
mb_arm.gif from the README's example (the shipped arm falling for 1 s under
gravity), viewer_live.png (the live viewer with its joint sliders).
Needs Chromium (see docs/viewer.md). Run from the repository root:
``python docs/img/make_viewer_images.py``."""
import os
import tempfile
import time
from pathlib import Path

from PIL import Image

import multibody as mb
from multibody.viz import export_html, export_video, show
from multibody.viz.browser import Browser

HERE = Path(__file__).parent
CAMERA = {"position": [1.1, -1.0, 0.8], "target": [0.0, 0.0, 0.35], "fov": 45}  # world frame, m; z up
arm = Path(mb.__file__).parent / "data" / "robots" / "mb_arm.urdf"
model = mb.load_urdf(arm, srdf=arm.with_suffix(".srdf"))
sim = mb.Simulator(model, dt=1e-3, integrator="rk4", q0=model.neutral() + 0.3)
traj = sim.rollout(duration=1.0, progress=False)

with tempfile.TemporaryDirectory() as tmp:
    page = Path(tmp) / "arm.html"
    export_html(model, traj, page, autoplay=False, camera=CAMERA)
    with Browser(800, 560) as b:
        b.goto(page.as_uri(), "window.mbReady === true")
        b.evaluate("window.mbPlayer.setTime(0.5)")
        Image.fromarray(b.screenshot()).save(HERE / "viewer_html.png")
export_video(model, traj, HERE / "mb_arm.gif", fps=10, width=320, height=240, camera=CAMERA)
q = traj.q[500]
with show(model, q, verbose=False) as v, Browser(1000, 600, timeout=90) as b:
    b.goto(v.url, "document.querySelector('canvas') !== null", timeout=90)
    time.sleep(5)  # the page draws the scene and lays out its panel asynchronously
    # viser's notice that WebGL runs in software (headless Chromium has no GPU) is not for the docs
    b.evaluate("document.querySelectorAll('[class*=Notification-root]').forEach(e => e.remove())")
    time.sleep(0.5)
    Image.fromarray(b.screenshot()).save(HERE / "viewer_live.png")
print("wrote", *(os.path.relpath(HERE / f) for f in ("viewer_html.png", "mb_arm.gif", "viewer_live.png")))
