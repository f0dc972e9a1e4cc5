import dataclasses
import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import nbformat
import pytest

from amp_docs_lib.core.chapters import parse_chapter
from amp_docs_lib.core.paths import BUILD_LOG, EXECUTED_DIR, REPO_ROOT
from amp_docs_lib.docsite.cache import Environment, ExecutionCache, code_key, merge_markdown
from amp_docs_lib.docsite.inputs import InputHasher, Recorded, Roots, read_records, snapshot
from conftest import make_chapter, mkdocs_build

TEXT = make_chapter("A chapter", ("", "print(1)"), ('["requires:cuda"]', "print(2)"))


@pytest.fixture(scope="module")
def env():
    report = {"packages": {"torch": "2.4.0", "numpy": "2.0"}, "hardware_fingerprint": "h" * 16, "profile": "cpu-small"}
    return Environment.current(report)


def test_environment_key_follows_versions_hardware_profile_and_hidden_set(env):
    assert env.key() == dataclasses.replace(env).key()
    pkgs = dict(env.packages, torch="2.5.0")
    upgraded = dataclasses.replace(env, packages=tuple(sorted(pkgs.items())))
    assert upgraded.key() != env.key()
    assert upgraded.differences(dataclasses.asdict(env)) == ["packages changed (torch 2.4.0 -> 2.5.0)"]
    assert dataclasses.replace(env, hardware="0" * 16).key() != env.key()
    assert dataclasses.replace(env, profile="gpu-full").key() != env.key()
    assert dataclasses.replace(env, hidden_packages=("jax",)).key() != env.key()


def test_code_key_ignores_prose_but_not_code_tags_or_front_matter():
    base = code_key(parse_chapter(TEXT))
    assert code_key(parse_chapter(TEXT.replace("# A chapter", "# A chapter\n\nNew prose."))) == base
    assert code_key(parse_chapter(TEXT.replace("print(1)", "print(10)"))) != base
    assert code_key(parse_chapter(TEXT.replace("requires:cuda", "requires:sm89"))) != base
    meta = TEXT.replace("jupyter:\n", "jupyter:\n  amp_docs:\n    timing_sensitive: true\n", 1)
    assert code_key(parse_chapter(meta)) != base


def test_markdown_is_merged_into_the_cached_outputs():
    executed = parse_chapter(TEXT)
    executed.cells[1].outputs = [nbformat.v4.new_output("stream", text="1\n")]
    executed.metadata["amp_docs"] = {"seconds": 1.0}
    edited = parse_chapter(TEXT.replace("# A chapter", "# A renamed chapter"))
    merged = merge_markdown(executed, edited)
    assert merged.cells[0].source == "# A renamed chapter"
    assert merged.cells[1].outputs[0]["text"] == "1\n" and merged.metadata["amp_docs"]["seconds"] == 1.0
    with pytest.raises(ValueError, match="code cells differ"):
        merge_markdown(executed, parse_chapter(TEXT.replace("print(1)", "print(10)")))


def _store(tmp_path, env, inputs, text=TEXT):
    roots = Roots(tmp_path)
    cache = ExecutionCache(tmp_path / "cache", roots)
    nb = parse_chapter(text)
    nb.metadata["amp_docs"] = {"seconds": 1.0}
    path = cache.put("ch", nb, text=text, source=parse_chapter(text), inputs=inputs, env=env)
    return cache, roots, path


def test_lookup_hit_merge_and_miss_say_why(tmp_path, env):
    data = tmp_path / "data.txt"
    data.write_text("one")
    label = "file:site/data.txt"
    cache, roots, path = _store(tmp_path, env, {label: InputHasher(Roots(tmp_path))(label)})
    look = lambda text, e=env: cache.lookup("ch", text, e, InputHasher(roots), parse_chapter)  # noqa: E731
    assert look(TEXT).status == "hit" and look(TEXT).path == path
    merged = look(TEXT.replace("# A chapter", "# A chapter\n\nOne more word."))
    assert merged.status == "merged" and "One more word." in merged.nb.cells[0].source
    assert look(TEXT.replace("# A chapter", "# A chapter\n\nOne more word.")).status == "hit"  # merged once
    assert look(TEXT.replace("print(1)", "print(10)")).reason == "code cell 1 changed"
    other = dataclasses.replace(env, profile="gpu-full")
    assert look(TEXT, other).reason == "profile changed (cpu-small -> gpu-full)"
    data.write_text("two")
    assert look(TEXT).reason == "data.txt changed"
    data.unlink()
    assert look(TEXT).reason == "data.txt is missing"
    assert (
        ExecutionCache(tmp_path / "elsewhere", roots).lookup("ch", TEXT, env, InputHasher(roots), parse_chapter).reason
        == "no cached result"
    )
    with pytest.raises(TypeError, match="text must be a str"):
        look(b"bytes")


