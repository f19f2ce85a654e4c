"""The immutable :class:`Model`: a kinematic tree stored as flat arrays that
compiled kernels read directly, plus the names and metadata users need.

Bodies are numbered regularly (Featherstone §4.1.2): body 0 is the fixed
world, every body's parent has a smaller index, and joint ``i`` moves body
``i`` relative to ``parent[i]`` (``model.joints[0]`` is the pseudo-joint
"universe", as in Pinocchio).
"""
from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass, field

from typing import Any

import numpy as np

from .._typing import Array, ArrayLike
from ..errors import InputError
from . import configuration as _cfg
from .checks import as_vector, check_quaternions, finite_result, real_number
from .geometry import CollisionPair, Geometry  # noqa: F401  (re-exported: multibody.model.model.Geometry)
from .joints import C_NQ, C_NV, C_PARENT, C_Q, C_TYPE, C_V, FREE, JOINT_TYPE_NAMES, SPHERICAL


@dataclass(frozen=True)
class JointInfo:
    """A joint of the tree: it moves body ``child`` relative to body ``parent``."""
    index: int
    name: str
    type: str
    parent: int
    child: int
    q_slice: slice
    v_slice: slice
    axis: tuple = (0.0, 0.0, 1.0)

    @property
    def nq(self):
        return self.q_slice.stop - self.q_slice.start

    @property
    def nv(self):
        return self.v_slice.stop - self.v_slice.start


@dataclass(frozen=True)
class FrameInfo:
    """A named frame rigidly attached to ``body`` at ``placement`` (4x4 pose in
    the body frame). Kinds: "body" (the body's own frame), "fixed" (a link
    merged through a fixed joint), "joint" (a joint frame), "user"."""
    index: int
    name: str
    body: int
    placement: np.ndarray
    kind: str = "user"


@dataclass(frozen=True)
class Coupling:
    """A linear coupling ``q[joint] = multiplier · q[mimicked] + offset``
    (URDF mimic, gears); enforced by the constraint solvers of a later issue."""
    joint: str
    mimicked: str
    multiplier: float = 1.0
    offset: float = 0.0


LOOP_JOINT_TYPES = ("fixed", "revolute", "prismatic", "helical", "cylindrical", "planar", "spherical", "universal",
                    "translational", "free")


@dataclass(frozen=True)
class LoopJoint:
    """A joint of type ``joint`` closing a kinematic loop between bodies
    ``body_a`` and ``body_b`` (either may be the world). Its frames are
    ``placement_a`` (4x4) in A and ``placement_b`` in B; it leaves free the
    motion of frame B relative to frame A along/about the unit ``axis``
    (joint-frame coordinates; revolute, prismatic, cylindrical: the axis;
    planar: the plane normal; universal: the first axis, on A, and
    ``axis2`` the second, on B; helical: the screw axis, with ``pitch`` in
    m/rad). The loop is closed when frame B coincides with frame A up to
    that free motion (Featherstone §8.1)."""
    name: str
    body_a: str
    body_b: str
    joint: str
    placement_a: np.ndarray
    placement_b: np.ndarray
    axis: np.ndarray
    axis2: np.ndarray
    pitch: float = 0.0


@dataclass(frozen=True)
class EqualityConstraint:
    """An equality constraint recorded from a model file (MJCF connect, weld,
    joint, ...): ``body1``/``body2`` name the objects of type ``objtype``
    ("body", "site", "joint", ...; body2 None for the world or no second
    joint) and ``data`` is MuJoCo's ``eq_data`` (connect: anchor in body1,
    anchor in body2; weld: anchor in body2, the same point in body1, the
    quaternion of body2 in body1, torque scale; joint: polynomial
    coefficients)."""
    kind: str
    name: str
    body1: str | None = None
    body2: str | None = None
    data: np.ndarray = field(default_factory=lambda: np.zeros(0))
    objtype: str = "body"


