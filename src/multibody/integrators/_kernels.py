"""Fused compiled steps for the common case of a model without force
elements (gravity and joint damping only): one call per step instead of
several NumPy and kernel calls (docs/architecture.md, entry points)."""
import numpy as np
from numba import njit

from ..dynamics.kernels import aba_checked
from ..model.configuration import integrate_kernel


@njit(cache=True, nogil=True)
def semi_implicit_euler_kernel(tree, q, v, tau, damping, dt, gravity_on, poses, jac, spatial, inertia6, U, Dinv,
                               dofs, q_out, v_out):
    """``v⁺ = v + h·ABA(q, v, τ − b⊙v)``, ``q⁺ = q ⊕ h v⁺`` (ArtiSynth
    §0.9.1). Returns ABA's status (0: done); on a nonzero status the outputs
    are undefined and the caller takes the checked path, which raises the
    precise error."""
    nv = v.shape[0]
    t = np.empty(nv)
    for k in range(nv):
        t[k] = tau[k] - damping[k] * v[k]
    st = aba_checked(tree, q, v, t, gravity_on, False, poses, jac, spatial, inertia6, U, Dinv, dofs)
    if st != 0:
        return st
    for k in range(nv):
        v_out[k] = v[k] + dt * dofs[1, k]
    integrate_kernel(tree, q, v_out, dt, q_out)
    return 0
