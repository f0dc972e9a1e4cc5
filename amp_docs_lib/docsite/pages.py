"""What every built page gets for its reader (the plugin's ``on_post_page`` calls ``post_page``).

* links between chapters written as ``[text](formats.md#anchor)`` inside an executed chapter
  become page URLs (mkdocs rewrites such links in Markdown pages, but not in the notebooks
  mkdocs-jupyter renders);
* every highlighted code block gets Material's copy button (``downloads.wrap_bare_code``);
* every chapter page gets its download bar (``downloads``).

Everything works for any chapter under ``docs/chapters/``; nothing is listed by name.
"""

from __future__ import annotations

import hashlib
import html as _html
import json
import posixpath
import re
from collections import Counter
from pathlib import Path

from amp_docs_lib.core.paths import CHAPTER_DOWNLOADS_DIR, REFERENCE_RESULTS, TABLE_DOWNLOADS_DIR
from amp_docs_lib.docsite import downloads
from amp_docs_lib.docsite.fragments import FragmentMemo
from amp_docs_lib.docsite.math_render import render_math
from amp_docs_lib.docsite.page_assets import (
    site_texts_reading_css,
    without_unused_custom_properties,
)
from amp_docs_lib.docsite.store import write_atomic

_MD_HREF = re.compile(r'(<a\b[^>]*?\bhref=")([^":#?]+\.md)(#[^"]*)?(")', re.I)


def page_url_of(src_uri: str, use_directory_urls: bool = True) -> str:
    """The URL (relative to the site root) mkdocs gives the page built from ``src_uri``."""
    stem = src_uri[:-3]
    if posixpath.basename(stem) in ("index", "README"):
        d = posixpath.dirname(stem)
        return f"{d}/" if d else ""
    return f"{stem}/" if use_directory_urls else f"{stem}.html"


def rewrite_md_links(output: str, page, config) -> str:
    """Turn ``x.md#a`` links of a page rendered from a notebook into relative page URLs."""
    if not str(page.file.abs_src_path or "").endswith(".ipynb"):
        return output  # Markdown pages: mkdocs has rewritten (and --strict validated) their links
    from mkdocs.utils import get_relative_url

    docs_dir = Path(config["docs_dir"])
    src_dir = posixpath.dirname(page.file.src_uri)

    def sub(m: re.Match) -> str:
        target = posixpath.normpath(posixpath.join(src_dir, m.group(2)))
        if not (docs_dir / target).is_file():
            return m.group(0)  # left as written: linkcheck reports it
        url = page_url_of(target, config.get("use_directory_urls", True))
        rel = get_relative_url(url or ".", page.url)
        if (url == "" or url.endswith("/")) and not rel.endswith("/"):
            rel += "/"
        return m.group(1) + rel + (m.group(3) or "") + m.group(4)

    return _MD_HREF.sub(sub, output)


PROFILES_MARKER = "<!-- amp-docs:profiles -->"


def profiles_html() -> str:
    """Every problem size of every profile, side by side (from ``amp_docs_lib.core.profiles``), folded:
    70 rows of internal size names are reference, not the page's lesson."""
    from amp_docs_lib.core.profiles import PROFILES
    from amp_docs_lib.page.tables import show_table
    from amp_docs_lib.core.tables import table_from_rows

    names = sorted({k for p in PROFILES.values() for k in p.sizes})
    rows = [{"size": k, **{n: p.sizes.get(k) for n, p in PROFILES.items()}} for k in names]
    return show_table(table_from_rows(rows), "Problem sizes per profile",
                      source="amp_docs_lib/core/profiles.py of this build", collapsed=True)._repr_html_()


# It starts with a literal (no \b, no lookbehind) so that re searches megabyte pages fast.
_CELL_ID = re.compile(r'id="cell-id=[0-9a-f-]+"')


def stable_cell_ids(output: str) -> str:
    """Replace the random cell ids nbconvert puts on cells (jupytext draws new ones on every
    read) with their position, so that two builds of the same chapter give the same page."""
    counter = iter(range(1_000_000))
    return _CELL_ID.sub(lambda m: f'id="cell-{next(counter)}"', output)


