"""Particles inside the Simulator (Simulator(particles=ParticleSystem)):
the simulator's trajectory is the particle system's own rollout, bitwise;
checkpoints, pickles, resets and trajectory files carry the free
particles; energies and the particles' damping power against hand-written
formulas; actuators act as the joint forces they apply; what the coupled
step cannot do is refused by name."""
import dataclasses
import pickle

import numpy as np
import pytest

import multibody as mb
from multibody.errors import InputError, SimulationError
from multibody.forces import JointSpring
from multibody.forces.actuators import Actuator
from multibody.formulations import ParticleSystem
from multibody.integrators import ParticleStepper


def bar_model(limits=False, damping=0.01, floor=False, coupled=False):
    b = mb.ModelBuilder("bar")
    kw = dict(lower=-1.0, upper=1.0) if limits else {}
    b.add_body("bar", "world", "revolute", axis=(1, 0, 0), mass=0.5, com=(0.15, 0, -0.05),
               inertia=np.diag([1e-3, 4e-3, 4e-3]), damping=damping, **kw)
    if coupled:  # a second bar turning with the first
        b.add_body("twin", "world", "revolute", axis=(1, 0, 0), mass=0.2, com=(-0.1, 0, -0.05),
                   inertia=np.diag([1e-3, 2e-3, 2e-3]))
        b.add_coupling("twin", "bar", 1.0)
    if floor:
        b.add_geometry("bar", "sphere", (0.05,), name="ball")
        b.add_geometry("world", "plane", placement=(np.eye(3), (0, 0, -1.0)), name="floor")
    return b.build()


class Circle:
    """A prescribed particle's path (a class, so that the system pickles)."""

    def __call__(self, t):
        return np.array([0.15 + 0.05 * np.sin(4 * t), 0.45, -0.05 + 0.02 * np.cos(3 * t)])


def system(model=None, n=3, **kw):
    """A small cloth on a swinging bar (top row attached), a particle attached
    by weights to two cloth particles, a prescribed particle driving the cloth
    through a spring, and a fixed one."""
    model = bar_model() if model is None else model
    ps = ParticleSystem(model, particle_damping=0.5, v=np.full(model.nv, 2.0), **kw)
    idx = ps.add_grid(n, n, (0, 0, -0.05), (0.3 / (n - 1), 0, 0), (0, 0.3 / (n - 1), 0), mass=0.1, stiffness=150,
                      damping=0.3, bend_stiffness=20)
    for i in range(n):
        ps.attach(int(idx[i, 0]), "bar")
    extra = ps.add_particle(0.01, (0.1, 0.2, -0.1))
    ps.attach(extra, [(int(idx[1, 1]), 0.5), (int(idx[2, 2]), 0.5)])
    drv = ps.add_particle(0.02, (0.15, 0.45, -0.05))
    ps.prescribe(drv, Circle())
    fixed = ps.add_particle(0.02, (0.4, 0.3, -0.05))
    ps.fix(fixed)
    ps.add_spring(drv, int(idx[1, 2]), 60.0, 0.2)
    ps.add_spring(extra, int(idx[0, 2]), 40.0, 0.1)
    ps.add_spring(fixed, int(idx[2, 2]), 30.0, 0.1)
    return ps


def assert_same(traj, ref):
    for a, b in ((traj.t, ref.t), (traj.q, ref.q), (traj.v, ref.v), (traj.particle_position, ref.x),
                 (traj.particle_velocity, ref.xd)):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("integrator,method,h", [("implicit_euler", "implicit", 5e-3),
                                                 ("semi_implicit_euler", "semi_implicit", 1e-3)])
def test_the_simulators_trajectory_is_the_particle_systems_rollout(integrator, method, h):
    ps = system()
    sim = mb.Simulator(ps.model, h, integrator, particles=ps)
    assert sim.particles is not ps and sim.particles.n == ps.n
    traj = sim.rollout(0.3)
    ref = ps.rollout(0.3, h, method)  # the system given was not changed: it starts where the simulator did
    assert_same(traj, ref)
    assert abs(traj.q[-1, 0] - traj.q[0, 0]) > 0.05                         # it swung
    assert traj.particle_position.shape == (len(traj.t), ps.n, 3)
    # sim.particles is at the simulator's state
    np.testing.assert_array_equal(sim.particles.positions(), ref.x[-1])
    np.testing.assert_array_equal(sim.particles.q, ref.q[-1])