@dataclass(frozen=True)
class TendonSpec:
    """A tendon declared by a model file (MJCF ``<tendon>``): ``kind``
    "fixed" (``joints``: ``((joint name, coefficient), ...)``, length
    ``Σ c q``) or "spatial" (``points``: ``((frame name, (x, y, z)), ...)``,
    via points in frame coordinates); its passive ``stiffness`` (N/m),
    ``damping`` (N·s/m) and ``spring_length`` (low, high) (m; MuJoCo's
    ``springlength``, a dead band when low < high).
    :func:`multibody.forces.actuators.tendon_transmission` makes its
    transmission."""
    name: str
    kind: str
    joints: tuple = ()
    points: tuple = ()
    stiffness: float = 0.0
    damping: float = 0.0
    spring_length: tuple = (0.0, 0.0)


@dataclass(frozen=True)
class ActuatorSpec:
    """An actuator declared by a model file (MJCF ``<actuator>``: every
    shortcut compiled by MuJoCo to its general actuator): the
    ``transmission`` kind ("joint" or "tendon") and its ``target`` (a joint
    or tendon name), ``gear``, MuJoCo's ``dyntype``, ``gaintype`` and
    ``biastype`` names with their parameter tuples, ``ctrlrange``,
    ``forcerange`` and ``actrange`` ((low, high), or None when not
    limited), ``actearly`` and ``lengthrange``.
    :func:`multibody.forces.actuators.actuators_from_model` makes the
    :class:`~multibody.forces.actuators.Actuator` objects."""
    name: str
    transmission: str
    target: str
    gear: float = 1.0
    dyntype: str = "none"
    dynprm: tuple = (1.0,)
    gaintype: str = "fixed"
    gainprm: tuple = (1.0,)
    biastype: str = "none"
    biasprm: tuple = ()
    ctrlrange: tuple | None = None
    forcerange: tuple | None = None
    actrange: tuple | None = None
    actearly: bool = False
    lengthrange: tuple | None = None


def _readonly(a):
    a = np.ascontiguousarray(a)
    a.setflags(write=False)
    return a


class ReadOnlyMapping(Mapping):
    """A read-only dict (``model.reference_postures``): it pickles, unlike
    ``types.MappingProxyType``."""

    def __init__(self, items=()):
        self._d = dict(items)

    def __getitem__(self, key):
        return self._d[key]

    def __iter__(self):
        return iter(self._d)

    def __len__(self):
        return len(self._d)

    def __repr__(self):
        return f"ReadOnlyMapping({self._d!r})"


