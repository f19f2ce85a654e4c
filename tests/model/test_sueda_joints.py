"""Sueda's joint library (model/sueda_joints.py, seed 001 §2.4, notes F):
each joint's S and Ṡ against central differences of its transform Q(q)
and against the notes' printed closed forms; its dynamics against models of
already verified joints (chains with massless intermediate bodies, the
quaternion spherical and free joints) and against the Christoffel form of
the CRBA inertia; the exponential chart change and gimbal lock in a
simulation; bad input."""
import numpy as np
import pytest
from scipy.linalg import expm

import multibody as mb
from multibody.errors import InputError, ModelError, SimulationError
from multibody.forces import PointToPointSpring
from multibody.model.joints import joint_bias, joint_transform, motion_subspace_into, subspace_rate_into
from multibody.spatial import quaternion, se3, so3
from multibody.spatial.spatial import mcI

INERTIA = np.diag([0.3, 0.2, 0.1])
EPS = 1e-6
rng = np.random.default_rng(7)
FRAMES = [se3.exp(rng.normal(size=6) * 0.4) for _ in range(6)]
SURFACE = rng.normal(size=(6, 4, 4)) * 0.3
NESTED = [("revolute", (1, 0, 0)), [("prismatic", (0, 1, 0)), ("helical", (0, 0.6, 0.8), 0.1)]]
JOINTS = {
    "exp_spherical": {}, "free3d": {}, "euler": {},
    "euler_yxz": dict(joint="euler", axis=(0, 1, 0), axis2=(1, 0, 0), axis3=(0, 0.6, 0.8)),
    "free2d": {}, "spline": dict(control=FRAMES), "spline_surface": dict(control=SURFACE),
    "composite": dict(parts=NESTED),
}


def one_joint(name, **extra):
    kw = dict(JOINTS[name])
    joint = kw.pop("joint", name)
    b = mb.ModelBuilder()
    b.add_body("a", joint=joint, mass=1.0, com=(0.1, -0.2, 0.3), inertia=INERTIA, **kw, **extra)
    return b.build()


def transform(model, q):
    J = joint_transform(int(model.tree[1, 0]), model._tree, 1, np.asarray(q, dtype=float), 0)
    T = np.eye(4)
    T[:3, :3], T[:3, 3] = np.reshape(J[:9], (3, 3)), J[9:]
    return T


def subspace(model, q):
    S = np.zeros((6, model.nv))
    motion_subspace_into(model._tree, 1, q, S, 0)
    return S


def subspace_rate(model, q, v):
    Sd = np.zeros((6, model.nv))
    subspace_rate_into(model._tree, 1, q, v, Sd, 0)
    return Sd


def sample(model, name, seed):
    r = np.random.default_rng(seed)
    n = model.nv
    if name == "spline":  # across the 3 segments, and the extrapolated ends
        return np.array([r.uniform(-0.2, 3.2)]), r.normal(size=1)
    if name == "spline_surface":
        return r.uniform(0, 1, size=2), r.normal(size=2)
    return r.normal(size=n), r.normal(size=n)


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("name", sorted(JOINTS))
def test_subspace_and_rate_are_derivatives_of_the_transform(name, seed):
    """[S_i] = Q⁻¹ ∂Q/∂q_i (Sueda eq. 2.29) and Ṡ = ∂S/∂q q̇ by central
    differences (truncation ~ε² ≈ 1e-12, round-off ~1e-10); c_J = Ṡ q̇."""
    model = one_joint(name)
    q, v = sample(model, name, seed)
    n = model.nv
    fd = np.zeros((6, n))
    for k in range(n):
        dq = np.zeros(n)
        dq[k] = EPS
        D = np.linalg.inv(transform(model, q)) @ (transform(model, q + dq) - transform(model, q - dq)) / (2 * EPS)
        fd[:, k] = np.r_[D[2, 1], D[0, 2], D[1, 0], D[:3, 3]]
    assert np.abs(subspace(model, q) - fd).max() < 1e-8
    Sd = subspace_rate(model, q, v)
    fd_rate = (subspace(model, q + EPS * v) - subspace(model, q - EPS * v)) / (2 * EPS)
    assert np.abs(Sd - fd_rate).max() < 1e-8
    assert np.abs(np.array(joint_bias(model._tree, 1, q, v)) - Sd @ v).max() < 1e-14


