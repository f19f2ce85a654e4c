"""The Delta-style parallel robot shipped as MJCF (src/multibody/data/robots/
delta.xml): equality constraints loaded from the file, 5 s of driven
simulation without drift, and closed-loop inverse dynamics recovering the
driving torques."""
import os

import numpy as np
import pytest

import multibody as mb
from multibody.constraints import Constraints
from multibody.dynamics import closed_loop_inverse_dynamics

pytest.importorskip("mujoco")
DELTA = os.path.join(os.path.dirname(mb.__file__), "data", "robots", "delta.xml")


def _torque(t):
    return np.array([0.6 + 0.3 * np.sin(2 * t), 0.6 + 0.3 * np.sin(3 * t + 1), 0.6 + 0.3 * np.cos(2.5 * t)])


def test_delta_robot_from_mjcf():
    model = mb.load_mjcf(DELTA)
    C = Constraints(model)
    assert C.size == 6 and C.labels == ["close2"] * 3 + ["close3"] * 3
    assert np.abs(C.evaluate(model.neutral())[0]).max() < 1e-12
    hinges = np.array([model.joints[model.joint_id(n)].v_slice.start for n in ("hinge1", "hinge2", "hinge3")])

    def controller(t, q, v):
        tau = np.zeros(model.nv)
        tau[hinges] = _torque(t)
        return tau

    sim = mb.Simulator(model, 1e-3, "rk4")
    traj = sim.rollout(duration=5.0, controller=controller, record_every=25)
    assert traj.constraint_residual.max() < 1e-8                 # no drift
    assert np.ptp(traj.q[:, hinges], axis=0).min() > 0.1          # the arms really move
    # closed-loop inverse dynamics of the simulated motion recovers the hinge torques
    for k in range(5, len(traj.t), 40):
        t, q, v = traj.t[k], traj.q[k], traj.v[k]
        tau = controller(t, q, v)
        qdd = sim.system.acceleration(t, q, v, tau)
        K = C.evaluate(q)[1]
        u = closed_loop_inverse_dynamics(model, q, v, qdd, K, actuated=hinges, passive=-model.damping * v)
        assert u[hinges] == pytest.approx(tau[hinges], abs=1e-8)
