"""Biomechanics and deformables benchmarks.

Muscle arm (``muscle_rows``): an elbow moved by a flexor and an extensor,
MuJoCo muscle actuators on spatial tendons through via sites (the MJCF
``ELBOW_XML`` below: 1 DoF, 2 tendons, 2 activations), loaded by
``mb.load_mjcf`` and stepped by ``Simulator.step`` with held controls, and
the same file stepped by MuJoCo's ``mj_step`` in the same process, for each
integrator pair (semi-implicit Euler ↔ MuJoCo's Euler with ``eulerdamp``
off, implicit Euler ↔ implicitfast, RK4 ↔ RK4). Both libraries compute the
same trajectory (the Euler pair bitwise: tests/io/test_mjcf_actuators.py
checks the actuator models against MuJoCo).

Cloth (``cloth_rows``): the step cost of a 30 × 30 mass-spring cloth hanging
from a bar on a revolute joint (examples/cloth.py: 900 particles, 5102
springs — structural, both shear diagonals, bend — 2611 reduced DoFs) with
multibody's linearly implicit Euler at h = 10 ms (attachments eliminated;
the default solve — the free particles' block by the sparse Cholesky
factorization of multibody.solvers.sparse_cholesky, symbolic analysis once,
the bar's DoF by its Schur complement — and, for comparison, SuperLU on the
whole reduced matrix, ``solver="lu"``, the solve before), and the same cloth
in MuJoCo: ``<flexcomp type="grid" dim="2">``
with the top row pinned to the bar (2611 DoFs too), a membrane
``<elasticity>`` of comparable stiffness (E·thickness = the springs' k,
Poisson 0.2, ``elastic2d="stretch"``), no contacts, ``integrator="discrete"``
(MuJoCo 4 refuses flex elasticity under implicit/implicitfast), h = 10 ms.
The two models are not the same discretization (triangle membrane vs
springs; MuJoCo has no bend term here): the rows compare the cost of one
stable 10 ms step of a cloth of this size.

    python benchmarks/biomech.py            # prints both tables
    python benchmarks/biomech.py cloth      # the cloth table only
"""
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "examples"))


def _median_step(step, warm=3, reps=15):
    for _ in range(warm):
        step()
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        step()
        ts.append(time.perf_counter() - t0)
    return float(np.median(ts))


ELBOW_XML = """<mujoco model="elbow_muscles">
  <option timestep="0.002" integrator="Euler"><flag contact="disable" eulerdamp="disable"/></option>
  <worldbody>
    <site name="flex_origin" pos="0.02 0.25 0"/><site name="flex_via" pos="0.03 0 0"/>
    <site name="ext_origin" pos="-0.02 0.25 0"/><site name="ext_via" pos="-0.025 0 0"/>
    <body name="forearm">
      <joint name="elbow" type="hinge" axis="0 0 1" damping="0.2"/>
      <inertial pos="0 -0.15 0" mass="1.5" diaginertia="0.012 0.001 0.012"/>
      <site name="flex_insertion" pos="0.015 -0.05 0"/><site name="ext_insertion" pos="-0.02 -0.02 0"/>
    </body>
  </worldbody>
  <tendon>
    <spatial name="flexor_path"><site site="flex_origin"/><site site="flex_via"/><site site="flex_insertion"/></spatial>
    <spatial name="extensor_path"><site site="ext_origin"/><site site="ext_via"/><site site="ext_insertion"/></spatial>
  </tendon>
  <actuator>
    <muscle name="flexor" tendon="flexor_path" force="400" lengthrange="0.24 0.32"/>
    <muscle name="extensor" tendon="extensor_path" force="300" lengthrange="0.25 0.33"/>
  </actuator>
</mujoco>"""


def muscle_rows(steps=50, pairs=101, control=(0.6, 0.2)):
    """Rows ``(integrator, µs per Simulator.step, µs per mj_step, ratio,
    rollout ratio, max |q - qpos| after 2000 steps)`` of the muscle-arm
    benchmark (module docstring): both start at q = 0.3 rad at rest with the
    controls held. Blocks of ``steps`` steps of the two libraries are timed
    back to back from the same start (a block of RK4 steps is short enough
    not to be split by the scheduler of a shared machine), ``pairs`` times:
    the times are the medians, the ratio the median of the per-pair ratios
    (ratios of blocks taken together are what is stable on a loaded VM).
    The rollout ratio is ``Simulator.rollout`` (one compiled loop) against
    ``mujoco.rollout``, the same way."""
    import mujoco
    from mujoco import rollout as mj_rollout
    import multibody as mb
    model = mb.load_mjcf(ELBOW_XML)
    pairs_ = (("semi_implicit_euler", mujoco.mjtIntegrator.mjINT_EULER),
              ("implicit_euler", mujoco.mjtIntegrator.mjINT_IMPLICITFAST),
              ("rk4", mujoco.mjtIntegrator.mjINT_RK4))
    u = np.asarray(control, dtype=float)
    rows = []
    for name, mj_integrator in pairs_:
        sim = mb.Simulator(model, 0.002, integrator=name)
        sim.control = u
        m = mujoco.MjModel.from_xml_string(ELBOW_XML)
        m.opt.integrator = mj_integrator
        d = mujoco.MjData(m)

        def start():
            sim.reset(q=np.array([0.3]))
            mujoco.mj_resetData(m, d)
            d.qpos[0] = 0.3
            d.ctrl[:] = control

        start()
        for _ in range(2000):
            sim.step()
            mujoco.mj_step(m, d)
        dq = float(np.abs(sim.state.q - d.qpos).max())
        start()
        state0 = np.empty(mujoco.mj_stateSize(m, mujoco.mjtState.mjSTATE_FULLPHYSICS))
        mujoco.mj_getState(m, d, state0, mujoco.mjtState.mjSTATE_FULLPHYSICS)
        ctrl = np.tile(u, (steps, 1))[None]
        ours, theirs, ratios, rollouts = [], [], [], []
        for p in range(pairs + 1):  # the first pair warms up
            start()
            t0 = time.perf_counter()
            for _ in range(steps):
                sim.step()
            t1 = time.perf_counter()
            for _ in range(steps):
                mujoco.mj_step(m, d)
            t2 = time.perf_counter()
            start()
            sim.rollout(steps=steps, progress=False)
            t3 = time.perf_counter()
            mj_rollout.rollout(m, d, state0[None], control=ctrl, nstep=steps)
            t4 = time.perf_counter()
            if p:
                ours.append((t1 - t0) / steps)
                theirs.append((t2 - t1) / steps)
                ratios.append((t1 - t0) / (t2 - t1))
                rollouts.append((t3 - t2) / (t4 - t3))
        rows.append((name, 1e6 * np.median(ours), 1e6 * np.median(theirs), float(np.median(ratios)),
                     float(np.median(rollouts)), dq))
    return rows


