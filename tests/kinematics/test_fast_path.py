"""The Data fast paths (direct compiled entry points) agree with the
general path for every kind of input, and reject what they must."""
import numpy as np
import pytest

import multibody as mb
from multibody.errors import InputError
from oracles import random_tree


@pytest.fixture(scope="module")
def model():
    return random_tree(41, n=8, floating=True).build()


def test_fast_path_equals_general_path_for_any_input_layout(model):
    data = mb.Data(model)
    q = model.random_configuration(seed=0)
    expect_fk = mb.forward_kinematics(model, q).copy()
    expect_J = mb.jacobian(model, q, "b6", "local_world_aligned").copy()
    strided = np.zeros(2 * model.nq)
    strided[::2] = q
    for qq in (q, strided[::2], list(q), tuple(q)):
        np.testing.assert_array_equal(mb.forward_kinematics(model, qq, data), expect_fk)
        np.testing.assert_array_equal(mb.jacobian(model, qq, "b6", "local_world_aligned", data=data), expect_J)
    qi = np.round(q).astype(np.int64)  # integer arrays take the general path (converted), never reinterpreted
    qi[3:7] = [1, 0, 0, 0]
    np.testing.assert_array_equal(mb.forward_kinematics(model, qi, data),
                                  mb.forward_kinematics(model, qi.astype(float)))


def test_fast_path_rejects_bad_input(model):
    data = mb.Data(model)
    q = model.random_configuration(seed=1)
    with pytest.raises(InputError, match="shape"):
        mb.forward_kinematics(model, q[:-1], data)
    bad = q.copy()
    bad[-1] = np.inf
    with pytest.raises(InputError, match=f"index {model.nq - 1}"):
        mb.forward_kinematics(model, bad, data)
    with pytest.raises(InputError, match=f"index {model.nq - 1}"):
        mb.jacobian(model, bad, "b2", data=data)
