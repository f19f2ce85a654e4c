"""The derivatives of one simulator step, ``∂(q⁺, v⁺)/∂(q, v, τ)``
(MuJoCo's ``mjd_transitionFD``, Drake's discrete linearization):
analytic through the integrator's step
(:func:`multibody.integrators.derivatives.step_jacobian`) for open chains
without contacts in the step, active limits or clamps; central
differences of the simulator's own step when the step has contacts (the
perturbed steps in one :meth:`Simulator.rollout_batch` call); over a
leading axis of states; ``∂(q⁺, v⁺)/∂u`` per actuator control by central
differences. Conventions and accuracy: docs/derivatives.md, "Derivatives
of one step"."""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ..errors import InputError
from ..integrators.derivatives import ANALYTIC, step_jacobian
from .simulator import state_vector


@dataclass(frozen=True)
class StepDerivatives:
    """The derivatives of one step from (q, v) under τ.

    ``A`` (2nv, 2nv) = ∂(q⁺, v⁺)/∂(q, v) and ``B`` (2nv, nv) = ∂(q⁺, v⁺)/∂τ,
    rows and columns ordered (δq, δv), δq on the tangent space: a column
    perturbs q by ``model.integrate(q, δq)``, a row measures q⁺ by
    ``model.difference(q⁺, ·)``. ``q1``, ``v1``: the step itself.
    ``method``: "analytic" or "finite differences"; ``contacts``: the
    number of contacts of the unperturbed step (0 without contact). For N
    states (a leading axis) every field has it: ``method`` a tuple of N
    strings, ``contacts`` (N,)."""
    A: np.ndarray
    B: np.ndarray
    q1: np.ndarray
    v1: np.ndarray
    method: str | tuple[str, ...]
    contacts: int | np.ndarray = 0


def _state(sim, q, v, tau):
    """Checked (q, v, τ), defaults: the simulator's state and τ = 0."""
    model, nv = sim.model, sim.model.nv
    s = sim.state
    q = s.q.copy() if q is None else model.check_configuration(state_vector(q, "q", model.nq))
    v = s.v.copy() if v is None else state_vector(v, "v", nv)
    tau = np.zeros(nv) if tau is None else state_vector(tau, "tau", nv)
    return q, v, tau


def step_derivatives(sim, q=None, v=None, tau=None, fd_step: float = 1e-6,
                     threads: int | None = None) -> StepDerivatives:
    """The derivatives of one step of ``sim`` from (q, v) (default: its
    state, at its time) under joint forces ``tau`` (default 0); the
    simulator is not changed. See :meth:`Simulator.step_derivatives`.

    With a leading axis of N states (q (N, nq), v (N, nv), tau (N, nv);
    a single vector or None is used for every state) it returns them
    stacked (:func:`step_derivatives_batch`). ``threads``: of the
    finite-difference fallback's batched steps (default: one per core)."""
    if any(x is not None and np.ndim(x) == 2 for x in (q, v, tau)):
        return step_derivatives_batch(sim, q, v, tau, fd_step, threads)
    q, v, tau = _state(sim, q, v, tau)
    if sim.contact is not None:  # the simulator's own step says whether contact (or a limit row) is active
        nominal = _nominal(sim, q, v, tau)
        if nominal[2] + nominal[3]:  # Drumwright's contact stage also holds the limits
            return _finite_differences(sim, [(q, v, tau, nominal)], _checked_step(fd_step), threads, True)[0]
    return _analytic(sim, q, v, tau)


def _analytic(sim, q, v, tau):
    """The chain rule through the integrator's step (no contact in it)."""
    _check_supported(sim)
    t = sim.state.t
    effort = sim._effort
    clamped = np.zeros(sim.model.nv, bool) if effort is None else np.abs(tau) > effort
    applied = tau if effort is None else np.clip(tau, -effort, effort)
    q1, v1, J = step_jacobian(sim.system, sim.integrator.name, t, q, v, applied, sim.dt)
    _check_inactive(sim, q1, v1, t)
    nv = sim.model.nv
    B = np.ascontiguousarray(J[:, 2 * nv:])
    B[:, clamped] = 0.0  # a joint force beyond its effort limit is clipped: it does not reach the step
    return StepDerivatives(np.ascontiguousarray(J[:, :2 * nv]), B, q1, v1, "analytic")


