"""Shared machinery of the force elements: the tree's support structure, the
kinematics of one state (computed once and shared by every element), and
the spatial-algebra identities that give exact joint-space stiffness.

Notation (angular first, DESIGN.md): ``J`` is the world joint Jacobian
(6 x nv, :func:`multibody.joint_jacobians`): column ``s_k`` is the spatial
motion, at the world origin in world axes, produced by unit velocity of
coordinate ``k``. ``J_b`` is ``J`` with the columns of the coordinates that
do not support body ``b`` set to zero, so ``V_b = J_b v`` is the spatial
velocity of body ``b`` (world origin, world axes) and a world spatial force
``w`` on body ``b`` gives the generalized force ``τ = J_bᵀ w``.

Tangent-space perturbation. ``q ⊕ δ`` (``model.integrate``) moves every
joint by the exponential of its own coordinates' motion in its child frame:
``X_J(q ⊕ δ e_l) = X_J(q) exp(S_l δ)`` to first order, for every joint of
the catalog (vector joints are one-parameter subgroups; quaternion, free
and planar joints integrate the body twist). Hence, with ``l`` a coordinate
of joint ``j_l`` and ``k`` one of ``j_k``:

* if ``j_l`` is a strict ancestor of ``j_k`` the subtree of ``j_l`` moves
  rigidly by ``exp(s_l δ)`` (world, left), so ``∂s_k/∂δ_l = s_l ×ₘ s_k``;
* if ``j_l = j_k``: ``∂s_k/∂δ_l = Ad(oMj)(ad(S_l) S_k + ∂S_k/∂δ_l)``. The
  motion subspace is constant in child coordinates for the joints of
  Featherstone's catalog; the universal joint and Sueda's products of
  exponentials of one coordinate per factor, in order (euler, free2d,
  composite: ``S_k = Ad((Q_{k+1}⋯Q_n)⁻¹) ξ_k``), have
  ``∂S_k/∂q_l = -ad(S_l) S_k`` for l > k and 0 for l ≤ k; so
  ``∂s_k/∂δ_l = s_l ×ₘ s_k`` for every pair except l > k of those joints,
  where it is zero. (For the exponential-coordinate and spline joints,
  whose S depends on their coordinates otherwise, the rule does not hold:
  the elements' stiffness is refused there, see :class:`Topology`);
* otherwise ``∂s_k/∂δ_l = 0``.

``mask[l, k]`` is True exactly where the first two rules apply; it is a
constant of the model (:func:`topology`). The derivative of ``τ = J_bᵀ w``
at fixed ``w`` is then the *geometric stiffness*
``G[k, l] = mask[l, k] (s_l ×ₘ s_k)·w = mask[l, k] s_l·(s_k ×* w)``
(:func:`geometric`), and the derivative of a body velocity at fixed ``v``
is ``∂V_b/∂δ_l = s_l ×ₘ Σ_k mask[l, k] s_k v_k`` (:meth:`State.dV`).
Everything else an element needs is the derivative of its world wrench,
obtained from the motion of body points ``∂x/∂δ = u + ω × x`` (the point
Jacobian) and of body axes ``∂R/∂δ = [ω] R``.
"""
import weakref

import numpy as np

from ..errors import InputError
from ..kinematics import joint_jacobians
from ..model.checks import as_vector
from ..model.data import data_for
from ..spatial._small import cross3  # noqa: F401 (re-exported: a × b of two 3-vectors, compiled)
from ._kernels import (crf_cols, crf_vec, crm_cols, crm_vec, cross_vm, point_jacobian,  # noqa: F401 (re-exported)
                       point_velocity_derivative as _pvd, velocity_derivative as _vd)
from ._kernels import geometric as _geometric

# joints whose S_k depends only on the coordinates after k, as -ad(S_l) S_k (see the module docstring)
ORDERED_PRODUCTS = ("universal", "euler", "free2d", "composite")
CURVED = ("exp_spherical", "free3d", "spline", "spline_surface")

# ----------------------------------------------------------------- algebra


def hat(a):
    """Skew matrix ``[a]`` with ``[a] b = a × b``."""
    return np.array([[0.0, -a[2], a[1]], [a[2], 0.0, -a[0]], [-a[1], a[0], 0.0]])


def wrench_at(x, f, n=None):
    """World spatial force (at the world origin) of a force ``f`` applied at
    the point ``x`` plus a couple ``n`` (all world vectors)."""
    m = cross3(x, f)
    if n is not None:
        m += n
    return np.concatenate((m, f))


# ---------------------------------------------------------------- topology

_TOPOLOGY = weakref.WeakKeyDictionary()


