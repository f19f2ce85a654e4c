"""Reference modes of the contact problem as convex programs, solved by
clarabel (an interior-point conic solver; Python, not compiled: a step
leaves compiled code once to call it). docs/contact.md, "Contact solvers".

With ``u = Wλ + b`` (residual.py), every program here minimizes
``½λᵀWλ + bᵀλ`` (whose gradient is u) over a convex set:

* :func:`nonnegative_qp`: λ ≥ 0 (frictionless contact: its KKT conditions
  are exactly ``0 ≤ λ ⊥ Wλ + b ≥ 0``);
* :func:`anitescu_qp`: Anitescu's convex relaxation (Anitescu 2006), λ_n ≥ 0
  and ``(μλ_n, λ_t)`` in the true second-order cone per contact (or the
  box). Its KKT conditions put u in the dual cone ``u_n ≥ μ‖u_t‖`` with
  ``λ ⊥ u``: λ_t = −μλ_n u_t/‖u_t‖ (maximal dissipation) but, at a sliding
  contact, ``u_n = μ‖u_t‖ > 0``: the contact separates while it slides.
  This is not Coulomb's law; it coincides with it where contacts stick
  (u_t = 0);
* :func:`anitescu_hart_qp`: the same relaxation over the k-sided pyramid
  in Sueda's parametrization (§1.13, eq. 1.83–1.88, seed-001 item 25, with
  erratum S6: ``MΦ = f̃ + Cᵀλ``, so the linear term is ``+bᵀλ``): λ_n = α,
  ``λ_t = Σβ_j d_j``, ``α, β ≥ 0``, ``μα − Σβ ≥ 0``; at a sliding contact
  ``u_n = μγ`` with ``γ = max_j(−d_j·u_t)``;
* :func:`staggered_projections`: Kaufman et al.'s staggered projections
  (Sueda §2.11, Alg. 7, seed-001 item 39, errata S7: the admissible set is
  ``u_n ≥ 0``, no sign flips with our ``u = Wλ + b``): alternate the
  normal QP (λ_n ≥ 0 for the current λ_t) and the friction QP (λ_t in
  ``μλ_n F`` for the current λ_n) until λ_n changes by at most ``tol`` in
  the energy norm ``‖Δλ_n‖_{W_nn}`` (Alg. 7's ``‖Δf_α‖_{M⁻¹}``) relative to
  ``‖λ_n‖_{W_nn}``. A fixed point is a Coulomb solution (each QP's KKT
  conditions are one half of the problem); convergence is not guaranteed.

clarabel is imported at the first call (not at ``import multibody``).
Only clarabel is used: no other QP library (OSQP, proxsuite, qpsolvers) is
installed in this environment, so none was compared.
"""
from __future__ import annotations

import numpy as np
from scipy import sparse

from .._typing import Array
from ..errors import ContactSolveError
from .residual import CONE


# Tighter than clarabel's defaults (1e-8, 1e-6): on random contact problems these gave λ_n and the
# identity u_n = μ‖u_t‖ to ~1e-10 and the sliding directions to ~1e-5; 1e-12 made clarabel stop with
# InsufficientProgress on 10% of them (an interior-point method's accuracy is limited near the cone's
# boundary, where the sliding contacts are).
_TIGHT = dict(tol_gap_abs=1e-11, tol_gap_rel=1e-11, tol_feas=1e-11, tol_ktratio=1e-7, max_iter=200, verbose=False)


def _conic(P, q, rows, cones, what):
    """``min ½xᵀPx + qᵀx`` s.t. ``h − Gx ∈ K`` with ``rows = (G, h)``
    stacked in the order of ``cones``; returns x (clarabel's Solved or
    AlmostSolved), else raises ContactSolveError."""
    import clarabel  # here: a reference mode; importing it costs every start-up otherwise
    G, h = rows
    settings = clarabel.DefaultSettings()
    for key, value in _TIGHT.items():
        setattr(settings, key, value)
    solver = clarabel.DefaultSolver(sparse.triu(sparse.csc_matrix(P), format="csc"), np.asarray(q, float),
                                    sparse.csc_matrix(G), np.asarray(h, float), cones, settings)
    solution = solver.solve()
    status = str(solution.status)
    if status not in ("Solved", "AlmostSolved"):
        raise ContactSolveError(f"{what}: clarabel stopped with status {status}")
    return np.array(solution.x), solution.iterations


