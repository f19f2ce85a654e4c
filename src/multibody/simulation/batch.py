"""Batched rollouts: many initial states and/or parameter sets of one
simulator, on all cores, in one call (``mujoco.rollout`` is the peer).

Each member runs the compiled rollout loop of :meth:`Simulator.rollout`
(the same kernel, so a member's samples are bitwise those of a single
rollout from the same state with the same parameters); the members are
shared among threads, each with its own simulator (workspace and step
table): the rollout kernels release the GIL, so the threads run in
parallel without a parallel kernel.
"""
from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from ..errors import InputError, MultibodyError, SimulationError
from ..integrators.fused import NO_CONTROL
from ..model.checks import as_float_array
from .trajectory import Trajectory, model_fingerprint
from .._typing import Array, ArrayLike

if TYPE_CHECKING:
    from .simulator import Simulator


@dataclass
class Rollouts:
    """The samples of B rollouts: ``t`` (N,) s, ``q`` (B, N, nq), ``v`` and
    ``tau`` (B, N, nv) (joint forces applied in the step ending at each
    sample, after effort clamping), ``effort_clamped`` /
    ``velocity_clamped`` (B, N, nv) booleans, ``meta``, and the actuators'
    ``control`` and ``actuator_force`` (B, N, nu) and ``activation`` (B, N,
    na) (docs/actuators.md). ``rollouts[b]`` is member b as a
    :class:`Trajectory` (energies and powers derived on first access);
    ``len(rollouts)`` is B."""
    t: Array
    q: Array
    v: Array
    tau: Array
    effort_clamped: np.ndarray
    velocity_clamped: np.ndarray
    meta: dict = field(default_factory=dict)
    _members: list | None = field(default=None, repr=False, compare=False)
    control: Array | None = None
    activation: Array | None = None
    actuator_force: Array | None = None

    def __len__(self) -> int:
        return self.q.shape[0]

    def __getitem__(self, b: int) -> Trajectory:
        sim = self._members[b]  # type: ignore[index]
        return Trajectory.recorded(self.t, self.q[b], self.v[b], self.tau[b], self.effort_clamped[b],
                                   self.velocity_clamped[b], dict(self.meta, member=int(b)),
                                   model_fingerprint(sim.model), sim._derived_quantities(),
                                   (sim.actuator_names, self.control[b], self.activation[b], self.actuator_force[b]))  # type: ignore[index]


def _states(x, name, B, size, default):
    """(B, size) float64 from ``x``: None (the current state for every
    member), one vector (every member) or (B, size)."""
    if x is None:
        return np.tile(default, (B, 1))
    a = as_float_array(x, name)
    if a.ndim == 1 and a.shape == (size,):
        return np.tile(a, (B, 1))
    if a.shape != (B, size):
        raise InputError(f"{name} must have shape ({B}, {size}) (one row per rollout) or ({size},), got {a.shape}")
    return a


