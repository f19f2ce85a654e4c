"""A recorded simulation: times, states, applied forces and energies, and
its file format (docs/simulation.md, "Trajectory files")."""
from __future__ import annotations

import hashlib
import json
import numbers
import os
import secrets
import weakref
import struct
import zipfile
import zlib
from dataclasses import dataclass, field, fields, is_dataclass
from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from ..errors import InputError
from .contact_record import ContactRecord
from .._typing import Array, PathLike

if TYPE_CHECKING:
    from ..model.model import Model

FORMAT = "multibody-trajectory"
VERSION = 2
# the arrays of a trajectory file: name -> (dtype kind, number of columns: None for (N,), "nq", "nv", "P")
_ARRAYS = {
    "t": ("f", None), "q": ("f", "nq"), "v": ("f", "nv"), "tau": ("f", "nv"), "kinetic": ("f", None),
    "potential": ("f", None), "effort_clamped": ("b", "nv"), "velocity_clamped": ("b", "nv"), "power": ("f", "P"),
    "constraint_residual": ("f", None),
}


_DERIVED = ("kinetic", "potential", "power", "constraint_residual")
# the actuators' records (docs/actuators.md): name -> number of columns ("nu" controls, "na" activations);
# optional in files (absent: no actuators)
_ACTUATOR_ARRAYS = {"control": "nu", "activation": "na", "actuator_force": "nu"}
# the transmissions' lengths and rates at each sample (MuJoCo's actuator_length / actuator_velocity): derived
# from the recorded states when first read; optional in files (absent: NaN, not recorded)
_LENGTHS = ("actuator_length", "actuator_velocity")
# the particles of a simulator with a ParticleSystem (docs/deformables.md): (N, n, 3) world positions and
# velocities of every particle; optional in files (absent: no particles)
_PARTICLE_ARRAYS = ("particle_position", "particle_velocity")
# the optional contact record (ContactRecord's arrays): name -> (dtype kind, trailing shape after (N, cap))
_CONTACT_SHAPES = {"count": ("i", None), "geom": ("i", (2,)), "body": ("i", (2,)), "position": ("f", (3,)),
                   "frame": ("f", (3, 3)), "distance": ("f", ()), "impulse": ("f", (3,)), "force": ("f", (3,))}
_CONTACT_ARRAYS = tuple(_CONTACT_SHAPES)


# ------------------------------------------------------------------ model fingerprint

def _feed(h, x):
    """Hash ``x`` unambiguously (type tag, length and content): arrays by
    dtype, shape and little-endian bytes (not their printed form, which
    depends on NumPy's print options), floats by ``repr`` (exact)."""
    if x is None:
        h.update(b"N")
    elif isinstance(x, (bool, np.bool_)):
        h.update(b"B1" if x else b"B0")
    elif isinstance(x, numbers.Integral):
        h.update(b"I" + str(int(x)).encode() + b";")
    elif isinstance(x, numbers.Real):
        h.update(b"F" + repr(float(x)).encode() + b";")
    elif isinstance(x, str):
        b = x.encode("utf-8")
        h.update(b"S" + str(len(b)).encode() + b":" + b)
    elif isinstance(x, np.ndarray):
        a = np.ascontiguousarray(x)
        if a.dtype.kind == "f":
            a = a.astype("<f8")
        elif a.dtype.kind in "iu":
            a = a.astype("<i8")
        elif a.dtype.kind == "b":
            a = a.astype("u1")
        else:
            _feed(h, a.tolist())
            return
        h.update(b"A" + a.dtype.str.encode() + repr(a.shape).encode() + a.tobytes())
    elif isinstance(x, (list, tuple)):
        h.update(b"L" + str(len(x)).encode() + b"[")
        for y in x:
            _feed(h, y)
        h.update(b"]")
    elif isinstance(x, dict):
        h.update(b"D" + str(len(x)).encode() + b"{")
        for k in sorted(x, key=str):
            _feed(h, str(k))
            _feed(h, x[k])
        h.update(b"}")
    elif is_dataclass(x):
        h.update(b"C" + type(x).__name__.encode() + b"(")
        for f in fields(x):
            _feed(h, f.name)
            _feed(h, getattr(x, f.name))
        h.update(b")")
    else:
        _feed(h, f"{type(x).__module__}.{type(x).__qualname__}")
        _feed(h, str(x))


