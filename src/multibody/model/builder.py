"""ModelBuilder: assemble a :class:`~multibody.model.model.Model` in code.

Bodies may be added in any order; :meth:`ModelBuilder.build` numbers them
regularly (parents first, children in the order they were added: a
depth-first walk, as Pinocchio's URDF parser does), checks the topology and
the inertias, and by default merges bodies attached by fixed joints into
their parents (they become frames, like Pinocchio; ``merge_fixed=False``
keeps them as bodies with a 0-DoF joint).
"""
import math
import warnings
from dataclasses import dataclass, field

import numpy as np

from ..errors import InputError, ModelError, ModelWarning
from ..spatial import spatial as sp
from . import sueda_joints as sj
from .joints import (C_AX1, C_AX2, C_AX3, C_H, C_I, C_MASS, C_NQ, C_NV, C_P, C_PARENT, C_PITCH, C_Q, C_R,
                     C_TYPE, C_V, C_ARMATURE, C_EXTRA, C_GRAVITY, C_QUATERNIONS, C_RA, C_RQ, EULER, JOINT_TYPES, N_COL,
                     NQ, NV)
from .checks import as_float_array, real_number
from .geometry import (DEFAULT_FRICTION, DEFAULT_SOLIMP, DEFAULT_SOLREF, SHAPES, CollisionPair, check_mesh,
                       check_size, check_triangles, contact_parameters, convex_hull, is_convex)
from .model import LOOP_JOINT_TYPES, Coupling, EqualityConstraint, FrameInfo, Geometry, LoopJoint, Model

WORLD = "world"
_EYE3, _EYE4 = np.eye(3), np.eye(4)  # copied, never written (np.eye per pose was 10% of a large load)


def as_pose(placement, what="placement"):
    """A 4x4 homogeneous pose from ``None`` (identity), a 4x4 array, or a pair
    ``(R, p)`` (rotation matrix, translation)."""
    if placement is None:
        return _EYE4.copy()
    if isinstance(placement, (tuple, list)) and len(placement) == 2:
        R, p = placement
        T = np.eye(4)
        R, p = _floats(R, f"{what}: R"), _floats(p, f"{what}: p")
        if R.shape != (3, 3) or p.shape != (3,):
            raise ModelError(f"{what}: (R, p) must be a 3x3 rotation and a 3-vector, got shapes {R.shape}, {p.shape}")
        T[:3, :3], T[:3, 3] = R, p
    else:
        T = _floats(placement, what).copy()
    if T.shape != (4, 4):
        raise ModelError(f"{what}: expected a finite 4x4 pose or (R, p), got shape {T.shape}")
    # checks in Python scalars: numpy's reductions and det on a 3x3 cost ~10 us per pose, 15% of
    # loading a 10,000-link URDF
    rows = T.tolist()
    if not all(map(math.isfinite, rows[0] + rows[1] + rows[2] + rows[3])):
        raise ModelError(f"{what}: expected a finite 4x4 pose or (R, p), got shape {T.shape}")
    (a, b, c, _), (d, e, f, _), (g, h, i, _) = rows[0], rows[1], rows[2]
    # R Rᵀ - 1: the dot products of the rows
    err = max(abs(a * a + b * b + c * c - 1.0), abs(d * d + e * e + f * f - 1.0), abs(g * g + h * h + i * i - 1.0),
              abs(a * d + b * e + c * f), abs(a * g + b * h + c * i), abs(d * g + e * h + f * i))
    if err > 1e-6 or a * (e * i - f * h) - b * (d * i - f * g) + c * (d * h - e * g) < 0:
        raise ModelError(f"{what}: the rotation part is not a proper rotation matrix")
    return T


@dataclass
class _Body:
    name: str
    parent: str
    joint_type: str
    joint_name: str
    placement: np.ndarray
    axis: np.ndarray
    axis2: np.ndarray
    pitch: float
    mass: float
    com: np.ndarray
    inertia: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    velocity_limit: np.ndarray
    effort_limit: np.ndarray
    damping: np.ndarray
    friction: np.ndarray
    armature: np.ndarray
    stiffness: np.ndarray
    spring_reference: np.ndarray
    factors: np.ndarray | None = None  # Sueda's product-of-exponentials joints: the factor block (sueda_joints)
    frames: list = field(default_factory=list)  # (name, placement in this body, kind)
    collision: list = field(default_factory=list)
    visual: list = field(default_factory=list)


_FULL: dict[tuple[int, float], np.ndarray] = {}  # (n, default) -> template array, copied (np.full per coordinate cost 5% of a large load)


def _per_dof(value, n, what, default):
    if value is None:
        t = _FULL.get((n, default))
        if t is None:
            t = _FULL[(n, default)] = np.full(n, default, dtype=float)
        return t.copy()
    if isinstance(value, float):  # a scalar from a loader: the common case
        a = np.empty(n)
        a.fill(value)
        return a
    a = np.atleast_1d(_floats(value, what))
    if a.size == 1:
        return np.full(n, float(a[0]))
    if a.shape != (n,):
        raise ModelError(f"{what}: expected a scalar or {n} values, got shape {a.shape}")
    return a


def _floats(value, what):
    """``value`` as a float64 array of real numbers (ModelError naming
    ``what`` for strings, dicts, complex values, ragged lists...)."""
    try:
        return as_float_array(value, what)
    except InputError as e:
        raise ModelError(str(e)) from None


def _scalar(value, what, finite=True):
    """``value`` as a float (ModelError naming ``what`` if it is not a
    real number, or not finite when ``finite``)."""
    try:
        return real_number(value, what, finite=finite)
    except InputError as e:
        raise ModelError(str(e)) from None


def _unit(axis, what):
    a = _floats(axis, what).reshape(-1)
    if a.shape != (3,) or not all(map(math.isfinite, a.tolist())):
        raise ModelError(f"{what}: expected a finite 3-vector")
    n = math.hypot(*a.tolist())  # overflow-safe, like np.linalg.norm, and 10x cheaper on 3 numbers
    if n < 1e-12:
        raise ModelError(f"{what} is zero")
    return a / n


