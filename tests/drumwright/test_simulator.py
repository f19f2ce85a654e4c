"""``contact_solver="drumwright"`` in the simulator (docs/drumwright.md):
contacts, friction and joint limits as compliant rows of the compiled
contact stage, loops by Drumwright's bilateral law. Oracles: static
equilibria in closed form (linear and Hertz springs), the reference solver
on the step's own rows (multibody.solvers.drumwright, checked in
test_solver.py against closed forms), implicit Euler's L-stability."""
import math
import sys
import os

import numpy as np
import pytest

import multibody as mb
from multibody.errors import InputError
from multibody.solvers.drumwright import compliant_impulses

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "contact"))
from scenes import ball, coupled_ball, incline  # noqa: E402

G = 9.81


def resting_ball(compliance, radius=0.1, mass=1.0, steps=3000, dt=1e-3):
    model = ball(radius=radius, mass=mass)
    q0 = model.neutral()
    q0[2] = radius
    sim = mb.Simulator(model, dt=dt, contact_solver="drumwright", contact_model=compliance, q0=q0)
    for _ in range(steps):
        sim.step()
    return sim


def test_linear_spring_carries_the_weight():
    """A 1 kg ball on a K = 1e6 N/m, B = 200 N·s/m contact settles at
    depth mg/K; the contact's mean force is mg."""
    sim = resting_ball(mb.Compliance(stiffness=1e6, damping=200.0))
    assert sim.state.q[2] == pytest.approx(0.1 - G / 1e6, abs=1e-12)
    (c,) = sim.contact.contacts()
    assert c.force[2] == pytest.approx(G, rel=1e-9)


def test_hertz_law_depth():
    """Hertz (E* = 1e9 Pa, r = 0.1 m): mg = E*·√r·d^{3/2}, so d =
    (mg/(E*√r))^{2/3} (the paper's eq. 121, without the 4/3)."""
    E = 1e9
    sim = resting_ball(mb.Compliance(stiffness=E, damping=100.0, hertz=True), steps=4000)
    depth = (G / (E * math.sqrt(0.1))) ** (2.0 / 3.0)
    assert 0.1 - sim.state.q[2] == pytest.approx(depth, rel=1e-7)


def test_one_step_matches_the_reference_solver():
    """A box sliding down a 20° incline (μ = 0.2, four corner contacts,
    K = 1e7, B = 50, B_t = 1e5): the step's impulses equal the reference
    solver's on the step's own rows W = J M⁻¹ Jᵀ, b = J v_f, φ = distance."""
    model, q0, R = incline(np.radians(20.0), 0.2)
    q0[:3] -= R[:, 2] * 1e-5  # pressed 10 µm into the slope
    v0 = np.zeros(model.nv)
    v0[3:6] = (-0.5, 0.1, 0.0)  # sliding downhill and sideways (the free joint's linear velocity, body frame)
    compliance = mb.Compliance(stiffness=1e7, damping=50.0, friction_damping=1e5)
    h = 1e-3
    sim = mb.Simulator(model, dt=h, contact_solver="drumwright", contact_model=compliance, q0=q0, v0=v0,
                       contact_tolerance=1e-13)  # m/s: the solvers agree to what they are asked
    sim.step()
    C, n = sim.contact, sim.contact.count
    assert n == 4
    a = C.arrays
    J = a["J"][:3 * n].copy()
    M = mb.crba(model, q0)
    W = J @ np.linalg.solve(M, J.T)
    vf = v0 + h * mb.aba(model, q0, v0, np.zeros(model.nv))
    kind = ["normal", "tangent", "tangent"] * n
    phi = np.zeros(3 * n)
    phi[::3] = a["dist"][:n]
    K, B, mu = np.zeros(3 * n), np.zeros(3 * n), np.zeros(3 * n)
    K[::3], B[::3], mu[::3] = 1e7, 50.0, 0.2
    B[1::3] = B[2::3] = 1e5
    expected = compliant_impulses(W, J @ vf, h, kind, phi, K, B, mu)
    got = a["impulse"][:3 * n]
    assert got == pytest.approx(expected, abs=1e-7 * np.abs(expected).max())
    assert np.abs(expected[1::3]).max() > 0  # friction acts


def test_limits_are_compliant_rows_of_the_stage():
    """A slider pressed against its limit q ≥ 0 by a 10 N force settles at
    q = −F/K (K = 1e5 N/m): the limit is a spring, not the rigid projection;
    without any geometry the stage still runs for the limit."""
    b = mb.ModelBuilder(gravity=(0, 0, 0))
    b.add_body("slider", joint="prismatic", axis=(1, 0, 0), mass=2.0, inertia=np.eye(3), lower=0.0, upper=1.0)
    model = b.build()
    sim = mb.Simulator(model, dt=1e-3, contact_solver="drumwright",
                       contact_model=mb.Compliance(limit_stiffness=1e5, limit_damping=500.0))
    assert sim.contact is not None and sim.contact.count == 0
    for _ in range(3000):
        sim.step(np.array([-10.0]))
    assert sim.state.q[0] == pytest.approx(-10.0 / 1e5, rel=1e-9)
    assert sim.contact.limit_count == 1


