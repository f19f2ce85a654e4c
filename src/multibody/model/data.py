"""Preallocated workspaces for the kernels of one model (Pinocchio's
``Data``): results of the last call live here, so the fast path of a
kinematics or dynamics function allocates nothing.

Related arrays share one buffer so a kernel call passes few arguments
(DESIGN.md, Speed): ``poses`` holds ``oMi`` and ``liMi``, ``spatial`` holds
the per-body 6-vectors ``v``, ``a``, ``f`` and a scratch row, ``jac`` holds
``S``, ``J`` and ``frame_J``, ``dofs`` the per-coordinate vectors. The
nv x nv matrices ``M``, ``L`` and ``Minv`` are allocated on first use: a
10,000-link chain would otherwise pay 2.4 GB for a workspace that only
computes kinematics.

``data.handle`` gives compiled fast paths all of these arrays, and the
model's, through one integer (see :mod:`multibody._compiled`);
:func:`handle_workspace` turns it back into arrays inside a kernel.

Threads. A ``Data`` belongs to one thread at a time, like Pinocchio's: the
first thread that computes with it becomes its owner, and a call from
another thread raises :class:`~multibody.errors.InputError` instead of
returning the other thread's results (the check is one comparison inside
the compiled fast path). :meth:`Data.release` hands a workspace over.
Calls without ``data`` use :func:`workspace`, one cached Data per model and
per thread, so plain calls are thread-safe and need no set-up.
"""
from __future__ import annotations

import threading
import weakref
from collections import namedtuple
from typing import TYPE_CHECKING

import numpy as np
from numba import carray, njit

from .._compiled import f64_pointer, i64_pointer, thread_id
from ..errors import InputError
from .joints import N_COL
from .._typing import Array

if TYPE_CHECKING:
    from .model import Model

# The handle table (int64): slots 0-2 hold nb, nq, nv; then the address of each array of _LAYOUT, in
# its order; then the owner's thread id and the model table's width (N_COL, more for a model with
# product-of-exponentials joints: joints.C_EXTRA). _LAYOUT is the one description of the workspace: Data
# allocates and publishes its arrays from it, the slot constants, the Workspace tuple and
# Data.arrays derive from it. handle_workspace (compiled) must give the shapes as compile-time
# expressions, so it writes them once more, by slot constant: a name missing there does not compile
# (Workspace takes every name) and tests/model/test_data_layout.py checks every shape and address.
# Shapes in nb (bodies), nv (coordinates) and N_COL (table columns); every array is C-contiguous,
# float64 unless said.
_LAYOUT = (
    ("tree", lambda nb, nv: (nb, N_COL)),         # the model table (Model._tree), not Data's; width: slot NCOL
    ("lam", lambda nb, nv: (nv,)),                # int64: parent coordinate of each coordinate (Model.dof_parent)
    ("poses", lambda nb, nv: (2, nb, 4, 4)),      # oMi, liMi
    ("spatial", lambda nb, nv: (4, nb, 6)),       # per body v, a, f and a scratch row (angular first)
    ("jac", lambda nb, nv: (3, 6, nv)),           # S, J, frame_J
    ("dofs", lambda nb, nv: (4, nv)),             # per coordinate tau, ddq and two scratch rows
    ("M", lambda nb, nv: (nv, nv)),               # joint-space inertia (lazy)
    ("L", lambda nb, nv: (nv, nv)),               # its sparse LᵀDL factor (lazy)
    ("inertia6", lambda nb, nv: (nb, 6, 6)),      # composite or articulated body inertias
    ("U", lambda nb, nv: (6, nv)),                # ABA's U = Iᴬ S
    ("Dinv", lambda nb, nv: (nv, 6)),             # ABA's D⁻¹ blocks
    ("Minv", lambda nb, nv: (nv, nv)),            # inverse inertia (lazy)
)
_MODEL_ARRAYS = ("tree", "lam")   # the model's, published by every Data
_LAZY = ("M", "L", "Minv")        # nv x nv: allocated on first use (a handle slot stays 0 until then)
_ARRAYS = tuple(name for name, _ in _LAYOUT)
_SHAPE = dict(_LAYOUT)
_SLOT = {name: 3 + k for k, name in enumerate(_ARRAYS)}
SLOT_TREE, SLOT_LAM, SLOT_POSES, SLOT_SPATIAL = _SLOT["tree"], _SLOT["lam"], _SLOT["poses"], _SLOT["spatial"]
SLOT_JAC, SLOT_DOFS, SLOT_M, SLOT_L = _SLOT["jac"], _SLOT["dofs"], _SLOT["M"], _SLOT["L"]
SLOT_INERTIA6, SLOT_U, SLOT_DINV, SLOT_MINV = _SLOT["inertia6"], _SLOT["U"], _SLOT["Dinv"], _SLOT["Minv"]
OWNER = 3 + len(_ARRAYS)          # thread id of the owner; 0: none yet; -1: never checked
NCOL = OWNER + 1                  # columns of the model table
N_SLOTS = NCOL + 1


