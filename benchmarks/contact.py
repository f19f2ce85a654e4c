"""Cost of a simulation step with contact, per contact solver, against
MuJoCo's ``mj_step`` on the same MJCF scene in one process; and the
collision detection alone against MuJoCo's ``mj_kinematics`` +
``mj_collision`` and against coal (hpp-fcl).

    python benchmarks/contact.py [--scenes "27 boxes,100 spheres"]

Scenes (MJCF strings below, loaded by both libraries; everything at rest
or settling on a plane, dt = 1 ms): a sphere resting on a plane, a box
resting on four corners, a stack of five boxes, 27 boxes dropped in a
3x3x3 grid, 27 spheres likewise, 100 spheres dropped in a 5x5x4 grid.
Each simulator is timed after 300 settling steps of its own, so that it
has its resting contacts: ``Simulator.step`` called from Python (the
median over blocks of calls, _common.timeit) against ``mj_step`` called
from Python the same way; for PGS also ``rollout`` per step (the median
of 7 rollouts of 100 steps from the same state, recording the
trajectory).

Solvers (the compiled ones, each against the MuJoCo problem closest in
kind; multibody's rigid contact has speculative contacts within 1 cm,
MuJoCo's soft contact none, so the contact counts can differ):

* ``pgs`` (the default: rigid contact, Coulomb disk), ``lemke``
  (``friction="box"``) and ``newton`` (soft contact with MuJoCo's pyramid:
  MuJoCo's default problem and solver, trajectories equal to MuJoCo's,
  tests/contact/test_soft.py) against mj_step with MuJoCo's defaults
  (pyramidal cone, Newton);
* ``pivoting`` (the frictionless rigid LCP) against mj_step with every
  geom's friction zeroed and condim 1 (frictionless soft contact: one row
  per contact);
* soft contact by PGS on the Coulomb disk (``contact_model="soft"``)
  against MuJoCo with elliptic cones, solved by its default Newton method
  and by its PGS (``opt.solver = PGS``), a second table.

A solver whose step averages more than 50 ms over any 10 settling steps
(or in the timing) is not timed further and printed "skipped (> 50 ms)";
one that raises prints "failed" and the error's class; "*" marks a solver
at its iteration cap in one of the 20 steps after the timed state
(``sim.contact.iterations`` negative).

Detection alone, at MuJoCo's configuration after 300 settling steps:
multibody's ``sim.contact.detect(q)`` (forward kinematics, bounding
spheres and boxes, the narrow phase: called from Python, contacts within
its 1 cm contact distance) against ``mj_kinematics`` + ``mj_collision``
(margin 0, as in its step; and every geom's margin 5 mm, so that its
pairs' margins are multibody's 1 cm and it reports what multibody does)
and against coal driven by Pinocchio, so that every library's loop runs
in compiled code: a GeometryModel of the table's shapes (the floor a coal
``Halfspace``, boxes and spheres coal's) whose collision pairs are
exactly multibody's candidate pairs, each request asking for contact
information with ``security_margin`` = multibody's pair reach (margin +
1 cm), so that coal reports the pairs multibody does. Two coal figures:
``pin.computeCollisions(model, data, geom_model, geom_data, q)`` (the
placements, then ``coal.collide`` on every candidate pair, no broad
phase: what a Pinocchio user calls) and the same through Pinocchio's
``BroadPhaseManager`` over coal's ``DynamicAABBTreeCollisionManager``
(the AABB tree updated, then ``coal.collide`` on the candidate pairs
whose boxes overlap). Here the geometries sit on Pinocchio's universe at
their world poses (world_geometry): coal's figures leave out the free
bodies' forward kinematics, a copy of q's poses, which multibody's and
MuJoCo's include (contact_robots_speed.py runs the robots with
Pinocchio's kinematics). coal returns one contact per pair (no
manifold): it does less per touching pair than multibody and MuJoCo (up
to 4 or 8 contacts per box face).
"""
import argparse
import os
import time
import warnings

import mujoco
import numpy as np
import pinocchio as pin

import multibody as mb
from _common import timeit
from multibody.collision.detect import geometry_poses

BUDGET = 0.05  # s per step: slower solvers are skipped on that scene

