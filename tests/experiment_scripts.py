"""The scripts of an ``experiments/<paper>/`` folder as modules (loaded by
path: ``experiments/`` is not a package), so that the tests assert the
numbers of the very code that draws the figures."""
import importlib.util
import pathlib
import sys

EXPERIMENTS = pathlib.Path(__file__).resolve().parents[1] / "experiments"


def loader(paper):
    """``load(name)``: the module of ``experiments/<paper>/<name>.py``
    (loaded once; the folder on ``sys.path`` for the scripts' shared
    ``<paper>_common``)."""
    root = EXPERIMENTS / paper

    def load(name):
        if str(root) not in sys.path:
            sys.path.insert(0, str(root))
        key = f"_{paper}_{name}"
        if key not in sys.modules:
            spec = importlib.util.spec_from_file_location(key, root / f"{name}.py")
            module = importlib.util.module_from_spec(spec)
            sys.modules[key] = module
            spec.loader.exec_module(module)
        return sys.modules[key]

    return load