_FINGERPRINTS: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()  # models never change once built (their arrays are read-only)


def model_fingerprint(model: Model) -> str:
    """A SHA-256 hex digest of everything in ``model`` that its dynamics
    depends on: the sizes (nq, nv, bodies), the tree table (joint types,
    placements, axes, inertias), the body, joint and frame names, the
    masses, centres of mass and inertias, the joint limits, damping,
    friction, armature and springs, gravity, the frames, couplings, equality
    constraints and loop joints, and the actuators and tendons a model file
    declared (when it declared any). Two loads of the same file give the same
    fingerprint; any change to one of these values changes it. The model's
    name and its geometries are not included (renaming a model does not
    change its motion). Computed once per model (~0.5 ms on Talos) and
    cached."""
    try:
        return _FINGERPRINTS[model]
    except (KeyError, TypeError):
        pass
    h = hashlib.sha256(b"multibody-model-fingerprint/1")
    for part in (model.nq, model.nv, model.nbodies, model.tree, model.body_names, model.joint_names,
                 model.frame_names, model.body_mass, model.body_com, model.body_inertia, model.lower_limit,
                 model.upper_limit, model.velocity_limit, model.effort_limit, model.damping, model.friction,
                 model.armature, model.stiffness, model.spring_reference, model.gravity, model.frame_body,
                 model.frame_placement, model.couplings,
                 model.equalities, model.loop_joints):
        _feed(h, part)
    declared = (getattr(model, "actuators", ()), getattr(model, "tendons", ()))
    if any(declared):  # only then: the fingerprints of models without them stay what they were
        _feed(h, ("actuators and tendons",) + declared)
    fp = h.hexdigest()
    try:
        _FINGERPRINTS[model] = fp
    except TypeError:  # not weakly referenceable: no cache
        pass
    return fp


# ------------------------------------------------------------------ metadata

def _jsonable(x, where):
    """``x`` as JSON-ready Python values (None, bool, int, float, str,
    lists, dicts with string keys); tuples become lists; NumPy scalars
    become their Python type. Anything else raises InputError naming
    ``where`` (e.g. ``meta['gains'][2]``)."""
    if x is None or isinstance(x, (bool, str)):
        return x
    if isinstance(x, np.bool_):
        return bool(x)
    if isinstance(x, numbers.Integral):
        return int(x)
    if isinstance(x, numbers.Real):
        return float(x)
    if isinstance(x, (list, tuple)):
        return [_jsonable(y, f"{where}[{k}]") for k, y in enumerate(x)]
    if isinstance(x, dict):
        out = {}
        for k, y in x.items():
            if not isinstance(k, str):
                raise InputError(f"{where} has the key {k!r}: trajectory metadata keys must be strings")
            out[k] = _jsonable(y, f"{where}[{k!r}]")
        return out
    hint = " (store arrays as lists: x.tolist())" if isinstance(x, np.ndarray) else ""
    raise InputError(f"{where} is a {type(x).__name__}: trajectory metadata holds None, bools, ints, floats, "
                     f"strings and lists or dicts of them{hint}")


def _file_name(path, what):
    if isinstance(path, (str, os.PathLike)):
        try:
            name = os.fspath(path)
        except TypeError:
            name = None
        if isinstance(name, str) and name:
            return name
    raise InputError(f"{what} needs a file name (str or path), got {path!r}")


