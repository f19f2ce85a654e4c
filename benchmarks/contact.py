"""Cost of a simulation step with contact: multibody's ``Simulator.step``
and ``rollout`` (per step) against MuJoCo's ``mj_step`` on the same MJCF
scene in one process, and the detection alone (``ContactTable.detect``:
forward kinematics and the narrow phase, called from Python) against
``mj_kinematics`` + ``mj_collision``.

    python benchmarks/contact.py

Scenes (MJCF strings below, loaded by both libraries; everything at rest
or settling on a plane, dt = 1 ms): a sphere resting on a plane, a box
resting on four corners, a stack of five boxes, 27 boxes dropped in a
3x3x3 grid, 27 spheres likewise. multibody solves rigid contact (PGS,
Coulomb cone, speculative contacts), MuJoCo its soft contact (pyramidal
cone, Newton solver, defaults): the physics differ, the work per step is
comparable. Then multibody's soft contact with Newton's method and
MuJoCo's pyramid (``contact_solver="newton"``: MuJoCo's default problem
and solver, trajectories equal to MuJoCo's, tests/contact/test_soft.py)
against the same mj_step, and soft contact by PGS on the Coulomb disk
against MuJoCo with elliptic cones (the same physics where contacts
stick), solved by its default Newton method and by its PGS
(``opt.solver = PGS``: projected Gauss–Seidel against projected
Gauss–Seidel). Timed after 300 settling steps, so that both have their
resting contacts.
"""
import time

import mujoco
import numpy as np

import multibody as mb


def grid(kind, n=3, size=0.1, gap=0.05):
    body = []
    k = 0
    for i in range(n):
        for j in range(n):
            for m in range(n):
                x, y, z = (i - 1) * (2 * size + gap), (j - 1) * (2 * size + gap), size + m * (2 * size + gap)
                geom = f'<geom type="box" size="{size} {size} {size}"/>' if kind == "box" else \
                    f'<geom type="sphere" size="{size}"/>'
                body.append(f'<body name="b{k}" pos="{x} {y} {z + 0.01}"><freejoint/>{geom}</body>')
                k += 1
    return "\n".join(body)


def scene(bodies):
    return f"""<mujoco><option timestep="0.001"/><worldbody>
    <geom name="floor" type="plane" size="10 10 0.1"/>{bodies}</worldbody></mujoco>"""


SCENES = {
    "sphere on a plane": scene('<body pos="0 0 0.1"><freejoint/><geom type="sphere" size="0.1"/></body>'),
    "box on a plane": scene('<body pos="0 0 0.1"><freejoint/><geom type="box" size="0.2 0.15 0.1"/></body>'),
    "stack of 5 boxes": scene("".join(f'<body pos="0 0 {0.1 + 0.2 * i}"><freejoint/>'
                                      f'<geom type="box" size="0.1 0.1 0.1"/></body>' for i in range(5))),
    "27 boxes": scene(grid("box")),
    "27 spheres": scene(grid("sphere")),
}


def per_call(fn, seconds=0.3):
    fn()
    n, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        fn()
        n += 1
    return (time.perf_counter() - t0) / n


def timed_simulator(model, m, **options):
    """(step s, rollout s per step, contacts) of ``mb.Simulator`` on the
    scene after 300 settling steps."""
    # the bodies where the file puts them (MuJoCo's qpos0; the model's neutral q has the free
    # bodies at their parents' origin, inside the floor)
    sim = mb.Simulator(model, dt=1e-3, q0=m.qpos0.copy(), **options)
    sim.rollout(steps=300)
    contacts = sim.contact.count
    cp = sim.checkpoint()
    t_step = per_call(sim.step)
    sim.restore(cp)
    n = 500
    sim.rollout(steps=n)
    sim.restore(cp)
    t0 = time.perf_counter()
    sim.rollout(steps=n)
    return t_step, (time.perf_counter() - t0) / n, contacts


def timed_mujoco(m):
    """(mj_step s, contacts) after 300 settling steps."""
    d = mujoco.MjData(m)
    for _ in range(300):
        mujoco.mj_step(m, d)
    return per_call(lambda: mujoco.mj_step(m, d)), d.ncon


def timed_detection(model, m):
    """(multibody's detection s, MuJoCo's s) at the scene's configuration
    after 300 settling steps: ``ContactTable.detect(q)`` (forward kinematics
    and the narrow phase, from Python) against ``mj_kinematics`` +
    ``mj_collision``."""
    d = mujoco.MjData(m)
    for _ in range(300):
        mujoco.mj_step(m, d)
    sim = mb.Simulator(model, dt=1e-3, q0=d.qpos.copy())
    q = d.qpos.copy()

    def mj():
        mujoco.mj_kinematics(m, d)
        mujoco.mj_collision(m, d)
    return per_call(lambda: sim.contact.detect(q)), per_call(mj)


def main():
    print("rigid: multibody's default (PGS, Coulomb disk) against mj_step (MuJoCo's defaults: pyramidal cone,"
          " Newton);\nnewton: contact_solver='newton' (soft contact, MuJoCo's pyramid: the same problem as MuJoCo's"
          " defaults);\nsoft PGS: contact_model='soft' (Coulomb disk) against mj_step with cone='elliptic'")
    print(f"{'scene':<20} {'contacts':>8} {'rigid us':>9} {'rollout us':>11} {'mj_step us':>11} {'ratio':>6} "
          f"{'newton us':>10} {'ratio':>6} {'soft PGS us':>12} {'mj ellip. us':>12} {'ratio':>6} "
          f"{'mj PGS us':>10} {'ratio':>6}")
    for name, xml in SCENES.items():
        model = mb.load_mjcf(xml)
        m = mujoco.MjModel.from_xml_string(xml)
        t_step, t_roll, contacts = timed_simulator(model, m)
        t_newton, _, _ = timed_simulator(model, m, contact_solver="newton")
        t_soft, _, _ = timed_simulator(model, m, contact_model="soft")
        t_mj, ncon = timed_mujoco(m)
        m.opt.cone = mujoco.mjtCone.mjCONE_ELLIPTIC
        t_el, _ = timed_mujoco(m)
        m.opt.solver = mujoco.mjtSolver.mjSOL_PGS
        t_pgs, _ = timed_mujoco(m)
        print(f"{name:<20} {contacts:>8d} {1e6 * t_step:>9.2f} {1e6 * t_roll:>11.2f} {1e6 * t_mj:>11.2f} "
              f"{t_step / t_mj:>6.2f} {1e6 * t_newton:>10.2f} {t_newton / t_mj:>6.2f} {1e6 * t_soft:>12.2f} "
              f"{1e6 * t_el:>12.2f} {t_soft / t_el:>6.2f} {1e6 * t_pgs:>10.2f} {t_soft / t_pgs:>6.2f}"
              f"   (MuJoCo: {ncon} contacts)")
    print(f"\n{'detection alone':<20} {'multibody us':>12} {'MuJoCo us':>10} {'ratio':>6}")
    for name, xml in SCENES.items():
        ours, theirs = timed_detection(mb.load_mjcf(xml), mujoco.MjModel.from_xml_string(xml))
        print(f"{name:<20} {1e6 * ours:>12.2f} {1e6 * theirs:>10.2f} {ours / theirs:>6.2f}")


if __name__ == "__main__":
    main()
