"""Maximal coordinates (Sueda §1.6–1.10; notes/seed-001.md B and D): every
body of a :class:`~multibody.model.Model` a free rigid body — its world
pose C ∈ SE(3) and its body twist V = (ω; v) (the velocity of the body
frame's origin and its angular velocity, in body axes, angular first) —
and every joint the constraint rows that keep the child's twist relative
to its parent's in the joint's motion subspace.

For the joint of body k with parent p, motion subspace S_k (6 × n_k, in
k's coordinates) and ``A_kp = Ad(C_k⁻¹ C_p)`` (p's twists in k's
coordinates), the relative twist ``V_k − A_kp V_p`` lies in span S_k: the
rows are ``N_kᵀ (V_k − A_kp V_p) = 0`` with N_k an orthonormal basis of the
wrenches that do no work on S_k (``N_kᵀ S_k = 0``; Sueda's adjoint rows of
§1.10, eq. 1.69–1.70, which keep the rows of Ad for the joint frame's
fixed directions, for an axis in any direction). A hinge keeps 5 rows, a
ball joint 3, a weld 6, a free joint none. Their time derivative gives the
acceleration rows ``N_kᵀ (V̇_k − A_kp V̇_p) = −N_kᵀ ad(V_k) A_kp V_p`` (with
``d/dt A_kp = A_kp ad(V_p) − ad(V_k) A_kp``, notes item 30).

The equations of motion of body k are Newton–Euler in body coordinates,
``M_k V̇_k = ad(V_k)ᵀ M_k V_k + f_k`` (Sueda eq. 1.21–1.23; M_k the spatial
inertia about the body origin, Featherstone's ``[[Ī, m ĉ], [m ĉᵀ, m 1]]``),
f_k gravity and the joint forces: a joint force τ_k acts as the wrench
``w = S_k (S_kᵀS_k)⁻¹ τ_k`` on k and ``−A_kpᵀ w`` on p (the part of w along
N_k would be taken up by the reaction). With the constraint rows G the
accelerations solve the index-1 KKT system ``[M Gᵀ; G 0][V̇; λ] = [f; η]``
(sparse: M block diagonal, G with two blocks per joint).

Every joint type of the catalog is taken. The joints whose S varies in
child coordinates — the universal joint (its second axis turns the first)
and Sueda's library (§2.4: exp_spherical, free3d, euler, free2d,
composite, spline, spline_surface) — take one code path
(:meth:`MaximalSystem._varying`): their coordinates are recovered from the
child's pose in the joint frame (:func:`joint_coordinates`: closed forms,
or Gauss–Newton on the SE(3) log error for composite and spline joints),
S at them gives the rows (:func:`_varying_rows`, 6 − n of them, kept near a
reference basis) and η gains ``Nᵀ Ṡ q̇`` with ``q̇ = S⁺(V_k − A_kp V_p)``
(the model's own Ṡ). Where the pose leaves the coordinates' branch open
(a rotation vector beyond π, the two Euler solutions), the joint forces τ
depend on it: ``near`` names it. A singular configuration (an Euler
joint's gimbal lock) is refused. Rotor inertia (armature, a
reduced-coordinate quantity) is refused. Loop joints (``loops=True``) are
rows of the same form between their two frames (the constant-subspace
types). Joint couplings (``loops=True``: gears, URDF mimic, MJCF joint
equalities, ``q_j = r q_i + o`` between 1-DoF joints) are one row each on
the joints' rates read from the bodies, ``s_j⁺(V_j − A_jp V_p) −
r s_i⁺(V_i − A_iq V_q) = 0`` (Sueda §1.10–1.11; blocks on up to four
bodies), with η from ``d/dt A`` as above and the position error ``q_j −
r q_i − o`` (§1.12) on the coordinates recovered from the poses.

:meth:`MaximalSystem.step` is Sueda's velocity-level step (§1.8, eq.
1.71–1.74) with Baumgarte (§1.12) and Cline–Pai post-stabilization, and
the force elements of :mod:`.maximal_forces` (§1.9) linearly implicit;
:meth:`MaximalSystem.coordinates` maps a maximal state back to (q, v).
docs/maximal.md, docs/lie_groups.md.
"""
from __future__ import annotations

import numbers
from typing import TYPE_CHECKING, Any, NamedTuple, Sequence

import numpy as np
import scipy.sparse as sp
from numba import njit
from scipy.sparse.linalg import splu

from .._typing import Array, ArrayLike
from ..constraints.loops import from_equality, loop_end, perpendiculars
from ..dynamics.closed_loop_kernels import PSD_RTOL, psd_apply, psd_factor
from ..errors import InputError, ModelError, NonFiniteError, SimulationError
from ..kinematics import body_motion, forward_kinematics
from ..model import LoopJoint
from ..model.joints import (C_AX1, C_AX2, C_AX3, C_EXTRA, C_H, C_I, C_MASS, C_P, C_PITCH, C_R, JOINT_TYPES,
                            joint_bias, joint_transform, motion_subspace_into)
from ..model import sueda_joints as sj
from ..spatial import quaternion as quat
from ..spatial import se3, so3

if TYPE_CHECKING:
    from ..model import Model

# KKT systems up to this size are solved by their Schur complement (dense), larger ones by SuperLU
DENSE_KKT_SIZE = 120
# joint types whose motion subspace is constant in child coordinates
_CONSTANT_SUBSPACE = ("fixed", "revolute", "prismatic", "helical", "cylindrical", "planar", "spherical",
                      "translational", "free")
# Sueda's joint library (§2.4): S(q) varies in child coordinates, v = q̇; with the universal joint, the
# "varying" joints, whose rows are formed at the coordinates recovered from the relative pose
_SUEDA = ("exp_spherical", "free3d", "euler", "free2d", "spline", "spline_surface", "composite")
# a pose farther than this from a joint's manifold (the norm of the SE(3) log of the residual, rad and m
# mixed) is refused by the iterative coordinate recovery: a post-stabilized step stays at round-off, an
# unstabilized one drifts by O(h²) a step
MANIFOLD_TOLERANCE = 1e-3
# Gauss–Newton iterations of the coordinate recovery (quadratic on the manifold, linear just off it)
_GN_ITERATIONS = 60
# S with σ_min ≤ this · max(1, σ_max) is singular: the joint's rows are not defined there
_SINGULAR_RTOL = 1e-9


def annihilator(S):
    """An orthonormal basis (6 × (6 − rank S)) of the wrenches that do no
    work on the motion subspace S (6 × n): the left singular vectors beyond
    S's rank."""
    if S.shape[1] == 0:
        return np.eye(6)
    U, sv, _ = np.linalg.svd(S, full_matrices=True)
    return U[:, int(np.sum(sv > 1e-12)):]


def loop_subspace(lj):
    """The motion subspace (6 × n, joint-frame coordinates, angular first)
    of a :class:`~multibody.model.LoopJoint`: what frame B may do relative
    to frame A (the same in either frame for these types, whose axes the
    free motion leaves in place). The universal joint, whose second axis
    turns with the first angle, is refused."""
    a = np.asarray(lj.axis, dtype=float)
    e1, e2 = perpendiculars(a)
    z, I = np.zeros(3), np.eye(3)
    cols = {
        "fixed": [],
        "revolute": [np.r_[a, z]],
        "prismatic": [np.r_[z, a]],
        "helical": [np.r_[a, lj.pitch * a]],
        "cylindrical": [np.r_[a, z], np.r_[z, a]],
        "planar": [np.r_[a, z], np.r_[z, e1], np.r_[z, e2]],
        "spherical": [np.r_[e, z] for e in I],
        "translational": [np.r_[z, e] for e in I],
        "free": list(np.eye(6)),
    }
    if lj.joint not in cols:
        raise InputError(f"the maximal formulation does not take the {lj.joint} loop joint '{lj.name}' (its motion "
                         f"subspace turns with its coordinates)")
    return np.array(cols[lj.joint]).reshape(-1, 6).T


def _descriptor(kind, a, a2=None, a3=None, pitch=0.0):
    """A joint's geometry for :func:`joint_pose` and :func:`joint_coordinates`:
    ``(kind, a, e1, e2, pitch, a2)`` with a the unit axis, (e1, e2) the
    in-plane axes of a planar joint or two unit vectors completing a to a
    right-handed basis (the reference directions of an angle about a), a2
    the universal joint's second axis."""
    a = np.asarray(a, dtype=float)
    if kind == "planar" and a2 is not None:
        e1, e2 = np.asarray(a2, dtype=float), np.asarray(a3, dtype=float)
    else:
        e1, e2 = perpendiculars(a) if np.linalg.norm(a) > 0 else (np.zeros(3), np.zeros(3))
    return kind, a, e1, e2, float(pitch), (None if a2 is None else np.asarray(a2, dtype=float))


def _angle(R, a, e1, e2):
    """θ ∈ (−π, π] with ``R = exp(â θ)`` for a rotation about the unit axis a
    ((e1, e2, a) right-handed): the angle from e1 to R e1 in the plane ⟂ a."""
    x = R @ e1
    return float(np.arctan2(e2 @ x, e1 @ x))


def _angle_gradient(R, a, e1, e2):
    """∂θ/∂ξ (3,) of :func:`_angle` for ``R ← R exp(ξ̂)`` (ξ in the child's
    axes): ``δ(R e1) = −R ê1 ξ``, θ = atan2(s, c)."""
    x = R @ e1
    s, c = e2 @ x, e1 @ x
    B = -R @ so3.hat(e1)
    return (c * (e2 @ B) - s * (e1 @ B)) / (c * c + s * s)


