"""Actuators on spatial paths in the fused compiled step (issue 15).

The fused step evaluates the actuators on a :class:`~multibody.forces.Path`
(via points on several bodies, every gain, bias and dynamics type, muscles
with MuJoCo's and Sueda's curves, gears) in its own compiled stage
(integrators/_kernels.path_stage): here against the integrators' Python
step (``sim.fused = None``, the ActuatorSet as a force element) for every
integrator, by ``step`` and by ``rollout``, and the implicit steps' K and D
(through the paths' geometric term) against central differences of the
actuator forces. Models without path actuators do not get the stage.
"""
import numpy as np
import pytest

import multibody as mb
from multibody._compiled import JIT
from multibody.forces import Path
from multibody.forces.actuators import Actuator, ActuatorSet, Motor, Muscle, PositionServo
from multibody.integrators import _kernels as K

XML = """<mujoco model="paths">
<worldbody>
  <body name="upper">
    <joint name="shoulder" axis="0 1 0" damping="0.3"/>
    <geom type="capsule" fromto="0 0 0 0 0 -0.5" size="0.04" mass="1.2"/>
    <body name="lower" pos="0 0 -0.5">
      <joint name="elbow" axis="0 1 0" damping="0.1"/>
      <geom type="capsule" fromto="0 0 0 0 0 -0.4" size="0.035" mass="0.8"/>
    </body>
  </body>
  <body name="cart" pos="0 0.5 0">
    <joint name="rail" type="slide" axis="1 0 0" damping="0.2"/>
    <geom type="box" size="0.1 0.05 0.05" mass="2"/>
  </body>
</worldbody>
</mujoco>"""

INTEGRATORS = ("semi_implicit_euler", "explicit_euler", "symplectic_euler", "implicit_euler", "trapezoidal",
               "bridson_marino", "rk4")
Q0, V0 = np.array([0.3, -0.4, 0.1]), np.array([0.5, -1.0, 0.2])


def _model():
    return mb.load_mjcf(XML)


def _flexor():
    """Over the shoulder and the elbow: a via point on the upper arm."""
    return Path([("world", (0.2, 0.0, 0.1)), ("upper", (0.05, 0.0, -0.2)), ("lower", (0.04, 0.0, -0.15))])


def _across():
    """From the forearm over a fixed pulley to the cart: two branches."""
    return Path([("lower", (0.0, 0.0, -0.3)), ("world", (0.1, 0.3, -0.6)), ("cart", (0.05, 0.0, 0.0))])


def _actuators(across=False):
    """Every kind on the flexor's path (and, ``across``, a servo coupling the two branches) and a motor on a joint."""
    p = _flexor()
    acts = [Muscle(p, lengthrange=(0.6, 1.0), force=40.0, name="muscle"),
            Muscle(p, lengthrange=(0.8, 1.3), gear=1.3, force=30.0, curves="sueda", vmax=3.0, name="sueda"),
            PositionServo(p, kp=20.0, kv=2.0, gear=0.8, name="servo"),
            Actuator(p, dyntype="filter", dynprm=(0.03,), gainprm=(5.0,), actearly=True, forcerange=(-3.0, 3.0),
                     name="filter"),
            Actuator(p, dyntype="integrator", gaintype="affine", gainprm=(2.0, 1.0, 0.5), biastype="affine",
                     biasprm=(0.1, -3.0, -0.4), actrange=(-0.5, 0.5), name="affine"),
            Motor("rail", gear=2.0, name="motor")]
    if across:
        acts.append(PositionServo(_across(), kp=40.0, kv=3.0, name="across"))
    return acts


def _controls(nu, steps, seed=3):
    rng = np.random.default_rng(seed)
    U = rng.uniform(0.0, 1.0, size=(steps, nu))
    U[:, 2] = rng.uniform(0.6, 0.9, size=steps)  # the servo's target length
    return np.repeat(U[::10], 10, axis=0)[:steps]


