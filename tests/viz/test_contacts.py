"""Contacts drawn by the viewers: the points and forces a trajectory
recorded (its ContactRecord) go into the HTML page frame by frame, and
``Viewer.update(..., contacts=...)`` draws the contacts it is given (a
list of Contact, as ``sim.contact.contacts()`` returns)."""
import base64
import socket
import time

import numpy as np

from multibody.constraints.contact import Contact
from multibody.simulation.contact_record import ContactRecord
from multibody.viz import Viewer
from multibody.viz.html import frame_indices, scene_data

from .conftest import swing


def recorded(traj, cap=3, seed=0):
    """A ContactRecord for ``traj``: sample k has k % (cap + 1) contacts at random points and forces."""
    rng = np.random.default_rng(seed)
    N = len(traj.t)
    rec = ContactRecord(("a", "b"), np.arange(N) % (cap + 1), np.full((N, cap, 2), -1), np.full((N, cap, 2), -1),
                        np.zeros((N, cap, 3)), np.zeros((N, cap, 3, 3)), np.zeros((N, cap)), np.zeros((N, cap, 3)),
                        np.zeros((N, cap, 3)))
    for k in range(N):
        n = rec.count[k]
        rec.position[k, :n] = rng.uniform(-1, 1, (n, 3))
        rec.force[k, :n] = rng.uniform(-50, 50, (n, 3))
    return rec


def test_recorded_contacts_go_into_the_page(arm):
    traj = swing(arm)
    traj.contacts = rec = recorded(traj)
    data = scene_data(arm, traj, fps=10)
    c = data["contacts"]
    keep = frame_indices(traj.t, 10)
    assert c["count"] == rec.count[keep].tolist() and max(c["count"]) == 3
    P = np.frombuffer(base64.b64decode(c["p"]), np.float32).reshape(len(keep), c["cap"], 3)
    F = np.frombuffer(base64.b64decode(c["f"]), np.float32).reshape(len(keep), c["cap"], 3)
    assert np.allclose(P, rec.position[keep], atol=1e-6) and np.allclose(F, rec.force[keep], atol=1e-5)


def test_viewer_draws_the_contacts_it_is_given(arm):
    rng = np.random.default_rng(1)
    contacts = [Contact("a", "b", 0, 1, rng.uniform(-1, 1, 3), np.eye(3), -1e-3, np.zeros(3),
                        rng.uniform(-50, 50, 3)) for _ in range(4)]
    with socket.socket() as s:
        s.bind(("", 0))
        port = s.getsockname()[1]
    with Viewer(arm, port=port, verbose=False) as v:
        v.update(arm.neutral(), 0.25, contacts)
        end = time.monotonic() + 10
        while v.time != 0.25:  # pushed (the viewer's first push, of the neutral pose, has no time)
            assert time.monotonic() < end
            time.sleep(0.01)
        drawn = np.asarray(v._contact_points.points, dtype=float)
        assert np.allclose(drawn, [c.position for c in contacts], atol=1e-6)
        seg = np.asarray(v._contact_forces.points, dtype=float)
        assert np.allclose(seg[:, 1] - seg[:, 0], 0.002 * np.array([c.force for c in contacts]), atol=1e-6)
