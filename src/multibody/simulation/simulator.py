"""The simulator: a model, a formulation, an integrator and force
elements composed into ``step`` and ``rollout`` (DESIGN.md)."""
from dataclasses import dataclass

import numpy as np

from ..errors import InputError, MultibodyError, SimulationError
from ..forces import total_potential_energy
from ..formulations import ReducedSystem
from ..integrators import INTEGRATORS, Integrator
from ..kinematics import kinetic_energy, potential_energy
from .trajectory import Trajectory


@dataclass
class State:
    """Time (s), configuration q (nq) and velocity v (nv)."""
    t: float
    q: np.ndarray
    v: np.ndarray


class Simulator:
    """Simulate ``model`` with time step ``dt`` (s).

    ``integrator``: a name from :data:`multibody.integrators.INTEGRATORS`
    ("explicit_euler", "semi_implicit_euler", "rk4", "implicit_euler",
    "trapezoidal", "bridson_marino") or an
    :class:`~multibody.integrators.Integrator`. ``forces``: force elements
    (:mod:`multibody.forces`). Gravity is ``model.gravity`` unless
    ``gravity=False``; the model's viscous joint damping (``model.damping``,
    from URDF ``<dynamics>`` or MJCF) applies unless ``joint_damping=False``.
    Joint forces are clamped to ``model.effort_limit`` and velocities to
    ``model.velocity_limit`` after each step (``clamp_effort`` /
    ``clamp_velocity``); :attr:`last_clamped` and the trajectory report
    which coordinates were clamped. Position limits come with the
    constraint solvers (not yet). The state starts at ``q0`` (default: neutral) and
    ``v0`` (default: zero). Deterministic: the same inputs give
    bit-identical trajectories."""

    def __init__(self, model, dt, integrator="semi_implicit_euler", forces=(), gravity=True, joint_damping=True,
                 clamp_effort=True, clamp_velocity=True, q0=None, v0=None):
        if not (np.isfinite(dt) and dt > 0):
            raise InputError(f"dt must be a positive number of seconds, got {dt}")
        if isinstance(integrator, str):
            if integrator not in INTEGRATORS:
                raise InputError(f"unknown integrator '{integrator}' (known: {', '.join(sorted(INTEGRATORS))})")
            integrator = INTEGRATORS[integrator]()
        if not isinstance(integrator, Integrator):
            raise InputError(f"integrator must be a name or an Integrator, got {integrator!r}")
        self.model = model
        self.dt = float(dt)
        self.integrator = integrator
        self.system = ReducedSystem(model, forces, gravity, joint_damping)
        integrator.check(self.system)
        self.state = State(0.0, np.zeros(model.nq), np.zeros(model.nv))
        self._zero = np.zeros(model.nv)
        self._zero.setflags(write=False)
        self._no_clamp = np.zeros(model.nv, bool)
        self._effort = model.effort_limit if clamp_effort and np.isfinite(model.effort_limit).any() else None
        self._vmax = model.velocity_limit if clamp_velocity and np.isfinite(model.velocity_limit).any() else None
        self.last_clamped = (np.zeros(model.nv, bool), np.zeros(model.nv, bool))  # (effort, velocity)
        self.reset(q0, v0)
        self._steps = 0

    def reset(self, q=None, v=None, t=0.0):
        """Set the state (defaults: neutral configuration, zero velocity)."""
        q = self.model.neutral() if q is None else self.model.check_configuration(q)
        v = np.zeros(self.model.nv) if v is None else self.model.check_velocity(v)
        if q.ndim != 1 or v.ndim != 1:
            raise InputError("the simulator state is one configuration: q (nq,) and v (nv,)")
        self.state = State(float(t), q.copy(), v.copy())
        self._steps = 0

    def step(self, tau=None):
        """Advance one time step with joint forces ``tau`` (nv; default zero)
        held constant over the step; returns the new :class:`State`."""
        s = self.state
        tau = self._zero if tau is None else self.model.check_velocity(tau, "tau")
        eff_mask = vel_mask = self._no_clamp
        if self._effort is not None:
            eff_mask = np.abs(tau) > self._effort
            if eff_mask.any():
                tau = np.clip(tau, -self._effort, self._effort)
        self._steps += 1
        t = s.t + self.dt
        try:
            q, v = self.integrator.step(self.system, s.t, s.q, s.v, tau, self.dt)
        except MultibodyError as e:  # e.g. an overflowing state made the dynamics singular
            raise SimulationError(f"the integration diverged at {self._where(t)}: {e}") from e
        if not np.isfinite(q.sum() + v.sum()):  # one cheap test per step; locate the culprit only on failure
            for name, x in (("q", q), ("v", v)):
                bad = ~np.isfinite(x)
                if bad.any():
                    raise SimulationError(f"the integration diverged at {self._where(t)}: "
                                          f"non-finite {name}[{int(np.argmax(bad))}]")
        if self._vmax is not None:
            vel_mask = np.abs(v) > self._vmax
            if vel_mask.any():
                v = np.clip(v, -self._vmax, self._vmax)
        self.last_clamped = (eff_mask, vel_mask)
        self.last_tau = tau
        self.state = State(t, q, v)
        return self.state

    def _where(self, t):
        return f"step {self._steps} (t = {t:.6g} s, {self.integrator.name}, dt = {self.dt})"

    def energy(self, q=None, v=None):
        """(kinetic, potential) energy of a state (default: the current one)."""
        q = self.state.q if q is None else q
        v = self.state.v if v is None else v
        V = potential_energy(self.model, q) if self.system.gravity else 0.0
        V += total_potential_energy(self.system.forces, self.model, q)
        return kinetic_energy(self.model, q, v), V

    def rollout(self, duration=None, steps=None, controller=None, record_every=1, progress=False):
        """Run from the current state for ``duration`` seconds or ``steps``
        steps; ``controller(t, q, v) -> tau`` (or None for zero forces) is
        called before each step. Records every ``record_every`` steps (and
        the initial state) into a :class:`Trajectory`. ``progress=True``
        shows a progress bar (tqdm) on long runs."""
        if (duration is None) == (steps is None):
            raise InputError("give exactly one of duration and steps")
        n = int(round(duration / self.dt)) if steps is None else int(steps)
        if n < 0 or record_every < 1:
            raise InputError("steps must be >= 0 and record_every >= 1")
        rec_t, rec_q, rec_v, rec_tau, rec_T, rec_V, rec_ce, rec_cv = [], [], [], [], [], [], [], []

        def record(tau, clamped):
            s = self.state
            T, V = self.energy()
            rec_t.append(s.t)
            rec_q.append(s.q)
            rec_v.append(s.v)
            rec_tau.append(tau)
            rec_T.append(T)
            rec_V.append(V)
            rec_ce.append(clamped[0])
            rec_cv.append(clamped[1])

        zero = np.zeros(self.model.nv)
        none = np.zeros(self.model.nv, bool)
        record(zero, (none, none))
        bar = _progress(n) if progress else None
        for k in range(n):
            s = self.state
            tau = zero if controller is None else np.asarray(controller(s.t, s.q, s.v), dtype=float)
            self.step(tau)
            if (k + 1) % record_every == 0:
                record(self.last_tau, self.last_clamped)
            if bar is not None:
                bar.update(1)
        if bar is not None:
            bar.close()
        meta = dict(model=self.model.name, integrator=self.integrator.name, dt=self.dt)
        return Trajectory(np.array(rec_t), np.array(rec_q), np.array(rec_v), np.array(rec_tau), np.array(rec_T),
                          np.array(rec_V), meta, np.array(rec_ce), np.array(rec_cv))


def _progress(n):
    try:
        from tqdm import tqdm
    except ImportError:  # progress bars are optional
        return None
    return tqdm(total=n, unit="step", leave=False)
