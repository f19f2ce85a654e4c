"""Simulation step rate: a Talos humanoid (free-floating, no contacts,
gravity, joint damping) with semi-implicit Euler at dt = 1e-3, against
MuJoCo's ``mj_step`` on the same URDF in one process, and the cost split
of a multibody step (dynamics, integrator, Python overhead).

    python benchmarks/simulation.py [--integrators]

The MuJoCo model is built from the same URDF as in shared/bench/anchors.py
(geometry and <mimic>/<friction> removed, <damping> kept, a free joint on
the root), with timestep 1e-3 and its Euler integrator (which treats joint
damping implicitly).

Two configurations: joint position limits enforced by both (MuJoCo's
default for a URDF with limits: soft constraints solved by its Newton
solver; multibody: exact LCP impulses and projection), and limits off in
both (``mjDSBL_LIMIT``; ``limits=False``). Talos's neutral pose has 8
joints exactly at a limit, so with limits on they are active every step.

``--integrators``: ``Simulator.step()`` and ``rollout`` (per step) with
every integrator on UR5 and Talos, limits off, against ``mj_step`` with
the matching MuJoCo integrator (Euler, RK4, implicitfast; Euler for the
integrators MuJoCo does not have).
"""
import argparse
import numpy as np

import multibody as mb
from _common import robot_path, timeit
from oracles import mujoco_from_urdf


def mujoco_model(path, dt):
    import mujoco
    m = mujoco_from_urdf(path, floating_base=True)[0]
    m.opt.timestep = dt
    m.opt.integrator = mujoco.mjtIntegrator.mjINT_EULER
    return m


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--integrators", action="store_true",
                    help="also time Simulator.step and rollout with every integrator (UR5, Talos)")
    args = ap.parse_args()
    import mujoco
    dt = 1e-3
    path = robot_path("talos")
    model = mb.load_urdf(path, floating_base=True)
    q0 = model.neutral()
    q0[2] = 1.0
    m = mujoco_model(path, dt)
    d = mujoco.MjData(m)
    assert abs(m.nv - model.nv) == 0, (m.nv, model.nv)
    print(f"Talos: nq {model.nq}, nv {model.nv}, joint damping {model.damping.max():g} (max); dt = {dt}; "
          f"{len(mb.constraints.JointLimits(model))} limit rows")
    for limits in (True, False):
        sim = mb.Simulator(model, dt, "semi_implicit_euler", q0=q0, limits=limits)
        if limits:
            m.opt.disableflags &= ~int(mujoco.mjtDisableBit.mjDSBL_LIMIT)
        else:
            m.opt.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_LIMIT)

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
        print(f"\nlimits {'on' if limits else 'off'}:")
        print(f"  multibody Simulator.step (semi-implicit Euler): {t_mb * 1e6:8.2f} us/step ({1 / t_mb:,.0f} steps/s)")
        print(f"  MuJoCo mj_step (Euler):                          {t_mj * 1e6:8.2f} us/step ({1 / t_mj:,.0f} steps/s)")
        print(f"  ratio multibody / MuJoCo: {t_mb / t_mj:.2f}")
        split(sim, q0, t_mb)
    if args.integrators:
        every_integrator("ur5", False)
        every_integrator("talos", True)


#: multibody integrator -> the MuJoCo integrator it is compared with
PEERS = {"semi_implicit_euler": "mjINT_EULER", "rk4": "mjINT_RK4", "implicit_euler": "mjINT_IMPLICITFAST",
         "explicit_euler": "mjINT_EULER", "trapezoidal": "mjINT_EULER", "bridson_marino": "mjINT_EULER"}


def every_integrator(name, floating, dt=1e-3, steps=200):
    """The calls a newcomer times: ``Simulator.step()`` and ``rollout``
    (per step, no controller) with each integrator, no limits, no contact,
    against ``mj_step`` from a Python loop with the matching integrator."""
    import mujoco
    path = robot_path(name)
    model = mb.load_urdf(path, floating_base=floating)
    m = mujoco_from_urdf(path, floating)[0]
    m.opt.timestep = dt
    m.opt.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_LIMIT) | int(mujoco.mjtDisableBit.mjDSBL_CONTACT)
    d = mujoco.MjData(m)
    q0 = model.neutral()
    if floating:
        q0[2] = 1.0
    print(f"\n{name}: nv {model.nv}; us per step; ratio = multibody / MuJoCo (matching integrator)")
    print(f"  {'integrator':<20}{'MuJoCo':>9}{'step':>9}{'ratio':>7}{'rollout':>10}{'ratio':>7}")
    for integ, peer in PEERS.items():
        m.opt.integrator = getattr(mujoco.mjtIntegrator, peer)
        sim = mb.Simulator(model, dt, integ, q0=q0, limits=False)

        def mj_block():
            mujoco.mj_resetData(m, d)
            for _ in range(50):
                mujoco.mj_step(m, d)

        def mb_block():
            sim.reset(q0)
            for _ in range(50):
                sim.step()
        t_mj = timeit(mj_block, blocks=11) / 50
        t_step = timeit(mb_block, blocks=11) / 50
        sim.reset(q0)
        t_roll = timeit(lambda: sim.rollout(steps=steps, progress=False), blocks=5) / steps
        print(f"  {integ:<20}{t_mj * 1e6:9.1f}{t_step * 1e6:9.1f}{t_step / t_mj:7.2f}{t_roll * 1e6:10.1f}"
              f"{t_roll / t_mj:7.2f}")


def split(sim, q0, t_step):
    """Cost of the parts of one step at the state 10 steps after q0: the
    fused dynamics + integrator kernel, the end-of-step kernel (finiteness,
    limits, velocity clamp) and the rest (Python)."""
    from multibody.integrators.explicit import _sie_entry
    from multibody.simulation.simulator import _end_entry
    model, s, dt = sim.model, sim.system, sim.dt
    sim.reset(q0)
    for _ in range(10):
        sim.step()
    q, v, tau = sim.state.q, sim.state.v, np.zeros(model.nv)
    d = s.data
    q1, v1 = np.empty_like(q), np.empty_like(v)
    sie = _sie_entry()
    t_int = timeit(lambda: sie(model._tree, q, v, tau, s.damping, dt, s.gravity, d.poses, d.jac, d.spatial,
                               d.inertia6, d.U, d.Dinv, d.dofs, q1, v1))
    sie(model._tree, q, v, tau, s.damping, dt, s.gravity, d.poses, d.jac, d.spatial, d.inertia6, d.U, d.Dinv,
        d.dofs, q1, v1)
    t_aba = timeit(lambda: mb.aba(model, q, v, tau, data=d))
    end = _end_entry()
    lim = sim._limit_rows
    q2, v2, mask = np.empty_like(q), np.empty_like(v), np.empty(model.nv, bool)
    t_end = timeit(lambda: end(model._tree, model.dof_parent, q1, v1, sim._vmax_or_inf, sim._vmax is not None,
                               lim.q_index, lim.v_index, lim.sign, lim.bound, sim.restitution,
                               sim.restitution_threshold, d.poses, d.jac, d.inertia6, d.M, q2, v2, mask))
    active = int((lim.sign * (q1[lim.q_index] - lim.bound) < 0).sum()) if len(lim.sign) else 0
    print(f"  split: dynamics + integrator kernel {t_int * 1e6:.2f} us (mb.aba alone: {t_aba * 1e6:.2f} us), "
          f"end of step {t_end * 1e6:.2f} us "
          f"({active} limits active), Python {(t_step - t_int - t_end) * 1e6:.2f} us")


if __name__ == "__main__":
    main()
