"""Roll-pitch-yaw and XZX Euler angles: against scipy, Pinocchio, the seed
formulas (ArtiSynth §0.4, Featherstone Eq. 4.8, Sueda §2.4.5) and finite
differences."""
import numpy as np
import pinocchio as pin
import pytest
from hypothesis import assume, given, strategies as st
from scipy.spatial.transform import Rotation

from multibody.spatial import euler

from .helpers import SETTINGS, rotations, vectors3

HALF_PI = np.pi / 2


def vee_skew(S):
    assert np.abs(S + S.T).max() < 1e-6  # derivative of R Rᵀ must be skew
    return 0.5 * np.array([S[2, 1] - S[1, 2], S[0, 2] - S[2, 0], S[1, 0] - S[0, 1]])


def rpy_strategy(margin=1e-3):
    """roll, yaw in (-π, π), 1e-9 from ±π (at π itself atan2 may answer
    the same angle as −π: hypothesis found roll = π); pitch in (-π/2, π/2)
    at least ``margin`` from ±π/2."""
    return st.tuples(st.floats(-np.pi + 1e-9, np.pi - 1e-9), st.floats(-HALF_PI + margin, HALF_PI - margin),
                     st.floats(-np.pi + 1e-9, np.pi - 1e-9)).map(np.array)


def scipy_rpy(rpy):
    # extrinsic x, then y, then z about fixed axes = Rz(yaw) Ry(pitch) Rx(roll)
    return Rotation.from_euler("xyz", rpy).as_matrix()


@SETTINGS
@given(rpy_strategy(0.0))
def test_rpy_to_rotation_matches_scipy_and_pinocchio(rpy):
    R = euler.rpy_to_rotation(rpy)
    np.testing.assert_allclose(R, scipy_rpy(rpy), atol=1e-15)
    np.testing.assert_allclose(R, pin.rpy.rpyToMatrix(rpy), atol=1e-15)
    np.testing.assert_allclose(R, Rotation.from_euler("ZYX", rpy[::-1]).as_matrix(), atol=1e-15)


@SETTINGS
@given(rpy_strategy())
def test_rotation_to_rpy_round_trip(rpy):
    R = scipy_rpy(rpy)
    out = euler.rotation_to_rpy(R)
    np.testing.assert_allclose(out, rpy, atol=1e-12)  # cos(pitch) >= 1e-3 amplifies ≤ 1e3 eps
    np.testing.assert_allclose(out, pin.rpy.matrixToRpy(R), atol=1e-12)


@SETTINGS
@given(rotations())
def test_rotation_to_rpy_reproduces_any_rotation(R):
    np.testing.assert_allclose(euler.rpy_to_rotation(euler.rotation_to_rpy(R)), R, atol=2e-15)


@SETTINGS
@given(st.sampled_from([-1.0, 1.0]), st.floats(0.0, 1e-8), st.floats(-np.pi, np.pi),
       st.floats(-np.pi, np.pi))
def test_rotation_to_rpy_gimbal_lock(sign, d, roll, yaw):
    # pitch within 1e-8 of ±π/2 (and exactly at it): roll and yaw are not
    # separately determined, but R must be reproduced to round-off
    rpy = np.array([roll, sign * (HALF_PI - d), yaw])
    R = scipy_rpy(rpy)
    out = euler.rotation_to_rpy(R)
    assert np.all(np.isfinite(out))
    assert abs(out[1] - rpy[1]) < 1e-7 + 1e-15
    np.testing.assert_allclose(euler.rpy_to_rotation(out), R, atol=2e-15)


def test_rotation_to_rpy_exact_gimbal_lock_sets_yaw_zero():
    R = euler.rpy_to_rotation(np.array([0.3, HALF_PI, 0.0]))
    R[0, 0] = R[1, 0] = 0.0  # make cos(pitch) exactly 0
    out = euler.rotation_to_rpy(R)
    assert out[2] == 0.0 and abs(out[1] - HALF_PI) < 1e-15
    np.testing.assert_allclose(euler.rpy_to_rotation(out), R, atol=1e-15)


def fd_omega(fun, x, xdot, h=1e-6):
    """Central difference of R(x(t)); returns (Ṙ, R)."""
    Rp = fun(x + h * xdot)
    Rm = fun(x - h * xdot)
    return (Rp - Rm) / (2 * h), fun(x)


@SETTINGS
@given(rpy_strategy(0.05), vectors3())
def test_rpy_rate_maps_match_finite_differences(rpy, rates):
    Rd, R = fd_omega(scipy_rpy, rpy, rates)
    w_world = vee_skew(Rd @ R.T)
    w_body = vee_skew(R.T @ Rd)
    Ew = euler.rpy_rates_to_world_omega_matrix(rpy)
    Eb = euler.rpy_rates_to_body_omega_matrix(rpy)
    np.testing.assert_allclose(Ew @ rates, w_world, atol=1e-8)
    np.testing.assert_allclose(Eb @ rates, w_body, atol=1e-8)
    np.testing.assert_allclose(Eb, R.T @ Ew, atol=1e-15)
    Ewi = euler.world_omega_to_rpy_rates_matrix(rpy)
    Ebi = euler.body_omega_to_rpy_rates_matrix(rpy)
    np.testing.assert_allclose(Ew @ Ewi, np.eye(3), atol=1e-13)
    np.testing.assert_allclose(Ewi @ Ew, np.eye(3), atol=1e-13)
    np.testing.assert_allclose(Eb @ Ebi, np.eye(3), atol=1e-13)
    np.testing.assert_allclose(Ebi @ Eb, np.eye(3), atol=1e-13)


