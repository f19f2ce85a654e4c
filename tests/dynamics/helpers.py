"""Bridges between multibody's dynamics and its oracles (Pinocchio, numpy).

Conventions are reconciled here only: Pinocchio puts the linear part first
in 6-vectors (forces too), orders free-flyer and planar velocities
differently (``oracles.Mapping``), fills only the upper triangle of ``crba``
and ``computeMinverse``, and takes external forces as one ``pin.Force`` per
joint in the joint's LOCAL frame — which is our body frame for models built
by ``load_urdf`` or mapped by ``to_pinocchio``.
"""
import functools

import numpy as np
import pinocchio as pin

import multibody as mb
from multibody.model.joints import C_AX1, C_AX2, C_P, C_PITCH, C_R
from oracles import ROBOTS, Mapping, pin_model, random_inertia, random_pose, random_tree, robot_path, to_pinocchio

RTOL = 1e-9  # relative to the magnitude (max |entry|) of the oracle


def assert_rel(got, expect, rtol=RTOL, what=""):
    """``max |got − expect| ≤ rtol · max |expect|`` (the oracle's magnitude)."""
    got, expect = np.asarray(got, dtype=float), np.asarray(expect, dtype=float)
    assert got.shape == expect.shape, f"{what}: shape {got.shape} != {expect.shape}"
    scale = max(float(np.abs(expect).max(initial=0.0)), 1e-300)
    err = float(np.abs(got - expect).max(initial=0.0))
    assert err <= rtol * scale, f"{what}: max error {err:.3e} > {rtol:g} x oracle magnitude {scale:.3e}"


def sym_upper(M):
    """The symmetric matrix whose upper triangle is that of M (Pinocchio
    writes only the upper triangle of crba and computeMinverse)."""
    U = np.triu(M)
    return U + np.triu(U, 1).T


def with_armature(builder, seed, low=0.01, high=0.5):
    """Give every moving joint of a ModelBuilder a random rotor armature
    (per velocity coordinate; the builder's bodies are set in place)."""
    rng = np.random.default_rng(seed)
    for body in builder._bodies.values():
        body.armature = rng.uniform(low, high, len(body.armature))
    return builder


class Robot:
    """A multibody model, its Pinocchio twin and the coordinate mapping."""

    def __init__(self, name, model, pmodel):
        self.name, self.model, self.pm = name, model, pmodel
        self.mp = Mapping(model, pmodel)
        self.pm.armature = self.v_to_pin(np.asarray(model.armature, dtype=float))

    # per-v vectors and matrices between our order and Pinocchio's
    def v_to_pin(self, x):
        return self.mp.v_to_pin_columns(np.asarray(x))

    def mat_to_pin(self, M):
        return self.v_to_pin(np.swapaxes(self.v_to_pin(M), -1, -2))

    def pin_fext(self, fe):
        """Our (nbodies, 6) body-frame [n; f] → Pinocchio's per-joint local
        pin.Force (linear first); bodies are matched by joint name."""
        out = [pin.Force.Zero() for _ in range(self.pm.njoints)]
        for i in range(1, self.model.nbodies):
            jid = self.pm.getJointId(self.model.joint_names[i])
            out[jid] = pin.Force(fe[i, 3:].copy(), fe[i, :3].copy())
        return out

    def states(self, n, seed):
        """``n`` random states ``(qp, q, vp, v, ap, a, taup, tau, fe)``: q
        drawn by Pinocchio inside the joint limits (clipped to ±2), the rest
        standard normal; ``fe`` external forces (nbodies, 6), row 0 zero."""
        pm, mp = self.pm, self.mp
        rng = np.random.default_rng(seed)
        lo = np.where(np.isfinite(pm.lowerPositionLimit), pm.lowerPositionLimit, -2.0).clip(-2, 2)
        hi = np.where(np.isfinite(pm.upperPositionLimit), pm.upperPositionLimit, 2.0).clip(-2, 2)
        for _ in range(n):
            qp = pin.randomConfiguration(pm, lo, hi)
            vp, ap, taup = (rng.normal(size=pm.nv) for _ in range(3))
            fe = rng.normal(size=(self.model.nbodies, 6))
            fe[0] = 0.0
            yield (qp, mp.q_from_pin(qp), vp, mp.v_from_pin(vp), ap, mp.v_from_pin(ap), taup,
                   mp.v_from_pin(taup), fe)


