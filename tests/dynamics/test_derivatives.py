"""Analytic derivatives of RNEA and ABA (rnea_derivatives,
aba_derivatives) against two oracles nobody here wrote:

* Pinocchio's computeRNEADerivatives / computeABADerivatives, after the
  convention bridge of helpers.Robot (joint order, linear-first free
  joints, planar order), on example-robot-data robots and random trees of
  the joints for which Pinocchio's own derivatives are right (constant
  motion subspace; notes/derivatives.md §6);
* central differences on the configuration manifold (``q ⊕ ±h e_k`` by
  ``Model.integrate``, never adding to quaternion components) of
  ``mb.rnea`` / ``mb.aba`` for every joint of the catalog, Sueda's joints
  included, with external forces, armature and an off-axis gravity.

Every comparison is relative to the oracle's magnitude."""
import numpy as np
import pinocchio as pin
import pytest

import multibody as mb
from multibody.dynamics import aba_derivatives, rnea_derivatives
from multibody.dynamics import derivative_kernels as DK
from multibody.errors import InputError, NonFiniteError
from oracles import ALL_JOINTS, ROBOTS, SUEDA_JOINTS, random_tree, to_pinocchio
from .helpers import Robot, assert_rel, robot, with_armature

# Joints whose Pinocchio derivatives are right (S constant in the child frame); to_pinocchio maps the
# universal joint to a JointModelComposite, whose derivatives Pinocchio gets wrong (notes §6)
PIN_JOINTS = ("revolute", "prismatic", "helical", "planar", "spherical", "translational")
FD_RTOL_Q = 2e-7   # central differences with h = 1e-5: truncation ~h², rounding ~1e-16/h (relative)
FD_RTOL_V = 1e-9   # tau and ddq are quadratic in v: central differences are exact up to rounding


def pin_matrix(r, X):
    """An (nv, nv) multibody matrix (rows: τ or q̈ coordinates, columns: v
    coordinates) in Pinocchio's order on both axes."""
    return r.v_to_pin(np.swapaxes(r.v_to_pin(np.swapaxes(X, -1, -2)), -1, -2))


def fd_q(f, model, q, h=1e-5):
    """Central differences along the tangent space: column k is
    (f(q ⊕ h e_k) − f(q ⊕ −h e_k)) / 2h."""
    return np.stack([(f(model.integrate(q, e)) - f(model.integrate(q, -e))) / (2 * h) for e in h * np.eye(model.nv)],
                    axis=-1)


def fd_x(f, x, h=1e-3):
    return np.stack([(f(x + e) - f(x - e)) / (2 * h) for e in h * np.eye(len(x))], axis=-1)


@pytest.fixture(scope="module", params=["ur5", "solo12", "pin_tree_fixed", "pin_tree_floating", "pin_tree_large"])
def system(request):
    return _system(request.param)


def _system(name):
    if name in ROBOTS:
        return robot(name)
    floating = "floating" in name or "large" in name
    b = random_tree(41 if floating else 42, n=16 if "large" in name else 8, floating=floating, joints=PIN_JOINTS)
    with_armature(b, 3)
    b.gravity = np.array([1.0, -2.0, -9.0])
    model = b.build()
    return Robot(name, model, to_pinocchio(model))


def assert_matches_pinocchio(r, n_states):
    model, pm = r.model, r.pm
    pd = pm.createData()  # kept alive: Pinocchio returns views into it
    data = mb.Data(model)
    for k, (qp, q, vp, v, ap, a, taup, tau, fe) in enumerate(r.states(n_states, 7)):
        fe = fe if k % 2 else None
        pfe = [] if fe is None else [r.pin_fext(fe)]
        expect = [X.copy() for X in pin.computeRNEADerivatives(pm, pd, qp, vp, ap, *pfe)]
        for got in (rnea_derivatives(model, q, v, a, f_ext=fe), rnea_derivatives(model, q, v, a, fe, data=data)):
            for what, g, e in zip(("dtau/dq", "dtau/dv", "dtau/da"), got, expect):
                assert_rel(pin_matrix(r, g), e, what=f"{r.name} {what}")
        expect = [X.copy() for X in pin.computeABADerivatives(pm, pd, qp, vp, taup, *pfe)]
        for got in (aba_derivatives(model, q, v, tau, f_ext=fe),
                    aba_derivatives(model, q, v, tau, f_ext=fe, data=data)):
            for what, g, e in zip(("dddq/dq", "dddq/dv", "dddq/dtau"), got, expect):
                assert_rel(pin_matrix(r, g), e, rtol=1e-8, what=f"{r.name} {what}")  # solves with M: cond(M)


