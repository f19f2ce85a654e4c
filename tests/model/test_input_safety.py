"""Every public function that takes arrays from a user refuses the wrong
ones with a library error (issue 10, memory-safe entries): wrong ranks,
empty arrays, wrong lengths, a batch given to a single-state function,
non-finite, complex, string, dict and ragged inputs. Compiled code must
never see an array it was not typed for: a wrong answer or a crash here
is the failure this test exists to catch. Runs compiled and, in the
suite's second pass, with NUMBA_DISABLE_JIT=1.

Each case first makes the valid call (it must succeed, so an error below
is about the argument, not the model), then replaces one argument at a
time."""
import inspect
import os

import numpy as np
import pytest

import multibody as mb

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ARM = "src/multibody/data/robots/mb_arm.urdf"


def floating_model():
    b = mb.ModelBuilder("floating")
    b.add_body("base", "world", "free", mass=2.0, inertia=np.diag([0.1, 0.2, 0.3]))
    b.add_body("l1", "base", "revolute", np.eye(4), axis=(0, 1, 0), mass=1.0, com=(0, 0, 0.2),
               inertia=np.diag([0.02, 0.02, 0.01]))
    b.add_body("l2", "l1", "spherical", np.eye(4), mass=0.5, com=(0, 0, 0.1), inertia=np.diag([0.01, 0.01, 0.005]))
    b.add_body("l3", "l2", "prismatic", np.eye(4), axis=(0, 0, 1), mass=0.3, inertia=np.diag([0.003, 0.003, 0.001]))
    return b.build()


@pytest.fixture(scope="module")
def models():
    return {"floating": floating_model(), "arm": mb.load_urdf(os.path.join(ROOT, ARM))}


def state(m, seed=0):
    rng = np.random.default_rng(seed)
    return m.random_configuration(seed=seed), rng.normal(size=m.nv), rng.normal(size=m.nv)


# name -> (model key, builder of (args, kwargs) from (m, q, v, a), indices of array arguments with their
# kind: "q" (nq), "v" (nv), "other"), whether a (1, n) batch is accepted
def _cases():
    return {
        "forward_kinematics": ("floating", lambda m, q, v, a: ([q], {}), {0: "q"}, True),
        "frame_placements": ("floating", lambda m, q, v, a: ([q], {}), {0: "q"}, True),
        "frame_pose": ("floating", lambda m, q, v, a: ([q, "l3"], {}), {0: "q"}, True),
        "jacobian": ("floating", lambda m, q, v, a: ([q, "l3", "world", np.array([0.1, 0, 0])], {}),
                     {0: "q", 3: "point"}, True),
        "joint_jacobians": ("floating", lambda m, q, v, a: ([q], {}), {0: "q"}, False),
        "body_motion": ("floating", lambda m, q, v, a: ([q, v, a], {}), {0: "q", 1: "v", 2: "v"}, True),
        "frame_velocity": ("floating", lambda m, q, v, a: ([q, v, "l2"], {}), {0: "q", 1: "v"}, True),
        "frame_acceleration": ("floating", lambda m, q, v, a: ([q, v, a, "l2"], {}), {0: "q", 1: "v", 2: "v"},
                               True),
        "jacobian_dot_v": ("floating", lambda m, q, v, a: ([q, v, "l2"], {}), {0: "q", 1: "v"}, True),
        "center_of_mass": ("floating", lambda m, q, v, a: ([q, v], {}), {0: "q", 1: "v"}, True),
        "com_jacobian": ("floating", lambda m, q, v, a: ([q], {}), {0: "q"}, True),
        "kinetic_energy": ("floating", lambda m, q, v, a: ([q, v], {}), {0: "q", 1: "v"}, True),
        "potential_energy": ("floating", lambda m, q, v, a: ([q], {}), {0: "q"}, True),
        "momentum": ("floating", lambda m, q, v, a: ([q, v], {}), {0: "q", 1: "v"}, True),
        "centroidal_momentum": ("floating", lambda m, q, v, a: ([q, v], {}), {0: "q", 1: "v"}, True),
        "centroidal_momentum_matrix": ("floating", lambda m, q, v, a: ([q], {}), {0: "q"}, True),
        "rnea": ("floating", lambda m, q, v, a: ([q, v, a], {}), {0: "q", 1: "v", 2: "v"}, True),
        "bias_forces": ("floating", lambda m, q, v, a: ([q, v], {}), {0: "q", 1: "v"}, True),
        "gravity_forces": ("floating", lambda m, q, v, a: ([q], {}), {0: "q"}, True),
        "crba": ("floating", lambda m, q, v, a: ([q], {}), {0: "q"}, True),
        "aba": ("floating", lambda m, q, v, a: ([q, v, a], {}), {0: "q", 1: "v", 2: "v"}, True),
        "forward_dynamics": ("floating", lambda m, q, v, a: ([q, v, a], {"method": "crba"}),
                             {0: "q", 1: "v", 2: "v"}, True),
        "inverse_inertia": ("floating", lambda m, q, v, a: ([q], {}), {0: "q"}, True),
        "kinetic_energy_gradient": ("arm", lambda m, q, v, a: ([q, v], {}), {0: "q", 1: "v"}, False),
        "regressor": ("floating", lambda m, q, v, a: ([q, v, a], {}), {0: "q", 1: "v", 2: "v"}, True),
        "floating_base_forward_dynamics": ("floating", lambda m, q, v, a: ([q, v, a], {}), {0: "q", 1: "v", 2: "v"},
                                           True),
        "floating_base_inverse_dynamics": ("floating", lambda m, q, v, a: ([q, v, a[6:]], {}),
                                           {0: "q", 1: "v", 2: "joints"}, True),
        "hybrid_dynamics": ("floating",
                            lambda m, q, v, a: ([q, v, a, a, np.arange(m.nv) < 3], {}),
                            {0: "q", 1: "v", 2: "given", 3: "given"}, True),
        "operational_space_inverse_inertia": ("floating", lambda m, q, v, a: ([q, np.ones((3, m.nv))], {}),
                                              {0: "q", 1: "J"}, False),
    }


