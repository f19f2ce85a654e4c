"""The simulator's formulations (``formulation="reduced" | "redmax" |
"maximal"``, docs/formulations.md): the same model simulated in joint
coordinates by Featherstone's algorithms, by REDMAX (M_r = JᵀM_mJ, Sueda
§2) and in maximal coordinates (Sueda §1) — trajectories that agree where
the integrators are the same ODE solver on the same equations, converge to
each other at the integrators' order elsewhere, and refusals naming what a
formulation does not take. The long runs (convergence studies, loops,
every-joint trees) are ``slow``: the compiled pass runs them, the
interpreted one does not."""
import warnings

import numpy as np
import pytest

import multibody as mb
from multibody.errors import InputError
from multibody.forces import FrameSpring, PointToPointSpring
from multibody.model import Coupling
from oracles import ALL_JOINTS, SUEDA_JOINTS, random_tree


def chain(n=4, joint="revolute"):
    b = mb.ModelBuilder()
    parent = "world"
    I = np.diag([0.02, 0.02, 0.005])
    for k in range(n):
        axis = (0, 1, 0) if k % 2 == 0 else (1, 0, 0)
        b.add_body(f"l{k}", parent=parent, joint=joint, axis=axis, placement=(np.eye(3), [0, 0, -0.4 if k else 0]),
                   mass=1.0, com=(0.05, 0, -0.2), inertia=I)
        parent = f"l{k}"
    return b.build()


def every_joint_tree(seed):
    """A floating random tree with every joint of the catalog, Sueda's
    library included, and a state in its joints' ranges."""
    joints = ALL_JOINTS + SUEDA_JOINTS
    model = random_tree(seed, n=len(joints), joints=joints, floating=True).build()
    q0 = model.random_configuration(seed=seed, unbounded_range=0.3)
    return model, q0, np.random.default_rng(seed).normal(size=model.nv) * 0.3


def run(model, dt, duration, q0, v0=None, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mb.SimulationWarning)
        return mb.Simulator(model, dt, q0=q0, v0=v0, **kw).rollout(duration)


def test_redmax_rk4_is_the_reduced_rk4_trajectory():
    """RK4 at 1 ms for 1 s on a chain of revolute joints: REDMAX's M_r⁻¹f_r
    and ABA are the same accelerations, so the trajectories agree to 1e-8
    (round-off only); REDMAX's implicit_euler is Sueda's linearly implicit
    Euler and equals the reduced implicit_euler with the model's joint
    springs and dampers (the same K, D and the same M = JᵀM_mJ = H)."""
    model = chain()
    q0 = np.array([1.0, 0.5, -0.3, 0.2])
    ref = run(model, 1e-3, 1.0, q0, integrator="rk4")
    red = run(model, 1e-3, 1.0, q0, integrator="rk4", formulation="redmax")
    assert np.abs(red.q - ref.q).max() < 1e-8 and np.abs(red.v - ref.v).max() < 1e-8
    b = mb.ModelBuilder()
    b.add_body("a", joint="revolute", axis=(0, 1, 0), mass=1.0, com=(0, 0, -0.5), inertia=np.eye(3) * 0.01,
               stiffness=40.0, damping=0.8, spring_reference=0.3)
    b.add_body("b", parent="a", joint="revolute", axis=(1, 0, 0), placement=(np.eye(3), [0, 0, -1.0]), mass=0.5,
               com=(0, 0, -0.5), inertia=np.eye(3) * 0.01, stiffness=10.0, damping=0.2)
    sprung = b.build()
    q0 = np.array([1.0, -0.5])
    ref = run(sprung, 1e-2, 1.0, q0, integrator="implicit_euler", gravity=False)
    red = run(sprung, 1e-2, 1.0, q0, integrator="implicit_euler", gravity=False, formulation="redmax")
    assert np.abs(red.q - ref.q).max() < 1e-10


@pytest.mark.slow
def test_maximal_rkmk4_agrees_with_the_reduced_rk4_on_a_revolute_chain():
    """Munthe-Kaas RK4 on the bodies (SE(3)) and RK4 on the joints are
    different 4th-order discretizations of the same motion: at 1 ms over
    1 s they agree to 1e-8, and their difference falls ~16x per halving."""
    model = chain()
    q0 = np.array([1.0, 0.5, -0.3, 0.2])
    diffs = []
    for dt in (4e-3, 2e-3, 1e-3):
        a = run(model, dt, 1.0, q0, integrator="rk4")
        b = run(model, dt, 1.0, q0, integrator="rkmk4", formulation="maximal")
        diffs.append(np.abs(a.q[-1] - b.q[-1]).max())
    assert diffs[-1] < 1e-8
    assert 10 < diffs[0] / diffs[1] < 24 and 10 < diffs[1] / diffs[2] < 24, diffs


@pytest.mark.slow
@pytest.mark.parametrize("formulation", ["redmax", "maximal"])
def test_first_order_steps_converge_to_each_other(formulation):
    """Sueda's velocity-level maximal step and REDMAX's semi-implicit Euler
    against the reduced RK4 at 1e-4 s: first order (error ~halves per
    halving of dt), on a floating tree with every joint of Featherstone's
    catalog and Sueda's library."""
    model, q0, v0 = every_joint_tree(2)
    ref = run(model, 1e-4, 0.1, q0, v0, integrator="rk4", limits=False)
    errs = []
    for dt in (2e-3, 1e-3, 5e-4):
        tr = run(model, dt, 0.1, q0, v0, formulation=formulation, limits=False)
        errs.append(np.abs(model.difference(ref.q[-1], tr.q[-1])).max())
    assert 1.6 < errs[0] / errs[1] < 2.5 and 1.6 < errs[1] / errs[2] < 2.5, errs


