"""What every experiment script shares: its command line (``--out DIR``)
and the writing of its figure. The per-paper modules
(``drumwright/drumwright_common.py``, ``muller_terze/muller_terze_common.py``)
put this folder on ``sys.path`` and import it by name."""
import argparse
import os


def parser(doc, out):
    """An ArgumentParser described by the first line of ``doc`` (the
    script's docstring), with ``--out`` (the folder of the figure, default ``out``)."""
    p = argparse.ArgumentParser(description=doc.split("\n")[0])
    p.add_argument("--out", default=out)
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
