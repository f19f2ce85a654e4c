"""Identities of the equations of motion ``τ = H(q) q̈ + C(q, q̇) − Σ Jᵢᵀ fᵢ``
checked with hypothesis on random trees with every joint type (planar
joints with a general normal, fixed and floating base, armature, bodies
kept on fixed joints) — Featherstone's invariants (notes §5.4–5.6).

Tolerances: the identities are exact in exact arithmetic, so they hold to
round-off. Those that go through a solve with H (ABA, LᵀDL, H⁻¹) lose
cond(H) digits (Featherstone §10.2), so they are scaled by cond(H)·ε; the
others use RTOL relative to the magnitude of the reference side."""
import numpy as np
from hypothesis import given, settings, strategies as st

import multibody as mb
from multibody.dynamics import InertiaFactor, dof_parents
from oracles import random_tree
from .helpers import RTOL, ancestors_dofs, assert_rel, expanded_parents, model_expanded_parents, with_armature

EPS = np.finfo(float).eps
FEW = settings(max_examples=25, deadline=None)


@st.composite
def systems(draw):
    """A random tree (1–9 moving bodies), optional floating base, optional
    armature, optional bodies on fixed joints kept in the model, and a
    random state (q, v, a, τ, f_ext)."""
    seed = draw(st.integers(0, 2 ** 31 - 1))
    n = draw(st.integers(1, 9))
    floating = draw(st.booleans())
    armature = draw(st.booleans())
    nfixed = draw(st.integers(0, 2))
    b = random_tree(seed, n=n, floating=floating, pin_compatible=False, fixed=nfixed)
    if armature:
        with_armature(b, seed)
    model = b.build(merge_fixed=draw(st.booleans()))
    rng = np.random.default_rng(seed)
    q = model.random_configuration(seed=seed)
    v, a, tau = (rng.normal(size=model.nv) for _ in range(3))
    fe = rng.normal(size=(model.nbodies, 6))
    return model, q, v, a, tau, fe


def cond_tol(H):
    """Error bound factor for results of a solve with H: 100·n·cond(H)·ε."""
    return 100 * H.shape[0] * np.linalg.cond(H) * EPS


@FEW
@given(systems())
def test_rnea_inverts_aba_and_aba_inverts_rnea(system):
    model, q, v, a, tau, fe = system
    H = mb.crba(model, q)
    for f in (None, fe):
        acc = mb.aba(model, q, v, tau, f_ext=f)
        # forward error of a solve: relative cond(H)·ε; backward (residual) error: ε of the terms
        assert_rel(mb.rnea(model, q, v, acc, f_ext=f), tau, rtol=max(RTOL, cond_tol(H)), what="rnea(aba(τ))")
        t = mb.rnea(model, q, v, a, f_ext=f)
        assert_rel(mb.aba(model, q, v, t, f_ext=f), a, rtol=max(RTOL, cond_tol(H)), what="aba(rnea(a))")
        for g in (True, False):
            assert_rel(mb.forward_dynamics(model, q, v, tau, f_ext=f, method="crba", gravity=g),
                       mb.aba(model, q, v, tau, f_ext=f, gravity=g), rtol=max(RTOL, cond_tol(H)),
                       what="forward_dynamics crba vs aba")


@FEW
@given(systems())
def test_crba_is_spd_and_equals_unit_acceleration_inverse_dynamics(system):
    """H symmetric positive definite; column k is ID_δ(q, e_k) = RNEA(q, 0,
    e_k) without gravity (Featherstone Eq. 6.3–6.4, Table 6.1)."""
    model, q, *_ = system
    H = mb.crba(model, q)
    np.testing.assert_array_equal(H, H.T)
    assert np.linalg.eigvalsh(H).min() > 0.0
    np.linalg.cholesky(H)
    cols = np.column_stack([mb.rnea(model, q, np.zeros(model.nv), e, gravity=False) for e in np.eye(model.nv)])
    assert_rel(H, cols, what="crba vs ID_δ columns")


