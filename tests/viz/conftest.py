import os

import numpy as np
import pytest

import multibody as mb
from multibody.simulation import Trajectory, model_fingerprint
from multibody.viz.browser import find_chromium

ARM = os.path.join(os.path.dirname(mb.__file__), "data", "robots", "mb_arm.urdf")
#: a fixed view of the arm for the drawings checked against forward kinematics
CAMERA = {"position": [1.3, -1.5, 0.9], "target": [0.0, 0.0, 0.45], "fov": 45.0}


def swing(model, duration=2.0, rate=50.0):
    """A trajectory of ``model`` (with its fingerprint) whose joints swing
    through half their range: q(t) = mid + half range * 0.8 sin(2 pi t / duration + phase)."""
    t = np.arange(int(duration * rate) + 1) / rate
    q0 = model.neutral()
    lo = np.where(np.isfinite(model.lower_limit), model.lower_limit, -1.0)
    hi = np.where(np.isfinite(model.upper_limit), model.upper_limit, 1.0)
    q = np.repeat(q0[None], len(t), axis=0)
    for j in model.joints[1:]:
        if j.nq == 1:
            i = j.q_slice.start
            q[:, i] = (lo[i] + hi[i]) / 2 + 0.4 * (hi[i] - lo[i]) * np.sin(2 * np.pi * t / duration + i)
    n = len(t)
    return Trajectory(t=t, q=q, v=np.zeros((n, model.nv)), tau=np.zeros((n, model.nv)), kinetic=np.zeros(n),
                      potential=np.zeros(n), meta={"model": model.name}, model_fingerprint=model_fingerprint(model))


@pytest.fixture(scope="module")
def arm():
    return mb.load_urdf(ARM)


def needs_chromium():
    """Skip (by name, with the reason) the tests that need a browser when none is installed."""
    if find_chromium() is None:
        pytest.skip("headless Chromium is not installed (apt-get install chromium; .ci/run installs it): "
                    "browser test not run")
