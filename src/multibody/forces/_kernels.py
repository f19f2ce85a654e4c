"""Compiled building blocks of the force elements (Numba; with
``NUMBA_DISABLE_JIT=1`` they run as plain Python over numpy arrays).

Vectors of a 6 x n block are its columns, angular rows first. These are
the column-wise products the elements call a dozen times per evaluation;
compiling them removes most of the numpy call overhead (a 3 x n cross
product costs ~0.5 µs here against ~6 µs as numpy expressions).
"""
import numpy as np
from numba import njit

from ..spatial.kernel_algebra import cross, cross_force, cross_motion


@njit(cache=True, nogil=True)
def cross_vm(a, B):
    """``a × B[:, j]`` for every column (a: (3,), B: (3, n))."""
    n = B.shape[1]
    out = np.empty((3, n))
    a0, a1, a2 = a[0], a[1], a[2]
    for j in range(n):
        out[0, j], out[1, j], out[2, j] = cross(a0, a1, a2, B[0, j], B[1, j], B[2, j])
    return out


@njit(cache=True, nogil=True)
def point_jacobian(Jb, x):
    """3 x n Jacobian of the world position of the body point at ``x``:
    columns ``u_k + ω_k × x`` of the 6 x n body Jacobian ``Jb``."""
    n = Jb.shape[1]
    out = np.empty((3, n))
    x0, x1, x2 = x[0], x[1], x[2]
    for j in range(n):
        w0, w1, w2 = Jb[0, j], Jb[1, j], Jb[2, j]
        out[0, j] = Jb[3, j] + w1 * x2 - w2 * x1
        out[1, j] = Jb[4, j] + w2 * x0 - w0 * x2
        out[2, j] = Jb[5, j] + w0 * x1 - w1 * x0
    return out


@njit(cache=True, nogil=True)
def crm_cols(S, M):
    """``S[:, j] ×ₘ M[:, j]`` (spatial motion cross product, column pairs)."""
    n = S.shape[1]
    out = np.empty((6, n))
    for j in range(n):
        x = cross_motion(S[0, j], S[1, j], S[2, j], S[3, j], S[4, j], S[5, j],
                         M[0, j], M[1, j], M[2, j], M[3, j], M[4, j], M[5, j])
        for r in range(6):
            out[r, j] = x[r]
    return out


@njit(cache=True, nogil=True)
def crm_vec(S, m):
    """``S[:, j] ×ₘ m`` for every column (m: one motion vector (6,))."""
    n = S.shape[1]
    M = np.empty((6, n))
    for j in range(n):
        for r in range(6):
            M[r, j] = m[r]
    return crm_cols(S, M)


@njit(cache=True, nogil=True)
def crf_cols(S, F):
    """``S[:, j] ×* F[:, j]`` (spatial force cross product, column pairs):
    ``[ω × n + u × f; ω × f]``."""
    n = S.shape[1]
    out = np.empty((6, n))
    for j in range(n):
        x = cross_force(S[0, j], S[1, j], S[2, j], S[3, j], S[4, j], S[5, j],
                        F[0, j], F[1, j], F[2, j], F[3, j], F[4, j], F[5, j])
        for r in range(6):
            out[r, j] = x[r]
    return out


@njit(cache=True, nogil=True)
def crf_vec(S, w):
    """``S[:, j] ×* w`` for every column (w: one force vector (6,))."""
    n = S.shape[1]
    F = np.empty((6, n))
    for j in range(n):
        for r in range(6):
            F[r, j] = w[r]
    return crf_cols(S, F)


@njit(cache=True, nogil=True)
def geometric(maskT, Jb, Z):
    """``G[k, l] = maskT[k, l] Z[:, k]·Jb[:, l]`` — with ``Z[:, k] = s_k ×* w``
    the geometric stiffness of a wrench (see :mod:`._kin`). Zero columns of
    ``Jb`` (coordinates that do not move the body) are skipped."""
    n = Jb.shape[1]
    G = np.zeros((n, n))
    used = np.zeros(n, dtype=np.bool_)
    for j in range(n):
        for r in range(6):
            if Jb[r, j] != 0.0:
                used[j] = True
                break
    for k in range(n):
        for l in range(n):
            if maskT[k, l] != 0.0 and used[l]:
                s = 0.0
                for r in range(6):
                    s += Z[r, k] * Jb[r, l]
                G[k, l] = s
    return G


@njit(cache=True, nogil=True)
def velocity_derivative(Jb, v, maskT):
    """``∂V_b/∂δ`` (6 x n): column l is ``s_l ×ₘ Σ_k mask[l, k] s_k v_k``."""
    n = Jb.shape[1]
    rel = np.zeros((6, n))
    for l in range(n):
        for k in range(n):
            if maskT[k, l] != 0.0:
                vk = v[k]
                for r in range(6):
                    rel[r, l] += Jb[r, k] * vk
    return crm_cols(Jb, rel)


@njit(cache=True, nogil=True)
def point_velocity_derivative(dV, x, w, P):
    """``∂ẋ/∂δ`` (3 x n) of a body point at ``x``: ``∂u + ∂ω × x + ω × P``
    with the body's velocity derivative ``dV``, angular velocity ``w`` and
    the point Jacobian ``P``."""
    n = dV.shape[1]
    out = np.empty((3, n))
    x0, x1, x2 = x[0], x[1], x[2]
    w0, w1, w2 = w[0], w[1], w[2]
    for j in range(n):
        a0, a1, a2 = dV[0, j], dV[1, j], dV[2, j]
        p0, p1, p2 = P[0, j], P[1, j], P[2, j]
        out[0, j] = dV[3, j] + a1 * x2 - a2 * x1 + w1 * p2 - w2 * p1
        out[1, j] = dV[4, j] + a2 * x0 - a0 * x2 + w2 * p0 - w0 * p2
        out[2, j] = dV[5, j] + a0 * x1 - a1 * x0 + w0 * p1 - w1 * p0
    return out
