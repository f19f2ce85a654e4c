"""Export a recorded trajectory to one self-contained HTML file
(:func:`export_html`) that plays back in a browser without a server or a
network: three.js (r159, MIT, vendored in ``_static/`` with its licence),
its OrbitControls, the player script and the data are all inlined.

Why three.js and not viser's embedded client: the file is small (three.js
is 0.65 MB), and the player exposes ``window.mbPlayer.setTime(t)`` with a
known camera, which the tests drive in headless Chromium to check the
drawing against forward kinematics, and which :func:`export_video` uses to
render frames.
"""
from __future__ import annotations

import base64
import json
import os
import re
from typing import TYPE_CHECKING, Any, Mapping, Sequence

import numpy as np

from ..errors import InputError
from .scene import Scene, default_camera
from .viewer import check_trajectory
from .._typing import PathLike

if TYPE_CHECKING:
    from ..model.model import Model
    from ..simulation.trajectory import Trajectory

_STATIC = os.path.join(os.path.dirname(__file__), "_static")

_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
html, body {{ margin: 0; height: 100%; overflow: hidden; font: 13px sans-serif; }}
canvas {{ display: block; }}
#mb-bar {{ position: fixed; left: 8px; right: 8px; bottom: 8px; display: flex; gap: 8px; align-items: center;
  background: rgba(255,255,255,0.85); padding: 4px 8px; border-radius: 6px; }}
