"""The issue's contact soak (issue 12): Talos dropped limp on the ground
and left lying for 10⁶ steps (1000 s at dt = 1 ms) with the default
contact solver; what tests/contact/test_verification.py::test_talos_soak
checks over 20 000 steps in CI, here over the whole run.

    python benchmarks/soak.py [--steps 1000000] [--chunk 10000]

Prints, per chunk: wall time, kinetic energy T, T + V, the base height,
contacts and limit rows of the last step, the memory traced by
tracemalloc and the resident set. At the end: whether any state was
non-finite, the largest rise of T + V above its running minimum after
the robot came to rest (T < 1e-3 J from then on), and the memory growth
after the first chunk. Exits with 1 if a check of the test fails.
"""
import argparse
import os
import sys
import time
import tracemalloc
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(HERE, "..", "tests"), os.path.join(HERE, "..", "tests", "contact")]

import multibody as mb  # noqa: E402
from multibody.errors import SimulationWarning  # noqa: E402
from test_verification import resident_memory, standing, talos  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=1_000_000)
    parser.add_argument("--chunk", type=int, default=10_000)
    args = parser.parse_args()
    model = talos()
    q = standing(model)
    q[2] += 0.3
    sim = mb.Simulator(model, dt=1e-3, q0=q, ground=True)
    chunks, per = args.steps // args.chunk, args.chunk // 100
    # the records are allocated before the memory is traced: what grows is then the simulator's
    energy, kinetic, traced, rss = np.empty(chunks * per), np.empty(chunks * per), [], []
    start = time.perf_counter()
    finite = True
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SimulationWarning)
        for k in range(chunks):
            traj = sim.rollout(steps=args.chunk, record_every=100)
            finite &= bool(np.isfinite(traj.q).all() and np.isfinite(traj.v).all())
            energy[k * per:(k + 1) * per] = traj.kinetic[1:] + traj.potential[1:]
            kinetic[k * per:(k + 1) * per] = traj.kinetic[1:]
            del traj
            if k == 0:
                tracemalloc.start()
            traced.append(tracemalloc.get_traced_memory()[0])
            rss.append(resident_memory())
            print(f"{(k + 1) * args.chunk:8d} steps {time.perf_counter() - start:7.0f} s  "
                  f"T {kinetic[(k + 1) * per - 1]:.3e} J  T+V {energy[(k + 1) * per - 1]:.6f} J  "
                  f"base z {sim.state.q[2]:.6f} m  contacts {sim.contact.count} "
                  f"limits {sim.contact.limit_count}  traced {traced[-1]} B  rss {rss[-1]} B", flush=True)
    tracemalloc.stop()
    moving = np.flatnonzero(kinetic >= 1e-3)
    rest = moving[-1] + 1 if len(moving) else 0
    gain = energy[rest:] - np.minimum.accumulate(energy[rest:]) if rest < len(energy) else np.array([np.inf])
    grown_traced = traced[-1] - traced[0] if len(traced) > 1 else 0
    grown_rss = rss[-1] - rss[0] if len(rss) > 1 and rss[0] is not None else 0
    print(f"finite: {finite}; at rest from t = {rest * 0.1:.1f} s; largest rise of T + V above its minimum after "
          f"that: {gain.max():.3g} J; T + V {energy[min(rest, len(energy) - 1)]:.6f} -> {energy[-1]:.6f} J; "
          f"memory after the first chunk: traced +{grown_traced} B, resident +{grown_rss} B; "
          f"{(time.perf_counter() - start) / args.steps * 1e3:.2f} ms per step")
    ok = finite and gain.max() <= 0.01 and grown_traced < 256 * 1024 and grown_rss < 8 * 1024 * 1024
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