def post_page(output: str, page, config, fragments: FragmentMemo, styles: NotebookStyles | None = None) -> str:
    """All reader features of one page (see the module docstring); ``fragments`` memoises
    generated tables across builds (the plugin passes its own); ``styles`` collects the notebook
    CSS for ``post_build`` to write once."""
    output = stable_cell_ids(output)
    if PROFILES_MARKER in output:
        # The profiles are library code, which the memo's key covers: no other input.
        output = output.replace(PROFILES_MARKER, fragments.html("profiles", None, profiles_html))
    site_dir = Path(config["site_dir"])
    output = without_builder_paths(one_copy_button(output))
    output = shared_notebook_css(output, page.url, site_dir, styles)
    output = render_math(output, page.url)
    output = images_as_files(output, page.url, site_dir)
    output = csv_as_files(output, page.url, site_dir)
    output = downloads.post_page(rewrite_md_links(output, page, config), page, config)
    return provenance_card(output)


# ---- one copy button per code block ---------------------------------------------------------
# mkdocs-jupyter's template adds its own clipboard button and a hidden plain-text copy of every
# code cell (which search indexes, "Copied!" included); Material's copy button already does the job.
_NB_COPY_BUTTON = re.compile(r'<div class="zeroclipboard-container">.*?</clipboard-copy>\s*</div>', re.S)
_NB_COPY_TEXT = re.compile(r'<div class="clipboard-copy-txt" id="[^"]*">.*?</div>', re.S)
_NB_COPY_SCRIPT = re.compile(r"<script>(?:(?!</script>).)*?(?:clipboard-copy|ClipboardCopyElement)(?:(?!</script>).)*</script>", re.S)


def one_copy_button(output: str) -> str:
    output = _NB_COPY_BUTTON.sub("", output)
    output = _NB_COPY_TEXT.sub("", output)
    return _NB_COPY_SCRIPT.sub("", output)


# ---- one shared notebook stylesheet ----------------------------------------------------------
_STYLE = re.compile(r'<style type="text/css">(.*?)</style>', re.S)
# nbconvert's template also prints the Pygments CSS as a Python list repr inside a bare <style>.
_LIST_STYLE = re.compile(r"<style>\s*\['.*?'\]\s*</style>", re.S)


_CLASS_ATTR = re.compile(r'\bclass="([^"]*)"')
_CSS_CLASS = re.compile(r"\.(-?[_a-zA-Z][\w-]*)")


def _css_rules(css: str) -> list[tuple[str, str]]:
    """Top-level ``(prelude, body)`` pairs of a stylesheet (comments dropped; bodies of @-blocks raw)."""
    css = re.sub(r"/\*.*?\*/", "", css, flags=re.S)
    rules, i, n = [], 0, len(css)
    while i < n:
        brace, semi = css.find("{", i), css.find(";", i)
        if brace < 0:
            break
        if 0 <= semi < brace and css[i:semi].strip().startswith("@"):  # @charset / @import
            rules.append((css[i:semi].strip(), None))
            i = semi + 1
            continue
        depth, j = 1, brace + 1
        while j < n and depth:
            depth += {"{": 1, "}": -1}.get(css[j], 0)
            j += 1
        rules.append((css[i:brace].strip(), css[brace + 1:j - 1]))
        i = j
    return rules


def prune_css(css: str, used: set[str]) -> str:
    """``css`` without the rules none of whose selectors can match: a selector is kept when every
    class it names is in ``used`` (JupyterLab's stylesheet styles a whole IDE; a notebook page uses
    a few percent of it)."""
    out: list[str] = []
    for prelude, body in _css_rules(css):
        if body is None:
            out.append(prelude + ";")
        elif prelude.startswith(("@media", "@supports", "@layer")):
            inner = prune_css(body, used)
            if inner.strip():
                out.append(f"{prelude}{{{inner}}}")
        elif prelude.startswith("@"):
            out.append(f"{prelude}{{{body}}}")
        else:
            # ":root" after another selector (".jupyter-wrapper :root") can never match.
            kept = [s for s in prelude.split(",") if set(_CSS_CLASS.findall(s)) <= used
                    and not re.search(r"\S\s*:root", s.strip())]
            if kept:
                out.append(f"{','.join(kept)}{{{body}}}")
    return "\n".join(dict.fromkeys(out))  # the template includes some stylesheets twice


class NotebookStyles:
    """The JupyterLab CSS mkdocs-jupyter inlines in every notebook page, kept ONCE for the site:
    pages link ``NOTEBOOK_CSS``; after the build it is written pruned to the classes the pages use."""

    def __init__(self):
        self.css: dict[str, None] = {}  # ordered set of the inlined blocks
        self.classes: set[str] = set()

    def collect(self, css: str, page_html: str) -> None:
        self.css.setdefault(css)
        for attr in _CLASS_ATTR.findall(page_html):
            self.classes.update(attr.split())

    def write(self, site_dir: Path) -> Path | None:
        if not self.css:
            return None
        dest = site_dir / NOTEBOOK_CSS
        dest.parent.mkdir(parents=True, exist_ok=True)
        css = prune_css("\n".join(self.css), self.classes)
        css = without_unused_custom_properties(css, *site_texts_reading_css(site_dir, besides=dest))
        dest.write_text(css, encoding="utf-8")
        return dest


