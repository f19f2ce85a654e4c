"""E1 of Müller & Terze (seed 004, §5.1): the heavy top on a ball joint,
RKMK4 on SE(3) and on SO(3) × R³ in maximal coordinates, 1 s.

The claim: the SE(3) update keeps the pivot in place to round-off (the
top's motion is a subgroup of SE(3)), the SO(3) × R³ update lets it drift
at the method's truncation error (4th order: 16× less per halving of the
step). The kinetic energy's drift is printed as measured (the paper claims
100× less on SE(3); the notes measured 1–3×). Prints the table and writes
``muller_terze_e1.png``.

Beside the library's maximal coordinates (joint rows in the child's body
axes: the index-1 solve holds the pivot's body-axes velocity residual
constant), :func:`paper_so3xr3` integrates the paper's own SO(3) × R³
equations of the top (eq. 41–42: rows in world axes, which hold the
world-axes residual R·v_pivot constant): the two index-1 systems are the
same on the constraint manifold and differ off it, by how the drift feeds
back; the drift is 4th order in both, its constant differs."""
import numpy as np

import muller_terze_common as common
from multibody.integrators.lie import TABLEAUS
from multibody.spatial import so3

STEPS = (1e-3, 5e-4)
MASS, R0, THETA = 21.6, np.array([0.5, 0.0, 0.0]), np.diag([0.36, 0.306, 0.09])


def paper_so3xr3(h, duration=1.0):
    """The paper's heavy top on SO(3) × R³ (Müller & Terze eq. 41–42,
    notes C11) by RKMK4: ``[[Θ, 0, (R r̂₀)ᵀ], [0, m1, 1], [R r̂₀, 1, 0]]
    [ω̇; r̈; λ] = [−ω × Θω; 0; R ω̂ω̂ r₀]``. Returns (max pivot drift m, max
    |T − T₀| J)."""
    a, b = TABLEAUS[4]

    def acceleration(R, w):
        J = np.hstack([R @ so3.hat(R0), np.eye(3)])
        K = np.zeros((9, 9))
        K[:3, :3], K[3:6, 3:6], K[:6, 6:], K[6:, :6] = THETA, MASS * np.eye(3), J.T, J
        rhs = np.concatenate([-np.cross(w, THETA @ w), np.zeros(3), R @ so3.hat(w) @ so3.hat(w) @ R0])
        x = np.linalg.solve(K, rhs)
        return x[:3], x[3:6]

    R, r = np.eye(3), R0.copy()
    w = np.array([0.0, 20.0 * np.pi, 10.0 * np.pi])
    rd = np.cross(w, R0)
    T0 = 0.5 * w @ THETA @ w + 0.5 * MASS * rd @ rd
    drift = dT = 0.0
    for _ in range(int(round(duration / h))):
        k = np.zeros((4, 4, 3))  # per stage: ξ rate, ṙ, ω̇, r̈
        for j in range(4):
            xi, u, dw, drd = (h * (a[j, :j] @ k[:j, i]) for i in range(4))
            Rj, wj, rdj = R @ so3.exp(xi), w + dw, rd + drd
            k[j, 2], k[j, 3] = acceleration(Rj, wj)
            k[j, 0], k[j, 1] = so3.right_jacobian_inv(xi) @ wj, rdj
        xi, u, dw, drd = (h * (b @ k[:, i]) for i in range(4))
        R, r, w, rd = R @ so3.exp(xi), r + u, w + dw, rd + drd
        drift = max(drift, np.linalg.norm(r - R @ R0))
        dT = max(dT, abs(0.5 * w @ THETA @ w + 0.5 * MASS * rd @ rd - T0))
    return drift, dT


def main(argv=None):
    args = common.parser(__doc__).parse_args(argv)
    model, q0, v0 = common.heavy_top()
    fig, axes = common.subplots(1, 2, figsize=(11, 4))
    print(f"{'group':>7} {'h (s)':>7} {'max pivot drift (m)':>20} {'max |T - T0| (J)':>17}  T0 = "
          f"{common.run(model, q0, v0, 'se3', 1e-3, duration=0.0)['kinetic'][0]:.1f} J")
    for group in ("se3", "so3xr3"):
        for h in STEPS:
            r = common.run(model, q0, v0, group, h)
            drift, dT = r["errors"][:, 0], np.abs(r["kinetic"] - r["kinetic"][0])
            print(f"{group:>7} {h:7.0e} {drift.max():20.3e} {dT.max():17.3e}")
            if h == STEPS[0]:
                axes[0].semilogy(r["t"][1:], np.maximum(drift[1:], 1e-17), label=group)
                axes[1].semilogy(r["t"][1:], np.maximum(dT[1:], 1e-17), label=group)
    for h in STEPS:
        drift, dT = paper_so3xr3(h)
        print(f"{'paper':>7} {h:7.0e} {drift:20.3e} {dT:17.3e}   (the paper's SO(3) x R3 equations, world-axes rows)")
    axes[0].set(xlabel="t (s)", ylabel="pivot drift (m)", title="E1 heavy top, h = 1 ms")
    axes[1].set(xlabel="t (s)", ylabel="|T − T₀| (J)", title="kinetic energy drift")
    common.save(fig, args.out, "muller_terze_e1.png", legends=axes)


if __name__ == "__main__":
    main()
