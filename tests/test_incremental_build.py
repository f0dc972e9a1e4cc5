"""Rebuild only what an edit changed (issue 24), on small throwaway chapters in a temporary site.

Each chapter is keyed on what its kernel read (``docsite/read_recorder.py``): editing a
module re-executes exactly the chapters that imported it, a prose edit re-executes
nothing (the new Markdown is merged into the cached outputs), and when what a chapter
read cannot be determined, any change under the site re-executes it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from amp_docs_lib.core.paths import BUILD_LOG
from amp_docs_lib.docsite.cache import CACHE_FORMAT
from conftest import make_chapter

pytestmark = pytest.mark.site

CHAPTERS = {
    # imports a module of the throwaway library at the top
    "alpha": make_chapter("Alpha", ("", "import mylib.alpha\nprint('alpha says', mylib.alpha.VALUE)")),
    # imports a module lazily, inside a function, and reads a data file
    "beta": make_chapter(
        "Beta",
        ("", "def load():\n    from mylib import lazy_mod\n    return lazy_mod.VALUE"),
        ("", "print('lazy says', load())"),
        ("", "print('data says', open('data/values.txt').read().strip())"),
    ),
    # runs an example program in a subprocess, as a chapter runs a script
    "gamma": make_chapter(
        "Gamma",
        (
            "",
            "import subprocess, sys\n"
            "print(subprocess.run([sys.executable, 'examples/hello.py'],"
            " capture_output=True, text=True, check=True).stdout)",
        ),
    ),
}
# starts a process with an environment that drops the recorder: what it read is unknown
UNKNOWN = make_chapter(
    "Delta",
    (
        "",
        "import os, subprocess, sys\n"
        "subprocess.run([sys.executable, '-c', 'pass'], check=True,"
        " env={'PATH': os.environ.get('PATH', '')})\nprint('delta ran')",
    ),
)


def make_site(tmp_path: Path, chapters: dict[str, str]) -> Path:
    """A site with ``chapters``, a throwaway library ``mylib``, a data file and an example program."""
    (tmp_path / "docs" / "chapters").mkdir(parents=True)
    (tmp_path / "docs" / "index.md").write_text("# Home\n\n<!-- amp-docs:chapters -->\n")
    nav = "".join(f"  - chapters/{name}.md\n" for name in chapters)
    (tmp_path / "mkdocs.yml").write_text(
        "site_name: edits\nnav:\n  - index.md\n"
        + nav
        + textwrap.dedent("""\
        plugins:
          - amp-docs
        """)
    )
    for name, text in chapters.items():
        (tmp_path / "docs" / "chapters" / f"{name}.md").write_text(text)
    lib = tmp_path / "mylib"
    lib.mkdir()
    (lib / "__init__.py").write_text("")
    (lib / "alpha.py").write_text("VALUE = 1\n")
    (lib / "lazy_mod.py").write_text("VALUE = 2\n")
    (lib / "unused.py").write_text("VALUE = 3\n")
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "values.txt").write_text("first\n")
    (tmp_path / "examples").mkdir()
    (tmp_path / "examples" / "hello.py").write_text("print('hello from the example')\n")
    return tmp_path


@pytest.fixture
def edit_site(tmp_path: Path) -> Path:
    return make_site(tmp_path, CHAPTERS)


def _build(root: Path) -> dict:
    """``mkdocs build`` of ``root`` (its ``mylib`` importable); the plugin's log, with the build's stderr."""
    env_path = os.pathsep.join(filter(None, [str(root), os.environ.get("PYTHONPATH")]))
    r = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict"],
        cwd=root,
        capture_output=True,
        text=True,
        env=dict(os.environ, NO_MKDOCS_2_WARNING="1", PYTHONPATH=env_path),
    )
    assert r.returncode == 0, r.stderr[-3000:]
    log = json.loads((root / BUILD_LOG).read_text())
    log["stderr"] = r.stderr
    return log


def _page(root: Path, name: str) -> str:
    return (root / "site" / "chapters" / name / "index.html").read_text()


def _append(path: Path, text: str) -> None:
    path.write_text(path.read_text() + text)


def test_each_edit_re_executes_only_the_chapters_that_used_it(edit_site):
    root = edit_site
    first = _build(root)
    assert set(first["executed"]) == set(CHAPTERS)
    assert all(first["reasons"][c] == "no cached result" for c in CHAPTERS)
    assert "re-executed: no cached result" in first["stderr"]  # the progress line says why
    records = [json.loads(p.read_text()) for p in (root / ".amp-docs-cache" / "executed").glob("*.json")]
    assert sorted(r["chapter"] for r in records) == sorted(CHAPTERS)
    for r in records:  # editing the execution, cache or plugin modules re-executes nothing
        assert r["format"] == CACHE_FORMAT and not r["inputs_unknown"]
        assert [label for label in r["inputs"] if "amp_docs_lib/docsite/" in label] == [], r["chapter"]
    alpha_inputs = next(r for r in records if r["chapter"] == "alpha")["inputs"]
    assert "file:site/mylib/alpha.py" in alpha_inputs and "file:site/mylib/unused.py" not in alpha_inputs
    assert _build(root)["executed"] == {}

    # Prose: a one-word edit re-executes nothing, and the page shows the new word.
    alpha = root / "docs" / "chapters" / "alpha.md"
    alpha.write_text(alpha.read_text().replace("# Alpha", "# Alpha\n\nA freshly edited sentence."))
    log = _build(root)
    assert log["executed"] == {} and log["merged"] == ["alpha"]
    assert "freshly edited sentence" in _page(root, "alpha") and "alpha says 1" in _page(root, "alpha")

    # A module imported at the top: only its importer.
    _append(root / "mylib" / "alpha.py", "# a comment\n")
    log = _build(root)
    assert set(log["executed"]) == {"alpha"}
    assert log["reasons"]["alpha"] == "mylib/alpha.py changed"

    # A module imported lazily inside a function was recorded when the function ran.
    (root / "mylib" / "lazy_mod.py").write_text("VALUE = 20\n")
    log = _build(root)
    assert set(log["executed"]) == {"beta"}, log["reasons"]
    assert "mylib/lazy_mod.py changed" in log["reasons"]["beta"]
    assert "lazy says 20" in _page(root, "beta")

    # A data file the chapter opened.
    (root / "data" / "values.txt").write_text("second\n")
    log = _build(root)
    assert set(log["executed"]) == {"beta"} and log["reasons"]["beta"] == "data/values.txt changed"
    assert "data says second" in _page(root, "beta")

    # An example program run in a subprocess: recorded by the child's own recorder.
    (root / "examples" / "hello.py").write_text("print('hello again')\n")
    log = _build(root)
    assert set(log["executed"]) == {"gamma"} and log["reasons"]["gamma"] == "examples/hello.py changed"
    assert "hello again" in _page(root, "gamma")

    # A file nobody read, and the site's machinery (never recorded): nothing re-executes.
    _append(root / "mylib" / "unused.py", "# a comment\n")
    assert _build(root)["executed"] == {}


def test_unknown_inputs_or_a_missing_record_mean_re_execution_never_a_stale_page(tmp_path):
    root = make_site(tmp_path, {"alpha": CHAPTERS["alpha"], "delta": UNKNOWN})
    _build(root)
    records = {json.loads(p.read_text())["chapter"]: p for p in (root / ".amp-docs-cache" / "executed").glob("*.json")}
    delta = json.loads(records["delta"].read_text())
    assert "subprocess started without the read recorder" in delta["inputs_unknown"][0]
    # A file no chapter read: only the chapter whose inputs are unknown re-executes, saying why.
    _append(root / "mylib" / "unused.py", "# a comment\n")
    log = _build(root)
    assert set(log["executed"]) == {"delta"}
    assert log["reasons"]["delta"] == "everything under site (inputs not recorded) changed"
    # The record of what a chapter read is gone (or unreadable): its notebook alone is never trusted.
    records["alpha"].unlink()
    _append(root / "mylib" / "alpha.py", "VALUE = 5\n")
    log = _build(root)
    assert set(log["executed"]) >= {"alpha"} and log["reasons"]["alpha"] == "no cached result"
    assert "alpha says 5" in _page(root, "alpha")
    for p in (root / ".amp-docs-cache" / "executed").glob("alpha-*.json"):
        p.write_text("{not json")
    log = _build(root)
    assert "alpha" in log["executed"] and log["reasons"]["alpha"] == "no cached result"
