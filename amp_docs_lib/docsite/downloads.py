"""Reader features added to every built chapter page (called from the plugin's ``on_post_page``).

* **Downloads**: each chapter page gets a bar offering its executed notebook
  (``.ipynb``, the very notebook the page was rendered from), its source
  (the jupytext ``.md``) and the ``examples/`` programs it uses. The files are
  copied into the site under ``downloads/`` so they work offline.
  Examples are found in the chapter itself: string arguments of
  ``show_source``/``show_diff``/``run_snippet`` calls, any ``examples/<path>.py``
  the text mentions, and an explicit list in the front matter (an example's data files, named
  in its source and kept beside it, such as ``precision.toml``, come with it)::

      ---
      jupyter:
        amp_docs_examples: [amp_patterns/amp_loop.py]
        jupytext: ...
      ---

* **The library's wheel** (``WHEEL_URI``, built by ``wheel.library_wheel``): every bar links it
  with the one install line that runs the downloaded notebook (``notebook_install_line``: the
  wheel with its ``notebook`` extra); every example runs after installing it too (each
  example's ``# Install:`` line says so, with any other package it needs).

* **The downloaded notebook** (``downloadable_notebook``) is the executed notebook the page was
  rendered from, made to run top to bottom outside the repository: a first code cell loads
  ``amp_docs_lib.page.notebook``'s ``%%requires`` magic and every cell tagged ``requires:...``
  is guarded by it, so on a machine without the hardware it prints its skip note and the
  notebook goes on (the examples it runs come with the wheel).

* **Copy buttons**: Material for MkDocs adds its copy button to ``pre > code``
  blocks; the ``show_source`` listings Pygments writes into an output are bare
  ``<pre>``, so their contents are wrapped in ``<code>``.

Everything here works for any chapter under ``docs/chapters/``: nothing is listed by name.
"""

from __future__ import annotations

import html
import json
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from amp_docs_lib.core.gating import requirements_from_tags
from amp_docs_lib.core.paths import CHAPTER_DOWNLOADS_DIR, DOWNLOADS_DIR, EXAMPLES_DIR
from amp_docs_lib.docsite.wheel import NOTEBOOK_EXTRA, wheel_filename
from amp_docs_lib.page.notebook import gated_source

WHEEL_URI = f"{DOWNLOADS_DIR}/{wheel_filename()}"
LOAD_GATE_SOURCE = (
    "# Cells that need hardware this machine lacks print a skip note instead of failing.\n"
    "%load_ext amp_docs_lib.page.notebook"
)


def notebook_install_line() -> str:
    """What a reader runs before a downloaded notebook: the wheel with its notebook extra."""
    return f'pip install "{wheel_filename()}[{NOTEBOOK_EXTRA}]"'


def downloadable_notebook(text: str) -> str:
    """An executed notebook (JSON) as the download bar offers it: gated cells guarded by
    ``%%requires`` (outputs kept), the magic loaded by a first code cell."""
    from amp_docs_lib.docsite.subpages import without_markers

    nb = json.loads(text)
    cells = nb.get("cells", [])
    for cell in cells:
        if cell.get("cell_type") == "markdown":  # one notebook for all of a split chapter's pages
            source = cell.get("source", "")
            cell["source"] = without_markers("".join(source) if isinstance(source, list) else source)
        if cell.get("cell_type") != "code":
            continue
        needs = requirements_from_tags(cell.get("metadata", {}).get("tags", []))
        if needs:
            source = cell.get("source", "")
            cell["source"] = gated_source("".join(source) if isinstance(source, list) else source, needs)
    first_code = next((i for i, c in enumerate(cells) if c.get("cell_type") == "code"), len(cells))
    cells.insert(
        first_code,
        {
            "cell_type": "code",
            "execution_count": None,
            "id": "amp-docs-load-gate",
            "metadata": {"tags": ["amp-docs-download"]},
            "outputs": [],
            "source": LOAD_GATE_SOURCE,
        },
    )
    return json.dumps(nb, indent=1, ensure_ascii=False) + "\n"


