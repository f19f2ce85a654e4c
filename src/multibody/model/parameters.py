"""Named physical parameters of a :class:`~multibody.model.model.Model`:
read them with :meth:`Model.parameters`, vary them with
:meth:`Model.with_params` — a new model, validated, without rebuilding
the tree (the base of parameter sweeps, batches and identification).

Names (``<body>`` and ``<joint>`` are the model's body and joint names):

=========================  ==========  ==============================================
name                       value       meaning (units; frame)
=========================  ==========  ==============================================
``<body>.mass``            scalar      mass (kg)
``<body>.com``             (3,)        centre of mass (m; body frame)
``<body>.inertia``         (3, 3)      rotational inertia about the centre of mass
                                       (kg m²; body axes); 3 principal moments
                                       are accepted for a diagonal one
``<joint>.damping``        nv          viscous damping (N m s/rad or N s/m)
``<joint>.friction``       nv          Coulomb friction (N m or N)
``<joint>.armature``       nv          rotor inertia added to M's diagonal
                                       (kg m² or kg)
``<joint>.stiffness``      nv          joint-spring stiffness (N m/rad or N/m)
``<joint>.spring_reference`` nq        the spring's rest coordinates (rad or m;
                                       unit quaternions for spherical/free)
``<joint>.lower``          nq          lower position limit (rad or m; -inf: none)
``<joint>.upper``          nq          upper position limit (rad or m; +inf: none)
``<joint>.velocity_limit`` nv          velocity limit (rad/s or m/s; inf: none)
``<joint>.effort_limit``   nv          effort limit (N m or N; inf: none)
``gravity``                (3,)        gravity acceleration (m/s²; world frame)
=========================  ==========  ==============================================

A joint value is a float for a joint with one coordinate (revolute,
prismatic, helical), else a vector; a scalar given for a multi-coordinate
joint applies to each coordinate (as in :meth:`ModelBuilder.add_body`,
whose keyword names these are). Joints without coordinates (fixed) have no
joint parameters; spherical joints have no ``lower``/``upper`` (quaternion
coordinates carry no limits) and a free joint's limits apply to its
translation only (its quaternion entries stay ±inf). The world (body 0)
has no parameters: links merged into it are static. A body's inertial
values are those of the body as the model holds it, i.e. with the links
merged into it through fixed joints.

Force elements (:mod:`multibody.forces`) and controllers are not part of
the model: they are plain objects built with their parameters (a spring's
stiffness, a muscle's maximum force, a PD gain), so a variant of one is a
new element, e.g. ``LinearSpring(..., stiffness=k)`` per value of ``k``,
passed to the simulator with the model.
"""
import difflib
import threading

import numpy as np

from ..errors import InputError, ModelError
from ..spatial.spatial import principal_moments
from .builder import (_per_dof, _spring_reference, check_limits, check_nonnegative, mass_properties,
                      pack_inertias)
from .checks import as_float_array
from .joints import C_ARMATURE, C_GRAVITY

BODY_PARAMETERS = ("mass", "com", "inertia")
JOINT_PARAMETERS = ("damping", "friction", "armature", "stiffness", "spring_reference", "lower", "upper",
                    "velocity_limit", "effort_limit")
# the Model attribute holding each joint parameter, and whether it is indexed by q (else by v)
_JOINT_ARRAYS = {"damping": ("damping", False), "friction": ("friction", False),
                 "armature": ("armature", False), "stiffness": ("stiffness", False),
                 "spring_reference": ("spring_reference", True), "lower": ("lower_limit", True),
                 "upper": ("upper_limit", True), "velocity_limit": ("velocity_limit", False),
                 "effort_limit": ("effort_limit", False)}
# joint parameters that must be finite (limits may be infinite: no limit)
_FINITE = frozenset(("damping", "friction", "armature", "stiffness"))

_BODY, _JOINT, _GRAVITY = 0, 1, 2
# the private attributes Model.__init__ sets (structure and names, which with_params keeps) and the
# caches of this module; tests/model/test_parameters.py checks that the list is complete
_MODEL_PRIVATE = frozenset(("_tree", "_workspaces", "_quat_joints", "_body_index", "_joint_index", "_frame_index",
                            "_frame_lookup", "_parameter_index", "_inertia_moments"))


