"""Faults never cost the reader the site (issue 30): failed, interrupted and killed builds, corrupt
cache files, bad site directories. Each test was checked against the code before the fix (it failed)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from amp_docs_lib.core.paths import BUILD_LOG, SITE_MANIFEST
from amp_docs_lib.docsite import up_to_date
from conftest import make_chapter, mkdocs_build

AMP_DOCS = [sys.executable, "-m", "amp_docs_lib"]


def _dead_pid() -> int:
    """The id of a process that has exited (and been reaped)."""
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def _env(**extra: str) -> dict[str, str]:
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1", **extra)
    env.pop("AMP_DOCS_HIDE_PACKAGES", None)
    return env


def _pages(site: Path) -> dict[str, str]:
    return {str(p.relative_to(site)): p.read_text(encoding="utf-8") for p in sorted(site.rglob("*.html"))}


# ---- a failed build keeps the previous site (24), plain mkdocs and amp-docs build ----------------------


@pytest.mark.parametrize("command", ["mkdocs", "amp-docs"])
def test_a_failed_build_leaves_the_previous_site_whole(built_mini_site, command):
    site = built_mini_site / "site"
    cmd = [sys.executable, "-m", "mkdocs", "build"] if command == "mkdocs" else [*AMP_DOCS, "build"]

    def run(**env):
        return subprocess.run([*cmd, "--strict"], cwd=built_mini_site, env=_env(**env), capture_output=True, text=True)

    before = _pages(site)
    assert "chapter b" in before["chapters/b/index.html"]
    # a folder a SIGKILLed build left beside the site: the next build removes it
    stale = built_mini_site / f".site.amp-docs-new-{_dead_pid()}"
    (stale / "chapters").mkdir(parents=True)
    b = built_mini_site / "docs" / "chapters" / "b.md"
    faults = {
        "a chapter that raises": (make_chapter("B", ("", "raise RuntimeError('boom')")), {}),
        "a syntax error": (make_chapter("B", ("", "print('ok')"), ("", "def f(:\n    pass")), {}),
        "a bad setting": (make_chapter("B", ("", "print('b again')")), {"AMP_DOCS_JOBS": "abc"}),
    }
    for what, (text, env) in faults.items():
        b.write_text(text)
        r = run(**env)
        assert r.returncode != 0, what
        assert _pages(site) == before, f"{what}: the previous site must stay whole"
        assert not list(built_mini_site.glob(".site.amp-docs-*")), f"{what}: a staging folder was left"
    assert not stale.exists()
    assert os.environ.get("AMP_DOCS_JOBS") != "abc"


def test_a_strict_build_with_a_warning_keeps_the_previous_site(built_mini_site):
    before = _pages(built_mini_site / "site")
    (built_mini_site / "docs" / "index.md").write_text("# Home\n\n[missing](nowhere.md)\n")
    r = mkdocs_build(built_mini_site, check=False)
    assert r.returncode != 0 and "nowhere.md" in r.stderr + r.stdout
    assert _pages(built_mini_site / "site") == before
    assert not list(built_mini_site.glob(".site.amp-docs-*"))


def test_a_site_killed_between_the_renames_is_put_back(built_mini_site):
    site = built_mini_site / "site"
    before = _pages(site)
    # SIGKILL after the previous site was moved away and before the new one was moved in
    site.rename(built_mini_site / f".site.amp-docs-old-{_dead_pid()}")
    (built_mini_site / "docs" / "index.md").write_text("# Home\n\n[missing](nowhere.md)\n")  # this build fails
    assert mkdocs_build(built_mini_site, check=False).returncode != 0
    assert _pages(site) == before
    assert not list(built_mini_site.glob(".site.amp-docs-*"))


def test_yours_vs_reference_anchor_is_known_to_the_link_check(warm_mini_site):
    """29: the generated 'Chapter execution time' section's anchor is no false warning under --strict."""
    docs = warm_mini_site / "docs"
    (docs / "yours-vs-reference.md").write_text("# Yours vs reference\n\n<!-- amp-docs:yours-vs-reference -->\n")
    (docs / "rebuild.md").write_text("# Rebuild\n\nSee [timings](yours-vs-reference.md#chapter-execution-time).\n")
    yml = warm_mini_site / "mkdocs.yml"
    yml.write_text(
        yml.read_text().replace("  - chapters/b.md\n", "  - chapters/b.md\n  - rebuild.md\n  - yours-vs-reference.md\n")
        + "validation:\n  anchors: warn\n"
    )
    r = mkdocs_build(warm_mini_site, check=False)
    assert "does not contain an anchor" not in r.stderr, r.stderr
    assert r.returncode == 0, r.stderr
    assert 'id="chapter-execution-time"' in (warm_mini_site / "site" / "yours-vs-reference" / "index.html").read_text()


