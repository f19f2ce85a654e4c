"""The sparse Cholesky factorization (multibody.solvers.sparse_cholesky)
against LAPACK's dense one (scipy.linalg.cholesky: the factor of an SPD
matrix is unique) and numpy's dense solve."""
import numpy as np
import pytest
import scipy.linalg as sla
import scipy.sparse as sp

from multibody.errors import InputError
from multibody.solvers.sparse_cholesky import SparseCholesky


def grid_pattern(nx, ny, reach=2, block=3):
    """Nodes of an nx × ny grid coupled to the neighbours within ``reach``
    (a cloth's structural, shear and bend springs), blocks of ``block``."""
    idx = np.arange(nx * ny).reshape(nx, ny)
    I, J = [], []
    for i in range(nx):
        for j in range(ny):
            for di in range(-reach, reach + 1):
                for dj in range(-reach, reach + 1):
                    if 0 <= i + di < nx and 0 <= j + dj < ny and (abs(di) + abs(dj) <= reach):
                        I.append(idx[i, j])
                        J.append(idx[i + di, j + dj])
    G = sp.csr_matrix((np.ones(len(I)), (I, J)), shape=(nx * ny,) * 2)
    return sp.kron(G, np.ones((block, block)), format="csr")


def spd_on(pattern, rng):
    """A random SPD matrix with exactly this (symmetric) pattern: random
    symmetric entries, the diagonal made dominant."""
    P = sp.triu(pattern, format="coo")
    A = sp.csr_matrix((rng.uniform(-1, 1, P.nnz), (P.row, P.col)), shape=P.shape)
    A = A + sp.triu(A, 1).T
    d = np.asarray(abs(A).sum(axis=1)).ravel()
    A = (A + sp.diags(d + rng.uniform(0.1, 1.0, A.shape[0]))).tocsr()
    A.sort_indices()
    # back onto the pattern's order (the values the factorization reads follow the pattern)
    out = pattern.copy().astype(float)
    out.sort_indices()
    rows = np.repeat(np.arange(out.shape[0]), np.diff(out.indptr))
    out.data[:] = np.asarray(A[rows, out.indices]).ravel()
    return out


@pytest.mark.parametrize("block,relax", [(1, True), (3, True), (3, False)])
def test_factor_is_lapacks_and_solves(block, relax):
    rng = np.random.default_rng(1)
    pat = grid_pattern(7, 6, block=block)
    pat.sort_indices()
    ch = SparseCholesky(pat.indptr, pat.indices, pat.shape[0], block=block, relax=relax)
    for _ in range(3):               # new values on the same pattern: the symbolic analysis is reused
        A = spd_on(pat, rng)
        assert ch.factor(A.data) == -1
        D = A.toarray()
        p = ch.perm
        L = ch.factor_matrix().toarray()
        Lref = sla.cholesky(D[np.ix_(p, p)], lower=True)
        assert np.abs(L - Lref).max() < 1e-12 * np.abs(Lref).max()
        b = rng.standard_normal((A.shape[0], 3))
        x = ch.solve(b)
        assert np.abs(x - np.linalg.solve(D, b)).max() < 1e-12 * np.abs(x).max()
        assert np.abs(ch.solve(b[:, 0]) - x[:, 0]).max() == 0.0


@pytest.mark.parametrize("relax", [True, False])
def test_fill_is_that_of_the_dense_factor(relax):
    """The symbolic structure holds every nonzero of the dense factor (no
    entry dropped) and supernodes share the factor's columns."""
    rng = np.random.default_rng(2)
    pat = grid_pattern(9, 5, reach=1, block=1)
    ch = SparseCholesky(pat.indptr, pat.indices, pat.shape[0], relax=relax)
    A = spd_on(pat, rng)
    ch.factor(A.data)
    p = ch.perm
    Lref = sla.cholesky(A.toarray()[np.ix_(p, p)], lower=True)
    stored = ch.factor_matrix()
    assert ch.nnz_L == stored.nnz
    missing = (np.abs(Lref) > 1e-300) & (stored.toarray() == 0)
    assert not missing.any()
    if not relax:    # the structure is the exact fill (random values: no cancellation)
        assert ch.nnz_L == np.count_nonzero(np.tril(np.abs(Lref) > 1e-300))
    assert ch.supernodes < pat.shape[0]


def test_not_positive_definite_is_reported():
    pat = grid_pattern(4, 4, reach=1, block=1)
    A = spd_on(pat, np.random.default_rng(3))
    ch = SparseCholesky(A.indptr, A.indices, A.shape[0])
    B = A.copy()
    B.data = -B.data
    assert ch.factor(B.data) >= 0
    assert not ch.factored
    # decoupled: the failing column is the negative one
    D = sp.identity(5, format="csr")
    chd = SparseCholesky(D.indptr, D.indices, 5)
    assert chd.factor(np.array([1.0, 2.0, -1.0, 1.0, 1.0])) == 2
    assert chd.factor(np.array([1.0, 2.0, np.nan, 1.0, 1.0])) == 2
    assert chd.factor(np.ones(5)) == -1


def test_empty_and_bad_input():
    ch = SparseCholesky(np.zeros(1, dtype=np.int64), np.zeros(0, dtype=np.int64), 0)
    assert ch.factor(np.zeros(0)) == -1
    assert ch.solve(np.zeros(0)).shape == (0,)
    with pytest.raises(InputError, match="block"):
        SparseCholesky(np.zeros(3, dtype=np.int64), np.zeros(0, dtype=np.int64), 2, block=3)
    D = sp.identity(3, format="csr")
    chd = SparseCholesky(D.indptr, D.indices, 3)
    with pytest.raises(InputError, match="3 rows"):
        chd.solve(np.ones(4))
