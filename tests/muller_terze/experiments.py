"""The scripts of experiments/muller_terze/ as modules (tests/experiment_scripts.py)."""
from experiment_scripts import loader

load = loader("muller_terze")
