"""The passes over every built page, in order: this module lists them; each lives in a module of its own.

A chapter reaches mkdocs as an ordinary Markdown page (``notebook_page``): mkdocs and Material render its
prose, headings, table of contents, links (rewritten and validated) and copy buttons. What remains:

* ``search_friendly`` (the plugin's ``on_page_content``, before the search index reads the page; a chapter's
  page is first put in the notebook's wrappers, ``notebook_page.in_notebook``): ``reader_layout``'s passes over the parsed page (code ids, folds from ``folds``, claims grouped, the
  lesson first, search exclusions);
* ``post_page`` (``on_post_page``): the profiles table (``generated_pages``), no builder paths
  (``builder_paths``), math rendered (``math_render``), figures and CSV tables the chapters' code embeds as
  data URIs written as files (``page_files``), ``.md`` links in the chapters' HTML outputs (``links``), the
  download bar (``downloads``), links to anchors that moved to a sub-page and the "Part k of n" line of a
  split chapter's pages (``subpages``), one provenance card (``provenance``);
* ``post_build`` (``on_post_build``): the home page's showcase and "Yours vs reference" filled
  (``generated_pages``).

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
from amp_docs_lib.docsite.page_files import csv_as_files, images_as_files
from amp_docs_lib.docsite.provenance import provenance_card
from amp_docs_lib.docsite.reader_layout import reader_layout
from amp_docs_lib.docsite.subpages import AnchorMap, add_part_line


def search_friendly(content: str) -> str:
    """The page body the search index sees (and the page shows): laid out for its reader
    (``reader_layout``), and without stamps and diffs in the index."""
    content = content.replace(
        '<div class="amp-code amp-code--diff"', '<div data-search-exclude class="amp-code amp-code--diff"'
    )
    return reader_layout(content)


def post_page(
    output: str,
    page,
    config,
    fragments: FragmentMemo,
    anchors: AnchorMap | None = None,
) -> str:
    """All reader features of one page, in order (see the module docstring); ``fragments`` memoises
    generated tables across builds (the plugin passes its own); ``anchors`` knows the pages of split
    chapters (links to an anchor that moved to a sub-page follow it; each page of one gets its "Part k
    of n" line)."""
    site_dir = Path(config["site_dir"])
    output = fill_profiles(output, fragments)
    output = without_builder_paths(output)
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


def post_build(config, fragments: FragmentMemo) -> None:
    """Fill the home page's showcase and any page holding ``generated_pages.COMPARISON_MARKER`` (after
    every page is written)."""
    site = Path(config["site_dir"])
    fill_showcase(site)
    references = Path(config["docs_dir"]) / REFERENCE_RESULTS.relative_to("docs")  # committed reference machines
    fill_comparison(site, references, fragments)
