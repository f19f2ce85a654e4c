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
            C, V = rkmk.step(system, C, V, np.zeros(6), h)
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
        RKMK(4).step(system, C, V, np.zeros(6), 0.0)
    with pytest.raises(InputError, match="2 groups for 1 bodies"):
        RKMK(4, ["se3", "so3xr3"]).step(system, C, V, np.zeros(6), 1e-3)
