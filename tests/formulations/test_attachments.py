"""The elimination algebra of attachments (ArtiSynth §0.17–0.21) against the
KKT systems with the attachment rows, the one-at-a-time elimination of
§0.18 (any valid order) and the worked value T1 (notes seed-000)."""
import numpy as np
import pytest

import multibody as mb
from multibody.formulations import AttachmentCycleError, ParticleSystem
from multibody.formulations.attachments import (attachment_map, attachment_rows, compose_weights,
                                                eliminate_sequential, reduce, reduce_constraints, reduction_matrix,
                                                solve_saddle, topological_order)


def _system(seed=0):
    """Components: 0 rigid (2 DoF, active), 1 particle (active), 2 attached to
    the rigid one (3×2 map), 3 attached to 1 and 2 (weights), 4 attached to 3
    and 1, 5 prescribed, 6 attached to 5 and 1. General SPD M (cross terms
    between components), random forces and biases."""
    rng = np.random.default_rng(seed)
    sizes = [2, 3, 3, 3, 3, 3, 3]
    N = sum(sizes)
    X = rng.standard_normal((N, N))
    M = X @ X.T + N * np.eye(N)
    f = rng.standard_normal(N)
    I3 = np.eye(3)
    rel = {2: {0: rng.standard_normal((3, 2))}, 3: {1: 0.3 * I3, 2: 0.6 * I3}, 4: {3: 0.5 * I3, 1: 0.5 * I3},
           6: {5: 0.25 * I3, 1: 0.75 * I3}}
    bias = {2: rng.standard_normal(3), 4: rng.standard_normal(3)}
    prescribed = {5: rng.standard_normal(3)}
    return sizes, M, f, rel, bias, prescribed


def _component_slices(sizes):
    off = np.concatenate([[0], np.cumsum(sizes)])
    return [slice(off[i], off[i + 1]) for i in range(len(sizes))]


def test_reduced_solve_equals_kkt_with_attachment_rows():
    sizes, M, f, rel, bias, pres = _system()
    order = topological_order({k: list(r) for k, r in rel.items()})
    P, p = attachment_map(sizes, [0, 1], rel, order, bias, pres)
    Mr, fr = reduce(M, f, P, p)
    u = P @ np.linalg.solve(Mr, fr) + p
    G, g = attachment_rows(sizes, rel, bias, pres)
    u_kkt, lam = solve_saddle(M, G, f, g)
    assert np.abs(u - u_kkt).max() < 1e-12
    assert np.abs(G @ u - g).max() < 1e-12
    # the drive force of the prescribed component (§0.21 with the sign fix): P_ρᵀ(M u − f) = its row's impulse
    Prho = attachment_map(sizes, [0, 1, 5], rel, order)[0][:, 5:8]
    nrel = sum(sizes[k] for k in rel)
    assert np.abs(Prho.T @ (M @ u - f) - lam[nrel:nrel + 3]).max() < 1e-11


def test_one_at_a_time_in_any_valid_order_and_pmpt():
    """§0.18: eliminating one attachment at a time (eq. 0.27–0.35) in two
    different valid orders gives the same M', f' as Pᵀ(·)P; and the product
    of ArtiSynth's P_k gives P M Pᵀ = diag(M', 0)."""
    sizes, M, f, rel, bias, _ = _system(1)
    rel = {k: r for k, r in rel.items() if k != 6}      # no prescribed component here
    sizes = sizes[:5]
    M, f = M[:14, :14], f[:14]
    order = topological_order({k: list(r) for k, r in rel.items()})
    P, p = attachment_map(sizes, [0, 1], rel, order, bias)
    Mr, fr = reduce(M, f, P, p)
    # a component is eliminated only when nothing left is attached to it: here 4, 3, 2 is the only order
    M2, f2 = eliminate_sequential(M, f, sizes, rel, [4, 3, 2], bias)
    assert np.abs(M2[:5, :5] - Mr).max() < 1e-12 and np.abs(f2[:5] - fr).max() < 1e-12
    assert np.abs(M2[5:]).max() == 0.0 and np.abs(M2[:, 5:]).max() == 0.0
    # with a second leaf (component 5 attached to 2) several orders are valid
    sizes5 = sizes + [3]
    rng = np.random.default_rng(2)
    X = rng.standard_normal((17, 17))
    M5 = X @ X.T + 17 * np.eye(17)
    f5 = rng.standard_normal(17)
    rel5 = dict(rel)
    rel5[5] = {2: 0.7 * np.eye(3)}
    order5 = topological_order({k: list(r) for k, r in rel5.items()})
    P5, p5 = attachment_map(sizes5, [0, 1], rel5, order5, bias)
    Mr5, fr5 = reduce(M5, f5, P5, p5)
    for elim in ([4, 5, 3, 2], [5, 4, 3, 2], [4, 3, 5, 2]):
        M2, f2 = eliminate_sequential(M5, f5, sizes5, rel5, elim, bias)
        assert np.abs(M2[:5, :5] - Mr5).max() < 1e-11 and np.abs(f2[:5] - fr5).max() < 1e-11
    # ArtiSynth's P_k products: P M Pᵀ = diag(M', 0)
    Pk = np.eye(17)
    for k in [4, 5, 3, 2]:
        Pk = reduction_matrix(sizes5, None, None, k, rel5[k]) @ Pk
    PMPt = Pk @ M5 @ Pk.T
    assert np.abs(PMPt[:5, :5] - Mr5).max() < 1e-11
    assert np.abs(PMPt[5:]).max() < 1e-12 and np.abs(PMPt[:, 5:]).max() < 1e-12
    # for attachments to active masters only, the P_k commute (§0.17)
    Pa = reduction_matrix(sizes5, None, None, 2, rel5[2])
    Pb = reduction_matrix(sizes5, None, None, 3, {1: 0.3 * np.eye(3)})
    assert np.abs(Pa @ Pb - Pb @ Pa).max() == 0.0


