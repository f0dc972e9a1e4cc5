"""A chapter reaches mkdocs as a Markdown page (docsite/notebook_page.py), not as a notebook plugin's HTML.

Its Markdown cells are rendered by the site's Python-Markdown (admonitions, heading permalinks, mkdocs' link
rewriting and validation), its code cells and outputs are JupyterLab's markup in HTML blocks (what the reader
passes and stylesheets select), with the ids, tags and hidden inputs of the presented notebook.
"""

from __future__ import annotations

import base64
import re
import zlib

import markdown
import pytest

from amp_docs_lib.docsite.notebook_page import notebook_markdown
from conftest import FRONT_MATTER, mkdocs_build

SITE_EXTENSIONS = ["md_in_html", "admonition", "toc", "pymdownx.superfences", "pymdownx.arithmatex"]
SITE_CONFIGS = {"toc": {"permalink": True}, "pymdownx.arithmatex": {"generic": True}}


def _notebook(*cells: dict) -> dict:
    meta = {"kernelspec": {"name": "python3", "language": "python", "display_name": "Python 3"}}
    return {
        "nbformat": 4,
        "nbformat_minor": 5,
        "metadata": meta,
        "cells": [dict(c, id=f"cell-{k}") for k, c in enumerate(cells)],
    }


def _code(source: str, *outputs: dict, tags: tuple[str, ...] = ()) -> dict:
    return {
        "cell_type": "code",
        "metadata": {"tags": list(tags)},
        "execution_count": 1,
        "source": source,
        "outputs": list(outputs),
    }


def _markdown(source: str) -> dict:
    return {"cell_type": "markdown", "metadata": {}, "source": source}


def _stream(text: str) -> dict:
    return {"output_type": "stream", "name": "stdout", "text": text}


def _display(mime: str, data: str) -> dict:
    return {"output_type": "display_data", "metadata": {}, "data": {mime: data, "text/plain": "shown"}}


def test_markdown_cells_stay_markdown_and_code_cells_are_jupyterlab_markup():
    nb = _notebook(
        _markdown("## Limits\n\n!!! note\n    A sentence, with `code`."),
        _code("print('x')\n\n\ny = '$5 and $6'", _stream("```python\n*not emphasis*\n\n    indented\n")),
        _code("build_the_claim()", _display("text/markdown", "**held** on $x$"), tags=("hide-input",)),
    )
    page = notebook_markdown(nb)
    assert "## Limits\n\n!!! note\n    A sentence, with `code`." in page  # the cell's Markdown, as written
    assert 'id="cell-1"' in page and "cell-id=" not in page  # the presented notebook's ids, nothing random
    assert "In&nbsp;[" not in page and "Out[" not in page  # no prompts
    assert "clipboard" not in page and "MathJax" not in page and "<style" not in page
    assert "build_the_claim" not in page and "celltag_hide-input" in page  # hide-input: the output only
    html = markdown.markdown(page, extensions=SITE_EXTENSIONS, extension_configs=SITE_CONFIGS)
    assert re.search(r'<h2 id="limits">Limits<a class="headerlink" href="#limits"', html)
    assert '<div class="admonition note">' in html and "<code>code</code>" in html
    # A code cell is raw HTML to Markdown: blank lines, fences, asterisks and dollars in it stay as printed.
    assert "<pre>```python\n*not emphasis*\n\n    indented\n</pre>" in html
    assert re.search(r"<code>.*print.*\n\n\n.*\$5 and \$6", html)
    assert re.search(
        r'<div id="cell-1" class="jp-Cell jp-CodeCell jp-Notebook-cell[^"]*">\s*<div class="jp-Cell-inputWrapper">',
        html,
    )
    assert html.count('class="jp-RenderedText jp-OutputArea-output"') == 1
    # A text/markdown output: rendered by the Markdown the page is written in (default: plain Python-Markdown).
    assert "<strong>held</strong> on $x$" in html


