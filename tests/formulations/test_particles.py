"""Particles coupled to a rigid model (formulations/particles.py): spring
Jacobians, ArtiSynth's worked values (T2, T4) and the fictitious forces of
§0.19 in closed form, the exact mapped stiffness against central
differences, Sueda's §2.7 map J_MR, the eliminated step against the KKT
step and against an accurate ODE solution."""
import copy

import numpy as np
import pytest
from scipy.integrate import solve_ivp
from scipy.spatial.transform import Rotation

import multibody as mb
from multibody.errors import InputError, ModelError, SimulationError
from multibody.formulations import ParticleSystem
from multibody.formulations.redmax import RedmaxSystem


def hat(a):
    return np.array([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0.0]])


def empty():
    return mb.ModelBuilder("empty").build()


def bar_model(spherical=False):
    """A bar on a revolute joint about x (pivot at the origin), optionally a
    second body on a spherical joint at its end."""
    b = mb.ModelBuilder("bar")
    b.add_body("bar", "world", "revolute", axis=(1, 0, 0), mass=0.5, com=(0.15, 0, -0.05),
               inertia=np.diag([1e-3, 4e-3, 4e-3]))
    if spherical:
        b.add_body("tip", "bar", "spherical", placement=(np.eye(3), np.array([0.3, 0.0, -0.05])), mass=0.3,
                   com=(0.0, 0.05, -0.02), inertia=np.diag([2e-3, 1e-3, 1.5e-3]))
    return b.build()


def cloth_on_bar(n=3, damping=0.3, particle_damping=0.5, model=None):
    model = bar_model() if model is None else model
    ps = ParticleSystem(model, particle_damping=particle_damping)
    idx = ps.add_grid(n, n, (0, 0, -0.05), (0.3 / (n - 1), 0, 0), (0, 0.3 / (n - 1), 0), mass=0.1, stiffness=150,
                      damping=damping, bend_stiffness=20)
    for i in range(n):
        ps.attach(int(idx[i, 0]), "bar")
    return ps, idx


# ---------------------------------------------------------------- springs


@pytest.mark.parametrize("law", ["linear", "green"])
def test_spring_jacobians_against_central_differences(law):
    rng = np.random.default_rng(1)
    ps = ParticleSystem(empty(), gravity=False, particle_damping=0.7)
    for k in range(4):
        ps.add_particle(0.1 + 0.1 * k, rng.standard_normal(3))
    ps.add_springs([0, 0, 1, 2], [1, 2, 3, 3], [10, 20, 30, 40], [0.5, 0.0, 1.5, 0.2], [0.7, 1.1, 0.4, 0.9],
                   law=law)
    x, xd = rng.standard_normal((4, 3)), rng.standard_normal((4, 3))
    f, K, D = ps.particle_jacobians(x, xd)
    K, D = K.toarray(), D.toarray()
    e = 1e-6
    Kfd, Dfd = np.zeros_like(K), np.zeros_like(D)
    for c in range(12):
        dx = np.zeros(12)
        dx[c] = e
        Kfd[:, c] = (ps.spring_forces(x + dx.reshape(4, 3), xd, False)[0]
                     - ps.spring_forces(x - dx.reshape(4, 3), xd, False)[0]) / (2 * e)
        Dfd[:, c] = (ps.spring_forces(x, xd + dx.reshape(4, 3), False)[0]
                     - ps.spring_forces(x, xd - dx.reshape(4, 3), False)[0]) / (2 * e)
    scale = max(1.0, np.abs(K).max())
    assert np.abs(K - Kfd).max() < 1e-6 * scale
    assert np.abs(D - Dfd).max() < 1e-6 * scale
    # translation invariance: each block row of the spring part of K sums to zero over the particles
    assert np.abs(K.reshape(12, 4, 3).sum(axis=1)).max() < 1e-9 * scale


