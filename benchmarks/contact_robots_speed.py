"""Cost of a step with contact on robots, per contact solver, against
MuJoCo's ``mj_step`` on the same URDF in one process; and the collision
detection alone against MuJoCo and coal (docs/contact.md, "Robots on the
ground").

    python benchmarks/contact_robots_speed.py [--seconds 1.0] [--robots talos,solo12]

Scenes (dt = 1 ms, a ground plane, the robot's lowest hull vertex on it
at the start; both libraries load the URDF with its collision meshes,
convex hulls, the SRDF's disabled pairs and contact_robots.py's
exclusions, through contact_robots.mujoco_model for MuJoCo):

* Talos (talos_reduced) standing in its SRDF ``half_sitting`` posture,
  every joint held there by a PD controller with the gains of
  tests/contact/test_verification.py ``test_talos_stands_under_pd`` (40 Hz
  on each joint's effective inertia, damping ratio 1);
* Solo12 trotting from its SRDF ``standing`` posture under a PD controller
  (kp = 5 N·m/rad, kd = 0.1 N·m·s/rad): the diagonal pairs (FL, HR) and
  (FR, HL) in antiphase at 2 Hz, each knee's target flexed by 0.3 sin(ωt +
  φ) rad beyond its standing angle and each hip's (HFE) 0.2 cos(ωt + φ)
  rad, so that a leg swings forward while lifted; the amplitudes ramp up
  over the first 0.25 s and the velocity targets are the targets'
  derivatives.

The controllers are the same law with the same gains and the same
target tables: multibody's built-in ``mb.PD(sim.model, kp, kd, target,
velocity_target)`` in ``sim.rollout`` (compiled, row k at t_k = k·dt),
MuJoCo's τ = kp (q_ref,k − q) + kd (v_ref,k − v) written to
``qfrc_applied`` from Python before ``mj_step`` k. MuJoCo's URDF import
makes the URDF's joint ``friction`` a frictionloss (Talos: 1 N·m on 20
joints) that multibody does not apply (docs/parameters.md): it is zeroed
in MuJoCo so that the dynamics match.

Solvers: multibody's ``pgs`` (default), ``lemke`` (``friction="box"``)
and ``newton`` (MuJoCo's default problem: soft contact, pyramid) against
mj_step with MuJoCo's defaults; ``pivoting`` (frictionless rigid LCP)
against MuJoCo with every geom's friction 0 and condim 1. Each solver is
first probed for 20 steps (after one untimed step: compilation, cached);
if those average more than 50 ms a step it prints "skipped (> 50 ms)",
otherwise a fresh simulator runs the whole trajectory in one rollout
(µs/step = its wall time / steps) and MuJoCo's matching run follows at
once (µs/step = the time in mj_step alone); the ratio is of the two ("*":
the solver reached its iteration cap in some step, its SimulationWarning;
the step then used its last iterate). Next
to each: a check that the robot did what it should (Talos: the largest
change of the base height < 1 cm, "standing", else "FELL"; Solo12: the
base's forward travel and its lowest height, "forward" if it advanced >
1 cm and stayed above 0.12 m, "up" if it only stayed up, else "FELL"), so
that a time of a fallen robot shows as such.

Detection alone at the start configuration: multibody's
``sim.contact.detect(q)`` against ``mj_kinematics`` + ``mj_collision``
(margin 0, and pair margins of 1 cm) and against coal through Pinocchio's URDF geometry model (the meshes'
convex hulls, ``buildConvexHull``, plus a coal ``Halfspace`` for the
ground), with multibody's candidate pairs as its collision pairs and
security margins equal to multibody's reach: ``pin.computeCollisions``
over every pair, and through its ``BroadPhaseManager`` (coal's
``DynamicAABBTreeCollisionManager``); see benchmarks/contact.py.
"""
import argparse
import os
import time
import warnings

import coal
import mujoco
import numpy as np
import pinocchio as pin

import multibody as mb
from _common import robot_path, timeit
from contact import BUDGET, coal_detection, mujoco_detection, print_detection
from contact_robots import EXCLUDE, POSTURE, SRDF, mujoco_model
from oracles import robots_dir

DT = 1e-3
#: name: Simulator options; the MuJoCo variant each is compared with
SOLVERS = {"pgs": ({}, "defaults"),
           "lemke": (dict(contact_solver="lemke", friction="box"), "defaults"),
           "newton": (dict(contact_solver="newton"), "defaults"),
           "pivoting": (dict(contact_solver="pivoting"), "frictionless")}
TROT = dict(frequency=2.0, knee=0.3, hip=0.2, ramp=0.25)


