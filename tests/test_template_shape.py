"""The markup of mkdocs-jupyter's notebook template that the page passes (``docsite/pages.py`` lists them) rewrite is still there.

Each rewrite of a chapter page finds its target by a pattern over the HTML that mkdocs-jupyter
(through nbconvert) renders. A new mkdocs-jupyter can change that markup; the rewrite would then
silently do nothing (a second copy button, 575 KB of inlined CSS, images as data URIs). This test
renders a small notebook with the installed mkdocs-jupyter, with the options of the site's
``mkdocs.yml``, and names every rewrite whose target it no longer finds. ``pyproject.toml`` bounds
mkdocs-jupyter to the versions this passes with.
"""

from __future__ import annotations

import base64
import importlib.metadata

import nbformat
import pytest
import yaml

from amp_docs_lib.docsite import downloads, math_render, notebook_css, notebook_markup, page_files

from conftest import REPO_ROOT

# rewrite (function in docsite/) -> the patterns (or literal markers) it finds in the template's HTML
TEMPLATE_TARGETS = {
    "notebook_markup.stable_cell_ids": [notebook_markup._CELL_ID],
    "notebook_markup.one_copy_button": [notebook_markup._NB_COPY_BUTTON, notebook_markup._NB_COPY_TEXT, notebook_markup._NB_COPY_SCRIPT],
    "notebook_css.shared_notebook_css": [notebook_css._STYLE, notebook_css._LIST_STYLE, 'class="jupyter-wrapper"'],
    "math_render.render_math": [math_render._NB_MATHJAX2],
    "page_files.images_as_files": [page_files._DATA_IMG],
    "downloads.wrap_bare_code": [downloads._BARE_PRE],
    # the classes reader_layout.reader_layout finds cells, inputs, outputs and tag labels by
    "reader_layout.reader_layout": ['class="celltoolbar"', 'class="cell-tag"', "jp-CodeCell", "jp-Cell-inputWrapper",
                            "jp-OutputArea-output", "<pre>"],
}


def _jupyter_options() -> dict:
    """The mkdocs-jupyter options of the site's mkdocs.yml (its plugin entry)."""
    text = (REPO_ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    config = yaml.load(text, Loader=yaml.BaseLoader)  # BaseLoader: the file's !!python tags stay text
    for entry in config["plugins"]:
        if isinstance(entry, dict) and "mkdocs-jupyter" in entry:
            return entry["mkdocs-jupyter"] or {}
    raise AssertionError("mkdocs.yml lists no mkdocs-jupyter plugin")


@pytest.fixture(scope="module")
def rendered(tmp_path_factory) -> str:
    from mkdocs_jupyter import convert

    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    png = base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(16)).decode()
    nb.cells = [
        nbformat.v4.new_markdown_cell("# A chapter\n\nSome math: $x^2$."),
        nbformat.v4.new_code_cell("print(1)", metadata={"tags": ["requires:cuda"]}, outputs=[
            nbformat.v4.new_output("stream", text="1\n"),
            nbformat.v4.new_output("display_data", data={"image/png": png, "text/plain": "<Figure>"})]),
    ]
    path = tmp_path_factory.mktemp("nb") / "chapter.ipynb"
    nbformat.write(nb, path)
    opts = _jupyter_options()
    as_bool = lambda key, default: str(opts.get(key, default)).lower() == "true"  # noqa: E731
    return convert.nb2html(str(path), execute=False, no_prompt=as_bool("no_prompt", False),
                           include_requirejs=as_bool("include_requirejs", False))


@pytest.mark.parametrize("rewrite", sorted(TEMPLATE_TARGETS))
def test_rewrite_still_finds_its_markup(rewrite, rendered):
    version = importlib.metadata.version("mkdocs-jupyter")
    missing = [t if isinstance(t, str) else t.pattern for t in TEMPLATE_TARGETS[rewrite]
               if (t not in rendered if isinstance(t, str) else t.search(rendered) is None)]
    assert not missing, (f"mkdocs-jupyter {version}'s template changed shape: {rewrite} no longer finds "
                         f"{missing}; adapt it before raising the bound in pyproject.toml")


def test_the_check_fails_on_changed_markup(rendered):
    """False variant: the template's copy button renamed, as a new release might."""
    changed = rendered.replace("zeroclipboard-container", "copy-container")
    assert notebook_markup._NB_COPY_BUTTON.search(changed) is None
