"""Linear complementarity problems ``w = Aλ + b``, ``λ ≥ 0``, ``w ≥ 0``,
``λᵀw = 0`` (Drumwright §2, Featherstone §11.5)."""
import numpy as np
from scipy.linalg import LinAlgError, cholesky, solve_triangular
from scipy.optimize import nnls

from ..errors import SimulationError


def solve_spd_lcp(A, b):
    """Solve the LCP ``w = Aλ + b ≥ 0``, ``λ ≥ 0``, ``λᵀw = 0`` exactly for a
    symmetric positive definite A (e.g. ``G M⁻¹ Gᵀ`` of independent
    constraints). It is the optimality condition of the convex QP
    ``min ½λᵀAλ + bᵀλ`` s.t. ``λ ≥ 0``; with ``A = LLᵀ`` that QP is the
    non-negative least-squares problem ``min ‖Lᵀλ + L⁻¹b‖``, which the
    Lawson–Hanson active-set method (``scipy.optimize.nnls``) solves in
    finitely many steps, to round-off. Returns ``(λ, w)``."""
    A = np.asarray(A, dtype=float)
    b = np.asarray(b, dtype=float)
    if b.size == 0:
        return np.zeros(0), np.zeros(0)
    try:
        L = cholesky(A, lower=True)
    except LinAlgError:
        raise SimulationError("the LCP matrix is not positive definite (dependent unilateral constraints)") \
            from None
    lam, _ = nnls(L.T, solve_triangular(L, -b, lower=True))
    return lam, A @ lam + b
