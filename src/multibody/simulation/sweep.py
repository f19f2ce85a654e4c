"""Parameter sweeps: one rollout per point of a design (a grid or random
points over named model parameters, controller gains, initial states and
seeds), run in chunks of points per task — in this process, on a Dask
``LocalCluster`` or on any Dask cluster — with every finished chunk saved
so that a stopped sweep resumes where it stopped (docs/scale.md).

Results are plain NumPy arrays with one row per point, labelled by the
design's coordinates (:class:`SweepResult`); a point is computed from its
coordinates and its seed only (never from the worker or the order), so
a sweep gives bitwise the same numbers in this process and on any number
of workers.
"""
from __future__ import annotations

import dataclasses
import glob
import hashlib
import json
import math
import os
import tempfile
import uuid
import warnings
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from ..errors import InputError, SimulationError, SimulationWarning
from ..model import Model
from ..model.parameters import parameter_names
from .control import PD
from .simulator import Simulator, _count, _rebuild, _step_count
from .trajectory import Trajectory, model_fingerprint
from .._typing import Array

#: coordinate names with a meaning of their own (all others are model parameters, Model.parameter_names)
GAINS = ("kp", "kd")
STATES = ("q0", "v0")
SEED = "seed"
RESERVED = GAINS + STATES + (SEED,)
MANIFEST = "sweep.json"
TASKS_PER_WORKER = 8  # the default chunking's tasks per worker thread


def _column(name: str, values: Any, what: str) -> np.ndarray:
    """The values of coordinate ``name`` as a float64 (int64 for seeds)
    array with one row per value; InputError naming the coordinate."""
    try:
        a = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as e:
        raise InputError(f"{what} {name!r}: the values must be numbers or equally shaped arrays of numbers ({e})") \
            from None
    if a.ndim == 0 or a.shape[0] == 0:
        raise InputError(f"{what} {name!r}: give a non-empty sequence of values, got {values!r}")
    if not np.isfinite(a).all():
        raise InputError(f"{what} {name!r}: the values must be finite")
    if name == SEED:
        if a.ndim != 1 or (a < 0).any() or (a != np.round(a)).any() or (a >= 2.0 ** 63).any():
            raise InputError(f"{what} 'seed': seeds are integers >= 0, one per value, got {values!r}")
        return np.asarray(values, dtype=np.int64)
    return a


class Design:
    """The points of a sweep as columns: ``columns[name][i]`` is the value
    of coordinate ``name`` at point ``i`` (a float, or an array for vector
    coordinates such as ``q0``); ``shape`` is the design's shape (a grid's
    axes, or ``(n,)``), whose C-order flattening numbers the points.
    :class:`Grid` and :class:`RandomDesign` build one; a list of points is
    ``Design({"a": [...], "b": [...]})`` (zipped).

    Parameters
    ----------
    columns : mapping of str to sequence
        Coordinate name -> its value at every point (one value per point,
        all of the same length n): a model parameter name
        (:meth:`Model.with_params`), ``kp``/``kd``, ``q0``/``v0`` or ``seed``.
    shape : tuple of int, optional
        The design's shape (its product is n); default ``(n,)``.
    dims : tuple of str, optional
        The names of the axes of ``shape``; default ``("point",)``.

    Raises
    ------
    InputError
        Columns that are not a mapping, empty, or of different lengths.
    """

    def __init__(self, columns: Mapping[str, Any], shape: tuple[int, ...] | None = None,
                 dims: tuple[str, ...] | None = None) -> None:
        if not isinstance(columns, Mapping) or not columns:
            raise InputError(f"a design needs a mapping coordinate name -> values, got {columns!r}")
        self.columns = {str(k): _column(str(k), v, "coordinate") for k, v in columns.items()}
        lengths = {k: len(v) for k, v in self.columns.items()}
        if len(set(lengths.values())) != 1:
            raise InputError(f"the coordinates of a list of points need one value per point each, got {lengths}")
        self.n = next(iter(lengths.values()))
        self.shape = (self.n,) if shape is None else tuple(shape)
        self.dims = ("point",) if dims is None else tuple(dims)
        self.names = tuple(self.columns)

    def __len__(self) -> int:
        return self.n

    def point(self, i: int) -> dict[str, Any]:
        """The coordinates of point ``i`` (floats, arrays, an int seed)."""
        return {k: (int(c[i]) if k == SEED else float(c[i]) if c.ndim == 1 else c[i].copy())
                for k, c in self.columns.items()}

    def digest(self) -> str:
        """A SHA-256 of the names, shapes and values (what a resumed sweep must match)."""
        h = hashlib.sha256(repr(self.shape).encode())
        for k, c in self.columns.items():
            h.update(f"{k}{c.shape}{c.dtype}".encode())
            h.update(np.ascontiguousarray(c).tobytes())
        return h.hexdigest()