def nonnegative_qp(W: Array, b: Array) -> tuple[Array, int]:
    """``argmin ½λᵀWλ + bᵀλ`` over ``λ ≥ 0`` (the frictionless contact
    problem, ``0 ≤ λ ⊥ Wλ + b ≥ 0``). Returns ``(λ, iterations)``."""
    import clarabel
    n = b.size
    return _conic(W, b, (-sparse.identity(n), np.zeros(n)), [clarabel.NonnegativeConeT(n)],
                  "the frictionless QP")


def _set_rows(mu, radius, model):
    """The rows ``(G, h)`` and cones saying ``λ_t ∈ r F`` for each contact
    with the variables λ (m,): ``r = μ_c λ_n`` (``radius`` None) or the
    fixed ``radius[c]``; ``λ_t = 0`` where r is identically 0."""
    import clarabel
    nc = mu.size
    m = 3 * nc
    G, h, cones = [], [], []
    if radius is None:
        G.append(-sparse.identity(m, format="csr")[0::3])  # λ_n ≥ 0
        h.append(np.zeros(nc))
        cones.append(clarabel.NonnegativeConeT(nc))
    zero = []
    for c in range(nc):
        i = 3 * c
        r_coef = mu[c] if radius is None else 0.0
        r_const = 0.0 if radius is None else radius[c]
        if (radius is None and mu[c] == 0.0) or (radius is not None and radius[c] <= 0.0):
            zero.extend((i + 1, i + 2))
            continue
        if model == CONE:  # h − Gλ = (r, λ_t1, λ_t2) ∈ SOC
            g = np.zeros((3, m))
            g[0, i] = -r_coef
            g[1, i + 1] = -1.0
            g[2, i + 2] = -1.0
            G.append(sparse.csr_matrix(g))
            h.append(np.array([r_const, 0.0, 0.0]))
            cones.append(clarabel.SecondOrderConeT(3))
        else:  # box: r ∓ λ_ti ≥ 0
            g = np.zeros((4, m))
            g[:, i] = -r_coef
            g[0, i + 1], g[1, i + 1], g[2, i + 2], g[3, i + 2] = 1.0, -1.0, 1.0, -1.0
            G.append(sparse.csr_matrix(g))
            h.append(np.full(4, r_const))
            cones.append(clarabel.NonnegativeConeT(4))
    if zero:
        G.append(sparse.identity(m, format="csr")[zero])
        h.append(np.zeros(len(zero)))
        cones.append(clarabel.ZeroConeT(len(zero)))
    return (sparse.vstack(G, format="csc"), np.concatenate(h)), cones


def anitescu_qp(W: Array, b: Array, mu: Array, model: int = CONE) -> tuple[Array, int]:
    """Anitescu's convex relaxation: ``argmin ½λᵀWλ + bᵀλ`` over λ_n ≥ 0,
    ``λ_t ∈ μλ_n F`` (F the unit disk: the second-order cone
    ``(μλ_n, λ_t) ∈ SOC``; or the box). Not Coulomb at sliding contacts,
    where ``u_n = μ‖u_t‖`` (cone; ``μ(|u_t1| + |u_t2|)`` for the box): see
    the module docstring. Returns ``(λ, iterations)``."""
    rows, cones = _set_rows(mu, None, model)
    return _conic(W, b, rows, cones, "Anitescu's cone QP")


