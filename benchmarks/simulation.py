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
every integrator on a double pendulum (MJCF), UR5 and Talos, limits off,
against ``mj_step`` and ``mujoco.rollout`` with the matching MuJoCo
integrator (Euler, RK4, implicitfast; Euler for the integrators MuJoCo
does not have), and a Python PD controller in the loop.

``--paired``: ``Simulator.step()`` against ``mj_step`` for every
integrator, as pairs of 200-step blocks taken one right after the other
(41 pairs): the median and quartiles of the per-pair ratio. On a machine
whose speed drifts (a shared VM: 2x between runs), a ratio of two
timings taken far apart is noise; this one is not.
"""
import argparse
import time

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
    ap.add_argument("--paired", action="store_true",
                    help="only Simulator.step against mj_step, every integrator, as pairs of blocks (median ratio)")
    ap.add_argument("--batch", action="store_true",
                    help="only the batched rollouts: Talos, 64 initial states x 1000 steps, against mujoco.rollout")
    args = ap.parse_args()
    if args.batch:
        return batched()
    if args.paired:
        return paired_steps()
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
        sim = mb.Simulator(model, dt, "semi_implicit_euler", q0=q0, limits=limits, contact_solver=None)
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
        every_integrator()


#: multibody integrator -> the MuJoCo integrator it is compared with
PEERS = {"semi_implicit_euler": "mjINT_EULER", "rk4": "mjINT_RK4", "implicit_euler": "mjINT_IMPLICITFAST",
         "explicit_euler": "mjINT_EULER", "symplectic_euler": "mjINT_EULER", "trapezoidal": "mjINT_EULER",
         "bridson_marino": "mjINT_EULER"}

DOUBLE_PENDULUM = """<mujoco model="double_pendulum">
  <option timestep="0.001"/>
  <worldbody>
    <body name="l1">
      <joint name="j1" type="hinge" axis="0 1 0" damping="0.05"/>
      <geom type="capsule" fromto="0 0 0 0 0 -0.5" size="0.02" mass="1"/>
      <body name="l2" pos="0 0 -0.5">
        <joint name="j2" type="hinge" axis="0 1 0" damping="0.05"/>
        <geom type="capsule" fromto="0 0 0 0 0 -0.5" size="0.02" mass="1"/>
      </body>
    </body>
  </worldbody>
