"""The contact stage on scenes with closed-form answers (issue 12, §4):
a sphere dropped on a plane, a box on an incline, collisions of free
bodies (momentum, energy, Newton's cradle), a box resting on four corners.

Free-joint velocities are (ω, v) in the body frame (angular first)."""
import warnings

import numpy as np
import pytest

import multibody as mb
from multibody.errors import InputError, SimulationWarning

from scenes import ball, box_stack, incline, spheres

RIGID = ("semi_implicit_euler", "implicit_euler", "rk4")
# in the NUMBA_DISABLE_JIT pass only semi-implicit Euler (the others run in the compiled pass)
RIGID_MARKED = ("semi_implicit_euler", pytest.param("implicit_euler", marks=pytest.mark.slow),
                pytest.param("rk4", marks=pytest.mark.slow))


def drop(integrator, height=1.0, restitution=0.0, dt=1e-3, seconds=1.5, radius=0.1):
    model = ball(radius=radius, restitution=restitution)
    q0 = model.neutral()
    q0[2] = height
    sim = mb.Simulator(model, dt=dt, q0=q0, integrator=integrator)
    return sim, sim.rollout(duration=seconds)


@pytest.mark.parametrize("integrator", RIGID)
def test_a_dropped_sphere_rests_at_its_radius(integrator):
    sim, traj = drop(integrator)
    z = traj.q[:, 2]
    assert z.min() > 0.1 - 1e-6                      # never penetrates
    assert abs(z[-1] - 0.1) < 1e-6 and np.abs(traj.v[-1]).max() < 1e-9
    (c,) = sim.contact.contacts()
    assert {c.geom1, c.geom2} == {"ball", "ground"} and c.distance == pytest.approx(0.0, abs=1e-9)
    on_ball = c.force if c.geom2 == "ball" else -c.force   # the force acts on geom 2
    np.testing.assert_allclose(on_ball, [0.0, 0.0, 9.81], rtol=1e-9, atol=1e-12)  # carries its weight
    np.testing.assert_allclose(c.frame[0], [0.0, 0.0, 1.0 if c.geom2 == "ball" else -1.0], atol=1e-15)


def apexes(z):
    """The heights of the local maxima of z after the first impact."""
    k = np.flatnonzero((z[1:-1] > z[:-2]) & (z[1:-1] >= z[2:])) + 1
    return z[k]


@pytest.mark.slow  # 25 000 steps
@pytest.mark.parametrize("e", [0.5, 0.8])
def test_bounce_heights_follow_e_squared(e):
    # dt = 0.1 ms: the impact happens within a step, which misplaces each bounce by up to v·dt
    sim, traj = drop("semi_implicit_euler", height=1.1, restitution=e, dt=1e-4, seconds=2.5)
    h = apexes(traj.q[:, 2]) - 0.1
    assert len(h) >= 3
    expected = 1.0 * e ** (2 * np.arange(1, 4))
    np.testing.assert_allclose(h[:3], expected, rtol=0.01)


THETA = np.radians(15.0)


@pytest.mark.parametrize("integrator", RIGID_MARKED)
@pytest.mark.parametrize("friction", ["cone", "box"])
@pytest.mark.parametrize("mu", [0.0, 0.125, 0.25, 0.375])
def test_box_on_an_incline_slides_as_coulomb_says(mu, friction, integrator):
    model, q0, R = incline(THETA, mu)
    sim = mb.Simulator(model, dt=1e-3, q0=q0, integrator=integrator, friction=friction)
    traj = sim.rollout(duration=1.0)
    along = (traj.q[:, :3] - q0[:3]) @ R          # plane coordinates: x downhill, z normal
    expected = 0.5 * 9.8 * max(np.sin(THETA) - mu * np.cos(THETA), 0.0)
    if expected > 0.0:
        # semi-implicit Euler's discretization adds h/T = 0.1 % to ½at²
        assert along[-1, 0] == pytest.approx(expected * 1.001, rel=1e-6)
        assert along[-1, 0] == pytest.approx(expected, rel=0.01)
    else:
        assert abs(along[-1, 0]) < 1e-6               # sticks
    assert np.abs(along[:, 2]).max() < 1e-6            # never hops, never sinks
    assert np.abs(along[:, 1]).max() < 1e-6            # slides straight
    assert sim.contact.count == 4


