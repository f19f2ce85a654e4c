"""L4: formulations — how the equations of motion of a model are posed for
an integrator. Today: reduced (joint) coordinates (Featherstone)."""
from .reduced import ReducedSystem
