"""BISP: joint friction by Bilateral Staggered Projections on REDMAX (Sueda
§2.11, eq. 2.115–2.120, Alg. 8; notes/seed-001.md item 40, E14, errata S8,
typos 17 and 18; docs/redmax.md, "BISP").

Each joint with a :class:`JointFriction` gets *implicit* contact points at
fixed places of an assumed joint geometry (no collision detection). The
REDMAX step already keeps the joints together; BISP recovers the joint
reaction impulses from it (eq. 2.115–2.117), explains each joint's reaction
by the normal impulses α of its contact points (eq. 2.118) and bounds the
friction impulses β at those points by ``|β| ≤ μ‖α‖`` (SP's friction
projection, eq. 2.114), alternating the two until the reactions stop
changing (Alg. 8). Everything is in the body frames of REDMAX (angular
first; a body frame is its joint's moving frame, so a joint's reaction is a
wrench on its child about the joint origin).

Geometry rules (``a`` the joint axis in the child frame; the contact
geometry moves with the child and is centred at the joint origin):

* revolute, helical — a **pin (cylinder)** of radius ``radius`` and length
  ``length`` along ``a``: at each end ``±(length/2) a`` two normal
  directions ``u, w`` spanning the plane ⟂ a (normal wrenches ``(p × n;
  n)``), so the pair of ends carries the radial forces and the moments ⟂ a
  (not the axial thrust). The friction at end e is a force β_e tangent to
  the rotation at the radius, i.e. the torque ``radius·β_e`` about a
  (wrench ``(radius·a; 0)``), with ``|β_e| ≤ μ‖α_e‖``, ``α_e ∈ R²`` the
  end's normal impulse (its magnitude is the radial load, whatever its
  direction). A horizontal axle carrying a weight m g centred between the
  ends holds a torque up to ``μ m g radius``. For the helical joint the
  friction acts on the rotation only (the thread's lead is not modelled).
* prismatic — a **sliding block** of length ``length`` along a: the same
  two ends × two normals ⟂ a (lateral forces and the moments ⟂ a; not the
  torsion about a), friction along a, wrench ``(0; a)`` per end,
  ``|β_e| ≤ μ‖α_e‖``: a horizontal slider carrying m g holds up to μ m g.
* spherical, exp_spherical — a **ball** of radius ``radius``: one contact
  whose normal impulse is the 3-vector α (the joint force), friction the
  torque ``radius·β`` with ``β ∈ R³``, ``‖β‖ ≤ μ‖α‖`` (an isotropic socket).
* any other joint type: :class:`~multibody.errors.InputError` naming the
  joint (no rule chosen).

Which M_i in eq. 2.118: the child body's 6×6 spatial inertia (about its
frame origin, the block of M_m of the body that owns the joint — Sueda
pairs joint i with body i); it must be positive definite. ε: eq. 2.118's
regularization is ``ε = epsilon · max diag(N_i M_i⁻¹ N_iᵀ)`` (relative,
default 1e-12): the rules above give N_i of full row rank except a
zero-length pin (both ends coincide), where ε picks the smallest impulses
as Sueda intends; otherwise it only guards the solve.

Errata applied: eq. 2.117's ``M_m J q̇`` is ``M_m J̇ q̇`` (typo 17), here
``f_r = Jᵀ(f_m − M_m J̇ v)`` of REDMAX; eq. 2.118's sign (S8): with
``f_α = −Nᵀα/h``, ``α = −h (N M⁻¹ Nᵀ + εI)⁻¹ N M⁻¹ f_α``, and the bound
uses ``‖α_e‖`` (bilateral α may have either sign); Alg. 8 line 26 (typo
18): ``q̇_r = q̇_r^prev + h A⁻¹(Jᵀf_m + τ + τ_K + Jᵀ(f_α + f_β)) −
A⁻¹(hD_r + h²K_r)q̇_r^prev`` with ``Jᵀf_m`` **without** the quadratic
velocity vector — ``Jᵀf_α`` already equals ``−JᵀM_mJ̇v``, so adding it
again counts it twice (eq. 2.120 does). With μ = 0 the step is REDMAX's.

Choices beyond the text:

* Joint forces (τ, the joint springs τ_K, the implicit damping and
  stiffness ``−(D_r + hK_r)v⁺`` of REDMAX's linearly implicit step, the
  armature's ``−a Δv/h``) act in the unconstrained maximal solve as the
  equal and opposite wrench pair ``w = S⁺ᵀτ`` on the child, ``−ⁱ_pAdᵀ w``
  on the parent, so that ``Jᵀf_α = −JᵀM_mJ̇v`` exactly and the reactions
  hold no actuation; A = ``M_r + hD_r + h²K_r`` replaces M_r in eq. 2.117
  and line 26 (REDMAX's §2.5 step).
* The friction QP (eq. 2.114) is posed by default on the *reduced*
  response ``W = T_r A⁻¹ T_rᵀ``, ``T_r = T J`` (the joints' true response
  to their friction): for a fixed α it is then exact and the staggering only
  couples α and β. ``operator="maximal"`` takes eq. 2.114 literally with the
  free bodies' ``T M_m⁻¹ Tᵀ``; both have the same fixed points, but the
  free-body response is larger than the constrained one (by I_pivot/I_com
  for a pendulum), which under-relaxes the iteration (docs: measured).
* Alg. 7's warm start: the last step's β starts the next (``warm_start``).
* The friction QP is solved by clarabel (the reference solver of
  ``solvers.qp``), then *polished*: the variables of the groups strictly
  inside their bound (sticking) are re-solved exactly for the active set
  clarabel found, and kept if feasible and not worse, so that a sticking
  joint's velocity is zero to round-off rather than to clarabel's 1e-9.

Not implemented: the external-constraint variant (§2.11.1, eq.
2.119–2.120): a system with constraint rows is refused.
"""
from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
from scipy import sparse
from scipy.linalg import cho_solve

