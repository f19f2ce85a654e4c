"""Drumwright (seed 003) experiment E7 (§6.4, Fig. 9): the block on a 15°
incline on four Hertzian feet (E* = 1e11 Pa, r = 0.01 m, B_t = 10⁶/h,
h = 0.01 s, g = 9.8), by experiments/drumwright/e7_incline.py. Oracle:
Coulomb's sliding distance ½g(sin θ − μ cos θ)t² (1.268, 0.677, 0.085, 0
m after 1 s), the normal force mg cos θ, and pitfall P6's hop (absent)."""
import warnings

import numpy as np
import pytest

from .experiments import load

E7 = load("e7_incline")


@pytest.fixture(scope="module")
def runs():
    with warnings.catch_warnings():  # the first step of a cold stiff friction problem may reach the sweep cap
        warnings.simplefilter("ignore")
        return {mu: E7.run(mu) for mu in E7.FRICTIONS}


@pytest.mark.parametrize("mu,distance", [(0.0, 1.268), (0.125, 0.677), (0.25, 0.085)])
def test_sliding_distance_within_two_percent_of_coulomb(runs, mu, distance):
    assert E7.coulomb_distance(mu) == pytest.approx(distance, abs=5e-4)  # the numbers
    assert runs[mu]["distance"][-1] == pytest.approx(E7.coulomb_distance(mu), rel=0.02)


def test_distance_decreases_with_friction(runs):
    d = [runs[mu]["distance"][-1] for mu in E7.FRICTIONS]
    assert all(a > b for a, b in zip(d, d[1:]))


def test_no_creep_above_the_angle_of_repose(runs):
    """μ = 0.375 > tan 15°: sticks (B_t = 10⁶/h: a creep of λ_t/B_t ~ 6e-9 m/s)."""
    assert abs(runs[0.375]["distance"][-1]) < 1e-6


def test_no_hop_and_the_weight_carried(runs):
    """The block never leaves the slope (its normal offset stays at the
    Hertz depth's scale, 0.4 µm) and the feet carry mg cos θ = 9.466 N."""
    weight = E7.MASS * E7.GRAVITY * np.cos(E7.ANGLE)
    for mu, r in runs.items():
        assert np.abs(r["height"]).max() < 1e-7, mu
        assert r["normal"][-1] == pytest.approx(weight, rel=1e-6), mu


def test_frictionless_gives_exactly_zero_friction(runs):
    assert runs[0.0]["friction"].max() == 0.0


def test_the_papers_program_makes_the_sliding_block_hop():
    """Pitfall P6, reproduced: with the paper's QP/SOCP (ζ = 1/h) the
    normal impulses of the sliding block exceed the max law and it leaves
    the slope (by most of a metre within 1 s at μ = 0.125)."""
    r = E7.run(0.125, formulation="paper")
    assert r["height"].max() > 0.1
    assert r["normal"].max() > 10 * E7.MASS * E7.GRAVITY
