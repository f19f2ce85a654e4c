"""Drumwright (seed 003) experiment E8 (§6.5, Fig. 10): a column of spheres
falls onto the ground and onto each other and comes to rest, by
experiments/drumwright/e8_sphere_stack.py (5 s at h = 10 ms, the Hertz law
with E* = 1e11). Oracle: the rest heights of the column in closed form
(contact k carries the weight of the spheres above it: Hertz depth
(F/(E*√r))^{2/3}); no timing is asserted (the benchmark and the script
report it)."""
import warnings

import pytest

from .experiments import load

E8 = load("e8_sphere_stack")


def settled(count):
    """(kinetic energy at the end, the largest height error from the rest
    column's, the largest lateral offset) of the 5 s run."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a cold impact step may reach the sweep cap (reported by the script)
        r = E8.run(count)
    return r["kinetic"], abs(r["z"][-1] - E8.rest_heights(count)).max(), r["lateral"]


@pytest.mark.parametrize("count", [10, 20])
def test_stack_comes_to_rest(count):
    kinetic, height, lateral = settled(count)
    assert kinetic < 1e-10
    assert height < 1e-8
    assert lateral < 1e-12  # aligned, nothing breaks the symmetry: still a column


@pytest.mark.slow
@pytest.mark.parametrize("count", [50, 100])
def test_tall_stack_comes_to_rest(count):
    """The tall columns were the test of the implicit Hertz secant
    (constraints/_contact.py, hertz_round): with the stiffness lagged at the
    start of the step spheres interpenetrated and were thrown metres up."""
    kinetic, height, lateral = settled(count)
    assert kinetic < 1e-10
    assert height < 1e-8
    assert lateral < 1e-12
