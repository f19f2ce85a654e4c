"""Loop-closing joints and joint couplings as bilateral constraints
``φ(q) = 0`` (Featherstone ch. 8; ArtiSynth §0.5–0.6).

Every constraint is a stack of scalar *rows* of two kinds, between a frame
A (``placement_a`` on ``body_a``) and a frame B (``placement_b`` on
``body_b``), with vectors u fixed in A and w fixed in B:

* point row: ``φ = (R_A u)·(p_B − p_A)`` — the offset of B's origin along a
  direction of A;
* angle row: ``φ = (R_A u)·(R_B w)`` with u ⊥ w when the joint is closed.

Each loop-joint type of the catalog is the rows that leave exactly its
motion free (Featherstone §8.2: T, the complement of the joint's motion
subspace S): e.g. a revolute joint about ``a`` is three point rows and two
angle rows ``(R_A e_i)·(R_B a)`` with e_1, e_2 ⊥ a. Unlike the first-order
error measures of Table 8.1, these φ are smooth functions of q whose exact
derivatives are used: ``φ̇ = G v`` with G = ∂φ/∂q (in velocity
coordinates) and ``φ̈ = G v̇ − k`` (k: Featherstone's velocity-product term,
Eq. 8.15, for these rows):

* point row, a = R_A u, d = p_B − p_A:
  ``G = (a×d)ᵀJ_ωA + aᵀ(J_pB − J_pA)``,
  ``−k = (a×d)·α⁰_A + ω_A·((ω_A×a)×d + a×ḋ) + (ω_A×a)·ḋ + a·(p̈⁰_B − p̈⁰_A)``;
* angle row, a = R_A u, b = R_B w, c = a×b:
  ``G = cᵀ(J_ωA − J_ωB)``,
  ``−k = c·(α⁰_A − α⁰_B) + (ω_A − ω_B)·((ω_A×a)×b + a×(ω_B×b))``,

where J_ω, J_p are the world-aligned angular and origin-velocity Jacobians
of the frames and α⁰, p̈⁰ their angular and classical origin accelerations
at v̇ = 0 (J̇v). Couplings (gears, URDF mimic, Featherstone §9.6) are rows
``φ = q_j − r q_i − c``.
"""
import numpy as np

from ..errors import InputError, ModelError
from ..kinematics import body_motion, forward_kinematics, joint_jacobians


def _perpendiculars(a):
    """Two unit vectors completing the unit vector a to a right-handed basis."""
    t = np.array([1.0, 0, 0]) if abs(a[0]) < 0.9 else np.array([0, 1.0, 0])
    e1 = np.cross(a, t)
    e1 /= np.linalg.norm(e1)
    return e1, np.cross(a, e1)


def loop_rows(lj):
    """(point rows: list of u, angle rows: list of (u, w)) of a
    :class:`~multibody.model.LoopJoint`, in its joint frames' coordinates."""
    a, a2 = lj.axis, lj.axis2
    e1, e2 = _perpendiculars(a)
    I = np.eye(3)
    weld = [(I[1], I[2]), (I[2], I[0]), (I[0], I[1])]
    return {
        "fixed": (list(I), weld),
        "revolute": (list(I), [(e1, a), (e2, a)]),
        "prismatic": ([e1, e2], weld),
        "cylindrical": ([e1, e2], [(e1, a), (e2, a)]),
        "planar": ([a], [(e1, a), (e2, a)]),
        "spherical": (list(I), []),
        "universal": (list(I), [(a, a2)]),
    }[lj.joint]