NOTEBOOK_CSS = "assets/notebook/jupyter.css"


def shared_notebook_css(output: str, page_url: str, site_dir: Path, styles: NotebookStyles | None = None) -> str:
    """Replace the JupyterLab CSS mkdocs-jupyter inlines in every notebook page (575 KB) by a link
    to one shared stylesheet: collected into ``styles`` (written, pruned, after the build), or,
    without one, written at once as it is."""
    start = output.find('class="jupyter-wrapper"')
    if start < 0:
        return output
    content = output.find('class="md-content"')
    blocks = [m for m in _STYLE.finditer(output) if content < m.start() < start]
    if not blocks:
        return output
    css = "\n".join(m.group(1) for m in blocks)
    if styles is not None:
        styles.collect(css, output)
    else:
        dest = site_dir / NOTEBOOK_CSS
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_text(css, encoding="utf-8")
    href = "../" * page_url.count("/") + NOTEBOOK_CSS
    first, last = blocks[0], blocks[-1]
    kept = output[:first.start()] + f'<link rel="stylesheet" href="{href}">' + \
        _STYLE.sub("", output[first.start():last.end()]) + output[last.end():]
    return _LIST_STYLE.sub("", kept)


# ---- images as files, loaded lazily -------------------------------------------------------------
_DATA_IMG = re.compile(r'(<img\b[^>]*?\bsrc=")data:image/(png|webp|jpeg|svg\+xml);base64,([A-Za-z0-9+/=\s]+)(")')
FIGURES_DIR = "assets/figures"
_EXT = {"png": "png", "webp": "webp", "jpeg": "jpg", "svg+xml": "svg"}


def images_as_files(output: str, page_url: str, site_dir: Path) -> str:
    """Write each data-URI image to ``assets/figures/<hash>.<ext>`` (shared, content-addressed)
    and load it from there, lazily: the HTML shrinks by a third of the image bytes, and the
    rendering for the other palette (display: none) is never fetched."""
    import base64

    up = "../" * page_url.count("/")

    def sub(m: re.Match) -> str:
        data = base64.b64decode(m.group(3))
        name = f"{FIGURES_DIR}/{hashlib.sha256(data).hexdigest()[:16]}.{_EXT[m.group(2)]}"
        dest = site_dir / name
        if not dest.is_file():
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(data)
        tag = m.group(1)
        lazy = "" if "loading=" in tag else 'loading="lazy" decoding="async" '
        return tag.replace("<img ", f"<img {lazy}", 1) + up + name + m.group(4)

    return _DATA_IMG.sub(sub, output)


# ---- CSV downloads as files --------------------------------------------------------------------
_DATA_CSV = re.compile(r'(<a class="amp-csv" download="([^"]+)" href=")data:text/csv;base64,([A-Za-z0-9+/=]+)(")')

def csv_as_files(output: str, page_url: str, site_dir: Path) -> str:
    import base64

    up = "../" * page_url.count("/")
    slug = page_url.strip("/").replace("/", "-") or "home"

    def sub(m: re.Match) -> str:
        data = base64.b64decode(m.group(3))
        stem = m.group(2)[:-4] if m.group(2).endswith(".csv") else m.group(2)
        name = f"{TABLE_DOWNLOADS_DIR}/{slug}/{stem}-{hashlib.sha256(data).hexdigest()[:8]}.csv"
        dest = site_dir / name
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(data)
        return m.group(1) + up + name + m.group(4)

    return _DATA_CSV.sub(sub, output)


# ---- one provenance card per page ---------------------------------------------------------------
# Attribute order and spelling vary with the HTML parsers the page went through.
_MEASURED = re.compile(r'<div class="amp-stamp amp-stamp--measured"[^>]*?\bdata-amp-provenance="([^"]*)"[^>]*>(.*?)</div>', re.S)