@functools.lru_cache(maxsize=None)
def robot(name):
    """Named test systems: example-robot-data robots (ROBOTS) and random
    trees ``tree_{fixed,floating}[_armature|_gravity]`` with every joint type."""
    if name in ROBOTS:
        return Robot(name, mb.load_urdf(robot_path(name), floating_base=ROBOTS[name][1]), pin_model(name))
    floating = "floating" in name
    b = random_tree(21 if floating else 22, n=16, floating=floating)
    if name.endswith("armature"):
        with_armature(b, 5)
    if name.endswith("gravity"):  # a gravity vector off the z axis
        b.gravity = np.array([1.5, -2.0, -7.0])
    model = b.build()
    return Robot(name, model, to_pinocchio(model))


def tree_with_fixed_bodies(seed, floating=True, n=10, nfixed=5):
    """A ModelBuilder tree in which bodies attached by fixed joints also
    carry moving children (so the fixed joints sit inside the tree), with
    armature; ``build(merge_fixed=False)`` keeps them as 0-DoF bodies."""
    rng = np.random.default_rng(seed)
    b = random_tree(seed, n=0, floating=floating)
    names = ["base"] if floating else []
    if not floating:  # a body fixed to the world, carrying the tree
        m, c, I = random_inertia(rng)
        b.add_body("root", "world", "fixed", placement=random_pose(rng), mass=m, com=c, inertia=I,
                   joint_name="root_joint")
        names.append("root")
    joints = ("revolute", "prismatic", "spherical", "universal", "helical", "cylindrical")
    k_fixed = 0
    for k in range(n + nfixed):
        parent = names[rng.integers(len(names))] if names else "world"
        m, c, I = random_inertia(rng)
        if k % 3 == 1 and k_fixed < nfixed:
            name = f"f{k_fixed}"
            b.add_body(name, parent, "fixed", placement=random_pose(rng), mass=m, com=c, inertia=I,
                       joint_name=f"fj{k_fixed}")
            k_fixed += 1
        else:
            jt = joints[k % len(joints)]
            a = rng.normal(size=3)
            kw = dict(axis=a / np.linalg.norm(a))
            if jt == "helical":
                kw["pitch"] = 0.1
            name = f"m{k}"
            b.add_body(name, parent, jt, placement=random_pose(rng), mass=m, com=c, inertia=I,
                       joint_name=f"mj{k}", armature=0.1 * (k + 1), **kw)
        names.append(name)
    return b


def expanded_parents(parents, ndofs):
    """Featherstone Table 6.4, written independently of the library:
    ``parents`` is the regular parent array λ (1-based bodies, 0 = base,
    ``parents[i-1] = λ(i)``), ``ndofs[i-1]`` the DoF of joint i. Returns the
    1-based expanded parent array λ' (0 = none)."""
    nb = len(parents)
    mp = [0] * (nb + 1)
    for i in range(1, nb + 1):
        mp[i] = mp[i - 1] + ndofs[i - 1]
    lam = list(range(mp[nb]))  # λ'(k) = k − 1, 1-based k → index k−1 holds k−1
    for i in range(1, nb + 1):
        if ndofs[i - 1]:
            # first coordinate of joint i: the last coordinate of the nearest ancestor with coordinates
            p = parents[i - 1]
            while p > 0 and ndofs[p - 1] == 0:
                p = parents[p - 1]
            lam[mp[i - 1]] = mp[p]
    return lam


def model_expanded_parents(model):
    """The oracle for ``dof_parents``: Table 6.4 on the model's parent array
    and joint sizes, converted to 0-based with -1 for none."""
    parents = [int(model.parents[i]) for i in range(1, model.nbodies)]
    ndofs = [model.joints[i].nv for i in range(1, model.nbodies)]
    return np.array(expanded_parents(parents, ndofs), dtype=np.int64) - 1


