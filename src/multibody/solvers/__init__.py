"""L3: solvers of the constraint problems a step poses (DESIGN.md): the
linear complementarity problem of unilateral constraints (``lcp``), and the
contact problem with friction (docs/contact.md, "Contact solvers"):
projected Gauss–Seidel (``pgs``), Lemke's method and the friction LCPs
(``lemke``), their residual (``residual``), the convex reference modes by
clarabel (``qp``, imported on first use) and the wrapper ``solve_contact``."""
from .contact import ContactResidual, ContactResult, METHODS, residual, solve_contact
from .lcp import solve_spd_lcp
from .lemke import box_lcp, lemke, pyramid_lcp
from .pgs import disk_minimum, pgs
from .residual import BOX, CONE, PYRAMID, contact_residual

__all__ = ["solve_spd_lcp", "solve_contact", "ContactResult", "ContactResidual", "METHODS", "residual",
           "contact_residual", "pgs", "disk_minimum", "lemke", "pyramid_lcp", "box_lcp", "CONE", "BOX", "PYRAMID"]
