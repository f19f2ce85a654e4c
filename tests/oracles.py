"""Test-side bridges to the oracles (Pinocchio, example-robot-data, MuJoCo)
and generated test models.

Conventions are converted here, at the test boundary: Pinocchio puts the
linear part first in 6-vectors, stores quaternions (x, y, z, w), gives
continuous joints two coordinates (cos, sin) and free-flyer velocities
linear first. multibody is angular first, (w, x, y, z), one angle.
"""
import os
import site
import sysconfig

import numpy as np
import pinocchio as pin

import multibody as mb
from multibody.model.joints import C_AX1, C_AX2, C_P, C_PITCH, C_R

ROBOTS = {
    "ur5": ("ur_description/urdf/ur5_robot.urdf", False),
    "panda": ("panda_description/urdf/panda.urdf", False),
    "solo12": ("solo_description/robots/solo12.urdf", True),
    "talos": ("talos_data/robots/talos_reduced.urdf", True),
    "go2": ("go2_description/urdf/go2.urdf", True),
    "g1": ("g1_description/urdf/g1_29dof_rev_1_0.urdf", True),
}


def robots_dir():
    """example-robot-data's robots/ folder (version 6 is data only)."""
    cands = [os.environ.get("EXAMPLE_ROBOT_DATA_DIR")]
    for sp in site.getsitepackages() + [sysconfig.get_paths()["purelib"]]:
        cands.append(os.path.join(sp, "cmeel.prefix", "share", "example-robot-data", "robots"))
    for c in cands:
        if c and os.path.isdir(c):
            return c
    raise FileNotFoundError("example-robot-data is not installed")


def robot_path(name):
    return os.path.join(robots_dir(), ROBOTS[name][0])


def pin_model(name):
    path, floating = ROBOTS[name]
    path = os.path.join(robots_dir(), path)
    return pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer()) if floating else pin.buildModelFromUrdf(path)


SWAP = np.r_[3:6, 0:3]  # linear-first <-> angular-first permutation of a 6-vector


def swap6(x, axis=0):
    """Permute the 6-axis of ``x`` between linear-first and angular-first."""
    return np.take(x, SWAP, axis=axis)


class Mapping:
    """Coordinate maps between a multibody model and a Pinocchio model of
    the same robot, matched by joint name."""

    def __init__(self, model, pmodel):
        self.model, self.pmodel = model, pmodel
        self.joints = []
        for j in model.joints[1:]:
            if j.nq == 0:
                continue
            pj = pmodel.getJointId(j.name)
            assert pj < pmodel.njoints, f"joint {j.name} not in Pinocchio model"
            self.joints.append((j, pmodel.joints[pj]))

    def q_from_pin(self, qp):
        q = np.zeros(self.model.nq)
        for j, pj in self.joints:
            a = qp[pj.idx_q:pj.idx_q + pj.nq]
            s = j.q_slice
            if j.type == "free":
                q[s] = np.r_[a[:3], a[6], a[3:6]]
            elif j.type == "spherical":
                q[s] = np.r_[a[3], a[:3]]
            elif j.type == "revolute" and pj.nq == 2:
                q[s] = np.arctan2(a[1], a[0])
            elif j.type == "planar":  # pin: (x, y, cos, sin)
                q[s] = np.r_[a[:2], np.arctan2(a[3], a[2])]
            else:
                q[s] = a
        return q

    def v_from_pin(self, vp):
        v = np.zeros(self.model.nv)
        for j, pj in self.joints:
            a = vp[pj.idx_v:pj.idx_v + pj.nv]
            s = j.v_slice
            if j.type == "free":
                v[s] = np.r_[a[3:], a[:3]]
            elif j.type == "planar":  # pin: (vx, vy, w)
                v[s] = np.r_[a[2], a[:2]]
            else:
                v[s] = a
        return v

    def v_to_pin_columns(self, J):
        """Reorder the columns (nv axis, last) of a multibody matrix into Pinocchio's v order."""
        out = np.zeros(J.shape[:-1] + (self.pmodel.nv,))
        for j, pj in self.joints:
            cols = J[..., j.v_slice]
            if j.type == "free":
                cols = cols[..., SWAP]
            elif j.type == "planar":
                cols = cols[..., [1, 2, 0]]
            out[..., pj.idx_v:pj.idx_v + pj.nv] = cols
        return out


