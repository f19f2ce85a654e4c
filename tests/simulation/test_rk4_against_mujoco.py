"""With no contact and no limits, multibody's RK4 trajectory of UR5 (fixed
base) and Talos (floating base) from a random velocity equals MuJoCo's RK4
trajectory of the same URDF (issue 11, item 6: velocities are not clamped
by default, so nothing but the dynamics acts)."""
import numpy as np
import pytest

import multibody as mb
from oracles import mujoco_from_urdf, robot_path

mujoco = pytest.importorskip("mujoco")


@pytest.mark.parametrize("name, floating", [("ur5", False), ("talos", True)])
def test_rk4_trajectory_equals_mujocos(name, floating):
    path = robot_path(name)
    dt, steps, every = 1e-3, 1000, 100
    m, index = mujoco_from_urdf(path, floating)
    m.opt.timestep = dt
    m.opt.integrator = mujoco.mjtIntegrator.mjINT_RK4
    m.opt.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_CONTACT) | int(mujoco.mjtDisableBit.mjDSBL_LIMIT)
    model = mb.load_urdf(path, floating_base=floating)
    qadr, vadr = index(model)
    rng = np.random.default_rng(3)
    q0 = model.random_configuration(seed=3)
    v0 = rng.normal(scale=1.0, size=model.nv)
    d = mujoco.MjData(m)
    d.qpos[qadr] = q0
    qvel = np.zeros(m.nv)
    qvel[vadr] = v0
    if floating:  # MuJoCo's free joint: linear velocity in the world frame
        R = mb.forward_kinematics(model, q0)[1][:3, :3]
        qvel[vadr[3:6]] = R @ v0[3:6]
    d.qvel[:] = qvel
    ref = []
    for k in range(steps):
        mujoco.mj_step(m, d)
        if (k + 1) % every == 0:
            ref.append(d.qpos[qadr].copy())
    sim = mb.Simulator(model, dt, "rk4", limits=False, q0=q0, v0=v0, contact_solver=None)  # MuJoCo: contact disabled
    traj = sim.rollout(steps=steps, record_every=every)
    assert not traj.velocity_clamped.any()
    err = np.abs(traj.q[1:] - np.array(ref))
    if floating:  # a quaternion and its negative are one rotation
        qs = model.joints[1].q_slice
        quat = slice(qs.start + 3, qs.stop)
        err[:, quat] = np.minimum(err[:, quat], np.abs(traj.q[1:, quat] + np.array(ref)[:, quat]))
    assert err.max() < 1e-8, err.max()
    assert np.abs(traj.q[-1] - traj.q[0]).max() > 0.1  # it moved
