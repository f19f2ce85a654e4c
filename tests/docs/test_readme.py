"""The README: it opens with the two commands, its example is at most 10
lines and prints what it says, and its links stay inside the repository."""
import os
import re
import warnings

from .snippets import ROOT, blocks, assert_page_prints_what_it_says


def _readme():
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        return f.read()


def test_readme_opens_with_the_two_commands():
    text = _readme()
    first = re.search(r"^```\w*\n(.*?)^```", text, re.S | re.M)
    assert first.group(1) == "python3 run.py demo\npython3 run.py test\n"
    assert text[:first.start()].strip() == "# multibody"


def test_readme_example_is_short_and_prints_what_it_says():
    (_, code, expected), = blocks("README.md")
    assert expected is not None
    assert len([line for line in code.splitlines() if line.strip()]) <= 10
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert_page_prints_what_it_says("README.md")


def test_readme_links_stay_in_the_repository():
    targets = re.findall(r"\]\(([^)\s]+)\)", _readme())
    assert targets
    for target in targets:
        assert "://" not in target and not target.startswith(("/", "..")), target
        assert os.path.exists(os.path.join(ROOT, target.split("#")[0])), target
    assert "shared/" not in _readme()
