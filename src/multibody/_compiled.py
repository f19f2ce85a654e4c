"""How public functions call compiled kernels: direct entry points for the
fast paths, and the chunking of batches.

Entry points.

Calling a Numba dispatcher costs ~0.16 µs plus ~0.035 µs per array
argument to find the compiled version matching the argument types; that is
as much as Pinocchio's whole forward kinematics of a 6-DoF arm. A fast path
that already knows its argument types can call the compiled entry point of
one exact signature instead (``Dispatcher.compile(sig)`` returns it) and
save about a third of the call. The caller must then guarantee the types:
an ndarray of the signature's dtype and number of dimensions (layouts 'A'
accept any strides). With ``NUMBA_DISABLE_JIT=1`` the plain function is
returned.
"""
from numba import njit, types

F64_1 = types.float64[:]            # any layout: strided views are fine
F64_2C = types.float64[:, ::1]
F64_3C = types.float64[:, :, ::1]
F64_4C = types.float64[:, :, :, ::1]
INT = types.int64
I64_1 = types.int64[:]
B_1 = types.boolean[:]

_cache = {}


def entry(dispatcher, *sig):
    """The compiled entry point of ``dispatcher`` for argument types ``sig``
    (compiled or loaded from Numba's cache on first use)."""
    key = (dispatcher, sig)
    fn = _cache.get(key)
    if fn is None:
        fn = dispatcher.compile(sig) if hasattr(dispatcher, "compile") else dispatcher
        _cache[key] = fn
    return fn


@njit(cache=True, nogil=True)
def chunk_count(B):
    """Number of chunks a batch of B states is split into for ``prange``:
    each chunk reuses one workspace (allocating one per state cost more than
    the algorithm on small robots), and 64 chunks balance the load on any
    common thread count. (``numba.get_num_threads()`` inside a kernel would
    make it uncacheable.)"""
    return max(1, min(B, 64))
