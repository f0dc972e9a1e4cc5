"""The lesson first (issue 36, review findings 5-7): every chapter opens with what it shows and ONE
"In this build" box of key results computed by the build; presentation code is folded.

The convention (ARCHITECTURE.md, chapter conventions): under the title a ``<div class="admonition
abstract amp-summary">`` summary; the chapter's last code cell, tagged ``hide-input``, ends with
``in_this_build({...})``; ``docsite.reader_layout.lesson_first`` moves that box under the summary.
"""

from __future__ import annotations

import ast
import re

import pytest
from test_pages import _cell, _output

from amp_docs_lib.docsite import generated_pages, reader_layout
from amp_docs_lib.page.summary import BOX_KIND, SUMMARY_CLASS, InThisBuild, in_this_build
from conftest import CHAPTERS

_CODE_CELL = re.compile(r"^```python([^\n]*)\n(.*?)^```", re.M | re.S)


def _top(text: str) -> str:
    """A chapter's top: from its title to its first section."""
    start = text.index("\n# ")
    return text[start : text.index("\n## ", start)]


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda p: p.stem)
def test_every_chapter_opens_with_a_summary_and_ends_with_its_key_results(chapter):
    text = chapter.read_text(encoding="utf-8")
    top = _top(text)
    assert top.count("amp-summary") == 1 and 'class="admonition abstract amp-summary"' in top, (
        f'{chapter.name}: no summary under the title (a <div class="admonition abstract amp-summary">)'
    )
    summary = top[top.index("amp-summary") : top.index("</div>", top.index("amp-summary"))]
    words = len(re.sub(r"<[^>]+>", " ", summary).split())
    assert 30 <= words <= 120, f"{chapter.name}: the summary has {words} words; a few sentences are 30 to 120"
    cells = _CODE_CELL.findall(text)
    calls = [i for i, (_, code) in enumerate(cells) if "in_this_build(" in code]
    assert calls == [len(cells) - 1], f"{chapter.name}: in_this_build must be called once, in the last code cell"
    tags, code = cells[-1]
    assert "hide-input" in tags and "requires:" not in tags, (
        f"{chapter.name}: the key-results cell must be tagged hide-input and run on every machine (not gated)"
    )
    last = ast.parse(code).body[-1]
    assert (
        isinstance(last, ast.Expr)
        and isinstance(last.value, ast.Call)
        and getattr(last.value.func, "id", None) == "in_this_build"
    ), f"{chapter.name}: the box must be the cell's result"


def test_in_this_build_renders_each_result_stamped_and_refuses_an_empty_box():
    box = in_this_build({"largest `exp` input in FP16": 11.0859375, "status": "diverged <at 3>"})
    html_ = box._repr_html_()
    assert isinstance(box, InThisBuild) and f'class="amp-result amp-{BOX_KIND}"' in html_
    assert "<code>exp</code>" in html_ and "<strong>11.09</strong>" in html_  # 4 significant digits, as claims
    assert "&lt;at 3&gt;" in html_ and "<at 3>" not in html_  # a value never injects markup
    assert "amp-stamp--measured" in html_  # the page's provenance card covers it
    assert "status: diverged <at 3>" in repr(box)  # a script prints it as lines
    with pytest.raises(ValueError):
        in_this_build({})


def _summary_cell() -> str:
    return (
        f'<div class="jp-Cell jp-MarkdownCell" id="md-top"><h1 id="t">Title</h1>'
        f'<div class="admonition abstract {SUMMARY_CLASS}"><p>What it shows.</p></div><p>More intro.</p></div>'
    )


def test_the_key_results_box_moves_under_the_summary_and_its_cell_goes():
    box = in_this_build({"answer": 42})._repr_html_()
    page = (
        _summary_cell()
        + _cell("cell-1", "x = 1")
        + '<h2 id="s">Section</h2>'
        + _cell("cell-9", 'in_this_build({"answer": x})', _output(box), tags="hide-input")
    )
    out = reader_layout.reader_layout(page)
    assert out.count(f"amp-{BOX_KIND}") == 1
    at_box, at_summary = out.index(f"amp-{BOX_KIND}"), out.index(SUMMARY_CLASS)
    assert at_summary < at_box < out.index("More intro.") < out.index('id="s"'), "the box is not under the summary"
    assert 'id="cell-9"' not in out, "the cell the box left is still on the page"