class _Lazy:
    """A :class:`Data` matrix allocated on first access (:meth:`Data.allocate`)."""

    def __init__(self, doc):
        self.__doc__ = doc

    def __set_name__(self, owner, name):
        self.name = name

    def __get__(self, data, owner=None):
        return self if data is None else data.allocate(self.name)


class Data:
    """Workspace for one model. Views (body index first):

    ``oMi`` (nb,4,4) world pose of each body; ``liMi`` (nb,4,4) pose of each
    body in its parent; ``oMf`` (nf,4,4) world pose of each frame; ``v``,
    ``a``, ``f`` (nb,6) spatial velocity, acceleration and force of each body
    (angular first; the frame each algorithm uses is in its docstring);
    ``S`` (6,nv) motion subspaces in child coordinates; ``J`` (6,nv) joint
    Jacobian columns in world coordinates (spatial, at the world origin);
    ``frame_J`` (6,nv) the last frame Jacobian; ``tau``, ``ddq`` (nv) the last
    joint forces and accelerations; ``M`` (nv,nv) the joint-space inertia;
    ``inertia6`` (nb,6,6) composite or articulated body inertias; ``Minv``
    (nv,nv) the last inverse inertia of a fast-path call.

    One thread at a time (see the module docstring); ``thread_checked=False``
    is for workspaces private to an object that documents its own threading
    rules (the simulator's).

    Parameters
    ----------
    model : Model
        The model the workspace is sized for.
    thread_checked : bool
        Default True: check that one thread at a time uses it.

    Raises
    ------
    InputError
        If ``model`` is not a Model.
    """

    # the arrays (views into them, and the handle table's address) set by __init__, declared for type checkers
    model: Model
    handle: int
    poses: Array
    spatial: Array
    jac: Array
    dofs: Array
    inertia6: Array
    U: Array
    Dinv: Array
    oMi: Array
    liMi: Array
    oMf: Array
    v: Array
    a: Array
    f: Array
    S: Array
    J: Array
    frame_J: Array
    tau: Array
    ddq: Array
    dof_parent: Array

    def __init__(self, model, thread_checked=True):
        from .model import Model
        if not isinstance(model, Model):
            raise InputError(f"Data(model) needs a multibody Model, got {type(model).__name__}")
        nb, nv, nf = model.nbodies, model.nv, len(model.frames)
        self.model = model  # fast paths check ``data.model is model``: a foreign Data would overflow
        self._slots = np.zeros(N_SLOTS, dtype=np.int64)
        self._slots[:3] = nb, model.nq, nv
        self._slots[OWNER] = 0 if thread_checked else -1
        self._slots[NCOL] = model._tree.shape[1]
        self._publish("tree", model._tree)
        self._publish("lam", model.dof_parent)
        for name in _ARRAYS:  # Data's own arrays (_LAYOUT), zeros
            if name in _LAZY:
                setattr(self, "_" + name, None)
            elif name not in _MODEL_ARRAYS:
                setattr(self, name, np.zeros(_SHAPE[name](nb, nv)))
                self._publish(name, getattr(self, name))
        self.poses[...] = np.eye(4)
        self.oMi, self.liMi = self.poses[0], self.poses[1]
        self.oMf = np.tile(np.eye(4), (nf, 1, 1))
        self.v, self.a, self.f = self.spatial[0], self.spatial[1], self.spatial[2]
        self.S, self.J, self.frame_J = self.jac[0], self.jac[1], self.jac[2]
        self.tau, self.ddq = self.dofs[0], self.dofs[1]
        self.dof_parent = model.dof_parent
        self.handle = int(self._slots.ctypes.data)

    def _publish(self, name, x):
        """Write the address of array ``x`` into the handle table."""
        assert x.flags.c_contiguous and x.dtype.itemsize == 8  # the kernels index C-contiguous blocks
        self._slots[_SLOT[name]] = x.ctypes.data

    def allocate(self, name):
        """The lazily allocated matrix ``name`` ("M", "L" or "Minv"),
        allocated now (zeros, nv x nv) if it is not yet. Once allocated it
        is a plain instance attribute (the class attribute is a non-data
        descriptor), so reading ``data.M`` in a hot loop costs nothing more."""
        x = getattr(self, "_" + name)
        if x is None:
            x = np.zeros(_SHAPE[name](self._slots[0], self._slots[2]))
            setattr(self, "_" + name, x)
            self.__dict__[name] = x
            self._publish(name, x)
        return x

    M = _Lazy("(nv, nv) joint-space inertia (allocated on first use)")
    L = _Lazy("(nv, nv) sparse LᵀDL factor of M (allocated on first use)")
    Minv = _Lazy("(nv, nv) inverse inertia (allocated on first use)")

    def arrays(self):
        """This workspace's arrays and the model's as the :data:`Workspace`
        that :func:`handle_workspace` gives compiled code (the lazily
        allocated matrices only once allocated; empty before): kernels
        written over a Workspace run on it without JIT too."""
        m, empty = self.model, np.zeros((0, 0))
        own = {"tree": m._tree, "lam": m.dof_parent}
        return Workspace(m.nbodies, m.nq, m.nv, *(
            own[name] if name in own else getattr(self, name) if name not in _LAZY
            else empty if getattr(self, "_" + name) is None else getattr(self, "_" + name) for name in _ARRAYS))

    def check_thread(self):
        """Raise :class:`InputError` if another thread owns this workspace;
        make the calling thread its owner if none does."""
        owner = self._slots[OWNER]
        if owner < 0:
            return
        me = threading.get_ident()
        if owner == 0:
            self._slots[OWNER] = me
        elif owner != me:
            raise InputError(
                f"this Data of model '{self.model.name}' belongs to another thread: a workspace holds the "
                "results of its last call, so two threads sharing one would read each other's results. Make "
                "one mb.Data(model) per thread, call without data= (per-thread workspaces), or call "
                "data.release() in the owning thread to hand it over")

    def release(self) -> None:
        """Forget the owning thread: the next thread that computes with this
        workspace becomes its owner."""
        if self._slots[OWNER] > 0:
            self._slots[OWNER] = 0

    def __deepcopy__(self, memo=None):
        """A new workspace with its own arrays and handle (a copied handle
        would point at this Data's arrays), holding the same values and no
        owner."""
        new = Data(self.model, thread_checked=self._slots[OWNER] >= 0)
        for name in ("oMf",) + tuple(n for n in _ARRAYS if n not in _MODEL_ARRAYS and n not in _LAZY):
            getattr(new, name)[...] = getattr(self, name)
        for name in _LAZY:
            if getattr(self, "_" + name) is not None:
                new.allocate(name)[...] = getattr(self, "_" + name)
        return new

    __copy__ = __deepcopy__  # a shallow copy would share the handle: copy as deep

    def __reduce__(self):
        raise TypeError("a Data workspace holds memory addresses and cannot be pickled; make a new mb.Data(model)")


