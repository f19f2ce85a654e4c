"""The single-state fast paths (a ``Data`` passed, compiled kernels reached
through ``Data.handle``) compute exactly what the general paths compute,
write into the Data's own arrays, and send every input they cannot take
(wrong dtype, rank, length or strides, foreign Data) to the general path,
which converts it or raises the error naming it — never a wrong answer or
a crash."""
import numpy as np
import pytest

import multibody as mb
from multibody.errors import InputError
from oracles import random_tree


@pytest.fixture(scope="module", params=[False, True], ids=["fixed", "floating"])
def model(request):
    return random_tree(7, n=6, floating=request.param,
                       joints=("revolute", "prismatic", "spherical", "helical", "universal")).build()


@pytest.fixture(scope="module")
def state(model):
    rng = np.random.default_rng(3)
    return model.random_configuration(seed=4), rng.normal(size=model.nv), rng.normal(size=model.nv)


def _calls(model, frame):
    """name -> f(q, v, x, data): every function with a handle fast path."""
    return {
        "forward_kinematics": lambda q, v, x, d: mb.forward_kinematics(model, q, d),
        "jacobian": lambda q, v, x, d: mb.jacobian(model, q, frame, "local_world_aligned", data=d),
        "rnea": lambda q, v, x, d: mb.rnea(model, q, v, x, data=d),
        "crba": lambda q, v, x, d: mb.crba(model, q, d),
        "aba": lambda q, v, x, d: mb.aba(model, q, v, x, data=d),
        "forward_dynamics crba": lambda q, v, x, d: mb.forward_dynamics(model, q, v, x, method="crba", data=d),
        "inverse_inertia": lambda q, v, x, d: mb.inverse_inertia(model, q, d),
    }


def test_fast_equals_general(model, state):
    q, v, x = state
    data = mb.Data(model)
    for name, call in _calls(model, model.body_names[-1]).items():
        general = np.array(call(q, v, x, None))
        fast = call(q, v, x, data)
        np.testing.assert_array_equal(fast, general, err_msg=name)
        # the result lives in the Data (no allocation) and the next call overwrites it
        assert any(np.shares_memory(fast, getattr(data, a)) for a in
                   ("oMi", "frame_J", "tau", "M", "ddq", "Minv")), name


def test_inputs_the_fast_path_cannot_take(model, state):
    """Strided views, integer arrays, lists and batches reach the general
    path and give the same numbers."""
    q, v, x = state
    data = mb.Data(model)
    calls = _calls(model, model.body_names[-1])
    strided = [np.repeat(a, 2)[::2] for a in (q, v, x)]
    assert not strided[0].flags.c_contiguous
    for name, call in calls.items():
        expect = np.array(call(q, v, x, None))
        np.testing.assert_array_equal(call(*strided, data), expect, err_msg=name)
        np.testing.assert_array_equal(call(list(q), list(v), list(x), data), expect, err_msg=name)
        batch = call(np.tile(q, (2, 1)), np.tile(v, (2, 1)), np.tile(x, (2, 1)), data)
        np.testing.assert_allclose(batch[1], expect, rtol=1e-12, atol=1e-12, err_msg=name)
    vi, xi = (np.round(a).astype(np.int64) for a in (v, x))
    for name, call in calls.items():
        np.testing.assert_allclose(call(q, vi, xi, data), call(q, vi.astype(float), xi.astype(float), None),
                                   rtol=1e-12, atol=1e-12, err_msg=name)


def test_integer_configurations():
    model = random_tree(8, n=4, floating=False, joints=("revolute", "prismatic")).build()
    q = np.array([1, -2, 0, 3])
    data = mb.Data(model)
    for name, call in _calls(model, model.body_names[-1]).items():
        got = call(q, q, q, data)
        np.testing.assert_array_equal(got, call(q.astype(float), q.astype(float), q.astype(float), None),
                                      err_msg=name)


