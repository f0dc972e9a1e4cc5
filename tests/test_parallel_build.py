"""The parallel site build: chapters execute concurrently, timing-sensitive ones alone and last."""

import json
import textwrap

import pytest

from amp_docs_lib.core.chapters import read_chapter
from amp_docs_lib.core.settings import JOBS_ENV_VAR
from amp_docs_lib.docsite.execute import ChapterExecutionError, execute_chapters, is_timing_sensitive, resolve_jobs
from conftest import FRONT_MATTER, make_chapter

pytestmark = pytest.mark.site

TIMING_FRONT_MATTER = FRONT_MATTER.replace("jupyter:\n", "jupyter:\n  amp_docs:\n    timing_sensitive: true\n", 1)


def barrier_cell(tmp, me, other):
    """Marks its start, waits (up to 60 s) for the other chapter to start, then marks its end."""
    return textwrap.dedent(f"""\
        import pathlib, time, json
        d = pathlib.Path({str(tmp)!r})
        (d / "{me}.start").write_text(json.dumps(time.time()))
        deadline = time.time() + 60
        while not (d / "{other}.start").exists() and time.time() < deadline:
            time.sleep(0.05)
        met = (d / "{other}.start").exists()
        (d / "{me}.end").write_text(json.dumps(time.time()))
        print("{me}", met)""")


def chapter(tmp_path, name, code, timing=False):
    p = tmp_path / f"{name}.md"
    text = make_chapter(name, ("", code))
    if timing:
        text = text.replace(FRONT_MATTER, TIMING_FRONT_MATTER, 1)
    p.write_text(text)
    return name, read_chapter(p)


def test_front_matter_marks_timing_sensitive(tmp_path):
    assert is_timing_sensitive(chapter(tmp_path, "t", "1", timing=True)[1])
    assert not is_timing_sensitive(chapter(tmp_path, "n", "1")[1])


def test_chapters_run_concurrently_and_timing_sensitive_alone(tmp_path):
    sync = tmp_path / "sync"
    sync.mkdir()
    timed = textwrap.dedent(f"""\
        import pathlib, time, json
        d = pathlib.Path({str(sync)!r})
        started = time.time()
        print("timed", started)""")
    chapters = [
        chapter(tmp_path, "timed", timed, timing=True),  # listed first, still runs last
        chapter(tmp_path, "a", barrier_cell(sync, "a", "b")),
        chapter(tmp_path, "b", barrier_cell(sync, "b", "a")),
    ]
    out = execute_chapters(chapters, jobs=2)
    assert [err for _, err in out] == [None, None, None]
    texts = [ex.nb.cells[-1].outputs[0]["text"].split() for ex, _ in out]
    assert texts[1] == ["a", "True"] and texts[2] == ["b", "True"]  # each saw the other running
    timed_start = float(texts[0][1])
    ends = [json.loads((sync / f"{n}.end").read_text()) for n in "ab"]
    assert timed_start > max(ends)  # the timing-sensitive chapter started after both had finished
    assert [ex.nb.metadata["amp_docs"]["chapter"] for ex, _ in out] == ["timed", "a", "b"]


def test_failures_are_per_chapter_and_in_order(tmp_path):
    chapters = [
        chapter(tmp_path, "ok", "x = 1"),
        chapter(tmp_path, "bad1", "1 / 0"),
        chapter(tmp_path, "bad2", "raise KeyError('k')"),
    ]
    done = []
    out = execute_chapters(chapters, jobs=3, on_done=lambda i, execution, err: done.append((i, err is None)))
    assert sorted(done) == [(0, True), (1, False), (2, False)]  # each reported as it finished
    assert out[0][1] is None and out[0][0] is not None
    assert isinstance(out[1][1], ChapterExecutionError) and "chapter bad1 failed" in str(out[1][1])
    assert "ZeroDivisionError" in str(out[1][1])
    assert "chapter bad2 failed" in str(out[2][1]) and "KeyError" in str(out[2][1])


def test_resolve_jobs(monkeypatch):
    monkeypatch.delenv(JOBS_ENV_VAR, raising=False)
    assert resolve_jobs(3) == 3
    assert resolve_jobs(0) >= 1 and resolve_jobs(None) == resolve_jobs(0)
    monkeypatch.setenv(JOBS_ENV_VAR, "1")
    assert resolve_jobs(3) == 1
    monkeypatch.setenv(JOBS_ENV_VAR, "many")
    with pytest.raises(ValueError, match="AMP_DOCS_JOBS"):
        resolve_jobs(None)
    monkeypatch.delenv(JOBS_ENV_VAR)
    with pytest.raises(ValueError, match="non-negative"):
        resolve_jobs(-2)


def test_an_interrupt_does_not_name_a_chapter_that_finished_while_the_kernels_were_stopped(monkeypatch):
    """The race CI met: Ctrl-C came while chapter a ran its hidden last cell; stop_running saw a and b
    executing, a finished anyway, and the message said "cell 1 of a, cell 3 of b". Only b was cut off."""
    import os
    import signal
    import threading
    from types import SimpleNamespace

    from amp_docs_lib.docsite import execute

    both_running = threading.Barrier(2)

    class Client:
        def __init__(self, cell):
            self.current_cell = cell

        def cell_number(self, cell):
            return cell

        def kill_kernel(self):
            pass

    def fake_execute_notebook(nb, cid, **kwargs):
        with execute._running_lock:
            execute._running[cid] = Client({"a": 1, "b": 3}[cid])
        both_running.wait(10)
        if cid == "a":
            os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C while a is in its last moments
        assert execute._stopping.wait(10), "the main thread never stopped the kernels"
        with execute._running_lock:
            execute._running.pop(cid)
        if cid == "b":  # its kernel was killed mid-cell
            raise execute.ChapterInterrupted([(cid, 3)])
        return nb, SimpleNamespace(execution="a's execution")  # a finished

    monkeypatch.setattr(execute, "execute_notebook", fake_execute_notebook)
    monkeypatch.setattr(execute, "is_timing_sensitive", lambda nb: False)
    with pytest.raises(execute.ChapterInterrupted) as e:
        execute_chapters([("a", object()), ("b", object())], jobs=2)
    assert e.value.where == [("b", 3)]
    assert str(e.value) == "interrupted at cell 3 of b"