class _Cached(Data):
    """The per-thread workspace of :func:`workspace`: it refers to its model
    weakly (the model holds it), so the cache never keeps a model alive."""

    def __init__(self, model):
        self._model_ref = weakref.ref(model)
        super().__init__(model)
        self._slots[OWNER] = threading.get_ident()

    model = property(lambda self: self._model_ref(), lambda self, m: None)


def workspace(model: Model) -> Data:
    """The calling thread's workspace for ``model`` (created on first use,
    dropped with the model or the thread). Public functions called without
    ``data`` compute in it and return copies of its results."""
    try:
        local = model._workspaces
    except AttributeError:
        raise InputError(f"expected a multibody Model, got {type(model).__name__}") from None
    try:
        return local.data
    except AttributeError:
        local.data = d = _Cached(model)
        return d


def data_for(model: Model, data: Data | None) -> Data:
    """``data`` if it was made for ``model`` and the calling thread may use
    it; the thread's cached :func:`workspace` if it is None."""
    if data is None:
        return workspace(model)
    if getattr(data, "model", None) is not model:
        if not isinstance(data, Data):
            raise InputError(f"data must be a multibody Data workspace (mb.Data(model)), got {type(data).__name__}")
        raise InputError(f"data was created for another model than '{model.name}': use mb.Data(model)")
    data.check_thread()
    return data


