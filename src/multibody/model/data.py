"""Preallocated workspaces for the kernels of one model (Pinocchio's
``Data``): results of the last call live here, so the fast path of a
kinematics or dynamics function allocates nothing.

Related arrays share one buffer so a kernel call passes few arguments
(DESIGN.md, Speed): ``poses`` holds ``oMi`` and ``liMi``, ``spatial`` holds
the per-body 6-vectors ``v``, ``a``, ``f`` and a scratch row, ``jac`` holds
``S``, ``J`` and ``frame_J``, ``dofs`` the per-coordinate vectors.
"""
import numpy as np


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
    ``inertia6`` (nb,6,6) composite or articulated body inertias.
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
