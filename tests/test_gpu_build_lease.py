"""scripts/gpu_build.py run inside a lease of known length (issue 32): ``--deadline`` starts no chapter after it
and stops the one running then, ``--jobs`` shares the GPU between chapters, and the machine's reference folder is
packaged after the chapters whatever they did. The install and ``amp-docs`` are faked: what is tested is the
schedule and what lands in the archive, on a stand-in checkout."""

from __future__ import annotations

import json
import tarfile
import threading
import time

import pytest
from test_gpu_bundle import load_script


@pytest.fixture
def stand_in(tmp_path, monkeypatch):
    gb = load_script()
    repo = tmp_path / "repo"
    (repo / "docs" / "chapters").mkdir(parents=True)
    for name in ("a", "b", "c", "d"):
        (repo / "docs" / "chapters" / f"{name}.md").write_text(f"# {name}\n")
    (repo / ".amp-docs-cache" / "executed").mkdir(parents=True)
    monkeypatch.setattr(gb, "REPO", repo)
    monkeypatch.setattr(gb, "read_bundle", lambda folder: {"wheel": "amp_docs_lib.whl"})
    monkeypatch.setattr(gb, "install", lambda folder, bundle, log: 0)
    calls, running, lock = [], [0], threading.Lock()
    seconds = {"a": 0.6, "b": 0.6, "c": 5.0, "d": 0.1}

    def fake_amp_docs(args, log, timeout):
        log.write_text("")
        if args[0] != "execute":
            calls.append((args[0], None, timeout, 0))
            if args[0] == "package-reference":  # what package_machine hands it: one notebook per chapter
                site = args[args.index("--site") + 1]
                calls[-1] = (
                    args[0],
                    sorted(p.name for p in (repo.parent / site).glob("downloads/chapters/*")),
                    timeout,
                    0,
                )
                out = repo / "docs" / "reference-results" / "gpu-x"
                out.mkdir(parents=True, exist_ok=True)
                (out / "machine.json").write_text("{}")
            return 0
        chapter = args[1].split("/")[-1][:-3]
        with lock:
            running[0] += 1
            calls.append(("execute", chapter, timeout, running[0]))
        time.sleep(min(seconds[chapter], timeout))
        with lock:
            running[0] -= 1
        if seconds[chapter] > timeout:
            return 124
        (repo / ".amp-docs-cache" / "executed" / f"{chapter}-0123.ipynb").write_text("{}")
        return 0

    monkeypatch.setattr(gb, "amp_docs", fake_amp_docs)
    return gb, repo, calls


def test_the_deadline_stops_the_running_chapter_and_starts_no_other(stand_in, tmp_path):
    gb, repo, calls = stand_in
    archive = tmp_path / "out" / "a.tar.gz"
    rc = gb.run(tmp_path, gb.chapters_to_run("a,c,b"), archive, timeout=60, deadline=1.5)
    summary = json.loads((repo / gb.GPU_BUILD_DIR / "summary.json").read_text())
    assert rc == 1
    assert summary["chapters"]["a"]["exit"] == 0
    assert summary["chapters"]["c"]["exit"] == 124 and summary["chapters"]["c"]["seconds"] < 2  # cut at the deadline
    assert summary["chapters"]["b"] == {"exit": None, "seconds": 0.0}  # never started
    assert [c for c in calls if c[0] == "execute" and c[1] == "c"][0][2] < 1.5  # its limit was what was left
    assert summary["package_exit"] == 0  # packaged after the deadline too
    with tarfile.open(archive) as tar:
        names = tar.getnames()
    assert any(n.endswith("executed/a-0123.ipynb") for n in names)
    assert "docs/reference-results/gpu-x/machine.json" in names


def test_jobs_run_chapters_side_by_side_and_the_package_gets_every_notebook(stand_in, tmp_path):
    gb, repo, calls = stand_in
    rc = gb.run(tmp_path, gb.chapters_to_run("a,b,d"), tmp_path / "a.tar.gz", timeout=60, jobs=2)
    assert rc == 0
    assert max(c[3] for c in calls if c[0] == "execute") == 2  # two at once, never more
    package = [c for c in calls if c[0] == "package-reference"]
    assert package and package[0][1] == ["a.ipynb", "b.ipynb", "d.ipynb"] and package[0][2] == gb.PACKAGE_SECONDS


def test_jobs_below_one_is_a_usage_error(tmp_path):
    gb = load_script()
    (tmp_path / "bundle.json").write_text("{}")
    with pytest.raises(SystemExit) as e:
        gb.main(["run", str(tmp_path), "--jobs", "0"])
    assert e.value.code == 2
