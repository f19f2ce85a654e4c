"""Sensors: what a robot's encoders, IMUs, force/torque cells and touch pads
would read, at one state or along a recorded trajectory (docs/sensors.md).

A sensor is a small description (what it measures, where, and its
measurement model: Gaussian noise, resolution, cutoff, delay); a
:class:`Sensors` collection evaluates them:

* :meth:`Sensors.read` — the ideal readings at a state (or a batch of
  states) given ``t, q, v`` and the joint accelerations ``a`` (q̈ at that
  state, from forward dynamics with the applied forces);
* :meth:`Sensors.update` — one measurement per time step: the ideal
  readings with noise, resolution, cutoff and delay applied (stateful:
  random generators and delay buffers; :meth:`Sensors.reset`);
* :meth:`Sensors.over` — the readings along a :class:`Trajectory` of a
  :class:`Simulator`, accelerations recomputed by forward dynamics with the
  simulator's forces (and the recorded contact forces).

Conventions (DESIGN.md): SI units, quaternions ``(w, x, y, z)``, 6-vectors
angular first, gravity from ``model.gravity``. Frames are the model's
frames (``model.frame_names``: bodies, merged links, MJCF sites, URDF
links), optionally with an extra ``placement`` (4x4 pose in that frame).

Everything here is NumPy over the compiled kinematics (one forward
kinematics and one ``body_motion`` per call, batched over the samples of a
trajectory); nothing is compiled by this module.
"""
from __future__ import annotations

import math
import numbers
import weakref
import zlib
from collections import deque
from contextlib import contextmanager
from functools import cached_property
from typing import TYPE_CHECKING, Any, Iterable, Iterator, Mapping, Sequence

import numpy as np

from ..errors import InputError, ModelError, MultibodyError
from ..kinematics import body_motion, forward_kinematics, jacobian
from ..kinematics._common import config, frame_of, velocity
from ..model.checks import as_float_array, real_number
from ..model.joints import C_H, C_I, C_MASS
from ..model.model import Model
from ..spatial import quaternion as _quat
from .._typing import Array, ArrayLike, Frame

if TYPE_CHECKING:
    from .simulator import Simulator, State
    from .trajectory import Trajectory

# data types (what noise, resolution and cutoff mean for the reading)
REAL = "real"              # any real vector: additive noise, resolution, cutoff on both sides
POSITIVE = "positive"      # non-negative scalar (touch): additive noise, cutoff from above
QUATERNION = "quaternion"  # unit quaternion (w, x, y, z): noise as a small rotation in the sensor's axes
AXIS = "axis"              # unit vector: noise as a small rotation
POSE = "pose"              # position (3) and unit quaternion (4): noise (3 + 3) on both

# what a sensor needs: the configuration, the velocity, the accelerations (or contacts)
POSITION, VELOCITY, ACCELERATION = 0, 1, 2
INITIAL = ("first", "nan", "zero")
ZONES = ("sphere", "capsule", "ellipsoid", "cylinder", "box")


# ---------------------------------------------------------------- argument checks

def _real(x, what, label):
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, numbers.Real):
        raise InputError(f"{label}: {what} must be a real number, got {x!r}")
    return float(x)


def _non_negative(x, what, label):
    x = _real(x, what, label)
    if not (math.isfinite(x) and x >= 0.0):
        raise InputError(f"{label}: {what} must be a finite number >= 0, got {x}")
    return x


def _placement(P, what, label):
    """A 4x4 rigid pose (rotation orthonormal with det +1, last row 0 0 0 1), or None."""
    if P is None:
        return None
    try:
        P = np.array(P, dtype=float)
    except (TypeError, ValueError):
        raise InputError(f"{label}: {what} must be a 4x4 pose, got {P!r}") from None
    if P.shape != (4, 4) or not np.isfinite(P).all():
        raise InputError(f"{label}: {what} must be a finite 4x4 pose, got shape {P.shape}")
    R = P[:3, :3]
    if not (np.allclose(R.T @ R, np.eye(3), atol=1e-9) and np.linalg.det(R) > 0
            and np.allclose(P[3], [0, 0, 0, 1], atol=0)):
        raise InputError(f"{label}: {what} is not a rigid pose (orthonormal rotation, det +1, last row 0 0 0 1)")
    return P


def _name_of(x):
    return x if isinstance(x, str) else repr(x)


# ---------------------------------------------------------------- the sensors

class Sensor:
    """Base class of the sensors. Every sensor takes, as keywords:

    * ``name`` — its key in the readings (default: ``"<kind>(<target>)"``);
    * ``noise`` — standard deviation of zero-mean Gaussian noise (≥ 0; a
      scalar or one value per noise component: the reading's components
      for real sensors, a rotation vector (3, rad, in the sensor's own
      axes) for quaternions and axes, 3 + 3 for poses);
    * ``resolution`` — quantization step of real readings (≥ 0, 0: none):
      ``res · round(y / res)``;
    * ``cutoff`` — saturation of real readings (≥ 0, 0: none): clipped to
      ``[−cutoff, cutoff]`` (touch: ``≤ cutoff``), as MuJoCo's cutoff;
    * ``delay`` — seconds (≥ 0; a multiple of the time step of the
      :class:`Sensors` that runs it): the measurement made ``delay``
      earlier;
    * ``initial`` — what a delayed sensor reads before ``delay`` has
      elapsed: ``"first"`` (default: its first measurement, as if the state
      had been held before the start), ``"nan"`` or ``"zero"`` (MuJoCo's
      history buffers start at zero);
    * ``seed`` — this sensor's own noise seed (default: derived from the
      collection's seed and the sensor's name).

    Noise, resolution, cutoff and delay act in :meth:`Sensors.update` and
    :meth:`Sensors.over`, in that order (noise, quantization, saturation,
    then the delay line); :meth:`Sensors.read` gives ideal values."""

    kind = "sensor"
    stage = POSITION
    datatype = REAL
    dim = 1

    def __init__(self, target: Any, name: str | None = None, noise: ArrayLike = 0.0, delay: float = 0.0,
                 cutoff: float = 0.0, resolution: float = 0.0, initial: str = "first", seed: int | None = None) -> None:
        self.target = target
        self.name = f"{self.kind}({_name_of(target)})" if name is None else name
        if not isinstance(self.name, str) or not self.name:
            raise InputError(f"{type(self).__name__}: name must be a non-empty string, got {name!r}")
        label = self.label
        try:
            z = np.array(noise, dtype=float)
        except (TypeError, ValueError):
            raise InputError(f"{label}: noise must be a standard deviation (a number or an array), "
                             f"got {noise!r}") from None
        if z.ndim > 1 or z.size == 0 or not np.isfinite(z).all() or (z < 0).any():
            raise InputError(f"{label}: noise must be finite standard deviations >= 0 (a scalar or a vector), "
                             f"got {noise!r}")
        self.noise = z
        self.delay = _non_negative(delay, "delay (s)", label)
        self.cutoff = _non_negative(cutoff, "cutoff", label)
        self.resolution = _non_negative(resolution, "resolution", label)
        if initial not in INITIAL:
            raise InputError(f"{label}: initial must be one of {', '.join(map(repr, INITIAL))}, got {initial!r}")
        self.initial = initial
        if seed is not None and (isinstance(seed, (bool, np.bool_)) or not isinstance(seed, numbers.Integral)
                                 or seed < 0):
            raise InputError(f"{label}: seed must be None or an integer >= 0, got {seed!r}")
        self.seed = None if seed is None else int(seed)
        #: MuJoCo's ``noise`` attribute of a sensor loaded from MJCF (metadata; see simulation/mjcf_sensors.py)
        self.mujoco_noise = None

    @property
    def label(self) -> str:
        return f"sensor '{self.name}' ({type(self).__name__})"

    def __repr__(self):
        return f"{type(self).__name__}({_name_of(self.target)!s}, name={self.name!r})"

    def error(self, msg, cls=InputError):
        return cls(f"{self.label}: {msg}")

    # --------------------------------------------------------- binding
    def bind(self, model: Model) -> Bound:
        """Resolve the sensor against ``model``: a :class:`Bound` (its
        dimension, data type and resolved indices); ModelError naming the
        sensor for a frame, joint or body the model does not have."""
        data = self._bind(model)
        dim, datatype = self._shape(model, data)
        if datatype not in (REAL, POSITIVE) and (self.cutoff or self.resolution):
            raise self.error(f"cutoff and resolution apply to real readings, not to a {datatype}")
        nz = {QUATERNION: 3, AXIS: 3, POSE: 6}.get(datatype, dim)
        if self.noise.size not in (1, nz):
            raise self.error(f"noise has {self.noise.size} values; this {datatype} reading takes one or {nz} "
                             f"(its noise components)")
        return Bound(self, dim, datatype, nz, data)

    def _bind(self, model):
        return None

    def _shape(self, model, data):
        return self.dim, self.datatype

    def _frame(self, model, frame, placement, what="frame"):
        """(body, 4x4 placement in the body) of ``frame`` (name or index) with ``placement`` after it."""
        try:
            body, P = frame_of(model, frame)
        except InputError:
            raise self.error(f"model '{model.name}' has no {what} {frame!r}", ModelError) from None
        return int(body), (P if placement is None else P @ placement)

    def _value(self, snap, data):
        """The ideal readings (B, dim) at the states of ``snap``."""
        raise NotImplementedError


