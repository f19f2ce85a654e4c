"""Fused compiled steps: every integrator of :mod:`multibody.integrators`
as one compiled call over a workspace and a packed step table, and the
compiled rollout loop (DESIGN.md, the step pipeline).

A step reads everything but the state from two places: the model's
workspace (:class:`multibody.model.data.Data`, through its handle) and a
*step table* — one int64 array and one float64 array whose sections
(damping, linear joint springs, limit rows, effort and velocity limits,
the constant support structure of the tree, scratch space) are addressed
by the offsets in the int64 header below. :class:`~.fused.StepTable`
writes the table; :func:`table_view` reads it. The layout is defined once,
here.

A step has the stages of DESIGN.md: joint forces checked and clamped to
the effort limits (:func:`applied`), the integrator's free motion
(``*_core``: accelerations by ABA or the linearized velocity equation by
CRBA, RNEA and the force Jacobians), the position limits solved at the end
(:func:`~multibody.constraints._kernels.end_of_step_kernel`), and the
finiteness check. The contact stage joins between the free velocity and
the position update (docs/contact.md); a system without contact passes
the empty contact table, whose stage returns at once.

Compilation is what this layout is organized around (a cold compile of
the first version took 3-6 minutes per integrator and the test suite
over an hour). Each integrator's core is written once and compiled once,
into a C entry point (:func:`step_address`: ``numba.cfunc``); one step
kernel and one rollout kernel, compiled once for all integrators, call
the entry point whose address is in the table (``H_STEP``). The stages
shared by the integrators (accelerations, the linearization, the contact
stages) are ordinary compiled functions, compiled once; only small
helpers are inlined. Numba re-optimizes every function a kernel calls
directly as part of that kernel, so a call through an address is what
keeps the integrator's code from being compiled again by each kernel.

Statuses: >= 0 done, with bit ``EFFORT_CLAMPED`` / ``VELOCITY_CLAMPED``
set when τ or v was clamped; ``TAU_NOT_FINITE - k``: τ[k] is not finite
(nothing computed); any other negative value: the step failed (singular
matrix, non-finite or overflowing values, a limit LCP that did not
finish) and its outputs are undefined — the caller re-runs it on the
checked Python path, which raises the precise error or takes the NumPy
fallback (:meth:`multibody.Simulator.step`).
"""
import numpy as np
from numba import carray, cfunc, njit, types
from numba.extending import overload
from collections import namedtuple

from .._compiled import JIT, call_address, f64_pointer, i64_pointer, kept_at, overflowed
from .._status import CONTACT_FAILED, CONTACT_NON_FINITE, CONTACT_NOT_CONVERGED, CONTACT_SOLVE_FAILED, \
    CONTACTS_DROPPED, EFFORT_CLAMPED, NON_FINITE, NOT_CONVERGED, NOT_PROJECTED, SINGULAR, TAU_NOT_FINITE, \
    VELOCITY_CLAMPED  # step statuses
from ..constraints import _contact as CF
from ..constraints._kernels import constrained_acceleration_kernel, end_of_step_kernel, loop_projector, loop_tuple, \
    project_step, set_views, sie_step, soft_sie_step, table_set
from ..forces.actuators import (NI, NP, activation_rates, advance_activations, linear_forces, linear_jacobians,
                                path_forces, path_jacobians, rk4_activation_stage)
from ..dynamics.kernels import aba_checked, crba_kernel, kinetic_gradient_posed, ltdl_kernel, ltdl_solve, \
    rnea_kernel, rnea_posed
from ..kinematics.kernels import fk_kernel, joint_jacobians_kernel
from ..model.configuration import difference_kernel, integrate_kernel, normalize_kernel, qdot_kernel
from ..model.data import handle_workspace
from ..model.joints import C_GRAVITY, C_H, C_MASS, C_PARENT

# ------------------------------------------------------------------ the table layout
# The int64 array starts with this header: sizes and flags, then the offset of each section of the
# float64 array (F_*) and of the int64 array itself (I_*). The float64 array starts with the
# N_SCALARS scalars dt (s), restitution, its threshold (m/s or rad/s), the constraints'
# Baumgarte ω (rad/s) and, for soft constraints, the erp (1/s) and cfm (m/(N·s) for point rows) of
# their regularized KKT step and 1.0 when it takes Drumwright's Ġv terms (all 0.0: hard
# constraints). section_sizes gives each section's length. Everything the compiled code and
# StepTable agree on is here.
(H_LEN, H_FLOATS, H_NFLOATS, H_DATA, H_NQ, H_NV, H_NB, H_NS, H_NL, H_NR, H_NG, H_NC, H_BLOCK, H_GRAVITY,
 H_CLAMP_EFFORT, H_CLAMP_VELOCITY, H_EXTERNAL, H_PROJECT, H_CONTACT, H_STEP, H_CONTACT_STAGE,
 H_NU, H_NA, H_NT, H_DENSE, H_NPF, H_NPI, H_NPS, H_PATH_STAGE, H_PATH_JAC,
 F_DAMPING, F_STIFFNESS, F_REST, F_EFFORT, F_VMAX, F_LIM_SIGN, F_LIM_BOUND, F_FEXT, F_KEXT, F_DEXT, F_TAU,
 F_PA, F_PB, F_U, F_W, F_PITCH, F_RATIO, F_OFFSET, F_ACTUATORS, F_WORK,
 I_SPRING_Q, I_SPRING_V, I_LIM_Q, I_LIM_V, I_MASK, I_COORD_BODY, I_MASKS, I_PIVOTS,
 I_ROW, I_KIND, I_IA, I_IB, I_GEAR_ROW, I_GEAR_JQ, I_GEAR_JV, I_GEAR_IQ, I_GEAR_IV, I_ACTUATORS,
 HEADER) = range(69)
N_SCALARS = 7
# scratch vectors of max(nq, nv, nb) in the work section (then 3 nv x nv matrices): the cores use
# rows 0-10, the step and the rollout the others
N_WORK_VECTORS = 17
ROW_Q1, ROW_V1, ROW_QN, ROW_VN, ROW_ERROR, ROW_CONTROL = 14, 13, 12, 11, 15, 16
PD, COMPUTED_TORQUE = 1, 2  # the built-in controllers of the rollout loop (simulation/control.py)
EXTERNAL_FORCE, EXTERNAL_JACOBIANS = 1, 2  # H_EXTERNAL: Python elements give f, or f, K and D
PROJECTION_TOLERANCE, PROJECTION_ITERATIONS = 1e-12, 20  # the simulator's post-stabilization


def section_sizes(nq, nv, nb, ns, nl, nr, ng, nu=0, na=0, nt=0, npf=0, npi=0, nps=0):
    """The length of every section: ``{slot: length}`` for ``ns`` linear
    joint springs, ``nl`` limit rows, ``nr`` loop-constraint rows, ``ng``
    gear (coupling) rows and ``nu`` actuators with ``na`` activations,
    ``nt`` transmission entries and the paths' ``npf`` floats, ``npi``
    ints and ``nps`` scratch floats (:func:`actuator_offsets`)."""
    m = max(nq, nv, nb)
    fa, ia = actuator_offsets_py(nu, na, nt, npf, npi, nps)[-2:]
    return {F_DAMPING: nv, F_STIFFNESS: ns, F_REST: ns, F_EFFORT: nv, F_VMAX: nv, F_LIM_SIGN: nl, F_LIM_BOUND: nl,
            F_FEXT: nv, F_KEXT: nv * nv, F_DEXT: nv * nv, F_TAU: nv, F_PA: 16 * nr, F_PB: 16 * nr, F_U: 3 * nr,
            F_W: 3 * nr, F_PITCH: nr, F_RATIO: ng, F_OFFSET: ng, F_ACTUATORS: fa,
            F_WORK: N_WORK_VECTORS * m + 3 * nv * nv,
            I_SPRING_Q: ns, I_SPRING_V: ns, I_LIM_Q: nl, I_LIM_V: nl, I_MASK: nv * nv, I_COORD_BODY: nv,
            I_MASKS: 2 * nv, I_PIVOTS: nv, I_ROW: nr, I_KIND: nr, I_IA: nr, I_IB: nr, I_GEAR_ROW: ng, I_GEAR_JQ: ng,
            I_GEAR_JV: ng, I_GEAR_IQ: ng, I_GEAR_IV: ng, I_ACTUATORS: ia}


@njit(cache=True, nogil=True, inline="always")
def actuator_offsets(nu, na, nt, npf=0, npi=0, nps=0):
    """Where each array of the actuator sections starts: in the float
    section the packed parameters (nu x NP, :mod:`multibody.forces.actuators`),
    the transmission coefficients (nt), the controls (nu), the last forces
    (nu), the recorded (l, l̇, ∂f/∂l, ∂f/∂l̇) (4 x nu), the activations
    (na), the stage activations, their rates, the rates of the update and
    RK4's four stage rates (4 x na), the compiled paths' floats (npf) and
    their scratch (nps: :func:`~multibody.forces.actuators.path_forces`);
    in the int section the packed ints (nu x NI), the entries' q and v
    indices (nt each) and the paths' ints (npi). Returns those offsets
    and the two sections' lengths."""
    o_tc = nu * NP
    o_ctrl = o_tc + nt
    o_force = o_ctrl + nu
    o_work = o_force + nu
    o_act = o_work + 4 * nu
    o_stage = o_act + na
    o_dot = o_stage + na
    o_rate = o_dot + na
    o_k = o_rate + na
    o_pf = o_k + 4 * na
    o_ps = o_pf + npf
    o_tq = nu * NI
    o_tv = o_tq + nt
    o_pi = o_tv + nt
    return (o_tc, o_ctrl, o_force, o_work, o_act, o_stage, o_dot, o_rate, o_k, o_tq, o_tv, o_pf, o_ps, o_pi,
            o_ps + nps, o_pi + npi)


# the same offsets for Python callers (building a table), without compiling the kernel for them
actuator_offsets_py = getattr(actuator_offsets, "py_func", actuator_offsets)


Table = namedtuple("Table", (
    "nq", "nv", "nb", "nc", "block", "dt", "restitution", "threshold", "baumgarte", "loop_erp", "loop_cfm",
    "loop_gdot", "gravity_on", "clamp_effort",
    "clamp_velocity", "external", "project",
    "damping", "stiffness", "rest", "effort", "vmax", "lim_sign", "lim_bound", "fext", "Kext", "Dext", "tau", "work",
    "A", "B", "C", "spring_q", "spring_v", "lim_q", "lim_v", "maskT", "coord_body", "eff_mask", "vel_mask",
    "pivots", "loops", "handle", "contact_stage", "nu", "na", "dense", "ints", "floats"))
# the constraint rows, in the argument order of the constraint kernels (Constraints.kernel_args)
Loops = namedtuple("Loops", ("row", "kind", "body_a", "body_b", "Pa", "Pb", "u", "w", "pitch", "gear_row",
                             "gear_jq", "gear_jv", "gear_iq", "gear_iv", "ratio", "offset"))
