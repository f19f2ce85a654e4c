"""E4 of Müller & Terze (seed 004, §5.4): a closed spherical 3-bar linkage
(two links on ball joints at two ground points, joined by a third), RKMK4
on SE(3) and on SO(3) × R³ in maximal coordinates, 1 s at h = 1 ms. The
paper gives none of its parameters: the set-up of
``muller_terze_common.three_bar``.

The claims: the joints at the ground (1 and 3, a loop joint) are kept to
round-off on SE(3) — each link's motion is a subgroup motion even in the
loop — and drift on SO(3) × R³; the joint between the links drifts in both
alike; the energy drifts comparably. Prints the table and writes
``muller_terze_e4.png``."""
import numpy as np

import muller_terze_common as common

H = 1e-3


def main(argv=None):
    args = common.parser(__doc__).parse_args(argv)
    model, q0, v0 = common.three_bar()
    fig, axes = common.subplots(1, 2, figsize=(11, 4))
    print(f"{'group':>7} {'max |g1| (m)':>13} {'max |g2| (m)':>13} {'max |g3| (m)':>13} {'max |E - E0| (J)':>17}")
    for group in ("se3", "so3xr3"):
        r = common.run(model, q0, v0, group, H)
        g, dE = r["errors"], np.abs(r["energy"] - r["energy"][0])
        print(f"{group:>7} {g[:, 0].max():13.3e} {g[:, 1].max():13.3e} {g[:, 2].max():13.3e} {dE.max():17.3e}"
              f"   E0 = {r['energy'][0]:.4f} J")
        for j, style in ((0, "-"), (1, "--"), (2, ":")):
            axes[0].semilogy(r["t"][1:], np.maximum(g[1:, j], 1e-17), style, label=f"{group} joint {j + 1}")
        axes[1].semilogy(r["t"][1:], np.maximum(dE[1:], 1e-17), label=group)
    axes[0].set(xlabel="t (s)", ylabel="m", title="E4 joint errors (1, 3 at the ground)")
    axes[1].set(xlabel="t (s)", ylabel="J", title="total energy drift")
    common.save(fig, args.out, "muller_terze_e4.png", legends=axes)


if __name__ == "__main__":
    main()
