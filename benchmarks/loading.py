"""Model loading: multibody vs Pinocchio, in one process.

    python benchmarks/loading.py [--links 10000]

A generated URDF chain of ``--links`` revolute links (one inertial and one
visual each), loaded from a string: ``mb.load_urdf`` vs
``pin.buildModelFromXML`` (up to 1,000 links: Pinocchio's recursive
parser crashes on 10,000); the loading is linear in the number of links
(issue 10: a 10,000-link chain in under 2 s). Then every example-robot-data
URDF that both load, fixed base: the summed load times. Median of 3 runs;
wall-clock seconds.
"""
import argparse
import glob
import os
import statistics
import time
import warnings

import pinocchio as pin

import multibody as mb
from _common import robot_path  # noqa: F401  (puts tests/ on the path)
from oracles import robots_dir, urdf_chain as chain


def median_time(fn, runs=3):
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--links", type=int, default=10000)
    args = ap.parse_args()
    mb.load_urdf(chain(3))  # import and compile outside the timing
    print(f"{'what':<44}{'pinocchio':>11}{'multibody':>11}{'ratio':>8}")
    for n in (args.links // 10, args.links):
        text = chain(n)
        tm = median_time(lambda: mb.load_urdf(text))
        if n <= 1000:  # Pinocchio's recursive URDF parser overflows the stack (a crash) on 10,000 links
            tp = median_time(lambda: pin.buildModelFromXML(text))
            print(f"{f'{n}-link URDF chain (s)':<44}{tp:>11.3f}{tm:>11.3f}{tm / tp:>8.2f}")
        else:
            print(f"{f'{n}-link URDF chain (s)':<44}{'(crashes)':>11}{tm:>11.3f}")
    files = sorted(glob.glob(os.path.join(robots_dir(), "**", "*.urdf"), recursive=True))
    tp = tm = 0.0
    count = 0
    for path in files:
        try:
            pin.buildModelFromUrdf(path)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", mb.ModelWarning)
                mb.load_urdf(path)
        except Exception:  # noqa: BLE001 - only files both load are timed
            continue
        count += 1
        tp += median_time(lambda: pin.buildModelFromUrdf(path))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", mb.ModelWarning)
            tm += median_time(lambda: mb.load_urdf(path))
    print(f"{f'{count} example-robot-data URDFs, summed (s)':<44}{tp:>11.3f}{tm:>11.3f}{tm / tp:>8.2f}")


if __name__ == "__main__":
    main()
