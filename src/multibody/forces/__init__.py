"""L3: force elements with exact Jacobians (docs/forces.md).

Every element gives ``(τ, K, D) = element.evaluate(model, q, v, t,
jacobians=True)``: the generalized force ``τ`` (nv) applied to the system,
``K = ∂τ/∂q`` with q perturbed in the tangent space (``model.integrate``)
and ``D = ∂τ/∂v`` (DESIGN.md: a spring has negative-definite K; implicit
integrators solve with ``M - hD - h²K``). :func:`generalized_forces` sums
a list of elements sharing one kinematics pass.
"""
from .base import ForceElement, generalized_forces, total_potential_energy
from .body import BodyDamping, ExternalWrench, Gravity, PointForce
from .joint import JointCoulombFriction, JointDamper, JointSpring, joint_spring_elements
from .springs import (CableLaw, ForceLaw, FrameSpring, GreenStrainLaw, LinearLaw, PointToPointSpring,
                      StrainLaw)

__all__ = ["ForceElement", "generalized_forces", "total_potential_energy", "Gravity", "JointSpring",
           "JointDamper", "JointCoulombFriction", "joint_spring_elements", "ExternalWrench", "PointForce", "BodyDamping",
           "PointToPointSpring", "FrameSpring", "ForceLaw", "LinearLaw", "StrainLaw", "GreenStrainLaw",
           "CableLaw"]

from .paths import Path  # noqa: E402  (spatial tendon / muscle paths, docs/biomechanics.md)

__all__ += ["Path"]

from .muscle_curves import MuJoCoCurves, MuscleCurves, SuedaCurves  # noqa: E402
from .muscles import HillMuscle, MultiPointSpring, mujoco_acc0  # noqa: E402

__all__ += ["MuscleCurves", "SuedaCurves", "MuJoCoCurves", "HillMuscle", "MultiPointSpring", "mujoco_acc0"]
