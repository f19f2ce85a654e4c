"""Quaternions (w, x, y, z): against scipy (scalar_first=True) and Pinocchio."""
import numpy as np
import pinocchio as pin
import pytest
from hypothesis import given, strategies as st
from scipy.spatial.transform import Rotation

from multibody.spatial import quaternion as Q

from .helpers import (EPS, SETTINGS, angles_general, angles_near_pi, angles_near_zero, hat3, rotvecs,
                      unit_quaternions, unit_vectors, vectors3)


def scipy_R(q):
    return Rotation.from_quat(q, scalar_first=True).as_matrix()


def same_rotation(q1, q2, atol):
    return min(np.abs(q1 - q2).max(), np.abs(q1 + q2).max()) <= atol


@SETTINGS
@given(unit_quaternions())
def test_to_rotation_matches_scipy_and_pinocchio(q):
    R = Q.to_rotation(q)
    np.testing.assert_allclose(R, scipy_R(q), atol=1e-15)
    pq = pin.Quaternion(q[0], q[1], q[2], q[3])  # ctor takes (w, x, y, z)
    np.testing.assert_allclose(R, pq.toRotationMatrix(), atol=1e-15)
    Rk = np.empty((3, 3))
    Q.to_rotation_into(q, Rk)
    np.testing.assert_array_equal(Rk, R)


@SETTINGS
@given(unit_quaternions(), unit_quaternions())
def test_multiply_is_rotation_composition(p, q):
    pq = Q.multiply(p, q)
    np.testing.assert_allclose(Q.to_rotation(pq), scipy_R(p) @ scipy_R(q), atol=2e-15)
    pinq = pin.Quaternion(p[0], p[1], p[2], p[3]) * pin.Quaternion(q[0], q[1], q[2], q[3])
    c = pinq.coeffs()  # (x, y, z, w)
    np.testing.assert_allclose(pq, [c[3], c[0], c[1], c[2]], atol=4 * EPS)
    assert abs(np.linalg.norm(pq) - 1.0) < 1e-15
    np.testing.assert_allclose(Q.multiply(q, Q.conjugate(q)), [1, 0, 0, 0], atol=4 * EPS)


@SETTINGS
@given(unit_quaternions(), unit_quaternions(), unit_quaternions())
def test_multiply_associative(a, b, c):
    np.testing.assert_allclose(Q.multiply(Q.multiply(a, b), c), Q.multiply(a, Q.multiply(b, c)),
                               atol=1e-15)


@SETTINGS
@given(unit_quaternions(), vectors3())
def test_rotate_is_sandwich(q, v):
    pv = np.concatenate([[0.0], v])
    sandwich = Q.multiply(Q.multiply(q, pv), Q.conjugate(q))
    tol = 8 * EPS * (1 + np.abs(v).max())
    np.testing.assert_allclose(Q.rotate(q, v), sandwich[1:], atol=tol)
    np.testing.assert_allclose(Q.rotate(q, v), Rotation.from_quat(q, scalar_first=True).apply(v),
                               atol=tol)


def test_artisynth_t8_example():
    q = np.array([np.cos(np.pi / 4), 0.0, 0.0, np.sin(np.pi / 4)])
    np.testing.assert_allclose(Q.rotate(q, np.array([1.0, 0.0, 0.0])), [0, 1, 0], atol=4e-16)  # 1 - 2 sin²(π/4) rounds to 2.2e-16


@pytest.mark.parametrize("k", [0, 1, 2, 3])
@SETTINGS
@given(unit_quaternions())
def test_from_rotation_exact_each_shepperd_branch(k, q):
    # force component k to dominate so that Shepperd's branch k is taken
    j = int(np.argmax(np.abs(q)))
    q[[j, k]] = q[[k, j]]
    q[k] = np.copysign(abs(q[k]) + 0.05, q[k])  # strict dominance, no ties
    q /= np.linalg.norm(q)
    assert np.argmax(np.abs(q)) == k
    R = scipy_R(q)
    r = Q.from_rotation(R)
    assert r[0] >= 0.0
    assert same_rotation(r, q, 3e-16 * 4)
    assert abs(np.linalg.norm(r) - 1.0) < 1e-15
    ref = Rotation.from_matrix(R).as_quat(canonical=True, scalar_first=True)
    assert same_rotation(r, ref, 1e-15)


