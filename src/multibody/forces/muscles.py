"""Muscles and multi-point springs: scalar forces along a path or another
transmission (docs/biomechanics.md).

* :class:`HillMuscle` — Sueda §1.9.4–1.9.5: a rigid-tendon, zero-pennation
  Hill muscle, tension ``f = f_opt (a f_L(l̃) f_V(ṽ) + f_P(l̃))`` with
  ``l̃ = (l − l_T)/l_opt`` and ``ṽ = l̇/(l_opt v_max)`` (lengthening
  positive), Sueda's curves or MuJoCo's (:mod:`.muscle_curves`).
* :class:`MultiPointSpring` — ArtiSynth §0.14: an axial spring whose
  tension ``F(L − r, L̇)`` (the force laws of :mod:`.springs`) acts along
  the whole path.

Both act along a :class:`~.transmission.Transmission` (a :class:`~.paths.Path`
through via points, a joint, a fixed tendon). A tension ``F`` (positive
pulls the path's ends together) is the transmission force ``f = −F``:
``τ = −J F`` with the moment arm ``J = ∂l/∂q``, and
``K = −F_l JJᵀ − F_l̇ J(∂l̇/∂q)ᵀ − F H``, ``D = −F_l̇ JJᵀ``
(:func:`~.transmission.along`; H the path's geometric term). Sueda's
printed K and D for the same muscle need errata S2 (the K₂ block matrix
is −∂f/∂q: K = K₁ − K₂), S3 (D printed as +∂f/∂Φ where eq. 1.30 wants
−∂f/∂φ) and the typo of eq. 1.56 (``f_L'`` for ``f_L`` in ``∂f/∂l̇``):
here nothing is transcribed — K and D come from the exact partials of the
scalar tension and the exact path derivatives, and are checked against
finite differences.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from ..errors import InputError, ModelError
from ._kin import State
from .base import nonnegative
from .muscle_curves import SUEDA, as_curves, hill_tension, mujoco_muscle_parameters
from .muscle_curves import MUJOCO_DEFAULTS as _MJ
from .paths import Path
from .springs import PointToPointSpring
from .transmission import Transmission, TransmissionElement
from .._typing import Array, ArrayLike, Frame

if TYPE_CHECKING:
    from ..model.data import Data
    from ..model.model import Model
    from .muscle_curves import MuscleCurves


def _as_transmission(value):
    """A Path from a list of (frame, point); anything else is left to as_transmission."""
    if isinstance(value, (list, tuple)) and value and all(isinstance(p, (list, tuple)) for p in value):
        return Path(value)
    return value


def _positive(owner, value, what):
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise owner.error(f"{what} must be a number, got {value!r}") from None
    if not (np.isfinite(x) and x > 0):
        raise owner.error(f"{what} must be positive and finite, got {value!r}")
    return x


# ------------------------------------------------------------------ energy


def _passive_energy(curves, lt):
    """``∫_1^l̃ f_P(x) dx`` (f_P = 0 below 1) for the curve set."""
    if lt <= 1.0:
        return 0.0
    from . import muscle_curves as mc
    if curves.code == SUEDA:
        knots, C = mc.PASSIVE_KNOTS, mc.PASSIVE_COEFFS

        def F(i, x):  # antiderivative of cubic i
            a, b, c, d = C[i]
            return ((a / 4 * x + b / 3) * x + c / 2) * x * x + d * x
        e = 0.0
        for i in range(2):
            lo, hi = knots[i], knots[i + 1]
            if lt <= hi:
                return e + F(i, lt) - F(i, lo)
            e += F(i, hi) - F(i, lo)
        f, df = mc.sueda_passive_length(knots[2])
        s = lt - knots[2]
        return e + f * s + 0.5 * df * s * s
    lmax, fpmax = curves.lmax, curves.fpmax
    b = 0.5 * (1.0 + lmax)
    w = b - 1.0
    if lt <= b:
        x = (lt - 1.0) / w
        return fpmax * w * x ** 3 / 6.0
    s = lt - b
    return fpmax * (w / 6.0 + 0.5 * s + s * s / (2.0 * w))


# -------------------------------------------------------------- Hill muscle


class HillMuscle(TransmissionElement):
    """Rigid-tendon, zero-pennation Hill muscle (Sueda §1.9.4–1.9.5).

    ``path_or_points``: a :class:`~.paths.Path`, a list of ``(frame,
    point)`` (made into one), or any transmission (a joint name, a
    :class:`~.transmission.JointTransmission` with a gear, a
    :class:`~.transmission.FixedTendon`). ``max_force`` f_opt (N),
    ``optimal_length`` l_opt (m), ``tendon_slack_length`` l_T (m),
    ``max_velocity`` v_max (optimal lengths per second): with the
    musculotendon length l and rate l̇ of the transmission,
    ``l̃ = (l − l_T)/l_opt``, ``ṽ = l̇/(l_opt v_max)`` and the tension
    ``f = f_opt (a f_L(l̃) f_V(ṽ) + f_P(l̃))`` pulls the path together
    (``τ = −J f``). ``activation``: a number in [0, 1] or a callable
    ``a(t)``; settable (``muscle.activation = 0.3``, or
    :meth:`set_activation`) so that an actuator can drive it.
    ``curves``: "sueda" (default; Sueda's E7 cubics), "mujoco" (MuJoCo's
    default curves) or a :class:`~.muscle_curves.MuscleCurves`.

    :meth:`tension` gives ``f`` and its partials in l, l̇ and a;
    :meth:`state` the quantities worth recording. The potential energy is
    the passive part's ``f_opt l_opt ∫_1^l̃ f_P`` (τ is its negative
    gradient when a = 0: the element is ``conservative`` then).
    """

    def __init__(self, path_or_points: Path | Transmission | list[tuple[Frame, ArrayLike]], max_force: float,
                 optimal_length: float, tendon_slack_length: float, max_velocity: float,
                 activation: float | Callable[[float], float] = 1.0, curves: str | MuscleCurves = "sueda",
                 name: str | None = None) -> None:
        self.name = name
        self.max_force = _positive(self, max_force, "max_force")
        self.optimal_length = _positive(self, optimal_length, "optimal_length")
        self.tendon_slack_length = nonnegative(self, tendon_slack_length, "tendon_slack_length")
        self.max_velocity = _positive(self, max_velocity, "max_velocity")
        try:
            self.curves = as_curves(curves)
        except ModelError as e:
            raise self.error(str(e)) from None
        self.activation = activation
        super().__init__(_as_transmission(path_or_points), name)

    def _label(self):
        return f"HillMuscle({self.transmission!r})" if hasattr(self, "transmission") else "HillMuscle"

    @classmethod
    def from_mujoco(cls, transmission: Path | Transmission | list[tuple[Frame, ArrayLike]],
                    lengthrange: tuple[float, float],
                    range: tuple[float, float] = _MJ["range"],  # type: ignore[assignment]  # _MJ: a dict of mixed values
                    force: float = _MJ["force"], scale: float = _MJ["scale"],  # type: ignore[assignment]
                    lmin: float = _MJ["lmin"], lmax: float = _MJ["lmax"],  # type: ignore[assignment]
                    vmax: float = _MJ["vmax"], fpmax: float = _MJ["fpmax"],  # type: ignore[assignment]
                    fvmax: float = _MJ["fvmax"],  # type: ignore[assignment]
                    activation: float | Callable[[float], float] = 1.0,
                    acc0: float | None = None, name: str | None = None) -> HillMuscle:
        """The muscle of MuJoCo's ``<muscle>`` element on ``transmission``
        (its length is MuJoCo's ``actuator_length``: include the gear)
        with MuJoCo's curves: ``L0``, ``L_T`` and ``F0`` from
        :func:`~.muscle_curves.mujoco_muscle_parameters` (``lengthrange``
        must be given explicitly; ``force < 0`` needs ``acc0``, see
        :func:`mujoco_acc0`). MuJoCo's ``actuator_force`` is ``−tension``.
        ``L_T = lengthrange[0] − range[0]·L0`` may be negative here (MuJoCo's
        transmission lengths are offsets: a joint's is gear·q)."""
        from .muscle_curves import MuJoCoCurves
        label = name or "HillMuscle.from_mujoco"
        try:
            L0, LT, F0 = mujoco_muscle_parameters(lengthrange, range, force, scale, acc0)
            curves = MuJoCoCurves(lmin, lmax, fpmax, fvmax)
        except ModelError as e:
            raise ModelError(f"{label}: {e}") from None
        muscle = cls(transmission, F0, L0, 0.0, vmax, activation, curves, name)
        muscle.tendon_slack_length = LT   # may be < 0: MuJoCo's lengths are offsets (a joint's is gear·q)
        return muscle

    # ------------------------------------------------------- activation
    @property
    def activation(self) -> float | Callable[[float], float]:
        """The activation: a number in [0, 1] or a callable ``a(t)``."""
        return self._activation

    @activation.setter
    def activation(self, value: float | Callable[[float], float]) -> None:
        self._activation: float | Callable[[float], float]
        if callable(value):
            self._activation = value
            return
        try:
            a = float(value)
        except (TypeError, ValueError):
            raise self.error(f"activation must be a number in [0, 1] or a callable a(t), got {value!r}") from None
        if not 0.0 <= a <= 1.0:
            raise self.error(f"activation must be in [0, 1], got {value!r}")
        self._activation = a

    def set_activation(self, value: float | Callable[[float], float]) -> None:
        """Set the activation (a number in [0, 1] or a callable ``a(t)``)."""
        self.activation = value

    def activation_at(self, t: float) -> float:
        """The activation at time ``t`` (a callable's value is checked)."""
        a = self._activation
        if isinstance(a, float):
            return a
        try:
            x = float(a(t))
        except (TypeError, ValueError):
            raise self.error(f"the activation callable returned {a(t)!r}; expected a number in [0, 1]",
                             InputError) from None
        if not 0.0 <= x <= 1.0:
            raise self.error(f"the activation callable returned {x!r} at t = {t:g}; expected a number in [0, 1]",
                             InputError)
        return x

    @property
    def conservative(self) -> bool:  # type: ignore[override]
        return isinstance(self._activation, float) and self._activation == 0.0

    # ---------------------------------------------------------- tension
    def tension(self, length: float, rate: float, activation: float) -> tuple[float, float, float, float]:
        """``(f, ∂f/∂l, ∂f/∂l̇, ∂f/∂a)``: the tension at musculotendon length
        ``l``, rate ``l̇`` and activation ``a`` (not clipped) and its partials."""
        c = self.curves
        return hill_tension(c.code, c.prm, self.max_force, self.optimal_length, self.tendon_slack_length,
                            self.max_velocity, float(length), float(rate), float(activation))[:4]

    def force(self, length, rate, t):
        c = self.curves
        f, f_l, f_ld = hill_tension(c.code, c.prm, self.max_force, self.optimal_length, self.tendon_slack_length,
                                    self.max_velocity, length, rate, self.activation_at(t))[:3]
        return -f, -f_l, -f_ld

    def state(self, model: Model, q: ArrayLike, v: ArrayLike, t: float = 0.0,
              data: Data | None = None) -> dict[str, float]:
        """A dict of the muscle's state at ``(q, v, t)``: ``length`` l and
        ``velocity`` l̇ of the musculotendon, ``fiber_length`` l − l_T,
        ``normalized_length`` l̃, ``normalized_velocity`` ṽ,
        ``activation``, ``tension`` f and its ``active_tension``
        (f_opt a f_L f_V) and ``passive_tension`` (f_opt f_P) parts."""
        st = State(model, q, v, t, data)
        ts = self.transmission.state(st, self.bind(model), False)
        a = self.activation_at(st.t)
        c = self.curves
        f, _, _, f_a, lt, vt = hill_tension(c.code, c.prm, self.max_force, self.optimal_length,
                                            self.tendon_slack_length, self.max_velocity, ts.length, ts.rate, a)
        return dict(length=ts.length, velocity=ts.rate, fiber_length=ts.length - self.tendon_slack_length,
                    normalized_length=lt, normalized_velocity=vt, activation=a, tension=f,
                    active_tension=a * f_a, passive_tension=f - a * f_a)

    def potential_energy(self, model: Model, q: ArrayLike) -> float:
        st = State(model, q, None, need_v=False)
        length = self.transmission.state(st, self.bind(model), False).length
        lt = (length - self.tendon_slack_length) / self.optimal_length
        return self.max_force * self.optimal_length * _passive_energy(self.curves, lt)


def mujoco_acc0(model: Model, transmission: Transmission | Frame, q: ArrayLike | None = None) -> float:
    """MuJoCo's ``actuator_acc0``: ``‖M⁻¹ J‖`` with the transmission's
    moment arm J at ``q`` (default ``model.neutral()``, MuJoCo's qpos0),
    the joint-space acceleration of a unit actuator force. (MuJoCo's M
    also holds joint armature: give the same model.)"""
    from ..dynamics import crba
    owner = TransmissionElement(transmission, name="mujoco_acc0")
    q = model.neutral() if q is None else q
    st = State(model, q, None, need_v=False)
    J = owner.transmission.state(st, owner.bind(model), False).moment
    return float(np.linalg.norm(np.linalg.solve(crba(model, q), J)))


# --------------------------------------------------------- multi-point spring


class MultiPointSpring(TransmissionElement):
    """ArtiSynth's multi-point spring (§0.14): an axial spring through via
    points, tension ``F(L − r, L̇)`` of the whole length ``L`` (positive
    pulls the path together; every segment carries it, each via point
    acts as a frictionless pulley: ArtiSynth's point forces ``F v_i``).

    ``points``: a list of ``(frame, point)`` or a :class:`~.paths.Path`
    (or any transmission). ``force_law`` as for
    :class:`~.springs.PointToPointSpring`: None or "linear" (``k s + d ṡ``),
    "strain", "green", "cable", a :class:`~.springs.ForceLaw` or a callable
    ``law(s, sdot) -> (F, dF/ds, dF/dsdot)`` (optionally with
    ``energy(s)``). Conservative (τ = −∇V with ``V = law.energy(L − r)``)
    for the linear, Green and cable laws without damping. With two points
    it is the PointToPointSpring.
    """

    def __init__(self, points: Path | Transmission | list[tuple[Frame, ArrayLike]], stiffness: float = 0.0,
                 damping: float = 0.0, rest_length: float = 0.0, force_law: Any = None,
                 name: str | None = None) -> None:
        self.name = name
        # the law is built, validated and called by the axial spring's own code (errors named after this element)
        self._axial = PointToPointSpring(None, np.zeros(3), None, np.zeros(3), stiffness, damping,  # type: ignore[arg-type]
                                         rest_length, force_law, name=repr(self))
        self.law, self.rest_length = self._axial.law, self._axial.rest_length
        self.conservative = self._axial.conservative
        super().__init__(_as_transmission(points), name)

    def _label(self):
        return f"MultiPointSpring({self.transmission!r})" if hasattr(self, "transmission") else "MultiPointSpring"

    def tension(self, length: float, rate: float) -> tuple[float, float, float]:
        """``(F, ∂F/∂L, ∂F/∂L̇)`` at path length ``L`` and rate ``L̇``."""
        return self._axial._law(length - self.rest_length, rate)

    def force(self, length, rate, t):
        F, Fs, Fr = self.tension(length, rate)
        return -F, -Fs, -Fr

    def length(self, model: Model, q: ArrayLike) -> float:
        """The spring's length L at ``q``."""
        st = State(model, q, None, need_v=False)
        return self.transmission.state(st, self.bind(model), False).length

    def potential_energy(self, model: Model, q: ArrayLike) -> float:
        energy = getattr(self.law, "energy", None)
        if energy is None:
            return 0.0
        e = energy(self.length(model, q) - self.rest_length)
        return 0.0 if e is None else float(e)
