"""K = ∂τ/∂q (tangent space, model.integrate) and D = ∂τ/∂v of every force
element against central finite differences, at random states of random
trees that use every joint type, with a free base and with a fixed base."""
import numpy as np
import pytest

import multibody as mb
from multibody.forces import generalized_forces

from .helpers import catalogue, close, fd_jacobians, state, tree

ELEMENTS = ("Gravity", "JointSpring", "JointDamper", "JointCoulombFriction", "ExternalWrench", "PointForce",
            "BodyDamping", "PointToPointSpring", "FrameSpring")
CASES = [(seed, floating) for seed in (1, 2) for floating in (True, False)]


@pytest.mark.parametrize("seed,floating", CASES)
def test_every_element_against_finite_differences(seed, floating):
    model = tree(seed, floating)
    q, v = state(model, seed + 10)
    t = 0.37
    rng = np.random.default_rng(seed)
    elements = catalogue(model, rng)
    assert {type(e).__name__ for e in elements} == set(ELEMENTS)
    types = {j.type for j in model.joints[1:]}
    assert types >= {"revolute", "prismatic", "helical", "cylindrical", "planar", "spherical", "translational",
                     "universal"}
    for e in elements:
        tau, K, D = e.evaluate(model, q, v, t, jacobians=True)
        assert tau.shape == (model.nv,) and K.shape == D.shape == (model.nv, model.nv)
        Kf, Df = fd_jacobians(e, model, q, v, t)
        scale = max(np.abs(tau).max(), np.abs(Kf).max(), np.abs(Df).max())
        assert close(K, Kf, scale), f"{e!r}: K error {np.abs(K - Kf).max():.3g} (scale {scale:.3g})"
        assert close(D, Df, scale), f"{e!r}: D error {np.abs(D - Df).max():.3g} (scale {scale:.3g})"
        # the τ-only path gives the same τ
        assert np.array_equal(e.evaluate(model, q, v, t)[0], tau)


def test_sum_and_shared_workspace():
    model = tree(5, True)
    q, v = state(model, 3)
    els = catalogue(model, np.random.default_rng(4))
    data = mb.Data(model)
    tau, K, D = generalized_forces(els, model, q, v, 1.5, data=data, jacobians=True)
    parts = [e.evaluate(model, q, v, 1.5, jacobians=True) for e in els]
    for total, i in ((tau, 0), (K, 1), (D, 2)):
        ref = sum(p[i] for p in parts)
        assert np.allclose(total, ref, rtol=1e-12, atol=1e-12 * np.abs(ref).max())
    t2, K2, D2 = generalized_forces(els, model, q, v, 1.5)
    assert np.allclose(t2, tau, atol=1e-12 * np.abs(tau).max()) and K2 is None and D2 is None
    # power = τ·v
    for e in els[:5]:
        assert np.isclose(e.power(model, q, v, 1.5), e.evaluate(model, q, v, 1.5)[0] @ v)


def test_cable_law_both_sides_of_slack():
    """The tension-only law: exact Jacobians when taut, zero when slack."""
    from multibody.forces import PointToPointSpring
    model = tree(7, False)
    q, v = state(model, 1)
    frames = [f for f in model.frame_names if f != "world"]
    probe = PointToPointSpring(frames[1], [0.1, 0, 0], frames[-1], [0, 0.2, 0], 1.0)
    l = np.linalg.norm(np.subtract(*probe.geometry(model, q)[:2]))
    for rest, slack in ((0.5 * l, False), (1.5 * l, True)):
        e = PointToPointSpring(frames[1], [0.1, 0, 0], frames[-1], [0, 0.2, 0], 30.0, 2.0, rest, force_law="cable")
        tau, K, D = e.evaluate(model, q, v, jacobians=True)
        if slack:
            assert not tau.any() and not K.any() and not D.any()
        else:
            Kf, Df = fd_jacobians(e, model, q, v)
            scale = max(np.abs(tau).max(), np.abs(Kf).max())
            assert close(K, Kf, scale) and close(D, Df, scale)
