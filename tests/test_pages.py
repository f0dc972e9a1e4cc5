"""What the site build does to every page for its reader (docsite pages post-processing)."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pandas as pd
import pytest

from amp_docs_lib.docsite import (builder_paths, folds, page_files, pages, presented, provenance,
                                  reader_layout)
from amp_docs_lib.core.palette import BIT_FIELD_COLORS, FORMAT_COLORS, REGIME_COLORS, color_of, css_variables
from amp_docs_lib.page.tables import show_table

REPO_ROOT = Path(__file__).resolve().parents[1]
PAGE = '<html><body><div class="md-content"><article><h1>T</h1>{}</article></div></body></html>'


def _measured(report=None) -> str:
    return show_table(pd.DataFrame({"x": [1]}), "t", report=report)._repr_html_()


def test_one_provenance_card_replaces_the_repeated_stamps():
    page = PAGE.format(_measured() * 3)
    out = provenance.provenance_card(page)
    assert out.count('class="amp-provenance"') == 1
    assert "amp-stamp--measured" not in out
    assert out.index("amp-provenance") < out.index("<table"), "the card is at the top"
    assert "CPU capability (torch)" in out and "build date" in out


def test_a_result_measured_elsewhere_keeps_its_own_stamp():
    from amp_docs_lib.core.env import stamp_fields

    other = dict(stamp_fields(), device="NVIDIA H100 80GB HBM3 (sm 9.0)", cuda="12.8")
    out = provenance.provenance_card(PAGE.format(_measured() * 2 + _measured(other)))
    assert out.count("amp-stamp--measured") == 1 and "NVIDIA H100" in out.split("</details>", 1)[1]
    assert "except 1 that carries its own stamp" in out


def test_a_chapter_executed_across_midnight_has_one_provenance_card():
    """Cells timed before and after midnight (UTC) carry two dates; the machine is the same, so no
    result keeps a stamp of its own (a build that crossed midnight showed five repeated stamps)."""
    from amp_docs_lib.core.env import stamp_fields

    before = dict(stamp_fields(), build_date="2026-11-24")
    after = dict(stamp_fields(), build_date="2026-11-25")
    out = provenance.provenance_card(PAGE.format(_measured(before) * 2 + _measured(after) * 3))
    assert out.count('class="amp-provenance"') == 1 and "amp-stamp--measured" not in out
    assert "own stamp" not in out


def test_documentation_stamps_stay():
    doc = show_table(pd.DataFrame({"op": ["mm"]}), "d", source="PyTorch docs")._repr_html_()
    out = provenance.provenance_card(PAGE.format(doc + _measured()))
    assert "amp-stamp--source" in out


def test_a_deliberate_error_shows_its_last_line_and_no_builder_path(tmp_path):
    nb = {"cells": [{"cell_type": "code", "source": "", "metadata": {}, "outputs": [
        {"output_type": "error", "ename": "ValueError", "evalue": "unknown precision 'fp61'",
         "traceback": ["\x1b[31mTraceback\x1b[0m", f'  File "{REPO_ROOT}/amp_docs_lib/x.py", line 3',
                       "ValueError: unknown precision 'fp61'"]},
        {"output_type": "stream", "name": "stderr", "text": f"{REPO_ROOT}/amp_docs_lib/x.py:3: UserWarning\n"}]}],
        "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    src = tmp_path / "ch.ipynb"
    src.write_text(json.dumps(nb))
    shown = presented.presented_notebook(src, tmp_path / "presented")
    text = shown.read_text()
    out = json.loads(text)["cells"][0]["outputs"]
    assert out[0]["traceback"] == ["ValueError: unknown precision 'fp61'"]
    assert out[1]["text"] == "amp_docs_lib/x.py:3: UserWarning\n"
    assert str(REPO_ROOT) not in text and json.loads(src.read_text()) == nb, "the cached notebook is untouched"


def test_writing_a_presented_notebook_leaves_another_builds_temporary_file_alone(tmp_path):
    # Two builds may present the same entry at once: each writes through its own temporary name.
    src = tmp_path / "ch.ipynb"
    src.write_text(json.dumps({"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    other = tmp_path / "presented" / "ch.tmp"
    other.parent.mkdir()
    other.write_text("another build's half-written notebook")
    shown = presented.presented_notebook(src, tmp_path / "presented")
    assert json.loads(shown.read_text())["cells"] == []
    assert other.read_text() == "another build's half-written notebook"


def test_builder_paths_cover_the_repository_packages_and_home():
    import sysconfig

    text = f"{REPO_ROOT}/examples/a.py {sysconfig.get_paths()['purelib']}/torch/nn.py {Path.home()}/x"
    out = builder_paths.without_builder_paths(text)
    assert out == "examples/a.py site-packages/torch/nn.py ~/x" or str(Path.home()) == str(REPO_ROOT)


def test_embedded_images_and_csv_become_shared_files(tmp_path):
    png = base64.b64encode(b"\x89PNG fake").decode()
    page = PAGE.format(f'<img class="amp-fig" src="data:image/png;base64,{png}"/>'
                       '<a class="amp-csv" download="t.csv" href="data:text/csv;base64,' +
                       base64.b64encode(b"a,b\n1,2\n").decode() + '">CSV</a>')
    out = page_files.csv_as_files(page_files.images_as_files(page, "chapters/x/", tmp_path), "chapters/x/", tmp_path)
    assert "data:" not in out and 'loading="lazy"' in out
    (img,) = (tmp_path / "assets" / "figures").iterdir()
    assert img.read_bytes() == b"\x89PNG fake" and f'src="../../assets/figures/{img.name}"' in out
    (csv,) = (tmp_path / "downloads" / "tables" / "chapters-x").iterdir()
    assert csv.read_text() == "a,b\n1,2\n"


def test_one_colour_per_format_and_regime_everywhere():
    assert color_of("torch.bfloat16") == color_of("BF16") == FORMAT_COLORS["BF16"]
    assert color_of("amp_bf16") == FORMAT_COLORS["BF16"] and color_of("fp32") == FORMAT_COLORS["FP32"]
    every = list(FORMAT_COLORS.values())
    assert len(set(every)) == len(every), "two formats share a colour"
    regimes = list(REGIME_COLORS.values())
    assert len(set(regimes)) == len(regimes), "two regimes share a colour"
    css = css_variables()
    assert all(f"--amp-bit-{k}: {v};" in css for k, v in BIT_FIELD_COLORS.items())
    with pytest.raises(ValueError, match="no colour for 'FP7'.*formats: "):
        color_of("FP7")


def test_the_bit_layout_figure_uses_the_palette_the_explorer_uses():
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.colors import to_hex
    from matplotlib.patches import Rectangle

    from amp_docs_lib.numbers.formats import plot_bit_layout as bit_layout_figure

    fig = bit_layout_figure(["FP16"])
    used = {to_hex(p.get_facecolor()) for p in fig.axes[0].patches if isinstance(p, Rectangle)}
    assert {c.lower() for c in BIT_FIELD_COLORS.values()} <= used


def _nav_pages() -> list[tuple[str, str]]:
    import yaml

    class Loader(yaml.SafeLoader):
        pass

    Loader.add_multi_constructor("!", lambda loader, suffix, node: None)  # !ENV etc.
    nav = yaml.load((REPO_ROOT / "mkdocs.yml").read_text(), Loader=Loader)["nav"]
    flat: list[tuple[str, str]] = []

    def walk(entries):
        for e in entries:
            for title, target in e.items():
                walk(target) if isinstance(target, list) else flat.append((title, target))
    walk(nav)
    return flat


def test_home_page_lists_the_chapters_in_the_navigation_order_with_its_names():
    import re

    home = (REPO_ROOT / "docs" / "index.md").read_text()
    section = home[home.index("## Chapters"):]  # the last section (the build table is on the Rebuild page)
    listed = re.findall(r"^- \[([^\]]+)\]\((chapters/[^)]+)\)", section, re.M)
    in_nav = [(t, f) for t, f in _nav_pages() if f.startswith("chapters/")]
    assert listed == in_nav


def test_the_home_page_order_check_can_fail():
    """A list in another order than the navigation is not the navigation's list."""
    in_nav = [(t, f) for t, f in _nav_pages() if f.startswith("chapters/")]
    assert list(reversed(in_nav)) != in_nav


