"""L3: constraints. Each gives its position error φ (φ ≥ 0 for unilateral
ones), its Jacobian G = ∂φ/∂q in velocity coordinates, and its velocity
product term k (φ̈ = G v̇ − k). Joint position limits (unilateral); loop
joints and couplings (bilateral); contact at the acceleration level
(``contact_forward_dynamics``; the simulator's contact table and stage are
``contact`` and ``_contact``)."""
from .contact_dynamics import ContactDynamics, contact_forward_dynamics
from .limits import JointLimits
from .loops import Constraints, loop_rows
from .projection import project, project_positions, project_velocity

__all__ = ["Constraints", "ContactDynamics", "JointLimits", "contact_forward_dynamics", "loop_rows", "project",
           "project_positions", "project_velocity"]