def _perpendicular(n):
    """A unit vector perpendicular to the unit vector ``n``."""
    e = np.eye(3)[int(np.argmin(np.abs(n)))]
    u = e - n * (n @ e)
    return u / np.linalg.norm(u)


class ModelBuilder:
    """Build a :class:`Model` body by body.

    Example::

        b = ModelBuilder("arm")
        b.add_body("link1", parent="world", joint="revolute", axis=(0, 0, 1),
                   mass=1.0, com=(0, 0, 0.5), inertia=np.diag([0.1, 0.1, 0.01]))
        model = b.build()

    Parameters
    ----------
    name : str
        The model's name (default "model").
    gravity : array_like
        Gravity (3,) in world coordinates (m/s²); default (0, 0, −9.81).

    Raises
    ------
    ModelError
        If ``gravity`` is not a finite 3-vector.
    """

    def __init__(self, name="model", gravity=(0.0, 0.0, -9.81)):
        self.name = name
        self.gravity = _floats(gravity, "gravity").copy()
        if self.gravity.shape != (3,) or not np.isfinite(self.gravity).all():
            raise ModelError(f"gravity must be a finite 3-vector (m/s²), got {gravity!r}")
        self._bodies = {}
        self._world_frames = []
        self._world_collision = []
        self._world_visual = []
        self._couplings = []
        self._equalities = []
        self._loops = []
        self._pairs = []
        self._excluded = []
        #: MuJoCo's parent filter (``<flag filterparent>``): no automatic contact between the geometries of
        #: a body and of its parent body (unless the parent is the world); recorded as model.filter_parent
        self.filter_parent = True

    def add_body(self, name, parent=WORLD, joint="fixed", placement=None, *, axis=None,
                 axis2=None, axis3=None, parts=None, control=None, pitch=0.0, joint_name=None, mass=0.0, com=(0.0, 0.0, 0.0), inertia=None,
                 lower=None, upper=None, velocity_limit=None, effort_limit=None, damping=None,
                 friction=None, armature=None, stiffness=None, spring_reference=None, physical_inertia=True):
        """Add body ``name`` attached to ``parent`` by a joint of type ``joint``.

        ``placement`` is the pose of the joint frame in the parent body frame
        (4x4 or (R, p)); the body frame coincides with it at q = neutral.
        ``axis`` is the joint axis in the joint frame (revolute, prismatic,
        helical, cylindrical; the plane normal for planar; the first axis for
        universal, whose second axis ``axis2`` defaults to one perpendicular).
        ``pitch`` is the helical lead in metres per radian. Sueda's joints
        (§2.4; :mod:`multibody.model.sueda_joints`): ``euler`` turns about
        ``axis``, ``axis2``, ``axis3`` in turn (default x, z, x);
        ``composite`` is the product of ``parts``, a list of
        ``(type, axis)`` or ``("helical", axis, pitch)`` with type revolute,
        prismatic or helical, or nested lists of such parts; ``spline``
        moves the body frame along the uniform cubic B-spline of the
        ``control`` frames (n ≥ 4 poses in the joint frame; q from 0 to
        n − 3, the default limits); ``spline_surface`` takes ``control`` as
        six 4x4 control matrices (translations x, y, z, then rotations
        x, y, z; q in [0, 1]²). Mass properties:
        ``mass`` (kg), ``com`` (body frame) and ``inertia`` (3x3 about the
        centre of mass, body axes). A body with mass 0 and no inertia is
        massless. Limits are per coordinate: ``lower``/``upper`` (nq values,
        or a scalar), velocity and effort limits, viscous ``damping``,
        Coulomb ``friction``, rotor ``armature`` and joint-spring
        ``stiffness`` (nv values, or a scalar; N·m/rad or N/m) with its rest
        configuration ``spring_reference`` (the joint's nq coordinates;
        default: zero angles and offsets, identity quaternions); the
        simulator applies these springs as
        :class:`~multibody.forces.JointSpring` elements.
        The inertia must be physical (mass > 0, positive definite, triangle
        inequality; :func:`~multibody.spatial.spatial.check_inertia`) unless
        ``physical_inertia=False``, which accepts any finite symmetric
        inertia with mass >= 0 (e.g. a mass 0 with a rotational inertia):
        the caller then answers for the dynamics being well posed (the URDF
        loader's lenient modes use it after their own checks).
        Returns ``name``.
        """
        if not isinstance(name, str) or not name:
            raise ModelError(f"body name must be a non-empty string, got {name!r}")
        if name == WORLD or name in self._bodies:
            raise ModelError(f"duplicate body name '{name}'")
        jtype = str(joint).lower()
        if jtype == "continuous":
            jtype = "revolute"
        elif jtype in ("floating", "freeflyer", "free_flyer"):
            jtype = "free"
        elif jtype in ("ball",):
            jtype = "spherical"
        elif jtype in ("screw",):
            jtype = "helical"
        elif jtype in ("hinge",):
            jtype = "revolute"
        elif jtype in ("slide",):
            jtype = "prismatic"
        jname = joint_name or name
        if jtype not in JOINT_TYPES:
            raise ModelError(f"joint '{jname}' of body '{name}' has unknown type '{joint}' "
                             f"(known: {', '.join(sorted(JOINT_TYPES))}, continuous, floating)")
        code = JOINT_TYPES[jtype]
        nq, nv = int(NQ[code]), int(NV[code])
        placement = as_pose(placement, f"joint '{jname}': placement")
        factors = None
        if code >= EULER:
            factors, C1, (dlo, dhi) = _product_joint(jtype, jname, axis, axis2, axis3, parts, control)
            nq = nv = _factor_coordinates(factors)
            placement = placement @ C1
            lower = dlo if lower is None else lower
            upper = dhi if upper is None else upper
        elif parts is not None or control is not None or axis3 is not None:
            raise ModelError(f"joint '{jname}': parts, control and axis3 belong to Sueda's composite, spline and "
                             f"euler joints, not to a {jtype} joint")
        if axis is None:
            axis = (0.0, 0.0, 1.0)
        ax = _unit(axis, f"joint '{jname}': axis") if jtype not in ("fixed", "spherical", "free",
                                                                      "translational") else np.array([0, 0, 1.0])
        if jtype == "universal":
            ax2 = _unit(axis2, f"joint '{jname}': axis2") if axis2 is not None else _perpendicular(ax)
        elif jtype == "planar":
            ax2 = _unit(axis2, f"joint '{jname}': axis2") if axis2 is not None else _perpendicular(ax)
            ax2 = ax2 - ax * (ax @ ax2)
            if np.linalg.norm(ax2) < 1e-9:
                raise ModelError(f"joint '{jname}': axis2 is parallel to the plane normal")
            ax2 /= np.linalg.norm(ax2)
        else:
            ax2 = np.zeros(3)
        mass, com, inertia = mass_properties(name, mass, com, inertia, physical_inertia)
        lo = _per_dof(lower, nq, f"joint '{jname}': lower", -np.inf)
        hi = _per_dof(upper, nq, f"joint '{jname}': upper", np.inf)
        if jtype in ("spherical", "free"):  # quaternion coordinates carry no limits
            k = 3 if jtype == "free" else 0
            lo[k:], hi[k:] = -np.inf, np.inf
        check_limits(jname, lo, hi)
        b = _Body(name, parent, jtype, jname, placement, ax, ax2,
                  _scalar(pitch, f"joint '{jname}': pitch"), mass, com, inertia, lo, hi,
                  _per_dof(velocity_limit, nv, f"joint '{jname}': velocity_limit", np.inf),
                  _per_dof(effort_limit, nv, f"joint '{jname}': effort_limit", np.inf),
                  _per_dof(damping, nv, f"joint '{jname}': damping", 0.0),
                  _per_dof(friction, nv, f"joint '{jname}': friction", 0.0),
                  _per_dof(armature, nv, f"joint '{jname}': armature", 0.0),
                  _per_dof(stiffness, nv, f"joint '{jname}': stiffness", 0.0),
                  _spring_reference(spring_reference, jtype, nq, jname), factors)
        if not (np.concatenate((b.damping, b.friction, b.armature, b.velocity_limit, b.effort_limit,
                                b.stiffness)) >= 0).all():
            for arr, what in ((b.damping, "damping"), (b.friction, "friction"), (b.armature, "armature"),
                              (b.velocity_limit, "velocity_limit"), (b.effort_limit, "effort_limit"),
                              (b.stiffness, "stiffness")):
                check_nonnegative(jname, what, arr)
        self._bodies[name] = b
        return name

    def _owner(self, body, what):
        if body == WORLD:
            return None
        if body not in self._bodies:
            raise ModelError(f"{what}: body '{body}' does not exist")
        return self._bodies[body]

    def add_frame(self, name, body, placement=None, kind="user"):
        """Attach a named frame to ``body`` at ``placement`` (pose in the body frame)."""
        owner = self._owner(body, f"frame '{name}'")
        entry = (name, as_pose(placement, f"frame '{name}'"), kind)
        (self._world_frames if owner is None else owner.frames).append(entry)

    def add_geometry(self, body, shape, size=(), placement=None, *, name=None, mesh=None,
                     scale=(1.0, 1.0, 1.0), rgba=None, collision=True, visual=False, vertices=None, faces=None,
                     heights=None, friction=DEFAULT_FRICTION, restitution=0.0, contype=1, conaffinity=1,
                     condim=3, margin=0.0, gap=0.0, priority=0, solref=DEFAULT_SOLREF, solimp=DEFAULT_SOLIMP,
                     warn_nonconvex=True, skip=None, hull=None):
        """Attach a shape to ``body`` (the world: ``"world"``); fields,
        units and defaults as in :class:`~multibody.model.Geometry`.

        ``placement``: pose of the geometry frame in ``body``'s frame (4x4
        or (R, p)). ``shape`` and ``size``: "plane" (() or full extents),
        "sphere" (radius,), "capsule" / "cylinder" (radius, full length),
        "ellipsoid" (semi-axes), "box" (full extents), "convex" (give
        ``vertices``: their hull is taken), "mesh" (``vertices`` and
        ``faces``; or only ``mesh``, a file name, read with trimesh), "hfield"
        (``size`` = (full x, full y, max height, base), ``heights`` (nrow,
        ncol) in [0, size[2]]). ``vertices`` are in the geometry frame, scale
        already applied (``scale`` is recorded; a file given by ``mesh``
        alone is scaled here).

        As collision geometry (``collision=True``), checked at once: sizes
        positive and finite, friction >= 0, restitution in [0, 1], condim in
        {1, 3, 4, 6} (see :func:`~multibody.model.geometry.contact_parameters`).
        When the model is built, a "mesh" stays a triangle mesh on a static
        body (the world or a body fixed to it); on a moving body it becomes
        the "convex" hull of its vertices, with a ModelWarning if the mesh is
        not convex (``warn_nonconvex=False``: silently, as the loaders do). An
        "hfield" on a moving body is a ModelError. Errors are ModelErrors
        naming the geometry. Visual geometries (``visual=True``) are recorded
        as given. ``skip`` (a reason, for loaders): the collision geometry
        takes no part in collision and is recorded, unchecked, with the
        reason in ``model.skipped_geometries``. ``hull``: the convex hull
        ``(vertices, faces, volume)`` of ``vertices`` if already computed
        (:func:`~multibody.model.geometry.convex_hull`; loaders compute one
        per mesh file), used as given.
        """
        owner = self._owner(body, f"geometry '{name}'")
        gname = name or f"{body}_{shape}"
        what = f"geometry '{gname}' of body '{body}'"
        if not isinstance(shape, str):
            raise ModelError(f"{what}: shape must be a name ({', '.join(SHAPES)}), got {shape!r}")
        g = dict(name=gname, placement=as_pose(placement, what), shape=shape, mesh=mesh, rgba=rgba, link=body,
                 scale=_floats(scale, f"{what}: scale"), warn_nonconvex=bool(warn_nonconvex),
                 **contact_parameters(what, friction, restitution, contype, conaffinity, condim, margin, gap,
                                      priority, solref, solimp))
        if g["scale"].shape != (3,) or not np.isfinite(g["scale"]).all() or not g["scale"].all():
            raise ModelError(f"{what}: scale must be 3 finite non-zero numbers, got {scale!r}")
        g["scale"] = tuple(float(x) for x in g["scale"])
        if collision and skip is not None:
            g.update(size=tuple(float(x) for x in np.atleast_1d(_floats(size, f"{what}: size"))),
                     vertices=None, faces=None, heights=None, skip=str(skip))
            (self._world_collision if owner is None else owner.collision).append(g)
            collision = False
        elif collision:
            if shape not in SHAPES:
                raise ModelError(f"{what}: unknown collision shape {shape!r} (known: {', '.join(SHAPES)})")
            g["size"] = check_size(shape, size, what)
            if shape in ("convex", "mesh"):
                if vertices is None:
                    if mesh is None:
                        raise ModelError(f"{what}: a {shape} needs vertices (and faces) or a mesh file")
                    vertices, faces = _read_mesh(mesh, g["scale"], what)
                else:  # the caller's own triangles (not a file's): a static mesh's are checked strictly
                    g["strict_mesh"] = hull is None
                vertices, faces = check_mesh(vertices, faces, what)
                if shape == "mesh" and faces is None:
                    raise ModelError(f"{what}: a mesh needs faces (or use shape 'convex')")
            elif shape == "hfield":
                heights = _floats(heights, f"{what}: heights") if heights is not None else None
                if heights is None or heights.ndim != 2 or min(heights.shape) < 2:
                    raise ModelError(f"{what}: an hfield needs heights, an (nrow, ncol) array with nrow, ncol >= 2")
                if not np.isfinite(heights).all() or heights.min() < 0 or heights.max() > g["size"][2]:
                    raise ModelError(f"{what}: hfield heights must be finite, in [0, size[2] = {g['size'][2]}]")
        else:
            g["size"] = tuple(float(s) for s in np.atleast_1d(_floats(size, f"{what}: size")))
        g.update(vertices=vertices, faces=faces, heights=heights)
        if hull is not None:
            g["hull"] = hull
        if collision:
            (self._world_collision if owner is None else owner.collision).append(g)
        if visual:
            (self._world_visual if owner is None else owner.visual).append(dict(g))

    def add_collision_pair(self, geom1, geom2, name=None, condim=3, friction=(1.0, 1.0, 0.005, 0.0001, 0.0001),
                           solref=DEFAULT_SOLREF, solreffriction=(0.0, 0.0), solimp=DEFAULT_SOLIMP, margin=0.0,
                           gap=0.0):
        """An explicit contact pair between the collision geometries named
        ``geom1`` and ``geom2`` (MJCF ``<pair>``, see
        :class:`~multibody.model.geometry.CollisionPair`): always checked,
        with these parameters."""
        what = f"collision pair '{name or f'{geom1}-{geom2}'}'"
        p = contact_parameters(what, condim=condim, margin=margin, gap=gap, solref=solref, solimp=solimp)
        fr = _floats(friction, f"{what}: friction").reshape(-1)
        if fr.shape != (5,) or not np.isfinite(fr).all() or (fr < 0).any():
            raise ModelError(f"{what}: friction must be 5 finite non-negative numbers, got {friction!r}")
        sf = _floats(solreffriction, f"{what}: solreffriction").reshape(-1)
        if sf.shape != (2,) or not np.isfinite(sf).all():
            raise ModelError(f"{what}: solreffriction must be 2 finite numbers, got {solreffriction!r}")
        self._pairs.append(CollisionPair(str(geom1), str(geom2), name, p["condim"], tuple(fr.tolist()),
                                         p["solref"], tuple(sf.tolist()), p["solimp"], p["margin"], p["gap"]))

    def exclude_collisions(self, link1, link2):
        """No automatic contact between the geometries declared on links (or
        bodies) ``link1`` and ``link2`` (MJCF ``<exclude>``, SRDF
        ``<disable_collisions>``); explicit pairs still apply. Unknown
        names are a ModelError at build time."""
        self._excluded.append((str(link1), str(link2)))

    def add_coupling(self, joint, mimicked, multiplier=1.0, offset=0.0):
        """Record ``q[joint] = multiplier · q[mimicked] + offset`` (URDF mimic)."""
        what = f"coupling of joint '{joint}'"
        self._couplings.append(Coupling(joint, mimicked, _scalar(multiplier, f"{what}: multiplier"),
                                        _scalar(offset, f"{what}: offset")))

    def add_loop_joint(self, body_a, body_b, joint, placement_a=None, placement_b=None, axis=(0, 0, 1),
                       axis2=(0, 1, 0), pitch=0.0, name=None):
        """Close a kinematic loop with a joint of type ``joint`` (fixed,
        revolute, prismatic, helical (``pitch`` m/rad), cylindrical, planar,
        spherical, universal, translational, free)
        between ``body_a`` and ``body_b`` (either may be "world"), at the
        frames ``placement_a`` / ``placement_b`` on them (poses (R, p) or 4x4
        in body coordinates). See :class:`~multibody.model.LoopJoint` for
        ``axis``/``axis2``. The spanning tree is the tree of bodies added
        with :meth:`add_body`; the loop joints are the remaining joints.
        Returns the loop joint's name."""
        name = name or f"loop{len(self._loops)}"
        joint = {"ball": "spherical", "weld": "fixed"}.get(str(joint).lower(), str(joint).lower())
        if joint not in LOOP_JOINT_TYPES:
            raise ModelError(f"loop joint '{name}': unknown or unsupported type '{joint}' "
                             f"(use one of {', '.join(LOOP_JOINT_TYPES)})")
        Pa = as_pose(placement_a, f"loop joint '{name}': placement_a")
        Pb = as_pose(placement_b, f"loop joint '{name}': placement_b")
        axes = []
        for a, what in ((axis, "axis"), (axis2, "axis2")):
            a = _floats(a, f"loop joint '{name}': {what}")
            if a.shape != (3,) or not np.isfinite(a).all() or np.linalg.norm(a) < 1e-12:
                raise ModelError(f"loop joint '{name}': {what} must be a finite nonzero 3-vector, got {a}")
            axes.append(a / np.linalg.norm(a))
        if joint == "universal" and abs(axes[0] @ axes[1]) > 1e-9:
            raise ModelError(f"loop joint '{name}': the universal joint's axes must be perpendicular")
        pitch = _scalar(pitch, f"loop joint '{name}': pitch")
        self._loops.append(LoopJoint(name, str(body_a), str(body_b), joint, Pa, Pb, axes[0], axes[1], pitch))
        return name

    def add_equality(self, kind, name, body1=None, body2=None, data=(), objtype="body"):
        """Record an equality constraint from a model file (MJCF connect,
        weld, joint, ...; :class:`multibody.constraints.Constraints` turns
        them into loop joints and couplings)."""
        self._equalities.append(EqualityConstraint(kind, name, body1, body2,
                                                   _floats(data, f"equality '{name}': data"), objtype))

    # ------------------------------------------------------------------ build
    def _ordered(self):
        """Bodies in regular order: depth-first from the world, children in insertion order."""
        children = {WORLD: []}
        for b in self._bodies.values():
            children.setdefault(b.name, [])
        for b in self._bodies.values():
            if b.parent not in children:
                raise ModelError(f"body '{b.name}': parent '{b.parent}' does not exist")
            children[b.parent].append(b.name)
        order, stack = [], list(reversed(children[WORLD]))
        while stack:
            n = stack.pop()
            order.append(n)
            stack.extend(reversed(children[n]))
        if len(order) != len(self._bodies):
            cyclic = sorted(set(self._bodies) - set(order))
            raise ModelError(f"kinematic cycle (or bodies not connected to the world) among bodies: "
                             f"{', '.join(cyclic)}")
        return [self._bodies[n] for n in order]

    def build(self, merge_fixed=True):
        """Number, check and freeze the model; see the module docstring."""
        bodies = [_copy_body(b) for b in self._ordered()]
        world = _Body(WORLD, None, "fixed", "universe", np.eye(4), np.zeros(3), np.zeros(3), 0.0, 0.0,
                      np.zeros(3), np.zeros((3, 3)), *(np.zeros(0),) * 9,
                      frames=list(self._world_frames), collision=list(self._world_collision),
                      visual=list(self._world_visual))
        kept = {WORLD: world}
        # where a (possibly merged) body ended up: (owner name, pose in the owner's frame)
        where = {WORLD: (WORLD, np.eye(4))}
        out = [world]
        for b in bodies:
            owner, T_par = where[b.parent]
            T = T_par @ b.placement
            if merge_fixed and b.joint_type == "fixed":
                host = kept[owner]
                _merge_into(host, b, T)
                where[b.name] = (owner, T)
                continue
            b.parent = owner
            b.placement = T
            b.frames.insert(0, (b.name, np.eye(4), "body"))
            kept[b.name] = b
            where[b.name] = (b.name, np.eye(4))
            out.append(b)
        world.frames.insert(0, (WORLD, np.eye(4), "body"))
        return self._freeze(out)

    def _freeze(self, bodies):
        index = {b.name: i for i, b in enumerate(bodies)}
        nb = len(bodies)
        extra = max((len(b.factors) for b in bodies if b.factors is not None), default=0)
        tree = np.zeros((nb, N_COL + extra))
        tree[0, C_PARENT] = -1
        tree[0, C_GRAVITY:C_GRAVITY + 3] = self.gravity
        tree[0, C_QUATERNIONS] = sum(b.joint_type in ("spherical", "free") for b in bodies[1:])
        tree[0, C_R:C_R + 9] = _EYE3.ravel()
        lo, hi, vl, el, dmp, fr, arm, stiff, rest = ([] for _ in range(9))
        iq = iv = 0
        frames, coll, vis, axes = [], [], [], [(0.0, 0.0, 0.0)]
        skipped = []
        static, hulls = [], {}  # static: the body never moves (world, or fixed to it); hulls: cache by vertices
        seen_joints = {"universe"}
        ints = np.zeros((nb, 6))
        # per body only what varies in size; the fixed-size columns are filled for all bodies at once
        # below (per-body numpy assignments made this loop 20% of loading a 10,000-link URDF)
        for i, b in enumerate(bodies):
            if i > 0:
                if b.joint_name in seen_joints:
                    raise ModelError(f"duplicate joint name '{b.joint_name}'")
                seen_joints.add(b.joint_name)
                code = JOINT_TYPES[b.joint_type]
                nq, nv = int(NQ[code]), int(NV[code])
                if b.factors is not None:
                    nq = nv = _factor_coordinates(b.factors)
                    tree[i, C_EXTRA:C_EXTRA + len(b.factors)] = b.factors
                ints[i] = (code, index[b.parent], iq, iv, nq, nv)
                iq += nq
                iv += nv
                if b.joint_type == "planar":
                    tree[i, C_AX3:C_AX3 + 3] = np.cross(b.axis, b.axis2)
                if nv:
                    tree[i, C_ARMATURE:C_ARMATURE + nv] = b.armature
                axes.append(tuple(b.axis))
                for lst, arr in ((lo, b.lower), (hi, b.upper), (vl, b.velocity_limit), (el, b.effort_limit),
                                 (dmp, b.damping), (fr, b.friction), (arm, b.armature), (stiff, b.stiffness),
                                 (rest, b.spring_reference)):
                    lst.append(arr)
            for name, T, kind in b.frames:
                frames.append(FrameInfo(len(frames), name, i, T, kind))
            static.append(i == 0 or (b.joint_type == "fixed" and static[index[b.parent]]))
            for g in b.collision:
                if "skip" in g:
                    skipped.append((Geometry(body=i, **{k: v for k, v in g.items() if k not in _PRIVATE}), g["skip"]))
                else:
                    coll.append(_collision_geometry(g, i, static[i], hulls))
            for g in b.visual:
                vis.append(Geometry(body=i, **{k: v for k, v in g.items() if k not in _PRIVATE}))
        if nb > 1:
            tree[1:, [C_TYPE, C_PARENT, C_Q, C_V, C_NQ, C_NV]] = ints[1:]
            P = np.array([b.placement for b in bodies[1:]])
            R, U = P[:, :3, :3], np.array([b.axis for b in bodies[1:]])
            tree[1:, C_R:C_R + 9] = R.reshape(-1, 9)
            tree[1:, C_P:C_P + 3] = P[:, :3, 3]
            tree[1:, C_AX1:C_AX1 + 3] = U
            tree[1:, C_AX2:C_AX2 + 3] = np.array([b.axis2 for b in bodies[1:]])
            tree[1:, C_PITCH] = [b.pitch for b in bodies[1:]]
            rev = np.array([b.joint_type == "revolute" for b in bodies[1:]])
            if rev.any():  # revolute_factors for all revolute bodies: Q = R_T (1 - u uᵀ), A = R_T [u]x
                Rr, u = R[rev], U[rev]
                Ru = np.einsum("nij,nj->ni", Rr, u)
                K = np.zeros((len(u), 3, 3))
                K[:, 0, 1], K[:, 0, 2], K[:, 1, 2] = -u[:, 2], u[:, 1], -u[:, 0]
                K[:, 1, 0], K[:, 2, 0], K[:, 2, 1] = u[:, 2], -u[:, 1], u[:, 0]
                rows = np.nonzero(rev)[0] + 1
                tree[rows, C_RQ:C_RQ + 9] = (Rr - Ru[:, :, None] * u[:, None, :]).reshape(-1, 9)
                tree[rows, C_RA:C_RA + 9] = np.matmul(Rr, K).reshape(-1, 9)
        mass = np.array([b.mass for b in bodies], dtype=float)
        com = np.array([b.com for b in bodies], dtype=float).reshape(nb, 3)
        inertia = np.array([b.inertia for b in bodies], dtype=float).reshape(nb, 3, 3)
        bad = pack_inertias(tree, mass, com, inertia)
        if bad.any():
            b = bodies[int(np.argmax(bad))]
            raise ModelError(f"body '{b.name}': its inertia (with the bodies merged into it) is not finite: "
                             f"mass {b.mass!r}, centre of mass {b.com.tolist()}")
        seen, dup = set(), set()
        for f in frames:  # one pass (names.count(n) per name was quadratic: 3.5 s for 10,000 links)
            (dup if f.name in seen else seen).add(f.name)
        if dup:
            raise ModelError(f"duplicate frame name(s): {', '.join(sorted(dup))}")
        cat = lambda lst: np.concatenate(lst) if lst else np.zeros(0)  # noqa: E731
        joint_names = ["universe"] + [b.joint_name for b in bodies[1:]]
        for cpl in self._couplings:
            for jn in (cpl.joint, cpl.mimicked):
                if jn not in seen_joints:
                    raise ModelError(f"coupling of joint '{cpl.joint}' references unknown joint '{jn}'")
        body_set = {WORLD} | {b.name for b in bodies}
        for lj in self._loops:
            for b in (lj.body_a, lj.body_b):
                if b not in body_set:
                    raise ModelError(f"loop joint '{lj.name}' references unknown body '{b}'")
            if lj.body_a == lj.body_b:
                raise ModelError(f"loop joint '{lj.name}' connects body '{lj.body_a}' to itself")
        _check_collision_records(coll, frames, self._pairs, self._excluded)
        return Model(name=self.name, tree=tree, body_names=[b.name for b in bodies],
                     joint_names=joint_names, joint_axes=axes, body_mass=mass, body_com=com,
                     body_inertia=inertia, lower=cat(lo), upper=cat(hi), velocity_limit=cat(vl),
                     effort_limit=cat(el), damping=cat(dmp), friction=cat(fr), armature=cat(arm),
                     stiffness=cat(stiff), spring_reference=cat(rest),
                     frames=frames, collision_geometries=coll, visual_geometries=vis, gravity=self.gravity,
                     couplings=self._couplings, equalities=self._equalities, loop_joints=self._loops,
                     collision_pairs=self._pairs, excluded_link_pairs=_link_pairs(self._excluded, frames),
                     filter_parent=self.filter_parent, skipped_geometries=skipped)