@pytest.mark.parametrize("axis", [0, 1, 2])
def test_from_rotation_half_turns(axis):
    # w = 0 exactly: the branch must come from the diagonal, not the trace
    w = np.zeros(3)
    w[axis] = np.pi
    R = Rotation.from_rotvec(w).as_matrix()
    r = Q.from_rotation(R)
    e = np.zeros(4)
    e[axis + 1] = 1.0
    assert same_rotation(r, e, 1e-15)


@SETTINGS
@given(rotvecs())
def test_exp_matches_scipy(w):
    q = Q.exp(w)
    ref = Rotation.from_rotvec(w).as_quat(scalar_first=True)
    assert same_rotation(q, ref, 2e-16 * 4)
    assert abs(np.linalg.norm(q) - 1.0) < 2e-16 * 2


@SETTINGS
@given(rotvecs(st.one_of(angles_general(), angles_near_zero(), angles_near_pi())))
def test_log_exp_round_trip(w):
    q = Q.exp(w)
    r = Q.log(q)
    th = np.linalg.norm(w)
    if th < np.pi - 1e-12:
        np.testing.assert_allclose(r, w, atol=4e-16 + 2e-15 * th)
    else:  # at π, w and -w are the same rotation
        assert min(np.abs(r - w).max(), np.abs(r + w).max()) < 1e-14
    assert same_rotation(Q.exp(r), q, 1e-15)
    # log(-q) = log(q): sign of the quaternion does not matter
    np.testing.assert_allclose(Q.log(-q), r, atol=1e-15)


@SETTINGS
@given(unit_quaternions())
def test_log_matches_scipy(q):
    ref = Rotation.from_quat(q, scalar_first=True).as_rotvec()
    r = Q.log(q)
    if np.linalg.norm(ref) < np.pi - 1e-9:
        np.testing.assert_allclose(r, ref, atol=1e-14)


@SETTINGS
@given(unit_quaternions(), vectors3())
def test_rate_world_matches_finite_difference(q, w):
    # q̇ = ½(0,ω)q  ⇔  Ṙ = [ω]R  (ArtiSynth §0.2 / T8); FD of R(q(t))
    qd = Q.rate_world(q, w)
    assert abs(q @ qd) < 1e-15  # stays on the unit sphere
    h = 1e-6
    Rd = (scipy_R(Q.normalize(q + h * qd)) - scipy_R(Q.normalize(q - h * qd))) / (2 * h)
    np.testing.assert_allclose(Rd, hat3(w) @ scipy_R(q), atol=1e-8)


@SETTINGS
@given(unit_quaternions(), vectors3())
def test_rate_body_matches_finite_difference(q, w):
    qd = Q.rate_body(q, w)
    assert abs(q @ qd) < 1e-15
    h = 1e-6
    Rd = (scipy_R(Q.normalize(q + h * qd)) - scipy_R(Q.normalize(q - h * qd))) / (2 * h)
    np.testing.assert_allclose(Rd, scipy_R(q) @ hat3(w), atol=1e-8)


@SETTINGS
@given(unit_quaternions(), rotvecs())
def test_integrate_and_difference_body(q, w):
    q1 = Q.integrate_body(q, w)
    np.testing.assert_allclose(Q.to_rotation(q1), scipy_R(q) @ Rotation.from_rotvec(w).as_matrix(),
                               atol=2e-15)
    d = Q.difference_body(q, q1)
    assert same_rotation(Q.integrate_body(q, d), q1, 2e-15)
    if np.linalg.norm(w) < np.pi - 1e-9:
        np.testing.assert_allclose(d, w, atol=1e-14)


def test_normalize():
    q = np.array([1.0, 2.0, -2.0, 4.0])
    np.testing.assert_allclose(Q.normalize(q), q / 5.0, atol=1e-16)