@FEW
@given(systems())
def test_kinetic_energy_and_bias_terms(system):
    model, q, v, a, tau, fe = system
    H = mb.crba(model, q)
    arm = np.asarray(model.armature)
    # ½ q̇ᵀHq̇ = Σ ½ vᵢᵀIᵢvᵢ (the kinematics module) + the rotor energy ½ Σ armature·q̇²
    ke = mb.kinetic_energy(model, q, v) + 0.5 * np.sum(arm * v * v)
    assert abs(0.5 * v @ H @ v - ke) <= RTOL * ke
    zero = np.zeros(model.nv)
    np.testing.assert_array_equal(mb.bias_forces(model, q, v), mb.rnea(model, q, v, zero))
    np.testing.assert_array_equal(mb.bias_forces(model, q, v, f_ext=fe), mb.rnea(model, q, v, zero, f_ext=fe))
    np.testing.assert_array_equal(mb.gravity_forces(model, q), mb.rnea(model, q, zero, zero))
    # τ = H a + C exactly decomposes (Eq. 1.1), and external forces enter linearly
    assert_rel(mb.rnea(model, q, v, a), H @ a + mb.bias_forces(model, q, v), what="τ = Ha + C")
    assert_rel(mb.rnea(model, q, v, a, f_ext=fe) - mb.rnea(model, q, v, a),
               mb.rnea(model, q, zero, zero, f_ext=fe, gravity=False), what="f_ext linear")
    # C without gravity is quadratic in v: C(2v) = 4 C(v)
    c1 = mb.rnea(model, q, v, zero, gravity=False)
    assert_rel(mb.rnea(model, q, 2 * v, zero, gravity=False), 4 * c1, what="C quadratic in v")


@FEW
@given(systems())
def test_gravity_forces_are_the_gradient_of_the_potential(system):
    """g(q) = ∂V/∂q along the manifold: central differences of
    potential_energy with model.integrate, step h = 1e-5; truncation
    ~h²·V''' ≈ 1e-10 and round-off ~ε·|V|/h ≈ 1e-10·|V|, so 1e-7 of the
    larger of |g| and |V| is a safe bound."""
    model, q, *_ = system
    h = 1e-5
    g = mb.gravity_forces(model, q)
    grad = np.array([(mb.potential_energy(model, model.integrate(q, e, h))
                      - mb.potential_energy(model, model.integrate(q, e, -h))) / (2 * h) for e in np.eye(model.nv)])
    scale = max(np.abs(g).max(), abs(mb.potential_energy(model, q)), 1.0)
    assert np.abs(g - grad).max() <= 1e-7 * scale


@FEW
@given(systems())
def test_branch_induced_sparsity_and_expanded_parents(system):
    """H_ij = 0 exactly when neither coordinate is on the other's root path
    (§6.4); nonzero (generically) between coordinates of distinct joints on
    one path; dof_parents is Table 6.4's λ' (independent construction)."""
    model, q, *_ = system
    lam = dof_parents(model)
    np.testing.assert_array_equal(lam, model_expanded_parents(model))
    assert np.all(lam < np.arange(model.nv))
    anc = ancestors_dofs(model)
    joint_of = np.empty(model.nv, dtype=int)
    for j in model.joints[1:]:
        joint_of[j.v_slice] = j.index
    H = mb.crba(model, q)
    for i in range(model.nv):
        for j in range(model.nv):
            related = j in anc[i] or i in anc[j]
            if not related:
                assert H[i, j] == 0.0, (i, j)
            elif joint_of[i] != joint_of[j]:
                assert H[i, j] != 0.0, (i, j)


