"""Joint-space force elements: spring, viscous damper and regularized
Coulomb friction acting on all the coordinates of one joint (Sueda §2.5,
with the sign convention K = ∂τ/∂q, D = ∂τ/∂v of DESIGN.md, not the
positive K_r, D_r of eq. 2.77; errata S9)."""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..spatial import so3
from ._kin import hat
from .base import ForceElement, floats, nonnegative, resolve_joint
from .._typing import ArrayLike, Frame

if TYPE_CHECKING:
    from ..model.model import Model


def _rotation_vector(quat0, quat):
    """``log(R0ᵀ R)`` of two scalar-first unit quaternions (shortest arc) —
    the rotational part of ``model.difference``."""
    from ..spatial import quaternion as Q
    return np.asarray(Q.difference_body(np.ascontiguousarray(quat0), np.ascontiguousarray(quat)))


def _rotation(quat):
    from ..spatial import quaternion as Q
    return np.asarray(Q.to_rotation(np.ascontiguousarray(quat)))


class _JointElement(ForceElement):
    geometric_stiffness = False

    def __init__(self, joint: Frame, name: str | None = None) -> None:
        super().__init__(name)
        self.joint = joint

    def _label(self):
        return f"{type(self).__name__}({self.joint!r})"


class JointSpring(_JointElement):
    """Linear spring on every coordinate of one joint,
    ``V = ½ Σ_i k_i e_i²``, ``τ = -∂V/∂q`` (tangent space).

    ``stiffness``: scalar or one value per velocity coordinate (``nv`` of
    the joint, v order). ``rest``: the joint's rest configuration (its
    ``nq`` coordinates; default: its part of ``model.neutral()``).

    The error ``e`` (v order) is, per joint type:

    * vector joints (revolute, prismatic, helical, cylindrical,
      translational, universal): ``e = q - rest``, ``τ = -k e``;
    * spherical: the rotation vector ``e = log(R_restᵀ R)`` (the
      ``model.difference``), ``τ = -k e``; ``K = -k J_r⁻¹(e)``. The three
      stiffnesses must be equal (an anisotropic ``½ eᵀ diag(k) e`` has the
      gradient ``J_r⁻ᵀ(e) diag(k) e``, not ``diag(k) e``);
    * free: rotation as spherical (isotropic ``k_ω``); translation on the
      position ``p - p_rest`` in the **parent** frame, with one stiffness per
      parent axis: ``τ_v = -Rᵀ diag(k_p)(p - p_rest)`` (``v`` is the body-frame
      velocity). The SE(3) logarithm of ``model.difference`` is *not* used
      for the translation because ``-k·log`` of SE(3) is not a gradient
      field (it would create energy); MuJoCo splits free-joint springs the
      same way;
    * planar: ``(θ - θ₀, x - x₀, y - y₀)`` in v order ``(ω, vx, vy)``, the
      translation in the parent's in-plane axes, ``τ_xy = -R(θ)ᵀ diag(k)(p -
      p₀)``; θ is not wrapped (as a revolute angle).
    """

    conservative = True

    def __init__(self, joint: Frame, stiffness: ArrayLike, rest: ArrayLike | None = None,
                 name: str | None = None) -> None:
        super().__init__(joint, name)
        self._stiffness = stiffness
        self._rest = rest
        k = floats(self, stiffness, "stiffness")
        if k.ndim > 1:
            raise self.error(f"stiffness must be a scalar or a vector, got shape {k.shape}")
        nonnegative(self, k, "stiffness", k.size if k.ndim else None)

    def _bind(self, model):
        j = resolve_joint(self, model, self.joint)
        k = nonnegative(self, self._stiffness, "stiffness", j.nv)
        if self._rest is None:
            rest = model.neutral()[j.q_slice]
        else:
            rest = floats(self, self._rest, "rest").reshape(-1)
            if rest.shape != (j.nq,) or not np.all(np.isfinite(rest)):
                raise self.error(f"rest must be {j.nq} finite values (the joint's q), got {self._rest!r}")
        if j.type in ("spherical", "free"):
            qa = rest[3:7] if j.type == "free" else rest
            n = np.linalg.norm(qa)
            if abs(n - 1.0) > 1e-6:
                raise self.error("rest quaternion is not unit norm")
            if np.ptp(k[:3]) > 1e-12 * max(1.0, float(np.max(k[:3]))):
                raise self.error(f"the rotational stiffness of {j.type} joint '{j.name}' must be isotropic "
                                 f"(three equal values), got {k[:3]}")
        return j, k, rest

    def _error_terms(self, b, q):
        """(e, τ, K) of the joint block."""
        j, k, rest = b
        qj = q[j.q_slice]
        if j.type == "spherical":
            e = _rotation_vector(rest, qj)
            tau = -k * e
            Kb = -k[0] * np.asarray(so3.right_jacobian_inv(e))
            return e, tau, Kb
        if j.type == "free":
            er = _rotation_vector(rest[3:7], qj[3:7])
            ep = qj[:3] - rest[:3]
            R = _rotation(qj[3:7])
            y = k[3:] * ep
            tau = np.concatenate((-k[0] * er, -R.T @ y))
            Kb = np.zeros((6, 6))
            Kb[:3, :3] = -k[0] * np.asarray(so3.right_jacobian_inv(er))
            Kb[3:, :3] = -hat(R.T @ y)
            Kb[3:, 3:] = -R.T @ (k[3:, None] * R)
            return np.concatenate((er, ep)), tau, Kb
        if j.type == "planar":
            x, y_, th = qj
            e = np.array([th - rest[2], x - rest[0], y_ - rest[1]])
            c, s = np.cos(th), np.sin(th)
            R = np.array([[c, -s], [s, c]])
            y = k[1:] * e[1:]
            tau = np.concatenate(([-k[0] * e[0]], -R.T @ y))
            Kb = np.zeros((3, 3))
            Kb[0, 0] = -k[0]
            Kb[1:, 0] = np.array([[0.0, -1.0], [1.0, 0.0]]) @ (R.T @ y)
            Kb[1:, 1:] = -R.T @ (k[1:, None] * R)
            return e, tau, Kb
        e = qj - rest
        return e, -k * e, -np.diag(k)

    def _evaluate(self, st, b, jacobians):
        j = b[0]
        nv = st.model.nv
        _, tj, Kb = self._error_terms(b, st.q)
        tau = np.zeros(nv)
        tau[j.v_slice] = tj
        if not jacobians:
            return tau, None, None
        K = np.zeros((nv, nv))
        K[j.v_slice, j.v_slice] = Kb
        return tau, K, None

    def potential_energy(self, model: Model, q: ArrayLike) -> float:
        b = self.bind(model)
        q = model.check_configuration(q)
        e = self._error_terms(b, q)[0]
        return float(0.5 * np.sum(b[1] * e * e))