def provenance_card(output: str) -> str:
    """Gather the page's measurement stamps into one card at the top; a result keeps its own stamp
    only where it differs from the page's (e.g. a committed reference machine's result)."""
    stamps = _MEASURED.findall(output)
    if not stamps:
        return output

    def machine(data: str) -> str:
        # The stamp without its date: a chapter whose execution crosses midnight (UTC) is still
        # measured on one machine, and its stamps differ only in the date.
        fields = json.loads(_html.unescape(data))
        fields.pop("build date", None)
        return json.dumps(fields, sort_keys=True)

    common, _ = Counter(machine(data) for data, _ in stamps).most_common(1)[0]
    fields = json.loads(_html.unescape(next(data for data, _ in stamps if machine(data) == common)))
    rest = sum(1 for data, _ in stamps if machine(data) != common)
    output = _MEASURED.sub(lambda m: "" if machine(m.group(1)) == common else m.group(0), output)
    summary = " · ".join(_html.escape(f"{label}{fields[k]}") for k, label in
                         (("device", ""), ("torch", "torch "), ("profile", "profile "), ("build date", ""))
                         if k in fields)
    rows = "".join(f"<dt>{_html.escape(k)}</dt><dd>{_html.escape(v)}</dd>" for k, v in fields.items())
    note = ("Every table and figure on this page was measured by this build on this machine"
            + (f", except {rest} that carr{'ies' if rest == 1 else 'y'} {'its' if rest == 1 else 'their'} own stamp."
               if rest else ".")
            + " Tables from documentation carry a source stamp instead.")
    card = (f'<details class="amp-provenance"><summary><span class="amp-provenance__label">Measured on</span> '
            f'{summary}</summary><dl>{rows}</dl><p>{note}</p></details>')
    return _insert_after_h1(output, card)


_H1_END = re.compile(r"</h1>", re.I)


def _insert_after_h1(output: str, html_block: str) -> str:
    start = output.find('class="md-content"')
    m = _H1_END.search(output, start + 1)
    if m is None:
        return output
    # after the download bar when there is one
    bar = re.compile(r'<div class="amp-downloads".*?</div>', re.S).match(output, m.end())
    at = bar.end() if bar else m.end()
    return output[:at] + html_block + output[at:]


COMPARISON_MARKER = "<!-- amp-docs:yours-vs-reference -->"


def post_build(config, fragments: FragmentMemo, styles: NotebookStyles | None = None) -> None:
    """Write the shared notebook stylesheet (``styles``); fill any built page holding
    ``COMPARISON_MARKER`` with this build's key measurements beside every committed reference
    machine's (after all chapters, whose notebooks it reads, are written)."""
    if styles is not None:
        styles.write(Path(config["site_dir"]))
    from amp_docs_lib.docsite.hashing import tree_hash

    site = Path(config["site_dir"])
    references = Path(config["docs_dir"]) / REFERENCE_RESULTS.relative_to("docs")  # committed reference machines

    def render() -> str:
        from amp_docs_lib.docsite.references import comparison_html  # pandas: only when inputs changed
        return comparison_html(site, references)

    fill_showcase(site)
    body = None
    for page in site.rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        if COMPARISON_MARKER in text:
            if body is None:
                inputs = {"notebooks": tree_hash(site / CHAPTER_DOWNLOADS_DIR, (".ipynb",)),
                          "reference_results": tree_hash(references, None)}
                body = fragments.html("yours-vs-reference", inputs, render)
            page.write_text(text.replace(COMPARISON_MARKER, body), encoding="utf-8")


# ---- what the reader gets of an executed notebook -------------------------------------------------
def builder_paths() -> list[tuple[str, str]]:
    """(absolute path of the building machine, what a reader sees instead), longest first: the
    repository root becomes relative, installed packages ``site-packages/``, the home folder ``~``."""
    import site
    import sys
    import sysconfig

    from amp_docs_lib.core.paths import REPO_ROOT

    pairs = [(str(REPO_ROOT) + "/", ""), (str(REPO_ROOT), ".")]
    lib_dirs = {sysconfig.get_paths().get(k) for k in ("purelib", "platlib", "stdlib", "platstdlib")}
    lib_dirs |= set(getattr(site, "getsitepackages", lambda: [])())
    for d in sorted(x for x in lib_dirs if x):
        pairs.append((d.rstrip("/") + "/", ("site-packages/" if "packages" in d else "python/")))
    for d in {sys.prefix, sys.exec_prefix, sys.base_prefix}:
        pairs.append((d.rstrip("/") + "/", "python/"))
    home = str(Path.home())
    if home not in ("/", ""):
        pairs.append((home.rstrip("/") + "/", "~/"))
    return sorted(set(pairs), key=lambda p: -len(p[0]))


def without_builder_paths(text: str) -> str:
    """``text`` with every absolute path of the building machine made relative or generic."""
    for path, shown in builder_paths():
        text = text.replace(path, shown)
    return text


