"""The memoised environment report: same report as ``env``, and a no-op build never imports torch."""

import json
import os
import subprocess
import sys
import textwrap

from amp_docs_lib.core.env import environment_report
from amp_docs_lib.docsite.env_memo import MEMO_FILE, environment_report_memo, light_key
from conftest import mkdocs_build


def test_memo_returns_the_environment_report_and_reuses_it(tmp_path):
    first = environment_report_memo(tmp_path)
    assert first == json.loads(json.dumps(environment_report(), default=str))
    stored = json.loads((tmp_path / MEMO_FILE).read_text())
    assert stored["key"] == light_key()
    # A second call reads the memo: a value planted in it comes back (date and revision refreshed).
    stored["value"]["device"] = "planted"
    (tmp_path / MEMO_FILE).write_text(json.dumps(stored))
    again = environment_report_memo(tmp_path)
    assert again["device"] == "planted" and again["build_date"] == first["build_date"]


def test_memo_is_recomputed_when_its_inputs_change(tmp_path, monkeypatch):
    environment_report_memo(tmp_path)
    key = light_key()
    monkeypatch.setenv("ATEN_CPU_CAPABILITY", "default")
    assert light_key() != key  # a dispatch override changes what torch reports
    stored = json.loads((tmp_path / MEMO_FILE).read_text())
    stored["value"]["device"] = "planted"
    (tmp_path / MEMO_FILE).write_text(json.dumps(stored))
    assert environment_report_memo(tmp_path)["device"] != "planted"
    (tmp_path / MEMO_FILE).write_text("{not json")  # a corrupt memo is recomputed, not an error
    assert environment_report_memo(tmp_path)["device"] != "planted"


def test_a_build_with_nothing_changed_imports_neither_torch_nor_pandas(warm_mini_site):
    (warm_mini_site / "docs" / "index.md").write_text(
        "# Home\n\n<!-- amp-docs:environment -->\n<!-- amp-docs:chapters -->\n"
    )
    mkdocs_build(warm_mini_site)  # writes the memo and the fragments (the chapters are cached already)
    (warm_mini_site / "site" / "index.html").unlink()
    probe = textwrap.dedent("""\
        import atexit, os, sys
        from mkdocs.__main__ import cli
        atexit.register(lambda: open(os.environ["PROBE_OUT"], "w").write(
            str(sorted(m for m in ("torch", "pandas") if m in sys.modules))))
        cli(["build", "--strict", "-q"])
        """)
    out = warm_mini_site / "probe.txt"
    subprocess.run(
        [sys.executable, "-c", probe],
        cwd=warm_mini_site,
        check=True,
        env=dict(os.environ, NO_MKDOCS_2_WARNING="1", PROBE_OUT=str(out)),
    )
    assert out.read_text() == "[]"  # torch and pandas cost seconds: the memo and fragments avoid both
    home = (warm_mini_site / "site" / "index.html").read_text()  # rebuilt from the memo and the cache
    assert "Environment of this build" in home and environment_report()["hardware_fingerprint"] in home


def test_fragments_are_rendered_once_per_change_of_their_inputs(tmp_path):
    from amp_docs_lib.docsite.fragments import FragmentMemo

    calls = []

    def render(text):
        return lambda: calls.append(text) or f"<p>{text}</p>"

    memo = FragmentMemo(tmp_path, library_hash="lib1")
    assert memo.html("env", {"a": 1}, render("one")) == "<p>one</p>"
    assert memo.html("env", {"a": 1}, render("two")) == "<p>one</p>"  # unchanged inputs: memoised
    assert memo.html("env", {"a": 2}, render("three")) == "<p>three</p>"  # new inputs: rendered
    assert FragmentMemo(tmp_path, "lib2").html("env", {"a": 2}, render("four")) == "<p>four</p>"  # new code
    assert calls == ["one", "three", "four"]
    import pytest

    with pytest.raises(ValueError, match="fragment name"):
        memo.html("../x", None, render("bad"))
