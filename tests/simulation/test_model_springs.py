"""Joint springs carried by the model (ModelBuilder.add_body(stiffness=,
spring_reference=), MJCF stiffness/springref) are applied by the Simulator
unless joint_springs=False; checked against the closed-form oscillator."""
import numpy as np
import pytest

import multibody as mb


def oscillator(k, inertia, rest):
    b = mb.ModelBuilder("spring", gravity=(0, 0, 0))
    b.add_body("rotor", "world", "revolute", axis=(0, 0, 1), mass=1.0, inertia=np.diag([1.0, 1.0, inertia]),
               stiffness=k, spring_reference=rest)
    return b.build()


def test_builder_springs_are_model_fields():
    m = oscillator(4.0, 0.25, 0.3)
    np.testing.assert_array_equal(m.stiffness, [4.0])
    np.testing.assert_array_equal(m.spring_reference, [0.3])
    b = mb.ModelBuilder()
    b.add_body("base", "world", "free", mass=1.0, inertia=np.eye(3))
    m2 = b.build()
    np.testing.assert_array_equal(m2.stiffness, np.zeros(6))
    np.testing.assert_array_equal(m2.spring_reference, [0, 0, 0, 1, 0, 0, 0])  # identity quaternion


@pytest.mark.parametrize("bad", [{"stiffness": -1.0}, {"stiffness": np.nan}, {"spring_reference": np.inf},
                                 {"spring_reference": [0.0, 1.0]}])
def test_bad_springs_are_refused(bad):
    b = mb.ModelBuilder()
    with pytest.raises(mb.ModelError):
        b.add_body("rotor", "world", "revolute", mass=1.0, inertia=np.eye(3), **bad)


def test_simulated_spring_oscillates_at_its_natural_frequency():
    """θ(t) = rest + (θ0 - rest) cos(√(k/I) t) for a rotor on a torsion spring."""
    k, inertia, rest, theta0 = 4.0, 0.25, 0.3, 1.0
    m = oscillator(k, inertia, rest)
    sim = mb.Simulator(m, 1e-4, "rk4", q0=[theta0])
    traj = sim.rollout(duration=1.0, record_every=100)
    expected = rest + (theta0 - rest) * np.cos(np.sqrt(k / inertia) * traj.t)
    np.testing.assert_allclose(traj.q[:, 0], expected, atol=1e-9)
    # the spring's potential is recorded: energy is conserved
    assert np.ptp(traj.energy) < 1e-9 * traj.energy[0]
    off = mb.Simulator(m, 1e-4, "rk4", q0=[theta0], joint_springs=False).rollout(duration=0.1)
    np.testing.assert_allclose(off.q[:, 0], theta0)  # no spring, no gravity: it stays