class Grid(Design):
    """Every combination of the given values (a full factorial design):
    ``Grid({"link3.mass": [1, 2, 3], "kp": [10, 100]})`` has 6 points,
    numbered in C order (the last coordinate varies fastest), of shape (3,
    2). Values are numbers, or equally shaped arrays for vector
    coordinates (``q0``, ``v0``, a joint's per-coordinate damping, ...).

    Parameters
    ----------
    axes : mapping of str to sequence
        Coordinate name -> the values it takes along its axis (in the units
        of the parameter: kg, N m s/rad, ...).

    Raises
    ------
    InputError
        Axes that are not a mapping, empty, or with non-finite values.
    """

    def __init__(self, axes: Mapping[str, Sequence[Any]]) -> None:
        if not isinstance(axes, Mapping) or not axes:
            raise InputError(f"Grid needs a mapping coordinate name -> values, got {axes!r}")
        cols = {str(k): _column(str(k), v, "grid axis") for k, v in axes.items()}
        shape = tuple(len(c) for c in cols.values())
        idx = np.indices(shape).reshape(len(shape), -1)
        super().__init__({k: c[idx[a]] for a, (k, c) in enumerate(cols.items())}, shape, tuple(cols))
        self.axes = cols


class RandomDesign(Design):
    """``n`` points drawn uniformly (log-uniformly for the names in ``log``)
    between the bounds ``ranges[name] = (low, high)`` (numbers, or arrays
    of one shape for vector coordinates), from ``numpy.random.default_rng(seed)``
    coordinate after coordinate in the mapping's order: the same arguments
    give the same points.

    Parameters
    ----------
    ranges : mapping of str to (low, high)
        Coordinate name -> its bounds (numbers, or arrays of one shape).
    n : int
        The number of points (≥ 1).
    seed : int, default 0
        Seed of the generator that draws the points.
    log : sequence of str, default ()
        Names drawn log-uniformly (their bounds must be positive).

    Raises
    ------
    InputError
        Bad bounds (low > high, non-finite, mismatched shapes), ``n`` < 1,
        ``log`` names not among the ranges, or ``seed`` among the ranges.
    """

    def __init__(self, ranges: Mapping[str, tuple[Any, Any]], n: int, seed: int = 0, log: Sequence[str] = ()) -> None:
        if not isinstance(ranges, Mapping) or not ranges:
            raise InputError(f"RandomDesign needs a mapping coordinate name -> (low, high), got {ranges!r}")
        n = _count(n, "n (the number of points)", 1)
        rng = np.random.default_rng(seed)
        log = (log,) if isinstance(log, str) else tuple(log)
        unknown = set(log) - set(ranges)
        if unknown:
            raise InputError(f"RandomDesign: log names {sorted(unknown)} that are not among the ranges")
        cols = {}
        for name, bounds in ranges.items():
            if name == SEED:
                raise InputError("RandomDesign: the seed is not drawn; every point has its own seed from the "
                                 "sweep's seed (or vary 'seed' in a Grid)")
            try:
                lo, hi = (np.asarray(b, dtype=np.float64) for b in bounds)
            except (TypeError, ValueError):
                raise InputError(f"RandomDesign: {name!r} needs bounds (low, high), got {bounds!r}") from None
            if lo.shape != hi.shape or not (np.isfinite(lo).all() and np.isfinite(hi).all()) or (lo > hi).any():
                raise InputError(f"RandomDesign: {name!r} needs finite bounds low <= high of one shape, got {bounds!r}")
            if name in log:
                if (lo <= 0).any():
                    raise InputError(f"RandomDesign: {name!r} is drawn log-uniformly: its bounds must be > 0")
                cols[name] = np.exp(rng.uniform(np.log(lo), np.log(hi), (n, *lo.shape)))
            else:
                cols[name] = rng.uniform(lo, hi, (n, *lo.shape))
        super().__init__(cols)


