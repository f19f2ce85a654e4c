"""Oracles no one here wrote: the gravity element's K against Pinocchio's
computeGeneralizedGravityDerivatives (K = -∂g/∂q: Pinocchio also
differentiates in the tangent space, free-flyer twists in the body frame),
and external wrenches against Pinocchio's RNEA with fext. Pinocchio puts
linear parts first; conventions are converted here."""
import numpy as np
import pinocchio as pin
import pytest

import multibody as mb
from multibody.forces import ExternalWrench, Gravity
from oracles import ALL_JOINTS, Mapping, pin_model, random_tree, robot_path, ROBOTS, to_pinocchio

# Pinocchio 4.1's analytic gravity derivative misses the q-dependence of the
# universal joint's motion subspace (it disagrees with finite differences of
# its own computeGeneralizedGravity, see test_universal_joint_against_pinocchio_fd)
NO_UNIVERSAL = tuple(j for j in ALL_JOINTS if j != "universal")


def systems():
    yield "tree_floating", random_tree(81, n=14, floating=True, joints=NO_UNIVERSAL).build()
    yield "tree_fixed", random_tree(82, n=14, floating=False, joints=NO_UNIVERSAL).build()
    for name in ("ur5", "talos"):
        yield name, mb.load_urdf(robot_path(name), floating_base=ROBOTS[name][1])


def pin_twin(name, model):
    return pin_model(name) if name in ROBOTS else to_pinocchio(model)


def to_pin(mp, M):
    """Our (nv x nv) matrix in Pinocchio's v order (rows and columns)."""
    return mp.v_to_pin_columns(mp.v_to_pin_columns(M).T).T


@pytest.mark.parametrize("name,model", list(systems()), ids=lambda x: x if isinstance(x, str) else "")
def test_gravity_stiffness_against_pinocchio(name, model):
    pm = pin_twin(name, model)
    pd = pm.createData()
    mp = Mapping(model, pm)
    lo = np.where(np.isfinite(pm.lowerPositionLimit), pm.lowerPositionLimit, -2.0).clip(-2, 2)
    hi = np.where(np.isfinite(pm.upperPositionLimit), pm.upperPositionLimit, 2.0).clip(-2, 2)
    np.random.seed(0)
    for _ in range(3):
        qp = pin.randomConfiguration(pm, lo, hi)
        q = mp.q_from_pin(qp)
        tau, K, D = Gravity().evaluate(model, q, np.zeros(model.nv), jacobians=True)
        dg = pin.computeGeneralizedGravityDerivatives(pm, pd, qp)
        ref = -dg
        assert np.abs(to_pin(mp, K) - ref).max() <= 1e-10 * max(1.0, np.abs(ref).max())
        g = pin.computeGeneralizedGravity(pm, pd, qp)
        assert np.abs(mp.v_to_pin_columns(tau) + g).max() <= 1e-10 * max(1.0, np.abs(g).max())
        assert not D.any()


def test_universal_joint_against_pinocchio_fd():
    """With universal joints: K against central differences of Pinocchio's
    gravity along pin.integrate (an oracle independent of our kinematics)."""
    model = random_tree(84, n=12, floating=True).build()
    assert "universal" in {j.type for j in model.joints}
    pm = to_pinocchio(model)
    pd = pm.createData()
    mp = Mapping(model, pm)
    np.random.seed(1)
    lo, hi = -np.ones(pm.nq), np.ones(pm.nq)
    qp = pin.randomConfiguration(pm, lo, hi)
    K = to_pin(mp, Gravity().evaluate(model, mp.q_from_pin(qp), np.zeros(model.nv), jacobians=True)[1])
    h = 1e-6
    ref = np.zeros((pm.nv, pm.nv))
    for l in range(pm.nv):
        e = np.zeros(pm.nv)
        e[l] = h
        gp = pin.computeGeneralizedGravity(pm, pd, pin.integrate(pm, qp, e)).copy()
        gm = pin.computeGeneralizedGravity(pm, pd, pin.integrate(pm, qp, -e)).copy()
        ref[:, l] = -(gp - gm) / (2 * h)
    assert np.abs(K - ref).max() <= 1e-6 * max(1.0, np.abs(ref).max())


def test_external_wrenches_against_rnea_fext():
    """τ of a wrench equals -rnea(q, 0, 0, f_ext) with the wrench moved to
    the body origin in body axes (Pinocchio's fext convention, ours too)."""
    model = random_tree(83, n=12, floating=True, fixed=3).build()
    rng = np.random.default_rng(1)
    q = model.random_configuration(seed=2)
    zero = np.zeros(model.nv)
    oMi = mb.forward_kinematics(model, q)
    for frame in ("b3", "f1", "b10"):
        w = rng.normal(size=6)
        F = mb.frame_pose(model, q, frame)
        body = model.frames[model.frame_id(frame)].body
        R, p = oMi[body][:3, :3], oMi[body][:3, 3]
        for ref in ("world", "local"):
            n, f = (w[:3], w[3:]) if ref == "world" else (F[:3, :3] @ w[:3], F[:3, :3] @ w[3:])
            fe = np.zeros((model.nbodies, 6))
            fe[body] = np.r_[R.T @ (n + np.cross(F[:3, 3] - p, f)), R.T @ f]
            expect = -mb.rnea(model, q, zero, zero, f_ext=fe, gravity=False)
            got = ExternalWrench(frame, w, ref).evaluate(model, q, zero)[0]
            assert np.allclose(got, expect, rtol=1e-12, atol=1e-12 * np.abs(expect).max())
