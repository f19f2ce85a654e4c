"""Hill muscles and multi-point springs (forces/muscles.py): K and D against
central differences on random trees (via points on several bodies and the
world, both curve sets, constant and time-varying activation); Sueda's
single-segment K and D with errata S2/S3 and the eq. 1.56 typo on two free
bodies; isometric force; passive energy; ArtiSynth T12 and the §0.14
Jacobians on particles; T4 and the §0.13 stress form; conservation."""
import numpy as np
import pytest

import multibody as mb
from multibody.forces import HillMuscle, MultiPointSpring, MuJoCoCurves, Path, PointToPointSpring
from multibody.forces.muscle_curves import SuedaCurves

from .helpers import close, fd_gradient, fd_jacobians, state, tree
from .test_paths import check_jacobians
from .test_point_spring import skew, two_particles


def random_points(model, rng, n):
    frames = list(model.frame_names)
    return [(frames[rng.integers(len(frames))], rng.uniform(-0.3, 0.3, 3)) for _ in range(n)]


def fitted_muscle(model, q, v, pts, rng, curves, activation):
    """A muscle whose l̃ and ṽ at (q, v) fall inside the curves' domains (so
    every term of K and D is exercised)."""
    ts = Path(pts).evaluate(model, q, v)
    lt, vt = rng.uniform(0.6, 1.55), rng.uniform(0.1, 0.9)
    slack = 0.2 * ts.length
    lopt = (ts.length - slack) / lt
    vmax = max(abs(ts.rate), 1e-3) / (lopt * vt)
    return HillMuscle(pts, rng.uniform(50, 500), lopt, slack, vmax, activation, curves, name="m")


CASES = [(seed, floating, curves) for seed in (21, 22) for floating in (True, False) for curves in ("sueda", "mujoco")]


@pytest.mark.parametrize("seed,floating,curves", CASES)
def test_hill_muscle_K_and_D_against_finite_differences(seed, floating, curves):
    model = tree(seed, floating)
    rng = np.random.default_rng(seed)
    for trial, activation in enumerate((1.0, 0.37, lambda t: 0.5 + 0.4 * np.sin(3 * t))):
        pts = random_points(model, rng, 4)
        pts[trial % 4] = ("world", rng.uniform(-0.3, 0.3, 3))
        q, v = state(model, 30 + trial)
        m = fitted_muscle(model, q, v, pts, rng, curves, activation)
        tau = check_jacobians(m, model, q, v, 0.7)
        s = m.state(model, q, v, 0.7)
        assert np.allclose(tau, -s["tension"] * Path(pts).moment_arm(model, q), atol=1e-12 * np.abs(tau).max())
        assert 0.6 <= s["normalized_length"] <= 1.55 and s["tension"] > 0


