"""Preallocated workspaces for the kernels of one model (Pinocchio's
``Data``): results of the last call live here, so the fast path of a
kinematics or dynamics function allocates nothing.

Related arrays share one buffer so a kernel call passes few arguments
(DESIGN.md, Speed): ``poses`` holds ``oMi`` and ``liMi``, ``spatial`` holds
the per-body 6-vectors ``v``, ``a``, ``f`` and a scratch row, ``jac`` holds
``S``, ``J`` and ``frame_J``, ``dofs`` the per-coordinate vectors.

``data.handle`` gives compiled fast paths all of these arrays, and the
model's, through one integer (see :mod:`multibody._compiled`);
:func:`handle_workspace` turns it back into arrays inside a kernel.
"""
from collections import namedtuple

import numpy as np
from numba import carray, njit

from .._compiled import f64_pointer, i64_pointer
from .joints import N_COL


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
    """

    def __init__(self, model):
        nb, nv, nf = model.nbodies, model.nv, len(model.frames)
        self.model = model  # fast paths check ``data.model is model``: a foreign Data would overflow
        self.poses = np.tile(np.eye(4), (2, nb, 1, 1))
        self.oMi, self.liMi = self.poses[0], self.poses[1]
        self.oMf = np.tile(np.eye(4), (nf, 1, 1))
        self.spatial = np.zeros((4, nb, 6))
        self.v, self.a, self.f = self.spatial[0], self.spatial[1], self.spatial[2]
        self.jac = np.zeros((3, 6, nv))
        self.S, self.J, self.frame_J = self.jac[0], self.jac[1], self.jac[2]
        self.dofs = np.zeros((4, nv))
        self.tau, self.ddq = self.dofs[0], self.dofs[1]
        self.M = np.zeros((nv, nv))
        self.L = np.zeros((nv, nv))  # sparse LᵀDL factor of M (forward_dynamics method="crba")
        self.inertia6 = np.zeros((nb, 6, 6))
        self.U = np.zeros((6, nv))
        self.Dinv = np.zeros((nv, 6))
        self.dof_parent = model.dof_parent
        self.Minv = np.zeros((nv, nv))
        arrays = (model._tree, model.dof_parent, self.poses, self.spatial, self.jac, self.dofs, self.M, self.L,
                  self.inertia6, self.U, self.Dinv, self.Minv)
        for x in arrays:  # the kernels index them as C-contiguous blocks
            assert x.flags.c_contiguous and x.dtype.itemsize == 8
        self._slots = np.array([nb, model.nq, nv] + [x.ctypes.data for x in arrays], dtype=np.int64)
        self.handle = int(self._slots.ctypes.data)

    def __deepcopy__(self, memo=None):
        """A new workspace with its own arrays and handle (a copied handle
        would point at this Data's arrays), holding the same values."""
        new = Data(self.model)
        for name in ("poses", "oMf", "spatial", "jac", "dofs", "M", "L", "inertia6", "U", "Dinv", "Minv"):
            getattr(new, name)[...] = getattr(self, name)
        return new

    __copy__ = __deepcopy__  # a shallow copy would share the handle: copy as deep

    def __reduce__(self):
        raise TypeError("a Data workspace holds memory addresses and cannot be pickled; make a new mb.Data(model)")


Workspace = namedtuple("Workspace", "nb nq nv tree lam poses spatial jac dofs M L inertia6 U Dinv Minv")


@njit(cache=True, nogil=True, inline="always")
def handle_workspace(handle):
    """The arrays behind ``Data.handle``, as a :data:`Workspace` of
    C-contiguous views (``tree`` and ``lam`` are the model's table and
    ``dof_parent``; the rest are the Data arrays of the same names)."""
    t = carray(i64_pointer(handle), (15,))
    nb, nq, nv = t[0], t[1], t[2]
    return Workspace(nb, nq, nv, carray(f64_pointer(t[3]), (nb, N_COL)), carray(i64_pointer(t[4]), (nv,)),
                     carray(f64_pointer(t[5]), (2, nb, 4, 4)), carray(f64_pointer(t[6]), (4, nb, 6)),
                     carray(f64_pointer(t[7]), (3, 6, nv)), carray(f64_pointer(t[8]), (4, nv)),
                     carray(f64_pointer(t[9]), (nv, nv)), carray(f64_pointer(t[10]), (nv, nv)),
                     carray(f64_pointer(t[11]), (nb, 6, 6)), carray(f64_pointer(t[12]), (6, nv)),
                     carray(f64_pointer(t[13]), (nv, 6)), carray(f64_pointer(t[14]), (nv, nv)))
