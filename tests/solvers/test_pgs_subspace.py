"""Projected Gauss–Seidel with PGS-SM's subspace steps (solvers/pgs.py,
Silcowitz, Niebe & Erleben 2010) and the velocity test of the sweeps, on
problems whose answers are known in closed form."""
import itertools

import numpy as np
import pytest

from multibody.solvers import BOX, CONE, contact_residual, projected_gauss_seidel, projected_gauss_seidel_subspace

from .problems import G, BoxOnPlane


def box_stack(n, mass=1.0, half=0.1, dt=1e-3):
    """n equal cubes (half edge ``half``) stacked on the plane z = 0, at rest
    before a step of ``dt`` under gravity: each interface (ground–box 0,
    box k−1 – box k) touches at the 4 corners of the upper box's bottom face
    (normal z from the lower body to the upper, tangents x, y). Body
    velocities (v of the centre, ω) in world axes. Returns (W, b, J, M⁻¹,
    ν_free): 12n rows of rank 6n, W singular."""
    I = mass * (2 * half) ** 2 / 6.0
    Minv = np.diag(np.tile([1 / mass] * 3 + [1 / I] * 3, n))
    rows = []
    for k in range(n):
        centre = np.array([0.0, 0.0, (2 * k + 1) * half])
        for sx, sy in itertools.product((1, -1), (1, -1)):
            p = np.array([sx * half, sy * half, 2 * k * half])
            for d in np.eye(3)[[2, 0, 1]]:
                row = np.zeros(6 * n)
                row[6 * k:6 * k + 6] = np.concatenate([d, np.cross(p - centre, d)])
                if k > 0:  # the box below, on the other side
                    below = centre - [0.0, 0.0, 2 * half]
                    row[6 * k - 6:6 * k] = -np.concatenate([d, np.cross(p - below, d)])
                rows.append(row)
    J = np.array(rows)
    W = J @ Minv @ J.T
    nu_free = np.tile([0.0, 0.0, -G * dt, 0.0, 0.0, 0.0], n)
    return 0.5 * (W + W.T), J @ nu_free, J, Minv, nu_free


def scratch(m):
    return np.zeros((2, m), np.int64), np.zeros(m * m), np.zeros((5, m))


@pytest.mark.parametrize("model", [CONE, BOX])
def test_subspace_steps_rest_a_stack_in_few_sweeps(model):
    """Five boxes resting on each other (60 rows of rank 30), from zero
    impulses: PGS-SM meets the contact conditions (contact_residual, the
    independent check) to the velocity tolerance, every body ends at rest,
    each interface carries the weight above it (the closed form (5 − k) m g
    dt), and it takes a fraction of the sweeps that Gauss–Seidel alone
    needs on the same problem."""
    n, dt, vtol = 5, 1e-3, 1e-10
    W, b, J, Minv, nu_free = box_stack(n, dt=dt)
    mu = np.full(4 * n, 0.5)
    lam = np.zeros(12 * n)
    sweeps = projected_gauss_seidel_subspace(W, b, mu, lam, model, 0.0, 100000, 1.0, vtol, *scratch(12 * n))
    plain = np.zeros(12 * n)
    plain_sweeps = projected_gauss_seidel(W, b, mu, plain, model, 0.0, 100000, 1.0, vtol)
    assert 0 < sweeps and 0 < plain_sweeps
    normal, cone, _, dissipation = contact_residual(W, b, mu, lam, model, 0)
    assert normal < 10 * vtol and cone < 1e-12 and dissipation < 1e-12
    nu = nu_free + Minv @ J.T @ lam
    assert np.abs(nu).max() < 1e-9
    for k in range(n):
        load = lam[12 * k:12 * k + 12:3].sum()
        assert load == pytest.approx((n - k) * G * dt, rel=1e-9)
    assert sweeps * 5 < plain_sweeps, (sweeps, plain_sweeps)


@pytest.mark.parametrize("model", [CONE, BOX])
def test_subspace_and_plain_sweeps_agree_where_the_answer_is_unique(model):
    """A box sliding on four corners, warm-started near its solution: both
    give the closed-form velocity (Coulomb's cone or the box)."""
    box, mu = BoxOnPlane((0.6, 0.8, 0.0)), 0.4
    out = []
    for solve in ("plain", "subspace"):
        lam = np.zeros(12)
        if solve == "plain":
            projected_gauss_seidel(box.W, box.b, np.full(4, mu), lam, model, 0.0, 100000, 1.0, 1e-12)
        else:
            projected_gauss_seidel_subspace(box.W, box.b, np.full(4, mu), lam, model, 0.0, 100000, 1.0, 1e-12,
                                            *scratch(12))
        out.append(box.velocity(lam))
    assert np.abs(out[0] - out[1]).max() < 1e-10
    if model == CONE:
        assert np.abs(out[0] - box.coulomb_velocity(mu)).max() < 1e-10


