"""Reader review 2026-11-24, finding 2 (issue 36): the column the prose is about, in view at 1400 x 900.

The five tables below still hid that column on the main build at f362082 (measured in Chromium:
the right edge of its header past the right edge of the table's scroll box, by 12 to 174 px).
``AMP_DOCS_TEST_SITE=site`` runs them against an existing build (the ``site`` fixture).
"""

import shutil

import pytest

pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
from test_polish_browser import COLUMNS_IN_VIEW, desktop  # noqa: E402, F401  (the module's check and fixture)

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = [
    pytest.mark.browser,
    pytest.mark.site,
    pytest.mark.skipif(CHROMIUM is None, reason="no system Chromium (apt-get install chromium)"),
]


@pytest.mark.parametrize(
    ("path", "caption", "column"),
    [
        # One table on f362082 (the config's and the format's names side by side pushed the errors 174 px out),
        # one per config now: the old caption finds the first of them.
        ("chapters/quantization/", "torchao's opaque Intx packing formats (INT4, group 32)", "error here"),
        ("chapters/quantization/", "(INT4, group 32) with Int8DynamicActivationIntxWeightConfig on", "error here"),
        (
            "chapters/quantization/",
            "torchao's packed INT4 for CPU against the float layer",
            "A/A control (FP32 vs itself)",
        ),
        ("chapters/fp8/", "Every code of each format, counted", "dynamic range (binades)"),
        ("chapters/fp8/", "FP8 GEMM accumulation switches and their defaults", "source"),
        ("chapters/distributed/", "Two microbatches, reduction disabled for the first", "accumulated inside FSDP"),
    ],
)
def test_the_column_the_prose_is_about_is_in_view_without_scrolling(desktop, path, caption, column):  # noqa: F811
    page = desktop(path)
    table = page.evaluate(COLUMNS_IN_VIEW, caption)
    assert table is not None, f"no table captioned {caption!r} on {path}"
    assert table["shown"] and column in table["columns"], table  # laid out, and the column is inline
    assert column not in table["hidden"], table
