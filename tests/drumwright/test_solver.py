"""Drumwright's compliant constraints on explicit problems
(multibody.solvers.drumwright; seed 003 and notes/seed-003.md). Oracles:
implicit Euler in closed form (C4, invariant 2), the max law's
complementarity conditions checked directly, the notes' counterexample P5,
and the paper's own program for pitfall P6."""
import numpy as np
import pytest

from multibody.errors import ContactSolveError, InputError, NonFiniteError
from multibody.solvers.drumwright import compliant_impulses, compliant_row


def random_problem(rng, rows, nv=9, rank=None):
    """(W, b): W = J M⁻¹ Jᵀ for a random SPD M and J of the given rank."""
    A = rng.normal(size=(nv, nv))
    M = A @ A.T + nv * np.eye(nv)
    J = rng.normal(size=(rows, nv))
    if rank is not None:
        J = rng.normal(size=(rows, rank)) @ rng.normal(size=(rank, nv))
    return J @ np.linalg.solve(M, J.T), rng.normal(size=rows)


def laws(K, B, h):
    """The closed form of notes C7: erp = K/(hK + B), cfm = 1/(h(hK + B))."""
    return K / (h * K + B), 1.0 / (h * (h * K + B))


def test_compliant_row_is_the_erp_cfm_form():
    for K, B, h in ((1e6, 10.0, 1e-3), (1e15, 1.0, 0.1), (0.0, 1e8, 0.01), (3.0, 0.0, 0.5)):
        erp, cfm = compliant_row(K, B, h)
        assert (erp, cfm) == pytest.approx(laws(K, B, h), rel=1e-15)
    assert compliant_row(np.inf, 1.0, 0.01) == (100.0, 0.0)  # rigid: ERP = 1, CFM = 0
    assert compliant_row(0.0, 0.0, 0.01) == (0.0, np.inf)    # no spring, no damper: no force


@pytest.mark.parametrize("m,k,b,h,f", [(2.0, 1e6, 3.0, 1e-2, 1.0), (0.5, 1e12, 0.0, 0.1, -4.0), (1.0, 1e3, 50.0, 1e-3, 0.0)])
def test_bilateral_particle_reproduces_implicit_euler(m, k, b, h, f):
    """Invariant 2: a particle with φ = x (G = 1) under the bilateral step is
    implicit Euler, v₁ = (v₀ + (h/m)(f − kx₀))/(1 + hb/m + h²k/m)."""
    x0, v0 = 0.01, 0.5
    vf = v0 + h * f / m
    lam = compliant_impulses([[1.0 / m]], [vf], h, "bilateral", [x0], k, b)
    v1 = vf + lam[0] / m
    assert v1 == pytest.approx((v0 + h / m * (f - k * x0)) / (1 + h * b / m + h * h * k / m), rel=1e-13, abs=1e-15)


def test_unilateral_rows_follow_the_max_law_not_the_min_norm_qp():
    """Pitfall P5: W = [[1, 1], [1, 1]], D = h²K + hB = 1 (h = 1, K = B =
    ½), c = (1, 0): the max law gives λ = (½, 0), the paper's QP (83–85)
    (0.4, 0.2) — the second row pushes though its spring is uncompressed."""
    W, b = np.array([[1.0, 1.0], [1.0, 1.0]]), np.array([-1.0, 0.0])
    ours = compliant_impulses(W, b, 1.0, "unilateral", [0.0, 0.0], 0.5, 0.5)
    paper = compliant_impulses(W, b, 1.0, "unilateral", [0.0, 0.0], 0.5, 0.5, method="paper")
    assert ours == pytest.approx([0.5, 0.0], abs=1e-9)
    assert paper == pytest.approx([0.4, 0.2], abs=1e-7)


