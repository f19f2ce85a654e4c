"""The ``slow`` marker for the loader tests: registered here, and the
tests carrying it (the long fuzz runs) are skipped unless selected with
``-m slow`` (or any marker expression naming ``slow``)."""
import os

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: long-running test; run with -m slow")


def pytest_collection_modifyitems(config, items):
    if "slow" in (config.getoption("markexpr") or ""):
        return
    skip = pytest.mark.skip(reason="slow: run with -m slow")
    for item in items:
        if "slow" in item.keywords and str(item.fspath).startswith(HERE):
            item.add_marker(skip)
