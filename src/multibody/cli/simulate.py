"""``multibody simulate MODEL``: a rollout from the command line, saved,
plotted, exported or shown."""
import os
import time

import numpy as np

from ._common import CommandError, viz_function

# default PD bandwidth (rad/s): slow against every integrator's stability limit at the default dt (ω dt = 0.01)
OMEGA = 10.0


def gravity_stiffness(model, q):
    """``∂g/∂q`` (nv, nv) at ``q``: the derivative of the gravity torques
    ``g(q)`` (:func:`multibody.gravity_forces`) on the tangent space, column
    k along ``model.integrate(q, ε e_k)`` — the analytic RNEA derivative at
    v = 0, a = 0 (:func:`multibody.rnea_derivatives`)."""
    from ..dynamics import rnea_derivatives

    return rnea_derivatives(model, q, np.zeros(model.nv), np.zeros(model.nv))[0]


def pd_controller(model, target, kp=None, kd=None):
    """PD control toward ``target`` (nq) with gravity compensation at the
    target, as a compiled :class:`multibody.PD`:
    ``τ = g(q*) + K_p (q* ⊖ q) − K_d v`` on every joint but free (floating)
    joints, which no motor drives (their gains and compensation are zero).

    At the target the compensation balances gravity exactly, so the target
    is an equilibrium (without contact and within the effort limits); it is
    stable when ``K_p + ∂g/∂q(q*)`` is positive definite. The default gains
    are per joint, from its effective inertia at the target
    ``m_i = 1 / (M⁻¹)_ii`` (the inertia it moves when the other joints are
    free: smaller than ``M_ii``, and what bounds the step of an explicit
    controller), the model's joint damping ``b_i`` and the row sums
    ``r_i = Σ_j |∂g_i/∂q_j(q*)|`` of the gravity stiffness:
    ``K_d = 2 ω m_i`` and ``K_p = max(ω² m_i + r_i, ω (K_d + b_i))`` with
    ω = 10 rad/s: ``K_p + ∂g/∂q`` is diagonally dominant, hence positive
    definite; each joint alone is critically damped, or, when its own
    damper dominates (a light wrist), overdamped with its slow pole
    ``K_p / (K_d + b_i)`` still at ω or faster. ``kp``, ``kd``: a number or nv
    numbers instead."""
    from .. import PD, gravity_forces, inverse_inertia

    driven = np.ones(model.nv)
    for j in model.joints[1:]:
        if j.type == "free":
            driven[j.v_slice] = 0.0
    m = 1.0 / np.diag(inverse_inertia(model, target))
    if kd is None:
        kd = 2 * OMEGA * m
    if kp is None:
        G = gravity_stiffness(model, target) * np.outer(driven, driven)
        kp = np.maximum(OMEGA ** 2 * m + np.abs(G).sum(axis=1), OMEGA * (kd + model.damping))
    gravity = gravity_forces(model, target)
    return PD(model, np.broadcast_to(kp, model.nv) * driven, np.broadcast_to(kd, model.nv) * driven, target=target,
              feedforward=gravity * driven)


def computed_torque_controller(model, target, kp=None, kd=None):
    """Computed-torque control toward ``target``
    (:class:`multibody.ComputedTorque`): ``τ = M(q)(K_p e + K_d ė) + C(q, v)
    + g(q) + b v``, so that every joint error follows ``ë + K_d ė + K_p e =
    0`` (up to the zero-order hold of τ over a step, effort limits and
    contact), whatever the coupling of the joints; default ``K_p = ω²``,
    ``K_d = 2ω`` (1/s², 1/s) with ω = 10 rad/s: critically damped.
    A model with a free (floating) joint is refused: computed torque would
    push its base."""
    from .. import ComputedTorque

    if any(j.type == "free" for j in model.joints[1:]):
        raise CommandError(f"computed_torque would actuate the free joint of model '{model.name}'; use --controller "
                           "pd (free joints are not driven)")
    return ComputedTorque(model, OMEGA ** 2 if kp is None else kp, 2 * OMEGA if kd is None else kd, target=target)


