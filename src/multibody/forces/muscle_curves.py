"""Muscle curves: the normalized active force–length ``f_L(l̃)``, passive
force–length ``f_P(l̃)`` and force–velocity ``f_V(ṽ)`` relations of a Hill
muscle, with their derivatives, compiled (docs/biomechanics.md).

Two sets:

* ``"sueda"`` (:class:`SuedaCurves`) — Sueda §1.9.4 eqs 1.40–1.46, the
  piecewise cubics fitted to OpenSim's curves (notes E7; coefficients
  highest power first, as printed; the passive curve ends at (1.7, 1.0),
  not the (1.8, 1.0) of the text — erratum 3 of the notes):
  f_P on [1.0, 1.3], [1.3, 1.7]; f_L on [0.4, 0.7], [0.7, 1.2],
  [1.2, 1.81]; f_V on [−1, −0.05], [−0.05, 0.05], [0.05, 1]. Outside
  those domains (unspecified by the seed; the notes' choices):
  ``f_L = 0`` outside [0.4, 1.81]; ``f_P = 0`` below 1, and above 1.7 the
  tangent line of the last cubic at 1.7 (value 1, slope 20/7); ``f_V = 0``
  below −1 and 1.4 above 1. Every junction is C¹ up to the 15 printed
  digits of the coefficients (jumps ≤ 1e-13 in value and slope between
  cubics; at the domain ends the cubics reach 0 or 1.4 with zero slope to
  ~1e-15, and the f_P extension takes the cubic's own end value and
  slope); second derivatives jump at every knot except the two ends of
  f_V, where they are 0 on both sides.
* ``"mujoco"`` (:class:`MuJoCoCurves`) — MuJoCo's muscle
  (``mju_muscleGain`` / ``mju_muscleBias`` of engine_util_misc.c, the
  ``<muscle>`` element): with ``a = (lmin + 1)/2``, ``b = (1 + lmax)/2``,
  ``f_L`` is four half-quadratics (0 at lmin, 1 with zero slope at 1, 0 at
  lmax, 0 outside [lmin, lmax]); ``f_V = 0`` for ``V ≤ −1``, ``(V + 1)²``
  up to 0, ``fvmax − (y − V)²/y`` up to ``y = fvmax − 1``, then ``fvmax``;
  ``f_P = 0`` up to 1, ``fpmax·½x²`` with ``x = (L − 1)/(b − 1)`` up to b,
  then ``fpmax(½ + (L − b)/(b − 1))``. All C¹ (for ``lmin < 1 < lmax``,
  ``fvmax > 1``).

Both are used as ``f = f_opt (a f_L(l̃) f_V(ṽ) + f_P(l̃))`` (Sueda eq. 1.38;
MuJoCo's ``actuator_force = gain·act + bias = −F0 (FL FV act + FP)``) with
``l̃ = (l − l_T)/l_opt`` and ``ṽ = l̇/(l_opt v_max)``: MuJoCo's
``L = range[0] + (len − lengthrange[0])/L0`` is that with
``l_T = lengthrange[0] − range[0]·L0`` (:func:`mujoco_muscle_parameters`),
and ``V = vel/(L0 vmax)``. :func:`hill_tension` gives the tension and its
partial derivatives in l, l̇ and a; :func:`mujoco_activation_rate`
MuJoCo's first-order activation dynamics (``mju_muscleDynamics``) and its
partials, for the actuators built on these muscles.
"""
from typing import Any, Optional, Tuple, Union

import numpy as np
from numba import njit

from ..errors import ModelError
from .._typing import ArrayLike

# ------------------------------------------------------------------ E7 tables
# knots and per-interval cubic coefficients (a, b, c, d): a x³ + b x² + c x + d (Sueda eqs 1.42, 1.44, 1.46)
PASSIVE_KNOTS = np.array([1.0, 1.3, 1.7])
PASSIVE_COEFFS = np.array([
    [2.55305620081729, -7.02386028610914, 6.38855196976641, -1.91774788447456],
    [-2.76122280853939, 14.6587935048229, -23.0429533092186, 11.3749950550874]])
