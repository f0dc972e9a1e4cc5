"""Data URIs on a page written out as files: figures (loaded lazily) and the CSV downloads of tables."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from amp_docs_lib.core.paths import TABLE_DOWNLOADS_DIR

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
