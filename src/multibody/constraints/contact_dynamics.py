"""Contact at the acceleration level (L3): the joint accelerations and the
contact forces of a state whose contacts persist (Featherstone §11.3–11.5;
docs/contact.md, "Contact at the acceleration level").

The simulator's steps solve contact at the velocity level (impulses over a
step). Users analysing a state — the forces a standing robot's feet carry
for its present motion, the accelerations it produces — ask the instant
question instead: with every contact touching (φ = 0) and neither
approaching nor separating (φ̇ = 0: Featherstone's state 3), the normal
forces λ ≥ 0 and the accelerations satisfy the frictionless LCP

    φ̈ = T H⁻¹ Tᵀ λ + d ≥ 0,   λ ≥ 0,   λᵀφ̈ = 0,
    d = T H⁻¹ (τ − C) + Ṫ q̇,   q̈ = H⁻¹ (τ − C + Tᵀ λ)

(Eq. 11.42; T's rows are the contacts' normal rows ``t_i = n_i·(J_β(p_i)
− J_α(p_i))``: the velocity of geometry 2's body relative to geometry 1's
at the contact along the normal). The velocity-product term ``Ṫ q̇ = φ̈``
at q̈ = 0 depends on the shapes, not only on the contact point (Eq. 11.33
takes points fixed in the bodies, right for polyhedra, §11.6: a sphere
spinning in place on a plane has a contact point accelerating upwards at
ω²r while its gap does not change). It is computed from points that are
fixed in the bodies: the core of a rounded geometry (a sphere's centre, a
capsule's segment point: the surface point moved inwards by the radius) and
the contact point on a faceted one (a plane, box or hull: a vertex of it,
or a point of the face that carries the normal):

* one side rounded (core c, radius r), the other flat with the normal fixed
  in it (point x on its surface): φ = ±n·(c − x) − r, so
  ``φ̈ = ±[n·(a_R(c) − a_F(x)) + (ω_F × n)·(v_R(c) − v_F(x))]``;
* both rounded: φ = |c₂ − c₁| − r₁ − r₂, so ``φ̈ = n·(a(c₂) − a(c₁)) +
  |Δv_⊥|²/|c₂ − c₁|`` with Δv_⊥ the part of the cores' relative velocity
  across the normal;
* both faceted: the normal is taken as fixed in geometry 1's face (the
  first formula with r = 0).

a are the classical accelerations at q̈ = 0 of those material points. This
is exact for a sphere or a capsule's end on a flat surface, two spheres,
and a vertex on geometry 1's face; an approximation for ellipsoids and
cylinders (their curvature is not used) and for a box or hull vertex
sliding on geometry 2's face. The LCP is solved by principal pivoting
(:mod:`~multibody.solvers.pivoting`): T H⁻¹ Tᵀ is positive semi-definite,
singular for redundant contacts, whose λ is then not unique while q̈ is
(§11.5).
"""
from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from .._status import describe
from .._typing import ArrayLike
from ..collision.shapes import CAPSULE, SPHERE
from ..errors import ContactSolveError, InputError

if TYPE_CHECKING:
    from .contact import ContactTable


class ContactDynamics(NamedTuple):
    """What :func:`contact_forward_dynamics` returns."""
    qdd: np.ndarray                  # (nv,) joint accelerations
    contacts: list                   # the persistent contacts (:class:`~.contact.Contact`: force λ n (N) on geom 2;
                                     # impulse 0, there is no step)
    forces: np.ndarray               # (nc,) normal forces λ (N), ≥ 0
    normal_acceleration: np.ndarray  # (nc,) ζ̈ = n·(relative acceleration) + ṅ·(relative velocity), ≥ 0


def _point_jacobian(model, q, body, x, poses):
    """The linear Jacobian (3, nv) of the point of ``body`` at the world
    point x (world axes); zeros for the world."""
    from ..kinematics import jacobian
    if body == 0:
        return np.zeros((3, model.nv))
    R, o = poses[body, :3, :3], poses[body, :3, 3]
    return jacobian(model, q, body, "local_world_aligned", point=R.T @ (x - o))[3:]


class _BodyMotion:
    """The motion of one body at (q, v) with q̈ = 0 (world frame): its
    spatial velocity (ω, v_O) and spatial acceleration (α, a_O) at the
    world origin; the velocity and classical acceleration of any of its
    points; zeros for the world."""

    def __init__(self, model, q, v, body):
        from ..kinematics import frame_velocity, jacobian_dot_v
        if body == 0:
            self.w = self.vo = self.alpha = self.ao = np.zeros(3)
            return
        sv = frame_velocity(model, q, v, body, "world")
        sa = jacobian_dot_v(model, q, v, body, "world")
        self.w, self.vo, self.alpha, self.ao = sv[:3], sv[3:], sa[:3], sa[3:]

    def velocity(self, x):
        return self.vo + np.cross(self.w, x)

    def acceleration(self, x):
        """Classical acceleration of the body's point at x: ``a_O + α × x + ω × v(x)``."""
        return self.ao + np.cross(self.alpha, x) + np.cross(self.w, self.velocity(x))


_ROUNDED = {SPHERE, CAPSULE}


