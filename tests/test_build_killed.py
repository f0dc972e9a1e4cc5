"""End to end: `amp-docs build` killed with SIGKILL mid-chapter, then rebuilt."""

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from amp_docs_lib.core.paths import BUILD_LOG, EXECUTED_DIR
from amp_docs_lib.core.paths import SITE_MANIFEST as MANIFEST
from conftest import make_chapter

pytestmark = pytest.mark.site


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie has exited
        return open(f"/proc/{pid}/stat").read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return True


def test_build_killed_mid_chapter_then_rebuilt(mini_site, tmp_path):
    marker = tmp_path / "b-is-running"
    chapters = mini_site / "docs" / "chapters"
    # Cell 2 sleeps only in the first build (the marker does not exist yet): the killed build
    # and the rebuild execute the same chapter text, as when a real build is interrupted.
    (chapters / "b.md").write_text(
        make_chapter(
            "Chapter b",
            ("", "print('b cell 1 output')"),
            (
                "",
                f"import os, pathlib, time\nm = pathlib.Path({str(marker)!r})\n"
                "if not m.exists():\n    m.write_text(str(os.getpid()))\n    time.sleep(120)\nprint('b cell 2 output')",
            ),
            ("", "print('b cell 3 output')"),
        )
    )
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1", AMP_DOCS_PROGRESS="cells")
    env.pop("AMP_DOCS_HIDE_PACKAGES", None)
    cmd = [sys.executable, "-m", "amp_docs_lib", "build", "--strict"]
    cache_dir = mini_site / EXECUTED_DIR
    proc = subprocess.Popen(
        cmd,
        cwd=mini_site,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )  # own process group: mkdocs and kernels too
    try:
        deadline = time.time() + 120
        while time.time() < deadline and not (marker.exists() and list(cache_dir.glob("a-*.ipynb"))):
            assert proc.poll() is None, f"the build ended before chapter b ran:\n{proc.stderr.read()}"
            time.sleep(0.2)
        assert marker.exists(), "chapter b never started cell 2"
        time.sleep(1)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    killed_err = proc.stderr.read()
    kernel = int(marker.read_text())  # the kernel runs in its own session; it must exit with its parent
    deadline = time.time() + 15
    while time.time() < deadline and _alive(kernel):
        time.sleep(0.2)
    assert not _alive(kernel), f"chapter b's kernel (pid {kernel}) outlived the killed build"
    assert "amp-docs: [b] cell 1/3 done" in killed_err and "[b] finished" not in killed_err
    assert not list(cache_dir.glob("b-*.ipynb")), "an interrupted chapter must leave no cache entry"
    manifest = mini_site / MANIFEST
    assert not manifest.exists(), "a killed build must not record the up-to-date manifest"

    second = subprocess.run(cmd, cwd=mini_site, env=env, capture_output=True, text=True)
    assert second.returncode == 0, second.stderr
    assert "is up to date" not in second.stdout
    executed = json.loads((mini_site / BUILD_LOG).read_text())["executed"]
    assert set(executed) == {"b"}, "a was cached by the killed build; only b re-executes"
    for n in (1, 2, 3):
        assert f"amp-docs: [b] cell {n}/3 done" in second.stderr
    page = (mini_site / "site" / "chapters" / "b" / "index.html").read_text()
    for n in (1, 2, 3):
        assert f"b cell {n} output" in page
    assert "chapter a" in (mini_site / "site" / "chapters" / "a" / "index.html").read_text()
    assert str((mini_site / "site").resolve()) in json.loads(manifest.read_text())

    third = subprocess.run(cmd, cwd=mini_site, env=env, capture_output=True, text=True, check=True)
    assert "is up to date" in third.stdout and "amp-docs: [" not in third.stderr