def step_derivatives_batch(sim, q=None, v=None, tau=None, fd_step: float = 1e-6,
                           threads: int | None = None) -> StepDerivatives:
    """:func:`step_derivatives` at N states, stacked.

    Each state is differentiated as :func:`step_derivatives` does it
    alone (the same numbers: analytic without contact, else central
    differences starting from the simulator's checkpoint); the perturbed
    steps of all the states with contact run in one
    :meth:`Simulator.rollout_batch` call.

    Parameters
    ----------
    sim : Simulator
    q, v, tau : array_like, optional
        (N, nq), (N, nv), (N, nv); one vector (or None: the simulator's
        state, τ = 0) is used for every state; at least one of them (N, ·).
    fd_step : float
        ε of the finite differences.
    threads : int, optional
        Threads of the batched steps (default: one per core).

    Returns
    -------
    StepDerivatives
        ``A`` (N, 2nv, 2nv), ``B`` (N, 2nv, nv), ``q1`` (N, nq), ``v1``
        (N, nv), ``method`` a tuple of N strings, ``contacts`` (N,) int.

    Raises
    ------
    InputError
        Mismatched batch sizes or shapes; what :func:`step_derivatives`
        refuses, naming the state.
    """
    model, nv = sim.model, sim.model.nv
    sizes = [np.shape(x)[0] for x in (q, v, tau) if x is not None and np.ndim(x) == 2]
    N = sizes[0] if sizes else 0
    if not sizes or any(n != N for n in sizes) or N < 1:
        raise InputError(f"step_derivatives_batch: q, v and tau need one common leading axis of N ≥ 1 states, got "
                         f"sizes {sizes}")
    rows = [[None] * N if x is None else (list(np.asarray(x, float)) if np.ndim(x) == 2 else [x] * N)
            for x in (q, v, tau)]
    step = _checked_step(fd_step)
    out: list[StepDerivatives | None] = [None] * N
    contact = []
    for i in range(N):
        try:
            qi, vi, ti = _state(sim, rows[0][i], rows[1][i], rows[2][i])
            nominal = None if sim.contact is None else _nominal(sim, qi, vi, ti)
            if nominal is not None and nominal[2] + nominal[3]:
                contact.append((i, (qi, vi, ti, nominal)))
            else:
                out[i] = _analytic(sim, qi, vi, ti)
        except InputError as e:
            raise InputError(f"state {i} of the batch: {e}") from e
    for (i, _), d in zip(contact, _finite_differences(sim, [c for _, c in contact], step, threads, True)):
        out[i] = d
    done = [d for d in out if d is not None]  # every state has its derivative by now
    return StepDerivatives(np.array([d.A for d in done]), np.array([d.B for d in done]),
                           np.array([d.q1 for d in done]), np.array([d.v1 for d in done]),
                           tuple(str(d.method) for d in done), np.array([d.contacts for d in done]))


def _nominal(sim, q, v, tau, control=None):
    """(q⁺, v⁺, contacts, limit rows) of ``sim.step(tau)`` from the
    simulator's checkpoint with (q, v) replaced; the simulator is
    restored. Without contact or limit rows the contact stage leaves the
    step as it is, and so do small perturbations."""
    cp = sim.checkpoint()
    try:
        sim.restore(replace(cp, q=q, v=v))
        sim.step(tau, control)
        c = sim.contact
        return sim.state.q.copy(), sim.state.v.copy(), 0 if c is None else int(c.count), \
            0 if c is None else int(c.limit_count)
    finally:
        sim.restore(cp)


def _check_supported(sim):
    """InputError for what the analytic derivative does not cover."""
    name = sim.integrator.name
    if sim.formulation != "reduced":
        raise InputError(f"step_derivatives: the '{sim.formulation}' formulation is not differentiated (only "
                         f"'reduced')")
    if name not in ANALYTIC or sim._foreign_integrator:
        raise InputError(f"step_derivatives: the integrator '{name}' is not differentiated (supported: "
                         f"{', '.join(ANALYTIC)})")
    if sim.constraints is not None:
        raise InputError(f"step_derivatives: the model has {len(sim.constraints)} loop-constraint row(s) (closed "
                         f"loops, couplings or equalities); the step derivative is for open chains "
                         f"(constraints=False)")
    if sim._particles is not None:
        raise InputError("step_derivatives: a simulator with particles is not differentiated")
    if sim.na:
        raise InputError(f"step_derivatives: {sim.na} actuator activation(s) are state that (q, v) does not hold "
                         f"(actuators with dynamics); not differentiated")


