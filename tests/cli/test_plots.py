"""The trajectory plot writes a PNG with the panels it documents."""
import numpy as np
import pytest

import multibody as mb

pytest.importorskip("matplotlib")


def test_plot_trajectory_writes_energy_drift_and_joint_panels(tmp_path, monkeypatch):
    from matplotlib.figure import Figure

    from multibody.viz import plot_trajectory
    b = mb.ModelBuilder("pendulum")
    b.add_body("bob", "world", "revolute", axis=(0, 1, 0), mass=1.0, com=(0, 0, -1.0), inertia=np.eye(3) * 1e-3,
               damping=0.1, lower=0.3)
    traj = mb.Simulator(b.build(), 1e-3, q0=[1.5]).rollout(duration=1.0)
    saved = []
    monkeypatch.setattr(Figure, "savefig", lambda fig, path, **kw: saved.append(
        [ax.get_ylabel() for ax in fig.axes]) or open(path, "wb").write(b"\x89PNG"))
    path = plot_trajectory(traj, tmp_path / "run.png", joints=[0],
                           extra={"speed": (traj.t, np.abs(traj.v[:, 0]) + 1e-9)})
    assert path.read_bytes().startswith(b"\x89PNG")
    assert saved == [["energy (J)", "energy drift (J)", "joint position", ""]]
