"""Export a recorded trajectory to MP4 or GIF (:func:`export_video`).

Frames are rendered offscreen by headless Chromium (SwiftShader WebGL)
drawing the same three.js player as :func:`~multibody.viz.export_html`,
so a video looks like the HTML export; MP4 is encoded by the ffmpeg that
the ``imageio-ffmpeg`` package ships, GIF by Pillow.
"""
from __future__ import annotations

import os
import subprocess
import tempfile
from typing import TYPE_CHECKING, Any, Mapping, Sequence

import numpy as np

from ..errors import InputError
from .browser import Browser, RendererUnavailable, find_chromium
from .html import render_html, scene_data
from .._typing import PathLike

if TYPE_CHECKING:
    from ..model.model import Model
    from ..simulation.trajectory import Trajectory


def _ffmpeg():
    try:
        import imageio_ffmpeg
        return imageio_ffmpeg.get_ffmpeg_exe()
    except (ImportError, RuntimeError):
        raise RendererUnavailable("MP4 export needs ffmpeg: pip install imageio-ffmpeg (multibody[viz])") from None


def export_video(model: Model, trajectory: Trajectory, path: PathLike, fps: float = 30, width: int = 640,
                 height: int = 480, collision: bool = False, colors: str | Mapping[str, Sequence[float]] | None = None,
                 max_faces: int = 5000, camera: Mapping[str, Any] | None = None, speed: float = 1.0) -> int:
    """Render ``trajectory`` (checked against ``model`` by its fingerprint)
    to ``path``: ``.mp4`` (H.264, yuv420p) or ``.gif``, ``fps`` frames per
    second of video, ``width`` x ``height`` pixels, played at ``speed``
    times real time (the frame at video time τ shows the last sample at or
    before trajectory time ``t0 + speed τ``). ``camera``, ``colors``,
    ``collision``, ``max_faces``: as :func:`~multibody.viz.export_html`.
    Returns the number of frames.

    Raises :class:`~multibody.viz.RendererUnavailable` naming what is
    missing: Chromium (the offscreen renderer), ffmpeg (imageio-ffmpeg) for
    MP4 or Pillow for GIF; InputError for another suffix."""
    ext = os.path.splitext(str(path))[1].lower()
    if ext not in (".mp4", ".gif"):
        raise InputError(f"export_video: '{path}' must end in .mp4 or .gif")
    if find_chromium() is None:
        raise RendererUnavailable("video export renders with headless Chromium, which is not installed "
                                  "(Debian/Ubuntu: apt-get install chromium; or set MULTIBODY_CHROMIUM)")
    encoder = _ffmpeg() if ext == ".mp4" else None
    if ext == ".gif":
        try:
            from PIL import Image
        except ImportError:
            raise RendererUnavailable("GIF export needs Pillow: pip install pillow (multibody[viz])") from None
    if not (speed > 0 and fps > 0):
        raise InputError(f"export_video: fps and speed must be positive, got {fps}, {speed}")
    # every sample is kept in the page; the frames pick their sample by time
    data = scene_data(model, trajectory, fps=fps / speed, collision=collision, colors=colors,
                      max_faces=max_faces, camera=camera, ui=False, autoplay=False)
    t = np.asarray(trajectory.t, dtype=float)
    times = t[0] + speed * np.arange(int(np.floor((t[-1] - t[0]) / speed * fps + 1e-9)) + 1) / fps
    with tempfile.TemporaryDirectory(prefix="mb-video-") as tmp:
        page = os.path.join(tmp, "player.html")
        with open(page, "w", encoding="utf-8") as f:
            f.write(render_html(data))
        frames = []
        with Browser(width, height) as browser:
            browser.goto("file://" + page, "window.mbReady === true")
            for tt in times:
                browser.evaluate(f"window.mbPlayer.setTime({float(tt)!r})")
                frames.append(browser.screenshot())
    h, w = frames[0].shape[:2]
    if ext == ".gif":
        images = [Image.fromarray(a).quantize(colors=256, method=Image.Quantize.MEDIANCUT) for a in frames]
        images[0].save(path, save_all=True, append_images=images[1:], duration=int(round(1000 / fps)), loop=0)
    else:
        w2, h2 = w - w % 2, h - h % 2  # yuv420p needs even sizes
        cmd = [encoder, "-y", "-loglevel", "error", "-f", "rawvideo", "-pix_fmt", "rgb24", "-s", f"{w2}x{h2}",
               "-r", str(fps), "-i", "-", "-c:v", "libx264", "-pix_fmt", "yuv420p", "-crf", "23", str(path)]
        raw = b"".join(np.ascontiguousarray(a[:h2, :w2]).tobytes() for a in frames)
        r = subprocess.run(cmd, input=raw, capture_output=True)  # type: ignore[arg-type]
        if r.returncode:
            raise InputError(f"ffmpeg could not write '{path}': {r.stderr.decode(errors='replace').strip()[-300:]}")
    return len(frames)
