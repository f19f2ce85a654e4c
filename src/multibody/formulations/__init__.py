"""L4: formulations — how the equations of motion of a model are posed for
an integrator: reduced (joint) coordinates (Featherstone) and, for now as
equations without an integrator, maximal coordinates (Sueda §1)."""
from .bisp import BispSystem, JointFriction, bisp_step
from .maximal import MaximalSystem
from .redmax import HyperReducedSystem, RedmaxFormulation, RedmaxSystem
from .reduced import ReducedSystem
from .attachments import AttachmentCycleError
from .particles import ParticleSystem, ParticleTrajectory
