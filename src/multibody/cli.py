"""Command line of multibody (L6): ``python -m multibody demo [URDF]``.

The demo loads a robot shipped with the package (or a URDF given on the
command line), prints its structure and its forward kinematics at the
neutral and at a random configuration."""
import argparse
import os
import time

import numpy as np

DATA = os.path.join(os.path.dirname(__file__), "data", "robots")


def _fmt(v):
    return "[" + ", ".join(f"{x:+.4f}" for x in v) + "]"


def demo(path=None, seed=0, out=print):
    """Run the demo on ``path`` (default: the shipped 7-DoF arm)."""
    import multibody as mb

    path = path or os.path.join(DATA, "mb_arm.urdf")
    t0 = time.perf_counter()
    model = mb.load_urdf(path)
    out(f"loaded {os.path.basename(path)} in {1e3 * (time.perf_counter() - t0):.1f} ms")
    out(model.summary())
    out(f"nq = {model.nq}, nv = {model.nv}, bodies = {model.nbodies - 1} (+ world), "
        f"frames = {len(model.frames)}, total mass = {model.total_mass:.3f} kg")
    for label, q in (("neutral", model.neutral()), (f"random (seed {seed})", model.random_configuration(seed))):
        out(f"\nforward kinematics at the {label} configuration q = {_fmt(q)}")
        oMf = mb.frame_placements(model, q)
        for f in model.frames:
            if f.kind in ("body", "fixed"):
                T = oMf[f.index]
                rpy = mb.spatial.euler.rotation_to_rpy(T[:3, :3])
                out(f"  {f.name:<10} position {_fmt(T[:3, 3])} m   rpy {_fmt(rpy)} rad")
        com = mb.center_of_mass(model, q)
        tool = model.frames[-1].name
        J = mb.jacobian(model, q, tool, "local_world_aligned")
        out(f"  centre of mass {_fmt(com)} m; potential energy {mb.potential_energy(model, q):.3f} J")
        out(f"  '{tool}' Jacobian (6 x {model.nv}, angular rows first), singular values "
            f"{_fmt(np.linalg.svd(J, compute_uv=False))}")
    return model


def main(argv=None):
    p = argparse.ArgumentParser(prog="multibody", description=__doc__)
    sub = p.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("demo", help="load a robot and print its structure and kinematics")
    d.add_argument("urdf", nargs="?", help="URDF file (default: the shipped 7-DoF arm)")
    d.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    if args.cmd == "demo":
        demo(args.urdf, args.seed)
    return 0