def test_kinetic_energy_is_preserved():
    sizes, M, _, rel, _, _ = _system(3)
    rel = {k: r for k, r in rel.items() if k != 6}
    sizes, M = sizes[:5], M[:14, :14]
    order = topological_order({k: list(r) for k, r in rel.items()})
    P, _ = attachment_map(sizes, [0, 1], rel, order)
    z = np.random.default_rng(0).standard_normal(5)
    u = P @ z
    assert abs(u @ M @ u - z @ (P.T @ M @ P) @ z) < 1e-11 * abs(u @ M @ u)
    assert np.all(np.linalg.eigvalsh(P.T @ M @ P) > 0)          # M' is SPD


def test_ordinary_constraints_keep_their_regularization():
    """[M −Gᵀ; G R] with attachment rows (R = 0) and ordinary rows (R > 0)
    equals the reduced system with G' = G_o P, g' = g_o − G_o p and the same R
    (eq. 0.20–0.24 in this library's sign)."""
    sizes, M, f, rel, bias, pres = _system(4)
    order = topological_order({k: list(r) for k, r in rel.items()})
    P, p = attachment_map(sizes, [0, 1], rel, order, bias, pres)
    rng = np.random.default_rng(5)
    Go = rng.standard_normal((2, M.shape[0]))
    go = rng.standard_normal(2)
    Ro = np.diag([1e-3, 2e-2])
    Ga, ga = attachment_rows(sizes, rel, bias, pres)
    G = np.vstack([Ga, Go])
    R = np.zeros((len(G), len(G)))
    R[-2:, -2:] = Ro
    u_full, lam_full = solve_saddle(M, G, f, np.concatenate([ga, go]), R)
    Mr, fr = reduce(M, f, P, p)
    Gr, gr = reduce_constraints(Go, go, P, p)
    z, lam = solve_saddle(Mr, Gr, fr, gr, Ro)
    assert np.abs(P @ z + p - u_full).max() < 1e-11
    assert np.abs(lam - lam_full[-2:]).max() < 1e-11


def test_T1_two_masters():
    """Notes T1 (§0.18): v_k = w1 v1 + w2 v2 turns diag(m1, m2) into
    [[m1 + w1² mk, w1 w2 mk], [w1 w2 mk, m2 + w2² mk]] ⊗ I."""
    m1, m2, mk, w1, w2 = 1.5, 2.5, 0.7, 0.3, 0.6
    expected = np.kron(np.array([[1.563, 0.126], [0.126, 2.752]]), np.eye(3))
    # the algebra
    sizes = [3, 3, 3]
    M = np.diag([m1] * 3 + [m2] * 3 + [mk] * 3)
    P, _ = attachment_map(sizes, [0, 1], {2: {0: w1 * np.eye(3), 1: w2 * np.eye(3)}}, [2])
    assert np.abs(P.T @ M @ P - expected).max() < 1e-12
    # the particle system (a model with no moving body)
    ps = ParticleSystem(mb.ModelBuilder("empty").build(), gravity=False)
    a = ps.add_particle(m1, (0, 0, 0))
    b = ps.add_particle(m2, (1, 0, 0))
    k = ps.add_particle(mk, (0.5, 0, 0))
    ps.attach(k, [(a, w1), (b, w2)])
    Mr, _ = ps.reduced_dynamics()
    assert np.abs(Mr - expected).max() < 1e-12
    assert np.allclose(ps.positions()[k], w1 * np.array([0, 0, 0.0]) + w2 * np.array([1.0, 0, 0]))


def test_compose_weights_and_cycles():
    C = compose_weights(4, {2: [(0, 0.5), (1, 0.5)], 3: [(2, 2.0), (0, 1.0)]}, [2, 3]).toarray()
    assert np.allclose(C[3], [2.0, 1.0, 0, 0]) and np.allclose(C[2], [0.5, 0.5, 0, 0])
    with pytest.raises(AttachmentCycleError, match="1 -> 2 -> 3 -> 1"):
        topological_order({1: [2], 2: [3], 3: [1], 4: [1]})
    ps = ParticleSystem(mb.ModelBuilder("empty").build())
    i = [ps.add_particle(1.0, (k, 0, 0)) for k in range(4)]
    ps.attach(i[1], [(i[2], 1.0)])
    ps.attach(i[2], [(i[3], 1.0)])
    ps.attach(i[3], [(i[1], 0.5), (i[0], 0.5)])
    with pytest.raises(AttachmentCycleError, match=r"particle 1 -> particle 2 -> particle 3 -> particle 1"):
        ps.step(0.01)