class _Index:
    """Where each parameter of a model lives: ``entries[name] = (kind,
    body or joint index, parameter, slice into the q or v array)``. It
    depends only on the model's structure, which :meth:`Model.with_params`
    keeps, so the variants of a model share their original's index."""

    def __init__(self, model):
        entries = {}
        for i in range(1, model.nbodies):
            b = model.body_names[i]
            for p in BODY_PARAMETERS:
                entries[f"{b}.{p}"] = (_BODY, i, p, None)
        for j in model.joints[1:]:
            if j.nv == 0:
                continue
            for p in JOINT_PARAMETERS:
                if p in ("lower", "upper") and j.type == "spherical":
                    continue
                entries[f"{j.name}.{p}"] = (_JOINT, j.index, p, j.q_slice if _JOINT_ARRAYS[p][1] else j.v_slice)
        entries["gravity"] = (_GRAVITY, 0, "gravity", None)
        self.entries = entries
        self.names = tuple(entries)


_INDEX_LOCK = threading.Lock()


def index(model):
    """The model's :class:`_Index` (built on first use, then kept on the model)."""
    idx = model.__dict__.get("_parameter_index")
    if idx is None:
        with _INDEX_LOCK:
            idx = model.__dict__.get("_parameter_index")
            if idx is None:
                idx = model.__dict__["_parameter_index"] = _Index(model)
    return idx


def _moments(model):
    """The ascending principal moments (nb, 3) of the model's body inertias
    (computed in one batch on first use, then kept on the model)."""
    lam = model.__dict__.get("_inertia_moments")
    if lam is None:
        lam = principal_moments(model.body_inertia)[0]
        lam.setflags(write=False)
        model.__dict__["_inertia_moments"] = lam
    return lam


def parameter_names(model):
    """The names of the model's parameters, in a fixed order: per body
    (mass, com, inertia), per joint with coordinates (see the module
    docstring), then ``gravity``."""
    return index(model).names


def _value(model, entry):
    kind, i, p, sl = entry
    if kind == _BODY:
        a = {"mass": model.body_mass, "com": model.body_com, "inertia": model.body_inertia}[p][i]
        return float(a) if p == "mass" else a.copy()
    if kind == _GRAVITY:
        return model.gravity.copy()
    a = getattr(model, _JOINT_ARRAYS[p][0])[sl]
    return float(a[0]) if a.shape[0] == 1 else a.copy()


def parameters(model):
    """Every parameter of ``model`` as a dict name -> value (floats and
    copied arrays; names, units and frames in the module docstring)."""
    idx = index(model)
    return {name: _value(model, e) for name, e in idx.entries.items()}


def _unknown(model, name, idx):
    if not isinstance(name, str):
        return InputError(f"with_params: parameter names are strings such as 'link1.mass', got {name!r}")
    close = difflib.get_close_matches(name, idx.names, n=3, cutoff=0.6)
    owner, _, suffix = name.rpartition(".")
    hint = ""
    if close:
        hint = f"; did you mean {', '.join(repr(c) for c in close)}?"
    elif owner in model._body_index or owner in model._joint_index:
        valid = [s for s in BODY_PARAMETERS + JOINT_PARAMETERS if f"{owner}.{s}" in idx.entries]
        hint = f"; '{owner}' has the parameters {', '.join(valid)}" if valid else f"; '{owner}' has no parameters"
    return InputError(f"model '{model.name}' has no parameter {name!r}{hint} (model.parameter_names lists them)")


def _input_error(name, e):
    return InputError(f"parameter '{name}': {e}")


def _joint_value(model, name, joint, p, value):
    """``value`` of the joint parameter ``name`` (parameter ``p`` of
    ``joint``) as a validated float64 array of the joint's nq or nv
    coordinates; raises :class:`InputError` naming the parameter."""
    what = f"parameter '{name}'"
    try:
        if p == "spring_reference":
            a = _spring_reference(value, joint.type, joint.nq, joint.name)
        else:
            a = _per_dof(value, joint.nq if _JOINT_ARRAYS[p][1] else joint.nv, what, 0.0)
    except ModelError as e:
        raise _input_error(name, e) from None
    if np.isnan(a).any() or (p in _FINITE and not np.isfinite(a).all()):
        raise InputError(f"{what} must be {'finite' if p in _FINITE else 'a number (not NaN)'}, got {a}")
    if p in ("lower", "upper"):
        if joint.type == "free":  # quaternion coordinates carry no limits (as ModelBuilder.add_body)
            a[3:] = -np.inf if p == "lower" else np.inf
        if (a == (np.inf if p == "lower" else -np.inf)).any():
            raise InputError(f"{what}: a {p} limit of {a[0] if a.size == 1 else a} excludes every position")
    elif p != "spring_reference":
        try:
            check_nonnegative(joint.name, p, a)
        except ModelError as e:
            raise _input_error(name, e) from None
    return a


