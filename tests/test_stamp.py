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
    cells = re.findall(r"<td[^>]*>(.*?)</td>", show_table(df).body_html)
    assert cells == ["1.5", "n/a", "NaN", "yes", "2", "3", "1", "no"]
    # pandas turns None into NaN in a column of strings; there it can only mean "not applicable".
    text = pd.DataFrame([{"note": "ok", "x": 1.0}, {"note": None, "x": float("nan")}])
    assert re.findall(r"<td[^>]*>(.*?)</td>", show_table(text).body_html) == ["ok", "1", "n/a", "NaN"]


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
    light, dark = re.findall(r'class="amp-fig amp-fig--(light|dark)" src="data:image/(?:png|webp);base64,([^"]+)"', page)
    assert page.count('class="glightbox amp-lightbox"') == 1, "one lightbox link per figure, both renderings inside"
    assert (light[0], dark[0]) == ("light", "dark")
    lp, dp = _pixels(light[1]), _pixels(dark[1])
    assert lp.getpixel((2, 2)) == (255, 255, 255)
    bg = tuple(int(DARK_BACKGROUND[i:i + 2], 16) for i in (1, 3, 5))
    assert dp.getpixel((2, 2)) == bg
    # The dark rendering has no pure-black ink left (black text and lines became light grey) ...
    assert (0, 0, 0) not in {c for _, c in dp.getcolors(1 << 20)}
    # ... and the data colour (matplotlib's C0 blue) survives in both (within the 256-colour quantization's rounding).
    c0 = (31, 119, 180)

    def has(img, rgb):
        return any(max(abs(a - b) for a, b in zip(c, rgb)) <= 6 for _, c in img.getcolors(1 << 20))
    assert has(lp, c0) and has(dp, c0)


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


def test_tables_align_text_left_and_numbers_right_and_scroll_in_their_own_box():
    df = pd.DataFrame({"variant": ["int8 weight-only", "fp32"], "latency ms": [1.25, 3.5], "n": [1, None]})
    page = show_table(df, "variants")._repr_html_()
    assert '<div class="amp-table-scroll"><table class="amp-table">' in page
    heads = re.findall(r'<th class="(amp-\w+)" scope="col">([^<]*)</th>', page)
    assert heads == [("amp-text", "variant"), ("amp-num", "latency ms"), ("amp-num", "n")]
    # A column of numbers with a gap is still a number column; a text column is never one.
    assert re.findall(r'<td class="(amp-\w+)">', page)[:3] == ["amp-text", "amp-num", "amp-num"]


def test_a_table_shows_the_chosen_columns_with_the_full_table_in_a_fold_and_as_csv():
    df = pd.DataFrame({"format": ["FP16", "BF16"], "max": [65504.0, 3.39e38], "eps": [2 ** -10, 2 ** -7]})
    page = show_table(df, "Limits: half formats", columns=["format", "max"])._repr_html_()
    inline, fold = page.split('<details class="amp-details amp-details--full">')
    assert "eps" not in inline and "eps" in fold and "Full table (3 columns, 2 rows)" in fold
    href = re.search(r'<a class="amp-csv" download="limits-half-formats.csv" href="data:text/csv;base64,([^"]+)"', page)
    assert base64.b64decode(href.group(1)).decode().splitlines()[0] == "format,max,eps"
    with pytest.raises(ValueError, match=r"valid: \['format', 'max', 'eps'\]"):
        show_table(df, columns=["format", "maximum"])


def test_an_empty_table_is_a_sentence_without_a_stamp():
    empty = show_table(pd.DataFrame({"op": []}), "Ops whose CPU category differs")
    page = empty._repr_html_()
    assert page == '<p class="amp-empty">Ops whose CPU category differs: none in this build.</p>'
    custom = show_table(pd.DataFrame({"op": []}), "x", empty="Every op agrees.")._repr_html_()
    assert "Every op agrees." in custom and "amp-stamp" not in custom and "<table" not in custom


def test_measured_results_carry_their_provenance_as_data():
    page = show_table(pd.DataFrame({"x": [1]}), "m")._repr_html_()
    data = re.search(r'data-amp-provenance="([^"]+)"', page).group(1)
    import html as _html
    import json
    fields = json.loads(_html.unescape(data))
    assert {"device", "CPU capability (torch)", "torch", "CUDA", "amp_docs_lib", "profile", "build date"} <= set(fields)


def test_figures_are_drawn_for_the_column_with_legible_text_at_twice_the_pixels():
    from matplotlib.text import Text

    from amp_docs_lib.page.figures import COLUMN_PX, MIN_FONT_PT, PAD_IN, PIXEL_RATIO, fit_to_column

    fig, (a, b) = plt.subplots(1, 2, figsize=(13, 4))
    for ax in (a, b):
        ax.plot(range(10), label="a series with a long name")
        ax.tick_params(labelsize=5)
        ax.legend(fontsize=5, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    fit_to_column(fig)
    drawn = fig.get_tightbbox(fig.canvas.get_renderer())
    assert drawn.width + 2 * PAD_IN <= COLUMN_PX / 100 + 0.01
    sizes = [t.get_fontsize() for t in fig.findobj(Text) if t.get_text()]
    assert min(sizes) >= MIN_FONT_PT
    page = show_figure(fig, "wide")._repr_html_()
    shown = int(re.search(r'width="(\d+)"', page).group(1))
    natural = _pixels(re.search(r'base64,([^"]+)"', page).group(1)).width
    assert shown <= COLUMN_PX and abs(natural / shown - PIXEL_RATIO) < 0.02
    # No stamp is drawn into the image: provenance is HTML under it.
    assert "measured on" in page.split("</a>")[-1]


def test_a_figure_wider_than_the_column_would_fail_the_check():
    """The column check above can fail: an unfitted wide figure is wider than the column."""
    from amp_docs_lib.page.figures import COLUMN_PX

    fig, ax = plt.subplots(figsize=(13, 4))
    ax.plot(range(3))
    assert fig.get_tightbbox(fig.canvas.get_renderer()).width > COLUMN_PX / 100
    plt.close(fig)