def test_sueda_single_segment_K_and_D_with_the_errata():
    """Two free bodies (our free-joint v and tangent perturbation are Sueda's
    body twists): at v = 0, K = K₁ − (f/l)·(eq. 1.37 block) — K₁ of eq.
    1.52/1.53 as printed, the block matrix being −∂ (errata S2) — and D is
    eq. 1.55 with d = −f_opt a f_L f_V'/(l_opt v_max l²) Δx (f_L, not the
    printed f_L' of eq. 1.56), which is +∂f/∂φ, i.e. our D (S3 concerns the
    sign eq. 1.30 expects)."""
    rng = np.random.default_rng(5)
    model = two_particles(np.zeros(3), np.zeros(3), floating=True)
    q = model.random_configuration(seed=6)
    q[:3], q[7:10] = rng.normal(size=3) * 0.3, rng.normal(size=3) * 0.3 + np.array([0, 0, 1.0])
    x1, x2 = rng.uniform(-.3, .3, 3), rng.uniform(-.3, .3, 3)
    R1, p1 = mb.frame_pose(model, q, "p1")[:3, :3], mb.frame_pose(model, q, "p1")[:3, 3]
    R2, p2 = mb.frame_pose(model, q, "p2")[:3, :3], mb.frame_pose(model, q, "p2")[:3, 3]
    w1, w2 = R1 @ x1 + p1, R2 @ x2 + p2
    dx = w2 - w1
    l = np.linalg.norm(dx)
    fopt, lT, a, vmax = 200.0, 0.1 * l, 0.8, 6.0
    lopt = (l - lT) / 1.12                      # l̃ = 1.12: f_L, f_L', f_P, f_P' all non-zero
    m = HillMuscle([("p1", x1), ("p2", x2)], fopt, lopt, lT, vmax, a)
    tau, K, D = m.evaluate(model, q, np.zeros(12), jacobians=True)
    lt = (l - lT) / lopt
    c = SuedaCurves()
    fL, dfL, fP, dfP, fV, dfV = c.values(lt, 0.0)
    f = fopt * (a * fL * fV + fP)
    X1, X2, R12, R21 = skew(x1), skew(x2), R1.T @ R2, R2.T @ R1
    vec = np.r_[X1 @ R1.T @ dx, R1.T @ dx, -X2 @ R2.T @ dx, -R2.T @ dx]      # (Γ1ᵀR1ᵀΔx; −Γ2ᵀR2ᵀΔx)

    def row(d):                                                              # (dᵀR1Γ1, −dᵀR2Γ2), Γ = ([x]ᵀ I)
        return np.r_[d @ R1 @ X1.T, d @ R1, -(d @ R2 @ X2.T), -(d @ R2)]
    assert np.allclose(tau, (f / l) * vec, atol=1e-12 * f)                   # eq. 1.39
    K1 = np.outer(vec, row((f / l - fopt * (a * dfL * fV + dfP) / lopt) * dx / l ** 2))
    M = np.block([
        [X1 @ skew(R1.T @ (p1 - w2)), X1, X1 @ R12 @ X2, -X1 @ R12],
        [skew(R1.T @ (p1 - w2)), np.eye(3), R12 @ X2, -R12],
        [X2 @ R21 @ X1, -X2 @ R21, X2 @ skew(R2.T @ (p2 - w1)), X2],
        [R21 @ X1, -R21, skew(R2.T @ (p2 - w1)), np.eye(3)]])
    assert np.allclose(K, K1 - (f / l) * M, atol=1e-10 * np.abs(K).max())
    assert not np.allclose(K, K1 + (f / l) * M, atol=1e-3 * np.abs(K).max())   # eq. 1.51 as printed
    Dref = np.outer(vec, row(-fopt * a * fL * dfV / (lopt * vmax * l ** 2) * dx))
    assert np.allclose(D, Dref, atol=1e-10 * np.abs(D).max())
    typo = np.outer(vec, row(-fopt * a * dfL * dfV / (lopt * vmax * l ** 2) * dx))
    assert not np.allclose(D, typo, atol=1e-3 * np.abs(D).max())


def isometric_setup(lt):
    """A muscle between the world and a body on a prismatic joint along the
    muscle line, held at normalized length ``lt``."""
    b = mb.ModelBuilder("slider", gravity=(0, 0, 0))
    b.add_body("s", "world", "prismatic", axis=(1, 0, 0), mass=1.0, inertia=np.eye(3) * 0.01)
    model = b.build()
    lopt, lT = 0.1, 0.25
    x = lT + lt * lopt
    return model, np.array([x]), lopt, lT


def test_isometric_force_is_max_force():
    """At l̃ = 1, a = 1, v = 0 the tension is f_opt (both curve sets: f_L(1)
    = f_V(0) = 1, f_P(1) = 0); with a = 0 at l̃ ≤ 1 it is 0."""
    for curves in ("sueda", "mujoco", MuJoCoCurves(0.3, 1.9, 0.8, 1.6)):
        model, q, lopt, lT = isometric_setup(1.0)
        m = HillMuscle([("world", [0, 0, 0]), ("s", [0, 0, 0])], 420.0, lopt, lT, 5.0, 1.0, curves)
        tau = m.evaluate(model, q, np.zeros(1))[0]
        assert abs(tau[0] + 420.0) < 1e-12 * 420                   # τ = −J f, J = +1 (x grows the muscle)
        assert abs(m.state(model, q, np.zeros(1))["tension"] - 420.0) < 1e-12 * 420
        assert m.tension(lT + lopt, 0.0, 1.0)[0] == pytest.approx(420.0, rel=1e-12)
        for lt in (0.6, 0.8, 1.0):
            model, q, lopt, lT = isometric_setup(lt)
            m = HillMuscle([("world", [0, 0, 0]), ("s", [0, 0, 0])], 420.0, lopt, lT, 5.0, 0.0, curves)
            assert not m.evaluate(model, q, np.zeros(1))[0].any()
            m.activation = 1.0
            assert m.evaluate(model, q, np.zeros(1))[0][0] < 0