def robot(name):
    """(model, q0): the robot with its SRDF (and contact_robots.py's
    exclusions), in its SRDF posture with its lowest hull vertex at z = 0."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mb.ModelWarning)
        model = mb.load_urdf(robot_path(name), floating_base=True, srdf=os.path.join(robots_dir(), SRDF[name]))
    if EXCLUDE[name]:
        model = mb.load_srdf(model, f"<robot name='{name}'>" + "".join(
            f"<disable_collisions link1='{a}' link2='{b}'/>" for a, b in EXCLUDE[name]) + "</robot>")
    q0 = np.array(model.reference_postures[POSTURE[name]])
    X = mb.forward_kinematics(model, q0)
    q0[2] -= min(float((g.vertices @ (X[g.body] @ g.placement)[2, :3] + (X[g.body] @ g.placement)[2, 3]).min())
                 for g in model.collision_geometries if g.vertices is not None)
    return model, q0


def joint_gains(model, q, frequency, damping_ratio):
    """tests/contact/test_verification.py's gains: per actuated coordinate
    stiffness m_i ω² and damping 2ζ m_i ω, m_i = 1/(M(q)⁻¹)_ii (the floating
    base: zero)."""
    meff = 1.0 / np.diag(np.linalg.inv(mb.crba(model, q)))
    w = 2 * np.pi * frequency
    kp, kd = meff * w * w, 2 * damping_ratio * meff * w
    kp[:6] = kd[:6] = 0.0
    return kp, kd


def references(name, model, q0, steps):
    """(kp (nv,), kd (nv,), targets (steps, nq), velocity targets (steps,
    nv)): Talos held at q0; Solo12's trot (module docstring)."""
    targets = np.tile(q0, (steps, 1))
    vtargets = np.zeros((steps, model.nv))
    if name == "talos":
        kp, kd = joint_gains(model, q0, 40.0, 1.0)
        return kp, kd, targets, vtargets
    kp, kd = np.full(model.nv, 5.0), np.full(model.nv, 0.1)
    kp[:6] = kd[:6] = 0.0
    t = DT * np.arange(steps)
    w = 2 * np.pi * TROT["frequency"]
    ramp = np.minimum(t / TROT["ramp"], 1.0)
    dramp = np.where(t < TROT["ramp"], 1.0 / TROT["ramp"], 0.0)
    for leg in ("FL", "FR", "HL", "HR"):
        phase = 0.0 if leg in ("FL", "HR") else np.pi
        for joint, amp, wave, dwave in (
                ("KFE", TROT["knee"], np.sin, np.cos),
                ("HFE", TROT["hip"], np.cos, lambda x: -np.sin(x))):
            j = model.joints[model.joint_id(f"{leg}_{joint}")]
            a = amp * (np.sign(q0[j.q_slice.start]) if joint == "KFE" else 1.0)  # knees: flex further
            targets[:, j.q_slice.start] += a * ramp * wave(w * t + phase)
            vtargets[:, j.v_slice.start] = a * (dramp * wave(w * t + phase) + ramp * w * dwave(w * t + phase))
    return kp, kd, targets, vtargets


def check(name, z, x):
    """What the robot did, from its base height z and forward position x over the run."""
    if name == "talos":
        dz = np.abs(z - z[0]).max()
        return f"max |dz| {1e3 * dz:5.1f} mm: {'standing' if dz < 0.01 else 'FELL'}"
    dx = x[-1] - x[0]
    verdict = "FELL" if z.min() < 0.12 else ("forward" if dx > 0.01 else "up")
    return f"dx {100 * dx:+6.1f} cm, z min {z.min():.3f} m: {verdict}"


def run_multibody(model, q0, kp, kd, targets, vtargets, steps, **options):
    """(s per step, contacts at the end, base z (steps+1,), base x, the
    solver at its cap in some step: its SimulationWarning) of a rollout
    with the built-in PD; or {'skipped'} / {'failed': class}."""
    def pd(sim, a, b):
        return mb.PD(sim.model, kp, kd, target=targets[a:b], velocity_target=vtargets[a:b])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", mb.SimulationWarning)
        try:
            sim = mb.Simulator(model, dt=DT, q0=q0, ground=True, **options)
            sim.rollout(steps=1, controller=pd(sim, 0, 1))  # compilation (cached), untimed
            t0 = time.perf_counter()
            sim.rollout(steps=20, controller=pd(sim, 1, 21))
            if (time.perf_counter() - t0) / 20 > BUDGET:
                return {"skipped": True}
            caught.clear()
            sim = mb.Simulator(model, dt=DT, q0=q0, ground=True, **options)
            controller = pd(sim, 0, steps)
            t0 = time.perf_counter()
            traj = sim.rollout(steps=steps, controller=controller)
            per = (time.perf_counter() - t0) / steps
        except mb.MultibodyError as e:
            return {"failed": type(e).__name__}
    capped = any("iteration cap" in str(w.message) for w in caught)
    return {"step": per, "contacts": sim.contact.count, "z": traj.q[:, 2], "x": traj.q[:, 0], "capped": capped}


def run_mujoco(m, qadr, vadr, q0, kp, kd, targets, vtargets, steps):
    """The same run in MuJoCo: the same PD law from Python into
    qfrc_applied; s per mj_step (timing mj_step alone), contacts at the
    end, base z and x."""
    d = mujoco.MjData(m)
    d.qpos[qadr] = q0
    mujoco.mj_forward(m, d)
    act = vadr[6:]
    kp, kd = kp[6:], kd[6:]
    qj = qadr[7:]
    z, x = [d.qpos[2]], [d.qpos[0]]
    elapsed = 0.0
    for k in range(steps):
        d.qfrc_applied[act] = kp * (targets[k, 7:] - d.qpos[qj]) + kd * (vtargets[k, 6:] - d.qvel[act])
        t0 = time.perf_counter()
        mujoco.mj_step(m, d)
        elapsed += time.perf_counter() - t0
        z.append(d.qpos[2])
        x.append(d.qpos[0])
    return {"step": elapsed / steps, "contacts": d.ncon, "z": np.array(z), "x": np.array(x)}


