"""Cost of a simulation step with contact: multibody's ``Simulator.step``
and ``rollout`` (per step) against MuJoCo's ``mj_step`` on the same MJCF
scene in one process, and the detection alone against ``mj_collision``.

    python benchmarks/contact.py

Scenes (MJCF strings below, loaded by both libraries; everything at rest
or settling on a plane, dt = 1 ms): a sphere resting on a plane, a box
resting on four corners, a stack of five boxes, 27 boxes dropped in a
3x3x3 grid, 27 spheres likewise. multibody solves rigid contact (PGS,
Coulomb cone, speculative contacts), MuJoCo its soft contact (pyramidal
cone, Newton solver, defaults): the physics differ, the work per step is
comparable. Then multibody's soft contact (the same PGS on MuJoCo's
regularized problem) against MuJoCo with elliptic cones: the same
physics where contacts stick (tests/contact/test_soft.py). Timed after 300 settling steps, so that both have their
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


def main():
    print("rigid: multibody's default (PGS, Coulomb disk) against mj_step (MuJoCo's defaults: pyramidal cone,"
          " Newton);\nsoft: contact_model='soft' (PGS) against mj_step with cone='elliptic' (the same problem)")
    print(f"{'scene':<20} {'contacts':>8} {'rigid us':>9} {'rollout us':>11} {'mj_step us':>11} {'ratio':>6} "
          f"{'soft us':>9} {'mj ellip. us':>12} {'ratio':>6}")
    for name, xml in SCENES.items():
        model = mb.load_mjcf(xml)
        m = mujoco.MjModel.from_xml_string(xml)
        t_step, t_roll, contacts = timed_simulator(model, m)
        t_soft, _, _ = timed_simulator(model, m, contact_model="soft")
        t_mj, ncon = timed_mujoco(m)
        m.opt.cone = mujoco.mjtCone.mjCONE_ELLIPTIC
        t_el, _ = timed_mujoco(m)
        print(f"{name:<20} {contacts:>8d} {1e6 * t_step:>9.2f} {1e6 * t_roll:>11.2f} {1e6 * t_mj:>11.2f} "
              f"{t_step / t_mj:>6.2f} {1e6 * t_soft:>9.2f} {1e6 * t_el:>12.2f} {t_soft / t_el:>6.2f}"
              f"   (MuJoCo: {ncon} contacts)")


if __name__ == "__main__":
    main()
