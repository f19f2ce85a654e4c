"""Soft contact (``contact_model="soft"``, docs/contact.md "Soft
contact"): MuJoCo's contact model in multibody's contact stage, checked
against MuJoCo itself (same MJCF file, Euler ↔ semi-implicit Euler,
elliptic cone) and against the closed form of a resting sphere, written
here from MuJoCo's documentation ("Computation", solref and solimp), not
from multibody's code.

MuJoCo's free joint integrates position and orientation separately
(R³ × SO(3)) and multibody's on SE(3), so trajectories are compared only
where bodies do not rotate. Free-joint velocities are (ω, v) in the body
frame in multibody, (v_world, ω_body) in MuJoCo.
"""
import pickle
import warnings

import numpy as np
import pytest
from scipy.optimize import brentq

import multibody as mb
from multibody.errors import InputError, ModelError, ModelWarning

from scenes import ball

mujoco = pytest.importorskip("mujoco")


def sphere_scene(condim=3, floor="", ball="", height=0.15):
    return f"""<mujoco><option timestep="0.001" cone="elliptic"/><worldbody>
    <geom name="floor" type="plane" size="10 10 0.1" condim="{condim}" {floor}/>
    <body name="ball" pos="0 0 {height}"><freejoint/>
      <geom name="ball" type="sphere" size="0.1" mass="2" condim="{condim}" {ball}/></body>
    </worldbody></mujoco>"""


def stack_scene(n=5, pitch=0.199):
    """n 0.2 m cubes of 8 kg, ``pitch`` apart, the bottom one 1 mm into the
    floor: every face contact exists from the first step (boxes placed
    exactly touching make contacts at distance ±1e-17, which MuJoCo and
    multibody may count differently)."""
    bodies = "".join(f'<body pos="0 0 {0.099 + pitch * i}"><freejoint/><geom type="box" size="0.1 0.1 0.1"/></body>'
                     for i in range(n))
    return f"""<mujoco><option timestep="0.001" cone="elliptic"/><worldbody>
    <geom name="floor" type="plane" size="10 10 0.1"/>{bodies}</worldbody></mujoco>"""


def twin_runs(xml, steps, v_world=None, integrator="semi_implicit_euler", iterations=None, v0=None, **options):
    """(multibody q, MuJoCo qpos) after each of ``steps`` steps from
    MuJoCo's qpos0, the free bodies starting with the world linear
    velocities ``v_world`` (n, 3) and no rotation. MuJoCo's solver runs to
    1e-15 (its Newton method), multibody's PGS to a velocity residual of
    1e-14."""
    m = mujoco.MjModel.from_xml_string(xml)
    d = mujoco.MjData(m)
    m.opt.tolerance, m.opt.iterations = 1e-15, 10000
    if integrator == "implicit_euler":
        m.opt.integrator = mujoco.mjtIntegrator.mjINT_IMPLICITFAST
    model = mb.load_mjcf(xml)
    if v0 is not None:  # joints other than free ones: the same velocity coordinates
        d.qvel[:] = v0
    v0 = np.zeros(model.nv) if v0 is None else np.asarray(v0, float)
    if v_world is not None:
        v_world = np.asarray(v_world, float).reshape(-1, 3)
        d.qvel[:] = np.concatenate([np.r_[u, 0, 0, 0] for u in v_world])
        v0[:] = np.concatenate([np.r_[0, 0, 0, u] for u in v_world])  # no rotation: body = world axes
    options = {"contact_model": "soft", "contact_tolerance": 1e-14, **options}
    sim = mb.Simulator(model, dt=1e-3, q0=m.qpos0.copy(), v0=v0, integrator=integrator,
                       contact_iterations=iterations, **options)
    ours, theirs = [], []
    for _ in range(steps):
        sim.step()
        mujoco.mj_step(m, d)
        ours.append(sim.state.q.copy())
        theirs.append(d.qpos.copy())
    return np.array(ours), np.array(theirs), sim, d


@pytest.mark.parametrize("condim, integrator", [(1, "semi_implicit_euler"), (3, "semi_implicit_euler"),
                                                 (3, "implicit_euler")])
def test_a_dropped_sphere_follows_mujocos_trajectory(condim, integrator):
    """A 2 kg sphere (r = 0.1 m) thrown down at 0.5 m/s from 5 cm above the
    floor — with a sideways 0.3 m/s when frictionless (with friction it
    would roll, which the two free-joint updates integrate differently) —
    lands, sinks into its soft contact and settles, 300 steps: the
    configurations equal MuJoCo's to 1e-12 m at every step (measured: 0,
    bitwise), and the final penetration is MuJoCo's."""
    side = 0.3 if condim == 1 else 0.0
    ours, theirs, sim, d = twin_runs(sphere_scene(condim), 300, [(side, 0, -0.5)], integrator)
    assert sim.contact.count == 1 and d.ncon == 1
    assert np.abs(ours - theirs).max() < 1e-12
    assert abs(sim.contact.contacts()[0].distance - d.contact[0].dist) < 1e-12