def test_joint_forces_and_stepper_options_are_the_particle_systems():
    """A τ table and the KKT form of the step (a ParticleStepper's options)."""
    ps = system()
    h, steps = 5e-3, 40
    tau = 0.05 * np.sin(np.arange(steps) * 0.3)[:, None]
    sim = mb.Simulator(ps.model, h, ParticleStepper("implicit_euler", attachments="kkt", stiffness="exact"),
                       particles=ps)
    traj = sim.rollout(steps=steps, tau=tau)
    for k in range(steps):
        ps.step(h, attachments="kkt", stiffness="exact", tau=tau[k])
        np.testing.assert_array_equal(traj.q[k + 1], ps.q)
        np.testing.assert_array_equal(traj.particle_position[k + 1], ps.positions())
    np.testing.assert_array_equal(traj.tau[1:], tau)


def test_actuators_act_through_the_joint_forces_they_apply():
    """A motor with gear 2 on the bar's joint: the step is the particle
    system's with τ = 2 u (held over the step)."""
    ps = system()
    h, steps = 5e-3, 30
    sim = mb.Simulator(ps.model, h, "implicit_euler", particles=ps, actuators=[Actuator("bar", gear=2.0,
                                                                                         name="motor")])
    U = np.linspace(-0.2, 0.3, steps)[:, None]
    traj = sim.rollout(steps=steps, control=U)
    for k in range(steps):
        ps.step(h, tau=2.0 * U[k])
        assert np.abs(traj.q[k + 1] - ps.q).max() <= 1e-12
        assert np.abs(traj.particle_position[k + 1] - ps.positions()).max() <= 1e-12
    np.testing.assert_array_equal(traj.actuator_force[1:], U)
    # the actuator's length is the joint angle times the gear (MuJoCo's actuator_length)
    np.testing.assert_allclose(traj.actuator_length[:, 0], 2.0 * traj.q[:, 0], rtol=0, atol=1e-15)


def test_the_simulators_forces_join_the_particle_systems():
    """forces= of the simulator are stepped with the particle system's own:
    a JointSpring given to either gives the same trajectory."""
    spring = JointSpring("bar", 0.8)
    a = system(forces=[spring])
    b = system()
    h = 5e-3
    ta = mb.Simulator(a.model, h, "implicit_euler", particles=a).rollout(steps=40)
    tb = mb.Simulator(b.model, h, "implicit_euler", particles=b, forces=[spring]).rollout(steps=40)
    np.testing.assert_array_equal(ta.q, tb.q)
    np.testing.assert_array_equal(ta.particle_position, tb.particle_position)
    np.testing.assert_allclose(ta.energy, tb.energy, rtol=0, atol=1e-15)


def test_checkpoint_restore_reset_and_pickle_continue_bitwise():
    ps = system()
    h = 5e-3
    sim = mb.Simulator(ps.model, h, "implicit_euler", particles=ps)
    first = sim.rollout(steps=20)
    cp = sim.checkpoint()
    pickled = pickle.dumps(sim)
    a = sim.rollout(steps=30)
    sim.restore(pickle.loads(pickle.dumps(cp)))                         # a checkpoint pickles too
    b = sim.rollout(steps=30)
    c = pickle.loads(pickled).rollout(steps=30)
    for other in (b, c):
        np.testing.assert_array_equal(a.q, other.q)
        np.testing.assert_array_equal(a.particle_position, other.particle_position)
        np.testing.assert_array_equal(a.particle_velocity, other.particle_velocity)
    assert not np.array_equal(a.particle_position[-1], first.particle_position[0])  # they moved
    sim.reset()                                                          # back to the start, particles too
    again = sim.rollout(steps=20)
    np.testing.assert_array_equal(again.q, first.q)
    np.testing.assert_array_equal(again.particle_position, first.particle_position)
    with pytest.raises(InputError, match="free particles' positions"):
        sim.restore(dataclasses.replace(cp, integrator_state=(np.zeros((2, 3)), np.zeros((2, 3)))))


