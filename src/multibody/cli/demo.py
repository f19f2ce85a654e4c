"""``multibody demo [MODEL]`` (``python3 run.py demo``): the showcase.

The demo loads a robot shipped with the package (or a model file given on
the command line), prints its structure and its kinematics, then simulates
it under computed-torque control tracking a joint trajectory and writes a
report: a summary in the terminal, a PNG of energy, joint motion (labelled
by joint name) and tracking error, the trajectory (``multibody view``
replays it) and, with the viewer, an HTML animation to open in a browser."""
import os
import time

import numpy as np

from ._common import CommandError, load_model, viz_function


def _fmt(v):
    return "[" + ", ".join(f"{x:+.4f}" for x in v) + "]"


def demo(path=None, seed=0, out=print):
    """Print the structure and kinematics of the model in ``path`` (default:
    the shipped 7-DoF arm, with its SRDF); returns the model."""
    return _demo(path, seed, out)[0]


def _demo(path, seed, out):
    """:func:`demo`, returning ``(model, options)``: the loading options
    that the trajectory records (``multibody view`` reloads the model)."""
    import multibody as mb

    t0 = time.perf_counter()
    model, path, options = load_model(path or "mb_arm")
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
    return model, options


def tracking_demo(model, duration=5.0, dt=1e-3, out_dir="out", out=print, meta=None, html=True, files=None):
    """Simulate ``model`` for ``duration`` s (RK4, step ``dt``) under
    computed-torque control ``τ = RNEA(q, v, q̈_d + Kp e + Kd ė)``, held
    over each step (a 1/dt Hz controller), tracking
    ``q_d(t) = q0 + A sin(2π f t)`` per joint, with the joint damping of the
    model file acting; writes ``out_dir/demo.png`` (joints labelled by
    name), ``out_dir/demo_trajectory.npz`` (with ``meta`` added to its
    metadata) and, when ``html`` and the viewer is installed,
    ``out_dir/demo.html``; prints their paths (and records them in the
    dict ``files``, kind -> path, if given). Returns ``(trajectory,
    tracking error)``."""
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
    files = {} if files is None else files
    path = os.path.join(out_dir, "demo.png")
    try:
        plot_trajectory = viz_function("plot_trajectory", "the PNG report")
        plot_trajectory(traj, path, extra={"tracking error (rad)": (traj.t, np.maximum(err, 1e-16))},
                        title=f"{model.name}: computed-torque tracking", model=model)
        out(f"  plot: {path}")
        files["plot"] = path
    except (CommandError, ImportError) as e:  # matplotlib is an extra: the demo runs without it
        out(f"  (no plot: {e}; pip install multibody[viz])")
    traj.meta.update(meta or {})
    path = os.path.join(out_dir, "demo_trajectory.npz")
    traj.save(path)
    files["trajectory"] = path
    out(f"  trajectory: {path}" + (f" (replay it: multibody view {path})" if meta else ""))
    if html:
        path = os.path.join(out_dir, "demo.html")
        try:
            export_html = viz_function("export_html", "the animation")
        except CommandError as e:
            out(f"  (no animation: {e})")
        else:
            export_html(model, traj, path)
            files["html"] = path
            out(f"  animation: {path} (open it in a web browser)")
    return traj, err


def run_demo(path=None, seed=0, duration=5.0, out_dir="out", open_browser=False, out=print):
    """The whole demo: :func:`demo`, then :func:`tracking_demo` writing its
    report into ``out_dir``; with ``open_browser`` the HTML animation is
    opened in a web browser."""
    model, options = _demo(path, seed, out)
    files = {}
    tracking_demo(model, duration, out_dir=out_dir, out=out, meta=options, files=files)
    if open_browser and "html" in files:
        import webbrowser
        webbrowser.open("file://" + os.path.abspath(files["html"]))
    return files