ACTIVE_KNOTS = np.array([0.4, 0.7, 1.2, 1.81])
ACTIVE_COEFFS = np.array([
    [-39.881247949014, 68.3443204612586, -35.5324573534802, 5.83029153632759],
    [-0.322674853252855, -1.71744046959073, 4.40290549894003, -1.36279017609645],
    [4.85118460831817, -20.9908796589089, 28.3080866793169, -11.2356843095252]])
VELOCITY_KNOTS = np.array([-1.0, -0.05, 0.05, 1.0])
VELOCITY_COEFFS = np.array([
    [0.915253473864379, 2.74576042159314, 2.74576042159314, 0.915253473864378],
    [-453.333333333333, -8.78048780487805, 5.0, 1.0],
    [0.266648649866, -0.799945949598001, 0.799945949598001, 1.133351350134]])

SUEDA, MUJOCO = 0, 1
#: MuJoCo's ``<muscle>`` defaults (doc/XMLreference.rst)
MUJOCO_DEFAULTS = dict(range=(0.75, 1.05), force=-1.0, scale=200.0, lmin=0.5, lmax=1.6, vmax=1.5, fpmax=1.3,
                       fvmax=1.2, timeconst=(0.01, 0.04), tausmooth=0.0)
_MINVAL = 1e-15   # MuJoCo's mjMINVAL: its guards against division by zero


@njit(cache=True, nogil=True)
def _cubic(C, i, x):
    """Value and derivative of the cubic of row i of C at x."""
    a, b, c, d = C[i, 0], C[i, 1], C[i, 2], C[i, 3]
    return ((a * x + b) * x + c) * x + d, (3.0 * a * x + 2.0 * b) * x + c


@njit(cache=True, nogil=True)
def sueda_active_length(x):
    """Sueda's f_L(l̃) and its derivative; 0 outside [0.4, 1.81]."""
    if x < ACTIVE_KNOTS[0] or x > ACTIVE_KNOTS[3]:
        return 0.0, 0.0
    i = 0 if x < ACTIVE_KNOTS[1] else (1 if x < ACTIVE_KNOTS[2] else 2)
    return _cubic(ACTIVE_COEFFS, i, x)


@njit(cache=True, nogil=True)
def sueda_passive_length(x):
    """Sueda's f_P(l̃) and its derivative; 0 below 1, the tangent at 1.7 above."""
    if x < PASSIVE_KNOTS[0]:
        return 0.0, 0.0
    if x < PASSIVE_KNOTS[1]:
        return _cubic(PASSIVE_COEFFS, 0, x)
    if x <= PASSIVE_KNOTS[2]:
        return _cubic(PASSIVE_COEFFS, 1, x)
    f, df = _cubic(PASSIVE_COEFFS, 1, PASSIVE_KNOTS[2])
    return f + df * (x - PASSIVE_KNOTS[2]), df


@njit(cache=True, nogil=True)
def sueda_velocity(x):
    """Sueda's f_V(ṽ) and its derivative; 0 below −1 and 1.4 above 1."""
    if x < VELOCITY_KNOTS[0]:
        return 0.0, 0.0
    if x > VELOCITY_KNOTS[3]:
        return 1.4, 0.0
    i = 0 if x < VELOCITY_KNOTS[1] else (1 if x < VELOCITY_KNOTS[2] else 2)
    return _cubic(VELOCITY_COEFFS, i, x)


@njit(cache=True, nogil=True)
def mujoco_active_length(L, lmin, lmax):
    """MuJoCo's ``mju_muscleGainLength`` and its derivative."""
    if not (lmin <= L <= lmax):
        return 0.0, 0.0
    a = 0.5 * (lmin + 1.0)
    b = 0.5 * (1.0 + lmax)
    if L <= a:
        w = max(_MINVAL, a - lmin)
        x = (L - lmin) / w
        return 0.5 * x * x, x / w
    if L <= 1.0:
        w = max(_MINVAL, 1.0 - a)
        x = (1.0 - L) / w
        return 1.0 - 0.5 * x * x, x / w
    if L <= b:
        w = max(_MINVAL, b - 1.0)
        x = (L - 1.0) / w
        return 1.0 - 0.5 * x * x, -x / w
    w = max(_MINVAL, lmax - b)
    x = (lmax - L) / w
    return 0.5 * x * x, -x / w


