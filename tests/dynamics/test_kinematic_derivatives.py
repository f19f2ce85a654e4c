"""Kinematic derivatives of frames (frame_motion_derivatives,
frame_jacobian_time_variation, and the frame Jacobian as the derivative of
the frame placement) against oracles nobody here wrote:

* Pinocchio 4.1's getFrameVelocityDerivatives,
  getFrameAccelerationDerivatives and getFrameJacobianTimeVariation (rows
  swapped to angular first, columns by helpers.Robot) on UR5, Solo12 and
  (slow) Talos, frames with an offset from their body (tool0, the feet,
  the soles), every reference;
* central differences on the configuration manifold (``Model.integrate``)
  of mb.frame_velocity, mb.frame_acceleration and mb.jacobian for every
  joint of the catalog (Sueda's joints included), a frame with a random
  offset, every reference;
* pin.log6 / pin.log3 for the placement derivative, and the identity
  ``J̇ v = jacobian_dot_v``.

Pinocchio's LOCAL_WORLD_ALIGNED ∂v/∂q and ∂a/∂q are the WORLD derivatives
moved to the frame origin (a fixed point of space): they leave out the
motion of the origin and differ from central differences of Pinocchio's
own getFrameVelocity(LOCAL_WORLD_ALIGNED) by ~1 (docs/derivatives.md).
multibody returns the derivative of the function (checked by differences);
Pinocchio's blocks are checked through that identity."""
import numpy as np
import pinocchio as pin
import pytest

import multibody as mb
from multibody.dynamics import (body_motion_derivatives, frame_jacobian_time_variation, frame_motion_derivatives)
from multibody.errors import InputError
from oracles import ALL_JOINTS, SUEDA_JOINTS, random_pose, random_tree
from .helpers import assert_rel, robot

REFERENCES = ("world", "local", "local_world_aligned")
PIN_REF = {"world": pin.WORLD, "local": pin.LOCAL, "local_world_aligned": pin.LOCAL_WORLD_ALIGNED}
SWAP = np.r_[3:6, 0:3]  # Pinocchio's linear-first rows <-> angular first
FD_RTOL_Q = 2e-7  # central differences, h = 1e-5 (as tests/dynamics/test_derivatives.py)
FD_RTOL_V = 1e-9  # velocities and accelerations are affine or quadratic in v, a: exact up to rounding
BLOCKS = ("dv/dq", "dv/dv", "da/dq", "da/dv", "da/da")


def fd_q(f, model, q, h=1e-5):
    """Column k: (f(q ⊕ h e_k) − f(q ⊕ −h e_k)) / 2h."""
    return np.stack([(f(model.integrate(q, e)) - f(model.integrate(q, -e))) / (2 * h) for e in h * np.eye(model.nv)],
                    axis=-1)


def fd_x(f, x, h=1e-3):
    return np.stack([(f(x + e) - f(x - e)) / (2 * h) for e in h * np.eye(len(x))], axis=-1)


def shift_to(X, p):
    """World spatial columns (angular first) moved to the point p: linear += angular × p."""
    return np.vstack([X[:3], X[3:] + np.cross(X[:3], p, axisa=0, axisc=0)])


@pytest.mark.parametrize("name, frames", [("ur5", ("tool0", "wrist_3_link")), ("solo12", ("FL_FOOT", "HR_FOOT")),
                                          pytest.param("talos", ("left_sole_link", "right_sole_link"),
                                                       marks=pytest.mark.slow)])
def test_frames_against_pinocchio(name, frames):
    """Frames with an offset (UR5's tool0, Solo12's feet, Talos's soles) and a body frame:
    the five derivative blocks and J̇ equal Pinocchio's in every reference
    (LOCAL_WORLD_ALIGNED q blocks: module docstring)."""
    r = robot(name)
    model, pm = r.model, r.pm
    pd = pm.createData()  # kept alive: Pinocchio returns views into it
    for qp, q, vp, v, ap, a, *_ in r.states(2, 4):
        pin.computeForwardKinematicsDerivatives(pm, pd, qp, vp, ap)
        pin.computeJointJacobiansTimeVariation(pm, pd, qp, vp)
        pin.updateFramePlacements(pm, pd)
        for frame in frames:
            fid = pm.getFrameId(frame)
            world = frame_motion_derivatives(model, q, v, a, frame, "world")
            p = mb.frame_pose(model, q, frame)[:3, 3]
            for ref in REFERENCES:
                got = frame_motion_derivatives(model, q, v, a, frame, ref)
                pv = [x.copy() for x in pin.getFrameVelocityDerivatives(pm, pd, fid, PIN_REF[ref])]
                pa = [x.copy() for x in pin.getFrameAccelerationDerivatives(pm, pd, fid, PIN_REF[ref])]
                for k, (g, e, what) in enumerate(zip(got, [pv[0], pv[1], pa[1], pa[2], pa[3]], BLOCKS)):
                    if ref == "local_world_aligned" and k in (0, 2):
                        g = shift_to(world[k], p)  # Pinocchio's convention there (module docstring)
                    assert_rel(r.v_to_pin(g)[SWAP], e, what=f"{name} {frame} {ref} {what}")
                dJ = pin.getFrameJacobianTimeVariation(pm, pd, fid, PIN_REF[ref]).copy()
                assert_rel(r.v_to_pin(frame_jacobian_time_variation(model, q, v, frame, ref))[SWAP], dJ,
                           what=f"{name} {frame} {ref} dJ")


def _tree_with_frame(joint):
    """A floating tree of ``joint``s with a frame at a random offset on its last body."""
    rng = np.random.default_rng(len(joint))
    b = random_tree(70 + len(joint), n=2, floating=True, joints=(joint,), pin_compatible=False)
    b.add_frame("tip", list(b._bodies)[-1], placement=random_pose(rng))
    return b.build()


