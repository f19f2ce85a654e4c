"""Force elements in maximal coordinates (Sueda §1.9; notes/seed-001.md C,
items 13–20, errata S1–S5): the body wrenches f_m (n, 6) of the library's
force elements (:mod:`multibody.forces`) at a maximal state — body-frame
poses C (n, 4, 4) and body twists V (n, 6), angular first — and their
Jacobians

* ``K = ∂f/∂C``: the change of the wrenches when every pose moves by a
  body-twist increment, ``C_k ← C_k exp(ε̂_k)`` (Sueda's δq of eq. 1.30),
* ``D = ∂f/∂V``,

as dicts of 6 × 6 blocks {(i, j): ∂f_i/∂(ε_j or V_j)} (so a spring has a
negative semidefinite symmetric part of K, a damper a negative
semidefinite D; DESIGN.md's sign, the step solves with ``M − hD − h²K``).

One formula per element on body quantities; the scalar laws are the
elements' own (``PointToPointSpring._law``, ``JointSpring`` and
``JointDamper`` through ``evaluate``):

* a world force F at the body point x (body coordinates) is the wrench
  ``Γᵀ Rᵀ F`` with ``Γ = [x̂ᵀ, 1]`` (Sueda eq. 1.12 with typo 2), and
  ``∂(RᵀF)/∂ε = [[RᵀF]^, 0]`` for a world-fixed F (eq. 1.33: PointForce and
  Gravity, +∂f/∂q as printed);
* the point-to-point spring: ``Δ = x_b − x_a``, ``u = Δ/l``, tension
  ``F(l − L, u·(ẋ_b − ẋ_a))``, force ``F u`` on a and ``−F u`` on b (the
  errata S5 signs); K differentiates u, l and l̇ exactly (eq. 1.37's block
  matrix is −∂f/∂q, erratum S2 — not used here) and is not symmetric when
  the law has damping and the points move;
* BodyDamping: ``f = −Ad(P⁻¹)ᵀ Δ Ad(P⁻¹) V`` at its frame P, ``D`` that
  matrix (Sueda §1.9.1's "D = dI" with our sign), K = 0;
* JointSpring / JointDamper of a 1-DoF joint (revolute, prismatic,
  helical): its reduced force τ(q, q̇) (q recovered from the relative pose,
  q̇ = s⁺(V_c − A V_p)) as the wrench pair ``s⁺ᵀτ`` on the child and
  ``−Aᵀ s⁺ᵀτ`` on the parent (A = Ad(C_c⁻¹C_p)), K and D by the chain rule
  through q, q̇ and A.

Gravity as an element duplicates ``MaximalSystem(gravity=True)``: pass it
to a system built with ``gravity=False`` (then it is linearly implicit).
Other elements are refused by name.
"""
import numpy as np

from ..errors import InputError
from ..forces import BodyDamping, Gravity, JointDamper, JointSpring, PointForce, PointToPointSpring
from ..forces.base import ForceElement
from ..model.joints import C_H
from ..spatial import se3, so3
from .maximal import _adT_matrix, _angle_gradient

_ONE_DOF = ("revolute", "prismatic", "helical")


def _add(blocks, i, j, B):
    if i < 0 or j < 0:
        return
    blocks[i, j] = blocks[i, j] + B if (i, j) in blocks else B.copy()


def _gamma(x):
    """Γ = [x̂ᵀ, 1] (3 × 6): the body point x's velocity ``Γ V`` in body axes."""
    return np.hstack([so3.hat(x).T, np.eye(3)])


def _rotating_force(Fb):
    """∂(Rᵀ F)/∂ε (3 × 6) of a world-fixed F, ``Fb = Rᵀ F``: ``[F̂b, 0]``."""
    return np.hstack([so3.hat(Fb), np.zeros((3, 3))])


def body_wrenches(system, elements, C, V, t=0.0, jacobians=True):
    """``(f, K, D)``: the body wrenches f (n, 6) of the force ``elements``
    on the maximal ``system``'s bodies at the body frames' poses C (n, 4, 4)
    and twists V (n, 6) at time t, and (``jacobians``) their Jacobians K
    and D as dicts of 6 × 6 blocks (module docstring). Sueda §1.9 with the
    errata of notes/seed-001.md §4 (S1–S5)."""
    if isinstance(elements, ForceElement):
        elements = (elements,)
    model = system.model
    n = system.n
    f = np.zeros((n, 6))
    K, D = {}, {}
    reduced = None  # (q, v) of the state, for the joint elements
    for e in elements:
        if not isinstance(e, ForceElement):
            raise InputError(f"forces: {e!r} is not a ForceElement (multibody.forces)")
        if isinstance(e, Gravity):
            _gravity(system, C, f, K)
        elif isinstance(e, PointForce):
            _point_force(e, model, C, t, f, K)
        elif isinstance(e, BodyDamping):
            _body_damping(e, model, V, f, D)
        elif isinstance(e, PointToPointSpring):
            _point_to_point(e, model, C, V, f, K, D)
        elif isinstance(e, (JointSpring, JointDamper)):
            if reduced is None:
                reduced = system.coordinates(*_state_frames(system, C, V))
            _joint_element(e, system, C, V, reduced, t, f, K, D)
        else:
            raise e.error("the maximal formulation takes Gravity, PointForce, BodyDamping, PointToPointSpring "
                          "and the JointSpring / JointDamper of 1-DoF joints", InputError)
    return f, K, D


