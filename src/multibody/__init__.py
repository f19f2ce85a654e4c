"""multibody: articulated rigid-body dynamics and simulation from Python.

Conventions (DESIGN.md): spatial vectors angular first, quaternions scalar
first, free-joint velocities in the body frame, SI units.
"""
# First: Numba's cache stamps of multibody's kernels cover the helpers they import
# (_kernel_cache); it must be in place before any kernel module is imported.
from . import _kernel_cache
_kernel_cache.install()
from .errors import (ContactSolveError, InputError, ModelError, ModelFileError, ModelWarning, MultibodyError,
                     SimulationError, SimulationWarning)
from .model import Data, ModelBuilder, Model
from .io import load_mjcf, load_srdf, load_urdf
from .kinematics import (body_motion, center_of_mass, centroidal_momentum, centroidal_momentum_matrix,
                         com_jacobian, forward_kinematics, frame_acceleration, frame_placements, frame_pose,
                         frame_velocity, jacobian, jacobian_dot_v, joint_jacobians, kinetic_energy, momentum,
                         potential_energy)

from .dynamics import (aba, bias_forces, crba, kinetic_energy_gradient, floating_base_forward_dynamics, floating_base_inverse_dynamics,
                       forward_dynamics, gravity_forces, hybrid_dynamics, inertial_parameters, inverse_inertia,
                       operational_space_inverse_inertia, regressor, rnea, rnea_derivatives, aba_derivatives,
                       body_motion_derivatives, joint_jacobians_time_variation, frame_motion_derivatives, frame_jacobian_time_variation)

from . import forces
from .forces.actuators import Actuator, Motor, Muscle, PositionServo, TendonSpring, VelocityServo
from .constraints.contact import Compliance, add_foundation_elements
from .simulation import ComputedTorque, PD, Sensors, Simulator, State, Trajectory, load_sensors
from .simulation.sweep import Design, Grid, RandomDesign, SweepResult, sweep

# The one place the version is written (pyproject.toml reads it: [tool.setuptools.dynamic]).
__version__ = "0.1.0"

def __getattr__(name):
    """``multibody.viz`` (an optional extra: viser, matplotlib) is imported
    on first use, so ``import multibody as mb; mb.viz.show(model)`` works
    and ``import multibody`` stays cheap."""
    if name == "viz":
        import importlib
        return importlib.import_module(".viz", __name__)
    raise AttributeError(f"module 'multibody' has no attribute '{name}'")


__all__ = [
    # errors (multibody.errors)
    "MultibodyError", "ModelError", "ModelFileError", "InputError", "SimulationError", "ContactSolveError",
    "ModelWarning", "SimulationWarning",
    # models and loading
    "Model", "ModelBuilder", "Data", "load_urdf", "load_mjcf", "load_srdf",
    # kinematics
    "forward_kinematics", "frame_placements", "frame_pose", "body_motion", "frame_velocity", "frame_acceleration",
    "jacobian", "jacobian_dot_v", "joint_jacobians", "center_of_mass", "com_jacobian", "kinetic_energy",
    "potential_energy", "momentum", "centroidal_momentum", "centroidal_momentum_matrix",
    # dynamics
    "rnea", "bias_forces", "gravity_forces", "crba", "inverse_inertia", "operational_space_inverse_inertia",
    "kinetic_energy_gradient", "aba", "forward_dynamics", "floating_base_forward_dynamics",
    "floating_base_inverse_dynamics", "hybrid_dynamics", "regressor", "inertial_parameters", "rnea_derivatives",
    "aba_derivatives", "body_motion_derivatives", "joint_jacobians_time_variation", "frame_motion_derivatives", "frame_jacobian_time_variation",
    # forces, actuators, compliance
    "forces", "Actuator", "Motor", "PositionServo", "VelocityServo", "Muscle", "TendonSpring", "Compliance",
    "add_foundation_elements",
    # simulation
    "Simulator", "State", "Trajectory", "PD", "ComputedTorque", "Sensors", "load_sensors",
    # parameter sweeps (docs/scale.md)
    "sweep", "Grid", "RandomDesign", "Design", "SweepResult",
]