def test_T4_axial_and_stress_forms():
    """Notes T4: x1 = 0, x2 = (2, 0, 0), k = 10, r = 1: f1 = (10, 0, 0) and
    ∂f1/∂x1 = diag(−10, −5, −5); r = 0 gives −kI (§0.13)."""
    ps = ParticleSystem(empty(), gravity=False)
    ps.add_particle(1.0, (0, 0, 0))
    ps.add_particle(1.0, (2, 0, 0))
    ps.add_spring(0, 1, 10.0, rest_length=1.0)
    ps.add_spring(0, 1, 10.0, rest_length=0.0)
    x = np.array([[0, 0, 0], [2.0, 0, 0]])
    f, K, _ = ps.particle_jacobians(x, np.zeros((2, 3)))
    assert np.allclose(f[:3], [10 + 20, 0, 0], atol=1e-12)                 # the r = 0 spring pulls with k l = 20
    assert np.abs(K.toarray()[:3, :3] - (np.diag([-10.0, -5, -5]) - 10 * np.eye(3))).max() < 1e-12
    # Green strain: F = k l (l² − r²)/(2 r²) = 10·2·3/2 = 30, F_l = k(3l² − r²)/(2r²) = 55
    pg = ParticleSystem(empty(), gravity=False)
    pg.add_particle(1.0, (0, 0, 0))
    pg.add_particle(1.0, (2, 0, 0))
    pg.add_spring(0, 1, 10.0, rest_length=1.0, law="green")
    f, K, _ = pg.particle_jacobians(x, np.zeros((2, 3)))
    assert np.allclose(f[:3], [30, 0, 0], atol=1e-12)
    # stress form (§0.13): ∂f1/∂x1 = −(k/r²) Δx Δxᵀ − σ I with σ = F/l = 15
    dx = np.array([2.0, 0, 0])
    assert np.abs(K.toarray()[:3, :3] - (-10 * np.outer(dx, dx) - 15 * np.eye(3))).max() < 1e-12


# ---------------------------------------------------------------- a particle on a free body (T2, §0.19)


def free_body_with_particle(m=0.4, c=(0.2, -0.1, 0.3), gravity=False):
    b = mb.ModelBuilder("free")
    b.add_body("body", "world", "free", mass=1.3, com=(0.05, 0.02, -0.03), inertia=np.diag([0.02, 0.03, 0.04]))
    model = b.build()
    rng = np.random.default_rng(7)
    R = Rotation.from_rotvec(rng.standard_normal(3)).as_matrix()
    p = rng.standard_normal(3)
    quat = Rotation.from_matrix(R).as_quat()           # x, y, z, w
    q = np.concatenate([p, [quat[3], quat[0], quat[1], quat[2]]])
    ps = ParticleSystem(model, gravity=gravity, q=q)
    i = ps.add_particle(m, R @ np.asarray(c) + p)
    ps.attach(i, "body")
    return ps, model, q, R, np.asarray(c, dtype=float), m


def test_T2_point_mass_on_a_body_and_fictitious_forces():
    """M' − M is the spatial inertia of the point mass (C1 with J = 0), and the
    added force is ArtiSynth's fictitious wrench (§0.19, closed form) plus the
    transport term of our velocity variable (v̇ in body axes, a = v̇ + ω × v)."""
    ps, model, q, R, c, m = free_body_with_particle()
    rng = np.random.default_rng(3)
    for v in (np.concatenate([rng.standard_normal(3), np.zeros(3)]), rng.standard_normal(6)):
        Mr, fr = ps.reduced_dynamics(q, v)
        M = mb.crba(model, q)
        f_body = -mb.rnea(model, q, v, np.zeros(6), gravity=False)
        Mpt = np.block([[-m * hat(c) @ hat(c), m * hat(c)], [-m * hat(c), m * np.eye(3)]])
        assert np.abs(Mr - M - Mpt).max() < 1e-12
        w, vl = v[:3], v[3:]
        lin = -m * np.cross(w, np.cross(w, c))                          # ArtiSynth: −m ω×ω×c
        ang = m * np.cross(w, np.cross(c, np.cross(c, w)))              # ArtiSynth: m ω×c×c×ω
        transport = Mpt @ np.concatenate([np.zeros(3), np.cross(w, vl)])
        fict = np.concatenate([ang, lin]) - transport
        assert np.abs(fr - f_body - fict).max() < 1e-12
    # and the same dynamics as one rigid body with the point mass merged into it (gravity on)
    ps, model, q, R, c, m = free_body_with_particle(gravity=True)
    mb_, cb, Ib = 1.3, np.array([0.05, 0.02, -0.03]), np.diag([0.02, 0.03, 0.04])
    mt = mb_ + m
    ct = (mb_ * cb + m * c) / mt
    Io = Ib + mb_ * (cb @ cb * np.eye(3) - np.outer(cb, cb)) + m * (c @ c * np.eye(3) - np.outer(c, c))
    Ic = Io - mt * (ct @ ct * np.eye(3) - np.outer(ct, ct))
    b = mb.ModelBuilder("merged")
    b.add_body("body", "world", "free", mass=mt, com=ct, inertia=Ic)
    merged = b.build()
    v = rng.standard_normal(6)
    Mr, fr = ps.reduced_dynamics(q, v)
    assert np.abs(Mr - mb.crba(merged, q)).max() < 1e-12
    assert np.abs(fr + mb.rnea(merged, q, v, np.zeros(6))).max() < 1e-12
    assert np.abs(np.linalg.solve(Mr, fr) - mb.aba(merged, q, v, np.zeros(6))).max() < 1e-10


