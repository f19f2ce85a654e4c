"""The workspace handle layout (model/data.py ``_LAYOUT``) is written once in
Python and once more, as compile-time shapes, in ``handle_workspace``:
these tests check that both agree, array by array, for a fixed-base and a
floating-base model (nq != nv) and a model whose table is wider than
N_COL (Sueda's product-of-exponentials joints), before and after the lazy
matrices exist."""
import numpy as np
import pytest
from numba import njit

import multibody as mb
from multibody._compiled import JIT
from multibody.model import data as D
from multibody.model.joints import N_COL
from oracles import robot_path


@pytest.fixture(scope="module", params=[("ur5", False), ("talos", True), ("euler", None)],
                ids=["ur5", "talos", "wide"])
def model(request):
    name, floating = request.param
    if floating is None:
        b = mb.ModelBuilder()
        b.add_body("a", joint="euler", mass=1.0, inertia=np.eye(3))
        b.add_body("b", parent="a", joint="composite", parts=[("revolute", (1, 0, 0))] * 4, mass=1.0,
                   inertia=np.eye(3))
        return b.build()
    return mb.load_urdf(robot_path(name), floating_base=floating)


def test_layout_is_the_single_list_of_slots():
    assert D._ARRAYS == tuple(name for name, _ in D._LAYOUT)
    slots = [getattr(D, "SLOT_" + name.upper()) for name in D._ARRAYS]
    assert slots == list(range(3, 3 + len(D._ARRAYS)))  # one slot each, in the order of the list
    assert D.OWNER == 3 + len(D._ARRAYS) and D.NCOL == D.OWNER + 1 and D.N_SLOTS == D.NCOL + 1
    assert D.Workspace._fields == ("nb", "nq", "nv") + D._ARRAYS


def _expected(model, data, name):
    if name == "tree":
        return model._tree
    if name == "lam":
        return model.dof_parent
    return data.allocate(name) if name in D._LAZY else getattr(data, name)


def test_data_arrays_follow_the_layout(model):
    data = mb.Data(model)
    ws = data.arrays()
    assert (ws.nb, ws.nq, ws.nv) == (model.nbodies, model.nq, model.nv)
    for name in D._LAZY:  # not allocated yet: empty, slot 0
        assert getattr(ws, name).size == 0 and data._slots[D._SLOT[name]] == 0
    for name in D._ARRAYS:
        x = _expected(model, data, name)
        shape = D._SHAPE[name](model.nbodies, model.nv)
        if name == "tree":  # the width is the model's (slot NCOL)
            shape = (shape[0], data._slots[D.NCOL])
            assert shape[1] > N_COL if model.name == "model" else shape[1] == N_COL
        assert x.shape == shape, name
        assert x.flags.c_contiguous and data._slots[D._SLOT[name]] == x.ctypes.data, name
    ws = data.arrays()
    for name in D._ARRAYS:
        assert getattr(ws, name) is _expected(model, data, name), name
    np.testing.assert_array_equal(data.poses, np.broadcast_to(np.eye(4), data.poses.shape))  # identities


@njit
def _views(handle):
    return D.handle_workspace(handle)


@pytest.mark.skipif(not JIT, reason="handle_workspace rebuilds arrays from addresses: compiled code only")
def test_handle_workspace_gives_the_data_arrays(model):
    data = mb.Data(model)
    for name in D._LAZY:
        data.allocate(name)
    got = _views(data.handle)
    assert (got.nb, got.nq, got.nv) == (model.nbodies, model.nq, model.nv)
    for name in D._ARRAYS:
        x, ref = getattr(got, name), None
        ref = _expected(model, data, name)
        assert x.shape == ref.shape and x.dtype == ref.dtype, name
        assert x.ctypes.data == ref.ctypes.data, name  # the same memory, not a copy
