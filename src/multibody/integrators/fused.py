"""The step table: what a fused compiled step (:mod:`._kernels`) reads
besides the state, packed into one int64 and one float64 array addressed
by the header of :mod:`._kernels`, and the calls of the fused steps and
rollouts over it.

A :class:`StepTable` is built by the simulator for one system, one
integrator and its options (time step, limits, clamping). It takes the
linear joint elements into the table (the model's joint damping,
:class:`~multibody.forces.JointDamper`, and :class:`~multibody.forces.JointSpring`
on joints with q̇ = v) and the actuators of an
:class:`~multibody.forces.actuators.ActuatorSet` (their activations all,
their forces on joints, fixed tendons and spatial paths — the paths'
buffers in the table, evaluated by the path stage of :mod:`._kernels`;
its controls, activations and forces then live in the table, the set's
arrays are views of it); any other force element (and the actuators on
other transmissions) is
evaluated in Python at the start of the step and handed to the kernel as
``f`` (and ``K``, ``D`` for the implicit integrators), which the
integrators that evaluate the forces once per step accept. :func:`fused_table` says when no fused step
exists (constraints, RK4 or Bridson–Marino with Python force elements, a
user's integrator), and the simulator then runs the integrator's Python
step.
"""
import numpy as np

from numba import types

from .._compiled import JIT, F64_1, F64_1C, F64_2C, I64_1, INT, entry
from ..constraints.contact import ContactTable
from ..forces.actuators import A_COUNT, A_FLAGS, A_PATH, A_START, NI, NP, PATH, PYTHON_FORCE, ActuatorSet
from ..forces.paths import path_work_size
from ..forces.base import generalized_forces
from ..forces.joint import JointDamper, JointSpring
from ..forces._kin import topology
from . import _kernels as K

path_work_size = getattr(path_work_size, "py_func", path_work_size)  # called here without compiling it

_VECTOR_JOINTS = ("revolute", "prismatic", "helical", "cylindrical", "translational")
_LIE_JOINTS = ("free", "spherical", "planar")
# integrators whose step evaluates the force elements once, at the start of the step: they take
# Python force elements as forces computed before the compiled call
_SINGLE_EVALUATION = ("explicit_euler", "semi_implicit_euler", "implicit_euler", "trapezoidal", "symplectic_euler")
_WITH_JACOBIANS = ("implicit_euler", "trapezoidal")
# integrators whose fused step takes the force Jacobians (K, D) of the actuators
_LINEARIZED = ("implicit_euler", "trapezoidal", "bridson_marino")
# integrators whose fused step takes hard loop constraints (closed-loop accelerations, the KKT velocity step)
_CONSTRAINED = ("explicit_euler", "semi_implicit_euler", "rk4")

NO_CONTROL = (0, np.zeros((3, 0)), np.zeros((1, 0)))  # the rollout's control argument without a controller
_STEP_SIG = (INT, F64_1, F64_1, F64_1, F64_1, F64_1)
_ROLLOUT_SIG = (INT, F64_1C, F64_1C, F64_2C, INT, F64_2C, F64_2C, F64_2C, INT, INT, INT, INT, F64_2C, F64_2C, F64_2C,
                I64_1, types.boolean[:, :, ::1], F64_2C, F64_2C, F64_2C)


def _compiled_paths(model, integrator_name):
    """Whether the fused step takes the actuators on spatial paths: not
    where their exact stiffness is not available (a joint whose motion
    subspace turns with its own coordinates, forces/_kin.py) and the
    integrator needs it: the Python evaluation then says so."""
    return not (integrator_name in _LINEARIZED and topology(model).curved)


def _split_elements(elements, model, paths=True):
    """(spring rows (q index, v index, k, rest), damping (nv), other
    elements, the actuator set or None). The part of an actuator set on
    other transmissions than joints, fixed tendons and (``paths``) spatial
    paths is another element."""
    rows, damping, other, actuators = [], np.zeros(model.nv), [], None
    for e in elements:
        if isinstance(e, ActuatorSet):
            actuators = e
            part = e.python_part(paths)
            if part is not None:
                other.append(part)
        elif type(e) is JointDamper:
            j, d = e.bind(model)
            damping[j.v_slice] += d
        elif type(e) is JointSpring and e.bind(model)[0].type in _VECTOR_JOINTS:
            j, k, rest = e.bind(model)
            for i in range(j.nv):
                if k[i] != 0.0:
                    rows.append((j.q_slice.start + i, j.v_slice.start + i, k[i], rest[i]))
        else:
            other.append(e)
    return rows, damping, tuple(other), actuators


