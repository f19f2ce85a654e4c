"""Reduced-coordinate equations of motion ``M(q) v̇ + C(q, v) = τ + f(t, q, v)``
(Featherstone Eq. 1.1), the system every integrator of
:mod:`multibody.integrators` steps: τ are applied joint forces, f the sum
of the force elements (:mod:`multibody.forces`), C the bias forces with
gravity (RNEA at v̇ = 0)."""
from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp
from scipy.linalg import solve
from scipy.sparse.linalg import splu

from .._typing import Array
from ..dynamics import aba, crba, gravity_forces, inverse_inertia, kinetic_energy_gradient, rnea
from ..dynamics.closed_loop import METHODS, closed_loop_forward_dynamics, independent_rows
from ..constraints._kernels import constrained_acceleration_kernel, constrained_sie_kernel
from ..errors import InputError, SimulationError
from ..forces import Gravity, generalized_forces
from ..model.data import Data

if TYPE_CHECKING:
    from ..constraints import Constraints
    from ..forces.base import ForceElement
    from ..model import Model


# measured with benchmarks/kkt.py: SuperLU beats the dense symmetric solve once the KKT system is
# large and its A block sparse (branched trees); for chains (dense H) the dense solve stays faster
SPARSE_KKT_MIN_SIZE = 220
SPARSE_KKT_MAX_DENSITY = 0.1


def kkt_solve(A: Array, G: Array, R: Array, b: Array, g: Array, sparse: bool | np.bool_ | None = None) -> np.ndarray:
    """The x-part of ``[A −Gᵀ; G R][x; λ] = [b; g]`` (ArtiSynth §0.6, §0.11):
    dense (LAPACK LU) or sparse (SuperLU), chosen by size and the density of
    A unless ``sparse`` is given."""
    n, m = A.shape[0], G.shape[0]
    if sparse is None:
        sparse = n + m >= SPARSE_KKT_MIN_SIZE and np.count_nonzero(A) <= SPARSE_KKT_MAX_DENSITY * A.size
    rhs = np.concatenate([b, g])
    if sparse:
        K = sp.bmat([[sp.csc_matrix(A), sp.csc_matrix(-G.T)], [sp.csc_matrix(G), sp.csc_matrix(R)]], format="csc")
        return splu(K).solve(rhs)[:n]
    K = np.zeros((n + m, n + m))
    K[:n, :n], K[:n, n:], K[n:, :n], K[n:, n:] = A, -G.T, G, R
    return solve(K, rhs)[:n]  # general LU: A need not be symmetric (non-conservative force Jacobians)


