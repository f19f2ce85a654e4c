#!/usr/bin/env python3
"""Set up and run multibody with nothing but Python 3.10+.

    python3 run.py demo     # create .venv, install multibody[viz], run the main job: `multibody demo`
                            # (writes out/demo.png, out/demo_trajectory.npz, out/demo.html; --open opens it)
    python3 run.py test     # create .venv, install multibody[test], run the test suite
                            # twice: compiled (everything) and with NUMBA_DISABLE_JIT=1
                            # (without the tests marked slow), side by side on two cores
    python3 run.py bench    # ... and the benchmarks against Pinocchio, and the demo's start-up time

The virtual environment lives in ./.venv and is reinstalled only when
pyproject.toml changes. Extra arguments go to the underlying command
(e.g. ``python3 run.py test -k jacobian``).
"""
import hashlib
import os
import subprocess
import sys
import tempfile
import venv

ROOT = os.path.dirname(os.path.abspath(__file__))
VENV = os.path.join(ROOT, ".venv")
BIN = os.path.join(VENV, "Scripts" if os.name == "nt" else "bin")
PY = os.path.join(BIN, "python")


def ensure_env(extras):
    if not os.path.exists(PY):
        print(f"creating {VENV}", flush=True)
        venv.create(VENV, with_pip=True)
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        digest = hashlib.sha256(f.read() + extras.encode()).hexdigest()
    stamp = os.path.join(VENV, f".installed-{extras or 'base'}")
    if os.path.exists(stamp) and open(stamp).read() == digest:
        return
    spec = f".[{extras}]" if extras else "."
    print(f"installing multibody{('[' + extras + ']') if extras else ''} into {VENV}", flush=True)
    subprocess.check_call([PY, "-m", "pip", "install", "-q", "--upgrade", "pip"], cwd=ROOT)
    subprocess.check_call([PY, "-m", "pip", "install", "-q", "-e", spec], cwd=ROOT)
    with open(stamp, "w") as f:
        f.write(digest)


def main(argv):
    if not argv or argv[0] not in ("demo", "test", "bench"):
        print(__doc__)
        return 0 if not argv else 2  # no command: the help; an unknown one: a usage error
    cmd, rest = argv[0], argv[1:]
    if cmd == "demo":
        ensure_env("viz")
        return subprocess.call([PY, "-m", "multibody", "demo", *rest], cwd=ROOT)
    if cmd == "test":
        ensure_env("test")
        compiled = [PY, "-m", "pytest", "-q", *rest]
        # The same suite interpreted (DESIGN.md: NUMBA_DISABLE_JIT=1 must run everything); long
        # verification (@pytest.mark.slow) runs in the compiled pass only.
        interpreted = [PY, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "not slow", *rest]
        env = dict(os.environ, NUMBA_DISABLE_JIT="1")
        if (os.cpu_count() or 1) < 2:
            rc = subprocess.call(compiled, cwd=ROOT)
            print("\n=== the same tests with NUMBA_DISABLE_JIT=1 ===", flush=True)
            return rc or subprocess.call(interpreted, cwd=ROOT, env=env)
        # Two cores: the interpreted pass runs beside the compiled one (which is mostly Numba
        # compiling, one core), its output printed when both are done.
        with tempfile.TemporaryFile("w+") as log:
            other = subprocess.Popen(interpreted, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
            try:
                rc = subprocess.call(compiled, cwd=ROOT)
                rc_nojit = other.wait()
            finally:
                if other.poll() is None:
                    other.kill()
            log.seek(0)
            print("\n=== the same tests with NUMBA_DISABLE_JIT=1 (run alongside) ===", flush=True)
            sys.stdout.write(log.read())
        return rc or rc_nojit
    ensure_env("test")
    rc = 0
    for script in ("kinematics.py", "dynamics.py", "simulation.py", "constrained.py", "kkt.py", "loading.py"):
        rc = rc or subprocess.call([PY, os.path.join(ROOT, "benchmarks", script), *rest], cwd=ROOT)
    # the demo's start-up, from an empty Numba cache and warm (takes its own options only)
    rc = rc or subprocess.call([PY, os.path.join(ROOT, "benchmarks", "startup.py")], cwd=ROOT)
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