def two_rows_loop(stiffness, damping):
    """A planar point mass (prismatic x, y; 1 kg) held at the origin by a
    spherical loop joint: two point rows with G = I."""
    b = mb.ModelBuilder(gravity=(0, 0, 0))
    b.add_body("sx", joint="prismatic", axis=(1, 0, 0))
    b.add_body("p", parent="sx", joint="prismatic", axis=(0, 1, 0), mass=1.0, inertia=np.eye(3))
    b.add_loop_joint("world", "p", "spherical")
    return b.build()


def test_bilateral_law_is_l_stable_where_artisynths_flips():
    """The issue's case: K = 1e10, B = 0, h = 0.1, the point started 0.1 m
    off. ArtiSynth's soft constraint (γ = 2 at β = 0) sends φ to −φ every
    step; Drumwright's (implicit Euler on the spring) to φ/(1 + h²K/m) at
    once: φ₁ = φ₀/(1 + 1e8)."""
    model = two_rows_loop(1e10, 0.0)
    q0 = np.array([0.1, 0.0])
    soft = mb.Simulator(model, dt=0.1, compliance=1e-10, q0=q0)
    ours = mb.Simulator(model, dt=0.1, contact_solver="drumwright",
                        contact_model=mb.Compliance(loop_stiffness=1e10, loop_damping=0.0, gdot=False), q0=q0)
    flips, q = [], []
    for _ in range(4):
        flips.append(soft.step().q[0])
        q.append(ours.step().q[0])
    assert flips == pytest.approx([-0.1, 0.1, -0.1, 0.1], rel=1e-6)
    assert q[0] == pytest.approx(0.1 / (1 + 0.01 * 1e10), rel=1e-9)
    assert abs(q[-1]) < 1e-15


def test_bad_compliance_is_refused():
    with pytest.raises(InputError, match="stiffness"):
        mb.Compliance(stiffness=-1.0)
    with pytest.raises(InputError, match="damping"):
        mb.Compliance(damping=math.inf)
    with pytest.raises(InputError, match="loop_stiffness"):
        mb.Compliance(loop_stiffness=0.0)
    with pytest.raises(InputError, match="Compliance"):
        mb.Simulator(ball(), dt=1e-3, contact_solver="drumwright", contact_model="rigid")
    with pytest.raises(InputError, match="Hertz"):
        mb.Simulator(incline(0.1, 0.5)[0], dt=1e-3, contact_solver="drumwright",
                     contact_model=mb.Compliance(stiffness=1e9, hertz=True))
    with pytest.raises(InputError, match="loop_stiffness"):
        mb.Simulator(two_rows_loop(1.0, 0.0), dt=1e-3, contact_solver="drumwright", compliance=1e-3)


def test_loops_and_contacts_are_one_problem():
    """One step of the sphere pressed 0.1 mm into the ground and 1 mm off
    its compliant coupling (K = 1e5, B = 10), sliding: the simulator's v⁺
    equals the reference solver's on all four rows at once (the coupling
    bilateral, the contact's normal and tangents), W = R M⁻¹ Rᵀ, b = R v*
    with v* = v + h g — and differs from solving the coupling first and the
    contact after (what the step did before the loops were held in the
    contact problem). The fused step and the Python step agree."""
    h = 1e-3
    compliance = mb.Compliance(stiffness=1e6, damping=100.0, friction_damping=1e4, loop_stiffness=1e5,
                               loop_damping=10.0, gdot=False)
    model = coupled_ball()
    q0 = np.array([0.5 * (0.1 - 1e-4) + 0.1 + 1e-3, 0.0, 0.1 - 1e-4])
    v0 = np.array([0.3, -0.2, -0.1])
    fused = mb.Simulator(model, dt=h, contact_solver="drumwright", contact_model=compliance, q0=q0, v0=v0)
    python = mb.Simulator(model, dt=h, contact_solver="drumwright", contact_model=compliance, q0=q0, v0=v0)
    assert fused.fused is not None
    python.fused = None  # the Python step: NumPy's KKT solve, then the compiled stage with hold_loops
    v1 = fused.step().v
    assert python.step().v == pytest.approx(v1, abs=1e-12)
    R = np.array([[1.0, 0.0, -0.5], [0.0, 0.0, 1.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    vf = v0 + h * np.array([0.0, 0.0, -G])
    kind = ["bilateral", "normal", "tangent", "tangent"]
    phi = np.array([1e-3, -1e-4, 0.0, 0.0])
    K, B = np.array([1e5, 1e6, 0.0, 0.0]), np.array([10.0, 100.0, 1e4, 1e4])
    mu = np.array([0.0, 0.3, 0.0, 0.0])
    lam = compliant_impulses(R @ R.T, R @ vf, h, kind, phi, K, B, mu, tol=1e-14)
    expected = vf + R.T @ lam
    assert v1 == pytest.approx(expected, abs=1e-9)
    assert abs(lam[1]) > 1e-3 and abs(lam[0]) > 1e-3  # both rows act
    # the coupling alone, then the contact alone
    lam_l = compliant_impulses(R[:1] @ R[:1].T, R[:1] @ vf, h, kind[:1], phi[:1], K[:1], B[:1])
    v_l = vf + R[0] * lam_l[0]
    lam_c = compliant_impulses(R[1:] @ R[1:].T, R[1:] @ v_l, h, kind[1:], phi[1:], K[1:], B[1:], mu[1:], tol=1e-14)
    sequential = v_l + R[1:].T @ lam_c
    assert np.abs(sequential - expected).max() > 1e-3
