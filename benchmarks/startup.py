"""Start-up time of the demo: from a fresh process to its first simulated step.

    python benchmarks/startup.py [--warm 3] [--top 25] [--cache-dir DIR] [--full]

Runs ``python -m multibody demo`` (``multibody.cli.main``) in fresh
processes, stopping it right after the first ``Simulator.step``: first with
an empty Numba cache (a new temporary ``NUMBA_CACHE_DIR``, so the
package's own ``__pycache__`` is neither read nor written), then ``--warm``
times with the cache that the cold run filled. Python's bytecode cache is
written beforehand into a temporary ``PYTHONPYCACHEPREFIX`` (as for an
installed package; ``--no-pyc`` keeps the environment's setting). Prints, per run, the
wall-clock time of each phase (import of multibody, model loading, the
demo's kinematics printout, building the Simulator, the controller's first
RNEA, the first step) measured as the first call of the public function
that does it, and the total from the start of the process to the end of the
first step (the interpreter's own start, ~20 ms, is outside it). For the
cold run it also lists the kernels Numba compiled, the slowest first, with
their own compile time (excluding the kernels they called that were
compiled for them), and how many kernels were loaded from the cache.

Targets (issue 11): the first step within 10 s from an empty cache and
1.5 s with a warm one.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


class _FirstStepDone(Exception):
    """Raised by the patched Simulator.step to stop the demo after one step."""


def child(out_dir, full=False):
    """Run the demo up to its first step (``full``: to its end) in this process; print a JSON
    record."""
    t_start = time.perf_counter()
    records = []          # (name, module, signature, seconds self, seconds total, source, started at)
    stack = []            # child compile time accumulated per level of nesting

    import numba.core.dispatcher as nd
    phases = {"import numba": (0.0, time.perf_counter() - t_start)}

    original_compile = nd.Dispatcher.compile

    def timed_compile(self, sig):
        # nested calls: compiling a kernel compiles (or loads) the kernels it calls
        hits = sum(self._cache_hits.values())
        misses = sum(self._cache_misses.values())
        known = len(self.overloads)
        stack.append(0.0)
        t0 = time.perf_counter()
        try:
            return original_compile(self, sig)
        finally:
            dt = time.perf_counter() - t0
            children = stack.pop()
            if stack:
                stack[-1] += dt
            if len(self.overloads) > known:
                source = ("cache" if sum(self._cache_hits.values()) > hits else
                          "compiled" if sum(self._cache_misses.values()) > misses else "?")
                name = self.py_func.__qualname__ + (" [parallel]" if self.targetoptions.get("parallel") else "")
                records.append((name, self.py_func.__module__, str(sig), dt - children, dt, source, t0 - t_start))

    nd.Dispatcher.compile = timed_compile

    def first_call(owner, name, label):
        fn = getattr(owner, name)

        def wrapper(*args, **kwargs):
            if label in phases:
                return fn(*args, **kwargs)
            t0 = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                phases[label] = (t0 - t_start, time.perf_counter() - t0)
        setattr(owner, name, wrapper)

    t0 = time.perf_counter()
    import multibody as mb
    import multibody.cli as cli
    phases["import multibody"] = (t0 - t_start, time.perf_counter() - t0)
    for name in ("load_urdf", "frame_placements", "center_of_mass", "jacobian", "potential_energy", "rnea"):
        first_call(mb, name, name)
    first_call(mb.Simulator, "__init__", "Simulator()")
    step = mb.Simulator.step

    def stop_after_first_step(self, *args, **kwargs):
        if "first step" in phases:
            return step(self, *args, **kwargs)
        t0 = time.perf_counter()
        result = step(self, *args, **kwargs)
        phases["first step"] = (t0 - t_start, time.perf_counter() - t0)
        if not full:
            raise _FirstStepDone
        return result

    mb.Simulator.step = stop_after_first_step
    rollout = mb.Simulator.rollout

    def first_rollout(self, *args, **kwargs):
        # a demo that simulates without a single step() first: the whole first rollout is timed
        if "first step" in phases:
            return rollout(self, *args, **kwargs)
        t0 = time.perf_counter()
        result = rollout(self, *args, **kwargs)
        phases["first step"] = (t0 - t_start, time.perf_counter() - t0)
        print("note: the demo's first simulation call was a whole rollout, timed as its first step")
        if not full:
            raise _FirstStepDone
        return result

    mb.Simulator.rollout = first_rollout
    try:
        cli.main(["demo", "--out", out_dir])
    except _FirstStepDone:
        pass
    else:
        if not full:
            raise SystemExit("the demo finished without calling Simulator.step")
    total = phases["first step"][0] + phases["first step"][1]
    if full:
        phases["rest of the demo"] = (total, time.perf_counter() - t_start - total)
    print("@@" + json.dumps({"phases": phases, "total": total, "compiles": records}))


def child_env(cache_dir, pyc_dir):
    env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir)
    env.pop("NUMBA_DISABLE_JIT", None)
    if pyc_dir:
        # Python's bytecode cache, as an installed package has it, kept out of the source tree
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = pyc_dir
    return env


def run_child(cache_dir, out_dir, pyc_dir, full=False):
    env = child_env(cache_dir, pyc_dir)
    t0 = time.perf_counter()
    p = subprocess.run([sys.executable, os.path.abspath(__file__), "--child-full" if full else "--child", out_dir],
                       env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if p.returncode:
        sys.stderr.write(p.stdout + p.stderr)
        raise SystemExit(f"child failed ({p.returncode})")
    line = next(s for s in p.stdout.splitlines() if s.startswith("@@"))
    rec = json.loads(line[2:])
    rec["process"] = wall
    return rec


def report(label, rec, top):
    print(f"\n{label}: first step {rec['total']:.2f} s after the start of the process "
          f"(whole process {rec['process']:.2f} s)")
    for name, (at, dt) in sorted(rec["phases"].items(), key=lambda kv: kv[1][0]):
        print(f"  {name:<18} first call {dt:8.3f} s   (starts at {at:7.3f} s)")
    comp = [r for r in rec["compiles"] if r[5] == "compiled"]
    hit = [r for r in rec["compiles"] if r[5] == "cache"]
    print(f"  kernels compiled: {len(comp)} ({sum(r[3] for r in comp):.2f} s); "
          f"loaded from the cache: {len(hit)} ({sum(r[3] for r in hit):.2f} s)")
    at, dt = rec["phases"]["import multibody"]
    at_import = [r for r in rec["compiles"] if r[6] < at + dt]
    if at_import:
        print(f"  ... of which during the imports: {len(at_import)} "
              f"({sum(r[3] for r in at_import):.2f} s): {', '.join(r[0] for r in at_import)}")
    if top:
        rows = sorted(rec["compiles"], key=lambda r: -r[3])[:top]
        print(f"  slowest {len(rows)} (own time, excluding kernels compiled for them):")
        for name, module, sig, own, total, source, at in rows:
            print(f"    {own:6.2f} s  {source:<8} {module}.{name}{sig if len(sig) < 70 else sig[:67] + '...'}")


def main():
    if len(sys.argv) > 2 and sys.argv[1] in ("--child", "--child-full"):
        return child(sys.argv[2], full=sys.argv[1] == "--child-full")
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--warm", type=int, default=3, help="warm runs after the cold one")
    ap.add_argument("--top", type=int, default=25, help="how many of the slowest compiles to list")
    ap.add_argument("--cache-dir", help="use (and keep) this cache folder; the first run is cold only if it is empty")
    ap.add_argument("--json", help="write the records to this file")
    ap.add_argument("--full", action="store_true",
                    help="run the whole demo (simulation, energies, plot) in the cold run and list what it "
                         "compiles after the first step")
    ap.add_argument("--no-pyc", action="store_true",
                    help="keep the environment's bytecode setting (PYTHONDONTWRITEBYTECODE=1 recompiles every "
                         "module at every start, ~0.15 s)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="mb-startup-") as tmp:
        cache = args.cache_dir or os.path.join(tmp, "numba-cache")
        out = os.path.join(tmp, "out")
        pyc = None if args.no_pyc else os.path.join(tmp, "pyc")
        if pyc:  # write the bytecode cache (nothing is compiled by Numba at import: the Numba cache stays empty)
            subprocess.run([sys.executable, "-c", "import multibody, multibody.cli"], env=child_env(cache, pyc),
                           check=True)
        cold = run_child(cache, out, pyc, full=args.full)
        report("cold (empty cache)" if not args.cache_dir else "first run", cold, args.top)
        if args.full:
            at, dt = cold["phases"]["rest of the demo"]
            rest = [r for r in cold["compiles"] if r[6] >= at and r[5] == "compiled"]
            print(f"  after the first step, {dt:.2f} s to the end of the demo; compiled there: {len(rest)} kernels "
                  f"({sum(r[3] for r in rest):.2f} s):")
            for name, module, sig, own, total, source, start in sorted(rest, key=lambda r: -r[3])[:args.top]:
                print(f"    {own:6.2f} s  {module}.{name}{sig if len(sig) < 70 else sig[:67] + '...'}")
        warm = [run_child(cache, out, pyc) for _ in range(args.warm)]
        for k, rec in enumerate(warm):
            report(f"warm run {k + 1}", rec, 5 if k == 0 else 0)
        if warm:
            best = min(r["total"] for r in warm)
            print(f"\nsummary: first step cold {cold['total']:.2f} s (target 10 s), "
                  f"warm best {best:.2f} s (target 1.5 s)")
        if args.json:
            with open(args.json, "w") as f:
                json.dump({"cold": cold, "warm": warm}, f)


if __name__ == "__main__":
    main()
