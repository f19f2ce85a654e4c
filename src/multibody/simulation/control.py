"""Built-in controllers: PD to a target and computed torque, with held or
tabulated references. :meth:`Simulator.rollout` runs them inside its
compiled loop (:func:`multibody.integrators._kernels.control`); they are
also plain controllers ``(t, q, v) -> τ`` for a step-by-step loop when
their references are held.

With ``e = q_ref ⊖ q`` (:meth:`Model.difference`: the tangent-space error,
so free and spherical joints are controlled on SO(3)/SE(3)) and
``ė = v_ref − v``:

* :class:`PD`: ``τ = τ_ff + K_p ⊙ e + K_d ⊙ ė``;
* :class:`ComputedTorque`: ``τ = τ_ff + M(q)(a_ref + K_p ⊙ e + K_d ⊙ ė) +
  C(q, v) + b ⊙ v``, the inverse dynamics by RNEA (Featherstone Table 5.1)
  with gravity when the simulator has it, plus the simulator's joint
  damping ``b`` (``model.damping`` unless ``joint_damping=False``) — exact
  tracking of the error dynamics ``ë + K_d ė + K_p e = 0`` without force
  elements, limits or clamping (up to the zero-order hold of τ over a step).

References are held (one row) or tables with one row per step of the
rollout (row k is used for step k + 1, i.e. at time t_k)."""
from __future__ import annotations

import numpy as np

from ..dynamics import rnea
from ..errors import InputError
from ..integrators._kernels import COMPUTED_TORQUE, PD as _PD
from ..model import Model
from ..model.checks import as_float_array
from .._typing import Array, ArrayLike


