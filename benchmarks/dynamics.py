"""Tree dynamics: multibody vs Pinocchio in one process.

    python benchmarks/dynamics.py [--models ur5,talos] [--batch 4096] [--no-compile]

Per call from Python (median of timed blocks, both libraries writing into
preallocated workspaces): RNEA, CRBA, ABA, forward dynamics by CRBA + a
factorization, and the inverse inertia; then RNEA, CRBA and ABA as plain
calls without ``data`` (the README's calls) against the same Pinocchio
call with its data. Pinocchio's crba and aba are timed
in both conventions (LOCAL, WORLD) and the faster is used for the ratio.
Batched: one multibody call on (B, n) arrays (two threads) vs a Python loop
over Pinocchio, both writing the B results into arrays allocated once (the
``out`` argument), and vs ``pin.abaInParallel`` (two threads, likewise). Finally the
Numba compile time, cold (empty cache) and cached, in fresh processes.
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
import pinocchio as pin

import multibody as mb
from _common import Mapping, load, timeit

HERE = os.path.dirname(os.path.abspath(__file__))


def pin_fd_crba(pm, pd, q, v, tau):
    pin.crba(pm, pd, q)
    nle = pin.nonLinearEffects(pm, pd, q, v)
    pin.cholesky.decompose(pm, pd)
    return pin.cholesky.solve(pm, pd, tau - nle)


def per_call(name):
    model, pm = load(name)
    mp = Mapping(model, pm)
    pd, data = pm.createData(), mb.Data(model)
    rng = np.random.default_rng(0)
    qp = pin.randomConfiguration(pm, -np.ones(pm.nq), np.ones(pm.nq))
    vp, ap = rng.normal(size=pm.nv), rng.normal(size=pm.nv)
    q, v, a = mp.q_from_pin(qp), mp.v_from_pin(vp), mp.v_from_pin(ap)
    taup = pin.rnea(pm, pd, qp, vp, ap)
    tau = mp.v_from_pin(taup)
    # both libraries compute the same thing
    assert np.allclose(mp.v_to_pin_columns(mb.rnea(model, q, v, a)), taup, atol=1e-8)
    assert np.allclose(mb.aba(model, q, v, tau), a, atol=1e-7)
    W, L = pin.Convention.WORLD, pin.Convention.LOCAL
    rows = {}
    rows["rnea"] = (timeit(lambda: pin.rnea(pm, pd, qp, vp, ap)),
                    timeit(lambda: mb.rnea(model, q, v, a, data=data)))
    rows["crba"] = (min(timeit(lambda: pin.crba(pm, pd, qp, L)), timeit(lambda: pin.crba(pm, pd, qp, W))),
                    timeit(lambda: mb.crba(model, q, data)))
    rows["aba"] = (min(timeit(lambda: pin.aba(pm, pd, qp, vp, taup, L)),
                       timeit(lambda: pin.aba(pm, pd, qp, vp, taup, W))),
                   timeit(lambda: mb.aba(model, q, v, tau, data=data)))
    rows["fd via crba"] = (timeit(lambda: pin_fd_crba(pm, pd, qp, vp, taup)),
                           timeit(lambda: mb.forward_dynamics(model, q, v, tau, method="crba", data=data)))
    rows["inverse inertia"] = (timeit(lambda: pin.computeMinverse(pm, pd, qp)),
                               timeit(lambda: mb.inverse_inertia(model, q, data)))
    # the README's calls: no workspace (a per-thread cache, a fresh result array)
    rows["rnea (plain call)"] = (rows["rnea"][0], timeit(lambda: mb.rnea(model, q, v, a)))
    rows["crba (plain call)"] = (rows["crba"][0], timeit(lambda: mb.crba(model, q)))
    rows["aba (plain call)"] = (rows["aba"][0], timeit(lambda: mb.aba(model, q, v, tau)))
    return model, pm, mp, rows


def batched(model, pm, mp, batch):
    pd = pm.createData()
    rng = np.random.default_rng(1)
    qps = [pin.randomConfiguration(pm, -np.ones(pm.nq), np.ones(pm.nq)) for _ in range(batch)]
    Vp, Tp = rng.normal(size=(batch, pm.nv)), rng.normal(size=(batch, pm.nv))
    Q = np.array([mp.q_from_pin(x) for x in qps])
    V = np.array([mp.v_from_pin(x) for x in Vp])
    T = np.array([mp.v_from_pin(x) for x in Tp])
    rows = {}

    def loop(fn, out):
        """The B results gathered into ``out``, as the batched call writes them."""
        def run():
            for b in range(batch):
                out[b] = fn(b)
        return run
    nv = pm.nv
    # both sides write into arrays allocated once: fresh memory for each call
    # costs page faults (14 us per state for CRBA on Talos), not computation
    vec, mat = (np.empty((batch, nv)), np.empty((batch, nv))), (np.empty((batch, nv, nv)), np.empty((batch, nv, nv)))
    rows["rnea"] = (timeit(loop(lambda b: pin.rnea(pm, pd, qps[b], Vp[b], Tp[b]), vec[0]), blocks=11),
                    timeit(lambda: mb.rnea(model, Q, V, T, out=vec[1]), blocks=11))
    rows["crba"] = (timeit(loop(lambda b: pin.crba(pm, pd, qps[b]), mat[0]), blocks=11),
                    timeit(lambda: mb.crba(model, Q, out=mat[1]), blocks=11))
    rows["aba"] = (timeit(loop(lambda b: pin.aba(pm, pd, qps[b], Vp[b], Tp[b]), vec[0]), blocks=11),
                   timeit(lambda: mb.aba(model, Q, V, T, out=vec[1]), blocks=11))
    if hasattr(pin, "abaInParallel"):
        pool = pin.ModelPool(pm, 2)
        Qf, Vf, Tf = (np.asfortranarray(np.column_stack(x)) for x in (qps, Vp, Tp))
        out = np.zeros((pm.nv, batch), order="F")
        rows["aba vs pin.abaInParallel(2)"] = (timeit(lambda: pin.abaInParallel(2, pool, Qf, Vf, Tf, out),
                                                      blocks=11), rows["aba"][1])
    return {k: (tp / batch, tm / batch) for k, (tp, tm) in rows.items()}


COMPILE_SNIPPET = """
import time, numpy as np
t0 = time.perf_counter()
import multibody as mb
from multibody.dynamics.inertia import dof_parents
b = mb.ModelBuilder()
b.add_body("a", "world", "free", mass=1, inertia=np.eye(3))
b.add_body("b", "a", "revolute", mass=1, inertia=np.eye(3))
m = b.build(); d = mb.Data(m)
q, v = m.neutral(), np.zeros(m.nv)
mb.rnea(m, q, v, v, data=d); mb.crba(m, q, d); mb.aba(m, q, v, v, data=d)
mb.forward_dynamics(m, q, v, v, method="crba"); mb.inverse_inertia(m, q)
Q, V = np.array([q, q]), np.array([v, v])
mb.rnea(m, Q, V, V); mb.crba(m, Q); mb.aba(m, Q, V, V)
print(time.perf_counter() - t0)
"""


def compile_times():
    """Seconds to import multibody and run each dynamics entry point once:
    cold (empty Numba cache) and then cached, each in a fresh process."""
    out = []
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache)
        for _ in range(2):
            r = subprocess.run([sys.executable, "-c", COMPILE_SNIPPET], env=env, capture_output=True, text=True,
                               check=True)
            out.append(float(r.stdout.strip().splitlines()[-1]))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default="ur5,panda,solo12,talos,chain50,chain100")
    ap.add_argument("--batch", type=int, default=4096)
    ap.add_argument("--no-compile", action="store_true", help="skip the compile-time measurement")
    args = ap.parse_args()
    t0 = time.perf_counter()
    print(f"multibody {mb.__version__}, pinocchio {pin.__version__}; {os.cpu_count()} cores; "
          f"us per call (per state for batches of {args.batch}); ratio = multibody / Pinocchio\n")
    print(f"{'model':<10}{'nv':>4}  {'operation':<32}{'pinocchio':>11}{'multibody':>11}{'ratio':>8}")
    for name in args.models.split(","):
        model, pm, mp, rows = per_call(name)
        rows.update({f"batch {k}": x for k, x in batched(model, pm, mp, args.batch).items()})
        for op, (tp, tm) in rows.items():
            print(f"{name:<10}{model.nv:>4}  {op:<32}{tp * 1e6:>11.3f}{tm * 1e6:>11.3f}{tm / tp:>8.2f}")
    if not args.no_compile:
        cold, warm = compile_times()
        print(f"\nimport + first call of every dynamics kernel: cold cache {cold:.1f} s, cached {warm:.1f} s")
    print(f"total wall time {time.perf_counter() - t0:.1f} s")


if __name__ == "__main__":
    main()
