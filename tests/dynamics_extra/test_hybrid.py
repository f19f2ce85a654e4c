"""Hybrid dynamics (Featherstone §9.1–9.2, Table 9.3, per-coordinate
split): reductions to ABA (nothing prescribed) and RNEA (everything
prescribed), the partitioned dense solve of Eqs. 9.1–9.3 built from
Pinocchio's CRBA and RNEA, floating-base inverse dynamics as a special
case, batches, and bad input."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import multibody as mb
from multibody.dynamics import floating_base_inverse_dynamics, hybrid_dynamics
from multibody.dynamics import hybrid_dynamics as _hybrid
from .helpers import assert_rel, system

NAMES = ["tree_floating", "tree_fixed", "tree_floating_armature", "tree_fixed_armature", "tree_fixed_bodies",
         "talos", "solo12"]
N = 3


@pytest.fixture(scope="module", params=NAMES)
def sys_(request):
    return system(request.param)


def _dense_hybrid(s, qp, vp, mask, qdd, tau, fe):
    """Eqs. 9.1–9.3 by a dense partitioned solve with Pinocchio's H and C."""
    H = s.crba(qp)
    Cp = s.rnea(qp, vp, np.where(mask, qdd, 0.0), fe)  # C' = ID(q, q̇, Qᵀ[0; q̈2])
    f = ~mask
    out_qdd = np.where(mask, qdd, 0.0)
    out_qdd[f] = np.linalg.solve(H[np.ix_(f, f)], tau[f] - Cp[f])
    out_tau = Cp + H[:, f] @ out_qdd[f]
    out_tau[f] = tau[f]
    return out_qdd, out_tau


def test_nothing_prescribed_is_aba(sys_):
    model = sys_.model
    mask = np.zeros(model.nv, dtype=bool)
    for qp, vp, q, v, a, tau, fe in sys_.states(N, seed=1):
        qdd, t = hybrid_dynamics(model, q, v, None, tau, mask, f_ext=fe)
        assert_rel(qdd, mb.aba(model, q, v, tau, f_ext=fe), what="qdd vs aba")
        np.testing.assert_array_equal(t, tau)
        qdd, _ = hybrid_dynamics(model, q, v, np.full(model.nv, np.nan), tau, mask, gravity=False)
        assert_rel(qdd, mb.aba(model, q, v, tau, gravity=False), what="qdd vs aba, no gravity")


def test_everything_prescribed_is_rnea(sys_):
    model = sys_.model
    mask = np.ones(model.nv, dtype=bool)
    for qp, vp, q, v, a, tau, fe in sys_.states(N, seed=2):
        qdd, t = hybrid_dynamics(model, q, v, a, None, mask, f_ext=fe)
        assert_rel(t, mb.rnea(model, q, v, a, f_ext=fe), what="tau vs rnea")
        assert_rel(t, sys_.rnea(qp, vp, a, fe), what="tau vs Pinocchio rnea")
        np.testing.assert_array_equal(qdd, a)


def test_random_masks_against_pinocchio_partitioned_solve(sys_):
    model = sys_.model
    rng = np.random.default_rng(3)
    for qp, vp, q, v, a, tau, fe in sys_.states(N, seed=3):
        mask = rng.random(model.nv) < 0.5
        qdd, t = hybrid_dynamics(model, q, v, a, tau, mask, f_ext=fe)
        eq, et = _dense_hybrid(sys_, qp, vp, mask, a, tau, fe)
        assert_rel(qdd, eq, what="qdd vs dense Eq. 9.3")
        assert_rel(t, et, what="tau vs dense Eq. 9.3")
        # and the pair is consistent with the library's own inverse and forward dynamics
        assert_rel(mb.rnea(model, q, v, qdd, f_ext=fe), t, what="rnea(qdd) = tau")
        assert_rel(mb.aba(model, q, v, t, f_ext=fe), qdd, rtol=1e-8, what="aba(tau) = qdd")


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), name=st.sampled_from(["tree_floating_armature", "tree_fixed_armature",
                                                              "tree_fixed_bodies"]))