def test_cache_never_trusts_partial_or_foreign_entries(tmp_path, env):
    cache, roots, path = _store(tmp_path, env, {})
    look = lambda: cache.lookup("ch", TEXT, env, InputHasher(roots), parse_chapter)  # noqa: E731
    assert look().status == "hit"
    # A truncated notebook (a build killed while writing without the atomic rename) is ignored.
    good = path.read_text()
    path.write_text(good[:40])
    assert look().status == "miss"
    # A notebook that does not record completion is ignored.
    nb = json.loads(good)
    nb["metadata"]["amp_docs"]["complete"] = False
    path.write_text(json.dumps(nb))
    assert look().status == "miss"
    path.write_text(good)
    assert look().status == "hit"
    # Without its record (what it read), a notebook is never trusted.
    record = path.with_suffix(".json")
    record.unlink()
    assert look().reason == "no cached result"
    (tmp_path / "cache" / ".tmp-123.part").write_text("{")
    removed = cache.evict_except(set())
    assert {p.name for p in removed} == {path.name, ".tmp-123.part"}


def test_a_cache_hit_reads_the_notebook_as_nbformat_does(tmp_path, env):
    """Entries are read without schema validation, but must equal what ``nbformat.read`` gives
    (multi-line sources and outputs are stored as lists of lines and rejoined on reading)."""
    text = make_chapter("T", ("", "a = 1\nb = 2"))
    cache, roots, path = _store(tmp_path, env, {}, text)
    got = cache.lookup("ch", text, env, InputHasher(roots), parse_chapter)
    assert got.status == "hit" and got.nb == nbformat.read(path, as_version=4)
    assert got.nb.cells[1].source == "a = 1\nb = 2"


def test_unknown_inputs_make_every_file_under_the_roots_an_input(tmp_path):
    roots = Roots(tmp_path)
    (tmp_path / "mod.py").write_text("x = 1\n")
    complete = snapshot(Recorded(reads={"file:site/mod.py"}, complete=True), roots, time.time() + 1)
    assert list(complete) == ["file:site/mod.py"]
    unknown = snapshot(Recorded(reads={"file:site/mod.py"}, complete=False, unknown=["why"]), roots, time.time() + 1)
    assert set(unknown) == {"file:site/mod.py", "tree:site"}
    (tmp_path / "other.py").write_text("y = 2\n")  # a file nobody recorded reading
    hasher = InputHasher(roots)
    assert hasher.changed(complete) == [] and hasher.changed(unknown) == ["tree:site"]


def test_a_file_changed_while_the_chapter_ran_is_never_trusted(tmp_path):
    roots = Roots(tmp_path)
    (tmp_path / "mod.py").write_text("x = 1\n")
    inputs = snapshot(Recorded(reads={"file:site/mod.py"}, complete=True), roots, time.time() - 60)
    assert InputHasher(roots).changed(inputs) == ["file:site/mod.py"]


def _record_in_subprocess(tmp_path, code):
    reads = tmp_path / "reads"
    env = dict(
        os.environ,
        AMP_DOCS_READS_DIR=str(reads),
        AMP_DOCS_READS_ROOTS=str(tmp_path),
        PYTHONPATH=os.pathsep.join(
            [str(REPO_ROOT / "amp_docs_lib" / "docsite" / "hide_site"), str(REPO_ROOT), str(tmp_path)]
        ),
    )
    subprocess.run(
        [sys.executable, "-c", code + "\nimport sys; sys.modules['amp_docs_read_recorder'].finish()"],
        cwd=tmp_path,
        env=env,
        check=True,
    )
    return read_records(reads, Roots(tmp_path))


def test_the_recorder_sees_lazy_imports_data_files_folders_and_children(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "lazy.py").write_text("X = 1\n")
    (tmp_path / "pkg" / "never.py").write_text("X = 2\n")
    (tmp_path / "data.txt").write_text("d")
    (tmp_path / "child.txt").write_text("c")
    got = _record_in_subprocess(
        tmp_path,
        textwrap.dedent("""\
        import glob, subprocess, sys
        def f():
            import pkg.lazy
        f()
        open("data.txt").read()
        open("written.txt", "w").write("out")
        open("written.txt").read()
        glob.glob("pkg/*.py")
        subprocess.run([sys.executable, "-c", "open('child.txt').read()"], check=True)
        """),
    )
    assert got.complete and not got.unknown
    assert {"file:site/pkg/lazy.py", "file:site/data.txt", "file:site/child.txt", "dir:site/pkg"} <= got.reads
    assert "file:site/pkg/never.py" not in got.reads
    assert "file:site/written.txt" not in got.reads  # its own output, not an input


