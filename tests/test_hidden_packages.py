"""AMP_DOCS_HIDE_PACKAGES: a build as if optional packages were not installed."""

import os
import subprocess
import sys

import pytest

from amp_docs_lib.core.gating import requirement_met, skip_note_html
from amp_docs_lib.core.packages import (
    HIDE_ENV_VAR,
    OPTIONAL_PACKAGES,
    SITE_DIR,
    hidden_packages,
    is_hidden,
    subprocess_env,
)
from conftest import (
    OPTIONAL_CHAPTERS,
    REPO_ROOT,
    build_seconds,
    make_chapter,
    notebook_hidden,
    optional_packages_used,
    selected_params,
    side_by_side,
)

# A package made for the test stands in for an optional one: the tests work whatever is installed.
STAND_IN = "mslk"  # a listed optional package (core/packages.py) that is not installed here: the fixture fakes it


@pytest.fixture
def stand_in(tmp_path, monkeypatch):
    """Install the stand-in package on sys.path and on PYTHONPATH (for kernels and subprocesses)."""
    root = tmp_path / "fake_site"
    (root / STAND_IN).mkdir(parents=True)
    (root / STAND_IN / "__init__.py").write_text("VALUE = 42\n")
    monkeypatch.syspath_prepend(str(root))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(root), os.environ.get("PYTHONPATH")])))
    return root


def test_hidden_packages_parses_names_and_optional():
    assert hidden_packages({}) == ()
    assert hidden_packages({HIDE_ENV_VAR: " onnxruntime, jax ,"}) == ("jax", "onnxruntime")
    assert hidden_packages({HIDE_ENV_VAR: "optional"}) == tuple(sorted(OPTIONAL_PACKAGES))
    assert is_hidden("onnxruntime.quantization", {HIDE_ENV_VAR: "onnxruntime"})
    assert not is_hidden("onnx", {HIDE_ENV_VAR: "onnxruntime"})
    for bad in ("onnx-runtime", "onnxruntme", "Optional"):  # each would hide nothing yet change every key
        with pytest.raises(ValueError, match=f"'{bad}' is not a package it can hide; valid: 'optional'"):
            hidden_packages({HIDE_ENV_VAR: bad})


def test_subprocess_cannot_import_hidden_packages(tmp_path, stand_in):
    other = tmp_path / "other_site"  # an existing sitecustomize further along the path still runs
    other.mkdir()
    (other / "sitecustomize.py").write_text("import os\nos.environ['OTHER_SITECUSTOMIZE'] = 'ran'\n")
    path = os.pathsep.join([str(other), os.environ["PYTHONPATH"]])
    env = subprocess_env({**os.environ, HIDE_ENV_VAR: STAND_IN, "PYTHONPATH": path})
    assert env["PYTHONPATH"].split(os.pathsep)[:2] == [str(SITE_DIR), str(other)]
    code = (
        f"import importlib.util, os, subprocess, sys\n"
        f"assert importlib.util.find_spec({STAND_IN!r}) is None\n"
        f"try:\n    import {STAND_IN}\nexcept ModuleNotFoundError as e:\n    print('blocked:', e)\n"
        "import json  # everything else imports\n"
        "print('other:', os.environ.get('OTHER_SITECUSTOMIZE'))\n"
        f"print('child:', subprocess.run([sys.executable, '-c', 'import {STAND_IN}']).returncode)\n"
    )
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert f"blocked: No module named '{STAND_IN}' (hidden by {HIDE_ENV_VAR})" in r.stdout
    assert "other: ran" in r.stdout and "child: 1" in r.stdout
    plain = subprocess.run([sys.executable, "-c", f"import {STAND_IN}"], env=subprocess_env({**os.environ}))
    assert plain.returncode == 0


def test_gating_honours_hidden_packages(monkeypatch, stand_in):
    assert requirement_met(f"pkg:{STAND_IN}")
    monkeypatch.setenv(HIDE_ENV_VAR, STAND_IN)
    assert not requirement_met(f"pkg:{STAND_IN}")
    assert f"the Python package {STAND_IN} (not installed in this build)" in skip_note_html([f"pkg:{STAND_IN}"])


def test_hidden_set_is_in_the_cache_key_and_the_build_manifest(monkeypatch):
    from amp_docs_lib.docsite.cache import Environment
    from amp_docs_lib.docsite.up_to_date import input_manifest
    from conftest import REPO_ROOT

    report = {"packages": {"torch": "2.4.0"}, "hardware_fingerprint": "h", "profile": "cpu-small"}
    monkeypatch.delenv(HIDE_ENV_VAR, raising=False)
    full = Environment.current(report)
    full_manifest = input_manifest(REPO_ROOT, [])
    monkeypatch.setenv(HIDE_ENV_VAR, "onnxruntime")
    hidden = Environment.current(report)
    assert hidden.hidden_packages == ("onnxruntime",)
    assert hidden.key() != full.key()
    assert input_manifest(REPO_ROOT, []) != full_manifest


