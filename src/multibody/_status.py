"""Status codes of the compiled kernels, encoded and decoded in one place.

Compiled kernels do not raise: they return an int64 status, and the Python
caller turns a failure into the exception of :mod:`multibody.errors` that
names the model's elements (a joint, an argument and its index), or takes a
checked path that does. The codes are module constants (compile-time
constants inside the kernels); kernels and callers import them from here,
and :func:`describe` says what any of them means. L0: imports nothing from
multibody.

Three families, each read only by the callers of its kernels (values of
different families may coincide):

* **fast paths** (``*_fast`` kernels over a ``Data.handle``, see
  :mod:`multibody._compiled`): besides a state status, ``BAD_SHAPE`` (a
  vector of the wrong length, a foreign thread, or an overflowing result:
  the caller takes the general path, which raises the precise error) and
  ``NEEDS_MATRIX`` (an nv x nv matrix of the Data is not allocated yet:
  the caller allocates it and calls again).
* **state** (``state_status`` of the dynamics kernels, ``q_status`` of
  the configuration kernels): 0 valid; ``ARG * argument + index + 1`` for
  the first non-finite entry ``index`` of argument 0 (q), 1 (v), 2 (a or
  τ) or 3 (hybrid dynamics' τ); ``-body`` for a quaternion that is not
  unit norm; ``-ARG - body`` for a singular articulated (or composite)
  inertia at ``body``; ``NOT_FLOATING`` for a floating-base algorithm on a
  model without a free root joint.
* **step** (the fused steps of ``integrators/_kernels.py`` and the end of
  step of ``constraints/_kernels.py``): >= 0 done, with the bits
  ``EFFORT_CLAMPED`` / ``VELOCITY_CLAMPED`` set when τ or v was clamped;
  ``TAU_NOT_FINITE - k`` for a non-finite τ[k] (nothing computed); any
  other negative value is a failure after which the outputs are undefined
  and the simulator re-runs the step on its checked Python path:
  ``MASS_NOT_POSITIVE_DEFINITE`` and ``LCP_NOT_FINISHED`` (the position
  limit solver), ``NON_FINITE`` / ``NON_FINITE_AFTER_LIMITS`` (the end of
  step found a NaN or an infinity), ``SINGULAR`` (the velocity equation's
  matrix; ``SINGULAR - 1`` for a loop-constraint solve),
  ``NOT_PROJECTED`` (the post-stabilization did not converge) and
  ``GIMBAL_LOCK - body`` (an Euler joint reached gimbal lock).
* **contact** (the contact solvers of ``solvers/``: ``pgs``, ``lemke``,
  ``pyramid_lcp``, ``box_lcp``): >= 0 done (the number of iterations or
  pivots); ``NOT_CONVERGED`` (the iteration cap came first: the outputs
  hold the last iterate), ``RAY`` (Lemke ended on a secondary ray: no
  solution found, e.g. an infeasible LCP), ``PIVOT_CAP`` (Lemke's pivot cap
  came first), ``CONTACT_BAD_SHAPE`` (inconsistent array sizes: nothing
  computed), ``CONTACT_NON_FINITE`` (a NaN or an infinity appeared),
  ``INACCURATE`` (a pivoting method's final basis gives z, w that violate
  the LCP beyond round-off).

Classifying failures by the *type* of the exception, never by the words of
its message: a non-finite value found by a check raises
:class:`~multibody.errors.NonFiniteError`, a singular or indefinite matrix
:class:`~multibody.errors.SimulationError`.
"""

# ---------------------------------------------------------------- fast paths
BAD_SHAPE = 1 << 62          # the caller takes the general path, which raises the error naming the argument
NEEDS_MATRIX = BAD_SHAPE + 1  # the caller allocates the Data's nv x nv matrix (Data.allocate) and calls again

# --------------------------------------------------------------------- state
ARG = 1 << 32                # non-finite entry: ARG * argument + index + 1
NOT_FLOATING = -(1 << 62)    # a floating-base algorithm on a model whose root joint is not free
STATE_ARGUMENTS = ("q", "v", "a or tau", "tau")  # what argument 0, 1, 2, 3 of a state status is

# ---------------------------------------------------------------------- step
EFFORT_CLAMPED = 1           # bit: τ was clamped to the effort limits
VELOCITY_CLAMPED = 2         # bit: v was clamped to the velocity limits
CONTACT_NOT_CONVERGED = 4    # bit: the contact solver reached its iteration cap (its last iterate was used)
CONTACTS_DROPPED = 8         # bit: more contacts than the contact buffers hold (the extra ones were ignored)
MASS_NOT_POSITIVE_DEFINITE = -1  # the limit solver's mass matrix is not positive definite
LCP_NOT_FINISHED = -2        # a limit LCP did not finish (the checked path solves it by NNLS)
NON_FINITE = -3              # the integrator's (q1, v1) has a NaN or an inf (or its sum overflows)
NON_FINITE_AFTER_LIMITS = -4  # (q1, v1) is finite but the limit impulses made it non-finite
TAU_NOT_FINITE = -(1 << 40)  # - k: τ[k] is not finite
SINGULAR = -(1 << 41)        # the velocity equation's matrix is singular (- 1: a loop-constraint solve)
NOT_PROJECTED = -(1 << 42)   # the post-stabilization did not converge (the checked path decides)
CONTACT_FAILED = -(1 << 43)  # the narrow phase failed on a pair (the contact table names it)
CONTACT_SOLVE_FAILED = -(1 << 44)  # the contact solver found no solution (Lemke: a ray or the pivot cap)
GIMBAL_LOCK = -(1 << 45)     # - i: body i's Euler joint is at gimbal lock (model.configuration.chart_kernel)

