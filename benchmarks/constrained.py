"""Cost of one constrained simulation step: the Delta-style parallel robot
and the four-bar shipped as MJCF (src/multibody/data/robots/), multibody's
Simulator against MuJoCo's ``mj_step`` on the same file in one process.

    python benchmarks/constrained.py

multibody enforces the loop closures exactly (velocity-level KKT step for
semi-implicit Euler, closed-loop forward dynamics for RK4, then projection
onto the constraint manifold); MuJoCo treats equality constraints softly
(solref/solimp) inside its constraint solver, with contacts switched off
here so that both solve the same mechanism.

Both run 20 steps from the initial state per block, the reset outside the
timed region: multibody's reset assembles the state onto the constraints
(a projection, 60-180 us), MuJoCo's is a copy, and neither is part of a
step. The column "with resets" times the reset inside the block, as this
benchmark did before, for comparison.
"""
import gc
import os
import time

import mujoco
import numpy as np

import multibody as mb
from multibody.constraints._kernels import constrained_sie_kernel, project_kernel

ROBOTS = os.path.join(os.path.dirname(mb.__file__), "data", "robots")
STEPS = 20


def per_step(reset, step, blocks=301, with_reset=False):
    """Median seconds per step over blocks of STEPS steps after a reset
    (timed too if ``with_reset``)."""
    reset()
    for _ in range(STEPS):
        step()
    ts = []
    gc.disable()
    try:
        for _ in range(blocks):
            if not with_reset:
                reset()
            t0 = time.perf_counter()
            if with_reset:
                reset()
            for _ in range(STEPS):
                step()
            ts.append((time.perf_counter() - t0) / STEPS)
    finally:
        gc.enable()
    return float(np.median(ts))


def newton_iterations(sim):
    """Mean number of Newton iterations of the post-stabilization over the
    first STEPS semi-implicit Euler steps from the initial state (the
    compiled kernels of the fused step, called one by one)."""
    model, s = sim.model, sim.system
    d = sim.constraints._data
    sim.reset()
    its = []
    for _ in range(STEPS):
        q, v = sim.state.q, sim.state.v
        q1, v1, q2, v2 = np.empty(model.nq), np.empty(model.nv), np.empty(model.nq), np.empty(model.nv)
        f = s.element_forces(sim.state.t, q, v)[0]  # joint damping and springs, as the step's
        constrained_sie_kernel(model._tree, model.dof_parent, q, v, f, sim.dt, s.gravity,
                               *sim.constraints.kernel_args, d.poses, d.jac, d.spatial, d.inertia6, d.M, q1, v1)
        its.append(project_kernel(model._tree, model.dof_parent, q1, v1, *sim.constraints.kernel_args, d.poses,
                                  d.jac, d.spatial, d.inertia6, d.M, 1e-12, 20, q2, v2))
        sim.step()
    return float(np.mean(its))


def main():
    for name in ("four_bar", "delta"):
        path = os.path.join(ROBOTS, f"{name}.xml")
        model = mb.load_mjcf(path)
        m = mujoco.MjModel.from_xml_path(path)
        m.opt.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_CONTACT)
        print(f"\n{name}: nq {model.nq}, nv {model.nv}, {mb.constraints.Constraints(model).size} constraint rows; "
              f"dt = 1e-3, {STEPS} steps from the initial state per block")
        for integrator, mj_integrator in (("semi_implicit_euler", mujoco.mjtIntegrator.mjINT_EULER),
                                          ("rk4", mujoco.mjtIntegrator.mjINT_RK4)):
            sim = mb.Simulator(model, 1e-3, integrator, contact_solver=None)
            m.opt.timestep = 1e-3
            m.opt.integrator = mj_integrator
            d = mujoco.MjData(m)
            t_mb = per_step(sim.reset, sim.step)
            t_mj = per_step(lambda: mujoco.mj_resetData(m, d), lambda: mujoco.mj_step(m, d))
            t_mb_r = per_step(sim.reset, sim.step, blocks=51, with_reset=True)
            t_mj_r = per_step(lambda: mujoco.mj_resetData(m, d), lambda: mujoco.mj_step(m, d), blocks=51,
                              with_reset=True)
            print(f"  {integrator:<20} multibody {t_mb * 1e6:7.2f} us/step   MuJoCo (soft equalities) "
                  f"{t_mj * 1e6:6.2f} us/step   ratio {t_mb / t_mj:5.2f}   (with resets: {t_mb_r * 1e6:6.1f} / "
                  f"{t_mj_r * 1e6:5.1f} us, ratio {t_mb_r / t_mj_r:4.1f})")
            if integrator == "semi_implicit_euler":
                f = sim.fused
                q, v, tau = sim.state.q.copy(), sim.state.v.copy(), np.zeros(model.nv)
                q1, v1 = np.empty(model.nq), np.empty(model.nv)

                def kernel_step():
                    f._step(f.handle, q, v, tau, q1, v1)
                    q[:] = q1
                    v[:] = v1
                q0, v0 = q.copy(), v.copy()

                def kernel_reset():
                    q[:] = q0
                    v[:] = v0
                t_k = per_step(kernel_reset, kernel_step)
                print(f"  split: the fused step kernel {t_k * 1e6:.2f} us of the {t_mb * 1e6:.2f} us of "
                      f"Simulator.step; {newton_iterations(sim):.2f} Newton iterations of the projection per step")


if __name__ == "__main__":
    main()
