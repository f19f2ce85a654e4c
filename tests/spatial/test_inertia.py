"""Rigid-body inertia: mcI, parameters, transforms, primitives, composites and
validation — against Pinocchio's Inertia, MuJoCo's geom inertias, numeric
integration, the seeds' worked values and congruence identities."""
import numpy as np
import pinocchio as pin
import pytest
from hypothesis import given, strategies as st

from multibody.errors import ModelError
from multibody.spatial import se3, spatial as sp

from .helpers import (FEW, SETTINGS, mat_lf_to_af, pose, rigid_inertias, rotations, vectors3,
                      vectors6)


@SETTINGS
@given(rigid_inertias())
def test_mcI_matches_pinocchio(mci):
    m, c, Ic = mci
    I6 = sp.mcI(m, c, Ic)
    np.testing.assert_allclose(I6, mat_lf_to_af(pin.Inertia(m, c, Ic).matrix()), atol=1e-13)
    np.testing.assert_allclose(I6, I6.T, atol=0)
    assert np.linalg.eigvalsh(I6).min() > 0


def test_mcI_artisynth_t7():
    # ArtiSynth T7 (linear-first): m = 2, c = (0,0,1), J = I
    M_lf = np.array([[2, 0, 0, 0, 2, 0],
                     [0, 2, 0, -2, 0, 0],
                     [0, 0, 2, 0, 0, 0],
                     [0, -2, 0, 3, 0, 0],
                     [2, 0, 0, 0, 3, 0],
                     [0, 0, 0, 0, 0, 1]], dtype=float)
    np.testing.assert_allclose(sp.mcI(2.0, np.array([0.0, 0.0, 1.0]), np.eye(3)), mat_lf_to_af(M_lf), atol=0)


@SETTINGS
@given(rigid_inertias())
def test_params_match_pinocchio_order(mci):
    m, c, Ic = mci
    I6 = sp.mcI(m, c, Ic)
    pi = sp.inertia_to_params(I6)
    np.testing.assert_allclose(pi, pin.Inertia(m, c, Ic).toDynamicParameters(), atol=1e-13)
    np.testing.assert_allclose(sp.params_to_inertia(pi), I6, atol=1e-15)
    np.testing.assert_allclose(mat_lf_to_af(pin.Inertia.FromDynamicParameters(pi).matrix()), I6, atol=1e-13)


def test_params_explicit_values():
    # π = (m, m c, Ī_O lower triangle row-wise) with Ī_O = Ī_C + m(|c|²1 - c cᵀ)
    m, c = 2.0, np.array([0.1, 0.2, 0.3])
    pi = sp.inertia_to_params(sp.mcI(m, c, np.diag([1.0, 2.0, 3.0])))
    np.testing.assert_allclose(pi, [2, 0.2, 0.4, 0.6, 1.26, -0.04, 2.2, -0.06, -0.12, 3.1], atol=1e-15)


@SETTINGS
@given(rigid_inertias(), rotations(), vectors3(3.0))
def test_transform_inertia_congruence(mci, R, p):
    I6 = sp.mcI(*mci)
    X = sp.plucker(R, p)  # ᶜX_P
    IP = sp.transform_inertia(R, p, I6)
    np.testing.assert_allclose(IP, X.T @ I6 @ X, atol=1e-12)
    # ᴾX_C* = (ᶜX_P*)⁻¹
    np.testing.assert_allclose(IP, np.linalg.inv(sp.plucker_force(R, p)) @ I6 @ X, atol=1e-12)
    np.testing.assert_allclose(IP, se3.Ad_dual(pose(R, p)) @ I6 @ se3.Ad_inv(pose(R, p)), atol=1e-12)
    # Pinocchio: SE3(R, p).act(inertia in C) is the inertia in P
    np.testing.assert_allclose(IP, mat_lf_to_af(pin.SE3(R, p).act(pin.Inertia(*mci)).matrix()), atol=1e-12)
    # and back again with the inverse pose
    Ri, pi_ = se3.inverse_rp(R, p)
    np.testing.assert_allclose(sp.transform_inertia(Ri, pi_, IP), I6, atol=1e-12)