def from_pinocchio(pmodel, name="from_pinocchio"):
    """A multibody Model built with ModelBuilder from a Pinocchio model's
    joints, placements and inertias (an independent path to the loader)."""
    b = mb.ModelBuilder(name, gravity=np.array(pmodel.gravity.linear))
    for jid in range(1, pmodel.njoints):
        jm = pmodel.joints[jid]
        sn = jm.shortname()
        kw = {}
        if sn.startswith("JointModelR") and "Unaligned" not in sn and "Unbounded" not in sn:
            kw = dict(joint="revolute", axis=np.eye(3)["XYZ".index(sn[-1])])
        elif sn.startswith("JointModelRUB"):
            kw = dict(joint="revolute", axis=np.eye(3)["XYZ".index(sn[-1])])
        elif sn in ("JointModelRevoluteUnaligned", "JointModelRevoluteUnboundedUnaligned"):
            kw = dict(joint="revolute", axis=np.array(jm.extract().axis))
        elif sn.startswith("JointModelP") and "Unaligned" not in sn and sn[-1] in "XYZ" and sn != "JointModelPlanar":
            kw = dict(joint="prismatic", axis=np.eye(3)["XYZ".index(sn[-1])])
        elif sn == "JointModelPrismaticUnaligned":
            kw = dict(joint="prismatic", axis=np.array(jm.extract().axis))
        elif sn == "JointModelFreeFlyer":
            kw = dict(joint="free")
        elif sn == "JointModelSpherical":
            kw = dict(joint="spherical")
        elif sn == "JointModelPlanar":
            kw = dict(joint="planar", axis=(0, 0, 1), axis2=(1, 0, 0))
        elif sn == "JointModelTranslation":
            kw = dict(joint="translational")
        else:
            raise NotImplementedError(sn)
        Y = pmodel.inertias[jid]
        M = pmodel.jointPlacements[jid]
        b.add_body(pmodel.names[jid] + "_body", parent=("world" if pmodel.parents[jid] == 0
                                                        else pmodel.names[pmodel.parents[jid]] + "_body"),
                   placement=(M.rotation, M.translation), joint_name=pmodel.names[jid], mass=Y.mass,
                   com=np.array(Y.lever), inertia=np.array(Y.inertia), **kw)
    return b.build()


def to_pinocchio(model):
    """A Pinocchio model of a multibody Model (every catalog joint has a
    Pinocchio counterpart; cylindrical becomes a composite joint). Planar
    joints must have axis z and axis2 x, Pinocchio's only planar joint."""
    pm = pin.Model()
    pm.gravity = pin.Motion(np.r_[model.gravity, 0.0, 0.0, 0.0])
    for j in model.joints[1:]:
        i = j.child
        tree = model.tree[i]
        a1, a2 = tree[C_AX1:C_AX1 + 3], tree[C_AX2:C_AX2 + 3]
        pitch = tree[C_PITCH]
        if j.type == "revolute":
            jm = pin.JointModelRevoluteUnaligned(a1)
        elif j.type == "prismatic":
            jm = pin.JointModelPrismaticUnaligned(a1)
        elif j.type == "helical":
            jm = pin.JointModelHelicalUnaligned(a1, pitch)
        elif j.type == "cylindrical":
            jm = pin.JointModelComposite(pin.JointModelRevoluteUnaligned(a1))
            jm.addJoint(pin.JointModelPrismaticUnaligned(a1))
        elif j.type == "planar":
            assert np.allclose(a1, [0, 0, 1]) and np.allclose(a2, [1, 0, 0])
            jm = pin.JointModelPlanar()
        elif j.type == "spherical":
            jm = pin.JointModelSpherical()
        elif j.type == "free":
            jm = pin.JointModelFreeFlyer()
        elif j.type == "translational":
            jm = pin.JointModelTranslation()
        elif j.type == "universal":
            jm = pin.JointModelUniversal(a1, a2)
        else:
            raise NotImplementedError(j.type)
        placement = pin.SE3(tree[C_R:C_R + 9].reshape(3, 3).copy(), tree[C_P:C_P + 3].copy())
        jid = pm.addJoint(j.parent, jm, placement, j.name)
        pm.appendBodyToJoint(jid, pin.Inertia(model.body_mass[i], model.body_com[i].copy(),
                                              model.body_inertia[i].copy()), pin.SE3.Identity())
        pm.addBodyFrame(model.body_names[i], jid, pin.SE3.Identity(), 0)
    return pm