def test_tension_partials_and_external_activation():
    """tension(l, l̇, a) gives f and its partials; the activation is settable
    (number or callable) so that an actuator can drive the muscle."""
    m = HillMuscle([("world", [0, 0, 0]), ("world", [1, 0, 0])], 300.0, 0.1, 0.2, 8.0)
    f, fl, fld, fa = m.tension(0.31, -0.2, 0.6)
    h = 1e-7
    assert fa == pytest.approx((m.tension(0.31, -0.2, 0.6 + h)[0] - m.tension(0.31, -0.2, 0.6 - h)[0]) / (2 * h),
                               rel=1e-6)
    assert f == pytest.approx(fa * 0.6 + m.tension(0.31, -0.2, 0.0)[0], rel=1e-12)
    m.set_activation(0.25)
    assert m.activation_at(3.0) == 0.25
    m.activation = lambda t: min(1.0, t)
    assert m.activation_at(0.5) == 0.5 and not m.conservative
    assert m.force(0.31, -0.2, 0.5)[0] == pytest.approx(-m.tension(0.31, -0.2, 0.5)[0], rel=1e-15)


def test_errors_name_the_muscle():
    pts = [("world", [0, 0, 0]), ("world", [1, 0, 0])]
    for kw, msg in ((dict(max_force=0.0), "max_force"), (dict(optimal_length=-1), "optimal_length"),
                    (dict(max_velocity=0), "max_velocity"), (dict(tendon_slack_length=-0.1), "tendon_slack_length"),
                    (dict(activation=1.2), "activation"), (dict(activation=-0.1), "activation"),
                    (dict(activation="x"), "activation"), (dict(curves="hill"), "curves"),
                    (dict(optimal_length=np.nan), "optimal_length")):
        args = dict(max_force=100.0, optimal_length=0.1, tendon_slack_length=0.2, max_velocity=10.0)
        args.update(kw)
        with pytest.raises(mb.ModelError, match=f"biceps.*{msg}"):
            HillMuscle(pts, name="biceps", **args)
    m = HillMuscle(pts, 100, 0.1, 0.2, 10, name="biceps")
    with pytest.raises(mb.ModelError, match="biceps.*activation"):
        m.activation = 2.0
    m.activation = lambda t: 1.5
    model = tree(23, False)
    with pytest.raises(mb.InputError, match="biceps.*activation"):
        m.evaluate(model, model.neutral(), np.zeros(model.nv))


@pytest.mark.parametrize("curves", ["sueda", "mujoco"])
def test_passive_muscle_is_conservative(curves):
    """a = 0: τ = −∇V with V = f_opt l_opt ∫_1^l̃ f_P, on both sides of the
    curves' knots (the last cubic and the linear extension)."""
    model = tree(24, False)
    rng = np.random.default_rng(7)
    for lt in (1.15, 1.5, 1.9):
        pts = random_points(model, rng, 3)
        q, _ = state(model, 3)
        length = Path(pts).length(model, q)
        m = HillMuscle(pts, 150.0, (length - 0.05) / lt, 0.05, 10.0, 0.0, curves)
        assert m.conservative
        tau = m.evaluate(model, q, np.zeros(model.nv))[0]
        g = fd_gradient(lambda x: m.potential_energy(model, x), model, q)
        assert close(tau, -g, np.abs(tau).max())
        assert m.potential_energy(model, q) > 0


# ------------------------------------------------------------ multi-point spring


def particles(points):
    b = mb.ModelBuilder("particles", gravity=(0, 0, 0))
    for i, x in enumerate(points):
        b.add_body(f"p{i}", "world", "translational", placement=(np.eye(3), np.asarray(x, float)), mass=1.0,
                   inertia=np.eye(3) * 0.1)
    return b.build()


