"""Reader review 2026-11-24, page-level findings: what the page shows, checked on the functions that make it."""

import ast
import re

import pandas as pd
import pytest
from quant_frames import DECISION_INPUT_COLUMNS

from conftest import REPO_ROOT

CHAPTERS = REPO_ROOT / "docs" / "chapters"


def _code_cells(chapter: str) -> list[str]:
    """The Python code cells of a chapter's source, in order."""
    text = (CHAPTERS / f"{chapter}.md").read_text(encoding="utf-8")
    return re.findall(r"^```python[^\n]*\n(.*?)^```", text, flags=re.S | re.M)


# ---- 40: the literature cards link their source, its address and the section that tests it ----------


def test_show_cards_links_a_cell_to_its_url_column_and_hides_that_column():
    from amp_docs_lib.page.tables import show_cards

    df = pd.DataFrame(
        {
            "claim": ["a claim", "another"],
            "verdict": ["holds", "holds"],
            "tested in": ["formats › Spacing", "fp8 › Memory"],
            "tested in link": ["../formats/#spacing", None],
        }
    )
    page = show_cards(df, "Claims", title="claim", badge="verdict", links={"tested in": "tested in link"})._repr_html_()
    assert '<dd><a href="../formats/#spacing">formats › Spacing</a></dd>' in page
    assert "<dd>fp8 › Memory</dd>" in page  # no URL in that row: plain text
    assert "tested in link" not in page.split('class="amp-csv"')[0]  # the URL column is no line of its own
    with pytest.raises(ValueError, match="tested at"):
        show_cards(df, title="claim", badge="verdict", links={"tested at": "tested in link"})


def test_every_literature_card_links_its_bibliography_entry_its_address_and_its_section(reading_map):
    from amp_docs_lib import literature
    from amp_docs_lib.literature.bibliography import identifiers, ref_anchor
    from amp_docs_lib.literature.registry import CLAIMS, READING_MAP_LINKS, site_url
    from amp_docs_lib.page.tables import show_cards

    table = reading_map
    bib = literature.bibliography.bibliography()
    ids = identifiers()
    arxiv, doi = dict(ids["arxiv"]), dict(ids["doi"])
    for c, (_, row) in zip(CLAIMS, table.iterrows(), strict=True):
        anchor = ref_anchor(c.source)
        assert row["source link"] == f"#{anchor}" and f'id="{anchor}"' in bib, c.key
        assert row["tested in link"] == site_url(c.test), c.key
        if c.source in arxiv:
            assert row["read at link"] == f"https://arxiv.org/abs/{arxiv[c.source]}", c.key
        elif c.source in doi:
            assert row["read at link"] == f"https://doi.org/{doi[c.source]}", c.key
    page = show_cards(table, "Claims", title="claim", badge="verdict", links=READING_MAP_LINKS)._repr_html_()
    cards = page.split('<li class="amp-card">')[1:]
    assert len(cards) == len(CLAIMS)
    for c, card in zip(CLAIMS, cards, strict=True):
        assert f'<a href="#{ref_anchor(c.source)}">[{c.source}]' in card, c.key
        assert f'<a href="{site_url(c.test)}">' in card, c.key
    # the chapter shows the cards with these links
    assert any("links=READING_MAP_LINKS" in cell for cell in _code_cells("literature"))


# ---- 18: a cell skipped for a missing package says how to get it, and that this machine runs it --------


def test_a_package_skip_names_the_pip_install_and_a_hardware_skip_does_not():
    from amp_docs_lib.core.gating import skip_note_html

    note = skip_note_html(["pkg:transformers"])
    assert "<code>pip install transformers</code>" in note and "this machine" in note
    assert "A build on a machine that has what the cell needs" not in note  # not "go find another machine"
    both = skip_note_html(["pkg:transformer_engine", "sm89"])
    assert "pip install" not in both and "A build on a machine that has what the cell needs" in both


def test_a_package_skip_names_the_distribution_not_the_module():
    from amp_docs_lib.core.gating import skip_note_html
    from amp_docs_lib.core.packages import PACKAGES

    renamed = next(p for p in PACKAGES if p.module != p.distribution)  # e.g. sklearn -> scikit-learn
    assert f"pip install {renamed.distribution}</code>" in skip_note_html([f"pkg:{renamed.module}"])


# ---- 19: the dtype flow is shown once: the figure, with its table folded under it ----------------------


def test_autocast_shows_the_dtype_flow_figure_first_and_folds_its_table():
    cells = _code_cells("autocast")
    fig = next(i for i, c in enumerate(cells) if "plot_dtype_flow(flow" in c)
    table = next(i for i, c in enumerate(cells) if "show_table(flow," in c)
    assert fig < table
    call = next(
        n
        for n in ast.walk(ast.parse(cells[table]))
        if isinstance(n, ast.Call) and getattr(n.func, "id", None) == "show_table"
    )
    assert any(k.arg == "collapsed" and getattr(k.value, "value", None) is True for k in call.keywords)


# ---- 26: ratios keep their significant digits; tables carry their units ----------------------------------


