"""L6: plots of trajectories (matplotlib, an optional extra: multibody[viz])."""
from .plots import plot_trajectory
