"""Joint limits in the contact problem (docs/contact.md, "Limits and
contacts together"): in a step with contacts, the joint limits the step
may reach are rows of the same problem, so that a contact and a limit
cannot undo each other. Checked against identities (W = J M⁻¹ Jᵀ, the
speculative and restitution targets of the rows, the contact conditions
at rest) and against a scene whose sequential treatment fails (measured
before the change: a link pressed into the ground by its limit kept a
4.2e-5 m penetration and a steady 1.1e-6 J of kinetic energy)."""
import warnings

import numpy as np
import pytest

import multibody as mb
from multibody.constraints import _contact as CF

A, W_, T_, MASS = 0.4, 0.2, 0.05, 1.0  # plank length, width, thickness (m), mass (kg)


def planks(sink=1e-4, lower=-1.0, upper=0.0, mu=0.5, restitution=0.0):
    """Two planks on a ground plane: "base" (free joint) and "link", hinged
    to the base's +x end about y, within [lower, upper] (rad). The link's
    box sits ``sink`` (m) lower than the base's, so at the upper limit with
    the base flat on the ground it overlaps the ground by ``sink``: only the
    whole assembly rising on the link's face removes that overlap (the
    hinge may not open past its limit). Returns (model, q0): the base flat
    on the ground, the link at its upper limit."""
    b = mb.ModelBuilder()
    inertia = MASS / 12 * np.diag([W_ * W_ + T_ * T_, A * A + T_ * T_, A * A + W_ * W_])
    b.add_body("base", joint="free", mass=MASS, inertia=inertia)
    b.add_geometry("base", "box", (A, W_, T_), name="base", friction=(mu, 0, 0))
    b.add_body("link", parent="base", joint="revolute", axis=(0, 1, 0), placement=(np.eye(3), np.array([A / 2, 0, 0])),
               mass=MASS, inertia=inertia, com=(A / 2, 0, 0), lower=lower, upper=upper)
    b.add_geometry("link", "box", (A, W_, T_), placement=(np.eye(3), np.array([A / 2, 0, -sink])), name="link",
                   friction=(mu, 0, 0), restitution=restitution)
    b.add_geometry("world", "plane", name="ground", friction=(mu, 0, 0), restitution=restitution)
    model = b.build()
    q = model.neutral()
    q[2] = T_ / 2
    q[7] = upper
    return model, q


@pytest.mark.parametrize("solver, friction", [("pgs", "cone"), ("lemke", "box"), ("pivoting", "none")])
def test_a_link_held_at_its_limit_into_the_ground_comes_to_rest(solver, friction):
    """The link of :func:`planks` starts 1e-4 m inside the ground at its
    upper limit. Solved together, the limit holds (θ ≤ 0 to 1e-12), the
    contacts end exactly on the surface (|distance| of the link's lowest
    corners < 1e-9 m: the assembly rose onto the link's face) and the
    planks come to rest (kinetic energy < 1e-12 J) within 0.3 s. Solved
    one after the other (the contact stage, then the end-of-step limit
    projection) the link stayed 4.2e-5 m deep, moving."""
    model, q0 = planks()
    sim = mb.Simulator(model, dt=1e-3, q0=q0, contact_solver=solver, friction=friction)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mb.ModelWarning)
        traj = sim.rollout(duration=0.3)
    assert traj.q[:, 7].max() <= 1e-12
    assert traj.kinetic[-1] < 1e-12
    link = [c.distance for c in sim.contact.contacts() if "link" in (c.geom1, c.geom2)]
    assert link and min(link) > -1e-9 and min(link) < 1e-9
    assert sim.contact.limit_count == 1