# the actuator sections as arrays (actuator_view): see actuator_offsets
Actuators = namedtuple("Actuators", ("ai", "af", "tq", "tv", "tc", "ctrl", "force", "work", "act", "stage", "dot",
                                     "rate", "k", "pf", "pi", "ps", "dt", "path_jac"))


@njit(cache=True, nogil=True, inline="always")
def _fsec(ints, floats, slot, n):
    return floats[ints[slot]:ints[slot] + n]


@njit(cache=True, nogil=True, inline="always")
def _isec(ints, slot, n):
    return ints[ints[slot]:ints[slot] + n]


@njit(cache=True, nogil=True, inline="always")
def _fblock_compiled(floats, offset, shape):
    """The float64 table from ``offset`` on as an array of ``shape`` (a
    ``carray`` view: a reshaped slice costs a call of Numba's reshape
    helper, ~25 ns, and a step builds the view of its table every call)."""
    return carray(f64_pointer(floats.ctypes.data + np.uint64(8 * offset)), shape)


@njit(cache=True, nogil=True, inline="always")
def _iblock_compiled(ints, offset, shape):
    """:func:`_fblock` of the int64 table."""
    return carray(i64_pointer(ints.ctypes.data + np.uint64(8 * offset)), shape)


def _block(table, offset, shape):
    """:func:`_fblock` without JIT: the reshaped slice (pointers need compiled code)."""
    return table[offset:offset + int(np.prod(shape))].reshape(shape)


_fblock = _fblock_compiled if JIT else _block
_iblock = _iblock_compiled if JIT else _block


@njit(cache=True, nogil=True, inline="always")
def table_view(ints, floats):
    """The sections of a step table as a :data:`Table` of views."""
    nq, nv, nb, ns, nl, nr, ng = ints[H_NQ], ints[H_NV], ints[H_NB], ints[H_NS], ints[H_NL], ints[H_NR], ints[H_NG]
    m = max(nq, nv, nb)
    w = ints[F_WORK]  # the work section: N_WORK_VECTORS rows of m, then three nv x nv matrices
    mats = w + N_WORK_VECTORS * m
    masks = _isec(ints, I_MASKS, 2 * nv)
    loops = Loops(_isec(ints, I_ROW, nr), _isec(ints, I_KIND, nr), _isec(ints, I_IA, nr), _isec(ints, I_IB, nr),
                  _fblock(floats, ints[F_PA], (nr, 4, 4)), _fblock(floats, ints[F_PB], (nr, 4, 4)),
                  _fblock(floats, ints[F_U], (nr, 3)), _fblock(floats, ints[F_W], (nr, 3)),
                  _fsec(ints, floats, F_PITCH, nr), _isec(ints, I_GEAR_ROW, ng), _isec(ints, I_GEAR_JQ, ng),
                  _isec(ints, I_GEAR_JV, ng), _isec(ints, I_GEAR_IQ, ng), _isec(ints, I_GEAR_IV, ng),
                  _fsec(ints, floats, F_RATIO, ng), _fsec(ints, floats, F_OFFSET, ng))
    return Table(nq, nv, nb, ints[H_NC], ints[H_BLOCK], floats[0], floats[1], floats[2], floats[3], floats[4],
                 floats[5], floats[6] != 0.0, ints[H_GRAVITY] != 0,
                 ints[H_CLAMP_EFFORT] != 0, ints[H_CLAMP_VELOCITY] != 0, ints[H_EXTERNAL], ints[H_PROJECT] != 0,
                 _fsec(ints, floats, F_DAMPING, nv), _fsec(ints, floats, F_STIFFNESS, ns),
                 _fsec(ints, floats, F_REST, ns), _fsec(ints, floats, F_EFFORT, nv), _fsec(ints, floats, F_VMAX, nv),
                 _fsec(ints, floats, F_LIM_SIGN, nl), _fsec(ints, floats, F_LIM_BOUND, nl),
                 _fsec(ints, floats, F_FEXT, nv), _fblock(floats, ints[F_KEXT], (nv, nv)),
                 _fblock(floats, ints[F_DEXT], (nv, nv)), _fsec(ints, floats, F_TAU, nv),
                 _fblock(floats, w, (N_WORK_VECTORS, m)), _fblock(floats, mats, (nv, nv)),
                 _fblock(floats, mats + nv * nv, (nv, nv)), _fblock(floats, mats + 2 * nv * nv, (nv, nv)),
                 _isec(ints, I_SPRING_Q, ns), _isec(ints, I_SPRING_V, ns),
                 _isec(ints, I_LIM_Q, nl), _isec(ints, I_LIM_V, nl), _iblock(ints, ints[I_MASK], (nv, nv)),
                 _isec(ints, I_COORD_BODY, nv), masks[:nv], masks[nv:], _isec(ints, I_PIVOTS, nv), loops,
                 ints.ctypes.data, ints[H_CONTACT_STAGE], ints[H_NU], ints[H_NA], ints[H_DENSE] != 0, ints, floats)


# The actuator stages are out-of-line kernels compiled once and called by the entry points of the
# tables with actuators, with the table's handle as ``A`` (they rebuild their views from it: handing them
# the 13 arrays cost ~0.15 µs per call, a third of the actuators' share of a step); the entry points of
# the tables without pass None, and Numba prunes the branches that call them. Inlined, the stages were
# copied into every entry point before the pruning (+7 s of cold compilation of each integrator's entry
# point without actuators; architecture.md, compilation rules 7 and 9). Without JIT, ``A`` is the pair
# (Actuators tuple, workspace) itself (no handles without compiled code).
#
# The actuators on spatial paths are one more stage, :func:`path_stage` (the Path kernel, the actuator
# laws, the Jacobians through the path's geometric term: forces/actuators.path_forces), behind a C
# entry point of its own whose address the table holds (H_PATH_STAGE, 0 without such actuators), as
# the contact stage: only a table with path actuators compiles it, and the entry points with actuators
# stay those of the tables without paths.
@njit(cache=True, nogil=True, inline="always")
def actuator_view(ints, floats):
    """The actuator sections of a step table (its int64 and float64
    arrays) as :data:`Actuators` (only for a table with actuators)."""
    nu, na, nt = ints[H_NU], ints[H_NA], ints[H_NT]
    npf, npi, nps = ints[H_NPF], ints[H_NPI], ints[H_NPS]
    o_tc, o_ctrl, o_force, o_work, o_act, o_stage, o_dot, o_rate, o_k, o_tq, o_tv, o_pf, o_ps, o_pi, _, _ = \
        actuator_offsets(nu, na, nt, npf, npi, nps)
    f, i = ints[F_ACTUATORS], ints[I_ACTUATORS]
    return Actuators(_iblock(ints, i, (nu, NI)), _fblock(floats, f, (nu, NP)), _iblock(ints, i + o_tq, (nt,)),
                     _iblock(ints, i + o_tv, (nt,)), _fblock(floats, f + o_tc, (nt,)),
                     _fblock(floats, f + o_ctrl, (nu,)), _fblock(floats, f + o_force, (nu,)),
                     _fblock(floats, f + o_work, (4, nu)), _fblock(floats, f + o_act, (na,)),
                     _fblock(floats, f + o_stage, (na,)), _fblock(floats, f + o_dot, (na,)),
                     _fblock(floats, f + o_rate, (na,)), _fblock(floats, f + o_k, (4, na)),
                     _fblock(floats, f + o_pf, (npf,)), _iblock(ints, i + o_pi, (npi,)),
                     _fblock(floats, f + o_ps, (nps,)), floats[0], ints[H_PATH_JAC] != 0)


@njit(cache=True, nogil=True, inline="always")
def _actuators_of_handle(A):
    ints, floats, _ = table_arrays(A)
    return actuator_view(ints, floats)


def _actuators_of_view(A):
    return A[0]


_actuators_of = _actuators_of_handle if JIT else _actuators_of_view


@njit(cache=True, nogil=True)
def actuators_begin(A):
    """Before the integrator: the stage activations are the activations,
    their rates ``ȧ(c, a)`` are computed, and the update will use them
    (RK4 replaces them by its weighted stage rates)."""
    V = _actuators_of(A)
    na = V.act.shape[0]
    for j in range(na):
        V.stage[j] = V.act[j]
    activation_rates(V.ai, V.af, V.ctrl, V.act, V.dot)
    for j in range(na):
        V.rate[j] = V.dot[j]


@njit(cache=True, nogil=True)
def actuator_forces(A, dt, q, v, out, record, posed):
    """``out += Σ Jᵀ f`` of the actuators at the stage activations: those
    on paths (:func:`path_stage`; ``posed``: the workspace holds the
    poses and the world joint Jacobian at q), then those on joints and
    fixed tendons (:func:`~multibody.forces.actuators.linear_forces`)."""
    V = _actuators_of(A)
    path_stage_of(A, q, v, out, (PATH_RECORD if record else 0) | (PATH_POSED if posed else 0))
    linear_forces(V.ai, V.af, V.tq, V.tv, V.tc, V.ctrl, V.stage, V.dot, dt, q, v, out, V.force, V.work, record)


@njit(cache=True, nogil=True)
def actuator_jacobians(A, K, D):
    """``K += f_l JᵀJ``, ``D += f_l̇ JᵀJ`` (:func:`~multibody.forces.actuators.linear_jacobians`)
    and the paths' Jacobians with their geometric term
    (:func:`~multibody.forces.actuators.path_jacobians`)."""
    V = _actuators_of(A)
    linear_jacobians(V.ai, V.tv, V.tc, V.work, K, D)
    path_stage_of(A, K, D, K, PATH_JACOBIANS)


PATH_RECORD, PATH_POSED, PATH_JACOBIANS = 1, 2, 4  # the flags of a path-stage call


@njit(cache=True, nogil=True, inline="always")
def path_stage(ws, V, q, v, out, flags):
    """``out += Σ Jᵀ f`` of the actuators on paths at (q, v)
    (:func:`~multibody.forces.actuators.path_forces`) over the world
    poses and joint Jacobian at q (computed here unless ``flags`` has
    PATH_POSED: CRBA left them), recorded with PATH_RECORD (and then, for
    an implicit integrator's table, with each path's H for
    :func:`~multibody.forces.actuators.path_jacobians`). A zero-length
    segment makes ``out`` NaN: the step fails and is re-run on the checked
    Python path, which names the path and the segment."""
    if not (flags & PATH_POSED):
        joint_jacobians_kernel(ws.tree, q, ws.poses, ws.jac)
    record = (flags & PATH_RECORD) != 0
    if path_forces(V.ai, V.af, V.pf, V.pi, V.ctrl, V.stage, V.dot, V.dt, ws.poses[0], ws.jac[1], v, out, V.force,
                   V.work, V.ps, record, record and V.path_jac, ws.nv * (ws.nv + 2) if V.path_jac else ws.nv) != 0:
        out[0] = np.nan


