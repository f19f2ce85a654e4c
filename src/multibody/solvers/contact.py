"""``solve_contact``: one entry point to every contact solver, validating
its inputs (docs/contact.md, "Contact solvers")."""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .._status import NOT_CONVERGED, describe
from .._typing import Array, ArrayLike
from ..errors import ContactSolveError, InputError, NonFiniteError
from .lemke import box_lcp, pyramid_lcp
from .pgs import projected_gauss_seidel
from .pivoting import principal_pivoting
from .residual import BOX, CONE, PYRAMID, contact_residual

METHODS = {  # method: the friction models it solves ("none": frictionless, μ taken as 0)
    "pgs": ("cone", "box", "none"),
    "lemke": ("pyramid", "box", "none"),
    "pivoting": ("none",),
    "anitescu": ("cone", "box"),
    "anitescu_hart": ("pyramid",),
    "staggered": ("cone", "box"),
}
_MODEL = {"cone": CONE, "box": BOX, "pyramid": PYRAMID, "none": CONE}


class ContactResidual(NamedTuple):
    """:func:`~multibody.solvers.residual.contact_residual` (see there for
    the exact definitions): all 0 at a solution of the contact problem."""
    normal: float           # max_c |min(W_nn λ_n, u_n)|, a velocity
    cone: float             # max_c of the friction-set violation, an impulse
    complementarity: float  # max_c |λ_n u_n|
    dissipation: float      # max_c |λ_t·u_t − μλ_n min over F of x·u_t|


class ContactResult(NamedTuple):
    """What :func:`solve_contact` returns."""
    lam: np.ndarray      # (m,) impulses in the (n, t1, t2) row layout
    iterations: int      # PGS sweeps, Lemke pivots, clarabel iterations, staggered rounds
    converged: bool      # the method's own criterion (not a statement about the residual)
    residual: ContactResidual


def _array(x: ArrayLike, name: str, ndim: int) -> Array:
    a = np.asarray(x)
    if a.dtype.kind not in "biuf" or a.ndim != ndim:
        raise InputError(f"{name} must be a real {ndim}-D array, got {a.dtype} with shape {a.shape}")
    a = np.ascontiguousarray(a, dtype=np.float64)
    bad = np.flatnonzero(~np.isfinite(a.ravel()))
    if bad.size:
        raise NonFiniteError(f"{name} has a non-finite entry at index {np.unravel_index(bad[0], a.shape)}")
    return a


def check_contact_problem(W: ArrayLike, b: ArrayLike, mu: ArrayLike) -> tuple[Array, Array, Array]:
    """``(W, b, mu)`` as float64 C-contiguous arrays, checked: W (m, m)
    symmetric with a non-negative diagonal, b (m,), m = 3 nc, mu (nc,) ≥ 0,
    all finite; raises InputError (NonFiniteError) naming the array."""
    W, b, mu = _array(W, "W", 2), _array(b, "b", 1), _array(mu, "mu", 1)
    m = b.size
    if m % 3:
        raise InputError(f"b has {m} rows: the contact rows come in triples (n, t1, t2), 3 per contact")
    if W.shape != (m, m):
        raise InputError(f"W must have shape ({m}, {m}) to match b, got {W.shape}")
    if mu.size != m // 3:
        raise InputError(f"mu must have shape ({m // 3},): one friction coefficient per contact, got {mu.shape}")
    if (mu < 0).any():
        raise InputError(f"mu must be >= 0: mu[{np.flatnonzero(mu < 0)[0]}] = {mu[mu < 0][0]}")
    if m:
        scale = np.abs(W).max()
        asym = np.abs(W - W.T).max()
        if asym > 1e-10 * scale:
            raise InputError(f"W must be symmetric (J M⁻¹ Jᵀ): max |W - Wᵀ| = {asym:.3g}")
        if (np.diag(W) < -1e-12 * scale).any():
            i = np.flatnonzero(np.diag(W) < -1e-12 * scale)[0]
            raise InputError(f"W must be positive semi-definite: W[{i}, {i}] = {W[i, i]:.3g} < 0")
    return W, b, mu


def residual_of(W: ArrayLike, b: ArrayLike, mu: ArrayLike, lam: ArrayLike, friction: str = "cone",
                k: int = 4) -> ContactResidual:
    """The :class:`ContactResidual` of ``lam`` for the problem (W, b, mu)
    with the friction set ``friction`` ("cone", "box" or "pyramid" with k
    sides), by the compiled :func:`contact_residual`."""
    model = _MODEL.get(friction)
    if model is None:
        raise InputError(f"friction must be one of {sorted(_MODEL)}, got {friction!r}")
    W, b, mu = check_contact_problem(W, b, mu)
    lam = _array(lam, "lam", 1)
    if lam.size != b.size:
        raise InputError(f"lam must have shape ({b.size},), got {lam.shape}")
    return ContactResidual(*contact_residual(W, b, mu, lam, model, int(k)))


