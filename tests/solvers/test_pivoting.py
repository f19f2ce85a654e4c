"""Principal pivoting with columns on demand (solvers/pivoting.py; ArtiSynth
§0.8, Baraff 1994) on the frictionless contact LCP, checked against
Lemke's method and clarabel (an interior-point QP solver no one here
wrote) where the solution is unique, by the row velocities w = Az + b
where it is not (redundant contacts: A singular), and against the
definition of an LCP solution everywhere."""
import numpy as np
import pytest

from multibody._status import RAY
from multibody.solvers import lemke_lcp
from multibody.solvers.pivoting import principal_pivoting
from multibody.solvers.qp import nonnegative_qp

from .problems import BoxOnPlane, spd


def pivot(A, b, max_pivots=1000):
    """(status, z, w, columns computed) of principal_pivoting on the dense A."""
    m = b.size
    A, b = np.ascontiguousarray(A, float), np.ascontiguousarray(b, float)
    z, w = np.full(m, np.nan), np.full(m, np.nan)
    K, L = np.zeros((m, m)), np.zeros((m, m))
    done, clamped, cols = np.zeros(m, np.int64), np.zeros(m, np.int64), np.zeros(m, np.int64)
    x, dz = np.zeros(m), np.zeros(m)
    st = principal_pivoting(A, b, z, w, K, done, clamped, cols, L, x, dz, max_pivots)
    return st, z, w, int(done.sum())


def is_solution(A, b, z, w, tol):
    """z ≥ 0, w = Az + b ≥ 0, z ⊥ w, to ``tol`` (relative to |b|)."""
    scale = max(1.0, np.abs(b).max())
    return (z.min() >= 0 and np.abs(w - (A @ z + b)).max() <= tol * scale and w.min() >= -tol * scale
            and np.abs(z * w).max() <= tol * scale * max(1.0, z.max()))


@pytest.mark.parametrize("seed", range(20))
def test_positive_definite_lcps_agree_with_lemke_and_clarabel(seed):
    """Random symmetric positive definite A (eigenvalues 0.1–10) of 1–40
    rows: one solution, found by all three to 1e-8; the pivoting one is an
    LCP solution to 1e-12."""
    rng = np.random.default_rng(seed)
    m = int(rng.integers(1, 41))
    A, b = spd(rng, m, 0.1, 10.0), rng.normal(size=m)
    st, z, w, _ = pivot(A, b)
    assert st >= 0
    assert is_solution(A, b, z, w, 1e-12)
    zl, wl = np.empty(m), np.empty(m)
    assert lemke_lcp(A, b, zl, wl, 100 * m + 100) >= 0
    qp, _ = nonnegative_qp(A, b)
    assert np.abs(z - zl).max() < 1e-8 and np.abs(z - qp).max() < 1e-8


@pytest.mark.parametrize("seed", range(20))
def test_redundant_contacts_give_lemkes_row_velocities(seed):
    """A = J M⁻¹ Jᵀ (normal rows of nc random contacts on a body of nv < nc
    coordinates: singular), b = J v_f with a falling free velocity: the
    impulses are not unique but the row velocities w are (the velocity
    v⁺ is): equal to Lemke's to 1e-9, and an LCP solution to 1e-11."""
    rng = np.random.default_rng(100 + seed)
    nc = int(rng.integers(4, 25))
    nv = int(rng.integers(2, nc))
    J = rng.normal(size=(nc, nv))
    Minv = np.linalg.inv(spd(rng, nv))
    A = J @ Minv @ J.T
    A = 0.5 * (A + A.T)
    b = J @ rng.normal(size=nv)
    st, z, w, _ = pivot(A, b)
    assert st >= 0, st
    assert is_solution(A, b, z, w, 1e-11)
    zl, wl = np.empty(nc), np.empty(nc)
    assert lemke_lcp(A, b, zl, wl, 100 * nc + 100) >= 0
    assert np.abs(w - (A @ zl + b)).max() < 1e-9 * max(1.0, np.abs(b).max())


def test_box_on_four_corners_carries_its_weight():
    """The box of problems.BoxOnPlane, frictionless (normal rows only:
    4 contacts on 6 coordinates, rank 3): the impulses sum to m g h and
    their moment about the centre vanishes (1e-12), the box stops falling."""
    box = BoxOnPlane(v0=(0.0, 0.0, 0.0))
    n = slice(0, None, 3)
    A, b = np.ascontiguousarray(box.W[n, n]), box.b[n].copy()
    st, z, w, _ = pivot(A, b)
    assert st >= 0
    lam = np.zeros(12)
    lam[n] = z
    nu = box.velocity(lam)
    assert z.sum() == pytest.approx(box.mass * 9.81 * box.dt, rel=1e-12)
    assert np.abs(nu).max() < 1e-12


def test_columns_are_computed_only_for_pressing_contacts():
    """ArtiSynth §0.8's point: columns on demand. With 30 contacts of which
    5 are approaching (b < 0) and 25 separating fast (b ≫ 0, never
    touched by the others' impulses), only the columns of the driven and
    clamped indices are computed: at most 5 of 30 here (measured 5)."""
    rng = np.random.default_rng(7)
    m = 30
    A = spd(rng, m, 0.5, 2.0)
    b = np.full(m, 100.0)
    b[:5] = -rng.uniform(0.1, 1.0, 5)
    st, z, w, computed = pivot(A, b)
    assert st >= 0 and is_solution(A, b, z, w, 1e-12)
    assert computed <= 5


def test_identical_contacts_do_not_cycle():
    """Two identical contact rows (A = [[1, 1], [1, 1]], b = (−1, −1)): the
    driven index and a free one reach zero at the same step; the driven one
    wins the tie (otherwise the free one joins the clamped set, the next
    step lets it go at step length 0, and the method cycles)."""
    st, z, w, _ = pivot(np.ones((2, 2)), np.array([-1.0, -1.0]), max_pivots=20)
    assert 0 <= st <= 2
    assert z.sum() == pytest.approx(1.0, abs=1e-14) and np.abs(w).max() < 1e-14


def test_infeasible_lcp_ends_on_a_ray():
    """A = 0 (a contact no coordinate can move) with b = −1: no z ≥ 0 makes
    w ≥ 0; the method says so (RAY)."""
    st, z, w, _ = pivot(np.zeros((1, 1)), np.array([-1.0]))
    assert st == RAY


def test_solve_contact_frictionless_by_pivoting_pgs_and_lemke():
    """``solve_contact(..., friction="none")``: μ taken as 0 whatever mu
    says; principal pivoting, PGS and Lemke give the same impulses on a
    positive definite problem (1e-8), no tangent impulse, and a zero
    residual; pivoting accepts no friction model but "none"."""
    from multibody import InputError
    from multibody.solvers import solve_contact
    rng = np.random.default_rng(5)
    W, b, mu = spd(rng, 18, 0.2, 5.0), rng.normal(size=18), np.full(6, 0.8)
    results = [solve_contact(W, b, mu, method=m, friction="none") for m in ("pivoting", "pgs", "lemke")]
    for r in results:
        assert np.abs(r.lam[1::3]).max() == 0.0 and np.abs(r.lam[2::3]).max() == 0.0
        assert np.abs(r.lam - results[0].lam).max() < 1e-8
        assert max(r.residual) < 1e-9
    with pytest.raises(InputError, match="pivoting"):
        solve_contact(W, b, mu, method="pivoting", friction="cone")
