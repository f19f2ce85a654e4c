"""E2 of Müller & Terze (seed 004, §5.2): the spherical double pendulum in
gravity, RKMK4 on SE(3) and on SO(3) × R³ in maximal coordinates, 1 s at
h = 1 ms.

The claims: the ground joint is kept to round-off on SE(3) (its body moves
in a subgroup) and drifts on SO(3) × R³; the joint between the links (a
relative subgroup motion only) drifts in both, by similar amounts and more
than the ground joint; the total energy drifts comparably. Prints the
table and writes ``muller_terze_e2.png``."""
import numpy as np

import muller_terze_common as common

H = 1e-3


def main(argv=None):
    args = common.parser(__doc__).parse_args(argv)
    model, q0, v0 = common.double_pendulum()
    fig, axes = common.subplots(1, 3, figsize=(15, 4))
    print(f"{'group':>7} {'max |g1| (m)':>13} {'max |g2| (m)':>13} {'max |E - E0| (J)':>17}")
    for group in ("se3", "so3xr3"):
        r = common.run(model, q0, v0, group, H)
        dE = np.abs(r["energy"] - r["energy"][0])
        print(f"{group:>7} {r['errors'][:, 0].max():13.3e} {r['errors'][:, 1].max():13.3e} {dE.max():17.3e}"
              f"   E0 = {r['energy'][0]:.2f} J")
        for axis, y in zip(axes, (r["errors"][:, 0], r["errors"][:, 1], dE)):
            axis.semilogy(r["t"][1:], np.maximum(y[1:], 1e-17), label=group)
    for axis, title in zip(axes, ("joint 1 (ground)", "joint 2 (between the links)", "total energy drift")):
        axis.set(xlabel="t (s)", title=f"E2 {title}", ylabel="J" if "energy" in title else "m")
    common.save(fig, args.out, "muller_terze_e2.png", legends=axes)


if __name__ == "__main__":
    main()
