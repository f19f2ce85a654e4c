"""The scripts of experiments/drumwright/ as modules (loaded by path:
``experiments/`` is not a package), so that the tests assert the numbers
of the very code that draws the figures."""
import importlib.util
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2] / "experiments" / "drumwright"


def load(name):
    """The module of ``experiments/drumwright/<name>.py`` (loaded once; the
    folder on ``sys.path`` for the scripts' shared ``drumwright_common``)."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    key = f"_drumwright_{name}"
    if key not in sys.modules:
        spec = importlib.util.spec_from_file_location(key, ROOT / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[key] = module
        spec.loader.exec_module(module)
    return sys.modules[key]