#mb-time {{ flex: 1; }}
</style></head><body>
<div id="mb-bar"><button id="mb-play">play</button><input id="mb-time" type="range" min="0" step="1" value="0">
<span id="mb-label"></span><select id="mb-speed"><option>0.25</option><option>0.5</option>
<option selected>1</option><option>2</option></select>
<label><input id="mb-collision" type="checkbox">collision</label><label><input id="mb-frames" type="checkbox">frames</label>
<label><input id="mb-com" type="checkbox">CoM</label><label><input id="mb-contacts" type="checkbox">contacts</label></div>
<script id="mb-data" type="application/json">{data}</script>
<script>{three}</script>
<script>{controls}</script>
<script>{player}</script>
</body></html>
"""


def _read(name):
    with open(os.path.join(_STATIC, name), encoding="utf-8") as f:
        return f.read()


def _orbit_controls():
    """OrbitControls (an ES module importing from 'three') as a classic script on the global THREE."""
    src = _read("OrbitControls.js")
    src = re.sub(r"import\s*\{([^}]*)\}\s*from\s*'three';", r"const {\1} = THREE;", src, count=1)
    return src.replace("export { OrbitControls };", "window.OrbitControls = OrbitControls;")


def _b64(a):
    return base64.b64encode(np.ascontiguousarray(a).tobytes()).decode("ascii")


def frame_indices(t, fps):
    """Indices of the samples (times ``t``, s, non-decreasing) shown at
    ``fps`` frames per second: for each frame time ``t0 + k / fps`` the last
    sample at or before it (None: every sample)."""
    t = np.asarray(t, dtype=float)
    if fps is None:
        return np.arange(len(t))
    fps = float(fps)
    if not fps > 0:
        raise InputError(f"fps must be positive, got {fps}")
    times = t[0] + np.arange(int(np.floor((t[-1] - t[0]) * fps + 1e-9)) + 1) / fps
    return np.unique(np.clip(np.searchsorted(t, times + 1e-12, side="right") - 1, 0, len(t) - 1))


def scene_data(model, trajectory, fps=30, collision=False, colors=None, max_faces=5000, camera=None,
               ui=True, autoplay=True, flat=False, background=(1.0, 1.0, 1.0), force_scale=0.002):
    """The player's data (a JSON-able dict) for :func:`export_html`; see
    there for the arguments. ``flat``: unlit colours (each pixel is
    exactly its geometry's colour: for the tests)."""
    check_trajectory(model, trajectory)
    scene = Scene(model, collision=True, colors=colors, max_faces=max_faces)
    keep = frame_indices(trajectory.t, fps)
    t = np.asarray(trajectory.t, dtype=float)[keep]
    T = scene.poses(np.asarray(trajectory.q, dtype=float)[keep])          # (N, nb, 4, 4)
    poses = T[:, 1:, :3, :].astype(np.float32)                             # 3x4 row-major per body
    mass = np.asarray(model.body_mass, dtype=float)
    world_com = T[:, :, :3, :3] @ scene.com_local()[None, :, :, None]
    world_com = world_com[..., 0] + T[:, :, :3, 3]
    com = (mass[None, 1:, None] * world_com[:, 1:]).sum(axis=1) / max(mass[1:].sum(), 1e-300)
    meshes = []
    for p in scene.parts:
        wide = len(p.vertices) > 65535
        meshes.append({"body": p.body, "rgba": [float(c) for c in p.rgba], "collision": p.collision,
                       "v": _b64(p.vertices.astype(np.float32)), "wide": wide,
                       "f": _b64(p.faces.astype(np.uint32 if wide else np.uint16)),
                       "flatShading": len(p.faces) < 400})  # primitives: faceted, meshes: smooth
    if camera is None:
        camera = default_camera(np.concatenate([T[:, 1:, :3, 3].reshape(-1, 3), T[:1, :, :3, 3].reshape(-1, 3)]))
    rec = getattr(trajectory, "contacts", None)
    contacts = None
    if rec is not None and rec.position.shape[1] > 0:
        contacts = {"cap": int(rec.position.shape[1]), "count": [int(c) for c in rec.count[keep]],
                    "p": _b64(rec.position[keep].astype(np.float32)), "f": _b64(rec.force[keep].astype(np.float32)),
                    "scale": float(force_scale)}
    return {"title": model.name, "nbodies": int(model.nbodies), "meshes": meshes, "t": t.tolist(),
            "poses": _b64(poses), "com": _b64(com.astype(np.float32)),
            "com_local": _b64(scene.com_local().astype(np.float32)), "massive": [bool(m > 0) for m in mass],
            "contacts": contacts, "camera": {k: (list(map(float, v)) if k != "fov" else float(v))
                                             for k, v in camera.items()},
            "show": {"collision": bool(collision), "frames": False, "com": False, "contacts": True},
            "ui": bool(ui), "autoplay": bool(autoplay), "flat": bool(flat),
            "background": [float(c) for c in background]}


def render_html(data):
    """The self-contained page for player ``data`` (:func:`scene_data`)."""
    # "</" would end the <script> element early: JSON allows the escape "<\\/"
    text = json.dumps(data, separators=(",", ":")).replace("</", "<\\/")
    return _PAGE.format(title=str(data["title"]).replace("<", "&lt;"), data=text, three=_read("three.min.js"),
                        controls=_orbit_controls(), player=_read("player.js"))


def export_html(model: Model, trajectory: Trajectory, path: PathLike, fps: float = 30, collision: bool = False,
                colors: str | Mapping[str, Sequence[float]] | None = None, max_faces: int = 5000,
                camera: Mapping[str, Any] | None = None, ui: bool = True, autoplay: bool = True, flat: bool = False,
                background: Sequence[float] = (1.0, 1.0, 1.0)) -> int:
    """Write ``trajectory`` (a :class:`~multibody.Trajectory` of ``model``,
    checked by its model fingerprint) to ``path`` as one self-contained
    HTML file: the model's visual geometry (collision geometry behind a
    checkbox, on from the start with ``collision``), body frames and
    centres of mass behind checkboxes, the recorded contacts and forces,
    play/pause, a time slider and the playback speed. Returns the file
    size in bytes.

    Size control: frames are decimated to ``fps`` per second of
    trajectory time (the last sample at or before each frame time; None:
    every sample), and mesh files with more than ``max_faces`` triangles
    are simplified to about that many (quadric edge collapse, None: kept
    whole). Poses are float32 3x4 matrices per body and frame, meshes
    float32 vertices and 16- or 32-bit indices, base64 in the page.

    ``colors``: None (materials of the file), ``"bodies"`` (a distinct
    colour per body) or a dict body name -> rgb. ``camera``: ``{"position",
    "target", "fov"}`` (world frame, m, vertical degrees; default: framing
    the trajectory, :func:`default_camera`); z is up. ``ui``: show the
    control bar; ``autoplay``: start playing; ``flat``: unlit colours."""
    data = scene_data(model, trajectory, fps=fps, collision=collision, colors=colors, max_faces=max_faces,
                      camera=camera, ui=ui, autoplay=autoplay, flat=flat, background=background)
    page = render_html(data).encode("utf-8")
    try:
        with open(path, "wb") as f:
            f.write(page)
    except OSError as e:
        raise InputError(f"cannot write HTML file '{path}': {e.strerror or e}") from None
    return len(page)
