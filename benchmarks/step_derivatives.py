"""Derivatives of one simulation step: multibody vs MuJoCo's mjd_transitionFD.

    python benchmarks/step_derivatives.py [--models ur5,talos] [--rounds 3]

Per call from Python, on the same robot loaded in both libraries (URDF;
MuJoCo's model by tests/oracles.py ``mujoco_from_urdf``: no geometry, so no
contact), one random state, gravity, no limits:

- multibody ``Simulator.step_derivatives`` (analytic: the chain rule through
  the step, docs/derivatives.md) for semi_implicit_euler, rk4 and
  implicit_euler;
- multibody's finite-difference fallback
  (``multibody.simulation.step_derivatives.step_derivatives_fd``, the
  path taken with contact: 6nv + 1 steps through the simulator);
- MuJoCo ``mjd_transitionFD`` (centered differences, eps 1e-6) with
  ``mjINT_EULER`` and ``mjINT_IMPLICITFAST`` (it refuses RK4). The URDF
  models have no actuators, so MuJoCo's B (per control) is empty: it
  differentiates in (q, v) only (4nv + 1 steps), multibody in (q, v, τ).

The peers compute the Jacobian of comparable steps (MuJoCo's Euler is
semi-implicit, with the joint damping implicit); ratios are multibody /
MuJoCo's Euler (lower is better), the minimum over interleaved rounds of
the median of timed blocks.
"""
import argparse

import mujoco
import numpy as np

import multibody as mb
from multibody.simulation.step_derivatives import step_derivatives_fd
from _common import robot_path, timeit
from oracles import ROBOTS, mujoco_from_urdf


def run(name, rounds):
    path, floating = robot_path(name), ROBOTS[name][1]
    model = mb.load_urdf(path, floating_base=floating)
    m = mujoco_from_urdf(path, floating)[0]
    d = mujoco.MjData(m)
    rng = np.random.default_rng(0)
    q = model.integrate(model.neutral(), 0.2 * rng.normal(size=model.nv))
    v, tau = rng.normal(size=model.nv), rng.normal(size=model.nv)
    nv = model.nv
    sims = {i: mb.Simulator(model, 1e-3, i, limits=False, contact_solver=None, q0=q, v0=v)
            for i in ("semi_implicit_euler", "rk4", "implicit_euler")}
    A, B = np.zeros((2 * m.nv, 2 * m.nv)), np.zeros((2 * m.nv, m.nu))
    mujoco.mj_resetData(m, d)
    d.qvel[:] = rng.normal(size=m.nv)

    def mujoco_fd(integrator):
        m.opt.integrator = integrator
        m.opt.timestep = 1e-3
        return lambda: mujoco.mjd_transitionFD(m, d, 1e-6, 1, A, B, None, None)

    cases = {f"multibody {i}": (lambda s=s: s.step_derivatives(tau=tau)) for i, s in sims.items()}
    cases["multibody FD fallback (semi_implicit_euler)"] = lambda: step_derivatives_fd(sims["semi_implicit_euler"],
                                                                                          tau=tau)
    cases["MuJoCo mjd_transitionFD Euler"] = mujoco_fd(mujoco.mjtIntegrator.mjINT_EULER)
    cases["MuJoCo mjd_transitionFD implicitfast"] = mujoco_fd(mujoco.mjtIntegrator.mjINT_IMPLICITFAST)
    best = {k: np.inf for k in cases}
    for _ in range(rounds):
        for k, fn in cases.items():
            best[k] = min(best[k], timeit(fn, block_s=0.02, blocks=5))
    print(f"\n{name} (nv = {nv}; MuJoCo nv = {m.nv})")
    peer = "MuJoCo mjd_transitionFD Euler"
    for k, t in best.items():
        ratio = "" if k.startswith("MuJoCo") else f"  ({t / best[peer]:.2f}x MuJoCo's Euler)"
        print(f"  {k:45s} {1e6 * t:10.1f} µs{ratio}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", default="ur5,talos")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    for name in args.models.split(","):
        run(name, args.rounds)


if __name__ == "__main__":
    main()
