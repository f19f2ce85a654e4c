"""Property-based checks (hypothesis) of the two-body springs over random
states, attachment points and parameters, including the frame spring's
log map near 0 (series) and near π, and joint springs near their rest."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import multibody as mb
from multibody.forces import FrameSpring, JointSpring, PointToPointSpring
from multibody.spatial import so3

from .helpers import RTOL, fd_jacobians, tree

MODEL = tree(101, True, n=8, fixed=1)
FRAMES = list(MODEL.frame_names)
finite = dict(allow_nan=False, allow_infinity=False)
vec3 = st.lists(st.floats(-0.4, 0.4, **finite), min_size=3, max_size=3).map(np.array)


def check(e, q, v, t=0.0):
    tau, K, D = e.evaluate(MODEL, q, v, t, jacobians=True)
    Kf, Df = fd_jacobians(e, MODEL, q, v, t)
    scale = max(1.0, np.abs(tau).max(), np.abs(Kf).max(), np.abs(Df).max())
    assert np.abs(K - Kf).max() <= RTOL * scale, f"{e!r}: K"
    assert np.abs(D - Df).max() <= RTOL * scale, f"{e!r}: D"


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2 ** 31), a=st.sampled_from(FRAMES), b=st.sampled_from(FRAMES), pa=vec3, pb=vec3,
       k=st.floats(0, 50, **finite), d=st.floats(0, 5, **finite), r=st.floats(0, 1, **finite))
def test_point_to_point_spring(seed, a, b, pa, pb, k, d, r):
    rng = np.random.default_rng(seed)
    q, v = MODEL.random_configuration(seed=seed), rng.normal(size=MODEL.nv)
    e = PointToPointSpring(a, pa, b, pb, k, d, r)
    if e.geometry(MODEL, q)[2] < 1e-3:
        return  # (nearly) coincident points: direction undefined
    check(e, q, v)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2 ** 31), a=st.sampled_from(FRAMES), b=st.sampled_from(FRAMES), p=vec3, rv=vec3,
       kt=st.floats(0, 50, **finite), kr=st.floats(0, 20, **finite), dt=st.floats(0, 5, **finite),
       dr=st.floats(0, 5, **finite))
def test_frame_spring(seed, a, b, p, rv, kt, kr, dt, dr):
    rng = np.random.default_rng(seed)
    q, v = MODEL.random_configuration(seed=seed), rng.normal(size=MODEL.nv)
    e = FrameSpring(a, b, kt, kr, dt, dr, rest_pose=(so3.exp(rv * 5), p))
    if np.linalg.norm(e.deflection(MODEL, q)[1]) > np.pi - 1e-3:
        return  # the log map jumps at π
    check(e, q, v)


@pytest.mark.parametrize("angle", [0.0, 1e-9, 1e-4, 0.3, 2.0, np.pi - 1e-2])
def test_frame_spring_rotation_near_zero_and_pi(angle):
    """Relative rotation of the given angle about a random axis."""
    rng = np.random.default_rng(3)
    q, v = MODEL.random_configuration(seed=5), rng.normal(size=MODEL.nv)
    F1, F2 = mb.frame_pose(MODEL, q, "b1"), mb.frame_pose(MODEL, q, "b5")
    axis = rng.normal(size=3)
    axis /= np.linalg.norm(axis)
    rest = np.linalg.inv(F1) @ F2
    rest[:3, :3] = rest[:3, :3] @ so3.exp(-angle * axis)   # frame 2 sits at +angle about axis from frame 1
    e = FrameSpring("b1", "b5", 3.0, 7.0, 0.5, 0.8, rest_pose=rest)
    if angle > 0:
        assert e.potential_energy(MODEL, q) == pytest.approx(0.5 * 7.0 * angle ** 2 + 0.5 * 3.0 * 0.0, rel=1e-6)
    check(e, q, v)


@pytest.mark.parametrize("angle", [0.0, 1e-8, 1e-3, 1.0, 3.0])
def test_joint_springs_near_rest(angle):
    rng = np.random.default_rng(4)
    q, v = MODEL.random_configuration(seed=6), rng.normal(size=MODEL.nv)
    for j in MODEL.joints[1:]:
        if not j.nv:
            continue
        rest = q[j.q_slice].copy()
        dv = np.zeros(MODEL.nv)
        u = rng.normal(size=j.nv)
        dv[j.v_slice] = angle * u / np.linalg.norm(u)
        rest = MODEL.integrate(q, -dv)[j.q_slice]      # q = rest ⊕ (angle along u)
        check(JointSpring(j.name, 2.5, rest), q, v)
