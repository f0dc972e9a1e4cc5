"""A presented chapter notebook as the Markdown page mkdocs builds (no notebook plugin in between).

Markdown cells stay Markdown, so the site's Python-Markdown renders them with ``mkdocs.yml``'s
``markdown_extensions`` (Material's headings, table of contents and permalinks, arithmatex math, mkdocs'
link rewriting and ``validation:`` of links and anchors, the search index). Code cells and their outputs
become JupyterLab's markup (``jp-Cell``, ``jp-Cell-inputWrapper``, ``jp-OutputArea-output``: what the reader
passes, folds and stylesheets select), each an HTML block of its own, written by nbconvert with a small
template (``templates/amp_page/index.md.j2``, extending nbconvert's ``lab/base.html.j2`` at its documented
blocks). A ``text/markdown`` output sits in its cell's HTML block, so it is rendered here, by the same
Python-Markdown extensions. The rendered page goes into the notebook's wrappers (``in_notebook``), which
the stylesheets and the reader passes select by (an HTML block around the Markdown would leave it raw).

Cells tagged ``hide-input`` show their outputs only; no prompts; cell ids are the presented notebook's
(``presented.py`` numbers them, so two builds give the same page).
"""

from __future__ import annotations

import functools
from pathlib import Path

TEMPLATES = Path(__file__).with_name("templates")
TEMPLATE = "amp_page"
HIDE_INPUT_TAG = "hide-input"  # a claim's code: the reader sees the checked sentence, not how it is built


def highlighted(source: str) -> str:
    """A code cell's source as Pygments HTML inside ``pre > code`` (where Material puts its copy button)."""
    from pygments import highlight
    from pygments.formatters import HtmlFormatter
    from pygments.lexers import PythonLexer

    body = highlight(source, PythonLexer(), HtmlFormatter(nowrap=True))
    return f'<div class="highlight-ipynb highlight"><pre><span></span><code>{body}</code></pre></div>'


@functools.cache
def _exporter():
    from nbconvert.exporters import TemplateExporter
    from traitlets.config import Config

    config = Config()
    config.TagRemovePreprocessor.enabled = True
    config.TagRemovePreprocessor.remove_input_tags = {HIDE_INPUT_TAG}
    config.TemplateExporter.exclude_input_prompt = True
    config.TemplateExporter.exclude_output_prompt = True
    exporter = TemplateExporter(config=config, extra_template_basedirs=[str(TEMPLATES)], template_name=TEMPLATE)
    exporter.template_file = "index.md.j2"
    exporter.register_filter("highlight_code", lambda source, **_: highlighted(source))
    return exporter


def markdown_renderer(extensions=(), extension_configs=None):
    """Markdown to HTML with these Python-Markdown extensions (the site's ``markdown_extensions``)."""
    import markdown

    md = markdown.Markdown(extensions=list(extensions), extension_configs=extension_configs or {})

    def render(text: str) -> str:
        return md.reset().convert(text)

    return render


NOTEBOOK_OPEN = '<div class="jupyter-wrapper">\n<div class="jp-Notebook">\n'
NOTEBOOK_CLOSE = "\n</div>\n</div>"


def in_notebook(content: str) -> str:
    """A chapter page's rendered content inside the notebook's wrappers (``.jupyter-wrapper .jp-Notebook``)."""
    return NOTEBOOK_OPEN + content + NOTEBOOK_CLOSE


def notebook_markdown(nb: dict, render_markdown=None) -> str:
    """The Markdown page of a presented notebook (a dict as nbformat writes it); ``text/markdown`` outputs
    are rendered by ``render_markdown`` (default: ``markdown_renderer()``, plain Python-Markdown)."""
    import json

    import nbformat

    node = nbformat.reads(json.dumps(nb), as_version=4)  # sources joined, as the template expects
    exporter = _exporter()
    exporter.register_filter("markdown2html", render_markdown or markdown_renderer())
    body, _ = exporter.from_notebook_node(node)
    return body.strip() + "\n"