def presented_notebook(executed: Path, out_dir: Path) -> Path:
    """The executed notebook as a reader gets it, on the page and as a download: an error a cell
    raises on purpose shows as its last line (exception type and message), not a traceback, and
    no output names a path of the machine that built it. Written next to the cache (once per
    executed notebook); the cached notebook itself is left as executed."""
    nb = json.loads(executed.read_text(encoding="utf-8"))
    for cell in nb.get("cells", []):
        for out in cell.get("outputs", []):
            if out.get("output_type") == "error":
                out["traceback"] = [f"{out.get('ename', 'Error')}: {out.get('evalue', '')}"]
    text = without_builder_paths(json.dumps(nb, indent=1, ensure_ascii=False) + "\n")
    dest = out_dir / executed.name
    if not dest.is_file() or dest.read_text(encoding="utf-8") != text:
        write_atomic(dest, text)  # a unique temporary name: concurrent builds do not race on one
    return dest


def search_friendly(content: str) -> str:
    """The page body the search index sees (and the page shows): without the notebook template's
    own copy buttons and hidden copies of each cell (Material's button is the one copy button),
    laid out for its reader (``reader_layout``), and without stamps and diffs in the index."""
    content = one_copy_button(content)
    content = content.replace('<div class="amp-code amp-code--diff"', '<div data-search-exclude class="amp-code amp-code--diff"')
    return reader_layout(content)


# ---- what a reader sees of a notebook page ------------------------------------------------------
# Done on a parsed tree (BeautifulSoup, which nbconvert itself requires), not on patterns over the
# template's text: each step names the elements it changes by their classes.

def reader_layout(content: str) -> str:
    """A page body laid out for its reader: every code block has an id of its own (Material's copy
    button copies the block whose id it names), cell tags are not printed as labels, setup and
    checking code is folded, an exercise's answer is folded, adjacent claims form one list, and search indexes prose and headings,
    not table cells, program output or heading permalinks."""
    from bs4 import BeautifulSoup

    if "<" not in content:
        return content
    soup = BeautifulSoup(content, "html.parser")
    code_in_every_block(soup)
    unique_code_ids(soup)
    for toolbar in soup.select("div.celltoolbar"):  # mkdocs-jupyter prints each cell's tags
        toolbar.decompose()
    fold_plumbing(soup)
    fold_setup(soup)
    fold_presentation(soup)
    fold_answers(soup)
    fold_long_listings(soup)
    group_claims(soup)
    lesson_first(soup)
    exclude_from_search(soup)
    return str(soup)


def code_in_every_block(soup) -> None:
    """Material adds its copy button to ``pre > code``; the code cells mkdocs-jupyter renders and
    the listings Pygments writes are a bare ``<pre>``: their contents go into a ``<code>``."""
    for pre in soup.select("div.highlight-ipynb > pre, div.highlight > pre"):
        if pre.find("code", recursive=False) is None:
            code = soup.new_tag("code")
            for child in list(pre.contents):
                code.append(child.extract())
            pre.append(code)


def unique_code_ids(soup) -> None:
    """Give every ``<pre>`` an id of its own. Material names a code block after its closest element
    with an id (``__code_<id>``) and its copy button copies ``#__code_<id> > code``; in a notebook
    page that is the cell, shared by the input and every listing in its output, so each of their
    buttons copied the input."""
    taken = {el["id"] for el in soup.find_all(id=True)}
    n = 0
    for pre in soup.find_all("pre"):
        if pre.get("id"):
            continue
        while f"amp-code-{n}" in taken:
            n += 1
        pre["id"] = f"amp-code-{n}"
        taken.add(pre["id"])


def _code_of(input_wrapper) -> str | None:
    pre = input_wrapper.find("pre")
    return pre.get_text() if pre is not None else None


def _only_claims(output) -> bool:
    """Whether an output shows checked sentences and nothing else."""
    claims = output.select("p.amp-claim")
    return bool(claims) and len(output.get_text(strip=True)) == sum(len(c.get_text(strip=True)) for c in claims)


def plumbing_kind(code: str, outputs: list) -> str | None:
    """What a code cell's input is when it is plumbing rather than lesson (None: lesson): only
    imports, or code whose every output is a checked sentence (``claim``/``on_this_machine``)."""
    import ast

    try:
        body = ast.parse(code).body
    except SyntaxError:
        return None
    if body and all(isinstance(s, (ast.Import, ast.ImportFrom)) for s in body):
        return "imports"
    if outputs and all(_only_claims(o) for o in outputs):
        return "checks"
    return None


FOLD_SUMMARY = {"imports": "Imports", "checks": "Code of the checks"}