def test_a_markdown_output_is_rendered_with_the_sites_extensions():
    from amp_docs_lib.docsite.notebook_page import markdown_renderer

    nb = _notebook(_code("show()", _display("text/markdown", "!!! note\n    measured: $x$")))
    page = notebook_markdown(nb, markdown_renderer(SITE_EXTENSIONS, SITE_CONFIGS))
    assert '<div class="admonition note">' in page and '<span class="arithmatex">\\(x\\)</span>' in page


def _png() -> bytes:
    """A 1x1 PNG."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return len(data).to_bytes(4, "big") + kind + data + zlib.crc32(kind + data).to_bytes(4, "big")

    ihdr = (1).to_bytes(4, "big") * 2 + bytes([8, 0, 0, 0, 0])
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(b"\x00\x00")) + chunk(b"IEND", b"")
    )


def _mini_chapter(link: str) -> str:
    image = base64.b64encode(_png()).decode()
    return f"""{FRONT_MATTER}
# Chapter a

## Limits

!!! note "Checked"
    The other chapter is [chapter b]({link}).

```python
print('hello from a')
```

```python
from IPython.display import HTML
HTML('<img alt="one pixel" src="data:image/png;base64,{image}">')
```
"""


@pytest.mark.site
def test_a_chapter_is_built_as_a_markdown_page_and_a_broken_link_fails_strict(mini_site):
    yml = mini_site / "mkdocs.yml"
    yml.write_text(
        yml.read_text()
        + "validation:\n  anchors: warn\nmarkdown_extensions:\n  - admonition\n  - toc:\n      permalink: true\n"
    )
    chapter = mini_site / "docs" / "chapters" / "a.md"
    chapter.write_text(_mini_chapter("b.md#chapter-b"))
    mkdocs_build(mini_site)
    site = mini_site / "site"
    page = (site / "chapters" / "a" / "index.html").read_text()
    # Python-Markdown rendered the Markdown cell: a heading permalink, an admonition, a link mkdocs rewrote.
    assert re.search(r'<h2 id="limits">Limits<a class="headerlink"[^>]*href="#limits"', page)
    assert '<div class="admonition note">' in page and '<p class="admonition-title">Checked</p>' in page
    assert '<a href="../b/#chapter-b">chapter b</a>' in page
    # Prose and cells alike in the notebook's wrappers, which the stylesheets and the reader passes select by.
    from bs4 import BeautifulSoup

    notebook = BeautifulSoup(page, "html.parser").select_one("div.jupyter-wrapper > div.jp-Notebook")
    assert notebook.find("h2", id="limits") and len(notebook.select("div.jp-CodeCell")) == 2
    # The code cell and its output, as JupyterLab's markup; the figure a file, not a data URI.
    assert re.search(r'class="jp-RenderedText jp-OutputArea-output"[^>]*>\s*<pre[^>]*>hello from a', page)
    assert not re.search(r'<img[^>]*src="data:', page)
    (figure,) = (site / "assets" / "figures").glob("*.png")
    assert figure.read_bytes() == _png() and f'src="../../assets/figures/{figure.name}"' in page
    # A link to an anchor that does not exist: mkdocs' validation fails the --strict build.
    chapter.write_text(_mini_chapter("b.md#no-such-section"))
    r = mkdocs_build(mini_site, check=False)
    assert r.returncode != 0
    assert "contains a link 'b.md#no-such-section', but the doc 'chapters/b.md' does not contain an anchor" in r.stderr


def test_the_notebook_stylesheet_is_linked_by_chapter_pages_only():
    from amp_docs_lib.docsite.page_assets import without_unused_assets

    head = '<link rel="stylesheet" href="../assets/css/notebook.css"><div class="md-content">'
    assert "notebook.css" not in without_unused_assets(head + "<p>The home page</p></div>")
    assert "notebook.css" in without_unused_assets(head + '<div class="jupyter-wrapper"></div></div>')
