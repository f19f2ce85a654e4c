"""L2: dynamics of the tree — inverse dynamics (RNEA), the joint-space
inertia (CRBA) and its sparse factorization, forward dynamics (ABA, or
CRBA + LᵀDL). Every function takes one state or a batch."""
from .forward import aba, forward_dynamics
from .inertia import InertiaFactor, crba, kinetic_energy_gradient, dof_parents, inverse_inertia, operational_space_inverse_inertia
from .inverse import bias_forces, gravity_forces, rnea
from .floating import floating_base_forward_dynamics, floating_base_inverse_dynamics
from .hybrid import hybrid_dynamics
from .regressor import inertial_parameters, regressor
from .closed_loop import closed_loop_forward_dynamics, closed_loop_inverse_dynamics, null_space_basis
from .derivatives import aba_derivatives, rnea_derivatives
from .jacobian_rate import frame_jacobian_time_variation, joint_jacobians_time_variation
from .kinematic_derivatives import body_motion_derivatives, frame_motion_derivatives

__all__ = ["rnea", "bias_forces", "gravity_forces", "crba", "InertiaFactor", "dof_parents", "inverse_inertia",
           "operational_space_inverse_inertia", "kinetic_energy_gradient", "aba", "forward_dynamics",
           "floating_base_forward_dynamics", "floating_base_inverse_dynamics", "hybrid_dynamics", "regressor",
           "inertial_parameters", "closed_loop_forward_dynamics", "closed_loop_inverse_dynamics", "null_space_basis",
           "rnea_derivatives", "aba_derivatives", "joint_jacobians_time_variation", "body_motion_derivatives",
           "frame_motion_derivatives", "frame_jacobian_time_variation"]
