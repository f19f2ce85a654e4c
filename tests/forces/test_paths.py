"""Spatial paths (forces/paths.py): length and moment arm against the public
kinematics (frame poses and point Jacobians), the geometric term and the
rate gradient against central differences, the (τ, K, D) of a nonlinear
force along a path against central differences, at random states of random
trees with via points on several bodies, merged fixed links and the world;
degenerate segments and bad input."""
import numpy as np
import pytest

import multibody as mb
from multibody.forces import Path
from multibody.forces.transmission import TransmissionElement, along

from .helpers import H, close, fd_jacobians, state, tree


class NonlinearAlong(TransmissionElement):
    """A force along a transmission that depends nonlinearly on l and l̇ (and
    on t): f = −(3(l − 1) + (l − 1)³ + (0.5 + l) l̇ + 0.2 sin t)."""

    def force(self, l, ld, t):
        s = l - 1.0
        return -(3 * s + s ** 3 + (0.5 + l) * ld + 0.2 * np.sin(t)), -(3 + 3 * s * s + ld), -(0.5 + l)


def check_jacobians(element, model, q, v, t=0.0):
    """K and D of ``element`` against central differences (helpers.close);
    returns its τ."""
    tau, K, D = element.evaluate(model, q, v, t, jacobians=True)
    Kf, Df = fd_jacobians(element, model, q, v, t)
    scale = max(np.abs(tau).max(), np.abs(Kf).max(), np.abs(Df).max())
    assert close(K, Kf, scale), f"{element!r}: K error {np.abs(K - Kf).max():.3g} (scale {scale:.3g})"
    assert close(D, Df, scale), f"{element!r}: D error {np.abs(D - Df).max():.3g} (scale {scale:.3g})"
    return tau


def random_points(model, rng, n, world=True):
    """n (frame, point) on random frames (bodies, merged fixed links, and
    the world when ``world``), each point distinct."""
    frames = [f for f in model.frame_names if world or f != "world"]
    return [(frames[rng.integers(len(frames))], rng.uniform(-0.3, 0.3, 3)) for _ in range(n)]


def independent(model, q, v, points):
    """(l, J, l̇) from mb.frame_pose and mb.jacobian(point=...) only."""
    X, P = [], []
    for frame, p in points:
        F = mb.frame_pose(model, q, frame)
        X.append(F[:3, :3] @ p + F[:3, 3])
        P.append(mb.jacobian(model, q, frame, "local_world_aligned", point=p)[3:])
    length, J = 0.0, np.zeros(model.nv)
    for s in range(len(points) - 1):
        d = X[s + 1] - X[s]
        length += np.linalg.norm(d)
        J += (P[s + 1] - P[s]).T @ (d / np.linalg.norm(d))
    return length, J, J @ v


CASES = [(seed, floating) for seed in (11, 12) for floating in (True, False)]


@pytest.mark.parametrize("seed,floating", CASES)
def test_length_moment_arm_and_rate_against_the_kinematics(seed, floating):
    model = tree(seed, floating)
    rng = np.random.default_rng(seed)
    for trial in range(4):
        pts = random_points(model, rng, 2 + trial)
        path = Path(pts)
        q, v = state(model, trial)
        ts = path.evaluate(model, q, v)
        l, J, ld = independent(model, q, v, pts)
        assert abs(ts.length - l) <= 1e-12 * l
        assert np.allclose(ts.moment, J, rtol=1e-11, atol=1e-11 * max(1.0, np.abs(J).max()))
        assert abs(ts.rate - ld) <= 1e-11 * max(1.0, abs(ld))
        assert path.length(model, q) == ts.length
        assert np.array_equal(path.moment_arm(model, q), ts.moment)


