"""Forward kinematics and frame Jacobians: multibody vs Pinocchio, in one
process, on UR5, Panda, Solo12 and Talos (example-robot-data) and a
100-link chain. Prints microseconds per call (median of timed blocks) and
the ratio multibody / Pinocchio (below 1 means multibody is faster).

    python benchmarks/kinematics.py [--models ur5,talos] [--batch 1000]

Single configuration: Pinocchio's ``forwardKinematics(model, data, q)`` vs
``mb.forward_kinematics(model, q, data)``; ``computeFrameJacobian(model,
data, q, frame, LOCAL_WORLD_ALIGNED)`` vs ``mb.jacobian(model, q, frame,
"local_world_aligned", data=data)`` for the last link. Both write into
preallocated workspaces and are called from a Python loop, as a user would.
The "plain" rows time the calls without a workspace (multibody's per-thread
cache, a fresh result array) and frames by name, against Pinocchio's call
with its data (frame pose: ``forwardKinematics`` + ``updateFramePlacement``
of ``getFrameId(name)``).
Batch: a Python loop of Pinocchio calls over B configurations vs one
multibody call on a (B, nq) array (two threads).
"""
import argparse
import os
import time

import numpy as np
import pinocchio as pin

import multibody as mb
from _common import Mapping, load, timeit


def bench(name, batch):
    model, pm = load(name)
    mp = Mapping(model, pm)
    pd, data = pm.createData(), mb.Data(model)
    rng = np.random.default_rng(0)
    qps = [pin.randomConfiguration(pm, -np.ones(pm.nq), np.ones(pm.nq)) for _ in range(batch)]
    Q = np.array([mp.q_from_pin(x) for x in qps])
    qp, q = qps[0], Q[0]
    link = model.body_names[-1]
    fid = pm.getFrameId(link) if pm.existFrame(link) else pm.getFrameId(pm.names[-1])
    # same frame in both libraries: check once
    pin.framesForwardKinematics(pm, pd, qp)
    assert np.allclose(mb.frame_pose(model, q, link), pd.oMf[fid].homogeneous, atol=1e-9), name
    rows = {}
    rows["fk"] = (timeit(lambda: pin.forwardKinematics(pm, pd, qp)),
                  timeit(lambda: mb.forward_kinematics(model, q, data)))
    lwa = pin.LOCAL_WORLD_ALIGNED
    rows["jacobian"] = (timeit(lambda: pin.computeFrameJacobian(pm, pd, qp, fid, lwa)),
                        timeit(lambda: mb.jacobian(model, q, link, "local_world_aligned", data=data)))
    # the calls a newcomer writes first: no workspace, frames by name (Pinocchio still needs its data)
    fname = pm.frames[fid].name
    rows["fk (plain call)"] = (rows["fk"][0], timeit(lambda: mb.forward_kinematics(model, q)))
    rows["frame pose by name (plain)"] = (
        timeit(lambda: (pin.forwardKinematics(pm, pd, qp), pin.updateFramePlacement(pm, pd, pm.getFrameId(fname)))),
        timeit(lambda: mb.frame_pose(model, q, link)))
    rows["jacobian by name (plain)"] = (
        timeit(lambda: pin.computeFrameJacobian(pm, pd, qp, pm.getFrameId(fname), lwa)),
        timeit(lambda: mb.jacobian(model, q, link, "local_world_aligned")))

    def pin_fk_loop():
        for x in qps:
            pin.forwardKinematics(pm, pd, x)

    def pin_jac_loop():
        for x in qps:
            pin.computeFrameJacobian(pm, pd, x, fid, lwa)
    rows[f"fk batch {batch}"] = (timeit(pin_fk_loop, blocks=11) / batch,
                                 timeit(lambda: mb.forward_kinematics(model, Q), blocks=11) / batch)
    rows[f"jacobian batch {batch}"] = (timeit(pin_jac_loop, blocks=11) / batch,
                                       timeit(lambda: mb.jacobian(model, Q, link, "local_world_aligned"),
                                              blocks=11) / batch)
    del rng
    return model, rows


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default="ur5,panda,solo12,talos,chain100")
    ap.add_argument("--batch", type=int, default=1000)
    args = ap.parse_args()
    t0 = time.perf_counter()
    print(f"multibody {mb.__version__}, pinocchio {pin.__version__}, numpy {np.__version__}; "
          f"{os.cpu_count()} cores; us per call (per configuration for batches)\n")
    print(f"{'model':<10}{'nq':>4}{'nv':>4}  {'operation':<22}{'pinocchio':>11}{'multibody':>11}{'ratio':>8}")
    for name in args.models.split(","):
        model, rows = bench(name, args.batch)
        for op, (tp, tm) in rows.items():
            print(f"{name:<10}{model.nq:>4}{model.nv:>4}  {op:<22}{tp * 1e6:>11.3f}{tm * 1e6:>11.3f}"
                  f"{tm / tp:>8.2f}")
    print(f"\ntotal wall time {time.perf_counter() - t0:.1f} s")


if __name__ == "__main__":
    main()