@SETTINGS
@given(rigid_inertias(), rotations(), vectors3(3.0), vectors6())
def test_kinetic_energy_is_frame_independent(mci, R, p, v):
    I6 = sp.mcI(*mci)
    vP = se3.Ad(pose(R, p)) @ v  # the same motion in parent coordinates
    IP = sp.transform_inertia(R, p, I6)
    assert abs(vP @ IP @ vP - v @ I6 @ v) < 1e-11 * (1 + v @ I6 @ v)
    assert v @ I6 @ v >= 0


@SETTINGS
@given(rigid_inertias(), vectors6())
def test_inertia_derivative_identity(mci, v):
    # İ = v×* I - I v× (Featherstone Eq. 2.65) for a body moving with spatial
    # velocity v: body pose exp(t v) in the fixed frame, inertia in fixed coordinates
    I6 = sp.mcI(*mci)
    h = 1e-6

    def I_at(t):
        R, p = se3.exp_rp(t * v)
        return sp.transform_inertia(R, p, I6)

    fd = (I_at(h) - I_at(-h)) / (2 * h)
    np.testing.assert_allclose(fd, sp.crf(v) @ I6 - I6 @ sp.crm(v), atol=1e-7 * (1 + np.abs(I6).max()))


# ------------------------------------------------------------ primitives
def grid_inertia(inside, half, n):
    """Rotational inertia about the origin per unit mass of the uniform solid
    {inside(x, y, z)} in the box [-half, half], by the midpoint rule on n³ cells."""
    ax = [(np.arange(n[i]) + 0.5) / n[i] * 2 * half[i] - half[i] for i in range(3)]
    X, Y, Z = np.meshgrid(*ax, indexing="ij")
    mask = inside(X, Y, Z)
    x, y, z = X[mask], Y[mask], Z[mask]
    N = x.size
    J = np.array([[np.sum(y * y + z * z), -np.sum(x * y), -np.sum(x * z)],
                  [-np.sum(x * y), np.sum(x * x + z * z), -np.sum(y * z)],
                  [-np.sum(x * z), -np.sum(y * z), np.sum(x * x + y * y)]])
    return J / N


def test_box_inertia_values():
    # Sueda E5: Δ = (1, 2, 3), ρ = 1 -> m = 6, diag (6.5, 5, 2.5)
    np.testing.assert_allclose(sp.box_inertia(6.0, np.array([1.0, 2.0, 3.0])), np.diag([6.5, 5.0, 2.5]),
                               atol=1e-15)
    # heavy-top box of Müller & Terze E1: 0.1 x 0.2 x 0.4 m, 21.6 kg
    np.testing.assert_allclose(np.diag(sp.box_inertia(21.6, np.array([0.1, 0.2, 0.4]))),
                               [0.36, 0.306, 0.09], atol=1e-15)


@FEW
@given(st.floats(0.1, 10.0), st.tuples(*[st.floats(0.05, 3.0)] * 3).map(np.array))
def test_box_inertia_matches_pinocchio(m, size):
    np.testing.assert_allclose(sp.box_inertia(m, size), pin.Inertia.FromBox(m, *size).inertia, atol=1e-14)


@FEW
@given(st.floats(0.1, 10.0), st.floats(0.01, 2.0), st.floats(0.0, 3.0))
def test_round_primitives_match_pinocchio(m, r, L):
    np.testing.assert_allclose(sp.sphere_inertia(m, r), pin.Inertia.FromSphere(m, r).inertia, atol=1e-14)
    np.testing.assert_allclose(sp.cylinder_inertia(m, r, L), pin.Inertia.FromCylinder(m, r, L).inertia,
                               atol=1e-14)
    np.testing.assert_allclose(sp.capsule_inertia(m, r, L), pin.Inertia.FromCapsule(m, r, L).inertia,
                               atol=1e-14)


def mujoco_body_inertia(geom_xml, m):
    mujoco = pytest.importorskip("mujoco")
    xml = f"""<mujoco><worldbody><body><freejoint/>
      <geom {geom_xml} mass="{m!r}"/></body></worldbody></mujoco>"""
    model = mujoco.MjModel.from_xml_string(xml)
    # MuJoCo stores principal moments; the geoms below are axis-aligned
    return np.diag(model.body_inertia[1])


