"""What the experiment scripts of experiments/drumwright/ share: their
command line (``--out DIR``, default out/drumwright) and the writing of
their figure (experiments/figures.py). Imported by name: the scripts'
folder is on ``sys.path`` when they run, and tests/drumwright/experiments.py
puts it there."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import figures  # noqa: E402
from figures import save, subplots  # noqa: E402,F401  (the scripts' figure helpers)


def parser(doc):
    """An ArgumentParser described by the first line of ``doc``, with ``--out`` (default out/drumwright)."""
    return figures.parser(doc, os.path.join("out", "drumwright"))
