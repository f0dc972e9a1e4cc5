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
    "beta": make_chapter("Beta", ("", "def load():\n    from mylib import lazy_mod\n    return lazy_mod.VALUE"),
                         ("", "print('lazy says', load())"),
                         ("", "print('data says', open('data/values.txt').read().strip())")),
    # runs an example program in a subprocess, as a chapter runs a script
    "gamma": make_chapter("Gamma", ("", "import subprocess, sys\n"
                                        "print(subprocess.run([sys.executable, 'examples/hello.py'],"
                                        " capture_output=True, text=True, check=True).stdout)")),
    # starts a process with an environment that drops the recorder: its inputs are unknown
    "delta": make_chapter("Delta", ("", "import os, subprocess, sys\n"
                                        "subprocess.run([sys.executable, '-c', 'pass'], check=True,"
                                        " env={'PATH': os.environ.get('PATH', '')})\nprint('delta ran')")),
}


@pytest.fixture
def edit_site(tmp_path: Path) -> Path:
    (tmp_path / "docs" / "chapters").mkdir(parents=True)
    (tmp_path / "docs" / "index.md").write_text("# Home\n\n<!-- amp-docs:chapters -->\n")
    nav = "".join(f"  - chapters/{name}.md\n" for name in CHAPTERS)
    (tmp_path / "mkdocs.yml").write_text("site_name: edits\nnav:\n  - index.md\n" + nav + textwrap.dedent("""\
        plugins:
          - amp-docs
          - mkdocs-jupyter:
              include: ["*.ipynb"]
              execute: false
        """))
    for name, text in CHAPTERS.items():
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


def _build(root: Path) -> dict:
    """``mkdocs build`` of ``root`` (its ``mylib`` importable); the plugin's log, with the build's stderr."""
    env_path = os.pathsep.join(filter(None, [str(root), os.environ.get("PYTHONPATH")]))
    r = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict"], cwd=root, capture_output=True,
                       text=True, env=dict(os.environ, NO_MKDOCS_2_WARNING="1", PYTHONPATH=env_path))
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

    # A file nobody read: nothing re-executes, except the chapter whose inputs are unknown,
    # which depends on everything under the site (never a stale page).
    _append(root / "mylib" / "unused.py", "# a comment\n")
    log = _build(root)
    assert set(log["executed"]) == {"delta"}
    assert "inputs not recorded" in log["reasons"]["delta"]
    assert _build(root)["executed"] == {}


def test_site_machinery_is_not_an_input_of_any_chapter(edit_site):
    """Editing the execution, cache or plugin modules re-executes nothing: none is recorded."""
    root = edit_site
    _build(root)
    records = [json.loads(p.read_text()) for p in (root / ".amp-docs-cache" / "executed").glob("*.json")]
    assert {r["chapter"] for r in records} == set(CHAPTERS) and all(r["format"] == CACHE_FORMAT for r in records)
    for r in records:
        machinery = [label for label in r["inputs"] if "amp_docs_lib/docsite/" in label]
        assert machinery == [], (r["chapter"], machinery)
    alpha = next(r for r in records if r["chapter"] == "alpha")
    assert "file:site/mylib/alpha.py" in alpha["inputs"] and "file:site/mylib/unused.py" not in alpha["inputs"]


def test_a_chapter_whose_record_is_missing_or_broken_re_executes(edit_site):
    root = edit_site
    _build(root)
    records = {json.loads(p.read_text())["chapter"]: p
               for p in (root / ".amp-docs-cache" / "executed").glob("*.json")}
    records["alpha"].unlink()  # the record of what it read is gone: the notebook alone is never trusted
    records["beta"].write_text("{not json")
    _append(root / "mylib" / "alpha.py", "# edited while its record is missing\n")
    log = _build(root)
    assert set(log["executed"]) == {"alpha", "beta"}
    assert log["reasons"]["alpha"] == log["reasons"]["beta"] == "no cached result"
