"""The sensors of an MJCF model as :mod:`multibody.simulation.sensors`
objects: ``load_sensors(source, model) -> Sensors`` (docs/sensors.md,
"MJCF").

``source`` is what :func:`~multibody.io.load_mjcf` loaded ``model`` from
(a file name, the XML text, a ``mujoco.MjSpec`` or a compiled
``mujoco.MjModel``); MuJoCo compiles it and the compiled sensors are read
from ``MjModel``: ``sensor_type``, ``sensor_objtype`` / ``objid`` (the
measured object), ``reftype`` / ``refid`` (the reference frame of the frame
sensors), ``cutoff``, ``noise``, and the history attributes ``nsample``,
``delay``, ``interval`` of MuJoCo 3.3+. Objects become the frames of the
multibody model: a body (``xbody``) its frame (the frame named after it,
which has MuJoCo's body pose), a body's inertial frame (``body``) that
frame with ``body_ipos`` / ``body_iquat``, a site, geom or fixed camera its
body's frame with the object's compiled pose; joints by the loader's joint
names.

* ``noise`` is metadata in MuJoCo (it stores a standard deviation and adds
  nothing since MuJoCo 3.1.4): it is kept as ``sensor.mujoco_noise`` and
  applied as the sensor's Gaussian noise only with ``noise=True``.
* ``cutoff`` is the sensor's cutoff (real and positive readings; MuJoCo
  ignores it for quaternions and axes, and so does the mapping).
* ``delay`` (with ``nsample``): the sensor's delay when it is a whole
  number of time steps not beyond the buffer (``delay ≤ nsample ·
  timestep``); delayed sensors start at zero (``initial="zero"``), as
  MuJoCo's history buffers do. A periodic ``interval`` or any other delay
  is not loaded.
* Sensors without a counterpart (tendons, actuators, limits, rangefinder,
  camera projection, collision and contact sensors, energies, user and
  plugin sensors), and force / torque / subtree sensors on a body without
  joints that ``load_mjcf`` merged into its parent (its subtree is not a
  body of the model; ``merge_fixed=False`` keeps it) are not loaded: they
  are listed in ``Sensors.not_loaded`` as (name, reason) and named in one
  :class:`~multibody.errors.ModelWarning`.
"""
import warnings
from typing import Any

import numpy as np

from ..errors import InputError, ModelFileError, ModelWarning
from ..model.builder import WORLD
from ..model.model import Model
# the one io module that reaches up to L5: it builds simulation objects; nothing below imports it
from ..io._common import pose, quat_to_rotation, read_source, unique_name
from ..io.mjcf import _import_mujoco, _oneline
from . import sensors as S


class _Skip(Exception):
    """A sensor that is not loaded (the message says why)."""


def _compiled(mujoco, source):
    """The MjModel of ``source`` (an MjModel, an MjSpec, a file name or MJCF text)."""
    if isinstance(source, mujoco.MjModel):
        return source
    try:
        if isinstance(source, mujoco.MjSpec):
            return source.copy().compile()
        text, path = read_source(source, "MJCF")
        spec = mujoco.MjSpec.from_file(path) if path else mujoco.MjSpec.from_string(text)
        try:
            return spec.compile()
        except Exception as e:  # the loader's inertia="warn" path compiles again with balanceinertia
            if "balanceinertia" not in str(e):
                raise
            spec.compiler.balanceinertia = True
            return spec.compile()
    except ModelFileError:
        raise
    except Exception as e:  # MuJoCo raises ValueError and friends
        raise ModelFileError(f"load_sensors: MuJoCo could not compile the MJCF: {_oneline(e)}") from None


