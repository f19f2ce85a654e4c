"""Code blocks of the documentation pages and the README, for the tests
that run them: every ```python block of a page runs, in order, in one
namespace; a block followed by "It prints `X`" or by "It prints ...:" and a
```text block must print exactly that."""
import contextlib
import io
import os
import re

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))

_BLOCK = re.compile(r"^```(\w*)\n(.*?)^```\n", re.S | re.M)


def blocks(path):
    """[(language, code, expected output or None)] of the page at ``path``
    (relative to the repository)."""
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        text = f.read()
    found = [(m.group(1), m.group(2), m.start(), m.end()) for m in _BLOCK.finditer(text)]
    out = []
    for i, (lang, code, _, end) in enumerate(found):
        if lang != "python":
            continue
        nxt = found[i + 1] if i + 1 < len(found) else None
        between = text[end: nxt[2] if nxt else len(text)]
        expected = None
        inline = re.match(r"\s*It prints `([^`]*)`", between)
        if inline:
            expected = inline.group(1) + "\n"
        elif re.match(r"\s*It prints[^`]*:\s*$", between) and nxt and nxt[0] == "text":
            expected = nxt[1]
        out.append((lang, code, expected))
    return out


def assert_page_prints_what_it_says(path, cwd=ROOT):
    """Run the page's python blocks in one namespace (in ``cwd``); each
    block's output is checked against what the page says it prints."""
    namespace = {"__name__": "__doc_snippet__"}
    old = os.getcwd()
    os.chdir(cwd)
    try:
        for k, (_, code, expected) in enumerate(blocks(path)):
            buf = io.StringIO()
            with contextlib.redirect_stdout(buf):
                exec(compile(code, f"{path}[python block {k}]", "exec"), namespace)
            if expected is not None:
                assert buf.getvalue() == expected, (
                    f"{path}, python block {k} printed\n{buf.getvalue()}\nbut the page says\n{expected}")
    finally:
        os.chdir(old)
    return namespace