def path_stage_of(A, a, b, c, flags):
    """The path stage of the actuators ``A``: :func:`path_stage` on (q, v,
    out) = (a, b, c), or with PATH_JACOBIANS
    :func:`~multibody.forces.actuators.path_jacobians` into (K, D) = (a, b).
    In compiled code a call through the C entry point in the table
    (H_PATH_STAGE; none: no path actuators, nothing done)."""
    V, ws = A
    if V.ps.shape[0] == 0:
        return
    if flags & PATH_JACOBIANS:
        path_jacobians(V.ai, V.ps, V.work, V.force, a, b)
    else:
        path_stage(ws, V, a, b, c, flags)


@overload(path_stage_of, jit_options=dict(cache=True))
def _path_stage_of_compiled(A, a, b, c, flags):
    def impl(A, a, b, c, flags):
        address = carray(i64_pointer(A), (HEADER,))[H_PATH_STAGE]
        if address != 0:
            call_address(address, A, a.ctypes.data, b.ctypes.data, c.ctypes.data, flags)
    return impl


def _path_stage_c(handle, a, b, c, flags):
    """The C entry point of the path stage (:func:`path_stage_of`) on the
    step table behind ``handle``: (q, v, out) or (K, D) at the addresses
    a, b, c."""
    ints, floats, data = table_arrays(handle)
    V = actuator_view(ints, floats)
    nq, nv = ints[H_NQ], ints[H_NV]
    if flags & PATH_JACOBIANS:
        path_jacobians(V.ai, V.ps, V.work, V.force, carray(f64_pointer(a), (nv, nv)),
                       carray(f64_pointer(b), (nv, nv)))
    else:
        path_stage(handle_workspace(data), V, carray(f64_pointer(a), (nq,)), carray(f64_pointer(b), (nv,)),
                   carray(f64_pointer(c), (nv,)), flags)
    return 0


_PATH_STAGE = []


def path_stage_address():
    """The address of the compiled C entry point of the path stage
    (compiled or loaded from the cache on first use: only by a table with
    actuators on paths)."""
    if not _PATH_STAGE:
        _PATH_STAGE.append(cfunc(types.int64(*(types.int64,) * 5), cache=True, nopython=True)(_path_stage_c))
    return _PATH_STAGE[0].address


@njit(cache=True, nogil=True)
def commit_activations(A, dt):
    """After a step that succeeded: the activations at the update's rate (mj_advance)."""
    V = _actuators_of(A)
    advance_activations(V.ai, V.af, V.act, V.rate, dt)


@njit(cache=True, nogil=True)
def stage_activations(A, s, dt):
    """RK4's stage ``s`` of the activations into the stage activations and
    their rates, which that stage's forces use
    (:func:`~multibody.forces.actuators.rk4_activation_stage`; after stage
    3 the update's rate)."""
    V = _actuators_of(A)
    rk4_activation_stage(V.ai, V.af, V.ctrl, V.act, V.k, s, dt, V.stage, V.dot, V.rate)


@njit(cache=True, nogil=True, inline="always")
def table_arrays(handle):
    """(int64 table, float64 table, workspace handle) behind a step-table handle."""
    n = carray(i64_pointer(handle), (1,))[0]
    ints = carray(i64_pointer(handle), (n,))
    return ints, carray(f64_pointer(ints[H_FLOATS]), (ints[H_NFLOATS],)), ints[H_DATA]


# ------------------------------------------------------------------ stages
@njit(cache=True, nogil=True, inline="always")
def applied(T, tau):
    """Stage 0: ``T.tau`` ← τ clipped to ±effort (where clamping), marking
    ``T.eff_mask``; returns ``TAU_NOT_FINITE - k`` for a non-finite τ[k],
    else ``EFFORT_CLAMPED`` or 0."""
    flags = 0
    for k in range(T.nv):
        x = tau[k]
        if not np.isfinite(x):
            return TAU_NOT_FINITE - k
        T.eff_mask[k] = 0
        if T.clamp_effort:
            e = T.effort[k]
            if x > e or x < -e:
                x = e if x > e else -e
                T.eff_mask[k] = 1
                flags = EFFORT_CLAMPED
        T.tau[k] = x
    return flags


@njit(cache=True, nogil=True, inline="always")
def joint_forces(T, A, q, v, tau, out, record=True, posed=False):
    """``out = τ − b⊙v − k⊙(q − q_rest) + f_ext + Σ Jᵀf``: the applied joint
    forces, the joint damping, the linear joint springs of vector joints,
    the forces of Python force elements evaluated before the step and the
    actuators on joints and fixed tendons at the stage activations (all N
    or N·m, v order). ``record``: this evaluation is the step's own (at its
    start state): the actuators' forces and derivatives are kept.
    ``posed``: the workspace holds the poses and world joint Jacobian at q
    (the path actuators use them). ``A``: the actuators (the table's
    handle; without JIT their :func:`actuator_view` and the workspace), or
    None."""
    for k in range(T.nv):
        out[k] = tau[k] - T.damping[k] * v[k]
    for r in range(T.spring_q.shape[0]):
        out[T.spring_v[r]] -= T.stiffness[r] * (q[T.spring_q[r]] - T.rest[r])
    if T.external != 0:
        for k in range(T.nv):
            out[k] += T.fext[k]
    if A is not None:
        actuator_forces(A, T.dt, q, v, out, record, posed)


@njit(cache=True, nogil=True, inline="always")
def acceleration(ws, T, loops, A, q, v, tau, force, record=True):
    """Free acceleration ``v̇`` at (q, v) under τ + joint forces into
    ``ws.dofs[1]`` (``force``: scratch, nv): ABA (Featherstone Table 7.1),
    or with hard loop constraints the closed-loop forward dynamics with
    Baumgarte terms (§8.5 method 2, §8.3:
    :func:`~multibody.constraints._kernels.constrained_acceleration_kernel`).
    Returns 0 when done. ``record``: see :func:`joint_forces`."""
    joint_forces(T, A, q, v, tau, force, record)
    if loops is not None:  # None for the kernels of systems without loops: this branch is not compiled
        L = loops
        return constrained_acceleration_kernel(
            ws.tree, ws.lam, q, v, force, T.gravity_on, T.baumgarte, L.row, L.kind, L.body_a, L.body_b, L.Pa, L.Pb,
            L.u, L.w, L.pitch, L.gear_row, L.gear_jq, L.gear_jv, L.gear_iq, L.gear_iv, L.ratio, L.offset, ws.poses,
            ws.jac, ws.spatial, ws.inertia6, ws.M, ws.dofs[1])
    return aba_checked(ws.tree, q, v, force, T.gravity_on, False, ws.poses, ws.jac, ws.spatial, ws.inertia6, ws.U,
                       ws.Dinv, ws.dofs)


@njit(cache=True, nogil=True, inline="always")
def net_force(ws, T, A, q, v, tau, f, posed=False, record=True):
    """``f = τ + joint forces − g(q) − c(q, v)`` (RNEA at v̇ = 0 with
    gravity, Featherstone Table 5.1); ``posed``: ``ws.poses`` already holds
    the poses at q (CRBA just ran), so the forward kinematics is skipped."""
    zero = ws.dofs[2]
    for k in range(T.nv):
        zero[k] = 0.0
    if posed:
        rnea_posed(ws.tree, q, v, zero, T.gravity_on, False, ws.poses, ws.spatial, ws.dofs[3])
    else:
        rnea_kernel(ws.tree, q, v, zero, T.gravity_on, False, ws.poses, ws.spatial, ws.dofs[3])
    joint_forces(T, A, q, v, tau, f, record, posed)
    for k in range(T.nv):
        f[k] -= ws.dofs[3, k]


@njit(cache=True, nogil=True, inline="always")
def gravity_stiffness(ws, T, K):
    """``K += ∂τ_g/∂q`` (tangent space) of the gravity force ``τ_g = −g(q)``:
    the compiled form of :class:`multibody.forces.Gravity`'s exact K
    (docs/forces.md). Entry (a, c) is the geometric term
    ``[∂s_a/∂δ_c = s_c ×ₘ s_a] z_a·s_c`` with ``z_a = s_a ×* W_a`` and the
    subtree wrench ``W_a = [H_a × g; M_a g]`` (Featherstone Eq. 2.32), plus
    the motion of the centres of mass of the bodies moved by both a and c:
    ``(ω_a·C)(g·ω_c) − (ω_a·ω_c)(g·C) − C_m ω_a·(g × v_c)`` with (C, C_m)
    the first moment and mass of the subtree of the deeper body (s = (ω, v),
    world coordinates at the world origin). K has the branch pattern of M:
    for l supporting k the bodies moved by both are the subtree of k's
    body, so that term is ``P_k·s_l`` for the entry (k, l) and ``ω_l·R_k``
    for (l, k), with ``P_k = ((ω_k·C) g − (g·C) ω_k, C_m g × ω_k)`` and
    ``R_k = (g·ω_k) C − (g·C) ω_k − C_m g × v_k`` computed once per k: one
    short dot product per entry. Needs the world poses ``ws.poses[0]`` and
    the world joint Jacobian ``ws.jac[1]`` at q (CRBA leaves both)."""
    tree, poses, J, nv, nb = ws.tree, ws.poses, ws.jac[1], T.nv, T.nb
    cb, lam, maskT = T.coord_body, ws.lam, T.maskT
    g0, g1, g2 = tree[0, C_GRAVITY], tree[0, C_GRAVITY + 1], tree[0, C_GRAVITY + 2]
    buf = np.empty(4 * nb + 21 * nv)
    Hs = buf[:4 * nb].reshape((nb, 4))  # first moment (world) and mass of the subtree of each body
    Js = buf[4 * nb:4 * nb + 6 * nv].reshape((nv, 6))  # s_k, one row each: the pair loop reads rows
    Z = buf[4 * nb + 6 * nv:4 * nb + 12 * nv].reshape((nv, 6))
    P = buf[4 * nb + 12 * nv:4 * nb + 18 * nv].reshape((nv, 6))
    R = buf[4 * nb + 18 * nv:].reshape((nv, 3))
    for b in range(1, nb):
        m = tree[b, C_MASS]
        X = poses[0, b]
        h0, h1, h2 = tree[b, C_H], tree[b, C_H + 1], tree[b, C_H + 2]
        Hs[b, 0] = X[0, 0] * h0 + X[0, 1] * h1 + X[0, 2] * h2 + m * X[0, 3]
        Hs[b, 1] = X[1, 0] * h0 + X[1, 1] * h1 + X[1, 2] * h2 + m * X[1, 3]
        Hs[b, 2] = X[2, 0] * h0 + X[2, 1] * h1 + X[2, 2] * h2 + m * X[2, 3]
        Hs[b, 3] = m
    for b in range(nb - 1, 1, -1):  # parents precede children
        p = int(tree[b, C_PARENT])
        for r in range(4):
            Hs[p, r] += Hs[b, r]
    for k in range(nv):
        b = cb[k]
        C0, C1, C2, Cm = Hs[b, 0], Hs[b, 1], Hs[b, 2], Hs[b, 3]
        n0, n1, n2 = C1 * g2 - C2 * g1, C2 * g0 - C0 * g2, C0 * g1 - C1 * g0
        f0, f1, f2 = Cm * g0, Cm * g1, Cm * g2
        w0, w1, w2, u0, u1, u2 = J[0, k], J[1, k], J[2, k], J[3, k], J[4, k], J[5, k]
        Js[k, 0], Js[k, 1], Js[k, 2], Js[k, 3], Js[k, 4], Js[k, 5] = w0, w1, w2, u0, u1, u2
        Z[k, 0] = w1 * n2 - w2 * n1 + u1 * f2 - u2 * f1
        Z[k, 1] = w2 * n0 - w0 * n2 + u2 * f0 - u0 * f2
        Z[k, 2] = w0 * n1 - w1 * n0 + u0 * f1 - u1 * f0
        Z[k, 3] = w1 * f2 - w2 * f1
        Z[k, 4] = w2 * f0 - w0 * f2
        Z[k, 5] = w0 * f1 - w1 * f0
        gC = g0 * C0 + g1 * C1 + g2 * C2
        wC = w0 * C0 + w1 * C1 + w2 * C2
        gw = g0 * w0 + g1 * w1 + g2 * w2
        P[k, 0], P[k, 1], P[k, 2] = wC * g0 - gC * w0, wC * g1 - gC * w1, wC * g2 - gC * w2
        P[k, 3], P[k, 4], P[k, 5] = Cm * (g1 * w2 - g2 * w1), Cm * (g2 * w0 - g0 * w2), Cm * (g0 * w1 - g1 * w0)
        R[k, 0] = gw * C0 - gC * w0 - Cm * (g1 * u2 - g2 * u1)
        R[k, 1] = gw * C1 - gC * w1 - Cm * (g2 * u0 - g0 * u2)
        R[k, 2] = gw * C2 - gC * w2 - Cm * (g0 * u1 - g1 * u0)
    for k in range(nv):
        l = k
        while l >= 0:  # k, then the coordinates supporting it
            s = 0.0
            for r in range(6):
                s += P[k, r] * Js[l, r]
            if maskT[k, l] != 0:
                for r in range(6):
                    s += Z[k, r] * Js[l, r]
            K[k, l] += s
            if l != k:
                s = Js[l, 0] * R[k, 0] + Js[l, 1] * R[k, 1] + Js[l, 2] * R[k, 2]
                if maskT[l, k] != 0:  # l and k coordinates of one joint
                    for r in range(6):
                        s += Z[l, r] * Js[k, r]
                K[l, k] += s
            l = lam[l]


