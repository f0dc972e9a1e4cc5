"""Reader review 2026-11-24, page-level findings: what the page shows, checked on the functions that make it."""

import ast
import re

import pandas as pd
import pytest

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


def test_every_literature_card_links_its_bibliography_entry_its_address_and_its_section():
    from amp_docs_lib import literature
    from amp_docs_lib.literature.bibliography import identifiers, ref_anchor
    from amp_docs_lib.literature.registry import CLAIMS, READING_MAP_LINKS, site_url
    from amp_docs_lib.page.tables import show_cards

    table = literature.reading_map()
    bib = literature.bibliography()
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
