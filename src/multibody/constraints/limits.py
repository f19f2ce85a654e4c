"""Joint position limits as unilateral constraints (Drumwright §2.2,
Featherstone §11.4): ``lower ≤ q_k ≤ upper``."""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .._typing import Array
from ..errors import InputError

if TYPE_CHECKING:
    from ..model import Model

_VECTOR_JOINTS = ("revolute", "prismatic", "helical", "cylindrical", "translational", "universal", "euler", "free2d",
                  "spline", "spline_surface", "composite", "exp_spherical", "free3d")


class JointLimits:
    """The model's finite position limits, one unilateral constraint row
    each: ``φ = q_k − lower_k ≥ 0`` or ``φ = upper_k − q_k ≥ 0`` (rad or m),
    with Jacobian ``G = ±e_k`` on the velocity coordinate of q_k, so the
    constraint's normal velocity is ``sign · v_k``. Limits apply to joints
    whose coordinates are their own velocities (revolute, prismatic,
    helical, cylindrical, translational, universal and Sueda's joints, all
    with v = q̇); a finite limit on
    another joint (the position of a free joint, a planar joint) is an
    :class:`InputError`."""

    def __init__(self, model: Model) -> None:
        q_idx, v_idx, sign, bound = [], [], [], []
        lo, hi = model.lower_limit, model.upper_limit
        for j in model.joints:
            qs, vs = j.q_slice, j.v_slice
            bounded = np.isfinite(lo[qs]) | np.isfinite(hi[qs])
            if not bounded.any():
                continue
            if j.type not in _VECTOR_JOINTS:
                raise InputError(f"joint '{j.name}' ({j.type}) has position limits; limits are supported on "
                                 f"joints whose velocities are their coordinates' rates ({', '.join(_VECTOR_JOINTS)})")
            for k in range(j.nq):
                for s, x in ((1.0, lo[qs.start + k]), (-1.0, hi[qs.start + k])):
                    if np.isfinite(x):
                        q_idx.append(qs.start + k)
                        v_idx.append(vs.start + k)
                        sign.append(s)
                        bound.append(x)
        self.model = model
        self.q_index = np.array(q_idx, dtype=np.int64)
        self.v_index = np.array(v_idx, dtype=np.int64)
        self.sign = np.array(sign)
        self.bound = np.array(bound)

    @classmethod
    def none(cls, model: Model) -> JointLimits:
        """No rows (for code paths that take limit arrays unconditionally)."""
        lim = cls.__new__(cls)
        lim.model = model
        lim.q_index = np.zeros(0, np.int64)
        lim.v_index = np.zeros(0, np.int64)
        lim.sign = np.zeros(0)
        lim.bound = np.zeros(0)
        return lim

    def __len__(self) -> int:
        return len(self.sign)

    def gaps(self, q: Array) -> Array:
        """φ of every row (negative: violated)."""
        return self.sign * (q[self.q_index] - self.bound)

    def normal_velocity(self, v: Array) -> Array:
        """``G v`` of every row (negative: approaching the limit)."""
        return self.sign * v[self.v_index]

    def jacobian(self, rows: np.ndarray) -> Array:
        """``G`` (len(rows) x nv) of the selected rows."""
        G = np.zeros((len(rows), self.model.nv))
        G[np.arange(len(rows)), self.v_index[rows]] = self.sign[rows]
        return G

    def violation(self, q: Array) -> float:
        """The largest limit violation ``max(0, −φ)`` at q (rad or m)."""
        return float(max(0.0, -self.gaps(q).min())) if len(self) else 0.0