def simulate(model, options, duration, dt, integrator, q0=None, v0=None, controller=None, ground=False,
             contact_solver="pgs", out_path=None, plot=None, html=None, view=False, port=None, out=print):
    """Simulate ``model`` for ``duration`` s from ``(q0, v0)`` (default: the
    neutral configuration at rest) with ``controller`` (a
    :class:`multibody.PD`, :class:`multibody.ComputedTorque` or None: no
    joint forces); ``ground`` adds a
    ground plane with contact. Writes the trajectory (``out_path``, with
    ``options`` — the model file and how it was loaded — in its metadata,
    so that ``multibody view`` finds the model), the plot, the HTML
    animation, and shows it in the viewer (``view``: live while it runs, in
    real time, then played back), as asked. Returns the trajectory."""
    from .. import Simulator

    sim = Simulator(model, dt, integrator, ground=ground, contact_solver=contact_solver, q0=q0, v0=v0)
    shown_model = sim.model  # with the ground plane when asked: the viewer draws it
    viewer = open_viewer(shown_model, port, out) if view else None
    try:
        t0 = time.perf_counter()
        traj = sim.rollout(duration=duration, controller=controller, progress=True, view=viewer)
        wall = time.perf_counter() - t0
        report(model, traj, controller, integrator, dt, wall, options, ground, out_path, plot, html, shown_model, out)
        if viewer is not None:
            viewer.play(traj)
            wait(f"playing '{model.name}' in the viewer at {viewer.url}", out)
    finally:
        if viewer is not None:
            viewer.close()
    return traj


def report(model, traj, controller, integrator, dt, wall, options, ground, out_path, plot, html, shown_model, out):
    """Print what the run did and write the files asked for."""
    traj.meta.update(options, ground=bool(ground), controller=None if controller is None else
                     "computed_torque" if type(controller).__name__ == "ComputedTorque" else "pd")
    if controller is not None:
        traj.meta["target"] = [float(x) for x in controller.target[0]]
    steps = len(traj.t) - 1
    out(f"simulated {traj.t[-1]:g} s of '{model.name}' with {integrator}, dt = {dt:g} s: {steps} steps in "
        f"{wall:.2f} s ({steps / max(wall, 1e-9):,.0f} steps/s, compilation included; paced to real time "
        f"when shown live)")
    out(f"  energy {traj.energy[0]:.6g} J -> {traj.energy[-1]:.6g} J; largest constraint residual "
        f"{abs(traj.constraint_residual.max()):.2e}; effort clamped in {int(traj.effort_clamped.any(axis=1).sum())} steps")
    from ..viz.plots import coordinate_names
    names = coordinate_names(model)
    shown = ", ".join(f"{n} {x:+.4f}" for n, x in zip(names[:12], traj.q[-1]))
    out(f"  final q: {shown}{' ...' if len(names) > 12 else ''}")
    if controller is not None:
        err = np.abs(model.difference(traj.q[-1], controller.target[0]))
        if err.size:
            k = int(np.argmax(err))
            joint = next(j.name for j in model.joints[1:] if j.v_slice.start <= k < j.v_slice.stop)
            out(f"  {traj.meta['controller']}: largest |target - q| at the end {err[k]:.2e} (joint {joint})")
    if out_path:
        traj.save(out_path)
        out(f"  trajectory: {out_path} (multibody view {out_path})")
    if plot:
        plot_trajectory = viz_function("plot_trajectory", "--plot")
        plot_trajectory(traj, plot, model=model, title=f"{model.name}: {integrator}, dt = {dt:g} s")
        out(f"  plot: {plot}")
    if html:
        viz_function("export_html", "--html")(shown_model, traj, html)
        out(f"  animation: {html} (open it in a browser)")


def open_viewer(model, port, out):
    """A live :class:`multibody.viz.Viewer` of ``model`` (its URL printed)."""
    viewer = viz_function("Viewer", "--view")(model, port=port)
    out(f"showing '{model.name}' live at {viewer.url}")
    return viewer


def play(model, traj, port, out):
    """Play ``traj`` in the viewer until the user presses Enter (or Ctrl-C)."""
    Viewer = viz_function("Viewer", "--view")
    viewer = Viewer(model, port=port)
    try:
        viewer.play(traj)
        wait(f"playing '{model.name}' in the viewer at {viewer.url}", out)
    finally:
        viewer.close()


def wait(what, out):
    """Print ``what`` and wait for Enter or Ctrl-C (at once when stdin is
    closed or not readable)."""
    out(f"{what} (press Enter or Ctrl-C to close)")
    try:
        input()
    except (EOFError, OSError, KeyboardInterrupt):
        pass


def output_folder(path, what):
    """CommandError unless the folder of ``path`` exists (so that a long
    simulation does not end on an unwritable output)."""
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise CommandError(f"{what}: folder '{folder}' does not exist")
