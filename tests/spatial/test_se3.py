"""SE(3): exp/log, Ad/ad, dexp and dexp⁻¹ — against scipy.linalg.expm, Pinocchio
(linear-first, converted at the boundary), exact series and identities."""
import numpy as np
import pinocchio as pin
import pytest
import scipy.linalg
from hypothesis import given, strategies as st
from scipy.spatial.transform import Rotation

from multibody.spatial import se3

from .helpers import (EPS, FEW, SETTINGS, ad6, af_to_lf, angles_general, angles_near_pi, angles_near_zero,
                      exact_phi1, hat4, lf_to_af, mat_lf_to_af, pin_motion, pose, rotations, twists,
                      vectors3, vectors6)


poses = st.builds(pose, rotations(), vectors3(3.0))


def pin_jacobians_reliable(xi):
    """Pinocchio 4.1's Jexp6/Jlog6 lose precision for 1e-5 < |ω| < 0.05: against
    both scipy's block expm and the exact series they are off by up to 6e-9
    (Jexp6) and 2.5e-8 (Jlog6) at |ω| = 1e-3 while ours is within a few ulp
    (test_dexp_precision_against_exact_series). Compare with them elsewhere."""
    th = np.linalg.norm(xi[:3])
    return th <= 1e-5 or th >= 0.05


def dexp_oracle(xi):
    """Σ adᵏ/(k+1)! from the block exponential expm([[ad, I], [0, 0]]) (scipy)."""
    M = np.zeros((12, 12))
    M[:6, :6] = ad6(xi)
    M[:6, 6:] = np.eye(6)
    return scipy.linalg.expm(M)[:6, 6:]


@SETTINGS
@given(vectors6())
def test_hat_vee(xi):
    np.testing.assert_array_equal(se3.vee(se3.hat(xi)), xi)
    np.testing.assert_array_equal(se3.hat(xi), hat4(xi))


@SETTINGS
@given(twists())
def test_exp_matches_expm_and_pinocchio(xi):
    T = se3.exp(xi)
    np.testing.assert_allclose(T, scipy.linalg.expm(hat4(xi)), atol=5e-14)
    M = pin.exp6(pin_motion(xi))
    np.testing.assert_allclose(T, M.homogeneous, atol=1e-14)
    Tk = np.empty((4, 4))
    se3.exp_into(xi, Tk)
    np.testing.assert_array_equal(Tk, T)
    R, p = se3.exp_rp(xi)
    np.testing.assert_array_equal(R, T[:3, :3])
    np.testing.assert_array_equal(p, T[:3, 3])


def test_exp_pure_translation():
    xi = np.array([0.0, 0.0, 0.0, 1.0, -2.0, 3.0])
    np.testing.assert_array_equal(se3.exp(xi), pose(np.eye(3), xi[3:]))
    np.testing.assert_array_equal(se3.log(se3.exp(xi)), xi)


@SETTINGS
@given(twists(st.one_of(angles_general(), angles_near_zero(), st.floats(0.4, 0.6))))
def test_log_inverts_exp(xi):
    T = scipy.linalg.expm(hat4(xi))
    T[3] = [0, 0, 0, 1]
    out = se3.log(T)
    np.testing.assert_allclose(out, xi, atol=1e-13 * (1 + np.abs(xi).max()))
    if np.linalg.norm(xi[:3]) < np.pi - 1e-6:
        np.testing.assert_allclose(out, lf_to_af(pin.log6(T).vector), atol=1e-12)


@SETTINGS
@given(twists(angles_near_pi()))
def test_log_near_pi(xi):
    T = se3.exp(xi)
    out = se3.log(T)
    np.testing.assert_allclose(se3.exp(out), T, atol=1e-13)
    if np.linalg.norm(xi[:3]) < np.pi - 1e-12:
        np.testing.assert_allclose(out, xi, atol=1e-11)


@SETTINGS
@given(poses)
def test_exp_log_round_trip_on_group(T):
    np.testing.assert_allclose(se3.exp(se3.log(T)), T, atol=2e-14)


def test_sueda_e1_log_near_pi():
    # Sueda §1.3 printed example (4-digit data, θ ≈ 3.086)
    E = np.array([[-0.7372, -0.2659, 0.6211, 0.6877],
                  [-0.1676, -0.8186, -0.5493, 0.3886],
                  [0.6545, -0.5091, 0.5589, 0.9371],
                  [0, 0, 0, 1]])
    xi = se3.log(E)
    np.testing.assert_allclose(xi, [1.1157, -0.9257, 2.7242, 1.3245, -0.6727, 0.3156], atol=1e-3)
    P = se3.hat(np.array([1.1157, -0.9257, 2.7242, 1.3245, -0.6727, 0.3156]))
    np.testing.assert_allclose(se3.exp(se3.vee(P)), E, atol=2e-4)