def mujoco_cloth_xml(n=30, size=0.6, mass=0.3, k=None, damping=0.02, dt=0.01):
    d = size / (n - 1)
    k = 20.0 * n if k is None else k
    return f"""<mujoco><option timestep="{dt}" integrator="discrete" gravity="0 0 -9.81"/>
<worldbody><body name="bar"><joint name="hinge" type="hinge" axis="1 0 0" damping="0.01"/>
<inertial pos="{size / 2} 0 -0.05" mass="1" diaginertia="0.001 0.03 0.03"/>
<flexcomp name="cloth" type="grid" dim="2" count="{n} {n} 1" spacing="{d} {d} {d}" pos="{size / 2} {size / 2} -0.05"
 mass="{mass}" radius="0.001">
<contact contype="0" conaffinity="0" selfcollide="none"/>
<elasticity young="{k * 1000}" poisson="0.2" thickness="1e-3" elastic2d="stretch" damping="{damping}"/>
<pin gridrange="0 0 {n - 1} 0"/>
</flexcomp></body></worldbody></mujoco>"""


def cloth_rows(n=30, h=0.01):
    """Rows ``(name, DoFs, ms per step, ratio to MuJoCo)`` of the cloth
    benchmark (module docstring)."""
    import cloth
    rows = []
    ps, _ = cloth.build(n)
    nz = ps.nv + 3 * len(ps.free)
    for label, kw in (("multibody implicit Euler, sparse Cholesky", {}),
                      ("multibody implicit Euler, SuperLU (solver='lu')", {"solver": "lu"}),
                      ("multibody implicit Euler, exact K", {"stiffness": "exact"}),
                      ("multibody semi-implicit Euler (unstable at 10 ms)", {"method": "semi_implicit"})):
        ps, _ = cloth.build(n)
        try:
            t = _median_step(lambda: ps.step(h, **kw))
        except Exception as exc:          # noqa: BLE001 — an unstable step is a result, reported as such
            rows.append((label, nz, float("nan"), type(exc).__name__))
            continue
        rows.append((label, nz, 1e3 * t, None))
    try:
        import mujoco
    except ImportError:
        return rows
    m = mujoco.MjModel.from_xml_string(mujoco_cloth_xml(n, dt=h))
    d = mujoco.MjData(m)
    d.qvel[0] = 2.0
    t_mj = _median_step(lambda: mujoco.mj_step(m, d))
    rows.append((f"MuJoCo {mujoco.__version__} flexcomp, discrete", m.nv, 1e3 * t_mj, None))
    return [(a, b, c, (c / (1e3 * t_mj) if e is None else e)) for a, b, c, e in rows]


def main(argv=None):
    parts = sys.argv[1:] if argv is None else argv           # "muscle", "cloth" (default: both)
    if parts and "muscle" not in parts:
        return cloth_table()
    print("muscle arm (MJCF: 2 muscle actuators on spatial tendons with via sites), one step of 2 ms, "
          "controls held; median of 101 pairs of 50-step blocks")
    print(f"{'integrator':22s} {'us/step':>9s} {'MuJoCo us':>10s} {'ratio':>7s} {'rollout':>8s} {'|q - qpos|':>11s}")
    for name, ours, theirs, ratio, roll, dq in muscle_rows():
        print(f"{name:22s} {ours:9.2f} {theirs:10.2f} {ratio:7.2f} {roll:8.2f} {dq:11.2e}")
    print()
    if parts and "cloth" not in parts:
        return
    cloth_table()


def cloth_table():
    print("cloth 30x30 hanging from a swinging bar, one step of 10 ms (median of 15 after 3 warm-up steps)")
    print(f"{'':54s} {'DoFs':>6s} {'ms/step':>9s} {'/ MuJoCo':>9s}")
    for name, nz, ms, ratio in cloth_rows():
        r = ratio if isinstance(ratio, str) else f"{ratio:9.2f}"
        print(f"{name:54s} {nz:6d} {ms:9.2f} {r:>9s}")


if __name__ == "__main__":
    main()