def test_artisynth_T12():
    """Points (0,0,0), (1,1,0), (2,0,0) on three particles (translational
    joints, so τ is the point forces); F = 1·(L − 2): L = 2√2, F = 0.828427,
    f0 = (0.585786, 0.585786, 0), f1 = (0, −1.171573, 0), f2 =
    (−0.585786, 0.585786, 0) (exact: F/√2 = 2 − √2), forces summing to 0."""
    X = [(0, 0, 0), (1, 1, 0), (2, 0, 0)]
    model = particles(X)
    s = MultiPointSpring([(f"p{i}", [0, 0, 0]) for i in range(3)], stiffness=1.0, rest_length=2.0)
    q = np.zeros(9)
    assert abs(s.length(model, q) - 2 * np.sqrt(2)) < 1e-15
    assert abs(s.tension(2 * np.sqrt(2), 0.0)[0] - 0.828427) < 1e-6
    tau = s.evaluate(model, q, np.zeros(9))[0].reshape(3, 3)
    c = 2 - np.sqrt(2)
    assert np.allclose(tau, [[c, c, 0], [0, -2 * c, 0], [-c, c, 0]], rtol=0, atol=1e-12)
    assert np.allclose(tau, [[0.585786, 0.585786, 0], [0, -1.171573, 0], [-0.585786, 0.585786, 0]], atol=1e-6)
    assert np.abs(tau.sum(axis=0)).max() < 1e-15
    # the same values as Path-level point forces (tension F is the force −F along the path)
    F = s.transmission.point_forces(model, q, -s.tension(2 * np.sqrt(2), 0)[0])
    assert np.allclose(F, tau, atol=1e-15)


def artisynth_jacobians(X, Xd, F, FL, FLd):
    """ArtiSynth §0.14 (all segments active; notes C14 with erratum 7):
    ∂f_i/∂x_j = v_i ∂F/∂x_j + F(∂u_i/∂x_j − ∂u_{i−1}/∂x_j),
    ∂F/∂x_j = F_L ∂L/∂x_j + y_{j−1} − y_j, ∂f_i/∂ẋ_j = F_L̇ v_i ∂L̇/∂ẋ_j."""
    n = len(X) - 1
    u = [(X[i + 1] - X[i]) / np.linalg.norm(X[i + 1] - X[i]) for i in range(n)]
    lens = [np.linalg.norm(X[i + 1] - X[i]) for i in range(n)]
    Pm = [np.eye(3) - np.outer(ui, ui) for ui in u]
    U = lambda i: u[i] if 0 <= i < n else np.zeros(3)  # noqa: E731
    v = [U(i) - U(i - 1) for i in range(n + 1)]
    dL = [-v[i] for i in range(n + 1)]                  # ∂L/∂x_i = ∂L̇/∂ẋ_i = u_{i−1} − u_i
    y = [FLd / lens[i] * (Xd[i + 1] - Xd[i]) @ Pm[i] for i in range(n)]
    Y = lambda i: y[i] if 0 <= i < n else np.zeros(3)  # noqa: E731

    def du(i, j):                                       # ∂u_i/∂x_j
        if not 0 <= i < n:
            return np.zeros((3, 3))
        return -Pm[i] / lens[i] if j == i else (Pm[i] / lens[i] if j == i + 1 else np.zeros((3, 3)))
    K, D = np.zeros((3 * n + 3, 3 * n + 3)), np.zeros((3 * n + 3, 3 * n + 3))
    for i in range(n + 1):
        for j in range(n + 1):
            dF = FL * dL[j] + Y(j - 1) - Y(j)
            K[3 * i:3 * i + 3, 3 * j:3 * j + 3] = np.outer(v[i], dF) + F * (du(i, j) - du(i - 1, j))
            D[3 * i:3 * i + 3, 3 * j:3 * j + 3] = FLd * np.outer(v[i], dL[j])
    return K, D