def test_particle_on_a_spinning_body_newton_euler():
    """§0.19: the attached particle's world acceleration is P ż + Ṗ z =
    R(a + ω̇ × c + ω × (ω × c)) for random (ω, v, ω̇, v̇) (T2's Newton–Euler
    identity); the reduced force of the particle is what it needs, m ẍ."""
    ps, model, q, R, c, m = free_body_with_particle()
    rng = np.random.default_rng(11)
    v, vdot = rng.standard_normal(6), rng.standard_normal(6)
    S = ps._structure()
    kin = ps._kinematics(S, q, v, 0.0, ps._xf, ps._xdf)
    xdd = kin.Ppt @ vdot + kin.abias
    w, vl, wd, vd = v[:3], v[3:], vdot[:3], vdot[3:]
    a = vd + np.cross(w, vl)
    assert np.abs(xdd - R @ (a + np.cross(wd, c) + np.cross(w, np.cross(w, c)))).max() < 1e-12
    # the reduced dynamics with the particle = body dynamics + Pᵀ(m ẍ) at any v̇
    Mr, fr = ps.reduced_dynamics(q, v)
    M = mb.crba(model, q)
    f_body = -mb.rnea(model, q, v, np.zeros(6), gravity=False)
    lhs = Mr @ vdot - fr
    rhs = M @ vdot - f_body + kin.Ppt.T @ (m * xdd)
    assert np.abs(lhs - rhs).max() < 1e-12


# ---------------------------------------------------------------- exact stiffness of the reduced forces


def mixed_system():
    model = bar_model(spherical=True)
    rng = np.random.default_rng(5)
    q = model.integrate(model.neutral(), rng.standard_normal(model.nv) * 0.4)
    v = rng.standard_normal(model.nv)
    ps = ParticleSystem(model, particle_damping=0.3, q=q, v=v)
    a = ps.add_particle(0.05, (0.1, 0.05, -0.2))
    b = ps.add_particle(0.07, (0.35, 0.1, -0.1))
    c = ps.add_particle(0.04, (0.2, 0.3, -0.3), velocity=rng.standard_normal(3))
    d = ps.add_particle(0.06, (0.4, 0.3, -0.2), velocity=rng.standard_normal(3))
    e = ps.add_particle(0.03, (0.25, 0.2, -0.25))
    f = ps.add_particle(0.02, (0.0, 0.4, -0.1))
    ps.attach(a, "bar", (0.1, 0.05, -0.1))
    ps.attach(b, "tip", (0.05, 0.1, 0.02))
    ps.attach(e, [(b, 0.6), (c, 0.4)])                     # chained: on a body particle and a free one
    ps.prescribe(f, lambda t: np.array([0.0, 0.4 + 0.1 * np.sin(3 * t), -0.1]),
                 lambda t: np.array([0.0, 0.3 * np.cos(3 * t), 0.0]))
    ps.add_springs([a, a, b, c, e, f, c], [b, c, d, d, d, c, e], [40, 30, 50, 20, 35, 25, 15],
                   [0.4, 0.2, 0.0, 0.3, 0.5, 0.2, 0.1], [0.2, 0.25, 0.3, 0.2, 0.15, 0.3, 0.1])
    ps.add_spring(a, d, 10.0, 0.2, 0.3, law="green")
    ps.t = 0.37
    return ps