@njit(cache=True, nogil=True, inline="always")
def linearization(ws, T, A, q, v, tau, f, K, D, stiffness=True):
    """What the implicit integrators need at (q, v): ``M`` in ``ws.M``
    (CRBA), ``f = τ + joint forces − g − c``, ``K = ∂f/∂q`` (gravity, joint
    springs, Python elements) and ``D = ∂f/∂v`` (joint damping, Python
    elements): :meth:`multibody.formulations.ReducedSystem.linearization`
    compiled. The Coriolis terms stay explicit, as there. Without Python
    elements only M's branch pattern of K and D is written (the rest is
    never read) unless actuators couple coordinates outside it
    (``T.dense``); K not at all if not ``stiffness`` (Bridson–Marino does
    not use it). The actuators' K and D are exact (``f_l JᵀJ``, ``f_l̇ JᵀJ``)."""
    nv = T.nv
    crba_kernel(ws.tree, ws.lam, q, ws.poses, ws.jac, ws.inertia6, ws.M)
    net_force(ws, T, A, q, v, tau, f, True)
    if T.external == EXTERNAL_JACOBIANS:
        for k in range(nv):
            for l in range(nv):
                K[k, l] = T.Kext[k, l]
                D[k, l] = T.Dext[k, l]
    elif T.dense:
        for k in range(nv):
            for l in range(nv):
                K[k, l] = 0.0
                D[k, l] = 0.0
    else:
        for k in range(nv):
            l = k
            while l >= 0:
                K[k, l] = K[l, k] = D[k, l] = D[l, k] = 0.0
                l = ws.lam[l]
    for k in range(nv):
        D[k, k] -= T.damping[k]
    if A is not None:
        actuator_jacobians(A, K, D)
    if not stiffness:
        return
    for r in range(T.spring_q.shape[0]):
        K[T.spring_v[r], T.spring_v[r]] -= T.stiffness[r]
    if T.gravity_on:
        gravity_stiffness(ws, T, K)  # CRBA left the poses and the world Jacobian at q


@njit(cache=True, nogil=True)
def lu_factor(A, piv):
    """In-place LU factorization with partial pivoting (``P A = L U``, L
    unit lower): the velocity matrices ``M − hD − h²K`` need not be
    symmetric (non-conservative force Jacobians). Returns False if a pivot
    is zero (A singular)."""
    n = A.shape[0]
    for c in range(n):
        p = c
        big = abs(A[c, c])
        for r in range(c + 1, n):
            if abs(A[r, c]) > big:
                big = abs(A[r, c])
                p = r
        piv[c] = p
        if big == 0.0 or not np.isfinite(big):
            return False
        if p != c:
            for k in range(n):
                A[c, k], A[p, k] = A[p, k], A[c, k]
        inv = 1.0 / A[c, c]
        for r in range(c + 1, n):
            a = A[r, c] * inv
            A[r, c] = a
            if a != 0.0:
                for k in range(c + 1, n):
                    A[r, k] -= a * A[c, k]
    return True


@njit(cache=True, nogil=True)
def lu_solve(A, piv, x):
    """``x ← A⁻¹ x`` from :func:`lu_factor`'s factors."""
    n = A.shape[0]
    for c in range(n):
        p = piv[c]
        if p != c:
            x[c], x[p] = x[p], x[c]
    for r in range(n):
        s = x[r]
        for k in range(r):
            s -= A[r, k] * x[k]
        x[r] = s
    for r in range(n - 1, -1, -1):
        s = x[r]
        for k in range(r + 1, n):
            s -= A[r, k] * x[k]
        x[r] = s / A[r, r]


@njit(cache=True, nogil=True)
def tree_lu_factor(lam, A):
    """In place ``A = U D L`` for a matrix with the branch-induced sparsity
    of the joint-space inertia (nonzero only where one coordinate supports
    the other) that need not be symmetric: coordinates are eliminated from
    the leaves (Featherstone's LᵀDL, Table 6.3, with separate row and
    column factors), so there is no fill-in and no pivoting. U (unit upper)
    is stored above the diagonal, L (unit lower) below it, D on it. Returns
    False at the first pivot that is not positive (the caller then solves
    with pivoting): the velocity matrices ``M − hD − h²K`` of stable
    elements are close to the positive definite M."""
    n = A.shape[0]
    for k in range(n - 1, -1, -1):
        d = A[k, k]
        if not (d > 0.0) or not np.isfinite(d):
            return False
        j = lam[k]
        while j >= 0:
            A[k, j] /= d
            j = lam[j]
        i = lam[k]
        while i >= 0:
            c = A[i, k]
            if c != 0.0:
                j = lam[k]
                while j >= 0:
                    A[i, j] -= c * A[k, j]
                    j = lam[j]
                A[i, k] = c / d
            i = lam[i]
    return True


@njit(cache=True, nogil=True)
def tree_lu_solve(lam, A, x):
    """``x ← A⁻¹ x`` from :func:`tree_lu_factor`: ``U⁻¹`` from the leaves,
    ``D⁻¹``, then ``L⁻¹`` from the root."""
    n = A.shape[0]
    for k in range(n - 1, -1, -1):
        i = lam[k]
        while i >= 0:
            x[i] -= A[i, k] * x[k]
            i = lam[i]
    for k in range(n):
        x[k] /= A[k, k]
    for k in range(n):
        j = lam[k]
        while j >= 0:
            x[k] -= A[k, j] * x[j]
            j = lam[j]


@njit(cache=True, nogil=True, inline="always")
def combine(ws, T, M, D, K, cd, ck, A, zero_first):
    """``A = M − c_d D − c_k K``: every entry when Python elements gave
    Jacobians (they may couple any coordinates), else only the entries of
    M's branch pattern, where D and K also live (after zeroing A if
    ``zero_first``, for the dense solve)."""
    nv = T.nv
    if T.dense or zero_first:
        for r in range(nv):
            for k in range(nv):
                A[r, k] = 0.0 if not T.dense else M[r, k] - cd * D[r, k] - ck * K[r, k]
        if T.dense:
            return
    lam = ws.lam
    for r in range(nv):
        k = r
        while k >= 0:
            A[r, k] = M[r, k] - cd * D[r, k] - ck * K[r, k]
            A[k, r] = M[k, r] - cd * D[k, r] - ck * K[k, r]
            k = lam[k]


@njit(cache=True, nogil=True, inline="always")
def add_times(ws, T, K, c, x, out):
    """``out += c K x`` over the entries :func:`combine` uses (all with
    Python elements' Jacobians, else M's branch pattern)."""
    nv = T.nv
    if T.dense:
        for r in range(nv):
            s = 0.0
            for k in range(nv):
                s += K[r, k] * x[k]
            out[r] += c * s
        return
    lam = ws.lam
    for r in range(nv):
        s = K[r, r] * x[r]
        xr = x[r]
        k = lam[r]
        while k >= 0:
            s += K[r, k] * x[k]
            out[k] += c * K[k, r] * xr
            k = lam[k]
        out[r] += c * s


@njit(cache=True, nogil=True)
def block_ldl_factor(lam, A, nb, piv):
    """In place, for a matrix with the branch-induced sparsity of the
    joint-space inertia that is symmetric outside its leading ``nb × nb``
    block (the root joint's coordinates): Featherstone's sparse LᵀDL
    (Table 6.3) eliminates coordinates n−1 … nb from the leaves — L's rows
    below the diagonal, D on it, reading and updating the lower triangle
    only, and both triangles of the root block — leaving in that block
    the Schur complement, which is factored by dense LU with partial
    pivoting (``piv``). This is the velocity matrix ``M − hD − h²K`` of a
    model whose only Lie-group joint (free, spherical, planar) is the root
    joint: K is the Hessian of a potential in coordinates except within
    such a joint, where the tangent directions do not commute. Half the
    work of :func:`tree_lu_factor`. Returns False at a pivot that is not
    positive (outside the block) or zero (in it)."""
    n = A.shape[0]
    for k in range(n - 1, nb - 1, -1):
        d = A[k, k]
        if not (d > 0.0) or not np.isfinite(d):
            return False
        i = lam[k]
        while i >= 0:
            a = A[k, i] / d
            j = i
            if i < nb:  # the root block: its upper triangle too
                while j >= 0:
                    A[i, j] -= a * A[k, j]
                    if j != i:
                        A[j, i] -= a * A[k, j]
                    j = lam[j]
            else:
                while j >= 0:
                    A[i, j] -= a * A[k, j]
                    j = lam[j]
            A[k, i] = a
            i = lam[i]
    return nb == 0 or lu_factor(A[:nb, :nb], piv[:nb])


