"""Floating-base dynamics (Featherstone §9.3–9.5): the floating-base ABA
(Table 9.4) against Pinocchio's ABA and the library's ABA; floating-base
inverse dynamics IDfb (Table 9.6) against the block solve of Eq. 9.13 with
Pinocchio's CRBA and RNEA, fed back to ABA; invariants (independence from
the base position, gravity only shifts the base acceleration); batches;
bad input."""
import numpy as np
import pinocchio as pin
import pytest

import multibody as mb
from multibody.dynamics import floating_base_forward_dynamics as fb_fd
from multibody.dynamics import floating_base_inverse_dynamics as fb_id
from multibody.dynamics import floating_base_forward_dynamics as _fb_fd
from multibody.dynamics import floating_base_inverse_dynamics as _fb_id
from oracles import random_tree, robot_path
from .helpers import assert_rel, system

NAMES = ["tree_floating", "tree_floating_armature", "tree_fixed_bodies", "talos", "solo12"]
N = 3


@pytest.fixture(scope="module", params=NAMES)
def sys_(request):
    return system(request.param)


def test_forward_dynamics_against_pinocchio_and_aba(sys_):
    model, pm = sys_.model, sys_.pm
    pd = pm.createData()
    for qp, vp, q, v, a, tau, fe in sys_.states(N, seed=1):
        tau[:6] = 0.0
        expect = sys_.v_from_pin(pin.aba(pm, pd, qp, vp, sys_.v_to_pin(tau), sys_.pin_fext(fe)))
        got = fb_fd(model, q, v, tau[6:], f_ext=fe)
        assert_rel(got, expect, what="floating-base ABA vs Pinocchio aba")
        assert_rel(got, mb.aba(model, q, v, tau, f_ext=fe), what="floating-base ABA vs aba")
        # an (nv,) tau carries a wrench on the base through its joint, as in aba
        tau[:6] = np.random.default_rng(0).normal(size=6)
        assert_rel(fb_fd(model, q, v, tau), mb.aba(model, q, v, tau), what="with a base wrench")
        assert_rel(fb_fd(model, q, v, tau[6:], gravity=False), mb.aba(model, q, v, np.r_[np.zeros(6), tau[6:]],
                                                                       gravity=False), what="no gravity")


def test_inverse_dynamics_against_pinocchio(sys_):
    """Eq. 9.13 solved densely with Pinocchio's H and C:
    a_0 = H_bb⁻¹(−C_b − H_bj q̈_j), τ_j = H_jb a_0 + H_jj q̈_j + C_j."""
    model = sys_.model
    for qp, vp, q, v, a, tau, fe in sys_.states(N, seed=2):
        H = sys_.crba(qp)
        C = sys_.rnea(qp, vp, np.r_[np.zeros(6), a[6:]], fe)
        a0 = np.linalg.solve(H[:6, :6], -C[:6])
        tj = H[6:, :6] @ a0 + C[6:]
        got_a0, got_tj = fb_id(model, q, v, a[6:], f_ext=fe)
        assert_rel(got_a0, a0, what="base acceleration")
        assert_rel(got_tj, tj, what="joint forces")


def test_inverse_dynamics_inverts_forward_dynamics(sys_):
    """IDfb's joint forces, fed to ABA with zero force on the base,
    reproduce the given joint accelerations and IDfb's base acceleration;
    and FB-FD's joint accelerations fed to IDfb give back the forces."""
    model = sys_.model
    for qp, vp, q, v, a, tau, fe in sys_.states(N, seed=3):
        a0, tj = fb_id(model, q, v, a[6:], f_ext=fe)
        qdd = mb.aba(model, q, v, np.r_[np.zeros(6), tj], f_ext=fe)
        assert_rel(qdd, np.r_[a0, a[6:]], rtol=1e-8, what="aba(IDfb) = [a0; qdd]")
        r = mb.rnea(model, q, v, np.r_[a0, a[6:]], f_ext=fe)
        assert_rel(r, np.r_[np.zeros(6), tj], what="rnea([a0; qdd]) = [0; tau]")
        qdd = fb_fd(model, q, v, tau[6:], f_ext=fe)
        a0, tj = fb_id(model, q, v, qdd[6:], f_ext=fe)
        assert_rel(a0, qdd[:6], rtol=1e-8, what="IDfb(FD) base")
        assert_rel(tj, tau[6:], rtol=1e-8, what="IDfb(FD) joints")