def mass_properties(name, mass, com, inertia, physical_inertia=True, moments=None):
    """Validated ``(mass, com, inertia)`` of body ``name``: a real mass (kg),
    a finite 3-vector ``com`` (body frame, m) and a 3x3 rotational inertia
    about the centre of mass in body axes (kg m²; 3 principal moments give
    a diagonal one; None is zero). Checked by
    :func:`~multibody.spatial.spatial.check_inertia` (physical unless
    ``physical_inertia`` is False) except for a massless body (mass 0 and
    zero inertia); ``moments``: the inertia's principal moments if already
    computed (see ``check_inertia``). Raises :class:`ModelError` naming the
    body."""
    mass = mass if isinstance(mass, float) else _scalar(mass, f"body '{name}': mass", finite=False)
    com = _floats(com, f"body '{name}': com")
    if com.shape != (3,):
        raise ModelError(f"body '{name}': com must be a 3-vector, got shape {com.shape}")
    inertia = np.zeros((3, 3)) if inertia is None else _floats(inertia, f"body '{name}': inertia")
    if inertia.shape == (3,):
        inertia = np.diag(inertia)
    if inertia.shape != (3, 3):
        raise ModelError(f"body '{name}': inertia must be 3x3 (or 3 principal moments), got {inertia.shape}")
    massless = mass == 0.0 and not inertia.any()
    if not massless or not physical_inertia:
        mass, inertia = sp.check_inertia(mass, inertia, f"body '{name}'", physical=bool(physical_inertia),
                                         moments=moments)
    if not all(map(math.isfinite, com.tolist())):
        raise ModelError(f"body '{name}': centre of mass is not finite")
    return mass, com, inertia


