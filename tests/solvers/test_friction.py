"""Contact with friction: closed-form answers (a point mass, a box sliding
or sticking on a plane), the Coulomb conditions on random problems
W = J M⁻¹ Jᵀ (singular: redundant contacts), the pyramid LCP against its
definition, and the exact disk step of PGS against a brute-force search."""
import numpy as np
import pytest
from scipy.optimize import brentq, minimize_scalar

from multibody.solvers import (BOX, CONE, PYRAMID, contact_residual, disk_minimum, lemke_lcp, projected_gauss_seidel, pyramid_lcp,
                               solve_contact)
from multibody.solvers.lemke import friction_lcp, pyramid_directions

from .problems import G, BoxOnPlane, delassus, spd


def _pgs(W, b, mu, model=CONE, tol=1e-13, iterations=100000, omegas=(1.0, 0.5)):
    """PGS from zeros; plain (ω = 1) first, then, as docs/contact.md advises
    for a plain run that cycles (highly redundant contacts with friction:
    ~1% of the random problems here), under-relaxed."""
    for omega in omegas:
        lam = np.zeros(b.size)
        status = projected_gauss_seidel(W, b, mu, lam, model, tol, iterations, omega)
        if status > 0:
            return lam
    raise AssertionError(f"PGS did not converge: status {status}")


# ------------------------------------------------------------------ disk step
@pytest.mark.parametrize("seed", range(30))
def test_disk_minimum_against_a_search_over_the_circle(seed):
    """argmin ½xᵀAx + g·x over ‖x‖ ≤ r for a 2x2 PSD A (singular one time in
    three): the interior minimizer when feasible, else the best point of the
    circle x = r(cos φ, sin φ), found by scipy over φ."""
    rng = np.random.default_rng(seed)
    B = rng.normal(size=(2, 2 if seed % 3 else 1))
    A = B @ B.T
    g, r = rng.normal(size=2) * rng.uniform(0.1, 10), rng.uniform(0.05, 2)
    x = np.array(disk_minimum(A[0, 0], A[0, 1], A[1, 1], g[0], g[1], r))
    f = lambda y: 0.5 * y @ A @ y + g @ y  # noqa: E731
    on_circle = lambda phi: f(r * np.array([np.cos(phi), np.sin(phi)]))  # noqa: E731
    grid = np.linspace(0, 2 * np.pi, 721)
    phi0 = grid[np.argmin([on_circle(p) for p in grid])]
    best = minimize_scalar(on_circle, bracket=(phi0 - 0.01, phi0, phi0 + 0.01), tol=1e-12)
    candidates = [best.fun]
    if np.linalg.matrix_rank(A) == 2 and np.linalg.norm(np.linalg.solve(A, -g)) <= r:
        candidates.append(f(np.linalg.solve(A, -g)))
    assert np.linalg.norm(x) <= r * (1 + 1e-14)
    assert f(x) <= min(candidates) + 1e-12 * (1 + abs(min(candidates)))


# ----------------------------------------------------------- a point mass
@pytest.mark.parametrize("bt", [(0.3, 0.0), (0.2, -0.25), (3.0, 0.0), (1.0, 2.0), (-2.0, 0.5)])
def test_point_mass_closed_form(bt):
    """W = I/m for one contact: λ_n = −m b_n; sticking (λ_t = −m b_t) when
    ‖b_t‖ ≤ μ|b_n|, else sliding, λ_t = −μλ_n b_t/‖b_t‖."""
    m, mu, bn = 2.0, 0.5, -1.0
    W, b = np.eye(3) / m, np.array([bn, *bt])
    lam_n = -m * bn
    bt = np.array(bt)
    stick = np.linalg.norm(bt) <= mu * abs(bn)
    lam_t = -m * bt if stick else -mu * lam_n * bt / np.linalg.norm(bt)
    expected = np.array([lam_n, *lam_t])
    for method in ("pgs", "staggered"):
        result = solve_contact(W, b, np.array([mu]), method, "cone")
        assert result.converged and np.abs(result.lam - expected).max() < 1e-8
    if stick or bt[1] == 0:  # along t1 the box and the pyramid (diamond) give the cone's answer
        for method, friction in (("pgs", "box"), ("lemke", "box"), ("lemke", "pyramid")):
            assert np.abs(solve_contact(W, b, np.array([mu]), method, friction).lam - expected).max() < 1e-12