@FEW
@given(systems())
def test_inertia_factor(system):
    """H = LᵀDL with unit lower-triangular L, positive D, no fill-in (L is
    zero wherever H is zero, i.e. off the root paths), and solve / multiply
    agree with numpy."""
    model, q, v, a, tau, fe = system
    H = mb.crba(model, q)
    fac = InertiaFactor(model, H)
    L, D = fac.L, fac.D
    np.testing.assert_array_equal(np.diag(L), 1.0)
    np.testing.assert_array_equal(np.triu(L, 1), 0.0)
    assert np.all(D > 0)
    assert_rel(L.T @ np.diag(D) @ L, H, rtol=100 * model.nv * EPS * max(1.0, np.linalg.cond(L) ** 2),
               what="LᵀDL = H")
    # No fill-in is a statement about the branch-induced pattern: L_ij = 0 whenever H_ij = 0 because
    # the coordinates are on different branches. Inside one joint's block L is dense even where H has a
    # structural zero (e.g. ω_y–v_y of a free joint: m[c]× has a zero diagonal), which is not fill-in.
    anc = ancestors_dofs(model)
    joint_of = np.empty(model.nv, dtype=int)
    for jt in model.joints[1:]:
        joint_of[jt.v_slice] = jt.index
    for i in range(model.nv):
        for j in range(i):
            if j not in anc[i]:
                assert L[i, j] == 0.0, f"L nonzero off the root path at ({i}, {j})"
            if H[i, j] == 0.0 and joint_of[i] != joint_of[j]:
                assert L[i, j] == 0.0, f"fill-in at ({i}, {j})"
    tol = cond_tol(H)
    assert_rel(fac.solve(tau), np.linalg.solve(H, tau), rtol=tol, what="solve (vector)")
    B = np.column_stack([tau, a, v])
    assert_rel(fac.solve(B), np.linalg.solve(H, B), rtol=tol, what="solve (matrix)")
    assert_rel(fac.multiply(v, H), H @ v, rtol=100 * model.nv * EPS, what="multiply")
    # the inputs are not modified
    H2 = mb.crba(model, q)
    np.testing.assert_array_equal(H, H2)


@FEW
@given(systems())
def test_inverse_and_operational_space_inertia(system):
    model, q, v, a, tau, fe = system
    H = mb.crba(model, q)
    tol = cond_tol(H)
    assert_rel(mb.inverse_inertia(model, q), np.linalg.inv(H), rtol=tol, what="inverse_inertia")
    body = model.body_names[-1]
    J = np.vstack([mb.jacobian(model, q, body, "world"), mb.jacobian(model, q, model.body_names[1], "local")])
    rng = np.random.default_rng(0)
    for JJ in (J, rng.normal(size=(3, model.nv))):
        expect = JJ @ np.linalg.solve(H, JJ.T)
        assert_rel(mb.operational_space_inverse_inertia(model, q, JJ), expect, rtol=tol, what="J H⁻¹ Jᵀ")


def test_expanded_parent_array_book_example():
    """Table 6.4's example: λ = (0,1,1,2,2,3), joint 2 with 3 DoF, gives
    λ' = (0,1,2,3,1,4,4,5) — the oracle helper, then the library on that
    tree (which the builder renumbers depth-first)."""
    assert expanded_parents([0, 1, 1, 2, 2, 3], [1, 3, 1, 1, 1, 1]) == [0, 1, 2, 3, 1, 4, 4, 5]
    b = mb.ModelBuilder("table64")
    for k, (parent, joint) in enumerate([("world", "revolute"), ("b1", "spherical"), ("b1", "revolute"),
                                         ("b2", "revolute"), ("b2", "revolute"), ("b3", "revolute")], start=1):
        b.add_body(f"b{k}", parent, joint, mass=1.0, inertia=np.eye(3) * 0.1, com=(0.1, 0, 0))
    model = b.build()
    # depth-first numbering: b1, b2, b4, b5, b3, b6 → λ = (0,1,2,2,1,5), DoF (1,3,1,1,1,1)
    assert [model.body_names[i] for i in range(1, 7)] == ["b1", "b2", "b4", "b5", "b3", "b6"]
    expect = np.array(expanded_parents([0, 1, 2, 2, 1, 5], [1, 3, 1, 1, 1, 1])) - 1
    np.testing.assert_array_equal(expect, [-1, 0, 1, 2, 3, 3, 0, 6])
    np.testing.assert_array_equal(dof_parents(model), expect)
