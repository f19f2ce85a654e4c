"""Hard loop constraints in the contact problem (docs/contact.md, "Loops
and contacts together"): the contact stage solves with the loops held
(ArtiSynth §0.7, the mixed LCP with the bilateral rows eliminated), so
the projection after the step takes nothing back from the impulses.
Checked against identities (G v⁺ = G v_f, W = J X_c Jᵀ with the
constrained inverse inertia X_c), a closed form (the static contact force
of a one-degree-of-freedom mechanism by virtual work) and a scene whose
sequential treatment fails (measured before the change: the four-bar's
ball kept a 6.0e-5 m penetration and a steady 5.5e-7 rad/s creep)."""
import warnings

import numpy as np
import pytest

import multibody as mb
from multibody.constraints import Constraints, project_positions

from constraints.mechanisms import D, L1, L2, L3, rod

R = 0.05  # the ball's radius (m)


def four_bar_on_ground(theta=1.0, mu=0.0):
    """The four-bar of tests/constraints/mechanisms.py (crank, coupler,
    rocker; a revolute loop joint; overconstrained in 3-D: its 5 loop rows
    have rank 2) with a ball of radius R at the middle of the coupler,
    resting on a ground plane placed just under it at crank angle
    ``theta``. Returns (model, q0)."""
    def build(ground_height=None):
        b = mb.ModelBuilder("four_bar_on_ground")
        rod(b, "crank", "world", None, L1)
        rod(b, "coupler", "crank", (np.eye(3), (L1, 0, 0)), L2)
        rod(b, "rocker", "world", (np.eye(3), (D, 0, 0)), L3)
        b.add_loop_joint("coupler", "rocker", "revolute", (np.eye(3), (L2, 0, 0)), (np.eye(3), (L3, 0, 0)),
                         axis=(0, 1, 0), name="closure")
        b.add_geometry("coupler", "sphere", (R,), placement=(np.eye(3), np.array([L2 / 2, 0, 0])), name="ball",
                       friction=(mu, 0, 0))
        if ground_height is not None:
            b.add_geometry("world", "plane", placement=(np.eye(3), np.array([0, 0, ground_height])), name="ground",
                           friction=(mu, 0, 0))
        return b.build()
    free = build()
    q, _ = project_positions(free, Constraints(free), np.array([theta, 0.9 - theta, 1.9]))
    centre = mb.forward_kinematics(free, q)[free.body_id("coupler")] @ np.array([L2 / 2, 0, 0, 1])
    return build(centre[2] - R), q


@pytest.mark.parametrize("solver", ["pgs", "lemke", "pivoting"])
def test_a_four_bar_resting_on_the_ground_holds_still_with_the_virtual_work_force(solver):
    """The four-bar falls onto its ball and rests: after 0.5 s the ball
    sits on the ground to 1e-9 m, the joint velocities are below 1e-9
    rad/s, and the contact force equals the static force of the
    one-degree-of-freedom mechanism, ``f = Nᵀg / Nᵀ(J_nᵀ n)`` with N the
    null space of the loop rows G, g the generalized gravity force (RNEA
    at rest) and J_n the ball's point Jacobian, to 1e-9 relative. Contact
    then projection (before the loops joined the problem): 6.0e-5 m deep,
    creeping at 5.5e-7 rad/s."""
    model, q0 = four_bar_on_ground()
    sim = mb.Simulator(model, dt=1e-3, q0=q0, contact_solver=solver,
                       friction={"lemke": "box", "pivoting": "none"}.get(solver, "cone"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mb.ModelWarning)
        sim.rollout(duration=0.5)
    (contact,) = sim.contact.contacts()
    assert abs(contact.distance) < 1e-9
    assert np.abs(sim.state.v).max() < 1e-9
    q = sim.state.q
    G = sim.constraints.evaluate(q)[1]
    _, s, vt = np.linalg.svd(G)
    N = vt[np.sum(s > 1e-10 * s[0]):].T
    assert N.shape[1] == 1
    g = mb.rnea(model, q, np.zeros(model.nv), np.zeros(model.nv))
    J = mb.jacobian(model, q, "coupler", "local_world_aligned", point=np.array([L2 / 2, 0, 0]))[3:]
    up = np.array([0.0, 0.0, 1.0])
    f = (N[:, 0] @ g) / (N[:, 0] @ (J.T @ up))
    force_on_ball = contact.force if contact.geom2 == "ball" else -contact.force
    assert force_on_ball == pytest.approx(f * up, rel=1e-9, abs=1e-9 * abs(f))


def test_the_contact_stage_keeps_the_loop_velocity():
    """With the loops held, the stage's impulses change the velocity only
    within the loops' admissible motions: ``G (v⁺ − v_f) = 0`` to 1e-12
    relative, for a free velocity that slams the ball into the ground;
    and its Delassus matrix is ``J X_c Jᵀ``, ``X_c = X − X Gᵀ (G X Gᵀ)⁺ G X``
    computed densely, to 1e-12 relative."""
    model, q = four_bar_on_ground()
    sim = mb.Simulator(model, dt=1e-3, q0=q)
    G = sim.constraints.evaluate(q)[1]
    _, s, vt = np.linalg.svd(G)
    v = -3.0 * vt[-1] * np.sign(vt[-1][0])  # an admissible velocity (G v = 0)
    ball = mb.jacobian(model, q, "coupler", "local_world_aligned", point=np.array([L2 / 2, 0, 0]))[5]
    if ball @ v > 0:  # moving the ball down into the ground
        v = -v
    vf, q_out, v_out = v.copy(), q.copy(), v.copy()
    sim.contact.hold_loops(sim.constraints, q)
    slots = sim._contact_kernel("after", q, v, q_out, v_out)
    assert slots == 1 and sim.contact.contacts()[0].impulse[0] > 0
    dv = v_out - vf
    assert np.abs(G @ dv).max() < 1e-12 * np.abs(dv).max()
    a = sim.contact.arrays
    J = a["J"][:3]
    X = np.linalg.inv(mb.crba(model, q))
    Xc = X - X @ G.T @ np.linalg.pinv(G @ X @ G.T, rcond=1e-10, hermitian=True) @ G @ X
    W = sim.contact.delassus()
    dense = J @ Xc @ J.T
    assert np.abs(W - dense).max() < 1e-12 * np.abs(dense).max()
