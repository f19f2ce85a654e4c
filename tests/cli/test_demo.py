"""The main job: the demo prints the model and runs a computed-torque
tracking simulation that converges and writes its report."""
import numpy as np

import multibody as mb
from multibody.cli import DATA, demo, tracking_demo


def test_demo_runs_and_tracks(tmp_path):
    lines = []
    model = demo(out=lines.append)
    text = "\n".join(lines)
    assert "nq = 7, nv = 7" in text and "total mass = 17.900 kg" in text
    traj, err = tracking_demo(model, duration=0.3, out_dir=str(tmp_path), out=lines.append)
    # computed torque with the exact model: the error stays at the level of the
    # 1 kHz zero-order hold (O(dt)), far below the trajectory's amplitude
    assert err.max() < 1e-3
    assert not traj.effort_clamped.any() and not traj.velocity_clamped.any()  # the trajectory respects the limits
    balance = [line for line in lines if "balance residual" in line][0]
    assert abs(float(balance.split("residual")[1].split("J")[0])) < 1e-3  # work-energy theorem
    assert (tmp_path / "demo.png").stat().st_size > 10_000
    again = mb.Trajectory.load(tmp_path / "demo_trajectory.npz")
    np.testing.assert_array_equal(again.q, traj.q)
    assert DATA.endswith("robots")