def check_limits(jname, lower, upper):
    """Raise :class:`ModelError` if a lower position limit of joint ``jname``
    exceeds its upper limit (both arrays of the joint's nq coordinates)."""
    if (lower > upper).any():
        raise ModelError(f"joint '{jname}': lower limit {lower} exceeds upper limit {upper}")


def check_nonnegative(jname, what, values):
    """Raise :class:`ModelError` if a per-coordinate joint value ``what``
    (damping, friction, armature, velocity_limit, effort_limit, stiffness)
    of joint ``jname`` is negative or NaN (+inf passes: no limit)."""
    if np.any(values < 0) or np.any(np.isnan(values)):
        raise ModelError(f"joint '{jname}': {what} must be non-negative, got {values}")


def pack_inertias(tree, mass, com, inertia, rows=slice(None)):
    """Write the inertial columns of the model table ``tree`` (nb x N_COL)
    from the bodies' masses (nb,), centres of mass (nb, 3; body frame) and
    rotational inertias about the centre of mass (nb, 3, 3; body axes):
    ``m``, ``h = m c`` and ``Ī = I_C - m [c]×[c]×`` (Featherstone's rbi about
    the body origin), for the bodies ``rows`` (a slice or a list of
    indices; default all). The one place these columns are computed (the
    builder and :meth:`Model.with_params` both call it). Returns a boolean
    array, one entry per body of ``rows``, marking those whose columns
    overflowed to non-finite values."""
    m, c, I = mass[rows], com[rows], inertia[rows]
    with np.errstate(over="ignore", invalid="ignore"):  # overflow is reported to the caller
        tree[rows, C_MASS] = m
        tree[rows, C_H:C_H + 3] = m[:, None] * c
        # Ī = I_C - m [c]x[c]x = I_C + m (|c|² 1 - c cᵀ)
        cc = np.einsum("ni,ni->n", c, c)
        tree[rows, C_I:C_I + 9] = (I + m[:, None, None] * (cc[:, None, None] * _EYE3
                                                           - c[:, :, None] * c[:, None, :])).reshape(len(m), 9)
    return ~np.isfinite(tree[rows, C_MASS:C_I + 9]).all(axis=1)  # m, h = m c, Ī = I_C - m [c][c] overflowed