class Bound:
    """A sensor resolved against a model: ``dim`` (reading size),
    ``datatype``, ``noise_dim`` (noise components) and the resolved data."""
    __slots__ = ("sensor", "dim", "datatype", "noise_dim", "data")

    def __init__(self, sensor, dim, datatype, noise_dim, data):
        self.sensor, self.dim, self.datatype, self.noise_dim, self.data = sensor, dim, datatype, noise_dim, data

    def value(self, snap):
        return self.sensor._value(snap, self.data)


class Clock(Sensor):
    """The simulation time t (s), as MuJoCo's clock sensor."""
    kind = "clock"

    def __init__(self, name: str | None = None, **kw: Any) -> None:
        super().__init__("t", name, **kw)

    def _value(self, snap, data):
        return snap.t[:, None].copy()


class JointPosition(Sensor):
    """An encoder: the joint's coordinates ``q[joint]`` — one value for a
    revolute (rad) or prismatic (m) joint (use ``resolution`` for the
    encoder's counts), the unit quaternion (4) of a spherical joint, the
    position and quaternion (7) of a free joint, the joint's nq values
    otherwise."""
    kind = "jointpos"

    def __init__(self, joint: Frame, name: str | None = None, **kw: Any) -> None:
        super().__init__(joint, name, **kw)

    def _bind(self, model):
        try:
            j = model.joint_id(self.target) if isinstance(self.target, str) else int(self.target)
            if j < 0:
                raise IndexError(j)
            info = model.joints[j]
        except (InputError, IndexError, TypeError, ValueError):
            raise self.error(f"model '{model.name}' has no joint {self.target!r}", ModelError) from None
        if j == 0:
            raise self.error("the universe pseudo-joint has no coordinates", ModelError)
        return info

    def _shape(self, model, info):
        return self._joint_shape(info)

    def _joint_shape(self, info):
        if info.type == "spherical":
            return 4, QUATERNION
        if info.type == "free":
            return 7, POSE
        return info.nq, REAL

    def _value(self, snap, info):
        x = snap.q[:, info.q_slice].copy()
        if info.type in ("spherical", "free"):
            x[:, -4:] /= np.linalg.norm(x[:, -4:], axis=1, keepdims=True)
        return x


class JointVelocity(Sensor):
    """The joint's velocity coordinates ``v[joint]`` (rad/s, m/s; a
    spherical joint's ω in its child frame, a free joint's (ω, v) in the
    body frame, angular first)."""
    kind = "jointvel"
    stage = VELOCITY

    def __init__(self, joint: Frame, name: str | None = None, **kw: Any) -> None:
        super().__init__(joint, name, **kw)

    _bind = JointPosition._bind

    def _shape(self, model, info):
        return info.nv, REAL

    def _value(self, snap, info):
        return snap.v[:, info.v_slice].copy()


class _FrameSensor(Sensor):
    """A sensor at a frame (name or index) with an optional extra
    ``placement`` (4x4 pose in that frame), and, where it applies, a
    ``reference`` frame (with ``reference_placement``): readings relative
    to that frame and in its axes (MuJoCo's reftype / refname)."""
    dim = 3
    references = True

    def __init__(self, frame: Frame, name: str | None = None, placement: ArrayLike | None = None,
                 reference: Frame | None = None, reference_placement: ArrayLike | None = None, **kw: Any) -> None:
        super().__init__(frame, name, **kw)
        self.placement = _placement(placement, "placement", self.label)
        if not self.references and (reference is not None or reference_placement is not None):
            raise self.error("takes no reference frame")
        self.reference = reference
        self.reference_placement = _placement(reference_placement, "reference_placement", self.label)
        if reference is None and self.reference_placement is not None:
            raise self.error("reference_placement needs a reference frame")

    def _bind(self, model):
        obj = self._frame(model, self.target, self.placement)
        ref = None if self.reference is None else self._frame(model, self.reference, self.reference_placement,
                                                                  "reference frame")
        return obj, ref


class FramePosition(_FrameSensor):
    """Position (m) of the frame's origin: in the world, or relative to the
    reference frame, in its axes: ``R_refᵀ (p − p_ref)``."""
    kind = "framepos"

    def _value(self, snap, data):
        (b, P), ref = data
        R, p = snap.frame_pose(b, P)
        if ref is None:
            return p
        Rr, pr = snap.frame_pose(*ref)
        return np.einsum("bji,bj->bi", Rr, p - pr)


class FrameOrientation(_FrameSensor):
    """Orientation of the frame as a unit quaternion (w, x, y, z) with
    w ≥ 0: of the frame in the world, or in the reference frame
    (``q_ref⁻¹ q``)."""
    kind = "framequat"
    dim = 4
    datatype = QUATERNION

    def _value(self, snap, data):
        (b, P), ref = data
        R = snap.frame_pose(b, P)[0]
        if ref is not None:
            R = np.einsum("bji,bjk->bik", snap.frame_pose(*ref)[0], R)
        return _quaternions(R)


class FrameAxis(_FrameSensor):
    """One axis (``axis="x"``, ``"y"`` or ``"z"``) of the frame as a unit
    vector, in world axes or in the reference frame's (MuJoCo's
    framexaxis / frameyaxis / framezaxis)."""
    datatype = AXIS

    def __init__(self, frame: Frame, axis: str = "z", name: str | None = None, **kw: Any) -> None:
        if axis not in ("x", "y", "z"):
            raise InputError(f"FrameAxis({_name_of(frame)}): axis must be 'x', 'y' or 'z', got {axis!r}")
        self.axis, self.kind = axis, f"frame{axis}axis"
        super().__init__(frame, name, **kw)

    def _value(self, snap, data):
        (b, P), ref = data
        R = snap.frame_pose(b, P)[0]
        u = R[:, :, "xyz".index(self.axis)]
        if ref is None:
            return u.copy()
        return np.einsum("bji,bj->bi", snap.frame_pose(*ref)[0], u)


class FramePose(_FrameSensor):
    """Position (3) and orientation quaternion (4, w ≥ 0) of the frame,
    in the world or relative to the reference frame: FramePosition and
    FrameOrientation together (7 values)."""
    kind = "framepose"
    dim = 7
    datatype = POSE

    def _value(self, snap, data):
        return np.concatenate([FramePosition._value(self, snap, data), FrameOrientation._value(self, snap, data)],
                              axis=1)