def _nearest_branch(theta, near):
    """θ shifted by a multiple of 2π to the nearest of ``near`` (None: θ)."""
    return theta if near is None else theta + 2.0 * np.pi * np.round((near - theta) / (2.0 * np.pi))


def _quaternion(R, near=None):
    """The unit quaternion (w, x, y, z) of R, with w ≥ 0 or, given ``near``,
    the sign closer to it (q and −q are the same rotation)."""
    q = np.asarray(quat.from_rotation(np.ascontiguousarray(R)), dtype=float)
    sign = (q @ near) if near is not None else q[0]
    return -q if sign < 0 else q


def joint_pose(desc, q):
    """The joint transform J(q) (4 × 4: the child's pose in the joint frame)
    of the joint :func:`_descriptor` ``desc`` at its coordinates q (the
    catalog of :mod:`multibody.model.joints`)."""
    if isinstance(desc, SuedaJoint):
        return _sueda_pose(desc, q)
    kind, a, e1, e2, pitch, a2 = desc
    T = np.eye(4)
    if kind in ("revolute", "helical", "cylindrical"):
        T[:3, :3] = so3.exp(a * q[0])
        T[:3, 3] = a * (pitch * q[0] if kind == "helical" else (q[1] if kind == "cylindrical" else 0.0))
    elif kind == "prismatic":
        T[:3, 3] = a * q[0]
    elif kind == "planar":
        T[:3, :3] = so3.exp(a * q[2])
        T[:3, 3] = e1 * q[0] + e2 * q[1]
    elif kind == "spherical":
        T[:3, :3] = quat.to_rotation(np.ascontiguousarray(q[:4]))
    elif kind == "free":
        T[:3, :3] = quat.to_rotation(np.ascontiguousarray(q[3:7]))
        T[:3, 3] = q[:3]
    elif kind == "translational":
        T[:3, 3] = q[:3]
    elif kind == "universal":
        T[:3, :3] = so3.exp(a * q[0]) @ so3.exp(a2 * q[1])
    return T


def joint_coordinates(desc, T, near=None, start=None):
    """The coordinates q (nq) of the joint ``desc`` whose child sits at the
    pose T (4 × 4) in the joint frame: the inverse of :func:`joint_pose` on
    the joint's manifold, and off it the coordinates of the joint
    configuration the pose is closest to in the joint's own terms (angles
    from the rotation about each axis, displacements from the translation
    along each axis). Angles are in (−π, π] or, given ``near`` (nq), the
    branch nearest to it; a helical angle takes its branch from the
    translation (pitch ≠ 0); quaternions have w ≥ 0 or the sign of ``near``.
    Sueda's joints: :func:`sueda_coordinates` (``start``: a warm start of
    its iterative solves, which picks no branch)."""
    if isinstance(desc, SuedaJoint):
        return sueda_coordinates(desc, T, near, start)
    kind, a, e1, e2, pitch, a2 = desc
    R, p = T[:3, :3], T[:3, 3]
    n0 = None if near is None else near[0]
    if kind in ("revolute", "helical", "cylindrical"):
        th = _angle(R, a, e1, e2)
        if kind == "helical" and abs(pitch) > 1e-9:
            n0 = (a @ p) / pitch
        th = _nearest_branch(th, n0)
        return np.array([th, a @ p]) if kind == "cylindrical" else np.array([th])
    if kind == "prismatic":
        return np.array([a @ p])
    if kind == "planar":
        th = _nearest_branch(_angle(R, a, e1, e2), None if near is None else near[2])
        return np.array([e1 @ p, e2 @ p, th])
    if kind == "spherical":
        return _quaternion(R, near)
    if kind == "free":
        return np.concatenate([p, _quaternion(R, None if near is None else near[3:7])])
    if kind == "translational":
        return p.copy()
    if kind == "universal":
        # R a2 = exp(â1 q1) a2: q1 turns a2 about a1; then exp(â2 q2) = exp(−â1 q1) R
        u = a2 - a * (a @ a2)
        u /= np.linalg.norm(u)
        q1 = _nearest_branch(_angle_of_vector(R @ a2, a, u), n0)
        R2 = so3.exp(-a * q1) @ R
        f1, f2 = perpendiculars(a2)
        q2 = _nearest_branch(_angle(R2, a2, f1, f2), None if near is None else near[1])
        return np.array([q1, q2])
    return np.zeros(0)


def _angle_of_vector(x, a, u):
    """The angle about a from u (unit, ⟂ a) to the vector x's part ⟂ a."""
    return float(np.arctan2(np.cross(a, u) @ x, u @ x))


# ------------------------------------------------------------------ Sueda's joints (§2.4)
class SuedaJoint(NamedTuple):
    """The geometry of a joint from Sueda's library (§2.4) for
    :func:`joint_pose` and :func:`joint_coordinates`: its kind (the type
    name), its name (for errors), the model table and the child body's row
    (its transform, S and Ṡ come from :mod:`multibody.model.joints`), the
    type code, the joint's first coordinate, its coordinate count, the
    model's nq, which coordinates are angles of a pure rotation factor
    (``q ≡ q + 2π``), the twists of its linear factors (euler, free2d,
    composite; (m, 6)) and the coarse scan of its parameter range (spline,
    spline surface: the starting points of the Gauss–Newton solve)."""
    kind: str
    name: str
    tree: np.ndarray
    child: int
    code: int
    iq: int
    nq: int
    nq_model: int
    periodic: np.ndarray
    twists: np.ndarray
    scan: np.ndarray


def _sueda_descriptor(model, j):
    """The :class:`SuedaJoint` of the model's joint j (a Sueda type)."""
    tree = model._tree
    i = j.child
    n = j.nq
    twists, periodic, scan = np.zeros((0, 6)), np.zeros(n, dtype=bool), np.zeros((0, n))
    if j.type in ("euler", "free2d", "composite"):
        m = int(tree[i, C_EXTRA])
        twists = np.array([tree[i, C_EXTRA + 1 + sj.FACTOR_WIDTH * k + sj.F_TWIST:
                                C_EXTRA + 1 + sj.FACTOR_WIDTH * k + sj.F_TWIST + 6] for k in range(m)])
        # one coordinate per factor, in order (sueda_joints.linear_factors): a pure rotation's is an angle
        periodic = np.array([np.linalg.norm(x[3:]) == 0.0 for x in twists])
    elif j.type == "spline":
        # 8 samples per segment of [0, n − 3] (the parameter range; the ends extrapolate)
        hi = float(tree[i, C_EXTRA + 1 + sj.F_SEGMENTS])
        scan = np.linspace(0.0, hi, int(8 * hi) + 1)[:, None]
    elif j.type == "spline_surface":
        g = np.linspace(0.0, 1.0, 9)
        scan = np.array([(a, b) for a in g for b in g])
    return SuedaJoint(j.type, j.name, tree, i, JOINT_TYPES[j.type], j.q_slice.start, n, model.nq, periodic, twists,
                      scan)


def _model_q(d, q):
    """The model's configuration vector with the joint's coordinates q (the
    joint kernels read a joint's coordinates at its own offset)."""
    qf = np.zeros(d.nq_model)
    qf[d.iq:d.iq + d.nq] = q
    return qf


def _sueda_pose(d, q):
    """The joint transform Q(q) (4 × 4, the child in the joint frame) of the
    :class:`SuedaJoint` d (:func:`~multibody.model.joints.joint_transform`)."""
    J = joint_transform(d.code, d.tree, d.child, _model_q(d, q), d.iq)
    T = np.eye(4)
    T[:3, :3] = np.reshape(J[:9], (3, 3))
    T[:3, 3] = J[9:]
    return T


def _sueda_subspace(d, q):
    """S(q) (6 × n, child coordinates, angular first) of the :class:`SuedaJoint` d."""
    S = np.zeros((6, d.nq))
    motion_subspace_into(d.tree, d.child, _model_q(d, q), S, 0)
    return S


def _rotation_vector(R, near=None):
    """The rotation vector r of R (``exp([r]) = R``): ``log(R)``, |r| ≤ π, or,
    given ``near`` (3,), the one of the same rotation closest to it —
    ``(θ + 2πk) u`` for r = θu, k the integer that brings ``θ + 2πk``
    nearest to ``near · u`` (k = −1 is Sueda's chart change
    ``r(1 − 2π/|r|)``, §2.4.8)."""
    r = np.asarray(so3.log(np.ascontiguousarray(R)), dtype=float)
    if near is None:
        return r
    near = np.asarray(near, dtype=float)
    th = np.linalg.norm(r)
    if th < 1e-12:  # the identity: r = 2πk u for every axis u; near's axis
        nn = np.linalg.norm(near)
        return r if nn < np.pi else r + 2.0 * np.pi * np.round(nn / (2.0 * np.pi)) * near / nn
    u = r / th
    return (th + 2.0 * np.pi * np.round((near @ u - th) / (2.0 * np.pi))) * u


def _angle_between(x, y, a):
    """The angle about the unit axis a that turns x's part ⟂ a to y's."""
    return float(np.arctan2(a @ np.cross(x, y), x @ y - (a @ x) * (a @ y)))


def _wrap(d, q, near):
    """The periodic coordinates (angles of pure rotation factors) of q in
    (−π, π], or on the branch nearest to ``near``."""
    q = q.copy()
    for k in np.flatnonzero(d.periodic):
        th = float(np.arctan2(np.sin(q[k]), np.cos(q[k])))
        q[k] = _nearest_branch(th, None if near is None else near[k])
    return q


