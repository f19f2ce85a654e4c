"""L2: kinematics of the tree — forward kinematics, velocities and
accelerations, frame Jacobians and J̇v, centre of mass, energies, momentum.
Every function takes one configuration or a batch (leading axis)."""
from .positions import forward_kinematics, frame_placements, frame_pose
from .motion import (body_motion, frame_acceleration, frame_velocity, jacobian, jacobian_dot_v,
                     joint_jacobians)
from .mass import (center_of_mass, centroidal_momentum, centroidal_momentum_matrix, com_jacobian,
                   kinetic_energy, momentum, potential_energy)

__all__ = ["forward_kinematics", "frame_placements", "frame_pose", "body_motion", "frame_velocity",
           "frame_acceleration", "jacobian", "jacobian_dot_v", "joint_jacobians", "center_of_mass", "com_jacobian",
           "kinetic_energy", "potential_energy", "momentum", "centroidal_momentum", "centroidal_momentum_matrix"]
