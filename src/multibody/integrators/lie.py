"""Munthe-Kaas Runge–Kutta (RKMK) on the configuration Lie group (Müller
& Terze §4, eqs 36–37, the left-trivialized variant; notes/seed-004.md
C6–C9): for the maximal coordinates of
:class:`multibody.formulations.MaximalSystem` (:meth:`RKMK.step_maximal`)
and, as an :class:`~multibody.integrators.base.Integrator`
(``integrator="rkmk4"``), for reduced coordinates, whose configuration
space is the product of its joints' groups: R^n for the vector joints,
SO(3) for the spherical joint, SE(2) for the planar joint and SE(3) or
SO(3) × R³ for the free joint.

Each body's state is a pose C and a velocity; a step moves the pose by the
group's exponential of an increment built from the stages, so the pose
stays on the group. Two groups per body (``lie_group``):

* ``"se3"``: SE(3) with the body twist V = (ω; v) — the pose moves along a
  screw, ``C ← C exp(Φ̂)``;
* ``"so3xr3"``: SO(3) × R³ with the hybrid velocity (ω; ṙ) — rotation and
  translation separately, ``R ← R exp(ξ̂)``, ``r ← r + u``.

With Butcher coefficients (a, b, c) of order p (1: Euler, 2: Heun, 3:
Kutta, 4: classical RK4), from the state X: ``Ψ_j = h Σ_{l<j} a_jl k_l``,
``k_j = (dexp⁻¹_{−Ψ_j} of the stage's configuration velocity, the stage's
acceleration)`` at ``X exp(Ψ_j)``, and ``X ← X exp(h Σ b_j k_j)``
(velocities are a vector space: their part of exp is addition). dexp⁻¹
is exact (:func:`multibody.spatial.se3.dexp_inv_body`,
:func:`multibody.spatial.so3.right_jacobian_inv`), so the order is p.

What the choice of group keeps: a body whose motion lies in a subgroup of
SE(3) (one jointed to the ground by a lower pair) has its body twists in a
fixed subalgebra; the SE(3) update stays in the coset exactly (to
round-off), the SO(3) × R³ update leaves it at the truncation error (notes
C14). Which twists lie in the subalgebra depends on the state frame: for a
body on a ball joint the pivot frame's twist (ω; 0) keeps its position in
both groups; the centre-of-mass frame's (ω; ω × r₀) only in SE(3).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .._typing import Array
from ..errors import InputError
from ..model.joints import FREE, PLANAR, SPHERICAL
from ..spatial import quaternion as quat
from ..spatial import se3, so3
from .base import Integrator

# Butcher tableaus (a, b) of the explicit Runge–Kutta methods of orders 1–4 (c = row sums of a)
TABLEAUS = {
    1: (np.zeros((1, 1)), np.array([1.0])),
    2: (np.array([[0.0, 0.0], [1.0, 0.0]]), np.array([0.5, 0.5])),
    3: (np.array([[0.0, 0.0, 0.0], [0.5, 0.0, 0.0], [-1.0, 2.0, 0.0]]), np.array([1.0, 4.0, 1.0]) / 6.0),
    4: (np.array([[0.0, 0.0, 0.0, 0.0], [0.5, 0.0, 0.0, 0.0], [0.0, 0.5, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0]]),
        np.array([1.0, 2.0, 2.0, 1.0]) / 6.0),
}
LIE_GROUPS = ("se3", "so3xr3")


class RKMK(Integrator):
    """Munthe-Kaas Runge–Kutta of ``order`` 1–4 (module docstring) on
    ``lie_group``: "se3", "so3xr3", or one of them per body (a sequence;
    maximal coordinates only). :meth:`step_maximal` advances a maximal
    state (C, V) — state-frame poses (n, 4, 4) and body twists (n, 6) — by
    h under joint forces tau held constant; :meth:`step`, the integrator
    interface, a reduced state (q, v), with ``lie_group`` the group of
    every free joint."""
    name, order = "rkmk4", 4  # the default; an instance of another order says its own

    def __init__(self, order: int = 4, lie_group: str | Sequence[str] = "se3") -> None:
        if order not in TABLEAUS:
            raise InputError(f"RKMK order must be 1, 2, 3 or 4, got {order!r}")
        groups = (lie_group,) if isinstance(lie_group, str) else tuple(lie_group)
        for g in groups:
            if g not in LIE_GROUPS:
                raise InputError(f"lie_group must be 'se3' or 'so3xr3' (or one per body), got {g!r}")
        self.order = order
        self.name = f"rkmk{order}"
        self.lie_group = lie_group
        self._a, self._b = TABLEAUS[order]

    # ------------------------------------------------------------------ reduced coordinates
    def check(self, system: Any) -> None:
        if system.constraints is not None:
            raise InputError("the rkmk integrator does not take loop constraints yet (its stages are the tree's "
                             "dynamics); use rk4 or semi_implicit_euler")
        if not isinstance(self.lie_group, str):
            raise InputError("in reduced coordinates lie_group is one group for every free joint, 'se3' or "
                             "'so3xr3'")

    def step(self, system: Any, t: float, q: Array, v: Array, tau: Array, dt: float) -> tuple[Array, Array]:
        """One step of dt from the reduced state (q, v): stages at ``q ⊕ Ψ``
        on each joint's group (free joints on SE(3) with their body twist,
        or on SO(3) × R³ with (ω; ṗ), ṗ = R v in the parent's axes), their
        accelerations by ``system.acceleration``, the increments through
        each group's dexp⁻¹ (exact; identity on R^n)."""
        model = system.model
        lie_joints = [(int(model.tree[i, 0]), j.q_slice.start, j.v_slice.start) for i, j in enumerate(model.joints)
                      if i and int(model.tree[i, 0]) in (FREE, SPHERICAL, PLANAR)]
        hybrid_free = self.lie_group == "so3xr3"
        a, b = self._a, self._b
        s = b.shape[0]
        W0 = self._free_linear(lie_joints, q, v, True, hybrid_free)
        kc, kv = np.zeros((s, v.shape[0])), np.zeros((s, v.shape[0]))
        for j in range(s):
            psi = dt * (a[j, :j] @ kc[:j]) if j else np.zeros_like(v)
            W = W0 + (dt * (a[j, :j] @ kv[:j]) if j else 0.0)
            qj = self._moved(model, lie_joints, q, psi, hybrid_free)
            vj = self._free_linear(lie_joints, qj, W, False, hybrid_free)
            acc = system.acceleration(t + dt * a[j, :j].sum(), qj, vj, tau)
            kc[j], kv[j] = W, acc
            for jt, iq, iv in lie_joints:  # dexp⁻¹ at −Ψ of the Lie joints' velocities; (ω̇; p̈) for hybrid ones
                sl = slice(iv, iv + 3)
                if jt == SPHERICAL:
                    kc[j, sl] = so3.right_jacobian_inv(psi[sl]) @ vj[sl]
                elif jt == PLANAR:
                    kc[j, iv:iv + 3] = _planar_dexp_inv(psi[iv:iv + 3]) @ vj[iv:iv + 3]
                elif not hybrid_free:
                    kc[j, iv:iv + 6] = se3.dexp_inv_body(psi[iv:iv + 6]) @ vj[iv:iv + 6]
                else:
                    kc[j, sl] = so3.right_jacobian_inv(psi[sl]) @ vj[sl]
                    R = quat.to_rotation(qj[iq + 3:iq + 7])
                    kv[j, iv + 3:iv + 6] = R @ (acc[iv + 3:iv + 6] + np.cross(vj[sl], vj[iv + 3:iv + 6]))
        q1 = self._moved(model, lie_joints, q, dt * (b @ kc), hybrid_free)
        return q1, self._free_linear(lie_joints, q1, W0 + dt * (b @ kv), False, hybrid_free)

    @staticmethod
    def _free_linear(lie_joints, q, x, to_parent, hybrid_free):
        """x with each free joint's linear part rotated at q: ``ṗ = R v``
        (``to_parent``: body twist to SO(3) × R³'s velocity) or back, ``v =
        Rᵀṗ``; x itself (a copy) on SE(3)."""
        out = x.copy()
        if hybrid_free:
            for jt, iq, iv in lie_joints:
                if jt == FREE:
                    R = quat.to_rotation(q[iq + 3:iq + 7])
                    out[iv + 3:iv + 6] = (R if to_parent else R.T) @ x[iv + 3:iv + 6]
        return out

    @staticmethod
    def _moved(model, lie_joints, q, psi, hybrid_free):
        """``q ⊕ ψ`` on the joints' groups: the model's exponential map
        (:meth:`~multibody.model.Model.integrate`; SE(3) for free joints), or
        with ``hybrid_free`` the free joints' rotation and translation apart."""
        q1 = model._integrate(q, psi, 1.0)
        if hybrid_free:
            for jt, iq, iv in lie_joints:
                if jt == FREE:
                    q1[iq:iq + 3] = q[iq:iq + 3] + psi[iv + 3:iv + 6]
                    q1[iq + 3:iq + 7] = quat.integrate_body(q[iq + 3:iq + 7], psi[iv:iv + 3])
        return q1

    def _se3_mask(self, n):
        if isinstance(self.lie_group, str):
            return np.full(n, self.lie_group == "se3")
        if len(self.lie_group) != n:
            raise InputError(f"lie_group names {len(self.lie_group)} groups for {n} bodies")
        return np.array([g == "se3" for g in self.lie_group])

    # ------------------------------------------------------------------ maximal coordinates
    def step_maximal(self, system: Any, C: Array, V: Array, tau: Array, h: float,
                     near: Array | None = None) -> tuple[Array, Array]:
        """One step of h (s) of a :class:`~multibody.formulations.MaximalSystem`
        from the poses C and body twists V; returns the new (C, V). ``near``:
        the configuration whose coordinate branches the joint forces τ
        refer to (joints with several charts of a pose; see
        :meth:`MaximalSystem.acceleration`)."""
        if not (np.isfinite(h) and h > 0):
            raise InputError(f"the time step must be a finite number > 0 (s), got {h}")
        n = C.shape[0]
        se3_body = self._se3_mask(n)
        a, b = self._a, self._b
        s = b.shape[0]
        W0 = hybrid(C, V, ~se3_body)  # the velocity coordinates of each body's group
        kc, kv = np.zeros((s, n, 6)), np.zeros((s, n, 6))
        for j in range(s):
            psi = h * np.tensordot(a[j, :j], kc[:j], axes=1) if j else np.zeros((n, 6))
            W = W0 + (h * np.tensordot(a[j, :j], kv[:j], axes=1) if j else 0.0)
            Cj = moved(C, psi, se3_body)
            Vj = body_twists(Cj, W, ~se3_body)
            Vd, _ = system.acceleration(Cj, Vj, tau, near=near)
            for k in range(n):
                if se3_body[k]:
                    kc[j, k] = se3.dexp_inv_body(psi[k]) @ Vj[k]
                    kv[j, k] = Vd[k]
                else:
                    kc[j, k, :3] = so3.right_jacobian_inv(psi[k, :3]) @ Vj[k, :3]
                    kc[j, k, 3:] = W[k, 3:]
                    kv[j, k, :3] = Vd[k, :3]  # r̈ = R (v̇ + ω × v): the derivative of ṙ = R v
                    kv[j, k, 3:] = Cj[k, :3, :3] @ (Vd[k, 3:] + np.cross(Vj[k, :3], Vj[k, 3:]))
        C1 = moved(C, h * np.tensordot(b, kc, axes=1), se3_body)
        W1 = W0 + h * np.tensordot(b, kv, axes=1)
        return C1, body_twists(C1, W1, ~se3_body)


