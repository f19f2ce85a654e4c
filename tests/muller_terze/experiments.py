"""The scripts of experiments/muller_terze/ as modules (loaded by path:
``experiments/`` is not a package), so that the tests assert the numbers
of the very code that draws the figures."""
import importlib.util
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2] / "experiments" / "muller_terze"


def load(name):
    """The module of ``experiments/muller_terze/<name>.py`` (loaded once; the
    folder on ``sys.path`` for the scripts' shared ``muller_terze_common``)."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    key = f"_muller_terze_{name}"
    if key not in sys.modules:
        spec = importlib.util.spec_from_file_location(key, ROOT / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[key] = module
        spec.loader.exec_module(module)
    return sys.modules[key]