@njit(cache=True, nogil=True)
def mujoco_velocity(V, fvmax):
    """MuJoCo's force–velocity curve (in ``mju_muscleGain``) and its derivative."""
    y = fvmax - 1.0
    if V <= -1.0:
        return 0.0, 0.0
    if V <= 0.0:
        return (V + 1.0) * (V + 1.0), 2.0 * (V + 1.0)
    if V <= y:
        w = max(_MINVAL, y)
        return fvmax - (y - V) * (y - V) / w, 2.0 * (y - V) / w
    return fvmax, 0.0


@njit(cache=True, nogil=True)
def mujoco_passive_length(L, lmax, fpmax):
    """MuJoCo's passive curve (``mju_muscleBias`` / force) and its derivative."""
    b = 0.5 * (1.0 + lmax)
    if L <= 1.0:
        return 0.0, 0.0
    w = max(_MINVAL, b - 1.0)
    if L <= b:
        x = (L - 1.0) / w
        return fpmax * 0.5 * x * x, fpmax * x / w
    x = (L - b) / w
    return fpmax * (0.5 + x), fpmax / w


@njit(cache=True, nogil=True)
def curve_values(code, prm, lt, vt):
    """``(f_L, f_L', f_P, f_P', f_V, f_V')`` at the normalized length ``lt``
    and velocity ``vt`` for the curve set ``code`` (SUEDA, or MUJOCO with
    ``prm = (lmin, lmax, fpmax, fvmax)``)."""
    if code == SUEDA:
        fl, dfl = sueda_active_length(lt)
        fp, dfp = sueda_passive_length(lt)
        fv, dfv = sueda_velocity(vt)
    else:
        fl, dfl = mujoco_active_length(lt, prm[0], prm[1])
        fp, dfp = mujoco_passive_length(lt, prm[1], prm[2])
        fv, dfv = mujoco_velocity(vt, prm[3])
    return fl, dfl, fp, dfp, fv, dfv


@njit(cache=True, nogil=True)
def hill_tension(code, prm, max_force, optimal_length, slack_length, max_velocity, l, ldot, a):
    """Rigid-tendon Hill tension ``f = f_opt (a f_L(l̃) f_V(ṽ) + f_P(l̃))``
    with ``l̃ = (l − l_T)/l_opt``, ``ṽ = l̇/(l_opt v_max)``. Returns
    ``(f, ∂f/∂l, ∂f/∂l̇, ∂f/∂a, l̃, ṽ)``; ``∂f/∂l̇ = f_opt a f_L f_V'/(l_opt
    v_max)`` (f_L, not Sueda eq. 1.56's f_L')."""
    lt = (l - slack_length) / optimal_length
    vt = ldot / (optimal_length * max_velocity)
    fl, dfl, fp, dfp, fv, dfv = curve_values(code, prm, lt, vt)
    f = max_force * (a * fl * fv + fp)
    f_l = max_force * (a * dfl * fv + dfp) / optimal_length
    f_ld = max_force * a * fl * dfv / (optimal_length * max_velocity)
    return f, f_l, f_ld, max_force * fl * fv, lt, vt


@njit(cache=True, nogil=True)
def _curve_array(code, prm, which, x):
    out = np.empty((2, x.size))
    for i in range(x.size):
        fl, dfl, fp, dfp, fv, dfv = curve_values(code, prm, x[i], x[i])
        if which == 0:
            out[0, i], out[1, i] = fl, dfl
        elif which == 1:
            out[0, i], out[1, i] = fp, dfp
        else:
            out[0, i], out[1, i] = fv, dfv
    return out


# ------------------------------------------------------------ activation


@njit(cache=True, nogil=True)
def _sigmoid(x):
    """MuJoCo's ``mju_sigmoid`` (6x⁵ − 15x⁴ + 10x³ on [0, 1]) and its derivative."""
    if x <= 0.0:
        return 0.0, 0.0
    if x >= 1.0:
        return 1.0, 0.0
    return x * x * x * (3.0 * x * (2.0 * x - 5.0) + 10.0), 30.0 * x * x * (x - 1.0) * (x - 1.0)


