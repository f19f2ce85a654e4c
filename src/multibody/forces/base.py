"""The force-element interface and the sum of several elements.

Conventions (DESIGN.md, docs/forces.md): a force element gives the
generalized force ``τ(q, v, t)`` (nv, same units and sign as the ``τ`` of
:func:`multibody.rnea`: it is *applied* to the system, so the equation of
motion is ``M q̈ + C = τ_actuation + Σ τ_elements``), and on request its
Jacobians ``K = ∂τ/∂q`` and ``D = ∂τ/∂v`` (nv x nv). ``q`` is perturbed in
the tangent space: ``K δ = τ(q ⊕ δ) - τ(q) + O(δ²)`` with
``q ⊕ δ = model.integrate(q, δ)``. So a spring has negative (semi)definite
``K``, a damper negative semidefinite ``D``, and an implicit integrator
solves with ``M - h D - h² K``.
"""
from __future__ import annotations

import numbers
import weakref
from typing import TYPE_CHECKING, Any, Iterable

import numpy as np

from ..errors import InputError, ModelError, MultibodyError
from ..model.checks import as_float_array
from ._kin import State
from .._typing import Array, ArrayLike

if TYPE_CHECKING:
    from ..model.data import Data
    from ..model.model import Model


class ForceElement:
    """Base class of the force elements.

    Subclasses implement :meth:`_bind` (resolve names against a model; the
    result is cached per model) and :meth:`_evaluate`. ``conservative`` is
    True when ``τ = -∂V/∂q`` holds exactly for :meth:`potential_energy`;
    non-conservative elements report a zero potential.
    """

    conservative = False
    #: the element's stiffness uses the geometric rule of forces/_kin.py (elements acting on bodies);
    #: joint elements, which act on coordinates, do not
    geometric_stiffness = True
    def __init__(self, name: str | None = None) -> None:
        self.name = name
        self._bindings: weakref.WeakKeyDictionary[Model, Any] = weakref.WeakKeyDictionary()

    def __getstate__(self):
        """Pickle without the per-model bindings (weak references)."""
        state = dict(self.__dict__)
        del state["_bindings"]
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._bindings = weakref.WeakKeyDictionary()

    # ------------------------------------------------------------ naming
    def _label(self):
        return type(self).__name__

    def __repr__(self):
        return self.name if self.name else self._label()

    def error(self, msg: str, cls: type[Exception] = ModelError) -> Exception:
        return cls(f"{self!r}: {msg}")

    # ------------------------------------------------------------ binding
    def bind(self, model: Model) -> Any:
        """Resolve the element's names against ``model`` (cached)."""
        b = self._bindings.get(model)
        if b is None:
            b = self._bindings[model] = self._bind(model)
        return b

    def _bind(self, model):
        return None

    # --------------------------------------------------------- evaluation
    def evaluate(self, model: Model, q: ArrayLike, v: ArrayLike, t: float = 0.0, data: Data | None = None,
                 jacobians: bool = False) -> tuple[Array, Array | None, Array | None]:
        """``(τ, K, D)`` at state ``(q, v)`` and time ``t``: ``τ`` (nv,); if
        ``jacobians``, ``K = ∂τ/∂q`` (tangent space) and ``D = ∂τ/∂v``
        (nv x nv), else ``None``. ``data``: an optional
        :class:`multibody.Data` workspace for the kinematics."""
        st = State(model, q, v, t, data)
        if jacobians and self.geometric_stiffness:
            st.topo.check_stiffness(self)
        tau, K, D = self._evaluate(st, self.bind(model), bool(jacobians))
        if not jacobians:
            return tau, None, None
        nv = model.nv
        return tau, (np.zeros((nv, nv)) if K is None else K), (np.zeros((nv, nv)) if D is None else D)

    def _evaluate(self, st, b, jacobians):
        """Return ``(τ, K or None, D or None)``; ``None`` means zero."""
        raise NotImplementedError

    def potential_energy(self, model: Model, q: ArrayLike) -> float:
        """Potential energy (J) whose negative tangent gradient is ``τ`` for
        conservative elements; 0 for non-conservative ones."""
        return 0.0

    def power(self, model: Model, q: ArrayLike, v: ArrayLike, t: float = 0.0, data: Data | None = None) -> float:
        """Power ``τ·v`` (W) the element delivers to the system."""
        tau = self.evaluate(model, q, v, t, data)[0]
        return float(tau @ np.asarray(v, dtype=float))


