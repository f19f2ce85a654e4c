"""Fuzzing load_mjcf (fixed seeds): mutations of the MJCF files shipped in
``multibody/data`` and of the MJCF strings of the tests give a Model or a
:class:`~multibody.errors.MultibodyError` — never another exception, never
a non-finite neutral configuration, never a hang (each load runs under an alarm).
300 mutations in the default run; 3,000 more with ``-m slow``."""
import glob
import os
import sys

import pytest

import fuzzing
import multibody as mb

mujoco = pytest.importorskip("mujoco")

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "constraints"))


def corpus():
    """(label, XML text) of every seed file."""
    out = []
    for path in sorted(glob.glob(os.path.join(os.path.dirname(mb.__file__), "data", "**", "*.xml"), recursive=True)):
        with open(path) as f:
            out.append((os.path.basename(path), f.read()))
    import test_equality_frames as tef
    import test_mjcf_lenient as tml
    import test_mjcf_loader as tl
    out += [(f"MODELS[{k}]", v) for k, v in sorted(tl.MODELS.items())]
    out += [("FOUR_BAR_TIP", tef.FOUR_BAR_TIP), ("WELDED_BOX", tef.WELDED_BOX), ("SPRINGS", tml.SPRINGS),
            ("MOTORS", tml.MOTORS), ("TEMPLATE", tml.TEMPLATE.format(**tml.FINE)),
            ("BAD_INERTIA", tml.BAD_INERTIA.format(compiler="", inertia='diaginertia="0.1 0.1 0.5"'))]
    return out


TAGS = ["body", "joint", "geom", "site", "inertial", "freejoint", "connect", "weld", "motor", "position", "tendon",
        "default", "include", "compiler", "option", "frame", "camera", "light", "equality", "actuator", "sensor"]


def check(seed, n, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # MuJoCo's MUJOCO_LOG.TXT
    fuzzing.check(*fuzzing.run(corpus(), n, seed, lambda k, text: mb.load_mjcf(text, inertia=("warn", "strict",
                                                                                               "fix")[k % 3]),
                               TAGS), n)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_mutated_mjcf_gives_a_model_or_a_library_error(seed, tmp_path, monkeypatch):
    check(seed, 100, tmp_path, monkeypatch)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(100, 106))
def test_mutated_mjcf_many(seed, tmp_path, monkeypatch):
    check(seed, 500, tmp_path, monkeypatch)
