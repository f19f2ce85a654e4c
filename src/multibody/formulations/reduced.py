"""Reduced-coordinate equations of motion ``M(q) v̇ + C(q, v) = τ + f(t, q, v)``
(Featherstone Eq. 1.1), the system every integrator of
:mod:`multibody.integrators` steps: τ are applied joint forces, f the sum
of the force elements (:mod:`multibody.forces`), C the bias forces with
gravity (RNEA at v̇ = 0)."""
import numpy as np

from ..dynamics import aba, crba, gravity_forces, inverse_inertia, kinetic_energy_gradient, rnea
from ..forces import Gravity, generalized_forces
from ..model.data import Data


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
    issue)."""

    def __init__(self, model, forces=(), gravity=True, joint_damping=True):
        self.model = model
        self.forces = tuple(forces)
        self.gravity = bool(gravity)
        # the model's own viscous joint damping (URDF <dynamics damping>, MJCF damping), applied
        # as MuJoCo does: τ = −b ⊙ v, D = −diag(b)
        self.damping = model.damping.copy() if joint_damping else np.zeros(model.nv)
        self._damped = bool(np.any(self.damping))
        self.data = Data(model)
        self._implicit_forces = self.forces + ((Gravity(),) if self.gravity else ())

    def element_forces(self, t, q, v, jacobians=False):
        """(τ, K, D) of the force elements plus the model's joint damping."""
        nv = self.model.nv
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

    def acceleration(self, t, q, v, tau):
        """``v̇`` (nv) at (t, q, v) under joint forces ``tau``."""
        f, _, _ = self.element_forces(t, q, v)
        return aba(self.model, q, v, tau + f, gravity=self.gravity, data=self.data).copy()

    def linearization(self, t, q, v, tau):
        """(M, f, K, D): mass matrix, net generalized force ``τ + Σ f_e − C``,
        and the force elements' ``K = ∂f/∂q`` and ``D = ∂f/∂v``."""
        fe, K, D = generalized_forces(self._implicit_forces, self.model, q, v, t, jacobians=True)
        if self._damped:
            fe -= self.damping * v
            D[np.diag_indices(self.model.nv)] -= self.damping
        M = crba(self.model, q, self.data).copy()
        c = rnea(self.model, q, v, np.zeros(self.model.nv), gravity=False)  # Coriolis and centrifugal
        return M, tau + fe - c, K, D

    def mass_matrix(self, q):
        """``M(q)`` (a new array)."""
        return crba(self.model, q, self.data).copy()

    def inverse_mass_matrix(self, q):
        """``M(q)⁻¹`` (a new array; O(n²) recursion)."""
        return inverse_inertia(self.model, q, self.data)

    def applied_forces(self, t, q, v, tau):
        """``τ + Σ f_e(q, v) − g(q)``: every generalized force except the
        velocity-product terms (those come from ``kinetic_gradient``)."""
        f, _, _ = self.element_forces(t, q, v)
        f += tau
        if self.gravity:
            f -= gravity_forces(self.model, q)
        return f

    def kinetic_gradient(self, q, v):
        """``∂T/∂q`` at fixed v (:func:`~multibody.dynamics.kinetic_energy_gradient`)."""
        return kinetic_energy_gradient(self.model, q, v, self.data)
