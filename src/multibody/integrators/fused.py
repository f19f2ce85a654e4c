"""The step table: what a fused compiled step (:mod:`._kernels`) reads
besides the state, packed into one int64 and one float64 array addressed
by the header of :mod:`._kernels`, and the calls of the fused steps and
rollouts over it.

A :class:`StepTable` is built by the simulator for one system, one
integrator and its options (time step, limits, clamping). It takes the
linear joint elements into the table (the model's joint damping,
:class:`~multibody.forces.JointDamper`, and :class:`~multibody.forces.JointSpring`
on joints with q̇ = v); any other force element is evaluated in Python at
the start of the step and handed to the kernel as ``f`` (and ``K``, ``D``
for the implicit integrators), which the integrators that evaluate the
forces once per step accept. :func:`fused_table` says when no fused step
exists (constraints, RK4 or Bridson–Marino with Python force elements, a
user's integrator), and the simulator then runs the integrator's Python
step.
"""
import numpy as np

from .._compiled import JIT, F64_1, F64_2C, I64_1, INT, entry
from ..forces.base import generalized_forces
from ..forces.joint import JointDamper, JointSpring
from ..forces._kin import topology
from . import _kernels as K
from numba import types

_VECTOR_JOINTS = ("revolute", "prismatic", "helical", "cylindrical", "translational")
# integrators whose step evaluates the force elements once, at the start of the step: they take
# Python force elements as forces computed before the compiled call
_SINGLE_EVALUATION = ("explicit_euler", "semi_implicit_euler", "implicit_euler", "trapezoidal", "symplectic_euler")
_WITH_JACOBIANS = ("implicit_euler", "trapezoidal")

_STEP_SIG = (INT, F64_1, F64_1, F64_1, F64_1, F64_1)
_ROLLOUT_SIG = (INT, F64_1, F64_1, F64_2C, INT, INT, INT, INT, F64_2C, F64_2C, F64_2C, I64_1, types.boolean[:, :, ::1])


def _split_elements(elements, model):
    """(spring rows (q index, v index, k, rest), damping (nv), other elements)."""
    rows, damping, other = [], np.zeros(model.nv), []
    for e in elements:
        if type(e) is JointDamper:
            j, d = e.bind(model)
            damping[j.v_slice] += d
        elif type(e) is JointSpring and e.bind(model)[0].type in _VECTOR_JOINTS:
            j, k, rest = e.bind(model)
            for i in range(j.nv):
                if k[i] != 0.0:
                    rows.append((j.q_slice.start + i, j.v_slice.start + i, k[i], rest[i]))
        else:
            other.append(e)
    return rows, damping, tuple(other)


def fused_table(system, integrator_name, dt, limits, restitution, threshold, effort, vmax):
    """A :class:`StepTable` for ``system`` stepped by the library's
    integrator ``integrator_name``, or None when no fused step covers it."""
    if integrator_name not in K.CORES or system.constraints is not None:
        return None
    rows, damping, other = _split_elements(system.forces, system.model)
    if other and integrator_name not in _SINGLE_EVALUATION:
        return None
    return StepTable(system, integrator_name, dt, limits, restitution, threshold, effort, vmax, rows, damping, other)


