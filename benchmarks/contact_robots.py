"""Robots dropped on the ground, multibody against MuJoCo on the same URDF
(docs/contact.md, "Robots on the ground"): Solo12 held by a PD controller
in its SRDF ``standing`` posture and Talos limp, dropped from 5 cm (feet
above the floor), dt = 1 ms. Both load the URDF with its collision meshes
(convex hulls) and the SRDF's disabled pairs (MuJoCo: excludes; its parent
filter already drops adjacent links), a free joint on the root and a
ground plane. multibody runs ``contact_solver="newton"`` (MuJoCo's default
problem and solver: soft contact, pyramidal cone) and its default rigid
contact (PGS, Coulomb disk); MuJoCo its defaults. The collision detection
differs (multibody's GJK/EPA manifolds against MuJoCo's), so the
comparison is qualitative: base height, number of contacts and mechanical
energy over time, and the time per step.

    python benchmarks/contact_robots.py [--seconds 1.5] [--plot docs/img/robots_on_the_ground.png]
"""
import argparse
import os
import time
import warnings
import xml.etree.ElementTree as ET

import mujoco
import numpy as np

import multibody as mb
from _common import robot_path
from oracles import mujoco_addresses, robots_dir

SRDF = {"solo12": "solo_description/srdf/solo.srdf", "talos": "talos_data/srdf/talos.srdf"}
POSTURE = {"solo12": "standing", "talos": "half_sitting"}
# pairs the SRDF keeps that overlap at the posture: Solo12's base hull and its upper legs' hulls (convex
# hulls of concave meshes) overlap by 4 mm at the hips. Excluded for both simulators: rigid contact
# cannot separate links that a joint holds together (docs/contact.md, "Robots on the ground").
EXCLUDE = {"solo12": [("base_link", f"{leg}_UPPER_LEG") for leg in ("FL", "FR", "HL", "HR")], "talos": []}


def mujoco_model(name, model):
    """MuJoCo's model of the robot's URDF with its collision meshes (paths
    made absolute), no visuals, a free joint on the root link, the SRDF's
    disabled pairs excluded, a ground plane; and the qpos/qvel addresses of
    each multibody coordinate (free joint: MuJoCo (v_world, ω_body) against
    multibody's (ω_body, v_body))."""
    root = ET.parse(robot_path(name)).getroot()
    for link in root.iter("link"):
        for el in link.findall("visual"):
            link.remove(el)
    for mesh in root.iter("mesh"):
        f = mesh.get("filename")
        if f.startswith("package://"):
            f = os.path.join(robots_dir(), f.split("/robots/", 1)[1])
        mesh.set("filename", f)
    spec = mujoco.MjSpec.from_string(ET.tostring(root, encoding="unicode"))
    spec.compiler.discardvisual = True
    spec.worldbody.first_body().add_freejoint()
    spec.worldbody.add_geom(type=mujoco.mjtGeom.mjGEOM_PLANE, size=[10, 10, 0.1])
    srdf = ET.parse(os.path.join(robots_dir(), SRDF[name])).getroot()
    bodies = {b.name for b in spec.bodies}
    pairs = [(d.get("link1"), d.get("link2")) for d in srdf.iter("disable_collisions")] + EXCLUDE[name]
    for a, b in pairs:
        if a in bodies and b in bodies:
            spec.add_exclude(bodyname1=a, bodyname2=b)
    m = spec.compile()
    qadr, vadr = mujoco_addresses(m, model)
    return m, qadr, vadr


def scene(name):
    """(model, q0, PD gains (kp, kd) or None): the robot over the ground in
    its SRDF posture, its lowest hull vertex 5 cm above the floor."""
    path = robot_path(name)
    model = mb.load_urdf(path, floating_base=True, srdf=os.path.join(robots_dir(), SRDF[name]))
    if EXCLUDE[name]:
        model = mb.load_srdf(model, f"<robot name='{name}'>" + "".join(
            f"<disable_collisions link1='{a}' link2='{b}'/>" for a, b in EXCLUDE[name]) + "</robot>")
    q0 = np.array(model.reference_postures[POSTURE[name]])
    X = mb.forward_kinematics(model, q0)
    lowest = min(float((g.vertices @ (X[g.body] @ g.placement)[2, :3] + (X[g.body] @ g.placement)[2, 3]).min())
                 for g in model.collision_geometries if g.vertices is not None)
    q0[2] += 0.05 - lowest
    gains = (5.0, 0.1) if name == "solo12" else None
    return model, q0, gains


