"""Transmissions: a scalar length ``l(q)`` along which a scalar force acts
(MuJoCo's actuator transmissions and tendons, ArtiSynth's multi-point
springs, Sueda's muscles, §1.9.4–1.9.5).

A transmission gives, at one state, the length ``l`` (m, or rad for a
joint), its rate ``l̇ = J v`` and the moment arm ``J = ∂l/∂q`` (nv,; q
perturbed in the tangent space like every force element, forces/base.py).
A force ``f`` (N or N·m) along the transmission, positive when it pushes
towards a *longer* transmission (MuJoCo's sign: a motor's positive force
turns its joint forward; a muscle's tension is a negative ``f``), gives the
generalized force ``τ = Jᵀ f``. With ``f = f(l, l̇, ...)`` its Jacobians are

* ``K = ∂τ/∂q = f_l JᵀJ + f_l̇ Jᵀ(∂l̇/∂q) + H(f)``, with the *geometric
  term* ``H(f) = ∂(Jᵀ f)/∂q`` at fixed ``f`` (zero for linear
  transmissions: joints and fixed tendons);
* ``D = ∂τ/∂v = f_l̇ JᵀJ`` (``∂l̇/∂v = J``).

:func:`along` assembles these once for every element that acts along a
transmission (actuators, muscles, multi-point springs, tendon springs).
"""
import numbers
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Optional, Sequence, Tuple, Union

import numpy as np
from numba import njit

from ..errors import ModelError
from .base import ForceElement, floats, resolve_joint
from .._typing import Frame

if TYPE_CHECKING:
    from ..model.model import Model


@dataclass
class TransmissionState:
    """A transmission at one state: ``length`` l, ``rate`` l̇, ``moment``
    J = ∂l/∂q (nv,); when Jacobians were requested, ``rate_gradient``
    ∂l̇/∂q at fixed v (nv,; None: zero) and ``geometric(f)`` ∂(Jᵀf)/∂q at
    fixed f (nv x nv; None for a linear transmission)."""
    length: float
    rate: float
    moment: np.ndarray
    rate_gradient: Optional[np.ndarray] = None
    geometric: object = None


def along(ts, f, f_l=0.0, f_ldot=0.0, jacobians=False):
    """``(τ, K, D)`` of the force ``f`` along the transmission state ``ts``
    with ``f_l = ∂f/∂l`` and ``f_ldot = ∂f/∂l̇`` (see the module
    docstring); ``K, D`` None without ``jacobians``."""
    J = ts.moment
    tau = J * f
    if not jacobians:
        return tau, None, None
    rg = ts.rate_gradient
    K, D = _along_jacobians(J, _NO_GRADIENT if rg is None else rg, float(f_l), float(f_ldot))
    if ts.geometric is not None and f != 0.0:
        K += ts.geometric(f)
    return tau, K, D


_NO_GRADIENT = np.zeros(0)


@njit(cache=True, nogil=True)
def _along_jacobians(J, rate_gradient, f_l, f_ldot):
    """``K = f_l JJᵀ + f_l̇ J (∂l̇/∂q)ᵀ`` (without the geometric term) and
    ``D = f_l̇ JJᵀ``; ``rate_gradient`` empty: zero. One compiled pass
    instead of four numpy temporaries (the cost of every element that acts
    along a transmission)."""
    n = J.shape[0]
    K = np.zeros((n, n))
    D = np.zeros((n, n))
    along_jacobians_into(J, rate_gradient, f_l, f_ldot, K, D)
    return K, D


@njit(cache=True, nogil=True)
def along_jacobians_into(J, rate_gradient, f_l, f_ldot, K, D):
    """``K += f_l JJᵀ + f_l̇ J (∂l̇/∂q)ᵀ``, ``D += f_l̇ JJᵀ`` (what
    :func:`_along_jacobians` returns, added in place: the fused step's
    actuators on paths add theirs to the step's K and D). Rows where J is
    zero are skipped (they are zero)."""
    n = J.shape[0]
    has_rg = rate_gradient.shape[0] == n
    for i in range(n):
        ji = J[i]
        if ji == 0.0:
            continue
        for j in range(n):
            d = ji * J[j]
            D[i, j] += f_ldot * d
            k = f_l * d
            if has_rg:
                k += f_ldot * ji * rate_gradient[j]
            K[i, j] += k