def test_without_a_summary_the_box_stays_where_it_ran():
    box = in_this_build({"answer": 42})._repr_html_()
    out = reader_layout.reader_layout(_cell("cell-1", "x = 1") + _cell("cell-9", "in_this_build(x)", _output(box)))
    assert out.index('id="cell-1"') < out.index(f"amp-{BOX_KIND}")


@pytest.mark.parametrize(
    ("code", "folded"),
    [
        ('display(show_table(df, "a"),\n        show_table(df2, "b"),\n        Markdown("c"))', True),
        ('show_table(pd.DataFrame([{"a": 1},\n                           {"a": 2}]),\n           "caption")', True),
        ('show_table(df, "a")', False),  # one line: a fold's summary would take as much room
        ('model = train(steps=40)\nloss = model.loss\nshow_table(loss, "a")', False),  # the lesson's code
        ('decision = pd.DataFrame([\n    {"a": 1},\n])\nshow_table(decision, "a")', True),  # a table typed out
        ('rows = [1, 2]\nlimits = {"a": 1}\nn = 3', False),  # data, but nothing shown: not presentation
    ],
)
def test_cells_that_only_show_a_result_are_folded(code, folded):
    out = reader_layout.reader_layout(_cell("cell-1", code, _output("<p>result</p>")))
    assert ("amp-fold--presentation" in out) is folded
    assert "<p>result</p>" in out  # the output stays open


def test_the_first_code_cell_is_folded_as_setup_when_it_begins_with_imports():
    setup = "import torch\n\nfrom amp_docs_lib.core.profiles import active_profile\n\nP = active_profile()"
    out = reader_layout.reader_layout(_cell("cell-1", setup) + _cell("cell-2", "import math\nx = math.pi"))
    assert out.count("amp-fold--setup") == 1 and "Imports and setup (5 lines)" in out
    assert out.index('id="cell-1"') < out.index("amp-fold--setup") < out.index('id="cell-2"')  # in the first cell
    lesson = reader_layout.reader_layout(_cell("cell-1", "x = torch.ones(3)\nimport math"))
    assert "amp-fold--setup" not in lesson  # a cell that starts with the lesson's code stays open


def _built_chapter(root, name: str, title: str, device: str, claim_html: str = "") -> None:
    box = in_this_build({"answer": 42})._repr_html_()
    page = (
        f'<div class="md-content"><h1>{title}</h1><details class="amp-provenance"><summary>'
        f"Measured on {device} · torch 2.x</summary></details>{box}{claim_html}</div>"
    )
    (root / "chapters" / name).mkdir(parents=True)
    (root / "chapters" / name / "index.html").write_text(page, encoding="utf-8")


def test_the_home_page_shows_chapters_key_results_linked_and_stamped_once(tmp_path):
    from amp_docs_lib.page.claims import claim

    _built_chapter(tmp_path, "formats", "Number formats", "CPU X", claim("It holds: {measured}.", 1, 1)._repr_html_())
    _built_chapter(tmp_path, "training_regimes", "Training regimes", "CPU X")
    (tmp_path / "index.html").write_text(f"<p>intro</p>{generated_pages.SHOWCASE_MARKER}", encoding="utf-8")
    generated_pages.fill_showcase(tmp_path)
    home = (tmp_path / "index.html").read_text(encoding="utf-8")
    assert generated_pages.SHOWCASE_MARKER not in home and home.count(f"amp-{BOX_KIND}") == 2
    assert 'href="chapters/formats/">Number formats</a>' in home and 'href="chapters/training_regimes/"' in home
    assert home.count("measured on CPU X") == 1  # one machine: said once (the browser test faults a repeat)
    assert "It holds: 1." in home  # a checked sentence as its chapter shows it
    _built_chapter(tmp_path / "other", "formats", "Number formats", "CPU X")
    _built_chapter(tmp_path / "other", "training_regimes", "Training regimes", "GPU Y")
    both = generated_pages.showcase_html(tmp_path / "other")
    assert both.count("measured on CPU X") == 1 and both.count("measured on GPU Y") == 1  # each box its own