class Constraints:
    """The bilateral constraints of a model: its loop joints
    (``model.loop_joints``) and couplings (``model.couplings``: gears, URDF
    mimic), plus any given in ``extra`` (LoopJoint or Coupling records).
    :meth:`evaluate` gives φ (nc), G = ∂φ/∂q (nc x nv, velocity
    coordinates) and k with ``φ̈ = G v̇ − k``. ``labels[r]`` names the
    constraint of row r."""

    def __init__(self, model, extra=(), loops=True, couplings=True):
        from ..model import Coupling, LoopJoint
        self.model = model
        items = (list(model.loop_joints) if loops else []) + (list(model.couplings) if couplings else []) \
            + list(extra)
        body = {n: i for i, n in enumerate(model.body_names)}
        joints = {j.name: j for j in model.joints}
        self._points, self._angles = [], []   # (row, ia, Pa, ib, Pb, u[, w])
        self._gears = []                      # (row, j, i, ratio, offset)
        self.labels = []
        row = 0
        for c in items:
            if isinstance(c, LoopJoint):
                for b in (c.body_a, c.body_b):
                    if b not in body:
                        raise ModelError(f"loop joint '{c.name}' references unknown body '{b}'")
                ia, ib = body[c.body_a], body[c.body_b]
                points, angles = loop_rows(c)
                for u in points:
                    self._points.append((row, ia, c.placement_a, ib, c.placement_b, u))
                    self.labels.append(c.name)
                    row += 1
                for u, w in angles:
                    self._angles.append((row, ia, c.placement_a, ib, c.placement_b, u, w))
                    self.labels.append(c.name)
                    row += 1
            elif isinstance(c, Coupling):
                for n in (c.joint, c.mimicked):
                    if n not in joints:
                        raise ModelError(f"coupling of joint '{c.joint}' references unknown joint '{n}'")
                    if joints[n].nv != 1 or joints[n].nq != 1:
                        raise ModelError(f"coupling of joint '{c.joint}': joint '{n}' is {joints[n].type} with "
                                         f"{joints[n].nv} DoF; gears and mimic couple 1-DoF joints")
                j, i = joints[c.joint], joints[c.mimicked]
                self._gears.append((row, j.q_slice.start, j.v_slice.start, i.q_slice.start, i.v_slice.start,
                                    c.multiplier, c.offset))
                self.labels.append(f"coupling {c.joint}")
                row += 1
            else:
                raise InputError(f"not a constraint: {c!r} (give LoopJoint or Coupling records)")
        self.size = row

    def __len__(self):
        return self.size

    def evaluate(self, q, v=None):
        """``(φ, G, k)`` at (q, v); k is None without v. Units: m for point
        rows and coupled prismatic joints, dimensionless (cosines) for angle
        rows, rad for coupled revolute joints."""
        model, nc, nv = self.model, self.size, self.model.nv
        phi, G = np.zeros(nc), np.zeros((nc, nv))
        k = None if v is None else np.zeros(nc)
        if self._points or self._angles:
            oMi = forward_kinematics(model, q)
            J = joint_jacobians(model, q)            # world spatial columns (at the world origin)
            if v is not None:
                vel, acc = body_motion(model, q, v, None, "world")   # spatial, world; acc = J̇v
            frames = {}

            def frame(i, P):
                key = (i, id(P))
                f = frames.get(key)
                if f is None:
                    T = oMi[i] @ P
                    p = T[:3, 3]
                    Jb = J * self._support(i)          # the body's world spatial Jacobian
                    Jw, Jp = Jb[:3], Jb[3:] - np.cross(p, Jb[:3], axisa=0, axisb=0, axisc=0)
                    f = [T[:3, :3], p, Jw, Jp]
                    if v is not None:
                        w, a = vel[i, :3], acc[i, :3]
                        pd = vel[i, 3:] + np.cross(w, p)                       # origin velocity
                        pdd = acc[i, 3:] + np.cross(a, p) + np.cross(w, pd)    # classical, at v̇ = 0
                        f += [w, pd, a, pdd]
                    frames[key] = f
                return f

            for row, ia, Pa, ib, Pb, u in self._points:
                A, B = frame(ia, Pa), frame(ib, Pb)
                a = A[0] @ u
                d = B[1] - A[1]
                axd = np.cross(a, d)
                phi[row] = a @ d
                G[row] = axd @ A[2] + a @ (B[3] - A[3])
                if v is not None:
                    wA, dd = A[4], B[5] - A[5]
                    wa = np.cross(wA, a)
                    k[row] = -(axd @ A[6] + wA @ (np.cross(wa, d) + np.cross(a, dd)) + wa @ dd
                               + a @ (B[7] - A[7]))
            for row, ia, Pa, ib, Pb, u, w in self._angles:
                A, B = frame(ia, Pa), frame(ib, Pb)
                a, b = A[0] @ u, B[0] @ w
                c = np.cross(a, b)
                phi[row] = a @ b
                G[row] = c @ (A[2] - B[2])
                if v is not None:
                    wA, wB = A[4], B[4]
                    k[row] = -(c @ (A[6] - B[6]) + (wA - wB) @ (np.cross(np.cross(wA, a), b)
                                                                + np.cross(a, np.cross(wB, b))))
        for row, jq, jv, iq, iv, r, c in self._gears:
            phi[row] = q[jq] - r * q[iq] - c
            G[row, jv] = 1.0
            G[row, iv] -= r
        return phi, G, k

    def _support(self, i):
        """0/1 mask (nv,) of the coordinates that move body i."""
        cache = self.__dict__.setdefault("_support_cache", {})
        m = cache.get(i)
        if m is None:
            m = np.zeros(self.model.nv)
            parents = self.model.parents
            b = i
            while b > 0:
                j = self.model.joints[b]
                m[j.v_slice] = 1.0
                b = parents[b]
            cache[i] = m
        return m