def _check_inactive(sim, q1, v1, t):
    """InputError when the step reaches a position limit, a chart change of
    an exponential-coordinate joint or a velocity clamp."""
    lim = sim._limit_rows
    if len(lim):
        gaps = lim.gaps(q1)
        if (gaps < 0).any():
            k = int(np.argmin(gaps))
            joint = sim.model.joints[int(sim._joint_of_dof[lim.v_index[k]])].name
            raise InputError(f"step_derivatives: the step from t = {t:g} s reaches the position limit of joint "
                             f"'{joint}' (coordinate {int(lim.q_index[k])}, by {-gaps[k]:.3g}); the derivative "
                             f"through an active limit is not implemented (limits=False ignores the limits)")
    for j in sim.model.joints:
        if j.type in ("exp_spherical", "free3d") and np.linalg.norm(q1[j.q_slice.start:j.q_slice.start + 3]) > np.pi:
            raise InputError(f"step_derivatives: the step from t = {t:g} s ends with the rotation vector of joint "
                             f"'{j.name}' ({j.type}) beyond π, where the simulator changes its chart (Sueda §2.4.8); "
                             f"the derivative through the chart change is not implemented")
    if sim._vmax is not None and (np.abs(v1) > sim._vmax).any():
        k = int(np.argmax(np.abs(v1) - sim._vmax))
        raise InputError(f"step_derivatives: the step from t = {t:g} s clamps velocity coordinate {k} to its limit "
                         f"(clamp_velocity=True); the derivative through a clamp is not implemented")


def step_derivatives_fd(sim, q=None, v=None, tau=None, step: float = 1e-6, threads: int | None = None,
                        batch: bool = True) -> StepDerivatives:
    """Central differences of the simulator's own step (contact, limits,
    clamps and all).

    Column k of ``A`` is ``(x⁺(x ⊕ εe_k) ⊖ x⁺(x ⊖ εe_k))/2ε``: q perturbed
    by :meth:`Model.integrate`, q⁺ measured by :meth:`Model.difference`
    from the unperturbed q⁺. Every step starts from the simulator's
    checkpoint with (q, v) replaced (the same time, contact warm start,
    controls and activations), and the simulator is restored afterwards.
    6nv + 1 steps: the unperturbed one by :meth:`Simulator.step`, the 6nv
    perturbed ones in one :meth:`Simulator.rollout_batch` call of one step
    per member (the same compiled step, bitwise; each member starts from
    the simulator's warm start), or one after another by
    :meth:`Simulator.step` when ``batch`` is False or the simulator's step
    is not fused (Python force elements, RK4 with them, constraints).

    Parameters
    ----------
    sim : Simulator
    q, v, tau : array_like, optional
        The state (default: the simulator's) and the joint forces
        (default 0).
    step : float
        ε (rad, m, rad/s, m/s, N·m or N).
    threads : int, optional
        Threads of the batched steps (default: one per core).
    batch : bool
        False: the perturbed steps one after another (the same numbers).

    Returns
    -------
    StepDerivatives
        ``method`` "finite differences"; ``contacts`` the unperturbed
        step's number of contacts.

    Raises
    ------
    InputError
        Bad input or a non-positive ``step``.

    Notes
    -----
    Error O(ε²) plus the contact solver's tolerance over ε (iterative
    solvers: set ``contact_tolerance`` well below ε times the accuracy
    wanted). Where a perturbation changes the active set (a contact
    appears, sticks or slips) the step is not differentiable and the
    difference averages the two sides.
    """
    q, v, tau = _state(sim, q, v, tau)
    step = _checked_step(step)
    return _finite_differences(sim, [(q, v, tau, _nominal(sim, q, v, tau))], step, threads, batch)[0]


def _checked_step(step):
    step = float(step)
    if not (np.isfinite(step) and step > 0):
        raise InputError(f"step_derivatives_fd: the difference step must be a positive number, got {step}")
    return step


def _finite_differences(sim, states, step, threads, batch):
    """:func:`step_derivatives_fd` at each (q, v, τ, nominal step) of
    ``states``, all perturbed steps in one batch."""
    if not states:
        return []
    model, nv = sim.model, sim.model.nv
    S = np.repeat(step * np.eye(nv), 2, axis=0)
    S[1::2] *= -1.0  # rows +εe_0, −εe_0, +εe_1, ...
    Q, V, T = [], [], []
    for q, v, tau, _ in states:  # per state, 3nv columns of (+, −) starts along δq, then δv, then δτ
        Q += [model.integrate(np.tile(q, (2 * nv, 1)), S), np.tile(q, (4 * nv, 1))]
        V += [np.tile(v, (2 * nv, 1)), v + S, np.tile(v, (2 * nv, 1))]
        T += [np.tile(tau, (4 * nv, 1)), tau + S]
    Q1, V1 = _steps(sim, np.vstack(Q), np.vstack(V), np.vstack(T), threads, batch)
    out = []
    for i, (q, v, tau, (q1, v1, contacts, _)) in enumerate(states):
        rows = slice(6 * nv * i, 6 * nv * (i + 1))
        J = _central(model, q1, Q1[rows], V1[rows], step)
        out.append(StepDerivatives(np.ascontiguousarray(J[:, :2 * nv]), np.ascontiguousarray(J[:, 2 * nv:]), q1, v1,
                                   "finite differences", contacts))
    return out


