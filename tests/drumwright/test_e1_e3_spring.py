"""Drumwright (seed 003) §3.1, experiments E1–E3 (notes/seed-003.md C1–C4,
invariant 1): the spring–mass–damper m ẍ + b ẋ + k x = 0 (m = 1) under
explicit, semi-implicit and implicit Euler, and the library's
``semi_implicit_euler`` on a real 1-DOF slider.

The scheme implementations live in ``experiments/drumwright/e1_e3_spring.py``
(loaded by path with importlib: ``experiments/`` is not a package). Every
oracle here is a closed form written in this file — the iteration matrices,
their characteristic polynomials λ² − Tλ + D and the Jury stability bounds —
never a value computed by the code under test.

Finding recorded here: the eigenvalues quoted in the notes for E1
(±0.949 at b = 2e5; −1.051, 0.951 at b = 2.1e5; |λ|² ≈ 1.1 at b = 1) are those
of h²k/m = 0.1 (e.g. k = 1e9), not of the paper's h = 1e-5, k = 1e6
(h²k/m = 1e-4), whose eigenvalues are ±0.99995 and −1.09995, 0.99995, and
at b = 10 exactly on the unit circle (neutral, not growing). The
classification stable/unstable of the paper's four cases is unchanged
except b = 10. Also: the library's semi-implicit Euler takes the joint
damping explicitly, so its bound is h²k/m < 4 − 2hb/m, not the paper's
(implicit-damping) 4 + 2hb/m that its docstring and docs/simulation.md quoted
before this issue.
"""
import numpy as np
import pytest

import multibody as mb
from multibody.forces import JointDamper, JointSpring
from multibody.integrators import INTEGRATORS

from .experiments import load

S = load("e1_e3_spring")
M = 1.0


# ---- closed forms (the oracles), m = 1 kept explicit --------------------------------------------

def A_explicit(h, k, b, m=M):
    """Eq 10: [[1, h], [−hk/m, 1 − hb/m]]."""
    return np.array([[1.0, h], [-h * k / m, 1.0 - h * b / m]])


def A_semi_implicit(h, k, b, m=M):
    """Eqs 11–12 solved, c = 1/(1 + hb/m): [[1 − c h²k/m, c h], [−c hk/m, c]]."""
    c = 1.0 / (1.0 + h * b / m)
    return np.array([[1.0 - c * h * h * k / m, c * h], [-c * h * k / m, c]])


def A_implicit(h, k, b, m=M):
    """Eqs 13–14 solved, d = 1/(1 + hb/m + h²k/m): [[1 − d h²k/m, d h], [−d hk/m, d]]."""
    d = 1.0 / (1.0 + h * b / m + h * h * k / m)
    return np.array([[1.0 - d * h * h * k / m, d * h], [-d * h * k / m, d]])


def A_explicit_damping(h, k, b, m=M):
    """v₁ = v₀ + h/m(−k x₀ − b v₀) = −(hk/m) x₀ + (1 − hb/m) v₀ and
    x₁ = x₀ + h v₁ = (1 − h²k/m) x₀ + h(1 − hb/m) v₀:
    [[1 − h²k/m, h(1 − hb/m)], [−hk/m, 1 − hb/m]]; T = 2 − h²k/m − hb/m,
    D = 1 − hb/m; Jury's 1 + T + D > 0 is h²k/m < 4 − 2hb/m."""
    return np.array([[1.0 - h * h * k / m, h * (1.0 - h * b / m)], [-h * k / m, 1.0 - h * b / m]])


def trace_det(scheme, h, k, b, m=M):
    """(T, D) of the characteristic polynomial λ² − Tλ + D, by hand."""
    if scheme == "explicit":
        return 2.0 - h * b / m, 1.0 - h * b / m + h * h * k / m
    if scheme == "semi_implicit":
        c = 1.0 / (1.0 + h * b / m)
        return 1.0 + c - c * h * h * k / m, c
    if scheme == "implicit":
        d = 1.0 / (1.0 + h * b / m + h * h * k / m)
        return 1.0 + d - d * h * h * k / m, d
    if scheme == "explicit_damping":
        return 2.0 - h * h * k / m - h * b / m, 1.0 - h * b / m
    raise ValueError(scheme)