class Magnetometer(_FrameSensor):
    """A magnetic field constant in the world (``field``, 3, tesla in
    world axes; default MuJoCo's ``(0, −0.5, 0)``) seen in the frame's
    axes: ``Rᵀ B``, as MuJoCo's magnetometer."""
    kind = "magnetometer"
    references = False

    def __init__(self, frame: Frame, name: str | None = None, field: ArrayLike = (0.0, -0.5, 0.0),
                 **kw: Any) -> None:
        super().__init__(frame, name, **kw)
        try:
            B = np.array(field, dtype=float).reshape(-1)
        except (TypeError, ValueError):
            B = np.zeros(0)
        if B.shape != (3,) or not np.isfinite(B).all():
            raise self.error(f"field must be 3 finite numbers (world axes), got {field!r}")
        self.field = B

    def _value(self, snap, data):
        (b, P), _ = data
        return np.einsum("bji,j->bi", snap.frame_pose(b, P)[0], self.field)


class _FrameMotion(_FrameSensor):
    """Velocity sensors: in world axes (default), in the frame's own axes
    (``local=True``), or relative to a moving reference frame in its axes."""
    stage = VELOCITY
    angular = False

    def __init__(self, frame: Frame, name: str | None = None, local: bool = False, **kw: Any) -> None:
        super().__init__(frame, name, **kw)
        self.local = bool(local)
        if self.local and self.reference is not None:
            raise self.error("local=True and a reference frame exclude each other")

    def _value(self, snap, data):
        (b, P), ref = data
        w, u = snap.frame_velocity(b, P)
        if ref is not None:
            # MuJoCo's relative velocity: ω − ω_ref and v − v_ref − ω_ref × (p − p_ref), in the reference's axes
            Rr, pr = snap.frame_pose(*ref)
            wr, ur = snap.frame_velocity(*ref)
            x = w - wr if self.angular else u - ur - _cross(wr, snap.frame_pose(b, P)[1] - pr)
            return np.einsum("bji,bj->bi", Rr, x)
        x = w if self.angular else u
        if self.local:
            return np.einsum("bji,bj->bi", snap.frame_pose(b, P)[0], x)
        return x.copy()


class FrameLinearVelocity(_FrameMotion):
    """Velocity (m/s) of the frame's origin (world axes; ``local=True``:
    the frame's axes; with a reference: relative to it, its axes)."""
    kind = "framelinvel"


class FrameAngularVelocity(_FrameMotion):
    """Angular velocity (rad/s) of the frame (world axes; ``local=True``:
    the frame's axes; with a reference: ω − ω_ref in its axes)."""
    kind = "frameangvel"
    angular = True


class Velocimeter(FrameLinearVelocity):
    """Velocity of the frame's origin in the frame's own axes (m/s), as
    MuJoCo's velocimeter."""
    kind = "velocimeter"
    references = False

    def __init__(self, frame: Frame, name: str | None = None, **kw: Any) -> None:
        super().__init__(frame, name, local=True, **kw)


class Gyro(FrameAngularVelocity):
    """Angular velocity in the frame's own axes (rad/s), as MuJoCo's gyro."""
    kind = "gyro"
    references = False

    def __init__(self, frame: Frame, name: str | None = None, **kw: Any) -> None:
        super().__init__(frame, name, local=True, **kw)


class _FrameAcceleration(_FrameSensor):
    stage = ACCELERATION
    references = False
    angular = False

    def __init__(self, frame: Frame, name: str | None = None, local: bool = False, proper: bool = False,
                 **kw: Any) -> None:
        super().__init__(frame, name, **kw)
        self.local, self.proper = bool(local), bool(proper)

    def _value(self, snap, data):
        b, P = data[0]
        wd, acc = snap.frame_acceleration(b, P)
        x = wd if self.angular else (acc - snap.g if self.proper else acc)
        if self.local:
            return np.einsum("bji,bj->bi", snap.frame_pose(b, P)[0], x)
        return x.copy()


class FrameLinearAcceleration(_FrameAcceleration):
    """Acceleration (m/s²) of the frame's origin: the second time
    derivative of its world position (``proper=True``: minus gravity, what
    an accelerometer feels, as MuJoCo's framelinacc), in world axes or,
    ``local=True``, the frame's own."""
    kind = "framelinacc"


class FrameAngularAcceleration(_FrameAcceleration):
    """Angular acceleration ω̇ (rad/s²) of the frame, in world axes or,
    ``local=True``, the frame's own."""
    kind = "frameangacc"
    angular = True


class Accelerometer(FrameLinearAcceleration):
    """Proper acceleration of the frame's origin in the frame's axes:
    ``Rᵀ (p̈ − g)`` (m/s²) — at rest it reads −g in the sensor frame, +9.81
    along the local up direction, as MuJoCo's accelerometer."""
    kind = "accelerometer"

    def __init__(self, frame: Frame, name: str | None = None, **kw: Any) -> None:
        super().__init__(frame, name, local=True, proper=True, **kw)


class IMU(_FrameSensor):
    """Gyro and accelerometer at one frame: ``[ω; Rᵀ(p̈ − g)]`` (6, angular
    first; rad/s and m/s², the frame's axes)."""
    kind = "imu"
    stage = ACCELERATION
    references = False
    dim = 6

    def _value(self, snap, data):
        b, P = data[0]
        R = snap.frame_pose(b, P)[0]
        w = snap.frame_velocity(b, P)[0]
        acc = snap.frame_acceleration(b, P)[1] - snap.g
        return np.concatenate([np.einsum("bji,bj->bi", R, w), np.einsum("bji,bj->bi", R, acc)], axis=1)


class _Wrench(_FrameSensor):
    """The wrench that the parent of the frame's body exerts on that body's
    subtree (through the joint), about the frame's origin, in the frame's
    axes — MuJoCo's force / torque sensors. Computed from the motion:
    ``Σ_subtree (I_k a_k + v_k ×* I_k v_k) − external forces`` with the
    world accelerating at −g (Newton–Euler, Featherstone Table 5.1), so it
    includes gravity, the joint's actuation and constraint forces, and
    excludes the external forces given to the read (contacts, ``f_ext``)."""
    stage = ACCELERATION
    references = False
    part = slice(0, 6)

    def __init__(self, frame: Frame | None = None, name: str | None = None, joint: Frame | None = None,
                 **kw: Any) -> None:
        if (frame is None) == (joint is None):
            raise InputError(f"{type(self).__name__}: give a frame or a joint (its child body's frame), not "
                             f"{'both' if frame is not None else 'neither'}")
        self.joint = joint
        super().__init__(frame if joint is None else joint, name, **kw)  # type: ignore[arg-type]

    def _bind(self, model):
        if self.joint is None:
            return super()._bind(model)
        info = JointPosition._bind(self, model)
        body = info.child
        P = np.eye(4) if self.placement is None else self.placement
        return (body, P), None

    def _value(self, snap, data):
        b, P = data[0]
        R, p = snap.frame_pose(b, P)
        S = snap.subtree_wrench[:, b]
        n = S[:, :3] - _cross(p, S[:, 3:])  # moment about the frame's origin
        out = np.concatenate([np.einsum("bji,bj->bi", R, n), np.einsum("bji,bj->bi", R, S[:, 3:])], axis=1)
        return out[:, self.part]


class Force(_Wrench):
    """Force (N) the parent exerts on the subtree of the frame's body (see
    :class:`Wrench`), in the frame's axes — MuJoCo's force sensor. At rest
    under gravity it reads the weight of the subtree, pointing up."""
    kind = "force"
    part = slice(3, 6)