def test_euler_xzx_matches_the_printed_closed_forms():
    """Sueda eq. 2.31 and the S, Ṡ columns of §2.4.5 (notes F, verified)."""
    model = one_joint("euler")
    q, qd = np.array([0.3, -1.1, 0.7]), np.array([0.4, -0.9, 1.3])
    c1, c2, c3 = np.cos(q)
    s1, s2, s3 = np.sin(q)
    R = np.array([[c2, -s2 * c3, s2 * s3],
                  [c1 * s2, c1 * c2 * c3 - s1 * s3, -s1 * c3 - c1 * c2 * s3],
                  [s1 * s2, c1 * s3 + s1 * c2 * c3, c1 * c3 - s1 * c2 * s3]])
    assert np.abs(transform(model, q)[:3, :3] - R).max() < 1e-15
    S = np.array([[c2, 0, 1], [-c3 * s2, s3, 0], [s2 * s3, c3, 0]])
    Sd = np.array([[-s2 * qd[1], 0, 0],
                   [s3 * s2 * qd[2] - c3 * c2 * qd[1], c3 * qd[2], 0],
                   [c2 * s3 * qd[1] + s2 * c3 * qd[2], -s3 * qd[2], 0]])
    assert np.abs(subspace(model, q)[:3] - S).max() < 1e-15 and not subspace(model, q)[3:].any()
    assert np.abs(subspace_rate(model, q, qd)[:3] - Sd).max() < 1e-15


def test_free2d_matches_the_printed_subspace_with_the_erratum():
    """§2.4.10: S's linear columns are the rows of Q₂ (rotation by θ); Ṡ[3,1]
    = θ̇ Q₂^yy (the seed prints Q₂^xy there: notes F erratum)."""
    model = one_joint("free2d")
    q, qd = np.array([0.5, -0.2, 0.9]), np.array([0.3, 0.8, -1.4])
    c, s = np.cos(q[2]), np.sin(q[2])
    S = np.zeros((6, 3))
    S[2, 2], S[3, 0], S[3, 1], S[4, 0], S[4, 1] = 1, c, s, -s, c
    assert np.abs(subspace(model, q) - S).max() < 1e-15
    Sd = np.zeros((6, 3))
    # Q₂ = [[c, -s], [s, c]]: Ṡ[3,0] = θ̇ Q₂^xy, Ṡ[4,0] = -θ̇ Q₂^xx, Ṡ[3,1] = θ̇ Q₂^yy, Ṡ[4,1] = -θ̇ Q₂^yx
    Sd[3, 0], Sd[4, 0], Sd[3, 1], Sd[4, 1] = qd[2] * -s, -qd[2] * c, qd[2] * c, -qd[2] * s
    assert np.abs(subspace_rate(model, q, qd) - Sd).max() < 1e-15


def _twist_matrix(xi):
    X = np.zeros((4, 4))
    X[:3, :3] = so3.hat(xi[:3])
    X[:3, 3] = xi[3:]
    return X


