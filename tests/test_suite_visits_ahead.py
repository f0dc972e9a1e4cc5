"""``browser_visits.Visits.visit_ahead``: a worker that cannot start its Chromium leaves its pages to be
visited when a test asks (their futures cancelled), instead of leaving the test waiting for ever."""

import pytest

pytest.importorskip("playwright.sync_api", reason="playwright is not installed")

import browser_visits  # noqa: E402


def test_a_worker_that_cannot_launch_cancels_its_keys(monkeypatch, tmp_path):
    monkeypatch.setattr(browser_visits, "CHROMIUM", str(tmp_path / "no-chromium"))
    visits = browser_visits.Visits(None, "http://127.0.0.1:1/", set(), tmp_path)
    keys = [("", browser_visits.DESKTOP), ("chapters/a/", browser_visits.PHONE)]
    visits.visit_ahead(keys, workers=2)
    for t in visits._workers:
        t.join(timeout=60)
    # before close() (which cancels what is left): the workers themselves gave the keys back
    assert all(visits._ahead[k].cancelled() for k in keys)
    visits.close()