@pytest.mark.parametrize("floor, ball", [('solref="0.05 0.5"', 'solimp="0.8 0.99 0.003 0.3 3"'),
                                         ('solref="-20000 -150"', 'solref="-40000 -100" priority="1"')])
def test_the_pair_parameters_mix_as_mujocos(floor, ball):
    """Non-default solref and solimp on the two geometries: mixed (the mean
    of two standard solrefs with the other's default solimp) and by
    priority (the ball's direct-format solref, stiffness 40000 and damping
    100): the trajectories equal MuJoCo's to 1e-12 m."""
    ours, theirs, *_ = twin_runs(sphere_scene(3, floor, ball), 300, [(0, 0, -0.5)])
    assert np.abs(ours - theirs).max() < 1e-12


def impedance(solimp, r):
    """MuJoCo's documented impedance d(r) (Computation, "Solver
    parameters"): dmin at 0 to dmax at |r| ≥ width through two power
    functions meeting at the midpoint."""
    dmin, dmax, width, mid, p = solimp
    x = min(abs(r) / width, 1.0)
    y = x ** p / mid ** (p - 1) if x <= mid else 1 - (1 - x) ** p / (1 - mid) ** (p - 1)
    return dmin + y * (dmax - dmin)


def test_a_resting_sphere_sinks_to_the_closed_form_depth():
    """At rest MuJoCo's soft contact balances f = m g with (A + R) f + a₀ =
    a_ref (a₀ = −g, A = 1/m through the centre), i.e. R m g = −K d(r) r
    with R = (1 − d)/d · (1/m), K = 1/(dmax² τ² ζ²): the depth −r solves
    r K d(r)² = −(1 − d(r)) g. Defaults τ = 0.02 s, ζ = 1, solimp (0.9,
    0.95, 0.001, 0.5, 2). After 2 s the sphere rests there to 1e-10 m and
    the contact force equals its weight to 1e-9 relative."""
    solimp, tau, zeta, g, mass = (0.9, 0.95, 0.001, 0.5, 2.0), 0.02, 1.0, 9.81, 2.0
    K = 1 / (solimp[1] ** 2 * tau ** 2 * zeta ** 2)
    depth = brentq(lambda x: x * K * impedance(solimp, x) ** 2 - (1 - impedance(solimp, x)) * g, 1e-9, 1e-2,
                   xtol=1e-16)
    model = mb.load_mjcf(sphere_scene(3))
    m = mujoco.MjModel.from_xml_string(sphere_scene(3))
    sim = mb.Simulator(model, dt=1e-3, contact_model="soft", q0=m.qpos0.copy())
    sim.rollout(duration=2.0)
    assert abs(sim.state.q[2] - (0.1 - depth)) < 1e-10
    force = sim.contact.contacts()[0].force
    assert abs(force[2] - mass * g) < 1e-9 * mass * g and np.abs(force[:2]).max() < 1e-9


@pytest.mark.slow  # ~1 s compiled; interpreted PGS sweeps are too slow
def test_a_settling_stack_of_boxes_follows_mujocos_trajectory():
    """Five 0.2 m cubes stacked 1 mm into each other push apart on their
    soft contacts and settle (elliptic cone, μ = 1), 500 steps: the same
    contact sets (four corners per face) and, the problem being strictly
    convex (W + R is positive definite even with redundant corners), the
    same forces: configurations equal MuJoCo's to 1e-9 m. At rest each
    interface carries the boxes above it."""
    ours, theirs, sim, d = twin_runs(stack_scene(5), 500, None, iterations=100000)
    assert sim.contact.count == d.ncon == 20
    assert np.abs(ours - theirs).max() < 1e-9
    mass = 8 * 0.1 ** 3 * 1000.0
    for k in range(5):  # interface k: floor–box 0, box k−1 – box k
        fz = sum(c.force[2] for c in sim.contact.contacts() if max(c.body1, c.body2) == k + 1
                 and min(c.body1, c.body2) == k)
        assert abs(abs(fz) - (5 - k) * mass * 9.81) < 1e-6 * mass * 9.81


# ---------------------------------------------------------------- Newton's method, MuJoCo's default