# ------------------------------------------------------------------- contact
NOT_CONVERGED = -1           # an iterative contact solver reached its iteration cap (outputs: the last iterate)
RAY = -2                     # Lemke's method ended on a secondary ray (no solution found)
PIVOT_CAP = -3               # Lemke's method reached its pivot cap
CONTACT_BAD_SHAPE = -4       # inconsistent array sizes (nothing computed)
CONTACT_NON_FINITE = -5      # a NaN or an infinity in the inputs or the iterates
INACCURATE = -6              # a pivoting method's final basis gives no solution beyond round-off

_CONTACT = {
    NOT_CONVERGED: "the iteration cap was reached before convergence",
    RAY: "Lemke's method ended on a secondary ray (no solution found: e.g. an infeasible LCP)",
    PIVOT_CAP: "Lemke's method reached its pivot cap",
    CONTACT_BAD_SHAPE: "the arrays have inconsistent sizes",
    CONTACT_NON_FINITE: "a NaN or an infinity appeared",
    INACCURATE: "the pivots ended on a basis whose solution violates the LCP beyond round-off (a degenerate or "
                "ill-conditioned problem)",
}

_STEP = {
    MASS_NOT_POSITIVE_DEFINITE: "the mass matrix is not positive definite",
    LCP_NOT_FINISHED: "a position-limit LCP did not finish",
    NON_FINITE: "the integrator's update is not finite",
    NON_FINITE_AFTER_LIMITS: "the position-limit impulses made the state non-finite",
    SINGULAR: "the velocity equation's matrix is singular",
    SINGULAR - 1: "a loop-constraint solve is singular",
    NOT_PROJECTED: "the post-stabilization did not converge",
    CONTACT_FAILED: "the narrow phase failed on a pair of geometries",
    CONTACT_SOLVE_FAILED: "the contact solver found no solution",
}


def decode_state(code):
    """A nonzero state status as ``(kind, argument, index)``: ``("non-finite",
    argument, index)`` with the argument's position (0: q, 1: v, 2: a or τ,
    3: hybrid τ); ``("quaternion", 0, body)``; ``("singular", None, body)``;
    ``("not floating", None, None)``."""
    if code == NOT_FLOATING:
        return "not floating", None, None
    if code <= -ARG:
        return "singular", None, -code - ARG
    if code < 0:
        return "quaternion", 0, -code
    argument, index = divmod(code - 1, ARG)
    return "non-finite", argument, index


def describe(code, family="step"):
    """What the status ``code`` of a kernel of ``family`` ("fast", "state",
    "step" or "contact") means, in words (for messages and debugging; the errors
    raised to users are built by the callers, which know the names)."""
    if family == "fast":
        if code == BAD_SHAPE:
            return "handed to the general path (bad shape, foreign thread or overflow)"
        if code == NEEDS_MATRIX:
            return "the Data's nv x nv matrix is not allocated yet"
        family = "state"
    if family == "state":
        if code == 0:
            return "valid"
        kind, argument, index = decode_state(code)
        if kind == "non-finite":
            name = STATE_ARGUMENTS[argument] if argument < len(STATE_ARGUMENTS) else f"argument {argument}"
            return f"{name} has a non-finite entry at index {index}"
        if kind == "quaternion":
            return f"the quaternion of body {index} is not unit norm"
        if kind == "singular":  # fd by CRBA: pivot index - 1 of the joint-space inertia
            return f"a singular inertia at body {index} (articulated or composite)"
        return "the model has no free root joint"
    if family == "contact":
        return f"done ({code} iterations or pivots)" if code >= 0 else _CONTACT.get(code, f"unknown contact status {code}")
    if family != "step":
        raise ValueError(f"unknown status family {family!r} (use 'fast', 'state', 'step' or 'contact')")
    if code >= 0:
        done = [w for w, bit in (("effort", EFFORT_CLAMPED), ("velocity", VELOCITY_CLAMPED)) if code & bit]
        notes = [f"{' and '.join(done)} clamped"] if done else []
        notes += [w for w, bit in (("contact solver not converged", CONTACT_NOT_CONVERGED),
                                   ("contacts dropped", CONTACTS_DROPPED)) if code & bit]
        return "done" + (f" ({'; '.join(notes)})" if notes else "")
    if TAU_NOT_FINITE - (1 << 39) < code <= TAU_NOT_FINITE:
        return f"tau has a non-finite entry at index {TAU_NOT_FINITE - code}"
    if GIMBAL_LOCK - (1 << 40) < code <= GIMBAL_LOCK:
        return f"the Euler joint of body {GIMBAL_LOCK - code} is at gimbal lock"
    return _STEP.get(code, f"unknown step status {code}")
