"""The convex reference modes (clarabel): Anitescu's second-order-cone
relaxation, the Anitescu–Hart pyramid QP and staggered projections."""
import numpy as np
import pytest

from multibody.solvers import CONE, contact_residual, solve_contact
from multibody.solvers.lemke import pyramid_directions

from .problems import BoxOnPlane, delassus, spd


def _project_on_cone(p, mu):
    """The Euclidean projection onto {‖x_t‖ ≤ μ x_n} in closed form."""
    pn, pt = p[0], p[1:]
    s = np.linalg.norm(pt)
    if s <= mu * pn:
        return p.copy()
    if mu * s <= -pn:
        return np.zeros(3)
    e = np.array([1.0, *(mu * pt / s)]) / np.sqrt(1 + mu * mu)
    return (p @ e) * e


@pytest.mark.parametrize("bt", [(0.1, 0.2), (3.0, -1.0), (0.0, 4.0)])
def test_anitescu_point_mass_is_the_projection_onto_the_cone(bt):
    """W = I/m: ½λᵀλ/m + bᵀλ = ‖λ + m b‖²/2m + const, so λ = Π_K(−m b)."""
    m, mu = 2.0, 0.6
    b = np.array([-1.0, *bt])
    result = solve_contact(np.eye(3) / m, b, np.array([mu]), "anitescu")
    assert np.abs(result.lam - _project_on_cone(-m * b, mu)).max() < 1e-8


@pytest.mark.parametrize("seed", range(6))
def test_anitescu_lifts_off_while_sliding(seed):
    """At every contact the relaxation gives u in the dual cone and λ ⊥ u: at a
    sliding contact (λ_n > 0, u_t ≠ 0) u_n = μ‖u_t‖ > 0 — separation, not
    Coulomb — with maximal dissipation λ_t = −μλ_n u_t/‖u_t‖ (to clarabel's
    accuracy near the cone's boundary, ~1e-5 in the direction)."""
    rng = np.random.default_rng(seed)
    nc = 4
    W = spd(rng, 3 * nc)
    b = rng.normal(size=3 * nc) + np.tile([-1.0, 0.0, 0.0], nc)
    mu = rng.uniform(0.2, 1.0, nc)
    lam = solve_contact(W, b, mu, "anitescu").lam
    u = W @ lam + b
    sliding = 0
    for c in range(nc):
        un, ut, ln, lt = u[3 * c], u[3 * c + 1:3 * c + 3], lam[3 * c], lam[3 * c + 1:3 * c + 3]
        assert un >= mu[c] * np.linalg.norm(ut) - 1e-8  # dual cone
        if ln > 1e-6 and np.linalg.norm(ut) > 1e-4:
            sliding += 1
            assert abs(un - mu[c] * np.linalg.norm(ut)) < 1e-8
            assert np.abs(lt + mu[c] * ln * ut / np.linalg.norm(ut)).max() < 1e-5
    assert sliding  # the identity was exercised


def test_anitescu_coincides_with_coulomb_when_sticking():
    """b = −Wλ* with λ* strictly inside the cones: u = 0 is Coulomb's answer
    (W positive definite: the only one) and the relaxation's."""
    rng = np.random.default_rng(4)
    nc = 3
    W, mu = spd(rng, 3 * nc), np.full(nc, 0.8)
    lam_star = np.concatenate([[1.0, *(0.3 * rng.uniform(-1, 1, 2))] for _ in range(nc)])
    b = -W @ lam_star
    for method in ("anitescu", "pgs"):
        result = solve_contact(W, b, mu, method, tol=1e-14, max_iterations=10 ** 5)
        assert np.abs(result.lam - lam_star).max() < 1e-8


@pytest.mark.parametrize("seed", range(4))
def test_anitescu_hart_pyramid_lifts_off_with_the_pyramid_speed(seed):
    """Sueda's single QP over the k-sided pyramid: u_n = μγ, γ = max_j(−d_j·u_t)
    (the pyramid's dual cone) at sliding contacts; its λ minimizes the same
    objective as the Stewart–Trinkle relaxation, so sticking solutions
    coincide with Lemke's pyramid LCP."""
    rng = np.random.default_rng(seed)
    nc, k = 3, 4 + seed
    W = spd(rng, 3 * nc)
    b = rng.normal(size=3 * nc) + np.tile([-1.0, 0.0, 0.0], nc)
    mu = rng.uniform(0.2, 1.0, nc)
    lam = solve_contact(W, b, mu, "anitescu_hart", "pyramid", k=k).lam
    u = W @ lam + b
    cs, sn, _ = pyramid_directions(k)
    for c in range(nc):
        ut = u[3 * c + 1:3 * c + 3]
        gamma = np.max(-(cs * ut[0] + sn * ut[1]))
        assert u[3 * c] >= mu[c] * gamma - 1e-8
        if lam[3 * c] > 1e-6 and np.linalg.norm(ut) > 1e-6:
            assert abs(u[3 * c] - mu[c] * gamma) < 1e-8
    lam_star = np.concatenate([[1.0, 0.1, -0.1] for _ in range(nc)])  # inside every pyramid with μ ≥ 0.2
    b = -W @ lam_star
    for method in ("anitescu_hart", "lemke"):
        assert np.abs(solve_contact(W, b, mu, method, "pyramid", k=k).lam - lam_star).max() < 1e-8


@pytest.mark.parametrize("v0", [(1.0, 0.0, 0.0), (0.3, -0.4, 0.0)])
def test_staggered_projections_reach_pgs_on_a_sliding_box(v0):
    """The redundant box (12 rows, rank 6) sliding: staggered projections
    reach a Coulomb solution, the same velocity as PGS to 1e-6 (the
    per-corner impulses are not unique), for the cone and the box."""
    box, mu = BoxOnPlane(v0), np.full(4, 0.5)
    for friction in ("cone", "box"):
        staggered = solve_contact(box.W, box.b, mu, "staggered", friction)
        pgs = solve_contact(box.W, box.b, mu, "pgs", friction, tol=1e-13, max_iterations=10 ** 5)
        assert staggered.converged and pgs.converged
        assert np.abs(box.velocity(staggered.lam) - box.velocity(pgs.lam)).max() < 1e-6
        assert max(staggered.residual) < 1e-6


def test_staggered_projections_report_the_cap_and_the_residual():
    rng = np.random.default_rng(9)
    W, J, _ = delassus(rng, 3, 6)
    b, mu = J @ rng.normal(size=6), np.full(3, 0.7)
    capped = solve_contact(W, b, mu, "staggered", max_iterations=1)
    assert not capped.converged and capped.iterations == 1
    assert capped.residual == tuple(contact_residual(W, b, mu, capped.lam, CONE, 0))
    full = solve_contact(W, b, mu, "staggered")
    assert full.converged and max(full.residual) < 1e-6