def test_a_pattern_is_two_tabs_a_diff_and_the_full_program():
    from amp_docs_lib.page.snippets import show_pattern

    page = show_pattern("amp_patterns/amp_loop.py", "amp_patterns/clipping.py")._repr_html_()
    assert page.count('type="radio"') == 2 and page.count('class="tabbed-block"') == 2
    assert "What changes" in page and "Full program" in page
    diff, full = page.split('class="tabbed-block"')[1:]
    assert "amp-code--diff" in diff and "amp-code--python" in full and "examples/amp_patterns/clipping.py" in full


def test_prose_numbers_and_lists_read_as_words():
    from amp_docs_lib.page.claims import format_value

    assert format_value(0.4475953) == "0.4476" and format_value(512 / 3) == "170.7"
    assert format_value(0.0078125) == "0.0078125", "an exact value is not rounded"
    assert format_value(["blocks.3.0"]) == "blocks.3.0"
    assert format_value(["fp32", "bf16", "fp16"]) == "fp32, bf16 and fp16" and format_value([]) == "none"


def test_the_skipped_cell_note_shows_names_as_code_not_backticks():
    from amp_docs_lib.core.gating import skip_note_html

    from amp_docs_lib.core.gating import _code_spans, valid_requirements

    for requirement in valid_requirements():
        assert "`" not in skip_note_html([requirement]), requirement
    assert _code_spans("needs `transformer_engine` &amp; CUDA") == "needs <code>transformer_engine</code> &amp; CUDA"