def _fsync_directory(directory):
    """Make the rename durable (POSIX); not possible everywhere (Windows)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


@dataclass
class Trajectory:
    """Samples of a rollout: N samples, each at the end of a recorded step
    (the first: the initial state). Made by :meth:`Simulator.rollout` or
    :meth:`load`; the fields below are its attributes.

    Parameters
    ----------
    t : numpy.ndarray
        Times (N,) (s).
    q : numpy.ndarray
        Configurations (N, nq).
    v : numpy.ndarray
        Generalized velocities (N, nv).
    tau : numpy.ndarray
        (N, nv) joint forces applied during the step that ended at each
        sample (after effort clamping).
    kinetic, potential : numpy.ndarray
        Kinetic and potential energy (N,) (J; potential of gravity plus
        conservative force elements).
    meta : dict
        Model name, integrator, dt, and whatever a user adds: JSON values.
    effort_clamped, velocity_clamped : numpy.ndarray, optional
        (N, nv) booleans: which coordinates the simulator clamped in that
        step.
    power : numpy.ndarray, optional
        (N, P): the power (W) of each source named in ``power_labels``
        (applied τ, each force element, joint damping).
    power_labels : tuple of str
        The P sources of ``power``.
    constraint_residual : numpy.ndarray, optional
        (N,): the largest constraint violation (max |φ| of loop joints and
        couplings, and the largest position-limit violation; m, rad or, for
        angle rows, a cosine).
    model_fingerprint : str, optional
        The :func:`model_fingerprint` of the model it was recorded on (None
        if unknown).
    contacts : ContactRecord, optional
        The contacts of each sample's step
        (:class:`~multibody.simulation.contact_record.ContactRecord`) when
        the rollout recorded them, else None (pickles and is saved with the
        trajectory).
    control : numpy.ndarray, optional
        The actuators' controls (N, nu) of the step that ended at each
        sample (row 0: zeros, as ``tau``; docs/actuators.md); (N, 0) without
        actuators.
    activation : numpy.ndarray, optional
        The activations (N, na) at each sample.
    actuator_force : numpy.ndarray, optional
        The actuator forces (N, nu) (N or N·m, before the moment arm) of the
        step that ended at each sample (row 0: zeros).
    actuator_names : tuple of str
        The nu actuator names.
    sensors : dict of str to numpy.ndarray, optional
        The sensors' readings (name -> (N, dim) array, docs/sensors.md)
        when the rollout was given
        :class:`~multibody.simulation.sensors.Sensors`, else None.
    actuator_length, actuator_velocity : numpy.ndarray, optional
        (N, nu): the length (m or rad) and rate of each actuator's
        transmission at each sample (MuJoCo's ``actuator_length`` /
        ``actuator_velocity``; a muscle's tendon is rigid, so its
        normalized fiber length is ``range₀ + (l − lr₀)/L0`` of this length,
        :class:`~multibody.forces.actuators.Muscle`), computed from the
        recorded states when first read; NaN when not recorded (a file
        written before they were, a trajectory built by hand without them).
    particle_position, particle_velocity : numpy.ndarray, optional
        (N, n, 3): every particle's world position (m) and velocity (m/s)
        at each sample when the simulator steps a
        :class:`~multibody.formulations.ParticleSystem` (attached and
        prescribed particles included; docs/deformables.md), (N, 0, 3)
        otherwise.
    """
    t: Array
    q: Array
    v: Array
    tau: Array
    kinetic: Array
    potential: Array
    meta: dict = field(default_factory=dict)
    effort_clamped: np.ndarray | None = None
    velocity_clamped: np.ndarray | None = None
    # no class attribute for the quantities a rollout derives lazily (see recorded and __getattr__)
    power: Array | None = field(default_factory=lambda: None)
    power_labels: tuple = ()
    constraint_residual: Array | None = field(default_factory=lambda: None)
    model_fingerprint: str | None = None
    contacts: ContactRecord | None = None
    control: Array | None = None
    activation: Array | None = None
    actuator_force: Array | None = None
    actuator_names: tuple = ()
    sensors: dict[str, Array] | None = None
    actuator_length: Array | None = field(default_factory=lambda: None)
    actuator_velocity: Array | None = field(default_factory=lambda: None)
    particle_position: Array | None = None
    particle_velocity: Array | None = None

    @classmethod
    def recorded(cls, t: Array, q: Array, v: Array, tau: Array, effort_clamped: np.ndarray,
                 velocity_clamped: np.ndarray, meta: dict, model_fingerprint: str | None, derived: tuple,
                 actuators: tuple | None = None, particles: tuple[Array, Array] | None = None) -> Trajectory:
        """The trajectory of a rollout: the recorded arrays as given (not
        checked or copied), and ``derived = (power_labels, fn)`` where
        ``fn(t, q, v, tau) -> (kinetic, potential, power,
        constraint_residual)`` computes the derived quantities in one batch
        when one of them is first read (a rollout records only what its
        steps compute); ``derived`` may have a third member, ``lengths(t,
        q, v) -> (actuator_length, actuator_velocity)``, likewise computed
        when one of them is first read (None or absent: NaN, not recorded).
        ``actuators``: ``(names, control, activation, actuator_force)`` or
        None (no actuators). ``particles``: ``(particle_position,
        particle_velocity)`` or None (no particles)."""
        self = cls.__new__(cls)
        N = len(t)
        names, control, activation, force = actuators if actuators is not None else \
            ((), np.zeros((N, 0)), np.zeros((N, 0)), np.zeros((N, 0)))
        lengths = derived[2] if len(derived) > 2 else None
        px, pv = particles if particles is not None else (np.zeros((N, 0, 3)), np.zeros((N, 0, 3)))
        self.__dict__.update(t=t, q=q, v=v, tau=tau, effort_clamped=effort_clamped,
                             velocity_clamped=velocity_clamped, meta=meta, power_labels=tuple(derived[0]),
                             model_fingerprint=model_fingerprint, contacts=None, control=control,
                             activation=activation, actuator_force=force, actuator_names=tuple(names),
                             sensors=None, particle_position=px, particle_velocity=pv, _derive=derived[1])
        if lengths is None:
            nu = control.shape[1]
            self.__dict__.update(actuator_length=np.full((N, nu), np.nan), actuator_velocity=np.full((N, nu), np.nan))
        else:
            self.__dict__["_lengths"] = lengths
        return self

    def __getattr__(self, name):
        """The derived quantities of :meth:`recorded` (energies, powers and
        residuals; the actuators' lengths and rates), computed on first
        access."""
        group, key, args = (_DERIVED, "_derive", ("t", "q", "v", "tau", "actuator_force")) if name in _DERIVED else \
            (_LENGTHS, "_lengths", ("t", "q", "v"))
        derive = self.__dict__.get(key) if name in _DERIVED + _LENGTHS else None
        if derive is None:
            raise AttributeError(f"'Trajectory' object has no attribute '{name}'")
        self.__dict__.update(zip(group, derive(*(self.__dict__[a] for a in args))))
        del self.__dict__[key]
        return self.__dict__[name]

    def __getstate__(self):
        """Pickle (and copy) with the derived quantities computed."""
        for name in _DERIVED + _LENGTHS:
            getattr(self, name)
        return self.__dict__

    def __post_init__(self):
        """Arrays from the fields (lists are accepted), the optional ones
        filled with zeros; InputError if their shapes are not those of one
        recording."""
        try:
            for name in ("t", "q", "v", "tau", "kinetic", "potential"):
                setattr(self, name, np.asarray(getattr(self, name), dtype=float))
        except (TypeError, ValueError) as e:
            raise InputError(f"Trajectory.{name} must be an array of numbers: {e}") from None
        if self.t.ndim != 1 or self.v.ndim != 2:
            raise InputError(f"Trajectory: t must have shape (N,) and v (N, nv), got {self.t.shape} and "
                             f"{self.v.shape}")
        N, nv = len(self.t), self.v.shape[1]
        if not isinstance(self.power_labels, (tuple, list)) or not all(isinstance(x, str) for x in self.power_labels):
            raise InputError(f"Trajectory.power_labels must be a tuple of strings, got {self.power_labels!r}")
        self.power_labels = tuple(self.power_labels)
        if self.meta is None:
            self.meta = {}
        if not isinstance(self.meta, dict):
            raise InputError(f"Trajectory.meta must be a dict, got {type(self.meta).__name__}")
        if self.model_fingerprint is not None and not isinstance(self.model_fingerprint, str):
            raise InputError(f"Trajectory.model_fingerprint must be a string or None, got {self.model_fingerprint!r}")
        defaults = dict(effort_clamped=((N, nv), bool), velocity_clamped=((N, nv), bool),
                        power=((N, len(self.power_labels)), float), constraint_residual=((N,), float),
                        control=((N, 0), float), activation=((N, 0), float), actuator_force=((N, 0), float))
        for name, (shape, dtype) in defaults.items():
            value = getattr(self, name)
            try:
                setattr(self, name, np.zeros(shape, dtype) if value is None else np.asarray(value, dtype=dtype))
            except (TypeError, ValueError) as e:
                raise InputError(f"Trajectory.{name} must be an array of numbers: {e}") from None
        nu = self.control.shape[1] if self.control.ndim == 2 else -1
        n = self.particle_position.shape[1] if self.particle_position is not None and \
            np.ndim(self.particle_position) == 3 else 0
        lengths = dict(actuator_length=((N, max(nu, 0)), np.nan), actuator_velocity=((N, max(nu, 0)), np.nan),
                       particle_position=((N, n, 3), 0.0), particle_velocity=((N, n, 3), 0.0))
        for name, (shape, fill) in lengths.items():
            value = getattr(self, name)
            try:
                setattr(self, name, np.full(shape, fill) if value is None else np.asarray(value, dtype=float))
            except (TypeError, ValueError) as e:
                raise InputError(f"Trajectory.{name} must be an array of numbers: {e}") from None
        if not isinstance(self.actuator_names, (tuple, list)) or not all(isinstance(x, str)
                                                                          for x in self.actuator_names):
            raise InputError(f"Trajectory.actuator_names must be a tuple of strings, got {self.actuator_names!r}")
        self.actuator_names = tuple(self.actuator_names) or tuple(f"actuator{k}" for k in range(max(nu, 0)))
        _check_arrays("(in memory)", {name: getattr(self, name) for name in (*_ARRAYS, *_ACTUATOR_ARRAYS, *_LENGTHS,
                                                                              *_PARTICLE_ARRAYS)},
                      len(self.power_labels), len(self.actuator_names))
        if self.sensors is not None:
            self.sensors = _sensor_arrays("Trajectory", self.sensors, N)

    @property
    def energy(self) -> Array:
        """Total mechanical energy ``kinetic + potential`` (J)."""
        return self.kinetic + self.potential

    def check_model(self, model: Model) -> None:
        """Raise :class:`InputError` unless this trajectory was recorded on
        ``model`` (same :func:`model_fingerprint`; a trajectory without a
        fingerprint cannot be checked and is refused too). Call it before
        replaying a trajectory on a model."""
        fp = model_fingerprint(model)
        recorded = self.meta.get("model") if isinstance(self.meta, dict) else None
        if self.model_fingerprint is None:
            raise InputError(f"this trajectory carries no model fingerprint, so it cannot be checked against "
                             f"model '{model.name}' (set model_fingerprint=multibody.simulation."
                             "model_fingerprint(model) when building it by hand)")
        if fp != self.model_fingerprint:
            raise InputError("this trajectory was recorded on another model"
                             + (f" ('{recorded}')" if recorded is not None else "")
                             + f" than '{model.name}': model fingerprint {self.model_fingerprint[:16]}... recorded, "
                             f"{fp[:16]}... given")
        if self.q.shape[1:] != (model.nq,) or self.v.shape[1:] != (model.nv,):  # same fingerprint: cannot happen
            raise InputError(f"this trajectory's q {self.q.shape} / v {self.v.shape} do not fit model "
                             f"'{model.name}' (nq = {model.nq}, nv = {model.nv})")

    def save(self, path: PathLike) -> None:
        """Write the trajectory to the file ``path``, exactly that name (no
        suffix is added; ``.npz`` is customary): a zip of ``.npy`` arrays
        plus a JSON header holding ``meta``, ``power_labels``, the model
        fingerprint and the format version.

        The write is atomic: the data go to a temporary file in the same
        directory (``.<name>.<pid>.<random>.tmp``), are flushed to disk and
        then renamed over ``path`` (:func:`os.replace`), so a writer killed
        part-way leaves the previous file intact (and, at worst, a stray
        temporary file). ``meta`` must hold JSON values (None, bools, ints,
        floats, strings, lists and dicts of them; tuples come back as
        lists); anything else raises :class:`InputError` naming the key, as
        does a file that cannot be written (naming the file).

        Parameters
        ----------
        path : str or os.PathLike
            The file to write (replaced if it exists).

        Raises
        ------
        InputError
            If ``meta`` holds a value JSON cannot hold, or the file cannot be
            written.
        """
        path = _file_name(path, "Trajectory.save")
        if not isinstance(self.meta, dict):
            raise InputError(f"Trajectory.meta must be a dict, got {type(self.meta).__name__}")
        record = self.contacts
        header = json.dumps({"format": FORMAT, "version": VERSION, "model_fingerprint": self.model_fingerprint,
                             "power_labels": _jsonable(list(self.power_labels), "power_labels"),
                             "meta": _jsonable(self.meta, "meta"),
                             "contact_geometries": None if record is None else list(record.geometries),
                             "actuator_names": _jsonable(list(self.actuator_names), "actuator_names"),
                             "sensor_names": None if self.sensors is None else list(self.sensors)})
        arrays = {name: np.asarray(getattr(self, name)) for name in (*_ARRAYS, *_ACTUATOR_ARRAYS, *_LENGTHS)}
        if self.particle_position.shape[1]:  # type: ignore[union-attr]  # optional members: a trajectory without particles writes none
            arrays.update({name: np.asarray(getattr(self, name)) for name in _PARTICLE_ARRAYS})
        if self.sensors is not None:  # optional members "sensors.<k>" (names in the header: any string)
            arrays.update({f"sensors.{k}": np.asarray(a) for k, a in enumerate(self.sensors.values())})
        if record is not None:  # optional members "contacts.<field>"
            arrays.update({f"contacts.{name}": getattr(record, name) for name in _CONTACT_ARRAYS})
        for name, a in arrays.items():
            if a.dtype.kind not in "biuf":
                raise InputError(f"Trajectory.{name} has dtype {a.dtype}; expected numbers")
        # write through the real file behind a symbolic link (os.replace would replace the link)
        target = os.path.realpath(path) if os.path.islink(path) else path
        directory = os.path.dirname(os.path.abspath(target))
        tmp = os.path.join(directory, f".{os.path.basename(target)}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
        try:
            # O_EXCL: never write into a file someone else made; mode 0o666 lets the umask decide
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
        except OSError as e:
            raise InputError(f"cannot write trajectory file '{path}': {e.strerror or e} (directory "
                             f"'{directory}')") from None
        try:
            with os.fdopen(fd, "wb") as f:
                # a file object: np.savez appends ".npz" to a name without it
                np.savez(f, header=np.array(header), allow_pickle=False, **arrays)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, target)
        except BaseException as e:  # also KeyboardInterrupt: never leave our temporary file behind
            try:
                os.unlink(tmp)
            except OSError:
                pass
            if isinstance(e, OSError):
                raise InputError(f"cannot write trajectory file '{path}': {e.strerror or e}") from None
            raise
        _fsync_directory(directory)

    @classmethod
    def load(cls, path: PathLike, model: Model | None = None) -> Trajectory:
        """Read a trajectory written by :meth:`save`. With ``model``, also
        check that it was recorded on that model (:meth:`check_model`).

        A missing, unreadable, truncated or corrupted file, a file that is
        not a trajectory (or one written by multibody before format 2,
        which is not read), arrays of inconsistent shapes, or a model
        mismatch raise :class:`InputError` naming the file.

        Parameters
        ----------
        path : str or os.PathLike
            A file written by :meth:`save`.
        model : Model, optional
            The model the trajectory must have been recorded on.

        Returns
        -------
        Trajectory
            The trajectory as saved.

        Raises
        ------
        InputError
            If the file cannot be read as a trajectory, or ``model`` is not the
            recorded one.
        """
        path = _file_name(path, "Trajectory.load")
        try:
            with open(path, "rb") as f, np.load(f, allow_pickle=False) as z:
                if "header" not in z.files:
                    raise InputError(f"'{path}' is not a multibody trajectory file (no header; files written "
                                     f"before format {VERSION} are not read)")
                header = json.loads(str(z["header"][()]))
                arrays = {name: z[name] for name in _ARRAYS}
                # the actuators' records: absent from files without actuators written before they existed
                arrays.update({name: z[name] for name in (*_ACTUATOR_ARRAYS, *_LENGTHS, *_PARTICLE_ARRAYS)
                               if name in z.files})
                contacts = {name: z[f"contacts.{name}"] for name in _CONTACT_ARRAYS} \
                    if f"contacts.{_CONTACT_ARRAYS[0]}" in z.files else None
                sensor_names = header.get("sensor_names") if isinstance(header, dict) else None
                sensors = None
                if isinstance(sensor_names, list):
                    sensors = {name: z[f"sensors.{k}"] for k, name in enumerate(sensor_names)}
        except InputError:
            raise
        except FileNotFoundError:
            raise InputError(f"cannot read trajectory file '{path}': no such file") from None
        except OSError as e:
            if isinstance(e, (PermissionError, IsADirectoryError)):
                raise InputError(f"cannot read trajectory file '{path}': {e.strerror or e}") from None
            raise InputError(f"cannot read trajectory file '{path}': it is truncated or corrupted ({e})") from None
        # what a damaged zip or .npy header raises: a bad zip structure or CRC, a truncated
        # stream, a missing member, a bad header, an absurd size
        except (zipfile.BadZipFile, zlib.error, EOFError, KeyError, ValueError, TypeError, UnicodeError,
                OverflowError, MemoryError, NotImplementedError, RuntimeError, struct.error, IndexError) as e:
            # zipfile: NotImplementedError for an unknown compression method, RuntimeError for the
            # "encrypted" flag, struct.error for short headers
            raise InputError(f"cannot read trajectory file '{path}': it is truncated or corrupted "
                             f"({type(e).__name__}: {e})") from None
        if not (isinstance(header, dict) and header.get("format") == FORMAT):
            raise InputError(f"'{path}' is not a multibody trajectory file")
        if header.get("version") != VERSION:
            raise InputError(f"trajectory file '{path}' has format version {header.get('version')!r}; this "
                             f"multibody reads version {VERSION}")
        meta, labels, fp = header.get("meta"), header.get("power_labels"), header.get("model_fingerprint")
        names = header.get("actuator_names", [])
        if not (isinstance(meta, dict) and isinstance(labels, list) and all(isinstance(x, str) for x in labels)
                and (fp is None or isinstance(fp, str)) and isinstance(names, list)
                and all(isinstance(x, str) for x in names)):
            raise InputError(f"trajectory file '{path}' has a corrupted header")
        N = arrays["t"].shape[0] if arrays["t"].ndim == 1 else 0
        for name in _ACTUATOR_ARRAYS:
            if name not in arrays:
                if names:
                    raise InputError(f"trajectory file '{path}' is inconsistent: it names actuators but has no "
                                     f"{name}")
                arrays[name] = np.zeros((N, 0))
        for name in _LENGTHS:  # files written before the lengths were recorded: not recorded
            if name not in arrays:
                arrays[name] = np.full((N, len(names)), np.nan)
        if (_PARTICLE_ARRAYS[0] in arrays) != (_PARTICLE_ARRAYS[1] in arrays):
            raise InputError(f"trajectory file '{path}' is inconsistent: it has only one of "
                             f"{' and '.join(_PARTICLE_ARRAYS)}")
        for name in _PARTICLE_ARRAYS:
            if name not in arrays:
                arrays[name] = np.zeros((N, 0, 3))
        _check_arrays(path, arrays, len(labels), len(names))
        record = None
        if contacts is not None:
            geometries = header.get("contact_geometries")  # (not `names`: the actuators' names below)
            if not (isinstance(geometries, list) and all(isinstance(x, str) for x in geometries)):
                raise InputError(f"trajectory file '{path}' has a corrupted header (contact_geometries)")
            record = _contact_record(path, geometries, contacts, len(arrays["t"]))
        if sensors is not None and not all(isinstance(x, str) for x in sensors):
            raise InputError(f"trajectory file '{path}' has a corrupted header (sensor_names)")
        if sensors is not None:
            sensors = _sensor_arrays(f"trajectory file '{path}'", sensors, len(arrays["t"]))
        traj = cls(meta=meta, power_labels=tuple(labels), model_fingerprint=fp, contacts=record,
                   actuator_names=tuple(names), sensors=sensors, **arrays)
        if model is not None:
            try:
                traj.check_model(model)
            except InputError as e:
                raise InputError(f"trajectory file '{path}': {e}") from None
        return traj


def _check_arrays(path, arrays, P, nu=0):
    """The arrays of a trajectory (file ``path``) have the dtypes and the
    shapes (N,), (N, nq), (N, nv), (N, P), the actuators' (N, nu), (N, na),
    and the particles' (N, n, 3), of one recording."""
    N = arrays["t"].shape[0] if arrays["t"].ndim == 1 else -1
    nq = arrays["q"].shape[1] if arrays["q"].ndim == 2 else -1
    nv = arrays["v"].shape[1] if arrays["v"].ndim == 2 else -1
    act = arrays.get("activation")
    na = act.shape[1] if act is not None and act.ndim == 2 else -1
    px = arrays.get(_PARTICLE_ARRAYS[0])
    n = px.shape[1] if px is not None and px.ndim == 3 else -1
    cols = {None: (), "nq": (nq,), "nv": (nv,), "P": (P,), "nu": (nu,), "na": (na,), "np3": (n, 3)}
    specs = dict(_ARRAYS, **{name: ("f", c) for name, c in _ACTUATOR_ARRAYS.items() if name in arrays},
                 **{name: ("f", "nu") for name in _LENGTHS if name in arrays},
                 **{name: ("f", "np3") for name in _PARTICLE_ARRAYS if name in arrays})
    for name, (kind, c) in specs.items():
        a = arrays[name]
        expected = (N,) + cols[c]
        if a.dtype.kind != kind or a.shape != expected or N < 0 or nq < 0 or nv < 0:
            where = "Trajectory" if path == "(in memory)" else f"trajectory file '{path}'"
            raise InputError(f"{where} is inconsistent: {name} has dtype {a.dtype} and shape {a.shape}, expected "
                             f"{'bool' if kind == 'b' else 'float'} {expected}")


def _sensor_arrays(where, sensors, N):
    """The sensors' readings as a dict name -> float (N, dim) array, checked
    (InputError naming ``where`` otherwise)."""
    if not isinstance(sensors, dict) or not all(isinstance(k, str) for k in sensors):
        raise InputError(f"{where}: sensors must be a dict of sensor name -> (N, dim) array, got "
                         f"{type(sensors).__name__}")
    out = {}
    for name, a in sensors.items():
        try:
            a = np.asarray(a, dtype=float)
        except (TypeError, ValueError) as e:
            raise InputError(f"{where}: the readings of sensor '{name}' must be numbers: {e}") from None
        if a.ndim != 2 or a.shape[0] != N:
            raise InputError(f"{where} is inconsistent: the readings of sensor '{name}' have shape {a.shape}, "
                             f"expected ({N}, dim)")
        out[name] = a
    return out


def _contact_record(path, names, arrays, N):
    """The :class:`~multibody.simulation.contact_record.ContactRecord` of a
    trajectory file's ``contacts.*`` members, checked: dtypes, shapes (N,)
    and (N, cap, ...), counts within [0, cap] and geometry indices within
    ``names``; else InputError naming the file."""
    cap = arrays["geom"].shape[1] if arrays["geom"].ndim == 3 else -1
    for name, (kind, tail) in _CONTACT_SHAPES.items():
        a = arrays[name]
        expected = (N,) if tail is None else (N, cap) + tail
        if a.dtype.kind != kind or a.shape != expected or cap < 0:
            raise InputError(f"trajectory file '{path}' is inconsistent: contacts.{name} has dtype {a.dtype} and "
                             f"shape {a.shape}, expected {'int' if kind == 'i' else 'float'} {expected}")
    if (arrays["count"] < 0).any() or (arrays["count"] > cap).any() or (arrays["geom"] >= len(names)).any():
        raise InputError(f"trajectory file '{path}' is inconsistent: contact counts or geometry indices out of "
                         f"range")
    return ContactRecord(tuple(names), *(arrays[name] for name in _CONTACT_ARRAYS))
