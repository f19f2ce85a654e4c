"""Actuators: a control vector mapped to joint or tendon forces, as
MuJoCo's ``<actuator>`` does (docs/actuators.md).

An :class:`Actuator` is MuJoCo's *general* actuator over a
:class:`~multibody.forces.transmission.Transmission` (a joint, a fixed
tendon, a spatial path): with ``l``, ``l̇`` the transmission's length and
rate times the ``gear`` and ``u`` the actuator's input,

    ``f = gain(l, l̇) · u + bias(l, l̇)``, clamped to ``forcerange``,
    ``τ = Jᵀ f`` (``J = ∂l/∂q``, :func:`~multibody.forces.transmission.along`),

with ``gaintype`` "fixed" (``gain = gainprm[0]``) or "affine"
(``gainprm[0] + gainprm[1] l + gainprm[2] l̇``), ``biastype`` "none" or
"affine" (``biasprm[0] + biasprm[1] l + biasprm[2] l̇``), or "muscle"
(MuJoCo's muscle: ``gain = −F f_L(L) f_V(V)``, ``bias = −F f_P(L)`` with
MuJoCo's curves or Sueda's, :mod:`.muscle_curves`). The input is the
control ``c`` (clamped to ``ctrlrange``) when ``dyntype`` is "none", else
the actuator's activation ``a`` (MuJoCo's ``act``), a state advanced with
the step: ``ȧ = c`` ("integrator"), ``ȧ = (c − a)/τ`` ("filter",
"filterexact": τ = ``dynprm[0]`` s), MuJoCo's muscle activation
dynamics ("muscle"), clamped to ``actrange``. The
Jacobians are exact: ``K = ∂τ/∂q = f_l JᵀJ + (geometric term)``,
``D = f_l̇ JᵀJ`` (zero where the force is clamped), so a position servo
is a spring ``−kp`` and a velocity servo a damper ``−kv`` for the implicit
integrators.

:class:`ActuatorSet` is the force element the simulator evaluates: the
actuators of one model with their controls, activations and last forces.
The scalar laws below are compiled functions used by both the Python
evaluation and the fused compiled step (integrators/_kernels.py), which
takes the actuators on joints and fixed tendons (the linear transmissions:
:func:`linear_forces`) and on spatial paths (:func:`path_forces`, over
the compiled :func:`~multibody.forces.paths.path_kernel`) into its step
table: one formula, the same numbers.
"""
import math
from typing import TYPE_CHECKING, Optional, Sequence, Tuple, Union

import numpy as np
from numba import njit

from ..errors import InputError, ModelError, MultibodyError
from ..model.checks import as_float_array
from .base import ForceElement, floats
from .muscle_curves import (MUJOCO, SUEDA, MuJoCoCurves, mujoco_activation_rate, mujoco_active_length,
                            mujoco_passive_length, mujoco_velocity, sueda_active_length, sueda_passive_length,
                            sueda_velocity)
from .paths import Path, path_kernel_work
from .transmission import (FixedTendon, JointTransmission, Transmission, TransmissionElement, TransmissionState,
                           _one_dof_joint, along, along_jacobians_into, as_transmission)
from .._typing import Array, ArrayLike, Frame

if TYPE_CHECKING:
    from ..model.model import Model

_Tr = Union[Transmission, Frame]
_Range = Optional[Tuple[float, float]]

DYN_TYPES = ("none", "integrator", "filter", "filterexact", "muscle")
GAIN_TYPES = ("fixed", "affine", "muscle")
BIAS_TYPES = ("none", "affine", "muscle")
DYN_NONE, DYN_INTEGRATOR, DYN_FILTER, DYN_FILTEREXACT, DYN_MUSCLE = range(5)
GAIN_FIXED, GAIN_AFFINE, GAIN_MUSCLE = range(3)
BIAS_NONE, BIAS_AFFINE, BIAS_MUSCLE = range(3)
# the packed table of an actuator set: one row of ints and one of floats per actuator
# (an actuator on a Path: A_START, A_COUNT locate its path's floats, A_PATH its ints, in the set's path buffers)
A_DYN, A_GAIN, A_BIAS, A_ACT, A_FLAGS, A_START, A_COUNT, A_PATH = range(8)
NI = 8
# PATH: on a spatial path, a compiled stage of the fused step (path_forces); PYTHON_FORCE: evaluated in
# Python (another transmission; in a step table, also a path the table does not compile)
CTRL_LIMITED, FORCE_LIMITED, ACT_LIMITED, ACT_EARLY, PYTHON_FORCE, PATH = 1, 2, 4, 8, 16, 32
NPRM = 9  # MuJoCo's mjNGAIN = mjNBIAS (10 in the model; the laws here read at most 9)
P_GAIN, P_BIAS, P_DYN, P_CTRL, P_FORCE, P_ACT, P_LENGTH, P_CURVES, P_GEAR = 0, 9, 18, 21, 23, 25, 27, 29, 30
NP = 32
CURVES = {"sueda": SUEDA, "mujoco": MUJOCO}  # a muscle's curve set (af[k, P_CURVES])
MINVAL = 1e-15  # MuJoCo's mjMINVAL: the floor of its time constants and scales


# ------------------------------------------------------------------ the scalar laws (compiled)
@njit(cache=True, nogil=True, inline="always")
def control_value(ai, af, k, c):
    """Actuator ``k``'s control ``c`` clamped to its ``ctrlrange`` when limited."""
    if ai[k, A_FLAGS] & CTRL_LIMITED:
        lo, hi = af[k, P_CTRL], af[k, P_CTRL + 1]
        if c < lo:
            return lo
        if c > hi:
            return hi
    return c


@njit(cache=True, nogil=True, inline="always")
def activation_rate(ai, af, k, c, a):
    """``ȧ`` of actuator ``k`` at the (clamped) control ``c`` and activation
    ``a`` (MuJoCo's ``act_dot``, mj_fwdActuation)."""
    dyn = ai[k, A_DYN]
    if dyn == DYN_INTEGRATOR:
        return c
    if dyn == DYN_FILTER or dyn == DYN_FILTEREXACT:
        return (c - a) / max(MINVAL, af[k, P_DYN])
    if dyn == DYN_MUSCLE:
        return mujoco_activation_rate(c, a, af[k, P_DYN], af[k, P_DYN + 1], af[k, P_DYN + 2])[0]
    return 0.0


@njit(cache=True, nogil=True, inline="always")
def next_activation(ai, af, k, a, rate, h):
    """The activation after a step ``h`` from ``a`` at the rate ``rate``
    (MuJoCo's mj_nextActivation): Euler, or for "filterexact" the exact
    filter ``a + ȧ τ (1 − e^(−h/τ))``; clamped to ``actrange`` when limited."""
    if ai[k, A_DYN] == DYN_FILTEREXACT:
        tau = max(MINVAL, af[k, P_DYN])
        a = a + rate * tau * (1.0 - np.exp(-h / tau))
    else:
        a = a + rate * h
    if ai[k, A_FLAGS] & ACT_LIMITED:
        lo, hi = af[k, P_ACT], af[k, P_ACT + 1]
        if a < lo:
            a = lo
        elif a > hi:
            a = hi
    return a


@njit(cache=True, nogil=True, inline="always")
def force_input(ai, af, k, c, act, act_dot, h):
    """The input ``u`` of actuator ``k``: its clamped control ``c`` without
    dynamics, else its activation (with ``actearly``: the activation after
    the step, MuJoCo's mj_nextActivation)."""
    j = ai[k, A_ACT]
    if j < 0:
        return c
    if ai[k, A_FLAGS] & ACT_EARLY:
        return next_activation(ai, af, k, act[j], act_dot[j], h)
    return act[j]