def pyramid_basis(mu: Array, k: int) -> tuple[Array, Array]:
    """The matrix H (m, n_x) with ``λ = H x``, x per contact ``(α, β_1..β_k)``
    (only α for μ = 0), and the friction rows ``μα − Σβ`` as a matrix E
    (#{μ>0}, n_x): Sueda's eq. 1.86 with the directions ``d_j = (cos 2πj/k,
    sin 2πj/k)``."""
    nc = mu.size
    angles = 2 * np.pi * np.arange(k) / k
    cols, E = [], []
    for c in range(nc):
        e = np.zeros(3 * nc)
        e[3 * c] = 1.0
        cols.append(e)
        if mu[c] > 0.0:
            start = len(cols) - 1
            for a in angles:
                e = np.zeros(3 * nc)
                e[3 * c + 1], e[3 * c + 2] = np.cos(a), np.sin(a)
                cols.append(e)
            E.append((start, mu[c]))
    H = np.array(cols).T
    En = np.zeros((len(E), H.shape[1]))
    for r, (start, coef) in enumerate(E):
        En[r, start] = coef
        En[r, start + 1:start + 1 + k] = -1.0
    return H, En


def anitescu_hart_qp(W: Array, b: Array, mu: Array, k: int = 4) -> tuple[Array, int]:
    """Sueda's single QP with a k-sided pyramid (§1.13, Anitescu–Hart):
    ``argmin ½xᵀHᵀWHx + (Hᵀb)ᵀx`` over ``x ≥ 0``, ``E x ≥ 0``
    (:func:`pyramid_basis`), ``λ = Hx``. The λ it gives is Anitescu's
    relaxation over the pyramid (u_n = μγ while sliding, module docstring).
    Returns ``(λ, iterations)``."""
    import clarabel
    H, E = pyramid_basis(mu, k)
    n = H.shape[1]
    G = sparse.vstack([-sparse.identity(n), -sparse.csr_matrix(E)], format="csc")
    x, iterations = _conic(H.T @ W @ H, H.T @ b, (G, np.zeros(G.shape[0])),
                           [clarabel.NonnegativeConeT(G.shape[0])], "the Anitescu–Hart QP")
    return H @ x, iterations


def staggered_projections(W: Array, b: Array, mu: Array, model: int = CONE, lam: Array | None = None,
                          tol: float = 1e-10, max_iterations: int = 200) -> tuple[Array, int, bool]:
    """Staggered projections (Sueda §2.11, Alg. 7; module docstring) from
    the warm start ``lam`` (λ_t is used: Alg. 7 warm-starts the friction
    impulse). Returns ``(λ, iterations, converged)``; each iteration is one
    normal QP and one friction QP (two clarabel solves)."""
    import clarabel
    nc = mu.size
    n_rows, t_rows = np.arange(nc) * 3, np.sort(np.concatenate([np.arange(nc) * 3 + 1, np.arange(nc) * 3 + 2]))
    lam = np.zeros(3 * nc) if lam is None else np.array(lam, float)
    Wnn, Wnt = W[np.ix_(n_rows, n_rows)], W[np.ix_(n_rows, t_rows)]
    energy = lambda x: np.sqrt(max(x @ Wnn @ x, 0.0))  # noqa: E731  ‖Nᵀx‖ in M⁻¹
    pin = sparse.identity(3 * nc, format="csr")[n_rows]
    for iteration in range(1, max_iterations + 1):
        previous = lam[n_rows].copy()
        lam[n_rows], _ = _conic(Wnn, b[n_rows] + Wnt @ lam[t_rows], (-sparse.identity(nc), np.zeros(nc)),
                                [clarabel.NonnegativeConeT(nc)], "the normal QP of staggered projections")
        if iteration > 1 and energy(lam[n_rows] - previous) <= tol * max(energy(lam[n_rows]), 1e-300):
            return lam, iteration, True
        radius = mu * lam[n_rows]
        # the friction QP over (λ_n, λ_t) with λ_n pinned by zero rows: reuses the rows of the set
        (G, h), cones = _set_rows(mu, radius, model)
        G = sparse.vstack([pin, G], format="csc")
        h = np.concatenate([lam[n_rows], h])
        x, _ = _conic(W, b, (G, h), [clarabel.ZeroConeT(nc)] + cones, "the friction QP of staggered projections")
        lam[t_rows] = x[t_rows]
    return lam, max_iterations, False