def test_reduced_stiffness_and_damping_against_central_differences():
    """K' = ∂(Pᵀf)/∂y (with the attachments' geometric term and the change of
    the attached velocities with q) and D' = ∂(Pᵀf)/∂z, y = (q, x_free)
    perturbed along model.integrate, on a revolute + spherical chain with
    particles on both bodies, a chained particle and a prescribed one."""
    ps = mixed_system()
    model = ps.model
    q, v, xf, xdf, t = ps.get_state()
    f0, K, D = ps.applied_forces(q, v, xf, xdf, t, jacobians=True)
    assert np.abs(f0 - ps.applied_forces(q, v, xf, xdf, t)).max() < 1e-13
    nv, nf = model.nv, len(xf)
    nz = nv + 3 * nf
    e = 1e-6
    Kfd, Dfd = np.zeros((nz, nz)), np.zeros((nz, nz))
    for l in range(nz):
        d = np.zeros(nz)
        d[l] = e

        def at(s):
            qs = model.integrate(q, s * d[:nv])
            return ps.applied_forces(qs, v, xf + s * d[nv:].reshape(nf, 3), xdf, t)

        def atv(s):
            return ps.applied_forces(q, v + s * d[:nv], xf, xdf + s * d[nv:].reshape(nf, 3), t)
        Kfd[:, l] = (at(1) - at(-1)) / (2 * e)
        Dfd[:, l] = (atv(1) - atv(-1)) / (2 * e)
    scale = max(1.0, np.abs(K).max(), np.abs(f0).max())
    assert np.abs(K - Kfd).max() < 1e-6 * scale
    assert np.abs(D - Dfd).max() < 1e-6 * scale
    assert np.abs(K[:nv, :nv]).max() > 1e-2          # the geometric terms are there


# ---------------------------------------------------------------- Sueda §2.7


def test_sueda_J_MR_is_our_map():
    """Sueda eq. 2.89–2.92 with the corrected middle block of J̇_MR
    (J̇_am J_mr + J_am J̇_mr, notes item 35): M_R and f_R equal our PᵀMP and
    Pᵀ(f − MṖz); the printed block (J_am J_mr + J_am J̇_mr) does not."""
    model = bar_model(spherical=True)
    rng = np.random.default_rng(2)
    q = model.integrate(model.neutral(), rng.standard_normal(model.nv) * 0.5)
    v = rng.standard_normal(model.nv) * 2
    ps = ParticleSystem(model, q=q, v=v)
    a = ps.add_particle(0.05, (0.1, 0.05, -0.2))
    b = ps.add_particle(0.07, (0.35, 0.1, -0.1))
    c = ps.add_particle(0.04, (0.2, 0.3, -0.3), velocity=rng.standard_normal(3))
    d = ps.add_particle(0.06, (0.4, 0.3, -0.2), velocity=rng.standard_normal(3))
    ps.attach(a, "bar")
    ps.attach(b, "tip")
    ps.add_springs([a, b, c], [c, d, d], [30, 40, 50], 0.0, [0.2, 0.3, 0.2], law="green")
    Mr, fr = ps.reduced_dynamics()
    # Sueda's maximal quantities
    rs = RedmaxSystem(model)
    J, Jd = rs.jacobian(q), rs.jacobian_dot(q, v)
    Mm, fm = rs.maximal_mass_matrix(), rs.maximal_forces(q, v).ravel()
    oMi = mb.forward_kinematics(model, q)
    S = ps._structure()
    kin = ps._kinematics(S, q, v, 0.0, ps._xf, ps._xdf)
    nb, nv, na, nf = model.nbodies - 1, model.nv, 2, 2
    Jam, Jamd = np.zeros((3 * na, 6 * nb)), np.zeros((3 * na, 6 * nb))
    phi = (J @ v).reshape(nb, 6)
    for r, body in enumerate((1, 2)):
        Rb = oMi[body][:3, :3]
        xb = S.points[r]                                # body coordinates
        Gam = np.hstack([-hat(xb), np.eye(3)])          # material Jacobian Γ (angular first)
        Jam[3 * r:3 * r + 3, 6 * (body - 1):6 * body] = Rb @ Gam
        Jamd[3 * r:3 * r + 3, 6 * (body - 1):6 * body] = Rb @ hat(phi[body - 1][:3]) @ Gam
    Z = np.zeros
    JMR = np.block([[J, Z((6 * nb, 3 * nf))], [Jam @ J, Z((3 * na, 3 * nf))], [Z((3 * nf, nv)), np.eye(3 * nf)]])
    mid = Jamd @ J + Jam @ Jd
    JMRd = np.block([[Jd, Z((6 * nb, 3 * nf))], [mid, Z((3 * na, 3 * nf))], [Z((3 * nf, 3 * nf + nv))]])
    masses = np.array([0.05, 0.07, 0.04, 0.06])
    MM = np.zeros((6 * nb + 12, 6 * nb + 12))
    MM[:6 * nb, :6 * nb] = Mm
    MM[6 * nb:, 6 * nb:] = np.diag(np.repeat(masses, 3))
    fp, _ = ps.spring_forces(kin.x, kin.xd, False)     # gravity + springs on a, b, c, d (this order)
    fM = np.concatenate([fm, fp])
    qR = np.concatenate([v, ps._xdf.ravel()])
    MR = JMR.T @ MM @ JMR
    fR = JMR.T @ (fM - MM @ JMRd @ qR)
    assert np.abs(MR - Mr).max() < 1e-12
    assert np.abs(fR - fr).max() < 1e-10 * max(1.0, np.abs(fr).max())
    # the printed middle block J_am J_mr + J_am J̇_mr is dimensionally a velocity map, not its rate
    JMRd_printed = JMRd.copy()
    JMRd_printed[6 * nb:6 * nb + 3 * na, :nv] = Jam @ J + Jam @ Jd
    fR_printed = JMR.T @ (fM - MM @ JMRd_printed @ qR)
    assert np.abs(fR_printed - fr).max() > 1e-3