@njit(cache=True, nogil=True, inline="always")
def _muscle_scales(af, k, base, l, ld):
    """MuJoCo's normalized muscle length and velocity ``L = range₀ + (l −
    lr₀)/L0``, ``V = l̇/(L0 vmax)`` (``L0 = (lr₁ − lr₀)/(range₁ −
    range₀)``) from the parameters at ``base`` (gainprm or biasprm) and the
    lengthrange, with the divisors of ∂L/∂l and ∂V/∂l̇."""
    L0 = (af[k, P_LENGTH + 1] - af[k, P_LENGTH]) / max(MINVAL, af[k, base + 1] - af[k, base])
    sl = max(MINVAL, L0)
    sv = max(MINVAL, L0 * af[k, base + 6])
    return af[k, base] + (l - af[k, P_LENGTH]) / sl, ld / sv, sl, sv


@njit(cache=True, nogil=True)
def muscle_gain(af, k, l, ld):
    """MuJoCo's muscle gain ``−F f_L(L) f_V(V)`` (mju_muscleGain, F the
    resolved peak force gainprm[2]) and its partials in l and l̇, with
    MuJoCo's curves or Sueda's (af[k, P_CURVES])."""
    L, V, sl, sv = _muscle_scales(af, k, P_GAIN, l, ld)
    F = af[k, P_GAIN + 2]
    if af[k, P_CURVES] == SUEDA:
        fl, dfl = sueda_active_length(L)
        fv, dfv = sueda_velocity(V)
    else:
        fl, dfl = mujoco_active_length(L, af[k, P_GAIN + 4], af[k, P_GAIN + 5])
        fv, dfv = mujoco_velocity(V, af[k, P_GAIN + 8])
    return -F * fl * fv, -F * dfl * fv / sl, -F * fl * dfv / sv


@njit(cache=True, nogil=True)
def muscle_bias(af, k, l):
    """MuJoCo's passive muscle force ``−F f_P(L)`` (mju_muscleBias) and its
    partial in l."""
    L, _, sl, _ = _muscle_scales(af, k, P_BIAS, l, 0.0)
    F = af[k, P_BIAS + 2]
    if af[k, P_CURVES] == SUEDA:
        fp, dfp = sueda_passive_length(L)
    else:
        fp, dfp = mujoco_passive_length(L, af[k, P_BIAS + 5], af[k, P_BIAS + 7])
    return -F * fp, -F * dfp / sl


@njit(cache=True, nogil=True, inline="always")
def actuator_force(ai, af, k, l, ld, u):
    """``(f, ∂f/∂l, ∂f/∂l̇)`` of actuator ``k`` at length ``l``, rate ``ld``
    and input ``u``: ``gain·u + bias``, clamped to ``forcerange`` (where the
    derivatives are then zero)."""
    g = ai[k, A_GAIN]
    if g == GAIN_AFFINE:
        gl, gld = af[k, P_GAIN + 1], af[k, P_GAIN + 2]
        gain = af[k, P_GAIN] + gl * l + gld * ld
    elif g == GAIN_MUSCLE:
        gain, gl, gld = muscle_gain(af, k, l, ld)
    else:
        gain, gl, gld = af[k, P_GAIN], 0.0, 0.0
    b = ai[k, A_BIAS]
    if b == BIAS_AFFINE:
        bl, bld = af[k, P_BIAS + 1], af[k, P_BIAS + 2]
        bias = af[k, P_BIAS] + bl * l + bld * ld
    elif b == BIAS_MUSCLE:
        bias, bl = muscle_bias(af, k, l)
        bld = 0.0
    else:
        bias, bl, bld = 0.0, 0.0, 0.0
    f = gain * u
    f += bias
    fl = gl * u + bl
    fld = gld * u + bld
    if ai[k, A_FLAGS] & FORCE_LIMITED:
        lo, hi = af[k, P_FORCE], af[k, P_FORCE + 1]
        if f < lo:
            return lo, 0.0, 0.0
        if f > hi:
            return hi, 0.0, 0.0
    return f, fl, fld


@njit(cache=True, nogil=True, inline="always")
def activation_rates(ai, af, ctrl, act, out):
    """``out[j] = ȧ_j`` of every activation at the controls ``ctrl`` and
    the activations ``act``."""
    for k in range(ai.shape[0]):
        j = ai[k, A_ACT]
        if j >= 0:
            out[j] = activation_rate(ai, af, k, control_value(ai, af, k, ctrl[k]), act[j])


@njit(cache=True, nogil=True, inline="always")
def advance_activations(ai, af, act, rate, h):
    """``act ← next_activation(act, rate, h)`` for every activation, in place."""
    for k in range(ai.shape[0]):
        j = ai[k, A_ACT]
        if j >= 0:
            act[j] = next_activation(ai, af, k, act[j], rate[j], h)


@njit(cache=True, nogil=True, inline="always")
def rk4_activation_stage(ai, af, ctrl, act, k, s, h, stage, rate, update):
    """RK4's stage ``s`` of the activations (MuJoCo's mj_RungeKutta; their
    rates do not depend on q or v): ``stage = act + c_s h k[s−1]`` (c = ½,
    ½, 1; stage 0: ``act``), ``rate = k[s] = ȧ(c, stage)``; after stage 3
    ``update`` gets the update's rate ``k₀/6 + k₁/3 + k₂/3 + k₃/6``
    (MuJoCo's B, summed in its order), which :func:`advance_activations`
    applies."""
    na = act.shape[0]
    c = h if s == 3 else 0.5 * h
    for j in range(na):
        stage[j] = act[j] if s == 0 else act[j] + c * k[s - 1, j]
    activation_rates(ai, af, ctrl, stage, rate)
    for j in range(na):
        k[s, j] = rate[j]
    if s == 3:
        for j in range(na):
            update[j] = (1.0 / 6.0) * k[0, j] + (1.0 / 3.0) * k[1, j] + (1.0 / 3.0) * k[2, j] + (1.0 / 6.0) * k[3, j]


@njit(cache=True, nogil=True, inline="always")
def linear_forces(ai, af, tq, tv, tc, ctrl, act, act_dot, h, q, v, out, force, work, record):
    """``out += Σ Jᵀ f`` of the actuators on linear transmissions (entries
    ``tq``, ``tv``, ``tc``: ``l = Σ c q[iq]``, ``l̇ = Σ c v[iv]``), at the
    activations ``act`` (rates ``act_dot``). With ``record``, their force
    goes to ``force[k]`` and (l, l̇, ∂f/∂l, ∂f/∂l̇) to ``work[:, k]`` (what
    :func:`linear_jacobians` reads)."""
    for k in range(ai.shape[0]):
        if ai[k, A_FLAGS] & (PYTHON_FORCE | PATH):
            continue
        s = ai[k, A_START]
        e = s + ai[k, A_COUNT]
        l = 0.0
        ld = 0.0
        for i in range(s, e):
            l += tc[i] * q[tq[i]]
            ld += tc[i] * v[tv[i]]
        u = force_input(ai, af, k, control_value(ai, af, k, ctrl[k]), act, act_dot, h)
        f, fl, fld = actuator_force(ai, af, k, l, ld, u)
        for i in range(s, e):
            out[tv[i]] += tc[i] * f
        if record:
            force[k] = f
            work[0, k] = l
            work[1, k] = ld
            work[2, k] = fl
            work[3, k] = fld