def random_inertia(rng):
    """A physically valid (mass, com, inertia about the COM) triple."""
    m = rng.uniform(0.5, 3.0)
    d = rng.uniform(0.05, 0.3, 3)  # box extents
    I = m / 12.0 * np.diag([d[1] ** 2 + d[2] ** 2, d[0] ** 2 + d[2] ** 2, d[0] ** 2 + d[1] ** 2])
    R = pin.rpy.rpyToMatrix(*rng.uniform(-np.pi, np.pi, 3))
    return m, rng.uniform(-0.2, 0.2, 3), R @ I @ R.T


def random_pose(rng):
    return pin.rpy.rpyToMatrix(*rng.uniform(-np.pi, np.pi, 3)), rng.uniform(-0.5, 0.5, 3)


ALL_JOINTS = ("revolute", "prismatic", "helical", "cylindrical", "planar", "spherical", "translational",
              "universal")
# Sueda's joint library (docs/joints.md): not in Pinocchio (pin_compatible trees leave them out)
SUEDA_JOINTS = ("exp_spherical", "free3d", "euler", "free2d", "composite", "spline", "spline_surface")


def sueda_kwargs(jt, rng):
    """Random parameters of one of Sueda's joints: Euler axes, composite
    parts, spline control frames (5: two segments) or surface controls."""
    unit = lambda: (lambda a: a / np.linalg.norm(a))(rng.normal(size=3))  # noqa: E731
    if jt == "euler":
        a1, a3 = unit(), unit()
        a2 = np.cross(a1, unit())
        return dict(axis=a1, axis2=a2 / np.linalg.norm(a2), axis3=a3)
    if jt == "composite":
        return dict(parts=[("revolute", unit()), [("prismatic", unit()), ("helical", unit(), rng.uniform(-0.2, 0.2))]])
    if jt == "spline":
        return dict(control=[mb.spatial.se3.exp(rng.normal(size=6) * 0.4) for _ in range(5)])
    if jt == "spline_surface":
        return dict(control=rng.normal(size=(6, 4, 4)) * 0.3)
    return {}


def branch_pattern(lam):
    """(n, n) bool: where a matrix with the branch-induced sparsity of the
    joint-space inertia (Featherstone §6.4) may be nonzero, for the
    expanded parent array ``lam``: the diagonal and every pair of a
    coordinate and one supporting it."""
    n = len(lam)
    P = np.eye(n, dtype=bool)
    for i in range(n):
        j = lam[i]
        while j >= 0:
            P[i, j] = P[j, i] = True
            j = lam[j]
    return P


def random_tree(seed, n=12, floating=True, joints=ALL_JOINTS, pin_compatible=True, fixed=0):
    """A random branched tree built with ModelBuilder that uses every joint
    type in ``joints`` (cycled), optionally a free-floating root and
    ``fixed`` extra bodies attached by fixed joints."""
    rng = np.random.default_rng(seed)
    b = mb.ModelBuilder(f"random{seed}")
    names = []
    if floating:
        m, c, I = random_inertia(rng)
        b.add_body("base", "world", "free", mass=m, com=c, inertia=I)
        names.append("base")
    for k in range(n):
        jt = joints[k % len(joints)]
        parent = names[rng.integers(len(names))] if names else "world"
        m, c, I = random_inertia(rng)
        kw = {}
        if jt in ("revolute", "prismatic", "helical", "cylindrical", "universal"):
            a = rng.normal(size=3)
            kw["axis"] = a / np.linalg.norm(a)
        if jt == "universal":
            a2 = rng.normal(size=3)
            a2 -= kw["axis"] * (a2 @ kw["axis"])
            kw["axis2"] = a2 / np.linalg.norm(a2)
        if jt == "helical":
            kw["pitch"] = rng.uniform(-0.2, 0.2)
        if jt in SUEDA_JOINTS:
            kw.update(sueda_kwargs(jt, rng))
        if jt == "planar" and pin_compatible:
            kw.update(axis=(0, 0, 1), axis2=(1, 0, 0))
        elif jt == "planar":
            a = rng.normal(size=3)
            kw["axis"] = a / np.linalg.norm(a)
        name = f"b{k}"
        b.add_body(name, parent, jt, placement=random_pose(rng), mass=m, com=c, inertia=I,
                   joint_name=f"j{k}", **kw)
        names.append(name)
    for k in range(fixed):
        m, c, I = random_inertia(rng)
        b.add_body(f"f{k}", names[rng.integers(len(names))], "fixed", placement=random_pose(rng), mass=m,
                   com=c, inertia=I)
        names.append(f"f{k}")
    return b