def mujoco_variant(name, model, kind):
    """MuJoCo's model of the robot (contact_robots.mujoco_model) with the
    URDF's joint friction zeroed; ``frictionless``: every geom's friction
    0 and condim 1. Returns (m, qadr, vadr)."""
    m, qadr, vadr = mujoco_model(name, model)
    m.opt.timestep = DT
    m.dof_frictionloss[:] = 0.0
    if kind == "frictionless":
        m.geom_friction[:] = 0.0
        m.geom_condim[:] = 1
    return m, qadr, vadr


def pinocchio_geometry(name, table):
    """Pinocchio's model and collision model of the URDF, meshes replaced
    by their convex hulls (``buildConvexHull``, as
    tests/collision/test_robot_distances.py), a coal Halfspace ``ground``
    on the universe; and the table's geometry index -> geometry id (by
    name)."""
    share = os.path.dirname(os.path.dirname(robots_dir()))
    pm, gm, _ = pin.buildModelsFromUrdf(robot_path(name), share, pin.JointModelFreeFlyer())
    for go in gm.geometryObjects:
        if isinstance(go.geometry, coal.BVHModelBase):
            go.geometry.buildConvexHull(True, "Qt")
            go.geometry = go.geometry.convex
    gm.addGeometryObject(pin.GeometryObject("ground", 0, pin.SE3.Identity(),
                                            coal.Halfspace(np.array([0.0, 0.0, 1.0]), 0.0)))
    ids = {go.name: i for i, go in enumerate(gm.geometryObjects)}
    return pm, gm, {k: ids[g.name] for k, g in enumerate(table.geometries)}


def timed_detection(name, model, q0):
    """Detection alone at q0: a row of contact.print_detection."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mb.ModelWarning)
        sim = mb.Simulator(model, dt=DT, q0=q0, ground=True)
    n_mb = sim.contact.detect(q0)
    t_mb = timeit(lambda: sim.contact.detect(q0))
    m, qadr, _ = mujoco_variant(name, model, "defaults")
    qpos = m.qpos0.copy()
    qpos[qadr] = q0
    mj = mujoco_detection(m, qpos)
    mj_margin = mujoco_detection(m, qpos, 0.005)
    table = sim.contact.geometry
    pm, gm, index = pinocchio_geometry(name, table)
    t_pairs, t_broad, n_coal, _ = coal_detection(sim.model, table, pm, gm, index, q0)
    return len(table), (t_mb, n_mb), mj, mj_margin, (t_pairs, t_broad, n_coal)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=float, default=1.0)
    ap.add_argument("--robots", default="talos,solo12")
    ap.add_argument("--solvers", default=",".join(SOLVERS))
    args = ap.parse_args()
    steps = int(round(args.seconds / DT))
    print(f"{time.strftime('%Y-%m-%d %H:%M')}, load average {os.getloadavg()[0]:.1f}; *: the solver reached its "
          "iteration cap in some step")
    detection = {}
    for name in args.robots.split(","):
        model, q0 = robot(name)
        kp, kd, targets, vtargets = references(name, model, q0, steps)
        what = "standing, PD to half_sitting" if name == "talos" else "trotting under PD"
        print(f"\n{name} ({what}), {args.seconds} s at dt = 1 ms:")
        print(f"  {'solver':<9} {'us/step':>9} {'mj_step us':>10} {'ratio':>6} {'contacts mb/mj':>14}   "
              f"{'multibody':<36} {'MuJoCo':<36}")
        for solver in args.solvers.split(","):
            options, kind = SOLVERS[solver]
            ours = run_multibody(model, q0, kp, kd, targets, vtargets, steps, **options)
            if "step" not in ours:
                why = "skipped (> 50 ms)" if "skipped" in ours else f"failed: {ours['failed']}"
                print(f"  {solver:<9} {why}")
                continue
            theirs = run_mujoco(*mujoco_variant(name, model, kind), q0, kp, kd, targets, vtargets, steps)
            contacts = f"{ours['contacts']}/{theirs['contacts']}"
            print(f"  {solver:<9} {1e6 * ours['step']:>8.1f}{'*' if ours['capped'] else ' '} "
                  f"{1e6 * theirs['step']:>10.1f} "
                  f"{ours['step'] / theirs['step']:>6.2f} {contacts:>14}   "
                  f"{check(name, ours['z'], ours['x']):<36} {check(name, theirs['z'], theirs['x']):<36}"
                  + ("  (MuJoCo frictionless)" if kind == "frictionless" else ""))
        detection[name] = timed_detection(name, model, q0)
    print("\nat the start configuration:")
    print_detection(detection, "robot", 8)

if __name__ == "__main__":
    main()
