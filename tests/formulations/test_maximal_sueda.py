"""Maximal coordinates with Sueda's joint library (formulations/maximal.py,
Sueda §1.6–1.12 with the joints of §2.4): the rows of every joint whose
motion subspace turns with its coordinates are formed at the coordinates
recovered from the relative pose, with ``+NᵀṠq̇`` in the acceleration rows.

Oracles: the reduced articulated-body algorithm ``mb.aba`` (held to
Pinocchio in tests/dynamics; Sueda's joints to chains of verified joints
and to the Christoffel form in tests/model/test_sueda_joints.py), the
round trip ``coordinates(state(q, v)) = (q, v)`` (``state`` is forward
kinematics), Davenport's closed form of the Euler angles' principal range,
and ``mb.Simulator``'s RK4 on the reduced equations."""
import numpy as np
import pytest

import multibody as mb
from multibody.errors import InputError
from multibody.formulations.maximal import MaximalSystem
from multibody.spatial import se3
from oracles import random_inertia, random_pose

SUEDA = ("exp_spherical", "free3d", "euler", "free2d", "composite", "spline", "spline_surface")


def _unit(rng):
    a = rng.normal(size=3)
    return a / np.linalg.norm(a)


def _kwargs(jt, rng):
    """Random parameters of one of Sueda's joints: general Euler axes (the
    middle one ⟂ the first, so that they reach every rotation), composite
    parts (revolute, prismatic, helical), 5 or 6 spline control frames,
    surface controls."""
    if jt == "euler":
        a1 = _unit(rng)
        a2 = np.cross(a1, _unit(rng))
        return dict(axis=a1, axis2=a2 / np.linalg.norm(a2), axis3=_unit(rng))
    if jt == "composite":
        return dict(parts=[("revolute", _unit(rng)), [("prismatic", _unit(rng)),
                                                      ("helical", _unit(rng), rng.uniform(-0.2, 0.2))]])
    if jt == "spline":
        return dict(control=[se3.exp(rng.normal(size=6) * 0.4) for _ in range(int(rng.integers(5, 7)))])
    if jt == "spline_surface":
        return dict(control=rng.normal(size=(6, 4, 4)) * 0.3)
    return {}


def sueda_tree(seed, floating, extra=("revolute", "universal", "spherical")):
    """A random branched tree with every Sueda joint twice (the XZX default
    Euler joint and one with random axes) and some joints of the rest of
    the catalog; a free base or a fixed one."""
    rng = np.random.default_rng(seed)
    b = mb.ModelBuilder(f"sueda{seed}")
    names = []
    if floating:
        m, c, I = random_inertia(rng)
        b.add_body("base", "world", "free", mass=m, com=c, inertia=I)
        names.append("base")
    for k, jt in enumerate(SUEDA + SUEDA + tuple(extra)):
        parent = names[rng.integers(len(names))] if names else "world"
        m, c, I = random_inertia(rng)
        kw = {} if (jt == "euler" and k < len(SUEDA)) else _kwargs(jt, rng)
        if jt in ("revolute", "universal"):
            kw["axis"] = _unit(rng)
        b.add_body(f"b{k}", parent, jt, placement=random_pose(rng), mass=m, com=c, inertia=I, joint_name=f"j{k}",
                   **kw)
        names.append(f"b{k}")
    return b.build()


def _euler_axes(model, j):
    """The three axes of Euler joint j, read from its factor twists in the
    model table (sueda_joints' layout)."""
    from multibody.model import sueda_joints as sj
    from multibody.model.joints import C_EXTRA
    row = model.tree[j.child]
    return [row[C_EXTRA + 1 + sj.FACTOR_WIDTH * k + sj.F_TWIST:][:3] for k in range(3)]


def _phase(model, j):
    a1, a2, a3 = _euler_axes(model, j)
    return np.arctan2(a1 @ np.cross(a2, a3), a1 @ a3 - (a1 @ a2) * (a2 @ a3))