class Torque(_Wrench):
    """Torque (N·m) about the frame's origin that the parent exerts on the
    subtree of the frame's body (see :class:`Wrench`), in the frame's axes
    — MuJoCo's torque sensor."""
    kind = "torque"
    part = slice(0, 3)


class Wrench(_Wrench):
    """Force/torque cell: ``[n; f]`` (6, angular first; N·m about the
    frame's origin and N, in the frame's axes) that the parent of the
    frame's body exerts on that body's subtree. ``joint=`` instead of a
    frame: the child body's frame of that joint (the joint frame),
    optionally moved by ``placement``."""
    kind = "wrench"
    dim = 6


class _Subtree(Sensor):
    """A quantity of the subtree of a body (name or index; a frame name is
    taken as its body)."""
    dim = 3

    def __init__(self, body: Frame, name: str | None = None, **kw: Any) -> None:
        super().__init__(body, name, **kw)

    def _bind(self, model):
        if isinstance(self.target, str):
            try:
                return model.body_id(self.target)
            except InputError:
                try:
                    return int(frame_of(model, self.target)[0])
                except InputError:
                    pass
        elif isinstance(self.target, numbers.Integral) and 0 <= self.target < model.nbodies:
            return int(self.target)
        raise self.error(f"model '{model.name}' has no body {self.target!r}", ModelError)


class SubtreeCenterOfMass(_Subtree):
    """World position (m) of the centre of mass of the body's subtree (the
    body's origin if the subtree is massless)."""
    kind = "subtreecom"

    def _value(self, snap, b):
        return snap.subtree_com[:, b].copy()


class SubtreeLinearVelocity(_Subtree):
    """Velocity (m/s, world) of the subtree's centre of mass: its linear
    momentum over its mass."""
    kind = "subtreelinvel"
    stage = VELOCITY

    def _value(self, snap, b):
        return snap.subtree_velocity[0][:, b].copy()


class SubtreeAngularMomentum(_Subtree):
    """Angular momentum (kg m²/s, world axes) of the subtree about its
    centre of mass."""
    kind = "subtreeangmom"
    stage = VELOCITY

    def _value(self, snap, b):
        return snap.subtree_velocity[1][:, b].copy()


class Touch(Sensor):
    """Sum of the normal contact forces (N, ≥ 0) on the body of ``frame``
    whose normal ray meets the sensor zone — MuJoCo's touch sensor: a
    contact of that body counts if its point, moved along the contact
    normal away from the body (the ray ``p + s n``, s ≥ 0, n pointing out
    of the sensor's body), meets the zone: a ``zone`` of type "sphere"
    (``size`` = radius), "capsule" / "cylinder" (radius, half length along
    z), "ellipsoid" (semi-axes) or "box" (half sizes) at the frame (with
    ``placement``); ``zone=None``: every contact of the body. Needs the
    contacts: the ``contacts`` argument of :meth:`Sensors.read` (a list of
    :class:`~multibody.constraints.contact.Contact`, e.g.
    ``Simulator.contact.contacts()`` or ``traj.contacts.at(k)``)."""
    kind = "touch"
    stage = ACCELERATION
    datatype = POSITIVE

    def __init__(self, frame: Frame, name: str | None = None, zone: str | None = None, size: ArrayLike | None = None,
                 placement: ArrayLike | None = None, **kw: Any) -> None:
        super().__init__(frame, name, **kw)
        self.placement = _placement(placement, "placement", self.label)
        if zone is not None and zone not in ZONES:
            raise self.error(f"zone must be None or one of {', '.join(map(repr, ZONES))}, got {zone!r}")
        self.zone = zone
        if zone is not None:
            need = {"sphere": 1, "capsule": 2, "cylinder": 2, "ellipsoid": 3, "box": 3}[zone]
            try:
                s = np.array(size, dtype=float).reshape(-1)
            except (TypeError, ValueError):
                s = np.zeros(0)
            if s.size < need or not np.isfinite(s[:need]).all() or (s[:need] <= 0).any():
                raise self.error(f"a {zone} zone needs {need} positive size value(s), got {size!r}")
            self.size = s[:need]
        elif size is not None:
            raise self.error("size goes with a zone")

    def _bind(self, model):
        return self._frame(model, self.target, self.placement)

    def _value(self, snap, data):
        b, P = data
        out = np.zeros((snap.B, 1))
        if snap.contacts is None:
            raise self.error("needs the contacts (contacts=[...] in read / update; a trajectory recorded with "
                             "rollout(..., contacts=True) in over)")
        R, p = snap.frame_pose(b, P) if self.zone is not None else (None, None)
        for k, contacts in enumerate(snap.contacts):
            for c in contacts:
                if c.body1 != b and c.body2 != b:
                    continue
                n = np.asarray(c.frame, dtype=float)[0]
                fn = float(np.dot(c.force, n))
                if fn <= 0.0:
                    continue
                if self.zone is not None:
                    ray = -n if c.body2 == b else n
                    if not _ray_meets(self.zone, self.size, R[k], p[k], np.asarray(c.position, dtype=float), ray):
                        continue
                out[k, 0] += fn
        return out


def _ray_interval(a, b, c):
    """The t-interval where a t² + 2 b t + c ≤ 0 (a > 0), or None."""
    disc = b * b - a * c
    if disc < 0.0:
        return None
    r = math.sqrt(disc)
    return (-b - r) / a, (-b + r) / a


def _ray_meets(zone, size, R, p, point, direction):
    """Whether the ray ``point + s·direction`` (s ≥ 0) meets the solid
    ``zone`` of ``size`` at pose (R, p) (inside counts)."""
    x = R.T @ (point - p)
    d = R.T @ direction
    lo, hi = 0.0, math.inf

    def clip(interval):
        nonlocal lo, hi
        if interval is None:
            return False
        lo, hi = max(lo, interval[0]), min(hi, interval[1])
        return lo <= hi

    def slab(i, h):
        if abs(d[i]) < 1e-300:
            return (-math.inf, math.inf) if abs(x[i]) <= h else None
        t1, t2 = (-h - x[i]) / d[i], (h - x[i]) / d[i]
        return (min(t1, t2), max(t1, t2))

    if zone in ("sphere", "ellipsoid"):
        s = np.full(3, size[0]) if zone == "sphere" else size
        xs, ds = x / s, d / s
        return clip(_ray_interval(ds @ ds, xs @ ds, xs @ xs - 1.0))
    if zone == "box":
        return all(clip(slab(i, size[i])) for i in range(3))
    r, h = size
    if zone == "capsule":
        lo0 = lo
        for z in (-h, h):  # the two end spheres
            lo, hi = lo0, math.inf
            e = x - np.array([0.0, 0.0, z])
            if clip(_ray_interval(d @ d, e @ d, e @ e - r * r)):
                return True
        lo, hi = lo0, math.inf
    # cylinder (also the capsule's middle): the z slab and the infinite cylinder
    if not clip(slab(2, h)):
        return False
    a = d[0] * d[0] + d[1] * d[1]
    c = x[0] * x[0] + x[1] * x[1] - r * r
    if a < 1e-300:
        return c <= 0.0
    return clip(_ray_interval(a, x[0] * d[0] + x[1] * d[1], c))