def test_a_reference_mode_solves_limits_and_contacts_together():
    """The same scene with Anitescu's cone QP (clarabel, called from Python
    with the compiled problem, limit rows included): the limit holds, the
    link's contacts end on the surface to 1e-9 m, and the planks come to
    rest to clarabel's accuracy (tolerances 1e-11: kinetic energy < 1e-9 J,
    measured 3e-11)."""
    model, q0 = planks()
    sim = mb.Simulator(model, dt=1e-3, q0=q0, contact_solver="anitescu")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mb.ModelWarning)
        traj = sim.rollout(duration=0.3)
    assert traj.q[:, 7].max() <= 1e-12
    assert traj.kinetic[-1] < 1e-9
    assert abs(min(c.distance for c in sim.contact.contacts() if "link" in (c.geom1, c.geom2))) < 1e-9


def test_limit_rows_are_rows_of_the_contact_problem():
    """In a step of :func:`planks` at rest: the problem has the detected
    contacts, then one slot for the upper limit of the hinge (the lower one,
    1 rad away, is out of reach); its rows are (sign·e_k, 0, 0); W equals
    J M⁻¹ Jᵀ computed densely to 1e-12 relative; its target is the
    speculative one, b = sign·vf_k + φ/h, and μ = 0; the contacts listed are
    the detected ones only."""
    model, q0 = planks(sink=0.0)
    sim = mb.Simulator(model, dt=1e-3, q0=q0)
    for _ in range(5):
        sim.step()
    q, v = sim.state.q.copy(), sim.state.v.copy()
    vf = v + 1e-3 * mb.forward_dynamics(model, q, v, np.zeros(model.nv))
    slots = sim._contact_kernel("problem", q, v, vf)
    table = sim.contact
    n = table.count
    assert slots == n + 1 and table.limit_count == 1 and len(table.contacts()) == n
    a, m = table.arrays, 3 * slots
    J = a["J"][:m]
    k = model.joints[model.body_id("link")].v_slice.start  # the hinge's coordinate
    row = np.zeros((3, model.nv))
    row[0, k] = -1.0  # the upper limit: φ = −(q − upper)
    assert np.array_equal(J[3 * n:], row)
    W = table.delassus()
    dense = J @ np.linalg.solve(mb.crba(model, q), J.T)
    assert np.abs(W - dense).max() < 1e-12 * np.abs(dense).max()
    phi = -(q[7] - 0.0)
    assert a["b"][3 * n] == pytest.approx(-vf[k] + phi / 1e-3, abs=1e-12)
    assert a["pair_mu"][n] == 0.0


def test_a_limit_impact_in_contact_follows_newtons_law():
    """The base lies on the ground and the link, lifted to θ = −0.5 rad,
    swings down into its upper limit (θ̇ = +3 rad/s to start): at the
    step that reaches the limit, the hinge's velocity leaves at −e times
    its velocity at the start of the step (Newton's restitution on the
    limit row, e = 0.5; Lemke's exact solution: to 1e-9; measured 6.6 rad/s
    → −3.3 rad/s), and the limit holds at the end of every step."""
    e = 0.5
    model, q0 = planks(sink=0.0)
    q0[7] = -0.5
    v0 = np.zeros(model.nv)
    v0[6] = 3.0
    sim = mb.Simulator(model, dt=1e-3, q0=q0, v0=v0, restitution=e, contact_solver="lemke", friction="box")
    for _ in range(400):
        before = sim.state.v[6]
        after = sim.step().v[6]
        assert sim.state.q[7] <= 1e-12
        if before > 0.1 and after < 0.0:  # the impact
            assert sim.contact.limit_count == 1
            break
    else:
        pytest.fail("the link never reached its limit")
    assert after == pytest.approx(-e * before, abs=1e-9)


def test_newtons_method_leaves_the_limits_to_the_end_of_the_step():
    """Soft contact's Newton solver takes no limit rows (its limits are
    projected at the end of the step, as without contact): the table has
    no limit slots."""
    model, q0 = planks(sink=0.0)
    sim = mb.Simulator(model, dt=1e-3, q0=q0, contact_solver="newton")
    sim.step()
    assert sim.contact.head[CF.NLIM] == 0 and sim.contact.limit_count == 0
    assert sim.contact.count > 0
