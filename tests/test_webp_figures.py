"""Issue 35/36: figures are sent as lossless WebP (the pixels of the 256-colour PNG in fewer bytes), the
site writes them to files like any image, and the page weight counts each palette and both copies."""

from __future__ import annotations

import base64
import gzip
import io
import re

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from PIL import Image, features  # noqa: E402
from test_math_render import _weights_script  # noqa: E402  (loads scripts/page_weights.py)

from amp_docs_lib.docsite import page_files  # noqa: E402
from amp_docs_lib.page.figures import show_figure  # noqa: E402

pytestmark = pytest.mark.skipif(not features.check("webp"), reason="this Pillow has no WebP codec")
_RENDERINGS = re.compile(r'class="amp-fig amp-fig--(light|dark)" src="data:(image/[a-z]+);base64,([^"]+)"')


def _figure():
    rng = np.random.default_rng(0)
    fig, (a, b) = plt.subplots(1, 2, figsize=(8, 3))
    for i in range(4):
        a.plot(np.cumsum(rng.normal(size=200)), label=f"seed {i}")
    a.legend()
    x = np.arange(200)
    b.fill_between(x, np.sin(x / 20) - 0.3, np.sin(x / 20) + 0.3, alpha=0.3)
    b.plot(x, np.sin(x / 20), color="black")
    b.set_title("band")
    return fig


def _png_of_same_pixels(rgb: Image.Image) -> int:
    """Bytes of the PNG the site sent before: the same 256-colour pixels, as an optimised palette PNG."""
    indexed = rgb.quantize(colors=256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
    assert indexed.convert("RGB").tobytes() == rgb.tobytes(), "not the same pixels"
    out = io.BytesIO()
    indexed.save(out, format="PNG", optimize=True)
    return len(out.getvalue())


def test_both_renderings_are_lossless_256_colour_webp_smaller_than_the_png():
    page = show_figure(_figure(), "two panels")._repr_html_()
    found = _RENDERINGS.findall(page)
    assert [(kind, mime) for kind, mime, _ in found] == [("light", "image/webp"), ("dark", "image/webp")]
    for kind, _, b64 in found:
        data = base64.b64decode(b64)
        image = Image.open(io.BytesIO(data))
        assert image.format == "WEBP"
        rgb = image.convert("RGB")
        # Lossless and still quantized: at most 256 colours (lossy WebP smears edges into thousands).
        assert len(rgb.getcolors(1 << 20)) <= 256, kind
        assert len(data) < 0.9 * _png_of_same_pixels(rgb), kind


def test_a_webp_data_uri_becomes_a_lazy_file_of_the_site(tmp_path):
    webp = io.BytesIO()
    Image.new("RGB", (8, 8), (31, 119, 180)).save(webp, format="WEBP", lossless=True)
    uri = base64.b64encode(webp.getvalue()).decode()
    page = f'<html><body><img class="amp-fig amp-fig--light" src="data:image/webp;base64,{uri}"/></body></html>'
    out = page_files.images_as_files(page, "chapters/x/", tmp_path)
    (written,) = (tmp_path / page_files.FIGURES_DIR).iterdir()
    assert written.suffix == ".webp" and written.read_bytes() == webp.getvalue()
    assert (
        "data:" not in out and 'loading="lazy"' in out and f'src="../../{page_files.FIGURES_DIR}/{written.name}"' in out
    )


def test_the_weight_counts_each_palette_and_both_copies_of_every_figure(tmp_path):
    weights = _weights_script()
    files = {
        "l1.webp": b"RIFF light one" * 100,
        "d1.webp": b"RIFF dark one" * 300,
        "l2.webp": b"RIFF light two" * 50,
        "d2.webp": b"RIFF dark two" * 70,
        "logo.svg": b"<svg>" + b"<g/>" * 400 + b"</svg>",
    }
    (tmp_path / "assets").mkdir()
    for name, data in files.items():
        (tmp_path / "assets" / name).write_bytes(data)
    body = "".join(
        f'<a class="amp-lightbox"><img class="amp-fig amp-fig--light" src="../assets/l{i}.webp">'
        f'<img class="amp-fig amp-fig--dark" src="../assets/d{i}.webp"></a>'
        for i in (1, 2)
    )
    page = f'<html><body><img src="../assets/logo.svg">{body}</body></html>'
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / "index.html").write_text(page)
    w = weights.page_weight(tmp_path, tmp_path / "p" / "index.html")
    html, svg = (
        len(gzip.compress(page.encode(), compresslevel=6)),
        len(gzip.compress(files["logo.svg"], compresslevel=6)),
    )
    size = {name: len(data) for name, data in files.items()}
    assert w.first_view == html and w.n_figures == 3
    assert w.light == html + svg + size["l1.webp"] + size["l2.webp"]
    assert w.dark == html + svg + size["d1.webp"] + size["d2.webp"]
    assert w.total == html + svg + sum(size[n] for n in ("l1.webp", "d1.webp", "l2.webp", "d2.webp"))


@pytest.mark.site
def test_the_downloaded_notebook_embeds_both_renderings_of_every_figure_the_page_shows(site):
    """The page loads its figures from files; the downloaded notebook must still carry them, as images
    that decode, since it is read away from the site."""
    from amp_docs_lib.core.paths import CHAPTER_DOWNLOADS_DIR

    checked = 0
    for page in sorted(site.glob("chapters/*/index.html")):
        # A split chapter's figures are shown on its pages together (docsite/subpages.py).
        shown = sum(
            len(re.findall(r'class="amp-fig amp-fig--(?:light|dark)"', p.read_text(encoding="utf-8")))
            for p in page.parent.rglob("index.html")
        )
        if not shown:
            continue
        notebook = (site / CHAPTER_DOWNLOADS_DIR / f"{page.parent.name}.ipynb").read_text(encoding="utf-8")
        embedded = re.findall(r'amp-fig--(?:light|dark)\\" src=\\"data:(image/[a-z]+);base64,([^\\"]+)\\"', notebook)
        assert len(embedded) == shown, page.parent.name
        for mime, b64 in embedded:
            assert Image.open(io.BytesIO(base64.b64decode(b64))).format == mime.split("/")[1].upper()
        checked += 1
    assert checked, "no chapter shows a figure"