def test_spline_curve_is_the_cumulative_b_spline_of_its_frames():
    """§2.4.12: on segment s, Q(q) = C_{s+1} Π_{j=2..4} exp(ΔC_{s+j} B̃_j(u)),
    u = q − s, ΔC_k = log(C_{k−1}⁻¹C_k) — evaluated here with scipy's expm
    and the basis of eq. 2.66; the body frame is the joint frame times it
    (the first control frame is folded into the placement). Q is C² across
    the segment joins (the B-spline's continuity): S and ∂S/∂q have no jump."""
    model = one_joint("spline")
    B = np.array([[1, -3, 3, -1], [4, 0, -6, 3], [1, 3, 3, -3], [0, 0, 0, 1]]) / 6.0
    d = [None, None] + [se3.log(np.linalg.inv(FRAMES[k - 1]) @ FRAMES[k]) for k in range(1, 6)]
    for x in (0.0, 0.37, 1.5, 2.0, 2.99):
        s = min(int(np.floor(x)), 2)
        basis = B @ np.array([1, x - s, (x - s) ** 2, (x - s) ** 3])
        T = FRAMES[s].copy()
        for j in (2, 3, 4):  # control point s + j (1-based) has cumulative basis Σ_{r ≥ j} B_r
            T = T @ expm(_twist_matrix(d[s + j]) * basis[j - 1:].sum())
        assert np.abs(np.linalg.inv(FRAMES[0]) @ T - transform(model, np.array([x]))).max() < 1e-12
    for x in (1.0, 2.0):  # C² across the joins: S = Q⁻¹Q′ and ∂S/∂q (Ṡ at q̇ = 1) from either side
        left, right = np.array([x - 1e-13]), np.array([x])
        assert np.abs(subspace(model, left) - subspace(model, right)).max() < 1e-11
        one = np.ones(1)
        assert np.abs(subspace_rate(model, left, one) - subspace_rate(model, right, one)).max() < 1e-11
    assert model.lower_limit.tolist() == [0.0] and model.upper_limit.tolist() == [3.0]


def test_spline_surface_is_the_product_of_its_six_factors():
    """§2.4.13: Q = Π_k exp(ê_k f_k(q)), ê = translations x, y, z then
    rotations x, y, z, f_k = q̃₁ᵀ Bᵀ C_k B q̃₂."""
    model = one_joint("spline_surface")
    B = np.array([[1, -3, 3, -1], [4, 0, -6, 3], [1, 3, 3, -3], [0, 0, 0, 1]]) / 6.0
    q = np.array([0.3, 0.8])
    m1, m2 = (np.array([1, x, x * x, x ** 3]) for x in q)
    T = np.eye(4)
    for k in range(6):
        e = np.zeros(6)
        e[3 + k if k < 3 else k - 3] = 1.0
        T = T @ expm(_twist_matrix(e) * (m1 @ B.T @ SURFACE[k] @ B @ m2))
    assert np.abs(T - transform(model, q)).max() < 1e-13


def _chain(parts, last):
    """``parts`` as a chain of joints whose intermediate bodies are
    massless, ending in the body ``a`` (with ``last``'s mass) and a child."""
    b = mb.ModelBuilder()
    parent = "world"
    for k, (joint, kw) in enumerate(parts):
        name = "a" if k == len(parts) - 1 else f"p{k}"
        mass = dict(mass=1.3, com=(0.2, -0.1, 0.05), inertia=INERTIA) if name == "a" else {}
        b.add_body(name, parent=parent, joint=joint, **mass, **kw)
        parent = name
    b.add_body("c", parent="a", joint="revolute", axis=(0, 1, 0), placement=(np.eye(3), [0.1, 0.2, 0.3]),
               mass=0.7, com=(0.1, 0, 0.2), inertia=INERTIA)
    return b.build()


EQUIVALENT = {
    "euler": [("revolute", dict(axis=(1, 0, 0))), ("revolute", dict(axis=(0, 0, 1))), ("revolute", dict(axis=(1, 0, 0)))],
    "free2d": [("prismatic", dict(axis=(1, 0, 0))), ("prismatic", dict(axis=(0, 1, 0))),
               ("revolute", dict(axis=(0, 0, 1)))],
    "composite": [("revolute", dict(axis=(1, 0, 0))), ("prismatic", dict(axis=(0, 1, 0))),
                  ("helical", dict(axis=(0, 0.6, 0.8), pitch=0.1))],
}