def fold_plumbing(soup) -> None:
    """Fold the input of cells that only import or only build checked sentences (the Polars guide
    and PyTorch's AMP examples show only the code a reader writes); the code stays one click away."""
    for wrapper in soup.select("div.jp-Cell-inputWrapper"):
        cell = wrapper.find_parent("div", class_="jp-CodeCell")
        code = _code_of(wrapper)
        if cell is None or code is None:
            continue
        outputs = cell.select("div.jp-OutputArea-output")
        kind = plumbing_kind(code, outputs)
        if kind is None:
            continue
        lines = len(code.strip().splitlines())
        fold = soup.new_tag("details", attrs={"class": f"amp-details amp-fold amp-fold--{kind}"})
        summary = soup.new_tag("summary")
        summary.string = f"{FOLD_SUMMARY[kind]} ({lines} line{'s' if lines != 1 else ''})"
        wrapper.wrap(fold)
        fold.insert(0, summary)


ANSWER_TAG = "answer"  # a cell whose output answers an exercise's question
ANSWER_SUMMARY = "This build's run and checks (open it after you have made your prediction)"


def fold_answers(soup) -> None:
    """Fold each run of consecutive cells tagged ``answer`` (input and output) into one closed fold:
    an exercise's task and command stay visible, the output that answers it is one click away."""
    for notebook in soup.select("div.jp-Notebook"):
        fold = None
        for cell in [c for c in notebook.children if getattr(c, "name", None)]:
            if f"celltag_{ANSWER_TAG}" not in (cell.get("class") or []):
                fold = None
                continue
            if fold is None:
                fold = soup.new_tag("details", attrs={"class": "amp-details amp-fold amp-fold--answer"})
                summary = soup.new_tag("summary")
                summary.string = ANSWER_SUMMARY
                cell.insert_before(fold)
                fold.append(summary)
            fold.append(cell.extract())


# A listing longer than this many lines is folded under its file or object name (the way a table
# longer than MAX_OPEN_ROWS is): a 100-line class before the first pattern buried the lesson.
MAX_OPEN_LISTING_LINES = 40


def fold_long_listings(soup) -> None:
    """Fold each long ``show_source`` listing (not one inside a pattern's tabs, where the full
    program is the tab's point) under a summary naming it and its length."""
    for listing in soup.select("div.amp-code"):
        if listing.find_parent(class_="amp-tabs") or listing.find_parent("details"):
            continue
        pre = listing.find("pre")
        lines = len(pre.get_text().rstrip("\n").splitlines()) if pre is not None else 0
        if lines <= MAX_OPEN_LISTING_LINES:
            continue
        title = listing.find(class_="filename")
        fold = soup.new_tag("details", attrs={"class": "amp-details amp-fold amp-fold--listing"})
        summary = soup.new_tag("summary")
        summary.string = f"{title.get_text(strip=True) if title else 'Source'} ({lines} lines)"
        listing.wrap(fold)
        fold.insert(0, summary)


def _only_wrappers_between(a, b) -> bool:
    """Whether nothing a reader sees lies between elements ``a`` and ``b`` (document order):
    only the notebook's wrapper divs, folds of plumbing code and whitespace."""
    inside = {id(d) for d in a.descendants}
    for el in a.next_elements:
        if el is b:
            return True
        if id(el) in inside:
            continue
        if isinstance(el, str):
            if el.strip() and not el.find_parent("details", class_="amp-fold"):
                return False
        elif el.name not in ("div", "details", "summary") and not el.find_parent("details", class_="amp-fold"):
            return False
    return False


def group_claims(soup) -> None:
    """Adjacent checked sentences become one list under one heading (its verdict, said once),
    instead of a tinted box each; a sentence whose verdict differs keeps its own."""
    claims = soup.select("p.amp-claim")
    runs: list[list] = []
    for c in claims:
        if runs and _only_wrappers_between(runs[-1][-1], c):
            runs[-1].append(c)
        else:
            runs.append([c])
    for run in runs:
        if len(run) < 2:
            continue
        verdicts = [v.get_text(strip=True) if (v := c.find("span", class_="amp-claim-verdict")) else "" for c in run]
        common = max(set(verdicts), key=verdicts.count)
        machine = all("amp-claim--machine" in c.get("class", []) for c in run)  # facts, not checks
        group = soup.new_tag("div", attrs={"class": "amp-claims amp-claims--machine" if machine else "amp-claims"})
        title = soup.new_tag("p", attrs={"class": "amp-claims__title"})
        title.string = common[:1].upper() + common[1:] if common else "Checked"
        run[0].insert_before(group)
        group.append(title)
        emptied = []
        for c, verdict in zip(run, verdicts):
            holder = c.find_parent("div", class_="jp-Cell")
            group.append(c.extract())
            if verdict == common and (v := c.find("span", class_="amp-claim-verdict")):
                v.decompose()
            if holder is not None:
                emptied.append(holder)
        for holder in emptied:  # a cell left with no visible content is removed whole
            outer = holder
            while outer.parent is not None and outer.parent.name == "div" and "jp-Cell" in outer.parent.get("class", []):
                outer = outer.parent
            if outer.parent is not None and not outer.get_text(strip=True) and not outer.find(["img", "table", "pre"]) \
                    and group not in outer.descendants:
                outer.decompose()


