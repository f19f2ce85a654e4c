"""Bad input gets a clear error (InputError naming the array and its
expected shape, or the offending index); a singular articulated inertia
(massless subtree) gets a SimulationError naming the body — never NaN."""
import re

import numpy as np
import pinocchio as pin
import pytest

import multibody as mb
from multibody.dynamics import InertiaFactor
from multibody.errors import InputError, MultibodyError, SimulationError
from oracles import random_tree, to_pinocchio
from .helpers import assert_rel


@pytest.fixture(scope="module")
def model():
    return random_tree(51, n=5, floating=True, joints=("revolute", "spherical", "prismatic")).build()


@pytest.fixture(scope="module")
def state(model):
    rng = np.random.default_rng(0)
    return model.random_configuration(seed=1), rng.normal(size=model.nv), rng.normal(size=model.nv)


def _calls(model, q, v, x, data=None):
    """Every state-taking entry point; x is a (or tau)."""
    return {
        "rnea": lambda: mb.rnea(model, q, v, x, data=data),
        "aba": lambda: mb.aba(model, q, v, x, data=data),
        "forward_dynamics crba": lambda: mb.forward_dynamics(model, q, v, x, method="crba", data=data),
    }


@pytest.mark.parametrize("use_data", [False, True], ids=["alloc", "data"])
def test_wrong_shapes(model, state, use_data):
    q, v, a = state
    data = mb.Data(model) if use_data else None
    nq, nv = model.nq, model.nv
    cases = [
        ("q", q[:-1], v, a, f"q has shape ({nq - 1},), expected ({nq},)"),
        ("v", q, v[:-1], a, f"v has shape ({nv - 1},), expected ({nv},)"),
        ("x", q, v, np.r_[a, 0.0], None),
        ("q", q.reshape(1, 1, -1), v, a, f"q has shape (1, 1, {nq})"),
        ("v", q, np.tile(v, (2, 1)), a, "v has shape (2, "),  # batched v with a single q
    ]
    for which, qq, vv, xx, msg in cases:
        for name, call in _calls(model, qq, vv, xx, data).items():
            with pytest.raises(InputError) as err:
                call()
            text = str(err.value)
            if msg:
                assert msg in text, (name, text)
            else:  # the third argument is named "a" by rnea and "tau" by the forward dynamics
                arg = "a" if name == "rnea" else "tau"
                assert f"{arg} has shape ({nv + 1},), expected ({nv},)" in text, (name, text)
    for fn in (lambda: mb.bias_forces(model, q, v[:-1]), lambda: mb.gravity_forces(model, q[:-2]),
               lambda: mb.crba(model, q[:-1]), lambda: mb.inverse_inertia(model, np.r_[q, 0.0])):
        with pytest.raises(InputError, match="shape"):
            fn()


def test_wrong_external_force_shapes(model, state):
    q, v, a = state
    nb = model.nbodies
    for bad in (np.zeros((nb - 1, 6)), np.zeros((nb, 3)), np.zeros(6), np.zeros((2, nb, 6))):
        for fn in (mb.rnea, mb.aba):
            with pytest.raises(InputError, match=re.escape(f"f_ext has shape {bad.shape}, expected ({nb}, 6)")):
                fn(model, q, v, a, f_ext=bad)
        with pytest.raises(InputError, match="f_ext has shape"):
            mb.forward_dynamics(model, q, v, a, f_ext=bad, method="crba")
    # a batch of 3 states with f_ext for 2
    Q, V = np.tile(q, (3, 1)), np.tile(v, (3, 1))
    with pytest.raises(InputError, match=re.escape(f"expected ({nb}, 6) or (3, {nb}, 6)")):
        mb.rnea(model, Q, V, V, f_ext=np.zeros((2, nb, 6)))
    with pytest.raises(InputError, match="f_ext has a non-finite entry"):
        mb.aba(model, q, v, a, f_ext=np.full((nb, 6), np.nan))


@pytest.mark.parametrize("use_data", [False, True], ids=["alloc", "data"])
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_state(model, state, use_data, bad):
    q, v, a = state
    data = mb.Data(model) if use_data else None
    for arg, k in (("q", 1), ("v", model.nv - 1), ("x", 2)):
        qq, vv, xx = q.copy(), v.copy(), a.copy()
        {"q": qq, "v": vv, "x": xx}[arg][k] = bad
        for name, call in _calls(model, qq, vv, xx, data).items():
            label = arg if arg != "x" else ("a" if name == "rnea" else "tau")
            with pytest.raises(InputError, match=re.escape(f"{label} has a non-finite entry at index {k}")):
                call()
    qq = q.copy()
    qq[0] = bad
    for fn in (mb.crba, mb.gravity_forces, mb.inverse_inertia):
        with pytest.raises(InputError, match="q has a non-finite entry at index 0"):
            fn(model, qq)
    # in a batch, the error names the state and the index
    Q = np.tile(q, (3, 1))
    Q[2, 1] = bad
    with pytest.raises(InputError, match=r"q(\[2\] has a non-finite entry at index 1"
                                         r"| has a non-finite entry at index \(2, 1\))"):
        mb.aba(model, Q, np.tile(v, (3, 1)), np.tile(a, (3, 1)))


@pytest.mark.parametrize("use_data", [False, True], ids=["alloc", "data"])
def test_quaternion_norm(model, state, use_data):
    q, v, a = state
    data = mb.Data(model) if use_data else None
    s = model.joints[1].q_slice.start + 3  # the free joint's quaternion
    bad = q.copy()
    bad[s:s + 4] *= 1.001  # |q|² − 1 ≈ 2e-3, beyond the tolerance
    for name, call in _calls(model, bad, v, a, data).items():
        with pytest.raises(InputError, match="quaternion .* not unit norm"):
            call()
    for fn in (mb.crba, mb.gravity_forces):
        with pytest.raises(InputError, match="quaternion"):
            fn(model, bad)
    ok = q.copy()
    ok[s:s + 4] *= 1 + 1e-9  # within tolerance: accepted
    for call in _calls(model, ok, v, a, data).values():
        assert np.isfinite(call()).all()