def test_sueda_e2_finite_difference():
    # Sueda §1.3 E2: (E exp(dt φ) - E)/dt ≈ E [φ]
    E = np.array([[-0.9227, -0.3845, -0.0274, -0.5020],
                  [0.2865, -0.6364, -0.7162, 0.4564],
                  [0.2579, -0.6687, 0.6973, -1.5617],
                  [0, 0, 0, 1]])
    phi = np.array([-0.1285, 1.2666, 0.8058, -0.6903, -0.5538, -0.1246])
    h = 1e-6
    fd = (E @ se3.exp(h * phi) - E @ se3.exp(-h * phi)) / (2 * h)
    expected = np.array([[-0.2751, 0.7470, -1.2181, 0.8533],
                         [0.3944, -0.1388, 0.2811, 0.2439],
                         [-1.4221, -0.2974, 0.2408, 0.1054],
                         [0, 0, 0, 0]])
    np.testing.assert_allclose(fd, expected, atol=2e-4)
    np.testing.assert_allclose(fd, E @ hat4(phi), atol=1e-9)


@SETTINGS
@given(poses)
def test_inverse_and_compose(T):
    np.testing.assert_allclose(se3.inverse(T), np.linalg.inv(T), atol=1e-14)
    np.testing.assert_allclose(se3.compose(T, se3.inverse(T)), np.eye(4), atol=1e-14)
    x = np.array([0.3, -1.0, 2.0])
    np.testing.assert_allclose(se3.act(T, x), (T @ np.append(x, 1.0))[:3], atol=8 * EPS * (1 + np.abs(T).max()))


@SETTINGS
@given(poses, poses)
def test_Ad_homomorphism(T1, T2):
    np.testing.assert_allclose(se3.Ad(se3.compose(T1, T2)), se3.Ad(T1) @ se3.Ad(T2), atol=1e-13)
    np.testing.assert_allclose(se3.Ad(T1) @ se3.Ad_inv(T1), np.eye(6), atol=1e-13)
    np.testing.assert_allclose(se3.Ad_inv(T1), se3.Ad(se3.inverse(T1)), atol=1e-14)


@SETTINGS
@given(poses, vectors6())
def test_Ad_matches_pinocchio_and_conjugation(T, xi):
    M = pin.SE3(T[:3, :3], T[:3, 3])
    np.testing.assert_allclose(se3.Ad(T), mat_lf_to_af(M.action), atol=1e-14)
    np.testing.assert_allclose(se3.Ad_dual(T), mat_lf_to_af(M.dualAction), atol=1e-14)
    np.testing.assert_allclose(se3.Ad_dual(T), np.linalg.inv(se3.Ad(T)).T, atol=1e-13)
    # T hat(xi) T⁻¹ = hat(Ad(T) xi)
    np.testing.assert_allclose(T @ hat4(xi) @ np.linalg.inv(T), hat4(se3.Ad(T) @ xi), atol=1e-13)
    np.testing.assert_allclose(se3.Ad_rp(T[:3, :3], T[:3, 3]), se3.Ad(T), atol=0)


@SETTINGS
@given(vectors6(), vectors6())
def test_ad_is_bracket(x, y):
    comm = hat4(x) @ hat4(y) - hat4(y) @ hat4(x)
    np.testing.assert_allclose(se3.ad(x) @ y, se3.vee(comm), atol=1e-14)
    np.testing.assert_allclose(se3.bracket(x, y), se3.vee(comm), atol=1e-14)
    np.testing.assert_allclose(se3.ad(x), mat_lf_to_af(pin_motion(x).action), atol=0)
    np.testing.assert_allclose(se3.ad_dual(x), -se3.ad(x).T, atol=0)
    np.testing.assert_allclose(se3.ad_dual(x), mat_lf_to_af(pin_motion(x).dualAction), atol=0)


@SETTINGS
@given(vectors6(), vectors6(), vectors6())
def test_jacobi_identity(x, y, z):
    b = se3.bracket
    np.testing.assert_allclose(b(x, b(y, z)) + b(y, b(z, x)) + b(z, b(x, y)), np.zeros(6), atol=1e-13)


@SETTINGS
@given(poses, twists())
def test_Ad_derivative(T, xi):
    # Sueda E4: d/dt Ad(T exp(t φ)) = Ad(T) ad(φ)
    h = 1e-6
    fd = (se3.Ad(T @ se3.exp(h * xi)) - se3.Ad(T @ se3.exp(-h * xi))) / (2 * h)
    np.testing.assert_allclose(fd, se3.Ad(T) @ se3.ad(xi), atol=1e-8)


@SETTINGS
@given(twists(vscale=5.0))
def test_dexp_matches_expm_block_and_pinocchio(xi):
    D = dexp_oracle(xi)
    np.testing.assert_allclose(se3.dexp(xi), D, atol=1e-13)
    np.testing.assert_allclose(se3.dexp_body(xi), dexp_oracle(-xi), atol=1e-13)
    # pin.Jexp6 is the body (left-trivialized) Jacobian, linear first
    if pin_jacobians_reliable(xi):
        np.testing.assert_allclose(se3.dexp_body(xi), mat_lf_to_af(pin.Jexp6(pin_motion(xi))),
                                   atol=1e-12)