@pytest.mark.parametrize("name", sorted(EQUIVALENT))
def test_products_equal_chains_of_verified_joints(name):
    """A product-of-exponentials joint is the chain of its factors with
    massless bodies between them (Sueda §2.4.9): same coordinates, same
    kinetic energy, so ABA, CRBA and RNEA agree with the chain's (whose
    joints are held to Pinocchio in tests/dynamics) to round-off."""
    kw = dict(JOINTS[name])
    joint = kw.pop("joint", name)
    one = _chain([(joint, kw)], None)
    chain = _chain(EQUIVALENT[name], None)
    r = np.random.default_rng(3)
    for _ in range(3):
        q, v, tau = r.normal(size=one.nq), r.normal(size=one.nv), r.normal(size=one.nv)
        assert np.abs(mb.aba(one, q, v, tau) - mb.aba(chain, q, v, tau)).max() < 1e-12
        assert np.abs(mb.crba(one, q) - mb.crba(chain, q)).max() < 1e-12
        a = r.normal(size=one.nv)
        assert np.abs(mb.rnea(one, q, v, a) - mb.rnea(chain, q, v, a)).max() < 1e-12


@pytest.mark.parametrize("free", [False, True])
def test_exponential_coordinates_equal_the_quaternion_joints(free):
    """exp_spherical (free3d) and the quaternion spherical (free) joint move
    the body the same way: with R = exp([r]), ω = J_r ṙ (and the free
    joint's body velocity S ṙ), the accelerations satisfy V̇ = S q̈ + Ṡ q̇
    for the same torques mapped by Sᵀ (τ_quat = S⁻ᵀ τ_exp)."""
    joint, ref = ("free3d", "free") if free else ("exp_spherical", "spherical")
    models = []
    for jt in (joint, ref):
        b = mb.ModelBuilder()
        b.add_body("a", joint=jt, mass=1.3, com=(0.2, -0.1, 0.05), inertia=INERTIA)
        b.add_body("c", parent="a", joint="revolute", axis=(0, 1, 0), placement=(np.eye(3), [0.1, 0.2, 0.3]),
                   mass=0.7, com=(0.1, 0, 0.2), inertia=INERTIA)
        models.append(b.build())
    exp_model, quat_model = models
    r = np.random.default_rng(5)
    n = 6 if free else 3
    for scale in (1e-9, 0.3, 2.5):  # the series branch near 0, and large rotations
        q = r.normal(size=exp_model.nq)
        q[:3] *= scale / np.linalg.norm(q[:3])
        v, tau = r.normal(size=exp_model.nv), r.normal(size=exp_model.nv)
        S = np.zeros((6, n))
        motion_subspace_into(exp_model._tree, 1, q, S, 0)
        Sd = np.zeros((6, n))
        subspace_rate_into(exp_model._tree, 1, q, v, Sd, 0)
        Sj = S if free else S[:3]
        Sdj = Sd if free else Sd[:3]
        R = so3.exp(q[:3])
        w, x, y, z = quaternion.from_rotation(R)
        qq = np.r_[(R @ q[3:6]) if free else [], [w, x, y, z], q[n:]]
        vq = np.r_[Sj @ v[:n], v[n:]]
        tq = np.r_[np.linalg.solve(Sj.T, tau[:n]), tau[n:]]
        a_exp = mb.aba(exp_model, q, v, tau)
        a_quat = mb.aba(quat_model, qq, vq, tq)
        assert np.abs(Sj @ a_exp[:n] + Sdj @ v[:n] - a_quat[:n]).max() < 1e-9 * max(1, np.abs(a_quat).max())
        assert np.abs(a_exp[n:] - a_quat[n:]).max() < 1e-9 * max(1, np.abs(a_quat).max())