def test_against_pinocchio(system):
    """∂τ/∂q, ∂τ/∂v, M and ∂q̈/∂q, ∂q̈/∂v, M⁻¹ equal Pinocchio's (with and without external forces).
    pin_tree_large has more than LTDL_NV coordinates (M⁻¹ by the ABA-based recursion), the others
    fewer (M⁻¹ by LᵀDL)."""
    assert (system.model.nv > DK.LTDL_NV) == (system.name == "pin_tree_large")
    assert_matches_pinocchio(system, 4)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(ROBOTS))
def test_every_robot_against_pinocchio(name):
    """Every example-robot-data robot of the test suite (fixed and floating base)."""
    assert_matches_pinocchio(robot(name), 6)


def _fd_check(model, seed, with_fext=True):
    rng = np.random.default_rng(seed)
    q = model.random_configuration(seed=seed)
    v, a, tau = rng.normal(size=(3, model.nv))
    fe = rng.normal(size=(model.nbodies, 6)) if with_fext else None
    dq, dv, M = rnea_derivatives(model, q, v, a, f_ext=fe)
    assert_rel(dq, fd_q(lambda x: mb.rnea(model, x, v, a, f_ext=fe), model, q), FD_RTOL_Q, "dtau/dq")
    assert_rel(dv, fd_x(lambda x: mb.rnea(model, q, x, a, f_ext=fe), v), FD_RTOL_V, "dtau/dv")
    assert_rel(M, fd_x(lambda x: mb.rnea(model, q, v, x, f_ext=fe), a), FD_RTOL_V, "dtau/da")
    Aq, Av, Mi = aba_derivatives(model, q, v, tau, f_ext=fe)
    assert_rel(Aq, fd_q(lambda x: mb.aba(model, x, v, tau, f_ext=fe), model, q), FD_RTOL_Q, "dddq/dq")
    assert_rel(Av, fd_x(lambda x: mb.aba(model, q, x, tau, f_ext=fe), v), 1e-8, "dddq/dv")
    assert_rel(Mi, fd_x(lambda x: mb.aba(model, q, v, x, f_ext=fe), tau), 1e-8, "dddq/dtau")


@pytest.mark.parametrize("joint", ALL_JOINTS + SUEDA_JOINTS)
def test_central_differences_every_joint(joint):
    """Each joint of the catalog, under a free-floating base, against central differences on the manifold."""
    b = random_tree(50 + len(joint), n=3, floating=True, joints=(joint,), pin_compatible=False)
    with_armature(b, 1)
    b.gravity = np.array([0.5, 1.0, -9.0])
    _fd_check(b.build(), 3)


def test_central_differences_fixed_base_mixed_tree():
    """A fixed-base branched tree of every constant- and varying-subspace joint."""
    b = random_tree(61, n=len(ALL_JOINTS) + 2, floating=False, joints=ALL_JOINTS + ("euler", "spline"),
                    pin_compatible=False, fixed=2)
    _fd_check(b.build(), 4)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(3))
def test_central_differences_large_trees(seed):
    b = random_tree(70 + seed, n=14, floating=bool(seed % 2), joints=ALL_JOINTS + SUEDA_JOINTS,
                    pin_compatible=False, fixed=3)
    with_armature(b, seed)
    _fd_check(b.build(), seed)


