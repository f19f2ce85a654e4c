"""Featherstone spatial algebra: Plücker transforms, compact (E, r) transforms,
cross products, XtoV — against Pinocchio (converted to angular first),
explicit matrix algebra and identities that can fail."""
import numpy as np
import pinocchio as pin
from hypothesis import given, strategies as st
from scipy.spatial.transform import Rotation

from multibody.spatial import se3, spatial as sp

from .helpers import (EPS, SETTINGS, hat3, mat_lf_to_af, pin_force, pin_motion, pose, rotations,
                      vectors3, vectors6)

angles = st.floats(-2 * np.pi, 2 * np.pi)


@SETTINGS
@given(angles)
def test_axis_rotations_are_transposed_active_rotations(th):
    for f, axis in ((sp.rx, "x"), (sp.ry, "y"), (sp.rz, "z")):
        np.testing.assert_allclose(f(th), Rotation.from_euler(axis, th).as_matrix().T, atol=1e-15)
    c, s = np.cos(th), np.sin(th)
    np.testing.assert_array_equal(sp.rz(th), [[c, s, 0], [-s, c, 0], [0, 0, 1]])  # notes P2
    for f, g in ((sp.rotx, sp.rx), (sp.roty, sp.ry), (sp.rotz, sp.rz)):
        X = f(th)
        np.testing.assert_array_equal(X[:3, :3], g(th))
        np.testing.assert_array_equal(X[3:, 3:], g(th))
        assert not X[:3, 3:].any() and not X[3:, :3].any()


@SETTINGS
@given(rotations(), vectors3(3.0))
def test_plucker_definition_and_pinocchio(R, p):
    X = sp.plucker(R, p)
    np.testing.assert_allclose(X, sp.rot(R.T) @ sp.xlt(p), atol=8 * EPS * (1 + np.abs(p).max()))
    # ᴮX_A maps A coordinates to B coordinates = Pinocchio's M.actInv for M = pose of B in A
    M = pin.SE3(R, p)
    np.testing.assert_allclose(X, mat_lf_to_af(M.inverse().action), atol=1e-14)
    np.testing.assert_allclose(X, se3.Ad_inv(pose(R, p)), atol=1e-14)
    # explicit block form of Eq. 2.24
    E = R.T
    np.testing.assert_allclose(X[3:, :3], -E @ hat3(p), atol=8 * EPS * (1 + np.abs(p).max()))
    np.testing.assert_allclose(sp.er_to_matrix(E, p), X, atol=0)


@SETTINGS
@given(rotations(), vectors3(3.0))
def test_force_transform_is_inverse_transpose(R, p):
    X = sp.plucker(R, p)
    Xinv = np.linalg.inv(X)
    np.testing.assert_allclose(sp.plucker_force(R, p), Xinv.T, atol=1e-13)
    np.testing.assert_allclose(sp.force_transform(X), Xinv.T, atol=1e-13)
    np.testing.assert_allclose(sp.plucker_inverse(X), Xinv, atol=1e-13)
    np.testing.assert_allclose(sp.plucker_force(R, p), mat_lf_to_af(pin.SE3(R, p).inverse().dualAction),
                               atol=1e-14)
    E, r = sp.plucker_to_er(X)
    np.testing.assert_allclose(E, R.T, atol=0)
    np.testing.assert_allclose(r, p, atol=1e-14)


def test_rot_is_its_own_force_transform():
    E = sp.rz(0.3) @ sp.rx(-1.1)
    np.testing.assert_allclose(sp.force_transform(sp.rot(E)), sp.rot(E), atol=0)


@SETTINGS
@given(rotations(), vectors3(3.0), vectors6(), vectors6())
def test_power_invariance(R, p, m, f):
    X = sp.plucker(R, p)
    Xf = sp.plucker_force(R, p)
    assert abs((X @ m) @ (Xf @ f) - m @ f) < 1e-12 * (1 + np.abs(m).max() * np.abs(f).max())


@SETTINGS
@given(rotations(), vectors3(3.0), vectors6())
def test_compact_apply_equals_6x6(R, p, v):
    E, r = R.T.copy(), p
    X = sp.plucker(R, p)
    Xinv = np.linalg.inv(X)
    np.testing.assert_allclose(sp.apply_motion(E, r, v), X @ v, atol=1e-13)
    np.testing.assert_allclose(sp.inv_apply_motion(E, r, v), Xinv @ v, atol=1e-13)
    np.testing.assert_allclose(sp.apply_force(E, r, v), Xinv.T @ v, atol=1e-13)
    np.testing.assert_allclose(sp.inv_apply_force(E, r, v), X.T @ v, atol=1e-13)
    out = np.empty(6)
    sp.apply_motion_into(E, r, v, out)
    np.testing.assert_array_equal(out, sp.apply_motion(E, r, v))
    sp.inv_apply_force_into(E, r, v, out)
    np.testing.assert_array_equal(out, sp.inv_apply_force(E, r, v))
    # Pinocchio: motion in A -> motion in B is M.actInv for M = pose of B in A
    M = pin.SE3(R, p)
    mB = M.actInv(pin_motion(v))
    np.testing.assert_allclose(sp.apply_motion(E, r, v), np.concatenate([mB.angular, mB.linear]),
                               atol=1e-13)
    fB = M.actInv(pin_force(v))
    np.testing.assert_allclose(sp.apply_force(E, r, v), np.concatenate([fB.angular, fB.linear]),
                               atol=1e-13)