#: name: Simulator options; the MuJoCo problem each is compared with
SOLVERS = {"pgs": ({}, "defaults"),
           "lemke": (dict(contact_solver="lemke", friction="box"), "defaults"),
           "newton": (dict(contact_solver="newton"), "defaults"),
           "pivoting": (dict(contact_solver="pivoting"), "frictionless")}


def grid(kind, shape=(3, 3, 3), size=0.1, gap=0.05):
    """Bodies of a grid of ``shape`` (x, y, layers) boxes or spheres of
    half-size ``size``, ``gap`` apart, the lowest layer 1 cm above the
    floor."""
    body = []
    k = 0
    nx, ny, nz = shape
    for i in range(nx):
        for j in range(ny):
            for m in range(nz):
                x, y = (i - (nx - 1) / 2) * (2 * size + gap), (j - (ny - 1) / 2) * (2 * size + gap)
                z = size + m * (2 * size + gap)
                geom = f'<geom type="box" size="{size} {size} {size}"/>' if kind == "box" else \
                    f'<geom type="sphere" size="{size}"/>'
                body.append(f'<body name="b{k}" pos="{x} {y} {z + 0.01}"><freejoint/>{geom}</body>')
                k += 1
    return "\n".join(body)


def scene(bodies):
    return f"""<mujoco><option timestep="0.001"/><worldbody>
    <geom name="floor" type="plane" size="10 10 0.1"/>{bodies}</worldbody></mujoco>"""


SCENES = {
    "sphere on a plane": scene('<body pos="0 0 0.1"><freejoint/><geom type="sphere" size="0.1"/></body>'),
    "box on a plane": scene('<body pos="0 0 0.1"><freejoint/><geom type="box" size="0.2 0.15 0.1"/></body>'),
    "stack of 5 boxes": scene("".join(f'<body pos="0 0 {0.1 + 0.2 * i}"><freejoint/>'
                                      f'<geom type="box" size="0.1 0.1 0.1"/></body>' for i in range(5))),
    "27 boxes": scene(grid("box")),
    "27 spheres": scene(grid("sphere")),
    "100 spheres": scene(grid("sphere", (5, 5, 4))),
}


def mujoco_variant(xml, kind):
    """MuJoCo's model of the scene: ``defaults``, ``frictionless`` (every
    geom's friction 0 and condim 1), ``elliptic`` (elliptic cones, Newton)
    or ``elliptic PGS``."""
    m = mujoco.MjModel.from_xml_string(xml)
    if kind == "frictionless":
        m.geom_friction[:] = 0.0
        m.geom_condim[:] = 1
    elif kind.startswith("elliptic"):
        m.opt.cone = mujoco.mjtCone.mjCONE_ELLIPTIC
        if kind == "elliptic PGS":
            m.opt.solver = mujoco.mjtSolver.mjSOL_PGS
    return m


def settle(sim, steps=300, chunk=10):
    """Run ``steps`` steps (the first alone: compilation, cached, untimed),
    in rollouts of ``chunk``; False as soon as one averages more than
    BUDGET per step."""
    sim.rollout(steps=1)
    done = 1
    while done < steps:
        n = min(chunk, steps - done)
        t0 = time.perf_counter()
        sim.rollout(steps=n)
        if (time.perf_counter() - t0) / n > BUDGET:
            return False
        done += n
    return True