def _factor_coordinates(block):
    """The number of coordinates of a product-of-exponentials joint: one
    past the largest coordinate its factors read."""
    m = int(block[0])
    n = 0
    for k in range(m):
        b = 1 + sj.FACTOR_WIDTH * k
        kind = int(block[b + sj.F_KIND])
        n = max(n, int(block[b + sj.F_INDEX]) + 1 if kind == sj.LINEAR else 1 if kind == sj.BSPLINE else 2)
    return n


def _composite_parts(parts, jname):
    """Flatten (nested) composite parts into the twists of their factors."""
    if isinstance(parts, (str, bytes)) or not hasattr(parts, "__iter__"):
        raise ModelError(f"joint '{jname}': composite parts must be a list of (type, axis) parts or nested "
                         f"lists of them, got {parts!r}")
    twists = []
    for part in parts:
        if isinstance(part, list):
            twists += _composite_parts(part, jname)
            continue
        if not isinstance(part, tuple) or len(part) not in (2, 3) or not isinstance(part[0], str):
            raise ModelError(f"joint '{jname}': a composite part is (type, axis) or ('helical', axis, pitch), "
                             f"or a nested list of parts; got {part!r}")
        kind = part[0].lower()
        a = _unit(part[1], f"joint '{jname}': axis of the {kind} part")
        if kind in ("revolute", "hinge", "continuous") and len(part) == 2:
            twists.append(np.r_[a, 0.0, 0.0, 0.0])
        elif kind in ("prismatic", "slide") and len(part) == 2:
            twists.append(np.r_[0.0, 0.0, 0.0, a])
        elif kind == "helical" and len(part) == 3:
            twists.append(np.r_[a, _scalar(part[2], f"joint '{jname}': pitch of the helical part") * a])
        else:
            raise ModelError(f"joint '{jname}': composite parts are 1-DoF revolute, prismatic or "
                             f"('helical', axis, pitch) parts, got {part!r} (a spherical part: use the euler "
                             f"joint, or free3d for exponential coordinates)")
    return twists


