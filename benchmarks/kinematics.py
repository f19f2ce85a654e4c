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
Batch: a Python loop of Pinocchio calls over B configurations vs one
multibody call on a (B, nq) array (two threads).
"""
import argparse
import gc
import os
import sys
import time

import numpy as np
import pinocchio as pin

import multibody as mb

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests"))
from oracles import ROBOTS, Mapping, robot_path  # noqa: E402


def timeit(fn, block_s=0.002, blocks=41):
    """Median seconds per call of ``fn()`` over blocks of back-to-back calls."""
    n = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        if time.perf_counter() - t0 > block_s:
            break
        n *= 2
    gc.disable()
    try:
        ts = []
        for _ in range(blocks):
            t0 = time.perf_counter()
            for _ in range(n):
                fn()
            ts.append((time.perf_counter() - t0) / n)
    finally:
        gc.enable()
    return float(np.median(ts))


def chain(n, length=0.1, mass=1.0, radius=0.02):
    """The anchors' chainN (shared/bench/anchors.py): revolute joints about
    x, y, z, ...; each link a 1 kg, 10 cm rod; built in both libraries."""
    ixx = mass * (3 * radius ** 2 + length ** 2) / 12.0
    izz = 0.5 * mass * radius ** 2
    pm = pin.Model()
    b = mb.ModelBuilder(f"chain{n}")
    parent = "world"
    for k in range(n):
        off = np.array([0.0, 0.0, length if k else 0.0])
        jid = pm.addJoint(k, [pin.JointModelRX, pin.JointModelRY, pin.JointModelRZ][k % 3](),
                          pin.SE3(np.eye(3), off), f"j{k}")
        pm.appendBodyToJoint(jid, pin.Inertia(mass, np.array([0, 0, length / 2]), np.diag([ixx, ixx, izz])),
                             pin.SE3.Identity())
        pm.addBodyFrame(f"l{k}", jid, pin.SE3.Identity(), 0)
        b.add_body(f"l{k}", parent, "revolute", placement=(np.eye(3), off), axis=np.eye(3)[k % 3],
                   joint_name=f"j{k}", mass=mass, com=(0, 0, length / 2), inertia=np.diag([ixx, ixx, izz]))
        parent = f"l{k}"
    return b.build(), pm


def load(name):
    if name.startswith("chain"):
        return chain(int(name[5:]))
    path = robot_path(name)
    floating = ROBOTS[name][1]
    pm = pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer()) if floating else pin.buildModelFromUrdf(path)
    return mb.load_urdf(path, floating_base=floating), pm


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
    import multibody.kinematics.kernels  # noqa: F401  (import compiles or loads the cache)
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
