"""Stepping a model together with particles and springs: the simulator's
``particles=`` (docs/deformables.md, "In the simulator").

The coupled system is a :class:`~multibody.formulations.ParticleSystem`:
the model's joint coordinates and the free particles' world positions,
the attachments to body points, to other particles and to prescribed
paths eliminated (ArtiSynth §0.17–0.21, Sueda §2.7). Its step
(:meth:`ParticleSystem.step`) is this integrator's step: linearly implicit
Euler (``implicit_euler``: ``M − hD − h²K`` of the model, the particles and
the attachments' geometric stiffness) or semi-implicit Euler
(``semi_implicit_euler``). The simulator keeps (t, q, v); the free
particles' positions and velocities are what this integrator carries
between steps (:meth:`internal_state`), so the simulator's checkpoints,
pickles and resets carry them. Before every step the particle system takes
the simulator's (t, q, v) — which the velocity clamp may have changed —
and after it hands back (q⁺, v⁺).
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

import numpy as np

from .._typing import Array
from ..errors import InputError
from ..formulations.particles import ParticleSystem
from .base import Integrator

if TYPE_CHECKING:
    from ..model import Model

#: the simulator's integrator names and ParticleSystem.step's methods
METHODS = {"implicit_euler": "implicit", "semi_implicit_euler": "semi_implicit"}


class ParticleStepper(Integrator):
    """The simulator's step of a model with particles (module docstring).

    ``method``: "implicit_euler" (linearly implicit Euler) or
    "semi_implicit_euler"; ``attachments``, ``solver`` and ``stiffness`` as
    :meth:`ParticleSystem.step` ("eliminate" or "kkt"; "direct" or
    "iterative"; "definite" or "exact"). The simulator makes one from its
    ``integrator`` name; give one as ``integrator`` to choose the other
    options. :meth:`bind` takes the particle system (the simulator gives
    its own copy)."""
    order = 1

    def __init__(self, method: str = "implicit_euler", attachments: str = "eliminate", solver: str = "direct",
                 stiffness: str = "definite") -> None:
        if method not in METHODS:
            raise InputError(f"a simulator with particles steps with {' or '.join(METHODS)}, not {method!r}")
        for value, allowed, what in ((attachments, ("eliminate", "kkt"), "attachments"),
                                     (solver, ("direct", "iterative"), "solver"),
                                     (stiffness, ("definite", "exact"), "stiffness")):
            if value not in allowed:
                raise InputError(f"{what} must be {' or '.join(map(repr, allowed))}, got {value!r}")
        self.name = method
        self.options = (METHODS[method], attachments, solver, stiffness)
        self.particles: Any = None  # the ParticleSystem bind gives
        self._initial: Any = None

    def bind(self, particles: ParticleSystem, model: Model) -> None:
        """Step ``particles`` (a :class:`ParticleSystem` on ``model``; this
        stepper's own copy is made by the simulator) from its current free
        particles, which :meth:`set_internal_state` with ``()`` returns to."""
        if not isinstance(particles, ParticleSystem):
            raise InputError(f"particles must be a multibody.formulations.ParticleSystem, got {particles!r}")
        self.particles = particles
        particles.get_state()  # builds the structure: a cycle of attachments is reported now
        self._initial = (particles._xf.copy(), particles._xdf.copy())

    def copy(self) -> ParticleStepper:
        """A stepper with the same options and no particle system."""
        new = copy.copy(self)
        new.particles, new._initial = None, None
        return new

    def check(self, system: Any) -> None:
        if self.particles is None:
            raise InputError("a ParticleStepper steps a simulator built with particles=ParticleSystem(...)")

    def internal_state(self) -> tuple:
        """The free particles' world positions and velocities ``(x, ẋ)``
        (n_free, 3) each, in the order of :attr:`ParticleSystem.free`
        (copies)."""
        ps = self.particles
        return ps._xf.copy(), ps._xdf.copy()

    def set_internal_state(self, state: tuple) -> None:
        """Return the free particles to ``state`` (as :meth:`internal_state`
        gives; ``()``: where they were when the simulator was built).
        InputError if the shapes are not those of this system or the values
        are not finite."""
        ps = self.particles
        x, xd = self._initial if not state else state
        nf = len(self._initial[0])
        arrays = []
        for a, what in ((x, "positions"), (xd, "velocities")):
            a = np.array(a, dtype=float)
            if a.shape != (nf, 3) or not np.all(np.isfinite(a)):
                raise InputError(f"the free particles' {what} must be {nf} x 3 finite numbers (the particle "
                                 f"system's), got shape {a.shape}")
            arrays.append(a)
        ps._xf, ps._xdf = arrays

    def step(self, system: Any, t: float, q: Array, v: Array, tau: Array, dt: float) -> tuple[Array, Array]:
        ps = self.particles
        xf, xdf = ps._xf, ps._xdf  # replaced, not changed in place, by a step: kept to undo a failed one
        ps.q, ps.v, ps.t = q.copy(), v.copy(), t
        method, attachments, solver, stiffness = self.options
        try:
            # no τ when it is zero: then the step is bitwise ParticleSystem.step's without one
            ps.step(dt, method, attachments, solver, stiffness, tau=tau if tau.any() else None)
        except BaseException:
            ps._xf, ps._xdf = xf, xdf
            raise
        return ps.q.copy(), ps.v.copy()
