"""Derivatives of one simulation step: multibody vs MuJoCo's mjd_transitionFD.

    python benchmarks/step_derivatives.py [--models ur5,talos] [--rounds 3]
        [--contact box,talos] [--threads 2]

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

With contact (``--contact``; empty: skipped): the finite-difference
fallback (6nv + 1 steps) with its perturbed steps one after another
(``batch=False``) and in one ``rollout_batch`` call on 1 and ``--threads``
threads, on a 10 cm box resting on the ground (nv = 6, four contacts, the
UR5's size) and robots standing in their SRDF posture with their lowest
hull vertex 1 mm into the ground (benchmarks/contact_robots.py's scenes),
after 20 steps (warm start, settled contacts); default PGS. MuJoCo's
``mjd_transitionFD`` on the same scene (its default Newton solver, the
same plane and collision meshes; box: an MJCF box on a plane), centered,
eps 1e-6, nu = 0 (4nv + 1 steps).

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


def contact_scene(name):
    """(simulator after 20 steps, MuJoCo model, data at the same state)."""
    if name == "box":
        b = mb.ModelBuilder("box")
        b.add_body("box", joint="free", mass=1.0, inertia=np.eye(3) / 600.0)
        b.add_geometry("box", "box", (0.1, 0.1, 0.1), name="box")
        model, q0 = b.build(), np.array([0, 0, 0.0499, 1, 0, 0, 0])
        m = mujoco.MjModel.from_xml_string(
            "<mujoco><worldbody><geom type='plane' size='10 10 0.1'/><body><freejoint/>"
            "<geom type='box' size='0.05 0.05 0.05' mass='1'/></body></worldbody></mujoco>")
        qadr, vadr = np.arange(7), np.array([3, 4, 5, 0, 1, 2])  # MuJoCo (v_world, ω_body); no rotation here
    else:
        from contact_robots import mujoco_model, scene
        model, q0, _ = scene(name)
        q0[2] -= 0.051  # lowest hull vertex 1 mm into the ground
        m, qadr, vadr = mujoco_model(name, model)
    sim = mb.Simulator(model, 1e-3, ground=True, q0=q0)
    sim.rollout(steps=20)
    m.opt.timestep = 1e-3
    d = mujoco.MjData(m)
    d.qpos[qadr] = q0
    for _ in range(20):
        mujoco.mj_step(m, d)
    return sim, m, d


def run_contact(name, rounds, threads):
    sim, m, d = contact_scene(name)
    nv = sim.model.nv
    contacts = sim.step_derivatives().contacts
    A, B = np.zeros((2 * m.nv, 2 * m.nv)), np.zeros((2 * m.nv, m.nu))
    cases = {"multibody FD sequential (batch=False)": lambda: step_derivatives_fd(sim, batch=False),
             "multibody FD rollout_batch, 1 thread": lambda: step_derivatives_fd(sim, threads=1),
             f"multibody FD rollout_batch, {threads} threads": lambda: step_derivatives_fd(sim, threads=threads),
             "MuJoCo mjd_transitionFD": lambda: mujoco.mjd_transitionFD(m, d, 1e-6, 1, A, B, None, None)}
    best = {k: np.inf for k in cases}
    for _ in range(rounds):
        for k, fn in cases.items():
            best[k] = min(best[k], timeit(fn, block_s=0.05, blocks=5))
    print(f"\n{name} on the ground (nv = {nv}, {contacts} contacts; MuJoCo ncon = {d.ncon})")
    seq = best["multibody FD sequential (batch=False)"]
    for k, t in best.items():
        print(f"  {k:45s} {1e3 * t:10.2f} ms  ({seq / t:.2f}x the sequential fallback)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", default="ur5,talos")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--contact", default="box,talos")
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    for name in filter(None, args.models.split(",")):
        run(name, args.rounds)
    for name in filter(None, args.contact.split(",")):
        run_contact(name, args.rounds, args.threads)


if __name__ == "__main__":
    main()