def ancestors_dofs(model):
    """For each velocity coordinate, the set of coordinates of its own joint
    and of every joint on its path to the root (from ``model.parents``)."""
    out = []
    for k in range(model.nv):
        body = next(j.child for j in model.joints[1:] if j.v_slice.start <= k < j.v_slice.stop)
        dofs = set()
        while body > 0:
            dofs.update(range(model.joints[body].v_slice.start, model.joints[body].v_slice.stop))
            body = int(model.parents[body])
        out.append(dofs)
    return out


def _pin_joint_model(model, i):
    """Pinocchio's joint model for the joint of body i (as oracles.to_pinocchio)."""
    j, tree = model.joints[i], model.tree[i]
    a1, a2, pitch = tree[C_AX1:C_AX1 + 3], tree[C_AX2:C_AX2 + 3], tree[C_PITCH]
    if j.type == "revolute":
        return pin.JointModelRevoluteUnaligned(a1)
    if j.type == "prismatic":
        return pin.JointModelPrismaticUnaligned(a1)
    if j.type == "helical":
        return pin.JointModelHelicalUnaligned(a1, pitch)
    if j.type == "cylindrical":
        jm = pin.JointModelComposite(pin.JointModelRevoluteUnaligned(a1))
        jm.addJoint(pin.JointModelPrismaticUnaligned(a1))
        return jm
    if j.type == "planar":
        assert np.allclose(a1, [0, 0, 1]) and np.allclose(a2, [1, 0, 0])
        return pin.JointModelPlanar()
    if j.type == "spherical":
        return pin.JointModelSpherical()
    if j.type == "free":
        return pin.JointModelFreeFlyer()
    if j.type == "translational":
        return pin.JointModelTranslation()
    if j.type == "universal":
        return pin.JointModelUniversal(a1, a2)
    raise NotImplementedError(j.type)


def _placement(model, i):
    T = np.eye(4)
    T[:3, :3] = model.tree[i, C_R:C_R + 9].reshape(3, 3)
    T[:3, 3] = model.tree[i, C_P:C_P + 3]
    return T


class FixedBodiesRobot(Robot):
    """A model that keeps bodies on fixed (0-DoF) joints, against a
    Pinocchio model built from the same table in which each fixed body's
    inertia is appended to its moving host joint (Pinocchio merges it) and
    moving children of fixed bodies hang from the host at the composed
    placement. External forces on a fixed body are moved to the host frame
    with the force transform ``[R n + p × R f; R f]``."""

    def __init__(self, name, model):
        pm = pin.Model()
        pm.gravity = pin.Motion(np.r_[model.gravity, 0.0, 0.0, 0.0])
        self.host = [(0, np.eye(4))]  # per body: (Pinocchio joint id, pose of the body in the host frame)
        for i in range(1, model.nbodies):
            j = model.joints[i]
            hjid, Th = self.host[j.parent]
            T = Th @ _placement(model, i)
            inertia = pin.Inertia(model.body_mass[i], model.body_com[i].copy(), model.body_inertia[i].copy())
            if j.nv == 0:
                pm.appendBodyToJoint(hjid, inertia, pin.SE3(T[:3, :3].copy(), T[:3, 3].copy()))
                self.host.append((hjid, T))
            else:
                jid = pm.addJoint(hjid, _pin_joint_model(model, i), pin.SE3(T[:3, :3].copy(), T[:3, 3].copy()),
                                  j.name)
                pm.appendBodyToJoint(jid, inertia, pin.SE3.Identity())
                self.host.append((jid, np.eye(4)))
        super().__init__(name, model, pm)

    def pin_fext(self, fe):
        out = [np.zeros(6) for _ in range(self.pm.njoints)]  # linear first
        for i in range(1, self.model.nbodies):
            jid, T = self.host[i]
            R, p = T[:3, :3], T[:3, 3]
            f = R @ fe[i, 3:]
            n = R @ fe[i, :3] + np.cross(p, f)
            out[jid] = out[jid] + np.r_[f, n]
        return [pin.Force(x) for x in out]
