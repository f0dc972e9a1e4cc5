import os

import pytest

from amp_docs_lib.core.chapters import read_chapter
from amp_docs_lib.core.profiles import active_profile
from amp_docs_lib.docsite.execute import ChapterExecutionError, execute_notebook, execute_one
from conftest import make_chapter

pytestmark = pytest.mark.site


def run(tmp_path, *cells, name="demo"):
    p = tmp_path / f"{name}.md"
    p.write_text(make_chapter("Demo", *cells))
    return execute_notebook(read_chapter(p), name)[0]


def test_gating_expected_errors_and_outputs(tmp_path, monkeypatch):
    monkeypatch.setenv("AMP_DOCS_HIDE_PACKAGES", "mslk")  # a listed package, hidden: skipped on every machine
    monkeypatch.delenv("AMP_DOCS_PROFILE", raising=False)
    p = tmp_path / "demo.md"
    p.write_text(
        make_chapter(
            "Demo",
            ("", "x = 21 * 2\nprint(x)"),
            ('["requires:pkg:mslk"]', "import mslk"),
            ('["raises-exception"]', "raise ValueError('shown on purpose')"),
            ("", "x"),
            ("", "import os\nprint(os.environ['AMP_DOCS_PROFILE'])"),
        )
    )
    nb, client = execute_notebook(read_chapter(p), "demo")
    # The kernel runs the active profile; the build's own environment (a memo key input) is left alone.
    assert "AMP_DOCS_PROFILE" not in os.environ
    assert nb.cells[-1].outputs[0]["text"].strip() == active_profile().name
    # The skipped cell's output is written by gating's sentence and the executor's wrapper: both are inputs.
    for module in ("core/gating.py", "docsite/execute.py"):
        assert any(label.endswith(f"amp_docs_lib/{module}") for label in client.execution.inputs), module
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code[0].outputs[0]["text"].strip() == "42"
    assert "Skipped on this machine" in code[1].outputs[0]["data"]["text/html"]
    assert code[2].outputs[0]["output_type"] == "error" and code[2].outputs[0]["ename"] == "ValueError"
    assert code[3].outputs[0]["data"]["text/plain"] == "42"
    assert nb.metadata["amp_docs"]["chapter"] == "demo"


def test_gating_refuses_an_unlisted_package(tmp_path):
    with pytest.raises(ValueError, match=r"unknown package 'surely_not_a_module_xyz'.*one of: torch"):
        run(tmp_path, ('["requires:pkg:surely_not_a_module_xyz"]', "import surely_not_a_module_xyz"))


def test_failing_cell_names_the_chapter(tmp_path):
    with pytest.raises(
        ChapterExecutionError, match=r"(?s)chapter broken failed to execute at cell 2/2:.*ZeroDivisionError"
    ):
        run(tmp_path, ("", "x = 1"), ("", "1 / 0"), name="broken")


def test_expected_error_cell_must_raise(tmp_path):
    with pytest.raises(ChapterExecutionError, match="tagged 'raises-exception' but raised nothing"):
        run(tmp_path, ('["raises-exception"]', "1 + 1"), name="liar")


def test_read_chapter_rejects_non_chapters(tmp_path):
    with pytest.raises(ValueError, match="jupytext Markdown"):
        read_chapter(tmp_path / "x.ipynb")
    plain = tmp_path / "plain.md"
    plain.write_text("# Just prose\n")
    with pytest.raises(ValueError, match="python kernelspec"):
        read_chapter(plain)


def _two_cells_with_prose_between(tmp_path, second: str):
    p = tmp_path / "numbered.md"
    text = make_chapter("Demo", ("", "x = 1")) + f"\nProse between the cells.\n\n```python\n{second}\n```\n"
    p.write_text(text)
    fences = [n for n, line in enumerate(text.splitlines(), start=1) if line == "```python"]
    return p, fences


def test_errors_and_timings_number_code_cells_and_name_the_fence_line(tmp_path, capsys, monkeypatch):
    """15: one numbering (the code cell's ordinal, as progress lines count) plus the line in the .md source;
    the notebook index (Markdown cells counted) appeared in errors and the timing table before."""
    p, _ = _two_cells_with_prose_between(tmp_path, "y = 2")
    monkeypatch.chdir(tmp_path)
    assert execute_one(p, use_cache=False) == 0
    table = [line.split()[:2] for line in capsys.readouterr().out.splitlines() if line.startswith("  cell")]
    assert table == [["cell", "1"], ["cell", "2"]]
    p, fences = _two_cells_with_prose_between(tmp_path, "def f(:\n    pass")  # a syntax error
    with pytest.raises(ChapterExecutionError) as e:
        execute_notebook(read_chapter(p), "numbered", cwd=tmp_path, source=p)
    assert f"failed to execute at cell 2/2 (numbered.md line {fences[1]})" in str(e.value)
    assert "cell 2/2 failed" in capsys.readouterr().err
