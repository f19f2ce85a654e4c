"""Cost of one constrained simulation step: the Delta-style parallel robot
and the four-bar shipped as MJCF (src/multibody/data/robots/), multibody's
Simulator against MuJoCo's ``mj_step`` on the same file in one process.

    python benchmarks/constrained.py

multibody enforces the loop closures exactly (velocity-level KKT step for
semi-implicit Euler, closed-loop forward dynamics for RK4, then projection
onto the constraint manifold); MuJoCo treats equality constraints softly
(solref/solimp) inside its constraint solver, with contacts switched off
here so that both solve the same mechanism.
"""
import os

import mujoco
import numpy as np

import multibody as mb
from _common import timeit

ROBOTS = os.path.join(os.path.dirname(mb.__file__), "data", "robots")


def main():
    for name in ("four_bar", "delta"):
        path = os.path.join(ROBOTS, f"{name}.xml")
        model = mb.load_mjcf(path)
        m = mujoco.MjModel.from_xml_path(path)
        m.opt.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_CONTACT)
        print(f"\n{name}: nq {model.nq}, nv {model.nv}, {mb.constraints.Constraints(model).size} constraint rows; "
              f"dt = 1e-3")
        for integrator, mj_integrator in (("semi_implicit_euler", mujoco.mjtIntegrator.mjINT_EULER),
                                          ("rk4", mujoco.mjtIntegrator.mjINT_RK4)):
            sim = mb.Simulator(model, 1e-3, integrator)
            m.opt.timestep = 1e-3
            m.opt.integrator = mj_integrator
            d = mujoco.MjData(m)

            def mb_block():
                sim.reset()
                for _ in range(20):
                    sim.step()

            def mj_block():
                mujoco.mj_resetData(m, d)
                for _ in range(20):
                    mujoco.mj_step(m, d)
            t_mb = timeit(mb_block, blocks=11) / 20
            t_mj = timeit(mj_block, blocks=11) / 20
            if integrator == "semi_implicit_euler":
                t_sie = t_mb
            print(f"  {integrator:<20} multibody {t_mb * 1e6:9.1f} us/step   MuJoCo (soft equalities) "
                  f"{t_mj * 1e6:7.1f} us/step   ratio {t_mb / t_mj:6.1f}")
        # where the time goes in one semi-implicit Euler step
        sim = mb.Simulator(model, 1e-3, "semi_implicit_euler")
        s, C = sim.system, sim.constraints
        q, v, tau = model.neutral(), np.zeros(model.nv), np.zeros(model.nv)
        t_rows = timeit(lambda: C.evaluate(q, v))
        t_step = timeit(lambda: s.constrained_semi_implicit_euler(0.0, q, v, tau, 1e-3))
        q1, v1 = s.constrained_semi_implicit_euler(0.0, q, v, tau, 1e-3)
        t_proj = timeit(lambda: mb.constraints.project(model, C, q1, v1))
        t_total = t_sie
        print(f"  split (semi-implicit Euler, {t_total * 1e6:.1f} us): velocity step kernel {t_step * 1e6:.1f} us "
              f"(constraint rows alone {t_rows * 1e6:.1f} us), projection kernel {t_proj * 1e6:.1f} us, "
              f"rest {(t_total - t_step - t_proj) * 1e6:.1f} us")

if __name__ == "__main__":
    main()
