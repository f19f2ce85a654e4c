"""The elimination algebra of attachments (ArtiSynth §0.17–0.21; notes
seed-000 C17–C21), independent of what the components are.

A system is a list of *components* (a rigid model's joint velocities, a
particle's 3 velocities, ...), each a block of the full velocity ``u``. A
component ``k`` is *attached* when its velocity is a linear function of the
velocities of its masters,

    u_k = Σ_j W_kj u_j + c_k            (ArtiSynth: u_k + G_kj u_j = g_k, W = −G, c = g)

with ``c_k`` a known bias (for a point on a rotating body, ``h Ṗ z``: the
change of the map over the step, ArtiSynth's ``g_β = h Ġ_βα v_α``). Masters
may themselves be attached (§0.18); the relation must be a directed acyclic
graph. The other components are *active* (their velocities are the reduced
unknowns ``z``) or *prescribed* (their velocities are given, §0.21).

Composing the relations in topological order (masters first) gives the
affine map ``u = P z + p``: P (full × reduced) has identity rows for the
active components, zero rows for the prescribed ones and
``Σ_j W_kj P_j`` for an attached ``k``; ``p`` collects the biases and the
prescribed velocities the same way. Then, for any full linear system
``A u = b`` subject to the attachments (``A`` the mass matrix, or ``M −
hD − h²K`` of an implicit step), the reduced system is

    (Pᵀ A P) z = Pᵀ (b − A p),          u = P z + p                (eq. 0.20–0.23)

which is exactly the KKT system ``[A −Gᵀ; G 0][u; λ] = [b; g]`` in this
library's sign (DESIGN.md) with the attachment rows ``G u = g``
(``u_k − Σ_j W_kj u_j = c_k``, prescribed ``u_ρ = v_ρ``): multiply the first
row by Pᵀ (``G P = 0``). ArtiSynth writes ``+Gᵀ`` there (notes §4); with
``−Gᵀ`` the multipliers are the impulses the attachments apply and a
regularization block of ordinary constraints is ``+R`` (positive).
Ordinary constraints ``G_o u = g_o`` (with their regularization ``R``)
reduce to ``G_o P z = g_o − G_o p`` (eq. 0.22, 0.24); the attachments
themselves are never regularized.

Sign errata applied: §0.21's ``g_β`` terms carry ``−`` (as in eq. 0.23),
so the force that drives a prescribed component is
``f_ρ = P_ρᵀ (A u − b)`` (notes C21).
"""
import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import splu

from ..errors import ModelError, SimulationError


class AttachmentCycleError(ModelError):
    """The attachments form a cycle (they must be a directed acyclic graph)."""


def topological_order(masters, label=str):
    """Order the attached components so that every master comes before the
    components attached to it (ArtiSynth §0.18 eliminates in the reverse of
    this order). ``masters``: dict ``k -> iterable of master ids``; masters
    that are not keys are roots (active, prescribed or rigid). Raises
    :class:`AttachmentCycleError` naming the components of a cycle."""
    masters = {k: list(dict.fromkeys(m)) for k, m in masters.items()}
    order, state = [], {}
    for start in masters:
        if state.get(start) == 2:
            continue
        stack = [(start, iter(masters[start]))]
        path = [start]
        state[start] = 1
        while stack:
            k, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                stack.pop()
                path.pop()
                state[k] = 2
                order.append(k)
                continue
            if nxt not in masters or state.get(nxt) == 2:
                continue
            if state.get(nxt) == 1:
                cycle = path[path.index(nxt):] + [nxt]
                raise AttachmentCycleError("attachments form a cycle: " + " -> ".join(label(c) for c in cycle)
                                           + " (each is attached to the next; attachments must be acyclic)")
            state[nxt] = 1
            path.append(nxt)
            stack.append((nxt, iter(masters[nxt])))
    return order


def compose_weights(n, weights, order):
    """Constant weight attachments composed down to the roots: ``C`` (n × n,
    sparse CSR) with ``u_k = Σ_r C[k, r] u_r`` over root components r
    (those that are not keys of ``weights``; ``C[r, r] = 1``).
    ``weights``: dict ``k -> [(j, w_kj), ...]``; ``order`` from
    :func:`topological_order`."""
    rows = {}
    for r in range(n):
        if r not in weights:
            rows[r] = {r: 1.0}
    for k in order:
        acc = {}
        for j, w in weights[k]:
            for r, c in rows[j].items():
                acc[r] = acc.get(r, 0.0) + w * c
        rows[k] = acc
    I, J, V = [], [], []
    for k, row in rows.items():
        for r, c in row.items():
            I.append(k)
            J.append(r)
            V.append(c)
    return sp.csr_matrix((V, (I, J)), shape=(n, n))


def attachment_map(sizes, active, relations, order, bias=None, prescribed=None):
    """The affine map ``u = P z + p`` (dense P) of general attachments:
    ``sizes`` per component; ``active`` the components whose velocities are
    z (in that order); ``relations`` dict ``k -> {j: W_kj}`` (``u_k = Σ W_kj
    u_j + c_k``); ``order`` masters first (:func:`topological_order`);
    ``bias`` dict ``k -> c_k``; ``prescribed`` dict ``ρ -> v_ρ``."""
    off = np.concatenate([[0], np.cumsum(sizes)]).astype(int)
    zoff = np.concatenate([[0], np.cumsum([sizes[a] for a in active])]).astype(int)
    N, nz = off[-1], zoff[-1]
    P, p = np.zeros((N, nz)), np.zeros(N)
    for a, c in enumerate(active):
        P[off[c]:off[c + 1], zoff[a]:zoff[a + 1]] = np.eye(sizes[c])
    for r, vr in (prescribed or {}).items():
        p[off[r]:off[r + 1]] = vr
    for k in order:
        sk = slice(off[k], off[k + 1])
        for j, Wkj in relations[k].items():
            P[sk] += np.asarray(Wkj) @ P[off[j]:off[j + 1]]
            p[sk] += np.asarray(Wkj) @ p[off[j]:off[j + 1]]
        if bias is not None and k in bias:
            p[sk] += bias[k]
    return P, p


