"""The examples run and do what they say."""
import importlib.util
import os

import numpy as np

EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "..", "examples")


def _load(name):
    spec = importlib.util.spec_from_file_location(name, os.path.join(EXAMPLES, f"{name}.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_pd_control_with_gravity_compensation_reaches_the_goal():
    """PD + gravity compensation converges to the goal (Takegaki–Arimoto):
    the error shrinks by orders of magnitude and the arm comes to rest."""
    traj, goal = _load("pd_control").run()
    err = np.abs(traj.q - goal).max(axis=1)
    assert err[0] > 0.5 and err[-1] < 1e-10
    assert np.abs(traj.v[-1]).max() < 1e-9
    assert traj.effort_clamped.any()  # the 12 N·m wrist limits act on the way
