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
from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import numpy as np

from .._typing import Array, ArrayLike
from ..errors import InputError, ModelError
from ..model.data import Data
from ._kernels import constraint_rows_kernel

if TYPE_CHECKING:
    from ..model import Coupling, EqualityConstraint, LoopJoint, Model


def perpendiculars(a: Array) -> tuple[Array, Array]:
    """Two unit vectors completing the unit vector a to a right-handed basis."""
    t = np.array([1.0, 0, 0]) if abs(a[0]) < 0.9 else np.array([0, 1.0, 0])
    e1 = np.cross(a, t)
    e1 /= np.linalg.norm(e1)
    return e1, np.cross(a, e1)


def loop_end(model: Model, name: str, placement: Array, what: str) -> tuple[int, Array]:
    """(body index, placement in that body) of a loop-joint end: a body (0:
    the world), or a frame (e.g. a body merged into its parent by a fixed
    joint, an MJCF site), whose placement on its host body is composed in
    front. ModelError naming ``what`` for an unknown name."""
    if name in model.body_names:
        return model.body_names.index(name), placement
    if name in model.frame_names:
        f = model.frames[model.frame_names.index(name)]
        return int(f.body), np.asarray(f.placement, dtype=float) @ placement
    raise ModelError(f"{what} references unknown body or frame '{name}'")


def loop_rows(lj: LoopJoint) -> tuple[list[Any], list[Any], list[Any]]:
    """(point rows: list of u, angle rows: list of (u, w), helical rows:
    list of (u, w)) of a :class:`~multibody.model.LoopJoint`, in its joint
    frames' coordinates. A helical row is ``φ = (R_A u)·(p_B − p_A) −
    pitch·θ``, θ the rotation about u that takes A's w to B's w (valid for
    |θ| < π)."""
    a, a2 = lj.axis, lj.axis2
    e1, e2 = perpendiculars(a)
    I = np.eye(3)
    weld = [(I[1], I[2]), (I[2], I[0]), (I[0], I[1])]
    rows = {
        "fixed": (list(I), weld),
        "revolute": (list(I), [(e1, a), (e2, a)]),
        "prismatic": ([e1, e2], weld),
        "helical": ([e1, e2], [(e1, a), (e2, a)]),
        "cylindrical": ([e1, e2], [(e1, a), (e2, a)]),
        "planar": ([a], [(e1, a), (e2, a)]),
        "spherical": (list(I), []),
        "universal": (list(I), [(a, a2)]),
        "translational": ([], weld),
        "free": ([], []),
    }[lj.joint]
    return rows + ([(a, e1)] if lj.joint == "helical" else [],)


def from_equality(model: Model, eq: EqualityConstraint) -> LoopJoint | Coupling:
    """The :class:`~multibody.model.LoopJoint` or
    :class:`~multibody.model.Coupling` of an MJCF equality constraint
    recorded by the loader: ``connect`` → spherical loop joint at the two
    anchors, ``weld`` → fixed loop joint with the recorded relative pose
    (between sites: the sites' origins, resp. frames, coincide, as in
    MuJoCo), ``joint`` with a linear polynomial → coupling. For connect and
    weld, ``body1``/``body2`` name bodies or frames (a body merged into its
    parent, a site); :class:`Constraints` puts the rows on the frame's host
    body at the frame's placement. MuJoCo solves these softly
    (solref/solimp); here they are exact (or soft with the simulator's
    ``compliance``)."""
    from ..model import Coupling, LoopJoint
    from ..spatial.quaternion import to_rotation
    d = eq.data
    if eq.kind in ("connect", "weld"):
        if eq.objtype not in ("body", "site"):
            raise ModelError(f"equality '{eq.name}': {eq.kind} constraints between {eq.objtype}s are not supported")
        b1: str = eq.body1  # type: ignore[assignment]  # MJCF's connect and weld name body1
        b2 = eq.body2 if eq.body2 is not None else model.body_names[0]
        if eq.objtype == "site":  # MuJoCo: the sites' origins (connect) or frames (weld) coincide; data unused
            return LoopJoint(eq.name, b1, b2, "spherical" if eq.kind == "connect" else "fixed", np.eye(4),
                             np.eye(4), np.array([0, 0, 1.0]), np.array([0, 1.0, 0]))
        if eq.kind == "connect":
            Pa, Pb = np.eye(4), np.eye(4)
            Pa[:3, 3], Pb[:3, 3] = d[0:3], d[3:6]
            return LoopJoint(eq.name, b1, b2, "spherical", Pa, Pb, np.array([0, 0, 1.0]), np.array([0, 1.0, 0]))
        Pa, Pb = np.eye(4), np.eye(4)
        Pa[:3, :3], Pa[:3, 3] = to_rotation(d[6:10] / np.linalg.norm(d[6:10])), d[3:6]
        Pb[:3, 3] = d[0:3]
        return LoopJoint(eq.name, b1, b2, "fixed", Pa, Pb, np.array([0, 0, 1.0]), np.array([0, 1.0, 0]))
    if eq.kind == "joint":
        if np.any(d[2:5] != 0):
            raise ModelError(f"equality '{eq.name}': only linear joint couplings are supported "
                             f"(polycoef {d[:5].tolist()})")
        # body1 is named; body2 None: the joint held at a value (Constraints reads mimicked None so)
        return Coupling(eq.body1, eq.body2, float(d[1]) if eq.body2 is not None else 0.0,  # type: ignore[arg-type]
                        float(d[0]))
    raise ModelError(f"equality '{eq.name}': {eq.kind} constraints are not supported")