@njit(cache=True, nogil=True)
def block_ldl_solve(lam, A, nb, piv, x):
    """``x ← A⁻¹ x`` from :func:`block_ldl_factor`: ``L⁻ᵀ`` from the
    leaves, the root block's LU solve and ``D⁻¹``, then ``L⁻¹`` from the
    root (Table 6.5 with the block)."""
    n = A.shape[0]
    for i in range(n - 1, nb - 1, -1):
        xi = x[i]
        j = lam[i]
        while j >= 0:
            x[j] -= A[i, j] * xi
            j = lam[j]
    if nb > 0:
        lu_solve(A[:nb, :nb], piv[:nb], x[:nb])
    for i in range(nb, n):
        x[i] /= A[i, i]
    for i in range(nb, n):
        s = x[i]
        j = lam[i]
        while j >= 0:
            s -= A[i, j] * x[j]
            j = lam[j]
        x[i] = s


@njit(cache=True, nogil=True, inline="always")
def factor_combined(ws, T, M, D, K, cd, ck, A):
    """Factor ``A = M − c_d D − c_k K`` (:func:`combine`) in place: by
    :func:`block_ldl_factor` when A is symmetric outside the root joint's
    block (``T.block >= 0``: every model whose only Lie-group joint is the
    root joint), else by :func:`tree_lu_factor` on M's branch pattern —
    when their pivots are positive (the velocity matrices of stable
    elements are close to the positive definite M) — and otherwise (Python
    elements' Jacobians, or a pivot that is not positive) by dense LU with
    pivoting. Returns 3 (block LᵀDL), 1 (tree LU), 2 (dense) or 0
    (singular)."""
    combine(ws, T, M, D, K, cd, ck, A, False)
    if not T.dense:
        if T.block >= 0:
            if block_ldl_factor(ws.lam, A, T.block, T.pivots):
                return 3
        elif tree_lu_factor(ws.lam, A):
            return 1
        combine(ws, T, M, D, K, cd, ck, A, True)
    return 2 if lu_factor(A, T.pivots) else 0


@njit(cache=True, nogil=True, inline="always")
def solve(ws, T, A, kind, x):
    """``x ← A⁻¹ x`` with the factors of :func:`factor_combined` of the given kind."""
    if kind == 3:
        block_ldl_solve(ws.lam, A, T.block, T.pivots, x)
    elif kind == 1:
        tree_lu_solve(ws.lam, A, x)
    else:
        lu_solve(A, T.pivots, x)


@njit(cache=True, nogil=True, inline="always")
def matvec(A, x, out):
    n = x.shape[0]
    for r in range(n):
        s = 0.0
        for k in range(n):
            s += A[r, k] * x[k]
        out[r] = s


# ------------------------------------------------------------------ contact
@njit(cache=True, nogil=True, inline="always")
def _contacts_at(ws, C, q):
    """Detect the contacts at q (world poses by forward kinematics); their
    number, or CONTACT_FAILED. Resets the step's contact flags. A table
    without pairs (:meth:`~multibody.constraints.contact.ContactTable.empty`,
    a system without contact) gives 0 at once."""
    if C.head[CF.NPAIR] == 0:
        if C.head[CF.COMPLIANT] != 0:  # a table for compliant limits only (the empty table is never written)
            C.head[CF.FLAGS] = 0
        return 0
    C.head[CF.FLAGS] = 0
    fk_kernel(ws.tree, q, ws.poses)
    n = CF.detect_contacts(C, ws.poses[0])
    if n < 0:
        return CONTACT_FAILED
    if C.head[CF.DROPPED] > 0:
        C.head[CF.FLAGS] |= CONTACTS_DROPPED
    if n == 0:
        C.head[CF.N_PREV] = 0
        C.head[CF.ITERATIONS] = 0
    return n


@njit(cache=True, nogil=True, inline="always")
def _impulses(C, lam, n, v, vf):
    """Solve the problem of the n contacts whose rows J and Y = X Jᵀ are in
    the table; ``vf`` becomes the step's velocity. Returns 0, NON_FINITE
    if the solver met a NaN or an infinity, or CONTACT_SOLVE_FAILED (Lemke's
    method ended on a ray or at its pivot cap: ``C.head[ITERATIONS]`` says
    which)."""
    st = CF.solve_contacts(C, lam, n, v, vf, vf)
    if st == NOT_CONVERGED:  # the last iterate is used, and the step flagged
        C.head[CF.FLAGS] |= CONTACT_NOT_CONVERGED
    elif st == CONTACT_NON_FINITE:
        return NON_FINITE
    elif st < 0:
        return CONTACT_SOLVE_FAILED
    return 0


@njit(cache=True, nogil=True, inline="always")  # into its C entry point (and the Python step's kernel)
def contact_stage(ws, C, q, v, vf):
    """The contact stage (docs/contact.md) of every step: the contacts at q
    (:func:`~multibody.constraints._contact.find_contacts`), their rows at
    q, and the impulses that turn the free velocity ``vf`` (nv, changed in
    place) into the step's velocity through X = (M(q) + h·diag(d))⁻¹ (CRBA
    and the sparse LᵀDL, Featherstone Tables 6.2–6.3; d = ``C.damping``,
    h times the joint dampers for implicit Euler, 0 otherwise). ``v``: the
    velocity at the start of the step (restitution). With compliant
    contact (Drumwright) the joint limits are solved here in every step,
    with or without contacts. Returns the number of slots (contacts and
    limit rows), or a failure status (CONTACT_FAILED: the narrow phase failed
    on a pair; SINGULAR); the step's flags
    (:data:`~multibody._status.CONTACT_NOT_CONVERGED`,
    :data:`~multibody._status.CONTACTS_DROPPED`) go to ``C.head[FLAGS]``."""
    n = _contacts_at(ws, C, q)
    if n < 0 or (n == 0 and C.head[CF.COMPLIANT] == 0):
        return n
    slots = n + CF.limit_slots(C, q, vf, n)  # compliant: the limits are in the stage in every step
    if slots == 0:
        return 0
    if not _mass_rows(ws, C, q, n):
        return SINGULAR
    st = _impulses(C, ws.lam, n, v, vf)
    return slots if st == 0 else st


@njit(cache=True, nogil=True, inline="always")
def _mass_rows(ws, C, q, n):
    """The rows J of the n contacts at q and of the limit slots after them
    (:func:`~multibody.constraints._contact.limit_slots`) and Y = X Jᵀ
    (row-wise), X the inverse of ``M(q) + diag(C.damping)`` (:func:`contact_stage`); False if
    that matrix is not positive definite. For the Newton solver, the matrix
    itself in ``C.A`` instead of Y.

    Why implicit Euler's stage adds only the joint dampers to M, not its
    whole velocity matrix M − hD − h²K: the stiffness K (gravity within a
    free or spherical joint, where the tangent directions do not commute)
    and Python elements' Jacobians are not symmetric, and neither would be
    W = J X Jᵀ. Gauss–Seidel on W made symmetric by copying its lower
    triangle diverged (that copy is indefinite: a box resting on four
    corners, eigenvalue −1.3e-4), and neither the disk step nor Newton's
    method solves a non-symmetric problem. The springs still act
    implicitly in the step's free velocity."""
    M = C.A if C.head[CF.SOLVER] == CF.NEWTON else C.Mf  # Newton works on the matrix itself (its Cholesky checks it)
    crba_kernel(ws.tree, ws.lam, q, ws.poses, ws.jac, ws.inertia6, M)
    for k in range(M.shape[0]):
        M[k, k] += C.damping[k]
    CF.contact_rows(C, ws.jac, ws.lam, n)
    if C.head[CF.SOLVER] == CF.NEWTON:
        return True
    if ltdl_kernel(ws.lam, M) != 0:
        return False
    if C.head[CF.SOLVER] == CF.PIVOTING:  # it solves for the rows it needs (columns on demand)
        return True
    for c in range(n + C.head[CF.N_LIM]):  # M is block diagonal by branch: solve only on the slot's branches
        CF.slot_response(C, ws.lam, M, c, 3)
    if C.head[CF.LOOPS]:  # hard loops: y ← y − T y, the impulses then keep G v⁺ = G v_f
        CF.project_out_loops(C, n + C.head[CF.N_LIM])
    return True


@njit(cache=True, nogil=True, inline="always")
def contact_after(ws, C, q, v, q_out, v_out):
    """The contact stage after an integrator that updates the positions
    itself (explicit Euler, RK4, trapezoidal, Bridson–Marino, symplectic
    Euler, and the Python integrators): the impulses on its end velocity
    ``v_out`` (taken as the free velocity) from the contacts at the start
    configuration q; in a step with contacts the position is then
    ``q_out = q ⊕ h v⁺``, the velocity-level time stepping of Stewart and
    Trinkle (what semi-implicit Euler does): correcting the integrator's
    own position by h Δv instead leaves the part of the free flight that
    its higher-order position update adds (½h²a for RK4: a box resting on
    a plane sank 5 µm and crept). Such a step is first order, as every
    impulsive contact step is. Returns as :func:`contact_stage`."""
    n = contact_stage(ws, C, q, v, v_out)
    if n > 0:
        integrate_kernel(ws.tree, q, v_out, C.scalars[CF.DT], q_out)
    return n


@njit(cache=True, nogil=True, inline="always")
def contact_problem(ws, C, q, v, vf):
    """The contact problem of a step from (q, v) with the free velocity
    ``vf`` in the table (W, b, μ and the warm start; for a solver called
    from Python: the reference modes), without solving it. Returns the
    number of its slots (contacts and limits) or a failure status."""
    n = _contacts_at(ws, C, q)
    if n < 0 or (n == 0 and C.head[CF.COMPLIANT] == 0):
        return n
    slots = n + CF.limit_slots(C, q, vf, n)
    if slots == 0:
        return 0
    if not _mass_rows(ws, C, q, n):
        return SINGULAR
    CF.contact_problem(C, ws.lam, n, v, vf)
    return slots


@njit(cache=True, nogil=True, inline="always")
def contact_apply(ws, C, q, n, vf, q_out, v_out):
    """After :func:`contact_problem` and a solve that wrote the impulses:
    ``v_out = vf + M⁻¹Jᵀλ`` and ``q_out = q ⊕ h v_out``."""
    CF.finish_contacts(C, n, vf, v_out)
    integrate_kernel(ws.tree, q, v_out, C.scalars[CF.DT], q_out)
    return n


# The C entry point of the contact stage: the integrators' cores call it through the address in the
# step table (:func:`stage_via_address`).
def _contact_stage_c(handle, q, v, vf):
    """:func:`contact_stage` on the workspace and contact table of the step
    table behind ``handle`` (its header only: building the table's views
    cost ~1 µs) with the contiguous vectors at q, v, vf."""
    ints = carray(i64_pointer(handle), (HEADER,))
    nq, nv = ints[H_NQ], ints[H_NV]
    return contact_stage(handle_workspace(ints[H_DATA]), CF.contact_view(ints[H_CONTACT]),
                         carray(f64_pointer(q), (nq,)), carray(f64_pointer(v), (nv,)),
                         carray(f64_pointer(vf), (nv,)))