@njit(cache=True, nogil=True, inline="always")
def linear_jacobians(ai, tv, tc, work, K, D):
    """``K += f_l JᵀJ``, ``D += f_l̇ JᵀJ`` of the actuators on linear
    transmissions, from the derivatives :func:`linear_forces` recorded."""
    for k in range(ai.shape[0]):
        if ai[k, A_FLAGS] & (PYTHON_FORCE | PATH):
            continue
        fl, fld = work[2, k], work[3, k]
        if fl == 0.0 and fld == 0.0:
            continue
        s = ai[k, A_START]
        e = s + ai[k, A_COUNT]
        for a in range(s, e):
            for b in range(s, e):
                cc = tc[a] * tc[b]
                K[tv[a], tv[b]] += fl * cc
                D[tv[a], tv[b]] += fld * cc


@njit(cache=True, nogil=True)
def path_forces(ai, af, pf, pi, ctrl, act, act_dot, h, oMi, J, v, out, force, work, scratch, record, jac, slot):
    """``out += Σ Jᵀ f`` of the actuators on paths (rows flagged PATH and
    not PYTHON_FORCE) at the kinematics ``oMi`` (world body poses) and
    ``J`` (world joint Jacobian) of (q, v): each path by
    :func:`~multibody.forces.paths.path_kernel` over its buffers in ``pf``
    and ``pi`` (:class:`ActuatorSet`), its length, rate and moment arm
    times the gear, the law :func:`actuator_force` at the activations
    ``act`` (rates ``act_dot``). The sum starts from zero in ``scratch[:nv]``
    and is added to ``out`` at the end (the order of the Python evaluation,
    which hands the fused step its sum as external forces: the same bits).
    Each path's output (J, and with ``jac`` Hᵀv and H, geared) is kept in
    ``scratch`` after the sum, a ``slot`` of nv(nv + 2) (a table whose
    steps take Jacobians) or nv floats per path row, for
    :func:`path_jacobians`; the rest of
    ``scratch`` and the last nv entries of ``pi`` are the path kernel's
    scratch. With ``record`` the forces and (l, l̇, ∂f/∂l, ∂f/∂l̇) are
    recorded as by :func:`linear_forces`. Returns 0, or the path kernel's
    status of the first path with a zero-length segment (nothing added)."""
    nv = J.shape[1]
    size = nv * (nv + 2) if jac else nv
    acc = scratch[:nv]
    for i in range(nv):
        acc[i] = 0.0
    npath = 0
    for k in range(ai.shape[0]):
        if (ai[k, A_FLAGS] & PATH) and not (ai[k, A_FLAGS] & PYTHON_FORCE):
            npath += 1
    kwork = scratch[nv + npath * slot:]
    idx = pi[pi.shape[0] - nv:]
    o = nv
    for k in range(ai.shape[0]):
        flags = ai[k, A_FLAGS]
        if (flags & PYTHON_FORCE) or not (flags & PATH):
            continue
        s = ai[k, A_START]
        buf = scratch[o:o + size]
        o += slot
        st, l, ld = path_kernel_work(oMi, J, v, pf[s:s + ai[k, A_COUNT]], pi[ai[k, A_PATH]:], buf, jac, kwork, idx)
        if st != 0:
            return st
        g = af[k, P_GEAR]
        if g != 1.0:  # l = g l_path, J = g J_path, ∂l̇/∂q = g Hᵀv, and the geometric term g f H
            l = g * l
            ld = g * ld
            for i in range(size):
                buf[i] = g * buf[i]
        u = force_input(ai, af, k, control_value(ai, af, k, ctrl[k]), act, act_dot, h)
        f, fl, fld = actuator_force(ai, af, k, l, ld, u)
        for i in range(nv):
            acc[i] += buf[i] * f
        if record:
            force[k] = f
            work[0, k] = l
            work[1, k] = ld
            work[2, k] = fl
            work[3, k] = fld
    for i in range(nv):
        out[i] += acc[i]
    return 0


@njit(cache=True, nogil=True)
def path_jacobians(ai, scratch, work, force, K, D):
    """``K += f_l JJᵀ + f_l̇ J(Hᵀv)ᵀ + f H``, ``D += f_l̇ JJᵀ`` of the
    actuators on paths (:func:`~multibody.forces.transmission.along`'s
    Jacobians) from what :func:`path_forces` kept with ``record`` and
    ``jac`` (J, Hᵀv, H in ``scratch``; f, f_l, f_l̇ recorded)."""
    nv = K.shape[0]
    size = nv * (nv + 2)
    o = nv
    for k in range(ai.shape[0]):
        flags = ai[k, A_FLAGS]
        if (flags & PYTHON_FORCE) or not (flags & PATH):
            continue
        buf = scratch[o:o + size]
        o += size
        along_jacobians_into(buf[:nv], buf[nv:2 * nv], work[2, k], work[3, k], K, D)
        f = force[k]
        if f != 0.0:
            H = buf[2 * nv:]
            for i in range(nv):
                for j in range(nv):
                    K[i, j] += f * H[i * nv + j]


@njit(cache=True, nogil=True)
def _forces_py(ai, af, ctrl, act, h, length, rate, out):
    """Python path: ``out[k] = (f, f_l, f_l̇)`` of actuator k at the lengths
    and rates given (transmissions evaluated in Python)."""
    nu = ai.shape[0]
    act_dot = np.zeros(act.shape[0])
    activation_rates(ai, af, ctrl, act, act_dot)
    for k in range(nu):
        u = force_input(ai, af, k, control_value(ai, af, k, ctrl[k]), act, act_dot, h)
        f, fl, fld = actuator_force(ai, af, k, length[k], rate[k], u)
        out[k, 0] = f
        out[k, 1] = fl
        out[k, 2] = fld


@njit(cache=True, nogil=True)
def _rk4_stages_py(ai, af, ctrl, act, h, stages, rate):
    """Python path: RK4's four stage activations ``stages`` (4, na) and the
    weighted rate of its update ``rate`` (:func:`rk4_activation_stage`, as
    the fused RK4 stages them)."""
    k = np.zeros((4, act.shape[0]))
    scratch = np.zeros(act.shape[0])
    for s in range(4):
        rk4_activation_stage(ai, af, ctrl, act, k, s, h, stages[s], scratch, rate)


@njit(cache=True, nogil=True)
def _advance_py(ai, af, ctrl, act, h, rk4):
    """Python path: the activations one step on, MuJoCo's update (mj_advance)
    at the rate ȧ(c, a) (Euler) or, with ``rk4``, at RK4's weighted stage
    rates."""
    na = act.shape[0]
    rate = np.zeros(na)
    if rk4:
        _rk4_stages_py(ai, af, ctrl, act, h, np.zeros((4, na)), rate)
    else:
        activation_rates(ai, af, ctrl, act, rate)
    advance_activations(ai, af, act, rate, h)


# ------------------------------------------------------------------ descriptions
def _code(owner, value, names, what):
    if value not in names:
        raise owner.error(f"{what} must be one of {', '.join(map(repr, names))}, got {value!r}")
    return names.index(value)


def _prm(owner, value, what, default):
    """A MuJoCo parameter vector: up to 9 finite numbers, padded with ``default``'s tail (zeros)."""
    a = np.atleast_1d(floats(owner, value, what)).astype(float)
    if a.ndim != 1 or a.size > NPRM:
        raise owner.error(f"{what} must be at most {NPRM} numbers, got shape {np.shape(value)}")
    if not np.all(np.isfinite(a)):
        raise owner.error(f"{what} must be finite, got {value!r}")
    out = np.array(default, dtype=float)
    out[:a.size] = a
    return out