@pytest.mark.parametrize("rank", [None, 3])
def test_unilateral_complementarity_on_random_problems(rank):
    """Λ ≥ 0 ⟂ u + cfm·Λ + erp·φ ≥ 0 (u = WΛ + b) row by row, also with a
    rank-deficient W (redundant rows, P8), with the laws written here."""
    rng = np.random.default_rng(7)
    for _ in range(5):
        m, h = 8, 10 ** rng.uniform(-4, -1)
        W, b = random_problem(rng, m, rank=rank)
        phi = rng.uniform(-1e-3, 1e-3, m)
        K, B = 10 ** rng.uniform(2, 12, m), rng.uniform(0, 100, m)
        lam = compliant_impulses(W, b, h, "unilateral", phi, K, B)
        erp, cfm = laws(K, B, h)
        w = W @ lam + b + cfm * lam + erp * phi
        scale = np.abs(b).max() + np.abs(erp * phi).max()
        assert lam.min() >= -1e-9 * np.abs(lam).max()
        assert w.min() >= -1e-7 * scale
        assert np.abs(lam * w).max() <= 1e-7 * scale * np.abs(lam).max()
        assert np.any(lam > 1e-3 * lam.max()) and np.any(lam < 1e-9 * lam.max())  # both kinds of rows


def test_bilateral_rows_are_eliminated_exactly():
    """Mixed bilateral and unilateral rows: the bilateral rows' laws hold to
    round-off (u + cfm Λ + erp φ = 0), the unilateral ones are complementary."""
    rng = np.random.default_rng(3)
    m, h = 7, 1e-2
    W, b = random_problem(rng, m)
    kind = ["bilateral"] * 3 + ["unilateral"] * 4
    phi = rng.uniform(-1e-3, 1e-3, m)
    K, B = np.full(m, 1e8), np.full(m, 5.0)
    lam = compliant_impulses(W, b, h, kind, phi, K, B)
    erp, cfm = laws(K, B, h)
    w = W @ lam + b + cfm * lam + erp * phi
    assert np.abs(w[:3]).max() <= 1e-9 * np.abs(b).max()
    assert lam[3:].min() >= 0 and w[3:].min() >= -1e-8 and np.abs(lam[3:] * w[3:]).max() <= 1e-9


def test_rigid_bilateral_with_velocity_product_term():
    """K = ∞: φ₁ = 0, i.e. G v₁ = −φ₀/h − hĠv₀ (notes C6), also when W is
    singular (two copies of one row: least squares)."""
    rng = np.random.default_rng(5)
    W, b = random_problem(rng, 3)
    W = np.block([[W, W[:, :1]], [W[:1, :], W[:1, :1]]])  # row 3 repeats row 0
    b = np.append(b, b[0])
    phi = np.array([1e-3, -2e-3, 5e-4, 1e-3])
    gdot = np.array([0.3, -0.1, 0.2, 0.3])
    h = 1e-2
    lam = compliant_impulses(W, b, h, "bilateral", phi, np.inf, 1.0, gdot=gdot)
    assert W @ lam + b == pytest.approx(-phi / h - h * gdot, rel=1e-9)


def friction_problem(rng, nc=3, mu=0.5, h=1e-2):
    W, b = random_problem(rng, 3 * nc, nv=12)
    b[::3] = -np.abs(b[::3])  # approaching contacts, which press
    kind = ["normal", "tangent", "tangent"] * nc
    phi = np.zeros(3 * nc)
    phi[::3] = rng.uniform(-2e-3, 0, nc)
    K, B = np.zeros(3 * nc), np.zeros(3 * nc)
    K[::3], B[::3] = 1e6, 10.0
    B[1::3] = B[2::3] = 1e4
    mus = np.zeros(3 * nc)
    mus[::3] = mu
    return W, b, h, kind, phi, K, B, mus


def test_friction_in_the_cone_with_maximal_dissipation():
    """The solution (the compiled PGS) has normal impulses of the max law
    and friction impulses in the cone ‖Λ_t‖ ≤ μΛ_n: inside it the viscous
    law u_t + Λ_t/(hB_t) = 0, on its boundary opposite to the slip — the
    conditions checked here; staggered projections by clarabel give the
    same impulses where they converge (not guaranteed: they cycle on one
    of these problems)."""
    rng = np.random.default_rng(11)
    compared = 0
    for _ in range(6):
        W, b, h, kind, phi, K, B, mu = friction_problem(rng)
        lam = compliant_impulses(W, b, h, kind, phi, K, B, mu)
        try:
            staggered = compliant_impulses(W, b, h, kind, phi, K, B, mu, method="staggered")
        except ContactSolveError:
            staggered = None
        if staggered is not None:
            assert staggered == pytest.approx(lam, rel=1e-5, abs=1e-7)  # clarabel: sliding directions to ~1e-5 (qp.py)
            compared += 1
        erp, cfm = laws(K, B, h)
        w = W @ lam + b + cfm * lam + erp * phi
        for c in range(3):
            n, t = 3 * c, slice(3 * c + 1, 3 * c + 3)
            assert lam[n] >= 0 and w[n] >= -1e-8 and abs(lam[n] * w[n]) <= 1e-9 * max(1.0, np.abs(lam).max())
            radius = mu[n] * lam[n]
            assert np.linalg.norm(lam[t]) <= radius * (1 + 1e-7) + 1e-12
            if np.linalg.norm(lam[t]) < radius * (1 - 1e-6):
                assert np.abs(w[t]).max() <= 1e-7
            elif radius > 1e-6 * np.abs(lam).max():  # sliding: λ_t = −μλ_n ŵ_t (ŵ_t the slip with the damper)
                assert lam[t] == pytest.approx(-radius * w[t] / np.linalg.norm(w[t]), abs=1e-6 * radius)
    assert compared >= 4