_STAGE = []


def contact_stage_address():
    """The address of the compiled C entry point of :func:`contact_stage`
    (compiled or loaded from the cache on first use). Only a simulator with
    collision pairs compiles it: inlined in every integrator's step,
    detection, rows and solvers made each take minutes to compile cold."""
    if not _STAGE:
        _STAGE.append(cfunc(types.int64(*(types.int64,) * 4), cache=True, nopython=True)(_contact_stage_c))
    return _STAGE[0].address


def stage_via_address(ws, T, C, q, v, vf):
    """The contact stage of a fused step on the free velocity ``vf``
    (:func:`contact_stage`); returns as it. In compiled code a call through
    the address in the step table (``T.contact_stage``), so that no
    integrator's step compiles the contact stage into itself."""
    return contact_stage(ws, C, q, v, vf)


@overload(stage_via_address, jit_options=dict(cache=True))
def _stage_via_address_compiled(ws, T, C, q, v, vf):
    def impl(ws, T, C, q, v, vf):
        if T.contact_stage == 0:  # no pairs (the empty table): no contacts, and no stage compiled
            return 0
        return call_address(T.contact_stage, T.handle, q.ctypes.data, v.ctypes.data, vf.ctypes.data)
    return impl


@njit(cache=True, nogil=True, inline="always")
def contact_after_step(ws, T, C, q, v, q_out, v_out):
    """:func:`contact_after` in a fused step (the stage through its C entry
    point, :func:`stage_via_address`)."""
    n = stage_via_address(ws, T, C, q, v, v_out)
    if n > 0:
        integrate_kernel(ws.tree, q, v_out, T.dt, q_out)
    return n


@njit(cache=True)
def contact_after_kernel(data, contacts, q, v, q_out, v_out):
    """:func:`contact_after` on the workspace and contact table behind two
    handles (the simulator's Python step); returns as it."""
    return contact_after(handle_workspace(data), CF.contact_view(contacts), q, v, q_out, v_out)


@njit(cache=True)
def contact_problem_kernel(data, contacts, q, v, vf):
    """:func:`contact_problem` behind two handles."""
    return contact_problem(handle_workspace(data), CF.contact_view(contacts), q, v, vf)


@njit(cache=True)
def contact_apply_kernel(data, contacts, q, n, vf, q_out, v_out):
    """:func:`contact_apply` behind two handles."""
    return contact_apply(handle_workspace(data), CF.contact_view(contacts), q, n, vf, q_out, v_out)


# ------------------------------------------------------------------ the integrators
# Each core steps (q, v) with the checked, clamped joint forces ``tau`` into (q_out, v_out) and
# returns 0, or a nonzero status (outputs undefined). They are the Python integrators of
# explicit.py and implicit.py written over the table; the tests hold them to each other.

@njit(cache=True, nogil=True, inline="always")
def explicit_euler_core(ws, T, loops, A, C, q, v, tau, q_out, v_out):
    """``q⁺ = q ⊕ h v``, ``v⁺ = v + h v̇(q, v)``."""
    st = acceleration(ws, T, loops, A, q, v, tau, T.work[0, :T.nv])
    if st != 0:
        return st
    integrate_kernel(ws.tree, q, v, T.dt, q_out)
    for k in range(T.nv):
        v_out[k] = v[k] + T.dt * ws.dofs[1, k]
    if C is not None:
        return min(contact_after_step(ws, T, C, q, v, q_out, v_out), 0)
    return 0


@njit(cache=True, nogil=True, inline="always")
def semi_implicit_euler_core(ws, T, loops, A, C, q, v, tau, q_out, v_out):
    """``v⁺ = v + h v̇(q, v)``, ``q⁺ = q ⊕ h v⁺`` (ArtiSynth §0.9.1); with
    hard loop constraints the velocity-level KKT step (§0.10:
    :func:`~multibody.constraints._kernels.constrained_sie_kernel`), which
    reuses the factors the previous step's post-stabilization left at q
    (kept in work rows 1-10 and the matrices A, B, C of the table:
    :func:`~multibody.constraints._kernels.table_set`); with soft ones
    (``T.loop_cfm > 0``) the regularized step
    (:func:`~multibody.constraints._kernels.soft_sie_step`: ArtiSynth's or
    Drumwright's law)."""
    if loops is not None:
        force, L = T.work[0, :T.nv], loops
        joint_forces(T, A, q, v, tau, force)
        meta, Lf, G, X = table_set(T.work[1:11].reshape(10 * T.work.shape[1]), T.A, T.B, T.C, T.nq, T.nv, T.nc)
        rows = loop_tuple(L.row, L.kind, L.body_a, L.body_b, L.Pa, L.Pb, L.u, L.w, L.pitch, L.gear_row, L.gear_jq,
                          L.gear_jv, L.gear_iq, L.gear_iv, L.ratio, L.offset)
        # with a contact stage, the loops are held in its problem (ContactTable.hold_loops)
        hold = C is not None and (C.head[CF.NPAIR] != 0 or C.head[CF.COMPLIANT] != 0)
        loop_T = C.loop_T if hold else T.A
        if T.loop_cfm > 0.0:
            meta[0] = 0.0  # the set's factors are not kept: nothing at q is reused
            st = soft_sie_step(ws.tree, ws.lam, q, v, force, T.dt, T.gravity_on, rows, ws.poses, ws.jac, ws.spatial,
                               ws.inertia6, T.loop_erp, T.loop_cfm, T.loop_gdot, Lf, G, X, hold, loop_T, q_out,
                               v_out)
        else:
            st = sie_step(ws.tree, ws.lam, q, v, force, T.dt, T.gravity_on, rows, ws.poses, ws.jac, ws.spatial,
                          ws.inertia6, meta, Lf, G, X, q_out, v_out)
            if hold and st == 0:
                _, AL, AD = set_views(meta, T.nq, T.nc)
                loop_projector(X, AL, AD, G, loop_T, np.empty(T.nc), np.empty(T.nc))
        if st != 0 or not hold:
            return st
        C.head[CF.LOOPS] = 1
        return min(contact_after_step(ws, T, C, q, v, q_out, v_out), 0)
    st = acceleration(ws, T, loops, A, q, v, tau, T.work[0, :T.nv])
    if st != 0:
        return st
    for k in range(T.nv):
        v_out[k] = v[k] + T.dt * ws.dofs[1, k]
    if C is not None:  # impulses on the free velocity, before the position update
        st = stage_via_address(ws, T, C, q, v, v_out)
        if st < 0:
            return st
    integrate_kernel(ws.tree, q, v_out, T.dt, q_out)
    return 0


@njit(cache=True, nogil=True, inline="always")
def rk4_core(ws, T, loops, A, C, q, v, tau, q_out, v_out):
    """Classical RK4 on ``q̇ = Q(q) v``, ``v̇ = FD(q, v)`` with the stage
    configurations normalized (:class:`multibody.integrators.RK4`); the
    actuators' activations are stages of it too, as in MuJoCo's
    mj_RungeKutta (their update is :func:`actuators_begin`'s rate replaced
    by the weighted stage rates, applied by the end of the step)."""
    nq, nv, h, W = T.nq, T.nv, T.dt, T.work
    kq, kv = W[0:4, :nq], W[4:8, :nv]   # the four stages' q̇ and v̇
    qs, vs, force = W[8, :nq], W[9, :nv], W[10, :nv]
    for s in range(4):
        if s == 0:
            qs[:] = q
            vs[:] = v
        else:
            c = h if s == 3 else 0.5 * h
            for i in range(nq):
                qs[i] = q[i] + c * kq[s - 1, i]
            normalize_kernel(ws.tree, qs)
            for i in range(nv):
                vs[i] = v[i] + c * kv[s - 1, i]
        if A is not None and T.na > 0:
            stage_activations(A, s, h)
        qdot_kernel(ws.tree, qs, vs, kq[s])
        st = acceleration(ws, T, loops, A, qs, vs, tau, force, s == 0)
        if st != 0:
            return st
        kv[s, :] = ws.dofs[1]
    c = h / 6.0
    for i in range(nq):
        q_out[i] = q[i] + c * (kq[0, i] + 2.0 * kq[1, i] + 2.0 * kq[2, i] + kq[3, i])
    normalize_kernel(ws.tree, q_out)
    for i in range(nv):
        v_out[i] = v[i] + c * (kv[0, i] + 2.0 * kv[1, i] + 2.0 * kv[2, i] + kv[3, i])
    if C is not None:
        return min(contact_after_step(ws, T, C, q, v, q_out, v_out), 0)
    return 0


@njit(cache=True, nogil=True, inline="always")
def _velocity_equation(ws, T, A, q, v, tau, cd, ck, cr, v_out):
    """Solve ``(M − c_d h D − c_k h² K) v⁺ = (M − c_d h D + c_r h² K) v + h f``
    (the linearized implicit steps) into ``v_out``, as the increment
    ``A (v⁺ − v) = h f + (c_k + c_r) h² K v`` with A the matrix on the left
    (no product with M or D); returns the factor's kind (:func:`solve`), 0
    if A is singular."""
    nv, h = T.nv, T.dt
    f = T.work[0, :nv]
    Mx, K, D = T.A, T.B, T.C  # Mx: the factored matrix (A is the actuators)
    dv = T.work[1, :nv]
    linearization(ws, T, A, q, v, tau, f, K, D)
    for r in range(nv):
        dv[r] = h * f[r]
    if ck + cr != 0.0:
        add_times(ws, T, K, (ck + cr) * h * h, v, dv)
    kind = factor_combined(ws, T, ws.M, D, K, cd * h, ck * h * h, Mx)
    if kind == 0:
        return 0
    solve(ws, T, Mx, kind, dv)
    for r in range(nv):
        v_out[r] = v[r] + dv[r]
    return kind


@njit(cache=True, nogil=True, inline="always")
def implicit_euler_core(ws, T, loops, A, C, q, v, tau, q_out, v_out):
    """``(M − hD − h²K) v⁺ = (M − hD) v + h f``, ``q⁺ = q ⊕ h v⁺``
    (ArtiSynth §0.9.2, :class:`multibody.integrators.ImplicitEuler`)."""
    kind = _velocity_equation(ws, T, A, q, v, tau, 1.0, 1.0, 0.0, v_out)
    if kind == 0:
        return SINGULAR
    if C is not None:  # impulses through M + h·diag(dampers) (C.damping: _mass_rows says why)
        st = stage_via_address(ws, T, C, q, v, v_out)
        if st < 0:
            return st
    integrate_kernel(ws.tree, q, v_out, T.dt, q_out)
    return 0