class Constraints:
    """The bilateral constraints of a model: its loop joints
    (``model.loop_joints``) and couplings (``model.couplings``: gears, URDF
    mimic), plus any given in ``extra`` (LoopJoint or Coupling records).
    :meth:`evaluate` gives φ (nc), G = ∂φ/∂q (nc x nv, velocity
    coordinates) and k with ``φ̈ = G v̇ − k``. ``labels[r]`` names the
    constraint of row r."""

    def __init__(self, model: Model, extra: Iterable[LoopJoint | Coupling] = (), loops: bool = True,
                 couplings: bool = True, equalities: bool = True) -> None:
        from ..model import Coupling, LoopJoint
        self.model = model
        items = (list(model.loop_joints) if loops else []) + (list(model.couplings) if couplings else []) \
            + ([from_equality(model, e) for e in model.equalities] if equalities else []) + list(extra)

        joints = {j.name: j for j in model.joints}
        rows = []                             # (row, ia, Pa, ib, Pb, u, w, pitch, kind) of each loop row
        self._gears = []                      # (row, j, i, ratio, offset)
        self.labels = []
        row = 0
        for c in items:
            if isinstance(c, LoopJoint):
                ia, Pa = loop_end(model, c.body_a, c.placement_a, f"loop joint '{c.name}'")
                ib, Pb = loop_end(model, c.body_b, c.placement_b, f"loop joint '{c.name}'")
                points, angles, helical = loop_rows(c)
                for u in points:
                    rows.append((row, ia, Pa, ib, Pb, u, np.zeros(3), 0.0, 0))
                    self.labels.append(c.name)
                    row += 1
                for n_row, (u, w) in enumerate(angles + helical):
                    kind = 2 if n_row >= len(angles) else 1
                    rows.append((row, ia, Pa, ib, Pb, u, w, c.pitch, kind))
                    self.labels.append(c.name)
                    row += 1
            elif isinstance(c, Coupling):
                if c.mimicked is None:  # a joint held at a value
                    c = Coupling(c.joint, c.joint, 0.0, c.offset)
                for jn in (c.joint, c.mimicked):
                    if jn not in joints:
                        raise ModelError(f"coupling of joint '{c.joint}' references unknown joint '{jn}'")
                    if joints[jn].nv != 1 or joints[jn].nq != 1:
                        raise ModelError(f"coupling of joint '{c.joint}': joint '{jn}' is {joints[jn].type} with "
                                         f"{joints[jn].nv} DoF; gears and mimic couple 1-DoF joints")
                j, i = joints[c.joint], joints[c.mimicked]
                self._gears.append((row, j.q_slice.start, j.v_slice.start, i.q_slice.start, i.v_slice.start,
                                    c.multiplier, c.offset))
                self.labels.append(f"coupling {c.joint}")
                row += 1
            else:
                raise InputError(f"not a constraint: {c!r} (give LoopJoint or Coupling records)")
        self.size = row
        self.items = tuple(items)             # the LoopJoint and Coupling records, in row order
        n = len(rows)
        self._kind = np.array([r[8] for r in rows], dtype=np.int64)
        self._pitch = np.array([r[7] for r in rows], dtype=np.float64)
        self._row = np.array([r[0] for r in rows], dtype=np.int64)
        self._ia = np.array([r[1] for r in rows], dtype=np.int64)
        self._ib = np.array([r[3] for r in rows], dtype=np.int64)
        self._Pa = np.array([r[2] for r in rows], dtype=np.float64).reshape(n, 4, 4)
        self._Pb = np.array([r[4] for r in rows], dtype=np.float64).reshape(n, 4, 4)
        self._u = np.array([r[5] for r in rows], dtype=np.float64).reshape(n, 3)
        self._w = np.array([r[6] for r in rows], dtype=np.float64).reshape(n, 3)
        g = self._gears
        self._gear_arrays = (np.array([x[0] for x in g], dtype=np.int64), np.array([x[1] for x in g], dtype=np.int64),
                             np.array([x[2] for x in g], dtype=np.int64), np.array([x[3] for x in g], dtype=np.int64),
                             np.array([x[4] for x in g], dtype=np.int64), np.array([x[5] for x in g], dtype=float),
                             np.array([x[6] for x in g], dtype=float))
        self._zero = np.zeros(model.nv)
        self._data = Data(model, thread_checked=False)  # private: the owner's threading rules apply

    def __len__(self) -> int:
        return self.size

    @property
    def kernel_args(self) -> tuple:
        """The row description the compiled kernels take (row, kind, bodies,
        placements, u, w, then the gear rows)."""
        return (self._row, self._kind, self._ia, self._ib, self._Pa, self._Pb, self._u, self._w,
                self._pitch) + self._gear_arrays

    def evaluate(self, q: ArrayLike, v: ArrayLike | None = None) -> tuple[Array, Array, Array | None]:
        """``(φ, G, k)`` at (q, v); k is None without v. Units: m for point
        rows and coupled prismatic joints, dimensionless (cosines) for angle
        rows, rad for coupled revolute joints. One compiled call
        (:func:`~multibody.constraints._kernels.constraint_rows_kernel`)."""
        nc, nv = self.size, self.model.nv
        q = np.ascontiguousarray(q, dtype=np.float64)
        with_v = v is not None
        v = np.ascontiguousarray(v, dtype=np.float64) if with_v else self._zero
        phi, G, k = np.empty(nc), np.empty((nc, nv)), np.empty(nc)
        d = self._data
        # numba's stubs type a kernel call by the kernel's parameters: a star argument does not fit them
        constraint_rows_kernel(self.model._tree, q, v, with_v, *self.kernel_args,  # type: ignore[call-arg]
                               d.poses, d.jac, d.spatial, phi, G, k)
        return phi, G, (k if with_v else None)
