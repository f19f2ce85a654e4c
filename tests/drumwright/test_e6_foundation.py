"""Drumwright (seed 003) experiment E6 (§5.5, Tables 1–2): a 1 m, 8 kg cube
on a Winkler foundation (10 × 10 or 30 × 30 elements, E = 1e7 or 1e11 Pa,
B = 1 N·s/m, frictionless) with a 5 N or 50 N load circling on its top
face, by experiments/drumwright/e6_foundation.py. Accuracy only — the
timings of Table 1 are the script's. Oracles: the static sink
(mg + F)·depth/(E·A) and Σλ = mg + F; lift-off of the far side under 50 N
(notes invariant 8); the error after 1 s against the script's RK45
solution of the 13-state ODE with the elements' law λ = max(0, −Kφ − Bφ̇).

What (d) asserts about the error, and why not the paper's Table 2. The
paper's 5 N errors (2.96e-5 m for 100 elements, E = 1e7) exceed every
displacement of the system (sink 8.3e-6 m, tilt 3e-6 rad; frictionless,
so the centre of mass never moves sideways), and its 50 N errors (0.81)
would need the cube to leave the foundation: no first-order error against
an accurate reference is of that order, so their order is not asserted
(the script prints them beside ours). What the simulator's error should
be is derived instead: the load acts at its point at the start of each
step and, at ωh ≫ 1, implicit Euler puts the cube in the quasi-static
pose of that load, so its tilt — a vector turning with the load at
Ω = 10 rad/s — lags by h: an error of θΩh/2 in the quaternion
(``E6.lag_estimate``; 1.56e-7 at 5 N, 1.6e-6 at 50 N). The measured errors
are 0.88–1.21 of it in the four 100-element cells; asserted within a
factor 2 (the rest is the reference's own ringing, which B = 1 N·s/m
damps only at B_tot/2m = 6.25 /s in heave and 3.1 /s in rocking, while
implicit Euler removes it at once: ~7e-8 left at 1 s for 5 N). At
h = 1e-3 the lag shrinks tenfold but that ringing remains, so the error
drops by 2.7× (5 N) and 6.8× (50 N): asserted to drop by more than 2×.

Runtime. Compiled, the tests that are not marked slow take ~10 s; with
NUMBA_DISABLE_JIT=1 a simulator step with 100 contacts takes 0.4–0.8 s,
so the 1000-step runs (h = 1e-3), the 50 N run of 1 s, the 900-element
cells and the stiff (E = 1e11) RK45 reference (~1 min) are marked slow."""
import warnings

import numpy as np
import pytest

from .experiments import load

E6 = load("e6_foundation")
WEIGHT = E6.MASS * E6.GRAVITY