def roots(T, D):
    """The two roots of λ² − Tλ + D (complex if needed), sorted by real part."""
    disc = complex(T * T - 4.0 * D)
    return np.sort(np.array([(T - np.sqrt(disc)) / 2.0, (T + np.sqrt(disc)) / 2.0]))  # by real, then imag


def jury(T, D):
    """Both roots of λ² − Tλ + D strictly inside the unit circle."""
    return abs(D) < 1.0 and 1.0 - T + D > 0.0 and 1.0 + T + D > 0.0


ORACLE_MATRIX = {"explicit": A_explicit, "semi_implicit": A_semi_implicit, "implicit": A_implicit,
                 "explicit_damping": A_explicit_damping}
SCRIPT_NAME = {"explicit": "explicit_euler", "semi_implicit": "semi_implicit_euler (paper)",
               "implicit": "implicit_euler", "explicit_damping": "semi_implicit_euler (explicit b)"}
SCRIPT_STEP = {"explicit": S.explicit_euler_step, "semi_implicit": S.semi_implicit_euler_step,
               "implicit": S.implicit_euler_step, "explicit_damping": S.explicit_damping_semi_implicit_euler_step}


def rho(A):
    return np.max(np.abs(np.linalg.eigvals(A)))


def sorted_eigs(A):
    return np.sort(np.linalg.eigvals(A).astype(complex))


# ---- the schemes are the closed-form maps ---------------------------------------------------------

PARAMS = [(1e-5, 1e6, 1.0), (1e-5, 1e6, 2.1e5), (1e-3, 1e6, 1.0), (1e-3, 1e7, 1.0), (1e-2, 1e6, 0.0),
          (1e-3, 3.99e6, 1.0), (0.3, 2.0, 0.7)]


@pytest.mark.parametrize("scheme", list(ORACLE_MATRIX))
@pytest.mark.parametrize("h,k,b", PARAMS)
def test_step_functions_and_matrices_are_the_closed_forms(scheme, h, k, b):
    A = ORACLE_MATRIX[scheme](h, k, b)
    np.testing.assert_allclose(S.iteration_matrix(SCRIPT_NAME[scheme], h, k, b), A, rtol=1e-14, atol=0)
    rng = np.random.default_rng(3)
    for y in rng.standard_normal((5, 2)):
        x1, v1 = SCRIPT_STEP[scheme](y[0], y[1], h, k, b)
        scale = np.abs(A).max() * np.abs(y).max()
        np.testing.assert_allclose([x1, v1], A @ y, rtol=0, atol=1e-13 * scale)
    # the oracle matrices against their hand-written characteristic polynomials
    T, D = trace_det(scheme, h, k, b)
    assert np.trace(A) == pytest.approx(T, rel=1e-12, abs=1e-12)
    assert np.linalg.det(A) == pytest.approx(D, rel=1e-9, abs=1e-12)
    np.testing.assert_allclose(sorted_eigs(A), roots(T, D), rtol=1e-9, atol=1e-12)


# ---- E1: explicit Euler ----------------------------------------------------------------------------

