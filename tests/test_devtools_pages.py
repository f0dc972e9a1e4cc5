"""The page passes as modules (issue 35 finding 9): docsite's docstring names every module, the developer
tools live outside it, and grouped claims are titled the same on every build."""

import ast
import subprocess
import sys

import pytest
from test_pages import _cell, _output

from amp_docs_lib.core.paths import LIBRARY_ROOT
from amp_docs_lib.docsite.reader_layout import group_claims


@pytest.mark.parametrize("package", ["docsite", "devtools"])
def test_the_package_docstring_names_every_module(package):
    folder = LIBRARY_ROOT / package
    doc = ast.get_docstring(ast.parse((folder / "__init__.py").read_text(encoding="utf-8")))
    modules = {p.stem for p in folder.glob("*.py") if p.stem != "__init__"}
    assert modules and not {m for m in modules if f"``{m}``" not in doc}


def test_no_developer_tool_is_left_beside_the_plugin():
    assert not {"build_bench.py", "reproducible.py"} & {p.name for p in (LIBRARY_ROOT / "docsite").glob("*.py")}


def test_the_reproducibility_check_answers_at_its_new_name():
    r = subprocess.run(
        [sys.executable, "-m", "amp_docs_lib.devtools.reproducible", "--help"], capture_output=True, text=True
    )
    assert r.returncode == 0 and "usage: python -m amp_docs_lib.devtools.reproducible" in r.stdout


def _claim(text: str, verdict: str) -> str:
    return _output(f'<p class="amp-claim amp-claim--holds">{text} <span class="amp-claim-verdict">{verdict}</span></p>')


# Pairs of verdicts a run of two claims may carry: a tie, which the most common verdict does not decide.
TIES = [
    ("checked in this build", "measured on this machine"),
    ("holds here", "does not hold here"),
    ("alpha", "beta"),
    ("gamma", "delta"),
    ("first verdict", "second verdict"),
]


@pytest.mark.parametrize("a,b", TIES + [(b, a) for a, b in TIES])
def test_a_tie_between_verdicts_is_titled_by_the_first_claim(a, b):
    """The title of a run of claims with two verdicts, once each, was drawn from a set: it depended on
    the string hashes (PYTHONHASHSEED), so two builds of one chapter gave different pages."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(_cell("cell-1", None, _claim("one", a) + _claim("two", b)), "html.parser")
    group_claims(soup)  # (reader_layout then turns a mixed list's title into a legend: claim_marks)
    out = str(soup)
    title = out[out.index('class="amp-claims__title">') :].split(">", 1)[1].split("<", 1)[0]
    assert title == a[:1].upper() + a[1:]
    assert f">{b}</span>" in out and f">{a}</span>" not in out  # the other verdict is said at its claim