def test_show_cards_prints_each_row_once_with_its_badge_and_skips_missing_cells():
    from amp_docs_lib.page.tables import show_cards

    df = pd.DataFrame({"claim": ["FP16 flushes below 2^-25", "FP8 trains at scale"],
                       "verdict": ["holds", "not testable here"],
                       "measured here": ["largest flushed 2^-25.000", None],
                       "why not testable": [None, "needs FP8 tensor cores"]})
    page = show_cards(df, "Claims", title="claim", badge="verdict")._repr_html_()
    assert page.count('<li class="amp-card">') == 2
    for claim in df["claim"]:
        assert page.count(claim) == 1  # once in the cards (the CSV is base64)
    assert '<span class="amp-badge amp-badge--holds">holds</span> FP16 flushes' in page
    assert 'amp-badge--not-testable-here' in page
    # a row without a value in a column does not print that column's label
    first, second = page.split('<li class="amp-card">')[1:]
    assert "why not testable" not in first and "measured here" in first
    assert "measured here" not in second and "needs FP8 tensor cores" in second
    assert "<table" not in page and 'class="amp-csv"' in page


def test_show_cards_names_valid_columns_and_says_when_empty():
    from amp_docs_lib.page.tables import NoRows, show_cards

    df = pd.DataFrame({"claim": ["a"], "verdict": ["holds"]})
    with pytest.raises(ValueError, match=r"\['verdikt'\].*valid: \['claim', 'verdict'\]"):
        show_cards(df, title="claim", badge="verdikt")
    empty = show_cards(df.iloc[:0], "Claims", title="claim", badge="verdict")
    assert isinstance(empty, NoRows) and "none in this build" in empty._repr_html_()