def _cross(a, b):
    """a × b over the last axis (broadcast): np.cross costs ~10x more on small arrays."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    out = np.empty(np.broadcast(a[..., 0], b[..., 0]).shape + (3,))
    a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
    b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2]
    out[..., 0] = a1 * b2 - a2 * b1
    out[..., 1] = a2 * b0 - a0 * b2
    out[..., 2] = a0 * b1 - a1 * b0
    return out


def _quaternions(R):
    """Unit quaternions (w ≥ 0) of rotation matrices (B, 3, 3)."""
    return np.array([_quat.from_rotation(np.ascontiguousarray(r)) for r in R]).reshape(len(R), 4)


# ---------------------------------------------------------------- kinematics of a batch of states

class _Snapshot:
    """The kinematics of B states that the sensors share, computed once
    and only when a sensor needs them: body poses, body velocities and
    accelerations, the subtree wrenches and momenta."""

    def __init__(self, model, t, q, v, a, gravity, contacts, f_ext):
        self.model, self.t, self.q, self.v, self.a = model, t, q, v, a
        self.B = q.shape[0]
        self.g = np.asarray(model.gravity, dtype=float) if gravity else np.zeros(3)
        self.contacts, self.f_ext = contacts, f_ext
        self._frames = {}

    @cached_property
    def oMi(self):
        m = self.model
        return forward_kinematics(m, self.q[0])[None] if self.B == 1 else forward_kinematics(m, self.q)

    @cached_property
    def motion(self):
        """(vel, acc): body spatial velocities and accelerations (B, nb, 6), body coordinates."""
        m = self.model
        a = np.zeros_like(self.v) if self.a is None else self.a
        if self.B == 1:
            vel, acc = body_motion(m, self.q[0], self.v[0], a[0], reference="local")
            return vel[None], acc[None]
        return body_motion(m, self.q, self.v, a, reference="local")

    @cached_property
    def world(self):
        """(ω, v_O, ω̇, a_O) of every body in world axes (B, nb, 3): angular
        velocity, velocity of the origin, angular acceleration, classical
        acceleration of the origin (a_O = R (a_lin + ω × v_lin), body
        coordinates; without gravity)."""
        R = self.oMi[..., :3, :3]
        vel, acc = self.motion
        rot = lambda x: np.einsum("bnij,bnj->bni", R, x)  # noqa: E731
        return (rot(vel[..., :3]), rot(vel[..., 3:]), rot(acc[..., :3]),
                rot(acc[..., 3:] + _cross(vel[..., :3], vel[..., 3:])))

    def frame_pose(self, body, P):
        """(R (B, 3, 3), p (B, 3)) world pose of the frame at ``P`` in ``body``."""
        key = (body, P.tobytes())
        out = self._frames.get(key)
        if out is None:
            T = self.oMi[:, body]
            out = self._frames[key] = (T[:, :3, :3] @ P[:3, :3], T[:, :3, 3] + T[:, :3, :3] @ P[:3, 3])
        return out

    def _arm(self, body, P):
        """World vector from the body origin to the frame origin (B, 3)."""
        return self.oMi[:, body, :3, :3] @ P[:3, 3]

    def frame_velocity(self, body, P):
        """(ω, v) world angular velocity and velocity of the frame origin (B, 3)."""
        w, vo = self.world[0][:, body], self.world[1][:, body]
        return w, vo + _cross(w, self._arm(body, P))

    def frame_acceleration(self, body, P):
        """(ω̇, a): world angular acceleration and classical acceleration of
        the frame origin, a_O + ω̇ × ρ + ω × (ω × ρ) (B, 3), without gravity."""
        w, _, wd, ao = (x[:, body] for x in self.world)
        rho = self._arm(body, P)
        return wd, ao + _cross(wd, rho) + _cross(w, _cross(w, rho))

    # ------------------------------------------------------------ dynamics of the bodies
    @cached_property
    def _inertia(self):
        tree = self.model.tree
        return tree[:, C_MASS], tree[:, C_H:C_H + 3], tree[:, C_I:C_I + 9].reshape(-1, 3, 3)

    def _to_world(self, n, f):
        """Spatial forces [n; f] (B, nb, 3 each), body coordinates about the
        body origins, as world forces about the world origin (B, nb, 6)."""
        R, p = self.oMi[..., :3, :3], self.oMi[..., :3, 3]
        F = np.einsum("bnij,bnj->bni", R, f)
        return np.concatenate([np.einsum("bnij,bnj->bni", R, n) + _cross(p, F), F], axis=-1)

    @cached_property
    def momentum(self):
        """Spatial momentum I v of every body, world axes about the world origin (B, nb, 6)."""
        m, h, Ib = self._inertia
        vel = self.motion[0]
        w, u = vel[..., :3], vel[..., 3:]
        n = np.einsum("nij,bnj->bni", Ib, w) + _cross(h, u)
        f = m[:, None] * u - _cross(h, w)
        return self._to_world(n, f), (n, f)

    @cached_property
    def subtree_wrench(self):
        """Σ over each body's subtree of ``I a + v ×* I v`` (the world
        accelerating at −g) minus the external forces (contacts, f_ext):
        the force its parent exerts on it (B, nb, 6), world axes about the
        world origin."""
        m, h, Ib = self._inertia
        vel, acc = self.motion
        R = self.oMi[..., :3, :3]
        w, u = vel[..., :3], vel[..., 3:]
        wd = acc[..., :3]
        ud = acc[..., 3:] - np.einsum("bnji,j->bni", R, self.g)  # the world at −g, in body coordinates
        nm, fm = self.momentum[1]
        n = np.einsum("nij,bnj->bni", Ib, wd) + _cross(h, ud) + _cross(w, nm) + _cross(u, fm)
        f = m[:, None] * ud - _cross(h, wd) + _cross(w, fm)
        S = self._to_world(n, f) - self.external
        return _subtree_sums(self.model, S)

    @cached_property
    def external(self):
        """External forces on the bodies, world axes about the world origin (B, nb, 6)."""
        nb = self.model.nbodies
        E = np.zeros((self.B, nb, 6))
        if self.f_ext is not None:
            E += self._to_world(self.f_ext[..., :3], self.f_ext[..., 3:])
        if self.contacts is not None:
            for k, contacts in enumerate(self.contacts):
                for c in contacts:
                    F = np.asarray(c.force, dtype=float)
                    W = np.concatenate([_cross(c.position, F), F])
                    E[k, c.body2] += W
                    E[k, c.body1] -= W
        return E

    @cached_property
    def subtree_com(self):
        m, h = self._inertia[:2]
        M = _subtree_sums(self.model, np.broadcast_to(m, (self.B, len(m))).copy()[..., None])[..., 0]
        R, p = self.oMi[..., :3, :3], self.oMi[..., :3, 3]
        mc = m[None, :, None] * p + np.einsum("bnij,nj->bni", R, h)  # m × world centre of mass
        S = _subtree_sums(self.model, mc)
        com = np.where(M[..., None] > 0, S / np.where(M > 0, M, 1.0)[..., None], p)
        self._subtree_mass = M
        return com

    @cached_property
    def subtree_velocity(self):
        """(velocity of the subtree's centre of mass, angular momentum about it), world (B, nb, 3) each."""
        c = self.subtree_com
        M = self._subtree_mass
        H = _subtree_sums(self.model, self.momentum[0])
        vc = np.where(M[..., None] > 0, H[..., 3:] / np.where(M > 0, M, 1.0)[..., None], 0.0)
        return vc, H[..., :3] - _cross(c, H[..., 3:])


def _subtree_sums(model, X):
    """Sums of X (B, nb, k) over each body's subtree (leaves to root)."""
    X = X.copy()
    parents = model.parents
    for i in range(model.nbodies - 1, 0, -1):
        X[:, parents[i]] += X[:, i]
    return X


# ---------------------------------------------------------------- measurement

class _Channel:
    """The measurement state of one sensor: its noise generator and delay line."""

    def __init__(self, bound, seed, steps):
        s = bound.sensor
        entropy = [s.seed] if s.seed is not None else [int(seed), zlib.crc32(s.name.encode())]
        self.bound = bound
        self.rng = np.random.default_rng(entropy)
        self.sigma = s.noise if s.noise.size == bound.noise_dim else np.full(bound.noise_dim, float(s.noise))
        self.noisy = bool(self.sigma.any())
        self.steps = steps
        self.line = deque(maxlen=steps + 1)
        self.first = None

    def measure(self, y):
        """One measurement of the ideal reading ``y`` (dim,)."""
        b, s = self.bound, self.bound.sensor
        y = np.array(y, dtype=float)
        if self.noisy:
            y = _perturb(b.datatype, y, self.sigma * self.rng.standard_normal(b.noise_dim))
        if s.resolution:
            y = s.resolution * np.round(y / s.resolution)
        if s.cutoff:
            y = np.minimum(y, s.cutoff) if b.datatype == POSITIVE else np.clip(y, -s.cutoff, s.cutoff)
        if not self.steps:
            return y
        self.line.append(y)
        if self.first is None:
            self.first = y
        if len(self.line) > self.steps:
            return self.line[0].copy()
        if s.initial == "first":
            return self.first.copy()
        return np.full(b.dim, np.nan) if s.initial == "nan" else np.zeros(b.dim)


def _perturb(datatype, y, z):
    """``y`` with the noise sample ``z`` (its noise components) applied."""
    if datatype in (REAL, POSITIVE):
        return y + z
    if datatype == QUATERNION:
        return _quat.multiply(y, _quat.exp(z))
    if datatype == AXIS:
        return _quat.to_rotation(_quat.exp(z)) @ y
    return np.concatenate([y[:3] + z[:3], _quat.multiply(y[3:], _quat.exp(z[3:]))])  # POSE


def _delay_steps(sensor, h, what):
    """``sensor.delay`` as a whole number of steps of ``h`` seconds (InputError otherwise)."""
    if not sensor.delay:
        return 0
    n = sensor.delay / h
    k = int(round(n))
    if k < 1 or abs(n - k) > 1e-9 * max(1.0, n):
        raise sensor.error(f"delay {sensor.delay:g} s is not a whole multiple of {what} {h:g} s")
    return k


# ---------------------------------------------------------------- the collection

class Sensors:
    """A set of sensors, by name (their order is kept): ``sensors["imu"]``,
    ``len``, iteration, :attr:`names`.

    ``model`` (optional): resolve the sensors now, so that a missing frame
    or joint is reported here (ModelError naming the sensor); otherwise on
    first use with each model. ``dt``: the time step of :meth:`update` (s),
    needed when a sensor has a delay (which must be a whole multiple of
    it). ``seed``: the noise seed of the collection (each sensor draws
    from its own generator, seeded from this and its name, or from its own
    ``seed``): the same seed gives the same readings.

    Parameters
    ----------
    sensors : Sensor or iterable of Sensor
        The sensors (names unique).
    model : Model, optional
        The model to resolve the sensors on now.
    dt : float, optional
        The time step of :meth:`update` (s).
    seed : int
        The noise seed (default 0).

    Raises
    ------
    InputError
        If an item is not a Sensor, two share a name, ``dt`` is not
        positive or ``seed`` is not an integer >= 0.
    ModelError
        If ``model`` lacks a frame or joint a sensor names.
    """

    def __init__(self, sensors: Sensor | Iterable[Sensor] = (), model: Model | None = None, dt: float | None = None,
                 seed: int = 0) -> None:
        if isinstance(sensors, Sensor):
            sensors = [sensors]
        try:
            sensors = tuple(sensors)
        except TypeError:
            raise InputError(f"Sensors takes a list of sensors, got {sensors!r}") from None
        seen = set()
        for i, s in enumerate(sensors):
            if not isinstance(s, Sensor):
                raise InputError(f"sensors[{i}] is not a Sensor: {s!r}")
            if s.name in seen:
                raise InputError(f"sensors[{i}]: two sensors are named '{s.name}' (names are the readings' keys)")
            seen.add(s.name)
        self._sensors = sensors
        self._index = {s.name: i for i, s in enumerate(sensors)}
        if dt is not None:
            dt = _real(dt, "dt (the time step, s)", "Sensors")
            if not (math.isfinite(dt) and dt > 0):
                raise InputError(f"Sensors: dt must be a positive number of seconds, got {dt}")
        self.dt = dt
        if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, numbers.Integral) or seed < 0:
            raise InputError(f"Sensors: seed must be an integer >= 0, got {seed!r}")
        self.seed: int = int(seed)
        self._steps: list[int | None] = [_delay_steps(s, dt, "the time step dt") if dt is not None else None for s in sensors]
        #: sensors of a model file that were not loaded: (name, reason) pairs (simulation/mjcf_sensors.py)
        self.not_loaded: tuple = ()
        self._bindings: weakref.WeakKeyDictionary[Model, list[Bound]] = weakref.WeakKeyDictionary()
        self._channels: Any = None
        self._last_t: Any = None
        if model is not None:
            self.bind(model)

    def __getstate__(self):
        """Pickle (multiprocessing) without the per-model bindings and the
        measurement state: an unpickled collection starts as after reset()."""
        state = dict(self.__dict__)
        state.update(_bindings=None, _channels=None, _last_t=None)
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._bindings = weakref.WeakKeyDictionary()

    # ------------------------------------------------------------ container
    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self._index)

    def __len__(self) -> int:
        return len(self._sensors)

    def __iter__(self) -> Iterator[Sensor]:
        return iter(self._sensors)

    def __contains__(self, name: object) -> bool:
        return name in self._index

    def __getitem__(self, key: str | int) -> Sensor:
        if isinstance(key, numbers.Integral):
            return self._sensors[key]
        try:
            return self._sensors[self._index[key]]  # type: ignore[index]
        except (KeyError, TypeError):
            raise InputError(f"no sensor named {key!r} (sensors: {', '.join(self.names) or 'none'})") from None

    def __repr__(self):
        return f"Sensors({', '.join(self.names)})"

    # ------------------------------------------------------------ binding
    def bind(self, model: Model) -> list[Bound]:
        """The sensors resolved against ``model`` (cached per model): a
        list of :class:`Bound`. ModelError naming the sensor for a frame,
        joint or body the model does not have; InputError for options that
        do not fit the reading (e.g. a cutoff on a quaternion)."""
        if not isinstance(model, Model):
            raise InputError(f"expected a multibody Model, got {type(model).__name__}")
        bound = self._bindings.get(model)
        if bound is None:
            bound = []
            for i, s in enumerate(self._sensors):
                try:
                    bound.append(s.bind(model))
                except MultibodyError as e:
                    raise type(e)(f"sensors[{i}]: {e}") from None
            self._bindings[model] = bound
        return bound

    def dims(self, model: Model) -> dict[str, int]:
        """name -> size of the reading, for ``model``."""
        return {b.sensor.name: b.dim for b in self.bind(model)}

    def vector(self, readings: Mapping[str, ArrayLike]) -> Array:
        """The readings (a dict of this collection's names) concatenated in
        the sensors' order along the last axis (MuJoCo's sensordata)."""
        try:
            return np.concatenate([np.asarray(readings[s.name], dtype=float) for s in self._sensors], axis=-1)
        except KeyError as e:
            raise InputError(f"vector: the readings have no sensor {e.args[0]!r}") from None

    # ------------------------------------------------------------ reading
    def _snapshot(self, model, t, q, v, a, contacts, f_ext, gravity, bound):
        q = config(model, q)
        single = q.ndim == 1
        Q = np.atleast_2d(q)
        B = Q.shape[0]
        V = None if v is None else np.atleast_2d(velocity(model, v, q))
        A = None if a is None else np.atleast_2d(velocity(model, a, q, "a"))
        if t is None:
            T = np.zeros(B)
        elif np.ndim(t) == 0:
            T = np.full(B, real_number(t, "t"))
        else:
            T = as_float_array(t, "t")
            if T.shape != (B,):
                raise InputError(f"t has shape {T.shape}, expected ({B},) (one time per state) or a number")
        for b in bound:
            s = b.sensor
            if isinstance(s, Touch):
                if contacts is None:
                    raise s.error("needs the contacts: contacts=[...] (a list of Contact, e.g. "
                                  "Simulator.contact.contacts(); [] for none)")
                continue
            if s.stage >= VELOCITY and V is None:
                raise s.error("needs the velocity v")
            if s.stage == ACCELERATION and A is None:
                raise s.error("needs the joint accelerations a (q̈ from forward dynamics with the applied forces)")
        C = None
        if contacts is not None:
            C = [list(contacts)] if single else [list(c) for c in contacts]
            if len(C) != B:
                raise InputError(f"contacts: {len(C)} lists of contacts for {B} states")
        F = None
        if f_ext is not None:
            F = as_float_array(f_ext, "f_ext")
            shape = (model.nbodies, 6)
            if F.shape not in (shape, (B,) + shape):
                raise InputError(f"f_ext has shape {F.shape}, expected {shape} (one [n; f] per body, body frame, "
                                 "about the body origin)" + ("" if single else f" or {(B,) + shape}"))
            if not np.isfinite(F).all():
                raise InputError("f_ext has a non-finite entry")
            F = np.broadcast_to(F, (B,) + shape)
        return _Snapshot(model, T, Q, V, A, gravity, C, F), single

    def _values(self, snap, bound):
        return [b.value(snap) for b in bound]

    def read(self, model: Model, t: ArrayLike, q: ArrayLike, v: ArrayLike | None = None, a: ArrayLike | None = None,
             contacts: Sequence[Any] | None = None, f_ext: ArrayLike | None = None,
             gravity: bool = True) -> dict[str, Array]:
        """Ideal readings at time ``t`` (s) and state ``(q, v)`` with joint
        accelerations ``a`` (q̈, nv): a dict name -> (dim,) array — or, for
        a batch of states (q (B, nq), v and a (B, nv), t scalar or (B,),
        ``contacts`` a list of B lists), (B, dim) arrays. ``v`` is needed
        by velocity sensors, ``a`` by accelerometers, IMUs, acceleration
        and force sensors (InputError naming the sensor otherwise);
        ``contacts`` (list of :class:`~multibody.constraints.contact.Contact`)
        by touch sensors, and they are external forces for the force
        sensors, as is ``f_ext`` ((nbodies, 6) spatial forces [n; f] in the
        body frames about the body origins, :func:`multibody.rnea`'s
        convention). ``gravity=False``: the world does not accelerate (a
        simulator without gravity)."""
        bound = self.bind(model)
        snap, single = self._snapshot(model, t, q, v, a, contacts, f_ext, gravity, bound)
        vals = self._values(snap, bound)
        return {b.sensor.name: (x[0] if single else x) for b, x in zip(bound, vals)}

    # ------------------------------------------------------------ measuring
    def reset(self, seed: int | None = None) -> None:
        """Restart the measurements: fresh noise generators (from ``seed``
        if given, else the collection's seed) and empty delay lines."""
        if seed is not None:
            if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, numbers.Integral) or seed < 0:
                raise InputError(f"Sensors.reset: seed must be an integer >= 0, got {seed!r}")
            self.seed = int(seed)
        self._channels = None
        self._last_t = None

    def update(self, model: Model, t: float, q: ArrayLike, v: ArrayLike | None = None, a: ArrayLike | None = None,
               contacts: Sequence[Any] | None = None, f_ext: ArrayLike | None = None,
               gravity: bool = True) -> dict[str, Array]:
        """One measurement per time step at one state (arguments as
        :meth:`read`): the ideal readings with each sensor's noise,
        resolution, cutoff and delay, as a dict name -> (dim,). Call it
        once per step of ``dt`` (times must advance by ``dt`` when a sensor
        has a delay; :meth:`reset` to start again)."""
        if np.ndim(q) != 1:
            raise InputError("update takes one state (q of shape (nq,)); use over() for a trajectory")
        bound = self.bind(model)
        if self._channels is None or self._channels[0] is not model:
            if any(s.delay for s in self._sensors) and self.dt is None:
                s = next(s for s in self._sensors if s.delay)
                raise s.error("a delay needs the time step: Sensors(..., dt=...)")
            self._channels = (model, [_Channel(b, self.seed, n or 0) for b, n in zip(bound, self._steps)])
            self._last_t = None
        t = _real(t, "t", "Sensors.update")
        if self._last_t is not None and any(self._steps):
            if abs(t - self._last_t - self.dt) > 1e-9 * max(1.0, abs(t)):
                raise InputError(f"Sensors.update: t = {t:g} s does not follow the last update (t = "
                                 f"{self._last_t:g} s) by dt = {self.dt:g} s: the delay lines advance one step per "
                                 "call (reset() to start again)")
        snap, _ = self._snapshot(model, t, q, v, a, contacts, f_ext, gravity, bound)
        vals = self._values(snap, bound)
        self._last_t = t
        return {ch.bound.sensor.name: ch.measure(x[0]) for ch, x in zip(self._channels[1], vals)}

    def step(self, simulator: Simulator, tau: ArrayLike | None = None) -> dict[str, Array]:
        """Advance ``simulator`` one step with joint forces ``tau`` and
        return the measurement of the state it started from
        (:meth:`after_step`). A controller using the readings thus sees
        them one step late, as a sampled sensor would."""
        from .simulator import Simulator
        if not isinstance(simulator, Simulator):
            raise InputError(f"Sensors.step needs a Simulator, got {type(simulator).__name__}")
        before, act = simulator.state, simulator.activation
        simulator.step(tau)
        return self.after_step(simulator, before, act)

    def after_step(self, simulator: Simulator, before: State, activation: ArrayLike | None = None
                   ) -> dict[str, Array]:
        """The measurement (:meth:`update`) of the state ``before`` (a
        :class:`~multibody.simulation.simulator.State`: t, q, v) from which
        ``simulator`` just took one step, with that step's forces: the
        accelerations of its forward dynamics under the applied (clamped)
        τ (``simulator.last_tau``) and the contacts the step solved
        (``simulator.contact.contacts()``), as in :meth:`over` — and as
        MuJoCo's sensordata after ``mj_step``, which belongs to the state
        before the step. What a simulator calls after each step to record
        sensors while it runs. ``activation``: the actuators' activations
        at ``before`` (the step has advanced them; default: the current
        ones, exact only without activation dynamics — :meth:`step` passes
        them)."""
        contacts = simulator.contact.contacts() if simulator.contact is not None else []
        model = simulator.model
        a = None
        if any(b.sensor.stage == ACCELERATION and not isinstance(b.sensor, Touch) for b in self.bind(model)):
            a = forward_acceleration(simulator, before.t, before.q, before.v, simulator.last_tau, contacts,
                                     activation=activation)
        F = actuator_body_forces(simulator, before.t, before.q, before.v, activation=activation) \
            if _path_actuators(simulator) else None
        return self.update(model, before.t, before.q, before.v, a, contacts=contacts, f_ext=F,
                           gravity=simulator.system.gravity)

    def over(self, trajectory: Trajectory, simulator: Simulator, measured: bool = True,
             seed: int | None = None) -> dict[str, Array]:
        """The readings along ``trajectory`` (recorded by ``simulator``'s
        rollout): a dict name -> (N, dim) array, one row per sample.

        Sample k is read at (t_k, q_k, v_k) with the accelerations of the
        forward dynamics of ``simulator`` (its force elements, joint
        damping and springs, gravity, loop constraints; its actuators with
        the controls of that step, ``control[k + 1]``, and the activations
        at sample k) under the joint
        forces of the step that starts at sample k (``tau[k + 1]``) and,
        when the trajectory recorded its contacts, the mean contact forces
        of that step (``contacts.at(k + 1)``, which are also what touch and
        force sensors see); the last sample holds the last step's. So with
        ``record_every=1`` and semi-implicit Euler, q̈_k is exactly
        ``(v_{k+1} − v_k) / dt`` away from limits. Impulses of joint limits
        and of the constraint projection are not in q̈.

        ``measured`` (default): noise, resolution, cutoff and delay applied
        sample by sample (the sample spacing is the time step of the delay
        lines), with fresh generators (``seed``, default the collection's):
        the readings :meth:`update` gives along the samples after
        :meth:`reset`. ``measured=False``: ideal readings."""
        from .simulator import Simulator
        from .trajectory import Trajectory
        if not isinstance(simulator, Simulator):
            raise InputError(f"over needs the Simulator that recorded the trajectory, got {type(simulator).__name__}")
        if not isinstance(trajectory, Trajectory):
            raise InputError(f"over needs a Trajectory, got {type(trajectory).__name__}")
        model = simulator.model
        if trajectory.model_fingerprint is not None:
            trajectory.check_model(model)
        elif trajectory.q.shape[1:] != (model.nq,) or trajectory.v.shape[1:] != (model.nv,):
            raise InputError(f"the trajectory's q {trajectory.q.shape} / v {trajectory.v.shape} do not fit model "
                             f"'{model.name}'")
        bound = self.bind(model)
        t, Q, V, tau = trajectory.t, trajectory.q, trajectory.v, trajectory.tau
        N = len(t)
        out = {b.sensor.name: np.zeros((N, b.dim)) for b in bound}
        if N == 0:
            return out
        nxt = np.minimum(np.arange(N) + 1, N - 1)
        record = trajectory.contacts
        touch = any(isinstance(b.sensor, Touch) for b in bound)
        if record is None and simulator.contact is not None and touch:
            s = next(b.sensor for b in bound if isinstance(b.sensor, Touch))
            raise s.error("needs the contacts of the trajectory: record it with rollout(..., contacts=True)")
        contacts = [record.at(int(k)) for k in nxt] if record is not None else [[] for _ in range(N)]
        A = None
        nu = trajectory.control.shape[1] if trajectory.control is not None and trajectory.control.ndim == 2 else 0

        def actuation(k):
            # the step from sample k: the controls it recorded (row k + 1) and the activations at its start
            if not simulator.nu or nu != simulator.nu:
                return None, None
            return trajectory.control[nxt[k]], (trajectory.activation[k] if simulator.na else None)
        if any(b.sensor.stage == ACCELERATION and not isinstance(b.sensor, Touch) for b in bound):
            A = np.empty_like(V)
            for k in range(N):
                A[k] = forward_acceleration(simulator, t[k], Q[k], V[k], tau[nxt[k]], contacts[k], *actuation(k))
        F = None
        if _path_actuators(simulator):
            F = np.array([actuator_body_forces(simulator, t[k], Q[k], V[k], *actuation(k)) for k in range(N)])
        snap = _Snapshot(model, t.astype(float), Q, V, A, simulator.system.gravity, contacts, F)
        vals = self._values(snap, bound)
        if not measured:
            return {b.sensor.name: x for b, x in zip(bound, vals)}
        h = float(t[1] - t[0]) if N > 1 else (self.dt or simulator.dt)
        if N > 2 and not np.allclose(np.diff(t), h, rtol=1e-9, atol=1e-12):
            raise InputError("over: the trajectory's samples are not evenly spaced in time (the delay lines need it)")
        seed = self.seed if seed is None else seed
        for b, x in zip(bound, vals):
            ch = _Channel(b, seed, _delay_steps(b.sensor, h, "the trajectory's sample spacing"))
            y = out[b.sensor.name]
            for k in range(N):
                y[k] = ch.measure(x[k])
        return out