def _product_joint(jtype, jname, axis, axis2, axis3, parts, control):
    """``(factor block, C₁, (lower, upper))`` of one of Sueda's
    product-of-exponentials joints (§2.4.5, 2.4.9, 2.4.10, 2.4.12, 2.4.13):
    C₁ is the pose folded into the joint placement (a spline's first
    control frame), lower/upper the default limits."""
    I4, none = np.eye(4), (None, None)
    if jtype != "composite" and parts is not None:
        raise ModelError(f"joint '{jname}': parts belong to a composite joint, not to a {jtype} joint")
    if jtype not in ("spline", "spline_surface") and control is not None:
        raise ModelError(f"joint '{jname}': control points belong to spline joints, not to a {jtype} joint")
    if jtype == "euler":
        axes = [_unit(a if a is not None else d, f"joint '{jname}': {w}")
                for a, d, w in ((axis, (1, 0, 0), "axis"), (axis2, (0, 0, 1), "axis2"), (axis3, (1, 0, 0), "axis3"))]
        return sj.pack_factors(sj.linear_factors([np.r_[a, 0.0, 0.0, 0.0] for a in axes])), I4, none
    if axis is not None or axis2 is not None or axis3 is not None:
        raise ModelError(f"joint '{jname}': a {jtype} joint takes no axes (orient it by its placement)")
    if jtype == "free2d":
        e = np.eye(6)
        return sj.pack_factors(sj.linear_factors([e[3], e[4], e[2]])), I4, none
    if jtype == "composite":
        if parts is None:
            raise ModelError(f"joint '{jname}': a composite joint needs its parts, e.g. "
                             f"parts=[('revolute', (1, 0, 0)), ('prismatic', (0, 0, 1))]")
        twists = _composite_parts(parts, jname)
        if not twists:
            raise ModelError(f"joint '{jname}': a composite joint needs at least one part")
        return sj.pack_factors(sj.linear_factors(twists)), I4, none
    if control is None:
        raise ModelError(f"joint '{jname}': a {jtype} joint needs its control points (control=...)")
    C = _floats(control, f"joint '{jname}': control")
    if not np.isfinite(C).all():
        raise ModelError(f"joint '{jname}': control points must be finite")
    if jtype == "spline_surface":
        if C.shape != (6, 4, 4):
            raise ModelError(f"joint '{jname}': a spline surface takes six 4x4 control matrices (shape (6, 4, 4)), "
                             f"got shape {C.shape}")
        return sj.pack_factors(sj.surface_factors(C)), I4, (np.zeros(2), np.ones(2))
    if C.ndim != 3 or C.shape[1:] != (4, 4) or C.shape[0] < 4:
        raise ModelError(f"joint '{jname}': a spline joint needs at least 4 control frames (4x4 poses), "
                         f"got shape {C.shape}")
    frames = [as_pose(T, f"joint '{jname}': control frame {k + 1}") for k, T in enumerate(C)]
    return sj.pack_factors(sj.spline_factors(frames)), frames[0], (np.zeros(1), np.full(1, len(frames) - 3.0))


