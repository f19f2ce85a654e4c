"""Biomechanics and deformables benchmarks.

Cloth (``cloth_rows``): the step cost of a 30 × 30 mass-spring cloth hanging
from a bar on a revolute joint (examples/cloth.py: 900 particles, 5102
springs — structural, both shear diagonals, bend — 2611 reduced DoFs) with
multibody's linearly implicit Euler at h = 10 ms (attachments eliminated,
sparse LU), and the same cloth in MuJoCo: ``<flexcomp type="grid" dim="2">``
with the top row pinned to the bar (2611 DoFs too), a membrane
``<elasticity>`` of comparable stiffness (E·thickness = the springs' k,
Poisson 0.2, ``elastic2d="stretch"``), no contacts, ``integrator="discrete"``
(MuJoCo 4 refuses flex elasticity under implicit/implicitfast), h = 10 ms.
The two models are not the same discretization (triangle membrane vs
springs; MuJoCo has no bend term here): the rows compare the cost of one
stable 10 ms step of a cloth of this size.

    python benchmarks/biomech.py            # prints the table
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
    for label, kw in (("multibody implicit Euler, sparse LU", {}),
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


def main():
    print("cloth 30x30 hanging from a swinging bar, one step of 10 ms (median of 15 after 3 warm-up steps)")
    print(f"{'':54s} {'DoFs':>6s} {'ms/step':>9s} {'/ MuJoCo':>9s}")
    for name, nz, ms, ratio in cloth_rows():
        r = ratio if isinstance(ratio, str) else f"{ratio:9.2f}"
        print(f"{name:54s} {nz:6d} {ms:9.2f} {r:>9s}")


if __name__ == "__main__":
    main()