@contextmanager
def _actuation(simulator, control, activation):
    """The simulator's actuators with the controls ``control`` and the
    activations ``activation`` (None: as they are) inside the block, as
    they were after it."""
    io = simulator._act_set.io
    saved = io.ctrl.copy(), io.act.copy()
    try:
        if control is not None:
            io.ctrl[:] = control
        if activation is not None:
            io.act[:] = activation
        yield
    finally:
        io.ctrl[:], io.act[:] = saved


def _path_actuators(simulator):
    """The actuators of ``simulator`` that act through spatial paths."""
    from ..forces.paths import Path
    aset = simulator._act_set
    return [] if aset is None else [k for k, a in enumerate(aset.actuators) if isinstance(a.transmission, Path)]


def actuator_body_forces(simulator: Simulator, t: float, q: ArrayLike, v: ArrayLike, control: ArrayLike | None = None,
                         activation: ArrayLike | None = None) -> Array:
    """The pull of the actuators acting through spatial paths (MuJoCo's
    spatial tendons, muscles over via points) on the bodies their points
    are on, as (nbodies, 6) spatial forces ``[n; f]`` in the body frames
    about the body origins (``f_ext``'s convention): at each path point
    the force ``gear · f · ∂l/∂x`` (:meth:`~multibody.forces.paths.Path.point_forces`),
    with the actuator forces ``f`` at (q, v) under ``control`` /
    ``activation`` (default: the simulator's). These forces reach the
    bodies directly, not through their joints, so the force and torque
    sensors leave them out of the joint's load — as MuJoCo's do."""
    model, aset = simulator.model, simulator._act_set
    with _actuation(simulator, control, activation):
        f = aset.forces(q, v, t)  # type: ignore[union-attr]
    oMi = None
    W = np.zeros((model.nbodies, 6))
    for k in _path_actuators(simulator):
        a = aset.actuators[k]  # type: ignore[union-attr]
        path, binding = a.transmission, aset.transmission_bindings[k]  # type: ignore[union-attr]
        G = path.point_forces(model, q, a.gear * f[k])
        X = path.points(model, q)
        if oMi is None:
            oMi = forward_kinematics(model, q)
        for body, x, F in zip(binding.ibuf[1:1 + len(X)], X, G):
            if body == 0:
                continue
            R, p = oMi[body][:3, :3], oMi[body][:3, 3]
            W[body, :3] += R.T @ _cross(x - p, F)
            W[body, 3:] += R.T @ F
    return W