@SETTINGS
@given(twists(vscale=5.0))
def test_dexp_inverse(xi):
    I6 = np.eye(6)
    np.testing.assert_allclose(se3.dexp(xi) @ se3.dexp_inv(xi), I6, atol=1e-13)
    np.testing.assert_allclose(se3.dexp_inv(xi) @ se3.dexp(xi), I6, atol=1e-13)
    np.testing.assert_allclose(se3.dexp_body(xi) @ se3.dexp_inv_body(xi), I6, atol=1e-13)
    np.testing.assert_allclose(se3.dexp_inv_body(xi), se3.dexp_inv(-xi), atol=0)
    if np.linalg.norm(xi[:3]) < np.pi - 1e-6 and pin_jacobians_reliable(xi):
        Jlog = mat_lf_to_af(pin.Jlog6(pin.exp6(pin_motion(xi))))
        np.testing.assert_allclose(se3.dexp_inv_body(xi), Jlog, atol=1e-11)


@SETTINGS
@given(twists(st.one_of(angles_general(), st.floats(1e-3, 1.0))), vectors6())
def test_dexp_is_derivative_of_exp(xi, d):
    # right-trivialized: d/dε exp(xi + ε d) exp(xi)⁻¹ = hat(dexp(xi) d); on expm (oracle)
    h = 1e-6
    E = lambda x: scipy.linalg.expm(hat4(x))
    Ed = (E(xi + h * d) - E(xi - h * d)) / (2 * h)
    np.testing.assert_allclose(Ed @ np.linalg.inv(E(xi)), hat4(se3.dexp(xi) @ d), atol=1e-7)
    np.testing.assert_allclose(np.linalg.inv(E(xi)) @ Ed, hat4(se3.dexp_body(xi) @ d), atol=1e-7)


def test_ad_polynomial_identity():
    # the reduction to degree 4 rests on ad⁵ + 2θ² ad³ + θ⁴ ad = 0 (Selig)
    rng = np.random.default_rng(1)
    for _ in range(20):
        xi = rng.normal(size=6) * 2
        A = ad6(xi)
        t2 = xi[:3] @ xi[:3]
        A3 = A @ A @ A
        res = A3 @ A @ A + 2 * t2 * A3 + t2 * t2 * A
        assert np.abs(res).max() < 1e-11 * (1 + t2) ** 3


THETAS = [0.0, 1e-12, 1e-8, 1e-5, 1e-4, 1e-3, 1e-2, 0.1, 0.5 - 1e-12, 0.5, 0.5 + 1e-12, 1.0, 2.0, 3.0]


@pytest.mark.parametrize("th", THETAS)
@pytest.mark.parametrize("vscale", [1.0, 100.0])
def test_dexp_precision_against_exact_series(th, vscale):
    # Reference: Σ adᵏ/(k+1)! in exact rational arithmetic. A large linear part
    # (vscale) exposes cancellation in the coefficients multiplying ad², ad⁴.
    # Bound: 16 ulp of the largest entry. Measured worst case is ~7 ulp (closed
    # forms just above the θ = 0.5 switch with |v| = 60); the cancellation this
    # guards against costs 1e2-1e8 ulp (e.g. Pinocchio's Jexp6 at θ = 1e-3).
    xi = np.concatenate([th * np.array([0.48, -0.6, 0.64]), vscale * np.array([0.3, 0.5, -0.2])])
    D = exact_phi1(ad6(xi), nterms=50)
    Db = exact_phi1(ad6(-xi), nterms=50)
    ulp = np.finfo(float).eps
    scale = np.abs(D).max()
    np.testing.assert_allclose(se3.dexp(xi), D, rtol=0, atol=16 * ulp * scale)
    np.testing.assert_allclose(se3.dexp_body(xi), Db, rtol=0, atol=16 * ulp * scale)
    Di = np.linalg.inv(D)
    iscale = np.abs(Di).max()
    np.testing.assert_allclose(se3.dexp_inv(xi), Di, rtol=0, atol=16 * ulp * iscale)
    np.testing.assert_allclose(se3.dexp_inv_body(xi), np.linalg.inv(Db), rtol=0, atol=16 * ulp * iscale)


@FEW
@given(twists(angles_near_zero()))
def test_dexp_near_zero_rotation(xi):
    # at ω → 0: dexp = I + ½ ad (+ O(θ)), dexp⁻¹ = I - ½ ad + (1/12) ad² …
    A = ad6(xi)
    np.testing.assert_allclose(se3.dexp(xi), np.eye(6) + A / 2 + A @ A / 6, atol=1e-12)
    np.testing.assert_allclose(se3.dexp_inv(xi), np.eye(6) - A / 2 + A @ A / 12, atol=1e-12)
