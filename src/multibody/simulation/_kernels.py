"""The simulator's compiled τ check; its end of step (finiteness,
position limits, velocity clamping) is
:func:`multibody.constraints._kernels.end_of_step_kernel`, which the fused
steps inline too."""
import numpy as np
from numba import njit

from ..constraints._kernels import NON_FINITE, end_of_step_kernel  # noqa: F401 (the simulator's Python path)

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
