"""Sparse Cholesky factorization ``A = L Lᵀ`` of symmetric positive definite
matrices whose sparsity pattern is fixed while their values change (the
particle block of :class:`~multibody.formulations.ParticleSystem`'s step,
refactored every step): the symbolic analysis — fill-reducing ordering,
elimination tree, supernodes, the maps of the assembly — is done once, and
each numeric factorization is one compiled call.

The method is the supernodal multifrontal Cholesky factorization (Duff &
Reid 1983; Liu, "The multifrontal method for sparse matrix solution",
SIAM Review 34, 1992; Davis, *Direct Methods for Sparse Linear Systems*,
SIAM 2006, ch. 4 for the elimination tree ``parent[j] = min{i > j : L_ij ≠
0}`` and the column structures ``struct(L_j) = struct(A_j) ∪ ⋃_{children c}
struct(L_c) \\ {j}``):

* ordering: SuperLU's multiple minimum degree on ``A + Aᵀ`` (scipy's
  ``splu(permc_spec="MMD_AT_PLUS_A")`` of a diagonally dominant matrix with
  A's pattern, on the graph of ``block × block`` blocks when the pattern is
  blocked: the 3 coordinates of a particle), then a postorder of the
  elimination tree (the same fill; children are factored before their
  parent and their update matrices form a stack);
* supernodes: fundamental ones (consecutive columns ``j, j+1`` with
  ``parent[j] = j+1``, j the only child and ``struct(L_j) = {j+1} ∪
  struct(L_{j+1})``): a supernode's columns share one dense front;
* numeric: for each supernode in postorder, the front ``F`` (its rows
  ``R``: its columns, then the rows of its structure) gets A's entries and
  the children's update matrices (extend-add); the first ``k`` columns of
  F are factored (dense right-looking Cholesky, which also forms
  ``L₂₁ = F₂₁ L₁₁⁻ᵀ``) and ``U = F₂₂ − L₂₁ L₂₁ᵀ`` is pushed for the parent.

The factor is exact up to rounding (no dropping). A non-positive pivot
(A not positive definite) is reported, not repaired.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from numba import njit
from scipy.sparse.linalg import splu

from .._typing import Array, ArrayLike
from ..errors import InputError


@njit(cache=True, nogil=True, fastmath={"reassoc", "contract"})
def _dot(x, y):
    """``x · y``. The sums of this file are reassociated (vectorized: 3–5×
    the strict-order loop); nothing else is."""
    acc = 0.0
    for t in range(x.shape[0]):
        acc += x[t] * y[t]
    return acc


@njit(cache=True, nogil=True, fastmath={"reassoc", "contract"})
def _dot4(x, y0, y1, y2, y3):
    """``(x · y0, x · y1, x · y2, x · y3)`` in one pass over x."""
    s0 = s1 = s2 = s3 = 0.0
    for t in range(x.shape[0]):
        v = x[t]
        s0 += v * y0[t]
        s1 += v * y1[t]
        s2 += v * y2[t]
        s3 += v * y3[t]
    return s0, s1, s2, s3


@njit(cache=True, nogil=True)
def _subtract_products(front, m, x, c, rows0, rows1, out, o, stride):
    """``out[o + (a − rows0)·stride] = front[a*m + c] − x · front[a*m : a*m + len(x)]``
    for the rows a in [rows0, rows1) of the front (four at a time)."""
    n = x.shape[0]
    a = rows0
    while a + 4 <= rows1:
        r = a * m
        s0, s1, s2, s3 = _dot4(x, front[r:r + n], front[r + m:r + m + n], front[r + 2 * m:r + 2 * m + n],
                               front[r + 3 * m:r + 3 * m + n])
        t = o + (a - rows0) * stride
        out[t] = front[r + c] - s0
        out[t + stride] = front[r + m + c] - s1
        out[t + 2 * stride] = front[r + 2 * m + c] - s2
        out[t + 3 * stride] = front[r + 3 * m + c] - s3
        a += 4
    while a < rows1:
        r = a * m
        out[o + (a - rows0) * stride] = front[r + c] - _dot(x, front[r:r + n])
        a += 1


@njit(cache=True, nogil=True)
def _factor(data, sn_first, rows_ptr, rows, a_ptr, a_src, a_dst, ch_ptr, children, rel_ptr, rel,
            upd_off, L_ptr, L, front, stack):
    """Numeric multifrontal factorization (module docstring). A front of
    ``m`` rows is stored row-major, lower triangle: ``front[a*m + c] =
    F[a, c]`` for ``a ≥ c`` (every inner product runs over contiguous
    memory); supernode s's factor is ``L[L_ptr[s] + a*k + c] = L_{R[a],
    first+c}`` (m × k, row-major), its update matrix on the stack the
    same way. Returns −1, or the (permuted) column whose pivot was not
    positive."""
    ns = sn_first.shape[0] - 1
    for s in range(ns):
        k = sn_first[s + 1] - sn_first[s]
        m = rows_ptr[s + 1] - rows_ptr[s]
        for t in range(m * m):
            front[t] = 0.0
        for e in range(a_ptr[s], a_ptr[s + 1]):
            front[a_dst[e]] += data[a_src[e]]
        # extend-add of the children's update matrices (the top of the stack)
        for ci in range(ch_ptr[s], ch_ptr[s + 1]):
            c = children[ci]
            mc = rel_ptr[c + 1] - rel_ptr[c]
            off = upd_off[c]
            rp = rel_ptr[c]
            for a in range(mc):
                ra = rel[rp + a] * m
                ua = off + a * mc
                for b in range(a + 1):
                    front[ra + rel[rp + b]] += stack[ua + b]
        # left-looking Cholesky of the k pivot columns: L₁₁ and L₂₁ = F₂₁ L₁₁⁻ᵀ
        for c in range(k):
            xc = front[c * m:c * m + c]
            d = front[c * m + c] - _dot(xc, xc)
            if not d > 0.0:
                return sn_first[s] + c
            d = np.sqrt(d)
            front[c * m + c] = d
            _subtract_products(front, m, xc, c, c + 1, m, front, (c + 1) * m + c, m)
            inv = 1.0 / d
            for a in range(c + 1, m):
                front[a * m + c] *= inv
        # the update matrix U = F₂₂ − L₂₁ L₂₁ᵀ (lower triangle), pushed on the stack
        mu = m - k
        off = upd_off[s]
        for b in range(mu):
            # column b of U: the front's rows k+b..m−1 against row k+b
            rb = (k + b) * m
            _subtract_products(front, m, front[rb:rb + k], k + b, k + b, m, stack, off + b * mu + b, mu)
        lp = L_ptr[s]
        for a in range(m):
            for c in range(min(a + 1, k)):
                L[lp + a * k + c] = front[a * m + c]
    return -1


@njit(cache=True, nogil=True)
def _solve(sn_first, rows_ptr, rows, L_ptr, L, perm, b, x):
    """``x = A⁻¹ b`` for each column of b (n × r) from the factor: forward
    substitution ``L y = b[perm]``, back substitution ``Lᵀ w = y``,
    ``x[perm] = w``, supernode by supernode (rows of L contiguous)."""
    ns = sn_first.shape[0] - 1
    n = perm.shape[0]
    y = np.empty(n)
    for col in range(b.shape[1]):
        for i in range(n):
            y[i] = b[perm[i], col]
        for s in range(ns):
            j0 = sn_first[s]
            k = sn_first[s + 1] - j0
            r0 = rows_ptr[s]
            m = rows_ptr[s + 1] - r0
            lp = L_ptr[s]
            for c in range(k):
                row = L[lp + c * k:lp + c * k + c + 1]
                y[j0 + c] = (y[j0 + c] - _dot(row[:c], y[j0:j0 + c])) / row[c]
            y1 = y[j0:j0 + k]
            for a in range(k, m):
                y[rows[r0 + a]] -= _dot(L[lp + a * k:lp + a * k + k], y1)
        for s in range(ns - 1, -1, -1):
            j0 = sn_first[s]
            k = sn_first[s + 1] - j0
            r0 = rows_ptr[s]
            m = rows_ptr[s + 1] - r0
            lp = L_ptr[s]
            y1 = y[j0:j0 + k]
            for a in range(k, m):
                w = y[rows[r0 + a]]
                row = L[lp + a * k:lp + a * k + k]
                for c in range(k):
                    y1[c] -= row[c] * w
            for c in range(k - 1, -1, -1):
                row = L[lp + c * k:lp + c * k + c + 1]
                w = y1[c] / row[c]
                y1[c] = w
                for c2 in range(c):
                    y1[c2] -= row[c2] * w
        for i in range(n):
            x[perm[i], col] = y[i]


def _mmd_order(indptr, indices, n, block):
    """Multiple-minimum-degree ordering (new → old) of the symmetric pattern
    (SuperLU's, through scipy), computed on the graph of the blocks."""
    nb = n // block
    rows = np.repeat(np.arange(n), np.diff(indptr)) // block
    cols = np.asarray(indices) // block
    G = sp.csc_matrix((np.ones(len(rows)), (rows, cols)), shape=(nb, nb))
    G = ((G + G.T) != 0).astype(float)
    G.setdiag(0.0)
    G.eliminate_zeros()
    deg = np.asarray(G.sum(axis=0)).ravel()
    W = (sp.diags(deg + 1.0) - G).tocsc()                  # diagonally dominant: SPD, any pivot order works
    lu = splu(W, permc_spec="MMD_AT_PLUS_A", diag_pivot_thresh=0.0, options={"SymmetricMode": True})
    node_order = np.argsort(lu.perm_c)                      # perm_c[i] is the new place of column i
    return (block * node_order[:, None] + np.arange(block)[None, :]).ravel()


def _etree(Lcols, n):
    """Elimination tree from the lower pattern by columns (Liu's algorithm
    with path compression, Davis §4.1): ``parent[j]`` or −1."""
    parent = np.full(n, -1, dtype=np.int64)
    ancestor = np.full(n, -1, dtype=np.int64)
    # row i's entries left of the diagonal are the columns j < i with L_ij ≠ 0 in A
    for i in range(n):
        for j in Lcols[i]:
            while j != -1 and j < i:
                nxt = ancestor[j]
                ancestor[j] = i
                if nxt == -1:
                    parent[j] = i
                j = nxt
    return parent


def _postorder(parent, n):
    children = [[] for _ in range(n)]
    roots = []
    for j in range(n):
        (children[parent[j]] if parent[j] >= 0 else roots).append(j)
    order = []
    for r in roots:
        stack = [(r, 0)]
        while stack:
            j, i = stack.pop()
            if i < len(children[j]):
                stack.append((j, i + 1))
                stack.append((children[j][i], 0))
            else:
                order.append(j)
    return np.array(order, dtype=np.int64)


def _relax(first, parent, struct, rules):
    """Relaxed supernodes (Ashcraft & Grimes 1989; CHOLMOD's default rules):
    a supernode is merged with its parent when the parent's columns follow
    its own and the merged front stays small or nearly full — at most 4
    columns, or 16 with < 80 % explicit zeros, 48 with < 10 %, any with
    < 5 %. The zeros are stored and computed on (fewer, larger dense
    fronts); the factor is the same."""
    groups = []          # [first, last, rows of the first column, zeros]
    for f, l in zip(first[:-1], first[1:]):
        m = (l - f) + len(struct[l - 1])
        g = [f, l, m, 0]
        if groups and parent[groups[-1][1] - 1] == f:
            c = groups[-1]
            kc = c[1] - c[0]
            k = kc + (l - f)
            z = c[3] + kc * (kc + m - c[2])
            mm = kc + m
            frac = z / (k * mm - k * (k - 1) / 2)
            if any(k <= kmax and frac < zmax for kmax, zmax in rules):
                groups[-1] = [c[0], l, mm, z]
                continue
        groups.append(g)
    return [g[0] for g in groups] + [first[-1]]


RELAX = ((4, 1.01), (16, 0.8), (48, 0.1), (1 << 62, 0.05))


class SparseCholesky:
    """``A = L Lᵀ`` for SPD matrices on one fixed symmetric sparsity pattern
    (module docstring). ``indptr``, ``indices``: the pattern in CSR (or CSC:
    it is symmetric) with both triangles, n × n; ``block``: size of the
    blocks the pattern is made of (3 for particle coordinates; the ordering
    is computed on the blocks). Then :meth:`factor` with the values in the
    pattern's order, :meth:`solve`."""

    def __init__(self, indptr, indices, n, block=1, relax=True):  # not annotated yet: its body does not type-check
        indptr = np.asarray(indptr, dtype=np.int64)
        indices = np.asarray(indices, dtype=np.int64)
        if n % block or len(indptr) != n + 1:
            raise InputError(f"SparseCholesky: indptr must have n + 1 = {n + 1} entries and n a multiple of "
                             f"block = {block}")
        self.n = n
        self.factored = False
        if n == 0:
            z = np.zeros(0, dtype=np.int64)
            self._sym = (np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int64), z, np.zeros(1, dtype=np.int64), z, z,
                         np.zeros(1, dtype=np.int64), z, np.zeros(1, dtype=np.int64), z, z)
            self.perm, self.L_ptr, self.L = z, np.zeros(1, dtype=np.int64), np.zeros(0)
            self._front, self._stack = np.zeros(1), np.zeros(1)
            self.nnz_L = self.supernodes = 0
            return
        nnz = indptr[-1]
        order = _mmd_order(indptr, indices, n, block) if n else np.zeros(0, dtype=np.int64)
        row_of = np.repeat(np.arange(n), np.diff(indptr))
        for _ in range(3):               # the ordering, then its postorder (same fill, children first)
            inv = np.empty(n, dtype=np.int64)
            inv[order] = np.arange(n)
            pi, pj = inv[row_of], inv[indices[:nnz]]
            low = pi > pj
            Lrows = [[] for _ in range(n)]          # row i: the columns j < i of its entries
            for i, j in zip(pi[low].tolist(), pj[low].tolist()):
                Lrows[i].append(j)
            parent = _etree(Lrows, n)
            post = _postorder(parent, n)
            if np.array_equal(post, np.arange(n)):
                break
            order = order[post]
        else:
            raise AssertionError("the postorder of the elimination tree is not stable")
        self.perm = order
        # column structures (rows below the diagonal), children before parents
        Acol = [[] for _ in range(n)]
        for i, j in zip(pi[low].tolist(), pj[low].tolist()):
            Acol[j].append(i)
        kids = [[] for _ in range(n)]
        for j in range(n):
            if parent[j] >= 0:
                kids[parent[j]].append(j)
        struct = [None] * n
        for j in range(n):
            s = np.unique(np.array(Acol[j], dtype=np.int64))
            for c in kids[j]:
                s = np.union1d(s, struct[c][struct[c] > j])
            struct[j] = s
        # fundamental supernodes
        first = [0]
        for j in range(1, n):
            if not (parent[j - 1] == j and len(kids[j]) == 1 and len(struct[j - 1]) == len(struct[j]) + 1):
                first.append(j)
        first.append(n)
        first = _relax(first, parent, struct, RELAX) if relax else first
        sn_first = np.array(first, dtype=np.int64)
        ns = len(sn_first) - 1
        sn_of = np.repeat(np.arange(ns), np.diff(sn_first))
        sn_rows = [np.concatenate([np.arange(sn_first[s], sn_first[s + 1]), struct[sn_first[s + 1] - 1]])
                   for s in range(ns)]
        rows_ptr = np.concatenate([[0], np.cumsum([len(r) for r in sn_rows])]).astype(np.int64)
        rows = np.concatenate(sn_rows).astype(np.int64) if ns else np.zeros(0, dtype=np.int64)
        m_of = np.diff(rows_ptr)
        k_of = np.diff(sn_first)
        # where each stored entry of A (lower part of the permuted matrix, diagonal included) lands
        keep = np.nonzero(pi >= pj)[0]
        s_of = sn_of[pj[keep]]
        pos = np.empty(n, dtype=np.int64)
        dst = np.empty(len(keep), dtype=np.int64)
        by_s = np.argsort(s_of, kind="stable")
        keep, s_of = keep[by_s], s_of[by_s]
        a_ptr = np.searchsorted(s_of, np.arange(ns + 1)).astype(np.int64)
        for s in range(ns):
            R = sn_rows[s]
            pos[R] = np.arange(len(R))
            e = keep[a_ptr[s]:a_ptr[s + 1]]
            dst[a_ptr[s]:a_ptr[s + 1]] = pos[pi[e]] * m_of[s] + (pj[e] - sn_first[s])
        # the supernodal tree, the extend-add maps, the stack of update matrices
        sn_parent = np.array([sn_of[parent[sn_first[s + 1] - 1]] if parent[sn_first[s + 1] - 1] >= 0 else -1
                              for s in range(ns)], dtype=np.int64)
        ch = [[] for _ in range(ns)]
        for s in range(ns):
            if sn_parent[s] >= 0:
                ch[sn_parent[s]].append(s)
        rel = []
        rel_ptr = [0]
        for s in range(ns):
            p = sn_parent[s]
            if p >= 0:
                R = sn_rows[p]
                pos[R] = np.arange(len(R))
                rel.append(pos[sn_rows[s][k_of[s]:]])
            rel_ptr.append(rel_ptr[-1] + m_of[s] - k_of[s])
        upd_off = np.zeros(ns, dtype=np.int64)
        top = peak = 0
        for s in range(ns):                       # postorder: a node's children are the top of the stack
            if ch[s]:
                top = min(upd_off[c] for c in ch[s])
            upd_off[s] = top
            top += (m_of[s] - k_of[s]) ** 2
            peak = max(peak, top)
        ch_ptr = np.concatenate([[0], np.cumsum([len(c) for c in ch])]).astype(np.int64)
        self._sym = (sn_first, rows_ptr, rows, a_ptr, keep.astype(np.int64), dst, ch_ptr,
                     np.array([c for cs in ch for c in cs], dtype=np.int64), np.array(rel_ptr, dtype=np.int64),
                     np.concatenate(rel).astype(np.int64) if rel else np.zeros(0, dtype=np.int64), upd_off)
        self.L_ptr = np.concatenate([[0], np.cumsum(k_of * m_of)]).astype(np.int64)
        self.L = np.zeros(self.L_ptr[-1])
        self._front = np.zeros(int(max(m_of.max() ** 2, 1)) if ns else 1)
        self._stack = np.zeros(max(peak, 1))
        self.nnz_L = int(sum(k * m - k * (k - 1) // 2 for k, m in zip(k_of, m_of)))
        self.supernodes = ns
        self.factored = False

    def factor(self, data: ArrayLike) -> int:
        """Numeric factorization of the matrix whose values are ``data`` (in
        the order of the pattern given to the constructor; the matrix must
        be symmetric: only the lower triangle of the permuted matrix is
        read). Returns −1, or the index (in A's numbering) of a column
        whose pivot was not positive (A not positive definite; the factor
        is then invalid)."""
        data = np.ascontiguousarray(data, dtype=float)
        s = self._sym
        bad = _factor(data, s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7], s[8], s[9], s[10],
                      self.L_ptr, self.L, self._front, self._stack)
        self.factored = bad < 0
        return -1 if bad < 0 else int(self.perm[bad])

    def solve(self, b: ArrayLike) -> Array:
        """``A⁻¹ b`` (b of n or n × r)."""
        b = np.asarray(b, dtype=float)
        if b.shape[:1] != (self.n,):
            raise InputError(f"SparseCholesky.solve: b must have {self.n} rows, got shape {b.shape}")
        if self.n == 0:
            return np.zeros(b.shape)
        b2 = np.ascontiguousarray(b.reshape(self.n, -1))
        x = np.empty_like(b2)
        s = self._sym
        _solve(s[0], s[1], s[2], self.L_ptr, self.L, self.perm, b2, x)
        return x.reshape(b.shape)

    def factor_matrix(self) -> sp.csc_matrix:
        """The factor ``L`` (CSC, lower triangular) of ``A[perm][:, perm] = L Lᵀ``
        (``perm = self.perm``, new → old) from the last :meth:`factor`."""
        sn_first, rows_ptr, rows = self._sym[0], self._sym[1], self._sym[2]
        I, J, V = [], [], []
        for s in range(len(sn_first) - 1):
            k = sn_first[s + 1] - sn_first[s]
            R = rows[rows_ptr[s]:rows_ptr[s + 1]]
            blk = self.L[self.L_ptr[s]:self.L_ptr[s + 1]].reshape(len(R), k)
            for c in range(k):
                I.append(R[c:])
                J.append(np.full(len(R) - c, sn_first[s] + c))
                V.append(blk[c:, c])
        if not I:
            return sp.csc_matrix((self.n, self.n))
        return sp.csc_matrix((np.concatenate(V), (np.concatenate(I), np.concatenate(J))), shape=(self.n, self.n))