@njit(cache=True, nogil=True, inline="always")
def trapezoidal_core(ws, T, loops, A, C, q, v, tau, q_out, v_out):
    """``(M − (h/2)D − (h²/4)K) v⁺ = (M − (h/2)D + (h²/4)K) v + h f``,
    ``q⁺ = q ⊕ (h/2)(v + v⁺)`` (ArtiSynth §0.9.3 with the erratum of
    notes/seed-000.md, :class:`multibody.integrators.Trapezoidal`)."""
    if _velocity_equation(ws, T, A, q, v, tau, 0.5, 0.25, 0.25, v_out) == 0:
        return SINGULAR
    mid = T.work[2, :T.nv]
    for k in range(T.nv):
        mid[k] = 0.5 * (v[k] + v_out[k])
    integrate_kernel(ws.tree, q, mid, T.dt, q_out)
    if C is not None:
        return min(contact_after_step(ws, T, C, q, v, q_out, v_out), 0)
    return 0


@njit(cache=True, nogil=True, inline="always")
def bridson_marino_core(ws, T, loops, A, C, q, v, tau, q_out, v_out):
    """Bridson–Marino (ArtiSynth §0.9.4, :class:`multibody.integrators.BridsonMarino`):
    ``A = M − (h/2)D``; ``A v½ = A v + (h/2) f(q, v)``; ``q⁺ = q ⊕ h v½``;
    ``A v⁺ = A v + (h/2)(f(q, v) + f(q⁺, v))``, each solved for the
    increment from v (no product with A)."""
    nv, h = T.nv, T.dt
    f, f1, dv = T.work[0, :nv], T.work[1, :nv], T.work[2, :nv]
    Mx, K, D = T.A, T.B, T.C  # Mx: the factored matrix (A is the actuators)
    linearization(ws, T, A, q, v, tau, f, K, D, False)
    kind = factor_combined(ws, T, ws.M, D, K, 0.5 * h, 0.0, Mx)
    if kind == 0:
        return SINGULAR
    for k in range(nv):
        dv[k] = 0.5 * h * f[k]
    solve(ws, T, Mx, kind, dv)
    for k in range(nv):
        v_out[k] = v[k] + dv[k]
    integrate_kernel(ws.tree, q, v_out, h, q_out)
    net_force(ws, T, A, q_out, v, tau, f1, False, False)
    for k in range(nv):
        dv[k] = 0.5 * h * (f[k] + f1[k])
    solve(ws, T, Mx, kind, dv)
    for k in range(nv):
        v_out[k] = v[k] + dv[k]
    if C is not None:
        return min(contact_after_step(ws, T, C, q, v, q_out, v_out), 0)
    return 0


@njit(cache=True, nogil=True, inline="always")
def symplectic_euler_core(ws, T, loops, A, C, q, v, tau, q_out, v_out):
    """Symplectic Euler in canonical coordinates
    (:class:`multibody.integrators.SymplecticEuler`): ``p = M(q)v``,
    ``p⁺ = p + h(f(q, v) + ∂T/∂q(q, u))`` with ``u = M(q)⁻¹p⁺`` solved by
    fixed-point iteration, ``q⁺ = q + h u``, ``v⁺ = M(q⁺)⁻¹M(q)u``. M is
    factored by the sparse LᵀDL (Featherstone Table 6.3).

    The step ends with M(q⁺) and its factor, which the next step needs at
    the same configuration: they are kept in the table (B and C, with q⁺
    in work row 4 and a flag in row 5) and reused when the next step starts
    from exactly that q, so a run computes M once per step instead of
    twice. A step from any other q (a reset, a limit's projection, a
    contact's position update) recomputes them; the results are the same
    bits either way."""
    nq, nv, h = T.nq, T.nv, T.dt
    W = T.work
    f, p, u, nxt = W[0, :nv], W[1, :nv], W[2, :nv], W[3, :nv]
    key, kept = W[4, :nq], W[5, :1]
    M, Mq, Mnext, Fnext = ws.M, T.A, T.B, T.C  # Mq: M(q), kept for v⁺
    if kept_at(kept[0], key, q):
        fk_kernel(ws.tree, q, ws.poses)
        Mq[:, :] = Mnext
        M[:, :] = Fnext
    else:
        crba_kernel(ws.tree, ws.lam, q, ws.poses, ws.jac, ws.inertia6, M)
        Mq[:, :] = M
        if ltdl_kernel(ws.lam, M) != 0:
            return SINGULAR
    kept[0] = 0.0
    # applied forces without the velocity products: τ + joint forces − g(q)
    zero = ws.dofs[2]
    for k in range(nv):
        zero[k] = 0.0
    rnea_posed(ws.tree, q, zero, zero, T.gravity_on, False, ws.poses, ws.spatial, ws.dofs[3])
    joint_forces(T, A, q, v, tau, f)
    for r in range(nv):
        s = 0.0
        for k in range(nv):
            s += Mq[r, k] * v[k]
        p[r] = s + h * (f[r] - ws.dofs[3, r])
    u[:] = v
    converged = False
    last = 0.0
    for it in range(50):
        kinetic_gradient_posed(ws.tree, q, u, ws.poses, ws.spatial, nxt)
        big = 0.0
        for k in range(nv):
            nxt[k] = p[k] + h * nxt[k]
        ltdl_solve(ws.lam, M, nxt)
        diff = 0.0
        for k in range(nv):
            diff = max(diff, abs(nxt[k] - u[k]))
            big = max(big, abs(nxt[k]))
            u[k] = nxt[k]
        # the iteration contracts by ρ ≈ h·|v| (estimated by successive differences): u is then
        # within ρ/(1 − ρ)·diff of the fixed point (the contraction mapping theorem's a-posteriori
        # bound), which saves the last iteration the plain test diff ≤ tol would take
        rho = diff / last if it > 0 else 1.0
        last = diff
        if (rho < 0.5 and diff * rho / (1.0 - rho) <= 1e-14 * (1.0 + big)) or diff <= 1e-14 * (1.0 + big):
            converged = True
            break
    if not converged:
        return SINGULAR - 1  # the checked path says so
    integrate_kernel(ws.tree, q, u, h, q_out)
    matvec(Mq, u, v_out)
    crba_kernel(ws.tree, ws.lam, q_out, ws.poses, ws.jac, ws.inertia6, M)
    Mnext[:, :] = M
    if ltdl_kernel(ws.lam, M) != 0:
        return SINGULAR
    Fnext[:, :] = M
    key[:] = q_out
    kept[0] = 1.0
    ltdl_solve(ws.lam, M, v_out)
    if C is not None:
        return min(contact_after_step(ws, T, C, q, v, q_out, v_out), 0)
    return 0


# ------------------------------------------------------------------ one step, a rollout
@njit(cache=True, nogil=True, inline="always")
def fused_step(core, ws, T, loops, A, C, q, v, tau, q_out, v_out):
    """One step: check and clamp τ, the integrator's ``core``, then the
    end of step (finiteness, position limits, velocity clamping) and, when
    the step succeeded, the actuators' activations (MuJoCo's mj_advance)."""
    flags = applied(T, tau)
    if flags < 0:
        return flags
    if A is not None:
        actuators_begin(A)
    W = T.work
    q1, v1 = W[ROW_Q1, :T.nq], W[ROW_V1, :T.nv]
    st = core(ws, T, loops, A, C, q, v, T.tau, q1, v1)
    if st != 0:
        return st if st < 0 else -st
    if C is not None:
        flags |= C.head[CF.FLAGS]
    st = end_of_step_kernel(ws.tree, ws.lam, q1, v1, T.vmax, T.clamp_velocity, T.lim_q, T.lim_v, T.lim_sign,
                            T.lim_bound, T.restitution, T.threshold, ws.poses, ws.jac, ws.inertia6, ws.M, q_out,
                            v_out, T.vel_mask)
    if st < 0:
        return st
    if loops is not None and T.project:  # post-stabilization onto φ = 0 and G v = 0 (ArtiSynth §0.5)
        # in the table's set: it leaves M's and A's factors at the final q for the next semi-implicit Euler step
        L = loops
        meta, Lf, G, X = table_set(T.work[1:11].reshape(10 * T.work.shape[1]), T.A, T.B, T.C, T.nq, T.nv, T.nc)
        rows = loop_tuple(L.row, L.kind, L.body_a, L.body_b, L.Pa, L.Pb, L.u, L.w, L.pitch, L.gear_row, L.gear_jq,
                          L.gear_jv, L.gear_iq, L.gear_iv, L.ratio, L.offset)
        it = project_step(ws.tree, ws.lam, q_out, v_out, rows, ws.poses, ws.jac, ws.spatial, ws.inertia6,
                          PROJECTION_TOLERANCE, PROJECTION_ITERATIONS, meta, Lf, G, X, q1, v1)
        if it < 0:
            return NOT_PROJECTED if it == -1 else SINGULAR
        if overflowed(q1) or overflowed(v1):
            return NOT_PROJECTED
        q_out[:] = q1
        v_out[:] = v1
    if T.clamp_velocity:
        for k in range(T.nv):
            if T.vel_mask[k]:
                flags |= VELOCITY_CLAMPED
                break
    if A is not None and T.na > 0:
        commit_activations(A, T.dt)
    return flags


@njit(cache=True, nogil=True, inline="always")
def control(ws, T, kind, gains, ref, q, v, u, out):
    """The built-in controllers' joint forces at (q, v) into ``out``, with
    ``u`` the feed-forward τ and ``ref`` this step's row of references
    ``[q_ref (nq), v_ref (nv), a_ref (nv)]``; ``e = q_ref ⊖ q``
    (``model.difference``, tangent space), ``ė = v_ref − v``:

    * PD: ``τ = u + K_p ⊙ e + K_d ⊙ ė``;
    * computed torque: ``τ = u + RNEA(q, v, a_ref + K_p ⊙ e + K_d ⊙ ė) +
      b ⊙ v`` (Featherstone Table 5.1, with gravity when the simulator has
      it; ``b = gains[2]``: the joint damping it cancels).

    ``gains`` rows: K_p, K_d, b."""
    nq, nv = T.nq, T.nv
    e = T.work[ROW_ERROR, :nv]
    difference_kernel(ws.tree, q, ref[:nq], e)
    for i in range(nv):
        e[i] = gains[0, i] * e[i] + gains[1, i] * (ref[nq + i] - v[i])
    if kind == COMPUTED_TORQUE:
        for i in range(nv):
            e[i] += ref[nq + nv + i]
        rnea_kernel(ws.tree, q, v, e, T.gravity_on, False, ws.poses, ws.spatial, out)
        for i in range(nv):
            out[i] += u[i] + gains[2, i] * v[i]
    else:
        for i in range(nv):
            out[i] = u[i] + e[i]


