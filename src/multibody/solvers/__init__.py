"""L3: solvers of the constraint problems a step poses (DESIGN.md): the
linear complementarity problem of unilateral constraints (``lcp``), and the
contact problem with friction (docs/contact.md, "Contact solvers"):
projected Gauss–Seidel (``pgs``), Lemke's method and the friction LCPs
(``lemke``), principal pivoting with columns on demand for the
frictionless LCP (``pivoting``), Newton's method on soft contact with MuJoCo's pyramid
(``newton``), their residual (``residual``), the convex reference modes by
clarabel (``qp``) and the wrapper ``solve_contact`` (``contact``).

Only ``lcp`` is imported with the package (the simulator's limit solver
needs it at start-up); the contact names load on first access (PEP 562:
importing and decorating their kernels cost ~12 ms of every
``import multibody``). No function shares its name with a submodule."""
import importlib

from .lcp import solve_spd_lcp

_LAZY = {
    "solve_contact": "contact", "ContactResult": "contact", "ContactResidual": "contact", "METHODS": "contact",
    "residual_of": "contact", "contact_residual": "residual", "CONE": "residual", "BOX": "residual",
    "PYRAMID": "residual", "projected_gauss_seidel": "pgs", "projected_gauss_seidel_subspace": "pgs",
    "disk_minimum": "pgs", "lemke_lcp": "lemke",
    "pyramid_lcp": "lemke", "box_lcp": "lemke", "soft_pyramid_newton": "newton", "principal_pivoting": "pivoting",
}

__all__ = ["solve_spd_lcp", *_LAZY]


def __getattr__(name):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value