def _state_frames(system, C, V):
    """Body-frame (C, V) → the system's state frames (for coordinates)."""
    if system.frames == "body":
        return C, V
    return C @ system.offset, np.einsum("kij,kj->ki", system._Ad_B_inv, V)


def _gravity(system, C, f, K):
    """Each body's weight at its centre of mass: ``f = (h × Rᵀg; m Rᵀg)``
    (h = m c the first moment), ``K = [[ĥ ĝ_b, 0], [m ĝ_b, 0]]``, g_b = Rᵀg
    (Sueda eq. 1.22, and eq. 1.33 with x = c)."""
    g = system.model.gravity
    for k in range(system.n):
        gb = C[k, :3, :3].T @ g
        m = system.inertia[k, 3, 3]
        h = system.model.tree[k + 1, C_H:C_H + 3]
        f[k, :3] += np.cross(h, gb)
        f[k, 3:] += m * gb
        B = np.zeros((6, 6))
        B[:3, :3] = so3.hat(h) @ so3.hat(gb)
        B[3:, :3] = m * so3.hat(gb)
        _add(K, k, k, B)


def _point_force(e, model, C, t, f, K):
    """PointForce (Sueda §1.9.2, eq. 1.31–1.34): ``Γᵀ Rᵀ F``; a world
    direction gives ``K = Γᵀ [(RᵀF)^, 0]`` (eq. 1.33), a body-fixed one K = 0."""
    body, place = e.bind(model)
    k = body - 1
    if k < 0:
        return
    x = place[:3, 3]
    mag = e.magnitude(t)
    if e.direction_reference == "world":
        Fb = C[k, :3, :3].T @ (mag * e.direction)
        _add(K, k, k, _gamma(x).T @ _rotating_force(Fb))
    else:
        Fb = mag * (place[:3, :3] @ e.direction)
    f[k] += _gamma(x).T @ Fb


def _body_damping(e, model, V, f, D):
    """BodyDamping: ``f = −Ad(P⁻¹)ᵀ Δ Ad(P⁻¹) V`` with P the frame's
    placement on its body and Δ = diag(angular, linear); D that matrix
    (Sueda §1.9.1 with the sign of DESIGN.md), K = 0 (body twists do not
    turn with the pose)."""
    body, place = e.bind(model)
    k = body - 1
    if k < 0:
        return
    A = se3.Ad(se3.inverse(place))
    Dk = -A.T @ (np.concatenate([e.angular, e.linear])[:, None] * A)
    f[k] += Dk @ V[k]
    _add(D, k, k, Dk)


def _point_to_point(e, model, C, V, f, K, D):
    """PointToPointSpring (Sueda §1.9.3 and §1.9.6 with errata S2, S5; the
    element's law): module docstring. With ``P_e = R_e Γ_e`` (∂x_e/∂ε_e and
    ∂ẋ_e/∂V_e) and ``Q = [−P_a, P_b]``: ``f = −Qᵀ F u``, ``D = −F_ṡ Qᵀ u uᵀ Q``,
    ``K = −Qᵀ ∂(F u)/∂ε + diag(Γ_aᵀ[(R_aᵀF u)^, 0], −Γ_bᵀ[(R_bᵀF u)^, 0])``."""
    ba, pa, bb, pb = e.bind(model)
    ends = []
    for body, place, sign in ((ba, pa, -1.0), (bb, pb, 1.0)):
        k = body - 1
        x = place[:3, 3]
        if k < 0:
            ends.append((k, x, None, x, np.zeros((3, 6)), np.zeros(3), sign, None))
            continue
        R = C[k, :3, :3]
        Gm = _gamma(x)
        y = Gm @ V[k]  # the point's velocity in body axes
        ends.append((k, x, R, R @ x + C[k, :3, 3], R @ Gm, R @ y, sign, Gm))
    (ka, _, Ra, xa, Pa, va, _, Ga), (kb, _, Rb, xb, Pb, vb, _, Gb) = ends
    d = xb - xa
    l = float(np.linalg.norm(d))
    if l < 1e-300:  # direction undefined: no force (as the element)
        return
    u = d / l
    rate = vb - va
    F, Fs, Fr = e._law(l - e.rest_length, float(u @ rate))
    fw = F * u  # the world force on a (towards b)
    Q = np.hstack([-Pa, Pb])  # ∂Δ/∂ε and ∂(ẋ_b − ẋ_a)/∂V, 3 × 12
    U = (np.eye(3) - np.outer(u, u)) / l
    dl = u @ Q
    drate = np.zeros((3, 12))  # ∂(ẋ_b − ẋ_a)/∂ε: δẋ_e = −R_e (Γ_e V_e)^ δω_e
    if Ra is not None:
        drate[:, :3] = Ra @ so3.hat(Ra.T @ va)
    if Rb is not None:
        drate[:, 6:9] = -Rb @ so3.hat(Rb.T @ vb)
    dsdot = rate @ (U @ Q) + u @ drate
    dfw = np.outer(u, Fs * dl + Fr * dsdot) + F * (U @ Q)
    W = -Q.T @ fw
    Kf = -Q.T @ dfw
    Df = -Fr * np.outer(Q.T @ u, u @ Q)
    if Ra is not None:
        Kf[:6, :6] += Ga.T @ _rotating_force(Ra.T @ fw)
    if Rb is not None:
        Kf[6:, 6:] -= Gb.T @ _rotating_force(Rb.T @ fw)
    for r, kr in ((0, ka), (1, kb)):
        if kr < 0:
            continue
        f[kr] += W[6 * r:6 * r + 6]
        for c, kc in ((0, ka), (1, kb)):
            if kc >= 0:
                _add(K, kr, kc, Kf[6 * r:6 * r + 6, 6 * c:6 * c + 6])
                _add(D, kr, kc, Df[6 * r:6 * r + 6, 6 * c:6 * c + 6])