def _planar_dexp_inv(psi):
    """dexp⁻¹ at −ψ of the planar joint's group SE(2), ψ = (θ, x, y) in the
    joint's (rotation, translation, translation) order: SE(3)'s restricted
    to the plane (rotation about z, translation in x, y)."""
    D = se3.dexp_inv_body(np.array([0.0, 0.0, psi[0], psi[1], psi[2], 0.0]))
    return D[np.ix_([2, 3, 4], [2, 3, 4])]


def hybrid(C: Array, V: Array, mask: np.ndarray) -> Array:
    """The velocities (ω; ṙ = R v) of the bodies in ``mask`` (the others' V unchanged)."""
    W = V.copy()
    W[mask, 3:] = np.einsum("kij,kj->ki", C[mask, :3, :3], V[mask, 3:])
    return W


def body_twists(C: Array, W: Array, mask: np.ndarray) -> Array:
    """The inverse of :func:`hybrid`: body twists (ω; Rᵀṙ) of the bodies in ``mask``."""
    V = W.copy()
    V[mask, 3:] = np.einsum("kji,kj->ki", C[mask, :3, :3], W[mask, 3:])
    return V


def moved(C: Array, psi: Array, se3_body: np.ndarray) -> Array:
    """The poses C moved by the increments psi (n, 6): ``C exp(ψ̂)`` on SE(3),
    ``(R exp(ξ̂), r + u)`` on SO(3) × R³."""
    out = np.empty_like(C)
    for k in range(C.shape[0]):
        if se3_body[k]:
            out[k] = C[k] @ se3.exp(psi[k])
        else:
            out[k] = C[k]
            out[k, :3, :3] = C[k, :3, :3] @ so3.exp(psi[k, :3])
            out[k, :3, 3] = C[k, :3, 3] + psi[k, 3:]
    return out
