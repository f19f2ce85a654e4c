"""ModelBuilder: assemble a :class:`~multibody.model.model.Model` in code.

Bodies may be added in any order; :meth:`ModelBuilder.build` numbers them
regularly (parents first, children in the order they were added: a
depth-first walk, as Pinocchio's URDF parser does), checks the topology and
the inertias, and by default merges bodies attached by fixed joints into
their parents (they become frames, like Pinocchio; ``merge_fixed=False``
keeps them as bodies with a 0-DoF joint).
"""
import math
from dataclasses import dataclass, field

import numpy as np

from ..errors import InputError, ModelError
from ..spatial import spatial as sp
from .joints import (C_AX1, C_AX2, C_AX3, C_H, C_I, C_MASS, C_NQ, C_NV, C_P, C_PARENT, C_PITCH, C_Q, C_R,
                     C_TYPE, C_V, C_ARMATURE, C_GRAVITY, C_QUATERNIONS, C_RA, C_RQ, JOINT_TYPES, N_COL, NQ, NV)
from .checks import as_float_array, real_number
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
    frames: list = field(default_factory=list)  # (name, placement in this body, kind)
    collision: list = field(default_factory=list)
    visual: list = field(default_factory=list)


_FULL = {}  # (n, default) -> template array, copied (np.full per coordinate cost 5% of a large load)


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

    def add_body(self, name, parent=WORLD, joint="fixed", placement=None, *, axis=(0.0, 0.0, 1.0),
                 axis2=None, pitch=0.0, joint_name=None, mass=0.0, com=(0.0, 0.0, 0.0), inertia=None,
                 lower=None, upper=None, velocity_limit=None, effort_limit=None, damping=None,
                 friction=None, armature=None, stiffness=None, spring_reference=None, physical_inertia=True):
        """Add body ``name`` attached to ``parent`` by a joint of type ``joint``.

        ``placement`` is the pose of the joint frame in the parent body frame
        (4x4 or (R, p)); the body frame coincides with it at q = neutral.
        ``axis`` is the joint axis in the joint frame (revolute, prismatic,
        helical, cylindrical; the plane normal for planar; the first axis for
        universal, whose second axis ``axis2`` defaults to one perpendicular).
        ``pitch`` is the helical lead in metres per radian. Mass properties:
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
        b = _Body(name, parent, jtype, jname, as_pose(placement, f"joint '{jname}': placement"), ax, ax2,
                  _scalar(pitch, f"joint '{jname}': pitch"), mass, com, inertia, lo, hi,
                  _per_dof(velocity_limit, nv, f"joint '{jname}': velocity_limit", np.inf),
                  _per_dof(effort_limit, nv, f"joint '{jname}': effort_limit", np.inf),
                  _per_dof(damping, nv, f"joint '{jname}': damping", 0.0),
                  _per_dof(friction, nv, f"joint '{jname}': friction", 0.0),
                  _per_dof(armature, nv, f"joint '{jname}': armature", 0.0),
                  _per_dof(stiffness, nv, f"joint '{jname}': stiffness", 0.0),
                  _spring_reference(spring_reference, jtype, nq, jname))
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
                     scale=(1.0, 1.0, 1.0), rgba=None, collision=True, visual=False):
        """Attach a shape to ``body`` (see :class:`~multibody.model.model.Geometry`)."""
        owner = self._owner(body, f"geometry '{name}'")
        g = (name or f"{body}_{shape}", as_pose(placement, f"geometry of body '{body}'"), shape,
             tuple(float(s) for s in np.atleast_1d(size)), mesh, tuple(scale), rgba)
        if collision:
            (self._world_collision if owner is None else owner.collision).append(g)
        if visual:
            (self._world_visual if owner is None else owner.visual).append(g)

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
        tree = np.zeros((nb, N_COL))
        tree[0, C_PARENT] = -1
        tree[0, C_GRAVITY:C_GRAVITY + 3] = self.gravity
        tree[0, C_QUATERNIONS] = sum(b.joint_type in ("spherical", "free") for b in bodies[1:])
        tree[0, C_R:C_R + 9] = _EYE3.ravel()
        lo, hi, vl, el, dmp, fr, arm, stiff, rest = ([] for _ in range(9))
        iq = iv = 0
        frames, coll, vis, axes = [], [], [], [(0.0, 0.0, 0.0)]
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
            for lst, geoms in ((coll, b.collision), (vis, b.visual)):
                for (gname, T, shape, size, mesh, scale, rgba) in geoms:
                    lst.append(Geometry(gname, i, T, shape, size, mesh, scale, rgba))
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
        return Model(name=self.name, tree=tree, body_names=[b.name for b in bodies],
                     joint_names=joint_names, joint_axes=axes, body_mass=mass, body_com=com,
                     body_inertia=inertia, lower=cat(lo), upper=cat(hi), velocity_limit=cat(vl),
                     effort_limit=cat(el), damping=cat(dmp), friction=cat(fr), armature=cat(arm),
                     stiffness=cat(stiff), spring_reference=cat(rest),
                     frames=frames, collision_geometries=coll, visual_geometries=vis, gravity=self.gravity,
                     couplings=self._couplings, equalities=self._equalities, loop_joints=self._loops)


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
    host.collision.extend((g[0], T @ g[1]) + g[2:] for g in b.collision)
    host.visual.extend((g[0], T @ g[1]) + g[2:] for g in b.visual)