def test_tangent_convention_is_the_body_twist():
    """Negative control: central differences along a world-frame (left)
    perturbation of the free joint give a different ∂τ/∂q, so the FD
    comparison does pin down the convention (Pinocchio's, body frame)."""
    model = random_tree(81, n=3, floating=True, joints=("revolute",)).build()
    rng = np.random.default_rng(0)
    q = model.random_configuration(seed=1)
    v, a = rng.normal(size=(2, model.nv))
    dq = rnea_derivatives(model, q, v, a)[0]
    j = next(j for j in model.joints if j.type == "free")
    R = mb.spatial.quaternion.to_rotation(q[j.q_slice][3:])
    p = q[j.q_slice][:3]
    Ad = np.zeros((6, 6))  # body twist = Ad(X⁻¹) world twist
    Ad[:3, :3] = R.T
    Ad[3:, 3:] = R.T
    Ad[3:, :3] = -R.T @ np.array([[0, -p[2], p[1]], [p[2], 0, -p[0]], [-p[1], p[0], 0]])

    def left(x, e):
        d = np.zeros(model.nv)
        d[j.v_slice] = Ad @ e
        return model.integrate(x, d)

    h = 1e-5
    fd_world = np.stack([(mb.rnea(model, left(q, h * e), v, a) - mb.rnea(model, left(q, -h * e), v, a)) / (2 * h)
                         for e in np.eye(6)], axis=-1)
    assert np.abs(dq[:, j.v_slice] - fd_world).max() > 1e-2 * np.abs(fd_world).max()
    assert_rel(dq[:, j.v_slice] @ Ad, fd_world, FD_RTOL_Q, "chain rule to the world twist")


def test_data_views_plain_copies_and_batches():
    """With data: views into the workspace (overwritten by the next call);
    without: new arrays; batches (B, nv, nv) equal the single states, with
    f_ext per state or shared, and B = 1."""
    model = _system("pin_tree_floating").model
    data = mb.Data(model)
    rng = np.random.default_rng(2)
    B = 3
    Q = np.stack([model.random_configuration(seed=s) for s in range(B)])
    V, A = rng.normal(size=(2, B, model.nv))
    FE = rng.normal(size=(B, model.nbodies, 6))
    r1 = rnea_derivatives(model, Q[0], V[0], A[0], data=data)
    keep = [x.copy() for x in r1]
    r2 = rnea_derivatives(model, Q[1], V[1], A[1], data=data)
    assert all(x is y for x, y in zip(r1, r2))  # the same workspace
    p0 = rnea_derivatives(model, Q[0], V[0], A[0])
    p1 = rnea_derivatives(model, Q[0], V[0], A[0])
    assert all(x is not y and np.array_equal(x, y) for x, y in zip(p0, p1))
    assert all(np.array_equal(x, y) for x, y in zip(p0, keep))
    for f_ext in (None, FE[0], FE):
        for fn in (rnea_derivatives, aba_derivatives):
            batch = fn(model, Q, V, A, f_ext=f_ext)
            assert all(x.shape == (B, model.nv, model.nv) for x in batch)
            for b in range(B):
                fb = None if f_ext is None else (f_ext if f_ext.ndim == 2 else f_ext[b])
                single = fn(model, Q[b], V[b], A[b], f_ext=fb)
                for x, y in zip(batch, single):
                    assert_rel(x[b], y, 1e-13, f"{fn.__name__} batch")
            one = fn(model, Q[:1], V[:1], A[:1], f_ext=None if f_ext is None else FE[:1])
            assert_rel(one[0][0], fn(model, Q[0], V[0], A[0], f_ext=None if f_ext is None else FE[0])[0], 1e-13)
    # ∂q̈/∂τ is M⁻¹ and ∂τ/∂a is M: their product is the identity (an identity that can fail)
    M = rnea_derivatives(model, Q[2], V[2], A[2])[2]
    Mi = aba_derivatives(model, Q[2], V[2], A[2])[2]
    assert_rel(Mi @ M, np.eye(model.nv), 1e-10, "M^-1 M")