class PD:
    """PD control of every velocity coordinate of ``model``: gains ``kp``
    (N/m or N·m/rad) and ``kd`` (N·s/m or N·m·s/rad), scalars or (nv,)
    (zero: that coordinate is not controlled); ``target`` (nq,) or
    (steps, nq), default the neutral configuration; ``velocity_target``
    and ``feedforward`` (nv,) or (steps, nv), default zero.

    Parameters
    ----------
    model : Model
        The controlled model.
    kp : float or array_like
        Position gains (N/m or N·m/rad), a scalar or (nv,).
    kd : float or array_like
        Velocity gains (N·s/m or N·m·s/rad), a scalar or (nv,).
    target : array_like, optional
        Target configuration (nq,) or (steps, nq); default neutral.
    velocity_target : array_like, optional
        Target velocity (nv,) or (steps, nv); default zero.
    feedforward : array_like, optional
        Joint forces added (N, N·m), (nv,) or (steps, nv); default zero.

    Raises
    ------
    InputError
        If ``model`` is not a Model, or a gain or table has the wrong shape,
        is negative (gains) or not finite.
    """
    kind = _PD

    def __init__(self, model: Model, kp: ArrayLike, kd: ArrayLike, target: ArrayLike | None = None,
                 velocity_target: ArrayLike | None = None, feedforward: ArrayLike | None = None) -> None:
        if not isinstance(model, Model):
            raise InputError(f"{type(self).__name__} needs the multibody Model it controls, got {model!r}")
        self.model = model
        nq, nv = model.nq, model.nv
        self.gains = np.zeros((3, nv))  # K_p, K_d and the damping computed torque cancels (set per rollout)
        for row, (x, what) in enumerate(((kp, "kp"), (kd, "kd"))):
            g = as_float_array(x, what)
            if g.shape not in ((), (nv,)) or not np.all(np.isfinite(g)) or np.any(g < 0):
                raise InputError(f"{what} must be a finite number >= 0 or {nv} of them, got {x!r}")
            self.gains[row] = g
        q_ref = model.neutral() if target is None else self._table(target, nq, "target")
        if target is not None:
            for k, q in enumerate(np.atleast_2d(q_ref)):
                model.check_configuration(q, f"target[{k}]" if q_ref.ndim == 2 else "target")
        self.target = np.atleast_2d(q_ref)
        self.velocity_target = np.zeros((1, nv)) if velocity_target is None else \
            np.atleast_2d(self._table(velocity_target, nv, "velocity_target"))
        self.feedforward = np.zeros((1, nv)) if feedforward is None else \
            np.atleast_2d(self._table(feedforward, nv, "feedforward"))
        self.acceleration = np.zeros((1, nv))

    @staticmethod
    def _table(x, size, what):
        a = as_float_array(x, what)
        if a.ndim not in (1, 2) or a.shape[-1] != size or a.size == 0 or not np.all(np.isfinite(a)):
            raise InputError(f"{what} must be finite, of shape ({size},) or (steps, {size}), got shape {a.shape}")
        return a

    def arrays(self, model: Model, n: int, damping: Array) -> tuple[int, Array, Array, Array]:
        """``(kind, gains (3, nv), references (rows, nq + 2 nv), feed-forward
        (rows, nv))`` for a rollout of ``n`` steps of ``model`` whose joint
        damping is ``damping`` (nv): what the compiled loop reads; InputError
        if a table has neither 1 nor n rows or the controller was made for
        another model."""
        if model is not self.model:
            raise InputError(f"this {type(self).__name__} controls model '{self.model.name}', not '{model.name}'")
        parts = (self.target, self.velocity_target, self.acceleration, self.feedforward)
        rows = {len(p) for p in parts} - {1}
        if rows - {n}:
            names = ("target", "velocity_target", "acceleration", "feedforward")
            raise InputError(f"the {type(self).__name__} tables must have 1 or {n} rows (one per step), got "
                             + ", ".join(f"{w}: {len(p)}" for w, p in zip(names, parts)))
        m = max(rows, default=1)
        refs = np.concatenate([np.broadcast_to(p, (m, p.shape[1])) for p in parts[:3]], axis=1)
        gains = self.gains.copy()
        if self.kind == COMPUTED_TORQUE:
            gains[2] = damping
        return self.kind, gains, refs, np.ascontiguousarray(self.feedforward)

    def torque(self, k: int, q: Array, v: Array, gravity: bool = True, damping: Array | None = None) -> Array:
        """τ (nv) at step k + 1 from the state (q, v), with or without
        gravity, cancelling the joint ``damping`` (computed torque; default
        ``model.damping``). NumPy: the Python path; the compiled loop
        computes the same."""
        def row(table):
            return table[0 if len(table) == 1 else k]
        e = self.model.difference(q, row(self.target))
        a = self.gains[0] * e + self.gains[1] * (row(self.velocity_target) - v)
        if self.kind == COMPUTED_TORQUE:
            b = self.model.damping if damping is None else damping
            return row(self.feedforward) + rnea(self.model, q, v, a + row(self.acceleration), gravity=gravity) + b * v
        return row(self.feedforward) + a

    def __call__(self, t: float, q: Array, v: Array) -> Array:
        """τ with held references (a step-by-step controller)."""
        if any(len(p) > 1 for p in (self.target, self.velocity_target, self.acceleration, self.feedforward)):
            raise InputError(f"this {type(self).__name__} has reference tables indexed by step: run it with "
                             "Simulator.rollout(controller=...)")
        return self.torque(0, q, v)


class ComputedTorque(PD):
    """Computed-torque control: :class:`PD`'s error feedback as an
    acceleration added to ``acceleration`` (m/s² or rad/s², (nv,) or
    (steps, nv), default zero) and mapped through the inverse dynamics.

    Parameters
    ----------
    model : Model
        The controlled model.
    kp : float or array_like
        Position gains (N/m or N·m/rad), a scalar or (nv,).
    kd : float or array_like
        Velocity gains (N·s/m or N·m·s/rad), a scalar or (nv,).
    target : array_like, optional
        Target configuration (nq,) or (steps, nq); default neutral.
    velocity_target : array_like, optional
        Target velocity (nv,) or (steps, nv); default zero.
    acceleration : array_like, optional
        Desired acceleration (m/s², rad/s²), (nv,) or (steps, nv); default
        zero.
    feedforward : array_like, optional
        Joint forces added (N, N·m), (nv,) or (steps, nv); default zero.

    Raises
    ------
    InputError
        If ``model`` is not a Model, or a gain or table has the wrong shape,
        is negative (gains) or not finite.
    """
    kind = COMPUTED_TORQUE

    def __init__(self, model: Model, kp: ArrayLike, kd: ArrayLike, target: ArrayLike | None = None,
                 velocity_target: ArrayLike | None = None, acceleration: ArrayLike | None = None,
                 feedforward: ArrayLike | None = None) -> None:
        super().__init__(model, kp, kd, target, velocity_target, feedforward)
        if acceleration is not None:
            self.acceleration = np.atleast_2d(self._table(acceleration, model.nv, "acceleration"))