def mujoco_stiff_trajectory(m, dt, steps, every):
    """MuJoCo's RK4 trajectory (qpos every ``every`` steps) of the MjModel
    ``m`` (or its MJCF text) without contact and with its equality
    constraints made stiff (solref 0.5 ms, solimp 0.9999): the reference
    for multibody's hard constraints (agreement ~1e-7, limited by
    MuJoCo's residual compliance)."""
    import mujoco
    if isinstance(m, str):
        m = mujoco.MjModel.from_xml_string(m)
    m.opt.timestep = dt
    m.opt.integrator = mujoco.mjtIntegrator.mjINT_RK4
    m.opt.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_CONTACT)
    m.eq_solref[:] = [0.0005, 1.0]
    m.eq_solimp[:, :3] = [0.9999, 0.9999, 0.001]
    d = mujoco.MjData(m)
    ref = []
    for k in range(steps):
        mujoco.mj_step(m, d)
        if (k + 1) % every == 0:
            ref.append(d.qpos.copy())
    return np.array(ref)


def urdf_chain(n):
    """URDF text of an n-link revolute chain (links l0..ln, joints j0..j(n-1)
    about y, 0.1 m apart; 1 kg per link with its centre 0.05 m up; a
    cylinder visual per link)."""
    parts = ['<robot name="chain">']
    for i in range(n + 1):
        parts.append(f'<link name="l{i}"><inertial><origin xyz="0 0 0.05"/><mass value="1"/>'
                     '<inertia ixx="0.01" iyy="0.01" izz="0.005" ixy="0" ixz="0" iyz="0"/></inertial>'
                     '<visual><geometry><cylinder radius="0.01" length="0.1"/></geometry></visual></link>')
    for i in range(n):
        parts.append(f'<joint name="j{i}" type="revolute"><parent link="l{i}"/><child link="l{i + 1}"/>'
                     '<origin xyz="0 0 0.1"/><axis xyz="0 1 0"/>'
                     '<limit lower="-1" upper="1" effort="1" velocity="1"/></joint>')
    parts.append("</robot>")
    return "\n".join(parts)


def mujoco_from_urdf(path, floating_base):
    """MuJoCo's model of a URDF file for comparisons with multibody: geometry,
    <mimic> and Coulomb <friction> removed (multibody's simulator applies
    neither), <damping> kept, a free joint on the root link when
    ``floating_base``. Returns ``(MjModel, index)`` where ``index(model)``
    gives :func:`mujoco_addresses` for a multibody model of the same file."""
    import xml.etree.ElementTree as ET

    import mujoco
    root = ET.fromstring(open(path).read())
    for link in root.iter("link"):
        for tag in ("visual", "collision"):
            for el in link.findall(tag):
                link.remove(el)
    for joint in root.iter("joint"):
        for el in joint.findall("mimic"):
            joint.remove(el)
        for el in joint.findall("dynamics"):
            el.attrib.pop("friction", None)
    spec = mujoco.MjSpec.from_string(ET.tostring(root, encoding="unicode"))
    if floating_base:
        spec.worldbody.first_body().add_freejoint()
    m = spec.compile()
    return m, lambda model: mujoco_addresses(m, model)


def mujoco_addresses(m, model):
    """The MuJoCo qpos and qvel addresses of each coordinate of a multibody
    model of the same robot (joints matched by name; free joints: qpos (p,
    quaternion) in the same order, qvel (v_world, ω_body) against
    multibody's (ω_body, v_body))."""
    import mujoco
    qadr, vadr = np.zeros(model.nq, int), np.zeros(model.nv, int)
    for j in model.joints[1:]:
        if j.type == "free":
            jm = int(np.flatnonzero(m.jnt_type == mujoco.mjtJoint.mjJNT_FREE)[0])
        elif j.nv:
            jm = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, j.name)
            assert jm >= 0, j.name
        else:
            continue
        qadr[j.q_slice] = m.jnt_qposadr[jm] + np.arange(j.nq)
        dofs = m.jnt_dofadr[jm] + np.arange(j.nv)
        vadr[j.v_slice] = dofs[[3, 4, 5, 0, 1, 2]] if j.type == "free" else dofs
    return qadr, vadr
