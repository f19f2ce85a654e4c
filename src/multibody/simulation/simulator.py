"""The simulator: a model, a formulation, an integrator and force
elements composed into ``step`` and ``rollout`` (DESIGN.md)."""
from dataclasses import dataclass

import numpy as np
from numba import types

from .._compiled import B_1, F64_1, F64_2C, F64_3C, F64_4C, I64_1, entry
from ..constraints import Constraints, JointLimits, project, project_positions
from ..errors import InputError, MultibodyError, SimulationError
from ..forces import total_potential_energy
from ..formulations import ReducedSystem
from ..integrators import INTEGRATORS, Integrator
from ..kinematics import kinetic_energy, potential_energy
from ..solvers import solve_spd_lcp
from ._kernels import NON_FINITE, end_of_step_kernel
from .trajectory import Trajectory

_END = None


def _end_entry():
    global _END
    _END = entry(end_of_step_kernel, F64_2C, I64_1, F64_1, F64_1, F64_1, types.boolean, I64_1, I64_1, F64_1,
                 F64_1, types.float64, types.float64, F64_4C, F64_3C, F64_3C, F64_2C, F64_1, F64_1, B_1)
    return _END


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
    which coordinates were clamped.

    Position limits (``model.lower_limit`` / ``upper_limit``, unless
    ``limits=False``) are unilateral constraints solved exactly at the end
    of every step (Drumwright §2.2; velocity solve then position
    projection as in ArtiSynth §0.5–0.6): for the limits the step violates
    (φ < 0), with ``A = G M⁻¹Gᵀ``,

    1. impulses ``λ ≥ 0`` from the LCP ``A λ + v_n − v*_n ⊥ λ`` give the
       velocity ``v⁺ = v + M⁻¹Gᵀλ`` with normal velocity ``v⁺_n ≥ v*_n``,
       ``v*_n = −e v_n`` (Newton restitution, ``e = restitution``, for
       approach speeds above ``restitution_threshold``, rad/s or m/s;
       otherwise 0);
    2. the configuration moves by ``M⁻¹Gᵀμ``, ``μ ≥ 0`` from the LCP
       ``A μ + φ ⊥ μ``: the closest admissible configuration in the
       kinetic-energy metric (post-stabilization), so no limit is ever
       violated at the end of a step.

    With ``e = 0`` an impact stops the joint at its limit; with ``e = 1``
    it leaves with its approach speed.

    Bilateral constraints (``constraints=True``: the model's loop joints,
    couplings and MJCF equalities; or a
    :class:`~multibody.constraints.Constraints`, or a list of LoopJoint /
    Coupling records; False: none) are hard by default — KKT velocity
    steps or closed-loop accelerations with Baumgarte terms
    (``baumgarte``, rad/s), then projection onto φ = 0 and G v = 0 after
    every step (``project``) — or soft with ``compliance`` α > 0 and
    ``constraint_damping`` β (ArtiSynth §0.11); see
    :class:`~multibody.formulations.ReducedSystem` and docs/constraints.md.
    The initial state is assembled onto the constraints.

    The state starts at ``q0`` (default: neutral) and ``v0`` (default:
    zero). Deterministic: the same inputs give bit-identical
    trajectories."""

    def __init__(self, model, dt, integrator="semi_implicit_euler", forces=(), gravity=True, joint_damping=True,
                 clamp_effort=True, clamp_velocity=True, limits=True, restitution=0.0, restitution_threshold=1e-2,
                 constraints=True, compliance=0.0, constraint_damping=0.0, baumgarte=10.0, project=True,
                 loop_method=None, q0=None, v0=None):
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
        if constraints is True:
            constraints = Constraints(model)
        elif constraints is False or constraints is None:
            constraints = None
        elif not isinstance(constraints, Constraints):
            constraints = Constraints(model, extra=constraints, loops=False, couplings=False)
        self.system = ReducedSystem(model, forces, gravity, joint_damping, constraints, compliance,
                                    constraint_damping, baumgarte, loop_method)
        self.constraints = self.system.constraints
        self.project = bool(project) and self.constraints is not None and not self.system.soft
        integrator.check(self.system)
        if not (0.0 <= restitution <= 1.0):
            raise InputError(f"restitution must be in [0, 1], got {restitution}")
        if not (restitution_threshold >= 0.0):
            raise InputError(f"restitution_threshold must be >= 0, got {restitution_threshold}")
        self.limits = JointLimits(model) if limits else None
        if self.limits is not None and not len(self.limits):
            self.limits = None
        self._limit_rows = self.limits if self.limits is not None else JointLimits.none(model)
        self.restitution = float(restitution)
        self.restitution_threshold = float(restitution_threshold)
        self.state = State(0.0, np.zeros(model.nq), np.zeros(model.nv))
        self._zero = np.zeros(model.nv)
        self._zero.setflags(write=False)
        self._no_clamp = np.zeros(model.nv, bool)
        self._effort = model.effort_limit if clamp_effort and np.isfinite(model.effort_limit).any() else None
        self._vmax = model.velocity_limit if clamp_velocity and np.isfinite(model.velocity_limit).any() else None
        self._vmax_or_inf = self._vmax if self._vmax is not None else np.full(model.nv, np.inf)
        self.last_clamped = (np.zeros(model.nv, bool), np.zeros(model.nv, bool))  # (effort, velocity)
        self.reset(q0, v0)
        self._steps = 0

    def reset(self, q=None, v=None, t=0.0):
        """Set the state (defaults: neutral configuration, zero velocity).
        With hard constraints the state is first assembled: projected onto
        φ = 0 and G v = 0 (InputError naming the constraint if that fails)."""
        q = self.model.neutral() if q is None else self.model.check_configuration(q)
        v = np.zeros(self.model.nv) if v is None else self.model.check_velocity(v)
        if q.ndim != 1 or v.ndim != 1:
            raise InputError("the simulator state is one configuration: q (nq,) and v (nv,)")
        if self.project:
            q = project_positions(self.model, self.constraints, q)[0]
            v = project(self.model, self.constraints, q, v, np.inf, 0)[1]
        self.state = State(float(t), q.copy(), v.copy())
        self._steps = 0

    def step(self, tau=None):
        """Advance one time step with joint forces ``tau`` (nv; default zero)
        held constant over the step; returns the new :class:`State`."""
        s = self.state
        eff_mask = self._no_clamp
        if tau is None:
            tau = self._zero
        else:
            tau = self.model.check_velocity(tau, "tau")
            if self._effort is not None:
                eff_mask = np.abs(tau) > self._effort
                if eff_mask.any():
                    tau = np.clip(tau, -self._effort, self._effort)
        self._steps += 1
        t = s.t + self.dt
        try:
            q1, v1 = self.integrator.step(self.system, s.t, s.q, s.v, tau, self.dt)
        except MultibodyError as e:  # e.g. an overflowing state made the dynamics singular
            raise SimulationError(f"the integration diverged at {self._where(t)}: {e}") from e
        q, v = np.empty_like(q1), np.empty_like(v1)
        vel_mask = np.empty(v1.shape[0], np.bool_)
        lim, d = self._limit_rows, self.system.data
        st = (_END or _end_entry())(self.model._tree, self.model.dof_parent, q1, v1, self._vmax_or_inf,
                                    self._vmax is not None, lim.q_index, lim.v_index, lim.sign, lim.bound,
                                    self.restitution, self.restitution_threshold, d.poses, d.jac, d.inertia6, d.M,
                                    q, v, vel_mask)
        if st != 0:
            q, v, vel_mask = self._end_of_step_failed(st, t, q1, v1)
        if self.project:  # post-stabilization onto φ = 0 and G v = 0 (ArtiSynth §0.5)
            q, v, it = project(self.model, self.constraints, q, v, tol=1e-12, max_iterations=20)
            # near a singular configuration round-off can stall Newton above 1e-12; accept what
            # stays far below any physical tolerance, report the rest
            if it < 0 and self.constraint_residual(q) > 1e-9:
                raise SimulationError(f"the constraints could not be restored at {self._where(t)}: residual "
                                      f"{self.constraint_residual(q):.3g} after 20 Newton iterations")
        self.last_clamped = (eff_mask, vel_mask)
        self.last_tau = tau
        self.state = State(t, q, v)
        return self.state

    def _end_of_step_failed(self, st, t, q1, v1):
        """The checked NumPy end of step after the compiled one reported
        ``st``: locate a non-finite value, or a singular mass matrix, or
        solve the limits' LCPs by NNLS."""
        if st == NON_FINITE:
            for name, x in (("q", q1), ("v", v1)):
                bad = ~np.isfinite(x)
                if bad.any():
                    raise SimulationError(f"the integration diverged at {self._where(t)}: "
                                          f"non-finite {name}[{int(np.argmax(bad))}]")
        if st == -1:
            raise SimulationError(f"the mass matrix is not positive definite at {self._where(t)}")
        q, v = self._enforce_limits_numpy(q1, v1)
        vel_mask = np.zeros(v.shape[0], bool)
        if self._vmax is not None:
            vel_mask = np.abs(v) > self._vmax
            v = np.clip(v, -self._vmax, self._vmax)
        return q, v, vel_mask

    def _enforce_limits_numpy(self, q1, v1):
        lim = self.limits
        phi = lim.gaps(q1)
        active = phi < 0.0
        if not active.any():
            return q1, v1
        Minv = self.system.inverse_mass_matrix(q1)  # G = ±e_k: M⁻¹Gᵀ selects signed columns of M⁻¹
        vn_all = lim.normal_velocity(v1)
        while True:
            rows = np.flatnonzero(active)
            X = Minv[:, lim.v_index[rows]] * lim.sign[rows]
            A = X[lim.v_index[rows]] * lim.sign[rows, None]
            vn = vn_all[rows]
            impulse, _ = solve_spd_lcp(A, vn - self._restitution_target(vn))
            shift, _ = solve_spd_lcp(A, phi[rows])  # post-stabilization: the M-closest q with φ ≥ 0
            q = self.model._integrate(q1, X @ shift, 1.0)
            pushed = (lim.gaps(q) < 0.0) & ~active  # the shift moves coupled coordinates too
            if not pushed.any():
                return q, v1 + X @ impulse
            active |= pushed

    def _restitution_target(self, vn):
        """Least normal velocity after an impact at normal velocity vn."""
        target = np.zeros(vn.size)
        if self.restitution > 0.0:
            bounce = vn < -self.restitution_threshold
            target[bounce] = -self.restitution * vn[bounce]
        return target

    def _where(self, t):
        return f"step {self._steps} (t = {t:.6g} s, {self.integrator.name}, dt = {self.dt})"

    def energy(self, q=None, v=None):
        """(kinetic, potential) energy of a state (default: the current one)."""
        q = self.state.q if q is None else q
        v = self.state.v if v is None else v
        V = potential_energy(self.model, q) if self.system.gravity else 0.0
        V += total_potential_energy(self.system.forces, self.model, q) + self.system.constraint_energy(q)
        return kinetic_energy(self.model, q, v), V

    def constraint_residual(self, q=None):
        """The largest constraint violation at q (default: the current
        state): max |φ| of the bilateral constraints and the largest
        position-limit violation."""
        q = self.state.q if q is None else q
        r = self.limits.violation(q) if self.limits is not None else 0.0
        if self.constraints is not None:
            r = max(r, float(np.abs(self.constraints.evaluate(q)[0]).max()))
        return r

    def power(self, tau, q=None, v=None):
        """Power (W) delivered by each non-gravity source at a state:
        ``(labels, values)`` for the applied joint forces ``τᵀv``, each force
        element (:meth:`ForceElement.power`) and the model's joint damping.
        Gravity's work is in the potential energy, so
        ``d(T + V)/dt = Σ power − (power of conservative elements)``."""
        q = self.state.q if q is None else q
        v = self.state.v if v is None else v
        labels, values = ["tau"], [float(tau @ v)]
        for k, e in enumerate(self.system.forces):
            labels.append(f"{k}:{e!r}")
            values.append(e.power(self.model, q, v, self.state.t))
        if self.system._damped:
            labels.append("joint damping")
            values.append(float(-(self.system.damping * v) @ v))
        return labels, values

    def rollout(self, duration=None, steps=None, controller=None, record_every=1, progress=True):
        """Run from the current state for ``duration`` seconds or ``steps``
        steps; ``controller(t, q, v) -> tau`` (or None for zero forces) is
        called before each step. Records every ``record_every`` steps (and
        the initial state) into a :class:`Trajectory`: state, forces,
        energies, the power of each force (:meth:`power`) and the
        constraint residual (largest position-limit violation). With
        ``progress`` (default) runs of 1000 steps or more show a tqdm
        progress bar when stderr is a terminal (never in tests or logs)."""
        if (duration is None) == (steps is None):
            raise InputError("give exactly one of duration and steps")
        n = int(round(duration / self.dt)) if steps is None else int(steps)
        if n < 0 or record_every < 1:
            raise InputError("steps must be >= 0 and record_every >= 1")
        rec_t, rec_q, rec_v, rec_tau, rec_T, rec_V, rec_ce, rec_cv, rec_p, rec_r = [], [], [], [], [], [], [], [], \
            [], []
        labels = self.power(np.zeros(self.model.nv))[0]

        def record(tau, clamped):
            s = self.state
            T, V = self.energy()
            rec_p.append(self.power(tau)[1])
            rec_r.append(self.constraint_residual())
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
        bar = _progress(n) if progress and n >= 1000 else None
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
                          np.array(rec_V), meta, np.array(rec_ce), np.array(rec_cv), np.array(rec_p), tuple(labels),
                          np.array(rec_r))


def _progress(n):
    try:
        from tqdm import tqdm
    except ImportError:  # progress bars are optional
        return None
    return tqdm(total=n, unit="step", leave=False, disable=None)  # disable=None: only on a terminal