def solve_contact(W: ArrayLike, b: ArrayLike, mu: ArrayLike, method: str = "pgs", friction: str = "cone", *,
                  k: int = 4, lam0: ArrayLike | None = None, tol: float | None = None,
                  max_iterations: int | None = None, omega: float = 1.0) -> ContactResult:
    """Solve the contact problem ``u = Wλ + b``, ``0 ≤ λ_n ⊥ u_n ≥ 0``,
    friction by ``friction`` (docs/contact.md, "Contact solvers"):

    * ``method="pgs"`` (``friction`` "cone" or "box"): compiled projected
      Gauss–Seidel (:func:`~multibody.solvers.pgs.projected_gauss_seidel`), warm-started from
      ``lam0`` (zeros if None), stopping when a sweep changes λ by at most
      ``tol`` (default 1e-10) relative to ``max|λ|`` or after ``max_iterations`` sweeps
      (default 1000; not converged: ``converged`` False, λ the last sweep,
      no error), over-relaxed by ``omega`` in (0, 2);
    * ``"lemke"`` ("pyramid" with ``k`` sides, or "box"): the
      Stewart–Trinkle LCP by Lemke's method (``max_iterations`` caps the
      pivots, default 50·N + 100 for the LCP's N unknowns);
    * ``"pivoting"`` ("none"): the frictionless LCP of the normal rows by
      principal pivoting with columns on demand
      (:func:`~multibody.solvers.pivoting.principal_pivoting`;
      ``max_iterations`` caps the pivots, default 50·nc + 100);
    * ``friction="none"`` (pgs, lemke, pivoting): frictionless, μ taken as 0;
    * ``"anitescu"`` ("cone": the true second-order cone, or "box"),
      ``"anitescu_hart"`` ("pyramid"): the convex relaxations, by clarabel
      (not Coulomb while sliding: ``u_n = μ‖u_t‖``);
    * ``"staggered"`` ("cone" or "box"): staggered projections by clarabel,
      ``tol`` (default 1e-8: clarabel's own accuracy is ~1e-11) on the
      relative change of λ_n in the W_nn norm, ``max_iterations`` rounds
      (default 100), warm-started from ``lam0``.

    W (m, m) symmetric positive semi-definite, b (m,), m = 3 nc, rows
    (n, t1, t2) per contact, mu (nc,) ≥ 0. Returns a :class:`ContactResult`
    whose residual is that of ``friction``. Raises InputError (bad shapes,
    non-finite values, negative mu, an unknown method or one that does not
    solve ``friction``) and ContactSolveError (a SimulationError) when
    Lemke's method or clarabel fail."""
    if method not in METHODS:
        raise InputError(f"method must be one of {sorted(METHODS)}, got {method!r}")
    if friction not in METHODS[method]:
        hint = " (Lemke solves polyhedral friction: use friction='pyramid' with k sides)" \
            if method == "lemke" and friction == "cone" else ""
        raise InputError(f"method {method!r} solves friction {' or '.join(METHODS[method])}, "
                         f"not {friction!r}{hint}")
    if friction == "pyramid" and (int(k) != k or k < 3):
        raise InputError(f"k must be an integer >= 3 (the pyramid's sides), got {k!r}")
    k = int(k)
    if tol is None:
        tol = 1e-8 if method == "staggered" else 1e-10
    if not tol > 0:
        raise InputError(f"tol must be > 0, got {tol!r}")
    if max_iterations is not None and (int(max_iterations) != max_iterations or max_iterations < 1):
        raise InputError(f"max_iterations must be an integer >= 1, got {max_iterations!r}")
    if not 0 < omega < 2:
        raise InputError(f"omega must be in (0, 2), got {omega!r}")
    W, b, mu = check_contact_problem(W, b, mu)
    if friction == "none":
        mu = np.zeros_like(mu)
    m = b.size
    lam = np.zeros(m)
    if lam0 is not None:
        lam0 = _array(lam0, "lam0", 1)
        if lam0.size != m:
            raise InputError(f"lam0 must have shape ({m},), got {lam0.shape}")
        lam[:] = lam0
    model = _MODEL[friction]
    if m == 0:
        return ContactResult(lam, 0, True, ContactResidual(0.0, 0.0, 0.0, 0.0))
    if method == "pgs":
        status = projected_gauss_seidel(W, b, mu, lam, model, float(tol), int(max_iterations or 1000), float(omega))
        if status < 0 and status != NOT_CONVERGED:  # NOT_CONVERGED keeps its λ; anything else is a failure
            raise ContactSolveError(f"projected Gauss–Seidel: {describe(status, 'contact')}")
        iterations, converged = (status, True) if status >= 0 else (int(max_iterations or 1000), False)
    elif method == "lemke":
        nf = int((mu > 0).sum())
        n = m // 3 + nf * (k + 1 if friction == "pyramid" else 6)
        cap = int(max_iterations or 50 * n + 100)
        status = pyramid_lcp(W, b, mu, k, lam, cap) if friction == "pyramid" else box_lcp(W, b, mu, lam, cap)
        if status < 0:
            raise ContactSolveError(f"Lemke's method: {describe(status, 'contact')}")
        iterations, converged = status, True
    elif method == "pivoting":
        nc = m // 3
        A, z, w = np.ascontiguousarray(W[::3, ::3]), np.zeros(nc), np.zeros(nc)
        ints = np.zeros((3, nc), np.int64)
        status = principal_pivoting(A, np.ascontiguousarray(b[::3]), z, w, np.zeros((nc, nc)),
                                    ints[0], ints[1], ints[2], np.zeros((nc, nc)), np.zeros(nc), np.zeros(nc),
                                    int(max_iterations or 50 * nc + 100))
        if status < 0:
            raise ContactSolveError(f"principal pivoting: {describe(status, 'contact')}")
        lam[:] = 0.0
        lam[::3] = z
        iterations, converged = status, True
    else:
        from . import qp  # here: clarabel and scipy.sparse are imported by the reference modes only
        if method == "anitescu":
            lam, iterations = qp.anitescu_qp(W, b, mu, model)
            converged = True
        elif method == "anitescu_hart":
            lam, iterations = qp.anitescu_hart_qp(W, b, mu, k)
            converged = True
        else:
            lam, iterations, converged = qp.staggered_projections(W, b, mu, model, lam, tol, int(max_iterations or 100))
    return ContactResult(lam, int(iterations), bool(converged),
                         ContactResidual(*contact_residual(W, b, mu, lam, model, k)))