def run_multibody(model, q0, gains, steps, **options):
    sim = mb.Simulator(model, dt=1e-3, q0=q0, ground=True, **options)
    target = q0[7:]

    def pd(t, q, v):
        tau = np.zeros(model.nv)
        if gains is not None:
            tau[6:] = gains[0] * (target - q[7:]) - gains[1] * v[6:]
        return tau
    t0 = time.perf_counter()
    traj = sim.rollout(steps=steps, controller=pd, contacts=True)
    per_step = (time.perf_counter() - t0) / steps
    return traj.q[:, 2], traj.contacts.count, traj.kinetic + traj.potential, per_step


def run_mujoco(name, model, q0, gains, steps):
    m, qadr, vadr = mujoco_model(name, model)
    m.opt.timestep = 1e-3
    m.opt.enableflags |= mujoco.mjtEnableBit.mjENBL_ENERGY
    d = mujoco.MjData(m)
    d.qpos[qadr] = q0
    mujoco.mj_forward(m, d)
    target = q0[7:]
    z, ncon, energy = [d.qpos[2]], [0], [d.energy.sum()]
    elapsed = 0.0
    for _ in range(steps):
        if gains is not None:
            q = d.qpos[qadr]
            v = d.qvel[vadr]
            d.qfrc_applied[vadr[6:]] = gains[0] * (target - q[7:]) - gains[1] * v[6:]
        t0 = time.perf_counter()
        mujoco.mj_step(m, d)
        elapsed += time.perf_counter() - t0
        z.append(d.qpos[2])
        ncon.append(d.ncon)
        energy.append(d.energy.sum())
    return np.array(z), np.array(ncon), np.array(energy), elapsed / steps


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=float, default=1.5)
    ap.add_argument("--robots", default="solo12,talos")
    ap.add_argument("--plot", default=None, help="write the figure here (matplotlib)")
    args = ap.parse_args()
    steps = int(round(args.seconds / 1e-3))
    results = {}
    for name in args.robots.split(","):
        model, q0, gains = scene(name)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            runs = {"multibody newton (soft)": run_multibody(model, q0, gains, steps, contact_solver="newton"),
                    "multibody rigid (PGS)": run_multibody(model, q0, gains, steps),
                    "MuJoCo (defaults)": run_mujoco(name, model, q0, gains, steps)}
        results[name] = runs
        print(f"\n{name} ({'PD to ' + POSTURE[name] if gains else 'limp'}), {args.seconds} s:")
        print(f"  {'':<26} {'base z end (m)':>14} {'contacts end':>12} {'energy start -> end (J)':>26} "
              f"{'us/step':>8}")
        for label, (z, n, e, per) in runs.items():
            print(f"  {label:<26} {z[-1]:>14.4f} {n[-1]:>12d} {e[0]:>12.3f} -> {e[-1]:>11.3f} {1e6 * per:>8.1f}")
    if args.plot:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, axes = plt.subplots(3, len(results), figsize=(5 * len(results), 8), sharex=True, squeeze=False)
        for col, (name, runs) in enumerate(results.items()):
            for label, (z, n, e, _) in runs.items():
                t = 1e-3 * np.arange(len(z))
                axes[0, col].plot(t, z, label=label)
                axes[1, col].plot(t, n, label=label)
                axes[2, col].plot(t, e - e[0], label=label)
            axes[0, col].set_title(name)
            axes[0, col].set_ylabel("base height (m)")
            axes[1, col].set_ylabel("contacts")
            axes[2, col].set_ylabel("energy change (J)")
            axes[2, col].set_xlabel("time (s)")
        axes[0, 0].legend(fontsize=8)
        fig.tight_layout()
        os.makedirs(os.path.dirname(args.plot) or ".", exist_ok=True)
        fig.savefig(args.plot, dpi=90)
        print(f"\nfigure: {args.plot}")


if __name__ == "__main__":
    main()