def attachment_rows(sizes, relations, bias=None, prescribed=None):
    """The attachments as constraint rows ``G u = g`` on the full velocity
    (dense): ``u_k − Σ_j W_kj u_j = c_k`` and ``u_ρ = v_ρ``."""
    off = np.concatenate([[0], np.cumsum(sizes)]).astype(int)
    rows, g = [], []
    for k, rel in relations.items():
        R = np.zeros((sizes[k], off[-1]))
        R[:, off[k]:off[k + 1]] = np.eye(sizes[k])
        for j, Wkj in rel.items():
            R[:, off[j]:off[j + 1]] -= Wkj
        rows.append(R)
        g.append(np.zeros(sizes[k]) if bias is None or k not in bias else np.asarray(bias[k], dtype=float))
    for r, vr in (prescribed or {}).items():
        R = np.zeros((sizes[r], off[-1]))
        R[:, off[r]:off[r + 1]] = np.eye(sizes[r])
        rows.append(R)
        g.append(np.asarray(vr, dtype=float))
    return np.vstack(rows), np.concatenate(g)


def reduce(A, b, P, p=None):
    """``(Pᵀ A P, Pᵀ (b − A p))``: the attachments eliminated from ``A u = b``
    (ArtiSynth eq. 0.20–0.23 with ``M`` → ``A``). Sparse or dense."""
    r = b if p is None else b - A @ p
    return P.T @ (A @ P), P.T @ r


def recover(P, z, p=None):
    """The full velocity ``u = P z + p``."""
    u = P @ z
    return u if p is None else u + p


def reduce_constraints(G, g, P, p=None):
    """Ordinary constraint rows ``G u = g`` in the reduced unknowns:
    ``(G P, g − G p)`` (eq. 0.22, 0.24)."""
    return G @ P, (g if p is None else g - G @ p)


def solve_saddle(A, G, b, g, R=None):
    """``[A −Gᵀ; G R][u; λ] = [b; g]`` by sparse LU (SuperLU); ``R`` None for
    hard rows. Returns ``(u, λ)``."""
    n, m = A.shape[0], G.shape[0]
    Rb = sp.csc_matrix((m, m)) if R is None else sp.csc_matrix(R)
    K = sp.bmat([[sp.csc_matrix(A), -sp.csc_matrix(G).T], [sp.csc_matrix(G), Rb]], format="csc")
    try:
        x = splu(K, permc_spec="MMD_AT_PLUS_A").solve(np.concatenate([b, g]))
    except RuntimeError as exc:
        raise SimulationError(f"the KKT system of the attachments is singular ({exc})") from None
    if not np.all(np.isfinite(x)):
        raise SimulationError("the KKT system of the attachments has a non-finite solution")
    return x[:n], x[n:]


# ------------------------------------------------------------ §0.17–0.18 literally (dense references)


def reduction_matrix(sizes, active, attached, k, W):
    """ArtiSynth's ``P_k`` (§0.17, erratum 15 read by its meaning), in this
    library's sign: identity, except that component k's rows and columns are
    zero and its column holds ``W_kjᵀ`` (``= −G_kjᵀ``) in the rows of each
    master j. ``P_k M P_kᵀ`` eliminates k (eq. 0.27–0.30). ``W``: dict
    ``j -> W_kj``. ``sizes`` per component; ``active``/``attached`` unused
    but kept for symmetry with the caller's bookkeeping."""
    off = np.concatenate([[0], np.cumsum(sizes)])
    P = np.eye(off[-1])
    sk = slice(off[k], off[k + 1])
    P[sk, :] = 0.0
    P[:, sk] = 0.0
    for j, Wkj in W.items():
        P[off[j]:off[j + 1], sk] = np.asarray(Wkj).T
    return P


def eliminate_sequential(M, f, sizes, relations, order, bias=None):
    """Eliminate attached components one at a time (ArtiSynth §0.18,
    eq. 0.27–0.35, dense): ``relations`` dict ``k -> {j: W_kj}``; ``order``
    the elimination order (each k eliminated must have no remaining
    component attached to it: the reverse of :func:`topological_order`).
    Returns ``(M', f')`` on all components, the eliminated ones' rows and
    columns zero (``P M Pᵀ = diag(M', 0)``). ``bias``: dict ``k -> c_k``."""
    off = np.concatenate([[0], np.cumsum(sizes)])
    M = np.array(M, dtype=float)
    f = np.array(f, dtype=float)
    for k in order:
        sk = slice(off[k], off[k + 1])
        Wk = np.zeros((off[k + 1] - off[k], off[-1]))   # u_k = Wk u (+ c_k)
        for j, Wkj in relations[k].items():
            Wk[:, off[j]:off[j + 1]] = Wkj
        if bias is not None and k in bias:
            # f' = f + Wkᵀ f_k − (M_·k + Wkᵀ M_kk) c_k  (eq. 0.33–0.34 with W = −G, erratum 11's sign):
            # subtract M_·k c_k everywhere (k's own row too), then fold row k in below
            c = np.asarray(bias[k], dtype=float)
            f = f - M[:, sk] @ c
        f = f + Wk.T @ f[sk]
        M = M + M[:, sk] @ Wk + Wk.T @ M[sk, :] + Wk.T @ M[sk, sk] @ Wk
        M[sk, :] = 0.0
        M[:, sk] = 0.0
        f[sk] = 0.0
    return M, f
