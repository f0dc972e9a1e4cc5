"""Where things live: the repository's folders and the build's cache, named once.

Source folders are absolute (found from this file). The example programs and the chapters'
sources are the checkout's ``examples/`` and ``docs/chapters/``; an installed wheel carries its
own copies (``amp_docs_lib/examples/``, ``amp_docs_lib/chapters/``, placed by
``docsite/wheel.py``), found when there is no checkout. Build outputs are relative to the
project being built (the folder of its ``mkdocs.yml``, the build's working directory), so a
throwaway site in a temporary folder keeps its own cache.
"""

from __future__ import annotations

from pathlib import Path

LIBRARY_ROOT = Path(__file__).resolve().parents[1]  # amp_docs_lib/
REPO_ROOT = LIBRARY_ROOT.parent
DATA_DIR = LIBRARY_ROOT / "data"
DOCS_DIR = REPO_ROOT / "docs"
PACKAGED_CHAPTERS_DIR = LIBRARY_ROOT / "chapters"  # only in a wheel: the chapters (the literature reads headings)
CHAPTERS_DIR = PACKAGED_CHAPTERS_DIR if PACKAGED_CHAPTERS_DIR.is_dir() else DOCS_DIR / "chapters"
PACKAGED_EXAMPLES_DIR = LIBRARY_ROOT / "examples"  # only in a wheel: the examples it ships
EXAMPLES_DIR = PACKAGED_EXAMPLES_DIR if PACKAGED_EXAMPLES_DIR.is_dir() else REPO_ROOT / "examples"
REVISION_FILE = LIBRARY_ROOT / "REVISION"  # only in a wheel: the checkout's git revision it was built from

# Relative to the project being built.
REFERENCE_RESULTS = Path("docs") / "reference-results"  # committed reference machines and gated outputs
CACHE_DIR = Path(".amp-docs-cache")
EXECUTED_DIR = CACHE_DIR / "executed"  # executed chapter notebooks, one per key
PRESENTED_DIR = CACHE_DIR / "presented"  # the notebooks pages are rendered from, named as their executed entry
WHEEL_CACHE_DIR = CACHE_DIR / "wheel"  # the library's wheel, one folder per state of its sources
FRAGMENTS_DIR = CACHE_DIR / "fragments"  # generated HTML tables, keyed by their inputs
ENVIRONMENT_MEMO = CACHE_DIR / "environment.json"
BUILD_LOG = CACHE_DIR / "last-build.json"  # which chapters the last build executed, and why
SITE_MANIFEST = CACHE_DIR / "site-manifest.json"  # inputs of the last successful `amp-docs build`

# Relative to the built site.
DOWNLOADS_DIR = "downloads"
CHAPTER_DOWNLOADS_DIR = f"{DOWNLOADS_DIR}/chapters"  # executed notebooks and chapter sources
TABLE_DOWNLOADS_DIR = f"{DOWNLOADS_DIR}/tables"  # each published table as CSV