# ---- amp-docs build: the up-to-date manifest and the site directory (17, 18, 25, 29) -------------------


class FakeMkdocs:
    """Stands in for the ``mkdocs build`` subprocess: writes the site (or fails) and records the call."""

    def __init__(self, rc: int = 0):
        self.rc, self.calls = rc, []

    def __call__(self, args, cwd=None, env=None, **kw):
        self.calls.append({"args": args, "env": env})
        if self.rc == 0:
            site = Path(cwd) / "site"
            site.mkdir(exist_ok=True)
            (site / "index.html").write_text("<html>site</html>")
            (Path(cwd) / BUILD_LOG).parent.mkdir(parents=True, exist_ok=True)
            (Path(cwd) / BUILD_LOG).write_text(json.dumps({"inputs": {}}))  # what the plugin records
        return self

    # the Popen surface up_to_date uses
    returncode = property(lambda self: self.rc)

    def wait(self, timeout=None):
        return self.rc

    def poll(self):
        return self.rc

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


@pytest.fixture
def project(tmp_path, monkeypatch):
    root = tmp_path / "project"
    (root / "docs").mkdir(parents=True)
    (root / "docs" / "index.md").write_text("# Home\n")
    (root / "mkdocs.yml").write_text("site_name: x\n")
    monkeypatch.chdir(root)
    return root


def _fake(monkeypatch, rc: int = 0) -> FakeMkdocs:
    fake = FakeMkdocs(rc)
    monkeypatch.setattr(up_to_date.subprocess, "Popen", fake)
    monkeypatch.setattr(up_to_date.subprocess, "run", fake)
    return fake


def test_a_manifest_of_the_wrong_json_type_is_treated_as_absent(project, monkeypatch, capsys):
    """18: ``[]`` in site-manifest.json made every build fail with AttributeError."""
    fake = _fake(monkeypatch)
    (project / SITE_MANIFEST).parent.mkdir(parents=True)
    for wrong in ("[]", '"text"', "3", "null"):
        (project / SITE_MANIFEST).write_text(wrong)
        assert up_to_date.build([], root=project) == 0
        assert isinstance(json.loads((project / SITE_MANIFEST).read_text()), dict)
    assert len(fake.calls) == 4


def test_a_failed_or_forced_build_is_not_called_up_to_date_later(project, monkeypatch, capsys):
    """25: the site's manifest entry is dropped before mkdocs runs and written back only on success."""
    _fake(monkeypatch)
    assert up_to_date.build([], root=project) == 0
    assert up_to_date.build([], root=project) == 0
    assert "is up to date" in capsys.readouterr().out
    failing = _fake(monkeypatch, rc=1)  # e.g. interrupted after writing index.html
    assert up_to_date.build([], force=True, root=project) == 1
    assert str((project / "site").resolve()) not in json.loads((project / SITE_MANIFEST).read_text())
    assert up_to_date.build([], root=project) == 1 and len(failing.calls) == 2  # mkdocs ran again
    assert "is up to date" not in capsys.readouterr().out


