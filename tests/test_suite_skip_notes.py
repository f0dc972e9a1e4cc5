"""``package_skip_problems``, which reads the downloaded notebooks' runs as the chapters' runs without
their optional packages: on cells whose output the gate itself (``%%requires``) printed."""

import contextlib
import io

import nbformat
import pytest
from test_downloads_run import package_skip_problems

from amp_docs_lib.core.packages import HIDE_ENV_VAR
from amp_docs_lib.page.notebook import _requires, gated_source

HIDDEN = ("jax", "transformers")


def gate_output(line: str) -> str:
    """What the ``%%requires LINE`` magic prints where its requirements are unmet."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        _requires(line, "raise AssertionError('a gated cell ran')")
    return out.getvalue()


def cell(requirements: list[str], printed: str):
    return nbformat.v4.new_code_cell(
        gated_source("import transformers", requirements),
        outputs=[nbformat.v4.new_output("stream", name="stdout", text=printed)] if printed else [],
    )


@pytest.fixture
def hidden(monkeypatch):
    monkeypatch.setenv(HIDE_ENV_VAR, ",".join(HIDDEN))


def notebook(*cells):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("print(1)"), *cells]
    return nb


def test_the_gates_skip_line_passes_and_is_counted(hidden):
    nb = notebook(
        cell(["pkg:transformers"], gate_output("pkg:transformers")),
        cell(["sm90", "pkg:jax"], gate_output("sm90 pkg:jax")),
    )
    assert package_skip_problems(nb, HIDDEN) == (2, [])


def test_a_gated_cell_that_printed_no_skip_line_is_a_problem(hidden):
    gated, problems = package_skip_problems(notebook(cell(["pkg:transformers"], "")), HIDDEN)
    assert gated == 1 and len(problems) == 1 and "pkg:transformers" in problems[0]


def test_a_skip_line_naming_another_package_is_a_problem(hidden):
    nb = notebook(cell(["pkg:transformers"], gate_output("pkg:jax")))
    assert len(package_skip_problems(nb, HIDDEN)[1]) == 1


def test_cells_gated_on_hardware_or_on_packages_present_are_not_counted(hidden):
    nb = notebook(cell(["cuda"], "anything"), cell(["pkg:onnxruntime"], ""))
    assert package_skip_problems(nb, HIDDEN) == (0, [])
