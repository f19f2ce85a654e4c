"""Parameter sweeps on Dask (mb.sweep): 256 rollouts of 1 s of Talos
(free-floating, semi-implicit Euler, the simulator's default, at dt = 1 ms;
joint limits on, contact off), a 16 x 16 grid over two model parameters
(the torso's mass, the left knee's damping), each point one Simulator of
its own parameters. Timed:

* a plain in-process loop (``Simulator(model.with_params(p)).rollout``),
  the baseline;
* ``mb.sweep(..., client=False)``: the same points through the sweep in
  this process (its own cost: chunking, metrics, gathering);
* ``mb.sweep`` on a ``LocalCluster`` of 1 and of 2 worker processes (one
  thread each), started and warmed up (kernels loaded, one small sweep)
  before the timing: with the default chunking (about eight tasks per
  worker) and with one point per task;

and from these the speed-up of 2 workers over 1. The overhead per task
(Dask's scheduling, shipping the chunk's results back, building the
task's simulators) is measured on its own by the same sweep with rollouts
of 0 steps and one point per task: wall time x workers / tasks. The
cluster's start-up is printed separately, and so is the machine's load
average (other processes share its cores). On a loaded machine wall times
measure the competition for the cores as much as the sweep; so CPU times
are printed too: the plain loop's, and for Dask the CPU time of the worker
processes plus that of this process (where the LocalCluster's scheduler
runs), whose excess over the plain loop is the work Dask adds.

    python benchmarks/sweep.py [--points 256] [--duration 1.0]

The results of every variant are checked to be bitwise those of the plain
loop. Wall-clock times on a shared machine: run it when it is idle, and
read the ratios rather than the seconds.
"""
import argparse
import os
import time

import numpy as np

import multibody as mb
from multibody.simulation.sweep import TASKS_PER_WORKER
from _common import robot_path


def setup(points, duration):
    model = mb.load_urdf(robot_path("talos"), floating_base=True)
    q0 = model.neutral()
    q0[2] = 1.0
    sim = mb.Simulator(model, 1e-3, q0=q0, contact_solver=None)  # Talos's meshes overlap: no self-contact
    side = int(round(np.sqrt(points)))
    design = mb.Grid({"torso_2_link.mass": np.linspace(10.0, 20.0, side),
                      "leg_left_4_joint.damping": np.linspace(0.0, 5.0, points // side)})
    return model, sim, design


def height(traj):
    return traj.q[-1, 2]  # the base's final height (m)


def plain_loop(model, sim, design, steps):
    q = np.empty((len(design), model.nq))
    for i in range(len(design)):
        p = design.point(i)
        s = mb.Simulator(model.with_params(p), sim.dt, q0=sim.state.q, contact_solver=None)
        q[i] = s.rollout(steps=steps, progress=False).q[-1]
    return q


def timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def cpu_timed(fn, client=None):
    """(wall s, CPU s of this process and of the client's workers, fn())."""
    def cpu():
        return time.process_time() + (0.0 if client is None else sum(client.run(time.process_time).values()))
    c0 = cpu()
    wall, out = timed(fn)
    return wall, cpu() - c0, out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--points", type=int, default=256)
    ap.add_argument("--duration", type=float, default=1.0)
    args = ap.parse_args()
    from distributed import Client, LocalCluster
    model, sim, design = setup(args.points, args.duration)
    steps = int(round(args.duration / sim.dt))
    n = len(design)
    metrics = {"height": height}
    print(f"Talos (nq {model.nq}, nv {model.nv}): {n} rollouts of {args.duration:g} s ({steps} steps of "
          f"{sim.dt * 1e3:g} ms, {sim.integrator.name}); {os.cpu_count()} cores, load average "
          f"{os.getloadavg()[0]:.1f} (a shared machine)")
    plain_loop(model, sim, mb.Grid({"torso_2_link.mass": [15.0]}), 10)  # compiled code loaded
    t_plain, cpu_plain, q_plain = cpu_timed(lambda: plain_loop(model, sim, design, steps))
    print(f"  plain in-process loop:       {t_plain:7.2f} s  ({t_plain / n * 1e3:.1f} ms per rollout; CPU "
          f"{cpu_plain:.2f} s)")
    t_empty, _ = timed(lambda: mb.sweep(sim, design, steps=0, client=False, chunk=1))
    print(f"  mb.sweep in this process, rollouts of 0 steps, one point per task: {t_empty / n * 1e3:.2f} ms per task")
    t_here, res = timed(lambda: mb.sweep(sim, design, steps=steps, metrics=metrics, client=False))
    assert res.q.tobytes() == q_plain.tobytes()
    print(f"  mb.sweep in this process:    {t_here:7.2f} s  (sweep's own cost {(t_here - t_plain) / n * 1e3:+.2f} ms "
          f"per point)")
    walls = {}
    for workers in (1, 2):
        t_start, cluster = timed(lambda: LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                                      dashboard_address=":0"))
        client = Client(cluster)
        try:
            t_warm, _ = timed(lambda: mb.sweep(sim, mb.Grid({"torso_2_link.mass": [15.0] * 2 * workers}), steps=10,
                                               client=client, chunk=1))
            print(f"  LocalCluster of {workers} worker(s): started in {t_start:.2f} s, warmed up (kernels loaded "
                  f"on the workers) in {t_warm:.2f} s")
            t_empty, _ = timed(lambda: mb.sweep(sim, design, steps=0, client=client, chunk=1))
            print(f"    rollouts of 0 steps, one point per task: {t_empty:.2f} s, overhead per task "
                  f"{t_empty * workers / n * 1e3:.1f} ms (wall x workers / tasks)")
            for chunk in (None, 1):
                t, cpu, res = cpu_timed(lambda: mb.sweep(sim, design, steps=steps, metrics=metrics,
                                                         client=client, chunk=chunk), client)
                assert res.q.tobytes() == q_plain.tobytes()
                tasks = -(-n // (chunk or max(1, min(64, -(-n // (TASKS_PER_WORKER * workers))))))
                walls[workers, chunk] = t
                print(f"    chunk {chunk or 'default'} ({tasks} tasks): {t:7.2f} s, speed-up over the plain loop "
                      f"{t_plain / t:.2f} (load average {os.getloadavg()[0]:.1f}); CPU {cpu:.2f} s, "
                      f"{(cpu - cpu_plain) / tasks * 1e3:+.1f} ms per task over the plain loop")
        finally:
            client.close()
            cluster.close()
    print(f"  2 workers over 1 worker (default chunks): speed-up {walls[1, None] / walls[2, None]:.2f}")


if __name__ == "__main__":
    main()
