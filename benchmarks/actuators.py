"""Actuated steps: ``Simulator.step`` with the model file's actuators
against the same simulator without them and against MuJoCo's ``mj_step``
on the same MJCF (with and without its actuators), in one process.

    python benchmarks/actuators.py [--pairs 41] [--steps 200]

Models (limits and contact off in both libraries, controls held at random
values, which makes the activations move):

* ``arm``: the oracle test's model (tests/io/test_mjcf_actuators.py):
  3 DoF (two hinges and a slide), 9 actuators — a motor with gear and
  ctrlrange, a position servo, a velocity servo, a filter actuator, an
  affine actuator on a fixed tendon, a position servo with a time
  constant, an integrated-velocity servo with actearly, a muscle and a
  filter with actearly (5 activations); dt = 2 ms;
* ``chain20``: a 20-hinge chain with a position servo and a motor on
  every joint (40 actuators, no activations).

For each integrator pair (semi-implicit Euler ↔ MuJoCo's Euler, RK4 ↔
RK4, implicit Euler ↔ implicitfast, which also takes the actuators'
derivatives), blocks of ``steps`` steps of the four variants are timed
back to back, ``pairs`` times; the table gives the median µs per step and
the ratios of the medians of the per-block ratios (a shared VM drifts:
ratios of blocks taken together are what is stable). ``rollout``: the
compiled loop with a (steps, nu) control table against ``mujoco.rollout``
with the same controls.
"""
import argparse
import importlib.util
import os
import time

import numpy as np

import multibody as mb

def arm_xml():
    """The oracle test's arm (tests/io/test_mjcf_actuators.py, JOINTS_ONLY;
    dt = 2 ms, MuJoCo's Euler without its implicit joint damping), loaded
    from that file."""
    path = os.path.join(os.path.dirname(__file__), "..", "tests", "io", "test_mjcf_actuators.py")
    spec = importlib.util.spec_from_file_location("mjcf_actuator_cases", path)
    cases = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(cases)
    return cases.JOINTS_ONLY


def chain_xml(n=20):
    body = ""
    for k in reversed(range(n)):
        body = (f'<body name="l{k}" pos="0 0 {-0.1 if k else 0}"><joint name="j{k}" axis="{"010" if k % 2 else "100"}"'
                f' damping="0.05"/><geom type="capsule" fromto="0 0 0 0 0 -0.1" size="0.02" mass="0.5"/>{body}</body>')
    body = body.replace('axis="010"', 'axis="0 1 0"').replace('axis="100"', 'axis="1 0 0"')
    acts = "".join(f'<position name="p{k}" joint="j{k}" kp="20" kv="0.5"/><motor name="m{k}" joint="j{k}" '
                   f'ctrlrange="-1 1"/>' for k in range(n))
    return (f'<mujoco model="chain{n}"><option timestep="0.001"><flag contact="disable" limit="disable"/></option>'
            f'<worldbody>{body}</worldbody><actuator>{acts}</actuator></mujoco>')


def without_actuators(xml):
    start, end = xml.index("<actuator>"), xml.index("</actuator>") + len("</actuator>")
    return xml[:start] + xml[end:]


PAIRS = {"semi_implicit_euler": "mjINT_EULER", "rk4": "mjINT_RK4", "implicit_euler": "mjINT_IMPLICITFAST"}


def block(step, steps):
    t0 = time.perf_counter()
    for _ in range(steps):
        step()
    return (time.perf_counter() - t0) / steps


def run(name, xml, pairs, steps):
    import mujoco
    from mujoco import rollout as mj_rollout
    m_act = mujoco.MjModel.from_xml_string(xml)
    m_none = mujoco.MjModel.from_xml_string(without_actuators(xml))
    model = mb.load_mjcf(xml)
    rng = np.random.default_rng(0)
    u = rng.uniform(-1, 1, m_act.nu)
    print(f"\n{name}: nv {model.nv}, nu {m_act.nu}, na {m_act.na}; µs per step (median), ratios of per-block ratios")
    print(f"  {'integrator':<20}{'mb act':>8}{'mb none':>9}{'mj act':>8}{'mj none':>9}{'act/none':>10}{'mb/mj act':>11}"
          f"{'mb/mj none':>12}")
    for integ, peer in PAIRS.items():
        for m in (m_act, m_none):
            m.opt.integrator = getattr(mujoco.mjtIntegrator, peer)
        d_act, d_none = mujoco.MjData(m_act), mujoco.MjData(m_none)
        d_act.ctrl[:] = u
        dt = m_act.opt.timestep
        sim_act = mb.Simulator(model, dt, integ, limits=False, contact_solver=None)
        sim_none = mb.Simulator(model, dt, integ, limits=False, contact_solver=None, actuators=())
        sim_act.control = u
        rows = []
        for _ in range(pairs + 1):  # the first round warms up
            sim_act.reset()
            sim_none.reset()
            mujoco.mj_resetData(m_act, d_act)
            mujoco.mj_resetData(m_none, d_none)
            d_act.ctrl[:] = u
            rows.append((block(sim_act.step, steps), block(sim_none.step, steps),
                         block(lambda: mujoco.mj_step(m_act, d_act), steps),
                         block(lambda: mujoco.mj_step(m_none, d_none), steps)))
        t = np.array(rows[1:])
        med = np.median(t, axis=0) * 1e6
        r = np.median(t[:, 0] / t[:, 1]), np.median(t[:, 0] / t[:, 2]), np.median(t[:, 1] / t[:, 3])
        print(f"  {integ:<20}{med[0]:8.2f}{med[1]:9.2f}{med[2]:8.2f}{med[3]:9.2f}{r[0]:10.2f}{r[1]:11.2f}{r[2]:12.2f}")
    # rollouts with a control table (semi-implicit Euler / Euler)
    m_act.opt.integrator = mujoco.mjtIntegrator.mjINT_EULER
    n = 1000
    U = np.repeat(rng.uniform(-1, 1, (n // 10, m_act.nu)), 10, axis=0)
    d = mujoco.MjData(m_act)
    state0 = np.empty(mujoco.mj_stateSize(m_act, mujoco.mjtState.mjSTATE_FULLPHYSICS))
    mujoco.mj_getState(m_act, d, state0, mujoco.mjtState.mjSTATE_FULLPHYSICS)
    sim = mb.Simulator(model, m_act.opt.timestep, limits=False, contact_solver=None)
    ratios, ours, theirs = [], [], []
    for _ in range(max(6, pairs // 4)):
        sim.reset()
        t0 = time.perf_counter()
        sim.rollout(steps=n, control=U, progress=False)
        t1 = time.perf_counter()
        mj_rollout.rollout(m_act, d, state0[None], U[None], nstep=n)
        t2 = time.perf_counter()
        ours.append((t1 - t0) / n)
        theirs.append((t2 - t1) / n)
        ratios.append(ours[-1] / theirs[-1])
    print(f"  rollout with a control table ({n} steps): multibody {np.median(ours[1:]) * 1e6:.2f}, mujoco.rollout "
          f"{np.median(theirs[1:]) * 1e6:.2f} µs/step, ratio {np.median(ratios[1:]):.2f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pairs", type=int, default=41)
    ap.add_argument("--steps", type=int, default=200)
    args = ap.parse_args()
    run("arm", arm_xml(), args.pairs, args.steps)
    run("chain20", chain_xml(20), args.pairs, args.steps)


if __name__ == "__main__":
    main()
