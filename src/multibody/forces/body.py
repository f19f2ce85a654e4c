"""Force elements acting on single bodies: gravity, external wrenches,
directional point forces and viscous body damping.

All are assembled from world spatial forces ``w`` (world origin, world
axes) on bodies, ``τ = J_bᵀ w``; their stiffness is the geometric term of
:func:`._kin.geometric` plus ``J_bᵀ ∂w/∂δ`` (docs/forces.md).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable

import numpy as np

from ..dynamics import gravity_forces
from ..errors import InputError
from ..kinematics import potential_energy as _gravity_potential
from ..model.checks import as_float_array
from ._kernels import geometric as _geometric
from ._kin import crf_cols, crf_vec, crm_vec, cross3, cross_vm, geometric, hat, point_jacobian, wrench_at
from .base import ForceElement, floats, nonnegative, resolve_frame, vector3
from .._typing import Array, ArrayLike, Frame

if TYPE_CHECKING:
    from ..model.model import Model

REFERENCES = ("world", "local")


def _reference(owner, reference):
    r = str(reference).lower()
    if r not in REFERENCES:
        raise owner.error(f"reference must be 'world' or 'local', got {reference!r}")
    return r


class Gravity(ForceElement):
    """The generalized gravity force ``τ = -g(q)`` (``g`` =
    :func:`multibody.gravity_forces`, so ``M q̈ + C(q, v) = τ_act`` becomes
    ``M q̈ + C_without_gravity = τ_act + τ_gravity``), with gravity
    ``model.gravity``. Potential: :func:`multibody.potential_energy`.

    ``K`` (exact): with the body wrenches ``w_b = [h_b × g; m_b g]``
    (``h_b = m_b c_b``, world), ``K = G + K_m`` where ``G`` is the geometric
    term of the subtree wrenches ``W_k = Σ_{b ⪰ k} w_b`` and
    ``K_m[k, l] = s_kᵀ A_{kl} s_l``, ``A = [[ [g][h], -m[g] ], [0, 0]]``
    summed over the bodies moved by both k and l (the motion of the centres
    of mass). ``D = 0``.
    """

    conservative = True

    def _evaluate(self, st, b, jacobians):
        model = st.model
        tau = -np.array(gravity_forces(model, st.q, data=st.data))
        if not jacobians:
            return tau, None, None
        J, oMi, topo = st.J, st.oMi, st.topo
        g = np.asarray(model.gravity, dtype=float)
        m = np.asarray(model.body_mass, dtype=float)
        c = np.einsum("bij,bj->bi", oMi[:, :3, :3], model.body_com) + oMi[:, :3, 3]
        h = m[:, None] * c                                   # first moments (world)
        supp = topo.support                                  # (nb, nv)
        # subtree wrench of each coordinate W_k = Σ_b supp[b,k] [h_b × g; m_b g]
        Hk = h.T @ supp                                      # (3, nv)
        Mk = m @ supp                                        # (nv,)
        W = np.concatenate((-cross_vm(g, Hk), g[:, None] * Mk[None, :]))   # (6, nv): [H_k × g; M_k g]
        # (τ_k = s_k·W_k equals -gravity_forces up to round-off; RNEA's value is returned)
        K = _geometric(topo.maskT, J, crf_cols(J, W))       # crf_cols column k: s_k ×* W_k
        # motion of the centres of mass: bodies moved by both k and l,
        # Σ_b supp[b,k] supp[b,l] (m_b, h_b) as matrices (nv x nv)
        Mkl = supp.T @ (m[:, None] * supp)
        Hkl = [supp.T @ (h[:, i:i + 1] * supp) for i in range(3)]
        Om, U = J[:3], J[3:]
        gO = g @ Om
        gH = g[0] * Hkl[0] + g[1] * Hkl[1] + g[2] * Hkl[2]
        K += (Om[0][:, None] * Hkl[0] + Om[1][:, None] * Hkl[1] + Om[2][:, None] * Hkl[2]) * gO[None, :]
        K -= (Om.T @ Om) * gH
        K -= Mkl * (Om.T @ (hat(g) @ U))
        return tau, K, None

    def potential_energy(self, model: Model, q: ArrayLike) -> float:
        return float(_gravity_potential(model, q))


class _FrameElement(ForceElement):
    def __init__(self, frame: Frame, name: str | None = None) -> None:
        super().__init__(name)
        self.frame = frame

    def _label(self):
        return f"{type(self).__name__}({self.frame!r})"


def _point_force_terms(st, topo, body, x, f, df, fixed_in_body, jacobians):
    """τ and K of a force ``f`` (world) at the body point ``x``; ``df`` is
    ``∂f/∂δ`` from sources other than the body's own rotation (or None);
    ``fixed_in_body``: f rotates with the body."""
    Jb = st.Jb(body)
    P = point_jacobian(Jb, x)
    tau = P.T @ f
    if not jacobians:
        return tau, None
    K = geometric(topo, Jb, wrench_at(x, f)) - Jb[:3].T @ (hat(f) @ P)
    dfb = -hat(f) @ Jb[:3] if fixed_in_body else None      # δf = ω × f
    if df is not None:
        dfb = df if dfb is None else dfb + df
    if dfb is not None:
        K += P.T @ dfb
    return tau, K


class ExternalWrench(_FrameElement):
    """A wrench ``[n; f]`` (angular first) applied at the origin of ``frame``
    (a body name or any frame), constant or a callable ``wrench(t)``.

    ``reference="world"``: ``n`` and ``f`` are world components (the force
    keeps its world direction while its point of application moves with the
    body; Pinocchio's LOCAL_WORLD_ALIGNED); ``"local"``: components in the
    frame's axes (a follower wrench that turns with the body).

    ``τ = Jᵀ w`` with the frame's Jacobian. ``K`` is the exact derivative
    (geometric term, plus for "local" the rotation of ``n`` and ``f`` with
    the body); ``D = 0``. A constant world force without moment is
    conservative, ``V = -f·x``; otherwise the potential is reported as 0.
    """

    def __init__(self, frame: Frame, wrench: ArrayLike | Callable[[float], ArrayLike], reference: str = "world",
                 name: str | None = None) -> None:
        super().__init__(frame, name)
        self.reference = _reference(self, reference)
        self._wrench: Callable[[float], ArrayLike] | None
        self._constant: Array | None
        if callable(wrench):
            self._wrench = wrench
            self._constant = None
        else:
            w = floats(self, wrench, "wrench")
            if w.shape != (6,) or not np.all(np.isfinite(w)):
                raise self.error(f"wrench must be 6 finite values [n; f] (angular first) or a callable of t, "
                                 f"got shape {w.shape}")
            self._wrench = None
            self._constant = w
        self.conservative = (self._constant is not None and self.reference == "world"
                             and not np.any(self._constant[:3]))

    def wrench(self, t: float) -> Array:
        """The wrench ``[n; f]`` (6,) at time ``t`` in the element's reference."""
        if self._constant is not None:
            return self._constant
        try:
            w = as_float_array(self._wrench(t), f"wrench(t={t})")  # type: ignore[misc]  # not constant: a callable
        except InputError as e:
            raise self.error(str(e), InputError) from None
        if w.shape != (6,) or not np.all(np.isfinite(w)):
            raise self.error(f"wrench(t={t}) returned shape {w.shape}; expected 6 finite values", InputError)
        return w

    def _bind(self, model):
        return resolve_frame(self, model, self.frame)

    def _evaluate(self, st, b, jacobians):
        body, place = b
        F = st.pose(body, place)
        R, x = F[:3, :3], F[:3, 3]
        w = self.wrench(st.t)
        n, f = (w[:3], w[3:]) if self.reference == "world" else (R @ w[:3], R @ w[3:])
        Jb = st.Jb(body)
        W = wrench_at(x, f, n)
        tau = Jb.T @ W
        if not jacobians:
            return tau, None, None
        K = geometric(st.topo, Jb, W)
        if self.reference == "world":
            P = point_jacobian(Jb, x)
            K -= Jb[:3].T @ (hat(f) @ P)                  # δ(x × f) = δx × f
        else:
            K += Jb.T @ crf_vec(Jb, W)                     # the wrench moves with the body: δW = ξ ×* W
        return tau, K, None

    def potential_energy(self, model: Model, q: ArrayLike) -> float:
        if not self.conservative:
            return 0.0
        from ..kinematics import frame_pose
        body, place = self.bind(model)
        x = frame_pose(model, q, self.frame if self.frame is not None else "world")[:3, 3]
        return float(-self._constant[3:] @ x)  # type: ignore[index]  # conservative: constant


class PointForce(_FrameElement):
    """Directional point force (Sueda §1.9.2): ``f = magnitude · d`` applied
    at ``point`` (coordinates in ``frame``) of the frame's body.

    ``direction`` (3,, normalized; zero length is an error) is fixed in the
    world (``direction_reference="world"``, Sueda's ``a``: a constant world
    force, potential ``V = -f·x``) or in the frame (``"local"``: a follower
    force, not conservative). ``magnitude``: a number or a callable of t.

    Sueda's stiffness ``K = k[[ [x][Rᵀa], 0 ], [ [Rᵀa], 0 ]]`` is the body-
    coordinate version of the joint-space ``K`` here (it is +∂f/∂q; notes
    item 15); the joint-space ``K`` adds the geometric term of the tree.
    """

    def __init__(self, frame: Frame, point: ArrayLike = (0.0, 0.0, 0.0), direction: ArrayLike = (0.0, 0.0, 1.0),
                 magnitude: float | Callable[[float], float] = 1.0, direction_reference: str = "world",
                 name: str | None = None) -> None:
        super().__init__(frame, name)
        self.point = vector3(self, point, "point")
        self.direction = vector3(self, direction, "direction", unit=True)
        self.direction_reference = _reference(self, direction_reference)
        self._magnitude: float | Callable[[float], float]
        if callable(magnitude):
            self._magnitude = magnitude
            self.conservative = False
        else:
            try:
                self._magnitude = float(magnitude)
            except (TypeError, ValueError):
                raise self.error(f"magnitude must be a number or a callable of t, got {magnitude!r}") from None
            if not np.isfinite(self._magnitude):
                raise self.error("magnitude must be finite")
            self.conservative = self.direction_reference == "world"

    def magnitude(self, t: float) -> float:
        if callable(self._magnitude):
            m = self._magnitude(t)
            try:
                m = float(m)
            except (TypeError, ValueError):
                raise self.error(f"magnitude(t={t}) returned {m!r}; expected a number", InputError) from None
            return m
        return self._magnitude

    def _bind(self, model):
        body, place = resolve_frame(self, model, self.frame)
        place = place.copy()
        place[:3, 3] += place[:3, :3] @ self.point
        return body, place

    def _evaluate(self, st, b, jacobians):
        body, place = b
        F = st.pose(body, place)
        x = F[:3, 3]
        d = self.direction if self.direction_reference == "world" else F[:3, :3] @ self.direction
        f = self.magnitude(st.t) * d
        tau, K = _point_force_terms(st, st.topo, body, x, f, None, self.direction_reference == "local",
                                    jacobians)
        return tau, K, None

    def potential_energy(self, model: Model, q: ArrayLike) -> float:
        if not self.conservative:
            return 0.0
        from ..kinematics import forward_kinematics
        body, place = self.bind(model)
        oMi = forward_kinematics(model, q)
        x = (oMi[body] @ place)[:3, 3]
        return float(-self._magnitude * self.direction @ x)  # type: ignore[operator]  # conservative: a number


class BodyDamping(_FrameElement):
    """Viscous damping of a body's spatial velocity, measured at a frame:
    with ``[ω; v]`` the frame's velocity in its own axes (``v``: velocity of
    the frame origin; ``mb.frame_velocity(..., "local")``), the wrench
    ``[-d_r ∘ ω; -d_t ∘ v]`` acts at the frame origin, in the frame's axes.
    ``frame``: a body name (its body frame) or any frame — pass a frame at
    the centre of mass to damp the COM velocity. ``linear`` (N·s/m) and
    ``angular`` (N·m·s/rad): scalars or 3 values (frame axes), >= 0.

    ``τ = -J_Lᵀ Δ J_L v`` (``J_L``: the frame's local Jacobian,
    ``Δ = diag(d_r, d_t)``), ``D = -J_Lᵀ Δ J_L`` (symmetric, negative
    semidefinite), ``K`` exact (the local Jacobian turns with the tree).
    ArtiSynth's frame/rotary damping is the isotropic case.
    """

    def __init__(self, frame: Frame, linear: ArrayLike = 0.0, angular: ArrayLike = 0.0, name: str | None = None) -> None:
        super().__init__(frame, name)
        self.linear = nonnegative(self, linear, "linear damping", 3)
        self.angular = nonnegative(self, angular, "angular damping", 3)

    def _bind(self, model):
        return resolve_frame(self, model, self.frame)

    def _evaluate(self, st, b, jacobians):
        body, place = b
        F = st.pose(body, place)
        R, x = F[:3, :3], F[:3, 3]
        Jb = st.Jb(body)
        Vb = st.V(body)
        delta = np.concatenate((self.angular, self.linear))

        def to_local(m):   # Ad(F⁻¹) m of world spatial motions (columns)
            if m.ndim == 1:
                return np.concatenate((R.T @ m[:3], R.T @ (m[3:] + cross3(m[:3], x))))
            return np.concatenate((R.T @ m[:3], R.T @ (m[3:] - cross_vm(x, m[:3]))))

        JL = to_local(Jb)
        wL = -delta * to_local(Vb)
        tau = JL.T @ wL
        if not jacobians:
            return tau, None, None
        D = -JL.T @ (delta[:, None] * JL)
        n_w, f_w = R @ wL[:3], R @ wL[3:]
        W = wrench_at(x, f_w, n_w)
        K = geometric(st.topo, Jb, W) + Jb.T @ crf_vec(Jb, W)
        dVL = to_local(st.dV(body) - crm_vec(Jb, Vb))
        K -= JL.T @ (delta[:, None] * dVL)
        return tau, K, D