def test_box_resting_on_four_corners_carries_its_weight():
    model, q0, R = incline(0.0, 0.5, mass=2.5)
    sim = mb.Simulator(model, dt=1e-3, q0=q0)
    sim.rollout(duration=0.2)
    contacts = sim.contact.contacts()
    assert len(contacts) == 4
    on_box = [c.force if c.geom2 == "box" else -c.force for c in contacts]
    total = sum(on_box)
    np.testing.assert_allclose(total, [0.0, 0.0, 2.5 * 9.8], rtol=1e-9, atol=1e-9)
    moment = sum(np.cross(c.position - q0[:3], f) for c, f in zip(contacts, on_box))
    np.testing.assert_allclose(moment, 0.0, atol=1e-9)


def test_python_and_fused_steps_agree():
    model, q0, R = incline(THETA, 0.125)
    a = mb.Simulator(model, dt=1e-3, q0=q0)
    b = mb.Simulator(model, dt=1e-3, q0=q0)
    b.fused = None                                   # the integrator's Python step, contact after it
    for _ in range(200):
        a.step()
        b.step()
    np.testing.assert_allclose(a.state.q, b.state.q, atol=1e-12)
    np.testing.assert_allclose(a.state.v, b.state.v, atol=1e-12)


def test_impulses_conserve_momentum():
    """Two free spheres with friction, spinning, collide off-centre in zero
    gravity: in every step the impulses change no momentum (the velocity
    with contact and the free velocity, at the step's start configuration,
    carry the same momentum to 1e-12). Momentum is not compared across
    steps: the free joints' Lie-group update of spinning bodies moves it by
    O(h²) per step with or without contact."""
    model, q0, v0 = spheres(friction=0.5)
    sim = mb.Simulator(model, dt=1e-3, q0=q0, v0=v0)
    free = mb.Simulator(model, dt=1e-3, q0=q0, v0=v0, contact_solver=None)
    hits, effect = 0, 0.0
    for _ in range(400):
        s = sim.state
        free.reset(s.q, s.v)
        sim.step()
        free.step()
        if sim.contact.count:
            hits += 1
            p = mb.momentum(model, s.q, sim.state.v)
            p_free = mb.momentum(model, s.q, free.state.v)
            np.testing.assert_allclose(p, p_free, atol=1e-12)
            effect = max(effect, np.abs(sim.state.v - free.state.v).max())
    assert hits > 0 and effect > 0.1  # the impulses did something


def test_elastic_frictionless_collision_swaps_velocities_and_keeps_energy():
    model, q0, v0 = spheres(friction=0.0, restitution=1.0, offset=0.0, spin=False, masses=(1.0, 1.0))
    sim = mb.Simulator(model, dt=1e-3, q0=q0, v0=v0)
    e0 = mb.kinetic_energy(model, q0, v0)
    P0 = mb.momentum(model, q0, v0)
    sim.rollout(duration=0.5)
    v = sim.state.v
    np.testing.assert_allclose(v[[3, 9]], v0[[9, 3]], atol=1e-12)  # equal masses: the velocities swap
    assert mb.kinetic_energy(model, sim.state.q, v) == pytest.approx(e0, rel=1e-12)
    np.testing.assert_allclose(mb.momentum(model, sim.state.q, v), P0, atol=1e-12)


def test_off_centre_frictionless_collision_keeps_linear_and_angular_momentum():
    # frictionless spheres: the normal passes through both centres, nothing spins, and the
    # momentum about the world origin is kept exactly from step to step
    model, q0, v0 = spheres(friction=0.0, restitution=0.5, offset=0.12, spin=False)
    sim = mb.Simulator(model, dt=1e-3, q0=q0, v0=v0)
    P0 = mb.momentum(model, q0, v0)
    traj = sim.rollout(duration=0.5)
    for q, v in zip(traj.q, traj.v):
        np.testing.assert_allclose(mb.momentum(model, q, v), P0, atol=1e-10)
    assert np.abs(traj.v[-1, 10]) > 0.1  # deflected sideways: the collision was off-centre


@pytest.mark.parametrize("solver", ["pgs", "pivoting"])
def test_newtons_cradle_with_one_simultaneous_problem(solver):
    """Three equal touching balls, e = 1, the first arriving at 1 m/s: one
    simultaneous velocity problem (what every solver here poses; PGS and
    principal pivoting, the frictionless LCP) gives (−1/3, 2/3, 2/3), not
    the sequential-impulse answer (0, 0, 1)."""
    model, q0, v0 = spheres(n=3, friction=0.0, restitution=1.0, offset=0.0, spin=False, masses=(1.0,) * 3,
                            gap=1e-4, speed=1.0)
    q0[14] = q0[7] + 0.2  # the second and third balls touch
    sim = mb.Simulator(model, dt=1e-3, q0=q0, v0=v0, contact_solver=solver)
    sim.rollout(steps=5)
    np.testing.assert_allclose(sim.state.v[[3, 9, 15]], [-1 / 3, 2 / 3, 2 / 3], atol=1e-9)