def sample(model, rng, far=False):
    """A configuration on the branches :meth:`MaximalSystem.coordinates`
    returns without ``near`` (rotation vectors |r| < π, Euler angles in
    (−π, π] with q₂ − φ ∈ (0, π), composite and free2d angles in (−π, π]),
    away from the joints' singular configurations; ``far``: on other
    branches (|r| ∈ (π, 2π), the second Euler solution, angles beyond ±π)."""
    q = np.zeros(model.nq)
    for j in model.joints[1:]:
        s = j.q_slice
        if j.type in ("exp_spherical", "free3d"):
            u = _unit(rng)
            q[s.start:s.start + 3] = u * (rng.uniform(3.4, 5.5) if far else rng.uniform(0.1, 2.9))
            if j.type == "free3d":
                q[s.start + 3:s.stop] = rng.normal(size=3)
        elif j.type == "euler":
            phi = _phase(model, j)
            q[s] = rng.uniform(-2.9, 2.9, 3)
            q2 = phi + rng.uniform(0.3, np.pi - 0.3) * (-1 if far else 1)
            q[s.start + 1] = np.arctan2(np.sin(q2), np.cos(q2))
            if far:
                q[s] += 2 * np.pi * rng.choice([-1, 1], 3)
        elif j.type == "free2d":
            q[s] = np.r_[rng.normal(size=2), rng.uniform(-2.9, 2.9) + (2 * np.pi if far else 0.0)]
        elif j.type == "composite":  # revolute angle, slide, helical angle (not periodic)
            q[s] = np.r_[rng.uniform(-2.9, 2.9) + (2 * np.pi if far else 0.0), rng.normal(size=2)]
        elif j.type == "spline":
            q[s] = rng.uniform(0.2, model.upper_limit[s][0] - 0.2)
        elif j.type == "spline_surface":
            q[s] = rng.uniform(0.1, 0.9, 2)
        elif j.type == "free":
            q[s] = np.r_[rng.normal(size=3), mb.spatial.quaternion.from_rotation(se3.exp(rng.normal(size=6))[:3, :3])]
            if q[s.start + 3] < 0:
                q[s.start + 3:s.stop] *= -1
        elif j.type == "spherical":
            w = mb.spatial.quaternion.from_rotation(se3.exp(rng.normal(size=6))[:3, :3])
            q[s] = w * np.sign(w[0])
        else:  # revolute, universal
            q[s] = rng.uniform(-2.9, 2.9, j.nq)
    return q


def _agree(model, seed, near):
    system = MaximalSystem(model)
    rng = np.random.default_rng(seed)
    q = sample(model, rng, far=near)
    v, tau = rng.normal(size=model.nv), rng.normal(size=model.nv)
    C, V = system.state(q, v)
    Vd, _ = system.acceleration(C, V, tau, near=q if near else None)
    ref = system.body_accelerations(q, v, mb.aba(model, q, v, tau))
    return np.abs(Vd - ref).max() / max(1.0, np.abs(ref).max())


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("floating", [True, False])
def test_accelerations_equal_aba_on_random_trees(seed, floating):
    """Every Sueda joint (twice: XZX and general Euler axes, random
    composites, splines of 2 and 3 segments) with revolute, universal and
    spherical joints, on a free or fixed base: V̇ from the KKT system equals
    the body accelerations of ``mb.aba`` to 1e-10 of the largest one."""
    model = sueda_tree(seed, floating)
    assert _agree(model, seed, near=False) < 1e-10


