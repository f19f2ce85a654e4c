"""Spatial paths: a tendon or muscle routed through via points on several
bodies (Sueda §1.9.5, ArtiSynth §0.14, MuJoCo's spatial tendons without
wrapping), as a :class:`~multibody.forces.transmission.Transmission`.

A path is a list of points ``x_0 … x_n``, each fixed in a frame (a body,
a merged fixed link, or the world). Its length is
``l = Σ_s |x_{s+1} − x_s|``; with ``u_s`` the unit direction of segment
``s`` and ``P_k`` the world Jacobian (3 x nv) of point k,

* moment arm ``J = ∂l/∂q = Σ_k P_kᵀ g_k`` with ``g_k = ∂l/∂x_k =
  u_{k−1} − u_k`` (``u_{−1} = u_n = 0``), so a force ``f`` along the path
  (positive: lengthens it) applies ``f g_k`` at point k: a tension ``F``
  is ``f = −F`` and pulls point k by ``F v_k``, ArtiSynth's
  ``v_k = u_k − u_{k−1}``;
* rate ``l̇ = J v``;
* ``H = ∂J/∂q`` (tangent space), which gives the geometric term
  ``∂(Jᵀ f)/∂q = f H`` and the rate gradient ``∂l̇/∂q = Hᵀ v`` (l̇ = J v is
  linear in v): ``H = Σ_s ΔP_sᵀ (I − u_s u_sᵀ) ΔP_s / l_s + Σ_k T_k`` with
  ``ΔP_s = P_{s+1} − P_s`` (the turning of the segment directions:
  ArtiSynth's ``∂u_s/∂x = ±(I − u_s u_sᵀ)/l_s``, Sueda's ``K_k2`` blocks
  with errata S2's sign) and ``T_k = ∂P_kᵀ/∂q · g_k`` at fixed ``g_k`` (the
  point Jacobians turning with the tree). With the tangent-space rule of
  :mod:`._kin` (``∂s_j/∂δ_l = mask[l, j] s_l ×ₘ s_j``) the column j of
  ``P_k`` moves as ``ω_l × P_j`` where ``mask[l, j]`` and as
  ``ω_j × P_l`` elsewhere, so
  ``T_k[j, l] = mask[l, j] ? ω_l·(P_j × g) : ω_j·(P_l × g)``.

Segments whose two ends are moved by the same coordinates (two points on
one body, or on bodies welded together) have constant length: they add to
``l`` and nothing else. A segment of zero length between points that move
relative to each other has no direction: :class:`~multibody.InputError`
naming the element and the segment.

Everything above is one compiled kernel per evaluation
(:func:`path_kernel`), over the world joint Jacobian and body poses that
the force elements share (:class:`~multibody.forces._kin.State`).
"""
import weakref
from typing import TYPE_CHECKING, Any, Optional, Sequence, Tuple, Union

import numpy as np
from numba import carray, njit

from .._compiled import JIT, f64_pointer
from ..errors import InputError
from ._kin import State, topology
from .base import ForceElement, floats, resolve_frame
from .transmission import Transmission, TransmissionState
from .._typing import Array, ArrayLike, Frame

if TYPE_CHECKING:
    from ..model.data import Data
    from ..model.model import Model

#: segments shorter than this (m) between points that move relative to each other are an error
ZERO_LENGTH = 1e-12


@njit(cache=True, nogil=True)
def path_kernel(oMi, J, v, fbuf, ibuf, out, jac):
    """:func:`path_kernel_work` with its scratch allocated."""
    nv = J.shape[1]
    return path_kernel_work(oMi, J, v, fbuf, ibuf, out, jac, np.empty(path_work_size(ibuf[0], nv)),
                            np.empty(nv, dtype=np.int64))


@njit(cache=True, nogil=True, inline="always")
def _block_compiled(work, offset, shape):
    """``work[offset:]`` as an array of ``shape`` (a ``carray`` view: a
    reshaped slice calls Numba's reshape helper, ~25 ns, a tenth of a
    short path's evaluation)."""
    return carray(f64_pointer(work.ctypes.data + np.uint64(8 * offset)), shape)


def _block_py(work, offset, shape):
    """:func:`_block_compiled` without JIT: the reshaped slice."""
    return work[offset:offset + int(np.prod(np.array(shape)))].reshape(shape)


_block = _block_compiled if JIT else _block_py


@njit(cache=True, nogil=True, inline="always")
def path_work_size(n, nv):
    """The floats of :func:`path_kernel_work`'s scratch for a path of ``n`` points."""
    return n * (10 + 3 * nv) + 3 * nv


