"""Closed-loop dynamics (Featherstone ch. 8): every method of §8.5 gives the
same q̈ on closed mechanisms, including overconstrained (rank-deficient)
ones; the constraint forces lie in range(Kᵀ); inverse dynamics reproduces
the forces that produced a motion; projection and assembly."""
import numpy as np
import pytest

import multibody as mb
from multibody.constraints import Constraints, project_positions, project_velocity
from multibody.dynamics import closed_loop_forward_dynamics, closed_loop_inverse_dynamics, null_space_basis
from multibody.errors import InputError
from .mechanisms import closed_random_tree, crank_slider, four_bar, spherical_pair

METHODS = ("kkt", "range_space", "null_space")


def _check_methods_agree(model, q, seed=0):
    C = Constraints(model)
    rng = np.random.default_rng(seed)
    v = project_velocity(model, C, q, rng.normal(size=model.nv))
    tau = rng.normal(size=model.nv)
    phi, K, k = C.evaluate(q, v)
    assert np.abs(phi).max() < 1e-10 and np.abs(K @ v).max() < 1e-10
    results = [closed_loop_forward_dynamics(model, q, v, tau, K, k, method=m)[0] for m in METHODS]
    scale = max(1.0, np.abs(results[0]).max())
    for r in results[1:]:
        assert np.abs(r - results[0]).max() < 1e-10 * scale
    qdd = results[0]
    assert np.abs(K @ qdd - k).max() < 1e-9 * scale
    # the constraint force H q̈ + C − τ is orthogonal to the allowed motions (it lies in range(Kᵀ))
    f = mb.rnea(model, q, v, qdd) - tau
    G, _ = null_space_basis(K, k)
    assert np.abs(G.T @ f).max() < 1e-9 * max(1.0, np.abs(f).max())
    return K


def test_overconstrained_four_bar():
    model, q = four_bar()
    K = _check_methods_agree(model, q)
    assert K.shape == (5, 3) and np.linalg.matrix_rank(K) == 2   # mobility 1 (Featherstone §8.10)


@pytest.mark.parametrize("mechanism", [crank_slider, spherical_pair])
def test_crank_slider_and_spatial_spherical_loop(mechanism):
    _check_methods_agree(*mechanism())


@pytest.mark.parametrize("seed", range(9))
def test_random_closed_loop_systems(seed):
    joints = ["spherical", "revolute", "universal", "cylindrical", "prismatic", "planar", "fixed", "translational",
              "helical"]
    chosen = [joints[seed % 9], joints[(seed + 3) % 9]]
    model, q = closed_random_tree(seed, chosen, floating=seed % 2 == 0)
    _check_methods_agree(model, q, seed)


def test_inverse_dynamics_reproduces_the_driving_forces():
    """Drive the four-bar's crank with a known torque: closed-loop inverse
    dynamics of the resulting motion with only the crank actuated returns
    that torque (properly actuated, §8.12)."""
    model, q = four_bar()
    C = Constraints(model)
    v = project_velocity(model, C, q, np.array([2.0, 0.0, 0.0]))
    tau = np.array([1.7, 0.0, 0.0])
    _, K, k = C.evaluate(q, v)
    qdd, _ = closed_loop_forward_dynamics(model, q, v, tau, K, k)
    u = closed_loop_inverse_dynamics(model, q, v, qdd, K, actuated=[0])
    assert u == pytest.approx(tau, abs=1e-10)
    # redundantly actuated (all three joints): minimum-norm forces producing the same motion
    u_all = closed_loop_inverse_dynamics(model, q, v, qdd, K)
    qdd2, _ = closed_loop_forward_dynamics(model, q, v, u_all, K, k)
    assert np.abs(qdd2 - qdd).max() < 1e-9
    assert np.linalg.norm(u_all) <= np.linalg.norm(tau) + 1e-12


def test_underactuated_inverse_dynamics_is_reported():
    """The spatial spherical loop has mobility 3; one actuated coordinate
    cannot produce an arbitrary admissible motion."""
    model, q = spherical_pair()
    C = Constraints(model)
    rng = np.random.default_rng(0)
    v = project_velocity(model, C, q, rng.normal(size=model.nv))
    _, K, k = C.evaluate(q, v)
    qdd, _ = closed_loop_forward_dynamics(model, q, v, rng.normal(size=model.nv), K, k)
    with pytest.raises(InputError, match="underactuated; residual"):
        closed_loop_inverse_dynamics(model, q, v, qdd, K, actuated=[0])