def test_bad_lengths_and_values_raise(model, state):
    q, v, x = state
    data = mb.Data(model)
    for name, call in _calls(model, model.body_names[-1]).items():
        with pytest.raises(InputError, match=r"q has shape"):
            call(q[:-1], v, x, data)
        with pytest.raises(InputError, match=r"q has shape"):
            call(np.r_[q, 0.0], v, x, data)
        bad = q.copy()
        bad[-1] = np.inf
        with pytest.raises(InputError, match=rf"q has a non-finite entry at index {model.nq - 1}"):
            call(bad, v, x, data)
        if name in ("rnea", "aba", "forward_dynamics crba"):
            with pytest.raises(InputError, match=r"v has shape"):
                call(q, v[:-1], x, data)
            with pytest.raises(InputError, match=r"has shape"):
                call(q, v, np.r_[x, 1.0], data)
            bad = v.copy()
            bad[2] = np.nan
            with pytest.raises(InputError, match=r"v has a non-finite entry at index 2"):
                call(q, bad, x, data)
            bad = x.copy()
            bad[0] = -np.inf
            with pytest.raises(InputError, match=r"has a non-finite entry at index 0"):
                call(q, v, bad, data)


def test_data_of_another_model_is_refused(model, state):
    """A Data of a different model with the same sizes would give the kernel
    the wrong tree: it is refused, not used."""
    q, v, x = state
    twin = random_tree(7, n=6, floating=model.joints[1].type == "free",
                       joints=("revolute", "prismatic", "spherical", "helical", "universal")).build()
    assert (twin.nq, twin.nv, twin.nbodies) == (model.nq, model.nv, model.nbodies) and twin is not model
    other = mb.Data(twin)
    for name, call in _calls(model, model.body_names[-1]).items():
        with pytest.raises(InputError, match="data was created for another model"):
            call(q, v, x, other)


def test_handles_are_distinct_and_keep_working(model, state):
    q, v, x = state
    d1, d2 = mb.Data(model), mb.Data(model)
    assert d1.handle != d2.handle
    t1 = mb.rnea(model, q, v, x, data=d1).copy()
    t2 = mb.rnea(model, q, 2 * v, x, data=d2)
    np.testing.assert_array_equal(d1.tau, t1)  # d2's call did not write into d1
    assert not np.array_equal(t1, t2)


def test_batches_write_into_out(model, state):
    """``out`` receives a batch's results (and is returned); a wrong
    shape, dtype, layout or a single state with ``out`` is an InputError."""
    q, v, x = state
    Q, V, X = (np.tile(a, (3, 1)) for a in (q, v, x))
    calls = {"rnea": (lambda o: mb.rnea(model, Q, V, X, out=o), (3, model.nv)),
             "aba": (lambda o: mb.aba(model, Q, V, X, out=o), (3, model.nv)),
             "crba": (lambda o: mb.crba(model, Q, out=o), (3, model.nv, model.nv))}
    for name, (call, shape) in calls.items():
        expect = call(None)
        out = np.full(shape, np.nan)
        assert call(out) is out, name
        np.testing.assert_array_equal(out, expect, err_msg=name)
        for bad in (np.empty(shape[:-1] + (shape[-1] + 1,)), np.empty(shape, dtype=np.float32),
                    np.empty(shape[::-1]).T, [[0.0] * shape[-1]] * 3):
            with pytest.raises(InputError, match="out must be a writable C-contiguous float64 array"):
                call(bad)
    data = mb.Data(model)
    for call in (lambda: mb.rnea(model, q, v, x, data=data, out=np.empty((1, model.nv))),
                 lambda: mb.aba(model, q, v, x, out=np.empty(model.nv)),
                 lambda: mb.crba(model, q, data, out=np.empty((model.nv, model.nv)))):
        with pytest.raises(InputError, match="out is for batches"):
            call()


def test_copied_data_gets_its_own_handle(model, state):
    import copy
    import pickle
    q, v, x = state
    d = mb.Data(model)
    tau = mb.rnea(model, q, v, x, data=d).copy()
    for c in (copy.copy(d), copy.deepcopy(d)):
        assert c.handle != d.handle and c.model is model
        np.testing.assert_array_equal(c.tau, tau)
        mb.rnea(model, q, 2 * v, x, data=c)
        np.testing.assert_array_equal(d.tau, tau)  # the copy wrote into its own arrays
    with pytest.raises(TypeError, match="cannot be pickled"):
        pickle.dumps(d)