def point_seed(seed: int, index: int) -> int:
    """The seed of point ``index`` of a sweep with seed ``seed``: the first
    64-bit word of the ``index``-th child of ``numpy.random.SeedSequence(seed)``
    (``SeedSequence(seed).spawn(n)[index]``), so it depends on the sweep's
    seed and the point only."""
    return int(np.random.SeedSequence(seed, spawn_key=(index,)).generate_state(1, np.uint64)[0])


def _label(i: int, point: Mapping[str, Any]) -> str:
    """'point 3 (link3.mass=2, kp=100)': a point named for error messages."""
    def show(v):
        return f"{v:g}" if isinstance(v, float) else np.array2string(np.asarray(v), precision=4, separator=", ") \
            if isinstance(v, np.ndarray) else repr(v)
    return f"point {i} ({', '.join(f'{k}={show(v)}' for k, v in point.items())})"


Controller = Callable[[Model, dict], Any]


@dataclasses.dataclass
class _Job:
    """What every task needs (shipped once to each worker): the simulator as
    its model, arguments and starting checkpoint, the design, the
    controller, the metrics and the run's length."""
    model: Model
    arguments: dict
    checkpoint: Any
    design: Design
    params: tuple  # the design's coordinates that are model parameters
    controller: PD | Controller | None
    metrics: dict
    steps: int
    record_every: int
    seed: int
    threads: int
    batch: bool  # the chunk may run through Simulator.rollout_batch


def _controller(job: _Job, model: Model, point: dict) -> Any:
    """The controller of one point: the template PD with the point's gains,
    rebound to the point's model, or what the user's function returns."""
    c = job.controller
    if c is None:
        return None
    if not isinstance(c, PD):
        return c(model, point)
    gains = PD(model, point.get("kp", c.gains[0]), point.get("kd", c.gains[1])).gains  # validated
    out = object.__new__(type(c))
    out.__dict__.update(c.__dict__, model=model, gains=gains)
    return out


class _MetricFailed(Exception):
    """A metric raised (the message names it and the exception)."""


def _evaluate(job: _Job, traj: Trajectory) -> dict[str, np.ndarray]:
    """The metrics of one trajectory as float64 arrays."""
    out = {}
    for name, fn in job.metrics.items():
        try:
            out[name] = np.asarray(fn(traj), dtype=np.float64)
        except Exception as e:
            raise _MetricFailed(f"metric {name!r} raised {type(e).__name__}: {e}") from e
    return out