def _range(owner, value, limited, what):
    """``(limited, (lo, hi))``: MuJoCo's ``*limited`` ("auto" = None:
    limited iff a range is given) and ``*range`` (finite, lo <= hi)."""
    if limited is not None and not isinstance(limited, (bool, np.bool_)):
        raise owner.error(f"{what[:-5]}limited must be True, False or None (auto), got {limited!r}")
    if value is None:
        if limited:
            raise owner.error(f"{what[:-5]}limited=True needs a {what}")
        return False, (0.0, 0.0)
    r = floats(owner, value, what)
    if r.shape != (2,) or not np.all(np.isfinite(r)):
        raise owner.error(f"{what} must be two finite numbers (low, high), got {value!r}")
    if r[0] > r[1]:
        raise owner.error(f"{what} {tuple(r.tolist())} has low > high")
    return (True if limited is None else bool(limited)), (float(r[0]), float(r[1]))


class Actuator:
    """MuJoCo's general actuator over ``transmission`` (a
    :class:`~multibody.forces.transmission.Transmission` or a joint name /
    index, as :class:`~multibody.forces.transmission.JointTransmission`);
    see the module docstring for the force law. Arguments are MuJoCo's:

    * ``gear``: scales the transmission (``l = gear · l_transmission``,
      ``τ = gear · Jᵀ f``);
    * ``dyntype`` "none" | "integrator" | "filter" | "filterexact"
      (``dynprm[0]``: the time constant τ, s, > 0);
    * ``gaintype`` "fixed" | "affine" | "muscle", ``gainprm``; ``biastype``
      "none" | "affine" | "muscle", ``biasprm`` (up to 9 numbers, padded
      with zeros; MuJoCo's defaults gainprm = (1,), biasprm = 0, dynprm =
      (1,)); a muscle's prm are MuJoCo's (range₀, range₁, force, scale,
      lmin, lmax, vmax, fpmax, fvmax) (see :class:`Muscle`), with the
      ``curves`` "mujoco" or "sueda" and the ``lengthrange`` (lr₀, lr₁);
    * ``ctrlrange``, ``forcerange``, ``actrange`` (low <= high) and
      ``ctrllimited``, ``forcelimited``, ``actlimited`` (None, MuJoCo's
      "auto": limited iff the range is given);
    * ``actearly``: the force uses the activation after the step (MuJoCo's
      ``actearly``), so a filter actuator acts without a step's delay.

    ``name`` names the actuator in errors and trajectories. Bad values are
    a :class:`~multibody.errors.ModelError` naming the actuator; a
    transmission that does not fit the model is one when the actuator is
    bound (:class:`ActuatorSet`, :class:`~multibody.Simulator`).

    Parameters
    ----------
    transmission : Transmission, str or int
        What the actuator pulls on: a
        :class:`~multibody.forces.transmission.Transmission`, or a joint
        name or index (a joint transmission).
    gear : float, default 1.0
        Scales the transmission: ``l = gear · l_transmission``, ``τ = gear · Jᵀ f``.
    dyntype : {"none", "integrator", "filter", "filterexact"}
        Activation dynamics (default "none").
    dynprm : sequence of float, default (1.0,)
        Their parameters; ``dynprm[0]`` the time constant (s, > 0).
    gaintype : {"fixed", "affine", "muscle"}
        The gain law (default "fixed").
    gainprm : sequence of float, default (1.0,)
        Its parameters (up to 9, padded with zeros).
    biastype : {"none", "affine", "muscle"}
        The bias law (default "none").
    biasprm : sequence of float, default ()
        Its parameters (up to 9, padded with zeros).
    ctrlrange, forcerange : (float, float), optional
        Clamps of the control and of the force (N or N·m, before the
        gear); low <= high.
    actrange : (float, float), optional
        Clamp of the activation.
    ctrllimited, forcelimited, actlimited : bool, optional
        Whether each range applies; None: iff the range is given (MuJoCo's "auto").
    actearly : bool, default False
        The force uses the activation after the step (MuJoCo's ``actearly``).
    lengthrange : (float, float), optional
        A muscle's length range (lr₀, lr₁) (m or rad, of the geared transmission).
    curves : {"mujoco", "sueda"}
        A muscle's force–length–velocity curves (default "mujoco").
    name : str, optional
        The actuator's name in errors and trajectories.

    Raises
    ------
    ModelError
        A bad value, naming the actuator.
"""

    def __init__(self, transmission: _Tr, *, gear: float = 1.0, dyntype: str = "none", dynprm: Sequence[float] = (1.0,),
                 gaintype: str = "fixed", gainprm: Sequence[float] = (1.0,), biastype: str = "none",
                 biasprm: Sequence[float] = (), ctrlrange: _Range = None, forcerange: _Range = None,
                 actrange: _Range = None, ctrllimited: Optional[bool] = None, forcelimited: Optional[bool] = None,
                 actlimited: Optional[bool] = None, actearly: bool = False, lengthrange: _Range = None,
                 curves: str = "mujoco", name: Optional[str] = None) -> None:
        if name is not None and not isinstance(name, str):
            raise ModelError(f"an actuator's name must be a string, got {name!r}")
        self.name = name
        self.transmission = as_transmission(self, transmission)
        g = floats(self, gear, "gear")
        if g.ndim != 0 or not np.isfinite(g):
            raise self.error(f"gear must be a finite number, got {gear!r}")
        self.gear = float(g)
        self.dyntype = DYN_TYPES[_code(self, dyntype, DYN_TYPES, "dyntype")]
        self.gaintype = GAIN_TYPES[_code(self, gaintype, GAIN_TYPES, "gaintype")]
        self.biastype = BIAS_TYPES[_code(self, biastype, BIAS_TYPES, "biastype")]
        self.dynprm = _prm(self, dynprm, "dynprm", np.r_[1.0, np.zeros(NPRM - 1)])
        self.gainprm = _prm(self, gainprm, "gainprm", np.r_[1.0, np.zeros(NPRM - 1)])
        self.biasprm = _prm(self, biasprm, "biasprm", np.zeros(NPRM))
        self.ctrllimited, self.ctrlrange = _range(self, ctrlrange, ctrllimited, "ctrlrange")
        self.forcelimited, self.forcerange = _range(self, forcerange, forcelimited, "forcerange")
        self.actlimited, self.actrange = _range(self, actrange, actlimited, "actrange")
        self.actearly = bool(actearly)
        if self.dyntype in ("filter", "filterexact") and not self.dynprm[0] > 0:
            raise self.error(f"a {self.dyntype} actuator needs a time constant dynprm[0] > 0 (s), got "
                             f"{self.dynprm[0]}")
        if self.actearly and self.dyntype == "none":
            self.actearly = False  # MuJoCo: no activation, nothing to take early
        self.lengthrange = None if lengthrange is None else _range(self, lengthrange, True, "lengthrange")[1]
        if curves not in CURVES:
            raise self.error(f"curves must be 'mujoco' or 'sueda', got {curves!r}")
        self.curves = curves
        if self.dyntype == "muscle" and not (self.dynprm[0] > 0 and self.dynprm[1] > 0 and self.dynprm[2] >= 0):
            raise self.error(f"a muscle's time constants dynprm[:2] must be > 0 (s) and its tausmooth dynprm[2] >= 0, "
                             f"got {tuple(self.dynprm[:3])}")
        for kind, prm in (("gain", self.gainprm), ("bias", self.biasprm)):
            if getattr(self, kind + "type") == "muscle":
                if not (prm[0] < prm[1] and prm[6] > 0):
                    raise self.error(f"a muscle {kind} needs range₀ < range₁ and vmax > 0 ({kind}prm[0:2], "
                                     f"{kind}prm[6]), got {tuple(prm)}")
                if prm[2] < 0 and prm[3] <= 0:
                    raise self.error(f"a muscle {kind} needs a force {kind}prm[2] > 0, or a scale {kind}prm[3] > 0 "
                                     f"for MuJoCo's automatic force scale/acc0, got {tuple(prm[2:4])}")
                if curves == "mujoco":
                    try:
                        MuJoCoCurves(prm[4], prm[5], prm[7], prm[8])
                    except ModelError as e:
                        raise self.error(f"{kind}prm: {e}") from None

    # ------------------------------------------------------------ naming
    def _label(self):
        return type(self).__name__

    def __repr__(self):
        return f"{self._label()}({self.name!r})" if self.name else f"{self._label()}({self.transmission!r})"

    def error(self, msg, cls=ModelError):
        return cls(f"{self!r}: {msg}")

    @property
    def stateful(self) -> bool:
        """Whether the actuator has an activation (``dyntype`` not "none")."""
        return self.dyntype != "none"

    # ------------------------------------------------------------ the law
    def _row(self, act_index=-1, start=0, count=0, python=False, path=-1):
        """This actuator's rows of the packed table (ints, floats); on a
        path (``path`` >= 0: the offset of its ints) ``start``, ``count``
        locate its floats."""
        ri = np.zeros(NI, np.int64)
        ri[A_DYN] = DYN_TYPES.index(self.dyntype)
        ri[A_GAIN] = GAIN_TYPES.index(self.gaintype)
        ri[A_BIAS] = BIAS_TYPES.index(self.biastype)
        ri[A_ACT] = act_index
        ri[A_FLAGS] = (CTRL_LIMITED * self.ctrllimited | FORCE_LIMITED * self.forcelimited
                       | ACT_LIMITED * self.actlimited | ACT_EARLY * self.actearly | PYTHON_FORCE * python
                       | PATH * (path >= 0))
        ri[A_START], ri[A_COUNT], ri[A_PATH] = start, count, max(path, 0)
        rf = np.zeros(NP)
        rf[P_GAIN:P_GAIN + NPRM] = self.gainprm
        rf[P_BIAS:P_BIAS + NPRM] = self.biasprm
        rf[P_DYN:P_DYN + 3] = self.dynprm[:3]
        rf[P_CTRL:P_CTRL + 2] = self.ctrlrange
        rf[P_FORCE:P_FORCE + 2] = self.forcerange
        rf[P_ACT:P_ACT + 2] = self.actrange
        if self.lengthrange is not None:
            rf[P_LENGTH:P_LENGTH + 2] = self.lengthrange
        rf[P_CURVES] = CURVES[self.curves]
        rf[P_GEAR] = self.gear
        return ri, rf

    @property
    def muscle(self) -> bool:
        """Whether its gain or bias is a muscle's."""
        return "muscle" in (self.gaintype, self.biastype)

    def force(self, length: float, rate: float, u: float) -> Tuple[float, ...]:
        """``(f, ∂f/∂l, ∂f/∂l̇)`` at the (geared) length and rate and the
        input ``u`` (the clamped control, or the activation), N or N·m."""
        ri, rf = self._row()
        out = np.zeros((1, 3))
        _forces_py(ri[None, :], rf[None, :], np.array([float(u)]), np.zeros(0), 0.0, np.array([float(length)]),
                   np.array([float(rate)]), out)
        return tuple(float(x) for x in out[0])


