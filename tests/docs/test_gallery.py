"""The examples gallery (docs/gallery.md): every example of examples/ is
on the page with its figure, and every example runs and draws its figure
(shortened here; the full runs' results are checked by
tests/cli/test_examples.py, tests/simulation/test_muscle_arm.py and
tests/formulations/test_cloth.py)."""
import importlib.util
import os
import re

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
EXAMPLES = os.path.join(ROOT, "examples")


def _load(name):
    spec = importlib.util.spec_from_file_location(f"gallery_{name}", os.path.join(EXAMPLES, f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _is_png(path):
    with open(path, "rb") as f:
        return f.read(8) == b"\x89PNG\r\n\x1a\n"


def test_every_example_is_in_the_gallery_with_its_figure():
    with open(os.path.join(ROOT, "docs", "gallery.md"), encoding="utf-8") as f:
        page = f.read()
    names = sorted(n[:-3] for n in os.listdir(EXAMPLES) if n.endswith(".py"))
    assert names
    for name in names:
        assert f'--8<-- "examples/{name}.py"' in page, f"examples/{name}.py is not in docs/gallery.md"
        figure = f"img/gallery/{name}.png"
        assert re.search(r"!\[[^\]]+\]\(" + re.escape(figure) + r"\)", page), f"no figure for {name}"
        assert _is_png(os.path.join(ROOT, "docs", figure))


def test_pd_control_draws_its_figure(tmp_path):
    from multibody.viz import plot_trajectory
    traj, goal = _load("pd_control").run(duration=0.2)
    path = tmp_path / "pd_control.png"
    plot_trajectory(traj, str(path), title="PD control with gravity compensation")
    assert _is_png(path)


def test_muscle_arm_draws_its_figure(tmp_path):
    example = _load("muscle_arm")
    traj, records = example.run(0.2)
    path = example.plot(traj, records, str(tmp_path / "muscle_arm.png"))
    assert _is_png(path)


def test_cloth_draws_its_figure(tmp_path, capsys):
    path = tmp_path / "cloth.png"
    traj = _load("cloth").main(["--n", "6", "--duration", "0.05", "--out", str(path)])
    assert _is_png(path) and len(traj.t) == 6
    assert "saved" in capsys.readouterr().out


@pytest.mark.parametrize("name", ["pd_control", "muscle_arm", "cloth"])
def test_examples_have_a_docstring_saying_how_to_run_them(name):
    assert f"python examples/{name}.py" in _load(name).__doc__