from .._typing import Array, ArrayLike
from ..errors import InputError, NonFiniteError, SimulationWarning
from ..solvers import qp
from .redmax import RedmaxSystem

CYLINDER = ("revolute", "helical")
BLOCK = ("prismatic",)
BALL = ("spherical", "exp_spherical")
RULES = CYLINDER + BLOCK + BALL


@dataclass(frozen=True)
class JointFriction:
    """Coulomb friction of one joint (module docstring for the geometry):
    ``mu`` ≥ 0; ``radius`` (m) of the pin (revolute, helical) or the ball
    (spherical); ``length`` (m) of the pin or of the sliding block
    (prismatic), the distance between its two ends of contact points."""
    mu: float
    radius: float | None = None
    length: float | None = None


class BispResult(NamedTuple):
    """What the last :meth:`BispSystem.step` solved, per friction joint
    (by name): ``alpha`` its normal impulses (N·s; the pin and block: 2 per
    end, ends −, +; the ball: 3), ``beta`` its friction impulses (the pin
    and block: one per end; the ball: 3), ``bound`` the bound μ‖α_e‖ per
    contact group used by the last friction QP; ``reaction`` the joint
    reaction force f_αi distributed leaf to root (a wrench on the child,
    child frame, N and N·m); the number of Alg. 8 rounds, whether
    ``‖Δf_α‖_{M⁻¹} ≤ tol ‖f_α‖_{M⁻¹}`` was reached, and the constrained
    velocity of eq. 2.117 at the last round."""
    alpha: dict
    beta: dict
    bound: dict
    reaction: dict
    iterations: int
    converged: bool
    v_con: np.ndarray


def _real(value, what, name):
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise InputError(f"joint '{name}': {what} must be a real number, got {value!r}")
    value = float(value)
    if not math.isfinite(value):
        raise NonFiniteError(f"joint '{name}': {what} must be finite, got {value!r}")
    if value < 0:
        raise InputError(f"joint '{name}': {what} must be >= 0, got {value!r}")
    return value


def _perpendicular(a):
    """Two unit vectors u, w with (u, w, a) right-handed orthonormal."""
    e = np.eye(3)[int(np.argmin(np.abs(a)))]
    u = np.cross(a, e)
    u /= np.linalg.norm(u)
    return u, np.cross(a, u)