def _euler_candidates(d, R):
    """The two solutions (3,) of ``R = exp(â₁q₁) exp(â₂q₂) exp(â₃q₃)`` for
    unit axes a₁, a₂, a₃ in general position (Davenport's angles; Shuster &
    Markley 2003): ``a₁ᵀRa₃ = a₁ᵀexp(â₂q₂)a₃ = α cos q₂ + β sin q₂ + γ``
    (the outer factors leave a₁ and a₃ in place) gives ``q₂ = φ ± acos((a₁ᵀRa₃
    − γ)/ρ)``, ``ρe^{iφ} = α + iβ``; then q₁ turns ``exp(â₂q₂)a₃`` to ``Ra₃``
    about a₁ and q₃ is the angle of ``(exp(â₁q₁)exp(â₂q₂))ᵀR`` about a₃. The
    "+" solution first (q₂ − φ ∈ [0, π]: for XZX q₂ ∈ [0, π]). At a gimbal
    lock (exp(â₂q₂)a₃ ∥ a₁) q₁ = 0 and q₃ takes the whole turn. Raises
    InputError when no solution exists (axes that do not reach R)."""
    a1, a2, a3 = (x[:3] / np.linalg.norm(x[:3]) for x in d.twists)
    alpha = a1 @ a3 - (a1 @ a2) * (a2 @ a3)
    beta = a1 @ np.cross(a2, a3)
    gamma = (a1 @ a2) * (a2 @ a3)
    rho = np.hypot(alpha, beta)
    x = (a1 @ R @ a3 - gamma) / rho if rho > 1e-12 else np.inf
    if not abs(x) <= 1.0 + 1e-9:
        raise InputError(f"the rotation of joint '{d.name}' (euler) is not one its axes reach (the pose is not on "
                         f"the joint's manifold)")
    phi, c = np.arctan2(beta, alpha), np.arccos(np.clip(x, -1.0, 1.0))
    f1, f2 = perpendiculars(a3)
    out = []
    for q2 in (phi + c, phi - c):
        E2 = so3.exp(a2 * q2)
        w = E2 @ a3
        q1 = 0.0 if np.linalg.norm(np.cross(w, a1)) < 1e-12 else _angle_between(w, R @ a3, a1)
        q3 = _angle((so3.exp(a1 * q1) @ E2).T @ R, a3, f1, f2)
        out.append(np.array([q1, q2, q3]))
    return out


def _gauss_newton(d, T, q):
    """Gauss–Newton on the SE(3) log error from q: ``e = log(Q(q)⁻¹T)`` (the
    twist, in the moving frame, from the joint configuration to the pose;
    ``Q(q + δ) ≈ Q(q) exp(S δ)``), ``q ← q + S⁺e``, halving a step that
    does not reduce |e|. Returns (q, |e|, converged): converged when the step
    falls to round-off (the pose's nearest point on the manifold in the
    joint's own metric; off the manifold the iteration is linear, at a rate
    ∝ |e|)."""
    e = se3.log(se3.inverse(_sueda_pose(d, q)) @ T)
    r = np.linalg.norm(e)
    for _ in range(_GN_ITERATIONS):
        dq = np.linalg.lstsq(_sueda_subspace(d, q), e, rcond=None)[0]
        if not np.all(np.isfinite(dq)):
            return q, r, False
        step = 1.0
        for _ in range(30):
            q1 = q + step * dq
            e1 = se3.log(se3.inverse(_sueda_pose(d, q1)) @ T)
            r1 = np.linalg.norm(e1)
            if r1 <= r * (1.0 + 1e-12) + 1e-15:
                break
            step *= 0.5
        else:
            return q, r, np.linalg.norm(dq) <= 1e-11 * (1.0 + np.linalg.norm(q))
        q, e, r = q1, e1, r1
        if step * np.linalg.norm(dq) <= 1e-13 * (1.0 + np.linalg.norm(q)):
            return q, r, True
    return q, r, False


def _grid_starts(d):
    """Starting points of the composite joint's solve: zero, then the first
    three periodic coordinates at the quarter turns 0, ±π/2, π (at most 4³
    combinations; the other coordinates start at zero)."""
    k = np.flatnonzero(d.periodic)[:3]
    out = []
    for combo in np.ndindex(*(4,) * len(k)):
        q = np.zeros(d.nq)
        q[k] = np.array([0.0, 0.5 * np.pi, -0.5 * np.pi, np.pi])[list(combo)]
        out.append(q)
    return out


def _starts(d, T, near, start):
    """The starting points of the iterative recovery, lazily (the scan is
    formed only when near and the warm start fail): ``near``, ``start``,
    then the composite joint's quarter turns or the three best points of
    the spline's coarse scan (where the pose is closest), best first."""
    for x in (near, start):
        if x is not None:
            yield x
    if d.kind == "composite":
        yield from _grid_starts(d)
        return
    err = [np.linalg.norm(se3.log(se3.inverse(_sueda_pose(d, x)) @ T)) for x in d.scan]
    for k in np.argsort(err)[:3]:
        yield d.scan[k]


def sueda_coordinates(d, T, near=None, start=None):
    """The coordinates q (n) of the :class:`SuedaJoint` d whose child sits at
    the pose T (4 × 4) in the joint frame (Sueda §2.4, read backwards):

    * exp_spherical: the rotation vector ``log(R)`` (|r| ≤ π, or the
      equivalent one nearest ``near``, :func:`_rotation_vector`); free3d
      also ``t = Rᵀp`` (Q = (R, R t));
    * free2d: ``(p_x, p_y, θ)``, θ the angle of R about z (the joint's
      own terms, as the planar joint);
    * euler: the closed form :func:`_euler_candidates` (the "+" solution,
      angles in (−π, π], or the candidate and branches nearest ``near``),
      polished by Gauss–Newton on R near a gimbal lock;
    * composite, spline, spline_surface: Gauss–Newton on the SE(3) log
      error (:func:`_gauss_newton`) from ``near``, else from ``start`` (a
      warm start: the last recovered q), else from zero and the quarter
      turns of the angles (composite) or from the best points of a coarse
      scan of the parameter range (splines).

    The iterative solves refuse a pose they cannot bring within
    MANIFOLD_TOLERANCE of the joint's manifold (InputError naming the
    joint). Angles of pure rotation factors come in (−π, π] or on ``near``'s
    branch."""
    R, p = T[:3, :3], T[:3, 3]
    if d.kind in ("exp_spherical", "free3d"):
        r = _rotation_vector(R, None if near is None else near[:3])
        return r if d.kind == "exp_spherical" else np.concatenate([r, R.T @ p])
    if d.kind == "free2d":
        return np.array([p[0], p[1], _nearest_branch(float(np.arctan2(R[1, 0], R[0, 0])),
                                                     None if near is None else near[2])])
    if d.kind == "euler":
        cands = [_wrap(d, c, near) for c in _euler_candidates(d, R)]
        q = cands[0] if near is None else min(cands, key=lambda c: np.linalg.norm(c - near))
        Tr = np.eye(4)
        Tr[:3, :3] = R
        if np.linalg.norm(so3.log(np.ascontiguousarray(_sueda_pose(d, q)[:3, :3].T @ R))) > 1e-13:
            q = _gauss_newton(d, Tr, q)[0]  # acos lost digits near the gimbal lock
        return q
    best = None
    for x in _starts(d, T, near, start):
        q, r, ok = _gauss_newton(d, T, np.array(x, dtype=float))
        if ok and r <= MANIFOLD_TOLERANCE:
            return _wrap(d, q, near)
        best = r if best is None else min(best, r)
    raise InputError(f"the coordinates of joint '{d.name}' ({d.kind}) were not found: the pose is not on the "
                     f"joint's manifold (the Gauss–Newton solve ends {best:.3g} from it, more than "
                     f"MANIFOLD_TOLERANCE = {MANIFOLD_TOLERANCE:g})")


def _varying_rows(S, N_ref, what):
    """The rows (6 × (6 − n), child coordinates) of a joint whose motion
    subspace S (6 × n) turns with its coordinates: an orthonormal basis of
    the wrenches that do no work on S (the left singular vectors beyond
    its n columns), rotated within that subspace to the one nearest the
    reference rows ``N_ref`` (orthogonal Procrustes: ``N ← N W Zᵀ`` with
    ``NᵀN_ref = W Σ Zᵀ``) so that the rows, and their multipliers, turn
    smoothly with q instead of with the SVD's arbitrary basis. Any basis
    gives the same constraint; this one is only steadier. InputError (naming
    ``what``) when S has lost rank (a gimbal lock), where the joint's
    coordinates, and so its rows, are not defined."""
    n = S.shape[1]
    U, sv, _ = np.linalg.svd(S, full_matrices=True)
    if sv[-1] <= _SINGULAR_RTOL * max(1.0, sv[0]):
        raise InputError(f"{what} is at a singular configuration of its coordinates (its motion subspace loses "
                         f"rank, σ_min = {sv[-1]:.3g}): its maximal rows are not defined there")
    N = U[:, n:]
    W, _, Zt = np.linalg.svd(N.T @ N_ref)
    return N @ (W @ Zt)


class _CouplingRow(NamedTuple):
    """One coupling row of a :class:`MaximalSystem`: ``Σ w q_k − offset = 0``
    over its ends (k the body of a 1-DoF joint, w its weight: 1 for the
    coupled joint, −multiplier for the mimicked one; a held joint has one
    end); ``name`` for messages."""
    name: str
    ends: tuple
    offset: float


def _adT_matrix(y):
    """L(y) (6 × 6) with ``ad(x)ᵀ y = L(y) x`` for all twists x: ``[[ŷ₁, ŷ₂],
    [ŷ₂, 0]]`` (angular first)."""
    L = np.zeros((6, 6))
    L[:3, :3] = so3.hat(y[:3])
    L[:3, 3:] = so3.hat(y[3:])
    L[3:, :3] = so3.hat(y[3:])
    return L