def _joint_element(e, system, C, V, reduced, t, f, K, D):
    """JointSpring / JointDamper of a 1-DoF joint as a wrench pair (module
    docstring): with s⁺ = pinv(s) (1 × 6), ``w = s⁺ᵀ τ``, ``f_c = w``, ``f_p =
    −Aᵀw``; ``∂q/∂ε_c = ∂q/∂ξ``, ``∂q/∂ε_p = −∂q/∂ξ A`` (ξ the child's twist
    increment relative to the parent, ``∂q/∂ξ`` of the coordinate recovered
    from the relative pose), ``∂q̇/∂ε_c = −s⁺ ad(A V_p)``, ``∂q̇/∂ε_p = s⁺ A
    ad(V_p)``, ``∂(Aᵀw)/∂ε_p = L(Aᵀw)``, ``∂(Aᵀw)/∂ε_c = −Aᵀ L(w)`` (L of
    ``ad(x)ᵀy = L(y) x``)."""
    model = system.model
    j = e.bind(model)[0]
    if j.type not in _ONE_DOF:
        raise e.error(f"the maximal formulation takes joint springs and dampers of 1-DoF joints (revolute, "
                      f"prismatic, helical); joint '{j.name}' is {j.type}", InputError)
    q, v = reduced
    tau, Kr, Dr = e.evaluate(model, q, v, t, jacobians=True)
    i = j.v_slice.start
    tj, kj, dj = tau[i], Kr[i, i], Dr[i, i]
    k = j.child - 1
    p = int(system.parent[k])
    sp = system._S_pinv[k]  # 1 × 6
    w = sp[0] * tj
    T = system._link_pose(C, k)
    kind, a, e1, e2 = system.descriptors[k][:4]
    dq = np.zeros(6)  # ∂q/∂ξ of joint_coordinates
    if kind == "prismatic":
        dq[3:] = a @ T[:3, :3]
    else:
        dq[:3] = _angle_gradient(T[:3, :3], a, e1, e2)
    f[k] += w
    if p < 0:
        _add(K, k, k, np.outer(sp[0], kj * dq))
        _add(D, k, k, np.outer(sp[0], dj * sp[0]))
        return
    A = se3.Ad(se3.inverse(C[k]) @ C[p])
    AVp = A @ V[p]
    dtau_c = kj * dq - dj * (sp[0] @ se3.ad(AVp))
    dtau_p = -kj * (dq @ A) + dj * (sp[0] @ A @ se3.ad(V[p]))
    ATw = A.T @ w
    f[p] -= ATw
    _add(K, k, k, np.outer(sp[0], dtau_c))
    _add(K, k, p, np.outer(sp[0], dtau_p))
    _add(K, p, k, -A.T @ np.outer(sp[0], dtau_c) + A.T @ _adT_matrix(w))
    _add(K, p, p, -A.T @ np.outer(sp[0], dtau_p) - _adT_matrix(ATw))
    _add(D, k, k, np.outer(sp[0], dj * sp[0]))
    _add(D, k, p, -np.outer(sp[0], dj * (sp[0] @ A)))
    _add(D, p, k, -A.T @ np.outer(sp[0], dj * sp[0]))
    _add(D, p, p, A.T @ np.outer(sp[0], dj * (sp[0] @ A)))