class ReducedSystem:
    """A model in joint coordinates plus force elements.

    ``acceleration(t, q, v, tau)`` is forward dynamics (ABA) with the force
    elements and the model's joint damping (``model.damping``, unless
    ``joint_damping=False``) added to τ; ``linearization(t, q, v, tau)`` gives what the
    implicit integrators need: ``M``, the generalized force ``f = τ +
    Σ elements − g(q) − c(q, v)`` and its Jacobians ``K = ∂f/∂q`` (tangent
    space) and ``D = ∂f/∂v``. Gravity is linearized exactly (the Gravity
    element's analytic K); the Coriolis and centrifugal terms c(q, v) are
    explicit (their derivatives come with the RNEA derivatives of a later
    issue).

    ``constraints`` (a :class:`multibody.constraints.Constraints`, or None)
    adds bilateral constraints φ(q) = 0 with Jacobian G:

    * hard (``compliance = 0``): ``acceleration`` is the closed-loop forward
      dynamics (Featherstone ch. 8; compiled method 2 with the sparse
      LᵀDL, or ``loop_method`` "kkt", "range_space", "null_space" of
      :mod:`multibody.dynamics.closed_loop`) with Baumgarte terms
      ``k − 2ω Gv − ω²φ`` (§8.3; ``baumgarte = ω`` in rad/s, 0 for none),
      and ``velocity_solve`` the KKT system ``[A −Gᵀ; G 0][v⁺; λ̃] = [b; 0]``
      on independent rows (ArtiSynth §0.6, §0.10);
    * soft (``compliance`` α > 0, ``constraint_damping`` β ≥ 0 in s): the
      constraint is the potential ``½ φᵀα⁻¹φ`` with damping, i.e. the force
      ``−Gᵀα⁻¹(φ + βGv)`` in ``acceleration``, and the regularized KKT system
      ``[A −Gᵀ; G γα/h²][v⁺; λ̃] = [b; −γφ/h]``, ``γ = (½ + β/h)⁻¹``, in
      ``velocity_solve`` (ArtiSynth §0.11, eq. 0.9, with the sign erratum of
      notes/seed-000.md). With ``constraint_law="drumwright"`` the spring
      state is advanced by implicit Euler instead (Drumwright §4.2 in the
      ERP/CFM form of notes C7; solvers/drumwright.py): ``γ = (1 + β/h)⁻¹``,
      which with α = 1/K, β = B/K is ``R = 1/(h(hK + B))`` and ``−γφ/h =
      −Kφ/(hK + B)``, stable at any stiffness and step (ArtiSynth's γ with
      β = 0 flips φ's sign every step at large stiffness); with ``gdot``
      the right side also takes Drumwright's velocity-product terms
      ``−hĠv − M̂Ġv/(hK + B)`` (eq. 53, M̂ = (G A⁻¹ Gᵀ)⁺; pitfall P2)."""

    def __init__(self, model: Model, forces: Sequence[ForceElement] = (), gravity: bool = True,
                 joint_damping: bool = True, constraints: Constraints | None = None, compliance: float = 0.0,
                 constraint_damping: float = 0.0, baumgarte: float = 10.0, loop_method: str | None = None,
                 constraint_law: str = "artisynth", gdot: bool = False) -> None:
        self.model = model
        self.forces = tuple(forces)
        self.gravity = bool(gravity)
        # the model's own viscous joint damping (URDF <dynamics damping>, MJCF damping), applied
        # as MuJoCo does: τ = −b ⊙ v, D = −diag(b)
        self.damping = model.damping.copy() if joint_damping else np.zeros(model.nv)
        self._damped = bool(np.any(self.damping))
        self.data = Data(model, thread_checked=False)  # private: one simulator per thread (docs)
        self._implicit_forces = self.forces + ((Gravity(),) if self.gravity else ())
        # Any: None without rows, which the methods test through ``soft`` (mypy cannot narrow through it)
        self.constraints: Any = constraints if constraints is not None and len(constraints) else None
        for value, what in ((compliance, "compliance"), (constraint_damping, "constraint_damping"),
                            (baumgarte, "baumgarte")):
            if not (np.isfinite(value) and value >= 0):
                raise InputError(f"{what} must be a finite number >= 0, got {value}")
        if constraint_law not in ("artisynth", "drumwright"):
            raise InputError(f"constraint_law must be 'artisynth' or 'drumwright', got {constraint_law!r}")
        self.constraint_law = constraint_law
        self.gdot = bool(gdot) and constraint_law == "drumwright"  # the Ġv terms belong to Drumwright's law
        self.compliance = float(compliance)
        self.constraint_damping = float(constraint_damping)
        self.baumgarte = float(baumgarte)
        if loop_method is not None and loop_method not in METHODS:  # checked now, not when a loop first acts
            raise InputError(f"unknown loop_method {loop_method!r} (None for the compiled default, or one of "
                             f"{', '.join(METHODS)})")
        self.loop_method = loop_method

    @property
    def soft(self) -> bool:
        """True when the constraints are compliant (α > 0)."""
        return self.constraints is not None and self.compliance > 0.0

    def constraint_force(self, q: Array, v: Array) -> Array | float:
        """``−Gᵀα⁻¹(φ + βGv)`` of soft constraints (zero without)."""
        if not self.soft:
            return 0.0
        phi, G, _ = self.constraints.evaluate(q)
        return -(G.T @ (phi + self.constraint_damping * (G @ v))) / self.compliance

    def constraint_energy(self, q: Array) -> float:
        """Potential ``½ φᵀα⁻¹φ`` of soft constraints (J; zero without)."""
        if not self.soft:
            return 0.0
        phi = self.constraints.evaluate(q)[0]
        return 0.5 * float(phi @ phi) / self.compliance

    def loop_regularization(self, dt: float) -> tuple[float, float, bool]:
        """``(erp, cfm, gdot)`` of soft constraints at the step dt: the rows
        ``G v⁺ + cfm·Λ = −erp·φ`` of the regularized KKT step (the ERP/CFM
        form of notes C7). ArtiSynth (§0.11): ``erp = γ/h``, ``cfm = γα/h²``,
        ``γ = (½ + β/h)⁻¹``; Drumwright (§4.2; α = 1/K, β = B/K):
        ``γ = (1 + β/h)⁻¹``, i.e. ``erp = K/(hK + B)``, ``cfm = 1/(h(hK + B))``;
        ``gdot``: the Ġv terms are added (Drumwright's law only)."""
        drumwright = self.constraint_law == "drumwright"
        gamma = 1.0 / ((1.0 if drumwright else 0.5) + self.constraint_damping / dt)
        return gamma / dt, gamma * self.compliance / dt ** 2, self.gdot

    def velocity_solve(self, A: Array, b: Array, q: Array, dt: float, v: Array | None = None) -> np.ndarray:
        """``v⁺`` from ``A v⁺ = b`` (an integrator's velocity equation)
        subject to the constraints at q, as the KKT systems above; ``v``:
        the velocity at the start of the step (Drumwright's Ġv terms)."""
        if self.constraints is None:
            return np.linalg.solve(A, b)
        phi, G, k = self.constraints.evaluate(q, v if self.soft and self.gdot and v is not None else None)
        if self.soft:
            erp, cfm, _ = self.loop_regularization(dt)
            R = np.eye(len(phi)) * cfm
            g = -erp * phi
            if k is not None:  # Ġv = −k; 1/(hK + B) = h·cfm
                Mhat = np.linalg.pinv(G @ np.linalg.solve(A, G.T), hermitian=True)
                g += dt * k + dt * cfm * (Mhat @ k)
        else:
            rows = independent_rows(G)
            G, R, g = G[rows], np.zeros((len(rows), len(rows))), np.zeros(len(rows))
        return kkt_solve(A, G, R, b, g)

    def element_forces(self, t: float, q: Array, v: Array, jacobians: bool = False
                       ) -> tuple[Array, Array | None, Array | None]:
        """(τ, K, D) of the force elements plus the model's joint damping."""
        nv = self.model.nv
        K: Any  # arrays with jacobians, else None
        D: Any
        if self.forces:
            tau, K, D = generalized_forces(self.forces, self.model, q, v, t, jacobians=jacobians)
        else:
            tau = np.zeros(nv)
            K, D = (np.zeros((nv, nv)), np.zeros((nv, nv))) if jacobians else (None, None)
        if self._damped:
            tau -= self.damping * v
            if jacobians:
                D[np.diag_indices(nv)] -= self.damping
        return tau, K, D

    def acceleration(self, t: float, q: Array, v: Array, tau: Array) -> Array:
        """``v̇`` (nv) at (t, q, v) under joint forces ``tau``."""
        f, _, _ = self.element_forces(t, q, v)
        if self.constraints is not None and not self.soft:
            if self.loop_method is None:  # compiled: method 2 of §8.5 with the sparse LᵀDL
                out = np.empty(self.model.nv)
                d = self.data
                # numba's stubs type a kernel call by the kernel's parameters: a star argument does not fit them
                if constrained_acceleration_kernel(self.model._tree, self.model.dof_parent,  # type: ignore[call-arg]
                                                   q, v, tau + f, self.gravity, self.baumgarte,
                                                   *self.constraints.kernel_args, d.poses, d.jac, d.spatial,
                                                   d.inertia6, d.M, out) != 0:
                    raise SimulationError("the mass matrix is not positive definite")
                return out
            phi, K, k = self.constraints.evaluate(q, v)
            w = self.baumgarte
            k_stab = k - 2.0 * w * (K @ v) - w * w * phi
            return closed_loop_forward_dynamics(self.model, q, v, tau + f, K, k_stab, self.loop_method,
                                                gravity=self.gravity, data=self.data)[0]
        if self.soft:
            f = f + self.constraint_force(q, v)
        return aba(self.model, q, v, tau + f, gravity=self.gravity, data=self.data).copy()

    def constrained_semi_implicit_euler(self, t: float, q: Array, v: Array, tau: Array, dt: float
                                        ) -> tuple[Array, Array]:
        """One compiled semi-implicit Euler step with the hard constraints
        (:func:`~multibody.constraints._kernels.constrained_sie_kernel`);
        the force elements enter as joint forces at (q, v)."""
        f, _, _ = self.element_forces(t, q, v)  # with the joint damping
        q1, v1 = np.empty_like(q), np.empty_like(v)
        d = self.data
        # numba's stubs type a kernel call by the kernel's parameters: a star argument does not fit them
        if constrained_sie_kernel(self.model._tree, self.model.dof_parent, q,  # type: ignore[call-arg]
                                  v, tau + f, dt, self.gravity, *self.constraints.kernel_args, d.poses, d.jac,
                                  d.spatial, d.inertia6, d.M, q1, v1) != 0:
            raise SimulationError("the mass matrix is not positive definite")
        return q1, v1

    def net_force(self, t: float, q: Array, v: Array, tau: Array) -> tuple[Array, Array]:
        """``(M, f)``: the mass matrix and ``τ + Σ f_e − C(q, v)`` (bias with
        gravity), for velocity-level steps."""
        f, _, _ = self.element_forces(t, q, v)
        M = self.mass_matrix(q)
        return M, tau + f - rnea(self.model, q, v, np.zeros(self.model.nv), gravity=self.gravity, data=self.data)

    def linearization(self, t: float, q: Array, v: Array, tau: Array) -> tuple[Array, Array, Array, Array]:
        """(M, f, K, D): mass matrix, net generalized force ``τ + Σ f_e − C``,
        and the force elements' ``K = ∂f/∂q`` and ``D = ∂f/∂v``."""
        K: Any  # arrays (jacobians=True)
        D: Any
        fe, K, D = generalized_forces(self._implicit_forces, self.model, q, v, t, jacobians=True)
        if self._damped:
            fe -= self.damping * v
            D[np.diag_indices(self.model.nv)] -= self.damping
        M = crba(self.model, q, self.data).copy()
        c = rnea(self.model, q, v, np.zeros(self.model.nv), gravity=False)  # Coriolis and centrifugal
        return M, tau + fe - c, K, D

    def mass_matrix(self, q: Array) -> Array:
        """``M(q)`` (a new array)."""
        return crba(self.model, q, self.data).copy()

    def inverse_mass_matrix(self, q: Array) -> Array:
        """``M(q)⁻¹`` (a new array; O(n²) recursion)."""
        return inverse_inertia(self.model, q, self.data).copy()

    def applied_forces(self, t: float, q: Array, v: Array, tau: Array) -> Array:
        """``τ + Σ f_e(q, v) − g(q)``: every generalized force except the
        velocity-product terms (those come from ``kinetic_gradient``)."""
        f, _, _ = self.element_forces(t, q, v)
        f += tau
        if self.gravity:
            f -= gravity_forces(self.model, q)
        return f

    def kinetic_gradient(self, q: Array, v: Array) -> Array:
        """``∂T/∂q`` at fixed v (:func:`~multibody.dynamics.kinetic_energy_gradient`)."""
        return kinetic_energy_gradient(self.model, q, v, self.data)