def test_frictionless_when_mu_is_zero():
    rng = np.random.default_rng(2)
    W, b, h, kind, phi, K, B, mu = friction_problem(rng, mu=0.0)
    lam = compliant_impulses(W, b, h, kind, phi, K, B, mu)
    assert np.all(lam[1::3] == 0.0) and np.all(lam[2::3] == 0.0)


def test_paper_program_inflates_the_normal_impulse_of_a_sliding_contact():
    """Pitfall P6: one contact of a 1 kg point sliding at 1 m/s, pressed by
    its weight (h = 0.01, K_n = 1e10, B_t = 10⁶/h, ζ = 1/h, μ = 0.125).
    The max law gives Λ_n = mgh (the weight's impulse) and friction
    μΛ_n; the paper's QP raises Λ_n above it (cheaper than the slip cost
    ~(hB_t)²) — the block would hop."""
    h, m, g, mu = 0.01, 1.0, 9.8, 0.125
    W = np.eye(3) / m
    b = np.array([-g * h, 1.0, 0.0])  # free velocity: falling by gh, sliding at 1 m/s
    kind = ["normal", "tangent", "tangent"]
    K, B = np.array([1e10, 0.0, 0.0]), np.array([1.0, 1e6 / h, 1e6 / h])
    mus = np.array([mu, 0.0, 0.0])
    ours = compliant_impulses(W, b, h, kind, np.zeros(3), K, B, mus)
    assert ours[0] == pytest.approx(m * g * h * (1 + 1e-12), rel=1e-6)  # u_n + cfm Λ_n = 0: Λ_n ≈ m g h
    assert ours[1] == pytest.approx(-mu * ours[0], rel=1e-6)
    paper = compliant_impulses(W, b, h, kind, np.zeros(3), K, B, mus, method="paper")
    assert paper[0] > 10 * ours[0]


def test_bad_input_names_the_row():
    W = np.eye(2)
    with pytest.raises(InputError, match="stiffness\\[1\\]"):
        compliant_impulses(W, [0, 0], 0.01, "unilateral", [0, 0], [1.0, -1.0], 1.0)
    with pytest.raises(InputError, match="damping\\[0\\]"):
        compliant_impulses(W, [0, 0], 0.01, "unilateral", [0, 0], 1.0, [-1.0, 0.0])
    with pytest.raises(InputError, match="time step"):
        compliant_impulses(W, [0, 0], 0.0, "unilateral", [0, 0], 1.0, 1.0)
    with pytest.raises(NonFiniteError, match="phi\\[1\\]"):
        compliant_impulses(W, [0, 0], 0.01, "unilateral", [0, np.nan], 1.0, 1.0)
    with pytest.raises(InputError, match="tangent rows"):
        compliant_impulses(np.eye(3), [0, 0, 0], 0.01, ["normal", "tangent", "unilateral"], [0, 0, 0], 1.0, 1.0)
    with pytest.raises(InputError, match="cannot be rigid"):
        compliant_impulses(np.eye(3), [0, 0, 0], 0.01, ["normal", "tangent", "tangent"], [0, 0, 0], np.inf, 1.0)
    with pytest.raises(InputError, match="kind"):
        compliant_impulses(W, [0, 0], 0.01, "sideways", [0, 0], 1.0, 1.0)
