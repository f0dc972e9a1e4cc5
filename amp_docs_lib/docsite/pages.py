"""The passes over every built page, in order: this module lists them; each lives in a module of its own.

* ``search_friendly`` (the plugin's ``on_page_content``, before the search index reads the page): the
  notebook template's copy buttons dropped (``notebook_markup``), then ``reader_layout``'s passes over the
  parsed page (code ids, folds from ``folds``, claims grouped, the lesson first, search exclusions);
* ``post_page`` (``on_post_page``): stable cell ids, the profiles table (``generated_pages``), one copy
  button, no builder paths (``builder_paths``), one shared notebook stylesheet (``notebook_css``), math
  rendered (``math_render``), figures and CSV tables as files (``page_files``), links between chapters
  (``links``), the download bar (``downloads``), links to anchors that moved to a sub-page and the "Part k
  of n" line of a split chapter's pages (``subpages``), one provenance card (``provenance``);
* ``post_build`` (``on_post_build``): the shared stylesheet written, the home page's showcase and
  "Yours vs reference" filled (``generated_pages``).

Everything works for any chapter under ``docs/chapters/``; nothing is listed by name.
"""

from __future__ import annotations

from pathlib import Path

from amp_docs_lib.core.paths import REFERENCE_RESULTS
from amp_docs_lib.docsite import downloads
from amp_docs_lib.docsite.builder_paths import without_builder_paths
from amp_docs_lib.docsite.fragments import FragmentMemo
from amp_docs_lib.docsite.generated_pages import fill_comparison, fill_profiles, fill_showcase
from amp_docs_lib.docsite.links import rewrite_md_links
from amp_docs_lib.docsite.math_render import render_math
from amp_docs_lib.docsite.notebook_css import NotebookStyles, shared_notebook_css
from amp_docs_lib.docsite.notebook_markup import one_copy_button, stable_cell_ids
from amp_docs_lib.docsite.page_files import csv_as_files, images_as_files
from amp_docs_lib.docsite.provenance import provenance_card
from amp_docs_lib.docsite.reader_layout import reader_layout
from amp_docs_lib.docsite.subpages import AnchorMap, add_part_line


def search_friendly(content: str) -> str:
    """The page body the search index sees (and the page shows): without the notebook template's
    own copy buttons and hidden copies of each cell (Material's button is the one copy button),
    laid out for its reader (``reader_layout``), and without stamps and diffs in the index."""
    content = one_copy_button(content)
    content = content.replace(
        '<div class="amp-code amp-code--diff"', '<div data-search-exclude class="amp-code amp-code--diff"'
    )
    return reader_layout(content)


def post_page(
    output: str,
    page,
    config,
    fragments: FragmentMemo,
    styles: NotebookStyles | None = None,
    anchors: AnchorMap | None = None,
) -> str:
    """All reader features of one page, in order (see the module docstring); ``fragments`` memoises
    generated tables across builds (the plugin passes its own); ``styles`` collects the notebook
    CSS for ``post_build`` to write once; ``anchors`` knows the pages of split chapters (links to an
    anchor that moved to a sub-page follow it; each page of one gets its "Part k of n" line)."""
    site_dir = Path(config["site_dir"])
    output = stable_cell_ids(output)
    output = fill_profiles(output, fragments)
    output = one_copy_button(output)
    output = without_builder_paths(output)
    output = shared_notebook_css(output, page.url, site_dir, styles)
    output = render_math(output, page.url)
    output = images_as_files(output, page.url, site_dir)
    output = csv_as_files(output, page.url, site_dir)
    output = rewrite_md_links(output, page, config)
    output = downloads.post_page(output, page, config)
    if anchors is not None:
        output = anchors.rewrite(output, page.url)
        if (found := anchors.page_of(page.url)) is not None:
            output = add_part_line(output, *found, page.url)
    return provenance_card(output)


def post_build(config, fragments: FragmentMemo, styles: NotebookStyles | None = None) -> None:
    """Write the shared notebook stylesheet (``styles``), then fill the home page's showcase and any
    page holding ``generated_pages.COMPARISON_MARKER`` (after every page is written)."""
    site = Path(config["site_dir"])
    if styles is not None:
        styles.write(site)
    fill_showcase(site)
    references = Path(config["docs_dir"]) / REFERENCE_RESULTS.relative_to("docs")  # committed reference machines
    fill_comparison(site, references, fragments)
