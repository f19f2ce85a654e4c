"""Implicit Euler, linearized with the force Jacobians (ArtiSynth §0.9.2,
Drumwright §3.1.3): ``(M − hD − h²K) v⁺ = (M − hD) v + h f``, then
``q⁺ = q ⊕ h v⁺``. ``f = τ + Σ force elements − C(q, v)``; K and D are the
force elements' Jacobians (DESIGN.md signs: a spring has K ≤ 0), the bias
C (Coriolis, gravity) is explicit. Order 1; unconditionally stable for
linear springs and dampers; numerical damping makes energy decay."""
import numpy as np

from .base import Integrator


class ImplicitEuler(Integrator):
    name = "implicit_euler"
    order = 1

    def step(self, system, t, q, v, tau, dt):
        M, f, K, D = system.linearization(t, q, v, tau)
        A = M - dt * D - dt * dt * K
        v1 = np.linalg.solve(A, (M - dt * D) @ v + dt * f)
        return system.model.integrate(q, v1, dt), v1
