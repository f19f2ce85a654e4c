"""Analytic derivatives of the dynamics: multibody vs Pinocchio in one process.

    python benchmarks/derivatives.py [--models ur5,solo12,talos,chain100] [--batch 256]

Per call from Python (the minimum over interleaved rounds of the median of
timed blocks, both libraries with a reused
workspace): ``rnea_derivatives`` against ``pin.computeRNEADerivatives`` and
``aba_derivatives`` against ``pin.computeABADerivatives``, with ``data=``
and as plain calls (new arrays, the user's first call; also set against
Pinocchio's call followed by copies of its results). Before timing, the
two libraries' results are compared (converted to one convention). With
``--batch B``: the batch call (``rnea_derivatives(model, Q, V, A)``,
``aba_derivatives``) on 1 and 2 threads (``numba.set_num_threads``) in
states per second, against a Python loop over Pinocchio (ratios: multibody
throughput / Pinocchio's, higher is better), and the 1 -> 2 thread speedup.
Per-call ratios are multibody / Pinocchio time (lower is better).
"""
import argparse

import numpy as np
import pinocchio as pin

from multibody.dynamics import aba_derivatives, rnea_derivatives
from _common import Mapping, load, timeit


def pin_matrix(mp, X):
    """An (nv, nv) multibody matrix in Pinocchio's order on both axes."""
    return mp.v_to_pin_columns(mp.v_to_pin_columns(X.T).T)


def run(name, batch, rounds):
    model, pm = load(name)
    mp = Mapping(model, pm)
    pd = pm.createData()
    import multibody as mb
    data = mb.Data(model)
    rng = np.random.default_rng(0)
    qp = pin.randomConfiguration(pm, -np.ones(pm.nq), np.ones(pm.nq))
    vp, ap, taup = rng.normal(size=(3, pm.nv))
    q, v, a, tau = mp.q_from_pin(qp), mp.v_from_pin(vp), mp.v_from_pin(ap), mp.v_from_pin(taup)
    got = rnea_derivatives(model, q, v, a)
    exp = [X.copy() for X in pin.computeRNEADerivatives(pm, pd, qp, vp, ap)]
    err_r = max(np.abs(pin_matrix(mp, g) - e).max() / max(1.0, np.abs(e).max()) for g, e in zip(got, exp))
    got = aba_derivatives(model, q, v, tau)
    exp = [X.copy() for X in pin.computeABADerivatives(pm, pd, qp, vp, taup)]
    err_a = max(np.abs(pin_matrix(mp, g) - e).max() / max(1.0, np.abs(e).max()) for g, e in zip(got, exp))
    # interleaved rounds, the minimum of each: this machine's other jobs only ever slow a round down
    # Pinocchio's call returns views into its data, like ``data=``; the plain call returns new arrays, so it is
    # also set against Pinocchio's call followed by copies of its three results (what a caller keeping them pays)
    calls = {
        "rnea_derivatives": (lambda: pin.computeRNEADerivatives(pm, pd, qp, vp, ap),
                             lambda: rnea_derivatives(model, q, v, a, data=data),
                             lambda: rnea_derivatives(model, q, v, a),
                             lambda: [X.copy() for X in pin.computeRNEADerivatives(pm, pd, qp, vp, ap)]),
        "aba_derivatives": (lambda: pin.computeABADerivatives(pm, pd, qp, vp, taup),
                            lambda: aba_derivatives(model, q, v, tau, data=data),
                            lambda: aba_derivatives(model, q, v, tau),
                            lambda: [X.copy() for X in pin.computeABADerivatives(pm, pd, qp, vp, taup)]),
    }
    rows = {k: [min(ts) for ts in zip(*[[timeit(f, blocks=11) for f in fs] for _ in range(rounds)])]
            for k, fs in calls.items()}
    print(f"{name} (nv = {model.nv}; max relative difference to Pinocchio: rnea {err_r:.1e}, aba {err_a:.1e})")
    for k, (tp, td, tn, tc) in rows.items():
        print(f"  {k:18s} pinocchio {tp * 1e6:8.2f} us   multibody data= {td * 1e6:8.2f} us ({td / tp:4.2f}x)"
              f"   plain {tn * 1e6:8.2f} us ({tn / tp:4.2f}x; {tn / tc:4.2f}x Pinocchio + copies {tc * 1e6:.2f} us)")
    if batch:
        Qp = np.stack([pin.randomConfiguration(pm, -np.ones(pm.nq), np.ones(pm.nq)) for _ in range(batch)])
        Vp, Ap = rng.normal(size=(2, batch, pm.nv))
        Q = np.stack([mp.q_from_pin(x) for x in Qp])
        V = np.stack([mp.v_from_pin(x) for x in Vp])
        A = np.stack([mp.v_from_pin(x) for x in Ap])

        def pin_loop(f):
            for b in range(batch):
                f(pm, pd, Qp[b], Vp[b], Ap[b])

        # the batch call on 1 and 2 threads (numba.set_num_threads), states per second, against Pinocchio's loop
        import numba
        threads = [n for n in (1, 2) if n <= numba.config.NUMBA_NUM_THREADS]
        for label, pin_fn, fn in (("rnea_derivatives", pin.computeRNEADerivatives, rnea_derivatives),
                                  ("aba_derivatives", pin.computeABADerivatives, aba_derivatives)):
            tp = timeit(lambda: pin_loop(pin_fn), blocks=7) / batch
            line = f"  batch {batch} {label:17s} pinocchio loop {1 / tp:9.0f} states/s"
            per_thread = {}
            for n in threads:
                numba.set_num_threads(n)
                try:
                    per_thread[n] = timeit(lambda: fn(model, Q, V, A), blocks=7) / batch
                finally:
                    numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
                t = per_thread[n]
                line += f"   {n} thread{'s' if n > 1 else ' '} {1 / t:9.0f} states/s ({tp / t:4.2f}x)"
            if len(per_thread) == 2:
                line += f"   speedup 1->2 threads {per_thread[1] / per_thread[2]:4.2f}x"
            print(line)
        # the same states in one serial call of the batch's rows kernel: the compute without the thread pool
        from multibody.dynamics import derivative_kernels as DK
        nv = model.nv
        outs = (np.empty((batch, nv)), np.empty((batch, nv, nv)), np.empty((batch, nv, nv)), np.empty((batch, nv, nv)))
        fb = np.zeros((batch, model.nbodies, 6))
        ts = timeit(lambda: DK.rnea_derivatives_rows(model._tree, Q, V, A, True, fb, False, *outs, 0, batch),
                    blocks=7) / batch
        print(f"  batch {batch} rnea_derivatives serial rows kernel {1 / ts:9.0f} states/s")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", default="ur5,solo12,talos,chain100")
    ap.add_argument("--batch", type=int, default=0)
    ap.add_argument("--rounds", type=int, default=7, help="interleaved rounds (the minimum is reported)")
    args = ap.parse_args()
    for name in args.models.split(","):
        run(name, args.batch, args.rounds)


if __name__ == "__main__":
    main()
