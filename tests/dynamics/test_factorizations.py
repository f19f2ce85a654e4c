"""Both sparse factorizations of H (Featherstone Table 6.3: LᵀDL and LᵀL)
reproduce H with no fill-in, and their solves and products (Table 6.5)
match dense numpy."""
import numpy as np
import pytest

import multibody as mb
from multibody.dynamics import InertiaFactor, dof_parents
from multibody.errors import InputError
from oracles import branch_pattern, random_tree


@pytest.mark.parametrize("kind", ["ltdl", "ltl"])
@pytest.mark.parametrize("seed, floating", [(61, True), (62, False), (63, True)])
def test_factor_reproduces_h_without_fill_in(kind, seed, floating):
    model = random_tree(seed, n=12, floating=floating, pin_compatible=False, fixed=2).build()
    q = model.random_configuration(seed=seed)
    H = mb.crba(model, q).copy()
    fac = InertiaFactor(model, H, kind=kind)
    L, D = fac.L, fac.D
    np.testing.assert_allclose(L.T @ np.diag(D) @ L, H, atol=1e-12 * np.abs(H).max())
    # no fill-in: below the diagonal, L is zero wherever i and j are not on a common root path
    off_path = ~branch_pattern(dof_parents(model))
    assert np.all(L[np.tril(off_path, -1)] == 0.0)
    rng = np.random.default_rng(seed)
    b = rng.normal(size=model.nv)
    cond = np.linalg.cond(H)
    np.testing.assert_allclose(fac.solve(b), np.linalg.solve(H, b), rtol=0,
                               atol=100 * model.nv * cond * 1e-16 * np.abs(np.linalg.solve(H, b)).max())
    B = rng.normal(size=(model.nv, 3))
    np.testing.assert_allclose(fac.solve(B), np.linalg.solve(H, B), rtol=0,
                               atol=100 * model.nv * cond * 1e-16 * np.abs(np.linalg.solve(H, B)).max())
    np.testing.assert_allclose(fac.inverse(), np.linalg.inv(H), rtol=0,
                               atol=100 * model.nv * cond * 1e-16 * np.abs(np.linalg.inv(H)).max())
    np.testing.assert_allclose(fac.L_multiply(b), L @ b, atol=1e-12)
    np.testing.assert_allclose(fac.L_multiply(b, transpose=True), L.T @ b, atol=1e-12)
    np.testing.assert_allclose(fac.multiply(b, H), H @ b, atol=1e-12 * np.abs(H).max())


def test_ltl_equals_cholesky_of_the_reversed_matrix():
    """LᵀL of H is the Cholesky factor of H with rows and columns reversed
    (an independent oracle: numpy's dense Cholesky)."""
    model = random_tree(64, n=10, floating=True).build()
    H = mb.crba(model, model.random_configuration(seed=1)).copy()
    L = InertiaFactor(model, H, kind="ltl").L
    C = np.linalg.cholesky(H[::-1, ::-1])  # H_rev = C Cᵀ, C lower triangular
    np.testing.assert_allclose(L, C.T[::-1, ::-1], atol=1e-12 * np.abs(H).max())


def test_unknown_kind_and_bad_shapes():
    model = random_tree(65, n=4, floating=False).build()
    H = mb.crba(model, model.neutral())
    with pytest.raises(InputError, match="unknown factorization kind 'qr'"):
        InertiaFactor(model, H, kind="qr")
    fac = InertiaFactor(model, H, kind="ltl")
    with pytest.raises(InputError, match="x has shape"):
        fac.L_multiply(np.ones(model.nv + 1))


def test_long_chains_take_the_contiguous_range_path():
    """A floating base with two 20-link arms: the factorization and solves
    run over contiguous ranges of ancestors (kernels.coordinate_runs) and
    still match dense numpy, with no fill-in between the arms."""
    from multibody.dynamics.kernels import coordinate_runs, ltdl_kernel, ltdl_solve
    b = mb.ModelBuilder("two_arms")
    b.add_body("base", "world", "free", mass=2.0, com=(0, 0, 0), inertia=np.diag([0.1, 0.2, 0.3]))
    rng = np.random.default_rng(5)
    for arm in "lr":
        parent = "base"
        for k in range(20):
            axis = rng.normal(size=3)
            b.add_body(f"{arm}{k}", parent, "revolute", placement=(np.eye(3), (0.0, 0.05, 0.1)),
                       axis=axis / np.linalg.norm(axis), mass=0.5, com=(0, 0, 0.05),
                       inertia=np.diag([2e-3, 2e-3, 1e-3]))
            parent = f"{arm}{k}"
    model = b.build()
    lam = model.dof_parent
    assert coordinate_runs(lam).size == model.nv
    H = mb.crba(model, model.random_configuration(seed=2)).copy()
    F = H.copy()
    assert ltdl_kernel(lam, F) == 0
    L = np.tril(F, -1) + np.eye(model.nv)
    np.testing.assert_allclose(L.T @ np.diag(np.diag(F)) @ L, H, atol=1e-12 * np.abs(H).max())
    assert np.all(L[np.tril(~branch_pattern(lam), -1)] == 0.0)
    x = rng.normal(size=model.nv)
    expect = np.linalg.solve(H, x)
    ltdl_solve(lam, F, x)
    np.testing.assert_allclose(x, expect, rtol=0, atol=1e-13 * np.linalg.cond(H) * np.abs(expect).max())