def _simulator(integrator, fused, across=False, **kw):
    sim = mb.Simulator(_model(), 2e-3, integrator, actuators=_actuators(across), contact_solver=None, limits=False,
                       q0=Q0, v0=V0, **kw)
    assert sim.fused is not None and not sim.fused.external  # the paths are in the compiled step
    assert sim.fused.ints[K.H_NPF] > 0
    if JIT:
        assert sim.fused.ints[K.H_PATH_STAGE] != 0
    if not fused:
        sim.fused = None  # the integrator's Python step
    return sim


@pytest.mark.parametrize("integrator", INTEGRATORS)
@pytest.mark.parametrize("across", [False, True], ids=["chain", "across_branches"])
def test_fused_step_equals_the_python_step(integrator, across):
    """``step`` and ``rollout``: the same trajectory, activations and forces as the Python step."""
    steps = 100
    U = _controls(len(_actuators(across)), steps)
    runs = {}
    for fused in (True, False):
        sim = _simulator(integrator, fused, across)
        q, v, act, force = [], [], [], []
        for u in U:
            sim.step(control=u)
            q.append(sim.state.q.copy())
            v.append(sim.state.v.copy())
            act.append(sim.activation)
            force.append(sim.actuator_force)
        runs[fused, "step"] = tuple(np.array(x) for x in (q, v, act, force))
        sim = _simulator(integrator, fused, across)
        traj = sim.rollout(steps=steps, control=U)
        runs[fused, "rollout"] = traj.q[1:], traj.v[1:], traj.activation[1:], traj.actuator_force[1:]
    for how in ("step", "rollout"):
        (qa, va, aa, fa), (qb, vb, ab, fb) = runs[True, how], runs[False, how]
        assert np.abs(qa - qb).max() <= 1e-12, how
        assert np.abs(va - vb).max() <= 1e-12 * max(1.0, np.abs(vb).max()), how
        assert np.abs(aa - ab).max() <= 1e-12, how
        assert np.abs(fa - fb).max() <= 1e-12 * np.abs(fb).max(), how
        assert np.abs(qa[-1] - Q0).max() > 0.05  # it moved
    # the compiled rollout and the compiled steps: one trajectory
    assert np.array_equal(runs[True, "step"][0], runs[True, "rollout"][0])


def _table_matrices(table, model):
    """The fused implicit step's K and D (the table's matrices B and C: _kernels._velocity_equation)."""
    ints, floats = table.ints, table.floats
    nq, nv, nb = model.nq, model.nv, model.nbodies
    mats = ints[K.F_WORK] + K.N_WORK_VECTORS * max(nq, nv, nb)
    B = floats[mats + nv * nv:mats + 2 * nv * nv].reshape(nv, nv)
    C = floats[mats + 2 * nv * nv:mats + 3 * nv * nv].reshape(nv, nv)
    return B.copy(), C.copy()


