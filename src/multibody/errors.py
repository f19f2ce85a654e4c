"""The exception hierarchy of multibody.

Every error the library raises on bad input derives from :class:`MultibodyError`
and names the offending element (a URDF link, a joint, an array and its
expected shape) in its message.
"""


class MultibodyError(Exception):
    """Base class of every error raised by multibody."""


class ModelError(MultibodyError, ValueError):
    """An ill-formed model: bad topology, non-physical inertia, bad joint data."""


class ModelFileError(ModelError):
    """A model file that cannot be read or parsed (URDF, MJCF)."""


class InputError(MultibodyError, ValueError):
    """An argument of the wrong shape, type or value (e.g. a non-finite state)."""


class NonFiniteError(InputError):
    """An array holds a NaN or an infinity where finite numbers are needed:
    a non-finite input, or a result that overflowed although its inputs were
    finite. Raised by the checks that find one (the message names the array
    and the index). Inside a simulation step, whose inputs were checked,
    it means that the state diverged: the simulator reports it as a
    :class:`SimulationError`."""


class SimulationError(MultibodyError, RuntimeError):
    """A simulation that cannot go on (non-finite state, failed solve)."""


class ContactSolveError(SimulationError):
    """A contact solve failed (``multibody.solvers.solve_contact``): Lemke's
    method ended on a secondary ray (no solution found; for the contact
    LCPs an infeasible problem) or at its pivot cap, or the conic solver of
    a reference mode reported anything but success."""


class ModelWarning(UserWarning):
    """A model file was accepted with values multibody kept or repaired
    (e.g. an inertia violating the triangle inequality, a dropped MJCF
    element). Filter it with :mod:`warnings` or turn it into an error with
    ``warnings.simplefilter("error", mb.ModelWarning)``."""


class SimulationWarning(UserWarning):
    """Something a simulation did to the user's inputs that changes the
    motion but is not an error (e.g. joint forces clamped to the effort
    limits), reported once per run."""
