"""L6: plots of trajectories (matplotlib) and 3-D views of models: the live
web viewer (viser), self-contained HTML playback and MP4/GIF export
(docs/viewer.md). An optional extra: ``pip install 'multibody[viz]'``.

The viewer's modules import viser, three.js data and Chromium only when
used, so ``import multibody.viz`` stays cheap."""
from .plots import plot_trajectory
from .browser import RendererUnavailable
from .html import export_html
from .scene import Scene
from .video import export_video
from .viewer import Viewer, show

__all__ = ["plot_trajectory", "Viewer", "show", "export_html", "export_video", "Scene", "RendererUnavailable"]