class Model:
    """A kinematic tree with its inertias, limits and geometry.

    Built by :class:`~multibody.ModelBuilder` or a loader; never modified
    afterwards (its arrays are read-only). Sizes: ``nq`` configuration
    coordinates and ``nv`` velocity coordinates (``nq != nv`` with quaternion
    joints), ``nbodies`` bodies including the world (index 0).

    Contact geometry (docs/collision.md): ``collision_geometries`` and
    ``visual_geometries`` (tuples of :class:`Geometry`), ``collision_pairs``
    (explicit :class:`CollisionPair`), ``excluded_link_pairs`` (link-name
    pairs that never collide automatically), ``filter_parent`` (MuJoCo's
    parent filter, default True) with ``collision_parent`` (nbodies,: the
    body each body counts as a child of for it; -1 for the world),
    ``skipped_geometries`` ((Geometry, reason) left out of collision), and
    ``reference_postures`` (name -> q, read-only; from an SRDF).

    What a model file declares for the simulator (docs/actuators.md):
    ``actuators`` (tuple of :class:`ActuatorSpec`) and ``tendons`` (tuple
    of :class:`TendonSpec`); empty for models built in code.

    Parameters
    ----------
    name : str
        The model's name.
    tree : array_like
        The model table, one row per body (world first), columns as
        :mod:`multibody.model.joints` lays them out (``C_*``): joint type,
        parent, coordinate offsets, placement, axes, packed inertia.
    body_names : sequence of str
        The nbodies body names (``"world"`` first).
    joint_names : sequence of str
        The nbodies joint names (``"universe"`` first).
    joint_axes : sequence of tuple of float
        Each joint's axis (3,) in its frame (nbodies rows).
    body_mass : array_like
        Masses (nbodies,) (kg).
    body_com : array_like
        Centres of mass (nbodies, 3) in the body frames (m).
    body_inertia : array_like
        Rotational inertias (nbodies, 3, 3) about the centres of mass, body
        axes (kg·m²).
    lower, upper : array_like
        Position limits (nq,) (rad or m; ±inf: none).
    velocity_limit : array_like
        Velocity limits (nv,) (rad/s or m/s).
    effort_limit : array_like
        Effort limits (nv,) (N·m or N).
    damping : array_like
        Viscous joint damping (nv,) (N·m·s/rad or N·s/m).
    friction : array_like
        Joint friction (nv,) (N·m or N).
    armature : array_like
        Rotor inertia added to the diagonal of H (nv,) (kg·m² or kg).
    frames : sequence of FrameInfo
        The named frames (every body's own frame among them).
    collision_geometries, visual_geometries : sequence of Geometry
        Contact and display geometry.
    gravity : array_like
        Gravity (3,) in world coordinates (m/s²).
    couplings : sequence of Coupling
        Linear joint couplings (URDF mimic, gears).
    equalities : sequence of EqualityConstraint
        Equality constraints recorded from a model file.
    loop_joints : sequence of LoopJoint
        Joints closing kinematic loops.
    stiffness : array_like, optional
        Joint spring stiffness (nv,) (N·m/rad or N/m); default zero.
    spring_reference : array_like, optional
        The springs' rest configuration (nq,); default zero coordinates,
        identity quaternions.
    collision_pairs : sequence of CollisionPair
        Explicit collision pairs.
    excluded_link_pairs : sequence of tuple of str
        Link-name pairs that never collide automatically.
    filter_parent : bool
        MuJoCo's parent filter (default True).
    collision_parent : array_like, optional
        (nbodies,) the body each body counts as a child of for the parent
        filter (-1: the world); default the tree's parents.
    skipped_geometries : sequence of tuple
        (Geometry, reason) pairs left out of collision.
    reference_postures : Mapping[str, array_like], optional
        Named configurations (nq,) (from an SRDF).
    actuators : sequence of ActuatorSpec
        The actuators a model file declares.
    tendons : sequence of TendonSpec
        The tendons a model file declares.
    """

    def __init__(self, *, name, tree, body_names, joint_names, joint_axes, body_mass, body_com,
                 body_inertia, lower, upper, velocity_limit, effort_limit, damping, friction, armature,
                 frames, collision_geometries, visual_geometries, gravity, couplings=(), equalities=(),
                 loop_joints=(), stiffness=None, spring_reference=None, collision_pairs=(),
                 excluded_link_pairs=(), filter_parent=True, collision_parent=None, skipped_geometries=(),
                 reference_postures=None, actuators=(), tendons=()):
        self.name = name
        self._workspaces = threading.local()  # per-thread Data of plain calls (model.data.workspace)
        # The table every kernel reads (layout: multibody.model.joints, C_* columns).
        # Kernels get the private writable array: Numba's dispatch is ~60 ns slower
        # for read-only arrays; users see the read-only view ``tree``.
        self._tree = np.array(tree, dtype=np.float64, order="C")
        self.tree = self._tree.view()
        self.tree.setflags(write=False)
        cols = [C_TYPE, C_PARENT, C_Q, C_V, C_NQ, C_NV]
        ints = self.tree[:, cols].astype(np.int64)
        self.nbodies = self.tree.shape[0]
        self.nq = int(ints[-1, 2] + ints[-1, 4]) if self.nbodies > 1 else 0
        self.nv = int(ints[-1, 3] + ints[-1, 5]) if self.nbodies > 1 else 0
        self.parents = _readonly(ints[:, 1].copy())
        self.q_shape, self.v_shape = (self.nq,), (self.nv,)
        # expanded parent array of the coordinates (Featherstone Table 6.4), for the sparse LᵀDL
        self.dof_parent = np.full(self.nv, -1, dtype=np.int64)
        for i in range(1, self.nbodies):
            iv, n = int(ints[i, 3]), int(ints[i, 5])
            if n == 0:
                continue
            p = int(ints[i, 1])
            while p > 0 and ints[p, 5] == 0:
                p = int(ints[p, 1])
            self.dof_parent[iv] = ints[p, 3] + ints[p, 5] - 1 if p > 0 else -1
            self.dof_parent[iv + 1:iv + n] = np.arange(iv, iv + n - 1)
        self.dof_parent.setflags(write=False)
        self.body_names = tuple(body_names)
        self.joint_names = tuple(joint_names)
        self.body_mass = _readonly(np.asarray(body_mass, dtype=float))
        self.body_com = _readonly(np.asarray(body_com, dtype=float))
        self.body_inertia = _readonly(np.asarray(body_inertia, dtype=float))
        self.lower_limit = _readonly(np.asarray(lower, dtype=float))
        self.upper_limit = _readonly(np.asarray(upper, dtype=float))
        self.velocity_limit = _readonly(np.asarray(velocity_limit, dtype=float))
        self.effort_limit = _readonly(np.asarray(effort_limit, dtype=float))
        self.damping = _readonly(np.asarray(damping, dtype=float))
        self.friction = _readonly(np.asarray(friction, dtype=float))
        self.armature = _readonly(np.asarray(armature, dtype=float))
        # joint springs (MJCF stiffness / springref; ModelBuilder.add_body): τ = -k (q - q_ref)
        self.stiffness = _readonly(np.zeros(self.nv) if stiffness is None else np.asarray(stiffness, dtype=float))
        self.gravity = _readonly(np.asarray(gravity, dtype=float))
        self.couplings = tuple(couplings)
        self.equalities = tuple(equalities)
        self.loop_joints = tuple(loop_joints)
        # what a model file declared for the simulator: actuators (ActuatorSpec) and tendons (TendonSpec)
        self.actuators = tuple(actuators)
        self.tendons = tuple(tendons)
        self.collision_geometries = tuple(collision_geometries)
        self.visual_geometries = tuple(visual_geometries)
        # collision records (docs/collision.md): explicit pairs (MJCF <pair>), link pairs that never collide
        # automatically (MJCF <exclude>, SRDF <disable_collisions>), MuJoCo's parent filter and the body
        # each body's geometries count as a child of for it, geometries left out of collision (with why)
        self.collision_pairs = tuple(collision_pairs)
        self.excluded_link_pairs = tuple(excluded_link_pairs)
        self.filter_parent = bool(filter_parent)
        self.collision_parent = _readonly(self.parents.copy() if collision_parent is None
                                          else np.asarray(collision_parent, dtype=np.int64))
        self.skipped_geometries = tuple(skipped_geometries)
        self.reference_postures = ReadOnlyMapping(
            (k, _readonly(np.asarray(v, dtype=float))) for k, v in (reference_postures or {}).items())
        self.frames = tuple(frames)
        self.frame_names = tuple(f.name for f in self.frames)
        self.frame_body = _readonly(np.array([f.body for f in self.frames], dtype=np.int64))
        self.frame_placement = _readonly(np.array([f.placement for f in self.frames], dtype=float)
                                         .reshape(len(self.frames), 4, 4))
        joints = []
        for i in range(self.nbodies):
            jt, par, iq, iv, nq, nv = (int(x) for x in ints[i])
            tname = "universe" if i == 0 else JOINT_TYPE_NAMES[jt]
            joints.append(JointInfo(i, self.joint_names[i], tname, par, i, slice(iq, iq + nq),
                                    slice(iv, iv + nv), tuple(joint_axes[i])))
        self.joints = tuple(joints)
        self._quat_joints = tuple(i for i in range(1, self.nbodies) if ints[i, 0] in (SPHERICAL, FREE))
        if spring_reference is None:  # zero coordinates, identity quaternions
            spring_reference = np.zeros(self.nq)
            for i in self._quat_joints:
                spring_reference[self.joints[i].q_slice.start + (3 if ints[i, 0] == FREE else 0)] = 1.0
        self.spring_reference = _readonly(np.asarray(spring_reference, dtype=float))
        self._body_index = {n: i for i, n in enumerate(self.body_names)}
        self._joint_index = {n: i for i, n in enumerate(self.joint_names)}
        self._frame_index = {n: i for i, n in enumerate(self.frame_names)}
        # (body, placement) per frame name and index: one dict lookup on the fast path
        self._frame_lookup = {}
        for i, f in enumerate(self.frames):
            entry = (int(f.body), np.array(f.placement, dtype=float))  # writable: faster Numba dispatch
            self._frame_lookup[f.name] = self._frame_lookup[i] = entry

    # ------------------------------------------------------------------ names
    @property
    def njoints(self) -> int:
        """Number of joints including the "universe" pseudo-joint (= nbodies)."""
        return self.nbodies

    @property
    def total_mass(self) -> float:
        """Mass of the moving bodies (kg); links merged into the world are static
        and not counted, as in Pinocchio's computeTotalMass."""
        return float(np.sum(self.body_mass[1:]))

    def body_id(self, name: str) -> int:
        """Index of the body called ``name`` (raises InputError if absent)."""
        try:
            return self._body_index[name]
        except (KeyError, TypeError):  # TypeError: an unhashable name
            raise InputError(f"model '{self.name}' has no body {name!r}") from None

    def joint_id(self, name: str) -> int:
        try:
            return self._joint_index[name]
        except (KeyError, TypeError):  # TypeError: an unhashable name
            raise InputError(f"model '{self.name}' has no joint {name!r}") from None

    def frame_id(self, name: str) -> int:
        """Index of the frame called ``name``; every body has a frame of its name."""
        try:
            return self._frame_index[name]
        except (KeyError, TypeError):  # TypeError: an unhashable name
            raise InputError(f"model '{self.name}' has no frame {name!r}") from None

    # ------------------------------------------------------------- parameters
    @property
    def parameter_names(self) -> tuple[str, ...]:
        """Names of the physical parameters (``"<body>.mass"``,
        ``"<joint>.damping"``, ``"gravity"``, ...; see
        :mod:`multibody.model.parameters`), as a tuple."""
        from .parameters import parameter_names
        return parameter_names(self)

    def parameters(self) -> dict[str, Any]:
        """The physical parameters as a dict name -> value (floats and
        copied arrays); names, units and frames in
        :mod:`multibody.model.parameters`."""
        from .parameters import parameters
        return parameters(self)

    def with_params(self, params: Mapping[str, Any]) -> Model:
        """A new Model with the parameters named in the mapping ``params``
        changed (e.g. ``{"link1.mass": 2.0, "gravity": (0, 0, -1.62)}``),
        validated as the builder validates them; this model is unchanged.
        See :func:`multibody.model.parameters.with_params`.

        Parameters
        ----------
        params : Mapping[str, Any]
            Values by parameter name (``"<body>.mass"``, ``"<joint>.damping"``,
            ``"gravity"``, ...: docs/parameters.md), SI units.

        Returns
        -------
        Model
            The new model.

        Raises
        ------
        InputError
            If a name is unknown or a value invalid (naming it).
        """
        from .parameters import with_params
        return with_params(self, params)

    # ----------------------------------------------------------- variants
    def _evolve(self, **attributes):
        """A new Model equal to this one but for the public ``attributes``
        (geometry and collision records, reference postures: not the tree),
        for loaders and :meth:`with_ground`. Like :meth:`with_params`, it
        drops the private caches other layers keep on a model (their packed
        tables describe the old geometry)."""
        from .parameters import _MODEL_PRIVATE
        new = {k: v for k, v in self.__dict__.items() if k[0] != "_" or k in _MODEL_PRIVATE}
        for k, v in attributes.items():
            if k not in new or k[0] == "_":
                raise AttributeError(f"Model has no public attribute {k!r}")
            new[k] = v
        new["_workspaces"] = threading.local()
        out = object.__new__(type(self))
        out.__dict__.update(new)
        return out

    def with_ground(self, height: float = 0.0, friction: ArrayLike | float | None = None, restitution: float = 0.0,
                    name: str = "ground", **contact: Any) -> Model:
        """A new Model with a ground plane: a collision geometry ``name``
        (default "ground") of shape "plane" on the world body, its surface
        the horizontal plane z = ``height`` (m, world frame; solid below,
        normal +z). ``friction`` (sliding, torsional, rolling; default
        MuJoCo's (1, 0.005, 0.0001)), ``restitution`` in [0, 1] and the other
        contact keywords of :meth:`ModelBuilder.add_geometry` (``condim``,
        ``margin``, ...) are the plane's. Raises ModelError if the model
        already has a geometry of that name or a value is invalid."""
        from ..errors import ModelError
        from .geometry import DEFAULT_FRICTION, contact_parameters
        if any(g.name == name for g in self.collision_geometries):
            raise ModelError(f"model '{self.name}' already has a collision geometry named {name!r}")
        what = f"geometry '{name}'"
        h = real_number(height, "height")
        params = contact_parameters(what, friction=DEFAULT_FRICTION if friction is None else friction,
                                    restitution=restitution, **contact)
        T = np.eye(4)
        T[2, 3] = h
        g = Geometry(name, 0, T, "plane", (), link=self.body_names[0], **params)
        return self._evolve(collision_geometries=self.collision_geometries + (g,))

    def __getstate__(self):
        """Pickle everything but the per-thread workspaces (memory addresses)
        and the caches of :mod:`.parameters` (rebuilt on demand)."""
        state = dict(self.__dict__)
        del state["_workspaces"]
        state.pop("_parameter_index", None)
        state.pop("_inertia_moments", None)
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self.tree = self._tree.view()  # the read-only view must share the unpickled table
        self.tree.setflags(write=False)
        self._workspaces = threading.local()

    def __repr__(self):
        return (f"Model('{self.name}', nbodies={self.nbodies}, nq={self.nq}, nv={self.nv}, "
                f"frames={len(self.frames)}, mass={self.total_mass:.4g} kg)")

    def summary(self) -> str:
        """A human-readable table of the bodies and joints."""
        lines = [repr(self), f"gravity: {tuple(float(g) for g in self.gravity)}",
                 f"{'#':>3} {'body':<28} {'parent':<24} {'joint':<28} {'type':<13} {'q':>9} {'v':>9} {'mass':>9}"]
        for j in self.joints[1:]:
            qs = f"{j.q_slice.start}:{j.q_slice.stop}" if j.nq else "-"
            vs = f"{j.v_slice.start}:{j.v_slice.stop}" if j.nv else "-"
            lines.append(f"{j.child:>3} {self.body_names[j.child]:<28} {self.body_names[j.parent]:<24} "
                         f"{j.name:<28} {j.type:<13} {qs:>9} {vs:>9} {self.body_mass[j.child]:>9.4g}")
        return "\n".join(lines)

    # ----------------------------------------------------------- configurations
    def neutral(self) -> Array:
        """The neutral configuration: zero joint values, identity quaternions,
        clipped into the position limits."""
        q = np.zeros(self.nq)
        for j in self.joints[1:]:
            if j.type == "spherical":
                q[j.q_slice.start] = 1.0
            elif j.type == "free":
                q[j.q_slice.start + 3] = 1.0
        bounded = np.isfinite(self.lower_limit) | np.isfinite(self.upper_limit)
        q[bounded] = np.clip(q[bounded], self.lower_limit[bounded], self.upper_limit[bounded])
        return q

    def random_configuration(self, seed: int | np.random.Generator | None = None, size: int | None = None,
                             unbounded_range: float = np.pi) -> Array:
        """A configuration drawn uniformly within the position limits; unit
        quaternions drawn uniformly on SO(3). A coordinate with an infinite
        limit is drawn in ``[-unbounded_range, unbounded_range]`` (angles and
        translations alike). ``size=B`` returns a ``(B, nq)`` batch."""
        try:
            rng = np.random.default_rng(seed)
        except (TypeError, ValueError) as e:
            raise InputError(f"seed must be None, an integer or a numpy Generator, got {seed!r}: {e}") from None
        if size is not None and not (isinstance(size, (int, np.integer)) and not isinstance(size, bool)
                                     and size >= 1):
            raise InputError(f"size must be None (one configuration) or an integer >= 1, got {size!r}")
        if not real_number(unbounded_range, "unbounded_range") > 0:
            raise InputError(f"unbounded_range must be positive, got {unbounded_range!r}")
        shape = (self.nq,) if size is None else (int(size), self.nq)
        lo = np.where(np.isfinite(self.lower_limit), self.lower_limit, -unbounded_range)
        hi = np.where(np.isfinite(self.upper_limit), self.upper_limit, unbounded_range)
        q = rng.uniform(lo, hi, size=shape)
        for i in self._quat_joints:
            j = self.joints[i]
            s = j.q_slice.start + (3 if j.type == "free" else 0)
            u = rng.normal(size=shape[:-1] + (4,))
            u /= np.linalg.norm(u, axis=-1, keepdims=True)
            u *= np.where(u[..., :1] < 0, -1.0, 1.0)
            q[..., s:s + 4] = u
        return q

    def integrate(self, q: ArrayLike, v: ArrayLike, dt: float = 1.0) -> Array:
        """``q ⊕ v·dt`` on the configuration manifold (quaternions stay unit;
        free joints follow the SE(3) exponential of the body twist).
        Accepts one state or a batch.

        Parameters
        ----------
        q : array_like
            Configuration, (nq,) or a batch (B, nq).
        v : array_like
            Generalized velocity, (nv,) or (B, nv) (free joints: body frame).
        dt : float
            Time step (s) the velocity is held for (default 1).

        Returns
        -------
        numpy.ndarray
            The configuration reached, (nq,) or (B, nq).

        Raises
        ------
        InputError
            If an array has the wrong shape or is not finite.
        """
        q = as_vector(q, "q", self.nq)
        v = as_vector(v, "v", self.nv)
        if q.ndim != v.ndim:
            raise InputError(f"q has shape {q.shape} but v has shape {v.shape}: both single or both batched")
        dt = real_number(dt, "dt")
        out = np.empty_like(q)
        if q.ndim == 1:
            _cfg.integrate_kernel(self._tree, q, v, dt, out)
        else:
            _cfg.integrate_batch(self._tree, q, v, dt, out)
        return finite_result("integrate", out)

    def _integrate(self, q, v, dt):
        """:meth:`integrate` for one state without argument checks: for
        integrators that own their (valid, float64, contiguous) arrays."""
        out = np.empty_like(q)
        _cfg.integrate_kernel(self._tree, q, v, dt, out)
        return out

    def qdot(self, q: ArrayLike, v: ArrayLike) -> Array:
        """Time derivative ``q̇`` (nq) of the configuration when the system
        moves with velocity ``v`` (nv): Featherstone's ``q̇ = Q(q) v``
        (quaternion rates, rotated free/planar translations). One state or
        a batch."""
        q = as_vector(q, "q", self.nq)
        v = as_vector(v, "v", self.nv)
        if q.shape[:-1] != v.shape[:-1]:
            raise InputError(f"q has shape {q.shape} but v has shape {v.shape}")
        out = np.empty_like(q)
        if q.ndim == 1:
            _cfg.qdot_kernel(self._tree, q, v, out)
        else:
            _cfg.qdot_batch(self._tree, q, v, out)
        return out

    def difference(self, q0: ArrayLike, q1: ArrayLike) -> Array:
        """The velocity ``v`` with ``integrate(q0, v, 1) = q1`` (SE(3), SE(2)
        and quaternion logarithms; shortest rotation).

        Parameters
        ----------
        q0, q1 : array_like
            Configurations, (nq,) or a batch (B, nq).

        Returns
        -------
        numpy.ndarray
            The velocity ``v``, (nv,) or (B, nv) (free joints: body frame of
            ``q0``).

        Raises
        ------
        InputError
            If an array has the wrong shape or is not finite.
        """
        q0 = as_vector(q0, "q0", self.nq)
        q1 = as_vector(q1, "q1", self.nq)
        if q0.shape != q1.shape:
            raise InputError(f"q0 has shape {q0.shape} but q1 has shape {q1.shape}")
        out = np.empty(q0.shape[:-1] + (self.nv,))
        if q0.ndim == 1:
            _cfg.difference_kernel(self._tree, q0, q1, out)
        else:
            _cfg.difference_batch(self._tree, q0, q1, out)
        return out

    def normalize(self, q: ArrayLike) -> Array:
        """A copy of ``q`` with every quaternion block normalized."""
        out = as_vector(q, "q", self.nq).copy()
        if out.ndim == 1:
            _cfg.normalize_kernel(self._tree, out)
        else:
            _cfg.normalize_batch(self._tree, out)
        return out

    def check_configuration(self, q: ArrayLike, name: str = "q") -> Array:
        """``q`` validated (shape, finite, unit quaternions) as float64."""
        q = as_vector(q, name, self.nq)
        check_quaternions(self, q, name)
        return q

    def check_velocity(self, v: ArrayLike, name: str = "v") -> Array:
        return as_vector(v, name, self.nv)