# ---- what a reader sees of a notebook page (issue 36) ------------------------------------------
def _cell(cell_id: str, code: str | None, outputs: str = "", tags: str = "") -> str:
    """A code cell as a chapter page shows it (docsite/notebook_page.py's template, nbconvert's lab markup)."""
    inp = (f'<div class="jp-Cell-inputWrapper"><div class="jp-InputArea jp-Cell-inputArea">'
           f'<div class="highlight-ipynb highlight"><pre><code>{code}</code></pre></div></div></div>') if code else ""
    out = (f'<div class="jp-Cell-outputWrapper"><div class="jp-OutputArea jp-Cell-outputArea">{outputs}</div></div>'
           if outputs else "")
    tag_classes = "".join(f" celltag_{t}" for t in tags.split())
    return f'<div class="jp-Cell jp-CodeCell jp-Notebook-cell{tag_classes}" id="{cell_id}">{inp}{out}</div>'


def _output(html_: str) -> str:
    return (f'<div class="jp-OutputArea-child"><div class="jp-RenderedHTMLCommon jp-OutputArea-output" '
            f'data-mime-type="text/html">{html_}</div></div>')


def _claim(text: str) -> str:
    from amp_docs_lib.page.claims import claim

    return claim(text + " {measured}.", 1, 1)._repr_html_()


def _markdown(text: str) -> str:
    return f'<div class="jp-Cell jp-MarkdownCell" id="md-{abs(hash(text))}"><p>{text}</p></div>'


def test_every_code_block_has_its_own_id_so_its_copy_button_copies_it():
    """Material names a block's copy target after its closest id: the cell's, shared by the input
    and a listing in its output, so the listing's button copied the input (finding 1)."""
    from amp_docs_lib.page.snippets import show_pattern

    listing = show_pattern("amp_patterns/fp32_loop.py", "amp_patterns/amp_loop.py")._repr_html_()
    page = _cell("cell-13", 'show_pattern("a", "b")', _output(listing)) + _cell("cell-14", "x = 1")
    out = reader_layout.reader_layout(page)
    import re

    ids = re.findall(r'<pre[^>]*\bid="([^"]+)"', out)
    assert len(ids) == out.count("<pre") == 4 and len(set(ids)) == 4, ids
    assert not set(ids) & {"cell-13", "cell-14"}
    # Material adds its copy button to pre > code only: every block keeps its <code>.
    assert out.count("<code>") >= 4 and re.search(r'<pre id="[^"]+"><code>', out)


def test_skip_notes_are_one_line():
    from amp_docs_lib.core.gating import skip_note_html

    note = skip_note_html(["cuda"])
    summary = note[note.index("<summary>"):note.index("</summary>")]
    assert "Skipped on this machine" in summary and "a CUDA GPU" in summary and "\n" not in summary
    assert "compiled by the tests" not in note  # build internals stay out of reader-facing text
    ref = skip_note_html(["cuda"], "<table><tr><td>42</td></tr></table>")
    assert "<details" not in ref.split("<table>")[0], "a committed reference result is shown, not folded"


def test_setup_and_checking_code_is_folded_and_the_lesson_is_not():
    imports = "from amp_docs_lib.page.tables import show_table\nimport torch"
    lesson = "import torch\nx = torch.ones(2, dtype=torch.bfloat16)"
    page = (_cell("cell-1", imports) + _cell("cell-2", lesson, _output("<pre>tensor([1., 1.])</pre>"))
            + _cell("cell-3", "display(claim(...))", _output(_claim("one")) + _output(_claim("two"))))
    out = reader_layout.reader_layout(page)
    assert out.count('class="amp-details amp-fold amp-fold--imports"') == 1
    assert out.count("amp-fold--checks") == 1
    lesson_at = out.index("x = torch.ones")
    assert out.rfind("<details", 0, lesson_at) < out.rfind("</details>", 0, lesson_at), "the lesson was folded"
    assert folds.plumbing_kind(lesson, []) is None  # an import followed by the lesson is the lesson


