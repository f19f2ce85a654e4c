"""Joint couplings (gears, URDF mimic, MJCF joint equalities) as rows of the
maximal formulation (formulations/maximal.py, Sueda §1.10–1.12): the rows
``s_j⁺(V_j − A V_p) − r s_i⁺(V_i − A V_q) = 0`` on the bodies' twists.

Oracles: the reduced closed-loop forward dynamics (ReducedSystem with the
model's Constraints, Featherstone §8.5, no Baumgarte terms) mapped to body
accelerations, the reduced RK4 trajectory at dt = 1e-4, and the joint
coordinates read off the bodies' poses here in the test (the axis-angle of
the relative rotation, unwrapped over time; the slide along its axis)."""
import warnings

import numpy as np
import pytest

import multibody as mb
from multibody.constraints import Constraints
from multibody.constraints.projection import project
from multibody.errors import InputError, ModelError
from multibody.formulations import ReducedSystem
from multibody.formulations.maximal import MaximalSystem
from multibody.spatial import se3
from oracles import robot_path

I3 = np.diag([0.02, 0.03, 0.025])
# the gear chain: (joint, body, parent body, type, axis, joint origin in the parent); a branched tree so
# that the j4–j2 coupling's row has blocks on four bodies (d, c, b, a)
JOINTS = [("j1", "a", "world", "revolute", (0, 1, 0), (0, 0, 0)),
          ("j2", "b", "a", "revolute", (1, 0, 0), (0, 0.1, -0.4)),
          ("s", "c", "a", "prismatic", (0, 0, 1), (0.2, 0, -0.3)),
          ("j4", "d", "c", "revolute", (0, 0.6, 0.8), (0, 0, -0.3))]
# q_joint = multiplier · q_mimicked + offset: a gear, a prismatic–revolute coupling, a revolute–revolute one
COUPLINGS = [("j2", "j1", -2.0, 0.1), ("s", "j2", 0.3, 0.05), ("j4", "j2", 1.5, -0.2)]


def gear_chain(couplings=COUPLINGS):
    b = mb.ModelBuilder("gears")
    for (name, body, parent, jt, axis, origin), m, c in zip(
            JOINTS, (1.0, 0.7, 0.5, 0.4), ((0.1, 0, -0.2), (0, 0.05, -0.15), (0.05, 0, -0.1), (0.1, 0.02, -0.05))):
        b.add_body(body, parent, jt, joint_name=name, axis=axis, placement=(np.eye(3), origin), mass=m, com=c,
                   inertia=I3)
    for c in couplings:
        b.add_coupling(*c)
    return b.build()


HELD_MJCF = """<mujoco model="held">
  <worldbody>
    <body name="a"><joint name="h1" type="hinge" axis="0 1 0"/>
      <geom type="capsule" fromto="0 0 0 0 0 -0.4" size="0.04" mass="1"/>
      <body name="b" pos="0 0 -0.4"><joint name="h2" type="hinge" axis="1 0 0"/>
        <geom type="capsule" fromto="0 0 0 0.1 0 -0.3" size="0.03" mass="0.6"/>
        <body name="c" pos="0.1 0 -0.3"><joint name="sl" type="slide" axis="0 0 1"/>
          <geom type="box" size="0.05 0.04 0.03" pos="0.02 0 0" mass="0.4"/>
          <body name="d" pos="0 0 -0.1"><joint name="h4" type="hinge" axis="0 1 0"/>
            <geom type="capsule" fromto="0 0 0 0.2 0 0" size="0.02" mass="0.3"/>
          </body>
        </body>
      </body>
    </body>
  </worldbody>
  <equality>
    <joint joint1="h2" joint2="h1" polycoef="0.1 -2 0 0 0"/>
    <joint joint1="h4" polycoef="0.3 0 0 0 0"/>
    <joint joint1="sl" joint2="h4" polycoef="-0.02 0.25 0 0 0"/>
  </equality>
</mujoco>"""


