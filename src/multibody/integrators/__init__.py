"""L4: time integrators on the configuration manifold. Each steps a
formulation (:mod:`multibody.formulations`) from (t, q, v) to t + dt and
states its order of accuracy; ``INTEGRATORS`` maps names to classes."""
from .base import Integrator
from .explicit import ExplicitEuler, RK4, SemiImplicitEuler, SymplecticEuler
from .implicit import BridsonMarino, ImplicitEuler, Trapezoidal
from .lie import RKMK
from .particles import ParticleStepper  # a model with particles (Simulator(particles=...)); not a named integrator

INTEGRATORS = {cls.name: cls for cls in (ExplicitEuler, SemiImplicitEuler, SymplecticEuler, RK4, ImplicitEuler,
                                         Trapezoidal, BridsonMarino, RKMK)}
