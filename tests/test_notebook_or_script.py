"""What chapter code does outside a notebook, and what the downloaded notebook is made of (fast)."""

import json
import subprocess
import sys
import textwrap

import nbformat
import pytest

from amp_docs_lib.docsite.downloads import ChapterDownloads, downloadable_notebook, notebook_install_line
from amp_docs_lib.docsite.wheel import wheel_filename
from amp_docs_lib.page.notebook import gated_source, ungated_source


def _script(tmp_path, code: str) -> subprocess.CompletedProcess:
    (tmp_path / "s.py").write_text(textwrap.dedent(code))
    return subprocess.run([sys.executable, "s.py"], cwd=tmp_path, capture_output=True, text=True,
                          env={"MPLBACKEND": "Agg", "PATH": "/usr/bin:/bin"})


@pytest.mark.slow  # a new interpreter imports pandas and matplotlib: seconds
def test_a_displayed_only_result_prints_in_a_script_once(tmp_path):
    r = _script(tmp_path, """
        import pandas as pd
        from amp_docs_lib.page.notebook import Markdown, display
        from amp_docs_lib.page.claims import claim
        from amp_docs_lib.page.tables import show_table

        show_table(pd.DataFrame({"format": ["BF16"], "bits": [16]}), "Bits per format")  # a cell's last line
        display(claim("BF16 has {measured} bits.", 16, expected=16), Markdown("**plain** text"))
        def helper():
            return show_table(pd.DataFrame({"x": [7]}), "From a function of the script")
        helper()
        """)
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert out.count("Bits per format") == 1 and "BF16" in out and "16" in out
    assert out.count("[checked] BF16 has 16 bits.") == 1  # printed when made, not again by display
    assert "**plain** text" in out and "From a function of the script" in out
    # and display() in a script never imports IPython:
    r = _script(tmp_path, """
        import sys
        from amp_docs_lib.page.notebook import display
        display("x")
        print("IPython" in sys.modules)
        """)
    assert r.stdout.split() == ["x", "False"], r.stdout + r.stderr


@pytest.mark.slow  # a new interpreter imports pandas and matplotlib: seconds
def test_library_callers_print_nothing(tmp_path):
    """The site build (docsite) and page functions calling each other are not a reader's script."""
    r = _script(tmp_path, """
        from amp_docs_lib.docsite.generated_pages import profiles_html
        from amp_docs_lib.page.claims import Statement, check_statements
        html = profiles_html()
        import amp_docs_lib.page.claims as c
        t = c.check_statements.__wrapped__([Statement("s", "src", 1, 1)], "Checked")
        """)
    assert r.returncode == 0, r.stderr
    assert r.stdout == ""


def test_gated_cells_are_guarded_in_the_download_and_keyed_as_in_the_chapter():
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# T"),
                nbformat.v4.new_code_cell("import torch"),
                nbformat.v4.new_code_cell('s = """a\nb"""\nshow(s)', metadata={"tags": ["requires:cuda", "hide-input"]}),
                nbformat.v4.new_code_cell("x = 1", metadata={"tags": ["hide-input"]})]
    out = json.loads(downloadable_notebook(nbformat.writes(nb)))
    sources = ["".join(c["source"]) if isinstance(c["source"], list) else c["source"] for c in out["cells"]]
    assert sources[1].endswith("%load_ext amp_docs_lib.page.notebook") and out["cells"][1]["cell_type"] == "code"
    assert sources[3] == '%%requires cuda\ns = """a\nb"""\nshow(s)'  # the body as written: no re-indenting
    assert ungated_source(sources[3]) == nb.cells[2].source and sources[4] == "x = 1"
    assert ungated_source(gated_source("y", ["sm89", "pkg:torchao"])) == "y"


def test_every_download_bar_says_how_to_run_the_notebook(tmp_path):
    bar = ChapterDownloads("formats", tmp_path / "f.ipynb", tmp_path / "f.md").bar_html("chapters/formats/")
    assert wheel_filename() in bar and f'pip install &quot;{wheel_filename()}[notebook]&quot;' in bar
    assert notebook_install_line() == f'pip install "{wheel_filename()}[notebook]"'
    assert "jupyter execute formats.ipynb" in bar