def fused_table(system, integrator_name, dt, limits, restitution, threshold, effort, vmax, project, contacts=None):
    """A :class:`StepTable` for ``system`` stepped by the library's
    integrator ``integrator_name``, or None when no fused step covers it:
    soft constraints but with semi-implicit Euler, a ``loop_method``, hard
    constraints with the implicit integrators (their KKT solves are
    NumPy's), Python force elements with RK4 or Bridson–Marino, contact
    together with loop constraints but with semi-implicit Euler and a
    solver other than Newton.
    ``contacts``: the :class:`~multibody.constraints.contact.ContactTable`
    of the contact stage, or None."""
    if integrator_name not in K.CORES:
        return None
    if system.constraints is not None and (system.loop_method is not None or integrator_name not in _CONSTRAINED
                                           or system.soft and integrator_name != "semi_implicit_euler"):
        return None
    if system.constraints is not None and contacts is not None and (
            integrator_name != "semi_implicit_euler" or contacts.solver == "newton"):
        return None  # only semi-implicit Euler's fused step holds the loops in the contact problem
    paths = _compiled_paths(system.model, integrator_name)
    rows, damping, other, actuators = _split_elements(system.forces, system.model, paths)
    if other and integrator_name not in _SINGLE_EVALUATION:
        return None
    return StepTable(system, integrator_name, dt, limits, restitution, threshold, effort, vmax, rows, damping, other,
                     project, contacts, actuators, paths)


def _root_block(model):
    """The number of coordinates of the root joint when it is the model's
    only Lie-group joint (free, spherical, planar: their tangent directions
    do not commute, so the stiffness K of a potential is not symmetric
    within their block, and only there), 0 when there is none, −1
    otherwise: the implicit steps' velocity matrix is then factored as
    symmetric outside that block (:func:`._kernels.block_ldl_factor`)."""
    lie = [j for j in model.joints[1:] if j.type in _LIE_JOINTS]
    if not lie:
        return 0
    j = lie[0]
    if len(lie) == 1 and j.v_slice.start == 0 and model.dof_parent[0] < 0:
        return j.nv
    return -1


def _off_pattern(model, tv, ai, path_coordinates):
    """Whether an actuator's moment arm couples two coordinates neither of
    which supports the other (a fixed tendon across branches, a path over
    two branches): its K and D then fall outside M's branch pattern, and
    the implicit steps solve densely. ``path_coordinates``: actuator → the
    coordinates that move its path (those compiled)."""
    parent = model.dof_parent

    def supports(a, b):  # a is b or an ancestor of b
        while b >= 0:
            if b == a:
                return True
            b = parent[b]
        return False

    for k, row in enumerate(ai):
        if row[A_FLAGS] & PYTHON_FORCE:
            continue
        idx = path_coordinates[k] if row[A_FLAGS] & PATH else tv[row[A_START]:row[A_START] + row[A_COUNT]]
        for a in idx:
            for b in idx:
                if not (supports(a, b) or supports(b, a)):
                    return True
    return False