class Motor(Actuator):
    """A motor: ``f = gear-scaled control`` (MuJoCo ``<motor>``: fixed gain
    1, no bias, no dynamics); ``ctrlrange`` / ``forcerange`` clamp the
    control and the force (N or N·m, before the gear).

    Parameters
    ----------
    transmission : Transmission, str or int
        What the actuator pulls on: a
        :class:`~multibody.forces.transmission.Transmission`, or a joint
        name or index (a joint transmission).
    gear : float, default 1.0
        Scales the transmission and the force.
    ctrlrange, forcerange : (float, float), optional
        Clamps of the control and of the force (N or N·m, before the
        gear); low <= high.
    name : str, optional
        The actuator's name in errors and trajectories.

    Raises
    ------
    ModelError
        A bad value, naming the actuator.
"""

    def __init__(self, transmission: _Tr, gear: float = 1.0, ctrlrange: _Range = None, forcerange: _Range = None,
                 name: Optional[str] = None) -> None:
        super().__init__(transmission, gear=gear, ctrlrange=ctrlrange, forcerange=forcerange, name=name)


class PositionServo(Actuator):
    """A position servo (MuJoCo ``<position>``): ``f = kp (c − l) − kv l̇``
    with the control ``c`` the target length (rad or m, after the gear),
    ``kp`` (N·m/rad or N/m) and ``kv`` (N·m·s/rad or N·s/m) >= 0. With
    ``timeconst`` > 0 (s) the target is the control filtered exactly
    (``dyntype="filterexact"``), as MuJoCo's ``timeconst``.

    Parameters
    ----------
    transmission : Transmission, str or int
        What the actuator pulls on: a
        :class:`~multibody.forces.transmission.Transmission`, or a joint
        name or index (a joint transmission).
    kp : float
        Position gain (N·m/rad or N/m), >= 0.
    kv : float, default 0.0
        Damping gain (N·m·s/rad or N·s/m), >= 0.
    gear : float, default 1.0
        Scales the transmission and the force.
    ctrlrange, forcerange : (float, float), optional
        Clamps of the control and of the force (N or N·m, before the
        gear); low <= high.
    timeconst : float, default 0.0
        Time constant (s) of the target's filter; 0: no filter.
    name : str, optional
        The actuator's name in errors and trajectories.

    Raises
    ------
    ModelError
        A bad value, naming the actuator.
"""

    def __init__(self, transmission: _Tr, kp: float, kv: float = 0.0, gear: float = 1.0, ctrlrange: _Range = None,
                 forcerange: _Range = None, timeconst: float = 0.0, name: Optional[str] = None) -> None:
        kp, kv, tc = (_nonnegative(self, x, w, name) for x, w in ((kp, "kp"), (kv, "kv"), (timeconst, "timeconst")))
        super().__init__(transmission, gear=gear, gainprm=(kp,), biastype="affine", biasprm=(0.0, -kp, -kv),
                         dyntype="filterexact" if tc > 0 else "none", dynprm=(tc if tc > 0 else 1.0,),
                         ctrlrange=ctrlrange, forcerange=forcerange, name=name)


