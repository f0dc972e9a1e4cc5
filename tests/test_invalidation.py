"""One tree hasher for every cache, and the caches that used to under-invalidate: the rendered HTML
(render package versions), the environment memo (the code that computes the report), the wheel
(its README) and skipped cells (the executor's wrapper, tests/test_execute.py)."""

import shutil

from amp_docs_lib.core.paths import LIBRARY_ROOT
from amp_docs_lib.docsite import env_memo, hashing, inputs, wheel
from amp_docs_lib.docsite.inputs import FALLBACK_SUFFIXES, InputHasher, Roots


def test_one_tree_hasher_and_what_it_reads(tmp_path):
    assert inputs.tree_hash is hashing.tree_hash  # the "inputs unknown" fallback hashes as the manifest does
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "mod.py").write_text("x = 1\n")
    before = hashing.tree_hash(tmp_path)
    assert InputHasher(Roots(tmp_path))("tree:site") == hashing.tree_hash(tmp_path, FALLBACK_SUFFIXES)[:32]
    for skipped in (".venv", "site", "__pycache__", "node_modules"):  # never inputs
        (tmp_path / skipped).mkdir(exist_ok=True)
        (tmp_path / skipped / "junk.py").write_text("noise\n")
    (tmp_path / "pkg" / "notes.txt").write_text("not a source suffix\n")
    assert hashing.tree_hash(tmp_path) == before
    assert hashing.tree_hash(tmp_path, None) != before  # every file
    (tmp_path / "pkg" / "mod.py").write_text("x = 2\n")
    assert hashing.tree_hash(tmp_path) != before


def test_wheel_key_follows_everything_the_wheel_holds(tmp_path, monkeypatch):
    for name in ("lib", "examples", "chapters"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "f.md").write_text("a\n")
    for name in ("pyproject.toml", "README.md"):
        (tmp_path / name).write_text("a\n")
    for attr, folder in (
        ("REPO_ROOT", ""),
        ("LIBRARY_ROOT", "lib"),
        ("EXAMPLES_DIR", "examples"),
        ("CHAPTERS_DIR", "chapters"),
    ):
        monkeypatch.setattr(wheel, attr, tmp_path / folder)
    key = wheel.sources_key()
    (tmp_path / "lib" / "__pycache__").mkdir()
    (tmp_path / "lib" / "__pycache__" / "f.pyc").write_bytes(b"\0")  # not copied into the wheel
    assert wheel.sources_key() == key
    for edited in ("README.md", "pyproject.toml", "lib/f.md", "examples/f.md", "chapters/f.md"):
        (tmp_path / edited).write_text((tmp_path / edited).read_text() + "b\n")
        assert wheel.sources_key() != key, edited
        key = wheel.sources_key()


def test_environment_memo_follows_the_code_that_computes_the_report(tmp_path, monkeypatch):
    core = tmp_path / "core"
    shutil.copytree(LIBRARY_ROOT / "core", core, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(env_memo, "REPORT_CODE_DIR", core)
    key = env_memo.light_key()
    machine = core / "machine.py"
    machine.write_text(machine.read_text() + "\n# how the fingerprint is computed changed\n")
    assert env_memo.light_key() != key


def test_presented_notebooks_of_unused_entries_are_evicted(tmp_path):
    import os
    import time

    from amp_docs_lib.docsite.plugin import evict_presented

    executed, presented = tmp_path / "executed", tmp_path / "presented"
    for folder in (executed, presented):
        folder.mkdir()
    old = time.time() - 7200
    for name in ("a-1.ipynb", "a-0.ipynb", "b-recent.ipynb"):  # a-0: an earlier version of chapter a
        (presented / name).write_text("{}")
        if name != "b-recent.ipynb":  # a concurrent build's, written just now
            os.utime(presented / name, (old, old))
    removed = evict_presented(presented, {executed / "a-1.ipynb"}, min_age_s=3600)
    assert [p.name for p in removed] == ["a-0.ipynb"]
    assert sorted(p.name for p in presented.iterdir()) == ["a-1.ipynb", "b-recent.ipynb"]
    assert evict_presented(tmp_path / "absent", set(), min_age_s=0) == []