def timed_simulator(model, m, rollout=False, **options):
    """Simulator with ``options`` on the scene after 300 settling steps:
    a dict with ``step`` (s per ``Simulator.step``), ``rollout`` (s per
    step of a rollout, if asked), ``contacts``, ``capped`` (the solver at
    its cap in one of 20 steps from the timed state); or with ``skipped``
    (slower than BUDGET) or ``failed`` (the error's class name)."""
    # the bodies where the file puts them (MuJoCo's qpos0; the model's neutral q has the free
    # bodies at their parents' origin, inside the floor)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mb.SimulationWarning)  # the cap: read from the iterations below
        try:
            sim = mb.Simulator(model, dt=1e-3, q0=m.qpos0.copy(), **options)
            if not settle(sim):
                return {"skipped": True}
            out = {"contacts": sim.contact.count}
            cp = sim.checkpoint()
            out["step"] = timeit(sim.step)
            if out["step"] > BUDGET:
                return {"skipped": True}
            if rollout:  # the median of 7 rollouts of 100 steps from the same state
                n, times = 100, []
                for _ in range(8):
                    sim.restore(cp)
                    t0 = time.perf_counter()
                    sim.rollout(steps=n)
                    times.append((time.perf_counter() - t0) / n)
                out["rollout"] = float(np.median(times[1:]))
            sim.restore(cp)
            iterations = []
            for _ in range(20):
                sim.step()
                iterations.append(sim.contact.iterations)
        except mb.MultibodyError as e:
            return {"failed": type(e).__name__}
    out["capped"] = min(iterations) < 0  # negative: the solver's cap
    return out


def timed_mujoco(m):
    """(mj_step s, contacts) after 300 settling steps."""
    d = mujoco.MjData(m)
    for _ in range(300):
        mujoco.mj_step(m, d)
    return timeit(lambda: mujoco.mj_step(m, d)), d.ncon


def cell(r, t_ref, width=17):
    """One solver's table cell: µs and ratio to ``t_ref``, or why not."""
    if "failed" in r:
        return f"{'failed: ' + r['failed']:>{width}}"
    if "skipped" in r:
        return f"{'skipped (> 50 ms)':>{width}}"
    mark = "*" if r["capped"] else " "
    return f"{1e6 * r['step']:>9.1f}{mark}{r['step'] / t_ref:>7.2f}"


# --- coal through Pinocchio ----------------------------------------------------------------------

def coal_shape(table, k):
    """coal's shape of the table's geometry k (tests/collision/narrow_oracles.coal_geom:
    full side lengths, a Halfspace for the plane, ``Convex.convexHull`` of a hull's vertices)."""
    from collision.narrow_oracles import coal_geom
    return coal_geom((table.code[k], table.size[k], np.eye(3), np.zeros(3),
                      table.vertices[table.vstart[k]:table.vstart[k + 1]]))


def world_geometry(model, table, q):
    """Pinocchio model and GeometryModel of the scene at configuration q
    with every geometry of the table fixed on the universe at its world
    pose (multibody's forward kinematics): the MJCF scenes are free
    bodies, whose forward kinematics is a copy of q's poses, and
    Pinocchio 4.1's ``createData`` of a model of 100 free flyers takes
    14 GB and 27 s.
    Returns (pin model (no joints), geometry model, table index ->
    geometry id)."""
    ng = len(table.code)
    R, p = np.zeros((ng, 3, 3)), np.zeros((ng, 3))
    geometry_poses(np.ascontiguousarray(mb.forward_kinematics(model, q)), table.body, table.local, R, p)
    gm = pin.GeometryModel()
    index = {k: gm.addGeometryObject(pin.GeometryObject(g.name, 0, pin.SE3(R[k], p[k]), coal_shape(table, k)))
             for k, g in enumerate(table.geometries)}
    return pin.Model(), gm, index


def pin_configuration(model, pm, q):
    """Pinocchio's configuration of multibody's q (joints matched by name;
    free joints: quaternion (w, x, y, z) -> (x, y, z, w))."""
    qp = pin.neutral(pm)
    joints = pm.joints  # once: each pm.joints copies the vector
    for j in model.joints[1:]:
        if j.nq == 0:
            continue
        pj = joints[pm.getJointId(j.name)]
        a = q[j.q_slice]
        if j.type == "free":
            qp[pj.idx_q:pj.idx_q + 7] = np.r_[a[:3], a[4:7], a[3]]
        elif pj.nq == 2:  # continuous joint: (cos, sin)
            qp[pj.idx_q:pj.idx_q + 2] = np.cos(a[0]), np.sin(a[0])
        else:
            qp[pj.idx_q:pj.idx_q + pj.nq] = a
    return qp


