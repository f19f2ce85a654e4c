"""L3: solvers of the constraint problems a step poses (DESIGN.md):
today the linear complementarity problem of unilateral constraints."""
from .lcp import solve_spd_lcp

__all__ = ["solve_spd_lcp"]