def _velocity_product(c, n, rounded, motions):
    """``Ṫ q̇`` of contact c (module docstring): geometry k's radius
    ``rounded[k]`` (None: faceted), ``motions`` the two bodies'
    :class:`_BodyMotion`."""
    p, d = c.position, c.distance
    surface = (p - 0.5 * d * n, p + 0.5 * d * n)  # each geometry's surface point
    m1, m2 = motions
    r1, r2 = rounded
    if r1 is not None and r2 is not None:
        c1, c2 = surface[0] - r1 * n, surface[1] + r2 * n
        dv = m2.velocity(c2) - m1.velocity(c1)
        across = dv - (n @ dv) * n
        return n @ (m2.acceleration(c2) - m1.acceleration(c1)) + across @ across / np.linalg.norm(c2 - c1)
    if r1 is not None:  # geometry 1 rounded, 2 flat: φ = −n·(c − x) − r
        core, x, R, F, sign = surface[0] - r1 * n, surface[1], m1, m2, -1.0
    else:  # geometry 2 rounded (or both faceted: the normal fixed in geometry 1's face)
        core, x, R, F, sign = surface[1] + (r2 or 0.0) * n, surface[0], m2, m1, 1.0
    return sign * (n @ (R.acceleration(core) - F.acceleration(x)) + np.cross(F.w, n) @ (R.velocity(core) - F.velocity(x)))


def contact_forward_dynamics(table: ContactTable, q: ArrayLike, v: ArrayLike, tau: ArrayLike | None = None,
                             tolerance: float = 1e-9, max_pivots: int | None = None) -> ContactDynamics:
    """The persistent contacts of the state (q, v) under the joint forces
    ``tau`` (nv,; default 0) and their frictionless normal forces and the
    joint accelerations (module docstring), for the collision geometry of
    ``table`` (a :class:`~.contact.ContactTable`; its model's gravity).

    A contact persists when its distance is at most ``tolerance`` (m) and
    its normal velocity ζ = t·v within ``tolerance`` (m/s) of 0; a
    separating one (ζ > tolerance) is left out; an approaching one
    (ζ < −tolerance) raises :class:`InputError` naming it: it needs an
    impulse first (Featherstone §11.4, state 2a). Friction is not modelled
    (Featherstone's chapter 11 LCP). Returns a :class:`ContactDynamics`.
    Raises :class:`ContactSolveError` if the LCP has no solution (contacts
    that cannot all be kept, Featherstone's Example 11.1)."""
    from ..dynamics import crba, forward_dynamics
    from ..kinematics import forward_kinematics
    from ..solvers.pivoting import principal_pivoting
    model = table.model
    q = model.check_configuration(np.asarray(q, dtype=float))
    v = model.check_velocity(np.asarray(v, dtype=float))
    tau = np.zeros(model.nv) if tau is None else model.check_velocity(np.asarray(tau, dtype=float))
    tolerance = float(tolerance)
    if not tolerance >= 0:
        raise InputError(f"tolerance must be >= 0, got {tolerance}")
    table.detect(q)
    poses = forward_kinematics(model, q)
    g = table.geometry
    index = {geometry.name: k for k, geometry in enumerate(g.geometries)}
    rows, bias, kept, motions = [], [], [], {}
    for c in table.contacts():
        if c.distance > tolerance:
            continue
        n = c.frame[0]
        t = n @ (_point_jacobian(model, q, c.body2, c.position, poses)
                 - _point_jacobian(model, q, c.body1, c.position, poses))
        zeta = t @ v
        if zeta < -tolerance:
            raise InputError(f"the contact of '{c.geom1}' and '{c.geom2}' is approaching at {-zeta:.3g} m/s: "
                             f"an impulse must resolve it before its forces (Featherstone §11.4)")
        if zeta > tolerance:
            continue
        for body in (c.body1, c.body2):
            if body not in motions:
                motions[body] = _BodyMotion(model, q, v, body)
        rounded = tuple(g.size[index[name], 0] if g.code[index[name]] in _ROUNDED else None
                        for name in (c.geom1, c.geom2))
        rows.append(t)
        bias.append(_velocity_product(c, n, rounded, (motions[c.body1], motions[c.body2])))
        kept.append(c)
    qdd_free = forward_dynamics(model, q, v, tau)
    if not kept:
        return ContactDynamics(qdd_free, [], np.zeros(0), np.zeros(0))
    T = np.array(rows)
    Hinv_Tt = np.linalg.solve(crba(model, q), T.T)
    A = np.ascontiguousarray(T @ Hinv_Tt)
    A = 0.5 * (A + A.T)
    d = T @ qdd_free + np.array(bias)
    nc = len(kept)
    lam, zdd = np.zeros(nc), np.zeros(nc)
    st = principal_pivoting(A, d, lam, zdd, np.zeros((nc, nc)), np.zeros(nc, np.int64), np.zeros(nc, np.int64),
                            np.zeros(nc, np.int64), np.zeros((nc, nc)), np.zeros(nc), np.zeros(nc),
                            int(max_pivots or 50 * nc + 100))
    if st < 0:
        raise ContactSolveError(f"the contact forces of the {nc} persistent contacts have no solution: "
                                f"{describe(st, 'contact')}")
    contacts = [replace(c, force=f * c.frame[0]) for c, f in zip(kept, lam)]
    return ContactDynamics(qdd_free + Hinv_Tt @ lam, contacts, lam, zdd)