@pytest.mark.parametrize("name", ["tree_floating", "talos"])
def test_independent_of_the_base_position(name):
    """Both algorithms run in floating-base coordinates, so moving the base
    1 km away changes nothing, to the bit."""
    model = system(name).model
    for qp, vp, q, v, a, tau, fe in system(name).states(2, seed=4):
        far = q.copy()
        far[:3] += (1e3, -2e3, 5e2)
        np.testing.assert_array_equal(fb_fd(model, far, v, tau[6:], f_ext=fe), fb_fd(model, q, v, tau[6:], f_ext=fe))
        for x, y in zip(fb_id(model, far, v, a[6:], f_ext=fe), fb_id(model, q, v, a[6:], f_ext=fe)):
            np.testing.assert_array_equal(x, y)


@pytest.mark.parametrize("name", ["tree_floating_armature", "solo12"])
def test_gravity_only_shifts_the_base_acceleration(name):
    """Without external forces, q̈ of the joints does not depend on gravity
    and the base acceleration shifts by exactly ᵇa_g = [0; R_bᵀ g] (notes,
    invariant 7)."""
    model = system(name).model
    for qp, vp, q, v, a, tau, fe in system(name).states(2, seed=5):
        Rb = mb.forward_kinematics(model, q)[1][:3, :3]
        ag = np.r_[np.zeros(3), Rb.T @ model.gravity]
        g = fb_fd(model, q, v, tau[6:]).copy()
        z = fb_fd(model, q, v, tau[6:], gravity=False)
        assert_rel(g[6:], z[6:], rtol=1e-10)
        assert_rel(g[:6], z[:6] + ag, rtol=1e-10)
        a0g, tg = fb_id(model, q, v, a[6:])
        a0z, tz = fb_id(model, q, v, a[6:], gravity=False)
        assert_rel(tg, tz, rtol=1e-10)
        assert_rel(a0g, a0z + ag, rtol=1e-10)


def test_armature_on_the_free_joint():
    """A rotor inertia on the base coordinates is not moved by gravity;
    both algorithms honour it exactly like aba and rnea."""
    b = random_tree(61, n=8, floating=True)
    b._bodies["base"].armature = np.array([0.3, 0.2, 0.1, 1.0, 2.0, 3.0])
    model = b.build()
    rng = np.random.default_rng(6)
    q, v = model.random_configuration(seed=6), rng.normal(size=model.nv)
    tau, a = rng.normal(size=model.nv - 6), rng.normal(size=model.nv - 6)
    qdd = fb_fd(model, q, v, tau)
    assert_rel(qdd, mb.aba(model, q, v, np.r_[np.zeros(6), tau]), what="FB-ABA with base armature")
    a0, tj = fb_id(model, q, v, a)
    assert_rel(mb.rnea(model, q, v, np.r_[a0, a]), np.r_[np.zeros(6), tj], what="IDfb with base armature")


def test_batch_and_data():
    s = system("talos")
    model = s.model
    states = list(s.states(3, seed=7))
    Q, V, A, T, FE = (np.array([x[k] for x in states]) for k in range(2, 7))
    qdd = fb_fd(model, Q, V, T[:, 6:], f_ext=FE)
    a0, tj = fb_id(model, Q, V, A[:, 6:], f_ext=FE)
    assert qdd.shape == (3, model.nv) and a0.shape == (3, 6) and tj.shape == (3, model.nv - 6)
    data = mb.Data(model)
    for b in range(3):
        one = fb_fd(model, Q[b], V[b], T[b, 6:], f_ext=FE[b], data=data)
        assert one is data.ddq
        assert_rel(qdd[b], one, rtol=1e-12)
        x, y = fb_id(model, Q[b], V[b], A[b, 6:], f_ext=FE[b], data=data)
        assert_rel(a0[b], x, rtol=1e-12)
        assert_rel(tj[b], y, rtol=1e-12)