class StepTable:
    """The packed step table of one simulator (see the module docstring).

    ``tau`` (nv): the joint forces of the last step after effort clamping;
    ``eff_mask`` / ``vel_mask`` (nv, int 0/1): what the last step clamped.
    ``step(t, q, v, tau, q_out, v_out)`` runs one fused step and returns
    its status (:mod:`._kernels`); ``rollout`` runs many."""

    def __init__(self, system, integrator_name, dt, limits, restitution, threshold, effort, vmax, rows, damping,
                 other):
        model = system.model
        nq, nv, nb = model.nq, model.nv, model.nbodies
        self.name = integrator_name
        self.model = model
        self.data = system.data
        self.data.allocate("M")  # the end of step and the implicit cores use it
        self.elements = other
        self.external = 0 if not other else (K.EXTERNAL_JACOBIANS if integrator_name in _WITH_JACOBIANS
                                             else K.EXTERNAL_FORCE)
        topo = topology(model)
        cb = topo.coord_body
        nl = 0 if limits is None else len(limits)
        ns = len(rows)
        m = max(nq, nv, nb)
        total_damping = (system.damping if system._damped else 0.0) + damping
        f_sizes = [(K.F_DAMPING, nv), (K.F_STIFFNESS, ns), (K.F_REST, ns), (K.F_EFFORT, nv), (K.F_VMAX, nv),
                   (K.F_LIM_SIGN, nl), (K.F_LIM_BOUND, nl), (K.F_FEXT, nv), (K.F_KEXT, nv * nv),
                   (K.F_DEXT, nv * nv), (K.F_TAU, nv), (K.F_WORK, K.N_WORK_VECTORS * m + 3 * nv * nv)]
        i_sizes = [(K.I_SPRING_Q, ns), (K.I_SPRING_V, ns), (K.I_LIM_Q, nl), (K.I_LIM_V, nl),
                   (K.I_MASK, nv * nv), (K.I_COORD_BODY, nv), (K.I_MASKS, 2 * nv), (K.I_PIVOTS, nv)]
        header = np.zeros(K.HEADER, np.int64)
        off = K.N_SCALARS
        for slot, size in f_sizes:
            header[slot] = off
            off += size
        self.floats = floats = np.zeros(off)
        off = K.HEADER
        for slot, size in i_sizes:
            header[slot] = off
            off += size
        self.ints = ints = np.zeros(off, np.int64)
        ints[:K.HEADER] = header
        ints[[K.H_LEN, K.H_FLOATS, K.H_NFLOATS, K.H_DATA, K.H_NQ, K.H_NV, K.H_NB, K.H_NS, K.H_NL]] = \
            (off, floats.ctypes.data, floats.size, self.data.handle, nq, nv, nb, ns, nl)
        ints[K.H_GRAVITY] = system.gravity
        ints[K.H_CLAMP_EFFORT] = effort is not None
        ints[K.H_CLAMP_VELOCITY] = vmax is not None
        ints[K.H_EXTERNAL] = self.external
        floats[:K.N_SCALARS] = dt, restitution, threshold

        def fsec(slot, n):
            return floats[header[slot]:header[slot] + n]

        def isec(slot, n):
            return ints[header[slot]:header[slot] + n]

        fsec(K.F_DAMPING, nv)[:] = total_damping
        if ns:
            q_i, v_i, k, rest = (np.array(c) for c in zip(*rows))
            isec(K.I_SPRING_Q, ns)[:], isec(K.I_SPRING_V, ns)[:] = q_i, v_i
            fsec(K.F_STIFFNESS, ns)[:], fsec(K.F_REST, ns)[:] = k, rest
        fsec(K.F_EFFORT, nv)[:] = np.inf if effort is None else effort
        fsec(K.F_VMAX, nv)[:] = np.inf if vmax is None else vmax
        if nl:
            isec(K.I_LIM_Q, nl)[:], isec(K.I_LIM_V, nl)[:] = limits.q_index, limits.v_index
            fsec(K.F_LIM_SIGN, nl)[:], fsec(K.F_LIM_BOUND, nl)[:] = limits.sign, limits.bound
        isec(K.I_MASK, nv * nv)[:] = (topo.maskT != 0).ravel()
        isec(K.I_COORD_BODY, nv)[:] = cb
        self.tau = fsec(K.F_TAU, nv)
        masks = isec(K.I_MASKS, 2 * nv)
        self.eff_mask, self.vel_mask = masks[:nv], masks[nv:]
        self.fext = fsec(K.F_FEXT, nv)
        self.Kext = fsec(K.F_KEXT, nv * nv).reshape(nv, nv)
        self.Dext = fsec(K.F_DEXT, nv * nv).reshape(nv, nv)
        self.handle = int(ints.ctypes.data)
        if JIT:
            self._step = entry(K.STEPS[integrator_name], *_STEP_SIG)
            self._rollout = None
        else:  # no handles without compiled code: the same cores over the arrays
            self._step = self._step_arrays

    # ------------------------------------------------------------------ calls
    def _view(self):
        return self.data.arrays(), K.table_view(self.ints, self.floats)

    def _step_arrays(self, handle, q, v, tau, q_out, v_out):
        ws, T = self._view()
        return K.fused_step(K.CORES[self.name], ws, T, q, v, tau, q_out, v_out)

    def evaluate_elements(self, t, q, v):
        """Write the forces (and, for the implicit integrators, the
        Jacobians) of the Python force elements at (t, q, v) into the table."""
        f, Kx, Dx = generalized_forces(self.elements, self.model, q, v, t,
                                       jacobians=self.external == K.EXTERNAL_JACOBIANS)
        self.fext[:] = f
        if Kx is not None:
            self.Kext[:] = Kx
            self.Dext[:] = Dx

    def step(self, t, q, v, tau, q_out, v_out):
        """One fused step from (q, v) at time t with the joint forces
        ``tau`` (float64 (nv,), not yet checked); its status."""
        if self.external:
            self.evaluate_elements(t, q, v)
        return self._step(self.handle, q, v, tau, q_out, v_out)

    def compile_rollout(self):
        """Compile (or load from the cache) the rollout kernel now."""
        if JIT and self._rollout is None:
            self._rollout = entry(K.ROLLOUTS[self.name], *_ROLLOUT_SIG)

    def rollout(self, q, v, taus, start, n, every, stop, out_q, out_v, out_tau, out_flags, masks):
        """Steps ``start + 1 .. start + n`` of a run in one compiled call
        (:func:`._kernels.fused_rollout`; only without Python force
        elements); (steps done, status)."""
        if not JIT:
            ws, T = self._view()
            return K.fused_rollout(K.CORES[self.name], ws, T, q, v, taus, start, n, every, stop, out_q, out_v, out_tau,
                                   out_flags, masks)
        self.compile_rollout()
        return self._rollout(self.handle, q, v, taus, start, n, every, stop, out_q, out_v, out_tau, out_flags, masks)