@pytest.mark.parametrize("m,r,L", [(1.0, 0.1, 0.5), (2.5, 0.3, 0.05), (0.7, 0.05, 2.0)])
def test_primitives_match_mujoco(m, r, L):
    np.testing.assert_allclose(sp.capsule_inertia(m, r, L),
                               mujoco_body_inertia(f'type="capsule" size="{r!r} {L / 2!r}"', m), rtol=1e-12)
    np.testing.assert_allclose(sp.cylinder_inertia(m, r, L),
                               mujoco_body_inertia(f'type="cylinder" size="{r!r} {L / 2!r}"', m), rtol=1e-12)
    np.testing.assert_allclose(sp.sphere_inertia(m, r),
                               mujoco_body_inertia(f'type="sphere" size="{r!r}"', m), rtol=1e-12)
    size = np.array([r, L, 0.5 * (r + L)])
    np.testing.assert_allclose(sp.box_inertia(m, size),
                               mujoco_body_inertia('type="box" size="{} {} {}"'.format(*(size / 2)), m),
                               rtol=1e-12)


@pytest.mark.parametrize("r,L", [(0.3, 1.0), (0.5, 0.2)])
def test_capsule_and_cylinder_by_numeric_integration(r, L):
    # midpoint rule on 200³ cells: relative discretization error ~1e-4
    n = (200, 200, 200)
    half_c = np.array([r, r, L / 2 + r])
    capsule = lambda x, y, z: (x * x + y * y <= r * r) & (
        (np.abs(z) <= L / 2) | (x * x + y * y + (np.abs(z) - L / 2) ** 2 <= r * r))
    J = grid_inertia(capsule, half_c, n)
    np.testing.assert_allclose(sp.capsule_inertia(1.0, r, L), J, rtol=0, atol=2e-3 * np.abs(J).max())
    cyl = lambda x, y, z: (x * x + y * y <= r * r)
    J = grid_inertia(cyl, np.array([r, r, L / 2]), n)
    np.testing.assert_allclose(sp.cylinder_inertia(1.0, r, L), J, rtol=0, atol=2e-3 * np.abs(J).max())
    ball = lambda x, y, z: x * x + y * y + z * z <= r * r
    J = grid_inertia(ball, np.array([r, r, r]), n)
    np.testing.assert_allclose(sp.sphere_inertia(1.0, r), J, rtol=0, atol=2e-3 * np.abs(J).max())


def test_box_by_point_masses():
    # point masses at the n³ cell midpoints: each cell's own inertia about its
    # midpoint is the h²/12 per axis that the points miss, so adding it back
    # reproduces the continuum box exactly (a discrete identity, no limit)
    size = np.array([0.4, 1.0, 2.2])
    n = 10
    J = grid_inertia(lambda x, y, z: np.ones_like(x, dtype=bool), size / 2, (n, n, n))
    h2 = (size / n) ** 2 / 12
    J += np.diag([h2[1] + h2[2], h2[0] + h2[2], h2[0] + h2[1]])
    np.testing.assert_allclose(sp.box_inertia(1.0, size), J, atol=1e-14)


# ------------------------------------------------------------ composites
def test_composite_sueda_e6_two_cubes():
    # two unit cubes of mass m at x = ±½ form a 2x1x1 cuboid of mass 2m
    m = 1.7
    Icube = sp.box_inertia(m, np.ones(3))
    R = np.stack([np.eye(3), np.eye(3)])
    p = np.array([[0.5, 0, 0], [-0.5, 0, 0]])
    parts = np.stack([sp.mcI(m, np.zeros(3), Icube)] * 2)
    out = sp.composite_inertia(R, p, parts)
    np.testing.assert_allclose(out.I6, np.diag([m / 3, 5 * m / 6, 5 * m / 6, 2 * m, 2 * m, 2 * m]), atol=1e-15)
    assert out.mass == 2 * m
    np.testing.assert_allclose(out.com, 0, atol=1e-16)
    np.testing.assert_allclose(out.Ic, sp.box_inertia(2 * m, np.array([2.0, 1.0, 1.0])), atol=1e-15)
    np.testing.assert_allclose(np.sort(out.principal_moments), [m / 3, 5 * m / 6, 5 * m / 6], atol=1e-15)