def test_block_with_anisotropic_tangent_block_slides_along_its_velocity():
    """A contact below the centre of a block with I_xx ≠ I_yy: W_tt is diagonal
    but not a multiple of I, so λ_t is not parallel to −b_t. Coulomb's λ_t is
    found independently: the angle φ where λ_t = r(cos φ, sin φ) is parallel
    to −u_t (brentq on the cross product). PGS (the exact disk step) finds
    it; projecting the unconstrained 2x2 step onto the disk would not."""
    m, h, Ixx, Iyy, mu = 1.0, 0.5, 0.05, 0.4, 0.4
    W = np.diag([1 / m, 1 / m + h * h / Iyy, 1 / m + h * h / Ixx])  # t1 = x turns about y, t2 = y about x
    b = np.array([-1.0, 1.0, 1.0])
    lam = _pgs(W, b, np.array([mu]))
    lam_n = -b[0] / W[0, 0]
    r = mu * lam_n
    u_t = lambda phi: W[1:, 1:] @ (r * np.array([np.cos(phi), np.sin(phi)])) + b[1:]  # noqa: E731
    cross = lambda phi: np.cos(phi) * u_t(phi)[1] - np.sin(phi) * u_t(phi)[0]  # noqa: E731
    phi = brentq(cross, np.pi, 1.5 * np.pi)  # λ_t in the third quadrant, opposing b_t
    assert np.abs(lam - [lam_n, r * np.cos(phi), r * np.sin(phi)]).max() < 1e-10
    naive = -np.linalg.solve(W[1:, 1:], b[1:])
    naive *= r / np.linalg.norm(naive)
    assert np.abs(naive - lam[1:]).max() > 0.02


# -------------------------------------------------------------- a box on a plane
@pytest.mark.parametrize("v0", [(1.0, 0.0, 0.0), (0.6, 0.8, 0.0), (-0.01, 0.02, 0.0)])
def test_box_on_plane_cone_closed_form(v0):
    """4 corners (12 rows, rank 6): the per-corner impulses are not unique, ν⁺
    is: sliding, v⁺ = v(1 − μ g dt/‖v‖) in any direction; sticking, ν⁺ = 0
    (the third case). PGS and staggered projections."""
    box, mu = BoxOnPlane(v0), 0.5
    expected = box.coulomb_velocity(mu)
    for method in ("pgs", "staggered"):
        result = solve_contact(box.W, box.b, np.full(4, mu), method, "cone", tol=1e-12 if method == "pgs" else None,
                               max_iterations=100000 if method == "pgs" else None)
        assert result.converged
        assert np.abs(box.velocity(result.lam) - expected).max() < 1e-6
        assert max(result.residual) < 1e-7


@pytest.mark.parametrize("v0", [(1.0, 0.0, 0.0), (-0.7, 0.0, 0.0), (0.6, 0.8, 0.0), (0.02, -0.01, 0.0)])
def test_box_on_plane_box_friction_and_pyramid(v0):
    """Box friction saturates each axis on its own: v⁺_i = v_i − μ g dt sign v_i
    (0 if that stops it). PGS (box) and Lemke (box LCP) agree with it; the
    4-sided pyramid (Lemke) too where the sliding is along t1 (its diamond
    has a vertex there)."""
    box, mu = BoxOnPlane(v0), 0.4
    stop = mu * G * box.dt
    expected = np.zeros(6)
    expected[:2] = [np.sign(v) * max(abs(v) - stop, 0.0) for v in box.nu_free[:2]]
    runs = [("pgs", "box"), ("lemke", "box")] + ([("lemke", "pyramid")] if v0[1] == 0 else [])
    for method, friction in runs:
        result = solve_contact(box.W, box.b, np.full(4, mu), method, friction, tol=1e-13, max_iterations=100000)
        assert result.converged, (method, friction)
        assert np.abs(box.velocity(result.lam) - expected).max() < 1e-9, (method, friction)


@pytest.mark.parametrize("friction, v0", [(CONE, (1.0, 0.0, 0.0)), (CONE, (-0.01, 0.02, 0.0)),
                                         (BOX, (0.6, 0.8, 0.0)), (BOX, (0.02, -0.01, 0.0))])