class StepTable:
    """The packed step table of one simulator (see the module docstring).

    ``tau`` (nv): the joint forces of the last step after effort clamping;
    ``eff_mask`` / ``vel_mask`` (nv, int 0/1): what the last step clamped.
    ``step(t, q, v, tau, q_out, v_out)`` runs one fused step and returns
    its status (:mod:`._kernels`); ``rollout`` runs many."""

    def __init__(self, system, integrator_name, dt, limits, restitution, threshold, effort, vmax, rows, damping,
                 other, project, contacts=None, actuators=None, paths=True):
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
        C = system.constraints
        loops = C.kernel_args if C is not None else (np.zeros(0, np.int64),) * 4 + (np.zeros((0, 4, 4)),) * 2 + \
            (np.zeros((0, 3)),) * 2 + (np.zeros(0),) + (np.zeros(0, np.int64),) * 5 + (np.zeros(0),) * 2
        nr, ng = len(loops[0]), len(loops[9])
        A = actuators
        nu, na, nt = (A.nu, A.na, len(A.tc)) if A is not None else (0, 0, 0)
        # the actuators on paths: compiled (their buffers, and scratch for each one's output) or in Python
        npath = len(A.paths) if A is not None and paths else 0
        path_jac = integrator_name in _LINEARIZED
        npf, npi, nps = 0, 0, 0
        if npath:  # the paths' floats and ints, the sum, each one's output, the path kernel's scratch
            npf, npi = len(A.path_floats), len(A.path_ints) + nv
            n_max = max(int(A.path_ints[A.ints[k, A_PATH]]) for k in A.paths)
            nps = nv + npath * (nv * (nv + 2) if path_jac else nv) + path_work_size(n_max, nv)
        sizes = K.section_sizes(nq, nv, nb, ns, nl, nr, ng, nu, na, nt, npf, npi, nps)
        header = np.zeros(K.HEADER, np.int64)
        off = K.N_SCALARS
        for slot in range(K.F_DAMPING, K.F_WORK + 1):
            header[slot] = off
            off += sizes[slot]
        self.floats = floats = np.zeros(off)
        off = K.HEADER
        for slot in range(K.I_SPRING_Q, K.HEADER):
            header[slot] = off
            off += sizes[slot]
        self.ints = ints = np.zeros(off, np.int64)
        ints[:K.HEADER] = header
        ints[[K.H_LEN, K.H_FLOATS, K.H_NFLOATS, K.H_DATA, K.H_NQ, K.H_NV, K.H_NB, K.H_NS, K.H_NL, K.H_NR, K.H_NG,
              K.H_NC, K.H_BLOCK]] = (off, floats.ctypes.data, floats.size, self.data.handle, nq, nv, nb, ns, nl,
                                     nr, ng, 0 if C is None else C.size, _root_block(model))
        ints[K.H_GRAVITY] = system.gravity
        ints[K.H_CLAMP_EFFORT] = effort is not None
        ints[K.H_CLAMP_VELOCITY] = vmax is not None
        ints[K.H_EXTERNAL] = self.external
        ints[K.H_PROJECT] = bool(project)
        ints[K.H_NU], ints[K.H_NA], ints[K.H_NT] = nu, na, nt
        ints[K.H_NPF], ints[K.H_NPI], ints[K.H_NPS], ints[K.H_PATH_JAC] = npf, npi, nps, npath > 0 and path_jac
        a_ints = None
        if nu:  # the table's copy of the packed ints: paths it does not compile are Python's
            a_ints = A.ints.copy()
            if not npath:
                a_ints[A.paths, A_FLAGS] |= PYTHON_FORCE
        ints[K.H_DENSE] = self.external == K.EXTERNAL_JACOBIANS or (
            nu > 0 and _off_pattern(model, A.tv, a_ints, A.path_coordinates))
        if npath and path_jac:  # f_l̇ J (∂l̇/∂q)ᵀ is not symmetric: not the symmetric block factor
            ints[K.H_BLOCK] = -1
        self.contacts = contacts  # kept alive with the handle the table holds
        ints[K.H_CONTACT] = (ContactTable.empty() if contacts is None else contacts).handle
        erp, cfm, gdot = system.loop_regularization(dt) if system.soft else (0.0, 0.0, False)
        floats[:K.N_SCALARS] = dt, restitution, threshold, system.baumgarte, erp, cfm, float(gdot)

        def fsec(slot):
            return floats[header[slot]:header[slot] + sizes[slot]]

        def isec(slot):
            return ints[header[slot]:header[slot] + sizes[slot]]

        fsec(K.F_DAMPING)[:] = (system.damping if system._damped else 0.0) + damping
        if contacts is not None and contacts.stage:  # implicit Euler's impulses act through M + h·diag(dampers)
            contacts.arrays["damping"][:] = dt * fsec(K.F_DAMPING) if integrator_name == "implicit_euler" else 0.0
        if ns:
            q_i, v_i, k, rest = (np.array(c) for c in zip(*rows))
            isec(K.I_SPRING_Q)[:], isec(K.I_SPRING_V)[:] = q_i, v_i
            fsec(K.F_STIFFNESS)[:], fsec(K.F_REST)[:] = k, rest
        fsec(K.F_EFFORT)[:] = np.inf if effort is None else effort
        fsec(K.F_VMAX)[:] = np.inf if vmax is None else vmax
        if nl:
            isec(K.I_LIM_Q)[:], isec(K.I_LIM_V)[:] = limits.q_index, limits.v_index
            fsec(K.F_LIM_SIGN)[:], fsec(K.F_LIM_BOUND)[:] = limits.sign, limits.bound
        isec(K.I_MASK)[:] = (topo.maskT != 0).ravel()
        isec(K.I_COORD_BODY)[:] = cb
        for slot, x in zip((K.I_ROW, K.I_KIND, K.I_IA, K.I_IB, K.F_PA, K.F_PB, K.F_U, K.F_W, K.F_PITCH, K.I_GEAR_ROW,
                            K.I_GEAR_JQ, K.I_GEAR_JV, K.I_GEAR_IQ, K.I_GEAR_IV, K.F_RATIO, K.F_OFFSET), loops):
            (isec(slot) if slot >= K.I_SPRING_Q else fsec(slot))[:] = np.ravel(x)
        self.actuators = A
        if A is not None and nu:  # the set's arrays become views of the table (values kept)
            offsets = K.actuator_offsets_py(nu, na, nt, npf, npi, nps)
            o_tc, o_ctrl, o_force, o_work, o_act = offsets[:5]
            o_tq, o_tv, o_pf, _, o_pi = offsets[9:14]
            fa, ia = fsec(K.F_ACTUATORS), isec(K.I_ACTUATORS)
            fa[:nu * NP] = A.floats.ravel()
            fa[o_tc:o_tc + nt] = A.tc
            fa[o_pf:o_pf + npf] = A.path_floats
            ia[:nu * NI] = a_ints.ravel()
            ia[o_tq:o_tq + nt], ia[o_tv:o_tv + nt] = A.tq, A.tv
            ia[o_pi:o_pi + npi - nv] = A.path_ints
            io = A.io
            for name, off, n in (("ctrl", o_ctrl, nu), ("force", o_force, nu), ("act", o_act, na)):
                view = fa[off:off + n]
                view[:] = getattr(io, name)
                setattr(io, name, view)
        self.tau = fsec(K.F_TAU)
        masks = isec(K.I_MASKS)
        self.eff_mask, self.vel_mask = masks[:nv], masks[nv:]
        self.fext = fsec(K.F_FEXT)
        self.Kext = fsec(K.F_KEXT).reshape(nv, nv)
        self.Dext = fsec(K.F_DEXT).reshape(nv, nv)
        self.handle = int(ints.ctypes.data)
        self.loops = C is not None  # the kernels with the loop stages
        if JIT:  # the integrator's C entry point, called by the step and rollout kernels of all integrators
            ints[K.H_STEP] = K.step_address(integrator_name, self.loops, nu > 0)
            if contacts is not None and contacts.stage:  # compiled only for a simulator with a contact stage
                ints[K.H_CONTACT_STAGE] = K.contact_stage_address()
            if npath:  # compiled only for a simulator with actuators on paths
                ints[K.H_PATH_STAGE] = K.path_stage_address()
            self._step = entry(K.step_kernel, *_STEP_SIG)
            self._rollout = None
        else:  # no handles without compiled code: the same cores over the arrays
            self._step = self._step_arrays

    # ------------------------------------------------------------------ calls
    def _view(self):
        return self.data.arrays(), K.table_view(self.ints, self.floats)

    def _step_arrays(self, handle, q, v, tau, q_out, v_out):
        ws, T = self._view()
        return K.fused_step(K.CORES[self.name], ws, T, T.loops if self.loops else None, self._actuator_view(T),
                            self._contact_view(), q, v, tau, q_out, v_out)

    def _actuator_view(self, T):
        return (K.actuator_view(T.ints, T.floats), self.data.arrays()) if T.nu > 0 else None

    def _contact_view(self):
        return None if self.contacts is None else self.contacts.view()

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
            self._rollout = entry(K.rollout_kernel, *_ROLLOUT_SIG)

    def rollout(self, q, v, taus, control, start, n, every, stop, out_q, out_v, out_tau, out_flags, masks,
                ctrls=None, out_ctrl=None, out_act=None, out_force=None):
        """Steps ``start + 1 .. start + n`` of a run in one compiled call
        (:func:`._kernels.fused_rollout`; only without Python force
        elements) with the feed-forward ``taus`` and ``control`` = (kind,
        gains, references) of a built-in controller (kind 0: none), the
        actuators' controls ``ctrls`` ((1 or steps, nu); None: the table's
        stay) recorded with the activations and actuator forces into
        ``out_ctrl``, ``out_act``, ``out_force`` ((rows, nu or na); None:
        not recorded); (steps done, status)."""
        nu = self.actuators.nu if self.actuators is not None else 0
        na = self.actuators.na if self.actuators is not None else 0
        if ctrls is None:
            ctrls = np.zeros((0, nu))
        rows = out_q.shape[0]
        if out_ctrl is None:
            out_ctrl, out_force, out_act = np.zeros((rows, nu)), np.zeros((rows, nu)), np.zeros((rows, na))
        if not JIT:
            ws, T = self._view()
            return K.fused_rollout(K.CORES[self.name], ws, T, T.loops if self.loops else None, self._actuator_view(T),
                                   self._contact_view(), q, v, taus, *control, ctrls,
                                   start, n, every, stop, out_q, out_v, out_tau, out_flags, masks, out_ctrl, out_act,
                                   out_force)
        self.compile_rollout()
        return self._rollout(self.handle, q, v, taus, *control, ctrls, start, n, every, stop, out_q, out_v, out_tau,
                             out_flags, masks, out_ctrl, out_act, out_force)
