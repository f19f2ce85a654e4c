"""What the experiment scripts of experiments/drumwright/ share: their
command line (``--out DIR``, default out/drumwright) and the writing of
their figure. Imported by name: the scripts' folder is on ``sys.path``
when they run, and tests/drumwright/experiments.py puts it there."""
import argparse
import os


def parser(doc):
    """An ArgumentParser described by the first line of ``doc`` (the
    script's docstring), with ``--out`` (the folder of the figure)."""
    p = argparse.ArgumentParser(description=doc.split("\n")[0])
    p.add_argument("--out", default=os.path.join("out", "drumwright"))
    return p


def subplots(*args, **kwargs):
    """matplotlib's ``subplots`` on the Agg backend (files only, no display)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt.subplots(*args, **kwargs)


def save(fig, out, name, legends=()):
    """Legends on the axes ``legends``, a tight layout, the figure written
    to ``out/name`` (110 dpi); prints and returns the path."""
    for axis in legends:
        axis.legend()
    fig.tight_layout()
    os.makedirs(out, exist_ok=True)
    path = os.path.join(out, name)
    fig.savefig(path, dpi=110)
    print("wrote", path)
    return path