@pytest.mark.parametrize("seed,floating", CASES)
def test_geometric_term_and_rate_gradient_against_finite_differences(seed, floating):
    """H = ∂J/∂q (tangent space, geometric(f) = f H) and ∂l̇/∂q at fixed v."""
    model = tree(seed, floating)
    rng = np.random.default_rng(seed + 100)
    nv = model.nv
    for trial in range(3):
        path = Path(random_points(model, rng, 3 + trial))
        q, v = state(model, 20 + trial)
        ts = path.evaluate(model, q, v, jacobians=True)
        Hf, gf = np.zeros((nv, nv)), np.zeros(nv)
        for k in range(nv):
            e = np.zeros(nv)
            e[k] = H
            tp, tm = path.evaluate(model, model.integrate(q, e), v), path.evaluate(model, model.integrate(q, -e), v)
            Hf[:, k] = (tp.moment - tm.moment) / (2 * H)
            gf[k] = (tp.rate - tm.rate) / (2 * H)
        f = -1.7
        assert close(ts.geometric(f), f * Hf, np.abs(f * Hf).max())
        assert close(ts.rate_gradient, gf, np.abs(gf).max())


@pytest.mark.parametrize("seed,floating", CASES)
def test_force_along_a_path_against_finite_differences(seed, floating):
    """K and D of a nonlinear f(l, l̇, t) along paths with via points on
    several bodies and the world (transmission.along with the path's H)."""
    model = tree(seed, floating)
    rng = np.random.default_rng(seed + 200)
    for trial in range(3):
        pts = random_points(model, rng, 4)
        pts[0] = ("world", rng.uniform(-0.3, 0.3, 3))          # an origin fixed in the world
        e = NonlinearAlong(Path(pts))
        q, v = state(model, 40 + trial)
        tau = check_jacobians(e, model, q, v, 0.3)
        assert np.array_equal(e.evaluate(model, q, v, 0.3)[0], tau)


def test_segments_on_one_body_have_constant_length_and_carry_no_force():
    """Two consecutive points on one body (or on a body and a merged fixed link
    of it): the segment adds its constant length, the forces inside the body
    cancel, and the result equals the path without that segment's turning."""
    model = tree(13, False)
    body = model.body_names[3]
    other = model.body_names[5]
    pts = [("world", [0.1, 0.2, 0.3]), (body, [0.1, 0.0, 0.0]), (body, [0.0, 0.2, 0.0]), (other, [0, 0, 0.1])]
    path = Path(pts)
    assert list(path.bind(model).active) == [True, False, True]
    q, v = state(model, 3)
    ts = path.evaluate(model, q, v, jacobians=True)
    l, J, ld = independent(model, q, v, pts)
    assert abs(ts.length - l) < 1e-12 and np.allclose(ts.moment, J, atol=1e-12) and abs(ts.rate - ld) < 1e-12
    # a zero-length segment inside one body is allowed (a constant 0)
    Path([("world", [0, 0, 1.0]), (body, [0.1, 0, 0]), (body, [0.1, 0, 0])]).evaluate(model, q, v, jacobians=True)
    # the forces sum to zero (no net force on the world + bodies: a path between two world points is l constant)
    F = path.point_forces(model, q, 2.5)
    assert np.allclose(F.sum(axis=0), 0.0, atol=1e-12)
    world_only = Path([("world", [0, 0, 0]), ("world", [1.0, 0, 0])])
    ts = world_only.evaluate(model, q, v, jacobians=True)
    assert ts.length == 1.0 and not ts.moment.any() and not ts.geometric(1.0).any()


def test_point_forces_are_the_moment_arm():
    """Σ_k P_kᵀ f_k over the point forces equals J f (the moment arm is the
    virtual work of the point forces)."""
    model = tree(14, True)
    rng = np.random.default_rng(3)
    pts = random_points(model, rng, 5)
    path = Path(pts)
    q, _ = state(model, 1)
    F = path.point_forces(model, q, -3.0)
    tau = sum(mb.jacobian(model, q, fr, "local_world_aligned", point=p)[3:].T @ F[k] for k, (fr, p) in enumerate(pts))
    assert np.allclose(tau, -3.0 * path.moment_arm(model, q), atol=1e-12)
    X = path.points(model, q)
    for k, (fr, p) in enumerate(pts):
        Fk = mb.frame_pose(model, q, fr)
        assert np.allclose(X[k], Fk[:3, :3] @ p + Fk[:3, 3], atol=1e-14)