def _spring_reference(value, jtype, nq, jname):
    """The rest configuration (nq) of a joint's spring: ``value``, or zero
    coordinates with identity quaternions; quaternions must be unit."""
    if value is None:
        ref = np.zeros(nq)
        if jtype in ("spherical", "free"):
            ref[3 if jtype == "free" else 0] = 1.0
        return ref
    ref = _per_dof(value, nq, f"joint '{jname}': spring_reference", 0.0)
    if not np.isfinite(ref).all():
        raise ModelError(f"joint '{jname}': spring_reference must be finite, got {ref}")
    if jtype in ("spherical", "free"):
        k = 3 if jtype == "free" else 0
        if abs(float(ref[k:k + 4] @ ref[k:k + 4]) - 1.0) > 1e-6:
            raise ModelError(f"joint '{jname}': the quaternion of spring_reference {ref[k:k + 4]} is not unit")
    return ref


def _copy_body(b):
    c = object.__new__(_Body)  # (the dataclass constructor from a dict cost 5% of a large load)
    c.__dict__.update(b.__dict__)
    c.frames, c.collision, c.visual = list(b.frames), list(b.collision), list(b.visual)
    return c


def _merge_into(host, b, T):
    """Merge body ``b`` (pose ``T`` in ``host``'s frame) into ``host``: add its
    inertia (Sueda §1.7.1 composite body; parallel-axis theorem) and move its
    frames and geometry; ``b`` itself becomes a frame of kind "fixed"."""
    R, p = T[:3, :3], T[:3, 3]
    m1, m2 = host.mass, b.mass
    if m2 > 0.0 or np.any(b.inertia):  # a mass 0 with a rotational inertia (lenient URDF loading) adds it too
        c2 = R @ b.com + p
        I2 = R @ b.inertia @ R.T
        m = m1 + m2
        c = (m1 * host.com + m2 * c2) / m if m > 0.0 else host.com
        d1, d2 = host.com - c, c2 - c
        par = lambda d: d @ d * np.eye(3) - np.outer(d, d)  # noqa: E731
        host.inertia = host.inertia + m1 * par(d1) + I2 + m2 * par(d2)
        host.mass, host.com = m, c
    host.frames.append((b.name, T, "fixed"))
    host.frames.extend((n, T @ Tf, k) for n, Tf, k in b.frames)
    host.collision.extend(dict(g, placement=T @ g["placement"]) for g in b.collision)
    host.visual.extend(dict(g, placement=T @ g["placement"]) for g in b.visual)