class Muscle(Actuator):
    """MuJoCo's muscle (``<muscle>``): activation dynamics of time constants
    ``timeconst`` = (activation, deactivation) s (smoothed over
    ``tausmooth``), force ``f = −F (a f_L(L) f_V(V) + f_P(L))`` (a tension:
    f < 0 shortens the transmission) with ``L = range₀ + (l − lr₀)/L0``,
    ``V = l̇/(L0 vmax)``, ``L0 = (lr₁ − lr₀)/(range₁ − range₀)`` from the
    ``lengthrange`` (lr₀, lr₁) (m or rad, of the geared transmission;
    default for a joint transmission: the joint's limits times the gear),
    peak force ``F = force`` (N) or, ``force < 0``, ``scale/acc0`` (MuJoCo's
    automatic scale, acc0 = ‖M⁻¹J‖ at the neutral configuration); MuJoCo's
    curves (``lmin``, ``lmax``, ``fpmax``, ``fvmax``) or Sueda's
    (``curves="sueda"``: Sueda's f_L, f_P, f_V with the same scales, see
    :meth:`hill`).

    Parameters
    ----------
    transmission : Transmission, str or int
        What the actuator pulls on: a
        :class:`~multibody.forces.transmission.Transmission`, or a joint
        name or index (a joint transmission).
    lengthrange : (float, float), optional
        (lr₀, lr₁), m or rad of the geared transmission; default for a
        joint transmission: the joint's limits times the gear.
    gear : float, default 1.0
        Scales the transmission and the force.
    range : (float, float), default (0.75, 1.05)
        The normalized operating lengths (range₀, range₁).
    force : float, default -1.0
        Peak force F (N); < 0: ``scale / acc0``.
    scale : float, default 200.0
        MuJoCo's automatic force scale.
    lmin, lmax : float
        Normalized lengths where the active force vanishes (0.5, 1.6).
    vmax : float, default 1.5
        Shortening velocity at which the force vanishes, in L0 per second.
    fpmax : float, default 1.3
        Passive force at lmax, in units of F.
    fvmax : float, default 1.2
        Force at the largest lengthening velocity, in units of F.
    timeconst : (float, float), default (0.01, 0.04)
        Activation and deactivation time constants (s).
    tausmooth : float, default 0.0
        Width over which the time constant changes smoothly.
    curves : {"mujoco", "sueda"}
        The curves (default "mujoco").
    ctrlrange, forcerange, actrange : (float, float), optional
        Clamps of the control, the force (N) and the activation.
    actearly : bool, default False
        The force uses the activation after the step.
    name : str, optional
        The actuator's name in errors and trajectories.

    Raises
    ------
    ModelError
        A bad value, naming the actuator.
    """

    def __init__(self, transmission: _Tr, lengthrange: _Range = None, gear: float = 1.0,
                 range: Tuple[float, float] = (0.75, 1.05), force: float = -1.0, scale: float = 200.0,
                 lmin: float = 0.5, lmax: float = 1.6, vmax: float = 1.5, fpmax: float = 1.3, fvmax: float = 1.2,
                 timeconst: Tuple[float, float] = (0.01, 0.04), tausmooth: float = 0.0, curves: str = "mujoco",
                 ctrlrange: _Range = None, forcerange: _Range = None, actrange: _Range = None,
                 actearly: bool = False, name: Optional[str] = None) -> None:
        try:
            r0, r1 = (float(x) for x in range)
            ta, td = (float(x) for x in timeconst)
        except (TypeError, ValueError):
            raise ModelError(f"Muscle({name or transmission!r}): range and timeconst must be two numbers each, got "
                             f"{range!r}, {timeconst!r}") from None
        prm = (r0, r1, force, scale, lmin, lmax, vmax, fpmax, fvmax)
        super().__init__(transmission, gear=gear, dyntype="muscle", dynprm=(ta, td, tausmooth), gaintype="muscle",
                         gainprm=prm, biastype="muscle", biasprm=prm, ctrlrange=ctrlrange, forcerange=forcerange,
                         actrange=actrange, actearly=actearly, lengthrange=lengthrange, curves=curves, name=name)

    @classmethod
    def hill(cls, transmission: _Tr, max_force: float, optimal_length: float, tendon_slack_length: float,
             max_velocity: float, curves: str = "sueda", gear: float = 1.0,
             timeconst: Tuple[float, float] = (0.01, 0.04), tausmooth: float = 0.0,
             name: Optional[str] = None) -> "Muscle":
        """The muscle of a :class:`~multibody.forces.muscles.HillMuscle`
        (``f_opt``, ``l_opt``, ``l_T``, ``v_max``: ``l̃ = (l − l_T)/l_opt``,
        ``ṽ = l̇/(l_opt v_max)``) as an actuator driven by MuJoCo's
        activation dynamics: range (0, 1), lengthrange ``(l_T, l_T +
        l_opt)``, Sueda's curves by default."""
        return cls(transmission, (tendon_slack_length, tendon_slack_length + optimal_length), gear, (0.0, 1.0),
                   max_force, 200.0, vmax=max_velocity, timeconst=timeconst, tausmooth=tausmooth, curves=curves,
                   name=name)


class VelocityServo(Actuator):
    """A velocity servo (MuJoCo ``<velocity>``): ``f = kv (c − l̇)`` with
    the control ``c`` the target rate and ``kv`` >= 0.

    Parameters
    ----------
    transmission : Transmission, str or int
        What the actuator pulls on: a
        :class:`~multibody.forces.transmission.Transmission`, or a joint
        name or index (a joint transmission).
    kv : float
        Velocity gain (N·m·s/rad or N·s/m), >= 0.
    gear : float, default 1.0
        Scales the transmission and the force.
    ctrlrange, forcerange : (float, float), optional
        Clamps of the control and of the force (N or N·m, before the
        gear); low <= high.
    name : str, optional
        The actuator's name in errors and trajectories.

    Raises
    ------
    ModelError
        A bad value, naming the actuator.
"""

    def __init__(self, transmission: _Tr, kv: float, gear: float = 1.0, ctrlrange: _Range = None,
                 forcerange: _Range = None, name: Optional[str] = None) -> None:
        kv = _nonnegative(self, kv, "kv", name)
        super().__init__(transmission, gear=gear, gainprm=(kv,), biastype="affine", biasprm=(0.0, 0.0, -kv),
                         ctrlrange=ctrlrange, forcerange=forcerange, name=name)


def _nonnegative(cls_or_self, value, what, name):
    label = f"{type(cls_or_self).__name__}({name!r})" if name else type(cls_or_self).__name__
    try:
        x = float(as_float_array(value, what))
    except (InputError, TypeError) as e:
        raise ModelError(f"{label}: {e}") from None
    if not (math.isfinite(x) and x >= 0):
        raise ModelError(f"{label}: {what} must be a finite number >= 0, got {value!r}")
    return x


# ------------------------------------------------------------------ the set
def _linear_entries(actuator, model, binding):
    """``[(q index, v index, coefficient)]`` of an actuator on a joint or a
    fixed tendon (l = Σ c q[iq]), gear included; None for other
    transmissions (evaluated in Python)."""
    tr, g = actuator.transmission, actuator.gear
    if type(tr) is JointTransmission:
        iq, iv, gear = binding
        return [(iq, iv, g * gear)]
    if type(tr) is FixedTendon:
        out = []
        for (joint, _), c in zip(tr.coefficients, binding[1]):
            j = _one_dof_joint(actuator, model, joint)
            out.append((j.q_slice.start, j.v_slice.start, g * c))
        return out
    return None


class ActuatorInputs:
    """The evolving arrays of an actuator set: controls ``ctrl`` (nu),
    activations ``act`` (na) and the last forces ``force`` (nu). The fused
    step table rebinds them to its own sections (shared memory)."""

    def __init__(self, nu, na):
        self.ctrl, self.act, self.force = np.zeros(nu), np.zeros(na), np.zeros(nu)