def test_e1_explicit_euler_eigenvalues_at_the_papers_parameters():
    """h = 1e-5, k = 1e6, m = 1: h²k = 1e-4, hb ∈ {1e-5, 1e-4, 2, 2.1}."""
    h, k = 1e-5, 1e6
    # b = 1: complex pair, |λ|² = D = 1 − hb + h²k = 1.00009 > 1: unstable
    e = sorted_eigs(A_explicit(h, k, 1.0))
    np.testing.assert_allclose(np.abs(e) ** 2, 1.0 - 1e-5 + 1e-4, rtol=1e-12)
    # b = 10: hb = h²k, D = 1 exactly: neutral (|λ| = 1), neither growing nor decaying
    np.testing.assert_allclose(np.abs(np.linalg.eigvals(A_explicit(h, k, 10.0))), 1.0, atol=1e-12)
    # b = 2e5: T = 0, D = −0.9999: λ = ±√0.9999 = ±0.99995 (stable)
    np.testing.assert_allclose(sorted_eigs(A_explicit(h, k, 2e5)), [-np.sqrt(0.9999), np.sqrt(0.9999)],
                               rtol=1e-12)
    # b = 2.1e5: T = −0.1, D = −1.0999: λ = (−0.1 ∓ √(0.01 + 4.3996))/2 = −1.09995, 0.99995 (unstable)
    s = np.sqrt(0.01 + 4 * 1.0999)
    np.testing.assert_allclose(sorted_eigs(A_explicit(h, k, 2.1e5)), [(-0.1 - s) / 2, (-0.1 + s) / 2], rtol=1e-12)
    assert [jury(*trace_det("explicit", h, k, b)) for b in (1.0, 2e5, 2.1e5)] == [False, True, False]


def test_e1_the_notes_eigenvalues_belong_to_h2k_equal_0_1():
    """notes/seed-003.md C2 quotes ±0.949 (b = 2e5), −1.051 and 0.951
    (b = 2.1e5) and |λ|² ≈ 1.1 (b = 1). These are the eigenvalues of
    h²k/m = 0.1 (k = 1e9 at h = 1e-5), not of the paper's k = 1e6."""
    h, k = 1e-5, 1e9
    np.testing.assert_allclose(sorted_eigs(A_explicit(h, k, 2e5)), [-0.949, 0.949], atol=1e-3)
    np.testing.assert_allclose(sorted_eigs(A_explicit(h, k, 2.1e5)), [-1.051, 0.951], atol=1e-3)
    np.testing.assert_allclose(np.abs(np.linalg.eigvals(A_explicit(h, k, 1.0))) ** 2, 1.1, atol=1e-3)
    assert rho(A_explicit(h, k, 10.0)) > 1.0  # "b = 10 still unstable" also holds only there
    # at the paper's k = 1e6 they are far off
    assert abs(rho(A_explicit(h, 1e6, 2e5)) - 0.949) > 0.05
    assert abs(rho(A_explicit(h, 1e6, 2.1e5)) - 1.051) > 0.04


# ---- observed behaviour of the simulated sequences ---------------------------------------------

# (scheme, h, k, b, steps): every E1–E3 case, the paper's semi-implicit Euler around its bound
CASES = [
    ("explicit", 1e-5, 1e6, 1.0, 100_000),  # ρ = 1.000045: e^4.5 over the run
    ("explicit", 1e-5, 1e6, 10.0, 20_000),
    ("explicit", 1e-5, 1e6, 2e5, 20_000),
    ("explicit", 1e-5, 1e6, 2.1e5, 300),
    ("explicit", 1e-5, 1e9, 2e5, 200),
    ("explicit", 1e-5, 1e9, 2.1e5, 200),
    ("semi_implicit", 1e-3, 1e6, 1.0, 1000),
    ("semi_implicit", 1e-3, 1e7, 1.0, 50),
    ("semi_implicit", 1e-3, 4.0e6, 1.0, 4000),  # inside 4 + 2hb (4.002e6)
    ("semi_implicit", 1e-3, 4.004e6, 1.0, 4000),  # outside
    ("implicit", 1e-5, 1e6, 0.0, 10_000),
    ("implicit", 1e-2, 1e6, 0.0, 10),
    ("explicit_damping", 1e-3, 3.99e6, 1.0, 4000),
    ("explicit_damping", 1e-3, 4.0e6, 1.0, 4000),
]


