"""How results are shown: measurement and source stamps, n/a cells, long tables, both palettes."""

import base64
import io
import re

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from PIL import Image  # noqa: E402

from amp_docs_lib.page.figures import DARK_BACKGROUND, show_figure
from amp_docs_lib.page.tables import MAX_OPEN_ROWS, show_table
from amp_docs_lib.page.stamp import stamp_text  # noqa: E402
from amp_docs_lib.core.tables import table_from_rows

from conftest import CHAPTERS  # noqa: E402


def test_measurement_table_carries_the_measurement_stamp():
    page = show_table(pd.DataFrame({"x": [1.0]}), "measured")._repr_html_()
    assert "amp-stamp--measured" in page and "measured on" in page and "amp-stamp--source" not in page


def test_documentation_table_carries_a_source_stamp_instead():
    src = "PyTorch documentation amp.md at commit 4e0ff980"
    t = show_table(pd.DataFrame({"op": ["mm"]}), "documented", source=src)
    page = t._repr_html_()
    assert not t.is_measurement
    assert "amp-stamp--source" in page and f"source: {src}" in page
    assert "measured on" not in page and stamp_text().split(" · ")[0] not in page
    with pytest.raises(ValueError, match="source must be a non-empty str"):
        show_table(pd.DataFrame({"op": ["mm"]}), source="  ")


def test_not_applicable_is_not_nan():
    df = table_from_rows([{"a": 1.5, "b": None, "c": float("nan"), "d": True},
                          {"a": 2.0, "b": 3.0, "c": 1.0, "d": False}])
    assert df["b"].iloc[0] is None and df["a"].dtype == float
    cells = re.findall(r"<td>(.*?)</td>", show_table(df).body_html)
    assert cells == ["1.5", "n/a", "NaN", "yes", "2", "3", "1", "no"]
    # pandas turns None into NaN in a column of strings; there it can only mean "not applicable".
    text = pd.DataFrame([{"note": "ok", "x": 1.0}, {"note": None, "x": float("nan")}])
    assert re.findall(r"<td>(.*?)</td>", show_table(text).body_html) == ["ok", "1", "n/a", "NaN"]


def test_long_tables_collapse_short_ones_do_not():
    long = show_table(pd.DataFrame({"i": range(MAX_OPEN_ROWS + 1)}), "long")._repr_html_()
    short = show_table(pd.DataFrame({"i": range(MAX_OPEN_ROWS)}), "short")._repr_html_()
    assert '<details class="amp-details">' in long and f"({MAX_OPEN_ROWS + 1} rows)" in long
    assert "<details" not in short
    assert "<details" not in show_table(pd.DataFrame({"i": range(40)}), collapsed=False)._repr_html_()


def _pixels(data_uri_b64: str) -> Image.Image:
    return Image.open(io.BytesIO(base64.b64decode(data_uri_b64))).convert("RGB")


def test_figures_come_in_a_light_and_a_dark_rendering():
    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1], color="black", label="black line")
    ax.plot([0, 1], [1, 0], color="C0", label="coloured line")
    ax.set_title("title")
    ax.legend()
    page = show_figure(fig, "two palettes")._repr_html_()
    light, dark = re.findall(r'class="amp-fig amp-fig--(light|dark)" src="data:image/png;base64,([^"]+)"', page)
    assert (light[0], dark[0]) == ("light", "dark")
    lp, dp = _pixels(light[1]), _pixels(dark[1])
    assert lp.getpixel((2, 2)) == (255, 255, 255)
    bg = tuple(int(DARK_BACKGROUND[i:i + 2], 16) for i in (1, 3, 5))
    assert dp.getpixel((2, 2)) == bg
    # The dark rendering has no pure-black ink left (black text and lines became light grey) ...
    assert (0, 0, 0) not in {c for _, c in dp.getcolors(1 << 20)}
    # ... and the data colour (matplotlib's C0 blue) survives in both.
    c0 = (31, 119, 180)
    assert c0 in {c for _, c in lp.getcolors(1 << 20)} and c0 in {c for _, c in dp.getcolors(1 << 20)}


@pytest.mark.parametrize("chapter", CHAPTERS, ids=[c.stem for c in CHAPTERS])
def test_chapters_show_results_only_through_the_stamped_helpers(chapter):
    text = chapter.read_text()
    assert "plt.show(" not in text and ".to_html(" not in text and "hardware_dependent" not in text


def test_na_to_none_turns_every_missing_value_into_none():
    from amp_docs_lib.core.tables import na_to_none

    df = na_to_none(pd.DataFrame({"a": [1.0, float("nan")], "b": ["x", None]}))
    assert df["a"].tolist() == [1.0, None] and df["b"].tolist() == ["x", None]
    with pytest.raises(TypeError, match="expects a pandas DataFrame"):
        na_to_none([1, 2])
