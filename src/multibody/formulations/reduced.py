"""Reduced-coordinate equations of motion ``M(q) v̇ + C(q, v) = τ + f(t, q, v)``
(Featherstone Eq. 1.1), the system every integrator of
:mod:`multibody.integrators` steps: τ are applied joint forces, f the sum
of the force elements (:mod:`multibody.forces`), C the bias forces with
gravity (RNEA at v̇ = 0)."""
import numpy as np

from ..dynamics import aba, crba, rnea
from ..forces import Gravity, generalized_forces
from ..model.data import Data


class ReducedSystem:
    """A model in joint coordinates plus force elements.

    ``acceleration(t, q, v, tau)`` is forward dynamics (ABA) with the force
    elements added to τ; ``linearization(t, q, v, tau)`` gives what the
    implicit integrators need: ``M``, the generalized force ``f = τ +
    Σ elements − g(q) − c(q, v)`` and its Jacobians ``K = ∂f/∂q`` (tangent
    space) and ``D = ∂f/∂v``. Gravity is linearized exactly (the Gravity
    element's analytic K); the Coriolis and centrifugal terms c(q, v) are
    explicit (their derivatives come with the RNEA derivatives of a later
    issue)."""

    def __init__(self, model, forces=(), gravity=True):
        self.model = model
        self.forces = tuple(forces)
        self.gravity = bool(gravity)
        self.data = Data(model)
        self._implicit_forces = self.forces + ((Gravity(),) if self.gravity else ())

    def element_forces(self, t, q, v, jacobians=False):
        if not self.forces:
            nv = self.model.nv
            return (np.zeros(nv), np.zeros((nv, nv)), np.zeros((nv, nv))) if jacobians else (np.zeros(nv),
                                                                                             None, None)
        return generalized_forces(self.forces, self.model, q, v, t, jacobians=jacobians)

    def acceleration(self, t, q, v, tau):
        """``v̇`` (nv) at (t, q, v) under joint forces ``tau``."""
        f, _, _ = self.element_forces(t, q, v)
        return aba(self.model, q, v, tau + f, gravity=self.gravity, data=self.data).copy()

    def linearization(self, t, q, v, tau):
        """(M, f, K, D): mass matrix, net generalized force ``τ + Σ f_e − C``,
        and the force elements' ``K = ∂f/∂q`` and ``D = ∂f/∂v``."""
        fe, K, D = generalized_forces(self._implicit_forces, self.model, q, v, t, jacobians=True)
        M = crba(self.model, q, self.data).copy()
        c = rnea(self.model, q, v, np.zeros(self.model.nv), gravity=False)  # Coriolis and centrifugal
        return M, tau + fe - c, K, D
