"""The simulator's compiled end of step: finiteness, position limits and
velocity clamping in one call (docs/architecture.md, entry points)."""
import numpy as np
from numba import njit

from ..constraints._kernels import enforce_limits_kernel

NON_FINITE = -3             # the integrator's (q1, v1) has a NaN or an inf (or its sum overflows)
NON_FINITE_AFTER_LIMITS = -4  # (q1, v1) is finite but the limit impulses made it non-finite


@njit(cache=True, nogil=True, inline="always")  # inlined into the fused steps (integrators/_kernels.py)
def end_of_step_kernel(tree, lam, q1, v1, vmax, clamp_velocity, q_index, v_index, sign, bound, restitution,
                       threshold, poses, jac, inertia6, M, q_out, v_out, vel_mask):
    """Check that (q1, v1) is finite (else ``NON_FINITE``), enforce the
    position limits (:func:`enforce_limits_kernel`; its negative statuses
    pass through) and clamp |v| to ``vmax`` where ``clamp_velocity``,
    marking ``vel_mask``. Writes (q_out, v_out); returns 0 when done, or
    ``NON_FINITE_AFTER_LIMITS`` if the result is not finite (the caller
    then takes the checked path, which names the quantity)."""
    s = 0.0
    for k in range(q1.shape[0]):
        s += q1[k]
    for k in range(v1.shape[0]):
        s += v1[k]
    if not np.isfinite(s):
        return NON_FINITE
    st = enforce_limits_kernel(tree, lam, q1, v1, q_index, v_index, sign, bound, restitution, threshold, poses,
                               jac, inertia6, M, q_out, v_out)
    if st < 0:
        return st
    for k in range(v_out.shape[0]):
        vel_mask[k] = False
        if clamp_velocity:
            if v_out[k] > vmax[k]:
                v_out[k] = vmax[k]
                vel_mask[k] = True
            elif v_out[k] < -vmax[k]:
                v_out[k] = -vmax[k]
                vel_mask[k] = True
    # a finite input must give a finite output: an impulse solve on an ill-conditioned mass
    # matrix could overflow, and nothing non-finite may reach the next step or a recording
    s = 0.0
    for k in range(q_out.shape[0]):
        s += q_out[k]
    for k in range(v_out.shape[0]):
        s += v_out[k]
    if not np.isfinite(s):
        return NON_FINITE_AFTER_LIMITS
    return 0


@njit(cache=True, nogil=True)
def check_tau_kernel(tau, effort, clamp_effort, out, mask):
    """Copy the joint forces ``tau`` into ``out``, clipped to ±``effort``
    where ``clamp_effort``, marking the clipped coordinates in ``mask``.
    Returns the index of the first non-finite entry of ``tau`` (outputs
    then undefined), else -1 if nothing was clipped and -2 if something
    was. One compiled pass instead of four NumPy calls (finiteness, |τ|,
    comparison, clip) on the simulator's hot path; the caller has checked
    that ``tau`` is one float64 vector of the right length."""
    clipped = False
    for k in range(tau.shape[0]):
        x = tau[k]
        if not np.isfinite(x):
            return k
        mask[k] = False
        if clamp_effort:
            if x > effort[k]:
                x = effort[k]
                mask[k] = True
                clipped = True
            elif x < -effort[k]:
                x = -effort[k]
                mask[k] = True
                clipped = True
        out[k] = x
    return -2 if clipped else -1
