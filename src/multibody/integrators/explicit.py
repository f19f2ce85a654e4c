"""Explicit integrators: explicit Euler, semi-implicit (symplectic) Euler
(ArtiSynth §0.9.1, Sueda §1.8) and classical RK4. Positions move on the
configuration manifold (``model.integrate``; quaternions stay unit)."""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.linalg import cho_factor, cho_solve

from .._typing import Array
from ..dynamics.inertia import require_vector_joints
from ..errors import InputError, SimulationError
from .base import Integrator

class ExplicitEuler(Integrator):
    """``q⁺ = q ⊕ h v``, ``v⁺ = v + h v̇(q, v)``. Order 1; energy grows."""
    name = "explicit_euler"
    order = 1

    def step(self, system: Any, t: float, q: Array, v: Array, tau: Array, dt: float) -> tuple[Array, Array]:
        a = system.acceleration(t, q, v, tau)
        return system.model._integrate(q, v, dt), v + dt * a


class SemiImplicitEuler(Integrator):
    """``v⁺ = v + h v̇(q, v)``, ``q⁺ = q ⊕ h v⁺`` (symplectic Euler,
    ArtiSynth §0.9.1). Order 1; energy error stays bounded for conservative
    systems; stable for a spring-damper while ``h²k < 4 − 2hb`` (per unit
    mass: the damper is explicit; Drumwright §3.1.2's ``4 + 2hb`` is for
    the paper's scheme with an implicit damper)."""
    name = "semi_implicit_euler"
    order = 1

    def step(self, system: Any, t: float, q: Array, v: Array, tau: Array, dt: float) -> tuple[Array, Array]:
        if system.constraints is not None and not system.soft:  # compiled KKT step (ArtiSynth §0.10)
            return system.constrained_semi_implicit_euler(t, q, v, tau, dt)
        if system.constraints is not None:  # soft constraints: the regularized KKT step (§0.11)
            M, f = system.net_force(t, q, v, tau)
            v1 = system.velocity_solve(M, M @ v + dt * f, q, dt, v)
            return system.model._integrate(q, v1, dt), v1
        v1 = v + dt * system.acceleration(t, q, v, tau)
        return system.model._integrate(q, v1, dt), v1


class SymplecticEuler(Integrator):
    """Symplectic Euler in canonical coordinates (Hairer, Lubich & Wanner,
    *Geometric Numerical Integration* VI.3, method (3.1) on
    ``H(q, p) = ½ pᵀM(q)⁻¹p + V(q)``):
    ``p = M(q)v``; ``p⁺ = p + h(f(q, v) + ∂T/∂q(q, u))`` with
    ``u = M(q)⁻¹p⁺``; ``q⁺ = q + h u``; ``v⁺ = M(q⁺)⁻¹p⁺``. The step in
    (q, v) is the symplectic map in (q, p) seen through the fixed change of
    variables p = M(q)v, so for conservative systems the energy error stays
    bounded for all time even when M depends on q — which the velocity
    form (``semi_implicit_euler``) does not achieve. ``f`` holds τ, gravity
    and the force elements (velocity-dependent ones taken at v, explicitly).
    The implicit equation in u is solved by fixed-point iteration to
    round-off (it contracts like h·|v|; stopped by the a-posteriori bound
    of the contraction mapping theorem). Order 1. Needs joints with q̇ = v
    (revolute, prismatic, helical, cylindrical, translational)."""
    name = "symplectic_euler"
    order = 1
    max_iterations = 50

    def check(self, system: Any) -> None:
        require_vector_joints(system.model, "the symplectic_euler integrator")
        if system.constraints is not None:
            raise InputError("the symplectic_euler integrator does not take constraints yet; use "
                             "semi_implicit_euler, implicit_euler, trapezoidal, bridson_marino or rk4")

    def step(self, system: Any, t: float, q: Array, v: Array, tau: Array, dt: float) -> tuple[Array, Array]:
        M = system.mass_matrix(q)
        factor = cho_factor(M)
        p_explicit = M @ v + dt * system.applied_forces(t, q, v, tau)
        u, last = v, 0.0
        for it in range(self.max_iterations):
            u_next = cho_solve(factor, p_explicit + dt * system.kinetic_gradient(q, u))
            diff, tol = np.abs(u_next - u).max(), 1e-14 * (1.0 + np.abs(u_next).max())
            # the contraction ρ, estimated: u_next is within ρ/(1 − ρ)·diff of the fixed point
            rho, last = (diff / last if it > 0 else 1.0), diff
            u = u_next
            if (rho < 0.5 and diff * rho / (1.0 - rho) <= tol) or diff <= tol:
                break
        else:
            raise SimulationError(f"symplectic Euler's momentum equation did not converge in "
                                  f"{self.max_iterations} iterations (dt too large for the velocities)")
        q1 = system.model._integrate(q, u, dt)
        return q1, cho_solve(cho_factor(system.mass_matrix(q1)), M @ u)


class RK4(Integrator):
    """Classical fourth-order Runge–Kutta on the embedded ODE
    ``q̇ = Q(q) v`` (``model.qdot``), ``v̇ = FD(q, v)``. Stage configurations
    have their quaternions renormalized before the dynamics is evaluated,
    and so does the result: the projection error is O(h⁵), so the order
    stays 4."""
    name = "rk4"
    order = 4

    def step(self, system: Any, t: float, q: Array, v: Array, tau: Array, dt: float) -> tuple[Array, Array]:
        model = system.model
        k1q, k1v = model.qdot(q, v), system.acceleration(t, q, v, tau)
        q2, v2 = model.normalize(q + 0.5 * dt * k1q), v + 0.5 * dt * k1v
        k2q, k2v = model.qdot(q2, v2), system.acceleration(t + 0.5 * dt, q2, v2, tau)
        q3, v3 = model.normalize(q + 0.5 * dt * k2q), v + 0.5 * dt * k2v
        k3q, k3v = model.qdot(q3, v3), system.acceleration(t + 0.5 * dt, q3, v3, tau)
        q4, v4 = model.normalize(q + dt * k3q), v + dt * k3v
        k4q, k4v = model.qdot(q4, v4), system.acceleration(t + dt, q4, v4, tau)
        q1 = model.normalize(q + dt / 6.0 * (k1q + 2.0 * k2q + 2.0 * k3q + k4q))
        v1 = v + dt / 6.0 * (k1v + 2.0 * k2v + 2.0 * k3v + k4v)
        return q1, np.asarray(v1)
