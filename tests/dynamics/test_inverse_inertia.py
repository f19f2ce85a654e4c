"""``inverse_inertia``: H(q)⁻¹ by the ABA-based O(n²) recursion
(``dynamics/minv_kernels.py``), against Pinocchio's ``computeMinverse`` on
the example-robot-data robots, against ``numpy.linalg.inv(crba)`` on random
trees with every joint type, armature and bodies kept on fixed joints, and
its errors (a massless subtree) on every call path."""
import numpy as np
import pinocchio as pin
import pytest

import multibody as mb
from multibody.dynamics import kernels as K
from multibody.errors import InputError, SimulationError
from oracles import ROBOTS, Mapping, pin_model, random_tree, robot_path, to_pinocchio
from .helpers import RTOL, assert_rel, sym_upper, tree_with_fixed_bodies

EPS = np.finfo(float).eps


def inv_tol(H):
    """Relative tolerance of an inverse of H: 1e-9, or the round-off bound
    100·n·cond(H)·ε of a solve with H when that is smaller."""
    return min(1e-9, 100 * H.shape[0] * np.linalg.cond(H) * EPS)


def mat_to_pin(mp, M):
    """A multibody nv x nv matrix in Pinocchio's velocity order (rows and columns)."""
    return mp.v_to_pin_columns(np.swapaxes(mp.v_to_pin_columns(M), -1, -2))


def pin_states(pm, n, seed):
    """Configurations drawn by Pinocchio inside the joint limits (clipped to ±2)."""
    pin.seed(seed)
    lo = np.where(np.isfinite(pm.lowerPositionLimit), pm.lowerPositionLimit, -2.0).clip(-2, 2)
    hi = np.where(np.isfinite(pm.upperPositionLimit), pm.upperPositionLimit, 2.0).clip(-2, 2)
    return [pin.randomConfiguration(pm, lo, hi) for _ in range(n)]


# ------------------------------------------------------------------ Pinocchio
@pytest.mark.parametrize("name", ["ur5", "panda", "solo12", "talos"])
def test_against_pinocchio_compute_minverse(name):
    model = mb.load_urdf(robot_path(name), floating_base=ROBOTS[name][1])
    pm = pin_model(name)
    pd = pm.createData()
    mp = Mapping(model, pm)
    data = mb.Data(model)
    for qp in pin_states(pm, 5, seed=3):
        q = mp.q_from_pin(qp)
        expect = sym_upper(pin.computeMinverse(pm, pd, qp))  # Pinocchio fills the upper triangle only
        got = mb.inverse_inertia(model, q)
        np.testing.assert_array_equal(got, got.T)
        assert_rel(mat_to_pin(mp, got), expect, what=f"{name}: inverse_inertia")
        assert_rel(mat_to_pin(mp, mb.inverse_inertia(model, q, data)), expect, what=f"{name}: (data)")


def test_chain_against_pinocchio_with_armature():
    """A 40-link chain (the O(n²) case: every column loop runs over the rest
    of the chain) with rotor armature, against computeMinverse."""
    b = mb.ModelBuilder("chain40")
    rng = np.random.default_rng(4)
    parent = "world"
    for k in range(40):
        b.add_body(f"l{k}", parent, "revolute", placement=(np.eye(3), (0.0, 0.0, 0.1 if k else 0.0)),
                   axis=np.eye(3)[k % 3], joint_name=f"j{k}", mass=1.0, com=(0, 0, 0.05),
                   inertia=np.diag([1e-3, 1e-3, 2e-4]), armature=rng.uniform(0.0, 0.01, 1))
        parent = f"l{k}"
    model = b.build()
    pm = to_pinocchio(model)
    pm.armature = np.asarray(model.armature, dtype=float).copy()
    pd = pm.createData()
    for q in model.random_configuration(seed=5, size=3):
        H = mb.crba(model, q)
        expect = sym_upper(pin.computeMinverse(pm, pd, q))
        assert_rel(mb.inverse_inertia(model, q), expect, rtol=max(RTOL, inv_tol(H)), what="chain40")


# ---------------------------------------------------------------- random trees
def armatured(builder, seed):
    """Random armature (some exactly zero) on every moving joint."""
    rng = np.random.default_rng(seed)
    for body in builder._bodies.values():
        a = rng.uniform(0.0, 0.3, len(body.armature))
        body.armature = np.where(rng.random(len(a)) < 0.3, 0.0, a)
    return builder


def random_models():
    """Random trees with every joint type (planar with arbitrary axes), with
    and without a floating base, with armature, keeping two bodies on fixed
    joints; and trees whose fixed bodies carry moving children (fixed to the
    world at the root when not floating)."""
    out = []
    for seed in range(4):
        for floating in (False, True):
            b = armatured(random_tree(seed, 14, floating, pin_compatible=False, fixed=2), seed)
            out.append((f"random{seed}{'_floating' if floating else ''}", b.build(merge_fixed=False)))
    for seed, floating in ((31, True), (32, False)):
        out.append((f"fixed_bodies{seed}", tree_with_fixed_bodies(seed, floating=floating).build(merge_fixed=False)))
    return out


