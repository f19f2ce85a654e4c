"""Numba's on-disk cache for multibody's kernels, made safe against stale code.

Numba (``cache=True``) files a compiled kernel under a stamp of the source
file that defines it and a hash of the kernel's own bytecode. A kernel's
machine code also contains everything it inlines or calls: helpers
(``inline="always"`` or not), joint functions and module-level constants
(compile-time constants) imported from other files. Editing only such a
helper leaves the stamp unchanged, and Numba would keep loading the old
machine code — for a developer after an edit, for a user after an upgrade
that changed a helper's file but not the kernel's.

This module replaces the stamp of every file inside the multibody package by
a SHA-256 of that file's source and of the source of every multibody module
it imports, transitively. The imports are read from the source text (no
import is executed): ``from .x import y``, ``from . import x``,
``import multibody.x``, anywhere in the file, including imports inside
functions; for ``from package import name`` both the package's
``__init__.py`` (and what it imports) and the submodule ``name``, if there
is one, count. A kernel can only reach code through the globals of its
module, which its imports bind, so the closure covers every file whose
edit can change its machine code. Layers import downwards only
(architecture.md), so editing the simulator does not invalidate the
dynamics kernels; editing ``spatial`` invalidates everything above it.

The stamp is computed once per file per process, when the first kernel of
that file is decorated: reading and hashing multibody's sources (~0.6 MB)
costs a few milliseconds, once, at import.

Where the cache lives is unchanged: Numba's own locators, in Numba's order,
are subclassed only to change the stamp: ``NUMBA_CACHE_DIR`` when set, else
the ``__pycache__`` folder next to the source when writable, else Numba's
user-wide cache folder (an installed, read-only package). The subclasses
accept only files inside this package and go first in Numba's list of
locators (``CacheImpl._locator_classes``); files of other packages keep
Numba's locators. :func:`install` must run before the first kernel of the
package is decorated: ``multibody/__init__.py`` calls it first, and Python
runs the package's ``__init__`` before any of its submodules.
(``NUMBA_CACHE_LOCATOR_CLASSES``, when set, replaces Numba's list and so
bypasses this protection.)
"""
import functools
import hashlib
import os
import re

from numba.core import caching

PACKAGE_DIR = os.path.dirname(os.path.realpath(__file__))
_PACKAGE = "multibody"

# "from X import names" (names possibly parenthesised over several lines) and "import a.b, c"
_FROM = re.compile(r"^[ \t]*from[ \t]+([.\w]+)[ \t]+import[ \t]+(\([^)]*\)|[^\n#]*)", re.M)
_IMPORT = re.compile(r"^[ \t]*import[ \t]+([^\n#]+)", re.M)


@functools.lru_cache(maxsize=None)
def _real(path):
    return os.path.realpath(path)


def in_package(path):
    """True if the file ``path`` belongs to the multibody package."""
    real = _real(path)
    return real.startswith(PACKAGE_DIR + os.sep) and real.endswith(".py")


def _module_parts(path):
    """Dotted module name of a package file, as a tuple of names below the package root, and
    whether the file is a package's ``__init__.py``."""
    rel = os.path.relpath(_real(path), PACKAGE_DIR)[:-3].split(os.sep)
    if rel[-1] == "__init__":
        return tuple(rel[:-1]), True
    return tuple(rel), False


def _module_file(parts):
    """The source file of the module ``parts`` (names below the package root), or None."""
    base = os.path.join(PACKAGE_DIR, *parts)
    for candidate in (base + ".py", os.path.join(base, "__init__.py")):
        if os.path.isfile(candidate):
            return candidate
    return None


