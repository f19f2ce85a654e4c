"""Lemke's method on LCPs from the literature with known solutions, on a
degenerate LCP on which a fixed tie rule cycles, on random copositive-plus
matrices (checked against enumeration of all complementary bases), and
its statuses (ray, pivot cap, bad input)."""
import itertools
from fractions import Fraction

import numpy as np
import pytest

from multibody import _status as S
from multibody.solvers import lemke_lcp


def _solve(A, q, max_pivots=200):
    A, q = np.array(A, float), np.array(q, float)
    z, w = np.full(q.size, np.nan), np.full(q.size, np.nan)
    return lemke_lcp(A, q, z, w, max_pivots), z, w


def _solutions(A, q):
    """Every solution of LCP(A, q) at a nonsingular complementary basis (exhaustive), once."""
    A, q = np.array(A, float), np.array(q, float)
    n, found = q.size, []
    for active in itertools.product([False, True], repeat=n):
        S_ = np.array(active)
        z = np.zeros(n)
        if S_.any():
            try:
                z[S_] = np.linalg.solve(A[np.ix_(S_, S_)], -q[S_])
            except np.linalg.LinAlgError:
                continue
        new = not any(np.allclose(z, other, atol=1e-12) for other in found)  # degenerate: several bases
        if new and z.min() >= -1e-12 and (A @ z + q).min() >= -1e-12:
            found.append(z)
    return found


def _is_solution(A, q, z, tol=1e-10):
    w = np.asarray(A) @ z + q
    return z.min() >= 0 and w.min() >= -tol and abs(z @ w) <= tol


def test_murty_example_2_8():
    """Murty, Linear Complementarity, Linear and Nonlinear Programming,
    Example 2.8: the solution z = (2, 1, 3, 1), w = 0."""
    A = -np.array([[-1, 1, 1, 1], [1, -1, 1, 1], [-1, -1, -2, 0], [-1, -1, 0, -2]])
    status, z, w = _solve(A, [3, 5, -9, -5])
    assert status > 0
    assert np.allclose(z, [2, 1, 3, 1], atol=1e-12) and np.abs(w).max() < 1e-12


def test_murty_example_2_9_ends_on_a_ray():
    """Murty, Example 2.9: ray termination (row 1 reads w1 = −z1 − 3z3 − 3 < 0: infeasible)."""
    A = -np.array([[1, 0, 3], [-1, 2, 5], [2, 1, 2]])
    status, z, _ = _solve(A, [-3, -2, -1])
    assert status == S.RAY and np.isnan(z).all()  # outputs untouched on failure


def test_infeasible_copositive_plus_lcp_ends_on_a_ray():
    """A skew-symmetric (hence positive semi-definite, copositive-plus) A with
    w2 = −z1 − 1 < 0 for every z ≥ 0: Lemke must report the ray."""
    assert _solve([[0, 1], [-1, 0]], [-1, -1])[0] == S.RAY


def test_two_by_two_closed_form():
    """A = [[2, 1], [1, 2]], q = (−5, −6): both z > 0, z = A⁻¹(5, 6) = (4/3, 7/3)."""
    status, z, w = _solve([[2, 1], [1, 2]], [-5, -6])
    assert status > 0 and np.allclose(z, [4 / 3, 7 / 3], atol=1e-14) and np.abs(w).max() < 1e-14


def _lemke_fixed_tie_rule(A, q, max_pivots=50):
    """Lemke's method in exact rational arithmetic with the plain
    minimum-ratio test, ties broken by the first row (z0 preferred): returns
    "cycle" when a (basis, entering variable) pair repeats — from there the
    pivots repeat forever — or "solved" / "ray"."""
    n = len(q)
    T = [[Fraction(int(i == c)) for c in range(n)] + [Fraction(-A[i][k]) for k in range(n)]
         + [Fraction(-1), Fraction(q[i])] for i in range(n)]
    basis, seen = list(range(n)), set()
    r, entering = min(range(n), key=lambda i: q[i]), 2 * n
    for _ in range(max_pivots):
        leaving, p = basis[r], T[r][entering]
        T[r] = [x / p for x in T[r]]
        for i in range(n):
            if i != r and T[i][entering]:
                f = T[i][entering]
                T[i] = [x - f * y for x, y in zip(T[i], T[r])]
        basis[r] = entering
        state = (tuple(sorted(basis)), entering)
        if state in seen:
            return "cycle"
        seen.add(state)
        if leaving == 2 * n:
            return "solved"
        entering = leaving + n if leaving < n else leaving - n
        rows = [i for i in range(n) if T[i][entering] > 0]
        if not rows:
            return "ray"
        theta = min(T[i][-1] / T[i][entering] for i in rows)
        ties = [i for i in rows if T[i][-1] / T[i][entering] == theta]
        r = next((i for i in ties if basis[i] == 2 * n), ties[0])
    return "cap"