class JointDamper(_JointElement):
    """Viscous damping ``τ = -d ∘ v_joint`` on every velocity coordinate of
    one joint (free joints: the body-frame twist ``(ω, v)``). ``damping``:
    scalar or ``nv`` values, >= 0. ``D = -diag(d)``, ``K = 0``."""

    def __init__(self, joint: Frame, damping: ArrayLike, name: str | None = None) -> None:
        super().__init__(joint, name)
        d = floats(self, damping, "damping")
        if d.ndim > 1:
            raise self.error(f"damping must be a scalar or a vector, got shape {d.shape}")
        nonnegative(self, d, "damping", d.size if d.ndim else None)
        self._damping = damping

    def _bind(self, model):
        j = resolve_joint(self, model, self.joint)
        return j, nonnegative(self, self._damping, "damping", j.nv)

    def _evaluate(self, st, b, jacobians):
        j, d = b
        nv = st.model.nv
        tau = np.zeros(nv)
        tau[j.v_slice] = -d * st.v[j.v_slice]
        if not jacobians:
            return tau, None, None
        D = np.zeros((nv, nv))
        D[j.v_slice, j.v_slice] = -np.diag(d)
        return tau, None, D


class JointCoulombFriction(_JointElement):
    """Smooth Coulomb friction ``τ = -F ∘ tanh(v / v_eps)`` on every velocity
    coordinate of one joint: ``|τ_i| < F_i``, odd, dissipative
    (``τ·v <= 0``), ``D = -diag(F/v_eps · (1 - tanh²(v/v_eps)))``, ``K = 0``.
    ``friction``: scalar or ``nv`` values >= 0 (N or N·m); ``v_eps > 0``:
    the velocity (m/s or rad/s) below which the law is viscous-like with
    slope ``F/v_eps`` — smaller is closer to true Coulomb friction and
    stiffer for the integrator. Stiction is not modelled (that needs the
    constraint solvers of a later issue)."""

    def __init__(self, joint: Frame, friction: ArrayLike, v_eps: float = 1e-3, name: str | None = None) -> None:
        super().__init__(joint, name)
        f = floats(self, friction, "friction")
        if f.ndim > 1:
            raise self.error(f"friction must be a scalar or a vector, got shape {f.shape}")
        nonnegative(self, f, "friction", f.size if f.ndim else None)
        eps = nonnegative(self, v_eps, "v_eps")
        if eps <= 0:
            raise self.error(f"v_eps must be positive, got {v_eps!r}")
        self._friction = friction
        self.v_eps = eps

    def _bind(self, model):
        j = resolve_joint(self, model, self.joint)
        return j, nonnegative(self, self._friction, "friction", j.nv)

    def _evaluate(self, st, b, jacobians):
        j, F = b
        nv = st.model.nv
        th = np.tanh(st.v[j.v_slice] / self.v_eps)
        tau = np.zeros(nv)
        tau[j.v_slice] = -F * th
        if not jacobians:
            return tau, None, None
        D = np.zeros((nv, nv))
        D[j.v_slice, j.v_slice] = np.diag(-F / self.v_eps * (1.0 - th * th))
        return tau, None, D


def joint_spring_elements(model: Model) -> tuple[JointSpring, ...]:
    """The model's own joint springs as a tuple of :class:`JointSpring`
    elements: one per joint with a non-zero ``model.stiffness``, about its
    part of ``model.spring_reference`` (MJCF ``stiffness`` / ``springref``;
    ``ModelBuilder.add_body(stiffness=, spring_reference=)``)."""
    return tuple(JointSpring(j.name, model.stiffness[j.v_slice], rest=model.spring_reference[j.q_slice])
                 for j in model.joints[1:] if j.nv and np.any(model.stiffness[j.v_slice]))
