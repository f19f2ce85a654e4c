"""Simulation step rate: a Talos humanoid (free-floating, no contacts,
gravity, joint damping) with semi-implicit Euler at dt = 1e-3, against
MuJoCo's ``mj_step`` on the same URDF in one process, and the cost split
of a multibody step (dynamics, integrator, Python overhead).

    python benchmarks/simulation.py [--steps 2000]

The MuJoCo model is built from the same URDF as in shared/bench/anchors.py
(geometry and <mimic>/<friction> removed, <damping> kept, a free joint on
the root), with timestep 1e-3 and its Euler integrator (which treats joint
damping implicitly).
"""
import argparse
import os
import time
import xml.etree.ElementTree as ET

import numpy as np

import multibody as mb
from _common import robot_path, timeit


def mujoco_model(path, dt):
    import mujoco
    root = ET.fromstring(open(path).read())
    for link in root.iter("link"):
        for tag in ("visual", "collision"):
            for el in link.findall(tag):
                link.remove(el)
    for joint in root.iter("joint"):
        for el in joint.findall("mimic"):
            joint.remove(el)
        for el in joint.findall("dynamics"):
            el.attrib.pop("friction", None)
    spec = mujoco.MjSpec.from_string(ET.tostring(root, encoding="unicode"))
    spec.worldbody.first_body().add_freejoint()
    m = spec.compile()
    m.opt.timestep = dt
    m.opt.integrator = mujoco.mjtIntegrator.mjINT_EULER
    return m


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--steps", type=int, default=2000)
    args = ap.parse_args()
    import mujoco
    dt = 1e-3
    path = robot_path("talos")
    model = mb.load_urdf(path, floating_base=True)
    q0 = model.neutral()
    q0[2] = 1.0
    sim = mb.Simulator(model, dt, "semi_implicit_euler", q0=q0)
    m = mujoco_model(path, dt)
    d = mujoco.MjData(m)
    assert abs(m.nv - model.nv) == 0, (m.nv, model.nv)
    print(f"Talos: nq {model.nq}, nv {model.nv}, joint damping {model.damping.max():g} (max); dt = {dt}")

    def mb_block():
        sim.reset(q0)
        for _ in range(50):
            sim.step()

    def mj_block():
        mujoco.mj_resetData(m, d)
        d.qpos[2] = 1.0
        for _ in range(50):
            mujoco.mj_step(m, d)
    t_mb = timeit(mb_block, blocks=21) / 50
    t_mj = timeit(mj_block, blocks=21) / 50
    print(f"multibody Simulator.step (semi-implicit Euler): {t_mb * 1e6:8.2f} us/step ({1 / t_mb:,.0f} steps/s)")
    print(f"MuJoCo mj_step (Euler):                          {t_mj * 1e6:8.2f} us/step ({1 / t_mj:,.0f} steps/s)")
    print(f"ratio multibody / MuJoCo: {t_mb / t_mj:.2f}")
    # cost split of one multibody step
    s = sim.system
    q, v, tau = q0, np.zeros(model.nv), np.zeros(model.nv)
    t_dyn = timeit(lambda: s.acceleration(0.0, q, v, tau))
    t_int = timeit(lambda: model._integrate(q, v, dt))
    t_aba = timeit(lambda: mb.aba(model, q, v, tau, data=s.data))
    print(f"split: forward dynamics {t_dyn * 1e6:.2f} us (of which the ABA kernel call {t_aba * 1e6:.2f} us), "
          f"configuration update {t_int * 1e6:.2f} us, rest (checks, bookkeeping) "
          f"{(t_mb - t_dyn - t_int) * 1e6:.2f} us")


if __name__ == "__main__":
    main()
