"""A batch (leading axis, one parallel kernel call) gives exactly the
single-state results, for every dynamics function, with external forces
given per state (B, nbodies, 6) or once for all states (nbodies, 6)."""
import numpy as np
import pytest

import multibody as mb
from .helpers import robot, tree_with_fixed_bodies

B = 5


@pytest.fixture(scope="module", params=["solo12", "tree_floating_armature", "tree_fixed", "fixed_bodies"])
def case(request):
    if request.param == "fixed_bodies":
        model = tree_with_fixed_bodies(33).build(merge_fixed=False)
    else:
        model = robot(request.param).model
    rng = np.random.default_rng(7)
    Q = model.random_configuration(seed=8, size=B)
    V, A, T = (rng.normal(size=(B, model.nv)) for _ in range(3))
    FE = rng.normal(size=(B, model.nbodies, 6))
    return model, Q, V, A, T, FE


def _assert_each_equals_single(batch, single_fn):
    assert batch.shape[0] == B
    for b in range(B):
        np.testing.assert_array_equal(batch[b], single_fn(b))


def test_rnea_batch(case):
    model, Q, V, A, T, FE = case
    _assert_each_equals_single(mb.rnea(model, Q, V, A), lambda b: mb.rnea(model, Q[b], V[b], A[b]))
    _assert_each_equals_single(mb.rnea(model, Q, V, A, gravity=False), lambda b: mb.rnea(model, Q[b], V[b], A[b], gravity=False))
    _assert_each_equals_single(mb.rnea(model, Q, V, A, f_ext=FE), lambda b: mb.rnea(model, Q[b], V[b], A[b], f_ext=FE[b]))
    _assert_each_equals_single(mb.rnea(model, Q, V, A, f_ext=FE[0]), lambda b: mb.rnea(model, Q[b], V[b], A[b], f_ext=FE[0]))
    _assert_each_equals_single(mb.bias_forces(model, Q, V), lambda b: mb.bias_forces(model, Q[b], V[b]))
    _assert_each_equals_single(mb.bias_forces(model, Q, V, f_ext=FE), lambda b: mb.bias_forces(model, Q[b], V[b], f_ext=FE[b]))
    _assert_each_equals_single(mb.gravity_forces(model, Q), lambda b: mb.gravity_forces(model, Q[b]))


def test_crba_and_inverse_batch(case):
    model, Q, *_ = case
    _assert_each_equals_single(mb.crba(model, Q), lambda b: mb.crba(model, Q[b]))
    _assert_each_equals_single(mb.inverse_inertia(model, Q), lambda b: mb.inverse_inertia(model, Q[b]))


def test_aba_batch(case):
    model, Q, V, A, T, FE = case
    _assert_each_equals_single(mb.aba(model, Q, V, T), lambda b: mb.aba(model, Q[b], V[b], T[b]))
    _assert_each_equals_single(mb.aba(model, Q, V, T, gravity=False), lambda b: mb.aba(model, Q[b], V[b], T[b], gravity=False))
    _assert_each_equals_single(mb.aba(model, Q, V, T, f_ext=FE), lambda b: mb.aba(model, Q[b], V[b], T[b], f_ext=FE[b]))
    _assert_each_equals_single(mb.aba(model, Q, V, T, f_ext=FE[1]), lambda b: mb.aba(model, Q[b], V[b], T[b], f_ext=FE[1]))
    _assert_each_equals_single(mb.forward_dynamics(model, Q, V, T), lambda b: mb.forward_dynamics(model, Q[b], V[b], T[b]))


def test_forward_dynamics_crba_batch(case):
    model, Q, V, A, T, FE = case
    fd = lambda *a, **k: mb.forward_dynamics(*a, method="crba", **k)  # noqa: E731
    _assert_each_equals_single(fd(model, Q, V, T), lambda b: fd(model, Q[b], V[b], T[b]))
    _assert_each_equals_single(fd(model, Q, V, T, gravity=False), lambda b: fd(model, Q[b], V[b], T[b], gravity=False))
    _assert_each_equals_single(fd(model, Q, V, T, f_ext=FE), lambda b: fd(model, Q[b], V[b], T[b], f_ext=FE[b]))
    _assert_each_equals_single(fd(model, Q, V, T, f_ext=FE[2]), lambda b: fd(model, Q[b], V[b], T[b], f_ext=FE[2]))


def test_data_path_equals_allocating_path(case):
    """The Data paths (fast compiled entry points) give the same numbers."""
    model, Q, V, A, T, FE = case
    data = mb.Data(model)
    for b in range(B):
        q, v, a, tau, fe = Q[b], V[b], A[b], T[b], FE[b]
        np.testing.assert_array_equal(mb.rnea(model, q, v, a, data=data), mb.rnea(model, q, v, a))
        np.testing.assert_array_equal(mb.rnea(model, q, v, a, f_ext=fe, data=data), mb.rnea(model, q, v, a, f_ext=fe))
        np.testing.assert_array_equal(mb.aba(model, q, v, tau, data=data), mb.aba(model, q, v, tau))
        np.testing.assert_array_equal(mb.aba(model, q, v, tau, f_ext=fe, data=data),
                                      mb.aba(model, q, v, tau, f_ext=fe))
        np.testing.assert_array_equal(mb.crba(model, q, data=data), mb.crba(model, q))
        np.testing.assert_array_equal(mb.forward_dynamics(model, q, v, tau, method="crba", data=data),
                                      mb.forward_dynamics(model, q, v, tau, method="crba"))
        np.testing.assert_array_equal(mb.bias_forces(model, q, v, data=data), mb.bias_forces(model, q, v))
        np.testing.assert_array_equal(mb.gravity_forces(model, q, data=data), mb.gravity_forces(model, q))


def test_data_results_are_not_clobbered_by_f_ext_of_a_previous_call(case):
    """f_ext given once must not leak into the next call that shares ``data``."""
    model, Q, V, A, T, FE = case
    data = mb.Data(model)
    q, v, a, tau = Q[0], V[0], A[0], T[0]
    mb.rnea(model, q, v, a, f_ext=FE[0], data=data)
    np.testing.assert_array_equal(mb.rnea(model, q, v, a, data=data), mb.rnea(model, q, v, a))
    mb.aba(model, q, v, tau, f_ext=FE[0], data=data)
    np.testing.assert_array_equal(mb.aba(model, q, v, tau, data=data), mb.aba(model, q, v, tau))
    mb.forward_dynamics(model, q, v, tau, f_ext=FE[0], method="crba", data=data)
    np.testing.assert_array_equal(mb.forward_dynamics(model, q, v, tau, method="crba", data=data),
                                  mb.forward_dynamics(model, q, v, tau, method="crba"))
    # the slow (non-float64) path with data, after f_ext
    mb.rnea(model, q, v, a, f_ext=FE[0], data=data)
    np.testing.assert_array_equal(mb.rnea(model, list(q), list(v), list(a), data=data), mb.rnea(model, q, v, a))