class Transmission:
    """Base class: :meth:`_bind` resolves names against a model (cached per
    model by the owning element), :meth:`state` evaluates at one
    :class:`~multibody.forces._kin.State`. ``linear``: ``l`` is a linear
    function of the joint coordinates (no geometric term)."""
    linear = False

    def _bind(self, owner, model):
        raise NotImplementedError

    def state(self, st, binding, jacobians=False):
        raise NotImplementedError


def _one_dof_joint(owner, model, joint):
    j = resolve_joint(owner, model, joint)
    if j.nv != 1 or j.nq != 1:
        raise owner.error(f"joint '{j.name}' is a {j.type} joint: a joint transmission needs a 1-DoF joint with one "
                          f"coordinate (revolute, continuous, prismatic, helical)")
    return j


def _gear(owner, value, what="gear"):
    g = floats(owner, value, what)
    if g.ndim != 0 or not np.isfinite(g):
        raise owner.error(f"{what} must be a finite number, got {value!r}")
    return float(g)


class JointTransmission(Transmission):
    """``l = gear · q_j`` of a 1-DoF joint (MuJoCo ``<motor joint=...
    gear=...>``): ``J = gear · e_j``; linear."""
    linear = True

    def __init__(self, joint: Frame, gear: float = 1.0) -> None:
        self.joint, self.gear = joint, gear

    def __repr__(self):
        return f"joint '{self.joint}'" if self.gear == 1.0 else f"joint '{self.joint}' (gear {self.gear:g})"

    def _bind(self, owner, model):
        j = _one_dof_joint(owner, model, self.joint)
        return j.q_slice.start, j.v_slice.start, _gear(owner, self.gear)

    def state(self, st, binding, jacobians=False):
        iq, iv, gear = binding
        J = np.zeros(st.model.nv)
        J[iv] = gear
        rate = gear * st.v[iv] if st.v is not None else 0.0
        return TransmissionState(gear * st.q[iq], rate, J)


class FixedTendon(Transmission):
    """MuJoCo's fixed tendon: ``l = Σ c_k q_{j_k}`` over 1-DoF joints
    (``coefficients``: a list of ``(joint, c)``); linear."""
    linear = True

    def __init__(self, coefficients: Sequence[Tuple[Frame, float]]) -> None:
        self.coefficients = list(coefficients)

    def __repr__(self):
        return "fixed tendon (" + " + ".join(f"{c:g}·{j}" for j, c in self.coefficients) + ")"

    def _bind(self, owner, model):
        if not self.coefficients:
            raise owner.error("a fixed tendon needs at least one (joint, coefficient)")
        iq, iv, c = [], [], []
        for k, item in enumerate(self.coefficients):
            if not (isinstance(item, (tuple, list)) and len(item) == 2):
                raise owner.error(f"fixed tendon entry {k} must be (joint, coefficient), got {item!r}")
            j = _one_dof_joint(owner, model, item[0])
            iq.append(j.q_slice.start)
            iv.append(j.v_slice.start)
            c.append(_gear(owner, item[1], f"coefficient of joint '{j.name}'"))
        J = np.zeros(model.nv)
        np.add.at(J, iv, c)
        return np.array(iq), np.array(c), J

    def state(self, st, binding, jacobians=False):
        iq, c, J = binding
        rate = float(J @ st.v) if st.v is not None else 0.0
        return TransmissionState(float(c @ st.q[iq]), rate, J.copy())


def as_transmission(owner: Any, value: Union[Transmission, Frame]) -> Transmission:
    """A :class:`Transmission` from itself or from a joint name / index
    (a :class:`JointTransmission` with gear 1)."""
    if isinstance(value, Transmission):
        return value
    if isinstance(value, (str, numbers.Integral)):
        return JointTransmission(value)
    raise owner.error(f"a transmission must be a Transmission (JointTransmission, FixedTendon, Path) or a joint "
                      f"name, got {value!r}", ModelError)


class TransmissionElement(ForceElement):
    """A force element acting along one transmission; subclasses implement
    :meth:`force` ``(l, l̇, t) -> (f, ∂f/∂l, ∂f/∂l̇)``."""

    def __init__(self, transmission: Union[Transmission, Frame], name: Optional[str] = None) -> None:
        super().__init__(name)
        self.transmission = as_transmission(self, transmission)

    def _bind(self, model):
        return self.transmission._bind(self, model)

    def force(self, length: float, rate: float, t: float) -> Tuple[float, float, float]:
        raise NotImplementedError

    def _evaluate(self, st, b, jacobians):
        ts = self.transmission.state(st, b, jacobians)
        f, f_l, f_ld = self.force(ts.length, ts.rate, st.t)
        return along(ts, f, f_l, f_ld, jacobians)