@SETTINGS
@given(rotations(), vectors3(3.0), rotations(), vectors3(3.0))
def test_compact_compose_and_inverse(R1, p1, R2, p2):
    E1, E2 = R1.T.copy(), R2.T.copy()
    E, r = sp.compose_er(E1, p1, E2, p2)
    np.testing.assert_allclose(sp.er_to_matrix(E, r), sp.er_to_matrix(E1, p1) @ sp.er_to_matrix(E2, p2),
                               atol=1e-13)
    Ei, ri = sp.inverse_er(E1, p1)
    np.testing.assert_allclose(sp.er_to_matrix(Ei, ri), np.linalg.inv(sp.er_to_matrix(E1, p1)), atol=1e-13)


@SETTINGS
@given(vectors6(), vectors6())
def test_cross_products(v, m):
    # rounding of a sum of products: a few ulp of |v||m| (with or without FMA)
    tol = 8 * EPS * np.abs(v).max() * max(np.abs(m).max(), np.abs(v).max())
    np.testing.assert_allclose(sp.crf(v), -sp.crm(v).T, atol=0)
    np.testing.assert_allclose(sp.crm(v), mat_lf_to_af(pin_motion(v).action), atol=0)
    np.testing.assert_allclose(sp.crf(v), mat_lf_to_af(pin_motion(v).dualAction), atol=0)
    np.testing.assert_allclose(sp.cross_motion(v, m), sp.crm(v) @ m, atol=tol)
    np.testing.assert_allclose(sp.cross_force(v, m), sp.crf(v) @ m, atol=tol)
    mc = pin_motion(v).cross(pin_motion(m))
    np.testing.assert_allclose(sp.cross_motion(v, m), np.concatenate([mc.angular, mc.linear]), atol=tol)
    fc = pin_motion(v).cross(pin_force(m))
    np.testing.assert_allclose(sp.cross_force(v, m), np.concatenate([fc.angular, fc.linear]), atol=tol)
    np.testing.assert_allclose(sp.cross_motion(v, v), np.zeros(6), atol=tol)
    np.testing.assert_allclose(sp.cross_motion(v, m), -sp.cross_motion(m, v), atol=tol)
    out = np.empty(6)
    sp.cross_force_into(v, m, out)
    np.testing.assert_array_equal(out, sp.cross_force(v, m))


@SETTINGS
@given(vectors6(), vectors6(), vectors6())
def test_cross_product_identities(u, v, f):
    # (u×v)·f = -v·(u×* f) and (u×v)× = u×v× - v×u× (Featherstone Table 2.3)
    assert abs(sp.cross_motion(u, v) @ f + v @ sp.cross_force(u, f)) < 1e-13
    np.testing.assert_allclose(sp.crm(sp.cross_motion(u, v)),
                               sp.crm(u) @ sp.crm(v) - sp.crm(v) @ sp.crm(u), atol=1e-13)
    np.testing.assert_allclose(sp.crf(sp.cross_motion(u, v)),
                               sp.crf(u) @ sp.crf(v) - sp.crf(v) @ sp.crf(u), atol=1e-13)


@SETTINGS
@given(rotations(), vectors3(3.0), vectors6())
def test_cross_transforms_by_similarity(R, p, v):
    X = sp.plucker(R, p)
    Xf = sp.plucker_force(R, p)
    np.testing.assert_allclose(sp.crm(X @ v), X @ sp.crm(v) @ np.linalg.inv(X), atol=1e-12)
    np.testing.assert_allclose(sp.crf(X @ v), Xf @ sp.crf(v) @ np.linalg.inv(Xf), atol=1e-12)


@SETTINGS
@given(vectors3(3.0))
def test_xtov_of_translation(r):
    np.testing.assert_array_equal(sp.xtov(sp.xlt(r)), np.concatenate([np.zeros(3), r]))


@SETTINGS
@given(rotations(), vectors3(3.0))
def test_xtov_is_invariant_of_X(R, p):
    X = sp.plucker(R, p)
    v = sp.xtov(X)
    np.testing.assert_allclose(X @ v, v, atol=1e-13)
    np.testing.assert_allclose(sp.xtov_pose(R, p), v, atol=0)


@SETTINGS
@given(vectors3(1.0), vectors3(1.0))
def test_xtov_small_displacement(w, p):
    # for a small pose (exp(εw), εp) of B in A, xtov ≈ ε[w; p] to O(ε²)
    eps = 1e-6
    R = Rotation.from_rotvec(eps * w).as_matrix()
    v = sp.xtov_pose(R, eps * p)
    np.testing.assert_allclose(v, eps * np.concatenate([w, p]), atol=1e-11)