def rollout_batch(sim: Simulator, q0: ArrayLike | None = None, v0: ArrayLike | None = None, steps: int | None = None,
                  duration: float | None = None, params: Sequence[Any] | None = None, tau: ArrayLike | None = None,
                  record_every: int = 1, threads: int | None = None, control: ArrayLike | None = None) -> Rollouts:
    """B rollouts of ``sim`` (see :meth:`Simulator.rollout_batch`)."""
    from .simulator import Simulator, _count, _rebuild, _step_count  # the simulator module imports this one
    n = _step_count(duration, steps, sim.dt)
    every = _count(record_every, "record_every", 1)
    model = sim.model
    sizes = [np.shape(x)[0] for x in (q0, v0) if x is not None and np.ndim(x) == 2]
    if params is not None:
        if isinstance(params, (str, bytes, dict)) or not hasattr(params, "__len__"):
            raise InputError(f"params must be a sequence of parameter mappings (one per rollout; "
                             f"Model.with_params), got {type(params).__name__}")
        sizes.append(len(params))
    if tau is not None and np.ndim(tau) == 3:
        sizes.append(np.shape(tau)[0])
    if callable(control):
        raise InputError("rollout_batch takes controls as tables ((nu,), (steps, nu) or (B, steps, nu)), not a "
                         "function: run Simulator.rollout(control=...) per state")
    if control is not None and np.ndim(control) == 3:
        sizes.append(np.shape(control)[0])
    B = sizes[0] if sizes else 1
    if any(b != B for b in sizes):
        raise InputError(f"the batch sizes of q0, v0, params, tau and control differ: {sizes}")
    if B < 1:
        raise InputError("a batch needs at least one rollout")
    Q0 = _states(q0, "q0", B, model.nq, sim.state.q)
    try:  # before any member is built at its start; one check of the whole batch (quaternion norms)
        model.check_configuration(Q0, "q0")
    except InputError:
        for b in range(B):  # the first bad member, by name
            model.check_configuration(Q0[b], f"q0[{b}]")
    V0 = _states(v0, "v0", B, model.nv, sim.state.v)
    if tau is None:
        taus = [sim._zero[None, :]] * B
    elif np.ndim(tau) == 3:
        taus = [sim._tau_table(tau[b], n, None) for b in range(B)]  # type: ignore[index]
    else:
        taus = [sim._tau_table(tau, n, None)] * B
    if control is None:
        ctrls = [None] * B
    elif np.ndim(control) == 3:
        ctrls = [sim._control_table(control[b], n) for b in range(B)]  # type: ignore[index]
    else:
        ctrls = [sim._control_table(control, n)] * B
    threads = min(B, os.cpu_count() or 1 if threads is None else _count(threads, "threads", 1))
    # one simulator per member with its own parameters, else one per thread; built from the model
    # the simulator was given (with ground=True, sim.model already has the plane its arguments add)
    given = sim._given_model
    held = None
    if params is not None:
        # built at their starts: their checks of the initial state (overlapping geometry) are about it
        members = [Simulator(given.with_params(p), q0=Q0[b], v0=V0[b], **sim._arguments)
                   for b, p in enumerate(params)]
    else:
        held = _held_members(sim, min(threads, B))
        members = held if held is not None else \
            [_rebuild(given, sim._arguments, sim.checkpoint()) for _ in range(min(threads, B))]
    try:
        return _run_members(sim, members, params, Q0, V0, taus, ctrls, n, every, threads, B)
    finally:
        if held is not None:
            sim._batch_lock.release()


_POOL: dict[str, Any] = {}  # "executor", "size", "lock"


def _pool(threads: int) -> ThreadPoolExecutor:
    """A thread pool of at least ``threads`` threads, kept between batches:
    starting threads cost ~0.3 ms per call, more than a short batch (the
    one-step batches of the finite-difference step derivatives: a box's
    took 2.1 ms on 2 threads, 1.1 ms with the pool kept). Batches running
    at once share it (their tasks only run compiled rollouts: none waits
    for another). A forked child starts a pool of its own."""
    with _POOL.setdefault("lock", threading.Lock()):
        if _POOL.get("size", 0) < threads:  # a larger pool replaces it; the old one's idle threads end with it
            size = max(threads, os.cpu_count() or 1)
            _POOL.update(executor=ThreadPoolExecutor(size, thread_name_prefix="multibody-batch"), size=size)
        return _POOL["executor"]


if hasattr(os, "register_at_fork"):  # the parent's threads (and a lock they may hold) are not in the child
    os.register_at_fork(after_in_child=_POOL.clear)


