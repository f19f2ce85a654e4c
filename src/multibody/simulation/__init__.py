"""L5: the simulator — a formulation, an integrator and (later) a
constraint solver composed over one Model — and recorded trajectories."""
from .control import PD, ComputedTorque
from .simulator import Checkpoint, Options, Simulator, State
from .trajectory import Trajectory, model_fingerprint
from .sensors import Sensors
from .mjcf_sensors import load_sensors