@njit(cache=True, nogil=True)
def mujoco_activation_rate(ctrl, act, tau_act, tau_deact, tausmooth):
    """MuJoCo's muscle activation dynamics (``mju_muscleDynamics``, Millard
    et al. 2013): ``ȧ = (u − a)/τ`` with ``u = clip(ctrl, 0, 1)``,
    ``τ_act' = τ_act (0.5 + 1.5 â)``, ``τ_deact' = τ_deact/(0.5 + 1.5 â)``
    (``â = clip(a, 0, 1)``), ``τ = τ_act'`` if ``u > a`` else ``τ_deact'``,
    or blended by MuJoCo's quintic sigmoid of ``(u − a)/tausmooth + ½``
    when ``tausmooth > 0``. Returns ``(ȧ, ∂ȧ/∂ctrl, ∂ȧ/∂a)`` (one-sided at
    the clips and, without smoothing, at ``u = a``)."""
    u = min(max(ctrl, 0.0), 1.0)
    du = 1.0 if 0.0 < ctrl < 1.0 else 0.0
    ac = min(max(act, 0.0), 1.0)
    dac = 1.0 if 0.0 < act < 1.0 else 0.0
    s = 0.5 + 1.5 * ac
    ta, dta = tau_act * s, tau_act * 1.5 * dac
    td, dtd = tau_deact / s, -tau_deact * 1.5 * dac / (s * s)
    e = u - act
    if tausmooth < _MINVAL:
        if e > 0.0:
            tau, dtau_da, dtau_du = ta, dta, 0.0
        else:
            tau, dtau_da, dtau_du = td, dtd, 0.0
    else:
        sg, dsg = _sigmoid(e / tausmooth + 0.5)
        tau = td + (ta - td) * sg
        dtau_de = (ta - td) * dsg / tausmooth
        dtau_da = dtd + (dta - dtd) * sg - dtau_de
        dtau_du = dtau_de
    tau_c = max(_MINVAL, tau)
    rate = e / tau_c
    if tau < _MINVAL:
        return rate, du / tau_c, -1.0 / tau_c
    d_du = (1.0 - e * dtau_du / tau) / tau
    d_da = (-1.0 - e * dtau_da / tau) / tau
    return rate, d_du * du, d_da


# --------------------------------------------------------------- curve sets


class MuscleCurves:
    """A set of normalized muscle curves: ``code`` (SUEDA or MUJOCO) and
    ``prm`` (float64 parameters) for the compiled :func:`curve_values`.
    :meth:`active_length`, :meth:`passive_length` and :meth:`velocity`
    evaluate one curve at a number or an array and return ``(value,
    derivative)``."""
    code = SUEDA
    name = "base"

    def __init__(self) -> None:
        self.prm = np.zeros(4)

    def _eval(self, which, x):
        a = np.asarray(x, dtype=float)
        out = _curve_array(self.code, self.prm, which, np.ascontiguousarray(a.reshape(-1)))
        if a.ndim == 0:
            return float(out[0, 0]), float(out[1, 0])
        return out[0].reshape(a.shape), out[1].reshape(a.shape)

    def active_length(self, x: ArrayLike) -> Tuple[Any, Any]:
        """``(f_L(x), f_L'(x))`` (active force–length; x = l̃)."""
        return self._eval(0, x)

    def passive_length(self, x: ArrayLike) -> Tuple[Any, Any]:
        """``(f_P(x), f_P'(x))`` (passive force–length; x = l̃)."""
        return self._eval(1, x)

    def velocity(self, x: ArrayLike) -> Tuple[Any, Any]:
        """``(f_V(x), f_V'(x))`` (force–velocity; x = ṽ, lengthening positive)."""
        return self._eval(2, x)

    def values(self, lt: float, vt: float) -> Tuple[float, float, float, float, float, float]:
        """``(f_L, f_L', f_P, f_P', f_V, f_V')`` at one ``(l̃, ṽ)``."""
        return curve_values(self.code, self.prm, float(lt), float(vt))

    def __repr__(self):
        return f"{type(self).__name__}()"


class SuedaCurves(MuscleCurves):
    """Sueda's piecewise cubics (E7; module docstring)."""
    code = SUEDA
    name = "sueda"


