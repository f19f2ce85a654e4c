"""Drumwright's stable first-order compliant constraints (seed 003,
"An Unconditionally Stable First-Order Constraint Solver for Multibody
Systems"; notes/seed-003.md, whose errata and pitfalls P1–P14 are cited
below). docs/drumwright.md.

Every constraint row r is a spring–damper in constraint space with
stiffness K_r (N/m, N·m/rad; ∞: rigid) and damping B_r (N·s/m) and the
force law ``λ = −Kφ₁ − Bφ̇₁ − M̂Ġv₀`` (eq. 53; without the last term with
``gdot=None``, the "penalty" law eq. 18 of pitfall P2), its spring state
advanced by implicit Euler (``φ₁ = φ₀ + hφ̇₁``) and the bodies by
semi-implicit Euler (``v₁ = v_f + M⁻¹GᵀΛ``, v_f the free velocity, Λ = hλ
the impulses). With the row velocities ``u = G v₁ = WΛ + b`` (W = G M⁻¹ Gᵀ,
b = G v_f) and ``φ̇₁ = u + hĠv₀`` (C6), the law of row r is, divided by
h(hK + B) — the ERP/CFM form of notes C7, which stays well conditioned as
K → ∞ (P4) and needs no M̂ = W⁻¹ (W singular for redundant rows, P8):

    u_r + cfm_r Λ_r + erp_r φ_r + hĠv_r + (M̂Ġv)_r / (hK_r + B_r) = 0,
    erp = K / (hK + B)  (1/s),     cfm = 1 / (h (hK + B))  (m/(N·s²)·s).

* bilateral rows: the equation itself (one linear solve, §4.2);
* unilateral rows (limits, contact normals): the max law
  ``λ = max(0, −Kφ₁ − Bφ̇₁ − M̂Ġv₀)`` (eq. 68), i.e. ``0 ≤ Λ ⊥ u + cfm Λ + …
  ≥ 0``: with several rows the symmetric positive definite LCP of
  ``W + diag(cfm)`` — not the paper's min-‖λ‖² QP (83–85), which differs
  from the max law when rows couple (pitfall P5; ``formulation="paper"``
  keeps it);
* friction rows (K = 0, B = B_t: memoryless "true Coulomb" friction with a
  viscous limit, §6.2) bounded by the Coulomb cone ‖λ_t‖ ≤ μλ_n per
  contact (§6.3) or its box. The paper's single QP/SOCP (eqs. 99–120)
  lets the optimizer raise λ_n above the max law to widen the cone and
  shrink the penalized slip β (pitfall P6: a sliding block hops). Here
  the normal impulses satisfy the max law and the friction impulses
  maximal dissipation in the cone of those normal impulses, each given
  the other: the fixed point of staggered projections (Kaufman et al.
  2008; Sueda §2.11) on ``W + diag(cfm)``, which projected Gauss–Seidel
  with the disk step also converges to — the compiled simulator's solver.

Since cfm > 0 for every finite K, ``W + diag(cfm)`` is positive definite
whatever the rank of W: the problem has exactly one solution (C8, P11).
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np
from numba import njit

from .._typing import Array, ArrayLike
from ..errors import ContactSolveError, InputError, NonFiniteError

BILATERAL, UNILATERAL, NORMAL, TANGENT = 0, 1, 2, 3  # the kinds of rows
KINDS = {"bilateral": BILATERAL, "unilateral": UNILATERAL, "normal": NORMAL, "tangent": TANGENT}


@njit(cache=True, nogil=True, inline="always")
def compliant_row(K, B, h):
    """``(erp, cfm)`` of a row with stiffness K ≥ 0 (∞: rigid) and damping
    B ≥ 0 at the step h (module docstring; Drumwright §4.2 in the form of
    notes C7): ``erp = K/(hK + B)`` (1/s), ``cfm = 1/(h(hK + B))``; rigid:
    ``(1/h, 0)``. A row with K = B = 0 exerts no force: ``(0, ∞)``."""
    if K == np.inf:
        return 1.0 / h, 0.0
    s = h * K + B
    if s <= 0.0:
        return 0.0, np.inf
    return K / s, 1.0 / (h * s)


def _vector(x: ArrayLike, name: str, m: int) -> Array:
    a = np.asarray(x)
    if a.dtype.kind not in "biuf":
        raise InputError(f"{name} must be a real array, got {a.dtype}")
    a = np.broadcast_to(np.asarray(a, dtype=np.float64), (m,)) if a.ndim == 0 else np.asarray(a, dtype=np.float64)
    if a.shape != (m,):
        raise InputError(f"{name} must have shape ({m},), got {a.shape}")
    return a


def check_rows(W: ArrayLike, b: ArrayLike, h: float, kind: Any, phi: ArrayLike,
               stiffness: ArrayLike, damping: ArrayLike, mu: ArrayLike
               ) -> tuple[Array, Array, float, np.ndarray, Array, Array, Array, Array]:
    """The problem's arrays as float64 (kind as int64), checked: W (m, m)
    symmetric, finite; b, phi (m,) finite; stiffness, damping (m,) ≥ 0
    (stiffness may be ∞); h > 0; kind in :data:`KINDS` with each NORMAL row
    followed by its two TANGENT rows; mu (m,) ≥ 0, read on NORMAL rows.
    Raises InputError (NonFiniteError) naming the row."""
    h = float(h)
    if not (math.isfinite(h) and h > 0.0):
        raise InputError(f"the time step h must be a finite number > 0 (s), got {h}")
    W = np.asarray(W, dtype=np.float64)
    if W.ndim != 2 or W.shape[0] != W.shape[1]:
        raise InputError(f"W must be a square matrix, got shape {W.shape}")
    m = W.shape[0]
    if not np.isfinite(W).all():
        raise NonFiniteError("W has a non-finite entry")
    if m and np.abs(W - W.T).max() > 1e-10 * max(np.abs(W).max(), 1e-300):
        raise InputError("W must be symmetric (G M⁻¹ Gᵀ)")
    b, phi = _vector(b, "b", m), _vector(phi, "phi", m)
    K, B, mu = _vector(stiffness, "stiffness", m), _vector(damping, "damping", m), _vector(mu, "mu", m)
    if isinstance(kind, str) or np.ndim(kind) == 0:
        kind = [kind] * m
    kind = np.array([KINDS[k] if isinstance(k, str) and k in KINDS else k for k in kind])
    if kind.shape != (m,) or kind.dtype.kind not in "iu" or not np.isin(kind, list(KINDS.values())).all():
        raise InputError(f"kind must give one of {sorted(KINDS)} per row ({m} rows), got {kind!r}")
    kind = kind.astype(np.int64)
    for name, a in (("b", b), ("phi", phi), ("damping", B), ("mu", mu)):
        bad = np.flatnonzero(~np.isfinite(a))
        if bad.size:
            raise NonFiniteError(f"{name}[{bad[0]}] is not finite ({a[bad[0]]})")
    for name, a in (("stiffness", K), ("damping", B), ("mu", mu)):
        bad = np.flatnonzero(~(a >= 0))
        if bad.size:
            raise InputError(f"{name}[{bad[0]}] = {a[bad[0]]}: stiffness, damping and friction coefficients "
                             f"must be >= 0")
    for r in np.flatnonzero(kind == NORMAL):
        if r + 2 >= m or kind[r + 1] != TANGENT or kind[r + 2] != TANGENT:
            raise InputError(f"row {r} is a contact normal: rows {r + 1} and {r + 2} must be its tangent rows")
    tangents = np.flatnonzero(kind == TANGENT)
    if tangents.size and not all(r >= 1 and (kind[r - 1] == NORMAL or (r >= 2 and kind[r - 2] == NORMAL))
                                 for r in tangents):
        raise InputError("a tangent row must follow its contact's normal row")
    if np.isinf(K[kind == TANGENT]).any():
        raise InputError("a friction (tangent) row cannot be rigid: give it a finite damping (K = 0, B > 0)")
    return W, b, h, kind, phi, K, B, mu


def row_laws(h: float, K: Array, B: Array) -> tuple[Array, Array, Array]:
    """Per row ``(erp, cfm, s)`` (:func:`compliant_row`; s = hK + B, ∞ for
    rigid rows)."""
    erp, cfm = np.empty(K.size), np.empty(K.size)
    for r in range(K.size):
        erp[r], cfm[r] = compliant_row(K[r], B[r], h)
    with np.errstate(invalid="ignore"):
        s = np.where(np.isinf(K), np.inf, h * K + B)
    return erp, cfm, s


def compliant_problem(W: ArrayLike, b: ArrayLike, h: float, kind: Any,
                      phi: ArrayLike, stiffness: ArrayLike, damping: ArrayLike, mu: ArrayLike = 0.0,
                      gdot: ArrayLike | None = None) -> tuple[Array, Array, np.ndarray]:
    """``(A, c, active)``: the rows' laws as ``A Λ + c`` (module docstring):
    ``A = W + diag(cfm)``, ``c = b + erp·φ`` plus, with ``gdot`` (Ġv₀ per
    row, m/s² or rad/s²), ``hĠv₀ + M̂Ġv₀/(hK + B)`` with M̂ the
    pseudo-inverse of W's block of each kind of rows (notes C12, P8) —
    ``gdot=None`` omits both (pitfall P2). ``active``: rows that can
    exert a force (K + B > 0); the others are left out of A and c."""
    W, b, h, kind, phi, K, B, mu = check_rows(W, b, h, kind, phi, stiffness, damping, mu)
    erp, cfm, s = row_laws(h, K, B)
    active = np.isfinite(cfm)
    A = W + np.diag(np.where(active, cfm, 0.0))
    c = b + np.where(active, erp * phi, 0.0)
    if gdot is not None:
        gdot = _vector(gdot, "gdot", W.shape[0])
        if not np.isfinite(gdot).all():
            raise NonFiniteError("gdot has a non-finite entry")
        force = np.zeros_like(gdot)
        for k in KINDS.values():
            rows = np.flatnonzero((kind == k) & active)
            if rows.size:
                force[rows] = np.linalg.pinv(W[np.ix_(rows, rows)], hermitian=True) @ gdot[rows]
        with np.errstate(divide="ignore"):
            c = c + np.where(active, h * gdot + force / s, 0.0)  # s = ∞ (rigid): the force term vanishes
    return A[np.ix_(active, active)], c[active], active


def compliant_impulses(W: ArrayLike, b: ArrayLike, h: float, kind: Any,
                       phi: ArrayLike, stiffness: ArrayLike, damping: ArrayLike, mu: ArrayLike = 0.0,
                       gdot: ArrayLike | None = None, friction: str = "cone", method: str | None = None,
                       zeta: float | None = None, tol: float = 1e-10) -> Array:
    """The impulses Λ (m,) (N·s; Λ = hλ₁) of Drumwright's step for the rows
    ``u = WΛ + b`` (module docstring): W = G M⁻¹ Gᵀ (m, m), b = G v_f
    (m,); ``kind`` per row ("bilateral", "unilateral", "normal",
    "tangent": each normal row followed by its contact's two tangent rows);
    ``phi`` the rows' deformation φ₀ (≤ 0: compressed, 0 on tangent rows),
    ``stiffness`` K (∞: rigid), ``damping`` B, ``mu`` the friction
    coefficient on normal rows; ``gdot``: Ġv₀ per row or None (P2).

    ``friction``: "cone" (the true Coulomb cone, §6.3) or "box";
    ``method``: "pgs" (default with friction: the compiled projected
    Gauss–Seidel to ``tol``, the simulator's solver), "staggered"
    (staggered projections by clarabel, which need not converge: then
    ContactSolveError), "qp" (frictionless problems: one clarabel QP,
    the default there), or "paper": the paper's own QP/SOCP (Appendix A,
    eqs. 124–198 with the errata of notes §4: objective ``ζ/2‖λ_n‖² +
    ½‖λ_t‖² + ½‖β_t‖²``, ζ = ``zeta`` (default 1/h), λ_n only bounded
    below by the max law) — which inflates the normal forces of sliding
    contacts (pitfall P6); kept to show it.

    Bilateral rows are eliminated first (a Schur complement of the
    positive definite block; a rigid redundant block by least squares).
    Raises ContactSolveError when the solver fails, InputError on bad
    input."""
    W, b, h, kind, phi, K, B, mu = check_rows(W, b, h, kind, phi, stiffness, damping, mu)
    m = W.shape[0]
    if friction not in ("cone", "box"):
        raise InputError(f"friction must be 'cone' or 'box', got {friction!r}")
    frictional = bool(((kind == NORMAL) & (mu > 0)).any() and ((kind == TANGENT) & (B > 0)).any())
    if method is None:
        method = "pgs" if frictional else "qp"
    if method not in ("staggered", "pgs", "qp", "paper"):
        raise InputError(f"method must be 'staggered', 'pgs', 'qp' or 'paper', got {method!r}")
    if method == "qp" and frictional:
        raise InputError("method 'qp' solves frictionless problems: use 'staggered', 'pgs' or 'paper'")
    if method == "paper":
        return _paper_program(W, b, h, kind, phi, K, B, mu, gdot, friction, zeta)
    A, c, active = compliant_problem(W, b, h, kind, phi, K, B, mu, gdot)
    kind_a, K_a, B_a, mu_a = kind[active], K[active], B[active], mu[active]
    lam = np.zeros(m)
    if not active.any():
        return lam
    bil = kind_a == BILATERAL
    oth = ~bil
    # bilateral rows eliminated: Λ_b = −A_bb⁻¹(c_b + A_bo Λ_o)
    if bil.any():
        Abb = A[np.ix_(bil, bil)]
        rhs = np.column_stack([c[bil], A[np.ix_(bil, oth)]])
        X = np.linalg.lstsq(Abb, rhs, rcond=None)[0] if np.isinf(K_a[bil]).any() else np.linalg.solve(Abb, rhs)
        A_o = A[np.ix_(oth, oth)] - A[np.ix_(oth, bil)] @ X[:, 1:]
        c_o = c[oth] - A[np.ix_(oth, bil)] @ X[:, 0]
    else:
        A_o, c_o = A, c
    lam_o = np.zeros(int(oth.sum()))
    if lam_o.size:
        lam_o = _unilateral(A_o, c_o, kind_a[oth], mu_a[oth], B_a[oth], friction, method, tol)
    lam_a = np.zeros(int(active.sum()))
    lam_a[oth] = lam_o
    if bil.any():
        lam_a[bil] = -(X[:, 0] + X[:, 1:] @ lam_o)
    lam[active] = lam_a
    return lam


def _unilateral(A, c, kind, mu, B, friction, method, tol):
    """The impulses of the unilateral and contact rows of ``A Λ + c``
    (bilateral rows already eliminated): the rows as contact triples
    (n, t1, t2) — a unilateral row, or a contact whose tangent rows are
    inactive, gets two placeholder rows (unit diagonal, μ = 0) — solved by
    :func:`~multibody.solvers.contact.solve_contact`."""
    from . import qp
    from .contact import solve_contact
    m = c.size
    slots, mus = [], []  # per triple: the rows (index or −1) of n, t1, t2
    r = 0
    while r < m:
        if kind[r] == NORMAL:
            t = [s for s in (r + 1, r + 2) if s < m and kind[s] == TANGENT]
            rows = [r] + t + [-1] * (2 - len(t))
            slots.append(rows)
            mus.append(mu[r] if len(t) == 2 else 0.0)
            r += 1 + len(t)
        else:  # UNILATERAL; a tangent row whose normal is inactive exerts no force and is skipped
            if kind[r] == UNILATERAL:
                slots.append([r, -1, -1])
                mus.append(0.0)
            r += 1
    idx = np.array(slots, np.int64).ravel()
    real = idx >= 0
    n3 = idx.size
    W3 = np.eye(n3)
    b3 = np.zeros(n3)
    W3[np.ix_(real, real)] = A[np.ix_(idx[real], idx[real])]
    b3[real] = c[idx[real]]
    mu3 = np.array(mus)
    if method == "qp" or not (mu3 > 0).any():
        lam3, _ = qp.nonnegative_qp(W3[::3, ::3], b3[::3])
        full = np.zeros(n3)
        full[::3] = lam3
        lam3 = full
    else:
        result = solve_contact(W3, b3, mu3, method=method, friction=friction, tol=tol,
                               max_iterations=100000 if method == "pgs" else 1000)
        if not result.converged:
            raise ContactSolveError(f"Drumwright's contact problem: {method} did not converge "
                                    f"({result.iterations} iterations)")
        lam3 = result.lam
    out = np.zeros(m)
    out[idx[real]] = lam3[real]
    return out


def _paper_program(W, b, h, kind, phi, K, B, mu, gdot, friction, zeta):
    """The paper's QP/SOCP (Appendix A with notes §4's errata 5–8), in the
    forces λ (N) with ``u = b + hWλ``, ``φ̇₁ = u + hĠv₀``, ``a = M̂Ġv₀``:

        min  ζ/2 Σ_{n,u} λ² + ½ Σ_t λ² + ½ Σ_t β²,  β_t = λ_t + K_tφ_t1 + B_tφ̇_t1 + a_t
        s.t. λ_b + K_bφ_b1 + B_bφ̇_b1 + a_b = 0                (bilateral)
             λ_r ≥ −K_rφ_r1 − B_rφ̇_r1 − a_r,  λ_r ≥ 0          (unilateral, normal)
             ‖λ_t‖ ≤ μλ_n per contact (or the box)

    with ``φ₁ = φ₀ + hφ̇₁``. Returns the impulses hλ. Rigid rows (K = ∞)
    are not accepted here: the paper's laws need finite K."""
    import clarabel
    from scipy import sparse

    from .qp import _conic
    if np.isinf(K).any():
        raise InputError("the paper's program needs finite stiffness on every row (K = ∞: use method 'staggered')")
    m = W.shape[0]
    zeta = 1.0 / h if zeta is None else float(zeta)
    if not (math.isfinite(zeta) and zeta > 0):
        raise InputError(f"zeta must be a finite number > 0, got {zeta}")
    g = np.zeros(m) if gdot is None else _vector(gdot, "gdot", m)
    a = np.zeros(m)
    if gdot is not None:
        for k in KINDS.values():
            rows = np.flatnonzero(kind == k)
            if rows.size:
                a[rows] = np.linalg.pinv(W[np.ix_(rows, rows)], hermitian=True) @ g[rows]
    s = h * K + B
    # the law's right side −Kφ₁ − Bφ̇₁ − a = −Kφ₀ − s(b + hĠv) − a − s h W λ  =:  r0 − S λ
    r0 = -K * phi - s * (b + h * g) - a
    S = (s * h)[:, None] * W
    t = np.flatnonzero(kind == TANGENT)
    weights = np.where(kind == TANGENT, 1.0, zeta)
    E = np.eye(m)[t] + S[t]  # β_t = E λ − r0_t
    P = np.diag(weights) + E.T @ E
    q = -E.T @ r0[t]
    G_rows, h_rows, cones = [], [], []
    bil = np.flatnonzero(kind == BILATERAL)
    if bil.size:  # (I + S)_b λ = r0_b
        G_rows.append((np.eye(m) + S)[bil])
        h_rows.append(r0[bil])
        cones.append(clarabel.ZeroConeT(bil.size))
    uni = np.flatnonzero((kind == UNILATERAL) | (kind == NORMAL))
    if uni.size:  # λ + Sλ ≥ r0 and λ ≥ 0, as h − Gλ ≥ 0
        G_rows += [-(np.eye(m) + S)[uni], -np.eye(m)[uni]]
        h_rows += [-r0[uni], np.zeros(uni.size)]
        cones.append(clarabel.NonnegativeConeT(2 * uni.size))
    for r in np.flatnonzero(kind == NORMAL):
        rows = np.zeros((3, m))
        if friction == "cone":  # (μλ_n, λ_t1, λ_t2) ∈ SOC
            rows[0, r], rows[1, r + 1], rows[2, r + 2] = -mu[r], -1.0, -1.0
            G_rows.append(rows)
            h_rows.append(np.zeros(3))
            cones.append(clarabel.SecondOrderConeT(3))
        else:
            box = np.zeros((4, m))
            box[:, r] = -mu[r]
            box[0, r + 1], box[1, r + 1], box[2, r + 2], box[3, r + 2] = 1.0, -1.0, 1.0, -1.0
            G_rows.append(box)
            h_rows.append(np.zeros(4))
            cones.append(clarabel.NonnegativeConeT(4))
    # scaled for the interior-point method (the same minimizer): with B_t = 10⁶/h the objective's
    # entries reach ~(hB_t h W)² ~ 1e12 and the law's rows ~hB_t; unscaled, clarabel declared the
    # single sliding contact of the tests primal infeasible
    Gm = np.vstack(G_rows) if G_rows else np.zeros((0, m))
    hv = np.concatenate(h_rows) if h_rows else np.zeros(0)
    start = 0
    for cone in cones:  # a cone's rows share one scale (the SOC must stay a cone)
        k = int(cone.dim)
        rows = slice(start, start + k)
        if isinstance(cone, clarabel.SecondOrderConeT):
            scale = np.abs(Gm[rows]).max()
            scale = 1.0 / scale if scale > 0 else 1.0
            Gm[rows] *= scale
            hv[rows] *= scale
        else:
            norms = np.abs(Gm[rows]).max(axis=1)
            scale = np.where(norms > 0, 1.0 / np.where(norms > 0, norms, 1.0), 1.0)
            Gm[rows] *= scale[:, None]
            hv[rows] *= scale
        start += k
    f = 1.0 / max(np.abs(P).max(), 1e-300)
    x, _ = _conic(P * f, q * f, (sparse.csc_matrix(Gm), hv), cones,
                  "Drumwright's QP/SOCP (the paper's formulation)")
    return h * x