def check_frame_derivatives(model, q, v, a, ref):
    """The five blocks against central differences of frame_velocity and frame_acceleration (spatial)."""
    got = frame_motion_derivatives(model, q, v, a, "tip", ref)
    fv = lambda x, y: mb.frame_velocity(model, x, y, "tip", ref)  # noqa: E731
    fa = lambda x, y, z: mb.frame_acceleration(model, x, y, z, "tip", ref)  # noqa: E731
    expect = (fd_q(lambda x: fv(x, v), model, q), fd_x(lambda y: fv(q, y), v), fd_q(lambda x: fa(x, v, a), model, q),
              fd_x(lambda y: fa(q, y, a), v), fd_x(lambda z: fa(q, v, z), a))
    for g, e, what in zip(got, expect, BLOCKS):
        assert_rel(g, e, FD_RTOL_Q if what.endswith("dq") else FD_RTOL_V, f"{model.name} {ref} {what}")
    assert_rel(got[1], mb.jacobian(model, q, "tip", ref), 1e-12, f"{model.name} {ref} dv/dv = J")


def check_jacobian_rate(model, q, v, ref):
    """J̇ against central differences of the frame Jacobian along q ⊕ t v, and J̇ v = jacobian_dot_v."""
    dJ = frame_jacobian_time_variation(model, q, v, "tip", ref)
    h = 1e-5
    fd = (mb.jacobian(model, model.integrate(q, h * v), "tip", ref)
          - mb.jacobian(model, model.integrate(q, -h * v), "tip", ref)) / (2 * h)
    assert_rel(dJ, fd, FD_RTOL_Q, f"{model.name} {ref} dJ")
    assert_rel(dJ @ v, mb.jacobian_dot_v(model, q, v, "tip", ref), 1e-12, f"{model.name} {ref} dJ v")


def check_placement_derivative(model, q):
    """The frame Jacobian is the derivative of the frame placement on the
    tangent space: local = d/dε log6(oMf(q)⁻¹ oMf(q ⊕ ε e_k)) (right,
    frame twist), world = d/dε log6(oMf(q ⊕ ε e_k) oMf(q)⁻¹) (left, spatial
    twist at the world origin), local_world_aligned = (d/dε log3(R(q ⊕ ε
    e_k) R(q)ᵀ), d/dε p(q ⊕ ε e_k))."""
    M0 = pin.SE3(mb.frame_pose(model, q, "tip"))
    logs = {"local": lambda M: pin.log6(M0.actInv(M)).vector[SWAP],
            "world": lambda M: pin.log6(M * M0.inverse()).vector[SWAP],
            "local_world_aligned": lambda M: np.r_[pin.log3(M.rotation @ M0.rotation.T), M.translation]}
    for ref, log in logs.items():
        fd = fd_q(lambda x: log(pin.SE3(mb.frame_pose(model, x, "tip"))), model, q)
        assert_rel(mb.jacobian(model, q, "tip", ref), fd, FD_RTOL_Q, f"{model.name} {ref} placement derivative")


@pytest.mark.parametrize("joint", ALL_JOINTS + SUEDA_JOINTS)
def test_central_differences_every_joint(joint):
    """Each joint of the catalog (varying motion subspaces included), a frame with an offset, every reference."""
    model = _tree_with_frame(joint)
    rng = np.random.default_rng(3)
    q = model.random_configuration(seed=3)
    v, a = rng.normal(size=(2, model.nv))
    for ref in REFERENCES:
        check_frame_derivatives(model, q, v, a, ref)
        check_jacobian_rate(model, q, v, ref)
    check_placement_derivative(model, q)


def test_body_motion_derivatives_is_the_body_frame():
    """body_motion_derivatives(body) = frame_motion_derivatives(the body's frame), default reference world."""
    model = _tree_with_frame("spherical")
    rng = np.random.default_rng(5)
    q = model.random_configuration(seed=5)
    v, a = rng.normal(size=(2, model.nv))
    body = model.nbodies - 1
    for ref in REFERENCES:
        for g, e in zip(body_motion_derivatives(model, q, v, a, body, ref),
                        frame_motion_derivatives(model, q, v, a, model.body_names[body], ref)):
            np.testing.assert_array_equal(g, e)
    for g, e in zip(body_motion_derivatives(model, q, v, a, model.body_names[body]),
                    frame_motion_derivatives(model, q, v, a, model.body_names[body], "world")):
        np.testing.assert_array_equal(g, e)


def test_bad_input_raises_input_error():
    model = _tree_with_frame("revolute")
    q, v = model.neutral(), np.zeros(model.nv)
    with pytest.raises(InputError, match="nosuchframe"):
        frame_motion_derivatives(model, q, v, v, "nosuchframe")
    with pytest.raises(InputError, match="nosuchframe"):
        frame_jacobian_time_variation(model, q, v, "nosuchframe")
    with pytest.raises(InputError, match="sideways"):
        frame_motion_derivatives(model, q, v, v, "tip", "sideways")
    with pytest.raises(InputError, match="sideways"):
        frame_jacobian_time_variation(model, q, v, "tip", "sideways")
    with pytest.raises(InputError, match="frame 999"):
        frame_motion_derivatives(model, q, v, v, 999)
    with pytest.raises(InputError, match="nosuchbody"):
        body_motion_derivatives(model, q, v, v, "nosuchbody")
    with pytest.raises(InputError, match="q"):
        frame_motion_derivatives(model, q[:-1], v, v, "tip")
    with pytest.raises(InputError, match="v"):
        frame_jacobian_time_variation(model, q, v[:-1], "tip")
    with pytest.raises(InputError, match="a"):
        frame_motion_derivatives(model, q, v, v[:-1], "tip")
