"""Command line of multibody (L6): ``python -m multibody demo [URDF]``.

The demo loads a robot shipped with the package (or a URDF given on the
command line), prints its structure and its kinematics, then simulates it
under computed-torque control tracking a joint trajectory and writes a
report: a summary in the terminal and a PNG of energy, joint motion and
tracking error."""
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

    # the shipped arm comes with its SRDF: the self-collision pairs MoveIt would disable (docs/contact.md)
    srdf = os.path.join(DATA, "mb_arm.srdf") if path is None else None
    path = path or os.path.join(DATA, "mb_arm.urdf")
    t0 = time.perf_counter()
    model = mb.load_urdf(path, srdf=srdf)
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


def tracking_demo(model, duration=5.0, dt=1e-3, out_dir="out", out=print):
    """Simulate ``model`` for ``duration`` s (RK4, step ``dt``) under
    computed-torque control ``τ = RNEA(q, v, q̈_d + Kp e + Kd ė)``, held
    over each step (a 1/dt Hz controller), tracking
    ``q_d(t) = q0 + A sin(2π f t)`` per joint, with the joint damping of the
    model file acting; writes ``out_dir/demo.png``."""
    import multibody as mb

    q0 = model.neutral()
    lo = np.where(np.isfinite(model.lower_limit), model.lower_limit, -np.pi)
    hi = np.where(np.isfinite(model.upper_limit), model.upper_limit, np.pi)
    amp = 0.15 * (hi - lo)
    centre = 0.5 * (hi + lo)
    freq = 0.2 + 0.03 * np.arange(model.nv)  # Hz; keeps every joint within its velocity and effort limits
    kp, kd = 2500.0, 100.0  # critically damped error dynamics: ë + 100 ė + 2500 e = 0

    def desired(t):
        w = 2 * np.pi * freq
        return centre + amp * np.sin(w * t), amp * w * np.cos(w * t), -amp * w * w * np.sin(w * t)

    # the model's joint damping acts in the simulation; the controller cancels it (feed-forward)
    damping = model.damping.copy()

    def controller(t, q, v):
        qd, vd, ad = desired(t)
        return mb.rnea(model, q, v, ad + kp * (qd - q) + kd * (vd - v)) + damping * v

    qd0, vd0, _ = desired(0.0)
    start = np.clip(qd0, lo, hi)
    sim = mb.Simulator(model, dt, "rk4", q0=start, v0=vd0)
    t0 = time.perf_counter()
    sim.step(controller(0.0, start, vd0))  # compiles the kernels (or loads them from Numba's cache)
    warmup = time.perf_counter() - t0
    sim.reset(start, vd0)
    t0 = time.perf_counter()
    traj = sim.rollout(duration=duration, controller=controller, progress=False)
    wall = time.perf_counter() - t0
    err = np.array([np.abs(traj.q[k] - desired(t)[0]).max() for k, t in enumerate(traj.t)])
    v_mid = 0.5 * (traj.v[1:] + traj.v[:-1])  # trapezoidal quadrature of the powers
    work = np.sum(np.einsum("ij,ij->i", traj.tau[1:], v_mid)) * dt
    dissipated = np.sum(damping * v_mid * v_mid) * dt
    out(f"\nsimulated {duration:g} s of computed-torque tracking with RK4, dt = {dt:g} s: "
        f"{len(traj.t) - 1} steps in {wall:.2f} s ({(len(traj.t) - 1) / wall:,.0f} steps/s; first step with "
        f"compilation {warmup:.2f} s)")
    settle = 0.1 * duration
    out(f"  max tracking error {err.max():.2e} rad (after {settle:g} s: {err[traj.t >= settle].max():.2e} rad; "
        f"a 1/dt Hz zero-order-hold controller tracks to O(dt))")
    dE = traj.energy[-1] - traj.energy[0]
    out(f"  energy {traj.energy[0]:.3f} J -> {traj.energy[-1]:.3f} J: change {dE:+.4f} J = actuator work "
        f"{work:+.4f} J - damper dissipation {dissipated:.4f} J (balance residual {dE - work + dissipated:+.1e} J)")
    out(f"  actuator limits: effort clamped in {int(traj.effort_clamped.any(axis=1).sum())} steps, velocity in "
        f"{int(traj.velocity_clamped.any(axis=1).sum())} steps")
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, "demo.png")
    try:
        from .viz import plot_trajectory
        plot_trajectory(traj, path, extra={"tracking error (rad)": (traj.t, np.maximum(err, 1e-16))},
                        title=f"{model.name}: computed-torque tracking")
        out(f"  report: {path}")
    except ImportError:
        out("  (install multibody[viz] for the PNG report)")
    traj.save(os.path.join(out_dir, "demo_trajectory.npz"))
    return traj, err


def main(argv=None):
    p = argparse.ArgumentParser(prog="multibody", description=__doc__)
    sub = p.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("demo", help="load a robot and print its structure and kinematics")
    d.add_argument("urdf", nargs="?", help="URDF file (default: the shipped 7-DoF arm)")
    d.add_argument("--seed", type=int, default=0)
    d.add_argument("--duration", type=float, default=5.0, help="simulated seconds")
    d.add_argument("--out", default="out", help="folder for the report")
    args = p.parse_args(argv)
    if args.cmd == "demo":
        model = demo(args.urdf, args.seed)
        tracking_demo(model, args.duration, out_dir=args.out)
    return 0