@pytest.mark.parametrize("fast", [False, True], ids=["checked", "data_fast_path"])
def test_not_a_floating_base_model(fast):
    for model in (system("tree_fixed").model, mb.load_urdf(robot_path("ur5"))):
        q, v = model.neutral(), np.zeros(model.nv)
        data = mb.Data(model) if fast else None
        with pytest.raises(mb.ModelError, match="joint 1 must be a free joint"):
            fb_fd(model, q, v, np.zeros(model.nv), data=data)
        with pytest.raises(mb.ModelError, match="joint 1 must be a free joint"):
            fb_id(model, q, v, np.zeros(model.nv - 6), data=data)
    b = random_tree(62, n=3, floating=True)
    b.add_body("other", "world", "revolute", axis=(0, 0, 1), mass=1.0, com=(0, 0, 0), inertia=np.eye(3))
    model = b.build()
    data = mb.Data(model) if fast else None
    for args in ((np.zeros(model.nv - 6),), (np.zeros(model.nv),)):
        with pytest.raises(mb.ModelError, match="'other' is attached to the world"):
            fb_fd(model, model.neutral(), np.zeros(model.nv), *args, data=data)
    with pytest.raises(mb.ModelError, match="'other' is attached to the world"):
        fb_id(model, model.neutral(), np.zeros(model.nv), np.zeros(model.nv - 6), data=data)


def test_full_and_joint_tau_on_the_fast_path():
    model = system("solo12").model
    data = mb.Data(model)
    for qp, vp, q, v, a, tau, fe in system("solo12").states(2, seed=8):
        full = fb_fd(model, q, v, tau, data=data).copy()
        assert_rel(full, mb.aba(model, q, v, tau), what="(nv,) tau")
        joints = fb_fd(model, q, v, tau[6:].copy(), data=data).copy()
        assert_rel(joints, mb.aba(model, q, v, np.r_[np.zeros(6), tau[6:]]), what="(nv-6,) tau")
        a0, tj = fb_id(model, q, v, a[6:].copy(), data=data)
        assert_rel(mb.rnea(model, q, v, np.r_[a0, a[6:]]), np.r_[np.zeros(6), tj])


@pytest.mark.parametrize("fast", [False, True], ids=["checked", "data_fast_path"])
def test_bad_input(fast):
    model = system("tree_floating").model
    q, v = model.neutral(), np.zeros(model.nv)
    data = mb.Data(model) if fast else None

    def fb_fd(*args, **kw):
        return _fb_fd(*args, data=data, **kw)

    def fb_id(*args, **kw):
        return _fb_id(*args, data=data, **kw)

    with pytest.raises(mb.InputError, match=r"tau has shape \(5,\), expected"):
        fb_fd(model, q, v, np.zeros(5))
    with pytest.raises(mb.InputError, match="qdd_joints has shape"):
        fb_id(model, q, v, np.zeros(model.nv))
    with pytest.raises(mb.InputError, match="qdd_joints has shape"):
        fb_id(model, np.array([q, q]), np.array([v, v]), np.zeros((3, model.nv - 6)))
    bad = np.zeros(model.nv - 6)
    bad[2] = np.nan
    with pytest.raises(mb.InputError, match="tau has a non-finite entry at index 2"):
        fb_fd(model, q, v, bad)
    with pytest.raises(mb.InputError, match="qdd_joints has a non-finite entry at index 2"):
        fb_id(model, q, v, bad)
    qb = q.copy()
    qb[3] = 2.0  # not a unit quaternion
    with pytest.raises(mb.InputError, match="quaternion"):
        fb_id(model, qb, v, np.zeros(model.nv - 6))
    with pytest.raises(mb.InputError, match="v has shape"):
        fb_fd(model, q, v[:-1], np.zeros(model.nv - 6))
    with pytest.raises(mb.InputError, match="f_ext"):
        fb_id(model, q, v, np.zeros(model.nv - 6), f_ext=np.full((model.nbodies, 6), np.inf))
    vb = v.copy()
    vb[7] = np.nan
    with pytest.raises(mb.InputError, match="v has a non-finite entry at index 7"):
        fb_fd(model, q, vb, np.zeros(model.nv - 6))