def test_a_process_that_drops_the_recorder_makes_the_inputs_unknown(tmp_path):
    got = _record_in_subprocess(
        tmp_path, "import subprocess, sys\nsubprocess.run([sys.executable, '-c', 'pass'], env={}, check=True)"
    )
    assert got.unknown and "without the read recorder" in got.unknown[0]


def test_headings_read_by_the_literature_chapter_are_keyed_on_the_headings_only(tmp_path):
    """core.chapters reads other chapters for their headings: prose edits there are not inputs."""
    ch = tmp_path / "other.md"
    ch.write_text("# Title\n\nSome prose.\n\n## A section\n")
    got = _record_in_subprocess(
        tmp_path, f"from amp_docs_lib.core.chapters import chapter_anchors\nchapter_anchors({str(ch)!r})"
    )
    assert got.reads == {"headings:site/other.md"}
    inputs = snapshot(got, Roots(tmp_path), time.time() + 1)
    ch.write_text("# Title\n\nOther prose, longer.\n\n## A section\n")
    assert InputHasher(Roots(tmp_path)).changed(inputs) == []
    ch.write_text("# Title\n\nOther prose, longer.\n\n## A renamed section\n")
    assert InputHasher(Roots(tmp_path)).changed(inputs) == ["headings:site/other.md"]


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
    assert _executed(mini_site) == {}, "a prose edit is merged into the cached outputs"
    html = (mini_site / "site" / "chapters" / "a" / "index.html").read_text()
    assert "chapter a" in html and "More prose." in html
    a.write_text(a.read_text().replace("print('chapter a')", "print('chapter a, edited')"))
    mkdocs_build(mini_site)
    assert set(_executed(mini_site)) == {"a"}
    assert "chapter a, edited" in (mini_site / "site" / "chapters" / "a" / "index.html").read_text()


def test_killed_build_leaves_nothing_trusted(mini_site):
    b = mini_site / "docs" / "chapters" / "b.md"
    b.write_text(make_chapter("Slow", ("", "import time\ntime.sleep(60)")))
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    proc = subprocess.Popen(
        [sys.executable, "-m", "mkdocs", "build"],
        cwd=mini_site,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
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


def test_build_fails_loudly_naming_the_chapter(warm_mini_site):
    b = warm_mini_site / "docs" / "chapters" / "b.md"
    b.write_text(make_chapter("Broken", ("", "import math\nmath.sqrt(-1)")))
    r = mkdocs_build(warm_mini_site, check=False)
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
    a.write_text(a.read_text().replace("print('chapter a')", "print('chapter a!')"))
    sp.run(cmd, cwd=mini_site, env=env, capture_output=True, text=True, check=True)
    assert set(_executed(mini_site)) == {"a"}
    forced = sp.run(cmd + ["--force"], cwd=mini_site, env=env, capture_output=True, text=True, check=True)
    assert "up to date" not in forced.stdout and _executed(mini_site) == {}


def test_an_edited_cached_notebook_is_a_miss_with_a_reason(tmp_path, env):
    """30: the record keeps the hash of the notebook it was written with; an edited notebook is not served."""
    cache, roots, path = _store(tmp_path, env, {})
    look = lambda text=TEXT: cache.lookup("ch", text, env, InputHasher(roots), parse_chapter)  # noqa: E731
    assert look().status == "hit"
    nb = json.loads(path.read_text())
    nb["cells"][1]["outputs"] = [{"output_type": "stream", "name": "stdout", "text": "99999\n"}]
    path.write_text(json.dumps(nb))  # still a valid, complete notebook with the right key
    got = look()
    assert got.status == "miss" and got.reason == "cached notebook changed since it was written"
    assert look(TEXT.replace("# A chapter", "# A chapter\n\nNew prose.")).status == "miss"  # nor merged


def test_cache_files_of_the_wrong_shape_are_a_miss_never_fatal(tmp_path, env):
    """Issue 30: a cache entry that is not what the build wrote is rebuilt, never fatal."""
    cache, roots, path = _store(tmp_path, env, {})
    look = lambda: cache.lookup("ch", TEXT, env, InputHasher(roots), parse_chapter)  # noqa: E731
    good = path.read_text()
    for wrong in ("[]", "{}", "3", "null"):  # valid JSON, not a notebook (nbformat raised AttributeError)
        path.write_text(wrong)
        assert look().status == "miss"
    path.write_text(good)
    assert look().status == "hit"
    record = path.with_suffix(".json")
    r = json.loads(record.read_text())
    record.write_text(json.dumps(dict(r, written="yesterday")))  # sorting records compared it with numbers
    (tmp_path / "cache" / "ch-0000.json").write_text(json.dumps(dict(r, id="0000")))
    assert look().status in ("hit", "miss")