CASES = _cases()


def optional(fn, pos):
    """True if argument ``pos`` (after the model) of ``fn`` defaults to None."""
    params = list(inspect.signature(fn).parameters.values())
    return params[pos + 1].default is None


def bad_values(x, batch_ok):
    """(label, value) pairs that must all be refused in place of the valid array ``x``."""
    out = [("0-d", np.float64(0.5)), ("empty", np.zeros(0)), ("too long", np.zeros(x.shape[-1] + 1)),
           ("3-d", np.zeros((1, 1) + x.shape)), ("empty batch", np.zeros((0,) + x.shape)),
           ("nan", np.where(np.arange(x.size).reshape(x.shape) == 0, np.nan, x)),
           ("inf", np.where(np.arange(x.size).reshape(x.shape) == x.size - 1, -np.inf, x)),
           ("complex", x.astype(complex) + 1e-3j), ("string", "0 1 2"), ("dict", {"q": x}),
           ("ragged", [[1.0, 2.0], [3.0]]), ("None", None), ("object", object())]
    if x.ndim == 1:
        out.append(("batch of 2 with a short row", [list(x), list(x[:-1])]))
        if not batch_ok:
            out.append(("batch of 1", x[None]))
    return out


@pytest.mark.parametrize("name", sorted(CASES))
def test_public_function_refuses_bad_arrays(models, name):
    key, build, arrays, batch_ok = CASES[name]
    m = models[key]
    fn = getattr(mb, name)
    args, kw = build(m, *state(m))
    fn(m, *args, **kw)  # the valid call works
    for pos, kind in arrays.items():
        for label, bad in bad_values(np.asarray(args[pos]), batch_ok):
            if kind == "given" and label in ("nan", "inf"):
                bad = np.full_like(args[pos], np.nan if label == "nan" else np.inf)  # unused entries may be
                # anything (hybrid_dynamics' docstring): make every entry non-finite, the used ones too
            if label == "None" and (optional(fn, pos) or kind == "given"):
                continue  # None is documented (a=None: zero acceleration; hybrid_dynamics: "None means zeros")
            trial = list(args)
            trial[pos] = bad
            with pytest.raises(mb.MultibodyError):
                fn(m, *trial, **kw)
                pytest.fail(f"{name}: argument {pos} ({kind}) given {label} was accepted")


@pytest.mark.parametrize("name", sorted(CASES))
def test_public_function_accepts_strided_and_integer_arrays(models, name):
    """Valid values in other layouts give the same result as C-contiguous float64 arrays."""
    key, build, arrays, batch_ok = CASES[name]
    m = models[key]
    fn = getattr(mb, name)
    args, kw = build(m, *state(m, 1))
    ref = fn(m, *args, **kw)
    for pos in arrays:
        x = np.asarray(args[pos])
        if x.ndim != 1 or x.dtype != np.float64:
            continue
        trial = list(args)
        strided = np.zeros(2 * x.size)
        strided[::2] = x
        trial[pos] = strided[::2]
        got = fn(m, *trial, **kw)
        for r, g in zip(*(t if isinstance(t, tuple) else (t,) for t in (ref, got))):
            np.testing.assert_array_equal(np.asarray(g), np.asarray(r))
        trial[pos] = list(x)
        got = fn(m, *trial, **kw)
        for r, g in zip(*(t if isinstance(t, tuple) else (t,) for t in (ref, got))):
            np.testing.assert_array_equal(np.asarray(g), np.asarray(r))