def _ball(Wg, bg, Rg):
    """``argmin ½xᵀWx − bᵀx`` over ``‖x‖ ≤ R`` (W symmetric PSD, small):
    the unconstrained minimizer if inside, else ``x = (W + λI)⁻¹ b`` with
    ``‖x(λ)‖ = R``, λ > 0 by safeguarded Newton on ``1/‖x(λ)‖ − 1/R``."""
    d, Q = np.linalg.eigh(0.5 * (Wg + Wg.T))
    c = Q.T @ bg
    if d.min() > 0:
        x = Q @ (c / d)
        if np.linalg.norm(x) <= Rg:
            return x
    # Newton on 1/‖x(λ)‖ − 1/R (Moré–Sorensen: nearly linear in λ), never left of the last λ with ‖x‖ > R
    lo = max(0.0, -d.min())
    lam = lo + 1e-300
    for _ in range(100):
        x = c / (d + lam)
        nx = np.linalg.norm(x)
        if abs(nx - Rg) <= 1e-15 * Rg:
            break
        if nx > Rg:
            lo = lam
        dphi = np.sum(c * c / (d + lam) ** 3) / nx ** 3
        step = lam - (1.0 / nx - 1.0 / Rg) / dphi if dphi > 0 else np.inf
        lam = step if step > lo and np.isfinite(step) else 2.0 * lo + 1e-300
    hi = lam
    x = Q @ (c / (d + hi))
    return x * min(1.0, Rg / max(np.linalg.norm(x), 1e-300))


class _Contacts:
    """One friction joint's implicit contacts: N (m × 6) normal wrench rows,
    Tc (p × 6) friction wrench rows, both on the child in its frame, groups
    [(normal rows, friction rows, "box" | "soc")] and the bounds' μ."""
    __slots__ = ("k", "name", "mu", "N", "Tc", "groups", "Minv", "eps", "rows", "vars")