# ---------------------------------------------------------------- the step


@pytest.mark.parametrize("method,stiffness", [("implicit", "definite"), ("implicit", "exact"),
                                              ("semi_implicit", "definite")])
def test_eliminated_step_equals_kkt_step(method, stiffness):
    """A small cloth on a swinging bar, a particle attached by weights to two
    cloth particles and a prescribed particle: the eliminated step and the
    KKT step with the attachment rows give the same trajectory (1e-9) over
    many steps, and the same driving force of the prescribed particle."""
    ps, idx = cloth_on_bar(3)
    extra = ps.add_particle(0.01, (0.1, 0.2, -0.1))
    ps.attach(extra, [(int(idx[1, 1]), 0.5), (int(idx[2, 2]), 0.5)])
    drv = ps.add_particle(0.02, (0.15, 0.45, -0.05))
    ps.prescribe(drv, lambda t: np.array([0.15 + 0.05 * np.sin(4 * t), 0.45, -0.05]))
    ps.add_spring(drv, int(idx[1, 2]), 60.0, 0.2)
    ps.add_spring(extra, int(idx[0, 2]), 40.0, 0.1)
    ps.v = np.array([2.0])
    a, b = copy.deepcopy(ps), copy.deepcopy(ps)
    h = 5e-3 if method == "implicit" else 1e-3
    for _ in range(150):
        a.step(h, method, stiffness=stiffness)
        b.step(h, method, attachments="kkt", stiffness=stiffness)
        assert np.abs(a.last["prescribed_force"] - b.last["prescribed_force"]).max() < 1e-8
    assert np.abs(a.positions() - b.positions()).max() < 1e-9
    assert np.abs(a.q - b.q).max() < 1e-9 and np.abs(a.v - b.v).max() < 1e-9
    assert abs(a.q[0]) > 0.05                                       # it swung
    assert np.allclose(a.positions()[drv], [0.15 + 0.05 * np.sin(4 * a.t), 0.45, -0.05], atol=1e-12)


