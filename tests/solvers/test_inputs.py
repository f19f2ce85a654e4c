"""Bad inputs raise InputError (NonFiniteError for NaN/inf) naming the
array; failed solves raise ContactSolveError, a SimulationError; the
kernels return statuses and never divide by a row the Jacobian cannot
move."""
import numpy as np
import pytest

from multibody import _status as S
from multibody.errors import ContactSolveError, InputError, NonFiniteError, SimulationError
from multibody.solvers import BOX, CONE, contact_residual, projected_gauss_seidel, residual_of, solve_contact

W3, b3, mu1 = np.eye(3), np.array([-1.0, 0.5, 0.0]), np.array([0.5])


@pytest.mark.parametrize("W, b, mu, match", [
    (np.eye(4), np.zeros(4), np.zeros(1), "triples"),
    (np.eye(3), np.zeros(6), np.zeros(2), "shape"),
    (np.eye(3), np.zeros(3), np.zeros(2), "one friction coefficient per contact"),
    (np.eye(3), np.zeros(3), np.array([-0.1]), r"mu must be >= 0"),
    (np.array([[1, 1, 0], [0, 1, 0], [0, 0, 1.0]]), np.zeros(3), np.zeros(1), "symmetric"),
    (-np.eye(3), np.zeros(3), np.zeros(1), "positive semi-definite"),
    (np.ones(3), np.zeros(3), np.zeros(1), "2-D"),
    (np.eye(3, dtype=complex), np.zeros(3), np.zeros(1), "real"),
])
def test_bad_problems(W, b, mu, match):
    with pytest.raises(InputError, match=match):
        solve_contact(W, b, mu)


@pytest.mark.parametrize("where", ["W", "b", "mu", "lam0"])
def test_non_finite_inputs(where):
    args = {"W": W3.copy(), "b": b3.copy(), "mu": mu1.copy(), "lam0": np.zeros(3)}
    args[where].flat[0] = np.nan
    with pytest.raises(NonFiniteError, match=where):
        solve_contact(args["W"], args["b"], args["mu"], lam0=args["lam0"])


@pytest.mark.parametrize("kwargs, match", [
    (dict(method="dantzig"), "method must be one of"),
    (dict(method="lemke", friction="cone"), "use friction='pyramid'"),
    (dict(method="pgs", friction="pyramid"), "solves friction cone or box"),
    (dict(method="lemke", friction="pyramid", k=2), "k must be an integer >= 3"),
    (dict(omega=2.0), "omega"),
    (dict(tol=0.0), "tol"),
    (dict(max_iterations=0), "max_iterations"),
    (dict(lam0=np.zeros(4)), "lam0 must have shape"),
])
def test_bad_options(kwargs, match):
    with pytest.raises(InputError, match=match):
        solve_contact(W3, b3, mu1, **kwargs)


def test_failed_solves_are_simulation_errors():
    """A contact that cannot be stopped: its W row is 0 and it approaches.
    The LCP is infeasible: Lemke ends on a ray; PGS leaves λ_n = 0 and its
    residual reports the unstoppable |u_n|."""
    W = np.diag([0.0, 1.0, 1.0])
    b = np.array([-1.0, 0.0, 0.0])
    with pytest.raises(ContactSolveError, match="secondary ray") as info:
        solve_contact(W, b, mu1, "lemke", "pyramid")
    assert isinstance(info.value, SimulationError)
    result = solve_contact(W, b, mu1, "pgs")
    assert result.converged and result.lam[0] == 0 and result.residual.normal == 1.0


def test_pgs_never_divides_by_an_immovable_row():
    """Contact 1's rows are 0 (W_ii = 0): λ_n = 0 there, no NaN; a box tangent
    row with W_ii = 0 takes the maximal-dissipation value −μλ_n sign(u)."""
    W = np.zeros((6, 6))
    W[:3, :3] = np.eye(3)
    b = np.array([-1.0, 2.0, 0.0, 0.5, 0.3, -0.2])
    mu = np.array([0.5, 0.5])
    for model in (CONE, BOX):
        lam = np.zeros(6)
        assert projected_gauss_seidel(W, b, mu, lam, model, 1e-12, 100, 1.0) > 0
        assert np.isfinite(lam).all() and (lam[3:] == 0).all()
    W = np.diag([1.0, 0.0, 1.0])
    lam = np.zeros(3)
    assert projected_gauss_seidel(W, np.array([-1.0, 0.4, 0.0]), mu1, lam, BOX, 1e-12, 100, 1.0) > 0
    assert np.allclose(lam, [1.0, -0.5, 0.0])


def test_pgs_statuses_and_warm_start():
    rng = np.random.default_rng(0)
    B = rng.normal(size=(9, 9))
    W, b, mu = B @ B.T + np.eye(9), rng.normal(size=9) - np.tile([1.0, 0, 0], 3), np.full(3, 0.4)
    lam = np.zeros(9)
    assert projected_gauss_seidel(W, b, mu, lam, CONE, 1e-12, 1, 1.0) == S.NOT_CONVERGED
    result = solve_contact(W, b, mu, max_iterations=1)
    assert not result.converged and result.iterations == 1  # the last sweep, no error
    cold = solve_contact(W, b, mu, tol=1e-13)
    warm = solve_contact(W, b, mu, tol=1e-13, lam0=cold.lam)
    assert warm.iterations < cold.iterations and np.abs(warm.lam - cold.lam).max() < 1e-10
    assert projected_gauss_seidel(W, b, mu, np.zeros(8), CONE, 1e-12, 10, 1.0) == S.CONTACT_BAD_SHAPE
    assert projected_gauss_seidel(W, b, mu, np.zeros(9), 7, 1e-12, 10, 1.0) == S.CONTACT_BAD_SHAPE
    bad = b.copy()
    bad[4] = np.inf
    assert projected_gauss_seidel(W, bad, mu, np.zeros(9), CONE, 1e-12, 10, 1.0) == S.CONTACT_NON_FINITE


def test_residual_measures_each_condition():
    """One contact, W = I, b = (−1, 2, 0): the solution λ = (1, −0.5, 0) has a
    zero residual; each perturbation shows in its own field."""
    b = np.array([-1.0, 2.0, 0.0])
    assert residual_of(W3, b, mu1, [1.0, -0.5, 0.0]) == (0.0, 0.0, 0.0, 0.0)
    r = residual_of(W3, b, mu1, [2.0, -0.5, 0.0])    # pushes apart: u_n = 1 with λ_n = 2
    assert r.normal == 1.0 and r.complementarity == 2.0
    r = residual_of(W3, b, mu1, [1.0, -0.6, 0.0])    # outside the cone by 0.1
    assert np.isclose(r.cone, 0.1)
    r = residual_of(W3, b, mu1, [1.0, -0.3, -0.4])   # on the circle, not opposing u_t
    assert r.cone < 1e-15 and r.dissipation > 0.1
    assert residual_of(W3, b, mu1, [1.0, -0.5, 0.5], "box").dissipation == 0.5  # u_t = (1.5, 0.5): the corner (−.5, −.5)
    assert np.isnan(contact_residual(W3, b, mu1, np.array([np.nan, 0, 0]), CONE, 0)).all()
    assert contact_residual(W3, b, mu1, np.zeros(4), CONE, 0) == (np.inf,) * 4