@pytest.mark.slow
def test_redmax_rk4_with_every_joint_type_is_the_reduced_trajectory():
    """The same ODE (REDMAX's accelerations equal ABA's) through RK4: a
    floating tree with every joint, Sueda's included, agrees to 1e-9."""
    model, q0, v0 = every_joint_tree(5)
    a = run(model, 1e-3, 0.2, q0, v0, integrator="rk4", limits=False)
    b = run(model, 1e-3, 0.2, q0, v0, integrator="rk4", limits=False, formulation="redmax")
    assert np.abs(a.q - b.q).max() < 1e-9


@pytest.mark.slow
@pytest.mark.parametrize("formulation", ["redmax", "maximal"])
def test_loops_in_every_formulation(formulation):
    """A four-bar (the model's loop joint): the loop stays closed after
    every step (projection, or the maximal post-stabilization) and the
    motion converges to the reduced closed-loop RK4 at first order."""
    from constraints.mechanisms import four_bar
    model, q0 = four_bar()
    ref = run(model, 1e-4, 0.3, q0, integrator="rk4")
    errs = []
    for dt in (2e-3, 1e-3):
        tr = run(model, dt, 0.3, q0, formulation=formulation)
        # the largest error over the run (one endpoint can sit near a sign change of the error)
        errs.append(np.abs(ref.q[::round(dt / 1e-4)] - tr.q).max())
        phi = [mb.constraints.Constraints(model).evaluate(q)[0] for q in tr.q[::10]]
        assert np.abs(phi).max() < 1e-8
    assert 1.6 < errs[0] / errs[1] < 2.5, errs


def test_options_and_pickle_keep_the_formulation():
    import pickle
    sim = mb.Simulator(chain(2), 1e-3, formulation="maximal", q0=np.array([0.3, 0.1]))
    sim.step()
    assert sim.options.formulation == "maximal" and sim.fused is None
    again = pickle.loads(pickle.dumps(sim))
    assert again.options.formulation == "maximal"
    np.testing.assert_array_equal(again.step().q, sim.step().q)


def test_bad_input_names_what_a_formulation_does_not_take():
    model = chain(2)
    with pytest.raises(InputError, match="formulation must be one of"):
        mb.Simulator(model, 1e-3, formulation="lagrangian")
    with pytest.raises(InputError, match="maximal formulation steps with semi_implicit_euler or rkmk4"):
        mb.Simulator(model, 1e-3, formulation="maximal", integrator="rk4")
    with pytest.raises(InputError, match="REDMAX formulation does not offer symplectic_euler"):
        mb.Simulator(model, 1e-3, formulation="redmax", integrator="symplectic_euler")
    system = mb.Simulator(model, 1e-3, formulation="redmax").system  # the momentum form's pieces: the same error
    q, v = model.neutral(), np.zeros(model.nv)
    with pytest.raises(InputError, match="does not offer the momentum form"):
        system.kinetic_gradient(q, v)
    with pytest.raises(InputError, match="does not offer the momentum form"):
        system.applied_forces(0.0, q, v, np.zeros(model.nv))
    spring = PointToPointSpring("l1", (0, 0, 0), "world", (0, 0, 0.5), stiffness=5.0)
    with pytest.raises(InputError, match="rkmk4 takes no force elements"):
        mb.Simulator(model, 1e-3, formulation="maximal", integrator="rkmk4", forces=[spring])
    frame_spring = FrameSpring("l1", "world", translational_stiffness=1.0)
    with pytest.raises(InputError, match="maximal formulation takes Gravity, PointForce"):
        mb.Simulator(model, 1e-3, formulation="maximal", forces=[frame_spring])
    with pytest.raises(InputError, match="extra constraints are not taken"):
        mb.Simulator(model, 1e-3, formulation="maximal", constraints=[Coupling("l1", "l0", 1.0, 0.0)])
    # a point-to-point spring is taken by the maximal step (linearly implicit) and agrees with the reduced
    tr = run(model, 1e-3, 0.2, np.array([0.3, 0.1]), formulation="maximal", forces=[spring])
    ref = run(model, 1e-3, 0.2, np.array([0.3, 0.1]), forces=[spring])
    assert np.abs(tr.q[-1] - ref.q[-1]).max() < 5e-3


def test_contact_in_every_formulation():
    """A ball dropped on the ground (rigid contact, PGS): the contact
    impulses act on (q, v) at the end of every formulation's step: the
    ball lands and rolls on the ground (its centre at its radius within
    the contact solver's tolerance) in all three, on the reduced
    trajectory to round-off (REDMAX's semi-implicit Euler is the same step
    with M_r = H; the maximal body's SE(3) step is the free joint's)."""
    b = mb.ModelBuilder()
    b.add_body("ball", joint="free", mass=1.0, inertia=np.eye(3) * 0.004)
    b.add_geometry("ball", "sphere", (0.1,))
    model = b.build()
    q0 = model.neutral()
    q0[2] = 0.3
    v0 = np.array([0.0, 0.0, 2.0, 0.5, 0.0, 0.0])  # spinning, sliding
    ref = run(model, 1e-3, 1.0, q0, v0, ground=True)
    for formulation in ("redmax", "maximal"):
        tr = run(model, 1e-3, 1.0, q0, v0, ground=True, formulation=formulation)
        assert abs(tr.q[-1, 2] - 0.1) < 1e-5
        assert np.abs(tr.q - ref.q).max() < 1e-9 and np.abs(tr.v - ref.v).max() < 1e-9, formulation
