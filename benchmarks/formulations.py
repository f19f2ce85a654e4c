"""Cost of the formulations (issue 14), in the same process as Pinocchio
and MuJoCo, on revolute chains of 10, 50 and 100 links and on Talos:

1. one state's accelerations by the reduced articulated-body algorithm
   (``mb.aba``, with and without a workspace), by the maximal coordinates'
   index-1 KKT system (``MaximalSystem.acceleration``), one RKMK4 step on
   SE(3) of the maximal state, one velocity-level maximal step
   (``MaximalSystem.step``, post-stabilized; Sueda §1.8) and its KKT solve
   alone by the O(n) tree elimination and by SuperLU, against Pinocchio's
   ABA and MuJoCo's ``mj_step`` (Euler);
2. REDMAX (Sueda §2): ``acceleration`` (dense M_r = JᵀM_mJ and Cholesky),
   Kim's recursive hybrid dynamics (Alg. 9) and the O(n) linearly implicit
   step (Alg. 5, 6, 10), and the dense acceleration on chains up to 800
   links, where its O(n³) shows;
3. what a user runs: ``Simulator(model, dt, formulation=...).step()`` for
   each formulation and its integrators.

Growth exponents are between 50 and 100 links (log₂ of the ratio).

    python benchmarks/formulations.py

The maximal and REDMAX formulations are NumPy and SciPy with per-body
Python loops: below a few hundred bodies their cost is that overhead, not
their linear algebra.
"""
import os
import tempfile
import warnings

import numpy as np
import pinocchio as pin

import multibody as mb
from _common import robot_path, timeit
from oracles import mujoco_from_urdf, urdf_chain
from multibody.formulations import MaximalSystem
from multibody.integrators.lie import RKMK


def models(name):
    """(multibody model, Pinocchio model, MuJoCo model) of ``name``: "chainN"
    (tests/oracles.urdf_chain) or "talos" (floating base)."""
    import mujoco
    if name.startswith("chain"):
        path = os.path.join(tempfile.mkdtemp(), f"{name}.urdf")
        with open(path, "w") as f:
            f.write(urdf_chain(int(name[5:])))
        floating = False
    else:
        path, floating = robot_path(name), True
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mb.ModelWarning)
        model = mb.load_urdf(path, floating_base=floating)
    pm = pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer()) if floating else pin.buildModelFromUrdf(path)
    m = mujoco_from_urdf(path, floating_base=floating)[0]
    m.opt.timestep = 1e-3
    m.opt.integrator = mujoco.mjtIntegrator.mjINT_EULER
    m.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_LIMIT | mujoco.mjtDisableBit.mjDSBL_CONTACT
    return model, pm, m


def main():
    import mujoco
    print(f"{'model':>9} {'nv':>4} | {'aba ws':>8} {'aba':>8} {'pin aba':>8} {'mj_step':>8} | "
          f"{'maximal':>9} {'RKMK4 se3':>10} {'step':>9} {'kkt tree':>9} {'kkt splu':>9} {'rows':>5}   (us per call)")
    results = {}
    for name in ("chain10", "chain50", "chain100", "talos"):
        model, pm, m = models(name)
        rng = np.random.default_rng(0)
        q = model.integrate(model.neutral(), 0.3 * rng.normal(size=model.nv))
        v, tau = rng.normal(size=model.nv), rng.normal(size=model.nv)
        ws = mb.Data(model)
        t_ws = timeit(lambda: mb.aba(model, q, v, tau, data=ws))
        t_aba = timeit(lambda: mb.aba(model, q, v, tau))
        pd = pm.createData()
        qp = pin.neutral(pm)
        t_pin = timeit(lambda: pin.aba(pm, pd, qp, v, tau))
        d = mujoco.MjData(m)
        t_mj = timeit(lambda: mujoco.mj_step(m, d))
        system = MaximalSystem(model)
        C, V = system.state(q, v)
        t_max = timeit(lambda: system.acceleration(C, V, tau), blocks=11)
        rkmk = RKMK(4, "se3")
        t_rk = timeit(lambda: rkmk.step_maximal(system, C, V, tau, 1e-3), blocks=5)
        t_step = timeit(lambda: system.step(C, V, tau, 1e-3), blocks=5)
        rel, b, c = system.relatives(C), rng.normal(size=(system.n, 6)), np.zeros(system.rows)
        t_tree = timeit(lambda: system._velocity_solve(system.inertia, {}, rel, {}, b, c, True), blocks=11)
        t_splu = timeit(lambda: system._velocity_solve(system.inertia, {}, rel, {}, b, c, False), blocks=11)
        results[name] = (t_ws, t_aba, t_pin, t_mj, t_max, t_rk, t_step, t_tree, t_splu)
        print(f"{name:>9} {model.nv:4d} | {t_ws * 1e6:8.2f} {t_aba * 1e6:8.2f} {t_pin * 1e6:8.2f} {t_mj * 1e6:8.2f} | "
              f"{t_max * 1e6:9.1f} {t_rk * 1e6:10.1f} {t_step * 1e6:9.1f} {t_tree * 1e6:9.1f} {t_splu * 1e6:9.1f} "
              f"{system.rows:5d}")
    labels = ("aba ws", "aba", "pin aba", "mj_step", "maximal", "RKMK4 se3", "step", "kkt tree", "kkt splu")
    growth = np.log(np.array(results["chain100"]) / np.array(results["chain50"])) / np.log(2.0)
    print("growth exponent from 50 to 100 links: " + ", ".join(f"{l} {g:.2f}" for l, g in zip(labels, growth)))