class _Mapper:
    def __init__(self, mujoco, m, model):
        self.mj, self.m, self.model = mujoco, m, model
        O = mujoco.mjtObj
        self.O = O
        name = lambda t, i: mujoco.mj_id2name(m, t, int(i))  # noqa: E731
        self.body_names = [WORLD] + [name(O.mjOBJ_BODY, i) or f"body{i}" for i in range(1, m.nbody)]
        # the loader's joint names: unnamed joints are "<body>_joint<k>" (k: rank in the body), made unique
        jn = [name(O.mjOBJ_JOINT, j) for j in range(m.njnt)]
        taken = {n for n in jn if n}
        for j in range(m.njnt):
            if not jn[j]:
                b = int(m.jnt_bodyid[j])
                jn[j] = unique_name(f"{self.body_names[b]}_joint{j - int(m.body_jntadr[b])}", taken)
        self.joint_names = jn
        self.name = name

    # ------------------------------------------------------------ objects
    def body_frame(self, b):
        n = self.body_names[b]
        if n not in self.model._frame_index:
            raise _Skip(f"body '{n}' is not a frame of model '{self.model.name}'")
        return n

    def frame(self, objtype, objid):
        """(frame name, placement or None) of a MuJoCo object."""
        m, O = self.m, self.O
        if objtype == O.mjOBJ_XBODY:
            return self.body_frame(objid), None
        if objtype == O.mjOBJ_BODY:  # the inertial frame
            return self.body_frame(objid), pose(quat_to_rotation(m.body_iquat[objid]), m.body_ipos[objid])
        if objtype == O.mjOBJ_SITE:
            body = int(m.site_bodyid[objid])
            P = pose(quat_to_rotation(m.site_quat[objid]), m.site_pos[objid])
            n = self.name(O.mjOBJ_SITE, objid)
            f = self.model._frame_lookup.get(n) if n else None
            if f is not None and f[0] == self.model.frame_body[self.model.frame_id(self.body_frame(body))] \
                    and np.allclose(f[1], self.model.frame_placement[self.model.frame_id(self.body_frame(body))] @ P,
                                    atol=1e-12):
                return n, None  # the site's own frame (the loader made it)
            return self.body_frame(body), P
        if objtype == O.mjOBJ_GEOM:
            return self.body_frame(int(m.geom_bodyid[objid])), pose(quat_to_rotation(m.geom_quat[objid]),
                                                                     m.geom_pos[objid])
        if objtype == O.mjOBJ_CAMERA:
            if int(m.cam_mode[objid]) != int(self.mj.mjtCamLight.mjCAMLIGHT_FIXED):
                raise _Skip("a camera that tracks or targets (mode other than 'fixed') moves on its own")
            return self.body_frame(int(m.cam_bodyid[objid])), pose(quat_to_rotation(m.cam_quat[objid]),
                                                                    m.cam_pos[objid])
        raise _Skip(f"object type {self.mj.mjtObj(int(objtype)).name} is not a frame")

    def joint(self, j, kinds):
        m, JT = self.m, self.mj.mjtJoint
        if int(m.jnt_type[j]) not in kinds:
            raise _Skip(f"joint type {JT(int(m.jnt_type[j])).name}")
        n = self.joint_names[j]
        if n not in self.model._joint_index:
            raise _Skip(f"joint '{n}' is not a joint of model '{self.model.name}'")
        return n

    def subtree_body(self, b, what):
        """The multibody body whose subtree is MuJoCo body ``b``'s."""
        n = self.body_frame(b)
        f = self.model.frames[self.model.frame_id(n)]
        if b > 0 and int(self.m.body_jntnum[b]) == 0 and f.kind == "fixed":
            host = self.model.body_names[f.body]
            raise _Skip(f"{what} on body '{n}', which has no joint and is merged into '{host}' (its subtree is not "
                        "a body of the model; load_mjcf(..., merge_fixed=False) keeps it)")
        return self.model.body_names[f.body]

    # ------------------------------------------------------------ sensors
    def sensor(self, i, kw):
        mj, m, O = self.mj, self.m, self.O
        T = mj.mjtSensor
        t = int(m.sensor_type[i])
        ot, oid = int(m.sensor_objtype[i]), int(m.sensor_objid[i])
        rt, rid = int(m.sensor_reftype[i]), int(m.sensor_refid[i])
        JT = mj.mjtJoint
        if t == T.mjSENS_JOINTPOS:
            return S.JointPosition(self.joint(oid, (JT.mjJNT_HINGE, JT.mjJNT_SLIDE)), **kw)
        if t == T.mjSENS_JOINTVEL:
            return S.JointVelocity(self.joint(oid, (JT.mjJNT_HINGE, JT.mjJNT_SLIDE)), **kw)
        if t == T.mjSENS_BALLQUAT:
            return S.JointPosition(self.joint(oid, (JT.mjJNT_BALL,)), **kw)
        if t == T.mjSENS_BALLANGVEL:
            return S.JointVelocity(self.joint(oid, (JT.mjJNT_BALL,)), **kw)
        frames = {T.mjSENS_FRAMEPOS: S.FramePosition, T.mjSENS_FRAMEQUAT: S.FrameOrientation,
                  T.mjSENS_FRAMEXAXIS: "x", T.mjSENS_FRAMEYAXIS: "y", T.mjSENS_FRAMEZAXIS: "z",
                  T.mjSENS_FRAMELINVEL: S.FrameLinearVelocity, T.mjSENS_FRAMEANGVEL: S.FrameAngularVelocity}
        if t in frames:
            f, P = self.frame(ot, oid)
            ref = {}
            if rid >= 0:
                rf, rP = self.frame(rt, rid)
                ref = dict(reference=rf, reference_placement=rP)
            cls = frames[t]
            if isinstance(cls, str):
                return S.FrameAxis(f, cls, placement=P, **ref, **kw)
            return cls(f, placement=P, **ref, **kw)
        if t in (T.mjSENS_FRAMELINACC, T.mjSENS_FRAMEANGACC):
            f, P = self.frame(ot, oid)
            if t == T.mjSENS_FRAMELINACC:  # MuJoCo's cacc carries −g: the proper acceleration
                return S.FrameLinearAcceleration(f, placement=P, proper=True, **kw)
            return S.FrameAngularAcceleration(f, placement=P, **kw)
        sites = {T.mjSENS_ACCELEROMETER: S.Accelerometer, T.mjSENS_GYRO: S.Gyro, T.mjSENS_VELOCIMETER: S.Velocimeter}
        if t in sites:
            f, P = self.frame(O.mjOBJ_SITE, oid)
            return sites[t](f, placement=P, **kw)
        if t == T.mjSENS_MAGNETOMETER:
            f, P = self.frame(O.mjOBJ_SITE, oid)
            return S.Magnetometer(f, placement=P, field=np.array(m.opt.magnetic, dtype=float), **kw)
        if t in (T.mjSENS_FORCE, T.mjSENS_TORQUE):
            f, P = self.frame(O.mjOBJ_SITE, oid)
            self.subtree_body(int(m.site_bodyid[oid]), "a force/torque sensor")
            return (S.Force if t == T.mjSENS_FORCE else S.Torque)(f, placement=P, **kw)
        subtree = {T.mjSENS_SUBTREECOM: S.SubtreeCenterOfMass, T.mjSENS_SUBTREELINVEL: S.SubtreeLinearVelocity,
                   T.mjSENS_SUBTREEANGMOM: S.SubtreeAngularMomentum}
        if t in subtree:
            return subtree[t](self.subtree_body(oid, "a subtree sensor"), **kw)
        if t == T.mjSENS_TOUCH:
            f, P = self.frame(O.mjOBJ_SITE, oid)
            G = mj.mjtGeom
            zone = {G.mjGEOM_SPHERE: "sphere", G.mjGEOM_CAPSULE: "capsule", G.mjGEOM_ELLIPSOID: "ellipsoid",
                    G.mjGEOM_CYLINDER: "cylinder", G.mjGEOM_BOX: "box"}.get(int(m.site_type[oid]))
            if zone is None:
                raise _Skip(f"a touch zone of type {G(int(m.site_type[oid])).name}")
            return S.Touch(f, placement=P, zone=zone, size=np.array(m.site_size[oid], dtype=float), **kw)
        if t == T.mjSENS_CLOCK:
            return S.Clock(**kw)
        raise _Skip("no counterpart in multibody.simulation.sensors")

    def options(self, i, name, noise):
        """The keywords common to every sensor: name, noise, cutoff, delay."""
        m = self.m
        kw = dict(name=name)
        if noise and m.sensor_noise[i] > 0:
            kw["noise"] = float(m.sensor_noise[i])
        datatype = int(m.sensor_datatype[i])
        D = self.mj.mjtDataType
        if m.sensor_cutoff[i] > 0 and datatype in (D.mjDATATYPE_REAL, D.mjDATATYPE_POSITIVE):
            kw["cutoff"] = float(m.sensor_cutoff[i])
        if float(m.sensor_interval[i][0]) > 0:
            raise _Skip(f"interval {float(m.sensor_interval[i][0]):g} s (periodic sampling) has no counterpart")
        delay = float(m.sensor_delay[i])
        if delay > 0:
            h = float(m.opt.timestep)
            k = round(delay / h)
            nsample = int(m.sensor_history[i][0])
            if k < 1 or abs(delay / h - k) > 1e-9 * max(1.0, delay / h):
                raise _Skip(f"delay {delay:g} s is not a whole number of time steps ({h:g} s)")
            if k > nsample:
                raise _Skip(f"delay {delay:g} s reaches beyond its buffer of {nsample} samples (MuJoCo extrapolates)")
            kw.update(delay=k * h, initial="zero")
        return kw