def held_model():
    """An MJCF chain with a gear, a joint held at 0.3 rad (an equality with
    one joint) and a slide coupled to that hinge."""
    return mb.load_mjcf(HELD_MJCF)


def panda():
    """example-robot-data's Panda: its second finger mimics the first."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mb.ModelWarning)
        model = mb.load_urdf(robot_path("panda"))
    assert len(model.couplings) == 1
    return model


def spline_gear():
    """A hinge and a 3-segment spline joint (Sueda §2.4; 1-DoF, its s turns
    with its parameter, so η has the ``s⁺Ṡq̇`` term) coupled: q_sp = 0.5 q_j1
    + 1.2 (inside the spline's parameter range)."""
    rng = np.random.default_rng(4)
    frames = [se3.exp(np.r_[0.3 * rng.normal(size=3), 0.2 + 0.1 * rng.normal(size=3)]) for _ in range(6)]
    b = mb.ModelBuilder("spline_gear")
    b.add_body("a", "world", "revolute", joint_name="j1", axis=(0, 1, 0), mass=1.0, com=(0.1, 0, -0.2), inertia=I3)
    b.add_body("b", "a", "spline", joint_name="sp", placement=(np.eye(3), (0, 0, -0.4)), control=frames,
               mass=0.8, com=(0.05, 0.0, -0.1), inertia=I3)
    b.add_coupling("sp", "j1", 0.5, 1.2)
    return b.build()


def reduced_accelerations_agree(model, seed):
    """max |V̇_maximal − V̇_reduced| / max(1, |V̇|) at a random state on the
    constraints (projected) and random joint forces."""
    constraints = Constraints(model)
    assert len(constraints)  # the model's couplings are there
    rng = np.random.default_rng(seed)
    q0 = model.integrate(model.neutral(), 0.4 * rng.normal(size=model.nv))
    q, v, _ = project(model, constraints, q0, rng.normal(size=model.nv))
    tau = rng.normal(size=model.nv)
    system = MaximalSystem(model, loops=True)
    assert system.rows == 6 * system.n - model.nv + len(constraints)
    C, V = system.state(q, v)
    G, _ = system.constraints(C, V)
    assert np.abs(G @ V.ravel()).max() < 1e-10  # the rows hold at a state on the constraints
    assert np.abs(system.position_errors(C)).max() < 1e-10
    Vd, _ = system.acceleration(C, V, tau)
    reduced = ReducedSystem(model, gravity=True, joint_damping=False, constraints=constraints, baumgarte=0.0)
    ref = system.body_accelerations(q, v, reduced.acceleration(0.0, q, v, tau))
    return np.abs(Vd - ref).max() / max(1.0, np.abs(ref).max())


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("make", [gear_chain, held_model, panda, spline_gear],
                         ids=["gear_chain", "mjcf_held", "panda_mimic", "spline_gear"])
def test_accelerations_equal_the_reduced_closed_loop_dynamics(make, seed):
    """The gear (−2, offset 0.1), a prismatic–revolute coupling and a
    four-body revolute–revolute one (builder); the MJCF equalities (a gear,
    a held joint, a slide–hinge pair); the Panda's URDF mimic; a hinge
    coupled to a spline joint (a varying s)."""
    assert reduced_accelerations_agree(make(), seed) < 1e-9


def test_rows_on_four_bodies():
    """The j4–j2 coupling's row has blocks on d, c (j4's child and parent)
    and b, a (j2's): −1.5 s₂⁺ on b, s₄⁺ on d."""
    model = gear_chain()
    system = MaximalSystem(model, loops=True)
    C, _ = system.state(model.neutral(), np.zeros(model.nv))
    G = system.constraints(C)[0].toarray()
    row = G[-1].reshape(4, 6)
    assert np.all(np.abs(row).max(axis=1) > 0.1)
    assert np.allclose(row[3], np.r_[0, 0.6, 0.8, 0, 0, 0])  # s⁺ of the unit hinge axis, child coordinates
    assert np.allclose(row[1], -1.5 * np.r_[1.0, 0, 0, 0, 0, 0])


# ---------------------------------------------------------------- the velocity-level step
def coordinates_from_poses(C, q_start):
    """The chain's joint coordinates (steps × 4) read off the body poses C
    (steps × 4 × 4 × 4) independently of the library: the relative pose
    ``T = (C_p P)⁻¹ C_c`` (P the joint origin, no rotation); a hinge's angle
    from the axis-angle form (``sin θ a = vee(R − Rᵀ)/2``, ``cos θ = (tr R −
    1)/2``), unwrapped over time from q_start; the slide ``a · p``."""
    body = {"world": None, "a": 0, "b": 1, "c": 2, "d": 3}
    out = np.empty((len(C), 4))
    for k, (_, _, parent, jt, axis, origin) in enumerate(JOINTS):
        a = np.asarray(axis, dtype=float) / np.linalg.norm(axis)
        P = np.eye(4)
        P[:3, 3] = origin
        for n, Cn in enumerate(C):
            Cp = np.eye(4) if body[parent] is None else Cn[body[parent]]
            T = np.linalg.solve(Cp @ P, Cn[k])
            R = T[:3, :3]
            if jt == "prismatic":
                out[n, k] = a @ T[:3, 3]
            else:
                w = 0.5 * np.array([R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]])
                out[n, k] = np.arctan2(a @ w, 0.5 * (np.trace(R) - 1.0))
    for k, (_, _, _, jt, _, _) in enumerate(JOINTS):
        if jt != "prismatic":
            out[:, k] = np.unwrap(np.r_[q_start[k], out[:, k]])[1:]
    return out


