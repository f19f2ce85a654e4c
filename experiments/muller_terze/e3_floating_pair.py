"""E3 of Müller & Terze (seed 004, §5.3): two floating bodies joined by a
ball joint, no gravity, RKMK4 on SE(3) and on SO(3) × R³ in maximal
coordinates, 1 s at h = 1 ms.

The claim: with no body attached to the ground no motion is a subgroup
motion, and both groups drift alike (joint error and kinetic energy);
momentum is conserved by both (the index-1 solve exerts internal forces
only). Prints the table and writes ``muller_terze_e3.png``."""
import numpy as np

import muller_terze_common as common

H = 1e-3


def main(argv=None):
    args = common.parser(__doc__).parse_args(argv)
    model, q0, v0 = common.floating_pair()
    fig, axes = common.subplots(1, 2, figsize=(11, 4))
    print(f"{'group':>7} {'max |g2| (m)':>13} {'max |E - E0| (J)':>17} {'max |dp| (kg m/s)':>18} "
          f"{'max |dL| (N m s)':>17}")
    for group in ("se3", "so3xr3"):
        r = common.run(model, q0, v0, group, H)
        dE = np.abs(r["energy"] - r["energy"][0])
        dm = np.abs(r["momentum"] - r["momentum"][0])
        print(f"{group:>7} {r['errors'][:, 1].max():13.3e} {dE.max():17.3e} {dm[:, 3:].max():18.3e} "
              f"{dm[:, :3].max():17.3e}   E0 = {r['energy'][0]:.4f} J")
        axes[0].semilogy(r["t"][1:], np.maximum(r["errors"][1:, 1], 1e-17), label=group)
        axes[1].semilogy(r["t"][1:], np.maximum(dE[1:], 1e-17), label=group)
    axes[0].set(xlabel="t (s)", ylabel="m", title="E3 joint error")
    axes[1].set(xlabel="t (s)", ylabel="J", title="kinetic energy drift")
    common.save(fig, args.out, "muller_terze_e3.png", legends=axes)


if __name__ == "__main__":
    main()