def _run_chunk(job: _Job, indices: Sequence[int]) -> dict[str, Any]:
    """Run the points ``indices`` of ``job``; the task of a sweep. Returns
    their index, success flags, final states (q, v), metric values (rows of
    the successful points) and error messages ('' for success). A point
    that raises (an invalid parameter value, a failing step, a failing
    metric) is recorded with the exception and the chunk goes on."""
    indices = [int(i) for i in indices]
    k = len(indices)
    model = job.model
    q, v = np.full((k, model.nq), np.nan), np.full((k, model.nv), np.nan)
    errors = [""] * k
    values: list[dict[str, np.ndarray]] = [{} for _ in range(k)]
    points = [dict(job.design.point(i), seed=point_seed(job.seed, i)) if SEED not in job.design.columns
              else job.design.point(i) for i in indices]
    with warnings.catch_warnings():
        # a clamp warning per point would flood a sweep (and only the one-by-one path gives them): the
        # trajectories record every clamp (effort_clamped, velocity_clamped) for the metrics to read
        warnings.simplefilter("ignore", SimulationWarning)
        base = _rebuild(model, job.arguments, job.checkpoint)
        if not (job.batch and k > 1 and _run_batch(job, base, points, q, v, values)):
            for r, (i, point) in enumerate(zip(indices, points)):
                try:
                    traj = _run_point(job, base, point)
                    values[r] = _evaluate(job, traj)
                    q[r], v[r] = traj.q[-1], traj.v[-1]
                except Exception as e:  # recorded for this point; the sweep goes on
                    q[r], v[r] = np.nan, np.nan
                    what = str(e) if isinstance(e, _MetricFailed) else f"{type(e).__name__}: {e}"
                    errors[r] = f"{_label(i, job.design.point(i))}: {what}"
    ok = np.array([not e for e in errors])
    out: dict[str, Any] = {"index": np.array(indices, np.int64), "ok": ok, "q": q, "v": v,
                           "error": np.array(errors, dtype=str)}
    for name in job.metrics:
        rows = [values[r][name] for r in range(k) if ok[r]]
        shapes = {a.shape for a in rows}
        if len(shapes) > 1:
            raise InputError(f"metric {name!r} returned values of different shapes {sorted(shapes)} in one sweep")
        out["metric:" + name] = np.stack(rows) if rows else np.zeros((0,))
    return out


def _run_point(job: _Job, base: Simulator, point: dict) -> Trajectory:
    """One point: the simulator with the point's parameters, from the
    starting checkpoint with the point's q0 and v0, for the sweep's steps."""
    params = {p: point[p] for p in job.params}
    model = job.model.with_params(params) if params else job.model
    start = job.checkpoint
    q0, v0 = point.get("q0", start.q), point.get("v0", start.v)
    # built at the point's start: its checks of the initial state (overlapping geometry) are about that state
    sim = base if not params else Simulator(model, q0=q0, v0=v0, **job.arguments)
    sim.restore(dataclasses.replace(start, q=q0, v=v0))
    # the controller is bound to the simulator's model (with its ground, when the simulator adds one)
    return sim.rollout(steps=job.steps, controller=_controller(job, sim.model, point), record_every=job.record_every,
                       progress=False)


def _run_batch(job: _Job, base: Simulator, points: list[dict], q: Array, v: Array, values: list) -> bool:
    """The points as one :meth:`Simulator.rollout_batch` (member b is
    bitwise the rollout of :func:`_run_point`); False if a member or a
    metric fails (the points one by one then say which and why)."""
    params = [{p: pt[p] for p in job.params} for pt in points] if job.params else None
    q0 = np.array([pt.get("q0", job.checkpoint.q) for pt in points])
    v0 = np.array([pt.get("v0", job.checkpoint.v) for pt in points])
    try:
        rolls = base.rollout_batch(q0, v0, steps=job.steps, params=params, record_every=job.record_every,
                                   threads=job.threads)
        evaluated = [_evaluate(job, rolls[b]) for b in range(len(points))]
    except Exception:
        return False
    q[:], v[:] = rolls.q[:, -1], rolls.v[:, -1]
    values[:] = evaluated
    return True


