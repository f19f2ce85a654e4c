"""Particles (point masses, 3 DoF each) and mass-spring deformables (cloth)
coupled to a rigid-body :class:`~multibody.model.Model` (which may have no
moving bodies), with attachments eliminated from the equations (ArtiSynth
§0.12–0.13, §0.17–0.21; Sueda §2.7). See docs/deformables.md.

Full velocity ``u = [v; ẋ_0; …; ẋ_{n−1}]`` (the model's joint velocities,
then every particle's world velocity). Particles are

* free: their (x, ẋ) are state; the reduced unknowns are ``z = [v; ẋ_free]``;
* attached to a body point: ``ẋ = P_pt(q) v`` (the point Jacobian of
  forces/_kin.py, Sueda's ``J_am J_mr``);
* attached to other particles with weights: ``ẋ_k = Σ_j w_j ẋ_j``
  (positions likewise), chained as a directed acyclic graph (§0.18);
* prescribed (``fix``, ``prescribe``): ``x(t)`` given (§0.21).

So ``u = P(q) z + p`` (:mod:`.attachments`) and the reduced mass is
``M' = PᵀMP``. Forces on particles: gravity, mass-proportional damping and
axial springs (linear §0.12, Green-strain stress form §0.13) with exact
``K = ∂f/∂x``, ``D = ∂f/∂ẋ`` (DESIGN.md signs).

The step (``step``) is the velocity-level step of the full system with the
attachments as constraints, eliminated:

    Â u⁺ = b,   u⁺ = P z⁺ + p,   p = h Ṗ z (attached) and v_ρ⁺ (prescribed)

with ``Â = M − hD − h²K``, ``b = (M − hD)u + h f`` (linearly implicit
Euler, Baraff–Witkin) or ``Â = M``, ``b = M u + h f`` (semi-implicit
Euler); ``f`` holds the model's bias forces ``−C(q, v)``, its force
elements and the particle forces. The reduced system
``PᵀÂP z⁺ = Pᵀ(b − Â p)`` is ArtiSynth's eq. 0.20–0.23 with
``g_β = h Ġ v`` (whence the fictitious forces of §0.19: ``−h PᵀMṖz``);
``attachments="kkt"`` solves the same system with the attachment rows
instead (the oracle). The rigid block of ``Â`` also takes the geometric
stiffness of the attached particles' forces (the change of ``Pᵀ`` with q at
fixed force: forces/_kin.py's point-force term), so a particle on a body
contributes exactly as a body point force element would.
"""
from __future__ import annotations

import numbers
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp
from numba import njit
from scipy.sparse.linalg import splu, bicgstab

from .._typing import Array, ArrayLike, Frame
from ..dynamics import crba, rnea
from ..errors import InputError, ModelError, SimulationError
from ..forces import Gravity, generalized_forces
from ..forces._kin import State, geometric
from ..kinematics import forward_kinematics
from ..model.checks import as_vector
from ..solvers.sparse_cholesky import SparseCholesky
from .attachments import compose_weights, solve_saddle, topological_order

if TYPE_CHECKING:
    from ..forces.base import ForceElement
    from ..model import Model

LAWS = {"linear": 0, "green": 1}


class ParticleTrajectory:
    """Result of :meth:`ParticleSystem.rollout`: ``t`` (T+1,), ``q`` (T+1, nq),
    ``v`` (T+1, nv), ``x`` and ``xd`` (T+1, n, 3): every particle's world
    position and velocity (attached and prescribed ones included)."""

    def __init__(self, t: Array, q: Array, v: Array, x: Array, xd: Array) -> None:
        self.t, self.q, self.v, self.x, self.xd = t, q, v, x, xd


class _Structure:
    """What a built system keeps between steps (constant until particles,
    springs or attachments change)."""


def _point(value, what):
    a = np.asarray(value, dtype=float)
    if a.shape != (3,) or not np.all(np.isfinite(a)):
        raise InputError(f"{what} must be 3 finite numbers, got {value!r}")
    return a.copy()


class _Constant:
    """``t -> value``: a fixed particle's position (or zero velocity); a
    class, not a lambda, so that a system with fixed particles pickles (a
    simulator with particles is pickled with its particle system)."""

    def __init__(self, value):
        self.value = value

    def __call__(self, t):
        return self.value