</mujoco>"""


def _models(dt):
    """(name, multibody model, MuJoCo model, q0, index map) of the three benchmark models."""
    import mujoco
    m = mujoco.MjModel.from_xml_string(DOUBLE_PENDULUM)
    pend = mb.load_mjcf(m)
    yield "double pendulum", pend, m, np.array([0.8, -0.4])
    for name, floating in (("ur5", False), ("talos", True)):
        path = robot_path(name)
        model = mb.load_urdf(path, floating_base=floating)
        q0 = model.neutral()
        if floating:
            q0[2] = 1.0
        yield name, model, mujoco_from_urdf(path, floating)[0], q0


def _simulators(model, m, q0, dt):
    """(integrator name, Simulator) for every integrator of PEERS that
    takes ``model`` (limits and contact off), with the MuJoCo model ``m``
    switched to the matching integrator before each is yielded."""
    import mujoco
    for integ, peer in PEERS.items():
        m.opt.integrator = getattr(mujoco.mjtIntegrator, peer)
        try:
            yield integ, mb.Simulator(model, dt, integ, q0=q0, limits=False, contact_solver=None)
        except mb.InputError:  # symplectic Euler on a free joint
            continue


def paired_steps(dt=1e-3, steps=200, pairs=41):
    """``Simulator.step()`` against ``mj_step`` with the matching
    integrator (limits and contact off), each pair of blocks of ``steps``
    steps timed back to back; prints the median and quartiles of the
    per-pair ratios."""
    import mujoco

    def block(step):
        t0 = time.perf_counter()
        for _ in range(steps):
            step()
        return (time.perf_counter() - t0) / steps
    for name, model, m, q0 in _models(dt):
        m.opt.timestep = dt
        m.opt.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_LIMIT) | int(mujoco.mjtDisableBit.mjDSBL_CONTACT)
        d = mujoco.MjData(m)
        print(f"\n{name}: Simulator.step / mj_step, median of {pairs} pairs of {steps}-step blocks (quartiles)")
        for integ, sim in _simulators(model, m, q0, dt):
            ratios = []
            for _ in range(pairs + 1):  # the first pair warms up
                mujoco.mj_resetData(m, d)
                sim.reset(q0)
                t_mj = block(lambda: mujoco.mj_step(m, d))
                ratios.append(block(sim.step) / t_mj)
            lo, mid, hi = np.percentile(ratios[1:], [25, 50, 75])
            print(f"  {integ:<20} {mid:5.2f}  ({lo:.2f}-{hi:.2f})")


def every_integrator(dt=1e-3, steps=200):
    """The calls a newcomer times, with each integrator, no limits, no
    contact: ``Simulator.step()`` from a Python loop against ``mj_step``
    with the matching integrator; ``rollout`` without a controller (per
    step) against ``mujoco.rollout`` (one state, the same number of steps);
    and a Python PD controller in the loop (``rollout(controller=...)``
    against a Python loop calling the same controller and ``mj_step``)."""
    import mujoco
    from mujoco import rollout as mj_rollout
    for name, model, m, q0 in _models(dt):
        m.opt.timestep = dt
        m.opt.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_LIMIT) | int(mujoco.mjtDisableBit.mjDSBL_CONTACT)
        d = mujoco.MjData(m)
        print(f"\n{name}: nv {model.nv}; us per step; ratio = multibody / MuJoCo (matching integrator)")
        print(f"  {'integrator':<20}{'mj_step':>9}{'step':>9}{'ratio':>7}{'mj.rollout':>12}{'rollout':>9}"
              f"{'ratio':>7}")
        state0 = np.empty(mujoco.mj_stateSize(m, mujoco.mjtState.mjSTATE_FULLPHYSICS))
        mujoco.mj_resetData(m, d)
        mujoco.mj_getState(m, d, state0, mujoco.mjtState.mjSTATE_FULLPHYSICS)
        for integ, sim in _simulators(model, m, q0, dt):

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
            t_mj_roll = timeit(lambda: mj_rollout.rollout(m, d, state0[None], nstep=steps), blocks=5) / steps
            sim.reset(q0)
            t_roll = timeit(lambda: sim.rollout(steps=steps, progress=False), blocks=5) / steps
            print(f"  {integ:<20}{t_mj * 1e6:9.1f}{t_step * 1e6:9.1f}{t_step / t_mj:7.2f}{t_mj_roll * 1e6:12.1f}"
                  f"{t_roll * 1e6:9.1f}{t_roll / t_mj_roll:7.2f}")
        # a Python PD controller in the loop (semi-implicit Euler / MuJoCo's Euler)
        m.opt.integrator = mujoco.mjtIntegrator.mjINT_EULER
        free = 1 if model.nq != model.nv else 0  # PD on the joints after a free base
        kp, kd = 50.0, 2.0
        q_ref, n_mj = q0[7 * free:].copy(), 7 * free

        def pd(t, q, v):
            tau = np.zeros(v.shape[0])
            tau[6 * free:] = kp * (q_ref - q[7 * free:]) - kd * v[6 * free:]
            return tau
        sim = mb.Simulator(model, dt, "semi_implicit_euler", q0=q0, limits=False, contact_solver=None)

        def mj_pd():
            mujoco.mj_resetData(m, d)
            for _ in range(steps):
                q, v = d.qpos.copy(), d.qvel.copy()
                tau = np.zeros(m.nv)
                tau[6 * free:] = kp * (q_ref - q[n_mj:]) - kd * v[6 * free:]
                d.qfrc_applied[:] = tau
                mujoco.mj_step(m, d)
        t_mj_pd = timeit(mj_pd, blocks=5) / steps
        sim.reset(q0)
        t_pd = timeit(lambda: sim.rollout(steps=steps, controller=pd, progress=False), blocks=5) / steps
        print(f"  Python PD controller: MuJoCo loop {t_mj_pd * 1e6:.1f}, multibody rollout {t_pd * 1e6:.1f} "
              f"us/step, ratio {t_pd / t_mj_pd:.2f}")


def batched(B=64, steps=1000, dt=1e-3):
    """Throughput of batched rollouts: Talos (free base, no limits, no
    contact), B random initial velocities from a standing height, ``steps``
    steps each, semi-implicit Euler, on 1 and 2 threads, against
    ``mujoco.rollout`` (Euler) with as many MjData (threads)."""
    import os
    import mujoco
    from mujoco import rollout as mj_rollout
    path = robot_path("talos")
    model = mb.load_urdf(path, floating_base=True)
    m = mujoco_from_urdf(path, True)[0]
    m.opt.timestep = dt
    m.opt.integrator = mujoco.mjtIntegrator.mjINT_EULER
    m.opt.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_LIMIT) | int(mujoco.mjtDisableBit.mjDSBL_CONTACT)
    rng = np.random.default_rng(0)
    q0 = np.tile(model.neutral(), (B, 1))
    q0[:, 2] = 1.0
    v0 = rng.normal(scale=0.3, size=(B, model.nv))
    sim = mb.Simulator(model, dt, "semi_implicit_euler", limits=False, contact_solver=None)
    d = mujoco.MjData(m)
    nstate = mujoco.mj_stateSize(m, mujoco.mjtState.mjSTATE_FULLPHYSICS)
    state0 = np.empty((B, nstate))
    for b in range(B):  # the same kind of initial states (MuJoCo's own layout; speed only)
        mujoco.mj_resetData(m, d)
        d.qpos[2] = 1.0
        d.qvel[:] = v0[b]
        mujoco.mj_getState(m, d, state0[b], mujoco.mjtState.mjSTATE_FULLPHYSICS)
    print(f"\nbatched rollouts, Talos: {B} states x {steps} steps; us per step (all rollouts), ratio = multibody / "
          f"MuJoCo; {os.cpu_count()} cores")
    for threads in (1, 2):
        datas = [mujoco.MjData(m) for _ in range(threads)]
        t_mj = timeit(lambda: mj_rollout.rollout(m, datas, state0, nstep=steps), blocks=3) / (B * steps)
        t_mb = timeit(lambda: sim.rollout_batch(q0, v0, steps=steps, threads=threads), blocks=3) / (B * steps)
        print(f"  {threads} thread(s): mujoco.rollout {t_mj * 1e6:.2f}, rollout_batch {t_mb * 1e6:.2f}, ratio "
              f"{t_mb / t_mj:.2f}")


def split(sim, q0, t_step):
    """Cost of the parts of one step at the state 10 steps after q0: the
    fused compiled step (τ check, dynamics, integrator, end of step with
    the limits) and the rest (Python)."""
    model = sim.model
    sim.reset(q0)
    for _ in range(10):
        sim.step()
    q, v, tau = sim.state.q, sim.state.v, np.zeros(model.nv)
    f = sim.fused
    q1, v1 = np.empty_like(q), np.empty_like(v)
    t_kernel = timeit(lambda: f._step(f.handle, q, v, tau, q1, v1))
    t_aba = timeit(lambda: mb.aba(model, q, v, tau, data=sim.system.data))
    lim = sim._limit_rows
    active = int((lim.sign * (q1[lim.q_index] - lim.bound) < 0).sum()) if len(lim.sign) else 0
    print(f"  split: fused compiled step {t_kernel * 1e6:.2f} us (mb.aba alone: {t_aba * 1e6:.2f} us; "
          f"{active} limits active), Python {(t_step - t_kernel) * 1e6:.2f} us")


if __name__ == "__main__":
    main()