@pytest.mark.parametrize("seed", range(20))
@pytest.mark.parametrize("model", [CONE, BOX])
def test_a_sweep_measures_the_impulses_it_started_from(seed, model):
    """The velocity test of a sweep measures each block (a contact) at the
    λ it met, before its update. With one contact the block is the whole
    problem, so the residual of one sweep is exactly the velocity residual
    of the starting λ (velocity_residual, at λ itself) — here with λ_t on
    the bound of its λ_n (sliding) and a normal impulse that the sweep
    changes. Measured with the bound and row velocities after the normal's
    update, a sliding λ_t whose λ_n grew looked like a sticking one with
    the full sliding speed, and a redundant sliding box ran to its cap."""
    from multibody.solvers.pgs import _ALL, _immovable, _sweeps, velocity_residual
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(3, 3))
    W = A @ A.T + 0.1 * np.eye(3)
    b = rng.normal(size=3)
    mu = np.array([rng.uniform(0.2, 1.0)])
    ln = rng.uniform(0.5, 2.0)
    angle = rng.uniform(0, 2 * np.pi)
    lam = np.array([ln, mu[0] * ln * np.cos(angle), mu[0] * ln * np.sin(angle)])
    if model == BOX:
        lam[1:] = mu[0] * ln * np.sign(lam[1:])
    expected = velocity_residual(W, b, mu, lam, model, _immovable(W))
    start = lam.copy()
    it, residual = _sweeps(W, b, mu, lam, model, 0.0, 1, 1.0, 0.0, _ALL, _ALL)
    assert lam[0] != start[0]  # the sweep moved the normal impulse
    assert residual == pytest.approx(expected, rel=1e-12, abs=1e-14)


@pytest.mark.parametrize("seed", [29, 83, 111])
def test_stalled_gauss_seidel_gives_up_early(seed):
    """Random singular problems on which Gauss–Seidel cycles (Coulomb's
    disk; 20 000 plain sweeps leave a velocity residual of 0.1–0.3): with a
    cap of 200 000 sweeps, PGS-SM returns NOT_CONVERGED with exactly the
    impulses it returns with a cap of 100 — it stopped within 100 sweeps
    (STALL_SWEEPS without a 1 % decrease after a refused subspace step),
    not at the cap — and their residual is within 2× of the 20 000 plain
    sweeps' (nothing was lost by stopping)."""
    from multibody._status import NOT_CONVERGED
    from multibody.solvers.pgs import _immovable, velocity_residual
    from .problems import delassus
    rng = np.random.default_rng(seed)
    nc = int(rng.integers(2, 8))
    nv = int(rng.integers(nc, 3 * nc))
    W, J, _ = delassus(rng, nc, nv)
    b = J @ rng.normal(size=nv) - 0.1
    mu = rng.uniform(0.1, 1.5, nc)
    m = 3 * nc
    plain = np.zeros(m)
    assert projected_gauss_seidel(W, b, mu, plain, CONE, 0.0, 20000, 1.0, 1e-10) == NOT_CONVERGED
    results = []
    for cap in (200000, 100):
        lam = np.zeros(m)
        assert projected_gauss_seidel_subspace(W, b, mu, lam, CONE, 0.0, cap, 1.0, 1e-10, *scratch(m)) == NOT_CONVERGED
        results.append(lam)
    assert np.array_equal(results[0], results[1])
    small = _immovable(W)
    assert velocity_residual(W, b, mu, results[0], CONE, small) <= 2 * velocity_residual(W, b, mu, plain, CONE, small)