class Topology:
    """Constant support structure of a model (see the module docstring):
    ``coord_body`` (nv,) body moved by each coordinate; ``ancestor``
    (nb, nb) ``[b, a]`` = a is b or an ancestor of b; ``support`` (nb, nv)
    ``[b, k]`` = coordinate k moves body b; ``mask`` (nv, nv) the pairs
    ``(l, k)`` with ``∂s_k/∂δ_l = s_l ×ₘ s_k``; ``curved`` the joints for
    which that rule does not give the derivative (exponential-coordinate
    and spline joints): :meth:`check_stiffness` refuses them."""

    def __init__(self, model):
        nb, nv = model.nbodies, model.nv
        anc = np.zeros((nb, nb), dtype=bool)
        anc[0, 0] = True
        for i in range(1, nb):
            anc[i] = anc[model.parents[i]]
            anc[i, i] = True
        cb = np.zeros(nv, dtype=np.int64)
        for j in model.joints[1:]:
            cb[j.v_slice] = j.child
        mask = anc[cb][:, cb].T.copy()          # mask[l, k] = anc[cb[k], cb[l]]
        self.curved = []
        for j in model.joints[1:]:
            if j.type in ORDERED_PRODUCTS:
                a, n = j.v_slice.start, j.nv
                for k in range(n):
                    mask[a + k + 1:a + n, a + k] = False   # ∂s_k/∂δ_l = 0 for l > k
            elif j.type in CURVED:
                self.curved.append(j)
        self.coord_body = cb
        self.ancestor = anc
        self.support = anc[:, cb].astype(float)  # float: used as a column scale
        self.mask = mask.astype(float)
        self.maskT = np.ascontiguousarray(self.mask.T)

    def check_stiffness(self, element):
        """Raise if the model has a joint whose motion subspace turns with its
        own coordinates in a way the mask does not express: the exact
        stiffness of a force element needs ∂S/∂q there, not implemented."""
        if self.curved:
            j = self.curved[0]
            raise element.error(f"exact stiffness (jacobians=True) is not available on a model with the {j.type} "
                                f"joint '{j.name}' (its motion subspace turns with its own coordinates); use an "
                                f"explicit integrator or semi_implicit_euler, or the euler joint", InputError)


def topology(model):
    topo = _TOPOLOGY.get(model)
    if topo is None:
        topo = _TOPOLOGY[model] = Topology(model)
    return topo


def geometric(topo, Jb, w):
    """``G[k, l] = mask[l, k] (s_l ×ₘ s_k)·w``: derivative of ``J_bᵀ w`` at
    fixed world force ``w`` (the geometric stiffness of a wrench on body b)."""
    return _geometric(topo.maskT, Jb, crf_vec(Jb, w))   # crf_vec column k: s_k ×* w


# ------------------------------------------------------------------- state


class State:
    """Kinematics of one state ``(q, v, t)``, computed on demand and shared
    by the elements of one evaluation: the world joint Jacobian ``J`` and
    body poses ``oMi`` (one compiled call, :func:`multibody.joint_jacobians`).
    """

    def __init__(self, model, q, v, t=0.0, data=None, need_v=True):
        self.model = model
        self.topo = topology(model)
        self.q = as_vector(q, "q", model.nq, batch=False)
        self.v = as_vector(v, "v", model.nv, batch=False) if need_v else None
        try:
            self.t = float(t)
        except (TypeError, ValueError):
            raise InputError(f"t must be a real number, got {t!r}") from None
        self.data = data_for(model, data)  # the thread's workspace if None
        self._J = None
        self._oMi = None
        self._Jb = {}
        self._V = {}
        self._dV = {}

    def _kinematics(self):
        data = self.data
        J = joint_jacobians(self.model, self.q, data)   # checks q (finite, unit quaternions)
        self._J = J.copy()
        self._oMi = data.oMi.copy()

    @property
    def J(self):
        if self._J is None:
            self._kinematics()
        return self._J

    @property
    def oMi(self):
        if self._oMi is None:
            self._kinematics()
        return self._oMi

    def Jb(self, body):
        """World Jacobian of ``body`` (6 x nv; zero columns off its support)."""
        J = self._Jb.get(body)
        if J is None:
            J = self._Jb[body] = self.J * self.topo.support[body]
        return J

    def pose(self, body, placement):
        """World pose (4x4) of a frame at ``placement`` in ``body``."""
        return self.oMi[body] @ placement

    def V(self, body):
        """Spatial velocity (6,) of ``body``: world origin, world axes."""
        V = self._V.get(body)
        if V is None:
            V = self._V[body] = self.Jb(body) @ self.v
        return V

    def dV(self, body):
        """``∂V_b/∂δ`` (6 x nv) at fixed v: column l is
        ``s_l ×ₘ Σ_k mask[l, k] s_k v_k``."""
        dV = self._dV.get(body)
        if dV is None:
            dV = self._dV[body] = _vd(self.Jb(body), self.v, self.topo.maskT)
        return dV

    def point_velocity_derivative(self, body, x, P):
        """``∂ẋ/∂δ`` (3 x nv) of the body point at ``x`` (point Jacobian ``P``)
        at fixed v: ``∂u + ∂ω × x + ω × ∂x``."""
        return _pvd(self.dV(body), x, self.V(body)[:3], P)
