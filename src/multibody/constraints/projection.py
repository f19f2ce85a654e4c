"""Projection onto the constraint manifold (ArtiSynth §0.5): positions by
Newton iterations with the constraint Jacobian, velocities by one linear
projection — both the closest point in the kinetic-energy metric of M(q)."""
import numpy as np

from ..dynamics import crba
from ..errors import InputError


def _projector(model, q, G, data=None):
    """``X = M⁻¹Gᵀ`` and ``A⁺`` with A = G M⁻¹ Gᵀ (pseudo-inverse: redundant
    rows are allowed)."""
    X = np.linalg.solve(crba(model, q, data), G.T)
    return X, np.linalg.pinv(G @ X, rcond=1e-10, hermitian=True)


def project_velocity(model, constraints, q, v):
    """The velocity closest to v in the M(q) metric with ``G v = 0``:
    ``v − M⁻¹Gᵀ(GM⁻¹Gᵀ)⁺ G v``."""
    _, G, _ = constraints.evaluate(q)
    if not len(constraints):
        return np.array(v, dtype=float)
    X, Ainv = _projector(model, q, G, constraints._data)
    return v - X @ (Ainv @ (G @ v))


def project_positions(model, constraints, q, tol=1e-12, max_iterations=50):
    """Newton iterations ``q ← q ⊕ −M⁻¹Gᵀ(GM⁻¹Gᵀ)⁺ φ`` until ``max |φ| ≤
    tol``: the configuration satisfying the constraints nearest to q in the
    kinetic-energy metric, to first order (ArtiSynth §0.5). Also the initial
    assembly of a model from an inconsistent configuration. Returns
    ``(q, iterations)``; raises InputError naming the worst constraint and
    its residual if the iterations do not converge (e.g. placements that
    cannot be assembled)."""
    q = model.check_configuration(q).copy()
    phi = np.zeros(0)
    for it in range(max_iterations + 1):
        phi, G, _ = constraints.evaluate(q)
        if not len(phi) or np.abs(phi).max() <= tol:
            return q, it
        if it == max_iterations:
            break
        X, Ainv = _projector(model, q, G, constraints._data)
        q = model.integrate(q, -(X @ (Ainv @ phi)))
    r = int(np.argmax(np.abs(phi)))
    raise InputError(f"cannot assemble the constraints: after {max_iterations} Newton iterations constraint "
                     f"'{constraints.labels[r]}' still has residual {abs(phi[r]):.3g} (row {r})")