def drumwright(*args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a step at the sweep cap would fail the test
        return E6.run_drumwright(*args, **kwargs)


@pytest.fixture(scope="module")
def references():
    """The RK45 solutions of the 100-element, E = 1e7 cells (~1 s each), by load."""
    return {F: E6.run_ode(10, 1e7, F, "RK45", limit=np.inf) for F in E6.LOADS}


@pytest.fixture(scope="module")
def five_newtons():
    """The simulator's 100-element, E = 1e7, 5 N run of 1 s at h = 0.01 s."""
    return drumwright(10, 1e7, 5.0)


# (a), (b): statics

def static_case(n, E, F=50.0):
    """The load at the centre of the top face, B = critical damping of the heave."""
    return drumwright(n, E, F, centred=True, damping=E6.critical_damping(n, E), duration=0.2)


def check_static(r, n, E, F, rtol):
    assert r["sink"][-1] == pytest.approx(E6.static_sink(E, F), rel=rtol)
    assert r["normal"][-1] == pytest.approx(WEIGHT + F, rel=1e-9)  # Σλ = mg + F
    assert r["loaded"][-1] == n * n and r["min_force"][-1] == pytest.approx((WEIGHT + F) / n ** 2, rel=1e-6)
    assert r["tilt"][-1] < 1e-6 * E6.static_sink(E, F)  # centred: no rocking


@pytest.mark.parametrize("E, rtol", [(1e7, 1e-9), (1e11, 1e-5)])
def test_static_sink_under_a_centred_load(E, rtol):
    """The sink of the bottom face is (mg + F)·depth/(E·A) and the elements
    carry mg + F, evenly. B is the critical damping of the heave
    (2√(k_tot m)/n² = 179 N·s/m per element for E = 1e7, 1.8e4 for
    1e11): with the paper's B = 1 N·s/m the heave decays at B_tot/2m =
    6.25 /s whatever E, so the physical cube would still ring at 1e-9 of
    its sink after 3.3 s; the simulator would settle anyway by implicit
    Euler's numerical damping (ωh = 11 and 1100), but the test should not
    rest on that. Implicit Euler shrinks a critically damped transient by
    1/(1 + ωh) per step (double root; 0.082 at E = 1e7), so 20 steps (0.2
    s) leave ~1e-21 of it (10 steps would leave 1.4e-10). The tolerance at E =
    1e11 is 1e-5, not 1e-9: the sink is 8.3e-10 m and the spring states
    move by h × the velocity residual of the solve, ~1e-13 m/s (its
    round-off floor), i.e. ~1e-15 m: measured 2.4e-7 relative with 100
    elements, 6e-9 with 900."""
    check_static(static_case(10, E), 10, E, 50.0, rtol)


@pytest.mark.slow
@pytest.mark.parametrize("E, rtol", [(1e7, 1e-9), (1e11, 1e-5)])
def test_static_sink_with_900_elements(E, rtol):
    check_static(static_case(30, E), 30, E, 50.0, rtol)


# (c): lift-off

@pytest.mark.parametrize("E", E6.MODULI)
def test_the_far_side_lifts_under_50_newtons(E):
    """50 N circling: the load's moment (25 N·m) lifts the far edge (its
    share 150/k_tot beats the uniform 128.4/k_tot: notes E6): in some step
    elements carry no force, the one farthest from the load among them;
    5 N: every element stays loaded (in the first 0.1 s)."""
    r = drumwright(10, E, 50.0, duration=0.1)
    assert r["loaded"][1:].min() < 100
    assert (r["far_force"][1:] == 0.0).any()
    assert r["min_force"][1:].min() == 0.0
    r = drumwright(10, E, 5.0, duration=0.1)
    assert (r["loaded"][1:] == 100).all() and r["min_force"][1:].min() > 0.0


def test_the_reference_lifts_too(references):
    """Lift-off is the model's, not the simulator's: the RK45 solution's
    elements carry no force on the far side at some output time (50 N),
    and all carry force under 5 N after the first drop (t ≥ 0.1 s)."""
    ref = references[50.0]
    forces = [E6.ode_forces(10, 1e7, y) for y in ref["y"]]
    assert min(np.sum(f > 0) for f in forces) < 100
    ref = references[5.0]
    assert all(np.all(E6.ode_forces(10, 1e7, y) > 0) for y in ref["y"][10:])


@pytest.mark.slow
def test_the_far_side_lifts_with_900_elements():
    r = drumwright(30, 1e7, 50.0, duration=0.1)
    assert r["loaded"][1:].min() < 900 and (r["far_force"][1:] == 0.0).any()


# (d): the error after 1 s against RK45

def check_error(dw, ref, paper):
    a, rel = E6.error(dw, ref)
    assert 0.5 < a / E6.lag_estimate(ref, E6.H) < 2.0
    assert a < paper  # the paper's Table 2 value (not its order: the module docstring)
    assert rel == pytest.approx(a / np.sqrt(0.25 + 1.0), rel=1e-3)  # ‖q_ref‖ = |(0, 0, 1/2, unit quaternion)|
    return a


def test_error_is_the_lag_of_the_load(references, five_newtons):
    """h = 0.01 s: the error is θΩh/2 (module docstring) within a factor 2:
    1.38e-7 at 5 N (the paper: 2.96e-5)."""
    check_error(five_newtons, references[5.0], E6.PAPER_TABLE2[100, 5.0, 1e7][0])


@pytest.mark.slow
def test_error_is_the_lag_of_the_load_at_50_newtons(references):
    """The same at 50 N, with lift-off: 1.52e-6 (the paper: 0.813)."""
    check_error(drumwright(10, 1e7, 50.0), references[50.0], E6.PAPER_TABLE2[100, 50.0, 1e7][0])


@pytest.mark.slow
@pytest.mark.parametrize("F", E6.LOADS)
def test_error_drops_from_h_1e2_to_1e3(references, F):
    """h = 1e-3: the lag shrinks tenfold, the reference's ringing does not:
    the error drops by more than 2 (2.7× at 5 N, 6.8× at 50 N; the
    paper's 50 N error: 0.813 → 3.14e-3)."""
    coarse = E6.error(drumwright(10, 1e7, F), references[F])[0]
    fine = E6.error(drumwright(10, 1e7, F, h=1e-3), references[F])[0]
    assert fine < coarse / 2.0
    assert fine < E6.PAPER_FINE[1e7]


@pytest.mark.slow
def test_error_with_the_stiff_foundation():
    """E = 1e11, 5 N (the stiff RK45 reference: ~3e6 evaluations, ~1 min):
    the same lag law, 1.5e-11 at h = 0.01 s (the paper: 2.91e-7), and
    smaller at h = 1e-3."""
    ref = E6.run_ode(10, 1e11, 5.0, "RK45", limit=np.inf)
    coarse = check_error(drumwright(10, 1e11, 5.0), ref, E6.PAPER_TABLE2[100, 5.0, 1e11][0])
    assert E6.error(drumwright(10, 1e11, 5.0, h=1e-3), ref)[0] < coarse / 2.0


@pytest.mark.slow
@pytest.mark.parametrize("F", E6.LOADS)
def test_error_with_900_elements(F):
    """900 elements, E = 1e7: the same lag law (the paper: 1.98e-5 at 5 N,
    1.0e-2 at 50 N)."""
    ref = E6.run_ode(30, 1e7, F, "RK45", limit=np.inf)
    check_error(drumwright(30, 1e7, F), ref, E6.PAPER_TABLE2[900, F, 1e7][0])


def test_the_ode_and_the_simulator_agree_on_the_force_law(references, five_newtons):
    """The two models are the same system: the simulator's last element
    forces (5 N, h = 0.01 s) are the reference's at 1 s to the size of the
    lag (θΩh of the tilt over the half-width: a few per cent of the spread
    of the forces), and both sum to mg + F."""
    dw = five_newtons
    ref = E6.ode_forces(10, 1e7, references[5.0]["y"][-1])
    assert dw["forces"].sum() == pytest.approx(WEIGHT + 5.0, rel=1e-6)
    assert ref.sum() == pytest.approx(WEIGHT + 5.0, rel=1e-2)
    spread = np.ptp(ref)
    assert np.abs(dw["forces"] - ref).max() < 0.25 * spread