@FEW
@given(st.lists(st.tuples(rigid_inertias(), rotations(), vectors3(2.0)), min_size=1, max_size=4))
def test_composite_matches_pinocchio_sum(parts):
    R = np.stack([q[1] for q in parts])
    p = np.stack([q[2] for q in parts])
    I6s = np.stack([sp.mcI(*q[0]) for q in parts])
    out = sp.composite_inertia(R, p, I6s)
    total = pin.Inertia.Zero()
    for (mci, Rk, pk) in parts:
        total = total + pin.SE3(Rk, pk).act(pin.Inertia(*mci))
    np.testing.assert_allclose(out.I6, mat_lf_to_af(total.matrix()), atol=1e-11)
    np.testing.assert_allclose(out.mass, total.mass, rtol=1e-14)
    np.testing.assert_allclose(out.com, total.lever, atol=1e-12)
    np.testing.assert_allclose(out.Ic, total.inertia, atol=1e-11)
    V = out.principal_axes
    assert abs(np.linalg.det(V) - 1.0) < 1e-12  # right-handed
    np.testing.assert_allclose(V @ np.diag(out.principal_moments) @ V.T, out.Ic, atol=1e-11)
    np.testing.assert_allclose(out.I6, sp.sum_inertias(R, p, I6s), atol=0)
    # grouping does not matter: sum of the first part and of the rest
    if len(parts) > 1:
        a = sp.sum_inertias(R[:1], p[:1], I6s[:1])
        b = sp.sum_inertias(R[1:], p[1:], I6s[1:])
        np.testing.assert_allclose(a + b, out.I6, atol=1e-12)


# ------------------------------------------------------------ validation
GOOD = np.diag([1.0, 2.0, 2.5])


def raises_naming(name, m, Ic, match=None):
    with pytest.raises(ModelError, match=match) as e:
        sp.check_inertia(m, Ic, name)
    assert name in str(e.value)


def test_check_inertia_accepts_physical_bodies():
    m, I = sp.check_inertia(2, GOOD, "link")
    assert m == 2.0 and I.dtype == np.float64
    sp.check_inertia(1.0, sp.box_inertia(1.0, np.array([1.0, 1.0, 1e-9])), "thin_plate")
    # an ideal thin plate sits exactly at the triangle-inequality boundary
    sp.check_inertia(1.0, np.diag([1.0, 2.0, 3.0]), "plate_at_equality")
    sp.check_inertia(1.0, sp.cylinder_inertia(1.0, 1e-6, 1.0), "thin_rod")
    sp.check_inertia(1.0, np.diag([1.0, 2.0, 3.0 * (1 + 5e-10)]), "rounding_above_equality")


@pytest.mark.parametrize("m", [0.0, -1.0, np.nan, np.inf, "heavy"])
def test_check_inertia_rejects_bad_mass(m):
    raises_naming("link_3", m, GOOD, match="mass")


def test_check_inertia_rejects_bad_matrices():
    raises_naming("forearm", 1.0, np.array([[1.0, 0, 0], [0, np.nan, 0], [0, 0, 1]]), "non-finite")
    raises_naming("forearm", 1.0, np.array([[1.0, 0.1, 0], [0, 1, 0], [0, 0, 1]]), "symmetric")
    raises_naming("forearm", 1.0, np.diag([1.0, 1.0, 0.0]), "positive definite")
    raises_naming("forearm", 1.0, np.diag([1.0, -1.0, 1.0]), "positive definite")
    raises_naming("forearm", 1.0, np.diag([1.0, 1.0, 2.1]), "triangle")
    raises_naming("forearm", 1.0, np.eye(2), "shape")
    # a rotated triangle violation is caught through the principal moments
    Q = np.linalg.qr(np.arange(9.0).reshape(3, 3) + np.eye(3))[0]
    raises_naming("forearm", 1.0, Q @ np.diag([0.5, 1.0, 1.6]) @ Q.T, "triangle")
