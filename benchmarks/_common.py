"""Shared helpers of the benchmarks: timing and the model pairs
(multibody and Pinocchio models of the same robot)."""
import gc
import os
import sys
import time

import numpy as np
import pinocchio as pin

import multibody as mb

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests"))
from oracles import ROBOTS, Mapping, robot_path  # noqa: E402,F401


def timeit(fn, block_s=0.002, blocks=41):
    """Median seconds per call of ``fn()`` over blocks of back-to-back calls.
    A first call outside the timing loads compiled code: without it the block
    size was calibrated on that one slow call (blocks of a single call, whose
    timer overhead inflated the first model's times by ~40%)."""
    fn()
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