@pytest.mark.parametrize("integrator", ["implicit_euler", "trapezoidal"])
@pytest.mark.parametrize("across", [False, True], ids=["chain", "across_branches"])
def test_fused_implicit_step_jacobians_equal_central_differences(integrator, across):
    """Without gravity and joint damping the implicit step's K and D are
    the actuators' own: ``f_l JJᵀ + f_l̇ J(∂l̇/∂q)ᵀ + f H`` and ``f_l̇ JJᵀ``
    through the paths' geometric term, against central differences of the
    actuator forces (tangent space for q) at the step's start state,
    controls and activations."""
    model = _model()
    sim = _simulator(integrator, True, across, gravity=False, joint_damping=False)
    U = _controls(sim.nu, 40)
    for u in U[:-1]:  # activations away from zero
        sim.step(control=u)
    sim.control = U[-1]
    q, v, act = sim.state.q.copy(), sim.state.v.copy(), sim.activation
    sim.step()
    Kf, Df = _table_matrices(sim.fused, model)
    ref = ActuatorSet(_actuators(across), model, dt=sim.dt)
    ref.ctrl[:], ref.act[:] = U[-1], act

    def tau(qq, vv):
        return ref.evaluate(model, qq, vv)[0]
    nv, eps = model.nv, 1e-6
    Kd, Dd = np.zeros((nv, nv)), np.zeros((nv, nv))
    for i in range(nv):
        e = np.zeros(nv)
        e[i] = eps
        Kd[:, i] = (tau(model.integrate(q, e), v) - tau(model.integrate(q, -e), v)) / (2 * eps)
        Dd[:, i] = (tau(q, v + e) - tau(q, v - e)) / (2 * eps)
    dense = sim.fused.ints[K.H_DENSE] == 1
    assert dense == across
    if not dense:  # only M's branch pattern is written (the cart's rail is on its own branch)
        pattern = np.array([[1, 1, 0], [1, 1, 0], [0, 0, 1]], bool)
        Kf, Df, Kd, Dd = (np.where(pattern, X, 0.0) for X in (Kf, Df, Kd, Dd))
    scale = np.abs(Kd).max()
    assert scale > 1.0 and np.abs(Dd).max() > 0.1
    assert np.abs(Kf - Kd).max() < 1e-6 * scale
    assert np.abs(Df - Dd).max() < 1e-6 * np.abs(Dd).max()
    assert np.abs(Kf - Kf.T).max() > 1e-3 * scale  # f_l̇ J(∂l̇/∂q)ᵀ: not symmetric, and not factored as if it were
    assert sim.fused.ints[K.H_BLOCK] == -1


def test_models_without_path_actuators_do_not_get_the_path_stage():
    model = _model()
    sim = mb.Simulator(model, 2e-3, "implicit_euler", actuators=[Motor("rail"), PositionServo("elbow", kp=5.0)],
                       contact_solver=None, limits=False)
    assert sim.fused.ints[K.H_PATH_STAGE] == 0 and sim.fused.ints[K.H_NPF] == 0
    assert sim.fused.ints[K.H_NPS] == 0 and sim.fused.ints[K.H_BLOCK] == 0
    sim = mb.Simulator(model, 2e-3, "rk4", contact_solver=None, limits=False)
    assert sim.fused.ints[K.H_PATH_STAGE] == 0 and sim.fused.ints[K.H_NU] == 0


def test_a_zero_length_segment_is_named_by_the_checked_step():
    """The compiled stage cannot name the segment: the step fails there and
    the checked Python path raises the path's error."""
    model = _model()
    # the via point on the upper arm and the point on the forearm coincide at q = 0
    p = Path([("world", (0.2, 0.0, 0.1)), ("upper", (0.0, 0.0, -0.5)), ("lower", (0.0, 0.0, 0.0))])
    sim = mb.Simulator(model, 2e-3, "semi_implicit_euler", actuators=[Motor(p)], contact_solver=None,
                       limits=False)
    assert sim.fused is not None and not sim.fused.external
    sim.control = [1.0]
    with pytest.raises((mb.InputError, mb.SimulationError), match="zero length"):
        sim.step()


def test_batch_members_equal_single_rollouts():
    """rollout_batch on threads (a table and a workspace per member, each
    with its own path stage): each member is the single rollout, bitwise."""
    steps = 60
    U = _controls(len(_actuators()), steps)
    sim = _simulator("semi_implicit_euler", True)
    Q = np.array([Q0, Q0 + 0.1, Q0 - 0.2])
    batch = sim.rollout_batch(q0=Q, v0=np.tile(V0, (3, 1)), steps=steps, control=U, threads=2)
    for b in range(3):
        single = _simulator("semi_implicit_euler", True)
        single.reset(Q[b], V0)
        traj = single.rollout(steps=steps, control=U)
        assert np.array_equal(batch[b].q, traj.q) and np.array_equal(batch[b].activation, traj.activation)
