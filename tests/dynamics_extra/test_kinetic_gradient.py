"""∂T/∂q at fixed v against central finite differences of the kinetic
energy computed by the kinematics module (an independent code path)."""
import numpy as np
import pytest

import multibody as mb
from multibody.errors import InputError
from oracles import random_tree

VECTOR_JOINTS = ("revolute", "prismatic", "helical", "cylindrical", "translational")


@pytest.mark.parametrize("seed", range(4))
def test_kinetic_energy_gradient_matches_finite_differences(seed):
    model = random_tree(seed, n=10, floating=False, joints=VECTOR_JOINTS).build()
    rng = np.random.default_rng(seed)
    q = model.random_configuration(seed=seed)
    v = rng.normal(size=model.nv)
    g = mb.kinetic_energy_gradient(model, q, v)
    eps = 1e-6
    fd = np.empty(model.nv)
    for k in range(model.nv):
        dq = np.zeros(model.nv)
        dq[k] = eps
        fd[k] = (mb.kinetic_energy(model, model.integrate(q, dq), v)
                 - mb.kinetic_energy(model, model.integrate(q, -dq), v)) / (2 * eps)
    scale = max(1.0, np.abs(fd).max())
    assert np.abs(g - fd).max() < 1e-7 * scale


def test_lagrange_identity_with_rnea():
    """``C(q, v) v = Ḣ v − ∂T/∂q``: with Ḣ v from finite differences of
    crba along v, the gradient closes Lagrange's equations against RNEA."""
    model = random_tree(7, n=8, floating=False, joints=VECTOR_JOINTS).build()
    rng = np.random.default_rng(1)
    q, v = model.random_configuration(seed=3), rng.normal(size=model.nv)
    eps = 1e-6
    Hdot = (mb.crba(model, model.integrate(q, eps * v)) - mb.crba(model, model.integrate(q, -eps * v))) / (2 * eps)
    c = mb.rnea(model, q, v, np.zeros(model.nv), gravity=False)
    assert np.allclose(c, Hdot @ v - mb.kinetic_energy_gradient(model, q, v), atol=1e-6 * np.abs(c).max())


def test_kinetic_energy_gradient_rejects_lie_group_joints():
    model = random_tree(0, n=3, floating=True, joints=("revolute",)).build()
    with pytest.raises(InputError, match="joint '.*' is free"):
        mb.kinetic_energy_gradient(model, model.neutral(), np.zeros(model.nv))
