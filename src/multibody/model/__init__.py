"""L1: the immutable Model (flat arrays for kernels), the joint catalog,
configuration-space operations, the ModelBuilder and the Data workspace."""
from .builder import ModelBuilder
from .data import Data
from .model import LOOP_JOINT_TYPES, Coupling, EqualityConstraint, FrameInfo, Geometry, JointInfo, LoopJoint, Model
from .geometry import CollisionPair
from .joints import JOINT_TYPES

__all__ = ["Model", "ModelBuilder", "Data", "JointInfo", "FrameInfo", "Geometry", "CollisionPair", "LoopJoint",
           "Coupling", "EqualityConstraint", "JOINT_TYPES", "LOOP_JOINT_TYPES"]
