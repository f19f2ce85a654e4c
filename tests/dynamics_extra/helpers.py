"""Test systems and oracle bridges for hybrid dynamics, floating-base
dynamics and the inertia-parameter regressor.

Oracles: Pinocchio (``crba``, ``rnea``, ``aba``, ``computeJointTorqueRegressor``,
``Inertia.toDynamicParameters``) on the same systems, with conventions
converted here (``oracles.Mapping``: linear-first free-flyer and planar
velocity orders; Pinocchio's crba fills only the upper triangle).
"""
import functools

import numpy as np
import pinocchio as pin

import multibody as mb
from multibody.model.joints import C_AX1, C_AX2, C_P, C_PITCH, C_R
from oracles import ROBOTS, Mapping, pin_model, random_tree, robot_path, to_pinocchio

RTOL = 1e-9  # relative to the oracle's magnitude


def assert_rel(got, expect, rtol=RTOL, what=""):
    """``max |got − expect| ≤ rtol · max(1, max |expect|)``."""
    got, expect = np.asarray(got, dtype=float), np.asarray(expect, dtype=float)
    assert got.shape == expect.shape, f"{what}: shape {got.shape} != {expect.shape}"
    scale = max(float(np.abs(expect).max(initial=0.0)), 1.0)
    err = float(np.abs(got - expect).max(initial=0.0))
    assert err <= rtol * scale, f"{what}: max error {err:.3e} > {rtol:g} x {scale:.3e}"


def _placement(model, i):
    T = np.eye(4)
    T[:3, :3] = model.tree[i, C_R:C_R + 9].reshape(3, 3)
    T[:3, 3] = model.tree[i, C_P:C_P + 3]
    return T


class System:
    """A multibody model, a Pinocchio model of the same system and the
    coordinate maps. ``hosts[i]`` = (Pinocchio joint id, pose of body i in
    that joint's frame): a body on a fixed joint is merged into its nearest
    moving ancestor, as Pinocchio does."""

    def __init__(self, name, model, pm):
        self.name, self.model, self.pm = name, model, pm
        self.mp = Mapping(model, pm)
        self.pm.armature = self.mp.v_to_pin_columns(np.asarray(model.armature, dtype=float))
        self.hosts = [(0, np.eye(4))]
        for i in range(1, model.nbodies):
            j = model.joints[i]
            if j.nv:
                self.hosts.append((pm.getJointId(j.name), np.eye(4)))
            else:
                hj, T = self.hosts[j.parent]
                self.hosts.append((hj, T @ _placement(model, i)))

    def v_from_pin(self, x):
        """Pinocchio v order → ours along the first axis (vectors or matrices)."""
        x = np.asarray(x)
        if x.ndim == 1:
            return self.mp.v_from_pin(x)
        return np.array([self.mp.v_from_pin(c) for c in x.T]).T

    def v_to_pin(self, x):
        return self.mp.v_to_pin_columns(np.asarray(x))

    def crba(self, qp):
        M = pin.crba(self.pm, self.pm.createData(), qp)
        M = np.triu(M) + np.triu(M, 1).T
        return self.v_from_pin(self.v_from_pin(M).T).T  # rows and columns to our order

    def rnea(self, qp, vp, a, fe=None):
        """Pinocchio's rnea with our-order acceleration ``a`` and our
        body-frame external forces; the result in our order."""
        ap = self.v_to_pin(a)
        if fe is None:
            return self.v_from_pin(pin.rnea(self.pm, self.pm.createData(), qp, vp, ap))
        return self.v_from_pin(pin.rnea(self.pm, self.pm.createData(), qp, vp, ap, self.pin_fext(fe)))

    def pin_fext(self, fe):
        """Our (nbodies, 6) body-frame [n; f] → one local pin.Force per joint."""
        out = [np.zeros(6) for _ in range(self.pm.njoints)]
        for i in range(1, self.model.nbodies):
            jid, T = self.hosts[i]
            R, p = T[:3, :3], T[:3, 3]
            f = R @ fe[i, 3:]
            n = R @ fe[i, :3] + np.cross(p, f)
            out[jid] = out[jid] + np.r_[f, n]
        return [pin.Force(x) for x in out]

    def states(self, n, seed):
        """``n`` random states ``(qp, vp, q, v, a, tau, fe)`` (our order except qp, vp)."""
        pm, mp = self.pm, self.mp
        rng = np.random.default_rng(seed)
        lo = np.where(np.isfinite(pm.lowerPositionLimit), pm.lowerPositionLimit, -2.0).clip(-2, 2)
        hi = np.where(np.isfinite(pm.upperPositionLimit), pm.upperPositionLimit, 2.0).clip(-2, 2)
        for _ in range(n):
            qp = pin.randomConfiguration(pm, lo, hi)
            vp = rng.normal(size=pm.nv)
            a, tau = rng.normal(size=pm.nv), rng.normal(size=pm.nv)
            fe = rng.normal(size=(self.model.nbodies, 6))
            fe[0] = 0.0
            yield qp, vp, mp.q_from_pin(qp), mp.v_from_pin(vp), a, tau, fe


