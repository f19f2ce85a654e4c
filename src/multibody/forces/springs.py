"""Two-body force elements: the point-to-point (axial) spring-damper with
linear and nonlinear force laws (ArtiSynth §0.12–0.13, Sueda §1.9.3 and
§1.9.6) and the 6-DoF frame spring (ArtiSynth §0.22, Drake's bushing).

Either attachment may be the world (frame "world" or None).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from ..errors import InputError, ModelError
from ..model.checks import real_number
from ..spatial import so3
from ._kin import cross3, cross_vm, geometric, hat, point_jacobian, wrench_at
from .base import ForceElement, nonnegative, resolve_frame, vector3
from .._typing import Array, ArrayLike, Frame

if TYPE_CHECKING:
    from ..model.model import Model

# ---------------------------------------------------------------- force laws


class ForceLaw:
    """Tension ``F(s, ṡ)`` of an axial spring as a function of the stretch
    ``s = l - rest_length`` and its rate ``ṡ = l̇``. Positive ``F`` is
    tension (pulls the two points together). ``__call__`` returns
    ``(F, ∂F/∂s, ∂F/∂ṡ)``; :meth:`energy` the potential of the elastic part
    (``∫F(s, 0) ds`` from 0), or None if unknown.

    Any callable ``law(s, sdot) -> (F, dF_ds, dF_dsdot)`` can be used in
    place of a ForceLaw; give it an ``energy(s)`` attribute to make the
    spring's :meth:`~ForceElement.potential_energy` non-zero.
    """

    def __call__(self, s: float, sdot: float) -> tuple[float, float, float]:
        raise NotImplementedError

    def energy(self, s: float) -> float | None:
        return None


def _law_number(value, what):
    """A force law's parameter as a finite float (ModelError otherwise)."""
    try:
        return real_number(value, what)
    except InputError as e:
        raise ModelError(f"force law: {e}") from None


class LinearLaw(ForceLaw):
    """``F = k s + d ṡ`` (ArtiSynth §0.12, ``F = k(l - r) + d l̇``)."""

    def __init__(self, stiffness: float, damping: float = 0.0) -> None:
        self.k, self.d = _law_number(stiffness, "stiffness"), _law_number(damping, "damping")

    def __call__(self, s: float, sdot: float) -> tuple[float, float, float]:
        return self.k * s + self.d * sdot, self.k, self.d

    def energy(self, s: float) -> float | None:
        return 0.5 * self.k * s * s


class StrainLaw(LinearLaw):
    """Sueda §1.9.6 (eq. 1.65 with errata S5): ``F = (k s + d ṡ)/L`` — ``k``
    is a stiffness per unit *strain* (force units), ``L`` the rest length."""

    def __init__(self, stiffness: float, damping: float, rest_length: float) -> None:
        r = _law_number(rest_length, "rest_length")
        if r <= 0:
            raise ModelError("StrainLaw: the strain law needs a positive rest length")
        super().__init__(_law_number(stiffness, "stiffness") / r, _law_number(damping, "damping") / r)


class GreenStrainLaw(ForceLaw):
    """ArtiSynth §0.13 quadratic (Green) strain: ``ε = ½(l² - r²)/r²``,
    stress ``σ = k ε``, tension ``F = σ l = k l (l² - r²)/(2 r²)`` (so
    ``f1 = σ Δx``), plus ``d ṡ``. Energy ``k (l² - r²)²/(8 r²)``."""

    def __init__(self, stiffness: float, damping: float, rest_length: float) -> None:
        self.r = _law_number(rest_length, "rest_length")
        if self.r <= 0:
            raise ModelError("GreenStrainLaw: the Green-strain law needs a positive rest length")
        self.k, self.d = _law_number(stiffness, "stiffness"), _law_number(damping, "damping")

    def __call__(self, s: float, sdot: float) -> tuple[float, float, float]:
        l, r2 = s + self.r, self.r * self.r
        F = self.k * l * (l * l - r2) / (2.0 * r2) + self.d * sdot
        return F, self.k * (3.0 * l * l - r2) / (2.0 * r2), self.d

    def energy(self, s: float) -> float | None:
        l, r2 = s + self.r, self.r * self.r
        return self.k * (l * l - r2) ** 2 / (8.0 * r2)


class CableLaw(ForceLaw):
    """Tension-only (a cable or muscle tendon): ``F = k s + d ṡ`` when
    ``s > 0``, else 0 (slack). Not differentiable at ``s = 0``."""

    def __init__(self, stiffness: float, damping: float = 0.0) -> None:
        self.k, self.d = _law_number(stiffness, "stiffness"), _law_number(damping, "damping")

    def __call__(self, s: float, sdot: float) -> tuple[float, float, float]:
        if s > 0:
            return self.k * s + self.d * sdot, self.k, self.d
        return 0.0, 0.0, 0.0

    def energy(self, s: float) -> float | None:
        return 0.5 * self.k * s * s if s > 0 else 0.0


