"""Contacts recorded in trajectories (``Simulator.rollout(...,
contacts=True)``): what the step solved, sample by sample, without
changing the run."""
import numpy as np
import pytest

import multibody as mb
from multibody.simulation.contact_record import ContactRecord

from scenes import ball, incline


def test_a_resting_box_records_its_four_corners_carrying_its_weight():
    """A 1 kg box at rest on a 15° incline with μ = 0.5 (it sticks), 40
    steps recorded every 4: sample 0 (the initial state) has no contacts,
    every later one its four corners, and their forces (world, on the box)
    sum to the reaction −m g of its weight (1e-9 N; PGS to its relative
    change of 1e-10, ``contact_tolerance=0``) at the points the step
    started from. The last sample is what ``sim.contact.contacts()`` lists
    after the run."""
    model, q0, R = incline(np.radians(15.0), 0.5, gravity=9.8)
    sim = mb.Simulator(model, dt=1e-3, q0=q0, contact_tolerance=0.0)
    traj = sim.rollout(steps=40, record_every=4, contacts=True)
    rec = traj.contacts
    assert isinstance(rec, ContactRecord) and sorted(rec.geometries) == ["box", "slope"]
    box = rec.geometries.index("box")
    assert rec.count[0] == 0 and (rec.count[1:] == 4).all()
    for k in range(1, len(traj.t)):
        on_box = np.array([f if g[1] == box else -f for f, g in zip(rec.force[k, :4], rec.geom[k, :4])])
        assert np.allclose(on_box.sum(axis=0), [0.0, 0.0, 9.8], atol=1e-9)
    last = sim.contact.contacts()
    assert [(c.geom1, c.geom2) for c in rec.at(len(traj.t) - 1)] == [(c.geom1, c.geom2) for c in last]
    for a, b in zip(rec.at(len(traj.t) - 1), last):
        assert np.array_equal(a.impulse, b.impulse) and np.array_equal(a.position, b.position)
        assert np.array_equal(a.force, b.force) and a.distance == b.distance


def test_recording_contacts_changes_nothing_and_every_path_records_the_same():
    """A ball (e = 0.5) dropped from 0.3 m, 1500 steps (bounces, then rests): the states with and without
    ``contacts`` are bitwise equal, and the compiled loop (returning to
    Python at each recorded step) and the Python controller loop record the
    same contacts bitwise; padding past ``count`` stays zero."""
    model = ball(restitution=0.5)
    q0 = model.neutral()
    q0[2] = 0.3
    plain = mb.Simulator(model, dt=1e-3, q0=q0).rollout(steps=1500, record_every=7)
    compiled = mb.Simulator(model, dt=1e-3, q0=q0).rollout(steps=1500, record_every=7, contacts=True)
    python = mb.Simulator(model, dt=1e-3, q0=q0).rollout(steps=1500, record_every=7, contacts=True,
                                                         controller=lambda t, q, v: np.zeros(6))
    assert np.array_equal(plain.q, compiled.q) and np.array_equal(plain.q, python.q)
    a, b = compiled.contacts, python.contacts
    assert a.count.max() == 1 and a.count[-50:].all()
    for name in ("count", "geom", "body", "position", "frame", "distance", "impulse", "force"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name
    idle = a.count == 0
    assert (a.impulse[idle] == 0).all() and (a.geom[idle] == -1).all()


def test_a_rollout_without_contact_records_empty_samples():
    model = ball(ground=False)
    traj = mb.Simulator(model, dt=1e-3).rollout(steps=5, contacts=True)
    assert traj.contacts.count.shape == (6,) and not traj.contacts.count.any() and traj.contacts.at(3) == []
    assert mb.Simulator(model, dt=1e-3).rollout(steps=5).contacts is None


def test_recorded_contacts_are_saved_and_loaded(tmp_path):
    """Trajectory.save writes the record (optional members of the file)
    and load returns it array for array; a file whose counts exceed the
    capacity is refused, naming it; a trajectory without a record loads
    with None."""
    model = ball(restitution=0.5)
    q0 = model.neutral()
    q0[2] = 0.3
    traj = mb.Simulator(model, dt=1e-3, q0=q0).rollout(steps=600, record_every=3, contacts=True)
    path = tmp_path / "run.npz"
    traj.save(path)
    back = mb.Trajectory.load(path, model=model)
    assert back.contacts.geometries == traj.contacts.geometries
    for name in ("count", "geom", "body", "position", "frame", "distance", "impulse", "force"):
        assert np.array_equal(getattr(back.contacts, name), getattr(traj.contacts, name)), name
    assert [c.force.tolist() for c in back.contacts.at(len(traj.t) - 1)] == \
        [c.force.tolist() for c in traj.contacts.at(len(traj.t) - 1)]
    bad = np.load(path)
    members = {k: bad[k] for k in bad.files}
    members["contacts.count"] = members["contacts.count"] + 100
    with open(tmp_path / "bad.npz", "wb") as f:
        np.savez(f, **members)
    with pytest.raises(mb.InputError, match="bad.npz.*out of range"):
        mb.Trajectory.load(tmp_path / "bad.npz")
    plain = mb.Simulator(model, dt=1e-3, q0=q0).rollout(steps=5)
    plain.save(tmp_path / "plain.npz")
    assert mb.Trajectory.load(tmp_path / "plain.npz").contacts is None


def test_a_file_with_contacts_and_actuators_keeps_both(tmp_path):
    """A trajectory with recorded contacts and actuators (a motor pushing a
    box along the floor) saves and loads with its actuator names and
    records intact (the contact geometries' names once replaced them)."""
    xml = """<mujoco><option timestep="0.002"/><worldbody><geom name="floor" type="plane" size="2 2 0.1"/>
    <body name="box" pos="0 0 0.1"><joint name="x" type="slide" axis="1 0 0"/>
    <joint name="z" type="slide" axis="0 0 1"/><geom name="b" type="box" size="0.1 0.1 0.1" mass="1"/></body>
    </worldbody><actuator><motor name="push" joint="x" gear="2"/></actuator></mujoco>"""
    model = mb.load_mjcf(xml)
    sim = mb.Simulator(model, dt=0.002)
    traj = sim.rollout(steps=20, control=np.array([1.5]), contacts=True)
    assert traj.contacts.count[1:].min() >= 1
    traj.save(tmp_path / "push.npz")
    back = mb.Trajectory.load(tmp_path / "push.npz", model=model)
    assert back.actuator_names == ("push",) and sorted(back.contacts.geometries) == ["b", "floor"]
    assert np.array_equal(back.control, traj.control) and np.array_equal(back.actuator_force, traj.actuator_force)
    assert np.array_equal(back.contacts.force, traj.contacts.force)