class MuJoCoCurves(MuscleCurves):
    """MuJoCo's muscle curves with the ``<muscle>`` parameters ``lmin``,
    ``lmax`` (the FL curve's support, in L0), ``fpmax`` (passive force at
    lmax, in F0) and ``fvmax`` (force at saturating lengthening, in F0);
    MuJoCo's defaults."""
    code = MUJOCO
    name = "mujoco"

    def __init__(self, lmin: float = 0.5, lmax: float = 1.6, fpmax: float = 1.3, fvmax: float = 1.2) -> None:
        vals = []
        for what, x in (("lmin", lmin), ("lmax", lmax), ("fpmax", fpmax), ("fvmax", fvmax)):
            try:
                x = float(x)
            except (TypeError, ValueError):
                raise ModelError(f"MuJoCoCurves: {what} must be a number, got {x!r}") from None
            if not np.isfinite(x):
                raise ModelError(f"MuJoCoCurves: {what} must be finite, got {x!r}")
            vals.append(x)
        lmin, lmax, fpmax, fvmax = vals
        if not (0.0 <= lmin < 1.0 < lmax):
            raise ModelError(f"MuJoCoCurves: need 0 <= lmin < 1 < lmax, got lmin={lmin:g}, lmax={lmax:g}")
        if fpmax < 0.0:
            raise ModelError(f"MuJoCoCurves: fpmax must be non-negative, got {fpmax:g}")
        if fvmax <= 1.0:
            raise ModelError(f"MuJoCoCurves: fvmax must be > 1 (the force–velocity curve is not C¹ otherwise), "
                             f"got {fvmax:g}")
        self.lmin, self.lmax, self.fpmax, self.fvmax = vals
        self.prm = np.array(vals)

    def __repr__(self):
        return (f"MuJoCoCurves(lmin={self.lmin:g}, lmax={self.lmax:g}, fpmax={self.fpmax:g}, "
                f"fvmax={self.fvmax:g})")


def as_curves(spec: Union[str, MuscleCurves]) -> MuscleCurves:
    """A :class:`MuscleCurves` from ``"sueda"``, ``"mujoco"`` (MuJoCo's
    defaults) or an instance."""
    if isinstance(spec, MuscleCurves):
        return spec
    if isinstance(spec, str):
        key = spec.lower()
        if key == "sueda":
            return SuedaCurves()
        if key == "mujoco":
            return MuJoCoCurves()
    raise ModelError(f"curves must be 'sueda', 'mujoco' or a MuscleCurves instance, got {spec!r}")


def mujoco_muscle_parameters(lengthrange: Tuple[float, float], range: Tuple[float, float] = (0.75, 1.05),
                             force: float = -1.0, scale: float = 200.0,
                             acc0: Optional[float] = None) -> Tuple[float, float, float]:
    """MuJoCo's muscle constants from the ``<muscle>`` attributes: returns
    ``(optimal_length L0, tendon_slack_length L_T, max_force F0)`` with
    ``L0 = (lr₁ − lr₀)/(range₁ − range₀)``, ``L_T = lr₀ − range₀·L0`` and
    ``F0 = force`` if positive, else ``scale/acc0`` (``acc0``: MuJoCo's
    ``actuator_acc0``, see :func:`multibody.forces.muscles.mujoco_acc0`)."""
    try:
        lr0, lr1 = (float(x) for x in lengthrange)
        r0, r1 = (float(x) for x in range)
    except (TypeError, ValueError):
        raise ModelError(f"lengthrange and range must be two numbers each, got {lengthrange!r}, {range!r}") from None
    if not (np.isfinite([lr0, lr1, r0, r1]).all() and lr1 > lr0 and r1 > r0):
        raise ModelError(f"need lengthrange[0] < lengthrange[1] and range[0] < range[1], got {lengthrange!r}, "
                         f"{range!r}")
    L0 = (lr1 - lr0) / (r1 - r0)
    LT = lr0 - r0 * L0
    force = float(force)
    if force > 0:
        F0 = force
    else:
        if acc0 is None or not float(acc0) > 0:
            raise ModelError(f"force={force:g} asks for F0 = scale/acc0 (MuJoCo's automatic scaling): give acc0 > 0 "
                             f"(multibody.forces.muscles.mujoco_acc0) or a positive force")
        F0 = float(scale) / max(_MINVAL, float(acc0))
    return L0, LT, F0
