"""A forced load-check outcome (``AMP_DOCS_LOAD_CHECK=quiet|busy``) is part of a chapter's cache key.

Found measuring the suite: the timing-branches test's busy run took 4 s, a cache hit on its quiet
run's results, so the busy branch was never executed (nor by ``AMP_DOCS_LOAD_CHECK=busy amp-docs
execute`` after a build). Measured load checks keep the key they had before the field existed.
"""

import hashlib
import json
from dataclasses import asdict

import pytest

from amp_docs_lib.core.settings import LOAD_CHECK_ENV_VAR
from amp_docs_lib.docsite.cache import CACHE_FORMAT, Environment
from conftest import make_chapter

REPORT = {"packages": {"torch": "2.14.1"}, "hardware_fingerprint": "abc", "profile": "cpu-small"}


def _key(monkeypatch, value: str | None) -> str:
    if value is None:
        monkeypatch.delenv(LOAD_CHECK_ENV_VAR, raising=False)
    else:
        monkeypatch.setenv(LOAD_CHECK_ENV_VAR, value)
    return Environment.current(REPORT).key()


def test_each_forced_outcome_has_its_own_key_and_measuring_keeps_the_old_one(monkeypatch):
    measured = _key(monkeypatch, None)
    assert _key(monkeypatch, "measure") == _key(monkeypatch, "") == measured
    quiet, busy = _key(monkeypatch, "quiet"), _key(monkeypatch, "BUSY")
    assert len({measured, quiet, busy}) == 3
    # The key of a measured build is the one written before the field existed: existing caches stay valid.
    fields = {k: v for k, v in asdict(Environment.current(REPORT)).items() if k != "load_check"}
    monkeypatch.delenv(LOAD_CHECK_ENV_VAR)
    before = hashlib.sha256(json.dumps({"format": CACHE_FORMAT, **fields}, sort_keys=True).encode()).hexdigest()
    assert measured == before


def test_the_miss_names_the_forced_outcome(monkeypatch):
    monkeypatch.setenv(LOAD_CHECK_ENV_VAR, "busy")
    recorded = json.loads(json.dumps(asdict(Environment.current(REPORT))))  # as a cache record holds it
    monkeypatch.setenv(LOAD_CHECK_ENV_VAR, "quiet")
    assert Environment.current(REPORT).differences(recorded) == ["load checks' forced outcome changed (busy -> quiet)"]


@pytest.mark.site
def test_a_busy_execution_after_a_quiet_one_executes_the_chapter(tmp_path, monkeypatch):
    """The README's ``AMP_DOCS_LOAD_CHECK=quiet amp-docs execute ...`` runs the branch, whatever ran before."""
    from amp_docs_lib.docsite.execute import cached_execution

    chapter = tmp_path / "docs" / "chapters" / "c.md"
    chapter.parent.mkdir(parents=True)
    chapter.write_text(make_chapter("C", ("", "import os\nprint('outcome', os.environ.get('AMP_DOCS_LOAD_CHECK'))")))
    statuses = {}
    for outcome in ("quiet", "busy", "quiet"):
        monkeypatch.setenv(LOAD_CHECK_ENV_VAR, outcome)
        nb, status, _ = cached_execution(chapter, root=tmp_path)
        assert f"outcome {outcome}" in nb.cells[-1].outputs[0]["text"]
        statuses.setdefault(outcome, []).append(status)
    assert statuses["quiet"][0].startswith("executed") and statuses["busy"][0].startswith("executed")
    assert statuses["quiet"][1] == "hit"