def redmax_rows():
    """REDMAX (Sueda §2, formulations/redmax.py) on the same models and
    states: ``acceleration`` (dense M_r = JᵀM_mJ and Cholesky, O(n³)),
    Kim's recursive hybrid dynamics (Alg. 9, O(n)) and one linearly
    implicit step by the O(n) products and RFD (Alg. 5, 6, 10), against
    ``mb.aba``; Python loops per body, so the ratio is the interpreter's."""
    from multibody.formulations import RedmaxSystem
    print(f"{'model':>9} {'nv':>4} | {'aba':>8} | {'redmax':>9} {'kim':>9} {'step O(n)':>10} {'redmax/aba':>11}"
          f"   (us per call)")
    results = {}
    for name in ("chain10", "chain50", "chain100", "talos"):
        model = models(name)[0]
        rng = np.random.default_rng(0)
        q = model.integrate(model.neutral(), 0.3 * rng.normal(size=model.nv))
        v, tau = rng.normal(size=model.nv), rng.normal(size=model.nv)
        system = RedmaxSystem(model, joint_damping=False, joint_stiffness=False)
        t_aba = timeit(lambda: mb.aba(model, q, v, tau))
        t_rm = timeit(lambda: system.acceleration(q, v, tau), blocks=11)
        t_kim = timeit(lambda: system.recursive_hybrid_dynamics(q, v, tau), blocks=5)
        t_step = timeit(lambda: system.step(q, v, tau, 1e-3, method="recursive"), blocks=5)
        results[name] = (t_aba, t_rm, t_kim, t_step)
        print(f"{name:>9} {model.nv:4d} | {t_aba * 1e6:8.2f} | {t_rm * 1e6:9.1f} {t_kim * 1e6:9.1f} "
              f"{t_step * 1e6:10.1f} {t_rm / t_aba:11.0f}")
    growth = np.log(np.array(results["chain100"]) / np.array(results["chain50"])) / np.log(2.0)
    print("growth exponent from 50 to 100 links: " + ", ".join(
        f"{l} {g:.2f}" for l, g in zip(("aba", "redmax", "kim", "step O(n)"), growth)))


def redmax_growth(sizes=(100, 200, 400, 800)):
    """REDMAX's dense acceleration on long chains: the O(n³) of forming
    M_r = JᵀM_mJ (J is 6n × n) and factoring it overtakes the per-body
    Python loops; the exponent between successive sizes."""
    from multibody.formulations import RedmaxSystem
    print(f"{'links':>6} | {'redmax':>10} {'aba':>8}   (us per call; exponent vs the previous size)")
    last = None
    for n in sizes:
        model = models(f"chain{n}")[0]
        rng = np.random.default_rng(0)
        q = 0.3 * rng.normal(size=model.nv)
        v, tau = rng.normal(size=model.nv), rng.normal(size=model.nv)
        system = RedmaxSystem(model, joint_damping=False, joint_stiffness=False)
        t_rm = timeit(lambda: system.acceleration(q, v, tau), blocks=3)
        t_aba = timeit(lambda: mb.aba(model, q, v, tau))
        exponent = "" if last is None else f"  exponent {np.log(t_rm / last[1]) / np.log(n / last[0]):.2f}"
        print(f"{n:6d} | {t_rm * 1e6:10.0f} {t_aba * 1e6:8.1f}{exponent}")
        last = (n, t_rm)


RUNS = (("reduced", "semi_implicit_euler"), ("reduced", "rk4"), ("redmax", "semi_implicit_euler"),
        ("redmax", "rk4"), ("redmax", "implicit_euler"), ("maximal", "semi_implicit_euler"), ("maximal", "rkmk4"))


def simulator_rows():
    """``Simulator.step`` as a newcomer writes it, per formulation and
    integrator (dt = 1 ms; contact and limits off in both, as the MuJoCo model), against MuJoCo's
    ``mj_step`` (Euler)."""
    import mujoco
    short = {"semi_implicit_euler": "sie", "implicit_euler": "implicit"}
    print(f"{'model':>9} | " + " ".join(f"{f + ' ' + short.get(i, i):>16}" for f, i in RUNS)
          + f" {'mj_step':>9}   (us per step)")
    for name in ("chain10", "chain50", "talos"):
        model, _, m = models(name)
        times = []
        for formulation, integrator in RUNS:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                sim = mb.Simulator(model, 1e-3, integrator=integrator, formulation=formulation, limits=False,
                                   contact_solver=None)  # as the MuJoCo model: no contact, no limits
            times.append(timeit(sim.step, blocks=5))
        d = mujoco.MjData(m)
        t_mj = timeit(lambda: mujoco.mj_step(m, d))
        print(f"{name:>9} | " + " ".join(f"{t * 1e6:16.1f}" for t in times) + f" {t_mj * 1e6:9.1f}")


if __name__ == "__main__":
    main()
    redmax_rows()
    redmax_growth()
    simulator_rows()
