"""The code on the documentation pages runs and prints what the pages say."""
import warnings

from .snippets import blocks, assert_page_prints_what_it_says


def test_snippet_parser_reads_the_expected_outputs():
    """The pages' claims are found (a parser that found none would check nothing)."""
    found = blocks("docs/getting-started.md")
    assert len(found) == 2 and all(expected for _, _, expected in found)
    assert all(expected for _, _, expected in blocks("docs/conventions.md"))
    assert all(expected for _, _, expected in blocks("docs/kinematics.md"))


def test_getting_started_runs():
    """Every code block of the getting-started page, in order."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the first steps must not warn
        assert_page_prints_what_it_says("docs/getting-started.md")


def test_conventions_against_pinocchio_and_mujoco():
    """The conventions page's comparisons (the tables' claims) hold."""
    assert_page_prints_what_it_says("docs/conventions.md")


def test_kinematics_page_runs():
    assert_page_prints_what_it_says("docs/kinematics.md")