@pytest.mark.slow  # starts a kernel
def test_executor_hides_packages_from_the_kernel(tmp_path, monkeypatch, stand_in):
    from amp_docs_lib.core.chapters import read_chapter
    from amp_docs_lib.docsite.execute import execute_notebook

    monkeypatch.setenv(HIDE_ENV_VAR, STAND_IN)
    p = tmp_path / "hid.md"
    p.write_text(
        make_chapter(
            "Hidden",
            (f'["requires:pkg:{STAND_IN}"]', f"import {STAND_IN}"),
            ("", f"try:\n    import {STAND_IN}\nexcept ImportError as e:\n    print('kernel:', e)"),
            (
                "",
                f"import subprocess, sys\nprint('child:', subprocess.run([sys.executable, '-c', 'import {STAND_IN}'],"
                " capture_output=True).returncode)",
            ),
        )
    )
    nb = execute_notebook(read_chapter(p), "hid")[0]
    code = [c for c in nb.cells if c.cell_type == "code"]
    monkeypatch.delenv(HIDE_ENV_VAR)
    shown = execute_notebook(read_chapter(p), "hid")[0]  # the same chapter, nothing hidden
    texts = ["".join(o.get("text", "") for o in c.outputs).strip() for c in shown.cells if c.cell_type == "code"]
    assert texts == ["", "", "child: 0"]
    assert "not installed in this build" in code[0].outputs[0]["data"]["text/html"]
    assert f"kernel: No module named '{STAND_IN}'" in code[1].outputs[0]["text"]
    assert "child: 1" in code[2].outputs[0]["text"]
    assert nb.metadata["amp_docs"]["hidden_packages"] == [STAND_IN]


# The downloaded notebooks already run with every optional package the reader's venv lacks hidden
# (test_downloads_run: each cell gated on one says it was skipped, naming it; no other cell fails).
# The build path runs here only for chapters using an optional package that venv has.
BUILD_PATH_CHAPTERS = [c for c in OPTIONAL_CHAPTERS if optional_packages_used(c) - set(notebook_hidden())]


def test_optional_chapters_are_found():
    assert {"quantization", "autocast", "debugging", "fp8"} <= {c.stem for c in OPTIONAL_CHAPTERS}
    # onnxruntime comes with the notebook extra: its chapter's hidden run is the build path's
    assert "onnxruntime" not in notebook_hidden() and "quantization" in {c.stem for c in BUILD_PATH_CHAPTERS}


@pytest.fixture(scope="module")
def hidden_executions(request) -> dict:
    """Every selected optional chapter executed with every optional package hidden, side by side
    (``side_by_side``), through the build's cache (``cached_execution``): chapter -> its future."""
    from amp_docs_lib.docsite.execute import cached_execution

    hide = pytest.MonkeyPatch()
    request.addfinalizer(hide.undo)  # after the workers have stopped (finalizers run last-in, first-out)
    hide.setenv(HIDE_ENV_VAR, "optional")  # read when each chapter's kernel starts
    pool = side_by_side(request)
    wanted = selected_params(request, "test_chapter_builds_without_optional_packages", "path")
    longest_first = sorted(wanted, key=build_seconds, reverse=True)  # so that no long chapter runs alone at the end
    return {p: pool.submit(cached_execution, p, root=REPO_ROOT) for p in longest_first}


@pytest.mark.site  # executes whole chapters; the tests above are the fast loop's
@pytest.mark.parametrize("path", BUILD_PATH_CHAPTERS, ids=[c.stem for c in BUILD_PATH_CHAPTERS])
def test_chapter_builds_without_optional_packages(path, hidden_executions, monkeypatch):
    """The whole chapter executes with every optional package hidden; gated cells say why they were skipped.
    (The other optional chapters: test_downloads_run's notebook runs, with those packages hidden.)

    Through the build's cache: the hidden set is part of the key, so a run after the first (or after
    an `AMP_DOCS_HIDE_PACKAGES=optional amp-docs build`) reuses that execution, and never a full build's."""
    monkeypatch.setenv(HIDE_ENV_VAR, "optional")
    nb = hidden_executions[path].result()[0]  # raises if any cell fails
    assert nb.metadata["amp_docs"]["hidden_packages"] == sorted(OPTIONAL_PACKAGES)
    gated = 0
    for cell in nb.cells:
        pkgs = [t.split(":", 2)[2] for t in cell.metadata.get("tags", []) if t.startswith("requires:pkg:")]
        if cell.cell_type != "code" or not set(pkgs) & set(OPTIONAL_PACKAGES):
            continue
        gated += 1
        note = cell.outputs[0]["data"]["text/html"]
        assert "Skipped on this machine" in note and "(not installed in this build)" in note
        assert any(f"the Python package {p}" in note for p in pkgs)
    assert gated, f"{path.name} uses an optional package but no cell is gated on it"