def test_pinocchio_argument_order_is_explained(models):
    m = models["floating"]
    q, v, a = state(m)
    d = mb.Data(m)
    with pytest.raises(mb.InputError, match="argument order"):
        mb.rnea(m, d, q, v, a)
    with pytest.raises(mb.InputError, match="data=data"):
        mb.jacobian(m, q, "l3", d)


def test_data_accepted_in_the_place_of_f_ext(models):
    m = models["floating"]
    q, v, a = state(m)
    d = mb.Data(m)
    tau = mb.rnea(m, q, v, a, d)
    assert tau is d.tau
    np.testing.assert_array_equal(tau, mb.rnea(m, q, v, a))
    assert mb.aba(m, q, v, tau, d) is d.ddq
    np.testing.assert_allclose(d.ddq, a, rtol=1e-9, atol=1e-9)


def test_model_methods_refuse_bad_arrays(models):
    m = models["floating"]
    q, v, _ = state(m)
    for call in (lambda x: m.integrate(x, v), lambda x: m.difference(q, x), lambda x: m.normalize(x),
                 lambda x: m.check_configuration(x)):
        for label, bad in bad_values(q, True):
            if label in ("nan", "inf") and call is not None:
                pass
            with pytest.raises(mb.MultibodyError):
                call(bad)
                pytest.fail(f"accepted {label}")
    for label, bad in bad_values(v, True):
        with pytest.raises(mb.MultibodyError):
            m.integrate(q, bad)
            pytest.fail(f"integrate accepted v = {label}")


def _finite(result):
    parts = result if isinstance(result, tuple) else (result,)
    return all(np.isfinite(np.asarray(p, dtype=float)).all() for p in parts)


@pytest.mark.parametrize("name", sorted(CASES))
def test_overflowing_results_are_reported(models, name):
    """Finite inputs so large that the result overflows (|v| = 1e200: v² is
    inf) give a library error, never a non-finite result. Checked with and
    without a workspace."""
    key, build, arrays, batch_ok = CASES[name]
    m = models[key]
    fn = getattr(mb, name)
    q, v, a = state(m, 2)
    q = q.copy()
    q[:3] = 1e300 if key == "floating" else q[:3]  # the free joint's position: poses at 1e300 m
    for huge in ({"v": 1e200}, {"q": 1e300}):
        qq, vv, aa = (q, v, a) if "q" in huge else (state(m, 2)[0], v * huge["v"], a * huge["v"])
        if "q" in huge and key != "floating":
            continue
        args, kw = build(m, qq, vv, aa)
        for extra in ({}, {"data": mb.Data(m)}) if "data" in inspect.signature(fn).parameters else ({},):
            try:
                result = fn(m, *args, **kw, **extra)
            except mb.MultibodyError:
                continue
            assert _finite(result), f"{name}({huge}, {list(extra)}) returned a non-finite result without an error"


def test_other_arguments_give_library_errors(models):
    """Frames, references, workspaces, seeds, sizes, step sizes, external
    forces and the model itself, given the wrong kind of value."""
    m = models["arm"]
    other = mb.load_urdf(os.path.join(ROOT, ARM))
    q, v = m.neutral(), np.zeros(m.nv)
    calls = {
        "frame list": lambda: mb.jacobian(m, q, [1]),
        "frame missing": lambda: mb.frame_pose(m, q, "no such frame"),
        "frame index out of range": lambda: mb.frame_pose(m, q, len(m.frames)),
        "reference list": lambda: mb.jacobian(m, q, "tool", ["world"]),
        "reference unknown": lambda: mb.jacobian(m, q, "tool", "global"),
        "Data of no model": lambda: mb.Data(object()),
        "data of another model": lambda: mb.rnea(m, q, v, v, data=mb.Data(other)),
        "data a string (rnea)": lambda: mb.rnea(m, q, v, v, data="x"),
        "data a string (crba)": lambda: mb.crba(m, q, data="x"),
        "data a string (fk)": lambda: mb.forward_kinematics(m, q, "x"),
        "data a string (jacobian)": lambda: mb.jacobian(m, q, "tool", data="x"),
        "data a string (frame_pose)": lambda: mb.frame_pose(m, q, "tool", data="x"),
        "data a string (aba)": lambda: mb.aba(m, q, v, v, data="x"),
        "seed a string": lambda: m.random_configuration(seed="x"),
        "size negative": lambda: m.random_configuration(size=-1),
        "size a string": lambda: m.random_configuration(size="3"),
        "dt a string": lambda: m.integrate(q, v, "0.1"),
        "dt nan": lambda: m.integrate(q, v, np.nan),
        "f_ext complex": lambda: mb.rnea(m, q, v, v, f_ext=np.zeros((m.nbodies, 6), complex)),
        "f_ext a string": lambda: mb.rnea(m, q, v, v, f_ext="abc"),
        "f_ext wrong shape": lambda: mb.rnea(m, q, v, v, f_ext=np.zeros(3)),
        "body name a list": lambda: m.body_id([1]),
        "model a string": lambda: mb.rnea("model", q, v, v),
        "model None": lambda: mb.forward_kinematics(None, q),
        "model None (center_of_mass)": lambda: mb.center_of_mass(None, q),
        "forward dynamics method": lambda: mb.forward_dynamics(m, q, v, v, method=3),
    }
    for label, call in calls.items():
        with pytest.raises(mb.MultibodyError):
            call()
            pytest.fail(f"{label} was accepted")