def test_trajectory_files_carry_the_particles(tmp_path):
    ps = system()
    traj = mb.Simulator(ps.model, 5e-3, "implicit_euler", particles=ps).rollout(steps=10, record_every=2)
    traj.save(tmp_path / "cloth.npz")
    back = mb.Trajectory.load(tmp_path / "cloth.npz", model=ps.model)
    for name in ("t", "q", "v", "particle_position", "particle_velocity", "kinetic", "potential", "power"):
        np.testing.assert_array_equal(getattr(back, name), getattr(traj, name), err_msg=name)
    assert back.power_labels == traj.power_labels and back.particle_position.shape == (6, ps.n, 3)
    # a trajectory without particles has none, in memory and in its file
    plain = mb.Simulator(ps.model, 5e-3, contact_solver=None).rollout(steps=3)
    assert plain.particle_position.shape == (4, 0, 3)
    plain.save(tmp_path / "plain.npz")
    assert mb.Trajectory.load(tmp_path / "plain.npz").particle_velocity.shape == (4, 0, 3)


def test_energies_and_particle_damping_power_against_hand_written_formulas():
    """Two free particles hanging from a fixed one by springs: the
    trajectory's energy is ½Σm|ẋ|² − Σ m gᵀx + Σ ½k(l − r)² (no bodies move:
    an empty model) and the power "particle damping" is −αΣm|ẋ|² − Σ d l̇²."""
    model = mb.ModelBuilder("empty").build()
    alpha = 0.7
    ps = ParticleSystem(model, particle_damping=alpha)
    top = ps.add_particle(0.3, (0, 0, 0))
    a = ps.add_particle(0.2, (0.1, 0, -0.1), velocity=(0.3, -0.2, 0.1))
    b = ps.add_particle(0.1, (0.2, 0.05, -0.25))
    ps.fix(top)
    ps.add_spring(top, a, 40.0, 0.3, rest_length=0.12)
    ps.add_spring(a, b, 25.0, 0.2, rest_length=0.1)
    traj = mb.Simulator(model, 2e-3, "implicit_euler", particles=ps).rollout(steps=50)
    m = np.array([0.3, 0.2, 0.1])
    g = np.array([0, 0, -9.81])
    X, XD = traj.particle_position, traj.particle_velocity
    springs = ((0, 1, 40.0, 0.3, 0.12), (1, 2, 25.0, 0.2, 0.1))
    for k in (0, 17, 50):
        kin = 0.5 * sum(m[i] * XD[k, i] @ XD[k, i] for i in range(3))
        pot = -sum(m[i] * g @ X[k, i] for i in range(3))
        damp = -alpha * sum(m[i] * XD[k, i] @ XD[k, i] for i in range(3))
        for i, j, kk, d, r in springs:
            dx = X[k, j] - X[k, i]
            l = np.linalg.norm(dx)
            pot += 0.5 * kk * (l - r) ** 2
            damp -= d * (dx @ (XD[k, j] - XD[k, i]) / l) ** 2
        assert abs(traj.kinetic[k] - kin) < 1e-14 and abs(traj.potential[k] - pot) < 1e-14
        assert abs(traj.power[k, traj.power_labels.index("particle damping")] - damp) < 1e-13
    assert traj.power[1, 1] < 0 and np.all(np.diff(traj.energy) < 1e-12)  # damped: the energy never rises


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # it diverges on purpose
def test_a_failing_step_names_itself_and_keeps_the_state():
    """Semi-implicit Euler with a step far beyond the springs' stability limit
    diverges: SimulationError naming the step and the time; the state (the
    particles too) is the one at the start of that step."""
    ps = system()
    sim = mb.Simulator(ps.model, 0.08, "semi_implicit_euler", particles=ps)
    with pytest.raises(SimulationError, match=r"step \d+ \(t = "):
        for _ in range(500):
            before = sim.checkpoint()
            sim.step()
    after = sim.checkpoint()
    np.testing.assert_array_equal(after.q, before.q)
    for x, y in zip(after.integrator_state, before.integrator_state):
        np.testing.assert_array_equal(x, y)
    assert np.all(np.isfinite(sim.particles.positions()))