FORCE_LAWS = {"linear": LinearLaw, "strain": StrainLaw, "green": GreenStrainLaw, "cable": CableLaw}


# ---------------------------------------------------------- point to point


class PointToPointSpring(ForceElement):
    """Axial spring-damper between ``point_a`` of ``frame_a`` and
    ``point_b`` of ``frame_b`` (points in frame coordinates; either frame
    may be the world).

    With ``Δ = x_b - x_a``, ``l = |Δ|``, ``u = Δ/l``, ``s = l - rest_length``,
    ``ṡ = uᵀ(ẋ_b - ẋ_a)`` and the tension ``F(s, ṡ)``: the force on a is
    ``+F u`` (towards b), on b ``-F u`` (ArtiSynth §0.12: ``f1 = F u``);
    ``τ = -(P_b - P_a)ᵀ F u`` with the points' world Jacobians ``P``.

    ``force_law``: None or "linear" (``F = k s + d ṡ``), "strain" (Sueda
    §1.9.6: ``(k s + d ṡ)/L``), "green" (ArtiSynth §0.13), "cable"
    (tension only), a :class:`ForceLaw`, or any callable
    ``law(s, sdot) -> (F, dF/ds, dF/dsdot)`` (then ``stiffness`` and
    ``damping`` are ignored).

    ``K`` is exact. With ``P = P_b - P_a`` (3 x nv) it is
    ``-Pᵀ[F_s u (uᵀP) + F_ṡ u ∂ṡ/∂q + (F/l)(I - uuᵀ)P]`` — ArtiSynth's
    ``K11 = -F_l U_n - (F_l̇/l) u Δẋᵀ U_p - (F/l) U_p`` mapped to joint
    space, plus the q-dependence of the point velocities inside ``∂ṡ/∂q`` —
    and the geometric terms of the two point Jacobians at fixed force.
    Non-symmetric when ``F_ṡ ≠ 0`` and v ≠ 0 (the ``u Δẋᵀ`` term);
    ``D = -F_ṡ Pᵀ u uᵀ P`` (symmetric, ≤ 0 for ``F_ṡ ≥ 0``).
    Singular at ``l = 0`` (direction undefined): there τ, K, D are 0.
    """

    def __init__(self, frame_a: Frame, point_a: ArrayLike, frame_b: Frame, point_b: ArrayLike,
                 stiffness: float = 0.0, damping: float = 0.0, rest_length: float = 0.0,
                 force_law: str | ForceLaw | Callable[[float, float], Any] | None = None,
                 name: str | None = None) -> None:
        super().__init__(name)
        self.frame_a, self.frame_b = frame_a, frame_b
        self.point_a = vector3(self, point_a, "point_a")
        self.point_b = vector3(self, point_b, "point_b")
        self.rest_length = nonnegative(self, rest_length, "rest_length")
        if force_law is None or isinstance(force_law, str):
            kind = "linear" if force_law is None else force_law.lower()
            if kind not in FORCE_LAWS:
                raise self.error(f"unknown force law {force_law!r} (built-in: {', '.join(FORCE_LAWS)})")
            k = nonnegative(self, stiffness, "stiffness")
            d = nonnegative(self, damping, "damping")
            try:
                self.law = (FORCE_LAWS[kind](k, d) if kind in ("linear", "cable")
                            else FORCE_LAWS[kind](k, d, self.rest_length))
            except ValueError as exc:
                raise self.error(str(exc)) from None
        elif callable(force_law):
            self.law = force_law
        else:
            raise self.error(f"force_law must be None, a name or a callable, got {force_law!r}")
        self.conservative = False
        if isinstance(self.law, (LinearLaw, GreenStrainLaw, CableLaw)) and self.law.d == 0.0:
            self.conservative = True

    def _label(self):
        return f"PointToPointSpring({self.frame_a!r}, {self.frame_b!r})"

    def _bind(self, model):
        ba, pa = resolve_frame(self, model, self.frame_a)
        bb, pb = resolve_frame(self, model, self.frame_b)
        pa[:3, 3] += pa[:3, :3] @ self.point_a
        pb[:3, 3] += pb[:3, :3] @ self.point_b
        return ba, pa, bb, pb

    def _law(self, s, sdot):
        out = self.law(s, sdot)
        try:
            F, Fs, Fr = (float(x) for x in out)
        except (TypeError, ValueError):
            raise self.error(f"force law returned {out!r}; expected (F, dF/ds, dF/dsdot)", InputError) from None
        return F, Fs, Fr

    def geometry(self, model: Model, q: ArrayLike, v: ArrayLike | None = None) -> tuple[Array, Array, float, float]:
        """``(x_a, x_b, l, ṡ)``: world points, length and its rate (v given)."""
        from ._kin import State
        st = State(model, q, np.zeros(model.nv) if v is None else v)
        ba, pa, bb, pb = self.bind(model)
        xa, xb = st.pose(ba, pa)[:3, 3], st.pose(bb, pb)[:3, 3]
        d = xb - xa
        l = float(np.linalg.norm(d))
        Pd = point_jacobian(st.Jb(bb), xb) - point_jacobian(st.Jb(ba), xa)
        sdot = float(d @ (Pd @ st.v)) / l if l > 0 else 0.0
        return xa, xb, l, sdot

    def _evaluate(self, st, b, jacobians):
        ba, pa, bb, pb = b
        nv = st.model.nv
        xa, xb = st.pose(ba, pa)[:3, 3], st.pose(bb, pb)[:3, 3]
        d = xb - xa
        l = float(np.linalg.norm(d))
        if l < 1e-300:
            return np.zeros(nv), None, None
        u = d / l
        Ja, Jb = st.Jb(ba), st.Jb(bb)
        Pa, Pb = point_jacobian(Ja, xa), point_jacobian(Jb, xb)
        Pd = Pb - Pa
        rate = Pd @ st.v                         # ẋ_b - ẋ_a
        sdot = float(u @ rate)
        F, Fs, Fr = self._law(l - self.rest_length, sdot)
        fa = F * u
        PdTu = Pd.T @ u
        tau = -F * PdTu
        if not jacobians:
            return tau, None, None
        D = -Fr * np.outer(PdTu, PdTu)
        Up = (np.eye(3) - np.outer(u, u)) / l
        du = Up @ Pd                              # ∂u/∂δ
        dl = PdTu                                 # ∂l/∂δ (as a row)
        drate = (st.point_velocity_derivative(bb, xb, Pb) - st.point_velocity_derivative(ba, xa, Pa))
        dsdot = rate @ du + u @ drate
        dfa = np.outer(u, Fs * dl + Fr * dsdot) + F * du
        K = -Pd.T @ dfa
        # geometric terms of the two point Jacobians (f fixed)
        topo = st.topo
        K += geometric(topo, Ja, wrench_at(xa, fa)) - Ja[:3].T @ (hat(fa) @ Pa)
        K += geometric(topo, Jb, wrench_at(xb, -fa)) + Jb[:3].T @ (hat(fa) @ Pb)
        return tau, K, D

    def potential_energy(self, model: Model, q: ArrayLike) -> float:
        energy = getattr(self.law, "energy", None)
        if energy is None:
            return 0.0
        _, _, l, _ = self.geometry(model, q)
        e = energy(l - self.rest_length)
        return 0.0 if e is None else float(e)