@njit(cache=True, nogil=True)
def path_kernel_work(oMi, J, v, fbuf, ibuf, out, jac, work, idx):
    """Length, moment arm, rate and (``jac``) ``Hᵀv`` and ``H = ∂J/∂q`` of a
    path (module docstring), written to ``out`` = ``[J_l (nv), Hᵀv (nv), H
    (nv x nv, row-major)]`` (``out`` of nv entries without ``jac``).
    ``oMi`` (nb, 4, 4) world body poses, ``J`` (6, nv) world joint
    Jacobian, ``v`` (nv,). The path (:meth:`Path._bind`): ``ibuf`` = ``[n,
    body of each point (n), active flag of each segment (n - 1)]``,
    ``fbuf`` = ``[point coordinates in their body (3n), support row of each
    point's body (n·nv: 1.0 where the coordinate moves it), maskT of
    :mod:`._kin` (nv·nv)]``. Returns ``(status, l, l̇)``: ``status = s + 1``
    for a zero-length active segment s (then ``out`` is not filled).
    ``work`` (at least :func:`path_work_size` floats) and ``idx`` (nv
    int64): scratch (the fused step's actuators pass the table's)."""
    n = ibuf[0]
    nv = J.shape[1]
    o_sup = 3 * n
    o_mask = o_sup + n * nv
    # per point: x (0:3), u of the segment starting there (3:6), g = ∂l/∂x (6:9), segment length (9)
    pt = _block(work, 0, (n, 10))
    for i in range(10 * n):
        work[i] = 0.0
    for k in range(n):
        b = ibuf[1 + k]
        p0, p1, p2 = fbuf[3 * k], fbuf[3 * k + 1], fbuf[3 * k + 2]
        for r in range(3):
            pt[k, r] = oMi[b, r, 0] * p0 + oMi[b, r, 1] * p1 + oMi[b, r, 2] * p2 + oMi[b, r, 3]
    length = 0.0
    for s in range(n - 1):
        d0, d1, d2 = pt[s + 1, 0] - pt[s, 0], pt[s + 1, 1] - pt[s, 1], pt[s + 1, 2] - pt[s, 2]
        ls = np.sqrt(d0 * d0 + d1 * d1 + d2 * d2)
        length += ls
        if ibuf[1 + n + s] != 0:
            if ls < ZERO_LENGTH:
                return s + 1, 0.0, 0.0
            pt[s, 9] = ls
            pt[s, 3], pt[s, 4], pt[s, 5] = d0 / ls, d1 / ls, d2 / ls
            for r in range(3):
                pt[s, 6 + r] -= pt[s, 3 + r]
                pt[s + 1, 6 + r] += pt[s, 3 + r]
    # point Jacobians P_k (only the points of active segments) and J_l = Σ_k P_kᵀ g_k
    for j in range(nv):
        out[j] = 0.0
    P = _block(work, 10 * n, (n, 3, nv))
    for i in range(10 * n, n * (10 + 3 * nv)):
        work[i] = 0.0
    for k in range(n):
        if not ((k < n - 1 and ibuf[1 + n + k] != 0) or (k > 0 and ibuf[n + k] != 0)):
            continue
        x0, x1, x2 = pt[k, 0], pt[k, 1], pt[k, 2]
        g0, g1, g2 = pt[k, 6], pt[k, 7], pt[k, 8]
        for j in range(nv):
            if fbuf[o_sup + k * nv + j] != 0.0:
                w0, w1, w2 = J[0, j], J[1, j], J[2, j]
                a0 = J[3, j] + w1 * x2 - w2 * x1
                a1 = J[4, j] + w2 * x0 - w0 * x2
                a2 = J[5, j] + w0 * x1 - w1 * x0
                P[k, 0, j], P[k, 1, j], P[k, 2, j] = a0, a1, a2
                out[j] += a0 * g0 + a1 * g1 + a2 * g2
    rate = 0.0
    for j in range(nv):
        rate += out[j] * v[j]
    if not jac:
        return 0, length, rate
    o_H = 2 * nv
    for i in range(nv, o_H + nv * nv):
        out[i] = 0.0
    # turning of the segment directions: Σ_s WᵀW / l_s with W = (I − u uᵀ) ΔP_s
    W = _block(work, n * (10 + 3 * nv), (3, nv))
    for s in range(n - 1):
        if ibuf[1 + n + s] == 0:
            continue
        u0, u1, u2 = pt[s, 3], pt[s, 4], pt[s, 5]
        m = 0
        for j in range(nv):
            a0 = P[s + 1, 0, j] - P[s, 0, j]
            a1 = P[s + 1, 1, j] - P[s, 1, j]
            a2 = P[s + 1, 2, j] - P[s, 2, j]
            if a0 == 0.0 and a1 == 0.0 and a2 == 0.0:
                continue
            c = u0 * a0 + u1 * a1 + u2 * a2
            W[0, j], W[1, j], W[2, j] = a0 - c * u0, a1 - c * u1, a2 - c * u2
            idx[m] = j
            m += 1
        inv = 1.0 / pt[s, 9]
        for a in range(m):
            j = idx[a]
            for c_ in range(a, m):
                i = idx[c_]
                h = (W[0, j] * W[0, i] + W[1, j] * W[1, i] + W[2, j] * W[2, i]) * inv
                out[o_H + j * nv + i] += h
                if i != j:
                    out[o_H + i * nv + j] += h
    # point Jacobians turning with the tree at fixed g_k: T[j, i] = mask[i, j] ? ω_i·C_j : ω_j·C_i, C = P × g
    C = W
    for k in range(n):
        g0, g1, g2 = pt[k, 6], pt[k, 7], pt[k, 8]
        if g0 == 0.0 and g1 == 0.0 and g2 == 0.0:
            continue
        m = 0
        for j in range(nv):
            if fbuf[o_sup + k * nv + j] != 0.0:
                idx[m] = j
                m += 1
                a0, a1, a2 = P[k, 0, j], P[k, 1, j], P[k, 2, j]
                C[0, j] = a1 * g2 - a2 * g1
                C[1, j] = a2 * g0 - a0 * g2
                C[2, j] = a0 * g1 - a1 * g0
        for a in range(m):
            j = idx[a]
            for c_ in range(m):
                i = idx[c_]
                if fbuf[o_mask + j * nv + i] != 0.0:
                    out[o_H + j * nv + i] += J[0, i] * C[0, j] + J[1, i] * C[1, j] + J[2, i] * C[2, j]
                else:
                    out[o_H + j * nv + i] += J[0, j] * C[0, i] + J[1, j] * C[1, i] + J[2, j] * C[2, i]
    # rate gradient Hᵀ v
    for i in range(nv):
        acc = 0.0
        for j in range(nv):
            acc += out[o_H + j * nv + i] * v[j]
        out[nv + i] = acc
    return 0, length, rate