def test_adjacent_claims_form_one_list_and_prose_separates_lists():
    page = (_cell("cell-1", None, _output(_claim("first")) + _output(_claim("second")))
            + _cell("cell-2", None, _output(_claim("third")))
            + _markdown("Some prose between.")
            + _cell("cell-3", None, _output(_claim("fourth"))))
    out = reader_layout.reader_layout(page)
    assert out.count('class="amp-claims"') == 1
    group = out[out.index('class="amp-claims"'):out.index("Some prose")]
    assert "amp-claims--machine" not in out, "checked claims are not hardware facts" 
    assert all(w in group for w in ("first", "second", "third")) and "fourth" not in group
    assert group.count("checked in this build") == 0 and out.count("Checked in this build") == 1
    assert out.count("checked in this build") == 1, "the lone claim keeps its own verdict"
    assert 'id="cell-2"' not in out, "a cell emptied by the grouping is removed"


def test_search_sees_prose_not_table_cells_output_or_pilcrows():
    table = show_table(pd.DataFrame({"format": ["FP16"], "max": [65504.0]}), "limits")._repr_html_()
    page = ('<h2 id="limits">Limits<a class="anchor-link" href="#limits">¶</a></h2>'
            + _cell("cell-1", "limits()", _output(table) + '<pre class="amp-output">raw output</pre>'))
    out = pages.search_friendly(page)
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(out, "html.parser")
    assert soup.select_one("div.amp-table-scroll").has_attr("data-search-exclude")
    assert soup.select_one("a.anchor-link").has_attr("data-search-exclude")
    assert soup.select_one("pre.amp-output").has_attr("data-search-exclude")
    assert not soup.select_one("figcaption").find_parent(attrs={"data-search-exclude": True}), "captions stay searchable"


def test_long_listings_are_folded_under_their_name_and_patterns_are_not():
    from amp_docs_lib.page.snippets import Code, show_pattern

    long_ = Code("\n".join(f"x{i} = {i}" for i in range(folds.MAX_OPEN_LISTING_LINES + 1)), "python", "examples/long.py")
    short = Code("x = 1\n", "python", "examples/short.py")
    pattern = show_pattern("amp_patterns/fp32_loop.py", "amp_patterns/amp_loop.py")
    page = "".join(_cell(f"cell-{i}", "show_source(x)", _output(c._repr_html_()))
                   for i, c in enumerate((long_, short, pattern)))
    out = reader_layout.reader_layout(page)
    assert out.count("amp-fold--listing") == 1
    assert f"examples/long.py ({folds.MAX_OPEN_LISTING_LINES + 1} lines)</summary>" in out


def test_an_exercises_answer_cells_are_folded_together_and_its_task_is_not():
    """An exercise's run and checks answer its question: they are folded, one fold per run of
    consecutive answer cells, while the task above and the text between stay visible (finding 24)."""
    from bs4 import BeautifulSoup

    def tagged(cell_id, code, tag):
        return _cell(cell_id, code, _output("<pre>out</pre>"), tags=tag)

    page = ('<div class="jp-Notebook">' + _markdown("Task: predict the ratio")
            + tagged("cell-1", "run()", "answer") + tagged("cell-2", "claims()", "answer")
            + _markdown("On a GPU:") + tagged("cell-3", "gpu_run()", "answer")
            + tagged("cell-4", "other()", "hide-input") + "</div>")
    soup = BeautifulSoup(reader_layout.reader_layout(page), "html.parser")
    folds = soup.select("details.amp-fold--answer")
    assert [[p["id"] for p in f.select("div.jp-Cell[id]")] for f in folds] == [["cell-1", "cell-2"], ["cell-3"]]
    assert all(f.find_parent("details") is None and f.get("open") is None for f in folds)
    task = soup.find(string="Task: predict the ratio")
    assert task is not None and task.find_parent("details") is None
    assert soup.select_one("#cell-4").find_parent("details", class_="amp-fold--answer") is None


def test_each_page_has_one_name_its_heading_in_the_navigation():
    """The navigation showed the notebook's heading while mkdocs.yml and the home page used another
    name for the same chapter (reader finding 11): the nav title is the page's own H1."""
    import re

    for title, target in _nav_pages():
        if target == "index.md":
            continue
        h1 = re.search(r"^# (.+)$", (REPO_ROOT / "docs" / target).read_text(), re.M)
        assert h1 is not None and h1.group(1).strip() == title, (target, title)
