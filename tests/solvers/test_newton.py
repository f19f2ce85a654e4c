"""Newton's method on the primal soft-contact problem with pyramidal cones
(``solvers/newton.py``) against clarabel on its dual, a bound-constrained
QP over the edge impulses f ≥ 0:

    min ½ fᵀ (G A⁻¹ Gᵀ + diag(1/D)) f + (G v_f − c)ᵀ f,   v = v_f + A⁻¹ Gᵀ f,

with G the edge rows ``J_n ± μ J_tk`` — and the primal's own optimality
identity (its gradient vanishes)."""
import numpy as np
import pytest

from multibody._status import NOT_CONVERGED
from multibody.solvers.newton import soft_pyramid_newton
from multibody.solvers.qp import nonnegative_qp


def edges(J, mu):
    """The edge rows G and their contact index (order of solvers/newton.py)."""
    rows, owner = [], []
    for k, m in enumerate(mu):
        n, t1, t2 = J[3 * k], J[3 * k + 1], J[3 * k + 2]
        new = [n] if m == 0 else [n + m * t1, n - m * t1, n + m * t2, n - m * t2]
        rows += new
        owner += [k] * len(new)
    return np.array(rows), np.array(owner)


def edge_targets(c, mu):
    out = []
    for k, m in enumerate(mu):
        cn, c1, c2 = c[3 * k:3 * k + 3]
        out += [cn] if m == 0 else [cn + m * c1, cn - m * c1, cn + m * c2, cn - m * c2]
    return np.array(out)


def problem(rng, nv, n, frictionless=0, blocks=False):
    """A random problem; with ``blocks``, A is block diagonal (free bodies
    of 6 coordinates) and each contact touches one body or two (the
    Hessian's envelope then spans the blocks between them)."""
    B = rng.normal(size=(nv, nv))
    A = B @ B.T + nv * np.eye(nv)
    J = rng.normal(size=(3 * n, nv))
    J[:, rng.random(nv) < 0.3] = 0.0  # coordinates some contacts do not touch
    if blocks:
        nb = nv // 6
        mask = np.kron(np.eye(nb), np.ones((6, 6)))
        A *= mask
        for k in range(n):
            touched = rng.choice(nb, size=rng.integers(1, 3), replace=False)
            keep = np.zeros(nv, bool)
            for t in touched:
                keep[6 * t:6 * t + 6] = True
            J[3 * k:3 * k + 3, ~keep] = 0.0
    mu = rng.uniform(0.2, 1.0, n)
    mu[:frictionless] = 0.0
    D = rng.uniform(1.0, 50.0, n)
    c = rng.normal(size=3 * n)
    vf = rng.normal(size=nv)
    return A, vf, J, mu, D, c


def solve(A, vf, J, mu, D, c, lam0=None, tol=0.0, cap=100):
    nv, n = len(vf), len(mu)
    lam = np.zeros(3 * n) if lam0 is None else lam0.copy()
    v = np.zeros(nv)
    nz, nnz, first = np.zeros((n, nv), np.int64), np.zeros(n, np.int64), np.zeros((2, nv), np.int64)
    for k in range(n):  # the contacts' coordinates and A's envelopes, as the caller gives them
        cols = np.flatnonzero(np.abs(J[3 * k:3 * k + 3]).sum(axis=0))
        nz[k, :len(cols)], nnz[k] = cols, len(cols)
    first[0] = [np.flatnonzero(A[i, :i + 1])[0] for i in range(nv)]
    work = (np.zeros((nv, nv)), np.zeros(nv), np.zeros(nv), np.zeros(4 * n), np.zeros(4 * n))
    it = soft_pyramid_newton(A, vf, J, mu, D, c, lam, v, *work, nz, nnz, first, cap, tol)
    return it, v, lam


@pytest.mark.parametrize("seed, blocks", [(s, False) for s in range(6)] + [(s, True) for s in range(6, 10)])
def test_newton_is_the_minimizer_of_the_dual_qp(seed, blocks):
    """Random problems (nv = 12, 5 contacts, one frictionless; or 5 free
    bodies, nv = 30, 8 contacts each on one or two bodies): Newton ends
    exactly (a full step that keeps the active set) within 30 iterations;
    its v equals the dual QP's (clarabel, to its 1e-11 tolerances: 1e-7
    relative) and its gradient vanishes to 1e-10 relative; its impulses are
    the dual's edge impulses mapped to the contact frame."""
    rng = np.random.default_rng(seed)
    A, vf, J, mu, D, c = problem(rng, 30, 8, 1, True) if blocks else problem(rng, 12, 5, frictionless=1)
    it, v, lam = solve(A, vf, J, mu, D, c)
    assert 0 < it <= 30
    G, owner = edges(J, mu)
    ce = edge_targets(c, mu)
    Ainv = np.linalg.inv(A)
    P = G @ Ainv @ G.T + np.diag(1.0 / D[owner])
    f, _ = nonnegative_qp(P, G @ vf - ce)
    v_dual = vf + Ainv @ G.T @ f
    assert np.abs(v - v_dual).max() < 1e-7 * (1 + np.abs(v_dual).max())
    y = G @ v - ce
    grad = A @ (v - vf) + G.T @ (D[owner] * np.minimum(y, 0.0))
    assert np.abs(grad).max() < 1e-10 * (np.abs(A @ (v - vf)).max() + 1)
    # the contact-frame impulses: λ_n = Σ f_e, λ_tk = μ (f_k+ − f_k−), and v = v_f + A⁻¹Jᵀλ
    assert np.allclose(v, vf + Ainv @ J.T @ lam, rtol=0, atol=1e-10 * (1 + np.abs(v).max()))
    assert (lam[0::3] >= 0).all()


def test_the_warm_start_and_the_cap():
    """Started from the solution's impulses Newton ends after one iteration
    with the same v; with a cap of 1 from zero it reports NOT_CONVERGED
    on a problem that needs more."""
    rng = np.random.default_rng(7)
    A, vf, J, mu, D, c = problem(rng, 10, 6)
    it, v, lam = solve(A, vf, J, mu, D, c)
    it2, v2, _ = solve(A, vf, J, mu, D, c, lam0=lam)
    assert it2 == 1 and np.allclose(v2, v, rtol=0, atol=1e-12 * (1 + np.abs(v).max()))
    assert it > 1
    assert solve(A, vf, J, mu, D, c, cap=1)[0] == NOT_CONVERGED
