"""Math rendered by the build (KaTeX in QuickJS, or node), page-specific assets, and the page-weight script."""

from __future__ import annotations

import gzip
import importlib.util
import re
import sys

import pytest

from amp_docs_lib.docsite import math_render, page_assets
from conftest import REPO_ROOT

PAGE = '<html><head><title>t</title></head><body><div class="md-content">{}</div></body></html>'
ENGINE_SCRIPT = re.compile(r'<script\b[^>]*\bsrc="[^"]*(?:mathjax|katex|tex-chtml|tex-svg)[^"]*"', re.I)


def test_tex_in_prose_becomes_katex_markup_and_the_page_links_katex_css():
    page = PAGE.format(
        "<p>eps is $2^{-10}$ and $0 &lt; e$; costs $5 or more</p>"
        "<p>$$x = (-1)^s \\cdot 2^{e-b}$$</p>"
        '<span class="arithmatex">\\(\\sqrt{v}\\)</span>'
        "<pre><code>s = '$a$'</code></pre>"
    )
    out = math_render.render_math(page, "chapters/x/")
    assert out.count('<span class="katex">') == 4  # 2 inline, 1 arithmatex; the display one is inside katex-display
    assert out.count('class="katex-display"') == 1
    assert "$2^{-10}$" not in out and "\\sqrt{v}" not in out.split('<annotation encoding="application/x-tex">')[0]
    # "&lt;" was decoded before KaTeX saw it: the formula has a real less-than sign.
    assert '<annotation encoding="application/x-tex">0 &lt; e</annotation>' in out
    assert "costs $5 or more" in out and "<pre><code>s = '$a$'</code></pre>" in out
    assert '<link rel="stylesheet" href="../../assets/katex/katex.min.css"></head>' in out
    assert not ENGINE_SCRIPT.search(out)


def test_a_page_without_math_is_left_as_it_is():
    page = PAGE.format("<p>costs $5 or more, $ 3 $</p><code>$x$</code>")
    assert math_render.render_math(page, "") == page


def test_tex_katex_rejects_fails_the_page_naming_it():
    with pytest.raises(math_render.MathError, match=r"(?s)chapters/x/.*\\frac\{1"):
        math_render.render_math(PAGE.format("<p>half is $\\frac{1$ here</p>"), "chapters/x/")


def test_the_katex_stylesheet_names_only_served_fonts():
    css_file = REPO_ROOT / "docs" / math_render.KATEX_CSS
    fonts = re.findall(r"url\(([^)]+)\)", css_file.read_text())
    assert fonts and all(f.endswith(".woff2") for f in fonts)
    assert all((css_file.parent / f).is_file() for f in fonts)


def test_page_specific_assets_are_linked_only_where_used():
    head = (
        '<script src="../../assets/js/format-explorer.js"></script>'
        '<link rel="stylesheet" href="../../assets/_mkdocstrings.css">'
        '<script src="../../assets/js/reader.js"></script>'
    )
    plain = f'<html><head>{head}</head><body><div class="md-content"><p>text</p></div></body></html>'
    out = page_assets.without_unused_assets(plain)
    assert "format-explorer.js" not in out and "_mkdocstrings.css" not in out and "reader.js" in out
    explorer = plain.replace("<p>text</p>", '<div class="amp-format-explorer" data-value="0.1"></div>')
    assert "format-explorer.js" in page_assets.without_unused_assets(explorer)


def _weights_script():
    spec = importlib.util.spec_from_file_location("page_weights", REPO_ROOT / "scripts" / "page_weights.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["page_weights"] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_page_weights_count_linked_files_and_each_palette_s_rendering_of_each_figure(tmp_path):
    weights = _weights_script()
    (tmp_path / "assets").mkdir()
    css, js, light, dark = (b"a{color:red}" * 50, b"var x=1;" * 80, b"\x89PNG light" * 300, b"\x89PNG dark" * 900)
    for name, data in (("s.css", css), ("a.js", js), ("l.png", light), ("d.png", dark)):
        (tmp_path / "assets" / name).write_bytes(data)
    page = (
        '<html><head><link href="../assets/s.css" rel="stylesheet"><script src="../assets/a.js"></script>'
        '<script src="https://cdn.example/x.js"></script></head><body>'
        '<img class="amp-fig amp-fig--light" src="../assets/l.png">'
        '<img class="amp-fig amp-fig--dark" src="../assets/d.png"></body></html>'
    )
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / "index.html").write_text(page)

    def gz(b: bytes) -> int:
        return len(gzip.compress(b, compresslevel=6))

    w = weights.page_weight(tmp_path, tmp_path / "p" / "index.html")
    assert (w.page, w.html, w.css, w.js) == ("p", gz(page.encode()), gz(css), gz(js))
    # A reader fetches the rendering of their palette (the other is display:none and lazy); the
    # page's full weight counts both. Images are counted as sent: a host does not compress a PNG again.
    first_view = gz(page.encode()) + gz(css) + gz(js)
    assert (w.light, w.dark, w.n_figures) == (first_view + len(light), first_view + len(dark), 1)
    assert w.total == first_view + len(light) + len(dark)