def test_bad_input_raises_input_error():
    model = _system("pin_tree_floating").model
    q, v = model.neutral(), np.zeros(model.nv)
    for fn in (rnea_derivatives, aba_derivatives):
        with pytest.raises(InputError, match="q"):
            fn(model, q[:-1], v, v)
        with pytest.raises(InputError, match="v"):
            fn(model, q, v[:-1], v)
        with pytest.raises(InputError, match="a|tau"):
            fn(model, q, v, np.zeros(model.nv + 1))
        bad = v.copy()
        bad[2] = np.nan
        with pytest.raises(NonFiniteError, match="v"):
            fn(model, q, bad, v)
        with pytest.raises(NonFiniteError, match="a|tau"):
            fn(model, q, v, bad)
        qb = q.copy()
        qb[3] = 2.0  # the free joint's quaternion, not unit
        with pytest.raises(InputError, match="quaternion"):
            fn(model, qb, v, v)
        with pytest.raises(InputError, match="f_ext"):
            fn(model, q, v, v, f_ext=np.zeros((model.nbodies, 5)))
        with pytest.raises(InputError, match="another model"):
            fn(model, q, v, v, data=mb.Data(_system("pin_tree_fixed").model))
        with pytest.raises(InputError, match="overflow"), np.errstate(all="ignore"):  # (interpreted: numpy warns)
            fn(model, q, np.full(model.nv, 1e200), v)


def test_joint_jacobians_time_variation():
    """J̇ against Pinocchio's computeJointJacobiansTimeVariation (WORLD,
    rows swapped to angular first) and against central differences of
    mb.joint_jacobians along q ⊕ t v, for every joint of the catalog."""
    from multibody.dynamics.jacobian_rate import joint_jacobians_time_variation
    swap = np.r_[3:6, 0:3]
    for name in ("ur5", "pin_tree_floating"):
        r = _system(name)
        pd = r.pm.createData()
        for qp, q, vp, v, *_ in r.states(3, 5):
            pin.computeJointJacobiansTimeVariation(r.pm, pd, qp, vp)
            assert_rel(r.v_to_pin(joint_jacobians_time_variation(r.model, q, v))[swap], pd.dJ.copy(),
                       what=f"{name} dJ")
    for joint in ALL_JOINTS + SUEDA_JOINTS:
        model = random_tree(90 + len(joint), n=3, floating=True, joints=(joint,), pin_compatible=False).build()
        q = model.random_configuration(seed=1)
        v = np.random.default_rng(1).normal(size=model.nv)
        h = 1e-5
        fd = (mb.joint_jacobians(model, model.integrate(q, h * v)) - mb.joint_jacobians(model, model.integrate(q, -h * v))) / (2 * h)
        assert_rel(joint_jacobians_time_variation(model, q, v), fd, FD_RTOL_Q, f"{joint} dJ")


def test_body_motion_derivatives():
    """Body velocity and acceleration derivatives against Pinocchio's
    getJoint{Velocity,Acceleration}Derivatives (WORLD and LOCAL) on a tree
    of multi-DoF joints; frames with offsets, every reference and central
    differences for every joint: tests/dynamics/test_kinematic_derivatives.py."""
    from multibody.dynamics import body_motion_derivatives
    swap = np.r_[3:6, 0:3]
    r = _system("pin_tree_floating")
    pd = r.pm.createData()
    for qp, q, vp, v, ap, a, *_ in r.states(2, 9):
        pin.computeForwardKinematicsDerivatives(r.pm, pd, qp, vp, ap)
        for body in range(1, r.model.nbodies):
            jid = r.pm.getJointId(r.model.joint_names[body])
            for ref, pref in (("world", pin.WORLD), ("local", pin.LOCAL)):
                got = body_motion_derivatives(r.model, q, v, a, body, ref)
                pv = [x.copy() for x in pin.getJointVelocityDerivatives(r.pm, pd, jid, pref)]
                pa = [x.copy() for x in pin.getJointAccelerationDerivatives(r.pm, pd, jid, pref)]
                for g, e, what in zip(got, [pv[0], pv[1], pa[1], pa[2], pa[3]], ("dv/dq", "dv/dv", "da/dq", "da/dv",
                                                                                 "da/da")):
                    if ref == "world" and what == "da/dq" and r.model.joints[body].nv > 1:
                        # Pinocchio 4.1's WORLD ∂a/∂q is wrong on the bodies of multi-DoF joints (planar,
                        # spherical, translational): it differs from central differences of its own
                        # getAcceleration(WORLD) along pin.integrate by 1-5; checked by differences in
                        # test_kinematic_derivatives.py
                        continue
                    # floor 1: a block that is exactly zero analytically (the base's local da/dv) is round-off in both
                    assert np.abs(r.v_to_pin(g)[swap] - e).max() <= 1e-9 * max(1.0, np.abs(e).max()), \
                        f"body {body} {ref} {what}"


