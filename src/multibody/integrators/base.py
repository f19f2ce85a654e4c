"""The integrator interface."""


class Integrator:
    """Steps a system ``(t, q, v) → (q⁺, v⁺)`` over ``dt`` with joint forces
    ``tau`` held constant. ``order`` is the global order of accuracy (the
    tests measure it)."""
    name = "integrator"
    order = 0

    def check(self, system):
        """Raise :class:`~multibody.errors.InputError` if this integrator
        cannot step ``system`` (called once by the simulator)."""

    def step(self, system, t, q, v, tau, dt):
        raise NotImplementedError

    def internal_state(self):
        """What the integrator carries from one step to the next beyond
        (t, q, v) (a tuple; none for the one-step methods): the simulator
        keeps it in its checkpoints."""
        return ()

    def set_internal_state(self, state):
        """Return to an :meth:`internal_state` (``()``: start afresh)."""
