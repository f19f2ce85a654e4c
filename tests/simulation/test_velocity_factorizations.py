"""The factorizations of the implicit steps' velocity matrix ``M − hD − h²K``
(integrators/_kernels.py) against NumPy's dense solve, on matrices with a
real model's branch pattern, and which one a model gets."""
import numpy as np
import pytest

import multibody as mb
from multibody.integrators import _kernels as K
from multibody.integrators.fused import _root_block

from oracles import branch_pattern, robot_path


def _matrix(lam, block, seed):
    """Diagonally dominant, on the branch pattern, symmetric except within
    the leading ``block`` coordinates."""
    rng = np.random.default_rng(seed)
    n = len(lam)
    P = branch_pattern(lam)
    S = rng.normal(size=(n, n))
    A = np.where(P, S + S.T, 0.0)
    A[:block, :block] += rng.normal(size=(block, block))  # the non-symmetric root block
    A += np.diag(np.abs(A).sum(axis=1) + 1.0)
    return A


@pytest.fixture(scope="module")
def talos():
    return mb.load_urdf(robot_path("talos"), floating_base=True)


def test_block_ldl_solves_like_numpy_on_talos_pattern(talos):
    lam, nb = talos.dof_parent, _root_block(talos)
    assert nb == 6  # the free base is Talos's only Lie-group joint
    A = _matrix(lam, nb, 1)
    assert np.abs(A - A.T).max() > 0.1  # really not symmetric
    b = np.random.default_rng(2).normal(size=len(lam))
    F, piv, x = A.copy(), np.zeros(len(lam), np.int64), b.copy()
    assert K.block_ldl_factor(lam, F, nb, piv)
    K.block_ldl_solve(lam, F, nb, piv, x)
    np.testing.assert_allclose(x, np.linalg.solve(A, b), rtol=1e-12, atol=1e-14)


def test_tree_lu_solves_like_numpy_with_asymmetry_anywhere(talos):
    lam = talos.dof_parent
    A = _matrix(lam, 0, 3)
    P = branch_pattern(lam)
    A += np.where(P, np.random.default_rng(4).normal(size=A.shape), 0.0)  # non-symmetric everywhere
    b = np.random.default_rng(5).normal(size=len(lam))
    F, x = A.copy(), b.copy()
    assert K.tree_lu_factor(lam, F)
    K.tree_lu_solve(lam, F, x)
    np.testing.assert_allclose(x, np.linalg.solve(A, b), rtol=1e-12, atol=1e-14)


def test_block_ldl_refuses_a_non_positive_pivot(talos):
    lam = talos.dof_parent
    A = _matrix(lam, 6, 6)
    A[-1, -1] = -1.0
    assert not K.block_ldl_factor(lam, A, 6, np.zeros(len(lam), np.int64))


def test_which_models_get_the_symmetric_factorization():
    arm = mb.load_urdf(robot_path("ur5"))
    assert _root_block(arm) == 0  # revolute joints only: symmetric everywhere
    b = mb.ModelBuilder()
    b.add_body("a", joint="revolute", mass=1.0, inertia=np.eye(3) * 0.1)
    b.add_body("b", parent="a", joint="spherical", mass=1.0, inertia=np.eye(3) * 0.1)
    assert _root_block(b.build()) == -1  # a ball joint below the root: the general tree LU
