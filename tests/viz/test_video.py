"""Video export: MP4 (ffmpeg from imageio-ffmpeg) and GIF (Pillow) frames
rendered by headless Chromium; a clear error naming what is missing."""
import numpy as np
import pytest

import multibody.viz.video as video
from multibody.errors import InputError
from multibody.viz import RendererUnavailable, export_video

from .conftest import CAMERA, needs_chromium, swing


def test_missing_renderer_or_bad_suffix_is_named(arm, tmp_path, monkeypatch):
    with pytest.raises(InputError, match=r"must end in \.mp4 or \.gif"):
        export_video(arm, swing(arm), tmp_path / "x.avi")
    monkeypatch.setattr(video, "find_chromium", lambda: None)
    with pytest.raises(RendererUnavailable, match="Chromium.*apt-get install chromium"):
        export_video(arm, swing(arm), tmp_path / "x.mp4")


def test_gif_and_mp4_have_one_frame_per_frame_time(arm, tmp_path):
    needs_chromium()
    from PIL import Image
    tr = swing(arm, duration=1.0)
    n = export_video(arm, tr, tmp_path / "a.gif", fps=5, width=160, height=120, camera=CAMERA)
    assert n == 6  # t = 0, 0.2, ..., 1.0
    with Image.open(tmp_path / "a.gif") as im:
        assert im.n_frames == 6 and im.size == (160, 120)
        im.seek(0)
        first = np.asarray(im.convert("RGB")).copy()
        im.seek(2)
        later = np.asarray(im.convert("RGB"))
    assert (first != later).any()  # the arm moved (t = 0.4 s; the swing's period is the 1 s duration)
    import imageio_ffmpeg
    n = export_video(arm, tr, tmp_path / "a.mp4", fps=10, width=160, height=120, camera=CAMERA)
    frames, seconds = imageio_ffmpeg.count_frames_and_secs(str(tmp_path / "a.mp4"))
    assert n == 11 and frames == 11 and seconds == pytest.approx(1.1)