def coal_detection(model, table, pm, gm, index, q, distance=0.01):
    """(pair loop s, broad phase s, coal's contacts, pairs in contact) at
    multibody's configuration q (Pinocchio's: :func:`pin_configuration`;
    none if ``pm`` has no joints): ``gm`` gets the table's candidate pairs
    (``index``: table geometry -> geometry id), each request with contact
    information and security margin = the pair's margin + ``distance``.
    Checks first that Pinocchio places every geometry where multibody
    does."""
    for a, b in table.pairs:
        gm.addCollisionPair(pin.CollisionPair(index[int(a)], index[int(b)]))
    gd = pin.GeometryData(gm)
    requests = gd.collisionRequests  # once: each gd.collisionRequests copies the vector (5050 pairs: 14 GB)
    for i, margin in enumerate(table.margin):
        requests[i].enable_contact = True
        requests[i].security_margin = float(margin) + distance
    pd = pm.createData()
    qp = pin_configuration(model, pm, q) if pm.njoints > 1 else np.zeros(0)
    pin.updateGeometryPlacements(pm, pd, gm, gd, qp)
    ng = len(table.code)
    R, p = np.zeros((ng, 3, 3)), np.zeros((ng, 3))
    geometry_poses(np.ascontiguousarray(mb.forward_kinematics(model, q)), table.body, table.local, R, p)
    placements = gd.oMg  # once: a copy of the vector
    for k in range(ng):
        M = placements[index[k]]
        assert np.allclose(M.rotation, R[k], atol=1e-9) and np.allclose(M.translation, p[k], atol=1e-9), \
            table.geometries[k].name
    pin.computeCollisions(pm, pd, gm, gd, qp, False)
    results = [r.numContacts() for r in gd.collisionResults]
    t_pairs = timeit(lambda: pin.computeCollisions(pm, pd, gm, gd, qp, False))
    manager = pin.BroadPhaseManager_DynamicAABBTreeCollisionManager(pm, gm, gd)
    for r in gd.collisionResults:
        r.clear()
    pin.computeCollisions(pm, pd, manager, qp, False)
    broad = [r.numContacts() for r in gd.collisionResults]
    assert broad == results, "the broad phase found other pairs than the pair loop"
    t_broad = timeit(lambda: pin.computeCollisions(pm, pd, manager, qp, False))
    return t_pairs, t_broad, sum(results), sum(1 for n in results if n)


def mujoco_detection(m, qpos, margin=0.0):
    """(s per ``mj_kinematics`` + ``mj_collision``, contacts) at ``qpos``,
    every geom's margin ``margin`` (a pair's: twice that)."""
    m.geom_margin[:] = margin
    d = mujoco.MjData(m)
    d.qpos[:] = qpos

    def mj():
        mujoco.mj_kinematics(m, d)
        mujoco.mj_collision(m, d)
    return timeit(mj), d.ncon


def timed_detection(model, m):
    """Detection alone at the scene's configuration after 300 MuJoCo
    settling steps: a row of :func:`print_detection`."""
    d = mujoco.MjData(m)
    for _ in range(300):
        mujoco.mj_step(m, d)
    q = d.qpos.copy()
    sim = mb.Simulator(model, dt=1e-3, q0=q)
    n_mb = sim.contact.detect(q)
    t_mb = timeit(lambda: sim.contact.detect(q))
    mj = mujoco_detection(m, q)
    mj_margin = mujoco_detection(m, q, 0.005)
    table = sim.contact.geometry
    pm, gm, index = world_geometry(sim.model, table, q)
    t_pairs, t_broad, n_coal, _ = coal_detection(sim.model, table, pm, gm, index, q)
    return len(table), (t_mb, n_mb), mj, mj_margin, (t_pairs, t_broad, n_coal)


