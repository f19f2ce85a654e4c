"""``Simulator.control`` and ``activation`` are read-only copies: writing
into them (MuJoCo's ``d.ctrl[:] = u`` habit) raises instead of changing a
copy and silently leaving the controls as they were."""
import numpy as np
import pytest

import multibody as mb

ARM = """<mujoco><option timestep="0.002"/><worldbody><body name="a"><joint name="j" axis="0 1 0"/>
<geom type="capsule" fromto="0 0 0 0 0 -0.3" size="0.02" mass="1"/></body></worldbody>
<actuator><position name="servo" joint="j" kp="10" timeconst="0.05"/></actuator></mujoco>"""


def test_writing_into_control_raises_and_assignment_sets():
    sim = mb.Simulator(mb.load_mjcf(ARM), 0.002)
    with pytest.raises(ValueError, match="read-only"):
        sim.control[:] = 0.5
    with pytest.raises(ValueError, match="read-only"):
        sim.activation[:] = 0.5
    assert sim.control[0] == 0.0
    sim.control = np.array([0.5])
    held = sim.control
    sim.step()
    assert held[0] == 0.5 and sim.control[0] == 0.5 and sim.activation[0] > 0.0  # the filter moved towards 0.5