def _held_members(sim: Simulator, k: int) -> list[Simulator] | None:
    """``k`` member simulators for a batch without parameters, kept on ``sim``
    between calls (building them costs ~10 ms for Talos, more than a short
    batch) and set to its checkpoint: what defines a simulator is its given
    model, its arguments and its checkpoint (as for pickling), so a held
    member restored to the checkpoint is a rebuilt one. None when another
    thread is running a batch of ``sim`` (that call has them; this one
    builds its own); else the caller releases ``sim._batch_lock``."""
    from .simulator import _rebuild
    if not sim._batch_lock.acquire(blocking=False):
        return None
    held = sim._batch_members
    checkpoint = sim.checkpoint()
    for m in held[:k]:
        m.restore(checkpoint)
    while len(held) < k:
        held.append(_rebuild(sim._given_model, sim._arguments, checkpoint))
    return held[:k]


def _run_members(sim: Simulator, members: list[Simulator], params: Sequence[Any] | None, Q0: np.ndarray,
                 V0: np.ndarray, taus: list[Any], ctrls: list[Any], n: int, every: int, threads: int,
                 B: int) -> Rollouts:
    """The rollouts of :func:`rollout_batch` on its member simulators."""
    model = sim.model
    for m in members:
        if m._fused is None or m._fused.external:
            raise InputError(f"batched rollouts need a fused compiled step: the integrator '{sim.integrator.name}' "
                             f"with these force elements or constraints steps in Python; use Simulator.rollout "
                             f"per state instead")
    for m in members:
        m._fused.compile_rollout()  # type: ignore[union-attr]  # compile (or load) in this thread, before the threads start
    rows = 1 + n // every
    Q, V = np.empty((B, rows, model.nq)), np.empty((B, rows, model.nv))
    TAU = np.zeros((B, rows, model.nv))
    flags = np.zeros((B, rows), np.int64)
    masks = np.zeros((B, rows, 2, model.nv), np.bool_)
    Q[:, 0], V[:, 0] = Q0, V0
    nu, na = sim.nu, sim.na
    U, F, A = np.zeros((B, rows, nu)), np.zeros((B, rows, nu)), np.zeros((B, rows, na))
    A[:, 0] = sim.activation
    failures = {}
    # a shared member runs several rollouts: each starts from the simulator's contact warm start, not from
    # the previous rollout's last step (an iterative solver's answer depends on it)
    warm = None if params is not None or sim.contact is None else sim.contact.warm_start()

    def run(worker):
        for b in range(worker, B, threads):
            m = members[b] if params is not None else members[worker]
            q, v = Q0[b].copy(), V0[b].copy()
            if warm is not None:
                m.contact.reset(warm)
            if nu:  # every member starts from the simulator's controls and activations
                m._act_set.io.ctrl[:] = sim._act_set.io.ctrl
                m._act_set.io.act[:] = sim._act_set.io.act
            done, st = m._fused.rollout(q, v, taus[b], NO_CONTROL, 0, n, every, 0, Q[b], V[b], TAU[b], flags[b],
                                        masks[b], ctrls[b], U[b], A[b], F[b])
            if st < 0:
                failures[b] = (done, q, v, st)

    if threads == 1:
        run(0)
    else:
        list(_pool(threads).map(run, range(threads)))
    t = np.add.accumulate(np.concatenate(([sim.state.t], np.full(n, sim.dt))))
    if failures:  # the first failing member's step again, on the checked path, names what failed
        b = min(failures)
        done, q, v, st = failures[b]
        m = members[b] if params is not None else members[0]
        m.state = type(m.state)(t[done], q, v)
        m._steps = done
        try:
            m._fused_failed(st, taus[b][0 if len(taus[b]) == 1 else done], "tau")
        except MultibodyError as e:
            raise type(e)(f"rollout {b} of the batch: {e}") from e
        raise SimulationError(f"rollout {b} of the batch failed at step {done + 1} (status {st}) although the "
                              "checked step succeeds: please report")
    meta = dict(model=model.name, integrator=sim.integrator.name, dt=sim.dt, batch=B)
    if params is None:
        members = [members[0]] * B
    return Rollouts(t[::every], Q, V, TAU, masks[:, :, 0], masks[:, :, 1], meta, members, U, A, F)
