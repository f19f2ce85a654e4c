"""The simulator: a model, a formulation, an integrator and force
elements composed into ``step`` and ``rollout`` (DESIGN.md)."""
from __future__ import annotations

import copy
import math
import numbers
import threading
import time
import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Sequence

import numpy as np
import numpy.typing as npt
from numba import types

from .._compiled import JIT, B_1, F64_1, F64_2C, F64_3C, F64_4C, I64_1, entry
from .._status import (GIMBAL_LOCK, CONTACT_FAILED, CONTACT_NOT_CONVERGED, CONTACT_SOLVE_FAILED, CONTACTS_DROPPED, EFFORT_CLAMPED,
                       MASS_NOT_POSITIVE_DEFINITE, NON_FINITE, TAU_NOT_FINITE, VELOCITY_CLAMPED, describe)
from ..constraints import Constraints, JointLimits, project, project_positions
from ..constraints.contact import Compliance, ContactTable
from ..errors import ContactSolveError, InputError, ModelWarning, MultibodyError, NonFiniteError, SimulationError, \
    SimulationWarning
from ..forces import total_potential_energy
from ..forces.actuators import ActuatorSet, actuators_from_model, check_controls, tendon_elements
from ..forces.base import validate_elements
from ..forces.joint import joint_spring_elements
from ..formulations import RedmaxFormulation, ReducedSystem
from ..integrators import INTEGRATORS, RK4, RKMK, Integrator
from ..integrators.maximal import MaximalStepper
from ..integrators.particles import METHODS as PARTICLE_METHODS, ParticleStepper
from ..integrators.fused import NO_CONTROL, fused_table
from ..integrators._kernels import contact_after, contact_after_kernel, contact_apply, contact_apply_kernel, \
    contact_problem, contact_problem_kernel
from ..constraints import _contact as _CF
from ..kinematics import kinetic_energy, potential_energy
from ..model import Model
from ..model.configuration import GIMBAL_LOCK_TOLERANCE
from ..model.checks import as_float_array, as_vector, real_number
from ..solvers import solve_spd_lcp
from ._kernels import check_tau_kernel, end_of_step_kernel
from .batch import rollout_batch
from .contact_record import ContactRecord
from .control import PD
from .trajectory import Trajectory, model_fingerprint
from .._typing import Array, ArrayLike

if TYPE_CHECKING:
    from ..constraints.contact_dynamics import ContactDynamics
    from ..forces.actuators import Actuator
    from ..forces.base import ForceElement
    from ..formulations import ParticleSystem
    from ..integrators.fused import StepTable
    from .batch import Rollouts
    from .sensors import Sensors
    from .step_derivatives import StepDerivatives

_END = None
_TAU = None
# the contact_solver names (docs/contact.md): compiled, and reference modes solved in Python each step
CONTACT_SOLVERS = ("pgs", "lemke", "newton", "pivoting", "drumwright")
REFERENCE_SOLVERS = ("anitescu", "anitescu_hart", "staggered")
_F64 = np.dtype(np.float64)
#: the formulations a Simulator offers (docs/formulations.md)
FORMULATIONS = ("reduced", "redmax", "maximal")


def _tau_entry():
    global _TAU
    _TAU = entry(check_tau_kernel, F64_1, F64_1, types.boolean, F64_1, B_1)
    return _TAU


def _end_entry():
    global _END
    _END = entry(end_of_step_kernel, F64_2C, I64_1, F64_1, F64_1, F64_1, types.boolean, I64_1, I64_1, F64_1,
                 F64_1, types.float64, types.float64, F64_4C, F64_3C, F64_3C, F64_2C, F64_1, F64_1, B_1)
    return _END


# ------------------------------------------------------------------ argument checks
# The simulator hands its vectors to compiled entry points typed for one float64 vector that do not
# check dimensions (multibody._compiled), so everything a user gives it is checked here, strictly:
# a batch, an empty array, a string, a dict or complex numbers are errors, never reinterpreted.


def _read_only(a):
    """``a`` (a fresh copy) made read-only: writing into it raises."""
    a.setflags(write=False)
    return a


def _real(value, what):
    """``value`` as a float, possibly infinite or NaN (the caller checks the range)."""
    return real_number(value, what, finite=False)


def _count(value, what, minimum):
    """``value`` as an int >= ``minimum``: an integer, or a float with an
    integral value (``1e4``); anything else is refused."""
    if isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind in "iuf":
        value = value[()]
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise InputError(f"{what} must be an integer, got {value!r} ({type(value).__name__})")
    if not isinstance(value, numbers.Integral):
        if not (math.isfinite(value) and float(value).is_integer()):
            raise InputError(f"{what} must be an integer, got {value!r}")
    n = int(value)
    if n < minimum:
        raise InputError(f"{what} must be >= {minimum}, got {n}")
    return n


def _step_count(duration, steps, dt):
    """The number of steps of a run given by exactly one of ``duration``
    (s, finite, >= 0; rounded to whole steps of ``dt``) and ``steps``."""
    if (duration is None) == (steps is None):
        raise InputError("give exactly one of duration and steps")
    if steps is not None:
        return _count(steps, "steps", 0)
    duration = _real(duration, "duration (s)")
    if not (0.0 <= duration < math.inf):
        raise InputError(f"duration must be a finite number of seconds >= 0, got {duration}")
    return int(round(duration / dt))


def state_vector(x: ArrayLike, name: str, size: int, where: str = "") -> Array:
    """``x`` as a new C-contiguous float64 array of shape ``(size,)``, finite.

    Only one vector is accepted: a batch ``(B, size)`` (even B = 1), an
    empty array, a scalar, a ragged list, strings, dicts, booleans and
    complex values are refused with an :class:`InputError` naming ``name``
    and ``where`` (e.g. the step and the time). Always a copy, so that the
    caller's later changes to ``x`` cannot reach what the simulator keeps or
    records."""
    a = as_vector(x, f"{name} {where}" if where else name, size, batch=False)
    return a.copy() if a is x else a


_QUANTITY = {"q": "configuration", "v": "velocity"}


@dataclass
class State:
    """Time (s), configuration q (nq) and velocity v (nv).

    Parameters
    ----------
    t : float
        Time (s).
    q : numpy.ndarray
        Configuration, (nq,).
    v : numpy.ndarray
        Generalized velocity, (nv,).
    """
    t: float
    q: Array
    v: Array


@dataclass(frozen=True)
class Options:
    """A simulator's options, as MuJoCo's ``mjOption`` (read
    ``Simulator.options``; users pass them as the keywords of
    :class:`Simulator`, which documents each): the time step ``dt`` (s),
    the integrator's name, which model terms apply (``gravity``,
    ``joint_damping``, ``joint_springs``, ``limits``), clamping
    (``clamp_effort``, ``clamp_velocity``), the limits' ``restitution`` and
    its ``restitution_threshold`` (m/s or rad/s), and the bilateral
    constraints' ``compliance`` (α), ``constraint_damping`` (β, s),
    ``baumgarte`` (rad/s), ``project`` and ``loop_method``; the contact
    options and the ``formulation``."""
    dt: float
    integrator: str
    gravity: bool = True
    joint_damping: bool = True
    joint_springs: bool = True
    clamp_effort: bool = True
    clamp_velocity: bool = False
    limits: bool = True
    restitution: float = 0.0
    restitution_threshold: float = 1e-2
    compliance: float = 0.0
    constraint_damping: float = 0.0
    baumgarte: float = 10.0
    project: bool = True
    loop_method: str | None = None
    contact_solver: str | None = None
    friction: str = "cone"
    ground: bool = False
    contact_distance: float = 0.01
    contact_tolerance: float = 1e-8
    contact_model: object = "rigid"  # "rigid", "soft" or a Compliance (contact_solver="drumwright")
    contact_iterations: int | None = None
    contact_failure: str = "warn"
    formulation: str = "reduced"


@dataclass(frozen=True)
class Checkpoint:
    """Everything that evolves in a :class:`Simulator`: time (s), q, v,
    the number of steps taken since the last reset, the kinds of
    clamping already reported in this run, and the contact solver's warm
    start (the last step's contact keys and impulses) and what the
    integrator carries between steps (the maximal formulation's body
    poses and twists): a run continued from a checkpoint is bitwise the
    run that was not interrupted. :meth:`Simulator.checkpoint`
    takes one (copies), :meth:`Simulator.restore` returns to it; it pickles.
    ``control`` (nu) and ``activation`` (na): the actuators' controls and
    activations (None: left as they are by :meth:`Simulator.restore`).
    With particles the integrator's state is the free particles' world
    positions and velocities."""
    t: float
    q: Array
    v: Array
    steps: int
    clamps_reported: frozenset = frozenset()
    warm_start: tuple = ()
    integrator_state: tuple = ()
    control: Array | None = None
    activation: Array | None = None