def foundation(n, cfm, load_offset, dt=0.01):
    """A 8 kg unit cube resting on n × n compliant point contacts under its
    bottom face (Drumwright's E6), frictionless: the normal rows only,
    W = J M⁻¹ Jᵀ (rank 6) + cfm·I, b = J ν_free − φ-terms of a sink of
    1 mm, with a vertical load of 50 N at ``load_offset`` (x, y) from the
    centre of the top face. Returns (W, b) of the 3n² rows (tangent rows
    immovable-free but with μ = 0)."""
    mass, inertia = 8.0, 8.0 / 6.0
    Minv = np.diag([1 / mass] * 3 + [1 / inertia] * 3)
    s = (np.arange(n) + 0.5) / n - 0.5
    rows = []
    for x in s:
        for y in s:
            p = np.array([x, y, -0.5])
            for d in np.eye(3)[[2, 0, 1]]:
                rows.append(np.concatenate([d, np.cross(p, d)]))
    J = np.array(rows)
    force = np.array([0.0, 0.0, -50.0])
    arm = np.array([load_offset[0], load_offset[1], 0.5])
    wrench = np.concatenate([force + [0.0, 0.0, -mass * G], np.cross(arm, force)])
    nu_free = dt * Minv @ wrench
    W = J @ Minv @ J.T + cfm * np.eye(len(J))
    b = J @ nu_free
    b[::3] -= 1e-3 / dt * 0.5  # pressed in: the springs push back
    return 0.5 * (W + W.T), b


def test_conjugate_gradients_solve_many_contacts_on_one_body():
    """W_AA of 900 contacts on one body is rank 6 plus cfm·I: conjugate
    gradients meet their backward-error test (CG_TOL) within their
    iteration cap (7 distinct eigenvalues), and the error against numpy's
    dense solve is within what that residual allows, ‖r‖/λ_min(A) (the
    condition number is 1e7: the residual, a velocity, is what the contact
    solver measures)."""
    from multibody.solvers.pgs import CG_FLOOR, CG_ITERATIONS, CG_TOL, _conjugate_gradients
    W, b = foundation(30, 1e-5, (0.2, 0.1))
    A, rhs = W[::3, ::3].copy(), -b[::3]
    x = np.zeros(len(A))
    assert _conjugate_gradients(A, rhs, x, 0.0)
    bound = 2 * max(CG_TOL * np.linalg.norm(rhs), CG_FLOOR * np.trace(A) * np.linalg.norm(x))  # CG's test
    assert np.linalg.norm(A @ x - rhs) < bound  # the true residual, not CG's recurrence
    expected = np.linalg.solve(A, rhs)
    assert np.linalg.norm(x - expected) < bound / np.linalg.eigvalsh(A)[0]
    assert CG_ITERATIONS < len(A)  # the cap is far below the size: the low rank is what makes it converge


def test_conjugate_gradients_refuse_a_singular_block():
    """A rigid redundant block (cfm = 0: W_AA singular) with a right side
    outside its range: CG reports failure (the factor, which drops the
    dependent rows, is used instead)."""
    from multibody.solvers.pgs import _conjugate_gradients
    W, b = foundation(12, 0.0, (0.0, 0.0))
    A = W[::3, ::3].copy()
    rhs = np.random.default_rng(3).normal(size=len(A))
    assert not _conjugate_gradients(A, rhs, np.zeros(len(A)), 0.0)


@pytest.mark.parametrize("offset", [(0.0, 0.0), (0.45, 0.3)])
def test_subspace_steps_on_a_compliant_foundation(offset):
    """900 frictionless compliant contacts on one body (the subspace step's
    block of 900 normal rows goes to conjugate gradients): the solution of
    the LCP of the positive definite W equals scipy's bounded least
    squares on the equivalent QP (min ½λᵀWλ + bᵀλ, λ ≥ 0, with W = LLᵀ:
    min ‖Lᵀλ + L⁻¹b‖²); off centre the load lifts part of the face (λ = 0
    there), which the block pivoting finds."""
    from scipy.optimize import lsq_linear
    W, b = foundation(30, 1e-5, offset)
    m = len(b)
    mu = np.zeros(m // 3)
    lam = np.zeros(m)
    vtol = 1e-12
    sweeps = projected_gauss_seidel_subspace(W, b, mu, lam, CONE, 0.0, 2000, 1.0, vtol, *scratch(m))
    assert 0 < sweeps < 2000
    A, c = W[::3, ::3], b[::3]
    L = np.linalg.cholesky(A)
    ref = lsq_linear(L.T, -np.linalg.solve(L, c), bounds=(0.0, np.inf), method="bvls", tol=1e-15).x
    # the row velocities agree to the velocity tolerance; λ to what it determines (cond(A) = 1e7)
    assert np.abs(A @ (lam[::3] - ref)).max() < 10 * vtol
    assert np.abs(lam[::3] - ref).max() < 10 * vtol / np.linalg.eigvalsh(A)[0]
    normal, _, _, _ = contact_residual(W, b, mu, lam, CONE, 0)
    assert normal < 10 * vtol
    assert np.all(lam[1::3] == 0.0) and np.all(lam[2::3] == 0.0)
    lifted = np.sum(ref < 1e-12 * ref.max())
    assert (lifted > 0) == (offset != (0.0, 0.0))