def test_a_ratio_far_below_one_keeps_its_digits_and_ordinary_ratios_read_as_before():
    from amp_docs_lib.core.timing import Comparison, Timing, format_ratio

    t = Timing(
        label="a", median_s=1e-3, iqr_s=1e-5, runs=9, calls_per_run=1, num_threads=1, device="cpu", method="test"
    )
    slow = Comparison(baseline=t, candidate=t, ratio=25 / 7973, ratio_lo=0.00311, ratio_hi=0.00322, rounds=9, level=0.9)
    # 300x slower, not "0.00x [0.00, 0.00]"; the interval rounded outward (core.timing.format_interval)
    assert slow.interval_text() == "0.0031x [0.0031, 0.0033]"
    fast = Comparison(baseline=t, candidate=t, ratio=4.2789, ratio_lo=4.19, ratio_hi=4.321, rounds=9, level=0.9)
    assert fast.interval_text() == "4.28x [4.19, 4.33]"
    assert format_ratio(0.1) == "0.10" and format_ratio(0.099) == "0.099" and format_ratio(317.4) == "317.40"


def test_the_matmul_sweep_is_shown_with_units_in_its_headers():
    from amp_docs_lib.bench.matmul import sweep_for_reading

    sweep = pd.DataFrame(
        {
            "dtype": ["fp32"],
            "n": [64],
            "median_s": [6.4e-06],
            "iqr_s": [2.5e-08],
            "tflops": [0.082],
            "bytes": [49152],
            "intensity": [10.67],
            "fraction of peak": [float("nan")],
        }
    )
    shown = sweep_for_reading(sweep)
    assert list(shown.columns) == [
        "dtype",
        "n",
        "time median (ms)",
        "time IQR (ms)",
        "TFLOP/s",
        "intensity (FLOP/byte)",
        "fraction of dtype peak",
    ]
    assert shown.loc[0, "time median (ms)"] == pytest.approx(6.4e-3) and shown.loc[0, "fraction of dtype peak"] is None
    cells = _code_cells("performance")
    assert any("sweep_for_reading(sweep)" in c and "All sizes" in c for c in cells)
    flush = next(c for c in cells if "mistakes.cache_flush(" in c)
    assert '"flush buffer (MiB)"' in flush and '"flush bytes")' in flush  # bytes shown as MiB, not 100663296


# ---- 30: the decision table's memory cell names a tie once, without the per-variant extras ---------------


def test_the_memory_cell_of_a_tie_is_short_and_names_each_variant_once():
    from amp_docs_lib.quantization import results

    cols = DECISION_INPUT_COLUMNS
    tie = [
        "torchao INT8 weight-only",
        "torchao INT8 dynamic act + INT8 weight",
        "torchao INT4 weight-only (Intx, group 32)",
        "torchao INT8 dynamic act + INT4 weight (Intx)",
        "torchao FP8 weight-only",
    ]
    rows = [("FP32", "PyTorch eager", 0.97, 102.0, 101.0, None, None, None)]
    rows += [
        (v, "torchao", 0.97, 25.2 + 1 + i, 25.2, 1.0, "[0.90, 1.10]", "no difference resolved")
        for i, v in enumerate(tie)
    ]
    rows += [
        (f"ONNX Runtime {v}", "ONNX Runtime (CPU)", 0.97, None, None, 1.0, "[0.90, 1.10]", "no difference resolved")
        for v in ("FP32", "dynamic INT8")
    ]
    memory = results.decision_table(pd.DataFrame(rows, columns=cols)).iloc[0]["memory"]
    # ranked on weight payload since issue 34's second read of the fixes (finding 5): equal codes are no tie
    assert memory.startswith("torchao INT8 weight-only (26.2 KiB of weight payload: 25.2 KiB of weight codes")
    assert memory.count("torchao") == 1 and "add (KiB)" not in memory  # no per-variant list of extras
    assert memory.endswith("not compared (codes not counted): ONNX Runtime: FP32, dynamic INT8")
    assert len(memory.split()) < 60
    one = results.decision_table(pd.DataFrame(rows[:2] + rows[3:3], columns=cols)).iloc[0]["memory"]
    assert one == (
        "torchao INT8 weight-only (26.2 KiB of weight payload: 25.2 KiB of weight codes, "
        "1.0 KiB of scales, zero points and biases)"
    )


# ---- 2: a wide table shows the columns its prose is about; the detail is folded ---------------------------


def _show_table_calls(chapter: str) -> list[ast.Call]:
    calls = []
    for cell in _code_cells(chapter):
        calls += [
            n
            for n in ast.walk(ast.parse(cell))
            if isinstance(n, ast.Call) and getattr(n.func, "id", None) in ("show_table", "publish")
        ]
    return calls


def _keywords(call: ast.Call) -> dict[str, object]:
    return {
        k.arg: ast.literal_eval(k.value)
        for k in call.keywords
        if k.arg in ("columns", "collapsed") and isinstance(k.value, (ast.List, ast.Constant))
    }