Workspace = namedtuple("Workspace", ("nb", "nq", "nv") + _ARRAYS)  # type: ignore[misc]  # fields from _LAYOUT


@njit(cache=True, nogil=True, inline="always")
def handle_workspace(handle):
    """The arrays behind ``Data.handle``, as a :data:`Workspace` of
    C-contiguous views (``tree`` and ``lam`` are the model's table and
    ``dof_parent``; the rest are the Data arrays of the same names; ``M``,
    ``L`` and ``Minv`` only once allocated, see :func:`allocated`)."""
    t = carray(i64_pointer(handle), (N_SLOTS,))
    nb, nq, nv = t[0], t[1], t[2]
    # the shapes of _LAYOUT again: carray takes its shape (and so its rank) as compiled code
    return Workspace(nb, nq, nv,
                     carray(f64_pointer(t[SLOT_TREE]), (nb, t[NCOL])),
                     carray(i64_pointer(t[SLOT_LAM]), (nv,)),
                     carray(f64_pointer(t[SLOT_POSES]), (2, nb, 4, 4)),
                     carray(f64_pointer(t[SLOT_SPATIAL]), (4, nb, 6)),
                     carray(f64_pointer(t[SLOT_JAC]), (3, 6, nv)),
                     carray(f64_pointer(t[SLOT_DOFS]), (4, nv)),
                     carray(f64_pointer(t[SLOT_M]), (nv, nv)),
                     carray(f64_pointer(t[SLOT_L]), (nv, nv)),
                     carray(f64_pointer(t[SLOT_INERTIA6]), (nb, 6, 6)),
                     carray(f64_pointer(t[SLOT_U]), (6, nv)),
                     carray(f64_pointer(t[SLOT_DINV]), (nv, 6)),
                     carray(f64_pointer(t[SLOT_MINV]), (nv, nv)))


@njit(cache=True, nogil=True, inline="always")
def owned(handle):
    """True if the calling thread may compute in the workspace behind
    ``handle`` (making it the owner if there is none yet). A fast path
    returns ``BAD_SHAPE`` otherwise, and the general path raises the error
    (:meth:`Data.check_thread`)."""
    t = carray(i64_pointer(handle), (N_SLOTS,))
    owner = t[OWNER]
    if owner < 0:
        return True
    me = thread_id()
    if owner == me:
        return True
    if owner == 0:
        t[OWNER] = me
        return True
    return False


@njit(cache=True, nogil=True, inline="always")
def allocated(handle, slot):
    """True if the lazily allocated array at ``slot`` of the handle table exists."""
    return carray(i64_pointer(handle), (N_SLOTS,))[slot] != 0


