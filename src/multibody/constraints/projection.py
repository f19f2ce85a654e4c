"""Projection onto the constraint manifold (ArtiSynth §0.5): positions by
Newton iterations with the constraint Jacobian, velocities by one linear
projection — both the closest point in the kinetic-energy metric of M(q)
(compiled: :func:`~multibody.constraints._kernels.project_kernel`)."""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .._typing import Array, ArrayLike
from ..errors import InputError, SimulationError
from ._kernels import project_kernel

if TYPE_CHECKING:
    from ..model import Model
    from .loops import Constraints


def project(model: Model, constraints: Constraints, q: ArrayLike, v: ArrayLike, tol: float = 1e-12,
            max_iterations: int = 50) -> tuple[Array, Array, int]:
    """``(q⁺, v⁺, iterations)``: Newton iterations
    ``q ← q ⊕ −M⁻¹Gᵀ(GM⁻¹Gᵀ)⁺φ`` until ``max|φ| ≤ tol`` (redundant rows
    allowed: ``⁺`` drops dependent rows), then ``v ← v − M⁻¹Gᵀ(GM⁻¹Gᵀ)⁺Gv``
    at the final q. ``iterations`` is −1 if Newton did not converge."""
    q = np.ascontiguousarray(q, dtype=np.float64)
    v = np.ascontiguousarray(v, dtype=np.float64)
    q1, v1 = np.empty_like(q), np.empty_like(v)
    d = constraints._data
    # numba's stubs type a kernel call by the kernel's parameters: a star argument does not fit them
    it = project_kernel(model._tree, model.dof_parent, q, v, *constraints.kernel_args,  # type: ignore[call-arg]
                        d.poses, d.jac, d.spatial, d.inertia6, d.M, float(tol), int(max_iterations), q1, v1)
    if it == -2:
        raise SimulationError("the mass matrix is not positive definite")
    return q1, v1, it


def project_velocity(model: Model, constraints: Constraints, q: ArrayLike, v: ArrayLike) -> Array:
    """The velocity closest to v in the M(q) metric with ``G v = 0``:
    ``v − M⁻¹Gᵀ(GM⁻¹Gᵀ)⁺ G v``."""
    if not len(constraints):
        return np.array(v, dtype=float)
    return project(model, constraints, model.check_configuration(q), model.check_velocity(v), np.inf, 0)[1]


def project_positions(model: Model, constraints: Constraints, q: ArrayLike, tol: float = 1e-12,
                      max_iterations: int = 50) -> tuple[Array, int]:
    """Newton iterations ``q ← q ⊕ −M⁻¹Gᵀ(GM⁻¹Gᵀ)⁺ φ`` until ``max |φ| ≤
    tol``: the configuration satisfying the constraints nearest to q in the
    kinetic-energy metric, to first order (ArtiSynth §0.5). Also the initial
    assembly of a model from an inconsistent configuration. Returns
    ``(q, iterations)``; raises InputError naming the worst constraint and
    its residual if the iterations do not converge (e.g. placements that
    cannot be assembled)."""
    q = model.check_configuration(q)
    if not len(constraints):
        return q.copy(), 0
    q1, _, it = project(model, constraints, q, np.zeros(model.nv), tol, max_iterations)
    if it >= 0:
        return q1, it
    phi = constraints.evaluate(q1)[0]
    r = int(np.argmax(np.abs(phi)))
    raise InputError(f"cannot assemble the constraints: after {max_iterations} Newton iterations constraint "
                     f"'{constraints.labels[r]}' still has residual {abs(phi[r]):.3g} (row {r})")