def slider_scene(mu=0.5):
    """A 0.4 x 0.3 x 0.2 m box on three slide joints (it cannot turn, so
    both libraries integrate it alike), 1 mm into a floor."""
    return f"""<mujoco><option timestep="0.001"/><worldbody>
    <geom name="floor" type="plane" size="10 10 0.1" friction="{mu}"/>
    <body pos="0 0 0.099"><joint type="slide" axis="1 0 0"/><joint type="slide" axis="0 1 0"/>
      <joint type="slide" axis="0 0 1"/><geom type="box" size="0.2 0.15 0.1" friction="{mu}"/></body>
    </worldbody></mujoco>"""


@pytest.mark.parametrize("integrator", ["semi_implicit_euler", "implicit_euler"])
@pytest.mark.parametrize("scene, steps, v0", [("stack", 300, None), ("slider", 600, [1.0, 0.3, -0.2]),
                                              ("sphere", 300, None)])
def test_newton_is_mujocos_default_contact(scene, steps, v0, integrator):
    """``contact_solver="newton"`` (soft contact, MuJoCo's pyramidal cone)
    against MuJoCo's defaults (pyramidal cone, Newton solver): a stack of
    five boxes pushing apart and settling, a box sliding at 1 m/s with μ =
    0.5 until it stops (every contact sliding, then sticking), a
    frictionless sphere dropped with a sideways velocity: the configurations
    equal MuJoCo's to 1e-12 m at every step (measured: 8e-19, 8e-16 and 0),
    and at rest Newton ends in one iteration, as MuJoCo's does. The same
    with implicit Euler against MuJoCo's implicitfast: without dampers
    both solve the contacts through M, and no body turns (the gravity
    stiffness of implicit Euler's free joints acts only on rotations)."""
    xml = {"stack": stack_scene(5), "slider": slider_scene(), "sphere": sphere_scene(1)}[scene]
    xml = xml.replace(' cone="elliptic"', "")
    v_world = [(0.3, 0, -0.5)] if scene == "sphere" else None
    ours, theirs, sim, d = twin_runs(xml, steps, v_world, v0=v0, contact_solver="newton", contact_tolerance=0.0,
                                     integrator=integrator)
    assert sim.options.friction == "pyramid" and sim.options.contact_model == "soft"
    assert sim.contact.count == d.ncon > 0
    assert np.abs(ours - theirs).max() < 1e-12
    if scene != "sphere":
        assert sim.contact.iterations == 1


def test_newton_options_are_checked():
    model = mb.load_mjcf(sphere_scene(3))
    with pytest.raises(InputError, match="contact_model='soft'"):
        mb.Simulator(model, dt=1e-3, contact_solver="newton", contact_model="rigid")
    with pytest.raises(InputError, match="contact_solver='newton'"):
        mb.Simulator(model, dt=1e-3, contact_model="soft", friction="pyramid", contact_solver="lemke")


def test_soft_contact_options_are_checked():
    model = mb.load_mjcf(sphere_scene(3))
    with pytest.raises(InputError, match="contact_model"):
        mb.Simulator(model, dt=1e-3, contact_model="mujoco")
    with pytest.raises(InputError, match="contact_distance must be 0"):
        mb.Simulator(model, dt=1e-3, contact_model="soft", contact_distance=0.01)
    # a mixed-format solref is refused with the pair named (the loader accepts what MuJoCo's parser does)
    try:
        mixed = mb.load_mjcf(sphere_scene(3, ball='solref="0.02 -1" priority="1"'))
    except ModelError:
        return
    with pytest.raises(InputError, match=r"\(floor, ball\).*mixes"):
        mb.Simulator(mixed, dt=1e-3, contact_model="soft")


def test_soft_contact_ignores_restitution_with_a_warning():
    model = ball(restitution=0.5)
    q0 = model.neutral()
    q0[2] = 0.1
    with pytest.warns(ModelWarning, match="no restitution.*ball"):
        mb.Simulator(model, dt=1e-3, contact_model="soft", q0=q0)


def test_a_soft_simulator_pickles_and_continues_bitwise():
    model = mb.load_mjcf(sphere_scene(3))
    m = mujoco.MjModel.from_xml_string(sphere_scene(3))
    sim = mb.Simulator(model, dt=1e-3, contact_model="soft", q0=m.qpos0.copy())
    sim.rollout(duration=0.12)
    copy = pickle.loads(pickle.dumps(sim))
    assert copy.options.contact_model == "soft" and copy.options.contact_distance == 0.0
    a, b = sim.rollout(duration=0.05), copy.rollout(duration=0.05)
    assert np.array_equal(a.q, b.q)
