"""The inertia-parameter regressor (Featherstone §9.7; Atkeson et al.):
``Y π + armature·a = rnea``, Y against Pinocchio's
computeJointTorqueRegressor (with fixed-joint bodies mapped onto
Pinocchio's merged joint parameters), the parameters against
Pinocchio's Inertia.toDynamicParameters, the dynamic-equivalence
transformations of Table 9.7 as null directions of Y, batches, bad input."""
import numpy as np
import pinocchio as pin
import pytest

import multibody as mb
from multibody.dynamics import inertial_parameters, regressor
from multibody.dynamics import regressor as _regressor
from multibody.model.joints import C_AX1, C_P, C_R
from .helpers import assert_rel, system

NAMES = ["tree_floating", "tree_fixed", "tree_floating_armature", "tree_fixed_bodies", "talos", "solo12",
         "talos_fixed_links"]
N = 3


@pytest.fixture(scope="module", params=NAMES)
def sys_(request):
    return system(request.param)


def _param_map(M):
    """The 10x10 linear map taking a body's parameters to the parameters of
    the same inertia expressed in a frame in which the body frame has pose
    M (Pinocchio's SE3.act on Inertia, linear in π)."""
    base = pin.Inertia(2.0, np.array([0.1, -0.2, 0.3]), np.diag([1.0, 2.0, 3.0])).toDynamicParameters()
    Ms = pin.SE3(M[:3, :3].copy(), M[:3, 3].copy())
    f0 = Ms.act(pin.Inertia.FromDynamicParameters(base)).toDynamicParameters()
    T = np.empty((10, 10))
    for k in range(10):
        e = base.copy()
        e[k] += 1.0
        T[:, k] = Ms.act(pin.Inertia.FromDynamicParameters(e)).toDynamicParameters() - f0
    return T


def _pin_columns(s, Yp):
    """Pinocchio's regressor (10 columns per joint) mapped to our columns (10
    per body): a body merged into joint J through pose M has ``Y_J T(M)``."""
    Yp = s.v_from_pin(Yp)
    out = np.empty((Yp.shape[0], 10 * (s.model.nbodies - 1)))
    for i in range(1, s.model.nbodies):
        jid, M = s.hosts[i]
        block = Yp[:, 10 * (jid - 1):10 * jid]
        out[:, 10 * (i - 1):10 * i] = block if np.array_equal(M, np.eye(4)) else block @ _param_map(M)
    return out


def test_parameters_against_pinocchio():
    for name in ("tree_floating", "tree_fixed", "talos", "solo12"):
        s = system(name)
        pi = inertial_parameters(s.model)
        assert pi.shape == (s.model.nbodies - 1, 10)
        for i in range(1, s.model.nbodies):
            jid = s.pm.getJointId(s.model.joint_names[i])
            np.testing.assert_allclose(pi[i - 1], s.pm.inertias[jid].toDynamicParameters(), atol=1e-12)


def test_regressor_times_parameters_is_rnea(sys_):
    model = sys_.model
    pi = inertial_parameters(model).ravel()
    for qp, vp, q, v, a, tau, fe in sys_.states(N, seed=1):
        Y = regressor(model, q, v, a)
        assert Y.shape == (model.nv, pi.size)
        assert_rel(Y @ pi + model.armature * a, mb.rnea(model, q, v, a), what="Y pi = rnea")
        assert_rel(Y @ pi + model.armature * a, sys_.rnea(qp, vp, a), what="Y pi = Pinocchio rnea")
        Y0 = regressor(model, q, v, a, gravity=False)
        assert_rel(Y0 @ pi + model.armature * a, mb.rnea(model, q, v, a, gravity=False), what="no gravity")


def test_regressor_against_pinocchio(sys_):
    model, pm = sys_.model, sys_.pm
    pd = pm.createData()
    for qp, vp, q, v, a, tau, fe in sys_.states(N, seed=2):
        Yp = pin.computeJointTorqueRegressor(pm, pd, qp, vp, sys_.v_to_pin(a))
        assert_rel(regressor(model, q, v, a), _pin_columns(sys_, Yp), what="Y vs computeJointTorqueRegressor")


