"""Small fixed-size linear algebra used by the spatial kernels.

Explicit loops instead of ``@``: Numba's matmul goes through BLAS (call
overhead dominates at 3x3) and warns on the non-contiguous slices (``T[:3, :3]``)
that these kernels routinely receive.
"""
import numpy as np
from numba import njit

from .kernel_algebra import cross


@njit(cache=True, nogil=True)
def mm3(A, B):
    """3x3 product ``A B``."""
    C = np.empty((3, 3))
    for i in range(3):
        for j in range(3):
            C[i, j] = A[i, 0] * B[0, j] + A[i, 1] * B[1, j] + A[i, 2] * B[2, j]
    return C


@njit(cache=True, nogil=True)
def mtm3(A, B):
    """3x3 product ``Aᵀ B``."""
    C = np.empty((3, 3))
    for i in range(3):
        for j in range(3):
            C[i, j] = A[0, i] * B[0, j] + A[1, i] * B[1, j] + A[2, i] * B[2, j]
    return C


@njit(cache=True, nogil=True)
def mv3(A, x):
    """3x3 matrix times 3-vector."""
    y = np.empty(3)
    for i in range(3):
        y[i] = A[i, 0] * x[0] + A[i, 1] * x[1] + A[i, 2] * x[2]
    return y


@njit(cache=True, nogil=True)
def mtv3(A, x):
    """``Aᵀ x`` for a 3x3 ``A``."""
    y = np.empty(3)
    for i in range(3):
        y[i] = A[0, i] * x[0] + A[1, i] * x[1] + A[2, i] * x[2]
    return y


@njit(cache=True, nogil=True)
def cross3(a, b):
    """``a × b``."""
    c = np.empty(3)
    c[0], c[1], c[2] = cross(a[0], a[1], a[2], b[0], b[1], b[2])
    return c


@njit(cache=True, nogil=True)
def mm6(A, B):
    """6x6 product ``A B``."""
    C = np.zeros((6, 6))
    for i in range(6):
        for k in range(6):
            a = A[i, k]
            if a != 0.0:
                for j in range(6):
                    C[i, j] += a * B[k, j]
    return C
