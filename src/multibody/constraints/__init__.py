"""L3: constraints. Each gives its position error φ (φ ≥ 0 for unilateral
ones), its Jacobian G = ∂φ/∂q in velocity coordinates, and its velocity
product term k (φ̈ = G v̇ − k). Joint position limits (unilateral); loop
joints and couplings (bilateral)."""
from .limits import JointLimits
from .loops import Constraints, loop_rows
from .projection import project, project_positions, project_velocity

__all__ = ["Constraints", "JointLimits", "loop_rows", "project", "project_positions", "project_velocity"]