def test_unknown_method(model, state):
    q, v, a = state
    with pytest.raises(InputError, match="unknown forward dynamics method 'cholesky'"):
        mb.forward_dynamics(model, q, v, a, method="cholesky")


def test_other_shapes(model, state):
    q, v, a = state
    with pytest.raises(InputError, match=re.escape(f"expected ({model.nv}, {model.nv})")):
        InertiaFactor(model, np.eye(model.nv - 1))
    with pytest.raises(InputError, match=re.escape(f"J has shape (6, {model.nv - 1}), expected (m, {model.nv})")):
        mb.operational_space_inverse_inertia(model, q, np.zeros((6, model.nv - 1)))
    fac = InertiaFactor(model, mb.crba(model, q))
    with pytest.raises(InputError, match="b has shape"):
        fac.solve(np.zeros(model.nv + 1))


def test_inertia_factor_multiply_checks_shapes(model, state):
    q, *_ = state
    H = mb.crba(model, q)
    with pytest.raises(InputError, match="x has shape"):
        InertiaFactor(model, H).multiply(np.ones(model.nv + 3), H)


def test_non_positive_definite_matrix_is_rejected(model, state):
    q, *_ = state
    H = mb.crba(model, q)
    H[-1, -1] = -1.0
    with pytest.raises(SimulationError, match=f"not positive definite at coordinate {model.nv - 1}") as err:
        InertiaFactor(model, H)
    assert model.joints[-1].name in str(err.value)


# ------------------------------------------------------------- massless subtree
def _massless_leaf(armature=None):
    b = mb.ModelBuilder("massless_leaf")
    b.add_body("arm", "world", "revolute", axis=(0, 1, 0), mass=2.0, com=(0.3, 0, 0),
               inertia=np.diag([0.01, 0.05, 0.05]))
    b.add_body("ghost", "arm", "revolute", placement=(np.eye(3), (0.6, 0, 0)), axis=(0, 0, 1), armature=armature)
    return b.build()


@pytest.mark.parametrize("path", ["single", "data", "batch"])
def test_massless_leaf_raises_simulation_error(path):
    model = _massless_leaf()
    q, v, tau = np.array([0.3, -0.2]), np.array([0.5, 1.0]), np.array([1.0, 0.0])
    with pytest.raises(SimulationError, match="'ghost'"):
        if path == "single":
            mb.aba(model, q, v, tau)
        elif path == "data":
            mb.aba(model, q, v, tau, data=mb.Data(model))
        else:
            mb.aba(model, np.tile(q, (3, 1)), np.tile(v, (3, 1)), np.tile(tau, (3, 1)))
    with pytest.raises(SimulationError, match="ghost"):  # the singular H: LᵀDL names the joint
        mb.inverse_inertia(model, q)


def test_massless_leaf_forward_dynamics_crba_raises():
    model = _massless_leaf()
    q, v, tau = np.array([0.3, -0.2]), np.array([0.5, 1.0]), np.array([1.0, 0.0])
    for qq, vv, tt in ((q, v, tau), (np.tile(q, (2, 1)), np.tile(v, (2, 1)), np.tile(tau, (2, 1)))):
        with pytest.raises(MultibodyError, match="not positive definite"):
            mb.forward_dynamics(model, qq, vv, tt, method="crba")


def test_massless_leaf_forward_dynamics_crba_error_is_consistent_with_aba():
    model = _massless_leaf()
    q, v, tau = np.array([0.3, -0.2]), np.array([0.5, 1.0]), np.array([1.0, 0.0])
    with pytest.raises(SimulationError, match="ghost"):
        mb.forward_dynamics(model, q, v, tau, method="crba")


def test_massless_leaf_with_armature_is_regular():
    """A rotor inertia on the massless joint makes D = armature > 0: the
    dynamics are regular and agree with Pinocchio (same armature; two
    revolute joints, so q and v need no conversion)."""
    model = _massless_leaf(armature=0.02)
    pm = to_pinocchio(model)
    pm.armature = np.asarray(model.armature, dtype=float).copy()
    pd = pm.createData()
    q, v, tau = np.array([0.3, -0.2]), np.array([0.5, 1.0]), np.array([1.0, 0.3])
    assert_rel(mb.aba(model, q, v, tau), pin.aba(pm, pd, q, v, tau), what="aba")
    assert_rel(mb.forward_dynamics(model, q, v, tau, method="crba"), pin.aba(pm, pd, q, v, tau), what="fd crba")


def test_data_of_another_model_is_rejected():
    """A Data workspace sized for another model would overflow the kernels:
    every entry point refuses it instead."""
    from multibody.errors import InputError
    from oracles import random_tree
    big = random_tree(1, n=12, floating=True).build()
    small = random_tree(2, n=2, floating=False).build()
    q = big.random_configuration(seed=0)
    v = np.ones(big.nv)
    foreign = mb.Data(small)
    for call in (lambda: mb.rnea(big, q, v, v, data=foreign), lambda: mb.aba(big, q, v, v, data=foreign),
                 lambda: mb.crba(big, q, foreign), lambda: mb.forward_kinematics(big, q, foreign),
                 lambda: mb.jacobian(big, q, "b3", data=foreign),
                 lambda: mb.forward_dynamics(big, q, v, v, method="crba", data=foreign),
                 lambda: mb.inverse_inertia(big, q, foreign)):
        with pytest.raises(InputError, match="data was created for another model"):
            call()
