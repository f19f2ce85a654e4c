"""Maximal coordinates (formulations/maximal.py, Sueda §1.6–1.10): the
bodies' twist derivatives from the index-1 KKT system of free bodies and
joint rows equal the body accelerations of the reduced articulated-body
algorithm (held to Pinocchio in tests/dynamics) on random trees with
every joint type the formulation takes and on example-robot-data's robots."""
import warnings

import numpy as np
import pytest

import multibody as mb
from multibody.errors import InputError
from multibody.formulations.maximal import MaximalSystem
from oracles import ALL_JOINTS, ROBOTS, random_tree, robot_path



def _agree(model, seed, scale=1.0, frames="body"):
    """max |V̇_maximal − V̇_reduced| relative to the largest acceleration, at a
    random state and random joint forces."""
    system = MaximalSystem(model, frames=frames)
    rng = np.random.default_rng(seed)
    q = model.integrate(model.neutral(), rng.normal(size=model.nv) * scale)
    v, tau = rng.normal(size=model.nv), rng.normal(size=model.nv)
    C, V = system.state(q, v)
    Vd, _ = system.acceleration(C, V, tau)
    ref = system.body_accelerations(q, v, mb.aba(model, q, v, tau))
    return np.abs(Vd - ref).max() / max(1.0, np.abs(ref).max())


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("floating", [True, False])
@pytest.mark.parametrize("frames", ["body", "com"])
def test_random_trees_with_every_joint_type(seed, floating, frames):
    """Every joint type, the universal joint included (its rows from the
    angle recovered from the relative pose, the η term from its turning
    subspace)."""
    model = random_tree(seed, n=2 * len(ALL_JOINTS), floating=floating, joints=ALL_JOINTS, fixed=2).build()
    assert _agree(model, seed, frames=frames) < 1e-10


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("floating", [True, False])
@pytest.mark.parametrize("frames", ["body", "com"])
def test_coordinates_invert_state(seed, floating, frames):
    """coordinates(*state(q, v)) == (q, v) for every joint type (angles
    within (−π, π], quaternions with w ≥ 0 after the model's own
    normalization); with ``near`` the branch of angles beyond π is kept."""
    model = random_tree(seed, n=2 * len(ALL_JOINTS), floating=floating, joints=ALL_JOINTS, fixed=2).build()
    system = MaximalSystem(model, frames=frames)
    rng = np.random.default_rng(seed)
    q = model.integrate(model.neutral(), 0.8 * rng.normal(size=model.nv))
    v = rng.normal(size=model.nv)
    for j in model.joints[1:]:  # the quaternion sign the extraction picks (q and −q are one rotation)
        if j.type in ("spherical", "free"):
            sl = slice(j.q_slice.start + (3 if j.type == "free" else 0), j.q_slice.stop)
            q[sl] *= np.sign(q[sl][0])
    q2, v2 = system.coordinates(*system.state(q, v))
    assert np.abs(q2 - q).max() < 1e-12 and np.abs(v2 - v).max() < 1e-12
    far = model.integrate(model.neutral(), 3.0 * rng.normal(size=model.nv))  # angles beyond ±π
    q3, _ = system.coordinates(*system.state(far, v), near=far)
    assert np.abs(q3 - far).max() < 1e-11
    assert np.abs(system.position_errors(system.state(q, v)[0])).max() < 1e-12


@pytest.mark.parametrize("robot", sorted(ROBOTS))
def test_example_robot_data(robot):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mb.ModelWarning)
        model = mb.load_urdf(robot_path(robot), floating_base=ROBOTS[robot][1])
    assert _agree(model, 3, scale=0.3) < 1e-10


def test_rows_per_joint():
    """A hinge keeps 5 rows, a ball joint 3, a free joint none, prismatic
    5, planar 3 (Sueda eq. 1.69–1.70; a weld's body is merged into its
    parent by the builder); N spans the wrenches that do no work on S."""
    b = mb.ModelBuilder()
    b.add_body("a", joint="free", mass=1.0, inertia=np.eye(3))
    for name, jt in (("h", "revolute"), ("s", "spherical"), ("p", "prismatic"), ("l", "planar")):
        b.add_body(name, parent="a", joint=jt, mass=1.0, inertia=np.eye(3))
    system = MaximalSystem(b.build())
    assert np.diff(system.row_offsets).tolist() == [0, 5, 3, 5, 3]
    for S, N in zip(system.S[1:], system.N[1:]):  # (the free joint has no rows)
        assert np.abs(N.T @ S).max() < 1e-15 and np.allclose(N.T @ N, np.eye(N.shape[1]))


def test_refused_joints_are_named():
    b = mb.ModelBuilder()
    b.add_body("a", joint="revolute", joint_name="motor", mass=1.0, inertia=np.eye(3), armature=0.1)
    with pytest.raises(InputError, match="'motor' has rotor inertia"):
        MaximalSystem(b.build())


@pytest.mark.parametrize("robot", ["four_bar", "delta"])
@pytest.mark.parametrize("frames", ["body", "com"])
def test_closed_loops_agree_with_the_reduced_closed_loop_dynamics(robot, frames):
    """Loop joints (here MJCF connect equalities) as rows of the maximal
    system: at a state on the constraints (the reduced state projected onto
    them) the rows hold (G V = 0) and the accelerations equal the body
    accelerations of the reduced closed-loop forward dynamics (Featherstone
    §8.5, no Baumgarte terms) to 1e-9."""
    from multibody.constraints import Constraints
    from multibody.constraints.projection import project
    from multibody.formulations import ReducedSystem
    model = mb.load_mjcf(f"src/multibody/data/robots/{robot}.xml")
    constraints = Constraints(model)
    rng = np.random.default_rng(5)
    q0 = model.integrate(model.neutral(), 0.05 * rng.normal(size=model.nv))
    q, v, _ = project(model, constraints, q0, rng.normal(size=model.nv))
    tau = rng.normal(size=model.nv)
    system = MaximalSystem(model, frames=frames, loops=True)
    assert system.rows == 6 * system.n - model.nv + constraints.size
    C, V = system.state(q, v)
    G, _ = system.constraints(*system._body_frames(C, V))
    assert np.abs(G @ system._body_frames(C, V)[1].ravel()).max() < 1e-10
    Vd, _ = system.acceleration(C, V, tau)
    reduced = ReducedSystem(model, gravity=True, joint_damping=False, constraints=constraints, baumgarte=0.0)
    ref = system.body_accelerations(q, v, reduced.acceleration(0.0, q, v, tau))
    assert np.abs(Vd - ref).max() < 1e-9 * max(1.0, np.abs(ref).max())
    assert system.joint_errors(C)[system.n:].max() < 1e-10  # the loops closed


def test_couplings_are_rows_with_loops():
    """A coupling is one more row with loops=True (none without);
    tests/formulations/test_maximal_couplings.py holds them to the reduced
    closed-loop dynamics."""
    b = mb.ModelBuilder()
    b.add_body("a", joint="revolute", joint_name="j1", mass=1.0, inertia=np.eye(3))
    b.add_body("b", parent="a", joint="revolute", joint_name="j2", mass=1.0, inertia=np.eye(3))
    b.add_coupling("j2", "j1")
    model = b.build()
    assert MaximalSystem(model).rows == 10  # the tree alone
    assert MaximalSystem(model, loops=True).rows == 11
