"""Cost of the formulations (issue 14): the accelerations of a state by
the reduced articulated-body algorithm (``mb.aba``, with and without a
workspace) and by the maximal coordinates' index-1 KKT system
(``MaximalSystem.acceleration``), and one RKMK4 step on SE(3) of the
maximal state, one velocity-level maximal step (``MaximalSystem.step``,
post-stabilized; Sueda §1.8) and its KKT solve alone by the O(n) tree
elimination and by SuperLU, on revolute chains of 10, 50 and 100 links and on Talos,
against Pinocchio's ABA and MuJoCo's ``mj_step`` (Euler) in the same
process; and how each grows with n (the exponent between 50 and 100 links).

    python benchmarks/formulations.py

REDMAX (Sueda §2) is not built yet. The maximal formulation is NumPy and
SciPy (the per-row blocks assembled in Python): its cost today is that
overhead, not the KKT solve.
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


if __name__ == "__main__":
    main()


# ---------------------------------------------------------------------- REDMAX (appended; run after main)
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


if __name__ == "__main__":
    redmax_rows()