class Simulator:
    """Simulate ``model`` with time step ``dt`` (s).

    ``integrator``: a name from :data:`multibody.integrators.INTEGRATORS`
    ("explicit_euler", "semi_implicit_euler", "rk4", "implicit_euler",
    "trapezoidal", "bridson_marino", "rkmk4": Munthe-Kaas RK4 on the joints'
    Lie groups, its free joints on ``lie_group`` "se3" (default) or
    "so3xr3", docs/lie_groups.md) or an
    :class:`~multibody.integrators.Integrator`. ``forces``: force elements
    (:mod:`multibody.forces`). Gravity is ``model.gravity`` unless
    ``gravity=False``; the model's viscous joint damping (``model.damping``,
    from URDF ``<dynamics>`` or MJCF) applies unless ``joint_damping=False``,
    and the model's joint springs (``model.stiffness`` about
    ``model.spring_reference``, from MJCF ``stiffness``/``springref`` or
    :meth:`ModelBuilder.add_body`) are added to ``forces`` as
    :class:`~multibody.forces.JointSpring` elements unless
    ``joint_springs=False``.
    Joint forces are clamped to ``model.effort_limit`` (``clamp_effort``,
    default True: what actuators do). Velocities are clamped to
    ``model.velocity_limit`` after each step only with
    ``clamp_velocity=True`` (default False: a velocity limit is a
    controller's business, and clamping changes the physics). The first
    clamp of each kind in a run (since :meth:`reset`) is reported once as a
    :class:`~multibody.errors.SimulationWarning`; :attr:`last_clamped` and
    the trajectory record every clamped coordinate.

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
    it leaves with its approach speed. In a step with contacts the limits
    the step may reach are solved with the contacts, in one problem
    (docs/contact.md, "Limits and contacts together"; not with
    ``contact_solver="newton"``).

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

    Contact (docs/contact.md) is on whenever the model (with ``ground``:
    plus a ground plane) has geometry pairs that may collide:
    ``contact_solver`` ("pgs", "lemke", "newton", "pivoting", the reference
    modes, or None: off), ``friction`` (default "cone"; "pyramid" with
    "newton"; "none", frictionless, with "pivoting", the frictionless LCP),
    ``max_contacts``, ``contact_distance`` (m; default 0.01
    for rigid and compliant contact, 0 for soft), ``contact_tolerance`` (m/s),
    ``contact_iterations`` (the solver's cap: PGS sweeps, default 500;
    Lemke's pivots; Newton's iterations, default 100) and
    ``contact_model``: "rigid" (default: non-penetration, Coulomb friction,
    Newton restitution) or "soft" (MuJoCo's soft contact from the pairs'
    solref and solimp; the default with "newton", which solves it with
    MuJoCo's pyramidal cone as MuJoCo's default solver does).
    ``contact_solver="drumwright"``: Drumwright's compliant constraints
    (docs/drumwright.md) with the stiffness and damping of a
    :class:`~multibody.constraints.contact.Compliance` given as
    ``contact_model`` (default ``Compliance()``): contact normals,
    friction and the joint limits (then solved in the contact stage in
    every step, not at the end of the step; ``restitution`` unused) are
    spring–dampers advanced by implicit Euler, stable at any step and
    stiffness; ``contact_distance`` defaults to 0.01 m as for rigid
    contact (speculative rows; 0: only touching pairs make contacts, the
    paper's rule, under which stiff contacts chatter and impacts bounce:
    docs/drumwright.md).
    ``contact_failure``: what a solver that reaches its iteration cap (PGS,
    Newton) does: "warn" (default: the step is taken with its last iterate,
    flagged, and a warning says so once per run) or "raise"
    (:class:`ContactSolveError` naming the step and time, after the step).
    Solvers with no iterate to use (Lemke's method, principal pivoting at a
    ray or their cap) always raise. ``sim.contact.residual()`` measures the
    last step's solution (docs/contact.md).

    ``formulation`` (docs/formulations.md): how the equations of motion are
    posed — "reduced" (default: joint coordinates by Featherstone's
    recursive algorithms, every integrator as one fused compiled step),
    "redmax" (joint coordinates through the maximal ones, Sueda §2:
    ``M_r = JᵀM_mJ``, dense, Python steps; every integrator but
    symplectic_euler, and ``implicit_euler`` is Sueda's linearly implicit
    Euler of §2.5) or "maximal" (every body a free SE(3) body and the joints
    constraint rows, Sueda §1; ``semi_implicit_euler`` is Sueda's
    velocity-level step with post-stabilization, ``rkmk4`` Munthe-Kaas
    RK4; the model's own loop joints as rows; (q, v) are read off the
    bodies after every step). Limits and contact act on (q, v) at the end
    of the step in every formulation.

    ``actuators`` (docs/actuators.md): the
    :class:`~multibody.forces.actuators.Actuator` list driven by the
    control vector :attr:`control` (nu,), separate from τ — default (None)
    the actuators the model file declared (``model.actuators``, MJCF
    ``<actuator>``), ``()`` or False none. Their forces ``τ = Jᵀ f`` join
    the joint forces with exact K and D; their activations
    (:attr:`activation`, MuJoCo's ``act``) advance with each step as
    MuJoCo's Euler and RK4 advance them. The model's tendons with a
    stiffness or damping (MJCF ``<tendon>``) act as
    :class:`~multibody.forces.actuators.TendonSpring` elements, with the
    joint springs (``joint_springs``) and damping (``joint_damping``).

    ``particles`` (docs/deformables.md, "In the simulator"): a
    :class:`~multibody.formulations.ParticleSystem` on this model —
    particles, springs and cloth attached to its bodies — stepped with the
    bodies by the particle system's step (``integrator``
    "implicit_euler": linearly implicit Euler; "semi_implicit_euler"; or a
    :class:`~multibody.integrators.ParticleStepper` for its other
    options). The simulator works on its own copy (:attr:`particles`), made
    when it is built: the system given is not changed. Its force
    elements, gravity and joint damping are the particle system's, with
    this simulator's ``forces`` (and the model's joint and tendon springs)
    added; ``gravity`` and ``joint_damping`` must agree with it. Actuators
    act through τ held over the step. Contact, position limits, loop
    constraints and the other formulations are refused (InputError naming
    them). The free particles' positions and velocities are part of the
    state (checkpoints, pickles, :meth:`reset`), and trajectories record
    every particle (``particle_position``, ``particle_velocity``).

    The state starts at ``q0`` (default: neutral, or the particle system's
    q) and ``v0`` (default: zero, or the particle system's v).
    Deterministic: the same inputs give bit-identical trajectories.

    Parameters
    ----------
    model : Model
        The model simulated.
    dt : float
        The time step (s), finite and > 0.
    integrator : str or Integrator
        A name from :data:`multibody.integrators.INTEGRATORS` (default
        "semi_implicit_euler") or an integrator object.
    forces : sequence of ForceElement
        Force elements (:mod:`multibody.forces`) added to the joint forces.
    gravity : bool
        Default True: apply ``model.gravity``.
    joint_damping : bool
        Default True: apply ``model.damping`` (viscous, per coordinate).
    joint_springs : bool
        Default True: add the model's joint springs (and tendon springs).
    clamp_effort : bool
        Default True: clamp joint forces to ``model.effort_limit``.
    clamp_velocity : bool
        Default False; True: clamp velocities to ``model.velocity_limit``
        after each step.
    limits : bool
        Default True: enforce ``model.lower_limit`` / ``upper_limit``.
    restitution : float
        Newton restitution ``e`` of limit (and rigid contact) impacts, in
        [0, 1] (default 0).
    restitution_threshold : float
        Approach speed (rad/s or m/s) below which restitution is 0 (default
        0.01).
    constraints : bool, Constraints or sequence
        The bilateral constraints: True (default) the model's, False none, a
        :class:`~multibody.constraints.Constraints` or a list of LoopJoint /
        Coupling records.
    compliance : float
        Soft-constraint compliance α (default 0: hard constraints).
    constraint_damping : float
        Soft-constraint damping β (default 0).
    baumgarte : float
        Baumgarte rate (rad/s) of hard constraints (default 10).
    project : bool
        Default True: project onto φ = 0 and G v = 0 after every step.
    loop_method : str, optional
        The NumPy/SciPy solve of hard loop constraints, "kkt", "range_space"
        or "null_space" (docs/constraints.md); default (None) the compiled
        one.
    q0 : array_like, optional
        Initial configuration (nq,); default neutral (or the particle
        system's).
    v0 : array_like, optional
        Initial velocity (nv,); default zero (or the particle system's).
    contact_solver : {"pgs", "lemke", "newton", "pivoting", "drumwright"} or None
        The contact solver (default "pgs"); None: no contact.
    ground : bool
        Default False; True: add a ground plane (z = 0).
    friction : str, optional
        The friction model: "cone", "pyramid", "box" or "none"; default
        (None) "cone", "pyramid" with "newton".
    max_contacts : int, optional
        Contact capacity per step (default min(8 × pairs, 256)).
    contact_distance : float, optional
        Distance (m) below which pairs make contacts (default 0.01; 0 for soft
        contact).
    contact_tolerance : float
        The contact solve's tolerance (m/s; default 1e-8).
    contact_model : str or Compliance, optional
        "rigid", "soft" (MuJoCo's soft contact) or, with
        ``contact_solver="drumwright"``, a Compliance; default (None)
        "rigid", "soft" with "newton", ``Compliance()`` with "drumwright".
    contact_iterations : int, optional
        The solver's iteration cap (PGS sweeps, default 500; Newton's
        iterations, default 100; Lemke's pivots).
    contact_failure : {"warn", "raise"}
        What a solver that reaches its cap does (default "warn").
    lie_group : str, optional
        The group of free joints under "rkmk4", "se3" or "so3xr3"; default
        (None) "se3".
    formulation : {"reduced", "redmax", "maximal"}
        How the equations of motion are posed (default "reduced").
    actuators : sequence of Actuator or bool, optional
        The actuators driven by :attr:`control`; None (default): the model's;
        ``()`` or False: none.
    particles : ParticleSystem, optional
        Particles, springs and cloth stepped with the bodies (copied).

    Raises
    ------
    InputError
        If an option is invalid or the options conflict (naming them),
        ``q0`` / ``v0`` have the wrong shape or are not finite, or the
        initial state cannot be assembled onto hard constraints (naming the
        constraint).
    """

    def __init__(self, model: Model, dt: float, integrator: str | Integrator = "semi_implicit_euler",
                 forces: Sequence[ForceElement] = (), gravity: bool = True, joint_damping: bool = True,
                 joint_springs: bool = True, clamp_effort: bool = True, clamp_velocity: bool = False,
                 limits: bool = True, restitution: float = 0.0, restitution_threshold: float = 1e-2,
                 constraints: bool | Constraints | Sequence[Any] = True, compliance: float = 0.0,
                 constraint_damping: float = 0.0, baumgarte: float = 10.0, project: bool = True,
                 loop_method: str | None = None, q0: ArrayLike | None = None, v0: ArrayLike | None = None,
                 contact_solver: str | None = "pgs", ground: bool = False, friction: str | None = None,
                 max_contacts: int | None = None, contact_distance: float | None = None,
                 contact_tolerance: float = 1e-8, contact_model: str | Compliance | None = None,
                 contact_iterations: int | None = None, contact_failure: str = "warn", lie_group: str | None = None,
                 formulation: str = "reduced", actuators: Sequence[Actuator] | bool | None = None,
                 particles: ParticleSystem | None = None) -> None:
        if not isinstance(model, Model):
            raise InputError(f"Simulator needs a multibody Model (mb.load_urdf, mb.ModelBuilder), got {model!r}")
        if particles is not None:  # checked first: the arguments keep a copy of the particles as they are now
            particles, stepper = _particle_arguments(model, particles, integrator, formulation, lie_group, gravity,
                                                     joint_damping, ground)
        # what it was built from: a pickled simulator is rebuilt from these (and its checkpoint)
        self._arguments: dict[str, Any] = dict(dt=dt, integrator=integrator, forces=forces, gravity=gravity,
                               joint_damping=joint_damping, joint_springs=joint_springs, clamp_effort=clamp_effort,
                               clamp_velocity=clamp_velocity, limits=limits, restitution=restitution,
                               restitution_threshold=restitution_threshold, constraints=constraints,
                               compliance=compliance, constraint_damping=constraint_damping, baumgarte=baumgarte,
                               project=project, loop_method=loop_method, contact_solver=contact_solver,
                               ground=ground, friction=friction, max_contacts=max_contacts,
                               contact_distance=contact_distance, contact_tolerance=contact_tolerance,
                               contact_model=contact_model, contact_iterations=contact_iterations,
                               contact_failure=contact_failure, lie_group=lie_group, formulation=formulation,
                               actuators=actuators, particles=particles)
        if particles is not None:
            integrator = stepper
        dt = _real(dt, "dt (the time step, s)")
        if not (math.isfinite(dt) and dt > 0):
            raise InputError(f"dt must be a positive number of seconds, got {dt}")
        restitution = _real(restitution, "restitution")
        if not (0.0 <= restitution <= 1.0):  # also refuses NaN
            raise InputError(f"restitution must be in [0, 1], got {restitution}")
        restitution_threshold = _real(restitution_threshold, "restitution_threshold (rad/s or m/s)")
        if not (0.0 <= restitution_threshold < math.inf):
            raise InputError(f"restitution_threshold must be a finite number >= 0, got {restitution_threshold}")
        for value, what in ((compliance, "compliance"), (constraint_damping, "constraint_damping"),
                            (baumgarte, "baumgarte")):
            _real(value, what)  # the range is checked by ReducedSystem
        # force elements are resolved against the model now, so that a misnamed joint, frame or
        # body is reported here, naming the element, and not as a failure of the first step
        forces = validate_elements(forces, model)
        if joint_springs:
            forces += validate_elements(joint_spring_elements(model), model)
        forces += validate_elements(tendon_elements(model, bool(joint_springs), bool(joint_damping)), model)
        if formulation not in FORMULATIONS:
            raise InputError(f"formulation must be one of {', '.join(map(repr, FORMULATIONS))}, got {formulation!r}")
        if formulation == "maximal":
            if not isinstance(integrator, str):
                raise InputError("the maximal formulation steps with integrator='semi_implicit_euler' or 'rkmk4' "
                                 "(a name), not an Integrator instance")
            if not (constraints is True or constraints is False or constraints is None):
                raise InputError("the maximal formulation closes the model's own loop joints (constraints=True) "
                                 "or none (False); extra constraints are not taken")
            integrator = MaximalStepper(integrator, lie_group)
        elif formulation == "redmax" and integrator == "symplectic_euler":
            raise InputError("the REDMAX formulation does not offer symplectic_euler (the momentum form needs "
                             "∂T/∂q); use semi_implicit_euler or implicit_euler")
        if isinstance(integrator, str):
            if integrator not in INTEGRATORS:
                raise InputError(f"unknown integrator '{integrator}' (known: {', '.join(sorted(INTEGRATORS))})")
            if lie_group is not None and integrator != RKMK.name:
                raise InputError(f"lie_group is an option of the {RKMK.name} integrator, not of '{integrator}'")
            integrator = INTEGRATORS[integrator]() if lie_group is None else RKMK(lie_group=lie_group)
        elif lie_group is not None:
            raise InputError("lie_group goes with integrator='rkmk4'; an Integrator instance carries its own")
        if not isinstance(integrator, Integrator):
            raise InputError(f"integrator must be a name or an Integrator, got {integrator!r}")
        self._given_model = model  # what a pickle rebuilds from (ground is an argument)
        # rollout_batch's member simulators, kept between calls, and who is using them (simulation/batch.py)
        self._batch_members: list[Simulator] = []
        self._batch_lock = threading.Lock()
        if ground:
            model = model.with_ground()
        self.model = model
        self.dt = float(dt)
        # the actuators (a ModelError naming the one that does not fit the model) and their force element
        if actuators is None:
            actuators = actuators_from_model(model)
        elif actuators is False:
            actuators = ()
        self._act_set = ActuatorSet(actuators, model, self.dt) if actuators else None
        self.actuators = () if self._act_set is None else self._act_set.actuators
        # maximal and particles: the actuators' forces are added to τ in the step, held over it
        self._actuators_in_tau = formulation == "maximal" or particles is not None
        if self._act_set is not None and not self._actuators_in_tau:
            forces += (self._act_set,)
        self._particles = None
        if particles is not None:  # the simulator's own copy, stepped with the simulator's forces added
            self._particles = copy.deepcopy(particles, {id(model): model})
            self._particles.elements = self._particles.forces + forces + self._particles.elements[
                len(self._particles.forces):]
            forces = self._particles.forces + forces  # what the energies and powers are computed from
            integrator.bind(self._particles, model)  # type: ignore[attr-defined]
        self.integrator = integrator
        # the library's integrators return float64 (nq,), (nv,) arrays; a user's is checked each step
        self._foreign_integrator = type(integrator) not in INTEGRATORS.values() and \
            not isinstance(integrator, (MaximalStepper, ParticleStepper))
        self.formulation = formulation
        if constraints is True:
            constraints = Constraints(model)
        elif constraints is False or constraints is None:
            constraints = None  # type: ignore[assignment]
        elif not isinstance(constraints, Constraints):
            if isinstance(constraints, (str, bytes, dict)) or not hasattr(constraints, "__iter__"):
                raise InputError(f"constraints must be True, False, a Constraints or a list of LoopJoint / "
                                 f"Coupling records, got {constraints!r}")
            constraints = Constraints(model, extra=constraints, loops=False, couplings=False)
        law, gdot = "artisynth", False
        if (contact_solver == "drumwright" and constraints is not None and len(constraints)  # type: ignore[arg-type]
                and isinstance(contact_model, (Compliance, type(None)))):  # Drumwright's loops (docs/drumwright.md)
            c = contact_model if contact_model is not None else Compliance()
            if compliance or constraint_damping:
                raise InputError("with contact_solver='drumwright' the loops' stiffness and damping are "
                                 "Compliance(loop_stiffness=..., loop_damping=...), not compliance / "
                                 "constraint_damping")
            if np.isfinite(c.loop_stiffness):
                compliance, constraint_damping = 1.0 / c.loop_stiffness, c.loop_damping / c.loop_stiffness
                law, gdot = "drumwright", c.gdot
        system_class = RedmaxFormulation if formulation == "redmax" else ReducedSystem
        self.system = system_class(model, forces, gravity, joint_damping,
                                   constraints,  # type: ignore[arg-type]  # a Constraints or None by now
                                   compliance, constraint_damping, baumgarte, loop_method, law, gdot)
        self.constraints = self.system.constraints
        self.project = bool(project) and self.constraints is not None and not self.system.soft
        integrator.check(self.system)
        self.limits = JointLimits(model) if limits else None
        if self.limits is not None and not len(self.limits):
            self.limits = None
        if self._particles is not None and self.constraints is not None:
            raise InputError(f"a simulator with particles takes no loop constraints or couplings (the model has "
                             f"{len(self.constraints)} constraint row(s)): give constraints=False, or step the "
                             f"model without particles")
        if self._particles is not None and self.limits is not None:
            raise InputError("a simulator with particles does not solve position limits (their impulses would act "
                             "on the bodies without the attached particles' mass): give limits=False")
        self._limit_rows = self.limits if self.limits is not None else JointLimits.none(model)
        self._rigid_limits = self.limits  # the limits solved at the end of the step (not compliant ones)
        self.restitution = float(restitution)
        self.restitution_threshold = float(restitution_threshold)
        self.state = State(0.0, np.zeros(model.nq), np.zeros(model.nv))
        self._zero = np.zeros(model.nv)
        self._zero.setflags(write=False)
        self._no_clamp = np.zeros(model.nv, bool)
        self._effort = model.effort_limit if clamp_effort and np.isfinite(model.effort_limit).any() else None
        self._effort_or_inf = self._effort if self._effort is not None else np.full(model.nv, np.inf)
        self._vmax = model.velocity_limit if clamp_velocity and np.isfinite(model.velocity_limit).any() else None
        self._vmax_or_inf = self._vmax if self._vmax is not None else np.full(model.nv, np.inf)
        self._joint_of_dof = np.repeat(np.arange(model.nbodies), [j.nv for j in model.joints])
        # MuJoCo's default contact in one keyword: contact_solver="newton" (soft, pyramidal)
        newton = contact_solver == "newton"
        compliant = contact_solver == "drumwright"
        if contact_model is None:
            contact_model = "soft" if newton else Compliance() if compliant else "rigid"
        if friction is None:
            friction = "pyramid" if newton else "none" if contact_solver == "pivoting" else "cone"
        if compliant and not isinstance(contact_model, Compliance):
            raise InputError(f"contact_solver='drumwright' takes a multibody.Compliance as contact_model (stiffness "
                             f"and damping), got {contact_model!r}")
        if not compliant and contact_model not in ("rigid", "soft"):
            raise InputError(f"contact_model must be 'rigid' or 'soft' (a Compliance with contact_solver="
                             f"'drumwright'), got {contact_model!r}")
        if contact_failure not in ("warn", "raise"):
            raise InputError(f"contact_failure must be 'warn' or 'raise', got {contact_failure!r}")
        self._contact_failure = contact_failure
        if contact_distance is None:
            # soft: MuJoCo's margins only; the paper's compliant program: touching pairs only (its rule)
            paper = compliant and contact_model.formulation == "paper"  # type: ignore[union-attr]
            contact_distance = 0.0 if contact_model == "soft" or paper else 0.01
        self.contact = _contact_table(model, self.dt, contact_solver, friction, max_contacts, contact_distance,
                                      self.restitution_threshold, contact_tolerance, contact_model == "soft",
                                      contact_iterations, self.limits, self.restitution,
                                      contact_model if compliant else None)
        if compliant and self.contact is not None:  # the limits are compliant rows of the contact stage
            self._limit_rows, self._rigid_limits = JointLimits.none(model), None
        if self._particles is not None and self.contact is not None:
            raise InputError("a simulator with particles has no contact (the model has collision pairs"
                             + (" and ground=True" if ground else "") + "): give contact_solver=None")
        if self.contact is not None:
            self.system.data.allocate("M")  # the contact kernels reach M through the workspace handle
        # the fused compiled step (integrators/fused.py) where one covers this system and integrator,
        # else None: the integrator's Python step
        reference = self.contact is not None and self.contact.reference is not None
        self.fused = None if self._foreign_integrator or reference or formulation != "reduced" or \
            self._particles is not None else fused_table(
            self.system, integrator.name, self.dt, self._rigid_limits, self.restitution, self.restitution_threshold,
            self._effort, self._vmax, self.project, self.contact)
        self._last_tau, self._last_clamped = np.zeros(model.nv), (np.zeros(model.nv, bool), np.zeros(model.nv, bool))

        self.options = Options(self.dt, integrator.name, bool(gravity), bool(joint_damping), bool(joint_springs),
                               bool(clamp_effort), bool(clamp_velocity), bool(limits), self.restitution,
                               self.restitution_threshold, self.system.compliance, self.system.constraint_damping,
                               self.system.baumgarte, bool(project), loop_method,
                               None if self.contact is None else contact_solver, friction, bool(ground),
                               float(contact_distance), float(contact_tolerance), contact_model,
                               None if self.contact is None else self.contact.max_iterations, contact_failure,
                               formulation)
        if self._particles is not None:
            self._particles_start = (self._particles.q.copy(), self._particles.v.copy())
        self.reset(q0, v0)
        self._steps = 0
        if self.contact is not None:
            self._warn_overlaps()

    #: a geometry pair deeper than this (m) in the initial configuration is a modelling problem
    OVERLAP_WARNING = 0.01

    def _warn_overlaps(self):
        """Warn (ModelWarning) when geometry pairs overlap by more than
        :attr:`OVERLAP_WARNING` in the initial configuration: rigid contact
        pushes them apart within a few steps (Talos without its SRDF: 11
        pairs of neighbouring links overlap by up to 9 cm and it explodes
        within 20 steps). Such pairs are usually meant to be excluded."""
        table = self.contact
        n = table.detect(self.state.q)
        deep = {}
        for c in table.contacts()[:n]:
            if c.distance < -self.OVERLAP_WARNING:
                key = (c.geom1, c.geom2)
                deep[key] = min(deep.get(key, 0.0), c.distance)
        table.reset()
        if deep:
            worst = sorted(deep.items(), key=lambda kv: kv[1])
            listed = ", ".join(f"{a}–{b} ({-d * 100:.1f} cm)" for (a, b), d in worst[:5])
            warnings.warn(f"{len(deep)} geometry pair(s) overlap by more than {self.OVERLAP_WARNING * 100:g} cm in "
                          f"the initial configuration: {listed}{', ...' if len(deep) > 5 else ''}; contact "
                          f"will push them apart at once. Exclude pairs that are not meant to collide (an SRDF's "
                          f"disable_collisions: load_urdf(..., srdf=...), MJCF <exclude>, or contact_solver=None).",
                          ModelWarning, stacklevel=3)

    def reset(self, q: ArrayLike | None = None, v: ArrayLike | None = None, t: float = 0.0,
              activation: ArrayLike | None = None) -> None:
        """Set the state (defaults: neutral configuration, zero velocity,
        t = 0 s, zero activations). ``q`` (nq,) and ``v`` (nv,) are one state: a batch, a wrong
        size, non-finite or complex values raise :class:`InputError`. With
        hard constraints the state is first assembled: projected onto φ = 0
        and G v = 0 (InputError naming the constraint if that fails). The
        actuators' controls are left as they are. With particles, the
        defaults of q and v are the particle system's initial ones, and the
        free particles return to where they were when the simulator was
        built (attached ones follow q)."""
        model = self.model
        t = _real(t, "t (the start time, s)")
        if not math.isfinite(t):
            raise InputError(f"t (the start time, s) must be finite, got {t}")
        q0, v0 = (model.neutral(), np.zeros(model.nv)) if self._particles is None else self._particles_start
        q = q0.copy() if q is None else model.check_configuration(state_vector(q, "q", model.nq))
        v = v0.copy() if v is None else state_vector(v, "v", model.nv)
        if self.project:
            q = project_positions(model, self.constraints, q)[0]
            v = project(model, self.constraints, q, v, np.inf, 0)[1]
        act = None if self._act_set is None else \
            (np.zeros(self.na) if activation is None else self._checked_activation(activation))
        self.state = State(t, q.copy(), v.copy())
        if act is not None:
            self._act_set.io.act[:] = act  # type: ignore[union-attr]
        self._steps = 0
        self.integrator.set_internal_state(())
        self._set_reported(set())
        if self.contact is not None:
            self.contact.reset()

    @property
    def fused(self) -> StepTable | None:
        """The :class:`~multibody.integrators.fused.StepTable` of the fused
        compiled step, or None when the integrator steps in Python. Setting
        it to None makes the simulator take the integrator's Python step
        (the reference mode the tests compare with)."""
        return self._fused

    @fused.setter
    def fused(self, table: StepTable | None) -> None:
        self._fused = table
        # what the fast path of _advance calls; the table itself is kept in the tuple: the kernel
        # reads its arrays through the handle, so they must live as long as the handle is used
        self._fast = None if table is None or table.external else \
            (table._step, table.handle, self.model.nq, self.model.nv, table)

    def checkpoint(self) -> Checkpoint:
        """A :class:`Checkpoint` of everything that evolves (copies)."""
        s = self.state
        warm = () if self.contact is None else self.contact.warm_start()
        return Checkpoint(s.t, s.q.copy(), s.v.copy(), self._steps, frozenset(self._clamps_reported), warm,
                          self.integrator.internal_state(), self.control, self.activation)

    def restore(self, checkpoint: Checkpoint) -> None:
        """Return to a :class:`Checkpoint` (of this simulator or of one with
        the same model sizes): the state is set as it is, not projected."""
        if not isinstance(checkpoint, Checkpoint):
            raise InputError(f"restore needs a Checkpoint (Simulator.checkpoint()), got {type(checkpoint).__name__}")
        m = self.model
        t = _real(checkpoint.t, "the checkpoint's t")
        if not math.isfinite(t):
            raise InputError(f"the checkpoint's t must be finite, got {t}")
        q = m.check_configuration(state_vector(checkpoint.q, "the checkpoint's q", m.nq))
        v = state_vector(checkpoint.v, "the checkpoint's v", m.nv)
        u = None if checkpoint.control is None else check_controls(checkpoint.control, self.nu, "the checkpoint's control")
        a = None if checkpoint.activation is None else \
            self._checked_activation(checkpoint.activation, "the checkpoint's activation")
        self.state = State(t, q, v)
        if u is not None and self.nu:
            self._act_set.io.ctrl[:] = u  # type: ignore[union-attr]
        if a is not None and self.na:
            self._act_set.io.act[:] = a  # type: ignore[union-attr]
        self._steps = _count(checkpoint.steps, "the checkpoint's steps", 0)
        self._set_reported(set(checkpoint.clamps_reported))
        if self.contact is not None:
            self.contact.reset(checkpoint.warm_start)
        self.integrator.set_internal_state(checkpoint.integrator_state)

    def __reduce__(self):
        """Pickle (multiprocessing, Dask) as the arguments the simulator was
        built from and a checkpoint: unpickling builds it again (new
        compiled workspaces) and restores the state. Force elements holding
        lambdas or other unpicklable callables cannot be pickled."""
        return _rebuild, (self._given_model, self._arguments, self.checkpoint())

    def contact_forward_dynamics(self, tau: ArrayLike | None = None, tolerance: float = 1e-9) -> ContactDynamics:
        """The contact forces and joint accelerations of the current state
        at the acceleration level (Featherstone §11.3–11.5: the
        frictionless LCP of the persistent contacts, touching and neither
        approaching nor separating):
        :func:`~multibody.constraints.contact_dynamics.contact_forward_dynamics`
        on this simulator's geometry (its contacts then list those of the
        state), for the joint forces ``tau`` (nv,; default 0) and the
        model's gravity — rigid-body dynamics only: no force elements,
        joint damping, limits or loops. Returns a
        :class:`~multibody.constraints.contact_dynamics.ContactDynamics`;
        :class:`InputError` without contact or for an approaching contact."""
        if self.contact is None:
            raise InputError("contact_forward_dynamics needs a simulator with contact (collision geometry that may "
                             "collide, and a contact_solver)")
        from ..constraints.contact_dynamics import contact_forward_dynamics
        s = self.state
        return contact_forward_dynamics(self.contact, s.q, s.v, tau, tolerance)

    def step(self, tau: ArrayLike | None = None, control: ArrayLike | None = None) -> State:
        """Advance one time step with joint forces ``tau`` (nv,; N or N·m;
        default zero) held constant over the step; returns the new
        :class:`State`. ``control`` (nu,): set :attr:`control` first (it
        stays set, as MuJoCo's ``ctrl``); None: the controls as they are.

        ``tau`` must be one vector of nv finite real numbers: anything else
        (a batch, even (1, nv); an empty array; complex, NaN or inf values; a
        string or a dict) raises :class:`InputError` naming the step and the
        time, before the state changes. A step that fails (a non-finite
        result, a singular mass matrix, constraints that cannot be
        restored) raises :class:`SimulationError` naming the step, the time
        and the quantity, and leaves the state at the start of the step.

        Parameters
        ----------
        tau : array_like, optional
            Joint forces (nv,) (N, N·m; free joints: body-frame wrench); default
            zero.
        control : array_like, optional
            Actuator controls (nu,) to set first; default: as they are.

        Returns
        -------
        State
            The state at the end of the step.

        Raises
        ------
        InputError
            If ``tau`` or ``control`` is not one vector of finite real numbers of
            the right size (the state is unchanged).
        SimulationError
            If the step fails (the state stays at the start of the step).
        """
        if control is not None:
            self._set_control(control, None)
        self._advance(self._zero if tau is None else tau, "tau")
        return self.state

    def step_derivatives(self, q: ArrayLike | None = None, v: ArrayLike | None = None,
                         tau: ArrayLike | None = None, fd_step: float = 1e-6) -> StepDerivatives:
        """The derivatives of one :meth:`step` from (q, v) (default: the
        current state, at the current time) under joint forces ``tau``
        (default 0), without taking it: ``A = ∂(q⁺, v⁺)/∂(q, v)`` (2nv, 2nv)
        and ``B = ∂(q⁺, v⁺)/∂τ`` (2nv, nv), q on the tangent space
        (columns perturb q by ``model.integrate(q, δq)``, rows measure q⁺
        by ``model.difference(q⁺, ·)``; docs/derivatives.md, "Derivatives
        of one step").

        Parameters
        ----------
        q, v, tau : array_like, optional
            One state (nq,), (nv,) and the joint forces (nv,); or N states
            along a leading axis, (N, nq), (N, nv), (N, nv) (a single
            vector is shared by all).
        fd_step : float
            The central-difference step ε of the contact fallback.

        Returns
        -------
        StepDerivatives
            ``A``, ``B``, the step ``q1``, ``v1``, ``method``, ``contacts``;
            for N states, A (N, 2nv, 2nv), B (N, 2nv, nv), ``method`` a
            tuple of N strings and ``contacts`` (N,).

        Raises
        ------
        InputError
            Bad input; and without contacts, an integrator other than
            semi_implicit_euler, explicit_euler, rk4, implicit_euler, loop
            constraints, actuator activations, or a step that reaches a
            position limit or a velocity clamp (naming it).

        Without contacts in the step the derivative is analytic (the chain rule through
        the integrator's step with the ABA/RNEA derivatives and the force
        elements' K, D; implicit Euler's second derivatives of
        non-linear elements by Richardson-extrapolated differences of
        their Jacobians). When the step has contacts (rows within the
        contact distance) it is central differences of this
        simulator's own step (:func:`~multibody.simulation.step_derivatives.step_derivatives_fd`).
        Joint forces beyond the effort limits give zero columns of B."""
        from .step_derivatives import step_derivatives
        return step_derivatives(self, q, v, tau, fd_step)

    # ------------------------------------------------------------ actuators
    @property
    def nu(self) -> int:
        """The number of actuators (controls)."""
        return 0 if self._act_set is None else self._act_set.nu

    @property
    def na(self) -> int:
        """The number of activations (actuators with dynamics)."""
        return 0 if self._act_set is None else self._act_set.na

    @property
    def actuator_names(self) -> tuple[str, ...]:
        """The actuators' names, in control order."""
        return () if self._act_set is None else self._act_set.names

    @property
    def control(self) -> Array:
        """The actuators' controls (nu,; a read-only copy, so that
        ``sim.control[:] = u``, which would change only the copy, raises
        instead of doing nothing), held until set again: ``sim.control = u``
        (nu finite real numbers, else InputError), or ``step(control=u)``.
        Clamped to each actuator's ``ctrlrange`` where they are used, not
        here (MuJoCo's ``ctrl``)."""
        return _read_only(np.zeros(0) if self._act_set is None else self._act_set.io.ctrl.copy())

    @control.setter
    def control(self, u: ArrayLike) -> None:
        self._set_control(u, "control")

    def _set_control(self, u, what):
        """Set the controls to ``u`` (nu finite real numbers) or raise
        InputError naming ``what`` (None: the control of the next step)."""
        aset = self._act_set
        # the common case, one float64 vector of finite numbers, without the general checks
        if aset is not None and type(u) is np.ndarray and u.dtype is _F64 and u.shape == aset.io.ctrl.shape \
                and np.isfinite(u).all():
            aset.io.ctrl[:] = u
            return
        u = check_controls(u, self.nu, f"control {self._at(self._steps + 1, self.state.t)}" if what is None else what)
        if self.nu:
            aset.io.ctrl[:] = u

    @property
    def activation(self) -> Array:
        """The actuators' activations (na,; a read-only copy; MuJoCo's
        ``act``), in the order of the actuators that have dynamics; set with
        ``sim.activation = a``."""
        return _read_only(np.zeros(0) if self._act_set is None else self._act_set.io.act.copy())

    @activation.setter
    def activation(self, a: ArrayLike) -> None:
        a = self._checked_activation(a)
        if self.na:
            self._act_set.io.act[:] = a  # type: ignore[union-attr]

    def _checked_activation(self, a, what="activation"):
        return check_controls(a, self.na, what)

    @property
    def actuator_force(self) -> Array:
        """The actuator forces (nu,; N or N·m, before the moment arm:
        MuJoCo's ``actuator_force``) of the last step, at its start state
        (a copy)."""
        return np.zeros(0) if self._act_set is None else self._act_set.io.force.copy()

    def actuator_lengths(self, q: ArrayLike | None = None, v: ArrayLike | None = None) -> tuple[Array, Array]:
        """(lengths, rates) (nu,) of the actuators' geared transmissions at a
        state (default: the current one): MuJoCo's ``actuator_length`` and
        ``actuator_velocity``."""
        if self._act_set is None:
            return np.zeros(0), np.zeros(0)
        q, v = self._state_or(q, v)
        return self._act_set.lengths(q, v, self.state.t)

    @property
    def last_tau(self) -> Array:
        """The joint forces (nv,) applied in the last step, after effort clamping (a copy)."""
        return (self._fused.tau if self._fused is not None else self._last_tau).copy()

    @property
    def last_clamped(self) -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.bool_]]:
        """(effort, velocity): boolean (nv,) masks of the coordinates whose
        joint force or velocity the last step clamped (copies)."""
        f = self._fused
        if f is None:
            return self._last_clamped[0].copy(), self._last_clamped[1].copy()
        return f.eff_mask.astype(bool), f.vel_mask.astype(bool)

    def _advance(self, tau, name):
        """One step with the joint forces ``tau`` (unchecked; ``name`` says
        where they came from in errors); returns the clamp flags
        (``EFFORT_CLAMPED | VELOCITY_CLAMPED`` of :mod:`multibody._status`)."""
        fast = self._fast
        if fast is not None and type(tau) is np.ndarray and tau.dtype is _F64 and tau.ndim == 1 \
                and tau.shape[0] == fast[3]:
            # the common case, written out (a helper call costs ~0.1 us of a ~3 us step): the fused
            # step of a system without Python force elements, τ one float64 vector
            kernel, handle, nq, nv, _ = fast
            s = self.state
            q1, v1 = np.empty(nq), np.empty(nv)
            st = kernel(handle, s.q, s.v, tau, q1, v1)
            if st == 0:
                self.state = State(s.t + self.dt, q1, v1)
                self._steps += 1
                return 0
            return self._fused_status(st, tau, name, q1, v1)
        f = self._fused
        if f is None:  # the integrator's Python step
            tau, eff_mask = self._checked_tau(tau, name)
            return self._step(tau, eff_mask)
        nv = self.model.nv
        if not (type(tau) is np.ndarray and tau.dtype is _F64 and tau.ndim == 1 and tau.shape[0] == nv):
            tau = state_vector(tau, name, nv, self._at(self._steps + 1, self.state.t))
        s = self.state
        q1, v1 = np.empty(self.model.nq), np.empty(nv)
        if f.external:  # Python force elements, evaluated at the start of the step
            try:
                f.evaluate_elements(s.t, s.q, s.v)
            except MultibodyError as e:
                raise self._step_error(e, self._steps + 1, s) from e
        return self._fused_status(f._step(f.handle, s.q, s.v, tau, q1, v1), tau, name, q1, v1)

    def _fused_status(self, st, tau, name, q1, v1):
        """Finish a fused step that returned status ``st`` into (q1, v1):
        accept it (warning of a first clamp) or, on failure, take the
        checked path."""
        if st < 0:
            return self._fused_failed(st, tau, name)
        s, f = self.state, self._fused
        self.state = State(s.t + self.dt, q1, v1)
        self._steps += 1
        if st & self._unreported:
            self._report_first_clamp(f.eff_mask.astype(bool), f.vel_mask.astype(bool), self._steps, s.t)
            self._contact_flags(st, self._steps, s.t)
        return st

    def _fused_failed(self, st, tau, name):
        """After a fused step returned the failure status ``st``: the
        InputError for a non-finite τ, or the step again on the checked
        Python path (which raises the precise error, or finishes the step
        by the NumPy fallback of the limit solve)."""
        bad = TAU_NOT_FINITE - st
        if 0 <= bad < self.model.nv:
            raise InputError(f"{name} {self._at(self._steps + 1, self.state.t)} has a non-finite entry at index "
                             f"{bad} ({tau[bad]})")
        tau, eff_mask = self._checked_tau(tau, name)
        return self._step(tau, eff_mask)

    def _checked_tau(self, tau, name):
        """(τ, effort mask): a fresh float64 (nv,) copy of ``tau`` clipped to
        the effort limits, and which coordinates were clipped; InputError
        naming ``name``, the step and the time for anything but nv finite
        real numbers."""
        nv = self.model.nv
        # the common case (one float64 vector) goes straight to the compiled check; anything
        # else through state_vector, which refuses what is not one real vector
        if not (type(tau) is np.ndarray and tau.dtype is _F64 and tau.ndim == 1 and tau.shape[0] == nv):
            tau = state_vector(tau, name, nv, self._at(self._steps + 1, self.state.t))
        out, mask = np.empty(nv), np.empty(nv, np.bool_)
        st = (_TAU or _tau_entry())(tau, self._effort_or_inf, self._effort is not None, out, mask)
        if st >= 0:
            raise InputError(f"{name} {self._at(self._steps + 1, self.state.t)} has a non-finite entry at index "
                             f"{st} ({tau[st]})")
        return out, (mask if st == -2 else self._no_clamp)

    def _step(self, tau, eff_mask):
        """One step with a checked ``tau`` (a fresh float64 (nv,) array,
        within the effort limits) and the mask of clipped coordinates."""
        s = self.state
        k = self._steps + 1
        t = s.t + self.dt
        aset = self._act_set
        try:
            applied = tau
            if aset is not None:  # the forces of the step, at its start (what the fused step records)
                aset.io.force[:] = aset.forces(s.q, s.v, s.t)
                if self._actuators_in_tau:  # not a force element there: held over the step
                    applied = tau + aset.evaluate(self.model, s.q, s.v, s.t)[0]
            staged = aset is not None and aset.na and type(self.integrator) is RK4
            if staged:  # the stage activations of MuJoCo's RK4 for the four evaluations of the step
                aset.begin_stages(self.dt)
            try:
                q1, v1 = self.integrator.step(self.system, s.t, s.q, s.v, applied, self.dt)
            finally:
                if staged:
                    aset.end_stages()
        except MultibodyError as e:
            raise self._step_error(e, k, s) from e
        except np.linalg.LinAlgError as e:  # a singular solve (scipy's LinAlgError is the same class)
            self._diagnose_non_finite(k, s)
            raise SimulationError(f"the integration diverged at {self._where(k, s.t)}: a linear solve failed "
                                  f"({e})") from e
        except ValueError as e:
            if "infs or NaNs" not in str(e):  # scipy's check_finite on an overflowing intermediate
                raise
            self._diagnose_non_finite(k, s)
            raise SimulationError(f"the integration diverged at {self._where(k, s.t)}: non-finite values "
                                  f"reached a linear solve (scipy: {e})") from e
        # the compiled end of step trusts the types of what it is given: check what a user's
        # integrator returned before handing it over
        model = self.model
        if self._foreign_integrator and not (type(q1) is np.ndarray and type(v1) is np.ndarray and q1.dtype is _F64
                                             and v1.dtype is _F64 and q1.shape == model.q_shape
                                             and v1.shape == model.v_shape):
            q1, v1 = self._integrator_output(q1, v1, k, s.t)
        contact_flags = 0
        if self.contact is not None:
            contact_flags = self._contact_after(s, q1, v1, k)
        q, v = np.empty_like(q1), np.empty_like(v1)
        vel_mask = np.empty(v1.shape[0], np.bool_)
        lim, d = self._limit_rows, self.system.data
        st = (_END or _end_entry())(model._tree, model.dof_parent, q1, v1, self._vmax_or_inf,
                                    self._vmax is not None, lim.q_index, lim.v_index, lim.sign, lim.bound,
                                    self.restitution, self.restitution_threshold, d.poses, d.jac, d.inertia6, d.M,
                                    q, v, vel_mask)
        if st != 0:
            q, v, vel_mask = self._end_of_step_failed(st, k, s, tau, q1, v1)
        if self.project:  # post-stabilization onto φ = 0 and G v = 0 (ArtiSynth §0.5)
            q, v, it = project(model, self.constraints, q, v, tol=1e-12, max_iterations=20)
            self._check_finite(q, v, k, s.t, "after the constraint projection")
            # near a singular configuration round-off can stall Newton above 1e-12; accept what
            # stays far below any physical tolerance, report the rest
            if it < 0 and self.constraint_residual(q) > 1e-9:
                raise SimulationError(f"the constraints could not be restored at {self._where(k, s.t)}: residual "
                                      f"{self.constraint_residual(q):.3g} after 20 Newton iterations")
        if eff_mask is not self._no_clamp or self._vmax is not None:
            self._report_first_clamp(eff_mask, vel_mask, k, s.t)
        if self._fused is not None:  # the table holds what the last step applied
            self._fused.tau[:], self._fused.eff_mask[:], self._fused.vel_mask[:] = tau, eff_mask, vel_mask
        else:
            self._last_tau, self._last_clamped = tau, (eff_mask, vel_mask)
        if aset is not None and aset.na:  # MuJoCo's update of the activations (Euler's, or RK4's)
            aset.advance(self.dt, self.integrator.name == "rk4")
        self.state = State(t, q, v)
        self._steps = k
        if contact_flags:
            self._contact_flags(contact_flags, k, s.t)
        return (EFFORT_CLAMPED if eff_mask.any() else 0) | \
            (VELOCITY_CLAMPED if vel_mask.any() else 0)

    def _contact_after(self, s, q1, v1, k):
        """The contact stage after a Python integrator's step from ``s`` to
        (q1, v1), changed in place (:func:`~multibody.integrators._kernels.contact_after`);
        returns the step's contact flags (reported once the step is taken).
        Loop constraints are held in the contact problem
        (:meth:`~multibody.constraints.contact.ContactTable.hold_loops`)."""
        if self.constraints is not None:
            cfm = self.system.loop_regularization(self.dt)[1] if self.system.soft else 0.0
            self.contact.hold_loops(self.constraints, s.q, cfm)
        if self.contact.reference is not None:
            n = self._reference_contact(s, q1, v1, k)
        else:
            n = self._contact_kernel("after", s.q, s.v, q1, v1)
        if n < 0:
            self._contact_failed(n, k, s.t)
        return self.contact.flags

    def _reference_contact(self, s, q1, v1, k):
        """The contact stage with a reference solver (clarabel, called from
        Python): the problem by a compiled kernel, the impulses by
        :func:`multibody.solvers.solve_contact`, then v1 and q1 = q ⊕ h v1."""
        from ..solvers import solve_contact
        C = self.contact
        vf = v1.copy()
        n = self._contact_kernel("problem", s.q, s.v, vf)
        if n <= 0:
            return n
        a, m = C.arrays, 3 * n
        W = a["W"][:m * m].reshape(m, m)
        try:
            if C.reference == "drumwright_paper":  # Drumwright's own QP/SOCP on the step's rows
                from ..solvers.drumwright import compliant_impulses
                W, b, kind, phi, K, B, mu = C.compliant_rows()
                result = None
                a["impulse"][:m] = compliant_impulses(W, b, self.dt, kind, phi, K, B, mu, friction=C.friction,
                                                      method="paper", zeta=C.compliance.zeta)
            else:
                result = solve_contact(W, a["b"][:m], a["pair_mu"][:n], method=C.reference,
                                       friction=C.reference_friction, lam0=a["impulse"][:m])
        except MultibodyError as e:
            raise SimulationError(f"the contact solver '{C.reference}' failed at {self._where(k, s.t)}: {e}") from e
        if result is not None:
            a["impulse"][:m] = result.lam
        C.head[_CF.ITERATIONS] = result.iterations if result is not None else 1
        C.head[_CF.FLAGS] = 0 if result is None or result.converged else CONTACT_NOT_CONVERGED
        return self._contact_kernel("apply", s.q, n, vf, q1, v1)

    def _contact_kernel(self, which, *args):
        """A kernel of the Python step's contact stage ("after", "problem",
        "apply" of integrators/_kernels.py) on this simulator's workspace and
        contact table: through their handles, or without JIT on the arrays."""
        if JIT:
            kernel = {"after": contact_after_kernel, "problem": contact_problem_kernel,
                      "apply": contact_apply_kernel}[which]
            return kernel(self.system.data.handle, self.contact.handle, *args)
        fn = {"after": contact_after, "problem": contact_problem, "apply": contact_apply}[which]
        return fn(self.system.data.arrays(), self.contact.view(), *args)

    def _contact_failed(self, st, k, t0):
        """Raise the SimulationError of a failed contact stage."""
        if st == CONTACT_FAILED:
            a, b = self.contact.failed_pair()
            raise SimulationError(f"collision detection failed for the geometries '{a}' and '{b}' at "
                                  f"{self._where(k, t0)} (no penetration depth could be computed)")
        if st == CONTACT_SOLVE_FAILED:
            raise ContactSolveError(f"the contact solver '{self.contact.solver}' found no solution at "
                                    f"{self._where(k, t0)}: {describe(self.contact.iterations, 'contact')}")
        raise SimulationError(f"the contact stage failed at {self._where(k, t0)}: {describe(st)}")

    def _contact_flags(self, st, k, t0):
        """Warn, once per run, of a contact solver that reached its cap or of
        contacts dropped; with ``contact_failure="raise"`` a solver at its cap
        raises :class:`ContactSolveError` (the step taken, with its last
        iterate: the state is that step's result)."""
        if st & CONTACT_NOT_CONVERGED and self._contact_failure == "raise":
            raise ContactSolveError(f"the contact solver '{self.contact.solver}' reached its iteration cap "
                                    f"({self.contact.max_iterations}) at {self._where(k, t0)} "
                                    f"(contact_failure='raise'; the state is that step's result, with the solver's "
                                    f"last iterate)")
        what = {CONTACT_NOT_CONVERGED: "the contact solver reached its iteration cap "
                                       f"({self.contact.max_iterations if self.contact else 0} sweeps; its last "
                                       "iterate was used)",
                CONTACTS_DROPPED: f"more contacts than max_contacts = {self.contact.capacity if self.contact else 0}; "
                                  "the extra ones were ignored"}
        for kind, bit in self._CONTACT_BITS:
            if st & bit and kind not in self._clamps_reported:
                self._set_reported(self._clamps_reported | {kind})
                warnings.warn(f"{what[bit]} {self._at(k, t0)}; reported once per run", SimulationWarning,
                              stacklevel=5)

    _CLAMP_BITS = (("effort", EFFORT_CLAMPED), ("velocity", VELOCITY_CLAMPED))
    _CONTACT_BITS = (("contact solver", CONTACT_NOT_CONVERGED), ("contacts dropped", CONTACTS_DROPPED))

    def _set_reported(self, kinds):
        """Record the kinds of clamping already warned about in this run,
        and the status bits of those not yet (checked after every step)."""
        self._clamps_reported = kinds
        self._unreported = sum(bit for kind, bit in self._CLAMP_BITS + self._CONTACT_BITS if kind not in kinds)
        if getattr(self, "_contact_failure", "warn") == "raise":  # every step at the cap raises
            self._unreported |= CONTACT_NOT_CONVERGED

    def _report_first_clamp(self, eff_mask, vel_mask, k, t0):
        """Warn (:class:`SimulationWarning`) the first time in a run that
        joint forces or velocities were clamped; the trajectory records
        every clamp."""
        for kind, what, mask in (("effort", "joint forces", eff_mask), ("velocity", "velocities", vel_mask)):
            if kind not in self._clamps_reported and mask.any():
                self._set_reported(self._clamps_reported | {kind})
                names = [self.model.joints[self._joint_of_dof[i]].name for i in np.flatnonzero(mask)]
                warnings.warn(f"{what} clamped to the model's {kind} limits {self._at(k, t0)} (joints "
                              f"{', '.join(dict.fromkeys(names))}); reported once per run: every clamp is "
                              f"recorded in Trajectory.{kind}_clamped and Simulator.last_clamped",
                              SimulationWarning, stacklevel=5)

    def _integrator_output(self, q1, v1, k, t0):
        """(q1, v1) as float64 vectors of the model's sizes, or
        SimulationError: what an integrator returned, when it is not
        already exactly that (e.g. a user's integrator returning lists, or a
        batch)."""
        model = self.model
        a, b = np.asarray(q1), np.asarray(v1)
        if a.dtype.kind not in "iuf" or b.dtype.kind not in "iuf" or a.shape != model.q_shape \
                or b.shape != model.v_shape:
            raise SimulationError(f"the integrator '{self.integrator.name}' returned q of shape {a.shape} "
                                  f"(dtype {a.dtype}) and v of shape {b.shape} (dtype {b.dtype}) at "
                                  f"{self._where(k, t0)}; expected real arrays of shapes {model.q_shape} and "
                                  f"{model.v_shape}")
        return np.array(a, dtype=np.float64), np.array(b, dtype=np.float64)

    def _at(self, k, t0):
        """Where an input of step ``k`` (starting at ``t0``) was given."""
        return f"at step {k} (t = {t0:.6g} s)"

    def _where(self, k, t0):
        """Where step ``k`` (from ``t0`` to ``t0 + dt``) failed."""
        return (f"step {k} (t = {t0:.6g} s -> {t0 + self.dt:.6g} s, {self.integrator.name}, "
                f"dt = {self.dt:g} s)")

    def _step_error(self, e, k, s):
        """The error of a failed integrator step ``k`` from state ``s``, with
        the step and the time. Errors that a diverging state causes
        (non-finite or singular intermediates) become
        :class:`SimulationError`, naming the force element that turned
        non-finite if one did; others (a force element's callable returning
        a bad shape) keep their class."""
        msg = str(e)
        # the step's inputs were checked finite: a non-finite value found inside the step
        # (NonFiniteError, e.g. aba's "not finite although the inputs are" on overflow) or a
        # singular or indefinite matrix (SimulationError) is the state diverging, not a user's mistake
        if isinstance(e, (SimulationError, NonFiniteError)):
            self._diagnose_non_finite(k, s)
            return SimulationError(f"the integration diverged at {self._where(k, s.t)}: within the step, {msg}")
        return _with_context(e, f"at {self._where(k, s.t)}: {msg}")

    def _check_finite(self, q, v, k, t0, stage):
        for name, x in (("v", v), ("q", q)):  # v first: a non-finite v is what makes q non-finite
            bad = ~np.isfinite(x)
            if bad.any():
                i = int(np.argmax(bad))
                raise SimulationError(f"the integration diverged at {self._where(k, t0)}: non-finite "
                                      f"{_QUANTITY[name]} {name}[{i}] = {x[i]} {stage}")

    def _end_of_step_failed(self, st, k, s, tau, q1, v1):
        """The checked NumPy end of step after the compiled one reported
        ``st``: locate a non-finite value (and its source, if a force
        element gives a non-finite force), or a singular mass matrix, or
        solve the limits' LCPs by NNLS, or name the Euler joint at gimbal
        lock."""
        if GIMBAL_LOCK - (1 << 40) < st <= GIMBAL_LOCK:
            j = self.model.joints[GIMBAL_LOCK - st]
            raise SimulationError(f"joint '{j.name}' ({j.type}) reached gimbal lock at {self._where(k, s.t)}: "
                                  f"q = {np.round(q1[j.q_slice], 6).tolist()} makes its motion subspace singular "
                                  f"(|det S| < {GIMBAL_LOCK_TOLERANCE:g}), where its rates are unbounded; use "
                                  f"other Euler axes, or an exp_spherical or spherical joint")
        if st == NON_FINITE:
            self._diagnose_non_finite(k, s)
            self._check_finite(q1, v1, k, s.t, f"after the {self.integrator.name} update (from a finite state: "
                                                f"max |v| = {np.abs(s.v).max(initial=0.0):.3g}, max |tau| = "
                                                f"{np.abs(tau).max(initial=0.0):.3g})")
        if st == MASS_NOT_POSITIVE_DEFINITE:
            raise SimulationError(f"{describe(st)} at {self._where(k, s.t)}")
        if self._rigid_limits is None:  # NON_FINITE from a sum that overflowed, with finite entries
            q, v = q1.copy(), v1.copy()
        else:
            q, v = self._enforce_limits_numpy(q1, v1)
            self._check_finite(q, v, k, s.t, "after the position-limit impulses")
        vel_mask = np.zeros(v.shape[0], bool)
        if self._vmax is not None:
            vel_mask = np.abs(v) > self._vmax
            v = np.clip(v, -self._vmax, self._vmax)
        return q, v, vel_mask

    def _diagnose_non_finite(self, k, s):
        """Raise naming the force element that gives a non-finite force at
        the state ``s`` where step ``k`` started, at the start, middle or
        end time of the step (the times the integrators sample), if one
        does. Only called after a failure."""
        for i, e in enumerate(self.system.forces):
            for t in (s.t, s.t + 0.5 * self.dt, s.t + self.dt):
                try:
                    f = e.evaluate(self.model, s.q, s.v, t)[0]
                except MultibodyError:
                    break
                bad = ~np.isfinite(f)
                if bad.any():
                    j = int(np.argmax(bad))
                    raise SimulationError(f"the integration diverged at {self._where(k, s.t)}: force element "
                                          f"{i} ({e!r}) gives a non-finite generalized force tau[{j}] = {f[j]} "
                                          f"at t = {t:.6g} s")

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

    def _state_or(self, q, v) -> tuple[Array, Array]:
        """(q, v) given (checked: one state) or the current state's."""
        m = self.model
        q = self.state.q if q is None else m.check_configuration(state_vector(q, "q", m.nq))
        v = self.state.v if v is None else state_vector(v, "v", m.nv)
        return q, v

    @property
    def particles(self) -> ParticleSystem | None:
        """The simulator's :class:`~multibody.formulations.ParticleSystem`
        (its own copy; None without particles), at the simulator's current
        state: ``sim.particles.positions()``, ``.velocities()`` give every
        particle's world position and velocity. Read it; a particle, spring
        or attachment added to it is not taken by the simulator."""
        ps = self._particles
        if ps is not None:
            s = self.state
            ps.q, ps.v, ps.t = s.q.copy(), s.v.copy(), s.t
        return ps

    def _particle_sample(self):
        """Every particle's world position and velocity (n, 3) at the current state."""
        ps, s = self._particles, self.state
        kin = ps._kinematics(ps._structure(), s.q, s.v, s.t, ps._xf, ps._xdf, need_dv=False)
        return kin.x, kin.xd

    def energy(self, q: ArrayLike | None = None, v: ArrayLike | None = None) -> tuple[float, float]:
        """(kinetic, potential) energy (J) of a state (default: the current
        one): potential of gravity, of the conservative force elements and
        of soft constraints. With particles: of the whole system (the
        particles' kinetic energy, their gravity and the springs' elastic
        energy added; the free particles as they are now)."""
        q, v = self._state_or(q, v)
        if self._particles is not None:
            ps = self.particles
            ps.q, ps.v = q.copy(), v.copy()  # type: ignore[union-attr]
            return ps.kinetic_energy(), ps.potential_energy()  # type: ignore[union-attr]
        V = potential_energy(self.model, q) if self.system.gravity else 0.0
        V += total_potential_energy(self.system.forces, self.model, q) + self.system.constraint_energy(q)
        return kinetic_energy(self.model, q, v), V  # type: ignore[return-value]

    def constraint_residual(self, q: ArrayLike | None = None) -> float:
        """The largest constraint violation at q (default: the current
        state): max |φ| of the bilateral constraints and the largest
        position-limit violation."""
        q = self._state_or(q, None)[0]
        r = self.limits.violation(q) if self.limits is not None else 0.0
        if self.constraints is not None:
            r = max(r, float(np.abs(self.constraints.evaluate(q)[0]).max()))
        return r

    def power(self, tau: ArrayLike, q: ArrayLike | None = None, v: ArrayLike | None = None
              ) -> tuple[list[str], list[float]]:
        """Power (W) delivered by each non-gravity source at a state:
        ``(labels, values)`` for the applied joint forces ``τᵀv``, each force
        element (:meth:`ForceElement.power`), the actuators (at the current
        controls and activations) and the model's joint damping.
        Gravity's work is in the potential energy, so
        ``d(T + V)/dt = Σ power − (power of conservative elements)``."""
        q, v = self._state_or(q, v)
        return self._power(state_vector(tau, "tau", self.model.nv), q, v)

    def _power(self, tau, q, v):
        labels, values = ["tau"], [float(tau @ v)]
        for k, e in enumerate(self._elements()):
            labels.append(f"{k}:{e!r}")
            values.append(e.power(self.model, q, v, self.state.t))
        if self._act_set is not None:
            labels.append("actuators")
            values.append(float(self._act_set.evaluate(self.model, q, v, self.state.t)[0] @ v))
        if self._particles is not None:  # the particles as they are now, the bodies at (q, v)
            ps = self.particles
            ps.q, ps.v = q.copy(), v.copy()
            labels.append("particle damping")
            values.append(ps.particle_energy(ps.positions(), ps.velocities())[2])
        if self.system._damped:
            labels.append("joint damping")
            values.append(float(-(self.system.damping * v) @ v))
        return labels, values

    def _elements(self):
        """The force elements but the actuators' (reported on their own)."""
        return tuple(e for e in self.system.forces if e is not self._act_set)

    #: how often per simulated second ``rollout(view=...)`` shows the state
    VIEW_FPS = 30

    def _shower(self, view, n, realtime):
        """The rollout's hook for ``view`` and ``realtime`` (:meth:`rollout`):
        a :class:`_Show` over a run of ``n`` steps."""
        every = max(1, round(1.0 / (self.VIEW_FPS * self.dt)))
        return _Show(self, view, n, every, view is not None if realtime is None else bool(realtime))

    def rollout(self, duration: float | None = None, steps: int | None = None,
                controller: PD | Callable[[float, Array, Array], ArrayLike] | None = None, record_every: int = 1,
                progress: bool = True, tau: ArrayLike | None = None, contacts: bool = False,
                control: ArrayLike | None = None, sensors: Sensors | None = None, view: Any = None,
                realtime: bool | None = None) -> Trajectory:
        """Run from the current state for ``duration`` seconds or ``steps``
        steps; ``controller(t, q, v) -> tau`` (or None for zero forces) is
        called before each step, or ``tau`` gives the joint forces open
        loop: one (nv,) vector held, or a (steps, nv) table, row k for step
        k + 1 (not both). Records every ``record_every`` steps (and
        the initial state) into a :class:`Trajectory`: time, state, applied
        forces and clamp masks while running; the energies, the power of
        each force (:meth:`power`) and the constraint residual (largest
        constraint or position-limit violation) are computed from them in
        one batch when first read. Without a controller, with a ``tau`` table
        or with a built-in controller (:class:`~multibody.simulation.control.PD`,
        :class:`~multibody.simulation.control.ComputedTorque`) the whole run
        is one compiled loop where the integrator has a fused step
        (docs/simulation.md). With ``progress`` (default) runs of 1000 steps
        or more show a tqdm progress bar when stderr is a terminal (never in
        tests or logs). With ``contacts``, the trajectory's ``contacts`` is
        a :class:`~multibody.simulation.contact_record.ContactRecord` of the
        contacts of each recorded step (points, frames, distances, impulses
        and forces; the compiled loop then returns to Python at each
        recorded step to copy them), else None.

        ``control`` drives the actuators (docs/actuators.md): None (the
        controls as set, held), one (nu,) vector (held), a (steps, nu)
        table (row k for step k + 1; in the compiled loop) or a function
        ``(t, q, v) -> controls`` called before each step (after
        ``controller``). The trajectory records the controls, the
        activations and the actuator forces (``control``, ``activation``,
        ``actuator_force``); :attr:`control` ends at the last step's.

        ``sensors`` (a :class:`~multibody.simulation.sensors.Sensors`):
        the trajectory's ``sensors`` holds their readings at every sample
        (``Sensors.over``: noise and delays applied sample by sample, from
        the collection's seed; exact accelerations with ``record_every=1``);
        touch sensors need the contacts, which are then recorded.

        ``view`` (e.g. a :class:`multibody.viz.Viewer`: any object with
        ``update(q, t, contacts)``) is shown the state about
        :attr:`VIEW_FPS` times per simulated second (and at the end), with
        the current contacts when the simulator has contact; the compiled
        loop then runs in chunks of that many steps. ``realtime`` (default:
        True with a view, else False) paces the run so that simulated time
        does not run ahead of wall-clock time (it cannot make a slow run
        faster).

        ``duration`` (s, finite, >= 0) is rounded to a whole number of steps;
        ``steps`` and ``record_every`` are integers (>= 0 and >= 1). The
        controller gets copies of q and v, and must return nv finite real
        numbers: a batch, an empty array, a dict, a string, complex or
        non-finite values raise :class:`InputError` naming the step and the
        time before the state advances; a step that fails raises
        :class:`SimulationError` naming it (the state stays at the start of
        that step). The trajectory carries the model's fingerprint
        (:func:`~multibody.simulation.model_fingerprint`).

        Parameters
        ----------
        duration : float, optional
            Simulated time (s), rounded to whole steps; give it or ``steps``.
        steps : int, optional
            Number of steps.
        controller : PD, ComputedTorque or callable, optional
            ``controller(t, q, v) -> tau`` (nv,), called before each step.
        record_every : int
            Record every this many steps (default 1).
        progress : bool
            Show a progress bar on a terminal for long runs (default True).
        tau : array_like, optional
            Open-loop joint forces: (nv,) held, or (steps, nv); not with
            ``controller``.
        contacts : bool
            Record the contacts of each recorded step (default False).
        control : array_like or callable, optional
            Actuator controls: (nu,) held, (steps, nu), or
            ``control(t, q, v) -> (nu,)``; default: as set.
        sensors : Sensors, optional
            Sensors whose readings are recorded.
        view : object, optional
            A viewer (``update(q, t, contacts)``) shown the run.
        realtime : bool, optional
            Pace the run to wall-clock time (default: True with a view).

        Returns
        -------
        Trajectory
            The recorded samples, the initial state first.

        Raises
        ------
        InputError
            For invalid arguments or a controller's invalid output (naming the
            step and the time).
        SimulationError
            If a step fails (naming the step, the time and the quantity).
        """
        n = _step_count(duration, steps, self.dt)
        every = _count(record_every, "record_every", 1)
        if view is not None and not callable(getattr(view, "update", None)):
            raise InputError(f"view must have an update(q, t, contacts) method (e.g. multibody.viz.Viewer), got {view!r}")
        show = None if view is None and not realtime else self._shower(view, n, realtime)
        if controller is not None and not callable(controller):
            raise InputError(f"controller must be a function (t, q, v) -> tau or None, got {controller!r}")
        taus = self._zero[None, :] if tau is None else self._tau_table(tau, n, controller)
        control_fn = control if callable(control) else None
        ctrls = None if control is None or control_fn is not None else self._control_table(control, n)
        if sensors is not None:
            from .sensors import Sensors, Touch
            if not isinstance(sensors, Sensors):
                raise InputError(f"sensors must be a multibody Sensors collection, got {sensors!r}")
            sensors.bind(self.model)  # a sensor on a missing frame or joint is reported before the run
            contacts = contacts or (self.contact is not None and any(isinstance(s, Touch) for s in sensors))
        builtin = isinstance(controller, PD)  # PD and computed torque run in the compiled loop
        kind_gains = NO_CONTROL
        if builtin:
            kind, gains, refs, taus = controller.arrays(self.model, n, self.system.damping)  # type: ignore[union-attr]
            kind_gains = (kind, gains, refs)
        model, s0 = self.model, self.state
        rows = 1 + n // every
        Q, V = np.empty((rows, model.nq)), np.empty((rows, model.nv))
        tau = np.zeros((rows, model.nv))
        nu, na, aset = self.nu, self.na, self._act_set
        Uc, Fa, Ac = np.zeros((rows, nu)), np.zeros((rows, nu)), np.zeros((rows, na))
        if na:
            Ac[0] = aset.io.act  # type: ignore[union-attr]
        flags = np.zeros(rows, np.int64)
        masks = np.zeros((rows, 2, model.nv), np.bool_)
        Q[0], V[0] = s0.q, s0.v
        ps = self._particles
        if ps is not None:  # every particle's world position and velocity at each sample
            PX, PV = np.empty((rows, ps.n, 3)), np.empty((rows, ps.n, 3))
            PX[0], PV[0] = self._particle_sample()
        record = ContactRecord.empty(rows, self.contact) if contacts else None
        # times as the steps add them up: t0 + dt + dt + ... (np.add.accumulate is sequential)
        t = np.add.accumulate(np.concatenate(([s0.t], np.full(n, self.dt))))
        bar = _progress(n) if progress and n >= 1000 else None
        f = self._fused
        k = 0
        try:
            while k < n:
                if (controller is None or builtin) and control_fn is None and f is not None and not f.external:
                    # compiled: up to the end (or the next progress update), stopping after a step
                    # that clamps for the first time in the run (reported once), or before a step it
                    # cannot take
                    m = n - k if bar is None else min(n - k, 1000)
                    if show is not None:  # up to the next frame shown
                        m = min(m, show.every - k % show.every)
                    if record is not None and self.contact is not None:  # up to the next recorded step
                        m = min(m, every - k % every)
                    stop = self._unreported
                    q, v = self.state.q.copy(), self.state.v.copy()
                    done, st = f.rollout(q, v, taus, kind_gains, k, m, every, stop, Q, V, tau, flags, masks, ctrls, Uc,
                                         Ac, Fa)
                    if done:
                        self.state = State(t[k + done], q, v)
                        self._steps += done
                        k += done
                        if bar is not None:
                            bar.update(done)
                        if record is not None and self.contact is not None and k % every == 0:
                            record.capture(k // every, self.contact)
                        if show is not None:
                            show(k)
                    if st > 0:
                        self._report_first_clamp(f.eff_mask.astype(bool), f.vel_mask.astype(bool), self._steps,
                                                 t[k - 1])
                        self._contact_flags(st, self._steps, t[k - 1])
                    if st >= 0:
                        continue
                    # the step it could not take, on the checked path: raises, or finishes it
                    s = self.state
                    u = (controller.torque(k, s.q, s.v, self.system.gravity, self.system.damping)  # type: ignore[union-attr]
                         if builtin else taus[0 if len(taus) == 1 else k])
                    fl = self._fused_failed(st, u, "the controller's tau" if builtin else "tau")
                else:
                    s = self.state
                    if controller is None:
                        u = taus[0 if len(taus) == 1 else k]
                    elif builtin:
                        u = controller.torque(k, s.q, s.v, self.system.gravity, self.system.damping)  # type: ignore[union-attr]
                    else:  # copies: a controller writing into its arguments must not change the state
                        u = controller(s.t, s.q.copy(), s.v.copy())
                    if control_fn is not None:
                        self._set_control(control_fn(s.t, s.q.copy(), s.v.copy()),
                                          f"the control function's controls {self._at(k + 1, s.t)}")
                    elif ctrls is not None and nu:
                        aset.io.ctrl[:] = ctrls[0 if len(ctrls) == 1 else k]  # type: ignore[union-attr]
                    fl = self._advance(u, "tau" if controller is None else "the controller's tau")
                k += 1
                if k % every == 0:
                    r = k // every
                    Q[r], V[r], flags[r] = self.state.q, self.state.v, fl
                    if f is not None:
                        tau[r] = f.tau
                        if fl:
                            masks[r, 0], masks[r, 1] = f.eff_mask, f.vel_mask
                    else:
                        tau[r] = self._last_tau
                        if fl:
                            masks[r] = self._last_clamped
                    if nu:
                        Uc[r], Fa[r], Ac[r] = aset.io.ctrl, aset.io.force, aset.io.act  # type: ignore[union-attr]
                    if ps is not None:
                        PX[r], PV[r] = self._particle_sample()
                    if record is not None and self.contact is not None:
                        record.capture(r, self.contact)
                if bar is not None:
                    bar.update(1)
                if show is not None:
                    show(k)
        finally:
            if bar is not None:
                bar.close()
        meta = dict(model=model.name, integrator=self.integrator.name, dt=self.dt)
        particles = None if ps is None else (PX, PV)
        traj = Trajectory.recorded(t[::every], Q, V, tau, masks[:, 0], masks[:, 1], meta,
                                   model_fingerprint(model), self._derived_quantities(particles),
                                   (self.actuator_names, Uc, Ac, Fa), particles)
        traj.contacts = record
        if sensors is not None:
            traj.sensors = sensors.over(traj, self)
        return traj

    def rollout_batch(self, q0: ArrayLike | None = None, v0: ArrayLike | None = None, steps: int | None = None,
                      duration: float | None = None, params: Sequence[Any] | None = None,
                      tau: ArrayLike | None = None, record_every: int = 1, threads: int | None = None,
                      control: ArrayLike | None = None) -> Rollouts:
        """B rollouts in one call, on ``threads`` threads (default: one per
        core), from this simulator's current time: initial states ``q0``
        (B, nq) and ``v0`` (B, nv) (one vector or None: the same for all, or
        the current state), model parameters ``params`` (a sequence of B
        mappings for :meth:`Model.with_params`, or None), open-loop joint
        forces ``tau`` ((nv,), (steps, nv) or (B, steps, nv)) and the
        actuators' controls ``control`` ((nu,), (steps, nu) or (B, steps,
        nu); None: the simulator's, held; every member starts from the
        simulator's controls and activations). Returns
        :class:`~multibody.simulation.batch.Rollouts`; member b is bitwise
        the :meth:`rollout` of a simulator with those parameters from that
        state (the same compiled loop). The simulator's own state does not
        change. Needs a fused step (no constraints; RK4 and Bridson–Marino
        without Python force elements); mismatched batch sizes or shapes
        raise InputError, a failing member SimulationError naming it, the
        step and the time.

        Parameters
        ----------
        q0 : array_like, optional
            Initial configurations (B, nq), or one (nq,) for all; default the
            current one.
        v0 : array_like, optional
            Initial velocities (B, nv), or one (nv,); default the current one.
        steps : int, optional
            Number of steps; give it or ``duration``.
        duration : float, optional
            Simulated time (s), rounded to whole steps.
        params : sequence of mappings, optional
            B parameter mappings for :meth:`Model.with_params`.
        tau : array_like, optional
            Open-loop joint forces: (nv,), (steps, nv) or (B, steps, nv).
        record_every : int
            Record every this many steps (default 1).
        threads : int, optional
            Number of threads (default one per core).
        control : array_like, optional
            Actuator controls: (nu,), (steps, nu) or (B, steps, nu).

        Returns
        -------
        Rollouts
            The B recorded rollouts.

        Raises
        ------
        InputError
            For mismatched batch sizes or shapes, or a simulator without a fused
            step.
        SimulationError
            If a member fails (naming it, the step and the time).
        """
        return rollout_batch(self, q0, v0, steps, duration, params, tau, record_every, threads, control)

    def _tau_table(self, tau, n, controller):
        """The open-loop joint forces of a rollout of ``n`` steps as a
        float64 (1, nv) (held) or (n, nv) table, or InputError."""
        if controller is not None:
            raise InputError("give a controller or a tau table, not both")
        nv = self.model.nv
        table = as_float_array(tau, "tau")
        if table.ndim == 1:
            table = table[None, :]
        if table.ndim != 2 or table.shape[1] != nv or table.shape[0] not in (1, n) or n == 0 and table.shape[0]:
            raise InputError(f"tau must be one vector of {nv} joint forces or a table of shape ({n}, {nv}) (one "
                             f"row per step), got shape {np.shape(tau)}")
        return table.copy() if table is tau else table

    def _control_table(self, control, n):
        """The actuators' controls of a rollout of ``n`` steps as a float64
        (1, nu) (held) or (n, nu) table of finite numbers, or InputError."""
        nu = self.nu
        table = as_float_array(control, "control")
        if table.ndim == 1:
            table = table[None, :]
        if table.ndim != 2 or table.shape[1] != nu or table.shape[0] not in (1, n) or n == 0 and table.shape[0] > 1:
            raise InputError(f"control must be one vector of {nu} controls (the simulator's actuators), a table of "
                             f"shape ({n}, {nu}) (one row per step) or a function (t, q, v) -> controls, got shape "
                             f"{np.shape(control)}")
        bad = ~np.isfinite(table)
        if bad.any():
            r, c = np.argwhere(bad)[0]
            raise InputError(f"control[{r}, {c}] = {table[r, c]} is not finite")
        return np.ascontiguousarray(table, dtype=np.float64).copy()

    def _derived_quantities(self, particles=None):
        """``(power_labels, derive, lengths)``: the functions computing a
        trajectory's energies, powers and constraint residuals from its
        states and forces, and its actuators' lengths and rates from its
        states (None without actuators), on first access
        (:meth:`Trajectory.recorded`): the values :meth:`energy`,
        :meth:`power`, :meth:`constraint_residual` and
        :meth:`actuator_lengths` give for each sample, in batch where a
        batch kernel exists. ``particles``: the recorded ``(positions,
        velocities)`` of the particles, whose energies join the model's and
        whose damping is the power "particle damping"."""
        model, system = self.model, self.system
        forces, limits, constraints = self._elements(), self.limits, self.constraints
        gravity, damped, damping = system.gravity, system._damped, system.damping.copy()
        soft = system.soft
        aset = self._act_set
        ps = self._particles
        labels = ["tau"] + [f"{k}:{e!r}" for k, e in enumerate(forces)] + (["actuators"] if aset else []) + \
            (["particle damping"] if ps is not None else []) + (["joint damping"] if damped else [])

        def derive(t, Q, V, tau, force):
            N = len(t)
            kinetic = np.atleast_1d(kinetic_energy(model, Q, V)) if N else np.zeros(0)
            potential = np.atleast_1d(potential_energy(model, Q)) if gravity and N else np.zeros(N)
            power = np.empty((N, len(labels)))
            power[:, 0] = np.einsum("ij,ij->i", tau, V)
            for i in range(N):
                try:
                    if forces:
                        potential[i] += total_potential_energy(forces, model, Q[i])
                        for c, e in enumerate(forces):
                            power[i, 1 + c] = e.power(model, Q[i], V[i], t[i])
                    if soft:
                        potential[i] += system.constraint_energy(Q[i])
                    if aset is not None:  # Σ f l̇ of the recorded forces
                        power[i, 1 + len(forces)] = float(force[i] @ aset.lengths(Q[i], V[i], t[i])[1])
                except MultibodyError as e:  # e.g. a force element's callable failing at that time
                    raise _with_context(e, f"deriving the trajectory's energies and powers at sample {i} "
                                           f"(t = {t[i]:.6g} s): {e}") from e
            if ps is not None and N:  # the particles' energies and damping (ParticleSystem.particle_energy)
                pk, pp, pd = ps.particle_energy(*particles)
                kinetic, potential = kinetic + pk, potential + pp
                power[:, len(labels) - 1 - damped] = pd
            if damped:
                power[:, -1] = -np.einsum("ij,ij->i", damping * V, V)
            residual = np.zeros(N)
            if limits is not None and N:
                residual = np.maximum(0.0, -(limits.sign * (Q[:, limits.q_index] - limits.bound)).min(axis=1))
            if constraints is not None:
                for i in range(N):
                    residual[i] = max(residual[i], float(np.abs(constraints.evaluate(Q[i])[0]).max()))
            return kinetic, potential, power, residual

        def lengths(t, Q, V):
            L, Ld = np.empty((len(t), aset.nu)), np.empty((len(t), aset.nu))
            for i in range(len(t)):
                L[i], Ld[i] = aset.lengths(Q[i], V[i], t[i])
            return L, Ld

        return tuple(labels), derive, (lengths if aset is not None else None)

def _contact_table(model, dt, solver, friction, max_contacts, distance, threshold, tolerance, soft, iterations,
                   limits, restitution, compliance=None):
    """The :class:`~multibody.constraints.contact.ContactTable` of the
    contact stage, or None: contact off (``solver`` None) or nothing that
    can collide. The joint ``limits`` (with their ``restitution``) join
    its problem in steps with contacts. Soft and compliant contact
    (``compliance``: Drumwright's, the compiled PGS) ignore restitution: a
    warning names the pairs that set one."""
    if solver is None:
        return None
    if solver not in CONTACT_SOLVERS + REFERENCE_SOLVERS:
        raise InputError(f"unknown contact_solver {solver!r} (known: {', '.join(CONTACT_SOLVERS + REFERENCE_SOLVERS)}; "
                         f"None: no contact)")
    distance = _real(distance, "contact_distance (m)")
    if not (0.0 <= distance < math.inf):
        raise InputError(f"contact_distance must be a finite distance >= 0 (m), got {distance}")
    tolerance = _real(tolerance, "contact_tolerance (m/s)")
    if not (0.0 <= tolerance < math.inf):
        raise InputError(f"contact_tolerance must be a finite velocity >= 0 (m/s), got {tolerance}")
    if max_contacts is not None:
        max_contacts = _count(max_contacts, "max_contacts", 1)
    if iterations is not None:
        iterations = _count(iterations, "contact_iterations", 1)
    compiled = solver if solver in CONTACT_SOLVERS and solver != "drumwright" else "pgs"
    if solver in REFERENCE_SOLVERS:  # checked here: the table's solver is not the one used
        allowed = {"anitescu": ("cone", "box"), "anitescu_hart": ("pyramid",), "staggered": ("cone", "box")}[solver]
        if friction not in allowed:
            raise InputError(f"friction must be one of {', '.join(allowed)} with the {solver} contact solver, got "
                             f"{friction!r}")
    table = ContactTable(model, dt, solver=compiled, friction="cone" if solver in REFERENCE_SOLVERS else friction,
                         max_contacts=max_contacts, distance=distance, restitution_threshold=threshold,
                         velocity_tolerance=tolerance, soft=soft, max_iterations=iterations, limits=limits,
                         limit_restitution=restitution, compliance=compliance)
    bouncing = [f"({table.geometry.geometries[a].name}, {table.geometry.geometries[b].name})"
                for (a, b), e in zip(table.geometry.pairs, table.geometry.restitution) if e > 0] \
        if soft or compliance is not None else []
    if bouncing:
        why = "solref's damping ratio" if soft else "the compliance's stiffness, damping and the step"
        warnings.warn(f"{'soft' if soft else 'compliant'} contact has no restitution ({why} set the bounce): it is "
                      f"ignored on the pairs {', '.join(bouncing[:5])}{', ...' if len(bouncing) > 5 else ''}",
                      ModelWarning, stacklevel=3)
    table.reference = solver if solver in REFERENCE_SOLVERS else None
    if compliance is not None and compliance.formulation == "paper":  # the paper's QP/SOCP, by clarabel
        table.reference = "drumwright_paper"
    table.reference_friction = friction
    return table if table.stage else None


def _particle_arguments(model, particles, integrator, formulation, lie_group, gravity, joint_damping, ground):
    """Check what a simulator with ``particles`` is given; returns a copy of
    the particle system as it is now (what the simulator is built from,
    and pickled as) and the :class:`ParticleStepper` of ``integrator``."""
    from ..formulations import ParticleSystem
    from .trajectory import model_fingerprint as fingerprint
    if not isinstance(particles, ParticleSystem):
        raise InputError(f"particles must be a multibody.formulations.ParticleSystem, got {particles!r}")
    if formulation != "reduced":
        raise InputError(f"particles are stepped with the model in joint coordinates (formulation='reduced'), "
                         f"not with formulation={formulation!r}")
    if lie_group is not None:
        raise InputError("lie_group goes with integrator='rkmk4', which does not step particles")
    if ground:
        raise InputError("a simulator with particles has no contact: the particles would pass through the ground "
                         "(give ground=False)")
    if isinstance(integrator, ParticleStepper):
        stepper = integrator.copy()
    elif isinstance(integrator, str) and integrator in PARTICLE_METHODS:
        stepper = ParticleStepper(integrator)
    else:
        raise InputError(f"a simulator with particles steps with integrator={' or '.join(map(repr, PARTICLE_METHODS))} "
                         f"(or a multibody.integrators.ParticleStepper), not {integrator!r}")
    if particles.model is not model and fingerprint(particles.model) != fingerprint(model):
        raise InputError(f"the particle system is built on model '{particles.model.name}', not on the simulator's "
                         f"model '{model.name}'")
    if bool(gravity) != particles.gravity:
        raise InputError(f"gravity={bool(gravity)} but the particle system was built with gravity="
                         f"{particles.gravity}: the simulator steps the particle system's gravity")
    if bool(joint_damping and np.any(model.damping)) != bool(np.any(particles.joint_damping)):
        raise InputError(f"joint_damping={bool(joint_damping)} but the particle system was built with joint_damping="
                         f"{not joint_damping}: the simulator steps the particle system's joint damping")
    return copy.deepcopy(particles, {id(particles.model): model}), stepper


def _rebuild(model, arguments, checkpoint):
    """A pickled :class:`Simulator` (:meth:`Simulator.__reduce__`)."""
    sim = Simulator(model, q0=checkpoint.q, v0=checkpoint.v, **arguments)
    sim.restore(checkpoint)
    return sim


def _with_context(e, msg):
    """An error of ``e``'s class with the message ``msg``."""
    try:
        return type(e)(msg)
    except TypeError:  # a subclass with another constructor
        return SimulationError(msg)


class _Show:
    """Called after step ``k`` of a rollout of ``n`` steps: every
    ``every``-th state and the last go to ``view.update(q, t, contacts)``
    (contacts as (points, forces) of the last step, world frame), and with
    ``realtime`` it sleeps while simulated time is ahead of the wall clock
    since the run began."""
    # the wall clock and the sleep, as attributes so that a test can run the pacing on a stand-in clock
    clock = staticmethod(time.perf_counter)
    sleep = staticmethod(time.sleep)

    def __init__(self, sim, view, n, every, realtime):
        self.sim, self.view, self.n, self.every, self.realtime = sim, view, n, every, realtime
        self.t0, self.wall0 = sim.state.t, self.clock()
        self._show()

    def _show(self):
        if self.view is None:
            return
        s, table = self.sim.state, self.sim.contact
        contacts = None
        if table is not None:
            last = table.last_step()
            contacts = (last["position"], last["force"])
        self.view.update(s.q, s.t, contacts)

    def __call__(self, k):
        if k % self.every and k != self.n:
            return
        self._show()
        if self.realtime:
            ahead = (self.sim.state.t - self.t0) - (self.clock() - self.wall0)
            if ahead > 0:
                self.sleep(ahead)


def _progress(n):
    try:
        from tqdm import tqdm
    except ImportError:  # progress bars are optional
        return None
    return tqdm(total=n, unit="step", leave=False, disable=None)  # disable=None: only on a terminal