@pytest.mark.parametrize("name", ["spline", "spline_surface", "exp_spherical", "free3d"])
def test_coriolis_is_the_christoffel_form_of_the_inertia(name):
    """For joints with no chain equivalent: RNEA's velocity term (gravity
    off) equals Lagrange's c = Ṁ q̇ − ½ ∂(q̇ᵀMq̇)/∂q with M from CRBA
    differentiated centrally (error ~h² ≈ 1e-10); M equals Σ_b J_bᵀ M_b J_b
    with each body's twist Jacobian J_b from central differences of its
    world pose (forward kinematics only)."""
    kw = dict(JOINTS[name])
    b = mb.ModelBuilder(gravity=(0, 0, 0))
    b.add_body("a", joint=kw.pop("joint", name), mass=1.3, com=(0.2, -0.1, 0.05), inertia=INERTIA, **kw)
    b.add_body("c", parent="a", joint="revolute", axis=(0, 1, 0), placement=(np.eye(3), [0.1, 0.2, 0.3]),
               mass=0.7, com=(0.1, 0, 0.2), inertia=INERTIA)
    model = b.build()
    r = np.random.default_rng(11)
    q, v = r.uniform(0.1, 0.9, size=model.nq), r.normal(size=model.nv)
    h = 1e-5
    M = mb.crba(model, q)
    Md = (mb.crba(model, q + h * v) - mb.crba(model, q - h * v)) / (2 * h)
    grad = np.array([(v @ mb.crba(model, q + h * e) @ v - v @ mb.crba(model, q - h * e) @ v) / (2 * h)
                     for e in np.eye(model.nv)])
    c = Md @ v - 0.5 * grad
    assert np.abs(mb.rnea(model, q, v, np.zeros(model.nv)) - c).max() < 1e-7 * max(1, np.abs(c).max())
    # M from the bodies' pose derivatives
    poses = lambda x: mb.forward_kinematics(model, x).copy()  # noqa: E731
    Mfd = np.zeros_like(M)
    for body in (1, 2):
        Jb = np.zeros((6, model.nv))
        for k, e in enumerate(np.eye(model.nv)):
            D = np.linalg.inv(poses(q)[body]) @ (poses(q + h * e)[body] - poses(q - h * e)[body]) / (2 * h)
            Jb[:, k] = np.r_[D[2, 1], D[0, 2], D[1, 0], D[:3, 3]]
        m, com = model.body_mass[body], model.body_com[body]
        Mfd += Jb.T @ mcI(m, com, model.body_inertia[body]) @ Jb
    assert np.abs(M - Mfd).max() < 1e-8 * np.abs(M).max()


def test_exponential_chart_change_keeps_the_motion():
    """A free spinning body on exp_spherical: the end-of-step chart change
    keeps |r| ≤ π (Sueda §2.4.8) while the rotation and angular velocity
    follow the quaternion spherical joint's RK4 trajectory (4th order: ~1e-9
    at h = 1e-3 over 2 s), and energy is conserved to the same order."""
    out = {}
    for jt in ("exp_spherical", "spherical"):
        b = mb.ModelBuilder(gravity=(0, 0, 0))
        b.add_body("a", joint=jt, mass=1.0, inertia=INERTIA)
        model = b.build()
        w0 = np.array([3.0, 1.0, 5.0])
        sim = mb.Simulator(model, 1e-3, integrator="rk4", v0=w0)
        tr = sim.rollout(2.0)
        out[jt] = model, tr
    model, tr = out["exp_spherical"]
    assert np.linalg.norm(tr.q[:, :3], axis=1).max() <= np.pi + 1e-12
    assert np.linalg.norm(tr.q[:, :3], axis=1).max() > 3.0  # the chart changed (|r| came near π)
    qm, tq = out["spherical"]
    R_exp = so3.exp(tr.q[-1, :3])
    R_quat = quaternion.to_rotation(tq.q[-1])
    assert np.abs(R_exp - R_quat).max() < 1e-7
    J = np.zeros((6, 3))
    motion_subspace_into(model._tree, 1, tr.q[-1], J, 0)
    assert np.abs(J[:3] @ tr.v[-1] - tq.v[-1]).max() < 1e-6