def print_detection(rows, label="scene", width=18):
    """The detection table: per name, (candidate pairs, (multibody s,
    contacts), (MuJoCo s, contacts), (MuJoCo with 1 cm pair margins s,
    contacts), (coal pair loop s, coal broad phase s, contacts)); ratios
    multibody / other."""
    print("detection alone (multibody: sim.contact.detect(q), contacts within 1 cm; MuJoCo: mj_kinematics + "
          "mj_collision, margin 0 and margin 1 cm;\ncoal through Pinocchio, security margin 1 cm: computeCollisions "
          "over the candidate pairs, and with its broad-phase manager)")
    print(f"{label:<{width}} {'pairs':>6} {'contacts mb/mj/mj1cm/coal':>25} {'multibody us':>12} {'MuJoCo us':>10} "
          f"{'ratio':>6} {'mj 1 cm us':>10} {'ratio':>6} {'coal pairs us':>13} {'ratio':>6} {'coal broad us':>13} "
          f"{'ratio':>6}")
    for name, (npair, (t, n), (t_mj, n_mj), (t_mm, n_mm), (t_co, t_cb, n_co)) in rows.items():
        print(f"{name:<{width}} {npair:>6} {f'{n}/{n_mj}/{n_mm}/{n_co}':>25} {1e6 * t:>12.1f} {1e6 * t_mj:>10.1f} "
              f"{t / t_mj:>6.2f} {1e6 * t_mm:>10.1f} {t / t_mm:>6.2f} {1e6 * t_co:>13.1f} {t / t_co:>6.2f} "
              f"{1e6 * t_cb:>13.1f} {t / t_cb:>6.2f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scenes", default=",".join(SCENES), help="comma-separated scene names")
    args = ap.parse_args()
    names = args.scenes.split(",")
    print(f"{time.strftime('%Y-%m-%d %H:%M')}, load average {os.getloadavg()[0]:.1f}; us per step and ratio to "
          "mj_step (pgs, lemke, newton: MuJoCo's defaults; pivoting: MuJoCo frictionless, condim 1); *: the solver "
          "at its iteration cap")
    print(f"{'scene':<18} {'contacts':>9} {'mj_step us':>10} | {'pgs us  ratio':>17} {'rollout us':>10} | "
          f"{'lemke us  ratio':>17} | {'newton us  ratio':>17} | {'mj frictionl. us':>16} "
          f"{'pivoting us  ratio':>18}")
    for name in names:
        xml = SCENES[name]
        model = mb.load_mjcf(xml)
        ref = {kind: timed_mujoco(mujoco_variant(xml, kind)) for kind in ("defaults", "frictionless")}
        res = {s: timed_simulator(model, mujoco_variant(xml, "defaults"), rollout=(s == "pgs"), **opts)
               for s, (opts, _) in SOLVERS.items()}
        t_mj, ncon = ref["defaults"]
        pgs = res["pgs"]
        contacts = f"{pgs.get('contacts', '-')}/{ncon}"
        roll = f"{1e6 * pgs['rollout']:>10.1f}" if "rollout" in pgs else f"{'-':>10}"
        print(f"{name:<18} {contacts:>9} {1e6 * t_mj:>10.1f} | {cell(pgs, t_mj)} {roll} | "
              f"{cell(res['lemke'], t_mj)} | {cell(res['newton'], t_mj)} | "
              f"{1e6 * ref['frictionless'][0]:>16.1f} {cell(res['pivoting'], ref['frictionless'][0], 18)}")

    print("\nsoft contact by PGS (contact_model='soft', Coulomb disk) against MuJoCo with elliptic cones")
    print(f"{'scene':<18} {'soft PGS us':>12} {'mj elliptic us':>14} {'ratio':>6} {'mj ell. PGS us':>14} "
          f"{'ratio':>6}")
    for name in names:
        xml = SCENES[name]
        soft = timed_simulator(mb.load_mjcf(xml), mujoco_variant(xml, "defaults"), contact_model="soft")
        t_el, _ = timed_mujoco(mujoco_variant(xml, "elliptic"))
        t_pgs, _ = timed_mujoco(mujoco_variant(xml, "elliptic PGS"))
        if "step" not in soft:
            print(f"{name:<18} {cell(soft, t_el)}")
            continue
        print(f"{name:<18} {1e6 * soft['step']:>11.1f}{'*' if soft['capped'] else ' '} {1e6 * t_el:>14.1f} "
              f"{soft['step'] / t_el:>6.2f} {1e6 * t_pgs:>14.1f} {soft['step'] / t_pgs:>6.2f}")

    print()
    print_detection({name: timed_detection(mb.load_mjcf(SCENES[name]), mujoco.MjModel.from_xml_string(SCENES[name]))
                     for name in names})

if __name__ == "__main__":
    main()