@dataclasses.dataclass
class SweepResult:
    """The results of a sweep, one row per point (C order of ``shape``):
    ``coords[name]`` (n, ...) the design's values (and ``seed``, each
    point's seed), ``metrics[name]`` (n, ...) each metric's values (NaN at
    failed points), ``q`` (n, nq) and ``v`` (n, nv) the final states
    (NaN at failed points), ``ok`` (n,) whether the point succeeded and
    ``error`` (n,) its error record ('' for success: the exception's type
    and message, naming the point and its coordinates). ``result[name]``
    is a metric or a coordinate; :meth:`grid` reshapes one to the design's
    shape, whose axes are ``dims`` (a grid's coordinate names).

    Parameters
    ----------
    coords : dict of str to ndarray
        The design's values per coordinate, (n, ...), and ``seed``.
    metrics : dict of str to ndarray
        Each metric's values, (n, ...); NaN at failed points.
    q, v : ndarray
        The final configurations (n, nq) and velocities (n, nv); NaN at
        failed points.
    ok : ndarray of bool
        (n,) whether each point succeeded.
    error : ndarray of str
        (n,) each point's error record, '' where it succeeded.
    shape : tuple of int
        The design's shape.
    dims : tuple of str
        The names of the axes of ``shape``.
    path : str, optional
        The directory the sweep was saved in, if any.
    """
    coords: dict[str, np.ndarray]
    metrics: dict[str, np.ndarray]
    q: np.ndarray
    v: np.ndarray
    ok: np.ndarray
    error: np.ndarray
    shape: tuple[int, ...]
    dims: tuple[str, ...]
    path: str | None = None

    def __len__(self) -> int:
        return len(self.ok)

    def __getitem__(self, name: str) -> np.ndarray:
        if name in self.metrics:
            return self.metrics[name]
        if name in self.coords:
            return self.coords[name]
        raise KeyError(f"no metric or coordinate {name!r}; metrics: {list(self.metrics)}, "
                       f"coordinates: {list(self.coords)}")

    def grid(self, name: str) -> np.ndarray:
        """Metric or coordinate ``name`` reshaped to :attr:`shape` (plus its
        own trailing shape): ``grid(m)[i, j]`` is the point at index i of the
        first grid axis and j of the second."""
        a = self[name]
        return a.reshape(self.shape + a.shape[1:])

    @property
    def errors(self) -> dict[int, str]:
        """The error records of the failed points, by point index."""
        return {int(i): str(self.error[i]) for i in np.flatnonzero(~self.ok)}


def _gather(design: Design, seed: int, chunks: list[dict], model: Model, metrics: Sequence[str],
            path: str | None) -> SweepResult:
    n = design.n
    q, v = np.full((n, model.nq), np.nan), np.full((n, model.nv), np.nan)
    ok = np.zeros(n, bool)
    error = np.full(n, "", dtype=object)
    seen = np.zeros(n, np.int64)
    values: dict[str, np.ndarray | None] = {m: None for m in metrics}
    for c in chunks:
        idx = c["index"]
        seen[idx] += 1
        q[idx], v[idx], ok[idx], error[idx] = c["q"], c["v"], c["ok"], c["error"]
        good = idx[c["ok"]]
        for m in metrics:
            rows = c["metric:" + m]
            if not len(good):
                continue
            a = values[m]
            if a is None:
                a = values[m] = np.full((n, *rows.shape[1:]), np.nan)
            if a.shape[1:] != rows.shape[1:]:
                raise InputError(f"metric {m!r} returned values of shapes {a.shape[1:]} and {rows.shape[1:]} in "
                                 "one sweep")
            a[good] = rows
    if (seen != 1).any():
        bad = np.flatnonzero(seen != 1)
        raise SimulationError(f"sweep{'' if path is None else ' in ' + path}: points {bad[:10].tolist()} have "
                              f"{seen[bad[:10]].tolist()} results (one each expected): the directory holds "
                              "chunks of another run")
    coords = dict(design.columns)
    if SEED not in coords:
        coords[SEED] = np.array([point_seed(seed, i) for i in range(n)], np.uint64)
    out = {m: (np.full(n, np.nan) if a is None else a) for m, a in values.items()}
    return SweepResult(coords, out, q, v, ok, error.astype(str), design.shape, design.dims, path)


def _manifest(job: _Job, sim: Simulator) -> dict:
    """What a resumed sweep must share with the saved one."""
    return {"format": 1, "design": job.design.digest(), "points": job.design.n, "names": list(job.design.names),
            "seed": job.seed, "steps": job.steps, "record_every": job.record_every, "metrics": list(job.metrics),
            "model": job.model.name, "model_fingerprint": model_fingerprint(job.model),
            "integrator": sim.integrator.name, "dt": sim.dt, "t0": float(job.checkpoint.t),
            "q0": np.asarray(job.checkpoint.q).tolist(), "v0": np.asarray(job.checkpoint.v).tolist()}