@pytest.mark.parametrize("integrator", ["semi_implicit_euler", "rk4"])
def test_gimbal_lock_stops_the_simulation_naming_the_joint(integrator):
    """Reached during a simulation (the middle angle of an XZX joint
    turning through 0, |sin q₂| < 1e-4 at the end of step 50, compiled and
    Python steps alike) or present at the start (ABA's singular articulated
    inertia is traced to the joint): a SimulationError naming the joint."""
    b = mb.ModelBuilder(gravity=(0, 0, 0))
    b.add_body("a", joint="euler", joint_name="shoulder", mass=1.0, com=(0, 0, -0.5), inertia=INERTIA)
    model = b.build()
    sim = mb.Simulator(model, 1e-3, integrator=integrator, q0=np.array([0.2, 0.05 + 3e-5, 0.1]),
                       v0=np.array([0.0, -1.0, 0.0]))
    with pytest.raises(SimulationError, match=r"joint 'shoulder' \(euler\) reached gimbal lock at step 50"):
        sim.rollout(0.1)
    sim = mb.Simulator(model, 1e-3, q0=np.array([0.2, 1e-9, 0.1]), v0=np.array([1.0, 0.0, 0.5]))
    with pytest.raises(SimulationError, match=r"joint 'shoulder' \(euler\) is at a singular configuration"):
        sim.step()


def test_bad_input():
    b = mb.ModelBuilder()
    with pytest.raises(ModelError, match="at least 4 control frames"):
        b.add_body("s", joint="spline", control=FRAMES[:3], mass=1.0, inertia=INERTIA)
    with pytest.raises(ModelError, match=r"six 4x4 control matrices"):
        b.add_body("s", joint="spline_surface", control=SURFACE[:5], mass=1.0, inertia=INERTIA)
    with pytest.raises(ModelError, match="needs its control points"):
        b.add_body("s", joint="spline", mass=1.0, inertia=INERTIA)
    with pytest.raises(ModelError, match="composite parts are 1-DoF"):
        b.add_body("s", joint="composite", parts=[("spherical", (1, 0, 0))], mass=1.0, inertia=INERTIA)
    with pytest.raises(ModelError, match="needs its parts"):
        b.add_body("s", joint="composite", mass=1.0, inertia=INERTIA)
    with pytest.raises(ModelError, match="belong to Sueda's"):
        b.add_body("s", joint="revolute", control=FRAMES, mass=1.0, inertia=INERTIA)
    with pytest.raises(ModelError, match="takes no axes"):
        b.add_body("s", joint="free2d", axis=(1, 0, 0), mass=1.0, inertia=INERTIA)
    bad = [F.copy() for F in FRAMES]
    bad[2][0, 0] = np.nan
    with pytest.raises(ModelError, match="finite"):
        b.add_body("s", joint="spline", control=bad, mass=1.0, inertia=INERTIA)


def test_force_element_stiffness_is_refused_on_curved_joints():
    """Elements acting on bodies derive their stiffness from the ordered
    rule of forces/_kin.py, which the exponential and spline joints do not
    follow: a clear error, not a wrong K. On the ordered products (euler)
    K is exact: central differences of τ agree."""
    spring = PointToPointSpring("a", (0.1, 0.2, -0.3), "world", (0.5, -0.4, 0.2), stiffness=10.0, rest_length=0.1)
    model = one_joint("spline")
    with pytest.raises(InputError, match="exact stiffness .* spline joint 'a'"):
        spring.evaluate(model, np.array([0.5]), np.array([0.1]), jacobians=True)
    model = one_joint("euler")
    q, v = np.array([0.3, 0.9, -0.4]), np.array([0.2, -0.5, 0.7])
    _, K, _ = spring.evaluate(model, q, v, jacobians=True)
    fd = np.array([(spring.evaluate(model, q + EPS * e, v)[0] - spring.evaluate(model, q - EPS * e, v)[0]) / (2 * EPS)
                   for e in np.eye(3)]).T
    assert np.abs(K - fd).max() < 1e-7 * max(1, np.abs(K).max())