@pytest.mark.parametrize("law", ["linear", "green", "strain", "callable"])
def test_multipoint_jacobians_are_artisynths(law):
    """On free particles K and D are ArtiSynth's §0.14 point Jacobians."""
    rng = np.random.default_rng(8)
    X = rng.uniform(-1, 1, (5, 3))
    model = particles(X)
    pts = [(f"p{i}", [0, 0, 0]) for i in range(5)]
    if law == "callable":
        fl = lambda s, sd: (2 * s + s ** 3 + (0.5 + s * s) * sd, 2 + 3 * s * s + 2 * s * sd, 0.5 + s * s)  # noqa: E731
        s = MultiPointSpring(pts, rest_length=1.5, force_law=fl)
    else:
        s = MultiPointSpring(pts, 7.0, 0.8, 1.5, force_law=law)
    q, v = np.zeros(15), rng.normal(size=15)
    tau, K, D = s.evaluate(model, q, v, jacobians=True)
    L, Ld = s.length(model, q), s.transmission.evaluate(model, q, v).rate
    F, FL, FLd = s.tension(L, Ld)
    Ka, Da = artisynth_jacobians(X, v.reshape(5, 3), F, FL, FLd)
    assert np.allclose(K, Ka, atol=1e-12 * np.abs(Ka).max()) and np.allclose(D, Da, atol=1e-12 * np.abs(Da).max())
    Kf, Df = fd_jacobians(s, model, q, v)
    assert close(K, Kf, np.abs(Kf).max()) and close(D, Df, np.abs(Df).max())


@pytest.mark.parametrize("floating", [True, False])
def test_multipoint_spring_on_trees(floating):
    """K, D against central differences on random trees (damped, nonlinear);
    τ = −∇V for the undamped linear and Green laws; no net wrench on a
    floating tree when no point is on the world."""
    model = tree(25, floating)
    rng = np.random.default_rng(9)
    frames = [f for f in model.frame_names if f != "world"]
    for law in ("linear", "green"):
        pts = [(frames[rng.integers(len(frames))], rng.uniform(-.3, .3, 3)) for _ in range(4)]
        q, v = state(model, 4)
        L = Path(pts).length(model, q)
        damped = MultiPointSpring(pts, 12.0, 1.5, 0.7 * L, force_law=law)
        tau = check_jacobians(damped, model, q, v)
        spring = MultiPointSpring(pts, 12.0, 0.0, 0.7 * L, force_law=law)
        assert spring.conservative and not damped.conservative
        t0 = spring.evaluate(model, q, v)[0]
        g = fd_gradient(lambda x: spring.potential_energy(model, x), model, q)
        assert close(t0, -g, np.abs(t0).max())
        if floating:
            assert np.abs(tau[:6]).max() < 1e-12 * np.abs(tau).max()   # the base's wrench: the system's total


def test_two_point_and_collinear_multipoint_springs_are_the_axial_spring():
    """Two points: τ, K, D equal the PointToPointSpring's (every law). A via
    point on the segment between the ends: τ and D are equal (the via point
    receives no force), K differs by the via point's pulley (a kink under
    sideways motion) and is checked against central differences."""
    model = tree(26, True)
    fa, fb = model.body_names[2], model.body_names[5]
    pa, pb = np.array([0.1, 0.0, -0.1]), np.array([0.0, 0.2, 0.1])
    q, v = state(model, 6)
    for law in ("linear", "green", "strain", "cable"):
        a = MultiPointSpring([(fa, pa), (fb, pb)], 9.0, 1.1, 0.2, force_law=law).evaluate(model, q, v, jacobians=True)
        b = PointToPointSpring(fa, pa, fb, pb, 9.0, 1.1, 0.2, force_law=law).evaluate(model, q, v, jacobians=True)
        for x, y in zip(a, b):
            assert np.allclose(x, y, rtol=1e-10, atol=1e-10 * max(1, np.abs(y).max()))
    Fa, Fb = mb.frame_pose(model, q, fa), mb.frame_pose(model, q, fb)
    xa, xb = Fa[:3, :3] @ pa + Fa[:3, 3], Fb[:3, :3] @ pb + Fb[:3, 3]
    s = MultiPointSpring([(fa, pa), ("world", 0.3 * xa + 0.7 * xb), (fb, pb)], 9.0, 1.1, 0.2)
    a = s.evaluate(model, q, v, jacobians=True)
    b = PointToPointSpring(fa, pa, fb, pb, 9.0, 1.1, 0.2).evaluate(model, q, v, jacobians=True)
    assert np.allclose(a[0], b[0], atol=1e-12 * np.abs(b[0]).max()) and np.allclose(a[2], b[2], atol=1e-12)
    Kf, _ = fd_jacobians(s, model, q, v)
    assert close(a[1], Kf, np.abs(Kf).max()) and not np.allclose(a[1], b[1])