def test_amp_docs_build_silences_materials_banner(project, monkeypatch):
    """29: the mkdocs subprocess runs with NO_MKDOCS_2_WARNING=1."""
    monkeypatch.delenv("NO_MKDOCS_2_WARNING", raising=False)
    fake = _fake(monkeypatch)
    up_to_date.build(["--strict"], root=project)
    assert fake.calls[0]["env"]["NO_MKDOCS_2_WARNING"] == "1"


@pytest.mark.parametrize("site_dir, words", [("README.md", "not a folder"), ("/proc/amp-site", "cannot be written")])
def test_an_unusable_site_dir_fails_before_any_work(project, monkeypatch, site_dir, words):
    """17: ``-d README.md`` and ``-d /proc/x``: exit 2, a clear message naming the folder, mkdocs never runs."""
    (project / "README.md").write_text("# readme\n")
    fake = _fake(monkeypatch)
    from click.testing import CliRunner

    from amp_docs_lib.cli.site import build

    r = CliRunner().invoke(build, ["-d", site_dir])
    assert r.exit_code == 2, r.output
    assert words in r.output and str(Path(site_dir).name) in r.output and "Traceback" not in r.output
    assert fake.calls == []


# ---- amp-docs bench-build (19) --------------------------------------------------------------------------


def test_bench_build_checks_touch_before_the_cold_build_and_cleans_its_folder(project, monkeypatch, tmp_path):
    from amp_docs_lib.devtools import build_bench

    tmp = tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))

    def no_build(*a, **kw):
        raise RuntimeError("a build started")

    monkeypatch.setattr(build_bench, "_build", no_build)
    from click.testing import CliRunner

    from amp_docs_lib.cli.site import bench_build

    r = CliRunner().invoke(bench_build, ["--touch", "docs/chapters/nope.md"])
    assert r.exit_code == 2 and "docs/chapters/nope.md" in r.output and "a build started" not in str(r.exception)
    (project / "docs" / "chapters").mkdir()
    (project / "docs" / "chapters" / "formats.md").write_text(make_chapter("F", ("", "x = 1")) + "\nSome prose.\n")
    with pytest.raises(RuntimeError, match="a build started"):
        build_bench.main("docs/chapters/formats.md", rounds=0)
    assert not list(tmp.iterdir()), "the work folder must be removed whatever happens"


def test_bench_build_noop_only_names_this_checkout_not_a_temporary_copy(project, monkeypatch, tmp_path, capsys):
    from amp_docs_lib.core.paths import EXECUTED_DIR
    from amp_docs_lib.devtools import build_bench

    tmp = tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    (project / "docs" / "chapters").mkdir()
    (project / "docs" / "chapters" / "formats.md").write_text(make_chapter("F", ("", "x = 1")))
    (project / EXECUTED_DIR).mkdir(parents=True)  # a partial cache: no executed formats notebook
    assert build_bench.noop_only(1) == 2
    err = capsys.readouterr().err
    assert "formats.md" in err and "amp-docs build" in err and str(tmp) not in err and "amp-docs-noop-" not in err
    assert not list(tmp.iterdir())


# ---- interrupts (16) ------------------------------------------------------------------------------------

# sleeps the first time only (until the marker exists), so a rebuild of the same text finishes
SLEEPER = (
    "import os, pathlib, time\nm = pathlib.Path({marker!r})\n"
    "if not m.exists():\n    m.write_text(str(os.getpid()))\n    time.sleep(120)"
)


def _wait_for(path: Path, proc: subprocess.Popen, seconds: float = 120) -> None:
    deadline = time.time() + seconds
    while time.time() < deadline and not path.exists():
        assert proc.poll() is None, f"ended before the marker appeared:\n{proc.communicate()[1]}"
        time.sleep(0.2)
    assert path.exists()
    time.sleep(0.5)


def _temp_dirs(tmp: Path) -> list[str]:
    return sorted(p.name for p in tmp.glob("amp-docs-*"))


