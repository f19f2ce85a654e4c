"""Munthe-Kaas Runge–Kutta (integrators/lie.py) on maximal coordinates:
each order 1–4, on SE(3) and on SO(3) × R³, converges at its order to
scipy's DOP853 on the rigid body's own equations (Ṙ = Rω̂, ṗ = Rv,
MV̇ = ad(V)ᵀMV, written out here), and bad input is refused."""
import numpy as np
import pytest
from scipy.integrate import solve_ivp

import multibody as mb
from multibody.errors import InputError
from multibody.formulations import MaximalSystem
from multibody.integrators.lie import RKMK


def hat(w):
    return np.array([[0.0, -w[2], w[1]], [w[2], 0.0, -w[0]], [-w[1], w[0], 0.0]])


def tumbling_body():
    """A free body whose frame is off its centre of mass (rotation and
    translation coupled), spinning near its unstable middle axis."""
    b = mb.ModelBuilder(gravity=(0.0, 0.0, 0.0))
    b.add_body("body", joint="free", mass=2.0, com=(0.3, -0.1, 0.2), inertia=np.diag([0.2, 0.5, 0.7]))
    model = b.build()
    return model, np.array([0.3, 4.0, -0.5, 0.4, -0.2, 0.1])


def reference(system, V0, T):
    """(R, p, V) at T by DOP853 on the body's equations in its frame."""
    M = system.inertia[0]

    def rhs(_, y):
        R, V = y[:9].reshape(3, 3), y[12:]
        w, v = V[:3], V[3:]
        ad = np.block([[hat(w), np.zeros((3, 3))], [hat(v), hat(w)]])
        return np.concatenate([(R @ hat(w)).ravel(), R @ v, np.linalg.solve(M, ad.T @ M @ V)])

    y0 = np.concatenate([np.eye(3).ravel(), np.zeros(3), V0])
    y = solve_ivp(rhs, (0.0, T), y0, method="DOP853", rtol=1e-13, atol=1e-14).y[:, -1]
    return y[:9].reshape(3, 3), y[9:12], y[12:]


@pytest.mark.parametrize("group", ["se3", "so3xr3"])
@pytest.mark.parametrize("order", [1, 2, 3, 4])
def test_each_order_converges_at_its_order(order, group):
    model, v0 = tumbling_body()
    system = MaximalSystem(model)
    T = 0.2
    R_ref, p_ref, V_ref = reference(system, v0, T)
    errors = []
    for h in (0.01, 0.005):
        C, V = system.state(model.neutral(), v0)
        rkmk = RKMK(order, group)
        for _ in range(int(round(T / h))):
            C, V = rkmk.step_maximal(system, C, V, np.zeros(6), h)
        errors.append(max(np.abs(C[0, :3, :3] - R_ref).max(), np.abs(C[0, :3, 3] - p_ref).max(),
                          np.abs(V[0] - V_ref).max()))
    ratio = errors[0] / errors[1]
    assert 2 ** order * 0.75 < ratio < 2 ** order * 1.3, (errors, ratio)


def test_bad_input():
    model, v0 = tumbling_body()
    system = MaximalSystem(model)
    C, V = system.state(model.neutral(), v0)
    with pytest.raises(InputError, match="order"):
        RKMK(5)
    with pytest.raises(InputError, match="lie_group"):
        RKMK(4, "so3")
    with pytest.raises(InputError, match="time step"):
        RKMK(4).step_maximal(system, C, V, np.zeros(6), 0.0)
    with pytest.raises(InputError, match="2 groups for 1 bodies"):
        RKMK(4, ["se3", "so3xr3"]).step_maximal(system, C, V, np.zeros(6), 1e-3)


