import os
import sys

sys.path.insert(0, os.path.dirname(__file__))  # test helpers (oracles.py) importable from every test folder