class BispSystem:
    """Joint friction by BISP (Sueda §2.11, Alg. 8) on a
    :class:`~multibody.formulations.RedmaxSystem` (module docstring).

    ``friction``: {joint name: :class:`JointFriction` or a dict of its
    fields}; joints not named have no friction. ``tol``: Alg. 8's
    convergence test, relative; ``max_iterations`` its rounds (each one
    friction QP); ``epsilon`` the relative ε of eq. 2.118; ``operator``
    "reduced" or "maximal" (the friction QP's response, module docstring);
    ``warm_start``: start β from the last step's (Alg. 7). The system must
    have no constraint rows (§2.11.1 is not implemented). Raises InputError
    (NonFiniteError) naming the joint for an unknown joint, a joint type
    without a geometry rule, μ, radius or length negative, non-finite or
    missing, or a child body whose inertia is not positive definite."""

    def __init__(self, system: RedmaxSystem, friction: dict[str, JointFriction], tol: float = 1e-9,
                 max_iterations: int = 100, epsilon: float = 1e-12, operator: str = "reduced",
                 warm_start: bool = True) -> None:
        if not isinstance(system, RedmaxSystem):
            raise InputError(f"BISP runs on a RedmaxSystem, got {type(system).__name__}")
        if system.constraints is not None or system._loops:
            raise InputError("BISP with external constraints (Sueda §2.11.1, eq. 2.119–2.120) is not "
                             "implemented: give a RedmaxSystem without constraint rows")
        if not isinstance(friction, dict):
            raise InputError(f"friction must be a dict {{joint name: JointFriction}}, got {type(friction).__name__}")
        if operator not in ("reduced", "maximal"):
            raise InputError(f"operator must be 'reduced' or 'maximal', got {operator!r}")
        if not (isinstance(tol, (int, float)) and math.isfinite(tol) and tol > 0):
            raise InputError(f"tol must be a finite number > 0, got {tol!r}")
        if isinstance(max_iterations, bool) or int(max_iterations) != max_iterations or max_iterations < 1:
            raise InputError(f"max_iterations must be an integer >= 1, got {max_iterations!r}")
        if not (isinstance(epsilon, (int, float)) and math.isfinite(epsilon) and epsilon >= 0):
            raise InputError(f"epsilon must be a finite number >= 0, got {epsilon!r}")
        self.system = system
        self.tol, self.max_iterations, self.epsilon = float(tol), int(max_iterations), float(epsilon)
        self.operator, self.warm_start = operator, bool(warm_start)
        s = system
        # per-block pseudo-inverses of M_m: the M⁻¹ norm of Alg. 8's test and the maximal operator
        self._Minv = np.array([np.linalg.pinv(M) for M in s.inertia]).reshape(s.n, 6, 6)
        index = {j.name: k for k, j in enumerate(s.joints)}
        S0 = s.kinematics(s.model.neutral()).S
        self.contacts = []
        nbeta = 0
        for name, spec in friction.items():
            if name not in index:
                raise InputError(f"friction joint '{name}' is not a joint of the model (joints: "
                                 f"{', '.join(index)})")
            k = index[name]
            jtype = s.joints[k].type
            if jtype not in RULES:
                raise InputError(f"joint '{name}' is {jtype}: BISP has no contact geometry rule for this joint "
                                 f"type (rules: {', '.join(RULES)})")
            if isinstance(spec, dict):
                unknown = set(spec) - {"mu", "radius", "length"}
                if unknown or "mu" not in spec:
                    raise InputError(f"joint '{name}': a friction dict takes mu, radius, length; got {sorted(spec)}")
                spec = JointFriction(**spec)
            if not isinstance(spec, JointFriction):
                raise InputError(f"joint '{name}': friction must be a JointFriction or a dict, got "
                                 f"{type(spec).__name__}")
            mu = _real(spec.mu, "mu", name)
            need = {"radius": jtype in CYLINDER + BALL, "length": jtype in CYLINDER + BLOCK}
            vals = {}
            for field, needed in need.items():
                value = getattr(spec, field)
                if needed and value is None:
                    raise InputError(f"joint '{name}' ({jtype}) needs a friction {field} (m)")
                vals[field] = _real(value, field, name) if value is not None else 0.0
            c = self._geometry(jtype, S0[k], vals["radius"], vals["length"])
            c.k, c.name, c.mu = k, name, mu
            M = s.inertia[k]
            try:
                np.linalg.cholesky(M)
            except np.linalg.LinAlgError:
                raise InputError(f"joint '{name}': its child body's spatial inertia (M_i of eq. 2.118) is not "
                                 f"positive definite") from None
            c.Minv = np.linalg.inv(M)
            NMN = c.N @ c.Minv @ c.N.T
            c.eps = self.epsilon * float(np.max(np.diag(NMN)))
            c.vars = slice(nbeta, nbeta + c.Tc.shape[0])
            nbeta += c.Tc.shape[0]
            self.contacts.append(c)
        if operator == "maximal":
            for c in self.contacts:
                p = s.parent[c.k]
                for body in (c.k, p) if p >= 0 else (c.k,):
                    try:
                        np.linalg.cholesky(s.inertia[body])
                    except np.linalg.LinAlgError:
                        raise InputError(f"joint '{c.name}': operator='maximal' needs the inertias of the bodies "
                                         f"on both sides positive definite") from None
        self.nbeta = nbeta
        self._beta = np.zeros(nbeta)
        self.last: BispResult | None = None

    @staticmethod
    def _geometry(jtype, S, r, L):
        """The contact rows of one joint (module docstring), from its
        motion subspace S at the neutral configuration (the axis in the
        child frame; S of these types has a constant axis)."""
        c = _Contacts()
        if jtype in BALL:
            c.N = np.hstack([np.zeros((3, 3)), np.eye(3)])  # the joint force (0; e_i)
            c.Tc = np.hstack([r * np.eye(3), np.zeros((3, 3))])  # friction torque r β
            c.groups = [(np.arange(3), np.arange(3), "soc")]
            return c
        col = S[:3, 0] if jtype in CYLINDER else S[3:, 0]
        a = col / np.linalg.norm(col)
        u, w = _perpendicular(a)
        N, Tc = [], []
        for end in (-0.5, 0.5):
            p = end * L * a
            for n in (u, w):
                N.append(np.r_[np.cross(p, n), n])
            # pin: the tangential force at the radius is the torque r·β about a; block: a force along a
            Tc.append(np.r_[r * a, np.zeros(3)] if jtype in CYLINDER else np.r_[np.zeros(3), a])
        c.N, c.Tc = np.array(N), np.array(Tc)
        c.groups = [(np.array([0, 1]), np.array([0]), "box"), (np.array([2, 3]), np.array([1]), "box")]
        return c

    # ------------------------------------------------------------------ helpers
    def _pairs(self, kin, w, out):
        """Add the equal and opposite pair of each joint's wrench ``w[k]``
        (child frame): ``w`` on child k, ``−ⁱ_pAdᵀ w`` on its parent."""
        s = self.system
        for k in range(s.n):
            if w[k] is None:
                continue
            out[k] += w[k]
            p = s.parent[k]
            if p >= 0:
                out[p] -= kin.Ad[k].T @ w[k]
        return out

    def _mnorm(self, f):
        """``‖f‖_{M_m⁻¹}`` (blockwise pseudo-inverse)."""
        return math.sqrt(max(float(np.einsum("ka,kab,kb->", f, self._Minv, f)), 0.0))

    def _friction_qp(self, W, b, R):
        """``argmin ½βᵀWβ − bᵀβ`` over ``|β_c| ≤ R_g`` (box groups),
        ``‖β_g‖ ≤ R_g`` (ball groups), β_g = 0 where R_g = 0: SP's friction
        projection (eq. 2.114) by clarabel, then polished (module docstring)."""
        import clarabel
        nb = self.nbeta
        blocks, zero = [], []
        for c, Rc in zip(self.contacts, R):
            for (_, fr, kind), Rg in zip(c.groups, Rc):
                idx = c.vars.start + fr
                if Rg <= 0.0:
                    zero.extend(idx)
                elif kind == "box":
                    for i in idx:  # R ∓ β_i ≥ 0
                        g = np.zeros((2, nb))
                        g[0, i], g[1, i] = 1.0, -1.0
                        blocks.append((g, np.full(2, Rg), clarabel.NonnegativeConeT(2)))
                else:  # (R, β) ∈ SOC
                    g = np.zeros((1 + len(idx), nb))
                    g[1 + np.arange(len(idx)), idx] = -1.0
                    blocks.append((g, np.r_[Rg, np.zeros(len(idx))], clarabel.SecondOrderConeT(1 + len(idx))))
        if zero:
            blocks.append((np.eye(nb)[zero], np.zeros(len(zero)), clarabel.ZeroConeT(len(zero))))
        if len(zero) == nb:
            return np.zeros(nb)
        G = sparse.csc_matrix(np.vstack([g for g, _, _ in blocks]))
        h = np.concatenate([hh for _, hh, _ in blocks])
        # clarabel wants W symmetric; the O(ε) asymmetry of T A⁻¹ Tᵀ is removed
        beta, _ = qp._conic(0.5 * (W + W.T), -b, (G, h), [cone for _, _, cone in blocks],
                            "BISP's friction QP (eq. 2.114)")
        return self._polish(W, b, beta, R)

    def _polish(self, W, b, beta, R):
        """Re-solve exactly the variables of the groups strictly inside
        their bound (sticking), the others held at clarabel's values (box
        bounds snapped to ±R), for a few thresholds of "strictly inside";
        the feasible candidate of least objective wins, clarabel's own
        solution included (an interior point stops ~1e-9 short of the
        active set; with the two ends of a pin W is singular and clarabel's
        accuracy near the bound can be worse)."""
        best, best_obj = beta, self._objective(W, b, beta)
        seen = set()
        for delta in (1e-9, 1e-6, 1e-4, 1e-2):
            key = tuple(np.linalg.norm(beta[c.vars.start + fr]) < Rg * (1.0 - delta)
                        for c, Rc in zip(self.contacts, R) for (_, fr, _), Rg in zip(c.groups, Rc))
            if key in seen:
                continue
            seen.add(key)
            fixed = np.ones(self.nbeta, dtype=bool)
            out = beta.copy()
            checks = []
            for c, Rc in zip(self.contacts, R):
                for (_, fr, kind), Rg in zip(c.groups, Rc):
                    idx = c.vars.start + fr
                    if Rg <= 0.0:
                        out[idx] = 0.0
                    elif np.linalg.norm(beta[idx]) < Rg * (1.0 - delta):
                        fixed[idx] = False
                        checks.append((idx, Rg))
                    elif kind == "box":
                        out[idx] = np.sign(beta[idx]) * Rg
            free = ~fixed
            sliding_balls = [(idx, Rg) for c, Rc in zip(self.contacts, R)
                             for (_, fr, kind), Rg in zip(c.groups, Rc)
                             for idx in [c.vars.start + fr]
                             if kind == "soc" and Rg > 0.0 and fixed[idx].all()]
            for _ in range(8 if sliding_balls else 1):
                if free.any():
                    rhs = b[free] - W[np.ix_(free, fixed)] @ out[fixed]
                    out[free] = np.linalg.lstsq(W[np.ix_(free, free)], rhs, rcond=None)[0]
                for idx, Rg in sliding_balls:  # exact on its sphere, the others held (a few sweeps)
                    rest = np.ones(self.nbeta, dtype=bool)
                    rest[idx] = False
                    out[idx] = _ball(W[np.ix_(idx, idx)], b[idx] - W[np.ix_(idx, rest)] @ out[rest], Rg)
            if not all(np.linalg.norm(out[idx]) <= Rg * (1 + 1e-14) for idx, Rg in checks + sliding_balls):
                continue
            obj = self._objective(W, b, out)
            if obj <= best_obj:
                best, best_obj = out, obj
        return best

    @staticmethod
    def _objective(W, b, x):
        return 0.5 * x @ W @ x - b @ x

    # ------------------------------------------------------------------ the step (Alg. 8)
    def step(self, q: ArrayLike, v: ArrayLike, tau: ArrayLike, h: float) -> tuple[Array, Array]:
        """One BISP step (Sueda Alg. 8 with the errata of the module
        docstring) from (q, v) with joint forces ``tau`` over ``h``: REDMAX's
        linearly implicit Euler step with joint friction. Returns ``(q⁺,
        v⁺)``, ``q⁺ = model.integrate(q, v⁺, h)``; :attr:`last` holds a
        :class:`BispResult`."""
        s = self.system
        h = s._h(h)
        kin = s.kinematics(q, v)
        q, v = kin.q, kin.v
        tau = s._v(tau, "tau")
        n = s.n
        J, M, f_r = s._dense(kin)  # f_r = Jᵀ(f_m − M_m J̇ v): typo 17's J̇
        JT = lambda w: np.tensordot(J, w, axes=([0, 1], [0, 1]))  # noqa: E731  Jᵀ of body wrenches (n, 6)
        f_m = s.maximal_forces(kin, None)
        tau_K = s.passive_forces(q, np.zeros(s.nv))  # springs only: damping is implicit
        Dh = h * s.damping + h * h * s.stiffness
        chol = s._cholesky(M + np.diag(Dh))
        Ainv = lambda x: cho_solve(chol, x)  # noqa: E731
        # the joint-force wrench w = S⁺ᵀτ: Sᵀw = τ, so its pair's Jᵀ is τ
        Spinv = [np.linalg.pinv(S).T if S.shape[1] else None for S in kin.S]
        # friction rows: reduced T_r = T J (rows t_cᵀ S_k on joint k's velocities), maximal T if asked
        Tr = np.zeros((self.nbeta, s.nv))
        for c in self.contacts:
            Tr[c.vars, s.vs[c.k]] = c.Tc @ kin.S[c.k]
        if self.operator == "maximal":
            Tm = np.zeros((self.nbeta, n, 6))
            for c in self.contacts:
                Tm[c.vars, c.k] = c.Tc
                p = s.parent[c.k]
                if p >= 0:
                    Tm[c.vars, p] = -c.Tc @ kin.Ad[c.k]
            MinvTm = np.einsum("kab,ika->ikb", self._Minv, Tm)  # rows of T M_m⁻¹ (M⁻¹ symmetric)
            W = np.einsum("ika,jka->ij", MinvTm, Tm)
        else:
            AinvTr = Ainv(Tr.T)
            W = Tr @ AinvTr
        beta = self._beta.copy() if self.warm_start else np.zeros(self.nbeta)
        f_alpha0 = np.zeros((n, 6))
        R = [[0.0] * len(c.groups) for c in self.contacts]
        converged = False
        for iteration in range(1, self.max_iterations + 1):
            # f_β = −Tᵀβ/h: the friction wrench pairs
            wb = [None] * n
            for c in self.contacts:
                wb[c.k] = -(c.Tc.T @ beta[c.vars]) / h
            f_beta = self._pairs(kin, wb, np.zeros((n, 6)))
            # eq. 2.117 (reduced solve with f_β; A = M_r + hD_r + h²K_r, REDMAX's §2.5 step)
            v_con = v + Ainv(h * (f_r + JT(f_beta) + tau + tau_K) - Dh * v)
            # the joint forces that reduced solve applied, as wrench pairs in the maximal one
            tau_eff = tau + tau_K - (s.damping + h * s.stiffness) * v_con - s.armature * (v_con - v) / h
            wt = [None if P is None else P @ tau_eff[s.vs[k]] for k, P in enumerate(Spinv)]
            F = self._pairs(kin, wt, f_m + f_beta)
            # eq. 2.116–2.117: f_α = M_m(J v_con − q̇_unc)/h, q̇_unc = J v + h M_m⁻¹ F, without M_m⁻¹
            f_alpha = np.einsum("kab,kb->ka", s.inertia, np.einsum("kai,i->ka", J, v_con - v)) / h - F
            # distribute leaf to root: a joint's reaction = its child's share + its children's, pulled back
            react = f_alpha.copy()
            for k in range(n - 1, -1, -1):
                p = s.parent[k]
                if p >= 0:
                    react[p] += kin.Ad[k].T @ react[k]
            # eq. 2.118 with the sign erratum S8: f_α = −Nᵀα/h
            alphas = []
            for c in self.contacts:
                NM = c.N @ c.Minv
                alphas.append(-h * np.linalg.solve(NM @ c.N.T + c.eps * np.eye(len(c.N)), NM @ react[c.k]))
            # Alg. 8 line 18: ‖f_α − f_α⁰‖_{M⁻¹} ≤ tol (relative here)
            if self._mnorm(f_alpha - f_alpha0) <= self.tol * self._mnorm(f_alpha):
                converged = True
                break
            if iteration == self.max_iterations:
                break
            f_alpha0 = f_alpha
            R = [[c.mu * float(np.linalg.norm(a[nr])) for nr, _, _ in c.groups] for c, a in zip(self.contacts, alphas)]
            if self.nbeta == 0:
                continue
            # eq. 2.114: b = T(constrained velocity without the current friction)
            if self.operator == "maximal":
                b = np.einsum("ika,ka->i", Tm, np.einsum("kai,i->ka", J, v_con)) + np.einsum(
                    "ika,ka->i", MinvTm, np.einsum("ika,i->ka", Tm, beta))
            else:
                b = Tr @ (v_con + AinvTr @ beta)
            beta = self._friction_qp(W, b, R)
        if not converged:  # the last iterate is used, as the contact solvers do (contact_failure="warn")
            change = self._mnorm(f_alpha - f_alpha0) / max(self._mnorm(f_alpha), 1e-300)
            warnings.warn(f"BISP: the staggered projections did not converge in {self.max_iterations} rounds "
                          f"(relative change of f_α {change:.2g} > tol {self.tol:g}); the last iterate was used",
                          SimulationWarning, stacklevel=2)
        self._beta = beta.copy()
        # Alg. 8 line 26 with typo 18: Jᵀf_m without the QVV (Jᵀf_α = −JᵀM_mJ̇v holds it already)
        v1 = v + Ainv(h * (JT(f_m) + tau + tau_K + JT(f_alpha + f_beta)) - Dh * v)
        self.last = BispResult(
            alpha={c.name: a for c, a in zip(self.contacts, alphas)},
            beta={c.name: beta[c.vars].copy() for c in self.contacts},
            bound={c.name: np.array(Rc) for c, Rc in zip(self.contacts, R)},
            reaction={c.name: react[c.k].copy() for c in self.contacts},
            iterations=iteration, converged=converged, v_con=v_con)
        return s.model.integrate(q, v1, h), v1


def bisp_step(system: RedmaxSystem, q: ArrayLike, v: ArrayLike, tau: ArrayLike, h: float,
              friction: dict[str, JointFriction], **options: Any) -> tuple[Array, Array]:
    """One BISP step (Sueda §2.11, Alg. 8) without keeping a
    :class:`BispSystem`: ``BispSystem(system, friction, **options).step(q,
    v, tau, h)`` (no warm start across calls). Returns ``(q⁺, v⁺)``."""
    return BispSystem(system, friction, **options).step(q, v, tau, h)
