"""The fused semi-implicit Euler step with loop constraints reuses the
factors (M's LᵀDL, G, M⁻¹Gᵀ and GM⁻¹Gᵀ's) that the previous step's
post-stabilization left at its final configuration, kept in the step
table and keyed by that configuration bit for bit
(constraints/_kernels.py: ``table_set``, ``sie_step``, ``project_step``).
The reuse must give the numbers a fresh computation gives: the Python
path (fresh factors every step) is the reference, after a restore to an
earlier state too, and for rows that do not fit the table (more rows
than coordinates: fresh factors every step)."""
import numpy as np

import multibody as mb
from .mechanisms import four_bar


def _pair(model, steps, tau, **options):
    """(fused, Python) simulators stepped with the same joint forces."""
    a = mb.Simulator(model, 1e-3, "semi_implicit_euler", contact_solver=None, **options)
    b = mb.Simulator(model, 1e-3, "semi_implicit_euler", contact_solver=None, **options)
    assert a.fused is not None
    b.fused = None
    for k in range(steps):
        a.step(tau[k])
        b.step(tau[k])
    return a, b


def test_reused_factors_equal_fresh_ones_across_a_restore():
    """After a restore the factors kept in the table belong to another
    configuration: the key differs, so they are computed again. The
    restored run repeats the first run bit for bit, and both equal the
    Python path."""
    model = mb.load_mjcf("src/multibody/data/robots/four_bar.xml")
    tau = np.random.default_rng(3).normal(scale=0.05, size=(40, model.nv))
    a, b = _pair(model, 15, tau)
    mark = a.checkpoint()
    for k in range(15, 40):
        a.step(tau[k])
    q_first, v_first = a.state.q.copy(), a.state.v.copy()
    a.restore(mark)
    for k in range(15, 40):
        a.step(tau[k])
        b.step(tau[k])
    np.testing.assert_array_equal(a.state.q, q_first)
    np.testing.assert_array_equal(a.state.v, v_first)
    np.testing.assert_allclose(a.state.q, b.state.q, rtol=0, atol=1e-12)
    np.testing.assert_allclose(a.state.v, b.state.v, rtol=0, atol=1e-11)
    assert a.constraint_residual() < 1e-12


def test_more_rows_than_coordinates_take_fresh_factors():
    """The four-bar closed by a revolute loop joint: 5 rows (rank 2) on 3
    coordinates, more than the table holds: the step computes its factors
    each time, and equals the Python path."""
    model, q0 = four_bar()
    assert mb.constraints.Constraints(model).size > model.nv
    tau = np.random.default_rng(4).normal(scale=0.05, size=(60, model.nv))
    a, b = _pair(model, 60, tau, q0=q0)
    np.testing.assert_allclose(a.state.q, b.state.q, rtol=0, atol=1e-12)
    np.testing.assert_allclose(a.state.v, b.state.v, rtol=0, atol=1e-11)
    assert a.constraint_residual() < 1e-12
    assert np.abs(a.state.v).max() > 0.1  # it moved