def _check_limits(model, joint, lower, upper, changed):
    try:
        check_limits(joint.name, lower[joint.q_slice], upper[joint.q_slice])
    except ModelError as e:
        given = [f"'{joint.name}.{p}'" for p in ("lower", "upper") if p in changed]
        raise InputError(f"parameter{'s' if len(given) > 1 else ''} {', '.join(given)}: {e}") from None


# a one-coordinate joint value of one of these types is written directly and checked in bulk
_SCALAR_TYPES = (float, int, np.float64)


def with_params(model, params):
    """A new :class:`Model` equal to ``model`` except for the parameters in
    ``params`` (a mapping name -> value; names, units and frames in the
    module docstring); ``model`` itself is unchanged.

    The result is the model a :class:`ModelBuilder` would build with those
    values (for inertial values: of the bodies as the model holds them,
    fixed-joint links merged in): every array holding a changed value is
    replaced, the packed table ``tree`` included (m, m c and the inertia
    about the body origin; armature; gravity); unchanged arrays are shared
    (they are read-only). Values are validated as the builder validates
    them: the mass, centre of mass and inertia of every body one of whose
    inertial parameters is set, together, by
    :func:`~multibody.spatial.spatial.check_inertia` (mass > 0, inertia
    symmetric positive definite satisfying the triangle inequality; mass 0
    with zero inertia is a massless body) — so a body loaded with a
    non-physical inertia (``load_urdf(inertia="warn")``) must be given a
    physical one when its mass or centre of mass is changed; damping,
    friction, armature, stiffness finite and non-negative; velocity and
    effort limits non-negative (inf: none); lower <= upper; spring
    references finite with unit quaternions; gravity a finite 3-vector.
    Raises :class:`~multibody.errors.InputError` naming the parameter for an
    unknown name (with the closest names), a wrong shape or type, a
    non-finite or non-physical value.
    """
    if not hasattr(params, "items"):
        raise InputError(f"with_params takes a mapping name -> value (e.g. {{'link1.mass': 2.0}}), "
                         f"got {type(params).__name__}")
    idx = index(model)
    entries = idx.entries
    src = model.__dict__
    joints = model.joints
    copies = {}  # model attribute -> writable copy (made on first write)
    bodies = {}  # body index -> {parameter: (name, value)}
    touched = {}  # joint array attribute -> [(name, joint index, parameter)]
    for name, value in params.items():
        try:
            kind, i, p, sl = entries[name]
        except (KeyError, TypeError):
            raise _unknown(model, name, idx) from None
        if value is None:  # (the builder reads None as "the default": here it would be a silent reset)
            raise InputError(f"parameter '{name}': got None; give a value")
        if kind == _JOINT:
            attr = _JOINT_ARRAYS[p][0]
            a = copies.get(attr)
            if a is None:
                a = copies[attr] = src[attr].copy()
            if sl.stop - sl.start == 1 and type(value) in _SCALAR_TYPES:
                a[sl.start] = value  # checked in bulk below: ~20x cheaper than one numpy check per value
            else:
                a[sl] = _joint_value(model, name, joints[i], p, value)
            touched.setdefault(attr, []).append((name, i, p))
        elif kind == _BODY:
            bodies.setdefault(i, {})[p] = (name, value)
        else:
            try:
                g = as_float_array(value, "gravity")
            except InputError as e:
                raise _input_error(name, e) from None
            if g.shape != (3,) or not np.isfinite(g).all():
                raise InputError(f"parameter 'gravity': expected a finite 3-vector (m/s², world frame), "
                                 f"got {value!r}")
            copies["gravity"] = g.copy()

    # joint values: one check per array; the per-value checks only to name the culprit
    for attr, given in touched.items():
        a = copies[attr]
        if attr in ("damping", "friction", "armature", "stiffness"):
            ok = np.isfinite(a).all() and (a >= 0).all()
        elif attr in ("velocity_limit", "effort_limit"):
            ok = (a >= 0).all()  # (False for NaN; inf is no limit)
        elif attr == "spring_reference":
            ok = np.isfinite(a).all()
        else:
            ok = not np.isnan(a).any()
        if not ok:
            for name, i, p in given:
                j = joints[i]
                _joint_value(model, name, j, p, a[j.q_slice if _JOINT_ARRAYS[p][1] else j.v_slice].copy())
    if "lower_limit" in copies or "upper_limit" in copies:
        lo, hi = copies.get("lower_limit", src["lower_limit"]), copies.get("upper_limit", src["upper_limit"])
        if not ((lo <= hi).all() and (lo < np.inf).all() and (hi > -np.inf).all()):
            changed = {}
            for attr in ("lower_limit", "upper_limit"):
                for name, i, p in touched.get(attr, ()):
                    changed.setdefault(i, set()).add(p)
            for i, ps in changed.items():
                j = joints[i]
                for p in ps:
                    _joint_value(model, f"{j.name}.{p}", j, p,
                                 (lo if p == "lower" else hi)[j.q_slice].copy())
                _check_limits(model, j, lo, hi, ps)

    tree = src["_tree"].copy()
    if bodies:
        mass, com, inertia = (copies.setdefault(k, src[k].copy()) for k in ("body_mass", "body_com", "body_inertia"))
        todo, batch = [], []
        for i, given in bodies.items():
            m = given["mass"][1] if "mass" in given else mass[i]
            c = given["com"][1] if "com" in given else com[i]
            I = given["inertia"][1] if "inertia" in given else inertia[i]
            k = None
            if "inertia" in given:  # for the batched principal moments; mass_properties checks it
                try:
                    Ia = as_float_array(I, "inertia")
                except InputError:
                    Ia = None
                else:
                    if Ia.shape == (3,):
                        Ia = np.diag(Ia)
                    if Ia.shape != (3, 3) or not np.isfinite(Ia).all():
                        Ia = None
                if Ia is not None:
                    k = len(batch)
                    batch.append(Ia)
            todo.append((i, given, m, c, I, k))
        # one batched eigen-decomposition for the new inertias (one per body cost 25 us each); the
        # moments of unchanged inertias are kept from the original model
        moments = principal_moments(np.array(batch))[0] if batch else None
        known = _moments(model)
        if batch:
            known = copies["_inertia_moments"] = known.copy()
        for i, given, m, c, I, k in todo:
            if k is not None:
                known[i] = moments[k]
            try:
                m, c, I = mass_properties(model.body_names[i], m, c, I, moments=known[i] if k is not None or
                                          "inertia" not in given else None)
            except ModelError as e:
                names = [n for n, _ in given.values()]
                raise InputError(f"parameter{'s' if len(names) > 1 else ''} {', '.join(map(repr, names))}: "
                                 f"{e}") from None
            mass[i], com[i], inertia[i] = m, c, I
        rows = sorted(bodies)
        bad = pack_inertias(tree, mass, com, inertia, rows)
        if bad.any():
            i = rows[int(np.argmax(bad))]
            raise InputError(f"parameters of body '{model.body_names[i]}': its inertia about the body origin "
                             f"overflows (mass {mass[i]!r}, centre of mass {com[i].tolist()})")
    if "armature" in copies:
        arm = copies["armature"]
        for name, i, p in touched["armature"]:
            j = joints[i]
            tree[i, C_ARMATURE:C_ARMATURE + j.nv] = arm[j.v_slice]
    if "gravity" in copies:
        tree[0, C_GRAVITY:C_GRAVITY + 3] = copies["gravity"]

    # Private attributes other than the Model's own are caches derived from the values (a later
    # layer's tables, ...): dropped, so that no variant inherits its original's.
    new = {k: v for k, v in src.items() if k[0] != "_" or k in _MODEL_PRIVATE}
    for attr, a in copies.items():
        a.setflags(write=False)
        new[attr] = a
    new["_tree"] = tree
    view = tree.view()
    view.setflags(write=False)
    new["tree"] = view
    new["_workspaces"] = threading.local()  # a new table: workspaces of the original point at the old one
    out = object.__new__(type(model))
    out.__dict__.update(new)
    return out