def exclude_from_search(soup) -> None:
    """Search indexes prose and headings: tables, figures and program output are left out (their
    cells ran together into noise), and so is each heading's permalink mark."""
    for el in soup.select("div.amp-table-scroll, div.amp-stamp, div.jp-OutputArea-output pre, pre.amp-output, "
                          "a.anchor-link, a.headerlink, details.amp-fold"):
        el["data-search-exclude"] = ""


# ---- the lesson first: summary and key results on the first screen, presentation code folded -----
# A chapter's top is its summary (``page.summary``: ``<div class="... amp-summary">``) and its "In this
# build" box, which the chapter's last cell makes (the values exist only then).

def lesson_first(soup) -> None:
    """Move the chapter's "In this build" box (``page.summary.in_this_build``, made by its last
    cell) under its summary, and drop the cell it leaves empty."""
    from amp_docs_lib.page.summary import BOX_KIND, SUMMARY_CLASS

    box = soup.select_one(f"figure.amp-{BOX_KIND}")
    summary = soup.select_one(f"div.{SUMMARY_CLASS}")
    if box is None or summary is None:
        return
    holder = box.find_parent("div", class_="jp-Cell")
    while holder is not None and holder.parent is not None and "jp-Cell" in (holder.parent.get("class") or []):
        holder = holder.parent
    summary.insert_after(box.extract())
    if holder is not None and not any(o.get_text(strip=True) or o.find(["img", "table", "figure"])
                                      for o in holder.select("div.jp-OutputArea-output")):
        holder.decompose()  # nothing of it is left to read (its input is the box's hidden code)


# Calls whose only job is to show a result: a cell made of nothing else is presentation, not lesson.
PRESENTATION_CALLS = frozenset({"display", "show_table", "show_figure", "show_cards", "publish", "Markdown",
                                "claim", "on_this_machine", "check_statements", "in_this_build", "print"})
MIN_FOLDED_PRESENTATION_LINES = 3  # a shorter cell takes no more room than the fold's summary line


def _outer_call(stmt) -> str | None:
    import ast

    value = stmt.value if isinstance(stmt, (ast.Expr, ast.Assign, ast.AnnAssign)) else None
    if not isinstance(value, ast.Call):
        return None
    f = value.func
    return f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None


TABLE_BUILDERS = frozenset({"DataFrame", "table_from_rows"})  # a table typed out as data, for show_table


def _table_literal(stmt) -> bool:
    """``name = pd.DataFrame([...])`` / ``table_from_rows([...])`` or a literal: data the page shows."""
    import ast

    if not isinstance(stmt, (ast.Assign, ast.AnnAssign)):
        return False
    value = stmt.value
    return isinstance(value, (ast.List, ast.Dict, ast.Tuple, ast.Constant)) or _outer_call(stmt) in TABLE_BUILDERS


def presentation_only(code: str) -> bool:
    """Whether a cell only assembles what the page shows: every statement a call that shows a result
    (``show_table(...)``, ``display(...)``, ``publish(...)``) or a table typed out as data for one
    (``decision = pd.DataFrame([...])``), with at least one such call."""
    import ast

    try:
        body = ast.parse(code).body
    except SyntaxError:
        return False
    shows = [_outer_call(s) in PRESENTATION_CALLS for s in body]
    return any(shows) and all(shown or _table_literal(s) for shown, s in zip(shows, body))


def fold_setup(soup) -> None:
    """Fold a chapter's first code cell when it begins with imports: its setup (imports, the profile,
    the device, a helper), 10 to 25 lines that filled the first screen of every chapter."""
    import ast

    first = soup.select_one("div.jp-CodeCell div.jp-Cell-inputWrapper")
    code = _code_of(first) if first is not None else None
    if code is None or first.find_parent("details"):
        return
    try:
        body = ast.parse(code).body
    except SyntaxError:
        return
    if not body or not isinstance(body[0], (ast.Import, ast.ImportFrom)):
        return
    lines = len(code.strip().splitlines())
    fold = soup.new_tag("details", attrs={"class": "amp-details amp-fold amp-fold--setup"})
    summary = soup.new_tag("summary")
    summary.string = f"Imports and setup ({lines} line{'s' if lines != 1 else ''})"
    first.wrap(fold)
    fold.insert(0, summary)