def test_scalars_are_not_one_vectors():
    """For a one-coordinate model a scalar q is a wrong rank, not a (1,) vector
    (np.ascontiguousarray turns 0-d arrays into 1-d ones: the check must not)."""
    b = mb.ModelBuilder("pendulum")
    b.add_body("l1", "world", "revolute", axis=(0, 1, 0), mass=1.0, com=(0, 0, -0.5), inertia=np.eye(3) * 0.01)
    m = b.build()
    one = np.zeros(1)
    for call in (lambda: mb.rnea(m, 0.5, one, one), lambda: mb.rnea(m, one, np.float64(0.0), one),
                 lambda: mb.forward_kinematics(m, np.array(0.5)), lambda: mb.crba(m, 0.5),
                 lambda: m.integrate(one, 0.1)):
        with pytest.raises(mb.InputError, match="shape"):
            call()
    np.testing.assert_allclose(mb.rnea(m, one, one, one), [0.0], atol=1e-15)  # at rest, hanging down


def test_force_element_and_builder_arguments_of_the_wrong_kind():
    """Strings, dicts, complex and non-finite values given to force elements,
    force laws and the ModelBuilder are ModelErrors naming the argument."""
    from multibody import forces as F
    m = mb.load_urdf(os.path.join(ROOT, ARM))
    eye = np.eye(3)
    calls = {
        "JointSpring stiffness": lambda: F.JointSpring("joint1", "a"),
        "JointSpring complex stiffness": lambda: F.JointSpring("joint1", 1j),
        "JointSpring rest": lambda: mb.Simulator(m, 1e-3, forces=[F.JointSpring("joint1", 1.0, rest="x")]),
        "JointDamper": lambda: F.JointDamper("joint1", "a"),
        "ExternalWrench str": lambda: F.ExternalWrench("tool", "abc"),
        "ExternalWrench dict": lambda: F.ExternalWrench("tool", {"a": 1}),
        "PointForce": lambda: F.PointForce("tool", "x"),
        "BodyDamping": lambda: F.BodyDamping("link1", "x"),
        "LinearLaw": lambda: F.LinearLaw("x"),
        "StrainLaw": lambda: F.StrainLaw(1.0, 1.0, "x"),
        "mass": lambda: mb.ModelBuilder().add_body("a", "world", "revolute", mass="x"),
        "inertia": lambda: mb.ModelBuilder().add_body("a", "world", "revolute", mass=1.0, inertia="x"),
        "placement": lambda: mb.ModelBuilder().add_body("a", "world", "revolute", "x", mass=1.0, inertia=eye),
        "com": lambda: mb.ModelBuilder().add_body("a", "world", "revolute", mass=1.0, inertia=eye, com=(1, 2)),
        "pitch": lambda: mb.ModelBuilder().add_body("a", "world", "helical", mass=1.0, inertia=eye, pitch="x"),
        "pitch nan": lambda: mb.ModelBuilder().add_body("a", "world", "helical", mass=1.0, inertia=eye,
                                                        pitch=np.nan),
        "axis": lambda: mb.ModelBuilder().add_body("a", "world", "revolute", mass=1.0, inertia=eye, axis="x"),
        "lower": lambda: mb.ModelBuilder().add_body("a", "world", "revolute", mass=1.0, inertia=eye, lower="x"),
        "gravity": lambda: mb.ModelBuilder("m", gravity="x"),
        "gravity nan": lambda: mb.ModelBuilder("m", gravity=(0, 0, np.nan)),
        "coupling multiplier": lambda: mb.ModelBuilder().add_coupling("a", "b", multiplier="x"),
    }
    for label, call in calls.items():
        with pytest.raises(mb.ModelError):
            call()
            pytest.fail(f"{label} was accepted")