def test_pgs_velocity_test_ends_a_redundant_problem(friction, v0):
    """The box on four corners (12 rows of rank 6) with the impulses' test
    off (tol = 0): only the velocity test can stop PGS. It stops, and the
    impulses it returns meet the contact conditions (contact_residual, the
    independent check) to a few times the velocity tolerance, and give the
    closed-form ν⁺ (sliding or sticking: Coulomb's cone or the box)."""
    box, mu, vtol = BoxOnPlane(v0), 0.4, 1e-10
    if friction == CONE:
        expected = box.coulomb_velocity(mu)
    else:
        stop = mu * G * box.dt
        expected = np.zeros(6)
        expected[:2] = [np.sign(v) * max(abs(v) - stop, 0.0) for v in box.nu_free[:2]]
    lam = np.zeros(12)
    sweeps = projected_gauss_seidel(box.W, box.b, np.full(4, mu), lam, friction, 0.0, 100000, 1.0, vtol)
    assert sweeps > 0
    normal, cone, _, dissipation = contact_residual(box.W, box.b, np.full(4, mu), lam, friction, 4)
    assert normal < 10 * vtol and cone < 1e-15 * mu * lam[0::3].max()  # on the disk, to round-off
    assert dissipation < 10 * vtol * mu * lam[0::3].max()
    assert np.abs(box.velocity(lam) - expected).max() < 1e-8


def test_pgs_velocity_residual_of_a_friction_pair():
    """The friction part of PGS's velocity test, by hand: inside the disk
    the slip speed; on its boundary the distance of u_t from the ray
    opposite to λ_t (0 when the friction opposes the slip), plus W_tt
    times any excess over the disk; the box row likewise per axis."""
    from multibody.solvers.residual import box_slip_residual, disk_slip_residual
    r = 2.0
    assert disk_slip_residual(0.3, -0.4, 3.0, 4.0, r, 1.0) == pytest.approx(5.0)      # sticks, slips at 5
    assert disk_slip_residual(2.0, 0.0, -7.0, 0.0, r, 1.0) == 0.0                     # slides against λ_t
    assert disk_slip_residual(2.0, 0.0, 0.0, 0.0, r, 1.0) == 0.0                      # at the bound, at rest
    assert disk_slip_residual(2.0, 0.0, -1.0, 3.0, r, 1.0) == pytest.approx(3.0)      # slip not opposed: 3 across
    assert disk_slip_residual(2.0, 0.0, 1.5, 0.0, r, 1.0) == pytest.approx(1.5)       # friction along the slip
    assert disk_slip_residual(0.0, 3.0, 0.0, -1.0, r, 4.0) == pytest.approx(4.0)      # 1 over the disk, W_tt 4
    assert box_slip_residual(0.5, -0.3, r, 1.0) == pytest.approx(0.3)
    assert box_slip_residual(2.0, -0.3, r, 1.0) == 0.0 and box_slip_residual(-2.0, 0.3, r, 1.0) == 0.0
    assert box_slip_residual(2.0, 0.3, r, 1.0) == pytest.approx(0.3)
    assert box_slip_residual(-2.5, 0.0, r, 2.0) == pytest.approx(1.0)


def test_pyramid_k4_is_the_diamond_not_the_box():
    """Sliding along the diagonal: box friction pushes μλ_n on each axis, the
    4-sided pyramid only μλ_n in all (|λ_t1| + |λ_t2| ≤ μλ_n), the cone μλ_n
    along the diagonal."""
    W, b, mu = np.eye(3), np.array([-1.0, 5.0, 5.0]), np.array([0.5])
    box = solve_contact(W, b, mu, "lemke", "box").lam
    pyramid = solve_contact(W, b, mu, "lemke", "pyramid", k=4).lam
    cone = solve_contact(W, b, mu, "pgs", "cone").lam
    assert np.allclose(box[1:], [-0.5, -0.5]) and np.isclose(np.abs(pyramid[1:]).sum(), 0.5)
    assert np.allclose(cone[1:], -0.5 / np.sqrt(2))
    assert contact_residual(W, b, mu, pyramid, PYRAMID, 4)[3] < 1e-12
    assert contact_residual(W, b, mu, pyramid, BOX, 0)[3] > 0.1  # not a box solution