# -------------------------------------------------------------- frame spring


class FrameSpring(ForceElement):
    """6-DoF spring-damper between ``frame_a`` (frame 1, on body A) and
    ``frame_b`` (frame 2, on body B); ArtiSynth §0.22 / Drake's linear bushing.

    ``rest_pose`` (4x4 or (R, p); default identity) is the pose of frame 2
    in frame 1 at rest: frame 1 is ``frame_a · rest_pose``. With world
    poses ``(R1, x1)``, ``(R2, x2)``, ``Δx = x2 - x1``, the rotation vector
    ``φu = log(R1ᵀ R2)`` (frame-1 coordinates, ``|φ| <= π``) and the
    relative twist ``V_B - V_A = [ω_r; ·]``:

    * force on A ``f = k_t Δx + d_t ν``, with ``ν = ẋ2 - ẋ1 - ω_A × Δx``
      the velocity of frame 2's origin seen from frame 1 (world axes);
    * moment on A ``n = k_r R1 φu + d_r ω_r``;
    * A receives ``f`` at ``x2`` plus ``n``; B receives the exact opposite
      wrench. So the pair is balanced (no net force or moment: momentum is
      conserved) and the damping vanishes for any common rigid motion.

    Potential ``½ k_t |Δx|² + ½ k_r φ²``; power ``-(d_t|ν|² + d_r|ω_r|²) <= 0``.

    Differences from ArtiSynth's eqs 0.37–0.40: there ``f`` acts at ``x1`` on
    A and at ``x2`` on B and the damping uses ``ẋ2 - ẋ1``; the elastic parts
    agree (``k_t Δx`` is parallel to ``Δx``), but ArtiSynth's damping pair
    has the net moment ``Δx × d_t(ẋ2 - ẋ1)`` and damps common rotations.
    The rotational stiffness uses ``d(φu)/dt = U ω_rel`` with
    ``U = J_l⁻¹(φu)`` (ArtiSynth eq 0.45; the k_r signs of eq 0.52 are
    flipped in the seed, notes §4 item 12 — the signs here are checked by
    finite differences). Stiffness/damping are scalars (isotropic).
    The log map jumps at φ = π.
    """

    def __init__(self, frame_a: Frame, frame_b: Frame, translational_stiffness: float = 0.0,
                 rotational_stiffness: float = 0.0, translational_damping: float = 0.0,
                 rotational_damping: float = 0.0, rest_pose: ArrayLike | None = None, name: str | None = None) -> None:
        super().__init__(name)
        self.frame_a, self.frame_b = frame_a, frame_b
        self.kt = nonnegative(self, translational_stiffness, "translational_stiffness")
        self.kr = nonnegative(self, rotational_stiffness, "rotational_stiffness")
        self.dt = nonnegative(self, translational_damping, "translational_damping")
        self.dr = nonnegative(self, rotational_damping, "rotational_damping")
        from ..model.builder import as_pose
        from ..errors import ModelError
        try:
            self.rest_pose = as_pose(rest_pose, "rest_pose")
        except ModelError as exc:
            raise self.error(str(exc)) from None
        self.conservative = self.dt == 0.0 and self.dr == 0.0

    def _label(self):
        return f"FrameSpring({self.frame_a!r}, {self.frame_b!r})"

    def _bind(self, model):
        ba, pa = resolve_frame(self, model, self.frame_a)
        bb, pb = resolve_frame(self, model, self.frame_b)
        return ba, pa @ self.rest_pose, bb, pb

    def _geometry(self, st, b):
        ba, pa, bb, pb = b
        F1, F2 = st.pose(ba, pa), st.pose(bb, pb)
        R1, x1, R2, x2 = F1[:3, :3], F1[:3, 3], F2[:3, :3], F2[:3, 3]
        theta = np.asarray(so3.log(np.ascontiguousarray(R1.T @ R2)))
        return R1, x1, R2, x2, theta

    def _evaluate(self, st, b, jacobians):
        ba, _, bb, _ = b
        R1, x1, R2, x2, theta = self._geometry(st, b)
        JA, JB = st.Jb(ba), st.Jb(bb)
        Jr = JB - JA
        Vr = Jr @ st.v
        wr = Vr[:3]
        dx = x2 - x1
        th_w = R1 @ theta
        nu = Vr[3:] + cross3(wr, x2)
        f = self.kt * dx + self.dt * nu
        n = self.kr * th_w + self.dr * wr
        WA = wrench_at(x2, f, n)
        tau = -Jr.T @ WA
        if not jacobians:
            return tau, None, None
        P2r = point_jacobian(Jr, x2)              # ∂ν/∂v
        df_dv = self.dt * P2r
        dW_dv = np.concatenate((cross_vm(x2, df_dv) + self.dr * Jr[:3], df_dv))
        D = -Jr.T @ dW_dv
        # position derivatives
        PA1 = point_jacobian(JA, x1)
        PB2 = point_jacobian(JB, x2)
        ddx = PB2 - PA1
        dVr = st.dV(bb) - st.dV(ba)
        dnu = point_jacobian(dVr, x2) + cross_vm(wr, PB2)
        Uw = R1 @ np.asarray(so3.left_jacobian_inv(theta)) @ R1.T
        dth_w = Uw @ Jr[:3] - cross_vm(th_w, JA[:3])
        df = self.kt * ddx + self.dt * dnu
        dn = self.kr * dth_w + self.dr * dVr[:3]
        dWA = np.concatenate((cross_vm(x2, df) - cross_vm(f, PB2) + dn, df))
        topo = st.topo
        K = geometric(topo, JA, WA) - geometric(topo, JB, WA) - Jr.T @ dWA
        return tau, K, D

    def deflection(self, model: Model, q: ArrayLike) -> tuple[Array, Array]:
        """``(Δx, φu)``: the world offset ``x2 - x1`` of the two frame origins
        and the rotation vector ``log(R1ᵀ R2)`` (frame-1 coordinates), both
        zero at the rest pose."""
        from ._kin import State
        st = State(model, q, None, need_v=False)
        _, x1, _, x2, theta = self._geometry(st, self.bind(model))
        return x2 - x1, theta

    def potential_energy(self, model: Model, q: ArrayLike) -> float:
        d, theta = self.deflection(model, q)
        return float(0.5 * self.kt * d @ d + 0.5 * self.kr * theta @ theta)