class ActuatorSet(ForceElement):
    """The actuators of ``model`` as one force element: ``τ = Σ Jᵀ f`` at
    the controls :attr:`ctrl` and activations :attr:`act` it holds, with
    exact K and D (module docstring). ``dt`` (s) is the step an
    ``actearly`` actuator looks ahead by (None: its current activation).
    Every actuator is bound now: a ModelError names the bad one
    (``actuators[k]: Motor('m'): model 'arm' has no joint 'x'``)."""

    def __init__(self, actuators, model, dt=None, name="actuators"):
        super().__init__(name)
        if isinstance(actuators, Actuator):
            actuators = (actuators,)
        if isinstance(actuators, (str, bytes, dict)) or not hasattr(actuators, "__iter__"):
            raise InputError(f"actuators must be a list of Actuator (multibody.forces.actuators), got {actuators!r}")
        self.actuators = tuple(actuators)
        self.model = model
        self.dt = dt
        nu = len(self.actuators)
        ints, fl = np.zeros((nu, NI), np.int64), np.zeros((nu, NP))
        tq, tv, tc = [], [], []
        pf, pi = [], []  # the paths' buffers (Path._bind: fbuf, ibuf), concatenated
        nf = ni = 0
        self.path_coordinates = {}  # actuator -> the coordinates that move a point of its path
        self.transmission_bindings, self.act_index = [], np.full(nu, -1, np.int64)
        na = 0
        names = set()
        for k, a in enumerate(self.actuators):
            if not isinstance(a, Actuator):
                raise InputError(f"actuators[{k}] = {a!r} is not an Actuator (multibody.forces.actuators)")
            if a.name is not None:
                if a.name in names:
                    raise ModelError(f"actuators[{k}]: two actuators are named {a.name!r}")
                names.add(a.name)
            try:
                b = a.transmission._bind(a, model)
                entries = _linear_entries(a, model, b)
            except MultibodyError as err:
                raise _prefixed(err, f"actuators[{k}]: {err}") from err
            self.transmission_bindings.append(b)
            row_f = None
            if a.muscle:
                row_f = self._resolve_muscle(k, a, b, model)
            if a.stateful:
                self.act_index[k] = na
                na += 1
            start = len(tq)
            if entries is not None:
                for iq, iv, c in entries:
                    tq.append(iq)
                    tv.append(iv)
                    tc.append(c)
                ints[k], fl[k] = a._row(self.act_index[k], start, len(tq) - start)
            elif type(a.transmission) is Path:
                pf.append(b.fbuf)
                pi.append(b.ibuf)
                n = int(b.ibuf[0])
                self.path_coordinates[k] = np.flatnonzero(b.fbuf[3 * n:3 * n + n * model.nv].reshape(n, -1).any(0))
                ints[k], fl[k] = a._row(self.act_index[k], nf, len(b.fbuf), path=ni)
                nf += len(b.fbuf)
                ni += len(b.ibuf)
            else:
                ints[k], fl[k] = a._row(self.act_index[k], start, 0, python=True)
            if row_f is not None:
                fl[k, P_LENGTH:P_LENGTH + 2] = row_f[0]
                fl[k, P_GAIN + 2], fl[k, P_BIAS + 2] = row_f[1]
        self.nu, self.na = nu, na
        self.ints, self.floats = ints, fl
        self.tq, self.tv = np.array(tq, np.int64), np.array(tv, np.int64)
        self.tc = np.array(tc, dtype=float)
        self.path_floats = np.concatenate(pf) if pf else np.zeros(0)
        self.path_ints = np.concatenate(pi).astype(np.int64) if pi else np.zeros(0, np.int64)
        self.python = np.flatnonzero(ints[:, A_FLAGS] & PYTHON_FORCE) if nu else np.zeros(0, np.int64)
        self.paths = np.flatnonzero(ints[:, A_FLAGS] & PATH) if nu else np.zeros(0, np.int64)
        self.geometric_stiffness = any(not a.transmission.linear for a in self.actuators)
        self.io = ActuatorInputs(nu, na)
        self._stages = None  # RK4's stage activations (begin_stages), used by successive evaluations
        self._stage = 0
        self._evaluated = np.arange(nu)
        self.record_forces = False  # _evaluate keeps the forces it computes in io.force

    def _resolve_muscle(self, k, a, binding, model):
        """((lr₀, lr₁), (F gain, F bias)) of a muscle actuator on ``model``:
        its lengthrange (default: a limited joint's range times the gear)
        and peak forces (``force < 0``: MuJoCo's scale/acc0)."""
        from ..dynamics import crba
        from ._kin import State
        lr = a.lengthrange
        tr = a.transmission
        if lr is None:
            if type(tr) is not JointTransmission:
                raise ModelError(f"actuators[{k}]: {a!r}: a muscle needs a lengthrange (only a joint transmission "
                                 f"takes its joint's limits)")
            iq = binding[0]
            lo, hi = model.lower_limit[iq], model.upper_limit[iq]
            if not (np.isfinite(lo) and np.isfinite(hi)):
                raise ModelError(f"actuators[{k}]: {a!r}: a muscle needs a lengthrange (its joint has no limits)")
            ends = sorted((a.gear * binding[2] * lo, a.gear * binding[2] * hi))
            lr = (float(ends[0]), float(ends[1]))
        if not lr[0] < lr[1]:
            raise ModelError(f"actuators[{k}]: {a!r}: a muscle's lengthrange must have lr₀ < lr₁, got {lr}")
        forces = []
        for prm in (a.gainprm, a.biasprm):
            F = prm[2]
            if F < 0:  # MuJoCo's automatic force: scale / ‖M⁻¹J‖ at qpos0
                q0 = model.neutral()
                J = a.gear * tr.state(State(model, q0, None, need_v=False), binding, False).moment
                F = prm[3] / max(MINVAL, float(np.linalg.norm(np.linalg.solve(crba(model, q0), J))))
            forces.append(float(F))
        return lr, tuple(forces)

    # the evolving arrays (views into the step table when the simulator has a fused step)
    @property
    def ctrl(self):
        return self.io.ctrl

    @property
    def act(self):
        return self.io.act

    @property
    def force(self):
        return self.io.force

    @property
    def names(self) -> Tuple[str, ...]:
        """Each actuator's name (``"actuator<k>"`` when unnamed)."""
        return tuple(a.name if a.name is not None else f"actuator{k}" for k, a in enumerate(self.actuators))

    def python_part(self, paths=True):
        """The element evaluating only the actuators the compiled step does
        not take (other transmissions than joints, fixed tendons and — if
        ``paths`` — spatial paths), sharing this set's arrays; None if there
        are none."""
        which = self.python if paths else np.union1d(self.python, self.paths)
        if not len(which):
            return None
        part = object.__new__(type(self))
        part.__dict__.update(self.__dict__)
        part._evaluated = which
        part.name = "actuators (Python transmissions)"
        part.record_forces = True  # evaluated once per step, at its start (the fused step's external forces)
        return part

    def _bind(self, model):
        if model is not self.model:
            raise self.error(f"was built for model '{self.model.name}', not '{model.name}'")
        return None

    def _states(self, st, jacobians, which):
        """The geared transmission states of actuators ``which``."""
        out = []
        for k in which:
            a = self.actuators[k]
            ts = a.transmission.state(st, self.transmission_bindings[k], jacobians)
            g = a.gear
            if g != 1.0:
                geo = ts.geometric
                ts = TransmissionState(g * ts.length, g * ts.rate, g * ts.moment,
                                       None if ts.rate_gradient is None else g * ts.rate_gradient,
                                       None if geo is None else (lambda f, geo=geo, g=g: geo(g * f)))
            out.append(ts)
        return out

    def _laws(self, states, which, act=None):
        """(f, ∂f/∂l, ∂f/∂l̇) rows of actuators ``which`` at their states
        (and the activations ``act``, default the set's)."""
        length, rate = np.zeros(self.nu), np.zeros(self.nu)
        for k, ts in zip(which, states):
            length[k], rate[k] = ts.length, ts.rate
        out = np.zeros((self.nu, 3))
        _forces_py(self.ints, self.floats, self.io.ctrl, self.io.act if act is None else act,
                   0.0 if self.dt is None else self.dt, length, rate, out)
        return out

    def begin_stages(self, h):
        """Make the next four evaluations RK4's stages: each uses its stage
        activations (Python RK4 steps, as the fused RK4 and MuJoCo do)."""
        if self.na:
            self._stages = np.zeros((4, self.na))
            _rk4_stages_py(self.ints, self.floats, self.io.ctrl, self.io.act, float(h), self._stages,
                           np.zeros(self.na))
            self._stage = 0

    def end_stages(self):
        """Back to the set's activations (after :meth:`begin_stages`)."""
        self._stages = None

    def _evaluate(self, st, b, jacobians):
        which = self._evaluated
        nv = st.model.nv
        tau = np.zeros(nv)
        K = np.zeros((nv, nv)) if jacobians else None
        D = np.zeros((nv, nv)) if jacobians else None
        if not len(which):
            return tau, K, D
        states = self._states(st, jacobians, which)
        act = None
        if self._stages is not None:
            act = self._stages[self._stage % 4]
            self._stage += 1
        laws = self._laws(states, which, act)
        for k, ts in zip(which, states):
            f, fl, fld = laws[k]
            if self.record_forces:
                self.io.force[k] = f
            t, Kk, Dk = along(ts, f, fl, fld, jacobians)
            tau += t
            if jacobians:
                K += Kk
                D += Dk
        return tau, K, D

    def forces(self, q: ArrayLike, v: ArrayLike, t: float = 0.0) -> Array:
        """The actuator forces (nu,; N or N·m, MuJoCo's ``actuator_force``)
        at (q, v) and the set's controls and activations."""
        from ._kin import State
        st = State(self.model, q, v, t)
        which = self._evaluated
        return self._laws(self._states(st, False, which), which)[:, 0].copy()

    def lengths(self, q: ArrayLike, v: ArrayLike, t: float = 0.0) -> Tuple[Array, Array]:
        """(lengths, rates) (nu,) of the geared transmissions at (q, v)."""
        from ._kin import State
        st = State(self.model, q, v, t)
        states = self._states(st, False, range(self.nu))
        return np.array([s.length for s in states]), np.array([s.rate for s in states])

    def advance(self, h, rk4=False):
        """The activations one step ``h`` (s) on at the current controls:
        MuJoCo's Euler update, or its RK4 update of the activations (``rk4``)."""
        if self.na:
            _advance_py(self.ints, self.floats, self.io.ctrl, self.io.act, float(h), bool(rk4))