def _absolute(name, parts, is_package):
    """``name`` of an import statement in module ``parts``, as names below the package root
    (None for a module outside multibody)."""
    if name.startswith("."):
        level = len(name) - len(name.lstrip("."))
        base = parts if is_package else parts[:-1]
        if level - 1 > len(base):
            return None
        base = base[:len(base) - (level - 1)]
        rest = name[level:]
        return base + tuple(p for p in rest.split(".") if p)
    names = name.split(".")
    if names[0] != _PACKAGE:
        return None
    return tuple(names[1:])


@functools.lru_cache(maxsize=None)
def direct_imports(path):
    """The multibody source files imported by the file ``path`` (read from its text)."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    parts, is_package = _module_parts(path)
    found = set()
    for module, names in _FROM.findall(text):
        target = _absolute(module, parts, is_package)
        if target is None:
            continue
        file = _module_file(target)
        if file is not None:
            found.add(file)
        for item in names.strip("()").replace("\n", " ").split(","):
            item = item.split(" as ")[0].strip()
            if item.isidentifier():
                sub = _module_file(target + (item,))
                if sub is not None:
                    found.add(sub)
    for names in _IMPORT.findall(text):
        for item in names.split(","):
            item = item.split(" as ")[0].strip()
            target = _absolute(item, parts, is_package) if item else None
            if target is not None:
                file = _module_file(target)
                if file is not None:
                    found.add(file)
    found.discard(_real(path))
    return frozenset(found)


@functools.lru_cache(maxsize=None)
def dependencies(path):
    """Every multibody source file that the file ``path`` imports, directly or through
    other multibody modules (``path`` itself excluded), sorted."""
    path = _real(path)
    seen = {path}
    todo = [path]
    while todo:
        for dep in direct_imports(todo.pop()):
            if dep not in seen:
                seen.add(dep)
                todo.append(dep)
    seen.discard(path)
    return tuple(sorted(seen))


@functools.lru_cache(maxsize=None)
def _file_digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


@functools.lru_cache(maxsize=None)
def source_stamp(path):
    """The cache stamp of the multibody file ``path``: a SHA-256 over its source and the
    sources of :func:`dependencies` (with their paths relative to the package)."""
    path = _real(path)
    h = hashlib.sha256()
    for file in (path,) + dependencies(path):
        h.update(os.path.relpath(file, PACKAGE_DIR).encode())
        h.update(b"\0")
        h.update(_file_digest(file).encode())
        h.update(b"\0")
    return "multibody-sources:" + h.hexdigest()


class _DependencyStampMixin:
    """Numba locator mixin: the stamp covers the file and the multibody modules it imports."""

    def get_source_stamp(self):
        return source_stamp(self._py_file)

    @classmethod
    def from_function(cls, py_func, py_file):
        if not in_package(py_file):
            return None
        return super().from_function(py_func, py_file)


def _numba_class(*names):
    for name in names:  # the names changed in Numba 0.62 (leading underscore dropped)
        cls = getattr(caching, name, None)
        if cls is not None:
            return cls
    raise ImportError(f"numba.core.caching has none of {names}")


class UserProvidedLocator(_DependencyStampMixin,
                          _numba_class("UserProvidedCacheLocator", "_UserProvidedCacheLocator")):
    """``NUMBA_CACHE_DIR``, when set."""


class InTreeLocator(_DependencyStampMixin, _numba_class("InTreeCacheLocator", "_InTreeCacheLocator")):
    """The ``__pycache__`` folder next to the source, when writable."""


class UserWideLocator(_DependencyStampMixin, _numba_class("UserWideCacheLocator", "_UserWideCacheLocator")):
    """Numba's user-wide cache folder (an installed package in a read-only location)."""


LOCATORS = (UserProvidedLocator, InTreeLocator, UserWideLocator)


def install():
    """Put multibody's locators first in Numba's list (idempotent)."""
    impl = _numba_class("CacheImpl", "_CacheImpl")
    classes = impl._locator_classes
    if classes[:len(LOCATORS)] != list(LOCATORS):
        classes[:] = list(LOCATORS) + [c for c in classes if c not in LOCATORS]