def spatial_inertia(model, i):
    """Body i's 6x6 spatial inertia about its frame's origin in body axes,
    angular first (Featherstone eq. 2.63: ``[[Ī, m ĉ], [m ĉᵀ, m 1]]``, Ī about
    the origin)."""
    row = model.tree[i]
    m = row[C_MASS]
    h = row[C_H:C_H + 3]
    H = so3.hat(h)
    out = np.zeros((6, 6))
    out[:3, :3] = row[C_I:C_I + 9].reshape(3, 3)
    out[:3, 3:] = H
    out[3:, :3] = H.T
    out[3:, 3:] = m * np.eye(3)
    return out


def _sum_blocks(X, x, Y, y):
    """``x X + y Y`` of two dicts of 6 × 6 blocks {(i, j): block}."""
    out = {}
    for blocks, s in ((X, x), (Y, y)):
        for key, B in blocks.items():
            out[key] = out[key] + s * B if key in out else s * B
    return out


@njit(cache=True, nogil=True)
def tree_kkt_solve(parent, m, N, A, Mt, b, c, V, lam):
    """Solve the velocity-level KKT system of a tree by block elimination
    leaf to root (Baraff 1996, "Linear-time dynamics using Lagrange
    multipliers", in the articulated-body form): ``Mt_k V_k − N_k λ_k +
    Σ_children A_ckᵀ N_c λ_c = b_k`` (the rows' reactions with the sign of
    ``M V − Gᵀλ = b``) and ``N_kᵀ(V_k − A_kp V_p) = c_k``.

    Bodies are numbered parents first (parent[k] < k; −1 the world). Per
    body, from the leaves: ``Â_k = Mt_k + Σ_c A_ckᵀ N_c Y_c⁻¹ N_cᵀ A_ck``,
    ``b̂_k = b_k + Σ_c A_ckᵀ N_c u_c`` with ``Y = Nᵀ Â⁻¹ N`` and ``u = Y⁻¹(Nᵀ Â⁻¹ b̂
    − c)``; then from the root ``λ'_k = u_k − Y_k⁻¹ N_kᵀ A_kp V_p``, ``V_k =
    Â_k⁻¹(b̂_k − N_k λ'_k)`` and λ = −λ'. O(n) 6 × 6 work; Mt_k need not be
    symmetric (a stiffness block), only Â_k and Y_k regular.

    parent (n,), m (n,) the rows per joint, N (n, 6, 6) their directions
    (columns beyond m ignored), A (n, 6, 6) = Ad(C_k⁻¹C_p) (ignored for
    the world), Mt (n, 6, 6), b (n, 6), c (n, 6) (entries beyond m
    ignored); writes V (n, 6) and lam (n, 6) (entries beyond m zero)."""
    n = parent.shape[0]
    Ah = Mt.copy()
    bh = b.copy()
    Ainv = np.empty((n, 6, 6))
    Yinv = np.zeros((n, 6, 6))
    u = np.zeros((n, 6))
    for k in range(n - 1, -1, -1):
        Ainv[k] = np.linalg.inv(Ah[k])
        mk = m[k]
        x = Ainv[k] @ bh[k]
        if mk == 0:
            continue
        Nk = np.ascontiguousarray(N[k, :, :mk])
        W = Ainv[k] @ Nk
        Yi = np.linalg.inv(Nk.T @ W)
        Yinv[k, :mk, :mk] = Yi
        uk = Yi @ (Nk.T @ x - c[k, :mk])
        u[k, :mk] = uk
        p = parent[k]
        if p >= 0:
            NA = Nk.T @ A[k]
            Ah[p] += NA.T @ (Yi @ NA)
            bh[p] += NA.T @ uk
    for k in range(n):
        mk = m[k]
        p = parent[k]
        lk = u[k, :mk].copy()
        if mk > 0 and p >= 0:
            Nk = np.ascontiguousarray(N[k, :, :mk])
            lk -= np.ascontiguousarray(Yinv[k, :mk, :mk]) @ (Nk.T @ (A[k] @ V[p]))
        r = bh[k].copy()
        for i in range(mk):
            r -= N[k, :, i] * lk[i]
        V[k] = Ainv[k] @ r
        lam[k, :] = 0.0
        lam[k, :mk] = -lk