_CALL = re.compile(r"\b(?:show_source|show_diff|show_pattern|run_snippet)\s*\(([^)]*)\)")
_STRING = re.compile(r"""["']([^"'\n]+?\.py)["']""")
_MENTION = re.compile(r"\bexamples/([\w./-]+?\.py)\b")
_FENCE = re.compile(r"^```python[^\n]*\n(.*?)^```", re.M | re.S)
_FRONT = re.compile(r"\A---\n(.*?)\n---\n", re.S)
# A <pre> whose first child is not <code>, inside a highlighted block (notebook input cells,
# show_source listings). Output areas (plain <pre> of printed text) are left alone.
_BARE_PRE = re.compile(
    r'(<div class="(?:highlight-ipynb[^"]*|highlight)">)<pre>(?!(?:<span></span>)?<code)(.*?)</pre>', re.S
)
_H1_END = re.compile(r"</h1>", re.I)


def examples_used(source: str, examples_dir: Path = EXAMPLES_DIR) -> list[str]:
    """Example programs (paths relative to ``examples/``) a chapter's source uses, sorted.

    Raises ValueError if the front matter lists an example that does not exist.
    """
    if not isinstance(source, str):
        raise TypeError(f"source must be the chapter text (str), got {type(source).__name__}")
    found: set[str] = set()
    for code in _FENCE.findall(source):
        for args in _CALL.findall(code):
            found.update(_STRING.findall(args))
    found.update(_MENTION.findall(source))
    listed: list[str] = []
    m = _FRONT.match(source)
    if m:
        meta = yaml.safe_load(m.group(1)) or {}
        listed = list(((meta.get("jupyter") or {}).get("amp_docs_examples")) or [])
        missing = [p for p in listed if not (examples_dir / p).is_file()]
        if missing:
            have = sorted(str(q.relative_to(examples_dir)) for q in examples_dir.rglob("*.py"))
            raise ValueError(f"front matter lists examples that do not exist: {missing}; valid: {have}")
    found = {p[len("examples/") :] if p.startswith("examples/") else p for p in found}
    return sorted({p for p in found if (examples_dir / p).is_file()} | set(listed))


def companion_files(example: str, examples_dir: Path = EXAMPLES_DIR) -> list[str]:
    """Data files an example reads from beside it: files of its folder (not ``.py``) its source names."""
    path = examples_dir / example
    text = path.read_text(encoding="utf-8")
    return sorted(
        str(q.relative_to(examples_dir))
        for q in path.parent.iterdir()
        if q.is_file() and q.suffix != ".py" and re.search(rf"[\"']{re.escape(q.name)}[\"']", text)
    )


@dataclass
class ChapterDownloads:
    """The files one chapter page offers, as (site path, file to copy) pairs."""

    chapter: str
    notebook: Path
    source: Path
    examples: list[str] = field(default_factory=list)
    continued: bool = (
        False  # a sub-page of a split chapter (docsite/subpages.py): cells above it are on earlier pages too
    )
    pages: int = 1  # the pages of the chapter the notebook holds (a split chapter's, docsite/subpages.py)
    chapter_url: str = ""  # a sub-page's chapter page, where the bar says how to run the notebook

    def files(self) -> dict[str, Path]:
        out = {
            f"{CHAPTER_DOWNLOADS_DIR}/{self.chapter}.ipynb": self.notebook,
            f"{CHAPTER_DOWNLOADS_DIR}/{self.chapter}.md": self.source,
        }
        for e in self.examples:
            for f in (e, *companion_files(e)):
                out[f"{DOWNLOADS_DIR}/examples/{f}"] = EXAMPLES_DIR / f
        return out

    def bar_html(self, page_url: str) -> str:
        from mkdocs.utils import get_relative_url

        def link(target: str, label: str) -> str:
            href = get_relative_url(target, page_url)
            return f'<a href="{html.escape(href)}" download>{html.escape(label)}</a>'

        parts = [
            link(f"{CHAPTER_DOWNLOADS_DIR}/{self.chapter}.ipynb", "executed notebook (.ipynb)"),
            link(f"{CHAPTER_DOWNLOADS_DIR}/{self.chapter}.md", "source (.md)"),
            link(WHEEL_URI, f"the library's wheel ({Path(WHEEL_URI).name})"),
        ]
        if self.continued:  # compact on a sub-page: the chapter page says how to run it
            run = (
                f' <span class="amp-downloads__run">One notebook for {"both" if self.pages == 2 else f"all {self.pages}"} pages of the chapter; '
                f'how to run it, or a copied cell: <a href="{html.escape(get_relative_url(self.chapter_url, page_url))}">'
                "on the chapter page</a>.</span>"
            )
            ex = ""
            if self.examples:
                ex = (
                    '<span class="amp-downloads__examples">Example programs on this page: '
                    + ", ".join(link(f"{DOWNLOADS_DIR}/examples/{e}", f"examples/{e}") for e in self.examples)
                    + ".</span>"
                )
            return (
                f'<div class="amp-downloads amp-downloads--part" data-chapter="{html.escape(self.chapter)}">'
                f'<span class="amp-downloads__label">Download this chapter:</span> '
                + " · ".join(parts)
                + run
                + ex
                + "</div>"
            )
        run = (
            ' <span class="amp-downloads__run">To run the notebook anywhere: '
            f"<code>{html.escape(notebook_install_line())}</code>, then open it in Jupyter or run "
            f"<code>jupyter execute {html.escape(self.chapter)}.ipynb</code>; cells that need hardware "
            "this machine lacks print a skip note. A cell copied with the cells above it"
            + (" (the chapter's earlier pages too)" if self.continued else "")
            + " also runs as a plain script.</span>"
        )
        ex = ""
        if self.examples:

            def example(e: str) -> str:
                extra = companion_files(e)
                return link(f"{DOWNLOADS_DIR}/examples/{e}", f"examples/{e}") + (
                    " (with " + ", ".join(link(f"{DOWNLOADS_DIR}/examples/{f}", Path(f).name) for f in extra) + ")"
                    if extra
                    else ""
                )

            label = "Example programs on this page" if self.pages > 1 else "Example programs used"
            ex = (
                f'<span class="amp-downloads__examples">{label}: '
                + ", ".join(example(e) for e in self.examples)
                + ". To run one: <code>pip install</code> the library's wheel (linked above; each "
                + "program's <code># Install:</code> line lists anything else it needs).</span>"
            )
        return (
            f'<div class="amp-downloads" data-chapter="{html.escape(self.chapter)}">'
            f'<span class="amp-downloads__label">Download this chapter:</span> '
            + " · ".join(parts)
            + run
            + ex
            + "</div>"
        )


