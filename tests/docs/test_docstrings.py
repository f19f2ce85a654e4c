"""The API reference's numpydoc sections: every function of ``multibody.__all__``,
every class constructor there and the main methods of Simulator, Model and
Trajectory document each parameter of their signature (and no other) in a
``Parameters`` section, and what they return in a ``Returns`` (or ``Yields``)
section unless they return None. The docstrings are parsed by griffe, the
parser mkdocstrings renders the site with (``docstring_style: numpy``)."""
import ast
import inspect

import griffe
import pytest

import multibody as mb

METHODS = [(mb.Simulator, "step"), (mb.Simulator, "rollout"), (mb.Simulator, "rollout_batch"),
           (mb.Model, "integrate"), (mb.Model, "difference"), (mb.Model, "with_params"),
           (mb.Trajectory, "save"), (mb.Trajectory, "load")]
PENDING: set[str] = set()  # every name of the API is converted


def _documented():
    """(name, callable whose signature is documented, docstring owner, is a class) of the API."""
    out = []
    for name in mb.__all__:
        obj = getattr(mb, name)
        if name in PENDING or inspect.ismodule(obj):
            continue
        if inspect.isclass(obj):
            # exceptions and warnings take the message only (their constructor is Exception's)
            if not issubclass(obj, BaseException):
                out.append((name, obj, obj, True))
        else:
            out.append((name, obj, obj, False))
    out += [(f"{cls.__name__}.{m}", getattr(cls, m), getattr(cls, m), False) for cls, m in METHODS]
    return out


API = _documented()


def _sections(obj):
    doc = inspect.getdoc(obj) or ""
    return {s.kind.value: s for s in griffe.Docstring(doc, parser="numpy").parse()}


def _parameters(signature):
    names = []
    for p in signature.parameters.values():
        if p.name in ("self", "cls"):
            continue
        names.append({p.VAR_POSITIONAL: "*", p.VAR_KEYWORD: "**"}.get(p.kind, "") + p.name)
    return names


def check_parameters(name, signature, sections):
    expected = _parameters(signature)
    if not expected:
        return
    assert "parameters" in sections, f"{name}: no Parameters section (parameters {expected})"
    documented = [p.name for p in sections["parameters"].value]
    # numpydoc writes ``*args`` / ``**kwargs``; griffe may keep or drop the stars
    stripped = [d.lstrip("*") for d in documented]
    missing = [p for p in expected if p.lstrip("*") not in stripped]
    extra = [d for d in documented if d.lstrip("*") not in [p.lstrip("*") for p in expected]]
    assert not missing and not extra, f"{name}: undocumented {missing}, documented but not parameters {extra}"


def check_defaults(name, signature, sections):
    """A default the docstring states (numpydoc: the first of ``{choices}``,
    or ``, default x``) is the signature's: the API page shows it."""
    for p in sections["parameters"].value if "parameters" in sections else ():
        param = signature.parameters.get(p.name)
        if param is None or param.default is param.empty or p.default is None:
            continue
        try:
            stated = ast.literal_eval(p.default)
        except (ValueError, SyntaxError):
            continue
        assert stated == param.default, f"{name}: {p.name} documented with default {p.default}, is {param.default!r}"


def check_returns(name, signature, sections):
    if signature.return_annotation in (None, "None"):
        return
    assert "returns" in sections or "yields" in sections, f"{name}: no Returns section"
    assert all(r.description.strip() for r in
               (sections.get("returns") or sections["yields"]).value), f"{name}: a Returns entry without description"


@pytest.mark.parametrize("name, target, owner, is_class", API, ids=[a[0] for a in API])
def test_numpydoc_sections(name, target, owner, is_class):
    signature = inspect.signature(target)
    sections = _sections(owner)
    check_parameters(name, signature, sections)
    check_defaults(name, signature, sections)
    if not is_class:
        check_returns(name, signature, sections)


def test_the_checks_can_fail():
    """The checks see a missing parameter, a stale one, a missing Returns
    and a wrong default."""
    def f(a: int, b: int = 0) -> int:
        """Sum.

        Parameters
        ----------
        a : int
            First.
        c : int
            Stale.
        """
        return a + b
    with pytest.raises(AssertionError, match=r"undocumented \['b'\], documented but not parameters \['c'\]"):
        check_parameters("f", inspect.signature(f), _sections(f))
    with pytest.raises(AssertionError, match="no Returns section"):
        check_returns("f", inspect.signature(f), _sections(f))

    def g(method: str | None = None) -> None:
        """Nothing.

        Parameters
        ----------
        method : {"a", "b"}, optional
            The first of the choices reads as the default, which is None.
        """
    with pytest.raises(AssertionError, match="method documented with default"):
        check_defaults("g", inspect.signature(g), _sections(g))


def test_every_name_is_checked_or_pending():
    """PENDING names only what exists, and the API list covers the rest of ``__all__``."""
    assert PENDING <= set(mb.__all__)
    checked = {a[0] for a in API}
    skipped = {n for n in mb.__all__ if inspect.ismodule(getattr(mb, n))
               or (inspect.isclass(getattr(mb, n)) and issubclass(getattr(mb, n), BaseException))}
    assert checked | PENDING | skipped >= set(mb.__all__)
    assert len(checked) >= 50