@pytest.mark.parametrize("name,model", random_models(), ids=lambda x: x if isinstance(x, str) else "")
def test_random_trees_against_numpy_inverse(name, model):
    assert any(j.nv == 0 for j in model.joints[1:])  # bodies on fixed joints are kept
    types = {j.type for j in model.joints[1:]}
    if name.startswith("random"):
        assert {"revolute", "prismatic", "helical", "cylindrical", "planar", "spherical", "translational",
                "universal", "fixed"} <= types
    data = mb.Data(model)
    for q in model.random_configuration(seed=11, size=4):
        H = mb.crba(model, q)
        expect = np.linalg.inv(H)
        tol = inv_tol(H)
        got = mb.inverse_inertia(model, q)
        np.testing.assert_array_equal(got, got.T)
        assert_rel(got, expect, rtol=tol, what=f"{name}: inverse_inertia")
        np.testing.assert_array_equal(mb.inverse_inertia(model, q, data), got)
        assert_rel(got @ H, np.eye(model.nv), rtol=tol, what=f"{name}: H⁻¹ H")
        # the same matrix as the previous LᵀDL-based kernel
        old = np.empty_like(got)
        assert K.minv_kernel(model._tree, model.dof_parent, q, data.poses, data.jac, data.inertia6, data.M,
                             old) == 0
        assert_rel(got, old, rtol=tol, what=f"{name}: vs LᵀDL inverse")


def test_subtrees_are_contiguous_coordinate_ranges():
    """The kernel's assumption: with the depth-first numbering, the
    coordinates of every subtree are one contiguous range starting at the
    subtree root's first coordinate."""
    for _, model in random_models():
        parents = model.parents
        for i in range(1, model.nbodies):
            sub, b = set(), None
            for k in range(i, model.nbodies):
                b, a = k, k
                while a > i:
                    a = int(parents[a])
                if a == i:
                    sub.update(range(model.joints[k].v_slice.start, model.joints[k].v_slice.stop))
            if sub:
                assert sub == set(range(model.joints[i].v_slice.start, max(sub) + 1))


def test_batch_matches_single_states():
    model = armatured(random_tree(7, 10, True, pin_compatible=False, fixed=2), 7).build(merge_fixed=False)
    Q = model.random_configuration(seed=2, size=4)
    out = mb.inverse_inertia(model, Q)
    assert out.shape == (4, model.nv, model.nv)
    for b in range(4):
        np.testing.assert_array_equal(out[b], mb.inverse_inertia(model, Q[b]))


def test_no_coordinates():
    b = mb.ModelBuilder("welded")
    b.add_body("a", "world", "fixed", mass=1.0, inertia=np.eye(3) * 0.1)
    model = b.build(merge_fixed=False)
    assert mb.inverse_inertia(model, np.zeros(0)).shape == (0, 0)


# ----------------------------------------------------------------------- errors
def massless_subtree(leaf_armature=None):
    """A massive arm carrying a massless two-body subtree (revolute, then spherical)."""
    b = mb.ModelBuilder("massless_subtree")
    b.add_body("arm", "world", "revolute", axis=(0, 1, 0), mass=2.0, com=(0.3, 0, 0),
               inertia=np.diag([0.01, 0.05, 0.05]))
    b.add_body("ghost1", "arm", "revolute", placement=(np.eye(3), (0.6, 0, 0)), axis=(0, 0, 1),
               joint_name="ghost_hinge")
    b.add_body("ghost2", "ghost1", "spherical", placement=(np.eye(3), (0.2, 0, 0)), joint_name="ghost_ball",
               armature=leaf_armature)
    return b.build()


@pytest.mark.parametrize("path", ["single", "data", "batch"])
def test_massless_subtree_raises_simulation_error(path):
    model = massless_subtree()
    q = model.random_configuration(seed=0)

    def call(model, q):
        if path == "single":
            return mb.inverse_inertia(model, q)
        if path == "data":
            return mb.inverse_inertia(model, q, mb.Data(model))
        return mb.inverse_inertia(model, np.tile(q, (3, 1)))
    # the deepest singular joint is named: the spherical leaf ...
    with pytest.raises(SimulationError, match="not positive definite.*ghost_ball"):
        call(model, q)
    # ... and, when a rotor inertia makes the leaf regular, the massless hinge above it
    model = massless_subtree(leaf_armature=np.full(3, 0.01))
    with pytest.raises(SimulationError, match="not positive definite.*ghost_hinge"):
        call(model, q)


def test_invalid_inputs():
    model = massless_subtree()
    data = mb.Data(model)
    q = model.random_configuration(seed=0)
    bad = q.copy()
    bad[0] = np.nan
    for d in (None, data):
        with pytest.raises(InputError, match="non-finite"):
            mb.inverse_inertia(model, bad, d)
        with pytest.raises(InputError):
            mb.inverse_inertia(model, q[:-1], d)
    qn = q.copy()
    qn[-4:] = (2.0, 0.0, 0.0, 0.0)  # the spherical joint's quaternion, not unit
    for d in (None, data):
        with pytest.raises(InputError, match="quaternion"):
            mb.inverse_inertia(model, qn, d)