def test_what_the_coupled_step_cannot_do_is_refused():
    ps = system()
    model = ps.model
    with pytest.raises(InputError, match="implicit_euler' or 'semi_implicit_euler"):
        mb.Simulator(model, 1e-3, "rk4", particles=ps)
    with pytest.raises(InputError, match="formulation='reduced'"):
        mb.Simulator(model, 1e-3, "semi_implicit_euler", particles=ps, formulation="maximal")
    with pytest.raises(InputError, match="ground=False"):
        mb.Simulator(model, 1e-3, "implicit_euler", particles=ps, ground=True)
    with pytest.raises(InputError, match="gravity=False but the particle system"):
        mb.Simulator(model, 1e-3, "implicit_euler", particles=ps, gravity=False)
    with pytest.raises(InputError, match="joint_damping=False but the particle system"):
        mb.Simulator(model, 1e-3, "implicit_euler", particles=ps, joint_damping=False)
    with pytest.raises(InputError, match="must be a multibody.formulations.ParticleSystem"):
        mb.Simulator(model, 1e-3, "implicit_euler", particles=[1, 2])
    other = bar_model(damping=0.2)
    with pytest.raises(InputError, match="not on the simulator's model"):
        mb.Simulator(other, 1e-3, "implicit_euler", particles=ps)
    limited = system(bar_model(limits=True))
    with pytest.raises(InputError, match="limits=False"):
        mb.Simulator(limited.model, 1e-3, "implicit_euler", particles=limited)
    mb.Simulator(limited.model, 1e-3, "implicit_euler", particles=limited, limits=False)  # accepted
    coupled = system(bar_model(coupled=True))
    with pytest.raises(InputError, match="no loop constraints or couplings"):
        mb.Simulator(coupled.model, 1e-3, "implicit_euler", particles=coupled)
    touching = system(bar_model(floor=True))
    with pytest.raises(InputError, match="contact_solver=None"):
        mb.Simulator(touching.model, 1e-3, "implicit_euler", particles=touching)
    mb.Simulator(touching.model, 1e-3, "implicit_euler", particles=touching, contact_solver=None)
    with pytest.raises(InputError, match="attachments must be"):
        ParticleStepper("implicit_euler", attachments="none")
    sim = mb.Simulator(model, 1e-3, "implicit_euler", particles=ps)
    with pytest.raises(InputError, match="fused compiled step"):
        sim.rollout_batch(q0=np.zeros((2, 1)), steps=2)


def test_inconsistent_particle_records_are_refused(tmp_path):
    N = 3
    base = dict(t=np.arange(N) * 0.1, q=np.zeros((N, 1)), v=np.zeros((N, 1)), tau=np.zeros((N, 1)),
                kinetic=np.zeros(N), potential=np.zeros(N))
    with pytest.raises(InputError, match=r"particle_velocity has dtype float64 and shape \(3, 3, 3\), expected"):
        mb.Trajectory(**base, particle_position=np.zeros((N, 2, 3)), particle_velocity=np.zeros((N, 3, 3)))
    with pytest.raises(InputError, match=r"particle_position has dtype float64 and shape \(3, 2\)"):
        mb.Trajectory(**base, particle_position=np.zeros((N, 2)))
    good = mb.Trajectory(**base, particle_position=np.ones((N, 2, 3)), particle_velocity=np.zeros((N, 2, 3)))
    good.save(tmp_path / "p.npz")
    with np.load(tmp_path / "p.npz") as z:
        members = {k: z[k] for k in z.files if k != "particle_velocity"}
    np.savez(tmp_path / "half.npz", **members)
    with pytest.raises(InputError, match="half.npz' is inconsistent: it has only one of particle_position"):
        mb.Trajectory.load(tmp_path / "half.npz")
    np.testing.assert_array_equal(mb.Trajectory.load(tmp_path / "p.npz").particle_position, good.particle_position)