@pytest.mark.site
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_interrupted_execute_says_where_and_exits_130(tmp_path, sig):
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    stale = [tmp / f"amp-docs-kernel-{_dead_pid()}-abc", tmp / f"amp-docs-reads-{_dead_pid()}-def"]
    for p in stale:
        p.mkdir()
    marker = tmp_path / "sleeping"
    chapter = tmp_path / "napping.md"
    chapter.write_text(make_chapter("Nap", ("", "x = 1"), ("", SLEEPER.format(marker=str(marker)))))
    proc = subprocess.Popen(
        [*AMP_DOCS, "execute", str(chapter)],
        cwd=tmp_path,
        env=_env(TMPDIR=str(tmp)),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        _wait_for(marker, proc)
        os.killpg(proc.pid, sig)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 130, err
    assert "interrupted at cell 2 of napping" in err
    assert "Traceback" not in err and "Error" not in err.replace("amp-docs:", ""), err
    assert _temp_dirs(tmp) == [], "kernel and reads folders, and stale ones of dead processes, are removed"


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_interrupted_build_says_where_keeps_the_site_and_exits_130(built_mini_site, tmp_path, jobs):
    before = _pages(built_mini_site / "site")
    marker = tmp_path / "sleeping"
    (built_mini_site / "docs" / "chapters" / "b.md").write_text(
        make_chapter("B", ("", "x = 1"), ("", "y = 2"), ("", SLEEPER.format(marker=str(marker))))
    )
    a = built_mini_site / "docs" / "chapters" / "a.md"
    a.write_text(a.read_text().replace("print('chapter a')", "print('chapter a, edited')"))
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    proc = subprocess.Popen(
        [*AMP_DOCS, "build"],
        cwd=built_mini_site,
        env=_env(TMPDIR=str(tmp), AMP_DOCS_JOBS=jobs),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        _wait_for(marker, proc)
        os.killpg(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 130, err
    assert "interrupted at cell 3 of b" in err and "Traceback" not in err, err
    assert _pages(built_mini_site / "site") == before
    assert not list(built_mini_site.glob(".site.amp-docs-*")) and _temp_dirs(tmp) == []
    again = subprocess.run([*AMP_DOCS, "build"], cwd=built_mini_site, env=_env(), capture_output=True, text=True)
    assert "is up to date" not in again.stdout


def test_a_killed_build_leaves_the_previous_site_and_the_next_build_cleans_up(built_mini_site, tmp_path):
    """24: SIGKILL while a chapter executes (mkdocs had already cleaned the site directory before)."""
    before = _pages(built_mini_site / "site")
    marker = tmp_path / "sleeping"
    (built_mini_site / "docs" / "chapters" / "b.md").write_text(
        make_chapter("B", ("", SLEEPER.format(marker=str(marker))))
    )
    proc = subprocess.Popen(
        [*AMP_DOCS, "build"],
        cwd=built_mini_site,
        env=_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        _wait_for(marker, proc)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    assert _pages(built_mini_site / "site") == before
    assert (
        "is up to date"
        not in subprocess.run(
            [*AMP_DOCS, "build"], cwd=built_mini_site, env=_env(), capture_output=True, text=True, check=True
        ).stdout
    )
    assert not list(built_mini_site.glob(".site.amp-docs-*")), "the killed build's staging folder is removed"
    assert "chapters/b/index.html" in _pages(built_mini_site / "site")


def test_sigterm_is_an_interrupt_across_chapters_run_one_after_another():
    """16: nbclient resets SIGTERM to its default after each kernel; the enclosing build's handler survives."""
    from amp_docs_lib.docsite.store import sigterm_as_interrupt

    with sigterm_as_interrupt():  # the build (execute_chapters)
        with sigterm_as_interrupt():  # one chapter (execute_notebook)
            signal.signal(signal.SIGTERM, signal.SIG_DFL)  # what nbclient leaves behind
        with pytest.raises(KeyboardInterrupt):
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(5)
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
