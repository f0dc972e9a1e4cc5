"""A page's first code cell is folded as "Imports and setup" only when it is setup (issue 36, reader 1, finding 6)."""

from test_pages import _cell

from amp_docs_lib.docsite import reader_layout

# The first cell of quantization's last sub-page: it imports what it uses, then runs the batch sweep and shows it.
SWEEP = """from amp_docs_lib.bench.load import LoadCheck

sweep_check = LoadCheck.start()
bs = speed.batch_sweep(64, 64, [1, 8], timer)
sweep_check.finish()
print(sweep_check.note())
display(show_figure(speed.plot_batch_sweep(bs), "Latency per row"))
show_table(bs, "Linear(64, 64): latency and speedup per batch size")"""

# A chapter's setup that prints the device it runs on (performance's first cell does).
SETUP = """import torch

from amp_docs_lib.core.devices import default_device

device = default_device()
print(f"device: {device}")


def concluded(check, *facts):
    display(check.note(), *facts)"""


def test_a_first_cell_that_shows_a_result_is_not_folded_as_setup():
    out = reader_layout.reader_layout(_cell("cell-1", SWEEP))
    assert "amp-fold--setup" not in out and "Imports and setup" not in out


def test_a_setup_cell_that_prints_the_device_is_still_folded():
    out = reader_layout.reader_layout(_cell("cell-1", SETUP))
    assert out.count("amp-fold--setup") == 1 and "Imports and setup (10 lines)" in out
