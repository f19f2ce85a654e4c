"""The frictionless LCP by principal pivoting with columns on demand in
the contact stage (``contact_solver="pivoting"``, ArtiSynth §0.8;
docs/contact.md): the same trajectories as Lemke's method on the same
frictionless problem (a different algorithm, exact too), and the columns
computed only for the contacts that press (Newton's cradle:
test_scenes.py)."""
import numpy as np
import pytest
import multibody as mb

from scenes import box_stack


def test_pivoting_follows_lemke_on_a_settling_stack():
    """Five boxes stacked 1 mm apart (each falls onto the one below:
    impacts, then 20 redundant corner contacts at rest), frictionless,
    300 steps: configurations equal to Lemke's method's to 1e-12 at every
    step (measured 1.5e-15), the stack at rest on the ground."""
    model, q0 = box_stack(n=5)
    for i in range(5):
        q0[7 * i + 2] += 1e-3 * (i + 1)
    trajectories = []
    for solver in ("pivoting", "lemke"):
        sim = mb.Simulator(model, dt=1e-3, q0=q0, contact_solver=solver, friction="none")
        trajectories.append(sim.rollout(steps=300).q)
    assert np.abs(trajectories[0] - trajectories[1]).max() < 1e-12
    assert abs(trajectories[0][-1, 2] - 0.1) < 1e-9


def test_only_the_pressing_contacts_get_columns():
    """Two boxes stacked at rest (8 corner contacts, redundant: 3 per
    interface suffice): a column is computed for every contact that
    presses (λ_n > 0), and the impulses carry the weight (the ground's sum
    to 2 m g h, 1e-12 relative; the pivoting method ends on a basic
    solution, 5 pressing contacts here); then both boxes are lifted 5 mm
    (within the 1 cm contact distance: 8 speculative contacts) and rise at
    0.5 m/s, so that none closes within the step (b > 0): no column is
    computed, no solve with M made."""
    model, q0 = box_stack(n=2)
    sim = mb.Simulator(model, dt=1e-3, q0=q0, contact_solver="pivoting")
    sim.step()
    n = sim.contact.count
    assert n == 8
    done = sim.contact.arrays["sub_rows"][0, :n]
    pressing = np.array([c.impulse[0] > 0 for c in sim.contact.contacts()])
    assert done[pressing].all()
    ground = sum(c.impulse[0] for c in sim.contact.contacts() if "ground" in (c.geom1, c.geom2))
    assert ground == pytest.approx(2 * 9.81 * 1e-3, rel=1e-12)
    q = q0.copy()
    q[2::7] += 0.005  # 5 mm up: within the 1 cm contact distance, far from closing in 1 ms
    v = np.zeros(model.nv)
    v[5::6] = 0.5  # rising at 0.5 m/s
    sim.reset(q, v)
    sim.step()
    assert sim.contact.count == 8 and sim.contact.arrays["sub_rows"][0, :8].sum() == 0