@pytest.mark.parametrize("seed", range(2))
def test_joint_forces_follow_the_branch_of_near(seed):
    """On other branches (rotation vectors beyond π, the second Euler
    solution) the joint forces, generalized forces of those coordinates,
    act through that chart's S when ``near`` names it: V̇ equals ``mb.aba``
    at that q. (Without forces the branch does not matter: V̇ equals the
    reduced accelerations in either chart, within the round-off by which
    ABA's two charts of the same motion differ from each other — with
    cond(M) ~1e6 this tree is at ~3e-10 relative, above a fixed 1e-10.)"""
    model = sueda_tree(seed, floating=True)
    assert _agree(model, seed, near=True) < 1e-10
    system = MaximalSystem(model)
    rng = np.random.default_rng(seed)
    q, v = sample(model, rng, far=True), rng.normal(size=model.nv)
    C, V = system.state(q, v)
    Vd, _ = system.acceleration(C, V, np.zeros(model.nv))
    ref = system.body_accelerations(q, v, mb.aba(model, q, v, np.zeros(model.nv)))
    qd, vd = system.coordinates(C, V)  # the default chart, the one the rows use without near
    ref_default = system.body_accelerations(qd, vd, mb.aba(model, qd, vd, np.zeros(model.nv)))
    spread = np.abs(ref_default - ref).max()  # ABA's own round-off across the two charts
    tol = max(1e-10 * max(1.0, np.abs(ref).max()), 2.0 * spread)
    assert np.abs(Vd - ref).max() < tol and np.abs(Vd - ref_default).max() < tol


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("frames", ["body", "com"])
def test_coordinates_invert_state(seed, frames):
    """``coordinates(*state(q, v)) == (q, v)`` to 1e-10 for every joint:
    without ``near`` on the principal branches, with ``near`` on far ones
    (and the iterative solves start from ``near`` then)."""
    model = sueda_tree(seed, floating=seed % 2 == 0)
    system = MaximalSystem(model, frames=frames)
    rng = np.random.default_rng(10 + seed)
    for far in (False, True):
        q, v = sample(model, rng, far=far), rng.normal(size=model.nv)
        q2, v2 = system.coordinates(*system.state(q, v), near=q if far else None)
        assert np.abs(q2 - q).max() < 1e-10 and np.abs(v2 - v).max() < 1e-10, (far, np.abs(q2 - q), np.abs(v2 - v))
    # near a little off the answer: it picks the branch and starts the solves, the answer is the pose's
    q, v = sample(model, rng, far=True), rng.normal(size=model.nv)
    near = q + 0.3 * rng.uniform(-1, 1, model.nq)
    for j in model.joints[1:]:
        if j.type in ("free", "spherical"):  # (near must hold unit quaternions)
            near[j.q_slice] = q[j.q_slice]
    q2, _ = system.coordinates(*system.state(q, v), near=near)
    assert np.abs(q2 - q).max() < 1e-10
    assert np.abs(system.position_errors(system.state(q, v)[0])).max() < 1e-12


def test_rows_of_the_varying_joints():
    """Each Sueda joint keeps 6 − n rows (free3d none), orthonormal and
    doing no work on S at the recovered coordinates."""
    model = sueda_tree(0, floating=False, extra=())
    system = MaximalSystem(model)
    assert [int(d) for d in np.diff(system.row_offsets)] == [6 - j.nv for j in model.joints[1:]]
    C, _ = system.state(sample(model, np.random.default_rng(1)), np.zeros(model.nv))
    for k, (N, S, _, _) in system._varying(C).items():
        assert N.shape == (6, 6 - S.shape[1]) and np.allclose(N.T @ N, np.eye(N.shape[1]))
        assert np.abs(N.T @ S).max(initial=0.0) < 1e-13


def _chain():
    """World —euler (XZX)— a —spline (3 segments)— b —revolute— c."""
    rng = np.random.default_rng(4)
    frames = [se3.exp(np.r_[0.3 * rng.normal(size=3), 0.2 + 0.1 * rng.normal(size=3)]) for _ in range(6)]
    b = mb.ModelBuilder("euler_spline")
    b.add_body("a", "world", "euler", mass=1.5, com=(0.1, 0.05, -0.3), inertia=np.diag([0.05, 0.04, 0.03]))
    b.add_body("b", "a", "spline", placement=(np.eye(3), (0, 0, -0.6)), control=frames, mass=0.8,
               com=(0.05, 0.0, -0.1), inertia=np.diag([0.01, 0.02, 0.015]))
    b.add_body("c", "b", "revolute", axis=(0, 1, 0), placement=(np.eye(3), (0.2, 0, -0.2)), mass=0.5,
               com=(0.1, 0, 0), inertia=np.diag([0.004, 0.005, 0.006]))
    return b.build()