def generalized_forces(elements: Iterable[ForceElement], model: Model, q: ArrayLike, v: ArrayLike, t: float = 0.0,
                       data: Data | None = None, jacobians: bool = False) -> tuple[Array, Array | None, Array | None]:
    """Sum of the elements' ``(τ, K, D)`` at one state (see
    :meth:`ForceElement.evaluate`); the kinematics (one world Jacobian and
    the body poses) are computed once and shared by all elements."""
    elements = list(elements)
    for e in elements:
        if not isinstance(e, ForceElement):
            raise InputError(f"generalized_forces: {e!r} is not a ForceElement")
    st = State(model, q, v, t, data)
    nv = model.nv
    tau = np.zeros(nv)
    K = np.zeros((nv, nv)) if jacobians else None
    D = np.zeros((nv, nv)) if jacobians else None
    for e in elements:
        if jacobians and e.geometric_stiffness:
            st.topo.check_stiffness(e)
        te, Ke, De = e._evaluate(st, e.bind(model), bool(jacobians))
        if np.shape(te) != (nv,):  # `tau += te` would broadcast a (1,) or scalar silently
            raise e.error(f"returned a generalized force of shape {np.shape(te)}, expected ({nv},)", InputError)
        tau += te
        if jacobians:
            if Ke is not None:
                K += Ke
            if De is not None:
                D += De
    return tau, K, D


def validate_elements(elements: ForceElement | Iterable[ForceElement] | None, model: Model
                      ) -> tuple[ForceElement, ...]:
    """``elements`` as a tuple of force elements, each resolved against
    ``model`` (:meth:`ForceElement.bind`: its joints, frames and bodies
    exist and its parameters fit them). Called by the simulator when it is
    built, so that a misnamed joint is reported then and not at the first
    step. A single element is accepted as a list of one. Raises
    :class:`InputError` for something that is not a force element and the
    element's own :class:`ModelError` (naming the element, its position in
    the list and the missing joint or frame) otherwise."""
    if isinstance(elements, ForceElement):
        elements = (elements,)
    if elements is None:
        return ()
    if isinstance(elements, (str, bytes, dict)) or not hasattr(elements, "__iter__"):
        raise InputError(f"forces must be a list of force elements (multibody.forces), got {elements!r}")
    elements = tuple(elements)
    for k, e in enumerate(elements):
        if not isinstance(e, ForceElement):
            raise InputError(f"forces[{k}] = {e!r} is not a ForceElement (multibody.forces)")
        try:
            e.bind(model)
        except MultibodyError as err:
            try:
                wrapped = type(err)(f"forces[{k}]: {err}")
            except TypeError:  # a subclass with another constructor
                wrapped = ModelError(f"forces[{k}]: {err}")
            raise wrapped from err
    return elements


def total_potential_energy(elements: Iterable[ForceElement], model: Model, q: ArrayLike) -> float:
    """Σ of the elements' potential energies."""
    return float(sum(e.potential_energy(model, q) for e in elements))


# ---------------------------------------------------------- validation


def nonnegative(owner, value, what, size=None):
    """``value`` as a float (size None) or a float array of ``size`` entries
    (a scalar is broadcast), finite and >= 0; errors name ``owner``."""
    if callable(value):
        raise owner.error(f"{what} must be a number, got a callable")
    a = floats(owner, value, what)
    if size is None:
        if a.ndim != 0:
            raise owner.error(f"{what} must be a scalar, got shape {a.shape}")
    else:
        if a.ndim == 0:
            a = np.full(size, float(a))
        elif a.shape != (size,):
            raise owner.error(f"{what} must be a scalar or {size} values, got shape {a.shape}")
    if not np.all(np.isfinite(a)):
        raise owner.error(f"{what} must be finite, got {value!r}")
    if np.any(a < 0):
        raise owner.error(f"{what} must be non-negative, got {value!r}")
    return float(a) if size is None else a


def floats(owner, value, what):
    """``value`` as a float64 array (any shape) of real numbers; strings,
    dicts, complex values and the like raise ``owner``'s ModelError."""
    try:
        return as_float_array(value, what)
    except InputError as e:
        raise owner.error(str(e)) from None


def vector3(owner, value, what, unit=False):
    a = floats(owner, value, what)
    if a.shape != (3,) or not np.all(np.isfinite(a)):
        raise owner.error(f"{what} must be a finite 3-vector, got {value!r}")
    if unit:
        n = np.linalg.norm(a)
        if n < 1e-12:
            raise owner.error(f"{what} has zero length")
        a = a / n
    return a


def resolve_frame(owner, model, frame):
    """(body, 4x4 placement) of a frame given by name or index; None or
    "world" is the world frame."""
    if frame is None:
        frame = "world"
    entry = model._frame_lookup.get(frame)
    if entry is None:
        raise owner.error(f"model '{model.name}' has no frame {frame!r}")
    body, place = entry
    return int(body), np.array(place, dtype=float)


def resolve_joint(owner, model, joint):
    """The JointInfo of a joint given by name or index (not the universe)."""
    if isinstance(joint, str):
        idx = model._joint_index.get(joint)
        if idx is None:
            raise owner.error(f"model '{model.name}' has no joint {joint!r}")
    elif isinstance(joint, numbers.Integral):
        idx = int(joint)
        if not 0 <= idx < model.njoints:
            raise owner.error(f"joint index {idx} out of range (model '{model.name}' has {model.njoints} joints)")
    else:
        raise owner.error(f"joint must be a name or an index, got {joint!r}")
    j = model.joints[idx]
    if idx == 0 or j.nv == 0:
        raise owner.error(f"joint '{j.name}' has no velocity coordinates")
    return j