class _Store:
    """A sweep's directory: ``sweep.json`` (what the sweep is) and one
    ``chunk-<first point>.npz`` per finished chunk, each written to a
    temporary file and renamed (atomic: a stopped sweep leaves whole
    chunks or none)."""

    def __init__(self, path: str, manifest: dict) -> None:
        self.path = path
        os.makedirs(path, exist_ok=True)
        file = os.path.join(path, MANIFEST)
        if os.path.exists(file):
            with open(file, encoding="utf-8") as f:
                saved = json.load(f)
            diff = sorted(k for k in set(saved) | set(manifest) if saved.get(k) != manifest.get(k))
            if diff:
                raise InputError(f"sweep directory {path!r} holds another sweep (its {', '.join(diff)} differ): "
                                 "give another path, or delete it to start again")
        else:
            self._atomic(file, lambda f: f.write(json.dumps(manifest, indent=1).encode()))

    def _atomic(self, file: str, write: Callable[[Any], Any]) -> None:
        fd, tmp = tempfile.mkstemp(dir=self.path, suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as f:
                write(f)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, file)
        except BaseException:
            if os.path.exists(tmp):
                os.remove(tmp)
            raise

    def load(self) -> list[dict]:
        chunks = []
        for file in sorted(glob.glob(os.path.join(self.path, "chunk-*.npz"))):
            with np.load(file, allow_pickle=False) as z:
                chunks.append({k: z[k] for k in z.files})
        return chunks

    def save(self, chunk: dict) -> None:
        self._atomic(os.path.join(self.path, f"chunk-{int(chunk['index'][0]):08d}.npz"),
                     lambda f: np.savez(f, **chunk))


def _client(client: Any, n_workers: int | None, timeout: float):
    """(client, things to close): the given Client, one connected to a
    scheduler address, or a new LocalCluster's."""
    try:
        from distributed import Client, LocalCluster
    except ImportError as e:
        raise InputError("sweeps on Dask need dask.distributed: pip install 'multibody[scale]' "
                         "(or run in this process with client=False)") from e
    if isinstance(client, Client):
        return client, ()
    if client is None:
        n = (os.cpu_count() or 1) if n_workers is None else _count(n_workers, "n_workers", 1)
        cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True, dashboard_address=":0")
        c = Client(cluster)
        return c, (c, cluster)
    if isinstance(client, str):
        try:
            c = Client(client, timeout=timeout)
        except (OSError, TimeoutError) as e:
            raise InputError(f"sweep: cannot reach the Dask scheduler at {client!r} within {timeout:g} s "
                             f"({type(e).__name__}: {e})") from None
        return c, (c,)
    raise InputError(f"client must be None (a new LocalCluster), a scheduler address such as 'tcp://host:8786', "
                     f"a dask.distributed.Client or False (this process), got {client!r}")


def _identity(x: Any) -> Any:
    return x


def _run_dask(client: Any, n_workers: int | None, timeout: float, job: _Job,
              chunking: Callable[[int], list[list[int]]], done: Callable[[dict], None]) -> None:
    """Run the chunks of ``chunking(number of worker threads)`` as Dask
    tasks, passing each result to ``done`` as it arrives (in this process:
    the saving needs no file system shared with the workers)."""
    from distributed import as_completed
    c, owned = _client(client, n_workers, timeout)
    try:
        chunks = chunking(sum(c.nthreads().values()) or 1)
        tag = uuid.uuid4().hex[:8]
        # the job as the result of a task, not scattered data: if every worker holding it dies, the
        # scheduler computes it again (scattered data would be lost); workers fetch it once each
        shipped = c.submit(_identity, job, key=f"multibody-sweep-{tag}-job", pure=False)
        # ... and copied to every worker before the chunks are submitted: Dask places a task on a worker
        # holding its dependencies, so with the job on one worker every chunk went there (2 workers ran
        # 1.13x faster than 1; dask/distributed#6573, #8177)
        c.replicate([shipped])
        futures = {c.submit(_run_chunk, shipped, idx, key=f"multibody-sweep-{tag}-{idx[0]}", pure=False):
                   idx for idx in chunks}
        try:
            for fut in as_completed(futures):
                try:
                    result = fut.result()
                except Exception as e:
                    idx = futures[fut]
                    raise SimulationError(f"sweep: the task of points {idx[0]}..{idx[-1]} failed "
                                          f"({type(e).__name__}: {e}); finished chunks are saved") from e
                done(result)
        finally:
            for fut in futures:
                fut.cancel()
    finally:
        for o in owned:
            o.close()


