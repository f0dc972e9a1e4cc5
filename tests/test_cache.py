import dataclasses
import shutil
import signal
import subprocess
import sys
import time
import os
import json

import nbformat
import pytest

from amp_docs_lib.docsite import cache as cache_mod
from amp_docs_lib.docsite.cache import ExecutionCache, KeyInputs, cache_key, library_source_hash
from amp_docs_lib.core.paths import BUILD_LOG, EXECUTED_DIR

from conftest import REPO_ROOT, make_chapter, mkdocs_build

TEXT = "# A chapter\n```python\nprint(1)\n```\n"


@pytest.fixture(scope="module")
def inputs():
    return KeyInputs.current()


def test_key_is_stable_for_a_no_op(inputs):
    assert cache_key(TEXT, inputs) == cache_key(TEXT, KeyInputs.current())


def test_chapter_text_changes_key(inputs):
    assert cache_key(TEXT + "\n", inputs) != cache_key(TEXT, inputs)


def test_library_source_changes_key(inputs, tmp_path):
    lib = tmp_path / "lib"
    shutil.copytree(cache_mod.LIBRARY_ROOT, lib, ignore=shutil.ignore_patterns("__pycache__"))
    before = library_source_hash(lib)
    assert before == inputs.library_hash
    (lib / "numbers" / "formats.py").write_text((lib / "numbers" / "formats.py").read_text() + "\n# edited\n")
    after = library_source_hash(lib)
    assert after != before
    assert cache_key(TEXT, dataclasses.replace(inputs, library_hash=after)) != cache_key(TEXT, inputs)


def test_example_programs_change_key(inputs, tmp_path):
    ex = tmp_path / "examples"
    shutil.copytree(cache_mod.EXAMPLES_ROOT, ex)
    assert cache_mod.examples_source_hash(ex) == inputs.examples_hash
    (ex / "format_table.py").write_text((ex / "format_table.py").read_text() + "\n# edited\n")
    edited = cache_mod.examples_source_hash(ex)
    assert edited != inputs.examples_hash
    assert cache_key(TEXT, dataclasses.replace(inputs, examples_hash=edited)) != cache_key(TEXT, inputs)
    # A config file an example reads (exercises/precision.toml) is an input too.
    (ex / "settings.toml").write_text('precision = "amp_bf16"\n')
    assert cache_mod.examples_source_hash(ex) != edited


def test_package_version_changes_key(inputs):
    pkgs = dict(inputs.packages)
    pkgs["torch"] = pkgs["torch"] + ".post1"
    upgraded = dataclasses.replace(inputs, packages=tuple(sorted(pkgs.items())))
    assert cache_key(TEXT, upgraded) != cache_key(TEXT, inputs)


def test_hardware_and_profile_change_key(inputs):
    assert cache_key(TEXT, dataclasses.replace(inputs, hardware="0" * 16)) != cache_key(TEXT, inputs)
    other = "gpu-full" if inputs.profile == "cpu-small" else "cpu-small"
    assert cache_key(TEXT, dataclasses.replace(inputs, profile=other)) != cache_key(TEXT, inputs)


def test_key_rejects_non_text(inputs):
    with pytest.raises(TypeError, match="chapter_text must be a str"):
        cache_key(b"bytes", inputs)


def test_cache_never_trusts_partial_or_foreign_entries(tmp_path):
    c = ExecutionCache(tmp_path)
    nb = nbformat.v4.new_notebook()
    path = c.put("ch", "k" * 64, nb)
    assert c.get("ch", "k" * 64)[0] == path
    assert c.get("ch", "j" * 64) is None
    # A truncated file (a build killed while writing without the atomic rename) is ignored.
    path.write_text(path.read_text()[:40])
    assert c.get("ch", "k" * 64) is None
    # An entry that does not record completion is ignored.
    nb2 = nbformat.v4.new_notebook()
    nbformat.write(nb2, path)
    assert c.get("ch", "k" * 64) is None
    (tmp_path / ".tmp-123.part").write_text("{")
    removed = c.evict_except(set())
    assert {p.name for p in removed} == {path.name, ".tmp-123.part"}


def _executed(root):
    return json.loads((root / BUILD_LOG).read_text())["executed"]


def test_incremental_builds_execute_only_what_changed(mini_site):
    mkdocs_build(mini_site)
    assert set(_executed(mini_site)) == {"a", "b"}
    mkdocs_build(mini_site)
    assert _executed(mini_site) == {}, "a no-op rebuild must execute nothing"
    a = mini_site / "docs" / "chapters" / "a.md"
    a.write_text(a.read_text() + "\nMore prose.\n")
    mkdocs_build(mini_site)
    assert set(_executed(mini_site)) == {"a"}
    html = (mini_site / "site" / "chapters" / "a" / "index.html").read_text()
    assert "chapter a" in html


