"""A 10,000-link URDF chain loads (issue 10, item 8: loading is linear in
the number of links; the time is measured in the report, not asserted
here). The loaded model is checked against closed forms: sizes, names,
parents, total mass, and the tip position at two configurations."""
import numpy as np

import multibody as mb
from oracles import urdf_chain as chain

N = 10_000


def test_a_10000_link_chain_loads():
    model = mb.load_urdf(chain(N))
    assert model.nbodies == N + 1 and model.nq == N and model.nv == N  # l0 is merged into the world
    assert model.body_names[1] == "l1" and model.body_names[-1] == f"l{N}"
    assert model.joint_names[-1] == f"j{N - 1}"
    assert list(model.parents[1:5]) == [0, 1, 2, 3] and model.parents[-1] == N - 1
    assert model.body_mass[1:].sum() == N and model.body_mass[0] == 1.0  # l0's kilogram is on the world
    assert len(model.visual_geometries) == N + 1 and len(set(model.frame_names)) == len(model.frame_names)
    # tip of the chain: straight up at q = 0; at q0 = π/2 about y everything after joint 0 lies along x
    tip = model.frame_id(f"l{N}")
    F = mb.frame_placements(model, np.zeros(N))
    np.testing.assert_allclose(F[tip][:3, 3], [0.0, 0.0, 0.1 * N], rtol=1e-12, atol=1e-9)
    q = np.zeros(N)
    q[0] = np.pi / 2
    F = mb.frame_placements(model, q)
    np.testing.assert_allclose(F[tip][:3, 3], [0.1 * (N - 1), 0.0, 0.1], rtol=1e-12, atol=1e-9)