def control_derivatives(sim, q=None, v=None, tau=None, control=None, step: float = 1e-6,
                        threads: int | None = None, batch: bool = True) -> np.ndarray:
    """``B_u = ∂(q⁺, v⁺)/∂u`` (2nv, nu) of one step of ``sim`` from (q, v)
    under joint forces ``tau`` and actuator controls ``control``: central
    differences of the simulator's own step in each control.

    Rows ordered (δq, δv) as :class:`StepDerivatives`' (q⁺ measured by
    :meth:`Model.difference` from the unperturbed q⁺). The 2nu steps start
    from the simulator's checkpoint with (q, v) replaced (time, contact warm
    start and activations as they are) and take the step with the
    perturbed controls; one :meth:`Simulator.rollout_batch` call when the
    step is fused (bitwise the sequential steps), else one after another.
    With actuators without activation dynamics and no clamping this is
    ``B ∂τ/∂u`` (``τ = Jᵀ(gain·u + bias)``, docs/actuators.md) up to the
    differences' error: with an affine force in u (fixed gain) that error
    is round-off over ε (also RK4 when the gain and the transmission are
    constant); with activations it is
    the derivative through this step's activation update.

    Parameters
    ----------
    sim, q, v, tau, threads, batch
        As :func:`step_derivatives_fd`.
    control : array_like, optional
        The controls u (nu,) (default: the simulator's).
    step : float
        ε (the controls' units).

    Returns
    -------
    numpy.ndarray
        (2nv, nu).

    Raises
    ------
    InputError
        Bad input, a non-positive ``step``, or a simulator without
        actuators.
    """
    from ..forces.actuators import check_controls
    q, v, tau = _state(sim, q, v, tau)
    step = _checked_step(step)
    nu, model = sim.nu, sim.model
    if not nu:
        raise InputError("control_derivatives: the simulator has no actuators (nu = 0)")
    u = sim.control.copy() if control is None else check_controls(control, nu, "control_derivatives: control")
    q1 = _nominal(sim, q, v, tau, u)[0]
    U = np.repeat(u[None, :], 2 * nu, axis=0)
    U[0::2] += step * np.eye(nu)
    U[1::2] -= step * np.eye(nu)
    Q1, V1 = _steps(sim, np.tile(q, (2 * nu, 1)), np.tile(v, (2 * nu, 1)), np.tile(tau, (2 * nu, 1)), threads,
                    batch, U)
    return _central(model, q1, Q1, V1, step)


def _central(model, q1, Q1, V1, step):
    """The central differences (2nv, k) of k (+, −) pairs of steps (rows
    2j, 2j + 1 of Q1, V1), q⁺ measured from ``q1``."""
    dq = model.difference(np.tile(q1, (len(Q1), 1)), Q1)
    return np.hstack((dq[0::2] - dq[1::2], V1[0::2] - V1[1::2])).T / (2.0 * step)


def _steps(sim, Q, V, T, threads, batch, U=None):
    """(q⁺, v⁺) of one step from each row of (Q, V) under T (and controls
    U, default the simulator's), each from the simulator's checkpoint with
    (q, v) replaced: one rollout_batch call when the step is fused, else
    sim.step one after another."""
    if batch and sim._fused is not None and not sim._fused.external:
        r = sim.rollout_batch(q0=Q, v0=V, steps=1, tau=T[:, None, :], threads=threads,
                              control=None if U is None else U[:, None, :])
        return r.q[:, 1], r.v[:, 1]
    cp = sim.checkpoint()
    Q1, V1 = np.empty_like(Q), np.empty_like(V)
    try:
        for b in range(len(Q)):
            sim.restore(replace(cp, q=Q[b], v=V[b]))
            sim.step(T[b], None if U is None else U[b])
            Q1[b], V1[b] = sim.state.q, sim.state.v
    finally:
        sim.restore(cp)
    return Q1, V1
