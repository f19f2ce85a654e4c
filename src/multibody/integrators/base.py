"""The integrator interface."""

from __future__ import annotations

from typing import Any

from .._typing import Array


class Integrator:
    """Steps a system ``(t, q, v) → (q⁺, v⁺)`` over ``dt`` with joint forces
    ``tau`` held constant. ``order`` is the global order of accuracy (the
    tests measure it)."""
    name = "integrator"
    order = 0

    def check(self, system: Any) -> None:
        """Raise :class:`~multibody.errors.InputError` if this integrator
        cannot step ``system`` (called once by the simulator)."""

    def step(self, system: Any, t: float, q: Array, v: Array, tau: Array, dt: float) -> tuple[Array, Array]:
        raise NotImplementedError

    def internal_state(self) -> tuple:
        """What the integrator carries from one step to the next beyond
        (t, q, v) (a tuple; none for the one-step methods): the simulator
        keeps it in its checkpoints."""
        return ()

    def set_internal_state(self, state: tuple) -> None:
        """Return to an :meth:`internal_state` (``()``: start afresh)."""
