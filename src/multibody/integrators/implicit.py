"""Implicit Euler, linearized with the force Jacobians (ArtiSynth §0.9.2,
Drumwright §3.1.3): ``(M − hD − h²K) v⁺ = (M − hD) v + h f``, then
``q⁺ = q ⊕ h v⁺``. ``f = τ + Σ force elements − C(q, v)``; K and D are the
force elements' Jacobians (DESIGN.md signs: a spring has K ≤ 0), the bias
C (Coriolis, gravity) is explicit. Order 1; unconditionally stable for
linear springs and dampers; numerical damping makes energy decay."""

from __future__ import annotations

from typing import Any

from .._typing import Array
from .base import Integrator


class ImplicitEuler(Integrator):
    name = "implicit_euler"
    order = 1

    def step(self, system: Any, t: float, q: Array, v: Array, tau: Array, dt: float) -> tuple[Array, Array]:
        M, f, K, D = system.linearization(t, q, v, tau)
        A = M - dt * D - dt * dt * K
        v1 = system.velocity_solve(A, (M - dt * D) @ v + dt * f, q, dt, v)
        return system.model._integrate(q, v1, dt), v1


class Trapezoidal(Integrator):
    """Linearized trapezoidal rule (ArtiSynth §0.9.3, with the erratum of
    notes/seed-000.md: f̂ carries (h/4)Kv, not (h²/4)Kv):
    ``(M − (h/2)D − (h²/4)K) v⁺ = (M − (h/2)D + (h²/4)K) v + h f``,
    ``q⁺ = q ⊕ (h/2)(v + v⁺)``. Order 2 when M is constant; conserves the
    energy of a linear spring-mass system exactly; A-stable."""
    name = "trapezoidal"
    order = 2

    def step(self, system: Any, t: float, q: Array, v: Array, tau: Array, dt: float) -> tuple[Array, Array]:
        M, f, K, D = system.linearization(t, q, v, tau)
        A = M - 0.5 * dt * D - 0.25 * dt * dt * K
        v1 = system.velocity_solve(A, (M - 0.5 * dt * D + 0.25 * dt * dt * K) @ v + dt * f, q, dt, v)
        return system.model._integrate(q, 0.5 * (v + v1), dt), v1


class BridsonMarino(Integrator):
    """Bridson–Marino step (ArtiSynth §0.9.4): damping implicit, stiffness
    explicit. ``(M − (h/2)D) v½ = (M − (h/2)D) v + (h/2) f(q, v)``,
    ``q⁺ = q ⊕ h v½``, ``f' = f(q⁺, v)``, ``(M − (h/2)D) v⁺ = (M − (h/2)D) v
    + (h/2)(f + f')``. With D = 0 it is velocity Verlet. M and D are taken
    at the start of the step; order 2 when M is constant. (The constraint
    projection of v½ in the seed comes with the constraint solvers.)"""
    name = "bridson_marino"
    order = 2

    def step(self, system: Any, t: float, q: Array, v: Array, tau: Array, dt: float) -> tuple[Array, Array]:
        M, f, _, D = system.linearization(t, q, v, tau)
        A = M - 0.5 * dt * D
        rhs = A @ v
        v_half = system.velocity_solve(A, rhs + 0.5 * dt * f, q, dt)  # projected onto the constraints
        q1 = system.model._integrate(q, v_half, dt)
        _, f1, _, _ = system.linearization(t + dt, q1, v, tau)
        return q1, system.velocity_solve(A, rhs + 0.5 * dt * (f + f1), q1, dt)