def test_the_lightbox_is_never_linked_but_loaded_by_reader_js_on_demand():
    head = (
        '<link href="../../assets/stylesheets/glightbox.min.css" rel="stylesheet">'
        '<script src="../../assets/javascripts/glightbox.min.js"></script>'
    )
    page = f'<html><head>{head}</head><body><div class="md-content"><a class="glightbox"></a></div></body></html>'
    assert "glightbox.min" not in page_assets.without_unused_assets(page)
    reader = (REPO_ROOT / "docs" / "assets" / "js" / "reader.js").read_text()
    assert all(
        f"{kind}/{name}" in reader
        for kind, name in [("javascripts", "glightbox.min.js"), ("stylesheets", "glightbox.min.css")]
    )


def test_custom_properties_nothing_reads_are_dropped_with_what_only_they_read():
    css = (
        ".w{--a: 1px; --b: var(--c); --c: red; --unused: var(--only-unused); --only-unused: 2px;"
        ' --icon: url("data:image/svg+xml;base64,PHN2Zz4=")}'
        ".x{color: var(--b)} .y{margin: var(--a)}"
    )
    out = page_assets.without_unused_custom_properties(css)
    assert "--unused" not in out and "--only-unused" not in out and "--icon" not in out
    assert "--a: 1px" in out and "--b: var(--c)" in out and "--c: red" in out
    # A page's inline style reads a property too.
    kept = page_assets.without_unused_custom_properties(css, '<div style="border: var(--icon)">')
    assert '--icon: url("data:image/svg+xml;base64,PHN2Zz4=")' in kept


def test_the_math_renderer_is_a_build_input(tmp_path):
    from amp_docs_lib.docsite.hashing import tree_hash

    renderer = tmp_path / "docsite" / "katex" / math_render.RENDERER.name
    renderer.parent.mkdir(parents=True)
    renderer.write_text(math_render.RENDERER.read_text())
    before = tree_hash(tmp_path)
    renderer.write_text(math_render.RENDERER.read_text().replace('output: "htmlAndMathml"', 'output: "html"'))
    assert tree_hash(tmp_path) != before, "a changed math renderer would leave the site as it was"


def test_quickjs_and_node_render_the_same_html():
    # The build renders in QuickJS (a pip dependency); where it is missing, node runs the same KaTeX.
    import shutil

    import pytest

    from amp_docs_lib.docsite import math_render

    if shutil.which("node") is None:
        pytest.skip("node is not installed: nothing to compare QuickJS with")
    items = [(r"2^{-126}", False), (r"\frac{a}{b}", True), (r"\frac{a", False)]
    in_quickjs = math_render.render_tex(items)
    math_render._quickjs_renderer.cache_clear()
    try:
        real = math_render._quickjs_renderer
        math_render._quickjs_renderer = lambda: None
        in_node = math_render.render_tex(items)
    finally:
        math_render._quickjs_renderer = real
    assert in_quickjs == in_node
    assert "katex" in in_quickjs[0]["html"] and "error" in in_quickjs[2]


def test_without_either_engine_the_build_says_what_to_install(monkeypatch):
    import pytest

    from amp_docs_lib.docsite import math_render

    monkeypatch.setattr(math_render, "_quickjs_renderer", lambda: None)
    monkeypatch.setattr(math_render.shutil, "which", lambda name: None)
    with pytest.raises(math_render.MathError, match="quickjs package .* or Node.js"):
        math_render.render_tex([("x", False)])