def _pin_with_fixed_bodies(model):
    """A Pinocchio model of a multibody model that keeps bodies on fixed
    joints: their inertias are appended to the nearest moving ancestor."""
    pm = pin.Model()
    pm.gravity = pin.Motion(np.r_[model.gravity, 0.0, 0.0, 0.0])
    host = [(0, np.eye(4))]
    for i in range(1, model.nbodies):
        j = model.joints[i]
        hj, Th = host[j.parent]
        T = Th @ _placement(model, i)
        inertia = pin.Inertia(model.body_mass[i], model.body_com[i].copy(), model.body_inertia[i].copy())
        if j.nv == 0:
            pm.appendBodyToJoint(hj, inertia, pin.SE3(T[:3, :3].copy(), T[:3, 3].copy()))
            host.append((hj, T))
        else:
            jm = _joint_model(model, i)
            jid = pm.addJoint(hj, jm, pin.SE3(T[:3, :3].copy(), T[:3, 3].copy()), j.name)
            pm.appendBodyToJoint(jid, inertia, pin.SE3.Identity())
            host.append((jid, np.eye(4)))
    return pm


def _joint_model(model, i):
    j, tree = model.joints[i], model.tree[i]
    a1, a2 = tree[C_AX1:C_AX1 + 3], tree[C_AX2:C_AX2 + 3]
    if j.type == "cylindrical":
        jm = pin.JointModelComposite(pin.JointModelRevoluteUnaligned(a1))
        jm.addJoint(pin.JointModelPrismaticUnaligned(a1))
        return jm
    return {"revolute": lambda: pin.JointModelRevoluteUnaligned(a1),
            "prismatic": lambda: pin.JointModelPrismaticUnaligned(a1),
            "helical": lambda: pin.JointModelHelicalUnaligned(a1, tree[C_PITCH]),
            "spherical": pin.JointModelSpherical, "free": pin.JointModelFreeFlyer,
            "translational": pin.JointModelTranslation, "planar": pin.JointModelPlanar,
            "universal": lambda: pin.JointModelUniversal(a1, a2)}[j.type]()


def with_armature(builder, seed):
    """Random rotor armature on every moving joint except a free base."""
    rng = np.random.default_rng(seed)
    for body in builder._bodies.values():
        if body.joint_type != "free":
            body.armature = rng.uniform(0.01, 0.5, len(body.armature))
    return builder


@functools.lru_cache(maxsize=None)
def system(name):
    """Named systems: "talos", "solo12" (floating, fixed links merged),
    "talos_fixed_links" (fixed links kept as bodies), random trees
    "tree_{floating,fixed}[_armature]" with every joint type, and
    "tree_fixed_bodies" (floating, fixed-joint bodies kept, armature)."""
    if name in ROBOTS:
        return System(name, mb.load_urdf(robot_path(name), floating_base=ROBOTS[name][1]), pin_model(name))
    if name == "talos_fixed_links":
        model = mb.load_urdf(robot_path("talos"), floating_base=True, merge_fixed=False)
        return System(name, model, pin_model("talos"))
    if name == "tree_fixed_bodies":
        b = with_armature(random_tree(41, n=10, floating=True, fixed=4), 3)
        model = b.build(merge_fixed=False)
        assert any(j.nv == 0 for j in model.joints[1:])
        return System(name, model, _pin_with_fixed_bodies(model))
    floating = "floating" in name
    b = random_tree(51 if floating else 52, n=16, floating=floating)
    if name.endswith("armature"):
        with_armature(b, 7)
    model = b.build()
    return System(name, model, to_pinocchio(model))