def _example_robot_urdfs():
    import glob
    import os
    from oracles import robots_dir
    return sorted(os.path.relpath(p, robots_dir()) for p in glob.glob(os.path.join(robots_dir(), "**", "*.urdf"),
                                                                       recursive=True))


@pytest.mark.slow
def test_sweep_every_example_robot_data_urdf():
    """Every URDF of example-robot-data that both libraries load, fixed and
    floating base: where the two models agree (rnea and crba to 1e-9), the
    derivatives equal Pinocchio's; where the loaders differ (icub,
    romeo_laas_small: rnea differs by 5e-6 to 2e-3, before any derivative),
    they are checked against central differences instead; robots with
    massless subtrees (ABA singular in both libraries) have their RNEA
    derivatives checked only. Nothing is skipped silently: the counts are
    asserted."""
    import os
    import warnings
    from oracles import robots_dir
    counts = {"pinocchio": 0, "differences": 0, "rnea only": 0}
    for name in _example_robot_urdfs():
        path = os.path.join(robots_dir(), name)
        for floating in (False, True):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    model = mb.load_urdf(path, floating_base=floating)
                except mb.ModelFileError:  # a URDF the loader rejects (e.g. a second root for the free joint)
                    continue
                pm = pin.buildModelFromUrdf(path, *([pin.JointModelFreeFlyer()] if floating else []))
            if model.nv == 0:
                continue
            r = Robot(name, model, pm)
            pd = pm.createData()
            qp, q, vp, v, ap, a, taup, tau, fe = next(r.states(1, 3))
            same = (np.abs(r.v_to_pin(mb.rnea(model, q, v, a)) - pin.rnea(pm, pd, qp, vp, ap)).max()
                    <= 1e-9 * max(1.0, np.abs(pin.rnea(pm, pd, qp, vp, ap)).max())
                    and np.abs(pin_matrix(r, mb.crba(model, q)) - pin.crba(pm, pd, qp)).max() <= 1e-9 * max(
                        1.0, np.abs(pm.armature).max(), np.abs(np.diag(mb.crba(model, q))).max()))
            try:
                mb.aba(model, q, v, tau)
                aba_ok = True
            except mb.SimulationError:
                aba_ok = False
            if same:
                expect = [X.copy() for X in pin.computeRNEADerivatives(pm, pd, qp, vp, ap, r.pin_fext(fe))]
                for g, e in zip(rnea_derivatives(model, q, v, a, f_ext=fe), expect):
                    assert np.abs(pin_matrix(r, g) - e).max() <= 1e-9 * max(1.0, np.abs(e).max()), name
                if aba_ok:
                    expect = [X.copy() for X in pin.computeABADerivatives(pm, pd, qp, vp, taup, r.pin_fext(fe))]
                    for g, e in zip(aba_derivatives(model, q, v, tau, f_ext=fe), expect):
                        assert np.abs(pin_matrix(r, g) - e).max() <= 1e-7 * max(1.0, np.abs(e).max()), name
                counts["pinocchio"] += 1
            else:
                dq, dv, _ = rnea_derivatives(model, q, v, a, f_ext=fe)
                assert_rel(dq, fd_q(lambda x: mb.rnea(model, x, v, a, f_ext=fe), model, q), FD_RTOL_Q, name)
                assert_rel(dv, fd_x(lambda x: mb.rnea(model, q, x, a, f_ext=fe), v), FD_RTOL_V, name)
                counts["differences"] += 1
            counts["rnea only"] += not aba_ok
    # measured (example-robot-data of this environment, Pinocchio 4.1): 117 models against Pinocchio,
    # 6 against differences (icub, icub_reduced, romeo_laas_small, fixed and floating), 4 without ABA
    assert counts["pinocchio"] >= 100 and counts["differences"] <= 8, counts
