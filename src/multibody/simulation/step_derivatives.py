"""The derivatives of one simulator step, ``∂(q⁺, v⁺)/∂(q, v, τ)``
(MuJoCo's ``mjd_transitionFD``, Drake's discrete linearization):
analytic through the integrator's step
(:func:`multibody.integrators.derivatives.step_jacobian`) for open chains
without contacts in the step, active limits or clamps; central
differences of the simulator's own step when the step has contacts. Conventions and accuracy:
docs/derivatives.md, "Derivatives of one step"."""
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
    number of contacts of the unperturbed step (0 without contact)."""
    A: np.ndarray
    B: np.ndarray
    q1: np.ndarray
    v1: np.ndarray
    method: str
    contacts: int = 0


def _state(sim, q, v, tau):
    """Checked (q, v, τ), defaults: the simulator's state and τ = 0."""
    model, nv = sim.model, sim.model.nv
    s = sim.state
    q = s.q.copy() if q is None else model.check_configuration(state_vector(q, "q", model.nq))
    v = s.v.copy() if v is None else state_vector(v, "v", nv)
    tau = np.zeros(nv) if tau is None else state_vector(tau, "tau", nv)
    return q, v, tau


def step_derivatives(sim, q=None, v=None, tau=None, fd_step: float = 1e-6) -> StepDerivatives:
    """The derivatives of one step of ``sim`` from (q, v) (default: its
    state, at its time) under joint forces ``tau`` (default 0); the
    simulator is not changed. See :meth:`Simulator.step_derivatives`."""
    q, v, tau = _state(sim, q, v, tau)
    if sim.contact is not None and _contacts(sim, q, v, tau):
        return step_derivatives_fd(sim, q, v, tau, fd_step)
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


def _contacts(sim, q, v, tau):
    """The number of contacts (rows within the contact distance) and limit
    rows of the contact stage of the step from (q, v); the simulator is
    restored. With none, the contact
    stage leaves the step as it is, and so do small perturbations."""
    cp = sim.checkpoint()
    try:
        sim.restore(replace(cp, q=q, v=v))
        sim.step(tau)
        return sim.contact.count + sim.contact.limit_count  # Drumwright's contact stage also holds the limits
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


def step_derivatives_fd(sim, q=None, v=None, tau=None, step: float = 1e-6) -> StepDerivatives:
    """Central differences of the simulator's own step (contact, limits,
    clamps and all).

    Column k of ``A`` is ``(x⁺(x ⊕ εe_k) ⊖ x⁺(x ⊖ εe_k))/2ε``: q perturbed
    by :meth:`Model.integrate`, q⁺ measured by :meth:`Model.difference`
    from the unperturbed q⁺. Every step starts from the simulator's
    checkpoint with (q, v) replaced (the same time, warm start, controls
    and activations), and the simulator is restored afterwards.
    6nv + 1 steps, one after another.

    Parameters
    ----------
    sim : Simulator
    q, v, tau : array_like, optional
        The state (default: the simulator's) and the joint forces
        (default 0).
    step : float
        ε (rad, m, rad/s, m/s, N·m or N).

    Returns
    -------
    StepDerivatives
        ``method`` "finite differences"; ``contacts`` the unperturbed
        step's number of contacts.

    Notes
    -----
    Error O(ε²) plus the contact solver's tolerance over ε (iterative
    solvers: set ``contact_tolerance`` well below ε times the accuracy
    wanted). Where a perturbation changes the active set (a contact
    appears, sticks or slips) the step is not differentiable and the
    difference averages the two sides.
    """
    q, v, tau = _state(sim, q, v, tau)
    step = float(step)
    if not (np.isfinite(step) and step > 0):
        raise InputError(f"step_derivatives_fd: the difference step must be a positive number, got {step}")
    model, nv = sim.model, sim.model.nv
    cp = sim.checkpoint()

    def run(qq, vv, tt):
        sim.restore(replace(cp, q=qq, v=vv))
        sim.step(tt)
        return sim.state.q.copy(), sim.state.v.copy()

    try:
        q1, v1 = run(q, v, tau)
        contacts = 0 if sim.contact is None else int(sim.contact.count)
        cols = []
        for k in range(3 * nv):
            e = np.zeros(nv)
            e[k % nv] = step
            if k < nv:
                (qp, vp), (qm, vm) = run(model.integrate(q, e), v, tau), run(model.integrate(q, -e), v, tau)
            elif k < 2 * nv:
                (qp, vp), (qm, vm) = run(q, v + e, tau), run(q, v - e, tau)
            else:
                (qp, vp), (qm, vm) = run(q, v, tau + e), run(q, v, tau - e)
            dq = model.difference(q1, qp) - model.difference(q1, qm)
            cols.append(np.concatenate((dq, vp - vm)) / (2.0 * step))
    finally:
        sim.restore(cp)
    J = np.array(cols).T
    return StepDerivatives(np.ascontiguousarray(J[:, :2 * nv]), np.ascontiguousarray(J[:, 2 * nv:]), q1, v1,
                           "finite differences", contacts)