def _call_with_caption(chapter: str, words: str) -> ast.Call:
    return next(c for c in _show_table_calls(chapter) if words in ast.unparse(c))


@pytest.mark.parametrize(
    ("chapter", "caption", "column"),
    [
        ("formats", "pi decoded in five formats", "relative error"),  # "The relative-error column shows ..."
        (
            "formats",
            "value!r} decoded in five formats",
            "class",
        ),  # "... stored as a subnormal (the table's class column)"
        ("formats", "set_flush_denormal on this CPU", "survives arithmetic"),  # what the boxes under it state
        ("formats", "limits as torch.finfo", "machine epsilon"),
        ("quantization", "PTQ configs on this device", "error here"),  # "(see the needs and error columns)"
        ("fp8", "the convention checker's verdict", "checker"),
    ],
)
def test_a_wide_table_shows_the_column_its_prose_names_inline(chapter, caption, column):
    shown = _keywords(_call_with_caption(chapter, caption)).get("columns")
    assert shown is not None and column in shown and len(shown) <= 7


def test_detail_tables_that_repeat_a_summary_are_folded():
    assert _keywords(_call_with_caption("quantization", "All variants, with weights"))["collapsed"] is True
    assert _keywords(_call_with_caption("performance", "Step time per size and precision"))["collapsed"] is True
    # 34: the published subset of the FP8 GEMM error table (right scales only) is folded under the full one
    assert _keywords(_call_with_caption("fp8", "GEMM with the right scales"))["collapsed"] is True


def test_the_fp8_recipe_table_is_shown_without_the_dataframe_literal_that_builds_it():
    text = (CHAPTERS / "fp8.md").read_text(encoding="utf-8")
    fence = re.search(r"^```python([^\n]*)\ndecision = pd.DataFrame\(\[", text, flags=re.M)
    assert fence is not None and "hide-input" in fence.group(1)


# ---- 35: every claim is a sentence of its own; citations link the references ------------------------------


def _leading_text(node: ast.expr) -> str:
    """The literal text a (possibly f-) string starts with."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr) and node.values and isinstance(node.values[0], ast.Constant):
        return node.values[0].value
    return ""


def test_fp8_claims_start_a_sentence_and_citation_keys_link_the_references():
    from amp_docs_lib.literature import load_bibliography

    starts = [
        _leading_text(n.args[0])
        for cell in _code_cells("fp8")
        for n in ast.walk(ast.parse(cell))
        if isinstance(n, ast.Call) and getattr(n.func, "id", None) == "claim" and n.args
    ]
    lower = [t[:40] for t in starts if t[:1].islower() and not t.startswith(("torch", "ml_dtypes"))]
    assert not lower, lower  # "and per-row scaling ..." continued the previous claim's sentence
    text = (CHAPTERS / "fp8.md").read_text(encoding="utf-8")
    prose = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
    keys = set(load_bibliography().entries)
    bare = [k for k in re.findall(r"(?<!\[)\[([A-Za-z_]+\d{4}[a-z0-9]*)\](?!\()", prose) if k in keys]
    assert not bare, bare
    linked = re.findall(r"\[\[([A-Za-z_]+\d{4}[a-z0-9]*)\]\]\(#ref-\1\)", prose)
    assert linked and set(linked) <= keys


# ---- 43: the API overview keeps package names whole and points at nothing it cannot link ------------------


def test_the_api_overview_keeps_package_names_whole():
    import markdown

    from amp_docs_lib.docsite.api_pages import index_markdown

    page = markdown.markdown(index_markdown(), extensions=["attr_list", "tables"])
    assert '<a class="amp-nowrap" href="quantization.md"><code>quantization</code></a>' in page
    assert "ARCHITECTURE.md in the repository" not in page
    css = (REPO_ROOT / "docs" / "assets" / "css" / "amp-docs.css").read_text(encoding="utf-8")
    rule = re.search(r"\.md-typeset a\.amp-nowrap code[^{]*\{([^}]*)\}", css)
    assert rule and "white-space: nowrap" in rule.group(1)


# ---- 29, 36: no page shows a raw Python warning -------------------------------------------------------------

PYTHON_WARNING = re.compile(r"\.py:\d+: [A-Z]\w*Warning: ")


def test_the_warning_pattern_matches_the_lines_the_review_found():
    seen = (
        "site-packages/torch/distributed/tensor/_dispatch.py:735: UserWarning: Found a non-scalar tensor",
        "site-packages/torch/_functorch/_aot_autograd/autograd_cache.py:707: UserWarning: Int8Tensor does not",
    )
    assert all(PYTHON_WARNING.search(s) for s in seen)
    assert not PYTHON_WARNING.search("Warnings from torch.ao.quantization.quantize_dynamic in torch 2.14.1")


def test_no_chapter_page_shows_a_python_warning(site):
    found = [
        (p.parent.relative_to(site).as_posix(), m.group(0))
        for p in sorted((site / "chapters").rglob("index.html"))  # a split chapter's sub-pages too
        for m in PYTHON_WARNING.finditer(p.read_text(encoding="utf-8"))
    ]
    assert not found, found