def _prefixed(err, msg):
    try:
        return type(err)(msg)
    except TypeError:
        return ModelError(msg)


def check_controls(u: ArrayLike, nu: int, what: str = "control") -> Array:
    """``u`` as a new float64 (nu,) array of finite real numbers, or InputError naming ``what``."""
    from ..model.checks import as_vector
    a = as_vector(u, what, nu, batch=False)
    return a.copy() if a is u else np.array(a, dtype=float)


# ------------------------------------------------------------------ tendons
class TendonSpring(TransmissionElement):
    """A tendon's passive spring–damper (MuJoCo's tendon ``stiffness``,
    ``damping`` and ``springlength``): ``f = −k (l − l_hi)`` above,
    ``−k (l − l_lo)`` below the dead band ``spring_length = (l_lo, l_hi)``
    (one number: no dead band), zero inside, ``− b l̇``; along the
    transmission (``τ = Jᵀ f``).

    Parameters
    ----------
    transmission : Transmission, str or int
        What the spring pulls on: a
        :class:`~multibody.forces.transmission.Transmission`, or a joint
        name or index (a joint transmission).
    stiffness : float, default 0.0
        k (N/m or N·m/rad), >= 0.
    damping : float, default 0.0
        b (N·s/m or N·m·s/rad), >= 0.
    spring_length : float or (float, float), default 0.0
        The rest length, or the dead band (l_lo, l_hi) (m or rad).
    name : str, optional
        The element's name in errors.

    Raises
    ------
    ModelError
        A negative stiffness or damping or a bad dead band, naming the element.
    """
    conservative = False

    def __init__(self, transmission: _Tr, stiffness: float = 0.0, damping: float = 0.0,
                 spring_length: Union[float, Tuple[float, float]] = 0.0, name: Optional[str] = None) -> None:
        super().__init__(transmission, name)
        k, b = floats(self, stiffness, "stiffness"), floats(self, damping, "damping")
        if k.ndim or b.ndim or not (np.isfinite(k) and np.isfinite(b)) or k < 0 or b < 0:
            raise self.error(f"stiffness and damping must be finite numbers >= 0, got {stiffness!r}, {damping!r}")
        r = np.atleast_1d(floats(self, spring_length, "spring_length"))
        if r.shape == (1,):
            r = np.r_[r, r]
        if r.shape != (2,) or not np.all(np.isfinite(r)) or r[0] > r[1]:
            raise self.error(f"spring_length must be one length or (low, high) with low <= high, got "
                             f"{spring_length!r}")
        self.stiffness, self.damping, self.spring_length = float(k), float(b), (float(r[0]), float(r[1]))
        self.conservative = self.damping == 0.0

    def force(self, length: float, rate: float, t: float) -> Tuple[float, float, float]:
        lo, hi = self.spring_length
        k = self.stiffness
        if length > hi:
            f, fl = k * (hi - length), -k
        elif length < lo:
            f, fl = k * (lo - length), -k
        else:
            f, fl = 0.0, 0.0
        return f - self.damping * rate, fl, -self.damping

    def potential_energy(self, model: "Model", q: ArrayLike) -> float:
        """``½ k e²`` with ``e`` the length's distance to the dead band."""
        from ._kin import State
        lo, hi = self.spring_length
        l = self.transmission.state(State(model, q, None, need_v=False), self.bind(model)).length
        e = l - hi if l > hi else (l - lo if l < lo else 0.0)
        return 0.5 * self.stiffness * e * e


# ------------------------------------------------------------------ from model files
def tendon_transmission(model: "Model", name: str) -> Transmission:
    """The transmission of the model's tendon ``name`` (``model.tendons``,
    from an MJCF ``<tendon>``): a :class:`FixedTendon`, or for a spatial
    tendon a Path through its via points (forces/paths.py)."""
    spec = next((t for t in model.tendons if t.name == name), None)
    if spec is None:
        raise ModelError(f"model '{model.name}' has no tendon {name!r}")
    if spec.kind == "fixed":
        return FixedTendon(list(spec.joints))
    try:
        from .paths import Path
    except ImportError:
        raise ModelError(f"tendon '{name}' is a spatial tendon: it needs multibody.forces.paths.Path") from None
    return Path(list(spec.points))


def actuators_from_model(model: "Model") -> Tuple[Actuator, ...]:
    """The :class:`Actuator` of each actuator a model file declared
    (``model.actuators``, :class:`~multibody.model.model.ActuatorSpec`)."""
    out = []
    for s in getattr(model, "actuators", ()):
        tr = JointTransmission(s.target) if s.transmission == "joint" else tendon_transmission(model, s.target)
        out.append(Actuator(tr, gear=s.gear, dyntype=s.dyntype, dynprm=s.dynprm, gaintype=s.gaintype,
                            gainprm=s.gainprm, biastype=s.biastype, biasprm=s.biasprm, ctrlrange=s.ctrlrange,
                            forcerange=s.forcerange, actrange=s.actrange, actearly=s.actearly,
                            lengthrange=s.lengthrange, name=s.name))
    return tuple(out)


def tendon_elements(model: "Model", springs: bool = True, damping: bool = True) -> Tuple["TendonSpring", ...]:
    """:class:`TendonSpring` elements of the model's tendons with a
    stiffness (``springs``) or a damping (``damping``)."""
    out = []
    for s in getattr(model, "tendons", ()):
        k = s.stiffness if springs else 0.0
        b = s.damping if damping else 0.0
        if k or b:
            out.append(TendonSpring(tendon_transmission(model, s.name), k, b, s.spring_length,
                                    name=f"tendon '{s.name}'"))
    return tuple(out)


__all__ = ["Actuator", "Motor", "PositionServo", "VelocityServo", "Muscle", "ActuatorSet", "TendonSpring",
           "actuators_from_model", "tendon_elements", "Transmission", "JointTransmission", "FixedTendon"]