def _point_masses(masses, points):
    """Parameters of point masses at ``points`` (rows) about the frame origin."""
    pi = np.zeros(10)
    for m, x in zip(masses, points):
        I = m * (x @ x * np.eye(3) - np.outer(x, x))
        pi += np.r_[m, m * x, I[0, 0], I[0, 1], I[1, 1], I[0, 2], I[1, 2], I[2, 2]]
    return pi


def _rot_params(I):
    return np.r_[0.0, 0.0, 0.0, 0.0, I[0, 0], I[0, 1], I[1, 1], I[0, 2], I[1, 2], I[2, 2]]


@pytest.mark.parametrize("jtype", ["spherical", "revolute", "prismatic"])
def test_dynamic_equivalence_table_9_7(jtype):
    """Adding I_Δ to the parent and subtracting it from the child leaves the
    equation of motion unchanged (Eq. 9.30, Table 9.7): a point mass at a
    spherical joint's centre, particles on a revolute joint's axis, a pure
    rotational inertia across a prismatic joint. So ``Y δπ = 0``."""
    s = system("tree_floating")
    model = s.model
    i = next(j.child for j in model.joints[1:] if j.type == jtype and j.parent != 0)
    p = model.joints[i].parent
    RT, pT = model.tree[i, C_R:C_R + 9].reshape(3, 3), model.tree[i, C_P:C_P + 3]
    axis = model.tree[i, C_AX1:C_AX1 + 3]
    rng = np.random.default_rng(3)
    if jtype == "spherical":
        m = 0.7
        child, parent = _point_masses([m], [np.zeros(3)]), _point_masses([m], [pT])
    elif jtype == "revolute":
        ms, ss = [0.4, 0.9], [0.3, -0.5]
        child = _point_masses(ms, [sk * axis for sk in ss])
        parent = _point_masses(ms, [pT + sk * RT @ axis for sk in ss])
    else:
        X = rng.normal(size=(3, 3))
        Id = X + X.T
        child, parent = _rot_params(Id), _rot_params(RT @ Id @ RT.T)
    delta = np.zeros((model.nbodies - 1, 10))
    delta[i - 1] -= child
    delta[p - 1] += parent
    pi = inertial_parameters(model).ravel()
    for qp, vp, q, v, a, tau, fe in s.states(N, seed=4):
        Y = regressor(model, q, v, a)
        assert_rel(Y @ delta.ravel(), np.zeros(model.nv), rtol=1e-11, what="Y δπ")
        # a non-equivalent change of the same size does change the dynamics
        off = delta.copy()
        off[i - 1] -= _point_masses([1.0], [np.array([0.3, 0.2, 0.1])])
        assert np.abs(Y @ off.ravel()).max() > 1e-3 * np.abs(Y @ pi).max()


def test_batch_and_data():
    s = system("talos")
    model = s.model
    states = list(s.states(3, seed=5))
    Q, V, A = (np.array([x[k] for x in states]) for k in (2, 3, 4))
    Y = regressor(model, Q, V, A)
    data = mb.Data(model)
    for b in range(3):
        assert_rel(Y[b], regressor(model, Q[b], V[b], A[b], data=data), rtol=1e-12)


@pytest.mark.parametrize("fast", [False, True], ids=["checked", "data_fast_path"])
def test_bad_input(fast):
    model = system("tree_fixed").model
    q, z = model.neutral(), np.zeros(model.nv)
    data = mb.Data(model) if fast else None

    def regressor(*args, **kw):
        return _regressor(*args, data=data, **kw)

    with pytest.raises(mb.InputError, match="a has shape"):
        regressor(model, q, z, z[:-1])
    with pytest.raises(mb.InputError, match="v has shape"):
        regressor(model, np.array([q, q]), np.zeros((3, model.nv)), np.zeros((2, model.nv)))
    bad = z.copy()
    bad[1] = np.nan
    with pytest.raises(mb.InputError, match="a has a non-finite entry at index 1"):
        regressor(model, q, z, bad)
    with pytest.raises(mb.InputError, match="q has shape"):
        regressor(model, z, z, z)
    qb = q.copy()
    qb[-1] = np.nan
    with pytest.raises(mb.InputError, match=f"q has a non-finite entry at index {model.nq - 1}"):
        regressor(model, qb, z, z)