def coupling_errors(q):
    """``q_j − r q_i − o`` (steps × 3) of the chain's couplings."""
    ix = {name: k for k, (name, *_) in enumerate(JOINTS)}
    return np.stack([q[:, ix[j]] - r * q[:, ix[i]] - o for j, i, r, o in COUPLINGS], axis=1)


def start(model, fast=False):
    """A state on the couplings (projected); ``fast``: j1 fast enough that
    j2 (−2 j1 + 0.1) turns through several branches of ±π within a second
    (the position errors must keep the angles' branch)."""
    q0, v0 = (np.array([1.2, 0, 0, 0]), np.array([20.0, 0, 0, 0])) if fast else \
        (np.array([0.5, 0, 0, 0]), np.array([6.0, 0, 0, 0]))
    q, v, _ = project(model, Constraints(model), q0, v0)
    return q, v


@pytest.mark.parametrize("stabilization", ["post", "baumgarte+post"])
def test_post_stabilized_step_holds_the_couplings(stabilization):
    """500 steps of h = 2 ms: the couplings hold at ≤ 1e-10 after every step
    (read off the poses here), while j2 turns through more than a full turn."""
    model = gear_chain()
    system = MaximalSystem(model, loops=True)
    q, v = start(model, fast=True)
    C, V = system.state(q, v)
    poses = []
    for _ in range(500):
        C, V = system.step(C, V, np.zeros(model.nv), 2e-3, stabilization=stabilization)
        poses.append(C)
    qs = coordinates_from_poses(np.array(poses), q)
    assert np.ptp(qs[:, 1]) > 2.0 * np.pi  # the gear's fast joint crossed ±π (several branches)
    assert np.abs(coupling_errors(qs)).max() <= 1e-10
    assert system.joint_errors(C)[-3:].max() <= 1e-10