def sweep(simulator: Simulator, design: Design, duration: float | None = None, steps: int | None = None,
          metrics: Mapping[str, Callable[[Trajectory], Any]] | None = None,
          controller: PD | Controller | None = None, record_every: int = 1, seed: int = 0,
          client: Any = None, n_workers: int | None = None, path: str | os.PathLike | None = None,
          chunk: int | None = None, threads: int = 1, timeout: float = 10.0) -> SweepResult:
    """Run one rollout of ``simulator`` per point of ``design`` and gather
    the final states and the ``metrics`` of every point.

    Each point starts from the simulator's current state (time, q, v,
    controls) with the point's coordinates applied: model parameters
    (:meth:`Model.with_params` names, e.g. ``"link3.mass"``,
    ``"joint2.damping"``, ``"gravity"``), ``kp`` and ``kd`` (the gains of
    the :class:`PD` or :class:`ComputedTorque` given as ``controller``;
    scalars or (nv,)), ``q0`` (nq,) and ``v0`` (nv,) (the initial state,
    taken as given, as :meth:`Simulator.rollout_batch` takes it) and
    ``seed`` (an integer, else each point's seed is :func:`point_seed` of
    ``seed`` and the point's index). Points are run in chunks of ``chunk``
    points per task; a chunk without controller runs as one
    :meth:`Simulator.rollout_batch` on ``threads`` threads (default 1: one
    thread per Dask worker, no oversubscription), otherwise as a loop of
    :meth:`Simulator.rollout`. Results are bitwise the same whatever the
    client, the number of workers and the chunk size.

    Parameters
    ----------
    simulator
        The simulator: its model, options and current state are those of
        every point (it is pickled to the workers; its own state does not
        change).
    design
        A :class:`Grid`, a :class:`RandomDesign` or a :class:`Design`.
    duration, steps
        The length of each rollout: seconds (rounded to whole steps) or steps.
    metrics
        ``{name: f}`` with ``f(trajectory) -> float or array`` (one shape
        for every point), computed on the worker.
    controller
        None (zero joint forces), a :class:`PD` / :class:`ComputedTorque`
        template whose ``kp`` / ``kd`` the design may vary, or a function
        ``(model, point) -> controller`` of the point's model and
        coordinates (a dict holding its ``seed``) for anything else; then
        the design may also have coordinates of the user's own (names
        without a dot that are not model parameters).
    record_every
        The trajectories' sampling (what the metrics see).
    seed
        The sweep's seed, from which each point's seed is derived.
    client
        None: a new ``LocalCluster`` of ``n_workers`` processes (default:
        one per core) with one thread each, closed at the end; a scheduler
        address (``"tcp://host:8786"``); a ``dask.distributed.Client``
        (left open); or False: in this process, one chunk after another,
        without Dask.
    n_workers
        The workers of the default ``LocalCluster``.
    path
        A directory where each finished chunk is saved (``chunk-*.npz``,
        written atomically, with ``sweep.json`` describing the sweep); a
        sweep started again with the same directory and arguments skips
        the points already saved. None: nothing saved.
    chunk
        Points per task (default: about eight tasks per worker thread, at
        most 64 points per task).
    threads
        Threads of a batched chunk (:meth:`Simulator.rollout_batch`).
    timeout
        Seconds to wait for a scheduler given by address.

    Returns
    -------
    SweepResult
        One row per point, NaN and an error record at failed points.

    Raises
    ------
    InputError
        A design coordinate that is not a parameter of the model (with the
        closest names), gains without a PD template, a directory holding
        another sweep, a bad argument; a scheduler address that cannot be
        reached within ``timeout`` seconds (the message names it).
    SimulationError
        A task failed as a whole (e.g. its worker died more often than
        Dask's ``allowed-failures``), naming its points; finished chunks
        are saved. A point whose rollout or metric fails does not raise:
        it is recorded in ``SweepResult.error``.
    """
    if not isinstance(simulator, Simulator):
        raise InputError(f"sweep needs a multibody Simulator, got {simulator!r}")
    if not isinstance(design, Design):
        raise InputError(f"sweep needs a design (multibody.Grid, RandomDesign or Design), got {design!r}")
    n_steps = _step_count(duration, steps, simulator.dt)
    every = _count(record_every, "record_every", 1)
    seed = _count(seed, "seed", 0)
    threads = _count(threads, "threads", 1)
    metrics = {} if metrics is None else dict(metrics)
    for name, fn in metrics.items():
        if not isinstance(name, str) or not callable(fn):
            raise InputError(f"metrics must map names to functions trajectory -> value, got {name!r}: {fn!r}")
    model = simulator._given_model
    known = set(parameter_names(model))
    custom = controller is not None and not isinstance(controller, PD)
    if controller is not None and not callable(controller):
        raise InputError(f"controller must be None, a PD or ComputedTorque, or a function (model, point) -> "
                         f"controller, got {controller!r}")
    if isinstance(controller, PD) and (controller.model.nq, controller.model.nv) != (model.nq, model.nv):
        raise InputError(f"the controller was made for model '{controller.model.name}' (nq {controller.model.nq}), "
                         f"not for the simulator's '{model.name}' (nq {model.nq})")
    for name in design.names:
        if name in known or name in RESERVED or (custom and "." not in name):
            continue
        try:
            model.with_params({name: 0.0})  # raises the unknown-parameter error with the closest names
        except InputError as e:
            raise InputError(f"sweep: design coordinate {name!r} is not one of {', '.join(RESERVED)} nor a "
                             f"parameter of the model: {e}") from None
    if any(g in design.names for g in GAINS) and not isinstance(controller, PD):
        raise InputError(f"the design varies {', '.join(g for g in GAINS if g in design.names)}: give the PD (or "
                         "ComputedTorque) whose gains it sets as controller=")
    for name, size in (("q0", model.nq), ("v0", model.nv)):
        if name in design.names and design.columns[name].shape[1:] != (size,):
            raise InputError(f"design coordinate {name!r} needs vectors of {size} values, got shape "
                             f"{design.columns[name].shape[1:]}")
    fused = simulator._fused
    start = dataclasses.replace(simulator.checkpoint(), warm_start=())  # every point starts cold
    job = _Job(model, simulator._arguments, start, design, tuple(n for n in design.names if n in known),
               controller, metrics, n_steps, every, seed, threads,
               batch=controller is None and fused is not None and not fused.external)
    store = None if path is None else _Store(os.fspath(path), _manifest(job, simulator))
    chunks = [] if store is None else store.load()
    finished = np.zeros(design.n, bool)
    for c in chunks:
        finished[c["index"]] = True
    todo = np.flatnonzero(~finished)
    size = None if chunk is None else _count(chunk, "chunk", 1)

    def chunking(workers: int) -> list[list[int]]:
        # eight tasks per worker: points differ in cost (a Talos grid's chunks of 32 took 0.35-0.53 s), and
        # with four a worker idled at the end for ~20% of the sweep; a task costs ~5 ms (docs/scale.md)
        k = size or max(1, min(64, math.ceil(len(todo) / (TASKS_PER_WORKER * workers))))
        return [todo[i:i + k].tolist() for i in range(0, len(todo), k)]

    def done(result: dict) -> None:
        if store is not None:
            store.save(result)
        chunks.append(result)

    if client is False:
        for idx in chunking(1):
            done(_run_chunk(job, idx))
    elif len(todo):
        _run_dask(client, n_workers, float(timeout), job, chunking, done)
    return _gather(design, seed, chunks, model, list(metrics), None if store is None else store.path)