@njit(cache=True, nogil=True, inline="always")
def fused_rollout(core, ws, T, loops, A, C, q, v, taus, kind, gains, refs, ctrls, start, n, every, stop, out_q, out_v,
                  out_tau, out_flags, masks, out_ctrl, out_act, out_force):
    """Steps ``start + 1 .. start + n`` of a run from (q, v) (changed in
    place) with joint forces ``taus[k]`` at step k (one row: held) — plus,
    for ``kind`` PD or COMPUTED_TORQUE, the controller of :func:`control`
    with the gains (K_p; K_d) and the references ``refs[k]`` (one row:
    held) — recording after every ``every`` steps of the run, step k into
    row ``k // every`` of the outputs (row 0 is the caller's; ``masks[r]``:
    the effort and velocity clamp masks, written only where
    ``out_flags[r]`` says something was clamped). ``ctrls``: the actuators'
    controls of each step (one row: held; no rows: the table's controls
    stay), recorded with the activations after the step and the actuator
    forces of the step into ``out_ctrl``, ``out_act``, ``out_force``.
    Returns (steps done, status): status < 0, the next step failed with it;
    status > 0, the last step done clamped something in ``stop`` (its
    flags: the caller reports the first clamp of a run and goes on); 0,
    all done."""
    nq, nv, nu, na = T.nq, T.nv, T.nu, T.na
    qn, vn, u = T.work[ROW_QN, :nq], T.work[ROW_VN, :nv], T.work[ROW_CONTROL, :nv]
    for k in range(n):
        if nu > 0 and ctrls.shape[0] > 0:
            ctrl = actuator_view(T.ints, T.floats).ctrl
            row = 0 if ctrls.shape[0] == 1 else start + k
            for i in range(nu):
                ctrl[i] = ctrls[row, i]
        tau = taus[0] if taus.shape[0] == 1 else taus[start + k]
        if kind != 0:
            control(ws, T, kind, gains, refs[0] if refs.shape[0] == 1 else refs[start + k], q, v, tau, u)
            tau = u
        st = run_step(core, ws, T, loops, A, C, q, v, tau, qn, vn)
        if st < 0:
            return k, st
        q[:] = qn
        v[:] = vn
        if (start + k + 1) % every == 0:
            r = (start + k + 1) // every
            out_q[r] = q
            out_v[r] = v
            out_tau[r] = T.tau
            out_flags[r] = st
            if nu > 0:
                V = actuator_view(T.ints, T.floats)
                out_ctrl[r] = V.ctrl
                out_force[r] = V.force
                out_act[r] = V.act
            if st != 0:
                for i in range(nv):
                    masks[r, 0, i] = T.eff_mask[i] != 0
                    masks[r, 1, i] = T.vel_mask[i] != 0
        if st & stop:
            return k + 1, st
    return n, 0


def run_step(core, ws, T, loops, A, C, q, v, tau, q_out, v_out):
    """:func:`fused_step`; in compiled code ``core`` is the (address,
    step-table handle) of the integrator's C entry point
    (:func:`step_address`) and the step a call through it."""
    return fused_step(core, ws, T, loops, A, C, q, v, tau, q_out, v_out)


@overload(run_step, jit_options=dict(cache=True))
def _run_step_compiled(core, ws, T, loops, A, C, q, v, tau, q_out, v_out):
    if isinstance(core, types.UniTuple):
        def impl(core, ws, T, loops, A, C, q, v, tau, q_out, v_out):
            return call_address(core[0], core[1], q.ctypes.data, v.ctypes.data, tau.ctypes.data, q_out.ctypes.data,
                                v_out.ctypes.data)
        return impl
    return None


@njit(cache=True, nogil=True, inline="always")
def step_at(core, with_loops, with_actuators, handle, q, v, tau, q_out, v_out):
    """:func:`fused_step` with ``core`` on the table and workspace behind
    the step-table ``handle`` and the contiguous state vectors at the
    addresses q, v, tau, q_out, v_out: the body of the C entry points.
    ``with_loops`` None for a system without loop constraints, and
    ``with_actuators`` None for one without actuators: those stages are
    then not compiled (Numba prunes a branch on None)."""
    ints, floats, data = table_arrays(handle)
    T = table_view(ints, floats)
    nq, nv = T.nq, T.nv
    return fused_step(core, handle_workspace(data), T, None if with_loops is None else T.loops,
                      None if with_actuators is None else handle, CF.contact_view(ints[H_CONTACT]),
                      carray(f64_pointer(q), (nq,)), carray(f64_pointer(v), (nv,)),
                      carray(f64_pointer(tau), (nv,)), carray(f64_pointer(q_out), (nq,)),
                      carray(f64_pointer(v_out), (nv,)))


# The C entry points, one per integrator (and per integrator with loop constraints): each compiles its
# integrator once, and the step and rollout kernels below (compiled once for all integrators) call it
# through its address in the table (H_STEP). Module-level functions, not closures: Numba caches a
# closure's compiled code under a new key in every process.
def _explicit_euler(handle, q, v, tau, q_out, v_out):
    return step_at(explicit_euler_core, None, None, handle, q, v, tau, q_out, v_out)


def _semi_implicit_euler(handle, q, v, tau, q_out, v_out):
    return step_at(semi_implicit_euler_core, None, None, handle, q, v, tau, q_out, v_out)


def _symplectic_euler(handle, q, v, tau, q_out, v_out):
    return step_at(symplectic_euler_core, None, None, handle, q, v, tau, q_out, v_out)


def _rk4(handle, q, v, tau, q_out, v_out):
    return step_at(rk4_core, None, None, handle, q, v, tau, q_out, v_out)


def _implicit_euler(handle, q, v, tau, q_out, v_out):
    return step_at(implicit_euler_core, None, None, handle, q, v, tau, q_out, v_out)


def _trapezoidal(handle, q, v, tau, q_out, v_out):
    return step_at(trapezoidal_core, None, None, handle, q, v, tau, q_out, v_out)


def _bridson_marino(handle, q, v, tau, q_out, v_out):
    return step_at(bridson_marino_core, None, None, handle, q, v, tau, q_out, v_out)


def _explicit_euler_loops(handle, q, v, tau, q_out, v_out):
    return step_at(explicit_euler_core, True, None, handle, q, v, tau, q_out, v_out)


def _semi_implicit_euler_loops(handle, q, v, tau, q_out, v_out):
    return step_at(semi_implicit_euler_core, True, None, handle, q, v, tau, q_out, v_out)


def _rk4_loops(handle, q, v, tau, q_out, v_out):
    return step_at(rk4_core, True, None, handle, q, v, tau, q_out, v_out)


def _explicit_euler_actuators(handle, q, v, tau, q_out, v_out):
    return step_at(explicit_euler_core, None, True, handle, q, v, tau, q_out, v_out)


def _semi_implicit_euler_actuators(handle, q, v, tau, q_out, v_out):
    return step_at(semi_implicit_euler_core, None, True, handle, q, v, tau, q_out, v_out)


def _symplectic_euler_actuators(handle, q, v, tau, q_out, v_out):
    return step_at(symplectic_euler_core, None, True, handle, q, v, tau, q_out, v_out)


def _rk4_actuators(handle, q, v, tau, q_out, v_out):
    return step_at(rk4_core, None, True, handle, q, v, tau, q_out, v_out)


def _implicit_euler_actuators(handle, q, v, tau, q_out, v_out):
    return step_at(implicit_euler_core, None, True, handle, q, v, tau, q_out, v_out)


def _trapezoidal_actuators(handle, q, v, tau, q_out, v_out):
    return step_at(trapezoidal_core, None, True, handle, q, v, tau, q_out, v_out)


def _bridson_marino_actuators(handle, q, v, tau, q_out, v_out):
    return step_at(bridson_marino_core, None, True, handle, q, v, tau, q_out, v_out)


def _explicit_euler_loops_actuators(handle, q, v, tau, q_out, v_out):
    return step_at(explicit_euler_core, True, True, handle, q, v, tau, q_out, v_out)


def _semi_implicit_euler_loops_actuators(handle, q, v, tau, q_out, v_out):
    return step_at(semi_implicit_euler_core, True, True, handle, q, v, tau, q_out, v_out)


def _rk4_loops_actuators(handle, q, v, tau, q_out, v_out):
    return step_at(rk4_core, True, True, handle, q, v, tau, q_out, v_out)


CORES = {"explicit_euler": explicit_euler_core, "semi_implicit_euler": semi_implicit_euler_core,
         "symplectic_euler": symplectic_euler_core, "rk4": rk4_core, "implicit_euler": implicit_euler_core,
         "trapezoidal": trapezoidal_core, "bridson_marino": bridson_marino_core}
_ENTRY_FUNCTIONS = {(name, False, False): globals()["_" + name] for name in CORES}
_ENTRY_FUNCTIONS.update({(name, False, True): globals()[f"_{name}_actuators"] for name in CORES})
# the integrators whose fused step takes hard loop constraints
for _name in ("explicit_euler", "semi_implicit_euler", "rk4"):
    _ENTRY_FUNCTIONS[_name, True, False] = globals()[f"_{_name}_loops"]
    _ENTRY_FUNCTIONS[_name, True, True] = globals()[f"_{_name}_loops_actuators"]
_ENTRIES = {}


def step_address(name, loops=False, actuators=False):
    """The address of the C entry point ``int64 f(handle, q, v, tau,
    q_out, v_out)`` (all int64: the step table's handle and the addresses
    of contiguous float64 vectors) of integrator ``name``'s fused step,
    with the loop-constraint stages if ``loops`` and the actuators' if
    ``actuators``; compiled or loaded from Numba's cache on first use."""
    key = (name, bool(loops), bool(actuators))
    if key not in _ENTRIES:
        _ENTRIES[key] = cfunc(types.int64(*(types.int64,) * 6), cache=True, nopython=True)(_ENTRY_FUNCTIONS[key])
    return _ENTRIES[key].address


@njit(cache=True)
def step_kernel(handle, q, v, tau, q_out, v_out):
    """One fused step (the C entry point in the table behind ``handle``)
    from (q, v) with the joint forces τ into (q_out, v_out); its status.
    Vectors that are not contiguous are copied first. Keeps the GIL (a
    single state, see multibody._compiled)."""
    if not q.flags.c_contiguous:
        q = np.ascontiguousarray(q)
    if not v.flags.c_contiguous:
        v = np.ascontiguousarray(v)
    if not tau.flags.c_contiguous:
        tau = np.ascontiguousarray(tau)
    ints = carray(i64_pointer(handle), (HEADER,))
    return call_address(ints[H_STEP], handle, q.ctypes.data, v.ctypes.data, tau.ctypes.data, q_out.ctypes.data,
                        v_out.ctypes.data)


@njit(cache=True, nogil=True)
def rollout_kernel(handle, q, v, taus, kind, gains, refs, ctrls, start, n, every, stop, out_q, out_v, out_tau,
                   out_flags, masks, out_ctrl, out_act, out_force):
    """:func:`fused_rollout` on the table behind ``handle``, each step a
    call of the integrator's C entry point; ``q`` and ``v`` contiguous
    (changed in place)."""
    ints, floats, data = table_arrays(handle)
    T = table_view(ints, floats)
    return fused_rollout((ints[H_STEP], handle), handle_workspace(data), T, None, None, None, q, v, taus, kind, gains,
                         refs, ctrls, start, n, every, stop, out_q, out_v, out_tau, out_flags, masks, out_ctrl,
                         out_act, out_force)