@SETTINGS
@given(rpy_strategy(0.05))
def test_rpy_rate_maps_match_pinocchio(rpy):
    np.testing.assert_allclose(euler.rpy_rates_to_body_omega_matrix(rpy),
                               pin.rpy.computeRpyJacobian(rpy, pin.LOCAL), atol=1e-15)
    np.testing.assert_allclose(euler.rpy_rates_to_world_omega_matrix(rpy),
                               pin.rpy.computeRpyJacobian(rpy, pin.WORLD), atol=1e-15)
    np.testing.assert_allclose(euler.world_omega_to_rpy_rates_matrix(rpy),
                               pin.rpy.computeRpyJacobianInverse(rpy, pin.WORLD), atol=1e-13)


@SETTINGS
@given(rpy_strategy(0.05))
def test_artisynth_and_featherstone_forms(rpy):
    roll, pitch, yaw = rpy
    th, ph = yaw, pitch  # ArtiSynth §0.4: θ about z, φ about y', ψ about x''
    sT, cT, sP, cP = np.sin(th), np.cos(th), np.sin(ph), np.cos(ph)
    E_as = np.array([[0, -sT, cT * cP], [0, cT, sT * cP], [1, 0, -sP]])  # rates (θ̇, φ̇, ψ̇)
    Einv_as = np.array([[sP * cT / cP, sP * sT / cP, 1], [-sT, cT, 0], [cT / cP, sT / cP, 0]])
    np.testing.assert_allclose(euler.rpy_rates_to_world_omega_matrix(rpy), E_as[:, ::-1], atol=1e-15)
    np.testing.assert_allclose(euler.world_omega_to_rpy_rates_matrix(rpy), Einv_as[::-1, :], atol=1e-13)
    # Featherstone Eq. 4.8, q = (yaw, pitch, roll), ω in the successor (body) frame
    s2, c2, s3, c3 = np.sin(pitch), np.cos(pitch), np.sin(roll), np.cos(roll)
    S_f = np.array([[-s2, 0, 1], [c2 * s3, c3, 0], [c2 * c3, -s3, 0]])
    np.testing.assert_allclose(euler.rpy_rates_to_body_omega_matrix(rpy), S_f[:, ::-1], atol=1e-15)


@SETTINGS
@given(rpy_strategy(0.05), vectors3())
def test_inverse_rate_matrix_derivative(rpy, rates):
    # the derivative is linear in the rates: difference along the unit direction (tiny rates would
    # make the step h·|rates| vanish into round-off), then scale
    n = np.abs(rates).max()  # (a 2-norm of tiny rates underflows to 0)
    if n == 0.0:
        assert not euler.world_omega_to_rpy_rates_matrix_dot(rpy, rates).any()
        return
    u, h = rates / n, 1e-6
    fd = (euler.world_omega_to_rpy_rates_matrix(rpy + h * u)
          - euler.world_omega_to_rpy_rates_matrix(rpy - h * u)) / (2 * h)
    np.testing.assert_allclose(euler.world_omega_to_rpy_rates_matrix_dot(rpy, rates) / n, fd,
                               atol=1e-8 * (1 + np.abs(fd).max()))


# ------------------------------------------------------------------ XZX
def xzx_strategy(margin=1e-3):
    return st.tuples(st.floats(-np.pi + 1e-9, np.pi), st.floats(margin, np.pi - margin),
                     st.floats(-np.pi + 1e-9, np.pi)).map(np.array)


@SETTINGS
@given(xzx_strategy(0.0))
def test_xzx_matches_scipy(q):
    np.testing.assert_allclose(euler.xzx_to_rotation(q), Rotation.from_euler("XZX", q).as_matrix(),
                               atol=1e-15)


@SETTINGS
@given(xzx_strategy())
def test_rotation_to_xzx_round_trip(q):
    R = Rotation.from_euler("XZX", q).as_matrix()
    np.testing.assert_allclose(euler.rotation_to_xzx(R), q, atol=1e-12)


@SETTINGS
@given(rotations())
def test_rotation_to_xzx_reproduces_any_rotation(R):
    np.testing.assert_allclose(euler.xzx_to_rotation(euler.rotation_to_xzx(R)), R, atol=2e-15)


@SETTINGS
@given(st.sampled_from([0.0, np.pi]), st.floats(0.0, 1e-8), st.floats(-np.pi, np.pi),
       st.floats(-np.pi, np.pi))
def test_rotation_to_xzx_near_singularity(q2, d, q1, q3):
    q = np.array([q1, abs(q2 - d), q3])
    R = Rotation.from_euler("XZX", q).as_matrix()
    np.testing.assert_allclose(euler.xzx_to_rotation(euler.rotation_to_xzx(R)), R, atol=2e-15)


@SETTINGS
@given(xzx_strategy(0.0), vectors3())
def test_xzx_body_rate_matrix_and_derivative(q, qd):
    Rd, R = fd_omega(euler.xzx_to_rotation, q, qd)
    S = euler.xzx_body_rate_matrix(q)
    np.testing.assert_allclose(S @ qd, vee_skew(R.T @ Rd), atol=1e-8)
    h = 1e-6
    Sd = (euler.xzx_body_rate_matrix(q + h * qd) - euler.xzx_body_rate_matrix(q - h * qd)) / (2 * h)
    np.testing.assert_allclose(euler.xzx_body_rate_matrix_dot(q, qd), Sd, atol=1e-8)
