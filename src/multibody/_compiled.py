"""How public functions call compiled kernels: direct entry points for the
fast paths, workspace handles, and the chunking of batches.

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

Workspace handles.

Unboxing an array argument costs ~0.036 µs (Numba wraps each one in a
reference-counted MemInfo), an integer ~0.01 µs. A
:class:`~multibody.model.data.Data` therefore publishes one integer, its
``handle``: the address of a table of the addresses and sizes of the
model's and its own arrays. A fast-path kernel takes the handle and the
caller's state vectors only, and rebuilds the arrays with ``carray`` over
:func:`f64_pointer` / :func:`i64_pointer` (no MemInfo, no reference
counting); ``rnea`` thus passes 4 arrays fewer than before (0.14 µs, 15% of
Pinocchio's whole UR5 RNEA). The Data object keeps every array alive, and
the public functions use its handle only while the Data is an argument of
the call. Handles need compiled code: without JIT (``NUMBA_DISABLE_JIT=1``)
the fast paths are skipped (:data:`JIT`).

Every public function with a fast path writes the same few lines inline
(``data.model is model``, dtype and rank of each vector, the call, the
status): a shared helper would cost a Python call, 0.03–0.05 µs, 10% of a
6-DoF arm's forward kinematics.

The single-state fast-path kernels (``*_fast``) keep the GIL: releasing and
re-acquiring it around a call (``nogil=True``) costs 0.033 µs, 8% of a 6-DoF
arm's forward kinematics; batch kernels release it.
"""
import sys

from llvmlite import ir
from numba import config, njit, types
from numba.core import cgutils
from numba.core.imputils import impl_ret_borrowed
from numba.extending import intrinsic

from ._status import BAD_SHAPE, NEEDS_MATRIX  # noqa: F401 (the fast paths' statuses, imported from here too)

F64_1 = types.float64[:]            # any layout: strided views are fine
F64_1C = types.float64[::1]
F64_2C = types.float64[:, ::1]
F64_3C = types.float64[:, :, ::1]
F64_4C = types.float64[:, :, :, ::1]
INT = types.int64
I64_1 = types.int64[:]
B_1 = types.boolean[:]

JIT = not config.DISABLE_JIT

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


@njit(cache=True, nogil=True, inline="always")
def overflowed(x):
    """True if the vector ``x`` has a non-finite entry. Fast paths check
    their results with it and hand an overflow (finite inputs too large) to
    the general path, which raises the error. ``x * 0`` is 0 for finite x
    and NaN otherwise, so the sum cannot overflow by itself."""
    s = 0.0
    for k in range(x.shape[0]):
        s += x[k] * 0.0
    return s != 0.0


@njit(cache=True, nogil=True, inline="always")
def kept_at(flag, key, q):
    """True if a result kept for reuse is valid (``flag`` 1.0) and was
    computed at exactly this q: ``key`` equals q bit for bit (a reused
    factorization then gives the numbers a new one would)."""
    if flag != 1.0:
        return False
    for i in range(q.shape[0]):
        if key[i] != q[i]:
            return False
    return True


@njit(cache=True, nogil=True, inline="always")
def overflowed_2d(x):
    """:func:`overflowed` for a matrix."""
    s = 0.0
    for r in range(x.shape[0]):
        for k in range(x.shape[1]):
            s += x[r, k] * 0.0
    return s != 0.0


@njit(cache=True, nogil=True, inline="always")
def diagonal_overflowed(M):
    """True if the square matrix ``M`` has a non-finite diagonal entry (an
    overflowing inertia shows on its diagonal; checking n entries, not n²)."""
    s = 0.0
    for k in range(M.shape[0]):
        s += M[k, k] * 0.0
    return s != 0.0


def run_batch(batch_kernel, rows_kernel, B, *args):
    """Run a kernel over B states: ``rows_kernel(*args, 0, 1)`` for one
    state, the parallel ``batch_kernel(*args)`` for more. A parallel kernel
    for one state costs thread wake-ups: milliseconds with the other core
    busy (DESIGN.md, Speed)."""
    if B == 1:
        rows_kernel(*args, 0, 1)
    else:
        batch_kernel(*args)


@intrinsic
def _any_layout(typingctx, array):
    """``array`` typed with layout 'A' (any strides), the same array at no
    cost: the C-contiguous and any-layout arrays share one data model. An
    out-of-line kernel is compiled once per argument type, and most kernels
    get a vector as 'C' from the general path and as 'A' from the fast
    paths; callers that pass it through ``any_layout`` share one compiled
    specialization (the joint catalog of :func:`set_local_pose_any` took 1.5
    to 3 s to compile, three times in the demo)."""
    if not isinstance(array, types.Array):
        return None
    result = array.copy(layout="A")

    def codegen(context, builder, signature, args):
        return impl_ret_borrowed(context, builder, signature.return_type, args[0])
    return result(array), codegen


def _same_array(array):
    return array


# an intrinsic cannot run as Python: without JIT the cast is the identity
any_layout = _any_layout if JIT else _same_array
any_layout.__doc__ = _any_layout.__doc__


@intrinsic
def f64_pointer(typingctx, address):
    """The integer ``address`` as a float64 pointer (for ``numba.carray``)."""
    def codegen(context, builder, signature, args):
        return builder.inttoptr(args[0], context.get_value_type(signature.return_type))
    return types.CPointer(types.float64)(types.intp), codegen


@intrinsic
def i64_pointer(typingctx, address):
    """The integer ``address`` as an int64 pointer (for ``numba.carray``)."""
    def codegen(context, builder, signature, args):
        return builder.inttoptr(args[0], context.get_value_type(signature.return_type))
    return types.CPointer(types.int64)(types.intp), codegen


@intrinsic
def call_address(typingctx, address, *args):
    """Call the C function ``int64 f(int64, ...)`` at ``address`` (a
    ``numba.cfunc``'s) with the int64 arguments ``args`` (addresses of
    arrays and tables, counts). A kernel that calls a large compiled
    function this way does not link its code: Numba re-optimizes every
    function a kernel calls directly as part of that kernel, which made
    each fused step with contact take ~90 s to compile (the narrow phase,
    once per step kernel), and each of the step and rollout kernels compile
    the whole integrator again. The address is read at run time (a table
    entry), so the caller stays cacheable."""
    if not all(isinstance(a, types.Integer) for a in args):
        return None
    sig = types.int64(address, types.StarArgTuple.from_types(args))

    def codegen(context, builder, signature, llargs):
        i64 = ir.IntType(64)
        fn = builder.inttoptr(llargs[0], ir.FunctionType(i64, [i64] * len(args)).as_pointer())
        values = cgutils.unpack_tuple(builder, llargs[1], len(args))
        return builder.call(fn, [context.cast(builder, a, t, types.int64) for a, t in zip(values, args)])
    return sig, codegen


# The C function whose value threading.get_ident() returns on this platform.
_THREAD_ID_FUNCTION, _THREAD_ID_BITS = ("GetCurrentThreadId", 32) if sys.platform == "win32" else ("pthread_self", 64)


@intrinsic
def thread_id(typingctx):
    """The calling thread's identifier, equal to :func:`threading.get_ident`
    (a call of ``pthread_self``, or ``GetCurrentThreadId`` on Windows,
    resolved by symbol name so that cached kernels stay valid across
    processes)."""
    def codegen(context, builder, signature, args):
        fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(ir.IntType(_THREAD_ID_BITS), []),
                                            _THREAD_ID_FUNCTION)
        value = builder.call(fn, [])
        return builder.zext(value, ir.IntType(64)) if _THREAD_ID_BITS < 64 else value
    return types.int64(), codegen
