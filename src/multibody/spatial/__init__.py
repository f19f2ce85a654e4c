"""L0: spatial algebra and Lie groups, angular-first 6-vectors throughout.

Submodules: :mod:`.so3` (rotation vectors, Jacobians), :mod:`.quaternion`
(scalar-first Hamilton quaternions), :mod:`.euler` (URDF roll-pitch-yaw and XZX
angles, rate maps), :mod:`.se3` (poses, twists, Ad/ad, dexp), :mod:`.spatial`
(Featherstone Plücker transforms, cross products, rigid-body inertia).
Importing is cheap: kernels compile (or load from cache) on first call.
"""
from . import so3, quaternion, euler, se3, spatial

__all__ = ["so3", "quaternion", "euler", "se3", "spatial"]