class ParticleSystem:
    """Particles and springs coupled to ``model`` (module docstring).

    ``forces``: force elements acting on the model (multibody.forces);
    ``gravity``: the model's gravity on the bodies and the particles;
    ``joint_damping``: the model's joint damping; ``particle_damping``: α
    (1/s), the force ``−α m ẋ`` on every particle (ArtiSynth's point damping,
    Rayleigh mass damping). ``q``, ``v``: the model's initial state (default
    neutral, zero).

    Build with :meth:`add_particle`, :meth:`add_grid`, :meth:`add_spring` /
    :meth:`add_springs`, :meth:`attach`, :meth:`fix`, :meth:`prescribe`;
    then :meth:`step` or :meth:`rollout`. The state is ``q, v, t`` and the
    free particles' positions and velocities (``positions()``,
    ``velocities()`` give every particle's)."""
    # the particles (mass, initial position and velocity, name) and what holds them
    _m: list[float]
    _x: list[Array]
    _xd: list[Array]
    _names: list[str | None]
    _body: dict[int, tuple]
    _weights: dict[int, list[tuple[int, float]]]
    _prescribed: dict[int, tuple]
    _springs: list[list]
    _S: Any  # the built structure, None until built

    def __init__(self, model: Model, forces: Sequence[ForceElement] = (), gravity: bool = True,
                 joint_damping: bool = True, particle_damping: float = 0.0, q: ArrayLike | None = None,
                 v: ArrayLike | None = None) -> None:
        self.model = model
        self.nv = model.nv
        self.forces, self.gravity = tuple(forces), bool(gravity)  # as given (a Simulator adds its own forces)
        self.elements = self.forces + ((Gravity(),) if gravity and model.nv else ())
        self.g = np.array(model.gravity, dtype=float) if gravity else np.zeros(3)
        self.joint_damping = model.damping.copy() if joint_damping else np.zeros(model.nv)
        if not (np.isfinite(particle_damping) and particle_damping >= 0):
            raise InputError(f"particle_damping must be a finite number >= 0, got {particle_damping!r}")
        self.particle_damping = float(particle_damping)
        self.q = model.neutral() if q is None else as_vector(q, "q", model.nq, batch=False).copy()
        self.v = np.zeros(model.nv) if v is None else as_vector(v, "v", model.nv, batch=False).copy()
        self.t = 0.0
        self._m, self._x, self._xd, self._names = [], [], [], []
        self._body = {}        # particle -> (body, point in body coordinates, frame as given)
        self._weights = {}     # particle -> [(master, weight), ...]
        self._prescribed = {}  # particle -> (position(t), velocity(t) or None)
        self._springs = [[], [], [], [], [], []]  # i, j, k, d, rest, law
        self._S = None

    # ------------------------------------------------------------------ building
    def _invalidate(self):
        """Forget the built structure (after a change), keeping the current
        positions and velocities of every particle as the new initial ones."""
        if self._S is not None:
            X, XD = self.positions(), self.velocities()
            for i in range(len(X)):
                self._x[i], self._xd[i] = X[i].copy(), XD[i].copy()
        self._S = None

    def error(self, message, cls=ModelError):
        return cls(f"ParticleSystem: {message}")

    @property
    def n(self) -> int:
        return len(self._m)

    def label(self, i: int) -> str:
        name = self._names[i]
        return f"particle {i}" + (f" ('{name}')" if name else "")

    def _index(self, i, what="particle"):
        if not isinstance(i, numbers.Integral) or not 0 <= int(i) < self.n:
            raise self.error(f"{what} {i!r} is not a particle index (0..{self.n - 1})")
        return int(i)

    def add_particle(self, mass: float, position: ArrayLike, velocity: ArrayLike | None = None,
                     name: str | None = None) -> int:
        """Add a particle of ``mass`` > 0 (kg) at ``position`` (world); returns its index."""
        # numpy's isscalar guard drops the float type (the ignore below)
        if not (np.isscalar(mass) and np.isfinite(mass) and mass > 0):  # type: ignore[operator]
            raise self.error(f"particle mass must be a finite number > 0, got {mass!r}")
        x, xd = _point(position, "position"), (np.zeros(3) if velocity is None else _point(velocity, "velocity"))
        self._invalidate()
        self._m.append(float(mass))  # type: ignore[arg-type]  # numpy's isscalar guard drops the float type
        self._x.append(x)
        self._xd.append(xd)
        self._names.append(name)
        return self.n - 1

    def add_grid(self, nx: int, ny: int, origin: ArrayLike, du: ArrayLike, dv: ArrayLike, mass: float,
                 stiffness: float, damping: float = 0.0, shear_stiffness: float | None = None,
                 bend_stiffness: float = 0.0, law: str = "linear") -> np.ndarray:
        """A cloth: ``nx × ny`` particles at ``origin + i du + j dv`` (``mass``
        the total), structural springs between grid neighbours, shear springs
        on the diagonals (``shear_stiffness``, default ``stiffness``) and bend
        springs between second neighbours (``bend_stiffness``, 0: none), rest
        lengths the initial distances. Returns the (nx, ny) index array."""
        nx, ny = int(nx), int(ny)
        if nx < 1 or ny < 1:
            raise self.error(f"a grid needs nx, ny >= 1, got {nx}, {ny}")
        o, a, b = _point(origin, "origin"), _point(du, "du"), _point(dv, "dv")
        mp = float(mass) / (nx * ny)
        idx = np.empty((nx, ny), dtype=np.int64)
        for i in range(nx):
            for j in range(ny):
                idx[i, j] = self.add_particle(mp, o + i * a + j * b)
        shear = stiffness if shear_stiffness is None else shear_stiffness
        pairs = [(idx[:-1, :], idx[1:, :], stiffness), (idx[:, :-1], idx[:, 1:], stiffness),
                 (idx[:-1, :-1], idx[1:, 1:], shear), (idx[1:, :-1], idx[:-1, 1:], shear)]
        if bend_stiffness:
            pairs += [(idx[:-2, :], idx[2:, :], bend_stiffness), (idx[:, :-2], idx[:, 2:], bend_stiffness)]
        for I, J, k in pairs:
            if I.size and k:
                self.add_springs(I.ravel(), J.ravel(), k, damping, law=law)
        return idx

    def add_spring(self, i: int, j: int, stiffness: float, damping: float = 0.0, rest_length: float | None = None,
                   law: str = "linear") -> None:
        """Axial spring between particles i and j: tension ``F = k(l − r) +
        d l̇`` (``law="linear"``, ArtiSynth §0.12) or ``F = k l(l² − r²)/(2r²)
        + d l̇`` (``"green"``, the stress form of §0.13). ``rest_length``
        None: the current distance."""
        self.add_springs([i], [j], stiffness, damping, None if rest_length is None else [rest_length], law)

    def add_springs(self, i: ArrayLike, j: ArrayLike, stiffness: ArrayLike, damping: ArrayLike = 0.0,
                    rest_length: ArrayLike | None = None, law: str = "linear") -> None:
        """Vectorized :meth:`add_spring` (arrays of indices; scalars or arrays
        for the parameters)."""
        i = np.atleast_1d(np.asarray(i))
        j = np.atleast_1d(np.asarray(j))
        if i.shape != j.shape or i.ndim != 1:
            raise self.error("spring index arrays must be 1-D and of the same length")
        for a in np.concatenate([i, j]):
            self._index(a)
        if np.any(i == j):
            raise self.error(f"a spring needs two different particles (got {self.label(int(i[i == j][0]))} twice)")
        m = len(i)
        k = np.broadcast_to(np.asarray(stiffness, dtype=float), (m,))
        d = np.broadcast_to(np.asarray(damping, dtype=float), (m,))
        if not (np.all(np.isfinite(k)) and np.all(k >= 0) and np.all(np.isfinite(d)) and np.all(d >= 0)):
            raise self.error("spring stiffness and damping must be finite and >= 0")
        if law not in LAWS:
            raise self.error(f"unknown spring law {law!r} (one of {', '.join(LAWS)})")
        self._invalidate()
        if rest_length is None:
            X = np.array(self._x)
            r = np.linalg.norm(X[j] - X[i], axis=1)
        else:
            r = np.broadcast_to(np.asarray(rest_length, dtype=float), (m,)).copy()
            if not (np.all(np.isfinite(r)) and np.all(r >= 0)):
                raise self.error("spring rest lengths must be finite and >= 0")
        if law == "green" and np.any(r <= 0):
            raise self.error("the Green-strain law needs positive rest lengths")
        for lst, val in zip(self._springs, (i, j, k, d, r, np.full(m, LAWS[law]))):
            lst.extend(np.asarray(val).tolist())

    def _free_check(self, i):
        if i in self._body or i in self._weights or i in self._prescribed:
            raise self.error(f"{self.label(i)} is already attached, fixed or prescribed")

    def attach(self, particle: int, target: Frame | Sequence[tuple[int, float]], point: ArrayLike | None = None
               ) -> None:
        """Attach ``particle`` to a body point (``target`` a frame name or index
        of the model, ``point`` in that frame; None: where the particle is now,
        at the current q) or to other particles (``target`` a list of
        ``(particle_j, w_j)``: ``x = Σ w_j x_j``, velocities likewise; chains
        allowed, cycles are an error)."""
        i = self._index(particle)
        self._free_check(i)
        self._invalidate()
        if isinstance(target, (list, tuple)) and target and all(
                isinstance(e, (list, tuple)) and len(e) == 2 for e in target):
            pairs = []
            for j, w in target:
                j = self._index(j, "master")
                if j == i:
                    raise self.error(f"{self.label(i)} cannot be attached to itself")
                if not (np.isscalar(w) and np.isfinite(w)):
                    raise self.error(f"attachment weight of {self.label(j)} must be a finite number, got {w!r}")
                pairs.append((j, float(w)))  # type: ignore[arg-type]  # numpy's isscalar guard drops the float type
            self._weights[i] = pairs
        else:
            from ..forces.base import resolve_frame
            body, place = resolve_frame(self, self.model, target)
            oMb = forward_kinematics(self.model, self.q)[body] @ place
            if point is None:
                local = oMb[:3, :3].T @ (self._x[i] - oMb[:3, 3])
            else:
                local = _point(point, "point")
            pb = place[:3, :3] @ local + place[:3, 3]
            if body == 0:   # the world: a fixed particle
                x0 = oMb[:3, :3] @ local + oMb[:3, 3]
                self._prescribed[i] = (_Constant(x0), _Constant(np.zeros(3)))
            else:
                self._body[i] = (body, pb, target)

    def fix(self, particle: int, position: ArrayLike | None = None) -> None:
        """Hold ``particle`` at ``position`` (world; default where it is)."""
        i = self._index(particle)
        self._free_check(i)
        self._invalidate()
        x0 = self._x[i].copy() if position is None else _point(position, "position")
        self._prescribed[i] = (_Constant(x0), _Constant(np.zeros(3)))

    def prescribe(self, particle: int, position: Callable[[float], ArrayLike],
                  velocity: Callable[[float], ArrayLike] | None = None) -> None:
        """Drive ``particle`` along ``position(t)`` (world, a callable of t;
        ``velocity(t)`` optional: central differences otherwise) — ArtiSynth
        §0.21's parametric components. The step moves it to
        ``position(t + h)`` exactly; its reaction force is in
        ``last['prescribed_force']``."""
        i = self._index(particle)
        self._free_check(i)
        if not callable(position) or (velocity is not None and not callable(velocity)):
            raise self.error("prescribe takes callables position(t) and velocity(t)")
        self._invalidate()
        self._prescribed[i] = (position, velocity)

    # ------------------------------------------------------------------ structure
    def _build(self):
        S = _Structure()
        n = self.n
        S.order = topological_order({k: [j for j, _ in m] for k, m in self._weights.items()}, self.label)
        C = compose_weights(n, self._weights, S.order)
        roots = [r for r in range(n) if r not in self._weights]
        S.free = np.array([r for r in roots if r not in self._body and r not in self._prescribed], dtype=np.int64)
        S.attached_body = np.array([r for r in roots if r in self._body], dtype=np.int64)
        S.pres = np.array([r for r in roots if r in self._prescribed], dtype=np.int64)
        S.bodies = sorted({self._body[r][0] for r in S.attached_body})
        S.body_of = np.array([self._body[r][0] for r in S.attached_body], dtype=np.int64)
        S.points = np.array([self._body[r][1] for r in S.attached_body]).reshape(-1, 3)
        I3 = sp.identity(3, format="csr")
        S.Cf = sp.kron(C[:, S.free], I3, format="csr")             # 3n × 3nf
        S.Cb = sp.kron(C[:, S.attached_body], I3, format="csr")    # 3n × 3nb
        S.Cp = sp.kron(C[:, S.pres], I3, format="csr")             # 3n × 3np
        S.selection = (C[:, S.free].nnz == len(S.free))             # free block of P is a column selection
        S.free_rows = np.concatenate([3 * S.free[:, None] + np.arange(3)]).ravel() if len(S.free) else \
            np.zeros(0, dtype=np.int64)
        S.mass = np.array(self._m)
        S.m3 = np.repeat(S.mass, 3)
        sp_ = self._springs
        S.si, S.sj = np.array(sp_[0], dtype=np.int64), np.array(sp_[1], dtype=np.int64)
        S.k, S.d, S.r = (np.array(a, dtype=float) for a in sp_[2:5])
        S.law = np.array(sp_[5], dtype=np.int64)
        S.green = S.law == 1
        # sparsity pattern of the particle block: 4 blocks of 9 per spring, then the 3n diagonal
        a3 = np.arange(3)
        bi = np.stack([S.si, S.si, S.sj, S.sj], axis=1)                 # m × 4 block rows
        bj = np.stack([S.si, S.sj, S.si, S.sj], axis=1)
        rows = (3 * bi[:, :, None, None] + a3[None, None, :, None]) + 0 * a3[None, None, None, :]
        cols = (3 * bj[:, :, None, None] + a3[None, None, None, :]) + 0 * a3[None, None, :, None]
        rows = np.concatenate([rows.ravel(), np.arange(3 * n)])
        cols = np.concatenate([cols.ravel(), np.arange(3 * n)])
        key = rows * (3 * n) + cols
        uniq, S.inv = np.unique(key, return_inverse=True)
        S.nnz = len(uniq)
        r_u, c_u = uniq // (3 * n), uniq % (3 * n)
        S.indices = c_u.astype(np.int32)
        S.indptr = np.searchsorted(r_u, np.arange(3 * n + 1)).astype(np.int32)
        S.sign = np.array([1.0, -1.0, -1.0, 1.0])
        # the free particles' state (reduced positions/velocities), taken from the builder lists
        S.nf = len(S.free)
        S.nz = self.nv + 3 * S.nf
        self._S = S
        X = np.array(self._x).reshape(n, 3)
        XD = np.array(self._xd).reshape(n, 3)
        self._xf = X[S.free].copy()
        self._xdf = XD[S.free].copy()
        return S

    def _structure(self):
        if self._S is None:
            self._build()
        return self._S

    # ------------------------------------------------------------------ state
    def _prescribed_state(self, S, t):
        xp = np.zeros((len(S.pres), 3))
        vp = np.zeros((len(S.pres), 3))
        for a, r in enumerate(S.pres):
            pos, vel = self._prescribed[r]
            xp[a] = _point(pos(t), f"position({t}) of {self.label(r)}")
            if vel is not None:
                vp[a] = _point(vel(t), f"velocity({t}) of {self.label(r)}")
            else:
                e = 1e-6 * max(1.0, abs(t))
                vp[a] = (_point(pos(t + e), "position") - _point(pos(t - e), "position")) / (2 * e)
        return xp, vp

    def _kinematics(self, S, q, v, t, xf, xdf, need_dv=True):
        """Positions and velocities of every particle and the body-point maps."""
        kin = _Structure()
        nb = len(S.attached_body)
        kin.Ppt = np.zeros((3 * nb, self.nv))
        kin.abias = np.zeros(3 * nb)
        kin.xb = np.zeros((nb, 3))
        kin.st = None
        if nb:
            st = kin.st = State(self.model, q, v, t)
            oMi = st.oMi
            for b in S.bodies:
                sel = np.nonzero(S.body_of == b)[0]
                pts = S.points[sel]
                R, o = oMi[b][:3, :3], oMi[b][:3, 3]
                x = pts @ R.T + o
                kin.xb[sel] = x
                Jb = st.Jb(b)
                # ẋ = v_o + ω × x:  P = Jb[3:] − [x] Jb[:3]
                P = Jb[3:][None, :, :] - np.einsum("pij,jk->pik", _hats(x), Jb[:3])
                rows = (3 * sel[:, None] + np.arange(3)).ravel()
                kin.Ppt[rows] = P.reshape(-1, self.nv)
                if need_dv:
                    A = st.dV(b) @ v                     # J̇_b v (spatial, world origin)
                    w = st.V(b)[:3]
                    xd = P @ v
                    kin.abias[rows] = (A[3:][None, :] + np.cross(A[:3][None, :], x) + np.cross(w[None, :], xd)).ravel()
        kin.xp, kin.vp = self._prescribed_state(S, t)
        n = self.n
        kin.x = (S.Cf @ xf.ravel() + S.Cb @ kin.xb.ravel() + S.Cp @ kin.xp.ravel()).reshape(n, 3)
        kin.ub = kin.Ppt @ v if nb else np.zeros(0)
        kin.xd = (S.Cf @ xdf.ravel() + S.Cb @ kin.ub + S.Cp @ kin.vp.ravel()).reshape(n, 3)
        return kin

    def positions(self) -> Array:
        """World positions (n, 3) of every particle at the current state."""
        S = self._structure()
        return self._kinematics(S, self.q, self.v, self.t, self._xf, self._xdf, need_dv=False).x

    def velocities(self) -> Array:
        """World velocities (n, 3) of every particle at the current state."""
        S = self._structure()
        return self._kinematics(S, self.q, self.v, self.t, self._xf, self._xdf, need_dv=False).xd

    @property
    def free(self) -> np.ndarray:
        """Indices of the free particles (their order in the reduced state)."""
        return self._structure().free.copy()

    def get_state(self) -> tuple[Array, Array, Array, Array, float]:
        """``(q, v, x_free, xd_free, t)`` (copies)."""
        self._structure()
        return self.q.copy(), self.v.copy(), self._xf.copy(), self._xdf.copy(), self.t

    def set_state(self, q: ArrayLike | None = None, v: ArrayLike | None = None, x_free: ArrayLike | None = None,
                  xd_free: ArrayLike | None = None, t: float | None = None) -> None:
        """Set parts of the state (free particles in the order of :attr:`free`)."""
        S = self._structure()
        if q is not None:
            self.q = as_vector(q, "q", self.model.nq, batch=False).copy()
        if v is not None:
            self.v = as_vector(v, "v", self.nv, batch=False).copy()
        for val, name in ((x_free, "_xf"), (xd_free, "_xdf")):
            if val is not None:
                a = np.array(val, dtype=float).reshape(S.nf, 3)
                if not np.all(np.isfinite(a)):
                    raise InputError(f"{name[1:]} must be finite")
                setattr(self, name, a)
        if t is not None:
            self.t = float(t)

    # ------------------------------------------------------------------ forces
    def spring_forces(self, x, xd, jacobians=True, definite=False):
        """Particle forces of the springs, gravity and particle damping at the
        world positions/velocities ``x``, ``xd`` (n, 3): ``f`` (3n) and, with
        ``jacobians``, the CSR data of ``K = ∂f/∂x`` and ``D = ∂f/∂ẋ`` on the
        structure's pattern (as arrays ``Kv``, ``Dv`` per pattern entry, before
        summation) — see :meth:`particle_jacobians` for matrices.
        ``definite``: the stiffness of the stable step instead of the exact
        one — without the damping's ``u Δẋᵀ U_p`` term, with the transverse
        term ``(F/l) U_p`` only under tension (``max(F, 0)``) and the axial
        ``F_l`` only where positive (the Green law's ``F_l = k(3l² −
        r²)/(2r²)`` is negative below ``l = r/√3``), so that ``K`` is
        symmetric negative semidefinite (Choi & Ko's fix of Baraff–Witkin's
        step: a compressed spring's exact K has positive eigenvalues, and
        ``M − h²K`` loses definiteness once ``h²|F|/l`` exceeds the masses)."""
        S = self._structure()
        f = (S.mass[:, None] * self.g[None, :]).ravel() - self.particle_damping * S.m3 * xd.ravel()
        m = len(S.si)
        if m == 0:
            return f, (np.zeros(0), np.zeros(0)) if jacobians else None
        nj = 36 * m if jacobians else 0
        Kv, Dv = np.empty(nj), np.empty(nj)
        bad = _spring_kernel(np.ascontiguousarray(x, dtype=float), np.ascontiguousarray(xd, dtype=float), S.si, S.sj,
                             S.k, S.d, S.r, S.law, bool(definite), bool(jacobians), f, Kv, Dv)
        if bad >= 0:
            raise SimulationError(f"spring between {self.label(int(S.si[bad]))} and {self.label(int(S.sj[bad]))} "
                                  f"has zero length (its direction is undefined)")
        return f, ((Kv, Dv) if jacobians else None)

    def _csr(self, S, spring_vals, diag):
        data = np.zeros(S.nnz)
        _scatter_add(S.inv, spring_vals, diag, data)
        n3 = 3 * self.n
        return sp.csr_matrix((data, S.indices, S.indptr), shape=(n3, n3))

    def particle_jacobians(self, x, xd):
        """``(f, K, D)`` of the particle forces: K = ∂f/∂x, D = ∂f/∂ẋ (3n × 3n, CSR)."""
        S = self._structure()
        f, (Kv, Dv) = self.spring_forces(x, xd)
        n3 = 3 * self.n
        K = self._csr(S, Kv, np.zeros(n3))
        D = self._csr(S, Dv, -self.particle_damping * S.m3)
        return f, K, D

    def _rigid(self, q, v, t, jacobians):
        """``M``, ``f = τ_elements − C(q, v)`` (joint damping included), K, D of the model."""
        nv = self.nv
        M = crba(self.model, q).copy()
        c = rnea(self.model, q, v, np.zeros(nv), gravity=False)
        if self.elements:
            fe, K, D = generalized_forces(self.elements, self.model, q, v, t, jacobians=jacobians)
        else:
            fe = np.zeros(nv)
            K, D = (np.zeros((nv, nv)), np.zeros((nv, nv))) if jacobians else (None, None)
        fe = fe - self.joint_damping * v
        if jacobians:
            D = D - np.diag(self.joint_damping)
        return M, fe, c, K, D

    def _attachment_stiffness(self, S, kin, fpart):
        """Geometric stiffness of the attached particles' forces on the model:
        ∂(P_ptᵀ F)/∂q at fixed world forces F (the point-force term of
        forces/_kin.py and springs.py), F the forces on the body roots
        (the particle forces carried down the weight attachments)."""
        nv = self.nv
        G = np.zeros((nv, nv))
        if not len(S.attached_body):
            return G
        F = (S.Cb.T @ fpart).reshape(-1, 3)
        st = kin.st
        for b in S.bodies:
            sel = np.nonzero(S.body_of == b)[0]
            x, Fb = kin.xb[sel], F[sel]
            Jb = st.Jb(b)
            w = np.concatenate([np.cross(x, Fb).sum(axis=0), Fb.sum(axis=0)])
            rows = (3 * sel[:, None] + np.arange(3)).ravel()
            P = kin.Ppt[rows].reshape(len(sel), 3, nv)
            G += geometric(st.topo, Jb, w) - Jb[:3].T @ np.einsum("pij,pjk->ik", _hats(Fb), P)
        return G

    # ------------------------------------------------------------------ the reduction
    def _reduced_matrix(self, S, kin, Arr, App):
        """``PᵀÂP`` for ``Â = blkdiag(Arr, App)`` (CSC) and ``B = Cb P_pt``."""
        nv = self.nv
        B = S.Cb @ kin.Ppt if nv else None                     # 3n × nv (dense)
        Aff = App[S.free_rows][:, S.free_rows] if S.selection else (S.Cf.T @ App @ S.Cf)
        if nv == 0:
            return sp.csc_matrix(Aff), B
        AB = App @ B
        Aqq = Arr + B.T @ AB
        if S.selection:
            Afq, Aqf = AB[S.free_rows], (App.T @ B)[S.free_rows].T
        else:
            Afq, Aqf = S.Cf.T @ AB, (S.Cf.T @ (App.T @ B)).T
        A = sp.bmat([[sp.csr_matrix(Aqq), sp.csr_matrix(Aqf)], [sp.csr_matrix(Afq), Aff]], format="csc")
        return A, B

    def _assemble(self, h, implicit, q=None, v=None, xf=None, xdf=None, t=None, definite=False, tau=None):
        """Everything one step needs: full matrices, right side, the map."""
        S = self._structure()
        q = self.q if q is None else q
        v = self.v if v is None else v
        xf = self._xf if xf is None else xf
        xdf = self._xdf if xdf is None else xdf
        t = self.t if t is None else t
        nv = self.nv
        kin = self._kinematics(S, q, v, t, xf, xdf)
        fp, jac = self.spring_forces(kin.x, kin.xd, jacobians=implicit, definite=definite)
        up = kin.xd.ravel()
        if implicit:
            Kv, Dv = jac
            App = self._csr(S, -h * Dv - h * h * Kv, S.m3 * (1.0 + h * self.particle_damping))
            Dp_u = self._csr(S, Dv, -self.particle_damping * S.m3) @ up
            bp = S.m3 * up - h * Dp_u + h * fp
        else:
            App = self._csr(S, np.zeros(len(S.inv) - len(S.m3)), S.m3)   # diag(m), on the structure's pattern
            bp = S.m3 * up + h * fp
        if nv:
            M, fe, c, K, D = self._rigid(q, v, t, implicit)
            if tau is not None:
                fe = fe + tau
            if implicit:
                G = self._attachment_stiffness(S, kin, fp)
                Arr = M - h * D - h * h * (K + G)
                br = (M - h * D) @ v + h * (fe - c)
            else:
                Arr, br = M, M @ v + h * (fe - c)
        else:
            Arr, br = np.zeros((0, 0)), np.zeros(0)
        # p = h Ṗ z on the attached particles, v_ρ⁺ on the prescribed ones
        xp1, _ = self._prescribed_state(S, t + h)
        vrho = (xp1 - kin.xp) / h
        p_part = S.Cb @ (h * kin.abias) + S.Cp @ vrho.ravel()
        return S, kin, Arr, App, br, bp, p_part, vrho, xp1

    def step(self, h: float, method: str = "implicit", attachments: str = "eliminate", solver: str = "direct",
             stiffness: str = "definite", tau: ArrayLike | None = None) -> ParticleSystem:
        """Advance the state by one step of ``h`` seconds.

        ``method``: "implicit" (linearly implicit Euler, ``M − hD − h²K``) or
        "semi_implicit" (semi-implicit Euler). ``attachments``: "eliminate"
        (the reduced system, default) or "kkt" (the full system with the
        attachment rows; the oracle). ``solver`` (eliminated systems):
        "direct" (default: with the definite stiffness the free particles'
        block is symmetric positive definite and is solved by a sparse
        Cholesky factorization whose symbolic analysis is done once, the
        model's DoFs by their Schur complement — :meth:`_solve_cholesky`;
        otherwise sparse LU), "lu" (SuperLU on the whole reduced matrix:
        the reference of "direct"), or "iterative" (BiCGSTAB with a Jacobi
        preconditioner, relative tolerance 1e-10). ``stiffness`` (implicit
        Euler): "definite" (default: the springs' K made negative
        semidefinite, :meth:`spring_forces`; the particle block is then
        symmetric positive definite, and the whole reduced matrix too when
        the model's block is) or "exact" (the springs' exact K, general LU).
        ``tau``: joint forces (nv) applied to the model over the step."""
        # numpy's isscalar guard drops the float type (the ignore below)
        if not (np.isscalar(h) and np.isfinite(h) and h > 0):  # type: ignore[operator]
            raise InputError(f"the time step h must be a finite number > 0, got {h!r}")
        if method not in ("implicit", "semi_implicit"):
            raise InputError(f"method must be 'implicit' or 'semi_implicit', got {method!r}")
        if attachments not in ("eliminate", "kkt"):
            raise InputError(f"attachments must be 'eliminate' or 'kkt', got {attachments!r}")
        if solver not in ("direct", "lu", "iterative"):
            raise InputError(f"solver must be 'direct', 'lu' or 'iterative', got {solver!r}")
        if stiffness not in ("definite", "exact"):
            raise InputError(f"stiffness must be 'definite' or 'exact', got {stiffness!r}")
        h = float(h)  # type: ignore[arg-type]  # numpy's isscalar guard drops the float type
        definite = stiffness == "definite" or method == "semi_implicit"
        if tau is not None:
            tau = as_vector(tau, "tau", self.nv, batch=False)
        S, kin, Arr, App, br, bp, p_part, vrho, xp1 = self._assemble(h, method == "implicit", definite=definite,
                                                                     tau=tau)
        nv = self.nv
        sol = None
        if attachments == "eliminate" and solver == "direct" and definite:
            sol = self._solve_cholesky(S, kin, Arr, App, br, bp, p_part, diagonal=method != "implicit")
        if sol is not None:
            vn, xdf, up = sol
            fdrive = self._drive_force(S, App, up, bp, h)
        elif attachments == "eliminate":
            rp = bp - App @ p_part
            A, B = self._reduced_matrix(S, kin, Arr, App)
            rf = rp[S.free_rows] if S.selection else S.Cf.T @ rp
            rhs = np.concatenate([br + B.T @ rp, rf]) if nv else rf
            z = self._solve(A, rhs, solver, definite)
            vn, xdf = z[:nv], z[nv:].reshape(-1, 3)
            B_v = B @ vn if nv else 0.0
            up = S.Cf @ z[nv:] + B_v + p_part
            fdrive = self._drive_force(S, App, up, bp, h)
        else:
            vn, xdf, up, fdrive = self._kkt(S, kin, Arr, App, br, bp, vrho, h)
        self.last = {"prescribed_force": fdrive, "particle_velocity": up.reshape(-1, 3)}
        if nv:
            self.q = self.model.integrate(self.q, vn, h)
            self.v = vn
        self._xf = self._xf + h * xdf
        self._xdf = xdf
        self.t += h
        if not (np.all(np.isfinite(self._xf)) and np.all(np.isfinite(self.v))):
            raise SimulationError(f"the particle system diverged at t = {self.t:g} (non-finite state)")
        return self

    def _free_block(self, S, diagonal):
        """The free particles' block ``C_fᵀ App C_f`` of the reduced matrix on
        a fixed pattern, and the symbolic analysis of its sparse Cholesky
        factorization (once per structure): ``(chol, T)`` with the block's
        data ``T @ App.data`` (App's data in the structure's pattern; T a
        selection when no particle is attached to a free one).
        ``diagonal``: App is the diagonal mass matrix (semi-implicit Euler),
        whose pattern is App's diagonal only."""
        key = "chol_diagonal" if diagonal else "chol"
        if getattr(S, key, None) is not None:
            return getattr(S, key)
        n3, nf3 = 3 * self.n, 3 * S.nf
        sel = S.inv[len(S.inv) - n3:] if diagonal else np.arange(S.nnz)     # App's data entries used
        prow = np.repeat(np.arange(n3), np.diff(S.indptr))[sel]
        pcol = S.indices.astype(np.int64)[sel]
        Cf = S.Cf.tocsr()
        # every product Cf[i, r] App[i, j] Cf[j, c] of a stored entry e = (i, j): (r, c, weight, e)
        ci, cj = np.diff(Cf.indptr)[prow], np.diff(Cf.indptr)[pcol]
        cnt = ci * cj
        E = np.repeat(sel, cnt)
        t = np.arange(cnt.sum()) - np.repeat(np.cumsum(cnt) - cnt, cnt)     # 0..cnt_e − 1 within each entry
        cjr = np.repeat(cj, cnt)
        ka = np.repeat(Cf.indptr[prow], cnt) + t // np.maximum(cjr, 1)
        kb = np.repeat(Cf.indptr[pcol], cnt) + t % np.maximum(cjr, 1)
        R, Cc = Cf.indices[ka].astype(np.int64), Cf.indices[kb].astype(np.int64)
        W = Cf.data[ka] * Cf.data[kb]
        w = max(nf3, 1)
        uniq, slot = np.unique(R * w + Cc, return_inverse=True)
        indices = (uniq % w).astype(np.int64)
        indptr = np.searchsorted(uniq // w, np.arange(nf3 + 1)).astype(np.int64)
        T = sp.csr_matrix((W, (slot, E)), shape=(len(uniq), S.nnz))
        out = (SparseCholesky(indptr, indices, nf3, block=3), T)
        setattr(S, key, out)
        return out

    def _solve_cholesky(self, S, kin, Arr, App, br, bp, p_part, diagonal=False):
        """The eliminated step's solve when the particle block is symmetric
        positive definite (``stiffness="definite"``, or semi-implicit
        Euler): ``A_ff = C_fᵀ App C_f`` by the sparse Cholesky factorization
        (:mod:`multibody.solvers.sparse_cholesky`, symbolic analysis once),
        the model's DoFs by their dense Schur complement ``A_qq − A_qf
        A_ff⁻¹ A_fq`` (nv × nv, LU: the model's block need not be
        symmetric), i.e. block elimination of ``PᵀÂP z = Pᵀ(b − Â p)``
        (App is symmetric here, so ``A_qf = A_fqᵀ``). Returns the model's
        velocities, the free particles' velocities (nf, 3) and every
        particle's velocity (3n); or None if the factorization meets a
        non-positive pivot on finite data (not expected: the definite
        block is positive definite; the caller then solves by LU)."""
        ch, T = self._free_block(S, diagonal)
        nv = self.nv
        rp = bp - App @ p_part
        data = T @ App.data
        bad = ch.factor(data)
        if bad >= 0:
            if np.all(np.isfinite(data)):
                return None          # not positive definite (the model's part of the springs' reaction): LU
            r = int(S.free[bad // 3])
            raise SimulationError(f"the step matrix of the particles is not positive definite at {self.label(r)} "
                                  f"(coordinate {bad % 3}: a non-finite, diverged state)")
        rf = rp[S.free_rows] if S.selection else S.Cf.T @ rp
        if nv:
            B = S.Cb @ kin.Ppt                                   # 3n × nv
            AB = App @ B
            Afq = AB[S.free_rows] if S.selection else S.Cf.T @ AB
            X = ch.solve(np.column_stack([rf, Afq]))
            schur = Arr + B.T @ AB - Afq.T @ X[:, 1:]
            vn = np.linalg.solve(schur, br + B.T @ rp - Afq.T @ X[:, 0])
            zf = X[:, 0] - X[:, 1:] @ vn
            up = S.Cf @ zf + B @ vn + p_part
        else:
            vn = np.zeros(0)
            zf = ch.solve(rf)
            up = S.Cf @ zf + p_part
        return vn, zf.reshape(-1, 3), up

    def _drive_force(self, S, App, up, bp, h):
        """Force (n_ρ, 3) that drives the prescribed particles over the step:
        ``P_ρᵀ(Â u⁺ − b)/h`` (§0.21 with the sign fix of notes C21)."""
        if not len(S.pres):
            return np.zeros((0, 3))
        return (S.Cp.T @ (App @ up - bp) / h).reshape(-1, 3)

    def _solve(self, A, rhs, solver, symmetric=False):
        if solver == "iterative":
            d = A.diagonal()
            Mi = sp.diags(1.0 / d)
            z, info = bicgstab(A, rhs, M=Mi, rtol=1e-10, atol=0.0, maxiter=2000)
            if info != 0:
                raise SimulationError(f"BiCGSTAB did not converge (info {info}); use solver='direct'")
            return z
        try:
            if symmetric:   # SPD: diagonal pivots keep the symmetric ordering's fill (measured 3-10x less)
                lu = splu(A, permc_spec="MMD_AT_PLUS_A", diag_pivot_thresh=0.0, options={"SymmetricMode": True})
            else:
                lu = splu(A, permc_spec="MMD_AT_PLUS_A")
            z = lu.solve(rhs)
        except RuntimeError as exc:
            raise SimulationError(f"the reduced system of the particles is singular ({exc})") from None
        return z

    def _kkt(self, S, kin, Arr, App, br, bp, vrho, h):
        """The full step with the attachments as KKT rows ``G u⁺ = g`` in this
        library's sign ``[Â −Gᵀ; G 0]`` (the oracle of the elimination)."""
        nv, n = self.nv, self.n
        N = nv + 3 * n
        A = sp.bmat([[sp.csr_matrix(Arr) if nv else None, None], [None, App]], format="csr") if nv else App
        b = np.concatenate([br, bp])
        I, J, V, g = [], [], [], []

        def row(k, blocks, rhs):
            r0 = len(g) * 3
            for c0, blk in [(nv + 3 * k, np.eye(3))] + [(c0, -blk) for c0, blk in blocks]:
                rr, cc = np.nonzero(np.ones_like(blk, dtype=bool))
                I.extend(r0 + rr)
                J.extend(c0 + cc)
                V.extend(blk[rr, cc])
            g.append(np.asarray(rhs, dtype=float))

        for a, r in enumerate(S.attached_body):
            row(r, [(0, kin.Ppt[3 * a:3 * a + 3])], h * kin.abias[3 * a:3 * a + 3])
        for a, r in enumerate(S.pres):
            row(r, [], vrho[a])
        for k, pairs in self._weights.items():
            row(k, [(nv + 3 * j, w * np.eye(3)) for j, w in pairs], np.zeros(3))
        rows = len(g)
        if rows:
            G = sp.csr_matrix((V, (I, J)), shape=(3 * rows, N))
            u, lam = solve_saddle(A, G, b, np.concatenate(g))
        else:
            u, lam = splu(sp.csc_matrix(A)).solve(b), np.zeros(0)
        vn = u[:nv]
        up = u[nv:]
        xdf = up.reshape(n, 3)[S.free]
        # the prescribed rows' impulses (after the attachment rows of the body roots)
        nb = len(S.attached_body)
        fdrive = lam[3 * nb:3 * (nb + len(S.pres))].reshape(-1, 3) / h
        return vn, xdf, up, fdrive

    # ------------------------------------------------------------------ dynamics and energies
    def _state_kinematics(self, q, v, x_free, xd_free, t):
        """A state given in parts (None: the current one) and its kinematics."""
        S = self._structure()
        q = self.q if q is None else as_vector(q, "q", self.model.nq, batch=False)
        v = self.v if v is None else as_vector(v, "v", self.nv, batch=False)
        xf = self._xf if x_free is None else np.asarray(x_free, dtype=float).reshape(S.nf, 3)
        xdf = self._xdf if xd_free is None else np.asarray(xd_free, dtype=float).reshape(S.nf, 3)
        t = self.t if t is None else t
        return S, q, v, t, self._kinematics(S, q, v, t, xf, xdf)

    def reduced_dynamics(self, q=None, v=None, x_free=None, xd_free=None, t=None):
        """``(M', f')``: ``M' = PᵀMP`` (dense) and ``f' = Pᵀ(f − MṖz)`` (with
        the model's bias forces −C(q, v) in f and the fictitious forces of the
        attachments, ArtiSynth §0.19), so ``ż = M'⁻¹ f'`` (no prescribed
        particles: their accelerations are not part of f')."""
        S, q, v, t, kin = self._state_kinematics(q, v, x_free, xd_free, t)
        fp, _ = self.spring_forces(kin.x, kin.xd, jacobians=False)
        P = self.map_matrix(kin=kin)
        nv = self.nv
        Mfull = (sp.block_diag([sp.csr_matrix(crba(self.model, q)), sp.diags(S.m3)], format="csr") if nv
                 else sp.diags(S.m3, format="csr"))
        if nv:
            _, fe, c, _, _ = self._rigid(q, v, t, False)
            f = np.concatenate([fe - c, fp])
        else:
            f = fp
        pdot = np.concatenate([np.zeros(nv), S.Cb @ kin.abias])
        Mr = (P.T @ Mfull @ P).toarray()
        return Mr, P.T @ (f - Mfull @ pdot)

    def map_matrix(self, q=None, kin=None):
        """``P`` (nv + 3n × nv + 3n_free, CSR): ``u = P z`` for the particles
        attached to bodies and particles (prescribed rows are zero)."""
        S = self._structure()
        if kin is None:
            q = self.q if q is None else q
            kin = self._kinematics(S, q, np.zeros(self.nv), self.t, self._xf, self._xdf, need_dv=False)
        nv = self.nv
        if nv:
            B = S.Cb @ kin.Ppt
            return sp.bmat([[sp.identity(nv), None], [sp.csr_matrix(B), S.Cf]], format="csr")
        return S.Cf.copy()

    def applied_forces(self, q=None, v=None, x_free=None, xd_free=None, t=None, jacobians=False):
        """``f_a = Pᵀ f`` (reduced, nz) of the applied forces only (force
        elements, gravity, joint and particle damping, springs: no bias or
        fictitious forces) and, with ``jacobians``, its exact derivatives
        ``K' = ∂f_a/∂y`` (y = (q, x_free), q along ``model.integrate``) and
        ``D' = ∂f_a/∂z`` (dense): ``K' = PᵀK P + G_att + PᵀD W``,
        ``D' = PᵀD P``, with ``G_att`` the attachments' geometric stiffness
        and ``W = ∂(P z)/∂y`` the change of the attached particles'
        velocities with the configuration."""
        S, q, v, t, kin = self._state_kinematics(q, v, x_free, xd_free, t)
        nv = self.nv
        P = self.map_matrix(kin=kin)
        if not jacobians:
            fp, _ = self.spring_forces(kin.x, kin.xd, jacobians=False)
            fr = self._rigid(q, v, t, False)[1] if nv else np.zeros(0)
            return P.T @ np.concatenate([fr, fp])
        fp, Kp, Dp = self.particle_jacobians(kin.x, kin.xd)
        Pd = P.toarray()
        nz = Pd.shape[1]
        Kf = np.zeros((nv + 3 * self.n,) * 2)
        Df = np.zeros_like(Kf)
        Kf[nv:, nv:] = Kp.toarray()
        Df[nv:, nv:] = Dp.toarray()
        if nv:
            _, fr, _, Kr, Dr = self._rigid(q, v, t, True)
            Kf[:nv, :nv], Df[:nv, :nv] = Kr, Dr
        else:
            fr = np.zeros(0)
        Kred = Pd.T @ Kf @ Pd
        Dred = Pd.T @ Df @ Pd
        if nv and len(S.attached_body):
            Kred[:nv, :nv] += self._attachment_stiffness(S, kin, fp)
            # W: ∂ẋ/∂q of the body points at fixed v (forces/_kin point_velocity_derivative), carried down
            Wb = np.zeros((3 * len(S.attached_body), nv))
            st = kin.st
            for b in S.bodies:
                for a in np.nonzero(S.body_of == b)[0]:
                    Wb[3 * a:3 * a + 3] = st.point_velocity_derivative(b, kin.xb[a], kin.Ppt[3 * a:3 * a + 3])
            W = np.zeros((nv + 3 * self.n, nz))
            W[nv:, :nv] = S.Cb @ Wb
            Kred += Pd.T @ Df @ W
        f = Pd.T @ np.concatenate([fr, fp])
        return f, Kred, Dred

    def kinetic_energy(self) -> float:
        """``½ uᵀ M u`` of the model and every particle (prescribed ones included)."""
        T = self.particle_energy(self.positions(), self.velocities())[0]
        if self.nv:
            T += 0.5 * float(self.v @ crba(self.model, self.q) @ self.v)
        return T

    def potential_energy(self) -> float:
        """Gravity of bodies and particles, the model's conservative elements
        and the springs' elastic energy (J)."""
        V = self.particle_energy(self.positions(), np.zeros((self.n, 3)))[1]
        for e in self.elements:
            V += e.potential_energy(self.model, self.q)
        return V

    def particle_energy(self, x, xd):
        """The particles' part at world positions ``x`` and velocities ``xd``
        ((n, 3), or a batch (N, n, 3)): ``(kinetic, potential, damping)`` —
        ``½ Σ m |ẋ|²`` (J), gravity ``−Σ m gᵀx`` plus the springs' elastic
        energy (J; ``½k(l − r)²``, Green: ``k(l² − r²)²/(8r²)``), and the
        power (W, ≤ 0) of the particle damping and the springs' dampers,
        ``−α Σ m |ẋ|² − Σ d l̇²``. Floats, or (N,) arrays for a batch."""
        S = self._structure()
        x, xd = np.asarray(x, dtype=float), np.asarray(xd, dtype=float)
        speed2 = (xd ** 2).sum(axis=-1) @ S.mass
        kinetic, damping = 0.5 * speed2, -self.particle_damping * speed2
        potential = -(x @ self.g) @ S.mass
        if len(S.si):
            dx = x[..., S.sj, :] - x[..., S.si, :]
            l = np.linalg.norm(dx, axis=-1)
            lin, g = ~S.green, S.green
            potential = potential + 0.5 * ((l[..., lin] - S.r[lin]) ** 2) @ S.k[lin]
            if np.any(g):
                potential = potential + ((l[..., g] ** 2 - S.r[g] ** 2) ** 2 / (8 * S.r[g] ** 2)) @ S.k[g]
            # l̇ = uᵀΔẋ (0 for a spring of zero length: its direction is undefined)
            ldot = (dx * (xd[..., S.sj, :] - xd[..., S.si, :])).sum(axis=-1) / np.where(l > 0, l, np.inf)
            damping = damping - (ldot ** 2) @ S.d
        if x.ndim == 2:
            return float(kinetic), float(potential), float(damping)
        return kinetic, potential, damping

    # ------------------------------------------------------------------ rollout
    def rollout(self, duration: float, h: float, method: str = "implicit", attachments: str = "eliminate",
                solver: str = "direct", stiffness: str = "definite") -> ParticleTrajectory:
        """Step for ``duration`` seconds (``round(duration/h)`` steps) from the
        current state; returns a :class:`ParticleTrajectory` with the initial
        state first."""
        steps = int(round(float(duration) / float(h)))
        if steps < 0:
            raise InputError(f"duration must be >= 0, got {duration!r}")
        n = self.n
        t = np.empty(steps + 1)
        Q = np.empty((steps + 1, self.model.nq))
        V = np.empty((steps + 1, self.nv))
        X = np.empty((steps + 1, n, 3))
        XD = np.empty((steps + 1, n, 3))

        def record(k):
            t[k], Q[k], V[k] = self.t, self.q, self.v
            S = self._structure()
            kin = self._kinematics(S, self.q, self.v, self.t, self._xf, self._xdf, need_dv=False)
            X[k], XD[k] = kin.x, kin.xd

        record(0)
        for k in range(steps):
            self.step(h, method, attachments, solver, stiffness)
            record(k + 1)
        return ParticleTrajectory(t, Q, V, X, XD)


def _hats(x):
    """Skew matrices (p, 3, 3) of the rows of x (p, 3)."""
    H = np.zeros((len(x), 3, 3))
    H[:, 0, 1], H[:, 0, 2] = -x[:, 2], x[:, 1]
    H[:, 1, 0], H[:, 1, 2] = x[:, 2], -x[:, 0]
    H[:, 2, 0], H[:, 2, 1] = -x[:, 1], x[:, 0]
    return H


@njit(cache=True, nogil=True)
def _spring_kernel(x, xd, si, sj, k, d, r, law, definite, jacobians, f, Kv, Dv):
    """Forces of the axial springs added to ``f`` (3n) and, with
    ``jacobians``, the blocks of ``K = ∂f/∂x`` and ``D = ∂f/∂ẋ`` per spring
    (``Kv``, ``Dv``: m × 4 × 3 × 3, the blocks (i,i), (i,j), (j,i), (j,j)
    with signs +, −, −, +): ``ParticleSystem.spring_forces`` (ArtiSynth
    §0.12–0.13, notes C12; the definite stiffness of Choi & Ko). Returns −1,
    or the first spring of zero length."""
    m = si.shape[0]
    sign = (1.0, -1.0, -1.0, 1.0)
    for s in range(m):
        i, j = si[s], sj[s]
        dx0, dx1, dx2 = x[j, 0] - x[i, 0], x[j, 1] - x[i, 1], x[j, 2] - x[i, 2]
        l = np.sqrt(dx0 * dx0 + dx1 * dx1 + dx2 * dx2)
        if not l >= 1e-300:
            return s
        u = (dx0 / l, dx1 / l, dx2 / l)
        dv = (xd[j, 0] - xd[i, 0], xd[j, 1] - xd[i, 1], xd[j, 2] - xd[i, 2])
        ldot = u[0] * dv[0] + u[1] * dv[1] + u[2] * dv[2]
        if law[s] == 1:                    # Green strain, stress form: F = k l (l² − r²)/(2r²)
            r2 = r[s] * r[s]
            F = k[s] * l * (l * l - r2) / (2 * r2) + d[s] * ldot
            Fl = k[s] * (3 * l * l - r2) / (2 * r2)
        else:
            F = k[s] * (l - r[s]) + d[s] * ldot
            Fl = k[s]
        for a in range(3):
            f[3 * i + a] += F * u[a]
            f[3 * j + a] -= F * u[a]
        if not jacobians:
            continue
        # ∂f1/∂x1 = −F_l U_n − (F_l̇/l) u Δẋᵀ U_p − (F/l) U_p;  D11 = −d U_n
        Ft = (max(F, 0.0) if definite else F) / l
        if definite:
            Fl = max(Fl, 0.0)              # the Green law's dF/dl < 0 below l = r/√3
        dl = d[s] / l
        # Δẋᵀ U_p = Δẋᵀ − l̇ uᵀ
        w = (dv[0] - ldot * u[0], dv[1] - ldot * u[1], dv[2] - ldot * u[2])
        base = 36 * s
        for a in range(3):
            for b in range(3):
                un = u[a] * u[b]
                up = (1.0 if a == b else 0.0) - un
                K11 = -Fl * un - Ft * up
                if not definite:
                    K11 -= dl * u[a] * w[b]
                D11 = -d[s] * un
                for t in range(4):
                    Kv[base + 9 * t + 3 * a + b] = sign[t] * K11
                    Dv[base + 9 * t + 3 * a + b] = sign[t] * D11
    return -1


@njit(cache=True, nogil=True)
def _scatter_add(inv, spring_vals, diag, data):
    """``data[inv[e]] += v_e`` for the pattern entries ``v = [spring_vals,
    diag]`` (the structure's CSR pattern: the springs' blocks, then the
    diagonal)."""
    m = spring_vals.shape[0]
    for e in range(m):
        data[inv[e]] += spring_vals[e]
    for e in range(diag.shape[0]):
        data[inv[m + e]] += diag[e]
