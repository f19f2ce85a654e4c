"""Shared helpers of the force-element tests: random trees with every joint
type, random states, central finite differences in the tangent space, the
Lie-bracket term of the asymmetry of K, and a catalogue of elements."""
import numpy as np

from multibody.forces import (BodyDamping, ExternalWrench, FrameSpring, Gravity, JointCoulombFriction,
                              JointDamper, JointSpring, PointForce, PointToPointSpring)
from multibody.model.joints import C_AX1, C_AX2, C_AX3
from multibody.spatial import so3
from oracles import random_tree

H = 1e-6  # finite-difference step (tangent coordinates, m or rad; v in m/s or rad/s)

# Central differences with step h: truncation ~ h²·|τ'''| ≈ 1e-12·(scale of τ),
# round-off ~ eps·|τ|/h ≈ 2e-10·|τ|. Observed errors are ≤ 3e-9 relative; the
# tolerance 1e-6 (relative to the largest of |τ|, |K|, |D|, 1) leaves a factor
# ~300 of margin while still catching any missing term (those are O(1)).
RTOL = 1e-6


def tree(seed, floating, n=9, fixed=2, gravity=None):
    """A random tree cycling through every joint type (non-Pinocchio planar
    axes), with a free base or not, and ``fixed`` merged links (frames)."""
    b = random_tree(seed, n=n, floating=floating, pin_compatible=False, fixed=fixed)
    if gravity is not None:
        b.gravity = np.asarray(gravity, dtype=float)
    return b.build()


def state(model, seed):
    rng = np.random.default_rng(seed)
    return model.random_configuration(seed=seed), rng.normal(size=model.nv)


def fd_jacobians(element, model, q, v, t=0.0, h=H):
    """Central differences of τ: K[:, l] along q ⊕ (±h e_l), D[:, l] along v ± h e_l."""
    nv = model.nv
    K, D = np.zeros((nv, nv)), np.zeros((nv, nv))
    for l in range(nv):
        e = np.zeros(nv)
        e[l] = h
        K[:, l] = (element.evaluate(model, model.integrate(q, e), v, t)[0]
                   - element.evaluate(model, model.integrate(q, -e), v, t)[0]) / (2 * h)
        D[:, l] = (element.evaluate(model, q, v + e, t)[0] - element.evaluate(model, q, v - e, t)[0]) / (2 * h)
    return K, D


def fd_gradient(fun, model, q, h=H):
    """Central-difference tangent gradient of a scalar function of q."""
    g = np.zeros(model.nv)
    for l in range(model.nv):
        e = np.zeros(model.nv)
        e[l] = h
        g[l] = (fun(model.integrate(q, e)) - fun(model.integrate(q, -e))) / (2 * h)
    return g


def close(A, B, scale):
    return np.abs(A - B).max() <= RTOL * max(1.0, scale)


def _crm(s, m):
    """Featherstone's motion cross product (Eq. 2.31), written out here
    independently of the library."""
    w, u, a, b = s[:3], s[3:], m[:3], m[3:]
    return np.r_[np.cross(w, a), np.cross(w, b) + np.cross(u, a)]


def bracket_matrix(model, tau):
    """``B[k, l] = τ·[e_l, e_k]`` for coordinates k, l of one Lie-group joint
    (spherical, free, planar: body-frame coordinates that do not commute).
    For a conservative element ``K - Kᵀ = B`` (BCH: ``exp(a)exp(b) =
    exp(a + b + ½[a, b] + …)``); B = 0 on trees of vector joints."""
    nv = model.nv
    B = np.zeros((nv, nv))
    for j in model.joints[1:]:
        if j.type not in ("spherical", "free", "planar"):
            continue
        tr = model.tree[j.child]
        if j.type == "spherical":
            S = np.vstack((np.eye(3), np.zeros((3, 3))))
        elif j.type == "free":
            S = np.eye(6)
        else:
            S = np.zeros((6, 3))
            S[:3, 0], S[3:, 1], S[3:, 2] = tr[C_AX1:C_AX1 + 3], tr[C_AX2:C_AX2 + 3], tr[C_AX3:C_AX3 + 3]
        Sp = np.linalg.pinv(S)
        n = S.shape[1]
        tj = tau[j.v_slice]
        for k in range(n):
            for l in range(n):
                c = Sp @ _crm(S[:, l], S[:, k])       # [e_l, e_k] in joint coordinates
                B[j.v_slice.start + k, j.v_slice.start + l] = tj @ c
    return B


def joint_names(model):
    return [j.name for j in model.joints[1:] if j.nv > 0]


def catalogue(model, rng):
    """One instance of every element (several variants), on random bodies,
    frames (merged fixed links included), the world, and every joint."""
    frames = [f for f in model.frame_names if f != "world"]
    pick = lambda: frames[rng.integers(len(frames))]  # noqa: E731
    p3 = lambda: rng.uniform(-0.3, 0.3, 3)  # noqa: E731
    R0 = so3.exp(rng.uniform(-0.5, 0.5, 3))
    els = [Gravity()]
    for j in model.joints[1:]:
        if j.nv == 0:
            continue
        k = rng.uniform(0.5, 5.0, j.nv)
        if j.type in ("spherical", "free"):
            k[:3] = k[0]
        rest = model.random_configuration(seed=int(rng.integers(1 << 30)))[j.q_slice]
        els.append(JointSpring(j.name, k, rest))
        els.append(JointDamper(j.name, rng.uniform(0.1, 2.0, j.nv)))
        els.append(JointCoulombFriction(j.name, rng.uniform(0.1, 2.0, j.nv), v_eps=0.7))
    wr = rng.normal(size=6)
    els += [
        ExternalWrench(pick(), wr, "world"),
        ExternalWrench(pick(), wr, "local"),
        ExternalWrench(pick(), lambda t: np.r_[np.sin(t), np.cos(2 * t), t, 1.0, -t * t, 0.5], "local"),
        PointForce(pick(), p3(), rng.normal(size=3), 3.0, "world"),
        PointForce(pick(), p3(), rng.normal(size=3), lambda t: 2.0 + np.sin(t), "local"),
        BodyDamping(pick(), 2.0, [0.5, 1.0, 1.5]),
        BodyDamping(pick(), [1.0, 2.0, 3.0], 0.7),
        PointToPointSpring(pick(), p3(), pick(), p3(), 10.0, 2.0, 0.3),
        PointToPointSpring("world", p3(), pick(), p3(), 20.0, 1.0, 0.5, force_law="green"),
        PointToPointSpring(pick(), p3(), pick(), p3(), 5.0, 0.5, 0.4, force_law="strain"),
        PointToPointSpring(pick(), p3(), "world", p3(),
                           force_law=lambda s, sd: (3 * s + s ** 3 + 0.5 * sd * (1 + s * s),
                                                    3 + 3 * s * s + sd * s, 0.5 * (1 + s * s))),
        FrameSpring(pick(), pick(), 10.0, 5.0, 2.0, 3.0, rest_pose=(R0, p3())),
        FrameSpring("world", pick(), 7.0, 2.0, 1.0, 0.5),
    ]
    return els