class _Geometric:
    """``f ↦ f H`` (the geometric term of a path, TransmissionState.geometric)."""
    __slots__ = ("H",)

    def __init__(self, H):
        self.H = H

    def __call__(self, f):
        return f * self.H


class _Binding:
    """A path resolved against one model (see :meth:`Path._bind`)."""
    __slots__ = ("owner", "fbuf", "ibuf", "active", "frames", "nv", "zeros")

    def __init__(self, owner, fbuf, ibuf, active, frames, nv):
        self.owner, self.fbuf, self.ibuf, self.active, self.frames = owner, fbuf, ibuf, active, frames
        self.nv = nv
        self.zeros = np.zeros(nv)

    @property
    def pbody(self):
        return self.ibuf[1:1 + self.ibuf[0]]

    @property
    def plocal(self):
        return self.fbuf[:3 * self.ibuf[0]].reshape(-1, 3)


class Path(Transmission):
    """A spatial path through ``points``: a list of at least two
    ``(frame, point)``, ``frame`` a frame or body name (or index) of the
    model, ``None`` or ``"world"`` for the world, ``point`` a 3-vector in
    that frame's coordinates. The length is the sum of the straight
    segments between consecutive points (via points act as frictionless
    pulleys). See the module docstring for the moment arm and the
    geometric term, and :mod:`multibody.forces.muscles` for the elements
    that act along a path.

    ``path.length(model, q)``, ``path.moment_arm(model, q)``,
    ``path.points(model, q)`` (world positions) and
    ``path.point_forces(model, q, f)`` evaluate it directly;
    :meth:`evaluate` gives the whole :class:`TransmissionState`.
    """
    linear = False

    def __init__(self, points: Sequence[Tuple[Union[Frame, None], ArrayLike]], name: Optional[str] = None) -> None:
        self.name = name
        self.frames: Tuple[Frame, ...] = ()
        self._bindings: "weakref.WeakKeyDictionary[Model, Any]" = weakref.WeakKeyDictionary()
        if isinstance(points, (str, bytes, dict)) or not hasattr(points, "__iter__"):
            raise self.error(f"points must be a list of (frame, point), got {points!r}")
        pts = list(points)
        if len(pts) < 2:
            raise self.error(f"a path needs at least two points, got {len(pts)}")
        frames, local = [], []
        for k, item in enumerate(pts):
            if not (isinstance(item, (tuple, list)) and len(item) == 2):
                raise self.error(f"point {k} must be a pair (frame, point), got {item!r}")
            frame, p = item
            a = floats(self, p, f"point {k}")
            if a.shape != (3,) or not np.all(np.isfinite(a)):
                raise self.error(f"point {k} must be a finite 3-vector in the frame's coordinates, got {p!r}")
            frames.append("world" if frame is None else frame)
            local.append(a)
        self.frames = tuple(frames)
        self.local_points = np.array(local)

    # ----------------------------------------------------------- naming
    def __repr__(self):
        if self.name:
            return f"Path({self.name!r})"
        return f"Path({' → '.join(str(f) for f in self.frames)})" if self.frames else "Path"

    # errors named like a force element's; pickled without the per-model bindings (weak references)
    error: Any = ForceElement.error
    __getstate__ = ForceElement.__getstate__
    __setstate__ = ForceElement.__setstate__

    @property
    def npoints(self) -> int:
        return len(self.frames)

    # ---------------------------------------------------------- binding
    def _bind(self, owner, model):
        """Resolve the frames against ``model`` (errors name ``owner``):
        each point's body and coordinates in it, and which segments change
        length (their two bodies are not moved by the same coordinates)."""
        topo = topology(model)
        n = self.npoints
        pbody = np.empty(n, dtype=np.int64)
        plocal = np.empty((n, 3))
        for k, (frame, p) in enumerate(zip(self.frames, self.local_points)):
            b, place = resolve_frame(owner, model, frame)
            pbody[k] = b
            plocal[k] = place[:3, :3] @ p + place[:3, 3]
        sup = topo.support
        active = np.array([not np.array_equal(sup[pbody[s]], sup[pbody[s + 1]]) for s in range(n - 1)],
                          dtype=np.bool_)
        fbuf = np.concatenate((plocal.ravel(), sup[pbody].ravel(), topo.maskT.ravel()))
        ibuf = np.concatenate(([n], pbody, active.astype(np.int64)))
        return _Binding(owner, fbuf, ibuf, active, self.frames, model.nv)

    def bind(self, model: "Model") -> Any:
        """The path resolved against ``model`` (cached), for the helpers."""
        b = self._bindings.get(model)
        if b is None:
            b = self._bindings[model] = self._bind(self, model)
        return b

    # -------------------------------------------------------- evaluation
    def state(self, st, binding, jacobians=False):
        """The :class:`TransmissionState` at the kinematics ``st``."""
        b = binding
        nv = b.nv
        out = np.empty(nv * (nv + 2) if jacobians else nv)
        status, length, rate = path_kernel(st.oMi, st.J, b.zeros if st.v is None else st.v, b.fbuf, b.ibuf, out,
                                           bool(jacobians))
        if status:
            s = status - 1
            raise b.owner.error(f"path segment {s} (from point {s} on {b.frames[s]!r} to point {s + 1} on "
                                f"{b.frames[s + 1]!r}) has zero length: its direction, and so the force, is "
                                f"undefined", InputError)
        if not jacobians:
            return TransmissionState(length, rate, out)
        return TransmissionState(length, rate, out[:nv], out[nv:2 * nv], _Geometric(out[2 * nv:].reshape(nv, nv)))

    def evaluate(self, model: "Model", q: ArrayLike, v: Optional[ArrayLike] = None, jacobians: bool = False,
                 data: "Optional[Data]" = None) -> TransmissionState:
        """The :class:`TransmissionState` (length, rate, moment arm and, with
        ``jacobians``, the rate gradient and the geometric term) at
        ``(q, v)`` (v None: zero rate)."""
        st = State(model, q, v, data=data, need_v=v is not None)
        return self.state(st, self.bind(model), jacobians)

    def length(self, model: "Model", q: ArrayLike) -> float:
        """Path length (m) at ``q``."""
        return self.evaluate(model, q).length

    def moment_arm(self, model: "Model", q: ArrayLike) -> Array:
        """``J = ∂l/∂q`` (nv,; tangent space): the generalized force of a unit
        force lengthening the path, minus the moment arm of a unit tension."""
        return self.evaluate(model, q).moment

    def points(self, model: "Model", q: ArrayLike) -> Array:
        """World positions (n, 3) of the path's points at ``q``."""
        st = State(model, q, None, need_v=False)
        b = self.bind(model)
        oMi = st.oMi[b.pbody]
        return np.einsum("kij,kj->ki", oMi[:, :3, :3], b.plocal) + oMi[:, :3, 3]

    def point_forces(self, model: "Model", q: ArrayLike, force: float) -> Array:
        """World forces (n, 3) on the points of a force ``force`` along the
        path (positive lengthens it: ``force · ∂l/∂x_k``); a tension ``F``
        is ``force = −F`` and gives ArtiSynth's ``f_k = F v_k``. Points on
        segments of constant length get only the forces of the other
        segments (the forces inside one body cancel)."""
        b = self.bind(model)
        X = self.points(model, q)
        G = np.zeros_like(X)
        for s in range(len(X) - 1):
            if b.active[s]:
                d = X[s + 1] - X[s]
                ls = np.linalg.norm(d)
                if ls < ZERO_LENGTH:
                    raise self.error(f"path segment {s} has zero length", InputError)
                G[s] -= d / ls
                G[s + 1] += d / ls
        return float(force) * G