def wrap_bare_code(output: str) -> str:
    """Wrap highlighted ``<pre>`` contents in ``<code>`` so Material adds its copy button."""
    return _BARE_PRE.sub(lambda m: f"{m.group(1)}<pre><code>{m.group(2)}</code></pre>", output)


def chapter_downloads(page, config) -> ChapterDownloads | None:
    """The downloads of a chapter page (built from an executed notebook, ``plugin._page_file``), else None.
    Every page of a split chapter (``subpages``) offers the whole chapter: its notebook runs top to bottom
    in one kernel."""
    src = getattr(page.file, "amp_docs_notebook", None)
    src_uri = getattr(page.file, "amp_docs_chapter", None)
    if src is None or src_uri is None:
        return None
    source = Path(config["docs_dir"]) / src_uri
    if not source.is_file():
        return None
    chapter = Path(src_uri).stem
    pages = getattr(page.file, "amp_docs_pages", 1)
    if pages == 1:
        return ChapterDownloads(chapter, src, source, examples_used(source.read_text(encoding="utf-8")))
    # A page of a split chapter offers the chapter's downloads; its bar names the example programs its own
    # cells use (each page copies those it links).
    from amp_docs_lib.docsite.links import page_url_of

    text = "\n".join(
        f"```python\n{''.join(c['source'])}\n```" if c.get("cell_type") == "code" else "".join(c.get("source", ""))
        for c in page.file.amp_docs_cells
    )
    return ChapterDownloads(
        chapter,
        src,
        source,
        examples_used(text),
        continued=src_uri != page.file.src_uri,
        pages=pages,
        chapter_url=page_url_of(src_uri, config.get("use_directory_urls", True)),
    )


def post_page(output: str, page, config) -> str:
    """Add copy buttons everywhere and, on chapter pages, the download bar (files copied to the site)."""
    output = wrap_bare_code(output)
    dl = chapter_downloads(page, config)
    if dl is None:
        return output
    site = Path(config["site_dir"])
    for rel, src in dl.files().items():
        dest = site / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        if src == dl.notebook:
            dest.write_text(downloadable_notebook(src.read_text(encoding="utf-8")), encoding="utf-8")
        else:
            shutil.copyfile(src, dest)
    bar = dl.bar_html(page.url)
    m = _H1_END.search(output, output.find('class="md-content"') + 1)
    if m is None:
        return output
    return output[: m.end()] + bar + output[m.end() :]
