"""The library's wheel: what it carries for a reader without a checkout, and how the build caches it."""

import os
import subprocess
import zipfile

import pytest

from amp_docs_lib.core.env import git_revision
from amp_docs_lib.docsite import wheel
from amp_docs_lib.docsite.wheel import library_wheel, sources_key, wheel_filename
from conftest import REPO_ROOT


def _fake_build(calls: list, fail: bool = False):
    """A stand-in for ``build_wheel``: writes a small valid wheel (or half of one, then dies)."""

    def build(dest):
        calls.append(dest)
        dest.mkdir(parents=True, exist_ok=True)
        out = dest / wheel_filename()
        if fail:
            out.write_bytes(b"PK\x03\x04 half a wheel")
            raise KeyboardInterrupt  # the build is killed while pip copies the wheel
        with zipfile.ZipFile(out, "w") as z:
            z.writestr("amp_docs_lib/__init__.py", "x = 1\n" * 200)
        return out

    return build


def test_a_corrupt_cached_wheel_is_rebuilt(tmp_path, monkeypatch):
    calls = []
    monkeypatch.setattr(wheel, "build_wheel", _fake_build(calls))
    first = library_wheel(tmp_path)
    assert len(calls) == 1 and library_wheel(tmp_path) == first and len(calls) == 1  # reused while sound
    with open(first, "r+b") as f:
        f.truncate(100)  # as a build killed during pip's copy would leave it
    again = library_wheel(tmp_path)
    assert len(calls) == 2 and zipfile.ZipFile(again).testzip() is None


def test_a_killed_wheel_build_leaves_nothing_a_later_build_trusts(tmp_path, monkeypatch):
    calls = []
    monkeypatch.setattr(wheel, "build_wheel", _fake_build(calls, fail=True))
    with pytest.raises(KeyboardInterrupt):
        library_wheel(tmp_path)
    cache = tmp_path / ".amp-docs-cache" / "wheel"
    assert not (cache / sources_key()).exists() and list(cache.iterdir()) == []
    monkeypatch.setattr(wheel, "build_wheel", _fake_build(calls))
    assert zipfile.ZipFile(library_wheel(tmp_path)).testzip() is None and len(calls) == 2


@pytest.mark.slow
def test_the_wheel_carries_the_examples_and_its_revision(reader_python, tmp_path):
    """Installed from the wheel, outside the checkout: the examples are found, the stamp names the revision."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    r = subprocess.run(
        [
            str(reader_python),
            "-c",
            "from amp_docs_lib.core.paths import EXAMPLES_DIR; from amp_docs_lib.core.env import git_revision;"
            "print(EXAMPLES_DIR); print(git_revision());"
            "print(sorted(p.relative_to(EXAMPLES_DIR).as_posix() for p in EXAMPLES_DIR.rglob('*.py')))",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    where, revision, examples = r.stdout.splitlines()
    assert "site-packages/amp_docs_lib/examples" in where
    assert revision == git_revision() and revision != "unknown"
    in_checkout = sorted(
        p.relative_to(REPO_ROOT / "examples").as_posix() for p in (REPO_ROOT / "examples").rglob("*.py")
    )
    assert eval(examples) == in_checkout