def reference(model, q, v, duration):
    """The reduced RK4 trajectory (constraints on) at dt = 1e-4."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mb.SimulationWarning)
        tr = mb.Simulator(model, 1e-4, integrator="rk4", q0=q, v0=v).rollout(duration)
    return tr


def pose_error(model, C, q_ref):
    """max over bodies of |C − FK(q_ref)| (positions and rotation entries)."""
    return np.abs(C - mb.forward_kinematics(model, q_ref)[1:]).max()


def test_step_converges_at_first_order_to_the_reduced_rk4():
    """Post-stabilized steps of h = 4, 2, 1 ms for 0.4 s: the largest pose
    error over the run against the reduced RK4 (dt = 1e-4) halves with h."""
    model = gear_chain()
    q, v = start(model)
    duration = 0.4
    ref = reference(model, q, v, duration)
    errors = []
    for h in (4e-3, 2e-3, 1e-3):
        system = MaximalSystem(model, loops=True)
        C, V = system.state(q, v)
        stride = int(round(h / 1e-4))
        err = 0.0
        for n in range(1, int(round(duration / h)) + 1):
            C, V = system.step(C, V, np.zeros(model.nv), h)
            assert abs(ref.t[n * stride] - n * h) < 1e-9
            err = max(err, pose_error(model, C, ref.q[n * stride]))
        errors.append(err)
    ratios = [errors[0] / errors[1], errors[1] / errors[2]]
    assert all(1.6 < r < 2.5 for r in ratios), (errors, ratios)


def simulator_errors(model, project):
    """The maximal Simulator (the model's couplings, constraints=True) at dt
    = 1 and 0.5 ms for 0.4 s: the couplings hold after every step to 1e-9
    (on the simulator's q); returns the largest |q − q_ref| over each run
    against the reduced RK4."""
    q, v = start(model)
    duration = 0.4
    ref = reference(model, q, v, duration)
    errors = []
    for dt in (1e-3, 5e-4):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", mb.SimulationWarning)
            tr = mb.Simulator(model, dt, formulation="maximal", q0=q, v0=v, project=project).rollout(duration)
        assert np.abs(coupling_errors(tr.q)).max() < 1e-9
        stride = int(round(dt / 1e-4))
        assert np.allclose(tr.t, ref.t[::stride][:len(tr.t)], atol=1e-9)
        errors.append(np.abs(tr.q - ref.q[::stride][:len(tr.q)]).max())
    return errors


def test_simulator_maximal_formulation_takes_the_couplings():
    """``mb.Simulator(model, dt, formulation="maximal", project=False)`` on
    the gear chain: the couplings hold after every step (the step's own
    post-stabilization) and the trajectory converges at first order to the
    reduced RK4 (its error at 1 ms twice that at 0.5 ms)."""
    errors = simulator_errors(gear_chain(), project=False)
    assert errors[0] < 0.01 and 1.6 < errors[0] / errors[1] < 2.5, errors


def test_simulator_maximal_formulation_with_the_default_projection():
    """The same with the simulator's default projection onto the
    constraints (project=True): the maximal step projects its velocities
    onto the rows, so reading (q, v) off the bodies and rebuilding the
    bodies from a projected (q, v) loses nothing."""
    errors = simulator_errors(gear_chain(), project=True)
    assert errors[0] < 0.01 and 1.6 < errors[0] / errors[1] < 2.5, errors


# ---------------------------------------------------------------- refusals
def test_a_coupling_of_a_multi_dof_joint_is_refused_by_name():
    b = mb.ModelBuilder()
    b.add_body("a", joint="revolute", joint_name="j1", mass=1.0, inertia=np.eye(3))
    b.add_body("b", parent="a", joint="spherical", joint_name="ball", mass=1.0, inertia=np.eye(3))
    b.add_coupling("ball", "j1")
    model = b.build()
    MaximalSystem(model)  # the tree alone
    with pytest.raises(ModelError, match="joint 'ball' is spherical with 3 DoF"):
        MaximalSystem(model, loops=True)


def test_the_tree_solver_is_refused_with_coupling_rows():
    model = gear_chain()
    system = MaximalSystem(model, loops=True)
    q, v = start(model)
    C, V = system.state(q, v)
    with pytest.raises(InputError, match="coupling rows"):
        system.step(C, V, np.zeros(model.nv), 1e-3, solver="tree")
    # "auto" falls back to SuperLU / dense least squares and equals "sparse"
    a = system.step(C, V, np.zeros(model.nv), 1e-3)
    b = system.step(C, V, np.zeros(model.nv), 1e-3, solver="sparse")
    assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])