def test_property_hybrid_solves_the_partitioned_equation(seed, name):
    """For any mask and state: rnea(q̈) = τ and q̈, τ agree with the dense
    partitioned solve of Eq. 9.3 (Pinocchio's H and C)."""
    s = system(name)
    model = s.model
    rng = np.random.default_rng(seed)
    mask = rng.random(model.nv) < rng.uniform(0.0, 1.0)
    qp, vp, q, v, a, tau, fe = next(s.states(1, seed=seed))
    qdd, t = hybrid_dynamics(model, q, v, a, tau, mask, f_ext=fe)
    eq, et = _dense_hybrid(s, qp, vp, mask, a, tau, fe)
    assert_rel(qdd, eq, rtol=1e-8, what="qdd")
    assert_rel(t, et, rtol=1e-8, what="tau")


def test_per_joint_split_on_talos():
    """Table 9.3's per-joint split: the arms and torso follow prescribed
    trajectories, the legs and the floating base are free."""
    s = system("talos")
    model = s.model
    mask = np.zeros(model.nv, dtype=bool)
    for j in model.joints[1:]:
        if j.nv and not (j.name.startswith("leg") or j.type == "free"):
            mask[j.v_slice] = True
    assert 0 < mask.sum() < model.nv - 12
    for qp, vp, q, v, a, tau, fe in s.states(2, seed=4):
        qdd, t = hybrid_dynamics(model, q, v, a, tau, mask)
        eq, et = _dense_hybrid(s, qp, vp, mask, a, tau, None)
        assert_rel(qdd, eq, what="qdd")
        assert_rel(t, et, what="tau")


@pytest.mark.parametrize("name", ["tree_floating_armature", "tree_fixed_bodies", "talos", "solo12"])
def test_free_base_with_prescribed_joints_is_floating_base_inverse_dynamics(name):
    """IDfb (§9.5) is the hybrid problem with the base free (τ = 0) and every
    other coordinate prescribed."""
    s = system(name)
    model = s.model
    mask = np.ones(model.nv, dtype=bool)
    mask[:6] = False
    for qp, vp, q, v, a, tau, fe in s.states(N, seed=5):
        qdd, t = hybrid_dynamics(model, q, v, a, np.zeros(model.nv), mask, f_ext=fe)
        a0, tj = floating_base_inverse_dynamics(model, q, v, a[6:], f_ext=fe)
        assert_rel(qdd[:6], a0, what="base acceleration")
        assert_rel(t[6:], tj, what="joint forces")
        np.testing.assert_array_equal(t[:6], 0.0)


def test_partially_prescribed_multi_dof_joints():
    """Per-coordinate masks inside multi-DoF joints (free, spherical, planar,
    cylindrical, universal, translational): the free columns act as the
    joint's motion subspace."""
    s = system("tree_floating")
    model = s.model
    multi = [j for j in model.joints[1:] if j.nv > 1]
    assert {j.type for j in multi} >= {"free", "spherical", "planar", "cylindrical", "universal", "translational"}
    mask = np.zeros(model.nv, dtype=bool)
    for j in multi:
        mask[j.v_slice.start] = True  # first coordinate prescribed, the rest free
    mask[3:6] = ~mask[3:6]  # base: rotation about x and translation prescribed
    for qp, vp, q, v, a, tau, fe in s.states(N, seed=6):
        qdd, t = hybrid_dynamics(model, q, v, a, tau, mask, f_ext=fe)
        eq, et = _dense_hybrid(s, qp, vp, mask, a, tau, fe)
        assert_rel(qdd, eq, what="qdd")
        assert_rel(t, et, what="tau")


def test_batch_and_data():
    s = system("tree_floating_armature")
    model = s.model
    rng = np.random.default_rng(7)
    states = list(s.states(4, seed=7))
    Q = np.array([x[2] for x in states])
    V = np.array([x[3] for x in states])
    A = np.array([x[4] for x in states])
    T = np.array([x[5] for x in states])
    FE = np.array([x[6] for x in states])
    masks = rng.random((4, model.nv)) < 0.5
    qdd, tau = hybrid_dynamics(model, Q, V, A, T, masks, f_ext=FE)
    data = mb.Data(model)
    for b in range(4):
        q1, t1 = hybrid_dynamics(model, Q[b], V[b], A[b], T[b], masks[b], f_ext=FE[b], data=data)
        assert q1 is data.ddq and t1 is data.tau
        assert_rel(qdd[b], q1, rtol=1e-12, what="batch qdd")
        assert_rel(tau[b], t1, rtol=1e-12, what="batch tau")
    shared = hybrid_dynamics(model, Q, V, A, T, masks[0])  # one mask for the whole batch
    for b in range(4):
        q1, t1 = hybrid_dynamics(model, Q[b], V[b], A[b], T[b], masks[0])
        assert_rel(shared[0][b], q1, rtol=1e-12)
        assert_rel(shared[1][b], t1, rtol=1e-12)


