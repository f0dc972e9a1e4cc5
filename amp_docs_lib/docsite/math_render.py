"""Math rendered by the build, so that no page loads a math engine.

The TeX of a built page (``\\(...\\)`` and ``\\[...\\]`` in the spans ``pymdownx.arithmatex`` writes
for the Markdown of every page, chapters included; ``$...$`` and ``$$...$$`` in the HTML a chapter's code
prints, which Markdown leaves alone) is turned
into HTML by KaTeX, vendored under ``docsite/katex/`` (``scripts/vendor_katex.sh``) and run in the
QuickJS engine of the ``quickjs`` wheel (a dependency of the ``docs`` extra, so a fresh venv needs no
system package); where that is not installed, once per page with the machine's ``node``. A page with math then links KaTeX's stylesheet (served from
``docs/assets/katex/`` with its WOFF2 fonts; the browser fetches only the fonts a page's glyphs use);
a page without math links nothing.
"""

from __future__ import annotations

import functools
import html
import json
import re
import shutil
import subprocess
import threading
from pathlib import Path

KATEX_DIR = Path(__file__).with_name("katex")
RENDERER = KATEX_DIR / "render.cjs"
KATEX_CSS = "assets/katex/katex.min.css"  # under docs_dir (vendored), so under the site

# Code, scripts and styles are not prose: TeX delimiters there are literal.
_NOT_PROSE = re.compile(r"<(pre|code|script|style|textarea)\b.*?</\1>", re.S | re.I)
_TEX = re.compile(
    r'<(?P<tag>span|div) class="arithmatex">\\(?P<open>[(\[])(?P<arith>.*?)\\[)\]]</(?P=tag)>'
    r"|\$\$(?P<display>[^$<]+?)\$\$"
    # The inline rule MathJax applied to these pages: no space inside the dollars, no word after,
    # so "$5 and $10" stays text.
    r"|(?<![\\$\w])\$(?P<inline>[^$\s<][^$<\n]*?)(?<!\s)\$(?!\w)",
    re.S,
)


class MathError(RuntimeError):
    """TeX on a page that KaTeX cannot render (the message names the page and the TeX)."""


def _formula(m: re.Match) -> tuple[str, bool]:
    """The TeX of one match (HTML entities decoded) and whether it is displayed."""
    if m.group("arith") is not None:
        return html.unescape(m.group("arith")), m.group("open") == "["
    if m.group("display") is not None:
        return html.unescape(m.group("display")), True
    return html.unescape(m.group("inline")), False


def _prose_parts(body: str):
    """``(is_prose, text)`` pieces of ``body`` in order."""
    last = 0
    for m in _NOT_PROSE.finditer(body):
        yield True, body[last : m.start()]
        yield False, m.group(0)
        last = m.end()
    yield True, body[last:]


def _content_start(output: str) -> int:
    """Where the page's content starts (Material's ``md-content``); the head and navigation hold no math."""
    start = output.find('class="md-content"')
    return start if start >= 0 else 0


def formulas(output: str) -> list[tuple[str, bool]]:
    """Every formula of a page's prose, in order: ``(tex, displayed)``."""
    body = output[_content_start(output) :]
    return [_formula(m) for prose, text in _prose_parts(body) if prose for m in _TEX.finditer(text)]


# The same options as render.cjs: HTML for the eye and KaTeX's hidden MathML copy for screen readers.
_QUICKJS_RENDER = """(function (tex, displayMode) {
  try {
    return JSON.stringify({html: katex.renderToString(tex, {displayMode: displayMode, output: "htmlAndMathml",
                                                           throwOnError: true})});
  } catch (e) { return JSON.stringify({error: String(e.message || e)}); }
})"""


@functools.lru_cache(maxsize=1)
def _quickjs_renderer():
    """KaTeX loaded once per process into a QuickJS context, or None where ``quickjs`` is not installed."""
    try:
        import quickjs
    except ImportError:
        return None
    ctx = quickjs.Context()
    ctx.eval("var module = {exports: {}}; var exports = module.exports;")  # KaTeX's UMD build exports here
    ctx.eval((KATEX_DIR / "katex.min.js").read_text(encoding="utf-8"))
    ctx.eval("var katex = module.exports.default || module.exports;")
    return threading.Lock(), ctx.eval(_QUICKJS_RENDER)


def render_tex(items: list[tuple[str, bool]]) -> list[dict]:
    """KaTeX's answer for each ``(tex, displayed)``: ``{"html": ...}`` or ``{"error": ...}`` (QuickJS in
    this process, or one node run where the ``quickjs`` package is missing)."""
    quickjs_renderer = _quickjs_renderer()
    if quickjs_renderer is not None:
        lock, render = quickjs_renderer
        with lock:  # one QuickJS context is not to be entered from two threads at once
            return [json.loads(render(tex, displayed)) for tex, displayed in items]
    node = shutil.which("node")
    if node is None:
        raise MathError(
            "rendering the site's math needs the quickjs package (pip install 'amp-docs-lib[docs]') "
            "or Node.js (`node` on PATH)"
        )
    done = subprocess.run(
        [node, str(RENDERER)], input=json.dumps(items), capture_output=True, text=True, encoding="utf-8", check=False
    )
    if done.returncode != 0:
        raise MathError(f"KaTeX's renderer failed ({RENDERER}): {done.stderr.strip()}")
    return json.loads(done.stdout)


def stylesheet_link(page_url: str) -> str:
    """The ``<link>`` to KaTeX's stylesheet from a page at ``page_url`` (relative, so a site works from any path)."""
    return f'<link rel="stylesheet" href="{"../" * page_url.count("/")}{KATEX_CSS}">'


def render_math(output: str, page_url: str) -> str:
    """The page with its TeX rendered to KaTeX HTML and, if it has any, KaTeX's stylesheet linked.
    Raises ``MathError`` for TeX KaTeX rejects."""
    found = formulas(output)
    if not found:
        return output
    unique = list(dict.fromkeys(found))
    rendered = dict(zip(unique, render_tex(unique), strict=True))
    errors = [
        f"{'$$' if d else '$'}{tex}{'$$' if d else '$'}: {r['error']}"
        for (tex, d), r in rendered.items()
        if "error" in r
    ]
    if errors:
        raise MathError(f"page {page_url or '/'}: KaTeX cannot render\n  " + "\n  ".join(errors))

    def sub(m: re.Match) -> str:
        return rendered[_formula(m)]["html"]

    start = _content_start(output)
    body = "".join(_TEX.sub(sub, text) if prose else text for prose, text in _prose_parts(output[start:]))
    head = output[:start].replace("</head>", stylesheet_link(page_url) + "</head>", 1)
    return head + body