def test_options_and_errors():
    model = ball()
    assert mb.Simulator(model, dt=1e-3, contact_solver=None).contact is None
    assert mb.Simulator(ball(ground=False), dt=1e-3).contact is None  # nothing can collide
    sim = mb.Simulator(ball(ground=False), dt=1e-3, ground=True)
    assert sim.contact is not None and sim.options.ground and sim.options.contact_solver == "pgs"
    with pytest.raises(InputError, match="contact_solver"):
        mb.Simulator(model, dt=1e-3, contact_solver="magic")
    with pytest.raises(InputError, match="friction"):
        mb.Simulator(model, dt=1e-3, friction="pyramidal")
    with pytest.raises(InputError, match="contact_distance"):
        mb.Simulator(model, dt=1e-3, contact_distance=-1.0)
    with pytest.raises(InputError, match="max_contacts"):
        mb.Simulator(model, dt=1e-3, max_contacts=0)


def test_dropped_contacts_are_reported_once():
    model, q0, R = incline(0.0, 0.5)
    sim = mb.Simulator(model, dt=1e-3, q0=q0, max_contacts=2)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(3):
            sim.step()
    msgs = [str(w.message) for w in caught if issubclass(w.category, SimulationWarning)]
    assert len(msgs) == 1 and "max_contacts = 2" in msgs[0]
    assert sim.contact.count == 2


def test_a_pickled_or_restored_simulator_continues_bitwise():
    """The checkpoint carries the solver's warm start: a box sliding on four
    corners (where PGS's iterates depend on its start) continues bitwise."""
    import pickle
    model, q0, R = incline(THETA, 0.125)
    sim = mb.Simulator(model, dt=1e-3, q0=q0)
    sim.rollout(steps=100)
    copy = pickle.loads(pickle.dumps(sim))
    cp = sim.checkpoint()
    for s in (sim, copy):
        s.rollout(steps=300)
    np.testing.assert_array_equal(sim.state.q, copy.state.q)
    end = sim.state.q.copy()
    sim.restore(cp)
    sim.rollout(steps=300)
    np.testing.assert_array_equal(sim.state.q, end)


@pytest.mark.parametrize("solver, friction", [("lemke", "box"), ("lemke", "pyramid"), ("staggered", "cone"),
                                              ("staggered", "box")])
@pytest.mark.parametrize("mu", [0.125, 0.375])
def test_other_solvers_on_the_incline(solver, friction, mu):
    """Lemke's method (box and 4-sided pyramid: the box slides along t1,
    where the diamond's vertex bounds it as the box does) and staggered
    projections (clarabel, from Python) give Coulomb's answer too."""
    model, q0, R = incline(THETA, mu)
    sim = mb.Simulator(model, dt=1e-3, q0=q0, contact_solver=solver, friction=friction)
    steps = 1000 if solver == "lemke" else 200
    traj = sim.rollout(steps=steps)
    along = (traj.q[:, :3] - q0[:3]) @ R
    t = steps * 1e-3
    expected = 0.5 * 9.8 * max(np.sin(THETA) - mu * np.cos(THETA), 0.0) * t * t * (1 + 1e-3 / t)
    tol = 1e-9 if solver == "lemke" else 1e-6  # clarabel's own accuracy
    assert along[-1, 0] == pytest.approx(expected, abs=tol, rel=1e-6)
    assert np.abs(along[:, 2]).max() < 1e-6


def test_anitescus_relaxation_lifts_a_sliding_box():
    """Anitescu's convex cone QP is not Coulomb's law: a sliding contact
    separates at u_n = μ‖u_t‖ (its documented identity), so the box on the
    incline hovers at the gap h μ ‖u_t‖ while it slides (docs/contact.md)."""
    model, q0, R = incline(THETA, 0.125)
    sim = mb.Simulator(model, dt=1e-3, q0=q0, contact_solver="anitescu")
    traj = sim.rollout(steps=100)
    rel = (traj.q[:, :3] - q0[:3]) @ R
    v_along = np.array([(R.T @ _world_velocity(q, v))[0] for q, v in zip(traj.q, traj.v)])
    assert rel[-1, 2] > 1e-6                                 # off the surface
    np.testing.assert_allclose(rel[10:, 2], 1e-3 * 0.125 * v_along[10:], rtol=1e-4)


