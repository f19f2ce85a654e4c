"""PD control with gravity compensation: the shipped 7-DoF arm moves from
its neutral pose to a goal configuration under
``τ = g(q) + Kp (q_goal − q) − Kd v`` (Takegaki & Arimoto 1981: the goal is
globally asymptotically stable for any positive gains), simulated with
semi-implicit Euler at dt = 1 ms with the arm's joint damping, limits and
effort limits. The gains are per joint, scaled by the diagonal of the mass
matrix at the goal: ``Kd = 2ωM_ii`` and ``Kp`` such that the joint, with
``Kd`` plus the model's own damping b, is critically damped on its own
(``Kp = (Kd + b)²/(4M_ii)``). The controller acts explicitly, once per
step, so ``h·Kd/M_ii`` must stay well below 2: uniform gains would
destabilize the light wrist joints.

    python examples/pd_control.py
"""
import os

import numpy as np

import multibody as mb

ARM = os.path.join(os.path.dirname(mb.__file__), "data", "robots", "mb_arm.urdf")


def run(duration=4.0, dt=1e-3, f=4.0):
    """Simulate the PD regulation; returns (trajectory, goal)."""
    model = mb.load_urdf(ARM, srdf=ARM.replace(".urdf", ".srdf"))  # its self-collision filtering (docs/contact.md)
    goal = model.neutral() + 0.5 * (model.random_configuration(seed=1) - model.neutral())
    w = 2.0 * np.pi * f
    m = np.diag(mb.crba(model, goal))
    kd = 2.0 * w * m
    kp = (kd + model.damping) ** 2 / (4.0 * m)

    def controller(t, q, v):
        return mb.gravity_forces(model, q) + kp * (goal - q) - kd * v

    sim = mb.Simulator(model, dt, "semi_implicit_euler")
    return sim.rollout(duration=duration, controller=controller, record_every=10), goal


if __name__ == "__main__":
    traj, goal = run()
    err = np.abs(traj.q - goal).max(axis=1)
    for t in (0.0, 0.5, 1.0, 2.0, 4.0):
        k = int(np.argmin(np.abs(traj.t - t)))
        print(f"t = {traj.t[k]:.1f} s: max joint error {err[k]:.2e} rad")
