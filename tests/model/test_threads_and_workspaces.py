"""Plain calls (no ``data``) use a per-thread cached workspace: fresh
results, thread-safe, no model kept alive; an explicit Data belongs to one
thread and is refused from another (issue 10, items 2 and 6)."""
import gc
import sys
import threading
import weakref

import numpy as np
import pytest

import multibody as mb
from multibody.model.data import workspace


def arm():
    b = mb.ModelBuilder("arm")
    parent = "world"
    for k in range(5):
        b.add_body(f"l{k}", parent, "revolute", np.eye(4) if k == 0 else [[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0.3],
                                                                           [0, 0, 0, 1]],
                   axis=(0, 1, 0) if k % 2 else (0, 0, 1), mass=1.0 + k, com=(0, 0, 0.15),
                   inertia=np.diag([0.02, 0.02, 0.01]))
        parent = f"l{k}"
    return b.build()


def states(m, n, seed=0):
    rng = np.random.default_rng(seed)
    return [(m.random_configuration(seed=seed + k), rng.normal(size=m.nv), rng.normal(size=m.nv)) for k in range(n)]


def test_plain_calls_return_fresh_arrays():
    m = arm()
    (q0, v0, a0), (q1, v1, a1) = states(m, 2)
    for call in (lambda q, v, a: mb.rnea(m, q, v, a), lambda q, v, a: mb.aba(m, q, v, a),
                 lambda q, v, a: mb.crba(m, q), lambda q, v, a: mb.forward_kinematics(m, q),
                 lambda q, v, a: mb.jacobian(m, q, "l4"), lambda q, v, a: mb.frame_pose(m, q, "l4"),
                 lambda q, v, a: mb.inverse_inertia(m, q), lambda q, v, a: mb.forward_dynamics(m, q, v, a, method="crba")):
        r0 = call(q0, v0, a0)
        kept = r0.copy()
        r1 = call(q1, v1, a1)
        assert r0 is not r1 and not np.shares_memory(r0, r1)
        np.testing.assert_array_equal(r0, kept)  # the second call did not overwrite the first result
        assert not np.array_equal(r0, r1)
        assert not np.shares_memory(r1, workspace(m).poses)


def test_plain_calls_equal_explicit_workspace_calls():
    """The cached-workspace path gives bit-identical results to a fresh Data."""
    m = arm()
    for q, v, a in states(m, 3):
        d = mb.Data(m)
        np.testing.assert_array_equal(mb.rnea(m, q, v, a), mb.rnea(m, q, v, a, data=d))
        np.testing.assert_array_equal(mb.aba(m, q, v, a), mb.aba(m, q, v, a, data=d))
        np.testing.assert_array_equal(mb.crba(m, q), mb.crba(m, q, data=d))
        np.testing.assert_array_equal(mb.jacobian(m, q, "l3", "local"), mb.jacobian(m, q, "l3", "local", data=d))
        oMi = mb.forward_kinematics(m, q, data=d)
        np.testing.assert_array_equal(mb.frame_pose(m, q, "l3"), oMi[m.body_id("l3")])


def test_cache_does_not_keep_models_alive():
    m = arm()
    q, v, a = states(m, 1)[0]
    mb.rnea(m, q, v, a)
    mb.crba(m, q)
    ref = weakref.ref(m)
    del m
    gc.collect()
    assert ref() is None


def test_square_buffers_are_allocated_on_first_use():
    """A workspace of a long chain does not pay nv x nv matrices until an algorithm needs them."""
    m = arm()
    d = mb.Data(m)
    assert d._M is None and d._L is None and d._Minv is None
    q, v, a = states(m, 1)[0]
    mb.rnea(m, q, v, a, data=d)
    mb.forward_kinematics(m, q, data=d)
    assert d._M is None
    H = mb.crba(m, q, data=d)
    assert d._M is not None and d._Minv is None and H is d.M
    np.testing.assert_allclose(mb.inverse_inertia(m, q, data=d) @ H, np.eye(m.nv), atol=1e-10)


def _hammer(fn, inputs, expected, errors, n):
    try:
        for k in range(n):
            i = k % len(inputs)
            r = fn(*inputs[i])
            if not np.array_equal(r, expected[i]):
                errors.append(f"wrong result at call {k}")
                return
    except Exception as e:  # reported to the main thread
        errors.append(repr(e))


@pytest.mark.parametrize("which", ["rnea", "aba", "crba", "jacobian", "frame_pose"])
def test_plain_calls_are_thread_safe(which):
    m = arm()
    calls = {"rnea": lambda q, v, a: mb.rnea(m, q, v, a), "aba": lambda q, v, a: mb.aba(m, q, v, a),
             "crba": lambda q, v, a: mb.crba(m, q), "jacobian": lambda q, v, a: mb.jacobian(m, q, "l4"),
             "frame_pose": lambda q, v, a: mb.frame_pose(m, q, "l4")}
    fn = calls[which]
    per_thread = [states(m, 4, seed=10 * t) for t in range(2)]
    expected = [[fn(*s).copy() for s in S] for S in per_thread]
    errors = []
    switch = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible: a shared workspace would show
    threads = [threading.Thread(target=_hammer, args=(fn, per_thread[t], expected[t], errors, 3000))
               for t in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    sys.setswitchinterval(switch)
    assert not errors, errors


def test_explicit_data_is_refused_from_another_thread():
    m = arm()
    q, v, a = states(m, 1)[0]
    d = mb.Data(m)
    tau = mb.rnea(m, q, v, a, data=d).copy()  # this thread owns d now
    seen = []

    def other():
        for call in (lambda: mb.rnea(m, q, v, a, data=d), lambda: mb.crba(m, q, data=d),
                     lambda: mb.forward_kinematics(m, q, data=d), lambda: mb.jacobian(m, q, "l4", data=d),
                     lambda: mb.aba(m, q, v, tau, data=d), lambda: mb.frame_pose(m, q, "l4", data=d),
                     lambda: mb.body_motion(m, q, v, data=d)):
            try:
                call()
                seen.append("accepted")
            except mb.InputError as e:
                seen.append("thread" in str(e))
    t = threading.Thread(target=other)
    t.start()
    t.join()
    assert seen == [True] * 7, seen
    # the owner still computes, and after release() another thread may take it over
    np.testing.assert_array_equal(mb.rnea(m, q, v, a, data=d), tau)
    d.release()
    got = []
    t = threading.Thread(target=lambda: got.append(mb.rnea(m, q, v, a, data=d).copy()))
    t.start()
    t.join()
    np.testing.assert_array_equal(got[0], tau)
    with pytest.raises(mb.InputError, match="thread"):
        mb.rnea(m, q, v, a, data=d)


def test_data_made_in_one_thread_is_used_by_another():
    """The first thread to compute with a Data owns it (a pool of workspaces made up front works)."""
    m = arm()
    q, v, a = states(m, 1)[0]
    datas = [mb.Data(m) for _ in range(2)]
    out = [None, None]

    def work(k):
        out[k] = mb.rnea(m, q, v, a, data=datas[k]).copy()
    threads = [threading.Thread(target=work, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    np.testing.assert_array_equal(out[0], mb.rnea(m, q, v, a))
    np.testing.assert_array_equal(out[1], out[0])
