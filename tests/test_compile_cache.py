"""Numba's on-disk cache never serves a kernel compiled from stale helpers
(multibody/_kernel_cache.py).

The end-to-end tests build a throw-away package ``multibody`` in a
temporary folder: the real ``_kernel_cache.py``, an ``__init__.py`` that
installs it first (as the real one does), a helper module and a kernel
module that inlines the helper and reads one of its constants. Fresh
processes (compiled: ``NUMBA_DISABLE_JIT=0``, a temporary
``NUMBA_CACHE_DIR``) call the kernel; between runs the helper's file is
edited and the kernel's file is not. Numba's own locator, run the same way,
serves the stale kernel — the control that shows the test can fail.
"""
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

from multibody import _kernel_cache as kc

HELPER = textwrap.dedent("""
    from numba import njit

    SCALE = {scale}


    @njit(cache=True, inline="always")
    def scaled(x):
        return SCALE * x + {offset}
    """)

KERNEL = textwrap.dedent("""
    from numba import njit

    from ._helper import scaled


    @njit(cache=True)
    def kernel(x):
        return scaled(x) + 0.5
    """)

UNRELATED = "VALUE = {value}\n"

# run in a fresh process: call the kernel, report its value, whether it came from the
# cache and which locator filed it
PROBE = textwrap.dedent("""
    import json, sys
    if sys.argv[1] == "readonly":
        # an installed package in a read-only folder: the __pycache__ next to the source
        # cannot be written (as root, permissions cannot simulate it)
        import multibody._kernel_cache as kc
        def refuse(self):
            raise OSError("read-only")
        kc.InTreeLocator.ensure_cache_path = refuse
    from multibody._kernel import kernel
    value = kernel(1.0)
    print("@@" + json.dumps({"value": value, "hits": sum(kernel._cache_hits.values()),
                              "locator": type(kernel._cache._impl.locator).__name__,
                              "path": kernel._cache.cache_path}))
    """)


def _write(path, text):
    with open(path, "w") as f:
        f.write(text)
    # a new mtime even on file systems with a coarse clock (Numba once stamped by mtime)
    st = os.stat(path)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 2_000_000_000))


@pytest.fixture
def package(tmp_path):
    """A temporary package ``multibody`` with the real cache module, a helper, a kernel that
    inlines it and an unrelated module; returns (root, cache dir)."""
    pkg = tmp_path / "src" / "multibody"
    pkg.mkdir(parents=True)
    shutil.copy(kc.__file__, pkg / "_kernel_cache.py")
    _write(pkg / "__init__.py", "from . import _kernel_cache\n_kernel_cache.install()\n")
    _write(pkg / "_helper.py", HELPER.format(scale=2.0, offset=0.0))
    _write(pkg / "_kernel.py", KERNEL)
    _write(pkg / "_unrelated.py", UNRELATED.format(value=1))
    _write(tmp_path / "probe.py", PROBE)
    return tmp_path, tmp_path / "numba-cache"


