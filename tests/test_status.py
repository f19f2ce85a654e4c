"""Status codes live in one module (multibody._status): the kernels return
them and the callers decode them; the checks that find a NaN or an inf
raise NonFiniteError, by whose type the simulator tells a diverging state
from a user's mistake (tests/simulation/test_errors.py)."""
import numpy as np
import pytest

import multibody as mb
from multibody import _status as S
from multibody.errors import InputError, NonFiniteError
from oracles import robot_path

STEP_FAILURES = (S.MASS_NOT_POSITIVE_DEFINITE, S.LCP_NOT_FINISHED, S.NON_FINITE, S.NON_FINITE_AFTER_LIMITS,
                 S.SINGULAR, S.SINGULAR - 1, S.NOT_PROJECTED)


def test_the_kernels_use_the_codes_of_the_status_module():
    from multibody import _compiled
    from multibody.constraints import _kernels as CK
    from multibody.dynamics import floating_kernels as FK, kernels as K
    from multibody.integrators import _kernels as IK
    from multibody.simulation import _kernels as SK
    assert (_compiled.BAD_SHAPE, _compiled.NEEDS_MATRIX) == (S.BAD_SHAPE, S.NEEDS_MATRIX)
    assert (K.ARG, FK.ARG, FK.NOT_FLOATING) == (S.ARG, S.ARG, S.NOT_FLOATING)
    assert (CK.NON_FINITE, CK.NON_FINITE_AFTER_LIMITS, SK.NON_FINITE) == (S.NON_FINITE, S.NON_FINITE_AFTER_LIMITS,
                                                                          S.NON_FINITE)
    assert (IK.EFFORT_CLAMPED, IK.VELOCITY_CLAMPED, IK.TAU_NOT_FINITE, IK.SINGULAR, IK.NOT_PROJECTED) == \
        (S.EFFORT_CLAMPED, S.VELOCITY_CLAMPED, S.TAU_NOT_FINITE, S.SINGULAR, S.NOT_PROJECTED)


def test_step_codes_are_distinct_and_each_has_its_own_description():
    assert len(set(STEP_FAILURES)) == len(STEP_FAILURES)
    words = [S.describe(c) for c in STEP_FAILURES]
    assert len(set(words)) == len(words) and not any(w.startswith("unknown") for w in words)
    assert S.describe(0) == "done"
    assert S.describe(S.EFFORT_CLAMPED | S.VELOCITY_CLAMPED) == "done (effort and velocity clamped)"
    assert S.describe(S.TAU_NOT_FINITE - 7) == "tau has a non-finite entry at index 7"
    # a τ index never reaches the other codes (nv < 2**39)
    assert S.TAU_NOT_FINITE - (1 << 39) > S.SINGULAR
    assert S.describe(-12345) == "unknown step status -12345"
    with pytest.raises(ValueError, match="unknown status family"):
        S.describe(0, "nope")


def test_state_codes_decode_the_encoding_of_the_kernels():
    assert S.decode_state(1 + 4) == ("non-finite", 0, 4)             # q_status: 1 + index
    assert S.decode_state(S.ARG + 3 + 1) == ("non-finite", 1, 3)     # v[3]
    assert S.decode_state(2 * S.ARG + 0 + 1) == ("non-finite", 2, 0)  # a or τ [0]
    assert S.decode_state(-5) == ("quaternion", 0, 5)
    assert S.decode_state(-S.ARG - 2) == ("singular", None, 2)
    assert S.decode_state(S.NOT_FLOATING) == ("not floating", None, None)
    assert S.describe(S.ARG + 3 + 1, "state") == "v has a non-finite entry at index 3"
    assert S.describe(S.BAD_SHAPE, "fast").startswith("handed to the general path")
    assert S.describe(S.ARG + 1, "fast") == "v has a non-finite entry at index 0"


def test_checks_raise_non_finite_error_a_subclass_of_the_input_error_raised_before():
    model = mb.load_urdf(robot_path("ur5"))
    q, v = np.zeros(6), np.array([0.0, np.nan, 0, 0, 0, 0])
    with pytest.raises(NonFiniteError, match=r"v has a non-finite entry at index 1") as err:
        mb.rnea(model, q, v, np.zeros(6))
    assert isinstance(err.value, InputError)
    with pytest.raises(NonFiniteError, match=r"q has a non-finite entry at index 0"):
        mb.forward_kinematics(model, np.array([np.inf, 0, 0, 0, 0, 0]))
    with pytest.raises(NonFiniteError, match=r"tau has a non-finite entry at index 1"):
        mb.aba(model, q, np.zeros(6), np.array([0.0, -np.inf, 0, 0, 0, 0]))
