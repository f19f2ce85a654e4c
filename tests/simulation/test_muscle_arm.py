"""The antagonist arm: a forearm on an elbow hinge (the upper arm fixed to
the world), an elbow flexor and an extensor, each a HillMuscle from an
origin on the upper arm over a via point beside the joint to an insertion
on the forearm. Simulated with implicit Euler and joint damping until
rest, the final angle is the root of the torque balance written with the
closed-form moment arms (below, not the library's Path) and the muscle
curves at zero velocity (f_V(0) = 1), found by scipy's brentq."""
import numpy as np
import pytest
from scipy.optimize import brentq

import multibody as mb
from multibody.forces import HillMuscle, Path
from multibody.forces.muscle_curves import as_curves

G = 9.81
MASS, COM = 1.5, 0.15        # forearm mass (kg) and centre of mass below the elbow (m)
# origin, via point (upper arm = world), insertion (forearm frame), f_opt (N), l_opt, l_T (m)
FLEXOR = dict(origin=(0.02, 0.25, 0.0), via=(0.03, 0.0, 0.0), insertion=(0.015, -0.05, 0.0), fopt=400.0, lopt=0.1,
              lT=0.17)
EXTENSOR = dict(origin=(-0.02, 0.25, 0.0), via=(-0.025, 0.0, 0.0), insertion=(-0.02, -0.02, 0.0), fopt=300.0,
                lopt=0.09, lT=0.19)


def arm(gravity, damping=0.5):
    """Elbow at the origin, hinge about z; θ = 0 hangs the forearm along −y,
    θ > 0 flexes it towards +x; gravity along −y."""
    b = mb.ModelBuilder("arm", gravity=(0.0, -G if gravity else 0.0, 0.0))
    b.add_body("forearm", "world", "revolute", axis=(0, 0, 1), mass=MASS, com=(0, -COM, 0),
               inertia=np.diag([0.012, 0.001, 0.012]), damping=damping)
    return b.build()


def muscle(m, activation, curves):
    return HillMuscle([("world", m["origin"]), ("world", m["via"]), ("forearm", m["insertion"])], m["fopt"],
                      m["lopt"], m["lT"], 10.0, activation, curves)


def closed_form(m, theta):
    """Length and moment arm dl/dθ: the first segment is fixed; the insertion
    p = (c, −b) turns to R(θ)p = (c cos θ + b sin θ, c sin θ − b cos θ), the
    via point is (r, s), so d² = c² + b² + r² + s² − 2(r(c cos θ + b sin θ) +
    s(c sin θ − b cos θ)) and dd/dθ = −(r(b cos θ − c sin θ) + s(c cos θ + b sin θ))/d."""
    origin, via, p = (np.asarray(m[k], dtype=float) for k in ("origin", "via", "insertion"))
    c, b, r, s = p[0], -p[1], via[0], via[1]
    C, S = np.cos(theta), np.sin(theta)
    d = np.sqrt(c * c + b * b + r * r + s * s - 2 * (r * (c * C + b * S) + s * (c * S - b * C)))
    return np.linalg.norm(via - origin) + d, -(r * (b * C - c * S) + s * (c * C + b * S)) / d


def torque(theta, af, ae, gravity, curves):
    """Joint torque at rest: Σ −(dl/dθ) f_opt (a f_L(l̃) + f_P(l̃)) − m g c sin θ."""
    cv = as_curves(curves)
    total = -MASS * G * COM * np.sin(theta) if gravity else 0.0
    for m, a in ((FLEXOR, af), (EXTENSOR, ae)):
        length, arm_ = closed_form(m, theta)
        lt = (length - m["lT"]) / m["lopt"]
        total -= arm_ * m["fopt"] * (a * cv.active_length(lt)[0] + cv.passive_length(lt)[0])
    return total


# the flexor's moment arm vanishes at tan θ = b/c = 10/3 (θ = 1.279), where the line from its via point
# to its insertion crosses the elbow: the equilibria below lie in this bracket, where the torque has one root
BRACKET = (-0.3, 1.27)
CASES = [(False, 0.3, 0.3, "sueda"), (True, 0.5, 0.1, "sueda"), (True, 0.2, 0.6, "mujoco"),
         (False, 0.8, 0.0, "mujoco")]


@pytest.mark.parametrize("gravity,af,ae,curves", CASES)
def test_arm_comes_to_rest_at_the_predicted_equilibrium(gravity, af, ae, curves):
    grid = np.linspace(*BRACKET, 200)
    assert np.count_nonzero(np.diff(np.sign([torque(t, af, ae, gravity, curves) for t in grid]))) == 1
    theta_star = brentq(torque, *BRACKET, args=(af, ae, gravity, curves), xtol=1e-15, rtol=1e-15)
    model = arm(gravity)
    muscles = [muscle(FLEXOR, af, curves), muscle(EXTENSOR, ae, curves)]
    sim = mb.Simulator(model, 0.005, integrator="implicit_euler", forces=muscles)
    sim.reset(q=np.array([0.5]))
    for _ in range(2000):
        sim.step()
    q, v = sim.state.q, sim.state.v
    assert abs(v[0]) < 1e-9
    assert abs(q[0] - theta_star) < 1e-6, (q[0], theta_star)
    # the library's paths agree with the closed forms at rest, and the tensions balance
    for m, mus in zip((FLEXOR, EXTENSOR), muscles):
        length, arm_ = closed_form(m, q[0])
        path = mus.transmission
        assert isinstance(path, Path)
        assert abs(path.length(model, q) - length) < 1e-14 and abs(path.moment_arm(model, q)[0] - arm_) < 1e-14
    s = [mus.state(model, q, v) for mus in muscles]
    assert all(x["tension"] > 0 for x in s)
    assert abs(torque(q[0], af, ae, gravity, curves)) < 1e-5


def test_flexor_activation_flexes_the_elbow():
    """More flexor activation, a larger equilibrium angle; more extensor, a
    smaller one (the two moment arms have opposite signs over the range)."""
    thetas = [brentq(torque, *BRACKET, args=(af, ae, True, "sueda")) for af, ae in ((0.3, 0.3), (0.6, 0.3),
                                                                                     (0.3, 0.6))]
    assert thetas[1] > thetas[0] > thetas[2]
    for th in np.linspace(*BRACKET, 11):
        assert closed_form(FLEXOR, th)[1] < 0 < closed_form(EXTENSOR, th)[1]


def test_example_runs_and_plots(tmp_path):
    """examples/muscle_arm.py, shortened: the flexor pulse flexes the elbow,
    the records hold what the plot shows, and the PNG is written."""
    import importlib.util
    import os
    path = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "muscle_arm.py")
    spec = importlib.util.spec_from_file_location("muscle_arm", path)
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    traj, records = example.run(duration=0.6, dt=5e-3)
    assert traj.q[-1, 0] > traj.q[0, 0] + 0.3                      # the flexor pulse (0.2–0.5 s) flexes it
    assert set(records) == {"flexor", "extensor"}
    for rec in records.values():
        assert rec["tension"].shape == traj.t.shape and np.all(rec["tension"] > 0)
        assert np.allclose(rec["activation"][[0, -1]], [0.05, 0.6 if rec is records["flexor"] else 0.05])
    out = example.plot(traj, records, str(tmp_path / "arm.png"))
    assert os.path.getsize(out) > 10000