_PRIVATE = ("warn_nonconvex", "skip", "hull", "strict_mesh")  # keys of a geometry spec that are not Geometry fields


def _read_mesh(filename, scale, what):
    """Vertices and faces of a mesh file (trimesh), scaled; ModelError naming ``what``."""
    from .meshes import MeshError, read_mesh  # lazily: trimesh is only needed for mesh geometry
    try:
        return read_mesh(filename, scale)
    except MeshError as e:
        raise ModelError(f"{what}: {e}") from None


def _collision_geometry(g, body, static, hulls):
    """The Geometry of collision spec ``g`` on body index ``body``: a mesh on
    a moving body becomes its convex hull (``hulls`` caches them per vertex
    array: a mesh file used by several links is hulled once)."""
    shape, what = g["shape"], f"geometry '{g['name']}' of body '{g['link']}'"
    kw = {k: v for k, v in g.items() if k not in _PRIVATE}
    if shape in ("mesh", "hfield") and not static:
        if shape == "hfield":
            raise ModelError(f"{what}: a height field can only belong to a static body (the world or a body "
                             "fixed to it), not to a moving one")
    if shape == "convex" or (shape == "mesh" and not static):
        V = g["vertices"]
        if "hull" in g:
            hv, hf, volume = g["hull"]
        else:
            key = (id(V), V.shape)
            if key not in hulls:
                hulls[key] = (V, convex_hull(V, what))  # V kept alive: its id stays unique during the build
            hv, hf, volume = hulls[key][1]
        if shape == "mesh" and g["warn_nonconvex"] and not is_convex(V, g["faces"], volume):
            warnings.warn(f"{what}: the mesh is not convex; on a moving body it is replaced by its convex hull",
                          ModelWarning, stacklevel=4)
        kw.update(shape="convex", vertices=hv, faces=hf)
    elif shape == "mesh":
        # a static triangle mesh: shared vertices merged (an STL repeats them for every triangle)
        V, inverse = np.unique(g["vertices"], axis=0, return_inverse=True)
        F, twisted = check_triangles(V, inverse.reshape(-1)[g["faces"]], what, strict=g.get("strict_mesh", False))
        if twisted and g.get("strict_mesh", False):
            warnings.warn(f"{what}: {twisted} edge(s) are wound the same way by both of their triangles: the "
                          "triangles are not consistently oriented, and contacts come only from the side about "
                          "which a triangle's corners turn counter-clockwise", ModelWarning, stacklevel=4)
        kw.update(vertices=V, faces=F)
    return Geometry(body=body, **kw)


def _check_collision_records(coll, frames, pairs, excluded):
    names = {g.name for g in coll}
    for p in pairs:
        for gn in (p.geom1, p.geom2):
            if gn not in names:
                raise ModelError(f"collision pair '{p.name or f'{p.geom1}-{p.geom2}'}': no collision geometry "
                                 f"named '{gn}'")
    links = {f.name for f in frames}
    for a, b in excluded:
        for n in (a, b):
            if n not in links:
                raise ModelError(f"collision exclusion ({a!r}, {b!r}): no link or body named {n!r}")


def _link_pairs(excluded, frames):
    """Unique link pairs, each ordered as its links' frames are; pairs of a link with itself dropped."""
    order = {f.name: k for k, f in enumerate(frames)}
    out = []
    for a, b in excluded:
        if a == b:
            continue
        pair = (a, b) if order[a] < order[b] else (b, a)
        if pair not in out:
            out.append(pair)
    return tuple(out)