def _windows(x):
    w = max(2, len(x) // 10)
    return np.abs(x[:w]).max(), np.abs(x[-w:]).max()


@pytest.mark.parametrize("scheme,h,k,b,steps", CASES)
def test_simulated_sequence_matches_the_spectral_prediction(scheme, h, k, b, steps):
    T, D = trace_det(scheme, h, k, b)
    lam = np.abs(roots(T, D)).max()  # closed-form spectral radius
    x, _ = S.simulate(SCRIPT_STEP[scheme], h, k, b, steps, x0=1.0, v0=0.0)
    assert np.all(np.isfinite(x))
    first, last = _windows(x)
    if abs(lam - 1.0) < 1e-12:  # neutral: the amplitude neither grows nor decays
        assert 0.99 < last / first < 1.01
        assert np.abs(x).max() < 1.01
    elif lam < 1.0:  # stable: decays (slowly where ρ is close to 1)
        assert jury(T, D)
        assert last < 0.9 * first
    else:  # unstable: grows by more than an order of magnitude over the run
        assert not jury(T, D)
        assert last > 10.0 * first
    # the sequence obeys the characteristic recurrence x_{n+2} = T x_{n+1} − D x_n (Cayley–Hamilton)
    lhs, rhs = x[2:], T * x[1:-1] - D * x[:-2]
    scale = np.abs(T * x[1:-1]) + np.abs(D * x[:-2]) + np.abs(x[2:])
    assert np.all(np.abs(lhs - rhs) <= 1e-12 * scale + 1e-300)


def test_e1_the_papers_four_cases_classified():
    h, k = 1e-5, 1e6
    radii = [rho(A_explicit(h, k, b)) for b in (1.0, 10.0, 2e5, 2.1e5)]
    assert radii[0] > 1.0 and radii[2] < 1.0 and radii[3] > 1.0
    assert radii[1] == pytest.approx(1.0, abs=1e-12)  # the "somewhat more stable" case is neutral


# ---- E2: the paper's semi-implicit Euler and its bound ---------------------------------------------

def test_e2_semi_implicit_euler_cases_and_bound():
    h, b = 1e-3, 1.0
    assert rho(A_semi_implicit(h, 1e6, b)) < 1.0  # h²k = 1 < 4.002
    assert rho(A_semi_implicit(h, 1e7, b)) > 1.0  # h²k = 10 > 4.002
    # |λ|² = det = c = 1/(1 + hb) inside the bound while the roots are complex
    np.testing.assert_allclose(np.abs(np.linalg.eigvals(A_semi_implicit(h, 1e6, b))), np.sqrt(1 / (1 + h * b)),
                               rtol=1e-12)
    for h, b, m in ((1e-3, 1.0, 1.0), (1e-3, 500.0, 1.0), (1e-2, 30.0, 2.0), (2e-4, 0.1, 0.5)):
        k_max = m * (4.0 + 2.0 * h * b / m) / h ** 2
        assert rho(A_semi_implicit(h, 0.999 * k_max, b, m)) < 1.0
        assert rho(A_semi_implicit(h, 1.001 * k_max, b, m)) > 1.0
        assert rho(A_semi_implicit(h, k_max, b, m)) == pytest.approx(1.0, abs=1e-9)  # λ = −1 on the bound
        assert jury(*trace_det("semi_implicit", h, 0.999 * k_max, b, m))
        assert not jury(*trace_det("semi_implicit", h, 1.001 * k_max, b, m))


# ---- E3: implicit Euler ------------------------------------------------------------------------------

@pytest.mark.parametrize("h", [1e-5, 1e-3, 1e-2, 1.0, 1e3])
def test_e3_implicit_euler_modulus(h):
    k, b = 1e6, 0.0
    expected = 1.0 / np.sqrt(1.0 + h * h * k)
    np.testing.assert_allclose(np.abs(np.linalg.eigvals(A_implicit(h, k, b))), expected, rtol=1e-12)
    if h == 1e-2:
        assert expected == pytest.approx(0.0995, abs=1e-4)
    # per step, the sequence's discrete Wronskian W = x₁² − T x₁x₀ + D x₀² shrinks by exactly D = |λ|²
    T, D = trace_det("implicit", h, k, b)
    x, _ = S.simulate(S.implicit_euler_step, h, k, b, 40, x0=1.0, v0=0.0)
    # W in the form (x₁ − T/2 x₀)² + (D − T²/4) x₀², with D − T²/4 = d − d² (b = 0: T = 2d, D = d)
    d = 1.0 / (1.0 + h * h * k)
    W = (x[1:] - d * x[:-1]) ** 2 + (d - d * d) * x[:-1] ** 2
    keep = W > 1e-250  # large h: the sequence underflows within the 40 steps
    ratios = W[1:][keep[1:]] / W[:-1][keep[1:]]
    np.testing.assert_allclose(ratios, D, rtol=1e-9)


def test_e3_implicit_euler_is_l_stable():
    k = 1e6
    radii = [rho(A_implicit(h, k, 0.0)) for h in (1e-5, 1e-3, 1e-1, 10.0, 1e4)]
    assert all(r < 1.0 for r in radii) and np.all(np.diff(radii) < 0) and radii[-1] < 1e-6
    for b in (0.0, 1.0, 1e6):
        for h in (1e-8, 1e-3, 1e2):
            assert rho(A_implicit(h, k, b)) < 1.0 and jury(*trace_det("implicit", h, k, b))


# ---- the library's semi-implicit Euler on a real model ---------------------------------------------

H, B_LIB = 1e-3, 1.0
K_LIB_MAX = (4.0 - 2.0 * H * B_LIB) / H ** 2  # 3.998e6: the explicit-damping bound (m = 1)
K_PAPER_MAX = (4.0 + 2.0 * H * B_LIB) / H ** 2  # 4.002e6


def slider(k=0.0, b=0.0):
    builder = mb.ModelBuilder("slider", gravity=(0, 0, 0))
    builder.add_body("block", "world", "prismatic", axis=(1, 0, 0), mass=1.0, inertia=np.eye(3) * 0.1,
                     damping=b, stiffness=k)
    return builder.build()


def library_run(k, steps, b=B_LIB, **kw):
    model = kw.pop("model", None) or slider(k, b)
    sim = mb.Simulator(model, H, "semi_implicit_euler", gravity=False, q0=[1.0], v0=[0.0], **kw)
    traj = sim.rollout(steps=steps)
    return traj.q[:, 0], traj.v[:, 0]


def closed_form_sequence(A, steps):
    ys, y = [np.array([1.0, 0.0])], np.array([1.0, 0.0])
    for _ in range(steps):
        y = A @ y
        ys.append(y)
    return np.array(ys)


def test_library_bound_closed_form():
    """ρ(A_explicit_damping) < 1 iff h²k/m < 4 − 2hb/m (0 < hb/m < 2)."""
    for h, b, m in ((1e-3, 1.0, 1.0), (1e-3, 500.0, 1.0), (1e-2, 30.0, 2.0), (2e-4, 0.1, 0.5)):
        k_max = m * (4.0 - 2.0 * h * b / m) / h ** 2
        assert rho(A_explicit_damping(h, 0.999 * k_max, b, m)) < 1.0
        assert rho(A_explicit_damping(h, 1.001 * k_max, b, m)) > 1.0
        assert rho(A_explicit_damping(h, k_max, b, m)) == pytest.approx(1.0, abs=1e-9)
        assert jury(*trace_det("explicit_damping", h, 0.999 * k_max, b, m))
        assert not jury(*trace_det("explicit_damping", h, 1.001 * k_max, b, m))
    # between the two bounds the paper's scheme is stable and the explicit-damping one is not
    assert K_LIB_MAX == pytest.approx(3.998e6) and K_PAPER_MAX == pytest.approx(4.002e6)
    assert rho(A_semi_implicit(H, 4.0e6, B_LIB)) < 1.0 < rho(A_explicit_damping(H, 4.0e6, B_LIB))
    # b = 0: D = 1, only neutrally stable inside h²k < 4
    np.testing.assert_allclose(np.abs(np.linalg.eigvals(A_explicit_damping(1e-3, 3e6, 0.0))), 1.0, atol=1e-12)


@pytest.mark.parametrize("k,steps,stable", [(1e6, 1000, True), (1e7, 40, False), (3.99e6, 2000, True),
                                            (4.0e6, 2000, False)])
def test_library_semi_implicit_euler_obeys_the_explicit_damping_bound(k, steps, stable):
    """mb.Simulator(..., "semi_implicit_euler") on a 1 kg slider with the
    model's joint spring k and damper b = 1 at h = 1e-3: bounded just inside
    h²k < 4 − 2hb (3.99e6), growing just outside (4.0e6, which the paper's
    implicit-damping scheme would still integrate stably), and equal step by
    step to the explicit-damping iteration matrix."""
    assert (k < K_LIB_MAX) == stable
    A = A_explicit_damping(H, k, B_LIB)
    assert (rho(A) < 1.0) == stable
    with np.errstate(over="ignore"):
        x, v = library_run(k, steps)
    ref = closed_form_sequence(A, steps)
    scale = np.maximum.accumulate(np.abs(ref).max(axis=1))  # round-off grows with the largest |x|, |v| so far
    assert np.all(np.abs(x - ref[:, 0]) <= 1e-10 * scale)
    assert np.all(np.abs(v - ref[:, 1]) <= 1e-10 * scale)
    first, last = _windows(x)
    if stable:
        assert last < first and np.abs(x).max() < 100.0  # near the bound the orbit is a thin ellipse
    else:
        assert last > 1e10 * first


def test_library_damping_is_explicit_not_the_papers_implicit_damping():
    """One step from (x0, v0) = (1, 1): the library gives x₁ = 1 − h²k + h(1 − hb),
    v₁ = −hk + 1 − hb (explicit b); the paper's scheme would divide by 1 + hb."""
    k, b = 3.99e6, 200.0
    model = slider(k, b)
    sim = mb.Simulator(model, H, "semi_implicit_euler", gravity=False, q0=[1.0], v0=[1.0])
    sim.step()
    q1, v1 = sim.state.q[0], sim.state.v[0]
    assert v1 == pytest.approx(1.0 - H * k - H * b, rel=1e-13)
    assert q1 == pytest.approx(1.0 + H * v1, rel=1e-13)
    c = 1.0 / (1.0 + H * b)
    assert abs(v1 - c * (1.0 - H * k)) > 1e-3 * abs(v1)
    # the Python integrator class (used when no compiled step covers a system) does the same
    q_py, v_py = INTEGRATORS["semi_implicit_euler"]().step(sim.system, 0.0, np.array([1.0]), np.array([1.0]),
                                                           np.zeros(1), H)
    assert v_py[0] == pytest.approx(1.0 - H * k - H * b, rel=1e-13)
    assert q_py[0] == pytest.approx(1.0 + H * v_py[0], rel=1e-13)


def test_library_force_elements_give_the_same_run():
    """JointSpring + JointDamper force elements on a bare slider step exactly
    like the model's own stiffness and damping fields."""
    k, steps = 4.0e6, 300
    with np.errstate(over="ignore"):
        x_fields, _ = library_run(k, steps)
        x_elems, _ = library_run(k, steps, model=slider(), forces=[JointSpring("block", k, rest=0.0),
                                                                     JointDamper("block", B_LIB)])
    np.testing.assert_allclose(x_elems, x_fields, rtol=1e-12, atol=1e-12)
    assert np.abs(x_elems[-30:]).max() > 1e3  # growing, as outside the bound
