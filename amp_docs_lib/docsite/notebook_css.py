"""One shared notebook stylesheet instead of the JupyterLab CSS inlined in every notebook page.

mkdocs-jupyter inlines 575 KB of CSS per page; pages link one file instead, written once after the
build, pruned to the classes the pages use.
"""

from __future__ import annotations

import re
from pathlib import Path

from amp_docs_lib.docsite.page_assets import site_texts_reading_css, without_unused_custom_properties

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
        rules.append((css[i:brace].strip(), css[brace + 1 : j - 1]))
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
            kept = [
                s
                for s in prelude.split(",")
                if set(_CSS_CLASS.findall(s)) <= used and not re.search(r"\S\s*:root", s.strip())
            ]
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
    kept = (
        output[: first.start()]
        + f'<link rel="stylesheet" href="{href}">'
        + _STYLE.sub("", output[first.start() : last.end()])
        + output[last.end() :]
    )
    return _LIST_STYLE.sub("", kept)
