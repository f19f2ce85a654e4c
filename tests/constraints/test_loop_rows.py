"""Loop-joint and coupling constraints: G = ∂φ/∂q and the velocity-product
term k against finite differences along the configuration manifold, at
arbitrary (not closed) configurations, for every loop-joint type."""
import numpy as np
import pytest

import multibody as mb
from multibody.constraints import Constraints
from multibody.errors import ModelError
from multibody.model import LOOP_JOINT_TYPES
from oracles import random_tree


def _model_with_loops(seed, joint):
    rng = np.random.default_rng(seed)
    b = random_tree(seed, n=8, floating=True)
    names = [n for n in b._bodies]
    for k in range(3):
        a, c = rng.choice(names + ["world"], 2, replace=False)
        pa = (mb.spatial.so3.exp(rng.normal(size=3)), rng.normal(size=3) * 0.3)
        pb = (mb.spatial.so3.exp(rng.normal(size=3)), rng.normal(size=3) * 0.3)
        ax = rng.normal(size=3)
        ax2 = np.cross(ax, rng.normal(size=3))
        b.add_loop_joint(a, c, joint, pa, pb, axis=ax, axis2=ax2, pitch=rng.uniform(-0.2, 0.2))
    return b.build()


@pytest.mark.parametrize("joint", LOOP_JOINT_TYPES)
def test_constraint_jacobian_and_bias_match_finite_differences(joint):
    model = _model_with_loops(3, joint)
    C = Constraints(model)
    rng = np.random.default_rng(1)
    q = model.random_configuration(seed=2)
    v = rng.normal(size=model.nv)
    phi, G, k = C.evaluate(q, v)
    if joint == "free":
        assert phi.shape == (0,) and G.shape == (0, model.nv)
        return
    assert C.size == 3 * {"fixed": 6, "revolute": 5, "prismatic": 5, "helical": 5, "cylindrical": 4, "planar": 3,
                          "spherical": 3, "universal": 4, "translational": 3, "free": 0}[joint]
    eps = 1e-6
    for j in range(model.nv):
        dq = np.zeros(model.nv)
        dq[j] = eps
        fd = (C.evaluate(model.integrate(q, dq))[0] - C.evaluate(model.integrate(q, -dq))[0]) / (2 * eps)
        assert np.allclose(G[:, j], fd, atol=1e-7), j
    # −k = d/dt (G(q ⊕ t v) v) at v̇ = 0
    dG = (C.evaluate(model.integrate(q, eps * v))[1] - C.evaluate(model.integrate(q, -eps * v))[1]) / (2 * eps)
    assert np.allclose(-k, dG @ v, atol=1e-6 * max(1.0, np.abs(k).max()))


def test_couplings_are_linear_rows():
    b = mb.ModelBuilder("gears")
    b.add_body("a", "world", "revolute", axis=(0, 0, 1), mass=1.0, inertia=np.eye(3))
    b.add_body("b", "world", "revolute", placement=(np.eye(3), (1, 0, 0)), axis=(0, 0, 1), mass=1.0,
               inertia=np.eye(3))
    b.add_coupling("b", "a", multiplier=-2.0, offset=0.1)
    model = b.build()
    phi, G, k = Constraints(model).evaluate(np.array([0.3, -0.5]), np.array([1.0, 2.0]))
    assert phi[0] == pytest.approx(-0.5 + 2.0 * 0.3 - 0.1)
    assert np.array_equal(G, [[2.0, 1.0]]) and k[0] == 0.0


def test_constraint_input_errors():
    b = mb.ModelBuilder("bad")
    b.add_body("a", "world", "revolute", mass=1.0, inertia=np.eye(3))
    with pytest.raises(ModelError, match="loop joint 'x'.*unknown body 'nope'"):
        b.add_loop_joint("a", "nope", "revolute", name="x")
        b.build()
    b = mb.ModelBuilder("bad")
    b.add_body("a", "world", "revolute", mass=1.0, inertia=np.eye(3))
    with pytest.raises(ModelError, match="unsupported type 'screw'"):
        b.add_loop_joint("a", "world", "screw")
    with pytest.raises(ModelError, match="axis must be a finite nonzero"):
        b.add_loop_joint("a", "world", "revolute", axis=(0, 0, 0))
    b.add_body("ball", "a", "spherical", mass=1.0, inertia=np.eye(3))
    b.add_coupling("ball", "a", 2.0)
    with pytest.raises(ModelError, match="joint 'ball' is spherical with 3 DoF"):
        Constraints(b.build())


def test_rows_follow_the_order_of_the_constraints():
    """Couplings given before loop joints keep their rows (the kernel
    writes each entry to its own row)."""
    from multibody.model import Coupling
    b = mb.ModelBuilder("order")
    b.add_body("a", "world", "revolute", axis=(0, 1, 0), mass=1.0, com=(0.5, 0, 0), inertia=np.eye(3) * 0.1)
    b.add_body("c", "world", "revolute", placement=(np.eye(3), (1, 0, 0)), axis=(0, 1, 0), mass=1.0,
               inertia=np.eye(3) * 0.1)
    b.add_loop_joint("a", "c", "spherical", (np.eye(3), (1.0, 0, 0)), name="tip")
    model = b.build()
    q = np.array([0.2, -0.4])
    both = Constraints(model, extra=[Coupling("c", "a", 2.0)], loops=False)
    assert both.size == 1
    mixed = Constraints(model, extra=[Coupling("c", "a", 2.0), model.loop_joints[0]], loops=False)
    phi_mixed, G_mixed, _ = mixed.evaluate(q)
    phi_loop, G_loop, _ = Constraints(model).evaluate(q)
    assert phi_mixed[0] == pytest.approx(-0.4 - 2.0 * 0.2)
    assert np.array_equal(phi_mixed[1:], phi_loop) and np.array_equal(G_mixed[1:], G_loop)
    assert mixed.labels == ["coupling c", "tip", "tip", "tip"]