def floating_chain():
    """A free base carrying a spherical, a planar and a revolute joint:
    every Lie joint the reduced RKMK moves on its group."""
    b = mb.ModelBuilder(gravity=(0.0, 0.0, -9.81))
    b.add_body("base", joint="free", mass=3.0, com=(0.1, 0.0, 0.05), inertia=np.diag([0.1, 0.2, 0.25]))
    at = np.eye(4)
    at[:3, 3] = (0.2, 0.0, 0.0)
    b.add_body("ball", parent="base", joint="spherical", placement=at.copy(), mass=1.0, com=(0.1, 0.05, 0.0),
               inertia=np.diag([0.01, 0.02, 0.03]))
    b.add_body("plate", parent="ball", joint="planar", placement=at.copy(), axis=(0, 0, 1), axis2=(1, 0, 0),
               mass=0.5, com=(0.05, 0.0, 0.0), inertia=np.diag([0.004, 0.005, 0.006]))
    b.add_body("arm", parent="plate", joint="revolute", placement=at.copy(), axis=(0, 1, 0), mass=0.7,
               com=(0.1, 0.0, 0.0), inertia=np.diag([0.002, 0.01, 0.01]))
    model = b.build()
    rng = np.random.default_rng(2)
    return model, model.integrate(model.neutral(), 0.5 * rng.normal(size=model.nv)), rng.normal(size=model.nv)


@pytest.mark.parametrize("group", ["se3", "so3xr3"])
def test_reduced_rkmk4_converges_at_order_four(group):
    """``Simulator(integrator=RKMK(4, group))`` on a floating chain with a
    spherical, a planar and a revolute joint: the error against scipy's
    DOP853 on the embedded ODE (q̇ = Q(q)v, v̇ = ABA) falls 16× per halving
    of dt (12–20 here), and the quaternions stay unit."""
    model, q0, v0 = floating_chain()
    T = 0.2

    def rhs(_, y):  # the quaternions normalized for the dynamics (the exact solution keeps them unit)
        q, v = model.normalize(y[:model.nq]), y[model.nq:]
        return np.concatenate([model.qdot(q, v), mb.aba(model, q, v, np.zeros(model.nv))])

    y = solve_ivp(rhs, (0.0, T), np.concatenate([q0, v0]), method="DOP853", rtol=1e-13, atol=1e-13).y[:, -1]
    q_ref, v_ref = model.normalize(y[:model.nq]), y[model.nq:]
    errors = []
    for dt in (0.01, 0.005):
        sim = mb.Simulator(model, dt, RKMK(4, group), q0=q0, v0=v0, contact_solver=None, limits=False)
        s = sim.rollout(steps=int(round(T / dt)), progress=False)
        q1, v1 = s.q[-1], s.v[-1]
        errors.append(max(np.abs(model.difference(q_ref, q1)).max(), np.abs(v1 - v_ref).max()))
        assert abs(np.linalg.norm(q1[3:7]) - 1.0) < 1e-14
    assert 12 < errors[0] / errors[1] < 20, errors


def test_reduced_rkmk_is_rk4_on_vector_joints():
    """Without a Lie joint every group is R^n and dexp⁻¹ the identity:
    RKMK4 is classical RK4 (the same states to round-off)."""
    b = mb.ModelBuilder()
    b.add_body("a", joint="revolute", axis=(1, 0, 0), mass=1.0, com=(0, 0, -0.3), inertia=np.eye(3) * 0.01)
    b.add_body("b", parent="a", joint="prismatic", axis=(0, 0, 1), mass=1.0, inertia=np.eye(3) * 0.01)
    model = b.build()
    runs = [mb.Simulator(model, 1e-2, integrator, q0=[0.3, 0.1], v0=[1.0, -0.5]).rollout(steps=50, progress=False)
            for integrator in ("rk4", "rkmk4")]
    assert np.abs(runs[0].q - runs[1].q).max() < 1e-13 and np.abs(runs[0].v - runs[1].v).max() < 1e-12


def test_simulator_lie_group_option():
    """``lie_group`` goes with ``integrator="rkmk4"``: the two groups give
    different (4th-order close) states on a tumbling free body; elsewhere
    it is refused, as is a bad group."""
    model, v0 = tumbling_body()
    ends = [mb.Simulator(model, 1e-2, "rkmk4", lie_group=g, v0=v0).rollout(steps=20, progress=False).q[-1]
            for g in ("se3", "so3xr3")]
    assert 0 < np.abs(ends[0] - ends[1]).max() < 1e-5
    with pytest.raises(InputError, match="lie_group is an option of the rkmk4 integrator"):
        mb.Simulator(model, 1e-2, "rk4", lie_group="se3")
    with pytest.raises(InputError, match="lie_group"):
        mb.Simulator(model, 1e-2, "rkmk4", lie_group="so3")
    with pytest.raises(InputError, match="carries its own"):
        mb.Simulator(model, 1e-2, RKMK(4), lie_group="se3")