def test_degenerate_lcp_cycles_with_a_fixed_tie_rule_not_with_the_lexicographic_one():
    """A = S + K (S = BᵀB positive semi-definite, K skew: copositive-plus),
    q = (−1, −1, −1), a degenerate start (three rows tie for z0). In exact
    arithmetic the first-row tie rule revisits a basis after 8 pivots and
    cycles; the lexicographic rule solves it (enumeration: z = (8, 7, 10)/29)."""
    A, q = [[1, 3, 0], [-1, 1, 3], [2, -1, 2]], [-1, -1, -1]
    assert np.linalg.eigvalsh(np.add(A, np.transpose(A))).min() > -1e-12
    assert _lemke_fixed_tie_rule(A, q) == "cycle"
    status, z, _ = _solve(A, q)
    assert status > 0 and _is_solution(A, q, z, 1e-14)
    (expected,) = _solutions(A, q)
    assert np.allclose(z, expected, atol=1e-14) and np.allclose(29 * z, [8, 7, 10], atol=1e-12)


@pytest.mark.parametrize("seed", range(10))
def test_random_copositive_plus_nonsymmetric(seed):
    """A = BᵀB + K (K skew) non-symmetric, positive semi-definite in the
    quadratic-form sense; with B of full rank A is positive definite (a
    P-matrix: one solution), which enumeration finds; q random, including
    degenerate ones with zeros and repeated entries."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 8))
    B, K = rng.normal(size=(n, n)), rng.normal(size=(n, n))
    A = B.T @ B + (K - K.T)
    q = rng.normal(size=n) if seed % 2 else rng.choice([-1.0, 0.0, 1.0], size=n)
    status, z, _ = _solve(A, q)
    assert status >= 0 and _is_solution(A, q, z)
    (expected,) = _solutions(A, q)
    assert np.allclose(z, expected, atol=1e-10)


def test_singular_copositive_plus_is_solved():
    """Positive semi-definite and singular (rank 2 of 5) plus a skew part: the
    solution need not be unique; Lemke's satisfies the LCP."""
    rng = np.random.default_rng(11)
    for _ in range(20):
        B, K = rng.normal(size=(2, 5)), rng.normal(size=(5, 5))
        A = B.T @ B + (K - K.T)
        z_feasible = rng.uniform(0, 1, 5)
        q = -A @ z_feasible + rng.uniform(0, 1, 5)  # feasible: z_feasible gives w ≥ 0
        status, z, _ = _solve(A, q)
        assert status >= 0 and _is_solution(A, q, z)


def test_statuses():
    A = -np.array([[-1, 1, 1, 1], [1, -1, 1, 1], [-1, -1, -2, 0], [-1, -1, 0, -2]])
    assert _solve(A, [3, 5, -9, -5], max_pivots=1)[0] == S.PIVOT_CAP
    assert _solve(A, [3, 5, 9, 5])[0] == 0                       # q ≥ 0: z = 0 without a pivot
    assert _solve(np.ones((2, 3)), [1.0, -1.0])[0] == S.CONTACT_BAD_SHAPE
    assert _solve([[1.0, np.nan], [0.0, 1.0]], [-1.0, -1.0])[0] == S.CONTACT_NON_FINITE
    assert S.describe(S.RAY, "contact").startswith("Lemke's method ended on a secondary ray")
    assert S.describe(3, "contact") == "done (3 iterations or pivots)"
