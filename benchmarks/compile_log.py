"""Every Numba compilation of a test run, with its own time: a pytest
plugin to find what the compiled pass spends its time compiling.

    PYTHONPATH=benchmarks MULTIBODY_COMPILE_LOG=/tmp/compile.txt \
        python -m pytest -p compile_log tests/contact

writes, slowest first, each compilation's function, signature, and seconds
with and without the compilations nested in it (``numba.cfunc`` entry
points are not reported: they raise no compile event).
"""
import atexit
import os
import time

from numba.core import event


class CompileLog(event.Listener):
    def __init__(self):
        self.stack, self.rows = [], []

    def on_start(self, ev):
        self.stack.append([time.perf_counter(), 0.0])

    def on_end(self, ev):
        start, nested = self.stack.pop()
        total = time.perf_counter() - start
        if self.stack:
            self.stack[-1][1] += total
        d = ev.data.get("dispatcher")
        name = getattr(getattr(d, "py_func", None), "__qualname__", str(d))
        module = getattr(getattr(d, "py_func", None), "__module__", "")
        self.rows.append((total - nested, total, f"{module}.{name}", str(ev.data.get("args"))[:200]))

    def write(self):
        with open(os.environ["MULTIBODY_COMPILE_LOG"], "w") as f:
            f.write(f"# {len(self.rows)} compilations, {sum(r[0] for r in self.rows):.1f} s\n")
            for own, total, name, args in sorted(self.rows, reverse=True):
                f.write(f"{own:8.2f} {total:8.2f}  {name}  {args}\n")


if os.environ.get("MULTIBODY_COMPILE_LOG"):
    _log = CompileLog()
    event.register("numba:compile", _log)
    atexit.register(_log.write)
