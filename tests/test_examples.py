"""Every script in examples/ runs as a plain program (CPU profile) and exits 0."""

import os
import subprocess
import sys

import pytest

from conftest import REPO_ROOT

SCRIPTS = sorted((REPO_ROOT / "examples").rglob("*.py"))


def test_there_are_examples():
    assert SCRIPTS


@pytest.mark.parametrize("script", SCRIPTS, ids=[str(s.relative_to(REPO_ROOT / "examples")) for s in SCRIPTS])
def test_example_runs(script):
    env = dict(os.environ, AMP_DOCS_PROFILE=os.environ.get("AMP_DOCS_PROFILE", "cpu-small"),
               MPLBACKEND="Agg")
    r = subprocess.run([sys.executable, str(script)], cwd=script.parent, env=env,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, f"{script.name} failed:\n{r.stdout[-2000:]}\n{r.stderr[-4000:]}"
    assert r.stdout.strip(), f"{script.name} printed nothing"
