"""Cost of Drumwright's compliant constraints (docs/drumwright.md):

    python benchmarks/drumwright.py [--quick] [--limit 600]

1. The contact scenes of benchmarks/contact.py (a sphere and a box at
   rest, a stack of five boxes, 27 boxes, 27 spheres; dt = 1 ms):
   ``Simulator.step`` with ``contact_solver="drumwright"`` (the defaults:
   K = 1e15, B = 1, B_t = 10⁶/h, contacts only between touching pairs)
   against ``mj_step`` with MuJoCo's defaults (soft contact, pyramidal
   cone, Newton), in one process, after 300 settling steps each.
2. E8: the column of N spheres of experiments/drumwright/e8_sphere_stack.py
   (5 s at h = 10 ms, Hertz E* = 1e11): wall time of the whole run and per
   step, against MuJoCo's ``mj_step`` on the same column (its default soft
   contact at dt = 10 ms; MuJoCo's contacts are softer: solref's 20 ms time
   constant, not a modulus, so the comparison is of cost, not of physics).
3. E6, Table 1 of the paper: the box on an elastic foundation, the
   simulator against scipy's BDF and RK45 on the same system as a
   first-order ODE (experiments/drumwright/e6_foundation.py), each cell
   with a time limit (``--limit`` s; "> limit" when reached). ``--quick``:
   the 100-element cells only.

Timings are of this machine (2 cores; the load average is printed); the
paper's claim to check is the best worst case: the simulator's slowest
cell of Table 1 against the baselines' slowest.
"""
import argparse
import importlib.util
import os
import sys
import time
import warnings

import mujoco
import numpy as np

import multibody as mb

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from _common import timeit  # noqa: E402
import contact as scenes  # noqa: E402  (benchmarks/contact.py: the scenes and the timing of a simulator)


def experiment(name):
    folder = os.path.join(HERE, "..", "experiments", "drumwright")
    if folder not in sys.path:
        sys.path.insert(0, folder)  # the scripts' shared drumwright_common
    path = os.path.join(folder, f"{name}.py")
    spec = importlib.util.spec_from_file_location(f"_drumwright_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def contact_scenes():
    print("1. contact scenes: us per Simulator.step (contact_solver='drumwright') and ratio to mj_step "
          "(MuJoCo's defaults); *: PGS at its cap in one of 20 steps")
    print(f"{'scene':<18} {'contacts':>9} {'mj_step us':>10} {'drumwright us':>14} {'ratio':>6}")
    for name in ("sphere on a plane", "box on a plane", "stack of 5 boxes", "27 boxes", "27 spheres"):
        xml = scenes.SCENES[name]
        m = scenes.mujoco_variant(xml, "defaults")
        t_mj, ncon = scenes.timed_mujoco(m)
        r = scenes.timed_simulator(mb.load_mjcf(xml), m, contact_solver="drumwright")
        if "step" not in r:
            print(f"{name:<18} {'-':>9} {1e6 * t_mj:>10.1f} {'skipped' if 'skipped' in r else r['failed']:>14}")
            continue
        print(f"{name:<18} {str(r['contacts']) + '/' + str(ncon):>9} {1e6 * t_mj:>10.1f} "
              f"{1e6 * r['step']:>13.1f}{'*' if r['capped'] else ' '} {r['step'] / t_mj:>6.2f}")


def mujoco_column(e8, count):
    """MuJoCo's model of E8's column (the same spheres, masses and gaps; dt = 10 ms)."""
    bodies = "".join(f'<body pos="0 0 {e8.RADIUS + e8.GAP + i * (2 * e8.RADIUS + e8.GAP)}"><freejoint/>'
                     f'<geom type="sphere" size="{e8.RADIUS}" mass="{e8.MASS}" friction="{e8.MU} 0 0"/></body>'
                     for i in range(count))
    return mujoco.MjModel.from_xml_string(
        f'<mujoco><option timestep="{e8.H}" gravity="0 0 {-e8.GRAVITY}"/><worldbody>'
        f'<geom type="plane" size="10 10 0.1" friction="{e8.MU} 0 0"/>{bodies}</worldbody></mujoco>')


def sphere_column(counts):
    e8 = experiment("e8_sphere_stack")
    print("\n2. E8, a column of spheres, 5 s at h = 10 ms: wall time (s) and per step (ms); MuJoCo's mj_step on "
          "the same column (its own soft contact)")
    print(f"{'spheres':>8} {'drumwright s':>13} {'ms/step':>8} {'max sweeps':>11} {'at rest':>8} | "
          f"{'mj_step s':>10} {'ms/step':>8} {'ratio':>6}")
    for count in counts:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", mb.SimulationWarning)
            e8.run(min(count, 5), duration=0.02)  # compiled code loaded outside the timing
            r = e8.run(count)
        m = mujoco_column(e8, count)
        d = mujoco.MjData(m)
        steps = int(round(e8.DURATION / e8.H))
        t0 = time.perf_counter()
        for _ in range(steps):
            mujoco.mj_step(m, d)
        t_mj = time.perf_counter() - t0
        rest = r["kinetic"] < 1e-10
        print(f"{count:>8} {r['wall']:>13.3f} {1e3 * r['wall'] / steps:>8.3f} {int(r['sweeps'].max()):>11} "
              f"{str(rest):>8} | {t_mj:>10.4f} {1e3 * t_mj / steps:>8.4f} {r['wall'] / t_mj:>6.1f}")


def foundation(quick, limit):
    print("\n3. E6: the static check, the consistency check, Table 1 (wall-clock seconds of 1 s; h = 0.01 for the "
          "simulator) and Table 2, by experiments/drumwright/e6_foundation.py")
    e6 = experiment("e6_foundation")
    e6.main(["--limit", str(limit), "--out", os.path.join("out", "drumwright")] + (["--quick"] if quick else []))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer spheres, E6's 100-element cells only")
    ap.add_argument("--limit", type=float, default=600.0, help="time limit of a baseline cell (s)")
    ap.add_argument("--skip", default="", help="comma-separated parts to skip: scenes,column,foundation")
    args = ap.parse_args()
    skip = set(filter(None, args.skip.split(",")))
    print(f"{time.strftime('%Y-%m-%d %H:%M')}, load average {os.getloadavg()[0]:.1f}")
    if "scenes" not in skip:
        contact_scenes()
    if "column" not in skip:
        sphere_column([10, 20, 50] if args.quick else [10, 20, 50, 100])
    if "foundation" not in skip:
        foundation(args.quick, args.limit)


if __name__ == "__main__":
    main()
