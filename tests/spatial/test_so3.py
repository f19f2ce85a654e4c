"""SO(3): hat/vee, exp/log, Jacobians — against scipy and Pinocchio."""
import numpy as np
import pinocchio as pin
import pytest
import scipy.linalg
from hypothesis import given, strategies as st
from scipy.spatial.transform import Rotation

from multibody.spatial import so3

from .helpers import (EPS, SETTINGS, exact_phi1, angles_general, angles_near_pi, angles_near_zero, angles_any,
                      hat3, rotvecs, unit_vectors, vectors3)


@SETTINGS
@given(vectors3(), vectors3())
def test_hat_is_cross_product(w, x):
    np.testing.assert_allclose(so3.hat(w) @ x, np.cross(w, x), atol=4 * EPS * np.abs(w).max() * np.abs(x).max())
    np.testing.assert_array_equal(so3.vee(so3.hat(w)), w)


@SETTINGS
@given(rotvecs())
def test_exp_matches_scipy_and_expm(w):
    R = so3.exp(w)
    np.testing.assert_allclose(R, Rotation.from_rotvec(w).as_matrix(), atol=2e-15)
    np.testing.assert_allclose(R, scipy.linalg.expm(hat3(w)), atol=2e-14)
    np.testing.assert_allclose(R, pin.exp3(w), atol=2e-15)
    np.testing.assert_allclose(R.T @ R, np.eye(3), atol=1e-15)
    assert abs(np.linalg.det(R) - 1.0) < 1e-14


@SETTINGS
@given(rotvecs(st.one_of(angles_general(), angles_near_zero(), st.floats(0.4, 0.6))))
def test_log_inverts_exp_away_from_pi(w):
    R = Rotation.from_rotvec(w).as_matrix()  # oracle-made rotation
    np.testing.assert_allclose(so3.log(R), w, atol=4e-15 + 4e-15 * np.linalg.norm(w))
    np.testing.assert_allclose(so3.log(R), pin.log3(R), atol=1e-14)


@SETTINGS
@given(angles_near_pi(), unit_vectors())
def test_log_near_pi(th, u):
    w = th * u
    R = so3.exp(w)
    r = so3.log(R)
    assert abs(np.linalg.norm(r) - th) < 1e-14
    np.testing.assert_allclose(so3.exp(r), R, atol=1e-14)
    if th < np.pi - 1e-12:
        # the sign of the axis is determined (sin θ ≥ 1e-12) and must be recovered
        np.testing.assert_allclose(r, w, atol=1e-13)
    else:
        assert min(np.abs(r - w).max(), np.abs(r + w).max()) < 1e-13


def test_log_exactly_pi_each_axis():
    for k in range(3):
        w = np.zeros(3)
        w[k] = np.pi
        R = Rotation.from_rotvec(w).as_matrix()
        r = so3.log(R)
        assert abs(abs(r[k]) - np.pi) < 1e-15
        np.testing.assert_allclose(so3.exp(r), R, atol=1e-15)


def test_log_identity_is_zero():
    np.testing.assert_array_equal(so3.log(np.eye(3)), np.zeros(3))


@SETTINGS
@given(rotvecs())
def test_jacobians_match_pinocchio(w):
    # pin.Jexp3(w) is the right (body) Jacobian: exp(w)ᵀ d exp(w) = [Jr dw]
    # atol 1e-13: Pinocchio's own closed form cancels to ~5e-14 near θ = 1e-4
    # (see test_jacobians_precision_against_exact_series)
    np.testing.assert_allclose(so3.right_jacobian(w), pin.Jexp3(w), atol=1e-13)
    np.testing.assert_allclose(so3.left_jacobian(w), pin.Jexp3(-w), atol=1e-13)
    th = np.linalg.norm(w)
    # Pinocchio 4.1's Jlog3 cancels for 1e-4 < θ < 1e-2 (6.7e-11 off the exact
    # series at θ = 1e-3, where ours is within 1 ulp), and its log branch is
    # only unambiguous below π: compare outside those ranges.
    if (th <= 1e-5 or th >= 0.05) and th < np.pi - 1e-6:
        np.testing.assert_allclose(so3.right_jacobian_inv(w), pin.Jlog3(pin.exp3(w)), atol=1e-12)


@SETTINGS
@given(rotvecs())
def test_jacobian_inverses(w):
    I3 = np.eye(3)
    np.testing.assert_allclose(so3.left_jacobian(w) @ so3.left_jacobian_inv(w), I3, atol=1e-14)
    np.testing.assert_allclose(so3.right_jacobian(w) @ so3.right_jacobian_inv(w), I3, atol=1e-14)
    # J_l = R J_r (both trivializations describe the same derivative)
    np.testing.assert_allclose(so3.left_jacobian(w), so3.exp(w) @ so3.right_jacobian(w), atol=1e-14)


@SETTINGS
@given(rotvecs(st.one_of(angles_general(), st.floats(1e-3, 1.0))), unit_vectors())
def test_left_jacobian_is_derivative_of_exp(w, d):
    # d/dε exp(w + ε d) exp(w)ᵀ = [J_l(w) d], central difference on scipy's exp
    h = 1e-6
    Rp = Rotation.from_rotvec(w + h * d).as_matrix()
    Rm = Rotation.from_rotvec(w - h * d).as_matrix()
    R = Rotation.from_rotvec(w).as_matrix()
    D = (Rp - Rm) / (2 * h) @ R.T
    np.testing.assert_allclose(D, hat3(so3.left_jacobian(w) @ d), atol=1e-8)
    D = R.T @ (Rp - Rm) / (2 * h)
    np.testing.assert_allclose(D, hat3(so3.right_jacobian(w) @ d), atol=1e-8)


ANGLES = [0.0, 1e-12, 1e-8, 1e-5, 1e-4, 1.0001e-4, 1e-3, 1e-2, 0.1,
          0.5 - 1e-12, 0.5, 0.5 + 1e-12, 1.0, 3.0, np.pi]


@pytest.mark.parametrize("th", ANGLES)
def test_jacobians_precision_against_exact_series(th):
    # Reference: the defining series Σ [w]^k/(k+1)! in exact rational arithmetic.
    # Catches cancellation in closed forms and errors at the series switch.
    w = th * np.array([0.48, -0.6, 0.64])
    Jl = exact_phi1(hat3(w))
    Jr = exact_phi1(hat3(-w))
    np.testing.assert_allclose(so3.left_jacobian(w), Jl, rtol=0, atol=4e-16)
    np.testing.assert_allclose(so3.right_jacobian(w), Jr, rtol=0, atol=4e-16)
    np.testing.assert_allclose(so3.left_jacobian_inv(w), np.linalg.inv(Jl), rtol=0, atol=1e-15)
    # Pinocchio agrees only to ~5e-14 near θ = 1e-4: its closed form cancels there
    # (checked against the exact series), so it is compared at that level.
    np.testing.assert_allclose(so3.right_jacobian(w), pin.Jexp3(w), rtol=0, atol=1e-13)
