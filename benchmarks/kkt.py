"""Dense or sparse KKT solves for the velocity-level constrained step
(ArtiSynth §0.6): ``[A −Gᵀ; G R][v; λ] = [b; g]`` with A = M − hD − h²K.

    python benchmarks/kkt.py

Two families of closed-loop models: a *comb* (a fixed base carrying B
branches of 4 links; neighbouring branch tips joined by spherical loop
joints: H is block diagonal, so the KKT matrix is sparse) and a *chain*
of N links whose every 4th link is tied to the world by a spherical loop
joint (H is dense: every joint supports all later links). Times one solve
with scipy.linalg.solve (dense, symmetric indefinite) and with
scipy.sparse.linalg.splu (SuperLU), and prints the ratio; the simulator's
``ReducedSystem.velocity_solve`` switches to the sparse solve when the
system is large and sparse enough (``SPARSE_KKT_MIN_SIZE``,
``SPARSE_KKT_MAX_DENSITY`` in multibody.formulations.reduced), thresholds
chosen from this table.
"""
import numpy as np

import multibody as mb
from _common import timeit
from multibody.dynamics.closed_loop import independent_rows
from multibody.formulations.reduced import kkt_solve


def comb(branches, depth=4):
    b = mb.ModelBuilder(f"comb{branches}")
    tips = []
    for i in range(branches):
        parent = "world"
        for k in range(depth):
            name = f"b{i}_{k}"
            b.add_body(name, parent, "revolute", placement=(np.eye(3), (0.3 * i if k == 0 else 0.0, 0, -0.1)),
                       axis=(0, 1, 0) if k % 2 else (1, 0, 0), mass=1.0, com=(0, 0, -0.05),
                       inertia=np.eye(3) * 1e-3)
            parent = name
        tips.append(parent)
    for i in range(branches - 1):
        b.add_loop_joint(tips[i], tips[i + 1], "spherical", None, (np.eye(3), (-0.3, 0, 0)))
    return b.build()


def chain(n):
    b = mb.ModelBuilder(f"chain{n}")
    parent = "world"
    for k in range(n):
        b.add_body(f"l{k}", parent, "revolute", placement=(np.eye(3), (0, 0, -0.1 if k else 0.0)),
                   axis=(0, 1, 0) if k % 2 else (1, 0, 0), mass=1.0, com=(0, 0, -0.05), inertia=np.eye(3) * 1e-3)
        parent = f"l{k}"
        if k % 4 == 3:
            b.add_loop_joint(parent, "world", "spherical", None, (np.eye(3), (0, 0, -0.1 * (k + 1))))
    return b.build()


def main():
    print(f"{'model':<10} {'nv':>5} {'rows':>5} {'density':>8} {'dense us':>10} {'sparse us':>10} {'sparse/dense':>13}")
    for model in [comb(b) for b in (4, 8, 16, 32, 64)] + [chain(n) for n in (16, 32, 64, 128)]:
        C = mb.constraints.Constraints(model)
        q = model.neutral()
        phi, G, _ = C.evaluate(q)
        G = G[independent_rows(G)]   # as the simulator does for hard constraints
        A = mb.crba(model, q).copy()
        b = np.ones(model.nv)
        R = np.zeros((G.shape[0], G.shape[0]))
        g = np.zeros(G.shape[0])
        density = np.count_nonzero(A) / A.size
        t_dense = timeit(lambda: kkt_solve(A, G, R, b, g, sparse=False), blocks=11)
        t_sparse = timeit(lambda: kkt_solve(A, G, R, b, g, sparse=True), blocks=11)
        print(f"{model.name:<10} {model.nv:>5} {G.shape[0]:>5} {density:>8.2f} {t_dense * 1e6:>10.1f} "
              f"{t_sparse * 1e6:>10.1f} {t_sparse / t_dense:>13.2f}")


if __name__ == "__main__":
    main()