def forward_acceleration(simulator: Simulator, t: float, q: ArrayLike, v: ArrayLike, tau: ArrayLike,
                         contacts: Sequence[Any] = (), control: ArrayLike | None = None,
                         activation: ArrayLike | None = None) -> Array:
    """q̈ at (t, q, v) by the forward dynamics of ``simulator`` (its force
    elements, actuators, joint damping and springs, gravity and loop
    constraints: ``simulator.system.acceleration``) under the joint forces
    ``tau`` and the contact forces of ``contacts`` (a list of
    :class:`~multibody.constraints.contact.Contact`: force on geometry 2 at
    its point, the opposite on geometry 1), mapped to joint forces by the
    bodies' world Jacobians. The actuators act with the controls
    ``control`` (nu,) and activations ``activation`` (na,) — default: the
    simulator's current ones — which are restored afterwards."""
    if simulator._act_set is not None and (control is not None or activation is not None):
        with _actuation(simulator, control, activation):
            return forward_acceleration(simulator, t, q, v, tau, contacts)
    model = simulator.model
    tau = np.array(tau, dtype=float)
    if contacts:
        W = np.zeros((model.nbodies, 6))
        for c in contacts:
            F = np.asarray(c.force, dtype=float)
            w = np.concatenate([_cross(c.position, F), F])
            W[c.body2] += w
            W[c.body1] -= w
        for b in np.nonzero(np.abs(W[1:]).sum(axis=1))[0] + 1:
            J = jacobian(model, q, model.frame_id(model.body_names[b]), reference="world")
            tau += J.T @ W[b]
    # the systems take float64 arrays; q and v are forwarded as given (their checks are the system's)
    return simulator.system.acceleration(t, q, v, tau)  # type: ignore[arg-type]
