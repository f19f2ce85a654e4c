"""Kinematics against Pinocchio on example-robot-data robots and on random
trees built with ModelBuilder that use every joint of the catalog.
Conventions are converted at the boundary (tests/oracles.py)."""
import numpy as np
import pinocchio as pin
import pytest

import multibody as mb
from oracles import ROBOTS, Mapping, pin_model, random_tree, robot_path, swap6, to_pinocchio

TOL = 1e-10
REFS = [("world", pin.WORLD), ("local", pin.LOCAL), ("local_world_aligned", pin.LOCAL_WORLD_ALIGNED)]


def _robot(name):
    if name.startswith("tree"):
        model = random_tree(7 if name == "tree_floating" else 8, n=14,
                            floating=name == "tree_floating").build()
        return model, to_pinocchio(model)
    pm = pin_model(name)
    return mb.load_urdf(robot_path(name), floating_base=ROBOTS[name][1]), pm


@pytest.fixture(scope="module", params=["ur5", "panda", "solo12", "talos", "tree_fixed", "tree_floating"])
def robot(request):
    model, pm = _robot(request.param)
    return request.param, model, pm, Mapping(model, pm)


def _states(pm, mp, n=8, seed=0):
    rng = np.random.default_rng(seed)
    lo = np.where(np.isfinite(pm.lowerPositionLimit), pm.lowerPositionLimit, -2.0).clip(-2, 2)
    hi = np.where(np.isfinite(pm.upperPositionLimit), pm.upperPositionLimit, 2.0).clip(-2, 2)
    for _ in range(n):
        qp = pin.randomConfiguration(pm, lo, hi)
        vp, ap = rng.normal(size=pm.nv), rng.normal(size=pm.nv)
        yield qp, vp, ap, mp.q_from_pin(qp), mp.v_from_pin(vp), mp.v_from_pin(ap)


def test_forward_kinematics(robot):
    name, model, pm, mp = robot
    pd = pm.createData()
    qs, oracle = [], []
    for qp, _, _, q, _, _ in _states(pm, mp):
        pin.forwardKinematics(pm, pd, qp)
        expect = np.array([pd.oMi[pm.getJointId(model.joint_names[i])].homogeneous
                           for i in range(1, model.nbodies)])
        got = mb.forward_kinematics(model, q)[1:]
        np.testing.assert_allclose(got, expect, atol=TOL)
        qs.append(q)
        oracle.append(expect)
    batch = mb.forward_kinematics(model, np.array(qs))  # one parallel kernel call
    np.testing.assert_allclose(batch[:, 1:], np.array(oracle), atol=TOL)


def test_frame_jacobians(robot):
    name, model, pm, mp = robot
    pd = pm.createData()
    data = mb.Data(model)
    for qp, vp, _, q, v, _ in _states(pm, mp, n=4):
        pin.computeJointJacobians(pm, pd, qp)
        for i in range(1, model.nbodies):
            jid = pm.getJointId(model.joint_names[i])
            for ref, pref in REFS:
                expect = pin.getJointJacobian(pm, pd, jid, pref)
                got = mb.jacobian(model, q, model.body_names[i], ref, data=data)
                np.testing.assert_allclose(mp.v_to_pin_columns(swap6(got)), expect, atol=TOL)


def test_frame_velocity_acceleration_and_jdot_v(robot):
    name, model, pm, mp = robot
    pd = pm.createData()
    for qp, vp, ap, q, v, a in _states(pm, mp, n=4):
        pin.forwardKinematics(pm, pd, qp, vp, ap)
        for i in range(1, model.nbodies):
            jid = pm.getJointId(model.joint_names[i])
            body = model.body_names[i]
            for ref, pref in REFS:
                np.testing.assert_allclose(swap6(mb.frame_velocity(model, q, v, body, ref)),
                                           pin.getVelocity(pm, pd, jid, pref).vector, atol=TOL)
                np.testing.assert_allclose(swap6(mb.frame_acceleration(model, q, v, a, body, ref)),
                                           pin.getAcceleration(pm, pd, jid, pref).vector, atol=1e-9)
            np.testing.assert_allclose(
                swap6(mb.frame_acceleration(model, q, v, a, body, "local", classical=True)),
                pin.getClassicalAcceleration(pm, pd, jid, pin.LOCAL).vector, atol=1e-9)
        # J̇ v is the acceleration at q̈ = 0 (classical for local_world_aligned)
        pin.forwardKinematics(pm, pd, qp, vp, np.zeros(pm.nv))
        body = model.body_names[-1]
        jid = pm.getJointId(model.joint_names[-1])
        np.testing.assert_allclose(swap6(mb.jacobian_dot_v(model, q, v, body, "local")),
                                   pin.getAcceleration(pm, pd, jid, pin.LOCAL).vector, atol=1e-9)
        np.testing.assert_allclose(
            swap6(mb.jacobian_dot_v(model, q, v, body, "local_world_aligned")),
            pin.getClassicalAcceleration(pm, pd, jid, pin.LOCAL_WORLD_ALIGNED).vector, atol=1e-9)


def test_center_of_mass_energy_momentum(robot):
    name, model, pm, mp = robot
    pd = pm.createData()
    for qp, vp, _, q, v, _ in _states(pm, mp):
        com, vcom = mb.center_of_mass(model, q, v)
        np.testing.assert_allclose(com, pin.centerOfMass(pm, pd, qp, vp), atol=TOL)
        np.testing.assert_allclose(vcom, pd.vcom[0], atol=TOL)
        np.testing.assert_allclose(mp.v_to_pin_columns(mb.com_jacobian(model, q)),
                                   pin.jacobianCenterOfMass(pm, pd, qp), atol=TOL)
        scale = 1.0 + abs(pin.computeKineticEnergy(pm, pd, qp, vp))
        assert abs(mb.kinetic_energy(model, q, v) - pin.computeKineticEnergy(pm, pd, qp, vp)) < TOL * scale
        pe = pin.computePotentialEnergy(pm, pd, qp)
        assert abs(mb.potential_energy(model, q) - pe) < TOL * (1.0 + abs(pe))
        np.testing.assert_allclose(mp.v_to_pin_columns(swap6(mb.centroidal_momentum_matrix(model, q))),
                                   pin.computeCentroidalMap(pm, pd, qp), atol=1e-9)
        np.testing.assert_allclose(swap6(mb.centroidal_momentum(model, q, v)),
                                   pin.computeCentroidalMomentum(pm, pd, qp, vp).vector, atol=1e-9)


def test_batches_match_single_calls(robot):
    name, model, pm, mp = robot
    states = list(_states(pm, mp, n=5, seed=3))
    Q = np.array([s[3] for s in states])
    V = np.array([s[4] for s in states])
    body = model.body_names[-1]
    for b in range(len(Q)):
        for ref, _ in REFS:
            np.testing.assert_array_equal(mb.jacobian(model, Q, body, ref)[b], mb.jacobian(model, Q[b], body, ref))
        np.testing.assert_array_equal(mb.center_of_mass(model, Q)[b], mb.center_of_mass(model, Q[b]))
        np.testing.assert_array_equal(mb.com_jacobian(model, Q)[b], mb.com_jacobian(model, Q[b]))
        assert mb.kinetic_energy(model, Q, V)[b] == mb.kinetic_energy(model, Q[b], V[b])
        np.testing.assert_array_equal(mb.centroidal_momentum_matrix(model, Q)[b],
                                      mb.centroidal_momentum_matrix(model, Q[b]))
        np.testing.assert_array_equal(mb.frame_velocity(model, Q, V, body)[b],
                                      mb.frame_velocity(model, Q[b], V[b], body))