# ------------------------------------------------------ random W = J M⁻¹ Jᵀ
@pytest.mark.parametrize("seed", range(10))
def test_pgs_satisfies_coulomb_on_random_delassus_problems(seed):
    """Singular W (3nc rows, nv < 3nc columns) and approaching contacts:
    the PGS cone and box results satisfy their conditions (residual < 1e-8),
    and the box LCP's too; Lemke's pyramid result satisfies the pyramid's."""
    rng = np.random.default_rng(seed)
    nc = int(rng.integers(1, 5))
    nv = int(rng.integers(max(1, nc), 3 * nc + 1))
    W, J, _ = delassus(rng, nc, nv)
    b = J @ rng.normal(size=nv)  # the rows' velocities of a free motion
    mu = rng.uniform(0.1, 1.0, nc)
    for model in (CONE, BOX):
        lam = _pgs(W, b, mu, model)
        assert max(contact_residual(W, b, mu, lam, model, 0)) < 1e-8
    for friction, model, k in (("box", BOX, 0), ("pyramid", PYRAMID, 4), ("pyramid", PYRAMID, 7)):
        result = solve_contact(W, b, mu, "lemke", friction, k=max(k, 3))
        assert max(contact_residual(W, b, mu, result.lam, model, k)) < 1e-10


def _stewart_trinkle(W, b, mu, k):
    """The pyramid LCP written from its definition with dense numpy (every
    contact here has μ > 0): unknowns [λ_n (nc); β (nc·k); γ (nc)]."""
    nc = mu.size
    angles = 2 * np.pi * np.arange(k) / k
    Nh = np.zeros((3 * nc, nc))
    D = np.zeros((3 * nc, nc * k))
    E = np.zeros((nc * k, nc))
    for c in range(nc):
        Nh[3 * c, c] = 1
        D[3 * c + 1, c * k:(c + 1) * k] = np.cos(angles)
        D[3 * c + 2, c * k:(c + 1) * k] = np.sin(angles)
        E[c * k:(c + 1) * k, c] = 1
    A = np.block([[Nh.T @ W @ Nh, Nh.T @ W @ D, np.zeros((nc, nc))],
                  [D.T @ W @ Nh, D.T @ W @ D, E],
                  [np.diag(mu), -E.T, np.zeros((nc, nc))]])
    return A, np.concatenate([Nh.T @ b, D.T @ b, np.zeros(nc)]), Nh, D


@pytest.mark.parametrize("seed", range(6))
def test_lemke_solves_the_stewart_trinkle_lcp_exactly(seed):
    rng = np.random.default_rng(50 + seed)
    nc, k = int(rng.integers(1, 5)), int(rng.integers(3, 9))
    W, J, _ = delassus(rng, nc, int(rng.integers(2, 3 * nc + 2)))
    b = J @ rng.normal(size=J.shape[1])
    mu = rng.uniform(0.1, 1.0, nc)
    A_ref, q_ref, Nh, D = _stewart_trinkle(W, b, mu, k)
    cs, sn, group = pyramid_directions(k)
    A, q = friction_lcp(W, b, mu, cs, sn, group, 1)
    assert np.abs(A - A_ref).max() < 1e-12 and np.abs(q - q_ref).max() < 1e-12
    z, w = np.empty(q.size), np.empty(q.size)
    assert lemke_lcp(A, q, z, w, 10000) >= 0
    w_ref = A_ref @ z + q_ref
    assert z.min() >= 0 and w_ref.min() > -1e-10 and np.abs(z * w_ref).max() < 1e-10
    lam = np.zeros(3 * nc)
    assert pyramid_lcp(W, b, mu, k, lam, 10000) >= 0
    assert np.abs(lam - (Nh @ z[:nc] + D @ z[nc:nc + nc * k])).max() < 1e-12


@pytest.mark.slow
def test_coulomb_campaign():
    """300 random singular problems: PGS (cone, box; under-relaxed down to
    ω = 0.3 where it cycles) and Lemke (box, pyramid)."""
    rng = np.random.default_rng(77)
    for _ in range(300):
        nc = int(rng.integers(1, 7))
        W, J, _ = delassus(rng, nc, int(rng.integers(nc, 3 * nc + 1)))
        b = J @ rng.normal(size=J.shape[1])
        mu = rng.uniform(0.0, 1.2, nc)
        for model in (CONE, BOX):
            lam = _pgs(W, b, mu, model, omegas=(1.0, 0.5, 0.3))
            assert max(contact_residual(W, b, mu, lam, model, 0)) < 1e-8
        for friction, model in (("box", BOX), ("pyramid", PYRAMID)):
            lam = solve_contact(W, b, mu, "lemke", friction).lam
            assert max(contact_residual(W, b, mu, lam, model, 4)) < 1e-10
