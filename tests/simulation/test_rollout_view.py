"""Simulator.rollout(view=..., realtime=...): the states a viewer is shown
are the trajectory's, at VIEW_FPS per simulated second and at the end, on
the compiled loop and on the Python one; realtime pacing never lets
simulated time run ahead of the wall clock."""
import os

import numpy as np
import pytest

import multibody as mb
from multibody.errors import InputError


class Recorder:
    def __init__(self):
        self.frames = []

    def update(self, q, t, contacts=None):
        self.frames.append((np.array(q), t, contacts))


ARM = os.path.join(os.path.dirname(mb.__file__), "data", "robots", "mb_arm.urdf")


def _arm():
    return mb.load_urdf(ARM)


@pytest.mark.parametrize("python_loop", [False, True])
def test_view_is_shown_the_recorded_states(python_loop):
    model = _arm()
    sim = mb.Simulator(model, dt=1e-3, contact_solver=None)
    assert sim.fused is not None  # the compiled loop runs unless a Python controller forces the other
    view = Recorder()
    controller = (lambda t, q, v: np.zeros(model.nv)) if python_loop else None
    traj = sim.rollout(steps=100, controller=controller, view=view, realtime=False, progress=False)
    every = round(1.0 / (sim.VIEW_FPS * sim.dt))
    assert every == 33
    shown = [0, 33, 66, 99, 100]  # the start, every 33rd step and the last
    assert len(view.frames) == len(shown)
    for (q, t, contacts), k in zip(view.frames, shown):
        np.testing.assert_array_equal(q, traj.q[k])
        assert t == traj.t[k]
        assert contacts is None  # no contact in this simulator


def test_view_gets_the_contacts_of_the_step():
    b = mb.ModelBuilder()  # a ball resting on the ground: one contact carrying its weight
    b.add_body("ball", joint="free", mass=1.0, inertia=np.eye(3) * 0.004)
    b.add_geometry("ball", "sphere", (0.1,), name="ball")
    b.add_geometry("world", "plane", name="ground")
    model = b.build()
    q0 = model.neutral()
    q0[2] = 0.1
    sim = mb.Simulator(model, dt=1e-3, q0=q0)
    view = Recorder()
    sim.rollout(steps=40, view=view, realtime=False, progress=False)
    points, forces = view.frames[-1][2]
    assert len(points) == 1
    np.testing.assert_allclose(np.abs(forces[0, 2]), 9.81, rtol=1e-3)
    last = sim.contact.last_step()
    np.testing.assert_array_equal(points, last["position"])
    np.testing.assert_array_equal(forces, last["force"])


def test_realtime_paces_the_run(monkeypatch):
    """With realtime the run sleeps until the wall clock has caught up with
    simulated time at every frame: on a clock that only sleeping advances,
    the sleeps add up to the simulated duration, frame by frame."""
    from multibody.simulation import simulator

    class Clock:  # stands in for the wall clock of the pacing
        now = 0.0
        sleeps = []

        @classmethod
        def read(cls):
            return cls.now

        @classmethod
        def wait(cls, s):
            cls.sleeps.append(s)
            cls.now += s

    monkeypatch.setattr(simulator._Show, "clock", staticmethod(Clock.read))
    monkeypatch.setattr(simulator._Show, "sleep", staticmethod(Clock.wait))
    sim = mb.Simulator(_arm(), dt=1e-3, contact_solver=None)
    traj = sim.rollout(duration=0.25, realtime=True, progress=False)
    assert Clock.now == pytest.approx(traj.t[-1] - traj.t[0], abs=1e-12)  # never ahead of the wall clock
    assert len(Clock.sleeps) == 8  # one per frame: steps 33, 66, ..., 231 and the last, 250
    assert max(Clock.sleeps) == pytest.approx(0.033, abs=1e-12)


def test_bad_view_is_refused():
    sim = mb.Simulator(_arm(), dt=1e-3, contact_solver=None)
    with pytest.raises(InputError, match="update"):
        sim.rollout(steps=5, view=object())