def test_step_converges_to_the_ode():
    """Implicit and semi-implicit Euler converge at first order to an accurate
    solution (DOP853) of M' ż = Pᵀ(f − MṖz) on the bar with a 2×2 cloth:
    the fictitious forces and the whole reduction in motion."""
    ps, _ = cloth_on_bar(2, damping=0.1, particle_damping=0.2)
    ps.v = np.array([3.0])
    q0, v0, xf0, xdf0, _ = ps.get_state()
    nf = len(xf0)

    def rhs(t, y):
        q, xf, v, xdf = y[:1], y[1:1 + 3 * nf], y[1 + 3 * nf:2 + 3 * nf], y[2 + 3 * nf:]
        Mr, fr = ps.reduced_dynamics(q, v, xf, xdf, t)
        return np.concatenate([v, xdf, np.linalg.solve(Mr, fr)])

    T = 0.2
    y0 = np.concatenate([q0, xf0.ravel(), v0, xdf0.ravel()])
    ref = solve_ivp(rhs, (0, T), y0, method="DOP853", rtol=1e-11, atol=1e-12).y[:, -1]
    for method in ("implicit", "semi_implicit"):
        errs = []
        for h in (2e-3, 1e-3):
            s = copy.deepcopy(ps)
            s.rollout(T, h, method, stiffness="exact")
            errs.append(max(abs(s.q[0] - ref[0]), np.abs(s._xf.ravel() - ref[1:1 + 3 * nf]).max()))
        print(method, errs)
        assert errs[1] < 5e-3
        assert 1.6 < errs[0] / errs[1] < 2.5, (method, errs)


def test_fixed_and_world_attached_particles_and_rollout_shapes():
    ps = ParticleSystem(empty(), particle_damping=2.0)
    a = ps.add_particle(0.1, (0, 0, 0))
    b = ps.add_particle(0.1, (0.2, 0, 0))
    c = ps.add_particle(0.1, (0.1, 0, -0.1))
    ps.fix(a)
    ps.attach(b, "world")
    ps.add_springs([a, b], [c, c], 50.0, 0.5)
    tr = ps.rollout(0.5, 0.01)
    assert tr.x.shape == (51, 3, 3) and tr.q.shape == (51, 0) and tr.t[-1] == pytest.approx(0.5)
    assert np.abs(tr.x[:, a] - [0, 0, 0]).max() == 0 and np.abs(tr.x[:, b] - [0.2, 0, 0]).max() == 0
    assert tr.x[-1, c, 2] < -0.1                     # it sagged


def test_errors_name_the_particle():
    ps = ParticleSystem(bar_model())
    a = ps.add_particle(0.1, (0, 0, 0))
    b = ps.add_particle(0.1, (0.1, 0, 0))
    with pytest.raises(ModelError, match="mass"):
        ps.add_particle(-1.0, (0, 0, 0))
    with pytest.raises(ModelError, match="no frame 'nope'"):
        ps.attach(a, "nope")
    with pytest.raises(ModelError, match="itself"):
        ps.attach(a, [(a, 1.0)])
    ps.attach(a, "bar")
    with pytest.raises(ModelError, match="particle 0 is already attached"):
        ps.fix(a)
    with pytest.raises(ModelError, match="unknown spring law"):
        ps.add_spring(a, b, 1.0, law="cubic")
    with pytest.raises(ModelError, match="two different particles"):
        ps.add_spring(b, b, 1.0)
    with pytest.raises(InputError, match="time step"):
        ps.step(-1.0)
    ps.add_particle(0.1, (0.1, 0, 0), name="twin")
    ps.add_spring(b, 2, 1.0, rest_length=0.1)
    with pytest.raises(SimulationError, match="particle 1 and particle 2 \\('twin'\\)"):
        ps.step(0.01)


def test_iterative_solver_matches_direct():
    ps, _ = cloth_on_bar(3)
    ps.v = np.array([1.0])
    a, b = copy.deepcopy(ps), copy.deepcopy(ps)
    for _ in range(20):
        a.step(0.01)
        b.step(0.01, solver="iterative")
    assert np.abs(a.positions() - b.positions()).max() < 1e-9


def test_joint_forces_act_on_the_model():
    """τ on the bar's joint: with no particles, one step is the bar's own
    semi-implicit Euler step v⁺ = v + h M⁻¹(τ − C)."""
    model = bar_model()
    ps = ParticleSystem(model, gravity=False)
    ps.step(0.01, method="semi_implicit", tau=np.array([0.3]))
    assert abs(ps.v[0] - 0.01 * 0.3 / mb.crba(model, model.neutral())[0, 0]) < 1e-14