def test_unused_entries_are_ignored():
    s = system("tree_fixed")
    model = s.model
    qp, vp, q, v, a, tau, fe = next(s.states(1, seed=8))
    mask = np.arange(model.nv) % 2 == 0
    ref = [x.copy() for x in hybrid_dynamics(model, q, v, a, tau, mask)]
    for data in (None, mb.Data(model)):  # the checked fast path too
        got = hybrid_dynamics(model, q, v, np.where(mask, a, np.nan), np.where(mask, np.inf, tau), mask, data=data)
        np.testing.assert_array_equal(got[0], ref[0])
        np.testing.assert_array_equal(got[1], ref[1])


@pytest.mark.parametrize("fast", [False, True], ids=["checked", "data_fast_path"])
def test_bad_input(fast):
    model = system("tree_floating").model
    q, v = model.neutral(), np.zeros(model.nv)
    z = np.zeros(model.nv)
    ok = np.zeros(model.nv, dtype=bool)
    data = mb.Data(model) if fast else None

    def hybrid_dynamics(*args, **kw):
        return _hybrid(*args, data=data, **kw)

    with pytest.raises(mb.InputError, match="prescribed has shape"):
        hybrid_dynamics(model, q, v, z, z, ok[:-1])
    with pytest.raises(mb.InputError, match="prescribed must be a boolean mask"):
        hybrid_dynamics(model, q, v, z, z, np.zeros(model.nv, dtype=int))
    with pytest.raises(mb.InputError, match="prescribed has shape"):
        hybrid_dynamics(model, np.array([q, q]), np.array([v, v]), None, None, np.zeros((3, model.nv), bool))
    with pytest.raises(mb.InputError, match="qdd_given has shape"):
        hybrid_dynamics(model, q, v, z[:-1], z, ok)
    with pytest.raises(mb.InputError, match="tau_given has shape"):
        hybrid_dynamics(model, q, v, z, np.zeros((2, model.nv)), ok)
    bad = z.copy()
    bad[4] = np.nan
    with pytest.raises(mb.InputError, match="tau_given has a non-finite entry at index 4"):
        hybrid_dynamics(model, q, v, z, bad, ok)
    with pytest.raises(mb.InputError, match="qdd_given has a non-finite entry at index 4"):
        hybrid_dynamics(model, q, v, bad, z, ~ok)
    with pytest.raises(mb.InputError, match="v has a non-finite entry"):
        hybrid_dynamics(model, q, bad, z, z, ok)
    qb = q.copy()
    qb[0] = np.inf
    with pytest.raises(mb.InputError, match="q has a non-finite entry"):
        hybrid_dynamics(model, qb, v, z, z, ok)
    with pytest.raises(mb.InputError, match="q has shape"):
        hybrid_dynamics(model, q[:-1], v, z, z, ok)
    qb = q.copy()
    qb[3] = 2.0  # the base quaternion is not unit
    with pytest.raises(mb.InputError, match="quaternion"):
        hybrid_dynamics(model, qb, v, z, z, ok)
    with pytest.raises(mb.InputError, match="f_ext has shape"):
        hybrid_dynamics(model, q, v, z, z, ok, f_ext=np.zeros((model.nbodies, 3)))


def test_massless_subtree_is_reported():
    b = mb.ModelBuilder("massless")
    b.add_body("a", "world", "revolute", axis=(0, 0, 1), mass=1.0, com=(0.1, 0, 0), inertia=np.eye(3) * 0.01)
    b.add_body("b", "a", "revolute", axis=(0, 0, 1), mass=0.0, com=(0, 0, 0), inertia=np.zeros((3, 3)),
               placement=(np.eye(3), (0.5, 0, 0)))
    model = b.build()
    q, z = model.neutral(), np.zeros(model.nv)
    for data in (None, mb.Data(model)):
        with pytest.raises(mb.SimulationError, match="'b'"):
            hybrid_dynamics(model, q, z, z, z, np.array([True, False]), data=data)
    # prescribing the massless joint's acceleration removes the singularity
    qdd, tau = hybrid_dynamics(model, q, z, z, z, np.array([False, True]))
    assert np.isfinite(qdd).all() and tau[1] == 0.0