class MaximalSystem:
    """The maximal-coordinate equations of ``model`` (module docstring):
    ``n = nbodies − 1`` free bodies (the world is not one), ``rows`` joint
    constraint rows. ``gravity``: the model's gravity acts on every body.

    ``frames``: the frame each body's state (C, V) describes — ``"body"``,
    the body's own frame (its joint's moving frame), or ``"com"``, a frame
    at its centre of mass with the body's axes (Müller & Terze's choice:
    which frame a Lie-group update moves along a screw changes what it
    keeps exact, notes/seed-004.md C14). The equations are formed in the
    body frames either way: a state frame ``C_ref = C B`` (B constant) has
    ``V_ref = Ad(B⁻¹) V``, ``V̇_ref = Ad(B⁻¹) V̇``.

    ``loops``: also the model's loop joints and the MJCF equalities that
    are loop joints, as rows ``Nᵀ Ad(P_B⁻¹)(V_b − Ad(C_b⁻¹C_a) V_a) = 0``
    between their frames A (on body a, placement P_A) and B, and its joint
    couplings (``model.couplings``: gears, URDF mimic; MJCF joint
    equalities) as one row each, ``q̇_j − r q̇_i = 0`` with a 1-DoF joint's
    rate ``q̇ = s⁺(V_c − Ad(C_c⁻¹C_p) V_p)`` (Sueda §1.10–1.12; position
    error ``q_j − r q_i − o``; a held joint, ``mimicked`` None, ``q̇_j = 0``
    and ``q_j − o``): the rows of the tree joints, then of the loop joints,
    then of the couplings (:attr:`couplings`). A coupling of a joint that
    is not 1-DoF is refused (ModelError naming it)."""

    def __init__(self, model: Model, gravity: bool = True, frames: str = "body", loops: bool = False) -> None:
        if frames not in ("body", "com"):
            raise InputError(f"frames must be 'body' or 'com', got {frames!r}")
        closing, couplings = [], []
        if loops:  # loop joints, couplings, and the MJCF equalities (connect, weld: loop joints; joint: couplings)
            closing = list(model.loop_joints)
            couplings = list(model.couplings)
            for e in model.equalities:
                c = from_equality(model, e)
                (closing if isinstance(c, LoopJoint) else couplings).append(c)
        self.model = model
        self.gravity = bool(gravity)
        self.frames = frames
        self.n = model.nbodies - 1
        # B_k: the state frame in the body frame
        self.offset = np.tile(np.eye(4), (self.n, 1, 1))
        if frames == "com":
            self.offset[:, :3, 3] = model.body_com[1:]
        self._offset_inv = np.array([se3.inverse(B) for B in self.offset])
        self._Ad_B = np.array([se3.Ad(B) for B in self.offset])
        self._Ad_B_inv = np.array([se3.Ad(se3.inverse(B)) for B in self.offset])
        S_of, N_of, offsets = [], [], [0]
        q0 = model.neutral()  # S is the same at every q for the constant joints
        self.descriptors, self.placements, varying = [], [], []
        for k, j in enumerate(model.joints[1:]):
            if np.any(model.armature[j.v_slice] != 0.0):
                raise InputError(f"joint '{j.name}' has rotor inertia (armature), which maximal coordinates do not "
                                 f"represent")
            row = model.tree[j.child]
            nvj = j.nv
            if j.type in _CONSTANT_SUBSPACE:
                S = np.zeros((6, max(nvj, 1)))
                if nvj:
                    motion_subspace_into(model._tree, j.child, q0, S, 0)
                S = S[:, :nvj]
                N_of.append(annihilator(S))
            else:  # rows from the coordinates recovered from the pose (_varying); these the reference
                varying.append(k)
                S = self._reference_subspace(model, j, q0)
                N_of.append(np.linalg.svd(S, full_matrices=True)[0][:, nvj:])
            S_of.append(S)
            offsets.append(offsets[-1] + N_of[-1].shape[1])
            if j.type in _SUEDA:
                self.descriptors.append(_sueda_descriptor(model, j))
            else:
                self.descriptors.append(_descriptor(j.type, row[C_AX1:C_AX1 + 3],
                                                    row[C_AX2:C_AX2 + 3] if j.type in ("planar", "universal") else None,
                                                    row[C_AX3:C_AX3 + 3], row[C_PITCH]))
            P = np.eye(4)  # the joint frame in the parent's frame (R_T, p_T)
            P[:3, :3] = row[C_R:C_R + 9].reshape(3, 3)
            P[:3, 3] = row[C_P:C_P + 3]
            self.placements.append(P)
        self.S, self.N = tuple(S_of), tuple(N_of)
        # the tree joints whose rows turn with their coordinates (the universal joint and Sueda's)
        self.varying = tuple(varying)
        self._warm: dict[int, Any] = {}  # their last recovered coordinates: warm starts of the iterative recoveries
        self.parent = np.array([j.parent for j in model.joints[1:]]) - 1  # −1: the world
        # the rows' links (child, parent, N in the child's body coordinates; −1: the world): the
        # tree joints, then the loop joints — frame B of a loop joint its child, frame A its parent
        links = [(k, int(self.parent[k]), N) for k, N in enumerate(self.N)]
        self.loop_ends, self._loop_N = [], []
        for lj in closing:
            a, Pa = loop_end(model, lj.body_a, lj.placement_a, f"loop joint '{lj.name}'")
            b, Pb = loop_end(model, lj.body_b, lj.placement_b, f"loop joint '{lj.name}'")
            N = annihilator(loop_subspace(lj))
            links.append((b - 1, a - 1, se3.Ad(se3.inverse(Pb)).T @ N))
            offsets.append(offsets[-1] + N.shape[1])
            self.loop_ends.append((a - 1, Pa, b - 1, Pb))
            self._loop_N.append(N)
            self.descriptors.append(_descriptor(lj.joint, lj.axis, pitch=lj.pitch))
        self.links = tuple(links)
        self.row_offsets = np.array(offsets)
        # the coupling rows follow the links' rows, one each (Sueda §1.10: a scalar row on the bodies' twists)
        self.couplings = tuple(self._coupling_record(model, c) for c in couplings)
        self._coupling_offset = int(offsets[-1])
        self.rows = self._coupling_offset + len(self.couplings)
        # the branch of each coupled angle (body index k → its last coordinates): a coupling's position error
        # q_j − r q_i − o needs the angles themselves, not modulo 2π (set by state, near= and every evaluation)
        self._coupling_branch: dict[int, Any] = {}
        # the O(n) tree elimination takes only the tree joints' rows (per body, on a body and its parent)
        self._tree_rows = not self.loop_ends and not self.couplings
        self._coupled_varying = any(k in self.varying for cr in self.couplings for k, _ in cr.ends)
        self.inertia = np.array([spatial_inertia(model, i) for i in range(1, model.nbodies)])
        self._inertia_inv = np.linalg.inv(self.inertia)
        self._S_pinv = tuple(np.linalg.pinv(S) if S.shape[1] else np.zeros((0, 6)) for S in self.S)
        # the tree rows padded for tree_kkt_solve (a varying joint's N is replaced per step)
        self._m = np.array([N.shape[1] for N in self.N], dtype=np.int64)
        self._Npad = np.zeros((self.n, 6, 6))
        for k, N in enumerate(self.N):
            self._Npad[k, :, :N.shape[1]] = N
        self._parent64 = self.parent.astype(np.int64)

    def _coupling_record(self, model, c):
        """The :class:`_CouplingRow` of a :class:`~multibody.model.Coupling`
        ``q[joint] = multiplier · q[mimicked] + offset`` (``mimicked`` None: the
        joint held at ``offset``). ModelError naming the joint for an unknown
        one or one that is not 1-DoF (a rate ``s⁺(V_c − A V_p)`` is a scalar
        only for one column s; the reduced :class:`~multibody.constraints.
        Constraints` refuses the same)."""
        what = f"coupling of joint '{c.joint}'"
        ends = []
        for name, weight in ((c.joint, 1.0), (c.mimicked, -float(c.multiplier))):
            if name is None:  # a joint held at a value
                continue
            if name not in model.joint_names[1:]:
                raise ModelError(f"{what} references unknown joint '{name}'")
            k = model.joint_names.index(name) - 1
            j = model.joints[k + 1]
            if j.nv != 1 or j.nq != 1:
                raise ModelError(f"{what}: joint '{name}' is {j.type} with {j.nv} DoF; gears and mimic couple "
                                 f"1-DoF joints")
            ends.append((k, weight))
        return _CouplingRow(what, tuple(ends), float(c.offset))

    @staticmethod
    def _reference_subspace(model, j, q0):
        """S (6 × nv) of the varying joint j at a regular reference
        configuration — the neutral one, else (an Euler joint's neutral
        configuration is a gimbal lock) the first of a few fixed offsets from
        it, within the joint's limits, where S has full rank: the rows there
        are the reference the rows of :func:`_varying_rows` are kept near."""
        lo, hi = model.lower_limit[j.q_slice], model.upper_limit[j.q_slice]
        S = np.zeros((6, j.nv))
        for offset in (0.0, 0.3, 0.7, 1.1):
            q = q0.copy()
            q[j.q_slice] = np.clip(q0[j.q_slice] + offset * (1.0 + 0.5 * np.arange(j.nq)), lo, hi)
            S[:] = 0.0
            motion_subspace_into(model._tree, j.child, q, S, 0)
            sv = np.linalg.svd(S, compute_uv=False)
            if sv[-1] > 1e-6 * max(1.0, sv[0]):
                break
        return S

    # ------------------------------------------------------------------ states
    def state(self, q: ArrayLike, v: ArrayLike) -> tuple[Array, Array]:
        """``(C, V)`` of the reduced state (q, v): the state frames' world
        poses (n, 4, 4) and body twists (n, 6)."""
        C = forward_kinematics(self.model, q)[1:] @ self.offset
        V = np.einsum("kij,kj->ki", self._Ad_B_inv, body_motion(self.model, q, v)[0][1:])
        self._seed_branch(np.asarray(q, dtype=float))
        return C, V

    def _seed_branch(self, q):
        """Take the coupled joints' coordinates in the configuration q (nq) as
        the branch of their angles (:meth:`_coupled_coordinate`)."""
        for cr in self.couplings:
            for k, _ in cr.ends:
                self._coupling_branch[k] = np.array(q[self.model.joints[k + 1].q_slice], dtype=float)

    def body_accelerations(self, q: ArrayLike, v: ArrayLike, a: ArrayLike) -> Array:
        """The state frames' twist derivatives V̇ (n, 6) of the reduced motion
        (q, v, q̈ = a): Featherstone's body accelerations (body coordinates,
        spatial, which for a body's own frame equal the derivative of its
        twist's coordinates), in the state frames."""
        return np.einsum("kij,kj->ki", self._Ad_B_inv, body_motion(self.model, q, v, a)[1][1:])

    def _body_frames(self, C, V):
        """(C, V) of the state frames → of the body frames."""
        return C @ self._offset_inv, np.einsum("kij,kj->ki", self._Ad_B, V)

    def joint_errors(self, C: Array, near: Array | None = None) -> Array:
        """Per joint (n, then one per loop joint), the distance (m) between
        the joint's point on the parent (the joint frame's origin) and on the
        child (its body frame's origin; a loop joint's frames A and B) at the
        state frames' poses C: the position error of a joint that holds the
        two together (revolute, spherical, fixed; the translating joints move
        them apart by their coordinates). Then one per coupling, ``|q_j −
        r q_i − o|`` (rad or m; the coordinates recovered from the poses,
        angles on the branch of ``near`` (nq) or else of the last evaluation,
        :meth:`_coupled_coordinate`)."""
        Cb = C @ self._offset_inv
        if near is not None:
            self._seed_branch(self._near(near))
        out = np.empty(self.n + len(self.loop_ends) + len(self.couplings))
        for k, j in enumerate(self.model.joints[1:]):
            row = self.model.tree[j.child]
            point = row[C_P:C_P + 3]  # the joint frame's origin in the parent's frame
            p = self.parent[k]
            where = point if p < 0 else Cb[p, :3, :3] @ point + Cb[p, :3, 3]
            out[k] = np.linalg.norm(Cb[k, :3, 3] - where)
        for i, (a, Pa, b, Pb) in enumerate(self.loop_ends):  # frames A and B of each loop joint
            fa = Pa if a < 0 else Cb[a] @ Pa
            fb = Pb if b < 0 else Cb[b] @ Pb
            out[self.n + i] = np.linalg.norm(fa[:3, 3] - fb[:3, 3])
        if self.couplings:
            varying = self._varying(Cb) if self._coupled_varying else {}
            out[self.n + len(self.loop_ends):] = np.abs(self._coupling_errors(Cb, varying))
        return out

    def energy(self, C: Array, V: Array) -> tuple[float, float]:
        """(kinetic, potential) energy (J) of the state: ``Σ ½ VᵀM V`` and
        ``−Σ m g·c`` (c the centres of mass in the world)."""
        Vb = np.einsum("kij,kj->ki", self._Ad_B, V)
        kinetic = 0.5 * float(np.einsum("ki,kij,kj->", Vb, self.inertia, Vb))
        Cb = C @ self._offset_inv
        com = np.einsum("kij,kj->ki", Cb[:, :3, :3], self.model.body_com[1:]) + Cb[:, :3, 3]
        mass = self.model.body_mass[1:]
        potential = -float(mass @ (com @ self.model.gravity)) if self.gravity else 0.0
        return kinetic, potential

    # ------------------------------------------------------------------ the equations
    def relatives(self, C: Array) -> list[Array | None]:
        """Per row block (:attr:`links`), ``A = Ad(C_child⁻¹ C_parent)`` at the
        body frames' poses C (a world end's pose is the identity), or None
        when the parent is the world."""
        out: list[Array | None] = []
        for child, parent, _ in self.links:
            if parent < 0:
                out.append(None)
            elif child < 0:
                out.append(se3.Ad(C[parent]))
            else:
                out.append(se3.Ad(se3.compose(se3.inverse(C[child]), C[parent])))
        return out

    def _link_pose(self, C, i):
        """The pose (4 × 4) of link i's moving frame in its fixed frame at the
        body frames' poses C: a tree joint's child in its joint frame,
        ``P_T⁻¹ C_p⁻¹ C_c``; a loop joint's frame B in frame A."""
        child, parent, _ = self.links[i]
        if i < self.n:
            Cp = np.eye(4) if parent < 0 else C[parent]
            return se3.inverse(Cp @ self.placements[i]) @ C[child]
        a, Pa, b, Pb = self.loop_ends[i - self.n]
        Fa = Pa if a < 0 else C[a] @ Pa
        Fb = Pb if b < 0 else C[b] @ Pb
        return se3.inverse(Fa) @ Fb

    def _varying(self, C, near=None):
        """Per varying joint k (a dict; the universal joint and Sueda's,
        §2.4): ``(N, S, S⁺, q)`` at the body frames' poses C — its motion
        subspace S (6 × n, child coordinates) at its coordinates recovered
        from the relative pose (:func:`joint_coordinates`, the iterative
        ones warm-started at the last recovery), its rows N (6 × (6 − n),
        :func:`_varying_rows`), S⁺, and q the model's configuration vector
        holding those coordinates (the rest 0). ``near`` (nq, or None): the
        configuration whose branches the coordinates take (:meth:`_near`)."""
        out = {}
        model = self.model
        for k in self.varying:
            j = model.joints[k + 1]
            q = np.zeros(model.nq)
            qj = joint_coordinates(self.descriptors[k], self._link_pose(C, k),
                                   None if near is None else near[j.q_slice], self._warm.get(k))
            self._warm[k] = qj
            q[j.q_slice] = qj
            S = np.zeros((6, j.nv))
            motion_subspace_into(model._tree, j.child, q, S, 0)
            N = _varying_rows(S, self.N[k], f"joint '{j.name}' ({j.type})")
            out[k] = (N, S, np.linalg.pinv(S), q)
        return out

    def _varying_bias(self, k, var, V, A):
        """Ṡ q̇ (6) of varying joint k at the relative twist of its bodies,
        q̇ = S⁺(V_c − A V_p) (:func:`~multibody.model.joints.joint_bias`, the
        model's own term; Sueda §2.4's Ṡ for his joints)."""
        child, parent, _ = self.links[k]
        rel = V[child] - (A @ V[parent] if A is not None else 0.0)
        j = self.model.joints[k + 1]
        v = np.zeros(self.model.nv)
        v[j.v_slice] = var[2] @ rel
        return np.array(joint_bias(self.model._tree, j.child, var[3], v))

    def coordinates(self, C: Array, V: Array, near: Array | None = None) -> tuple[Array, Array]:
        """``(q, v)``: the reduced state of the maximal state — the state
        frames' poses C (n, 4, 4) and twists V (n, 6) — the inverse of
        :meth:`state` on the joint manifold (Sueda §1.10 read backwards).
        Each joint's q from its child's pose in its joint frame
        (:func:`joint_coordinates`: angles about the axes, displacements
        along them, quaternions, the free pose, the planar (x, y, θ);
        Sueda's joints by :func:`sueda_coordinates`: rotation vectors, Euler
        angles, the free2d (x, y, θ), Gauss–Newton for composite and spline
        joints); its v the least-squares solution ``S⁺ (V_c − Ad(C_c⁻¹C_p)
        V_p)`` of its relative twist on S (child axes, S at the recovered
        q). Angles come in (−π, π], rotation vectors with |r| ≤ π, Euler
        angles as the first solution of :func:`_euler_candidates` and
        quaternions with w ≥ 0 unless ``near`` (nq), a configuration whose
        branches and signs to take (and where the iterative solves start),
        is given. InputError naming the joint for a pose off a composite or
        spline joint's manifold (farther than MANIFOLD_TOLERANCE)."""
        C, V = self._check_state(C, V)
        if self.frames != "body":
            C, V = self._body_frames(C, V)
        model = self.model
        if near is not None:
            near = model.check_configuration(near)
        q, v = np.zeros(model.nq), np.zeros(model.nv)
        for k, j in enumerate(model.joints[1:]):
            T = self._link_pose(C, k)
            qj = joint_coordinates(self.descriptors[k], T, None if near is None else near[j.q_slice])
            q[j.q_slice] = qj
            if j.nv == 0:
                continue
            p = self.parent[k]
            rel = V[k] - (se3.Ad(se3.inverse(C[k]) @ C[p]) @ V[p] if p >= 0 else 0.0)
            if k in self.varying:
                qf = np.zeros(model.nq)
                qf[j.q_slice] = qj
                S = np.zeros((6, j.nv))
                motion_subspace_into(model._tree, j.child, qf, S, 0)
                v[j.v_slice] = np.linalg.lstsq(S, rel, rcond=None)[0]
            else:
                v[j.v_slice] = self._S_pinv[k] @ rel
        return q, v

    def position_errors(self, C: Array, near: Array | None = None) -> Array:
        """g(C) (rows): per row block, ``Nᵀ log(J(q*)⁻¹ T)`` with T the
        link's relative pose (:meth:`_link_pose`), q* the joint coordinates
        recovered from it and J(q*) their joint transform — the twist (in
        the moving frame) that carries the nearest joint configuration to
        the actual pose, on the rows' directions. Zero on the joint
        manifold; its derivative there is the velocity rows G (so Baumgarte's
        ``G V = −(γ/h) g`` and Cline–Pai's projection use it), at the state
        frames' poses C (n, 4, 4). A coupling's row (they come last) is
        ``q_j − r q_i − o`` (Sueda §1.12's g of a scalar row), its q recovered
        from the relative poses as :meth:`coordinates` does, an angle on the
        branch of ``near`` (nq) or else nearest the last evaluation (or the
        last :meth:`state`): :meth:`_coupled_coordinate`."""
        C = np.asarray(C, dtype=float)
        if near is not None:
            self._seed_branch(self._near(near))
        if self.frames != "body":
            C = C @ self._offset_inv
        return self._position_errors(C, self._varying(C))

    def _position_errors(self, Cb, varying):
        g = np.zeros(self.rows)
        for i, (child, parent, N) in enumerate(self.links):
            if N.shape[1] == 0:
                continue
            T = self._link_pose(Cb, i)
            desc = self.descriptors[i]
            if i in varying:  # the coordinates _varying recovered (an iterative solve is not repeated)
                qj = varying[i][3][self.model.joints[i + 1].q_slice]
            else:
                qj = joint_coordinates(desc, T)
            E = se3.inverse(joint_pose(desc, qj)) @ T
            Nj = varying[i][0] if i in varying else (N if i < self.n else self._loop_N[i - self.n])
            lo = self.row_offsets[i]
            g[lo:lo + Nj.shape[1]] = Nj.T @ se3.log(E)
        if self.couplings:
            g[self._coupling_offset:] = self._coupling_errors(Cb, varying)
        return g

    def _coupled_coordinate(self, Cb, k, varying):
        """The coordinate q_k (a float) of the coupled 1-DoF joint of body k at
        the body frames' poses Cb: from its child's pose in its joint frame
        (:func:`joint_coordinates`; a varying joint's from ``varying``), an
        angle on the branch nearest the last one recorded for it (the seed of
        :meth:`state` or ``near``, then each evaluation's own result, so that a
        gear whose angles pass ±π keeps its error ``q_j − r q_i − o`` instead of
        jumping by 2π·r), which it then records."""
        j = self.model.joints[k + 1]
        ref = self._coupling_branch.get(k)
        d = self.descriptors[k]
        if k in varying:  # one of Sueda's 1-DoF joints (a spline, a one-factor composite)
            qj = _wrap(d, varying[k][3][j.q_slice], ref)
        else:
            qj = joint_coordinates(d, self._link_pose(Cb, k), ref)
        self._coupling_branch[k] = qj.copy()
        return float(qj[0])

    def _coupling_errors(self, Cb, varying):
        """Per coupling row, ``Σ w q_k − offset`` (:class:`_CouplingRow`) at the
        body frames' poses Cb."""
        out = np.empty(len(self.couplings))
        q = {}
        for r, cr in enumerate(self.couplings):
            e = -cr.offset
            for k, w in cr.ends:
                if k not in q:
                    q[k] = self._coupled_coordinate(Cb, k, varying)
                e += w * q[k]
            out[r] = e
        return out

    def _check_state(self, C, V):
        """C (n, 4, 4) and V (n, 6) as finite float arrays, else InputError
        naming the array."""
        C = np.asarray(C, dtype=float)
        V = np.asarray(V, dtype=float)
        if C.shape != (self.n, 4, 4):
            raise InputError(f"C (the poses) must have shape ({self.n}, 4, 4), got {C.shape}")
        if V.shape != (self.n, 6):
            raise InputError(f"V (the body twists) must have shape ({self.n}, 6), got {V.shape}")
        for name, x in (("C", C), ("V", V)):
            if not np.all(np.isfinite(x)):
                k = int(np.argwhere(~np.isfinite(x))[0][0])
                raise NonFiniteError(f"{name} holds a non-finite value at body '{self.model.body_names[k + 1]}'")
        return C, V

    def constraints(self, C: Array, V: Array | None = None, relatives: Any = None,
                    varying: Any = None) -> tuple[Any, Array | None]:
        """``(G, η)``: the joint rows (rows × 6n, sparse CSR) at the body
        frames' poses C and, with their twists V, the right side η of the
        acceleration rows ``G V̇ = η`` (else None); ``relatives``: those of
        :meth:`relatives` at C, if already at hand. A row block
        ``Nᵀ(V_c − A V_p)``, A = Ad(C_c⁻¹C_p), has ``η = −Nᵀ ad(V_c) A V_p``
        (0 when an end is the world). A coupling's row (after the links'
        rows) is ``Σ w s_k⁺(V_k − A_k V_p)``, w = 1 for the coupled joint and
        −r for the mimicked one, with ``η = −Σ w s_k⁺ ad(V_k) A_k V_p`` (the
        ``d/dt A`` term; a spline's varying s adds ``+Σ w s⁺Ṡq̇``). A varying joint's N (the universal
        joint's, Sueda's) turns with its coordinates (recovered from the
        relative pose, :meth:`_varying`; ``varying``: its result at C, if at
        hand), which adds ``+Nᵀ Ṡ q̇`` to η (``Ṅᵀ S = −Nᵀ Ṡ`` from NᵀS = 0; Ṡ q̇
        the joint's velocity-product term,
        :func:`~multibody.model.joints.joint_bias`, q̇ = S⁺(V_c − A V_p))."""
        blocks, r, c = [], [], []
        eta: Any = np.zeros(self.rows) if V is not None else None  # None: G only
        relatives = self.relatives(C) if relatives is None else relatives
        varying = self._varying(C) if varying is None else varying
        for i, ((child, parent, N), A) in enumerate(zip(self.links, relatives)):
            if N.shape[1] == 0:
                continue
            lo = self.row_offsets[i]
            if i in varying:
                N = varying[i][0]
                if V is not None:
                    eta[lo:lo + N.shape[1]] += N.T @ self._varying_bias(i, varying[i], V, A)
            if child >= 0:
                blocks.append(N.T)
                r.append(lo)
                c.append(6 * child)
            if A is not None:
                blocks.append(-N.T @ A)
                r.append(lo)
                c.append(6 * parent)
                if V is not None and child >= 0:
                    eta[lo:lo + N.shape[1]] -= N.T @ (se3.ad(V[child]) @ (A @ V[parent]))
        for r_c, cr in enumerate(self.couplings):
            # Σ w q̇_k = 0 with q̇_k = s⁺(V_k − A V_p) (Sueda §1.10–1.11: a scalar row on up to four bodies); its
            # derivative q̈_k = s⁺(V̇_k − A V̇_p) + s⁺ ad(V_k) A V_p − s⁺ Ṡ q̇ (d/dt A = A ad(V_p) − ad(V_k) A,
            # ad(V_p) V_p = 0; Ṡ⁺ S q̇ = −S⁺ Ṡ q̇ from S⁺S = 1). For revolute, prismatic and helical joints s is
            # constant in child coordinates and the Ṡ term vanishes; only a 1-DoF Sueda joint (a spline) has it.
            lo = self._coupling_offset + r_c
            for k, w in cr.ends:
                s_pinv = varying[k][2] if k in varying else self._S_pinv[k]  # (1, 6)
                A, p = relatives[k], int(self.parent[k])
                blocks.append(w * s_pinv)
                r.append(lo)
                c.append(6 * k)
                if A is not None:
                    blocks.append(-w * (s_pinv @ A))
                    r.append(lo)
                    c.append(6 * p)
                if V is not None:
                    if A is not None:
                        eta[lo] -= w * float(s_pinv[0] @ (se3.ad(V[k]) @ (A @ V[p])))
                    if k in varying:
                        eta[lo] += w * float(s_pinv[0] @ self._varying_bias(k, varying[k], V, A))
        rows, cols, vals = [], [], []
        for B, i, j in zip(blocks, r, c):
            ii, jj = np.indices(B.shape)
            rows.append(ii.ravel() + i)
            cols.append(jj.ravel() + j)
            vals.append(B.ravel())
        if not blocks:
            return sp.csr_matrix((self.rows, 6 * self.n)), eta
        G = sp.coo_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                          shape=(self.rows, 6 * self.n))
        return G.tocsr(), eta

    def forces(self, C: Array, V: Array, tau: Array, relatives: Any = None, varying: Any = None,
               near: Array | None = None) -> Array:
        """f (n, 6) at the body frames' (C, V): per body, ``ad(V)ᵀ M V`` +
        gravity (the weight at the centre of mass, as a wrench about the
        origin in body axes) + the wrenches of the joint forces ``tau`` (nv,
        reduced order: generalized forces of the coordinates, so a varying
        joint's depend on the branch of its coordinates, ``near``, see
        :meth:`acceleration`); ``relatives`` and ``varying`` as for
        :meth:`constraints`."""
        model = self.model
        f = np.einsum("kji,kj->ki", np.array([se3.ad(x) for x in V]),
                      np.einsum("kij,kj->ki", self.inertia, V))
        if self.gravity:
            for k in range(self.n):
                R = C[k, :3, :3]
                g = R.T @ model.gravity
                m = self.inertia[k, 3, 3]
                h = model.tree[k + 1, C_H:C_H + 3]
                f[k, :3] += np.cross(h, g)
                f[k, 3:] += m * g
        if np.any(tau) and relatives is None:
            relatives = self.relatives(C)
        if np.any(tau) and varying is None:
            varying = self._varying(C, self._near(near))
        for k, j in enumerate(model.joints[1:]):
            t = tau[j.v_slice]
            if t.size == 0 or not np.any(t):
                continue
            w = (varying[k][2] if k in varying else self._S_pinv[k]).T @ t
            f[k] += w
            A = relatives[k]  # the tree joints' blocks come first in links
            if A is not None:
                f[self.parent[k]] -= A.T @ w
        return f

    def acceleration(self, C: Array, V: Array, tau: Array,
                     near: Array | None = None) -> tuple[Array, Array]:
        """``(V̇, λ)``: the state frames' twist derivatives (n, 6) and the
        rows' multipliers from the index-1 KKT system ``[M Gᵀ; G 0][V̇; λ] =
        [f; η]`` (in the body frames; by its Schur complement up to DENSE_KKT_SIZE
        unknowns or when rows are dependent, else SuperLU), at the state frames' poses C
        (n, 4, 4) and twists V (n, 6) and joint forces tau (nv).

        ``near`` (nq, or None): a configuration whose branches the varying
        joints' coordinates take where the pose leaves them open — the
        rotation vector of exp_spherical and free3d (r or r(1 − 2π/|r|)),
        the two solutions of an euler joint, a composite joint's inverse
        kinematics. The rows and η do not depend on it (the same span
        and the same geometric acceleration), but the joint forces do: τ
        is a generalized force of the coordinates, and ``w = S⁺ᵀτ`` changes
        with the chart S. None: the branches of :meth:`coordinates` without
        ``near`` (rotation vectors with |r| ≤ π, the first euler solution)."""
        tau = np.asarray(tau, dtype=float)
        if tau.shape != (self.model.nv,):
            raise InputError(f"tau must have shape ({self.model.nv},), got {tau.shape}")
        if self.frames != "body":
            C, V = self._body_frames(C, V)
        relatives = self.relatives(C)
        varying = self._varying(C, self._near(near))
        G, eta = self.constraints(C, V, relatives, varying)
        f = self.forces(C, V, tau, relatives, varying)
        m = 6 * self.n
        x = None
        if m + self.rows > DENSE_KKT_SIZE:
            M = sp.block_diag(list(self.inertia), format="csc")
            try:
                x = splu(sp.bmat([[M, G.T], [G, None]], format="csc")).solve(np.concatenate([f.ravel(), eta]))
            except RuntimeError:  # "exactly singular": dependent rows, solved below
                x = None
        if x is None:
            x = self._schur_solve(G, f, eta)
        Vd = x[:m].reshape(self.n, 6)
        if self.frames != "body":
            Vd = np.einsum("kij,kj->ki", self._Ad_B_inv, Vd)
        return Vd, x[m:]

    # ------------------------------------------------------------------ the velocity-level step
    def step(self, C: Array, V: Array, tau: Array, h: float, forces: Sequence[Any] = (), stabilization: str = "post",
             baumgarte: float = 0.2, project_velocities: bool = False, tol: float = 1e-12, max_iterations: int = 10,
             t: float = 0.0, solver: str = "auto", near: Array | None = None) -> tuple[Array, Array]:
        """One velocity-level step of h (s) from the state frames' poses C
        (n, 4, 4) and body twists V (n, 6) under the joint forces ``tau``
        (nv, reduced order, acting as in :meth:`forces`) and the force
        elements ``forces`` (:mod:`.maximal_forces`); returns ``(C⁺, V⁺)``.

        Sueda §1.8 and eq. 1.71–1.74 in this library's KKT sign (DESIGN.md;
        λ impulses), in the body frames:

            [M̃  −Gᵀ] [V⁺]   [M V + h(ad(V)ᵀ M V + f) − h D V]
            [G    0] [λ ] = [c                              ]

        with ``M̃ = M − hD − h²K`` (the elements' ``K = ∂f/∂C`` for body-twist
        increments and ``D = ∂f/∂V``: the linearly implicit Euler of eq.
        1.30 with errata S1–S4 — Sueda's ``M + hD − h²K`` has D = −∂f/∂φ; the
        ``−hDV`` term is the one S4 adds), G the rows at C (loop and coupling
        rows too),
        then ``C⁺_k = C_k exp(h V⁺_k)`` (eq. 1.28: the new velocity, so the
        step is semi-implicit, symplectic Euler-like). Gravity (``gravity``)
        and the velocity products ``ad(V)ᵀMV`` stay explicit.

        ``stabilization`` (the constraint drift of a velocity-level step):

        * ``"none"``: c = 0 (the rows hold at velocity level; positions drift
          at O(h²) a step);
        * ``"baumgarte"``: ``c = −(γ/h) g(C)`` (Sueda §1.12, eq. 1.81 with
          γ_Sueda = γ/h; ``baumgarte`` = γ ∈ (0, 1], the fraction of the
          position error :meth:`position_errors` removed per step at first
          order; 1 removes it all, and smaller values add less energy);
        * ``"post"`` (default): after the pose update, Cline–Pai
          post-stabilization — Gauss–Newton steps ``C_k ← C_k exp(Δ_k)``,
          ``Δ = −M⁻¹Gᵀ(G M⁻¹ Gᵀ)⁻¹ g(C)`` (the M-weighted least change of the
          poses that zeroes g to first order), until ``max|g| ≤ tol`` or
          ``max_iterations``;
        * ``"baumgarte+post"``: both.

        ``project_velocities``: also project V⁺ onto ``G(C⁺) V = 0`` in the
        M-norm after the post-stabilization. ``solver``: "tree" (the O(n)
        block elimination :func:`tree_kkt_solve`; trees without loops whose
        force Jacobians couple no two bodies, and no coupling rows), "sparse"
        (SuperLU on the sparse KKT matrix, dense least squares when it is
        singular: dependent loop rows) or "auto" (tree when it applies). The
        step's impulses λ, the iterations and the final max|g| are left in
        :attr:`last_step`. ``near``: the branch of the varying joints'
        coordinates for the joint forces τ (:meth:`acceleration`) and of the
        coupled angles in the coupling rows' position errors
        (:meth:`position_errors`)."""
        if isinstance(h, bool) or not isinstance(h, numbers.Real) or not (np.isfinite(h) and h > 0):
            raise InputError(f"the time step h must be a finite number > 0 (s), got {h!r}")
        if stabilization not in ("none", "baumgarte", "post", "baumgarte+post"):
            raise InputError(f"stabilization must be 'none', 'baumgarte', 'post' or 'baumgarte+post', got "
                             f"{stabilization!r}")
        if solver not in ("auto", "tree", "sparse"):
            raise InputError(f"solver must be 'auto', 'tree' or 'sparse', got {solver!r}")
        if not (isinstance(baumgarte, numbers.Real) and 0.0 < baumgarte <= 1.0):
            raise InputError(f"baumgarte (γ) must be a number in (0, 1], got {baumgarte!r}")
        h = float(h)
        C, V = self._check_state(C, V)
        tau = self._check_tau(tau)
        if near is not None:  # the coupled angles' branch (position errors of the coupling rows)
            self._seed_branch(self._near(near))
        Cb, Vb = self._body_frames(C, V) if self.frames != "body" else (C, V)
        relatives = self.relatives(Cb)
        varying = self._varying(Cb, self._near(near))
        f = self.forces(Cb, Vb, tau, relatives, varying)
        b = np.einsum("kij,kj->ki", self.inertia, Vb) + h * f
        Mt = self.inertia.copy()
        coupled = {}
        if forces:
            from .maximal_forces import body_wrenches
            fm, K, D = body_wrenches(self, forces, Cb, Vb, t)
            b += h * fm
            for (i, j), Dij in D.items():
                b[i] -= h * (Dij @ Vb[j])
            for (i, j), B in _sum_blocks(D, -h, K, -h * h).items():
                if i == j:
                    Mt[i] += B
                else:
                    coupled[i, j] = B
        c = np.zeros(self.rows)
        if stabilization in ("baumgarte", "baumgarte+post"):
            c = -(baumgarte / h) * self._position_errors(Cb, varying)
        # the tree elimination takes the tree joints' rows only: loop and coupling rows go to SuperLU
        use_tree = solver == "tree" or (solver == "auto" and not coupled and self._tree_rows)
        if use_tree and (coupled or not self._tree_rows):
            raise InputError("solver='tree' takes trees without loop or coupling rows whose force Jacobians "
                             "couple no two bodies; use solver='sparse'")
        Vn, lam = self._velocity_solve(Mt, coupled, relatives, varying, b, c, use_tree)
        C1 = np.array([Cb[k] @ se3.exp(h * Vn[k]) for k in range(self.n)])
        iterations, residual = 0, None
        if stabilization in ("post", "baumgarte+post") and self.rows:
            C1, iterations, residual = self._post_stabilize(C1, tol, max_iterations, use_tree or self._tree_rows)
        if project_velocities and self.rows:
            rel1, var1 = self.relatives(C1), self._varying(C1)
            Vn, _ = self._velocity_solve(self.inertia, {}, rel1, var1,
                                         np.einsum("kij,kj->ki", self.inertia, Vn), np.zeros(self.rows),
                                         self._tree_rows)
        self.last_step = {"lambda": lam, "iterations": iterations, "residual": residual}
        if not (np.all(np.isfinite(C1)) and np.all(np.isfinite(Vn))):
            raise SimulationError("the maximal step diverged (a non-finite pose or twist); reduce h")
        if self.frames != "body":
            return C1 @ self.offset, np.einsum("kij,kj->ki", self._Ad_B_inv, Vn)
        return C1, Vn

    def _near(self, near):
        """``near`` as a checked configuration (nq), or None."""
        return None if near is None else self.model.check_configuration(near)

    def _check_tau(self, tau):
        tau = np.asarray(tau, dtype=float)
        if tau.shape != (self.model.nv,):
            raise InputError(f"tau must have shape ({self.model.nv},), got {tau.shape}")
        if not np.all(np.isfinite(tau)):
            k = int(np.argwhere(~np.isfinite(tau))[0][0])
            name = next(j.name for j in self.model.joints[1:] if j.v_slice.start <= k < j.v_slice.stop)
            raise NonFiniteError(f"tau holds a non-finite value at index {k} (joint '{name}')")
        return tau

    def _post_stabilize(self, C, tol, max_iterations, tree):
        """Cline–Pai post-stabilization of the body frames' poses C (module
        docstring of :meth:`step`); returns (C, iterations, max|g|)."""
        zero = np.zeros((self.n, 6))
        for it in range(max_iterations + 1):
            varying = self._varying(C)
            g = self._position_errors(C, varying)
            r = float(np.abs(g).max())
            if r <= tol or it == max_iterations:
                return C, it, r
            # M Δ − Gᵀμ = 0, G Δ = −g: Δ = M⁻¹Gᵀμ, μ = −(G M⁻¹Gᵀ)⁻¹ g
            delta, _ = self._velocity_solve(self.inertia, {}, self.relatives(C), varying, zero, -g, tree)
            C = np.array([C[k] @ se3.exp(delta[k]) for k in range(self.n)])
        return C, max_iterations, r

    def _velocity_solve(self, Mt, coupled, relatives, varying, b, c, tree):
        """(V (n, 6), λ (rows)) of ``[M̃ −Gᵀ; G 0][V; λ] = [b; c]`` in the body
        frames: M̃ the diagonal blocks Mt (n, 6, 6) plus the off-diagonal
        blocks ``coupled`` {(i, j): 6 × 6}; ``tree``: by
        :func:`tree_kkt_solve`, else SuperLU (dense least squares when the
        matrix is singular or small: dependent loop rows)."""
        if tree:
            A = np.zeros((self.n, 6, 6))
            for k, Ak in enumerate(relatives[:self.n]):
                if Ak is not None:
                    A[k] = Ak
            N = self._Npad
            if varying:
                N = N.copy()
                for k, var in varying.items():
                    N[k, :, :var[0].shape[1]] = var[0]
            cp = np.zeros((self.n, 6))
            for k in range(self.n):
                lo = self.row_offsets[k]
                cp[k, :self._m[k]] = c[lo:lo + self._m[k]]
            V, lp = np.empty((self.n, 6)), np.empty((self.n, 6))
            tree_kkt_solve(self._parent64, self._m, N, A, np.ascontiguousarray(Mt), np.ascontiguousarray(b), cp,
                           V, lp)
            lam = np.concatenate([lp[k, :self._m[k]] for k in range(self.n)]) if self.rows else np.zeros(0)
            return V, lam
        m = 6 * self.n
        G, _ = self.constraints(np.zeros((self.n, 4, 4)), None, relatives, varying)
        Mt_s = sp.block_diag(list(Mt), format="coo")
        if coupled:
            r, cc, vals = [Mt_s.row], [Mt_s.col], [Mt_s.data]
            for (i, j), B in coupled.items():
                ii, jj = np.indices((6, 6))
                r.append(ii.ravel() + 6 * i)
                cc.append(jj.ravel() + 6 * j)
                vals.append(B.ravel())
            Mt_s = sp.coo_matrix((np.concatenate(vals), (np.concatenate(r), np.concatenate(cc))), shape=(m, m))
        KKT = sp.bmat([[Mt_s, -G.T], [G, None]], format="csc")
        rhs = np.concatenate([b.ravel(), c])
        x = None
        if m + self.rows > DENSE_KKT_SIZE:
            try:
                x = splu(KKT).solve(rhs)
            except RuntimeError:  # "exactly singular": dependent rows
                x = None
        if x is None or not np.all(np.isfinite(x)):
            x = np.linalg.lstsq(KKT.toarray(), rhs, rcond=None)[0]
        return x[:m].reshape(self.n, 6), x[m:]

    def _schur_solve(self, G, f, eta):
        """``(V̇; λ)`` of the KKT system by its Schur complement, ``A λ =
        G M⁻¹f − η``, ``A = G M⁻¹Gᵀ``, with A's dependent rows dropped
        (:func:`~multibody.dynamics.closed_loop_kernels.psd_factor`: a planar
        four-bar's point rows in 3-D have rank 2; their λ is 0), then
        ``V̇ = M⁻¹(f − Gᵀλ)``; M⁻¹ block by block."""
        Gd = G.toarray()
        Minv_f = np.einsum("kij,kj->ki", self._inertia_inv, f).ravel()
        Y = np.einsum("kij,rkj->rki", self._inertia_inv, Gd.reshape(self.rows, self.n, 6)).reshape(self.rows, 6 * self.n)
        A = np.ascontiguousarray(Gd @ Y.T)
        D, lam, scratch = np.empty(self.rows), np.empty(self.rows), np.empty(self.rows)
        psd_factor(A, D, PSD_RTOL)
        psd_apply(A, D, Gd @ Minv_f - eta, lam, scratch)
        return np.concatenate([Minv_f - Y.T @ lam, lam])
