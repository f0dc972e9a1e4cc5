"""ruff's lint and format checks (``[tool.ruff]`` in pyproject.toml) pass over the tree."""

import subprocess
import sys

import pytest

from conftest import REPO_ROOT


def ruff(*args: str, cwd=REPO_ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ruff", *args], cwd=cwd, capture_output=True, text=True)


@pytest.mark.parametrize("check", [("check", "."), ("format", "--check", ".")], ids=["lint", "format"])
def test_ruff_passes(check):
    r = ruff(*check)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]


def test_ruff_reports_an_unused_import(tmp_path):
    # The configuration is read and applied: a planted unused import under it fails the lint.
    (tmp_path / "pyproject.toml").write_text((REPO_ROOT / "pyproject.toml").read_text())
    (tmp_path / "planted.py").write_text("import os\n")
    r = ruff("check", ".", cwd=tmp_path)
    assert r.returncode == 1 and "F401" in r.stdout, r.stdout
