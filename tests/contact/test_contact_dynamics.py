"""Contact at the acceleration level (Featherstone §11.3–11.5;
constraints/contact_dynamics.py): closed forms of mechanics, the
equivalent QPs of §11.5 solved by clarabel (an interior-point solver no
one here wrote), and the limit of the velocity-level step."""
import numpy as np
import pytest

import multibody as mb

from scenes import ball

G = 9.81


def spinning_ball(omega, speed=0.0, radius=0.1, mass=2.0):
    """A frictionless ball resting on the ground, spinning at ``omega``
    (rad/s) about the horizontal x axis and sliding at ``speed`` (m/s)
    along y."""
    model = ball(radius=radius, mass=mass, friction=0.0)
    q = model.neutral()
    q[2] = radius
    v = np.zeros(model.nv)
    v[0] = omega   # body-frame angular velocity (the body frame is the world's)
    v[4] = speed
    return model, q, v


@pytest.mark.parametrize("omega", [0.0, 50.0])
def test_a_spinning_ball_presses_with_its_weight(omega):
    """A ball spinning at ω about a horizontal axis while sliding on a
    frictionless plane: its centre does not move vertically, so the ground
    carries exactly its weight, m g (1e-12 relative), the centre's
    classical acceleration ``v̇ + ω × v`` (body-frame velocities) and the
    angular acceleration are 0 (1e-12). The contact point's material
    acceleration is ω² r = 250 m/s² upwards at ω = 50 rad/s: Eq. 11.33's
    points fixed in the bodies would make the ball lift off."""
    model, q, v = spinning_ball(omega, speed=0.3)
    sim = mb.Simulator(model, dt=1e-3, q0=q, v0=v)
    result = sim.contact_forward_dynamics()
    assert len(result.contacts) == 1
    assert result.forces[0] == pytest.approx(2.0 * G, rel=1e-12)
    assert np.abs(result.qdd[:3]).max() < 1e-12 * G
    assert np.abs(result.qdd[3:] + np.cross(v[:3], v[3:])).max() < 1e-12 * G
    assert result.contacts[0].force == pytest.approx([0.0, 0.0, 2.0 * G], abs=1e-12 * G) or \
        result.contacts[0].force == pytest.approx([0.0, 0.0, -2.0 * G], abs=1e-12 * G)


def ball_on_ball(speed, radius=0.1, mass=1.0):
    """A frictionless ball on top of a fixed ball of the same radius (both
    touching), moving horizontally at ``speed`` (m/s)."""
    b = mb.ModelBuilder()
    b.add_body("top", joint="free", mass=mass, inertia=np.eye(3) * 0.4 * mass * radius ** 2)
    b.add_geometry("top", "sphere", (radius,), name="top", friction=(0.0, 0.0, 0.0))
    b.add_geometry("world", "sphere", (radius,), name="fixed", friction=(0.0, 0.0, 0.0))
    model = b.build()
    q = model.neutral()
    q[2] = 2 * radius
    v = np.zeros(model.nv)
    v[3] = speed
    return model, q, v


@pytest.mark.parametrize("speed", [0.0, 0.5, 0.9, 1.5])
def test_a_ball_sliding_over_a_ball_is_pressed_by_gravity_less_its_centripetal_need(speed):
    """A ball sliding over the top of a fixed ball (frictionless; centres
    R = 2r apart): the normal force is m (g − u²/R) while positive, else 0
    and the ball leaves with φ̈ = u²/R − g (the particle on a sphere). Both
    to 1e-12; the relative normal acceleration is 0 while it presses."""
    r, m = 0.1, 1.0
    model, q, v = ball_on_ball(speed, r, m)
    sim = mb.Simulator(model, dt=1e-3, q0=q, v0=v)
    res = sim.contact_forward_dynamics()
    R = 2 * r
    expected = m * (G - speed ** 2 / R)
    if expected > 0:
        assert res.forces[0] == pytest.approx(expected, rel=1e-12, abs=1e-12)
        assert abs(res.normal_acceleration[0]) < 1e-12
    else:
        assert res.forces[0] == 0.0
        assert res.normal_acceleration[0] == pytest.approx(speed ** 2 / R - G, rel=1e-12)


def spinning_box(spin=3.0, speed=(0.4, -0.2), size=(0.4, 0.3, 0.1), mass=2.0):
    """A frictionless box flat on the ground, spinning about the vertical
    at ``spin`` rad/s while sliding."""
    b = mb.ModelBuilder()
    a, c, h = size
    b.add_body("box", joint="free", mass=mass, inertia=mass / 12 * np.diag([c * c + h * h, a * a + h * h, a * a + c * c]))
    b.add_geometry("box", "box", size, name="box", friction=(0.0, 0.0, 0.0))
    b.add_geometry("world", "plane", name="ground", friction=(0.0, 0.0, 0.0))
    model = b.build()
    q = model.neutral()
    q[2] = h / 2
    v = np.zeros(model.nv)
    v[2] = spin
    v[3:5] = speed
    return model, q, v