def fold_presentation(soup) -> None:
    """Fold the input of cells that only assemble what the page shows (a table's DataFrame, a
    figure's call, a list of checks), three lines or longer; their output stays open."""
    for wrapper in soup.select("div.jp-Cell-inputWrapper"):
        cell = wrapper.find_parent("div", class_="jp-CodeCell")
        code = _code_of(wrapper)
        if cell is None or code is None or wrapper.find_parent("details"):
            continue
        lines = len(code.strip().splitlines())
        if lines < MIN_FOLDED_PRESENTATION_LINES or not presentation_only(code):
            continue
        fold = soup.new_tag("details", attrs={"class": "amp-details amp-fold amp-fold--presentation"})
        summary = soup.new_tag("summary")
        summary.string = f"Code that shows the result ({lines} lines)"
        wrapper.wrap(fold)
        fold.insert(0, summary)


# ---- the home page's first screen: what the site shows ------------------------------------------
SHOWCASE_MARKER = "<!-- amp-docs:in-this-build -->"
SHOWCASE_CHAPTERS = ("formats", "training_regimes")  # the first chapter, and the one experiment all of it leads to


def showcase_html(site: Path, chapters: tuple[str, ...] = SHOWCASE_CHAPTERS, page_url: str = "") -> str:
    """What the site shows, for the home page: each named chapter's "In this build" box as its built
    page shows it, titled with a link to the chapter and stamped with its provenance card's summary,
    and the first checked sentence of the first of them as a reader meets it there. Chapters not
    built (or without a box) are left out."""
    from bs4 import BeautifulSoup

    from amp_docs_lib.page.summary import BOX_KIND

    parts, stamps, claim_html = [], [], ""
    for name in chapters:
        page = site / "chapters" / name / "index.html"
        if not page.is_file():
            continue
        soup = BeautifulSoup(page.read_text(encoding="utf-8"), "html.parser")
        box, title = soup.select_one(f"figure.amp-{BOX_KIND}"), soup.select_one(".md-content h1")
        if box is None or title is None:
            continue
        href = f"{page_url}chapters/{name}/"
        chapter = title.get_text(" ", strip=True).rstrip("¶").strip()
        caption = box.find("figcaption")
        if caption is not None:
            caption.clear()
            link = soup.new_tag("a", href=href)
            link.string = chapter
            caption.append("In this build: ")
            caption.append(link)
        card = soup.select_one("details.amp-provenance summary")
        for own in box.select("div.amp-stamp"):
            own.decompose()
        stamps.append(card.get_text(" ", strip=True).removeprefix("Measured on").strip() if card is not None else "")
        parts.append(str(box))
        first = soup.select_one("p.amp-claim--holds")
        if not claim_html and first is not None:
            claim_html = (f'<p class="amp-showcase__claim-intro">A sentence checked by this build, as '
                          f'<a href="{href}">{_html.escape(chapter)}</a> shows it (the build fails if it stops '
                          f'holding):</p><div class="amp-claims">{first}</div>')
    if not parts:
        return ""
    # One stamp for boxes measured on one machine (the page says it once, as a chapter's card does).
    said = [f'<div class="amp-stamp amp-stamp--measured">measured on {_html.escape(s)}</div>' for s in dict.fromkeys(stamps) if s]
    if len(said) == 1:
        return f'<div class="amp-showcase">{"".join(parts)}{said[0]}{claim_html}</div>'
    boxes = "".join(p.replace("</figure>", f'<div class="amp-stamp amp-stamp--measured">measured on {_html.escape(s)}</div></figure>')
                    if s else p for p, s in zip(parts, stamps))
    return f'<div class="amp-showcase">{boxes}{claim_html}</div>'


def fill_showcase(site: Path) -> None:
    """Replace ``SHOWCASE_MARKER`` in the built home page with ``showcase_html`` (after every
    chapter page is written)."""
    home = site / "index.html"
    if not home.is_file():
        return
    text = home.read_text(encoding="utf-8")
    if SHOWCASE_MARKER in text:
        home.write_text(text.replace(SHOWCASE_MARKER, showcase_html(site)), encoding="utf-8")
