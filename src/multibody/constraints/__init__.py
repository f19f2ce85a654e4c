"""L3: constraints. Each gives its position error φ (φ ≥ 0 for unilateral
ones), its Jacobian G = ∂φ/∂q in velocity coordinates, and its velocity
bias. Today: joint position limits."""
from .limits import JointLimits

__all__ = ["JointLimits"]