def test_stress_form_and_artisynth_T4():
    """ArtiSynth §0.13: with σ = F/l, f1 = σΔx and ∂f1/∂x1 = Δx ∂σ/∂x1 − σI —
    linear: −(kr/l)uuᵀ − σI (−kI at r = 0), Green: −(k/r²)ΔxΔxᵀ − σI —
    is the K block of the axial spring (PointToPointSpring and the
    two-point MultiPointSpring, linear and green laws); T4: x1 = 0, x2 =
    (2,0,0), k = 10, r = 1 gives f1 = (10,0,0) and diag(−10,−5,−5)."""
    rng = np.random.default_rng(10)
    for x1, x2, k, r in [(np.zeros(3), np.array([2.0, 0, 0]), 10.0, 1.0)] + \
            [(rng.normal(size=3), rng.normal(size=3), rng.uniform(1, 20), rng.uniform(0.1, 2)) for _ in range(3)]:
        model = particles([x1, x2])
        dx = x2 - x1
        l = np.linalg.norm(dx)
        u = dx / l
        for law in ("linear", "green"):
            sigma = k * (l - r) / l if law == "linear" else k * 0.5 * (l * l - r * r) / (r * r)
            block = (-(k * r / l) * np.outer(u, u) if law == "linear" else -(k / r ** 2) * np.outer(dx, dx)) \
                - sigma * np.eye(3)
            for e in (PointToPointSpring("p0", [0, 0, 0], "p1", [0, 0, 0], k, 0.0, r, force_law=law),
                      MultiPointSpring([("p0", [0, 0, 0]), ("p1", [0, 0, 0])], k, 0.0, r, force_law=law)):
                tau, K, _ = e.evaluate(model, np.zeros(6), np.zeros(6), jacobians=True)
                assert np.allclose(tau[:3], sigma * dx, atol=1e-12 * max(1, abs(sigma) * l))
                assert np.allclose(K, np.block([[block, -block], [-block, block]]), atol=1e-12 * np.abs(block).max())
                if law == "linear" and r == 1.0 and k == 10.0:
                    assert np.allclose(tau, [10, 0, 0, -10, 0, 0], atol=1e-13)
                    assert np.allclose(K[:3, :3], np.diag([-10.0, -5.0, -5.0]), atol=1e-13)
    model = particles([np.zeros(3), np.array([0.3, -0.4, 1.2])])
    K0 = MultiPointSpring([("p0", [0, 0, 0]), ("p1", [0, 0, 0])], 10.0).evaluate(
        model, np.zeros(6), np.zeros(6), jacobians=True)[1]
    assert np.allclose(K0[:3, :3], -10 * np.eye(3), atol=1e-13)      # r = 0: −kI


def test_multipoint_spring_errors():
    pts = [("world", [0, 0, 0]), ("world", [1, 0, 0])]
    with pytest.raises(mb.ModelError, match="tendon.*stiffness"):
        MultiPointSpring(pts, stiffness=-1, name="tendon")
    with pytest.raises(mb.ModelError, match="tendon.*force law"):
        MultiPointSpring(pts, 1.0, force_law="hooke", name="tendon")
    with pytest.raises(mb.ModelError, match="rest length"):
        MultiPointSpring(pts, 1.0, force_law="green")
    with pytest.raises(mb.ModelError, match="point"):
        MultiPointSpring([("world", [0, 0, 0])], 1.0)
    s = MultiPointSpring(pts, force_law=lambda s, sd: (1.0, 2.0), name="tendon")
    model = tree(27, False)
    with pytest.raises(mb.InputError, match="tendon.*force law"):
        s.evaluate(model, model.neutral(), np.zeros(model.nv))
