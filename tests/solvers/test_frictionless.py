"""Frictionless contact (μ = 0): the LCP ``0 ≤ λ ⊥ Wλ + b ≥ 0`` with a
symmetric positive definite W has one solution; projected Gauss–Seidel,
Lemke, Murty's principal pivoting (solvers/lcp.py) and clarabel's QP
``min ½λᵀWλ + bᵀλ, λ ≥ 0`` (an interior-point method no one here wrote)
must all find it."""
import numpy as np
import pytest

from multibody.solvers import CONE, contact_residual, lemke_lcp, projected_gauss_seidel, pyramid_lcp, solve_contact
from multibody.solvers.lcp import principal_pivoting_lcp
from multibody.solvers.qp import nonnegative_qp

from .problems import spd


def _four_ways(W, b):
    """λ of the normal LCP (W, b) by Lemke, Murty and clarabel."""
    n = b.size
    z, w = np.empty(n), np.empty(n)
    assert lemke_lcp(W, b, z, w, 50 * n + 100) >= 0
    murty, w2 = np.empty(n), np.empty(n)
    assert principal_pivoting_lcp(W, b, murty, w2, 50 + 10 * n * n) > 0
    qp, _ = nonnegative_qp(W, b)
    return z, murty, qp


@pytest.mark.parametrize("seed", range(12))
def test_frictionless_contacts_all_solvers_agree(seed):
    """Contacts with μ = 0 (m up to 30 rows): PGS to a tight tolerance and the
    pyramid LCP (normal rows only) in the contact layout; Lemke, Murty and
    clarabel on the normal rows; all within 1e-8."""
    rng = np.random.default_rng(seed)
    nc = int(rng.integers(1, 11))
    W = spd(rng, 3 * nc)
    b = rng.normal(size=3 * nc)
    mu = np.zeros(nc)
    lam = np.zeros(3 * nc)
    assert projected_gauss_seidel(W, b, mu, lam, CONE, 1e-14, 100000, 1.0) > 0
    assert (lam[1::3] == 0).all() and (lam[2::3] == 0).all()
    lam_lcp = np.zeros(3 * nc)
    assert pyramid_lcp(W, b, mu, 4, lam_lcp, 1000) >= 0
    n = slice(0, None, 3)
    for other in (lam_lcp[n],) + _four_ways(np.ascontiguousarray(W[n, n]), b[n].copy()):
        assert np.abs(other - lam[n]).max() < 1e-8
    assert max(contact_residual(W, b, mu, lam, CONE, 0)) < 1e-10


@pytest.mark.parametrize("seed", range(8))
def test_plain_lcp_of_30_rows_lemke_murty_clarabel_agree(seed):
    rng = np.random.default_rng(100 + seed)
    n = 30
    W, b = spd(rng, n), rng.normal(size=n)
    z, murty, qp = _four_ways(W, b)
    assert np.abs(z - murty).max() < 1e-8 and np.abs(qp - murty).max() < 1e-8
    w = W @ z + b
    assert z.min() >= 0 and w.min() > -1e-12 and abs(z @ w) < 1e-12


def test_over_relaxed_pgs_and_the_wrapper_find_the_same_solution():
    rng = np.random.default_rng(3)
    W, b, mu = spd(rng, 24), rng.normal(size=24), np.zeros(8)
    exact = solve_contact(W, b, mu, "lemke", "pyramid").lam
    for omega in (0.7, 1.0, 1.3):
        result = solve_contact(W, b, mu, "pgs", omega=omega, tol=1e-14, max_iterations=100000)
        assert result.converged and np.abs(result.lam - exact).max() < 1e-8
    anitescu = solve_contact(W, b, mu, "anitescu")  # μ = 0: the SOC relaxation is the frictionless QP
    assert np.abs(anitescu.lam - exact).max() < 1e-8


@pytest.mark.slow
def test_frictionless_campaign():
    """400 random problems, m up to 30, eigenvalues in [0.1, 10]: Lemke and
    Murty within 1e-8 of PGS, clarabel (interior point, a condition number of
    100) within 1e-7."""
    rng = np.random.default_rng(2024)
    for _ in range(400):
        nc = int(rng.integers(1, 11))
        W, b, mu = spd(rng, 3 * nc, 0.1, 10.0), rng.normal(size=3 * nc), np.zeros(nc)
        lam = np.zeros(3 * nc)
        assert projected_gauss_seidel(W, b, mu, lam, CONE, 1e-15, 1000000, 1.0) > 0
        for other, tol in zip(_four_ways(np.ascontiguousarray(W[::3, ::3]), b[::3].copy()), (1e-8, 1e-8, 1e-7)):
            assert np.abs(other - lam[::3]).max() < tol