def test_killed_build_leaves_nothing_trusted(mini_site):
    b = mini_site / "docs" / "chapters" / "b.md"
    b.write_text(make_chapter("Slow", ("", "import time\ntime.sleep(60)")))
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    proc = subprocess.Popen([sys.executable, "-m", "mkdocs", "build"], cwd=mini_site, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    cache_dir = mini_site / EXECUTED_DIR
    deadline = time.time() + 90
    # Wait until chapter a is cached and b is executing, then kill the whole build.
    while time.time() < deadline and not list(cache_dir.glob("a-*.ipynb")):
        time.sleep(0.5)
    time.sleep(4)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    assert not list(cache_dir.glob("b-*.ipynb")), "an interrupted chapter must leave no entry"
    b.write_text(make_chapter("Fast again", ("", "print('b done')")))
    mkdocs_build(mini_site)
    assert set(_executed(mini_site)) == {"b"}


def test_build_fails_loudly_naming_the_chapter(mini_site):
    b = mini_site / "docs" / "chapters" / "b.md"
    b.write_text(make_chapter("Broken", ("", "import math\nmath.sqrt(-1)")))
    r = mkdocs_build(mini_site, check=False)
    assert r.returncode != 0
    assert "chapters/b.md failed to execute" in r.stderr + r.stdout
    assert "math domain error" in r.stderr + r.stdout


def test_amp_docs_build_is_a_no_op_when_nothing_changed(mini_site):
    import subprocess as sp
    cmd = [sys.executable, "-m", "amp_docs_lib", "build", "--strict"]
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    first = sp.run(cmd, cwd=mini_site, env=env, capture_output=True, text=True, check=True)
    assert "up to date" not in first.stdout and set(_executed(mini_site)) == {"a", "b"}
    (mini_site / BUILD_LOG).unlink()
    again = sp.run(cmd, cwd=mini_site, env=env, capture_output=True, text=True, check=True)
    assert "is up to date" in again.stdout and not (mini_site / BUILD_LOG).exists()
    a = mini_site / "docs" / "chapters" / "a.md"
    a.write_text(a.read_text() + "\nMore prose.\n")
    sp.run(cmd, cwd=mini_site, env=env, capture_output=True, text=True, check=True)
    assert set(_executed(mini_site)) == {"a"}
    forced = sp.run(cmd + ["--force"], cwd=mini_site, env=env, capture_output=True, text=True, check=True)
    assert "up to date" not in forced.stdout and _executed(mini_site) == {}


def test_a_cache_hit_reads_the_notebook_as_nbformat_does(tmp_path):
    """Entries are read without schema validation, but must equal what ``nbformat.read`` gives
    (multi-line sources and outputs are stored as lists of lines and rejoined on reading)."""
    import nbformat
    from nbformat.v4 import new_code_cell, new_notebook, new_output

    from amp_docs_lib.docsite.cache import ExecutionCache

    nb = new_notebook(cells=[new_code_cell("a = 1\nb = 2\n", outputs=[
        new_output("display_data", data={"text/html": "<p>one</p>\n<p>two</p>\n"})])])
    cache = ExecutionCache(tmp_path)
    path = cache.put("ch", "k" * 40, nb)
    path_read, got = cache.get("ch", "k" * 40)
    assert got == nbformat.read(path, as_version=4)
    assert got.cells[0].source == "a = 1\nb = 2\n"
    assert got.cells[0].outputs[0]["data"]["text/html"] == "<p>one</p>\n<p>two</p>\n"


def test_a_chapter_that_reads_others_is_keyed_on_their_text(tmp_path):
    from amp_docs_lib.docsite.cache import key_text, reads_chapters

    reader = tmp_path / "lit.md"
    reader.write_text("---\njupyter:\n  amp_docs:\n    reads_chapters: true\n---\n# Lit\n")
    plain = tmp_path / "a.md"
    plain.write_text("---\njupyter: {}\n---\n# A\n\n## A heading\n")
    other = tmp_path / "b.md"
    other.write_text("# B\n")
    assert reads_chapters(reader.read_text()) and not reads_chapters(plain.read_text())
    before_reader, before_plain = key_text(reader), key_text(plain)
    plain.write_text(plain.read_text().replace("A heading", "A renamed heading"))
    assert key_text(reader) != before_reader  # the reading map would show the new heading
    other.write_text("# B, edited\n")
    assert key_text(plain) == plain.read_text() != before_plain  # a plain chapter: its own text only
    # The flag counts only in the front matter.
    body_only = tmp_path / "c.md"
    body_only.write_text("---\njupyter: {}\n---\n\nreads_chapters: true\n")
    assert not reads_chapters(body_only.read_text())


def test_the_literature_chapter_reads_chapters():
    from amp_docs_lib.docsite.cache import reads_chapters

    assert reads_chapters((REPO_ROOT / "docs/chapters/literature.md").read_text())
