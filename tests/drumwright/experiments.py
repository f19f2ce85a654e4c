"""The scripts of experiments/drumwright/ as modules (tests/experiment_scripts.py)."""
from experiment_scripts import loader

load = loader("drumwright")