def test_zero_length_segment_names_the_element_and_the_segment():
    model = tree(15, False)
    b1, b2 = model.body_names[2], model.body_names[4]
    q = model.neutral()
    F1, F2 = mb.frame_pose(model, q, b1), mb.frame_pose(model, q, b2)
    x = F1[:3, 3] + F1[:3, :3] @ np.array([0.05, 0.0, 0.0])      # the same world point on b2
    p2 = F2[:3, :3].T @ (x - F2[:3, 3])
    e = NonlinearAlong(Path([("world", [1.0, 1.0, 1.0]), (b1, [0.05, 0, 0]), (b2, p2)]), name="flexor")
    with pytest.raises(mb.InputError, match=r"flexor.*segment 1 .*zero length"):
        e.evaluate(model, q, np.zeros(model.nv), jacobians=True)
    with pytest.raises(mb.InputError, match="segment 1"):
        Path([("world", [1.0, 1.0, 1.0]), (b1, [0.05, 0, 0]), (b2, p2)]).length(model, q)


def test_bad_paths_raise_model_errors():
    model = tree(15, False)
    for bad, msg in (([("world", [0, 0, 0])], "at least two"), ("abc", "list"),
                     ([("world", [0, 0]), ("world", [0, 0, 1])], "point 0"),
                     ([("world", [0, 0, 0]), ("world", [0, np.nan, 1])], "point 1"),
                     ([("world", [0, 0, 0]), "b1"], "point 1")):
        with pytest.raises(mb.ModelError, match=msg):
            Path(bad)
    e = NonlinearAlong(Path([("world", [0, 0, 0]), ("nope", [0, 0, 1])]), name="m1")
    with pytest.raises(mb.ModelError, match=r"m1.*'nope'"):
        e.evaluate(model, model.neutral(), np.zeros(model.nv))


def test_two_point_path_matches_the_axial_spring():
    """A linear spring along a two-point path is the PointToPointSpring (a
    transmission force f = −F)."""
    from multibody.forces import PointToPointSpring

    class Spring(TransmissionElement):
        def force(self, l, ld, t):
            return -(10.0 * (l - 0.3) + 2.0 * ld), -10.0, -2.0

    model = tree(16, True)
    fa, fb = model.body_names[2], model.frame_names[-1]
    pa, pb = np.array([0.1, -0.2, 0.05]), np.array([0.0, 0.1, 0.2])
    q, v = state(model, 5)
    a = Spring(Path([(fa, pa), (fb, pb)])).evaluate(model, q, v, jacobians=True)
    b = PointToPointSpring(fa, pa, fb, pb, 10.0, 2.0, 0.3).evaluate(model, q, v, jacobians=True)
    for x, y in zip(a, b):
        assert np.allclose(x, y, rtol=1e-10, atol=1e-10 * np.abs(y).max())


def test_along_with_the_path_state_directly():
    """The TransmissionState is usable on its own (actuators call it)."""
    model = tree(17, False)
    rng = np.random.default_rng(1)
    path = Path(random_points(model, rng, 3, world=False))
    q, v = state(model, 2)
    ts = path.evaluate(model, q, v, jacobians=True)
    tau, K, D = along(ts, -2.0, -5.0, -0.5, jacobians=True)
    assert np.allclose(tau, -2.0 * ts.moment)
    assert np.allclose(D, -0.5 * np.outer(ts.moment, ts.moment))
    assert np.allclose(K, -5.0 * np.outer(ts.moment, ts.moment) - 0.5 * np.outer(ts.moment, ts.rate_gradient)
                       + ts.geometric(-2.0))


def test_pickle_keeps_the_path_and_drops_the_bindings():
    import pickle
    model = tree(18, False)
    rng = np.random.default_rng(2)
    path = Path(random_points(model, rng, 3), name="tendon")
    q, _ = state(model, 1)
    l0 = path.length(model, q)
    copy = pickle.loads(pickle.dumps(path))
    assert repr(copy) == "Path('tendon')" and len(copy._bindings) == 0
    assert copy.length(model, q) == l0
