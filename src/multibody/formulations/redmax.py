"""REDMAX: reduced coordinates through maximal coordinates (Sueda §2–2.13;
notes/seed-001.md E, G 33–42, §4 errata).

The joint coordinates (q, v) of a :class:`~multibody.model.Model` are the
state; the equations of motion are those of the free bodies (maximal
coordinates, Sueda §1.6) pulled back through the system Jacobian
``J = J_mr`` (6n × nv) that maps the joint velocities v to the stacked body
twists φ = (ω; v) of the n bodies, each in its own body frame, angular
first (Sueda eq. 2.14):

    M_r = Jᵀ M_m J,   f_r = Jᵀ (f_m − M_m J̇ v)          (Sueda eq. 2.18)

with M_m = blkdiag of the bodies' 6×6 inertias about their frame origins
(body axes) and f_m the body wrenches ``ad(φ)ᵀ M φ`` (Coriolis) + gravity.
The accelerations are ``v̇ = M_r⁻¹ (f_r + τ)``.

Frames. A body's frame is its joint's moving (child) frame, so Sueda's
body-in-joint offset ``ʲ_BE`` is the identity and ``ⁱ_JAd = 1``;
``ⁱ_pAd = Ad(E_i⁻¹ E_p)`` (Featherstone's ``ⁱX_p``) maps the parent's twist
to the child's coordinates. ``S_i`` (6 × n_i) is the joint's motion subspace
in child coordinates (:func:`~multibody.model.joints.motion_subspace_into`)
and ``Ṡ_i`` its rate (:func:`~multibody.model.joints.subspace_rate_into`).
Sueda's q̇ is v here: joints with nq ≠ nv (spherical, free, planar) take
the tangent velocity, and positions advance with ``model.integrate``.

Errata applied (notes §4): Alg. 2 line 7 — the off-diagonal J̇ block is
``ⁱ_pȦd J(p,a) + ⁱ_pAd J̇(p,a)`` with ``ⁱ_pȦd = ⁱ_pAd ad(φ_p) − ad(φ_i) ⁱ_pAd``
(typo 9, item 30); eq. 2.77–2.79 stiffness sign (S9): here K_r and D_r are
the non-negative stiffness and damping coefficients and the implicit matrix
is ``M_r + h D_r + h² K_r``; eq. 2.106 torque sign (S10) — in this
library's KKT convention ``M v̇ − Gᵀλ = b`` (DESIGN.md) the prescribed
joints' torque is ``+ᵖGᵀ ᵖλ``, i.e. ``−ᵖGᵀλ`` in the notes' ``M q̈ + Gᵀλ``;
eq. 2.110–2.112 garbled (typo 16): Alg. 6 is used; §2.12 gravity (typo 19):
rotated into the body frame, ``(h × Rᵀg; m Rᵀg)``.

Cost: the dense path (J, M_r, Cholesky) is O(n³) by design (REDMAX's point
is simplicity); the products of Alg. 5–6, Kim's hybrid dynamics (Alg. 9)
and the recursive inverse inertia (Alg. 10) are O(n). Loops over bodies are
Python (docs/redmax.md has timings).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from scipy.linalg import LinAlgError, cho_factor, cho_solve, solve

from .._typing import Array, ArrayLike
from ..constraints.loops import from_equality, loop_end
from ..dynamics.closed_loop import independent_rows
from ..errors import InputError, NonFiniteError, SimulationError
from ..forces import generalized_forces
from ..forces.joint import joint_spring_elements
from ..kinematics import forward_kinematics
from ..model import LoopJoint
from ..model.checks import as_vector
from ..model.joints import C_H, motion_subspace_into, subspace_rate_into
from ..spatial import se3
from .maximal import annihilator, loop_subspace, spatial_inertia
from .reduced import ReducedSystem

if TYPE_CHECKING:
    from ..model import Model


class Kinematics:
    """What REDMAX needs of one state, per body k = 0..n−1 (body k+1 of the
    model): ``Ad[k] = ⁱ_pAd`` (6×6), ``S[k]``, and with a velocity the body
    twists ``phi[k]`` (body frame, angular first), ``Sd[k] = Ṡ`` and
    ``Add[k] = ⁱ_pȦd = Ad ad(φ_p) − ad(φ_i) Ad`` (Alg. 2 erratum; zero
    φ_p for a child of the world); ``R[k]`` the world rotation of body k."""

    __slots__ = ("Ad", "S", "R", "phi", "Sd", "Add", "q", "v")


class RedmaxSystem:
    """Sueda's REDMAX equations of ``model`` (module docstring).

    ``gravity``: the model's gravity acts on every body. ``joint_damping``,
    ``joint_stiffness``: the model's viscous joint damping (``model.damping``,
    τ_D = −D_r v) and joint springs (``model.stiffness`` about
    ``model.spring_reference``, τ_K as
    :func:`~multibody.forces.joint.joint_spring_elements`) act in
    :meth:`acceleration` and, linearized with the diagonal ``D_r`` and
    ``K_r = diag(stiffness)``, in :meth:`step` (Sueda §2.5). Armature (rotor
    inertia) is added to the diagonal of M_r, as CRBA does.

    ``constraints``: a :class:`multibody.constraints.Constraints` whose rows
    act in reduced coordinates (G_r, Sueda §2.8); ``maximal_loops``: the
    model's loop joints (and MJCF connect/weld equalities) as maximal rows
    ``G_m`` on the body twists, pulled back as ``G_m J`` (eq. 2.93–2.101).
    Both may be given; their rows are stacked ``Ḡ = (G_r; G_m J)``."""

    def __init__(self, model, gravity=True, joint_damping=True, joint_stiffness=True, constraints=None,
                 maximal_loops=False):
        self.model = model
        self.gravity = bool(gravity)
        self.n = model.nbodies - 1
        self.nv = model.nv
        self.joints = tuple(model.joints[1:])
        self.parent = np.array([j.parent - 1 for j in self.joints], dtype=np.int64)  # −1: the world
        self.children = tuple([k for k in range(self.n) if self.parent[k] == c] for c in range(self.n))
        self.vs = tuple(j.v_slice for j in self.joints)
        self.inertia = np.array([spatial_inertia(model, i) for i in range(1, model.nbodies)]).reshape(self.n, 6, 6)
        self.armature = np.asarray(model.armature, dtype=float).copy()
        self.damping = model.damping.copy() if joint_damping else np.zeros(self.nv)
        self.stiffness = model.stiffness.copy() if joint_stiffness else np.zeros(self.nv)
        self._springs = joint_spring_elements(model) if joint_stiffness else ()
        self.constraints = constraints if constraints is not None and len(constraints) else None
        self._loops = []
        if maximal_loops:
            closing = list(model.loop_joints) + [from_equality(model, e) for e in model.equalities]
            for c in closing + list(model.couplings):
                if not isinstance(c, LoopJoint):
                    raise InputError(f"REDMAX's maximal rows take loop joints, not joint couplings (joint "
                                     f"'{c.joint}'); pass them as reduced rows (constraints=)")
                a, Pa = loop_end(model, c.body_a, c.placement_a, f"loop joint '{c.name}'")
                b, Pb = loop_end(model, c.body_b, c.placement_b, f"loop joint '{c.name}'")
                N = se3.Ad(se3.inverse(np.asarray(Pb, dtype=float))).T @ annihilator(loop_subspace(c))
                self._loops.append((a - 1, b - 1, N, c.name))
        self.maximal_rows = int(sum(N.shape[1] for _, _, N, _ in self._loops))

    # ------------------------------------------------------------------ input checks
    def _q(self, q):
        return as_vector(q, "q", self.model.nq, batch=False)

    def _v(self, v, name="v"):
        return as_vector(v, name, self.nv, batch=False)

    @staticmethod
    def _h(h):
        if not (np.isscalar(h) and np.isfinite(h) and h > 0):
            raise InputError(f"the time step h must be a finite number > 0, got {h!r}")
        return float(h)

    # ------------------------------------------------------------------ kinematics (Sueda §2.2, eq. 2.7–2.13)
    def kinematics(self, q, v=None):
        """:class:`Kinematics` of the state (q, v) (v None: positions only)."""
        q = self._q(q)
        tree = self.model._tree
        oMi = forward_kinematics(self.model, q)
        kin = Kinematics()
        kin.q = q
        kin.Ad = np.empty((self.n, 6, 6))
        kin.R = oMi[1:, :3, :3]
        S = []
        for k, j in enumerate(self.joints):
            i, p = j.child, self.parent[k]
            local = oMi[i] if p < 0 else se3.compose(se3.inverse(oMi[p + 1]), oMi[i])
            kin.Ad[k] = se3.Ad_inv(local)  # ⁱ_pAd = Ad(E_i⁻¹E_p): parent twists → child coordinates
            nvj = j.nv
            Sk = np.zeros((6, nvj))
            if nvj:
                motion_subspace_into(tree, i, q, Sk, 0)
            S.append(Sk)
        kin.S = tuple(S)
        kin.v = None
        if v is not None:
            v = self._v(v)
            kin.v = v
            kin.phi = np.zeros((self.n, 6))
            kin.Add = np.empty((self.n, 6, 6))
            Sd = []
            for k, j in enumerate(self.joints):
                p = self.parent[k]
                Sdk = np.zeros((6, kin.S[k].shape[1]))
                if Sdk.shape[1]:
                    subspace_rate_into(tree, j.child, q, v, Sdk, 0)
                Sd.append(Sdk)
                phi_p = kin.phi[p] if p >= 0 else np.zeros(6)
                kin.phi[k] = kin.Ad[k] @ phi_p + kin.S[k] @ v[self.vs[k]]
                # Alg. 2 erratum (notes item 30): ⁱ_pȦd = ⁱ_pAd ad(φ_p) − ad(φ_i) ⁱ_pAd
                kin.Add[k] = kin.Ad[k] @ se3.ad(phi_p) - se3.ad(kin.phi[k]) @ kin.Ad[k]
            kin.Sd = tuple(Sd)
        return kin

    def _kin(self, q, v=None, need_v=False):
        kin = q if isinstance(q, Kinematics) else self.kinematics(q, v)
        if need_v and kin.v is None:
            raise InputError("this quantity needs the velocity v (kinematics taken without it)")
        return kin

    # ------------------------------------------------------------------ the system Jacobian (§2.3, Alg. 1–2)
    def jacobian(self, q):
        """``J_mr`` (6n × nv): stacked body twists (body frames, angular first)
        per joint velocity, by Sueda Alg. 1 (forward pass, O(n²) entries):
        ``J(i,i) = S_i``, ``J(i,a) = ⁱ_pAd J(p,a)`` for the ancestors a."""
        kin = self._kin(q)
        J = np.zeros((self.n, 6, self.nv))
        for k in range(self.n):
            p = self.parent[k]
            if p >= 0:
                J[k] = kin.Ad[k] @ J[p]
            J[k][:, self.vs[k]] = kin.S[k]
        return J.reshape(6 * self.n, self.nv)

    def jacobian_dot(self, q, v):
        """``J̇_mr`` (6n × nv) at (q, v) by Sueda Alg. 2 with the line-7
        erratum: ``J̇(i,i) = Ṡ_i``, ``J̇(i,a) = ⁱ_pȦd J(p,a) + ⁱ_pAd J̇(p,a)``."""
        kin = self._kin(q, v, need_v=True)
        J = np.zeros((self.n, 6, self.nv))
        Jd = np.zeros((self.n, 6, self.nv))
        for k in range(self.n):
            p = self.parent[k]
            if p >= 0:
                J[k] = kin.Ad[k] @ J[p]
                Jd[k] = kin.Add[k] @ J[p] + kin.Ad[k] @ Jd[p]
            J[k][:, self.vs[k]] = kin.S[k]
            Jd[k][:, self.vs[k]] = kin.Sd[k]
        return Jd.reshape(6 * self.n, self.nv)

    def jacobian_products(self, q, v, x):
        """``(J x, J̇ x)``, each (n, 6) (body twists / their rates, body frames),
        by the O(n) forward pass of Sueda Alg. 5 (§2.10), without forming J:
        ``y_i = S_i x_i + ⁱ_pAd y_p``, ``z_i = Ṡ_i x_i + ⁱ_pAd z_p + ⁱ_pȦd y_p``.
        ``x`` has nv entries (joint velocity units)."""
        kin = self._kin(q, v, need_v=True)
        x = self._v(x, "x")
        y = np.zeros((self.n, 6))
        z = np.zeros((self.n, 6))
        for k in range(self.n):
            p = self.parent[k]
            xk = x[self.vs[k]]
            y[k] = kin.S[k] @ xk
            z[k] = kin.Sd[k] @ xk
            if p >= 0:
                y[k] += kin.Ad[k] @ y[p]
                z[k] += kin.Ad[k] @ z[p] + kin.Add[k] @ y[p]
        return y, z

    def jacobian_transpose_product(self, q, y):
        """``Jᵀ y`` (nv) for body wrenches ``y`` (n, 6; or 6n), body frames,
        by the O(n) backward pass of Sueda Alg. 6 (§2.10; eq. 2.111–2.112 are
        garbled): ``ȳ_i = y_i + Σ_c α_c``, ``α_i = ⁱ_pAdᵀ ȳ_i``, ``x_i = S_iᵀ ȳ_i``."""
        kin = self._kin(q)
        y = np.asarray(y, dtype=float)
        if y.shape not in ((self.n, 6), (6 * self.n,)):
            raise InputError(f"y must have shape ({self.n}, 6) or ({6 * self.n},) (one wrench per body), "
                             f"got {y.shape}")
        if not np.isfinite(y).all():
            raise NonFiniteError("y has a non-finite entry")
        ybar = y.reshape(self.n, 6).copy()
        x = np.zeros(self.nv)
        for k in range(self.n - 1, -1, -1):
            x[self.vs[k]] = kin.S[k].T @ ybar[k]
            p = self.parent[k]
            if p >= 0:
                ybar[p] += kin.Ad[k].T @ ybar[k]
        return x

    # ------------------------------------------------------------------ maximal quantities (§1.6)
    def maximal_mass_matrix(self):
        """``M_m`` (6n × 6n): block diagonal of the body inertias about their
        frame origins, body axes, angular first (kg, kg·m, kg·m²)."""
        M = np.zeros((6 * self.n, 6 * self.n))
        for k in range(self.n):
            M[6 * k:6 * k + 6, 6 * k:6 * k + 6] = self.inertia[k]
        return M

    def maximal_forces(self, q, v):
        """``f_m`` (n, 6): per body, ``ad(φ)ᵀ M φ`` (Sueda eq. 1.21) plus its
        weight as a body wrench about the body origin ``(h × Rᵀg; m Rᵀg)``
        (h = m c; notes typo 19: gravity rotated into the body frame)."""
        kin = self._kin(q, v, need_v=True)
        f = np.empty((self.n, 6))
        for k in range(self.n):
            f[k] = se3.ad(kin.phi[k]).T @ (self.inertia[k] @ kin.phi[k])
        if self.gravity:
            g = np.einsum("kji,j->ki", kin.R, self.model.gravity)
            h = self.model.tree[1:, C_H:C_H + 3]
            f[:, :3] += np.cross(h, g)
            f[:, 3:] += self.inertia[:, 3, 3][:, None] * g
        return f

    # ------------------------------------------------------------------ REDMAX (§2.3, eq. 2.18)
    def mass_matrix(self, q):
        """``M_r = Jᵀ M_m J`` (nv × nv) plus the armature on its diagonal."""
        J = self.jacobian(q).reshape(self.n, 6, self.nv)
        M = np.tensordot(J, np.matmul(self.inertia, J), axes=([0, 1], [0, 1]))
        M[np.diag_indices(self.nv)] += self.armature
        return M

    def _dense(self, kin):
        """(J, M_r, f_r) at one state: J by Alg. 1, J̇v by Alg. 5."""
        J = self.jacobian(kin).reshape(self.n, 6, self.nv)
        MJ = np.matmul(self.inertia, J)
        M = np.tensordot(J, MJ, axes=([0, 1], [0, 1]))
        M[np.diag_indices(self.nv)] += self.armature
        _, Jdv = self.jacobian_products(kin, None, kin.v)
        w = self.maximal_forces(kin, None) - np.einsum("kab,kb->ka", self.inertia, Jdv)
        return J, M, np.tensordot(J, w, axes=([0, 1], [0, 1]))

    def forces(self, q, v):
        """``f_r = Jᵀ (f_m − M_m J̇ v)`` (nv): the generalized gravity,
        Coriolis and centrifugal forces (minus the bias of RNEA at v̇ = 0)."""
        return self._dense(self.kinematics(q, v))[2]

    def passive_forces(self, q, v):
        """``τ_K + τ_D`` (nv): the model's joint springs ``τ_K`` (as
        :func:`~multibody.forces.joint.joint_spring_elements`) and viscous
        damping ``τ_D = −D_r v`` (Sueda §2.5, eq. 2.72–2.73), as enabled."""
        tau = -self.damping * v
        if self._springs:
            tau = tau + generalized_forces(self._springs, self.model, q, v)[0]
        return tau

    def _cholesky(self, M):
        try:
            return cho_factor(M)
        except LinAlgError:
            raise SimulationError(f"the REDMAX mass matrix M_r is not positive definite ({self._bad_pivot(M)})") \
                from None

    def _bad_pivot(self, M):
        """The joint of the first coordinate whose leading block of M is not
        positive definite (error messages only)."""
        lo, hi = 0, self.nv  # invariant: block lo PD (or empty), block hi not
        while hi - lo > 1:
            mid = (lo + hi) // 2
            try:
                np.linalg.cholesky(M[:mid, :mid])
                lo = mid
            except np.linalg.LinAlgError:
                hi = mid
        for j in self.joints:
            if j.v_slice.start <= hi - 1 < j.v_slice.stop:
                return f"at joint '{j.name}', coordinate {hi - 1 - j.v_slice.start}"
        return f"at coordinate {hi - 1}"

    def acceleration(self, q, v, tau):
        """``v̇ = M_r⁻¹ (f_r + τ + τ_K + τ_D)`` (nv; Sueda eq. 2.21), dense
        Cholesky, O(n³). Without the model's constraints; see
        :meth:`constrained_acceleration`. ``tau``: joint forces (N·m, N; free
        joints a body-frame wrench)."""
        kin = self.kinematics(q, v)
        tau = self._v(tau, "tau")
        _, M, f = self._dense(kin)
        return cho_solve(self._cholesky(M), f + tau + self.passive_forces(kin.q, kin.v))

    # ------------------------------------------------------------------ linearly implicit Euler (§2.5)
    def step(self, q, v, tau, h, method="dense"):
        """One linearly implicit Euler step (Sueda §2.5, eq. 2.77 with the
        stiffness sign of S9): ``(M_r + h D_r + h² K_r) v⁺ = M_r v + h (τ_K +
        f_r + τ)``, then ``q⁺ = model.integrate(q, v⁺, h)``. With constraints
        the velocity-level KKT system ``[A −Ḡᵀ; Ḡ 0][v⁺; λ] = [b; 0]``
        (eq. 2.101, dependent rows dropped). ``method="recursive"`` solves
        the unconstrained system in O(n) by Alg. 5–6 and Alg. 10 instead.
        Returns ``(q⁺, v⁺)``."""
        h = self._h(h)
        if method not in ("dense", "recursive"):
            raise InputError(f"method must be 'dense' or 'recursive', got {method!r}")
        kin = self.kinematics(q, v)
        q, v = kin.q, kin.v
        tau = self._v(tau, "tau")
        tau_K = self.passive_forces(q, np.zeros(self.nv))  # springs only: damping is implicit
        Dh = h * self.damping + h * h * self.stiffness
        if method == "recursive":
            if self.constraints is not None or self._loops:
                raise InputError("method='recursive' takes no constraints (use the dense KKT step)")
            rhs = h * (tau_K + self.recursive_forces(kin) + tau) - Dh * v
            v1 = v + self.inverse_inertia_times(kin, rhs, h)
        else:
            _, M, f = self._dense(kin)
            A = M + np.diag(Dh)
            b = M @ v + h * (tau_K + f + tau)
            G, _ = self.constraint_rows(kin)
            if G.shape[0]:
                v1 = self._kkt(A, G, b, np.zeros(G.shape[0]))[0]
            else:
                v1 = cho_solve(self._cholesky(A), b)
        return self.model.integrate(q, v1, h), v1

    def recursive_forces(self, q, v=None):
        """``f_r = Jᵀ (f_m − M_m J̇ v)`` (nv) in O(n) by Alg. 5 and Alg. 6."""
        kin = self._kin(q, v, need_v=True)
        _, Jdv = self.jacobian_products(kin, None, kin.v)
        w = self.maximal_forces(kin, None) - np.einsum("kab,kb->ka", self.inertia, Jdv)
        return self.jacobian_transpose_product(kin, w)

    # ------------------------------------------------------------------ constraints (§2.8)
    def maximal_constraint_rows(self, q, v=None):
        """``(G_m, η_m)``: the maximal loop rows (rows × 6n) on the body
        twists, ``Nᵀ(φ_b − Ad(E_b⁻¹E_a) φ_a) = 0`` per loop joint (N the
        wrenches doing no work on its motion subspace, in frame B), and with
        a velocity the right side of ``G_m φ̇ = η_m``, ``η_m = −Nᵀ ad(φ_b)
        Ad φ_a`` (the rows' rate with N fixed in B; cf. eq. 2.97)."""
        kin = self._kin(q, v)
        G = np.zeros((self.maximal_rows, self.n, 6))
        eta = np.zeros(self.maximal_rows) if kin.v is not None else None
        oMi = None
        r = 0
        for a, b, N, _ in self._loops:
            if oMi is None:
                oMi = forward_kinematics(self.model, kin.q)
            m = N.shape[1]
            A = se3.Ad(se3.compose(se3.inverse(oMi[b + 1]), oMi[a + 1]))  # world: oMi[0] = 1
            if b >= 0:
                G[r:r + m, b] += N.T
            if a >= 0:
                G[r:r + m, a] -= N.T @ A
                if eta is not None and b >= 0:
                    eta[r:r + m] = -N.T @ (se3.ad(kin.phi[b]) @ (A @ kin.phi[a]))
            r += m
        return G.reshape(self.maximal_rows, 6 * self.n), eta

    def constraint_rows(self, q, v=None):
        """``(Ḡ, ḡ)``: the stacked constraint rows ``Ḡ = (G_r; G_m J)``
        (rows × nv, Sueda §2.8) and with a velocity the right side of the
        acceleration rows ``Ḡ v̇ = ḡ = −Ḡ̇ v``: ``k`` of the reduced rows
        (:meth:`~multibody.constraints.Constraints.evaluate`) and ``η_m −
        G_m J̇ v`` of the maximal ones. No rows: shapes (0, nv), (0,)."""
        kin = self._kin(q, v)
        with_v = kin.v is not None
        Gs, gs = [np.zeros((0, self.nv))], [np.zeros(0)]
        if self.constraints is not None:
            _, Gr, k = self.constraints.evaluate(kin.q, kin.v)
            Gs.append(Gr)
            gs.append(k if with_v else np.zeros(len(Gr)))
        if self._loops:
            Gm, eta = self.maximal_constraint_rows(kin)
            Gs.append(Gm @ self.jacobian(kin))
            if with_v:
                _, Jdv = self.jacobian_products(kin, None, kin.v)
                gs.append(eta - Gm @ Jdv.ravel())
            else:
                gs.append(np.zeros(len(Gm)))
        return np.vstack(Gs), (np.concatenate(gs) if with_v else None)

    def _kkt(self, A, G, b, g, keep=0):
        """``(x, λ)`` of ``[A −Gᵀ; G 0][x; λ] = [b; g]`` (DESIGN.md sign) with
        G's dependent rows dropped (their λ = 0); the first ``keep`` rows
        (prescribed coordinates) are always kept."""
        rows = independent_rows(G)
        if keep and not np.all(np.isin(np.arange(keep), rows)):
            # a prescribed row must stay; the constraint rows are reduced on their own (if they
            # contradict the prescription the solve below is singular)
            rows = np.sort(np.r_[np.arange(keep), independent_rows(G[keep:]) + keep])
        n, m = A.shape[0], len(rows)
        K = np.zeros((n + m, n + m))
        K[:n, :n], K[:n, n:], K[n:, :n] = A, -G[rows].T, G[rows]
        try:
            x = solve(K, np.concatenate([b, g[rows]]))
        except LinAlgError:
            raise SimulationError("the REDMAX KKT system is singular (constraint rows and prescribed joints "
                                  "that contradict each other?)") from None
        lam = np.zeros(len(G))
        lam[rows] = x[n:]
        return x[:n], lam

    def constrained_acceleration(self, q, v, tau):
        """``(v̇, λ)`` of the acceleration-level KKT system (Sueda eq. 2.99
        with the stacked rows of §2.8, in DESIGN.md's sign)
        ``[M_r −Ḡᵀ; Ḡ 0][v̇; λ] = [f_r + τ + τ_K + τ_D; −Ḡ̇ v]``; λ per row of
        :meth:`constraint_rows` (0 for dependent rows). No stabilization."""
        kin = self.kinematics(q, v)
        tau = self._v(tau, "tau")
        _, M, f = self._dense(kin)
        G, g = self.constraint_rows(kin)
        return self._kkt(M, G, f + tau + self.passive_forces(kin.q, kin.v), g)

    # ------------------------------------------------------------------ hybrid dynamics (§2.9, §2.12)
    def _prescribed(self, prescribed):
        """(mask over nv, q̈ given (nv)) of ``prescribed``: {joint name: its
        nv accelerations}."""
        if not isinstance(prescribed, dict):
            raise InputError(f"prescribed must be a dict {{joint name: accelerations}}, got "
                             f"{type(prescribed).__name__}")
        mask = np.zeros(self.nv, dtype=bool)
        qdd = np.zeros(self.nv)
        names = {j.name: j for j in self.joints}
        for name, value in prescribed.items():
            if name not in names:
                raise InputError(f"prescribed joint '{name}' is not a joint of the model (joints: "
                                 f"{', '.join(names)})")
            j = names[name]
            a = np.asarray(value, dtype=float).reshape(-1) if np.ndim(value) <= 1 else np.asarray(value)
            if a.shape != (j.nv,):
                raise InputError(f"the prescribed acceleration of joint '{name}' must have shape ({j.nv},), "
                                 f"got {np.shape(value)}")
            if not np.isfinite(a).all():
                raise NonFiniteError(f"the prescribed acceleration of joint '{name}' is not finite")
            mask[j.v_slice] = True
            qdd[j.v_slice] = a
        return mask, qdd

    def hybrid_dynamics(self, q, v, tau, prescribed):
        """Hybrid dynamics by the dense KKT system (Sueda §2.9, eq.
        2.106–2.107): the prescribed joints' rows ``ᵖG v̇ = ᵖq̈`` stacked in
        front of the constraint rows. ``prescribed``: {joint name: its nv
        accelerations}; ``tau``: the free joints' forces (the prescribed
        joints' entries are added to their actuation). Returns ``(v̇, τ)``,
        complete nv vectors: the prescribed accelerations copied, the free
        ones computed, and τ the joint forces, at the prescribed joints
        ``τ + ᵖGᵀ ᵖλ`` (sign erratum S10 in this library's convention), so
        that without constraints ``rnea(q, v, v̇) = τ + τ_K + τ_D``."""
        kin = self.kinematics(q, v)
        tau = self._v(tau, "tau")
        mask, given = self._prescribed(prescribed)
        _, M, f = self._dense(kin)
        G, g = self.constraint_rows(kin)
        P = np.eye(self.nv)[mask]
        acc, lam = self._kkt(M, np.vstack([P, G]), f + tau + self.passive_forces(kin.q, kin.v),
                             np.concatenate([given[mask], g]), keep=int(mask.sum()))
        out = tau.copy()
        out[mask] += lam[:int(mask.sum())]
        acc[mask] = given[mask]  # exact copies (the solve reproduces them to round-off)
        return acc, out

    def recursive_hybrid_dynamics(self, q, v, tau, prescribed=None):
        """Kim's recursive hybrid dynamics (Sueda §2.12, Alg. 9), O(n), no
        constraints: free joints take their forces ``tau`` (+ τ_K + τ_D),
        prescribed joints ({joint name: accelerations}, or None for plain
        forward dynamics) their accelerations. Body frames, angular first;
        gravity as the body wrench ``(h × Rᵀg; m Rᵀg)`` (typo 19); armature
        in Ψ and in the prescribed joints' torque ``Sᵀ F + a q̈``. Returns
        ``(v̇, τ)`` as :meth:`hybrid_dynamics`."""
        kin = self.kinematics(q, v)
        tau_given = self._v(tau, "tau")
        passive = self.passive_forces(kin.q, kin.v)
        tau = tau_given + passive
        mask, given = self._prescribed({} if prescribed is None else prescribed)
        n = self.n
        f_m = self.maximal_forces(kin, None)  # ad(V)ᵀMV + F_ext: B̂ starts at its negative
        eta = np.empty((n, 6))
        Mh = self.inertia.copy()
        Bh = -f_m
        Pi, beta, Psi = [None] * n, [None] * n, [None] * n
        for k in range(n):  # forward: η_j = ad(V_j) S q̇ + Ṡ q̇
            vk = kin.v[self.vs[k]]
            eta[k] = se3.ad(kin.phi[k]) @ (kin.S[k] @ vk) + kin.Sd[k] @ vk
        for k in range(n - 1, -1, -1):  # backward: articulated inertias
            S, vs = kin.S[k], self.vs[k]
            if mask[vs].all():
                Pi[k] = Mh[k]
                beta[k] = Bh[k] + Mh[k] @ (eta[k] + S @ given[vs])
            else:
                MS = Mh[k] @ S
                D = S.T @ MS + np.diag(self.armature[vs])
                Psi[k] = self._joint_inverse(D, k)
                Pi[k] = Mh[k] - MS @ Psi[k] @ MS.T
                beta[k] = Bh[k] + Mh[k] @ eta[k] + MS @ (Psi[k] @ (tau[vs] - S.T @ (Mh[k] @ eta[k] + Bh[k])))
            p = self.parent[k]
            if p >= 0:
                Ad = kin.Ad[k]
                Mh[p] += Ad.T @ Pi[k] @ Ad
                Bh[p] += Ad.T @ beta[k]
        acc = given.copy()
        out = tau_given.copy()
        Vd = np.zeros((n, 6))
        for k in range(n):  # forward: accelerations and the prescribed joints' forces
            S, vs, p = kin.S[k], self.vs[k], self.parent[k]
            a_p = kin.Ad[k] @ Vd[p] if p >= 0 else np.zeros(6)
            if Psi[k] is not None:
                acc[vs] = Psi[k] @ (tau[vs] - S.T @ (Mh[k] @ (a_p + eta[k])) - S.T @ Bh[k])
            Vd[k] = a_p + S @ acc[vs] + eta[k]
            if Psi[k] is None:
                # the joint's whole force, less what its spring and damper give
                out[vs] = S.T @ (Mh[k] @ Vd[k] + Bh[k]) + self.armature[vs] * acc[vs] - passive[vs]
        return acc, out

    def _joint_inverse(self, D, k):
        """``D⁻¹`` of one joint's ``SᵀM̂S (+ terms)``; SimulationError naming the
        joint when D is not positive definite."""
        try:
            c = cho_factor(D)
        except LinAlgError:
            raise SimulationError(f"joint '{self.joints[k].name}': its articulated inertia SᵀM̂S is not positive "
                                  f"definite (a massless subtree?)") from None
        return cho_solve(c, np.eye(len(D)))

    def inverse_inertia_times(self, q, x, h=0.0):
        """``y = (M_r + h D_r + h² K_r)⁻¹ x`` by the recursive forward
        dynamics of Sueda §2.13 (Alg. 10), O(n) per right-hand side (no
        matrix formed): ``x`` (nv,) or (nv, m) columns. ``h = 0``: ``M_r⁻¹
        x``. The P terms of Alg. 10 here are the diagonal joint terms ``h D_r
        + h² K_r`` (D_r, K_r ≥ 0; S9) and the armature."""
        kin = self._kin(q)
        x = np.asarray(x, dtype=float)
        if x.ndim not in (1, 2) or x.shape[0] != self.nv:
            raise InputError(f"x must have shape ({self.nv},) or ({self.nv}, m), got {x.shape}")
        if not np.isfinite(x).all():
            raise NonFiniteError("x has a non-finite entry")
        if not (np.isfinite(h) and h >= 0):
            raise InputError(f"h must be a finite number >= 0, got {h!r}")
        X = x.reshape(self.nv, -1)
        m = X.shape[1]
        n = self.n
        extra = self.armature + h * self.damping + h * h * self.stiffness
        Mh = self.inertia.copy()
        Psi, MS = [None] * n, [None] * n
        for k in range(n - 1, -1, -1):  # preprocess (leaf to root)
            S, vs = kin.S[k], self.vs[k]
            MS[k] = Mh[k] @ S
            Psi[k] = self._joint_inverse(S.T @ MS[k] + np.diag(extra[vs]), k)
            p = self.parent[k]
            if p >= 0:
                Pi = Mh[k] - MS[k] @ Psi[k] @ MS[k].T
                Mh[p] += kin.Ad[k].T @ Pi @ kin.Ad[k]
        Bh = np.zeros((n, 6, m))
        for k in range(n - 1, -1, -1):  # backward: β = B̂ + M̂SΨ(x − SᵀB̂)
            S, vs, p = kin.S[k], self.vs[k], self.parent[k]
            if p >= 0:
                beta = Bh[k] + MS[k] @ (Psi[k] @ (X[vs] - S.T @ Bh[k]))
                Bh[p] += kin.Ad[k].T @ beta
        Y = np.empty((self.nv, m))
        Vd = np.zeros((n, 6, m))
        for k in range(n):  # forward: y = Ψ(x − SᵀM̂ Ad V̇_p − SᵀB̂), V̇ = Ad V̇_p + S y
            S, vs, p = kin.S[k], self.vs[k], self.parent[k]
            a_p = kin.Ad[k] @ Vd[p] if p >= 0 else np.zeros((6, m))
            Y[vs] = Psi[k] @ (X[vs] - MS[k].T @ a_p - S.T @ Bh[k])
            Vd[k] = a_p + S @ Y[vs]
        return Y.reshape(x.shape)


class HyperReducedSystem:
    """Hyper-reduced coordinates (Sueda §2.6, eq. 2.80–2.83): the joint
    velocities are ``v = T v_R`` for a constant ``T = J_rR`` (nv × n_R, full
    column rank), e.g. a column of ones that moves all joint angles
    together. ``M_R = Tᵀ M_r T``, ``f_R = Tᵀ f_r`` (J̇_rR = 0), the joint
    springs and dampers ``Tᵀ K_r T``, ``Tᵀ D_r T``, generalized forces
    ``τ_R`` conjugate to v_R (``τ = T τ_R`` does the same work)."""

    def __init__(self, system: RedmaxSystem, T: ArrayLike) -> None:
        T = np.asarray(T, dtype=float)
        nv = system.nv
        if T.ndim != 2 or T.shape[0] != nv or T.shape[1] == 0:
            raise InputError(f"J_rR must have shape ({nv}, n_R) with n_R >= 1, got {T.shape}")
        if not np.isfinite(T).all():
            raise NonFiniteError("J_rR has a non-finite entry")
        if np.linalg.matrix_rank(T) < T.shape[1]:
            raise InputError(f"J_rR ({T.shape[0]} × {T.shape[1]}) must have full column rank (its columns are "
                             f"dependent, M_R would be singular)")
        if system.constraints is not None or system._loops:
            raise InputError("hyper-reduced coordinates take a system without constraints (J_rR is the "
                             "constraint: v = J_rR v_R)")
        self.system, self.T = system, T
        self.nR = T.shape[1]

    def _vR(self, x: ArrayLike, name: str) -> Array:
        return as_vector(x, name, self.nR, batch=False)

    def mass_matrix(self, q: ArrayLike) -> Array:
        """``M_R = J_rRᵀ M_r J_rR`` (n_R × n_R)."""
        return self.T.T @ self.system.mass_matrix(q) @ self.T

    def forces(self, q: ArrayLike, vR: ArrayLike) -> Array:
        """``f_R = J_rRᵀ (f_r + τ_K + τ_D)`` at v = J_rR v_R."""
        v = self.T @ self._vR(vR, "v_R")
        return self.T.T @ (self.system.forces(q, v) + self.system.passive_forces(q, v))

    def acceleration(self, q: ArrayLike, vR: ArrayLike, tauR: ArrayLike) -> np.ndarray:
        """``v̇_R = M_R⁻¹ (f_R + τ_R)``."""
        tauR = self._vR(tauR, "tau_R")
        return np.linalg.solve(self.mass_matrix(q), self.forces(q, vR) + tauR)

    def step(self, q: ArrayLike, vR: ArrayLike, tauR: ArrayLike, h: float) -> tuple[Array, Array]:
        """The linearly implicit Euler step of §2.5 in the hyper-reduced
        coordinates: ``(M_R + h TᵀD_rT + h² TᵀK_rT) v_R⁺ = M_R v_R + h Tᵀ(τ_K
        + f_r) + h τ_R``, ``q⁺ = model.integrate(q, T v_R⁺, h)``. Returns
        ``(q⁺, v_R⁺)``."""
        s, T = self.system, self.T
        h = s._h(h)
        vR = self._vR(vR, "v_R")
        tauR = self._vR(tauR, "tau_R")
        v = T @ vR
        _, M, f = s._dense(s.kinematics(q, v))
        MR = T.T @ M @ T
        A = MR + T.T @ np.diag(h * s.damping + h * h * s.stiffness) @ T
        b = MR @ vR + h * (T.T @ (s.passive_forces(q, np.zeros(s.nv)) + f) + tauR)
        v1 = np.linalg.solve(A, b)
        return s.model.integrate(q, T @ v1, h), v1


class RedmaxFormulation(ReducedSystem):
    """The simulator's ``formulation="redmax"``: a
    :class:`~multibody.formulations.ReducedSystem` (force elements, joint
    damping, loops, soft constraints — everything the integrators ask of a
    system) whose dynamics come from REDMAX instead of ABA/CRBA/RNEA:
    ``M_r = JᵀM_mJ`` and ``f_r = Jᵀ(f_m − M_mJ̇v)`` (Sueda eq. 2.18,
    :class:`RedmaxSystem`), dense, O(n³).

    * ``acceleration``: ``M_r⁻¹(f_r + τ + f)``; with hard constraints the
      acceleration-level KKT system ``[M_r −Gᵀ; G 0]`` with the Baumgarte
      terms of :class:`ReducedSystem` (``k − 2ωGv − ω²φ``).
    * ``linearization``: ``(M_r, τ + f + f_r, K, D)`` with K, D the force
      elements' and the joint damping's, gravity explicit in f_r — so the
      ``implicit_euler`` integrator is Sueda's linearly implicit Euler
      ``(M_r + hD_r + h²K_r) v⁺ = M_r v + h(τ_K + f_r + τ)`` (§2.5, eq. 2.77
      with the stiffness sign of erratum S9) for the joint springs and
      dampers, and its extension to every force element.
    * ``constrained_semi_implicit_euler``: the velocity-level KKT system
      ``[M_r −Gᵀ; G 0][v⁺; λ] = [M_r v + h(f_r + τ + f); 0]`` (Sueda §2.8).

    Not offered: the momentum form (``symplectic_euler``), which needs
    ∂T/∂q (the simulator refuses it for this formulation)."""

    def __init__(self, model: Model, *args: Any, **kwargs: Any) -> None:
        super().__init__(model, *args, **kwargs)
        self.redmax = RedmaxSystem(model, gravity=self.gravity, joint_damping=False, joint_stiffness=False)

    def _dynamics(self, q, v):
        """(M_r, f_r) at (q, v)."""
        _, M, f = self.redmax._dense(self.redmax.kinematics(q, v))
        return M, f

    def acceleration(self, t: float, q: Array, v: Array, tau: Array) -> Array:
        f, _, _ = self.element_forces(t, q, v)
        if self.soft:
            f = f + self.constraint_force(q, v)
        M, fr = self._dynamics(q, v)
        b = fr + tau + f
        if self.constraints is not None and not self.soft:
            phi, G, k = self.constraints.evaluate(q, v)
            w = self.baumgarte
            return self.redmax._kkt(M, G, b, k - 2.0 * w * (G @ v) - w * w * phi)[0]
        return cho_solve(self.redmax._cholesky(M), b)

    def constrained_semi_implicit_euler(self, t: float, q: Array, v: Array, tau: Array, dt: float
                                        ) -> tuple[Array, Array]:
        f, _, _ = self.element_forces(t, q, v)
        M, fr = self._dynamics(q, v)
        G = self.constraints.evaluate(q)[1]
        v1 = self.redmax._kkt(M, G, M @ v + dt * (fr + tau + f), np.zeros(len(G)))[0]
        return self.model._integrate(q, v1, dt), v1

    def net_force(self, t: float, q: Array, v: Array, tau: Array) -> tuple[Array, Array]:
        f, _, _ = self.element_forces(t, q, v)
        M, fr = self._dynamics(q, v)
        return M, tau + f + fr

    def linearization(self, t: float, q: Array, v: Array, tau: Array) -> tuple[Array, Array, Array, Array]:
        K: Any  # arrays (jacobians=True)
        D: Any
        f, K, D = self.element_forces(t, q, v, jacobians=True)
        M, fr = self._dynamics(q, v)
        return M, tau + f + fr, K, D

    def mass_matrix(self, q: Array) -> Array:
        return self.redmax.mass_matrix(q)

    def inverse_mass_matrix(self, q: Array) -> Array:
        M = self.redmax.mass_matrix(q)
        return cho_solve(self.redmax._cholesky(M), np.eye(len(M)))

    def applied_forces(self, t, q, v, tau):
        raise InputError("the REDMAX formulation does not offer the momentum form (symplectic_euler: it needs "
                         "∂T/∂q); use semi_implicit_euler or implicit_euler")

    def kinetic_gradient(self, q, v):
        """Not offered: raises the InputError of :meth:`applied_forces` (the
        momentum form's ∂T/∂q)."""
        return self.applied_forces(None, q, v, None)