def _probe(root, cache, mode="normal", default_locators=False):
    env = dict(os.environ, PYTHONPATH=str(root / "src"), NUMBA_CACHE_DIR=str(cache), NUMBA_DISABLE_JIT="0",
               XDG_CACHE_HOME=str(root / "user-cache"))
    if mode == "readonly":
        env.pop("NUMBA_CACHE_DIR")
    env.pop("NUMBA_CACHE_LOCATOR_CLASSES", None)
    if default_locators:
        # Numba's own locators only, as without multibody's
        env["NUMBA_CACHE_LOCATOR_CLASSES"] = "UserProvidedCacheLocator,InTreeCacheLocator,UserWideCacheLocator"
    p = subprocess.run([sys.executable, str(root / "probe.py"), mode], env=env, cwd=str(root),
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    line = [s for s in p.stdout.splitlines() if s.startswith("@@")][-1]
    return json.loads(line[2:])


def test_editing_an_inlined_helper_recompiles_the_kernel_that_inlines_it(package):
    root, cache = package
    first = _probe(root, cache)
    assert first == {"value": 2.5, "hits": 0, "locator": "UserProvidedLocator", "path": first["path"]}
    assert first["path"].startswith(str(cache))
    warm = _probe(root, cache)
    assert (warm["value"], warm["hits"]) == (2.5, 1)          # the cache is used
    _write(root / "src" / "multibody" / "_unrelated.py", UNRELATED.format(value=2))
    unrelated = _probe(root, cache)
    assert (unrelated["value"], unrelated["hits"]) == (2.5, 1)  # a file the kernel does not import: still valid
    _write(root / "src" / "multibody" / "_helper.py", HELPER.format(scale=3.0, offset=0.0))
    edited = _probe(root, cache)
    assert (edited["value"], edited["hits"]) == (3.5, 0)        # recompiled with the new constant
    _write(root / "src" / "multibody" / "_helper.py", HELPER.format(scale=3.0, offset=1.0))
    edited = _probe(root, cache)
    assert (edited["value"], edited["hits"]) == (4.5, 0)        # recompiled with the new helper body


def test_numbas_own_stamp_serves_the_stale_kernel(package):
    """The control: with Numba's locators the edit of the helper goes unnoticed."""
    root, cache = package
    assert _probe(root, cache, default_locators=True)["value"] == 2.5
    _write(root / "src" / "multibody" / "_helper.py", HELPER.format(scale=3.0, offset=0.0))
    stale = _probe(root, cache, default_locators=True)
    assert (stale["value"], stale["hits"]) == (2.5, 1)


def test_read_only_package_falls_back_to_the_user_wide_cache_and_stays_safe(package):
    root, _ = package
    first = _probe(root, None, mode="readonly")
    assert (first["value"], first["hits"], first["locator"]) == (2.5, 0, "UserWideLocator")
    assert first["path"].startswith(str(root / "user-cache"))
    assert not list((root / "src" / "multibody").glob("__pycache__/*.nbi"))
    assert _probe(root, None, mode="readonly")["hits"] == 1
    _write(root / "src" / "multibody" / "_helper.py", HELPER.format(scale=-1.0, offset=0.0))
    edited = _probe(root, None, mode="readonly")
    assert (edited["value"], edited["hits"]) == (-0.5, 0)


def _rel(paths):
    return {os.path.relpath(p, kc.PACKAGE_DIR).replace(os.sep, "/") for p in paths}


def test_dependencies_of_the_real_kernel_modules():
    """Layers import downwards: the dynamics kernels depend on the spatial algebra, the joint
    functions and the model table's columns, not on the simulator above them."""
    deps = _rel(kc.dependencies(os.path.join(kc.PACKAGE_DIR, "dynamics", "kernels.py")))
    assert {"kinematics/kernels.py", "model/joints.py", "spatial/_small.py", "_compiled.py"} <= deps
    assert not any(p.startswith(("simulation/", "integrators/", "formulations/", "io/", "viz/")) for p in deps)
    assert "dynamics/kernels.py" not in deps
    # a package import counts its __init__ and what that imports
    spatial = _rel(kc.dependencies(os.path.join(kc.PACKAGE_DIR, "spatial", "__init__.py")))
    assert {"spatial/so3.py", "spatial/quaternion.py", "spatial/se3.py"} <= spatial
    # the stamp differs from file to file and is stable
    a = kc.source_stamp(os.path.join(kc.PACKAGE_DIR, "dynamics", "kernels.py"))
    b = kc.source_stamp(os.path.join(kc.PACKAGE_DIR, "kinematics", "kernels.py"))
    assert a != b and a == kc.source_stamp(os.path.join(kc.PACKAGE_DIR, "dynamics", "kernels.py"))


def test_imports_are_read_in_every_form(tmp_path):
    """Relative and absolute imports, parenthesised name lists, submodules imported by name,
    imports inside functions; other packages and comments are ignored."""
    pkg = tmp_path / "multibody"
    (pkg / "sub").mkdir(parents=True)
    for name in ("__init__.py", "a.py", "b.py", "c.py", "d.py", "e.py", "sub/__init__.py", "sub/x.py",
                 "sub/y.py", "sub/z.py"):
        (pkg / name).write_text("")
    (pkg / "sub" / "y.py").write_text("from .z import THING\n")
    (pkg / "k.py").write_text(textwrap.dedent("""
        import numpy as np
        from numba import njit
        from .a import f
        from . import (b,
                       c as see)
        import multibody.d
        from .sub import x, y  # comment: from .e import nothing
        def late():
            from .e import g
        # from .missing import nothing
        """))
    # a separate copy of the module (its own memo caches), pointed at the temporary package
    spec = importlib.util.spec_from_file_location("_kernel_cache_copy", kc.__file__)
    copy = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(copy)
    copy.PACKAGE_DIR = str(pkg)
    deps = {os.path.relpath(p, pkg).replace(os.sep, "/") for p in copy.dependencies(str(pkg / "k.py"))}
    assert deps == {"__init__.py", "a.py", "b.py", "c.py", "d.py", "e.py", "sub/__init__.py", "sub/x.py",
                    "sub/y.py", "sub/z.py"}
    assert copy.dependencies(str(pkg / "sub" / "x.py")) == ()
    before = copy.source_stamp(str(pkg / "k.py"))
    (pkg / "sub" / "z.py").write_text("THING = 1\n")
    copy._file_digest.cache_clear()
    copy.source_stamp.cache_clear()
    assert copy.source_stamp(str(pkg / "k.py")) != before   # a transitive dependency changed
    (pkg / "sub" / "z.py").write_text("")
    copy._file_digest.cache_clear()
    copy.source_stamp.cache_clear()
    assert copy.source_stamp(str(pkg / "k.py")) == before


def test_the_package_kernels_use_the_dependency_stamp():
    from multibody._compiled import JIT
    from multibody.dynamics import kernels as K
    if not JIT:  # NUMBA_DISABLE_JIT=1: plain Python functions, nothing compiled or cached
        assert not hasattr(K.rnea_kernel, "_cache")
        return
    locator = K.rnea_kernel._cache._impl.locator
    assert isinstance(locator, kc.LOCATORS)
    assert K.rnea_kernel._cache._cache_file._source_stamp == kc.source_stamp(K.__file__)


def test_editing_a_helper_changes_the_stamps_of_the_kernels_above_it_only(tmp_path):
    """On a copy of the real package: editing the spatial algebra or the joint catalog changes
    the stamps of the kinematics and dynamics kernels; editing the simulator changes neither."""
    pkg = tmp_path / "multibody"
    shutil.copytree(kc.PACKAGE_DIR, pkg, ignore=shutil.ignore_patterns("__pycache__", "data"))
    spec = importlib.util.spec_from_file_location("_kernel_cache_copy2", kc.__file__)
    copy = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(copy)
    copy.PACKAGE_DIR = str(pkg)
    kernels = [str(pkg / "dynamics" / "kernels.py"), str(pkg / "kinematics" / "kernels.py")]

    def stamps():
        copy._file_digest.cache_clear()
        copy.source_stamp.cache_clear()
        return [copy.source_stamp(k) for k in kernels]

    before = stamps()
    with open(pkg / "simulation" / "simulator.py", "a") as f:
        f.write("\n# an edit\n")
    assert stamps() == before
    for helper in ("spatial/_small.py", "model/joints.py"):
        with open(pkg / helper, "a") as f:
            f.write("\n# an edit\n")
        after = stamps()
        assert after[0] != before[0] and after[1] != before[1], helper
        before = after


def test_importing_multibody_compiles_nothing(tmp_path):
    """No kernel is compiled (or loaded) at import: an empty cache stays empty."""
    cache = tmp_path / "cache"
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache), NUMBA_DISABLE_JIT="0")
    p = subprocess.run([sys.executable, "-c", "import multibody, multibody.cli"], env=env, capture_output=True,
                       text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    saved = [f for f in cache.rglob("*") if f.suffix in (".nbi", ".nbc")] if cache.exists() else []
    assert saved == []


CATALOG_PROBE = textwrap.dedent("""
    import numpy as np
    import multibody as mb
    from multibody.kinematics import kernels as KK
    b = mb.ModelBuilder("catalog")
    b.add_body("a", "world", "free", mass=1.0, inertia=np.eye(3))
    b.add_body("b", "a", "spherical", placement=(np.eye(3), (0, 0, 0.3)), mass=1.0, inertia=np.eye(3))
    model = b.build()
    q = model.random_configuration(0)
    mb.forward_kinematics(model, q, data=mb.Data(model))   # fast path: q as any layout
    mb.center_of_mass(model, q)                             # general path: q contiguous
    mb.jacobian(model, q, "b", "world")
    print("@@", len(KK.set_local_pose_any.signatures), len(KK.set_poses.signatures))
    """)


@pytest.mark.slow
def test_the_joint_catalog_is_compiled_once_for_fast_and_general_paths(tmp_path):
    """Forward kinematics through the fast path, the centre of mass through the general path
    and the frame Jacobian share one compiled joint catalog (each copy cost 1.5-3 s of
    start-up). In a fresh process with an empty cache: kernels loaded from a cache do not
    register the kernels they call."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"), NUMBA_DISABLE_JIT="0")
    p = subprocess.run([sys.executable, "-c", CATALOG_PROBE], env=env, capture_output=True, text=True,
                       timeout=900)
    assert p.returncode == 0, p.stderr
    line = [s for s in p.stdout.splitlines() if s.startswith("@@")][-1]
    assert line.split()[1:] == ["1", "1"]


DYNAMICS_PROBE = textwrap.dedent("""
    import numpy as np
    import multibody as mb
    from multibody.dynamics import kernels as K
    b = mb.ModelBuilder("chain")
    b.add_body("a", "world", "revolute", axis=(0, 0, 1), mass=1.0, com=(0.1, 0, 0), inertia=np.eye(3))
    b.add_body("b", "a", "revolute", placement=(np.eye(3), (0.3, 0, 0)), axis=(0, 1, 0), mass=1.0,
               com=(0.1, 0, 0), inertia=np.eye(3))
    model = b.build()
    q, v = np.array([0.1, 0.2]), np.array([0.3, -0.1])
    mb.aba(model, q, v, np.zeros(2))        # fast paths: vectors as any layout
    mb.crba(model, q)
    mb.rnea(model, q, v, v)
    sim = mb.Simulator(model, 1e-3, "rk4")  # the step: contiguous vectors
    sim.step(np.zeros(2))
    print("@@", *(len(getattr(K, n).signatures) for n in ("_aba_kernel", "_world_motion_pass", "_crba_kernel",
                                                          "_rnea_kernel")))
    """)


@pytest.mark.slow
def test_the_dynamics_kernels_are_compiled_once_for_fast_paths_batches_and_the_simulator(tmp_path):
    """ABA, its forward pass, CRBA and RNEA: one specialization each for the fast paths (vectors
    of any layout) and the simulator's step (contiguous vectors); ABA, its forward pass and
    CRBA were compiled twice before (~10 s). Fresh process, empty cache."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"), NUMBA_DISABLE_JIT="0")
    p = subprocess.run([sys.executable, "-c", DYNAMICS_PROBE], env=env, capture_output=True, text=True,
                       timeout=1800)
    assert p.returncode == 0, p.stderr
    line = [s for s in p.stdout.splitlines() if s.startswith("@@")][-1]
    assert line.split()[1:] == ["1", "1", "1", "1"]