def load_sensors(source: Any, model: Model, noise: bool = False, seed: int = 0, warn: bool = True) -> S.Sensors:
    """The sensors of the MJCF ``source`` (file name, MJCF text, MjSpec or
    compiled MjModel: the one ``model`` was loaded from by
    :func:`~multibody.io.load_mjcf`) as a
    :class:`~multibody.simulation.sensors.Sensors` bound to ``model``, with
    ``dt`` = MuJoCo's timestep and the noise seed ``seed``; readings keep
    MuJoCo's sensor names (unnamed: ``"<type><index>"``, e.g.
    ``"accelerometer3"``) and order (``Sensors.vector`` is MuJoCo's
    ``sensordata`` layout for the loaded ones). ``noise=True`` applies
    MuJoCo's ``noise`` attribute as Gaussian noise (it is only metadata in
    MuJoCo). What is not loaded is in ``Sensors.not_loaded`` and, with
    ``warn``, named in one ModelWarning. The mapping: module docstring and
    docs/sensors.md.

    Parameters
    ----------
    source : str, pathlib.Path, mujoco.MjSpec or mujoco.MjModel
        The MJCF file, text, spec or compiled model ``model`` was loaded from.
    model : Model
        The model the sensors read.
    noise : bool
        Apply MuJoCo's ``noise`` attribute as Gaussian noise (default False).
    seed : int
        The noise seed (default 0).
    warn : bool
        Emit a ModelWarning naming the sensors not loaded (default True).

    Returns
    -------
    Sensors
        The loaded sensors, bound to ``model``.

    Raises
    ------
    InputError
        If ``model`` is not a Model.
    ModelFileError
        If MuJoCo cannot read ``source``.

    Warns
    -----
    ModelWarning
        With ``warn``, naming what is not loaded.
    """
    if not isinstance(model, Model):
        raise InputError(f"load_sensors needs the multibody Model loaded from the same MJCF, got "
                         f"{type(model).__name__}")
    mujoco = _import_mujoco()
    m = _compiled(mujoco, source)
    mp = _Mapper(mujoco, m, model)
    T = mujoco.mjtSensor
    out, skipped = [], []
    for i in range(m.nsensor):
        tname = T(int(m.sensor_type[i])).name.replace("mjSENS_", "").lower()
        name = mp.name(mujoco.mjtObj.mjOBJ_SENSOR, i) or f"{tname}{i}"
        try:
            kw = mp.options(i, name, noise)
            s = mp.sensor(i, kw)
        except _Skip as e:
            skipped.append((name, f"{tname}: {e}"))
            continue
        s.mujoco_noise = float(m.sensor_noise[i])
        out.append(s)
    sensors = S.Sensors(out, model=model, dt=float(m.opt.timestep), seed=seed)
    sensors.not_loaded = tuple(skipped)
    if skipped and warn:
        warnings.warn(ModelWarning(f"load_sensors: {len(skipped)} MJCF sensor(s) not loaded: "
                                   + "; ".join(f"'{n}' ({r})" for n, r in skipped)), stacklevel=2)
    return sensors


__all__ = ["load_sensors"]