def _world_velocity(q, v):
    """World linear velocity of a free body's origin from (ω, v) in the body frame."""
    w, x, y, z = q[3:7]
    Rb = np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                   [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                   [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])
    return Rb @ v[3:6]


def test_reference_and_python_steps_run_on_a_fresh_simulator():
    """The contact stage of the Python step (reference solvers, a user's
    integrator) writes CRBA's M into the system's workspace, which is
    allocated lazily: before the fix only the fused step table allocated it,
    and a fresh simulator with a reference solver crashed (segmentation
    fault) on its first contact. Run in a subprocess, so that a regression
    fails this test instead of killing the test session."""
    import os
    import subprocess
    import sys
    code = ("import numpy as np, multibody as mb\n"
            "from scenes import incline\n"
            "for solver, friction in (('staggered', 'cone'), ('anitescu', 'box'), ('anitescu_hart', 'pyramid')):\n"
            "    model, q0, R = incline(0.2, 0.5)\n"
            "    sim = mb.Simulator(model, dt=1e-3, q0=q0, contact_solver=solver, friction=friction)\n"
            "    sim.rollout(steps=3)\n"
            "    assert sim.contact.count == 4\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.path.dirname(__file__)] + sys.path))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]


def test_deep_initial_overlaps_are_reported_and_detect_gives_the_closed_form():
    """A ball of radius r started at height z has one contact with the
    ground at signed distance z − r (closed form); ``ContactTable.detect``
    finds it without stepping. Started more than 1 cm deep, the simulator
    warns (ModelWarning) naming the pair and the depth; 5 mm deep, it does
    not."""
    model = ball(radius=0.1)
    q0 = model.neutral()
    q0[2] = 0.05
    with pytest.warns(mb.ModelWarning, match=r"ground–ball \(5\.0 cm\)"):
        sim = mb.Simulator(model, dt=1e-3, q0=q0)
    assert sim.contact.count == 0  # the check leaves no contact behind
    q0[2] = 0.095
    with warnings.catch_warnings():
        warnings.simplefilter("error", mb.ModelWarning)
        sim = mb.Simulator(model, dt=1e-3, q0=q0)
    assert sim.contact.detect(q0) == 1
    (c,) = sim.contact.contacts()
    assert (c.geom1, c.geom2) == ("ground", "ball")
    assert c.distance == pytest.approx(0.095 - 0.1, abs=1e-12)
    np.testing.assert_allclose(c.frame[0], [0.0, 0.0, 1.0], atol=1e-12)  # normal: from the ground to the ball


def test_delassus_matrix_is_j_minv_jt_with_the_uncoupled_blocks_zero():
    """The stage builds W only for contacts on a common branch of the world
    (M is block diagonal by branch; the other blocks are 0, and PGS's table
    does not write them: ``delassus()`` returns them as 0). On a stack of
    three free boxes at rest (ground–b0, b0–b1, b1–b2: 12 contacts, the
    ground contacts and b1–b2's share no body) W equals J M⁻¹ Jᵀ, computed
    densely from the rows and CRBA's M, to 1e-12 relative — so the blocks
    left out are 0 in J M⁻¹ Jᵀ too — and those blocks are the uncoupled
    pairs'."""
    model, q0 = box_stack(n=3)
    sim = mb.Simulator(model, dt=1e-3, q0=q0)
    for _ in range(5):
        sim.step()
    q, v = sim.state.q.copy(), sim.state.v.copy()
    vf = v + 1e-3 * mb.forward_dynamics(model, q, v, np.zeros(model.nv))
    n = sim._contact_kernel("problem", q, v, vf)
    assert n == 12
    a, m = sim.contact.arrays, 3 * n
    W = sim.contact.delassus()
    J = a["J"][:m]
    dense = J @ np.linalg.solve(mb.crba(model, q), J.T)
    assert np.abs(W - dense).max() < 1e-12 * np.abs(dense).max()
    bodies = [set(a["body"][a["pairs"][p]]) for p in a["cpair"][:n]]
    uncoupled = [(c, d) for c in range(n) for d in range(n) if not (bodies[c] & bodies[d]) - {0}]
    assert uncoupled and all((W[3 * c:3 * c + 3, 3 * d:3 * d + 3] == 0.0).all() for c, d in uncoupled)