def test_post_stabilized_step_keeps_the_joints():
    """500 steps of h = 2 ms on the euler–spline chain: post-stabilization
    keeps every joint on its manifold at round-off (g ≤ 1e-10; the Euler
    joint's point held; the poses equal forward kinematics of their own
    coordinates, and, with the velocities projected, the twists that of
    their own joint velocities)."""
    model = _chain()
    system = MaximalSystem(model)
    q0, v0 = np.array([0.4, 1.1, -0.3, 1.2, 0.3]), np.array([0.5, -0.8, 1.0, 0.6, -1.0])
    C, V = system.state(q0, v0)
    tau = np.zeros(model.nv)
    q = q0
    for _ in range(500):
        C, V = system.step(C, V, tau, 2e-3, project_velocities=True)
        q, v = system.coordinates(C, V, near=q)
        assert 0.0 < q[3] < 3.0  # on the spline's range
    assert np.abs(system.position_errors(C)).max() < 1e-10
    assert system.joint_errors(C)[0] < 1e-10
    Cq, Vq = system.state(q, v)
    assert np.abs(Cq - C).max() < 1e-10 and np.abs(Vq - V).max() < 1e-10


def test_step_converges_at_first_order_to_rk4():
    """The velocity-level step (post-stabilized) on the euler–spline chain
    against ``mb.Simulator``'s RK4 at dt = 1e-4 over 0.1 s (error ~1e-14):
    the endpoint error halves with h (ratios 1.8–2.2)."""
    model = _chain()
    q0, v0 = np.array([0.4, 1.1, -0.3, 1.2, 0.3]), np.array([0.5, -0.8, 1.0, 0.6, -1.0])
    sim = mb.Simulator(model, 1e-4, integrator="rk4", q0=q0, v0=v0)
    tr = sim.rollout(0.1, progress=False)
    assert abs(tr.t[-1] - 0.1) < 1e-12
    system = MaximalSystem(model)
    CT, VT = system.state(tr.q[-1], tr.v[-1])
    errs = []
    for h in (2e-3, 1e-3, 5e-4):
        C, V = system.state(q0, v0)
        for _ in range(int(round(0.1 / h))):
            C, V = system.step(C, V, np.zeros(model.nv), h)
        errs.append(max(np.abs(C - CT).max(), np.abs(V - VT).max()))
    r1, r2 = errs[0] / errs[1], errs[1] / errs[2]
    assert 1.8 < r1 < 2.2 and 1.8 < r2 < 2.2, (errs, r1, r2)


def test_bad_input_is_refused_naming_the_joint():
    """A pose off a spline's curve (the child moved 5 cm off it) and off a
    spline surface; an Euler joint at its gimbal lock (S loses rank: no
    rows there)."""
    model = _chain()
    system = MaximalSystem(model)
    q, v = np.array([0.4, 1.1, -0.3, 1.2, 0.3]), np.zeros(model.nv)
    C, V = system.state(q, v)
    C[1, :3, 3] += (0.05, 0.0, 0.0)
    with pytest.raises(InputError, match=r"joint 'b' \(spline\) were not found: the pose is not on the joint's"):
        system.coordinates(C, V)
    with pytest.raises(InputError, match=r"joint 'b' \(spline\)"):
        system.acceleration(C, V, np.zeros(model.nv))
    with pytest.raises(InputError, match=r"joint 'a' \(euler\) is at a singular configuration"):
        system.acceleration(*system.state(np.array([0.4, 0.0, -0.3, 1.2, 0.3]), v), np.zeros(model.nv))
    b = mb.ModelBuilder()
    b.add_body("s", joint="spline_surface", control=np.random.default_rng(0).normal(size=(6, 4, 4)) * 0.3, mass=1.0,
               inertia=np.eye(3))
    surface = b.build()
    system = MaximalSystem(surface)
    C, V = system.state(np.array([0.3, 0.6]), np.zeros(2))
    C[0] = C[0] @ se3.exp(np.r_[0.2, 0, 0, 0, 0.1, 0])
    with pytest.raises(InputError, match=r"joint 's' \(spline_surface\) were not found"):
        system.coordinates(C, V)
    with pytest.raises(InputError, match="shape"):
        system.acceleration(*system.state(np.array([0.3, 0.6]), np.zeros(2)), np.zeros(2), near=np.zeros(3))