def test_a_spinning_box_matches_the_qps_of_section_11_5():
    """A box sliding and spinning flat on a frictionless plane (4 corner
    contacts, redundant): the ground carries m g with no moment about the
    centre (1e-10), q̈ has no vertical or tilting part, and the two QPs
    that §11.5 shows equivalent to the LCP, solved by clarabel, agree:
    ``min ½λᵀAλ + dᵀλ, λ ≥ 0`` (Eq. 11.43) gives the same T ᵀλ (λ is not
    unique), and Lötstedt's ``min ½(q̈ − q̈_f)ᵀH(q̈ − q̈_f)`` subject to
    ``T q̈ + Ṫ q̇ ≥ 0`` (Eq. 11.44) the same q̈ (1e-8)."""
    import clarabel
    from scipy import sparse
    from multibody.solvers.qp import nonnegative_qp
    model, q, v = spinning_box()
    sim = mb.Simulator(model, dt=1e-3, q0=q, v0=v)
    res = sim.contact_forward_dynamics()
    assert len(res.contacts) == 4
    F = sum(c.force for c in res.contacts)
    centre = q[:3]
    moment = sum(np.cross(c.position - centre, c.force) for c in res.contacts)
    assert abs(abs(F[2]) - 2.0 * G) < 1e-10 * G and np.abs(F[:2]).max() < 1e-10
    assert np.abs(moment).max() < 1e-10
    # the equivalent QPs, from the same T and d
    H = mb.crba(model, q)
    qdd_free = mb.forward_dynamics(model, q, v, np.zeros(model.nv))
    T = np.array([c.frame[0] @ mb.jacobian(model, q, "box", "local_world_aligned",
                                           point=c.position - centre)[3:] for c in res.contacts])
    A = T @ np.linalg.solve(H, T.T)
    d = res.normal_acceleration - A @ res.forces  # φ̈ = A λ + d
    lam, _ = nonnegative_qp(0.5 * (A + A.T), d)
    assert np.abs(T.T @ lam - T.T @ res.forces).max() < 1e-8 * G
    # Lötstedt: over q̈, P = H, c = −H q̈_f, constraints −T q̈ ≤ Ṫq̇ (clarabel: A x + s = b, s ≥ 0)
    bias = d - T @ qdd_free
    solver = clarabel.DefaultSolver(sparse.csc_matrix(np.triu(H)), -H @ qdd_free, sparse.csc_matrix(-T), bias,
                                    [clarabel.NonnegativeConeT(len(bias))], clarabel.DefaultSettings())
    qdd = np.array(solver.solve().x)
    assert np.abs(qdd - res.qdd).max() < 1e-8 * G


def test_the_velocity_level_steps_tend_to_the_acceleration_level_force():
    """The simulator's impulses, divided by the time, tend to the
    acceleration-level force as h → 0: the ball sliding over the fixed
    ball at 0.5 m/s (force m(g − u²/R) = 8.56 N), the mean force over the
    first 10 ms: relative error 7.0e-3 at h = 1 ms, 3.8e-4 at h = 0.1 ms
    (measured; asserted: below 1e-3 and at least ten times smaller). A
    single step's impulse alone is m g h: the velocity-level step sees the
    curvature only through the gap it opens (the speculative target of the
    next steps), not within the step."""
    model, q, v = ball_on_ball(0.5)
    exact = mb.Simulator(model, dt=1e-3, q0=q, v0=v).contact_forward_dynamics().forces[0]
    errors = []
    for h in (1e-3, 1e-4):
        sim = mb.Simulator(model, dt=h, q0=q, v0=v)
        total = 0.0
        for _ in range(int(round(0.01 / h))):
            sim.step()
            total += sum(c.impulse[0] for c in sim.contact.contacts())
        errors.append(abs(total / 0.01 - exact) / exact)
    assert errors[1] < errors[0] / 10 and errors[1] < 1e-3


def test_an_approaching_contact_needs_an_impulse_first():
    """A ball touching the plane while moving down at 1 m/s: its contact is
    approaching (Featherstone's state 2a), and the forces of the instant do
    not exist without an impulse: InputError naming the geometries."""
    model = ball(friction=0.0)
    q = model.neutral()
    q[2] = 0.1
    v = np.zeros(model.nv)
    v[5] = -1.0
    sim = mb.Simulator(model, dt=1e-3, q0=q, v0=v)
    with pytest.raises(mb.InputError, match="approaching"):
        sim.contact_forward_dynamics()
    v[5] = 1.0  # separating: no persistent contact, free fall
    sim.reset(q, v)
    res = sim.contact_forward_dynamics()
    assert res.contacts == [] and res.qdd[5] == pytest.approx(-G)