@pytest.mark.parametrize("method", ["implicit", "semi_implicit"])
def test_cholesky_step_equals_lu_and_kkt_on_a_spherical_chain(method):
    """The default direct solve (sparse Cholesky of the free particles'
    block, the model's DoFs by their Schur complement) against SuperLU on
    the whole reduced matrix (``solver="lu"``) and the KKT step with the
    attachment rows: a revolute + spherical chain whose block of the step
    matrix is not symmetric (the stiffness of gravity and of the attached
    particles' forces on the spherical joint), particles on both bodies, a
    particle chained on a body particle and a free one, a prescribed one."""
    ps = mixed_system()
    sysA = ps._assemble(5e-3, True, definite=True)
    Arr = sysA[2]
    assert np.abs(Arr - Arr.T).max() > 1e-8          # the model's block is not symmetric here
    App = sysA[3]
    assert abs(App - App.T).max() == 0.0             # the particles' block is, exactly
    a, b, c = copy.deepcopy(ps), copy.deepcopy(ps), copy.deepcopy(ps)
    h = 5e-3 if method == "implicit" else 1e-3
    for _ in range(100):
        a.step(h, method)
        b.step(h, method, solver="lu")
        c.step(h, method, attachments="kkt")
        assert np.abs(a.last["prescribed_force"] - b.last["prescribed_force"]).max() < 1e-8
    for other in (b, c):
        assert np.abs(a.positions() - other.positions()).max() < 1e-9
        assert np.abs(a.velocities() - other.velocities()).max() < 1e-9
        assert np.abs(a.q - other.q).max() < 1e-9 and np.abs(a.v - other.v).max() < 1e-9


def test_cholesky_reports_a_non_finite_state():
    ps, idx = cloth_on_bar(3)
    ps.step(0.01)
    xdf = ps.get_state()[3]
    xdf[2, 1] = np.nan
    ps.set_state(xd_free=np.where(np.isfinite(xdf), xdf, 0.0))
    ps._xdf[2, 1] = np.nan                          # set_state refuses it; a diverged state has it
    with pytest.raises(mb.SimulationError, match="not positive definite at particle"):
        ps.step(0.01)


def test_definite_green_stiffness_is_negative_semidefinite_under_compression():
    """The definite K of a Green-strain spring compressed below r/√3 (where
    its exact axial stiffness changes sign) and of a compressed linear one:
    symmetric, eigenvalues ≤ 0 (numpy); the exact K has a positive one."""
    for law, length in (("green", 0.4), ("linear", 0.4)):
        ps = ParticleSystem(empty(), gravity=False)
        a = ps.add_particle(0.1, (0, 0, 0))
        b = ps.add_particle(0.1, (length, 0.1 * length, 0))
        ps.add_spring(a, b, 50.0, 0.3, rest_length=1.0, law=law)
        x = ps.positions()
        xd = np.array([[0.0, 0.1, 0.0], [0.2, -0.1, 0.3]])
        Kd = ps.particle_jacobians(x, xd)[1].toarray()
        S = ps._structure()
        _, (Kv, _) = ps.spring_forces(x, xd, definite=True)
        Kdef = ps._csr(S, Kv, np.zeros(6)).toarray()
        assert np.abs(Kdef - Kdef.T).max() == 0.0
        assert np.linalg.eigvalsh(Kdef).max() < 1e-12
        assert np.linalg.eigvals(Kd).real.max() > 1.0


def test_failed_cholesky_falls_back_to_lu(monkeypatch):
    """A non-positive pivot on finite data (not expected for the definite
    block) hands the step to LU: the same step as solver='lu'."""
    ps, _ = cloth_on_bar(3)
    ps.v = np.array([1.0])
    a, b = copy.deepcopy(ps), copy.deepcopy(ps)
    ch, _ = a._free_block(a._structure(), False)
    monkeypatch.setattr(type(ch), "factor", lambda self, data: 0)
    a.step(0.01)
    b.step(0.01, solver="lu")
    assert np.abs(a.positions() - b.positions()).max() == 0.0 and a.v[0] == b.v[0]