def test_projection_and_assembly():
    model, q = four_bar()
    C = Constraints(model)
    q_bad = q + np.array([0.05, -0.08, 0.03])
    q_fixed, iterations = project_positions(model, C, q_bad)
    assert np.abs(C.evaluate(q_fixed)[0]).max() <= 1e-12 and iterations < 10
    v = project_velocity(model, C, q_fixed, np.array([1.0, 2.0, 3.0]))
    assert np.abs(C.evaluate(q_fixed)[1] @ v).max() < 1e-12


def test_assembly_failure_names_the_constraint():
    b = mb.ModelBuilder("impossible")
    b.add_body("a", "world", "revolute", axis=(0, 1, 0), mass=1.0, com=(0.5, 0, 0), inertia=np.eye(3) * 0.1)
    # the rod's end is 1 m from its pivot; it cannot reach a point 3 m away
    b.add_loop_joint("a", "world", "spherical", (np.eye(3), (1.0, 0, 0)), (np.eye(3), (3.0, 0, 0)),
                     name="too_far")
    model = b.build()
    with pytest.raises(InputError, match="'too_far' still has residual"):
        project_positions(model, Constraints(model), model.neutral())


def test_closed_loop_input_errors():
    model, q = four_bar()
    with pytest.raises(InputError, match="unknown closed-loop method"):
        closed_loop_forward_dynamics(model, q, np.zeros(3), np.zeros(3), np.zeros((5, 3)), np.zeros(5), "magic")
    with pytest.raises(InputError, match="K must be"):
        closed_loop_forward_dynamics(model, q, np.zeros(3), np.zeros(3), np.zeros((5, 2)), np.zeros(5))


def test_dense_and_sparse_kkt_solves_agree():
    """The velocity-level KKT system (ArtiSynth §0.6, §0.11) solved densely
    and by SuperLU gives the same velocity, which satisfies G v = g."""
    from multibody.formulations.reduced import kkt_solve
    rng = np.random.default_rng(5)
    n, m = 30, 8
    B = rng.normal(size=(n, n))
    A = B @ B.T + n * np.eye(n)
    G = rng.normal(size=(m, n))
    b, g = rng.normal(size=n), rng.normal(size=m)
    for R in (np.zeros((m, m)), 1e-3 * np.eye(m)):
        x_dense = kkt_solve(A, G, R, b, g, sparse=False)
        x_sparse = kkt_solve(A, G, R, b, g, sparse=True)
        assert np.allclose(x_dense, x_sparse, atol=1e-12)
    assert np.allclose(G @ kkt_solve(A, G, np.zeros((m, m)), b, g), g, atol=1e-12)


def test_loop_clusters_give_a_block_diagonal_null_space():
    """Two independent loops (a four-bar and a separate closed chain) form
    two clusters (Featherstone §8.9); the block-diagonal G spans the same
    null space as a dense QR of the whole K, and g solves K g = k."""
    from multibody.dynamics.closed_loop import loop_clusters
    rng = np.random.default_rng(2)
    K = np.zeros((5, 9))
    K[:3, [0, 1, 2]] = rng.normal(size=(3, 3))          # cluster 1: rows 0-2 on coordinates 0-2
    K[3:, [4, 6, 7]] = rng.normal(size=(2, 3))          # cluster 2: rows 3-4 on coordinates 4, 6, 7
    K[2] = K[0] + 2 * K[1]                               # a redundant row
    k = K @ rng.normal(size=9)
    clusters = loop_clusters(K)
    assert [(r.tolist(), c.tolist()) for r, c in clusters] == [([0, 1, 2], [0, 1, 2]), ([3, 4], [4, 6, 7])]
    G, g = null_space_basis(K, k)
    assert G.shape == (9, 9 - 4) and np.linalg.matrix_rank(G) == 5
    assert np.abs(K @ G).max() < 1e-12 and np.abs(K @ g - k).max() < 1e-12
    assert np.count_nonzero(G[[0, 1, 2]][:, [c for c in range(G.shape[1]) if np.any(G[[4, 6, 7], c])]]) == 0
