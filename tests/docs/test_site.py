"""The documentation site: it builds with MkDocs in strict mode (every
warning an error: broken links, missing pages, docstrings the API
reference cannot parse), every page is in the navigation, and the API
reference lists every public name of the package."""
import importlib
import os
import subprocess
import sys
import types

import yaml

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DOCS = os.path.join(ROOT, "docs")
SUBPACKAGES = ("spatial", "model", "io", "kinematics", "dynamics", "forces", "constraints", "collision", "solvers",
               "formulations", "integrators", "simulation", "viz")
NOT_IN_NAV = ()  # pages deliberately left out of the navigation (none)


def _config():
    class Loader(yaml.SafeLoader):
        pass
    # mkdocs.yml may hold !!python/name tags (Material's emoji options): read them as plain strings
    Loader.add_multi_constructor("tag:yaml.org,2002:python/", lambda loader, suffix, node: None)
    with open(os.path.join(ROOT, "mkdocs.yml"), encoding="utf-8") as f:
        return yaml.load(f, Loader=Loader)


def _nav_pages(nav):
    for item in nav:
        if isinstance(item, str):
            yield item
        elif isinstance(item, dict):
            for value in item.values():
                yield from ([value] if isinstance(value, str) else _nav_pages(value))


def test_docs_build_strict(tmp_path):
    """``mkdocs build --strict``: no warnings."""
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    env.pop("NUMBA_DISABLE_JIT", None)  # the build only reads the sources
    r = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(tmp_path / "site")],
                       cwd=ROOT, capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    assert (tmp_path / "site" / "index.html").is_file()
    api = (tmp_path / "site" / "api" / "kinematics" / "index.html").read_text(encoding="utf-8")
    assert 'id="multibody.kinematics.jacobian"' in api  # the reference renders the docstrings


def test_every_page_is_in_the_nav():
    nav = set(_nav_pages(_config()["nav"]))
    pages = set()
    for folder, _, files in os.walk(DOCS):
        for name in files:
            if name.endswith(".md"):
                pages.add(os.path.relpath(os.path.join(folder, name), DOCS).replace(os.sep, "/"))
    assert pages - nav - set(NOT_IN_NAV) == set(), "pages missing from mkdocs.yml's nav"
    assert nav - pages == set(), "nav entries without a page"


def _public(module):
    return {n for n, x in vars(module).items() if not n.startswith("_") and not isinstance(x, types.ModuleType)}


def test_api_reference_lists_every_public_name():
    """Each subpackage's page renders its ``__all__`` or lists its members
    explicitly; either way every public name is there. The package's own
    ``__all__`` holds every name it exports."""
    import multibody
    assert _public(multibody) <= set(multibody.__all__)
    for sub in SUBPACKAGES:
        module = importlib.import_module(f"multibody.{sub}")
        with open(os.path.join(DOCS, "api", f"{sub}.md"), encoding="utf-8") as f:
            page = f.read()
        assert f"::: multibody.{sub}" in page
        if "members:" in page:
            listed = {line.strip()[2:] for line in page.splitlines() if line.strip().startswith("- ")}
            assert _public(module) - listed == set(), f"docs/api/{sub}.md: members missing"
        else:
            assert hasattr(module, "__all__"), f"multibody.{sub} has no __all__: list its members in docs/api/{sub}.md"
            assert _public(module) <= set(module.__all__), f"multibody.{sub}.__all__ misses names"
