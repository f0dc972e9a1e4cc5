"""Two cold builds give the same pages apart from timings, dates and stamps."""

import pytest

from amp_docs_lib.devtools.reproducible import cold_builds, compare_builds, normalise

pytestmark = pytest.mark.site


def test_normalise_hides_stamps_dates_and_durations_only():
    a = (
        '<div class="amp-stamp amp-stamp--measured">measured on CPU · 2026-11-22</div>'
        "<p>executed 2026-11-22T05:04:17Z in 12.5 s</p><td>0.125</td>"
    )
    b = (
        '<div class="amp-stamp amp-stamp--measured">measured on GPU · 2026-11-23</div>'
        "<p>executed 2026-11-23T01:00:00Z in 3 s</p><td>0.125</td>"
    )
    assert normalise(a) == normalise(b)
    assert normalise(a) != normalise(b.replace("0.125", "0.25"))  # results are compared
    t = '<table class="amp-table amp-timing"><tr><td>formats</td><td>{}</td></tr></table>'
    assert normalise(t.format("24.5")) == normalise(t.format("19"))  # timing tables: numbers ignored
    assert normalise(t.format("24.5")) != normalise(t.format("19").replace("formats", "fp8"))


def test_compare_builds_reports_pages_that_differ(tmp_path):
    for name, value in (("a", "1"), ("b", "2")):
        (tmp_path / name / "x").mkdir(parents=True)
        (tmp_path / name / "index.html").write_text("<p>same</p>")
        (tmp_path / name / "x" / "index.html").write_text(f"<td>{value}</td>")
    (tmp_path / "b" / "extra.html").write_text("")
    diffs = compare_builds(tmp_path / "a", tmp_path / "b")
    assert set(diffs) == {"x/index.html", "extra.html"}
    assert "-<td>1</td>" in diffs["x/index.html"] and "+<td>2</td>" in diffs["x/index.html"]


def test_two_cold_builds_of_a_small_project_are_identical(mini_site, tmp_path_factory):
    assert cold_builds(mini_site, ["a", "b"], workdir=tmp_path_factory.mktemp("work")) == {}


def test_unknown_chapters_are_refused(mini_site):
    with pytest.raises(ValueError, match=r"unknown chapter\(s\) \['zz'\]; valid: \['a', 'b'\]"):
        cold_builds(mini_site, ["zz"])
