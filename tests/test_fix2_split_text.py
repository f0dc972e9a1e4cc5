"""Split chapters gradscaler and performance as a reader meets them page by page (issue 36, second read):
every part is named, and every later part opens by linking what it builds on from earlier parts."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from amp_docs_lib.docsite.subpages import heading_id

CHAPTERS = Path(__file__).resolve().parents[1] / "docs" / "chapters"
_MARKER = re.compile(r"^<!-- amp-docs:subpage(?P<attrs>[^>]*)-->$", re.M)
_TITLE = re.compile(r'\btitle="([^"]+)"')
_FENCE = re.compile(r"^```.*?^```", re.M | re.S)
_HEADING = re.compile(r"^#{2,6}[ \t]+(.+?)[ \t#]*$", re.M)
_LOCAL_LINK = re.compile(r'\]\(#([^)\s]+)\)|href="#([^"]+)"')


def _parts(name: str) -> tuple[str, list[str], list[str]]:
    """The chapter's source, its markers' attributes, and its parts' texts (code fences removed)."""
    text = (CHAPTERS / f"{name}.md").read_text(encoding="utf-8")
    attrs = [m.group("attrs") for m in _MARKER.finditer(text)]
    return text, attrs, [_FENCE.sub("", part) for part in _MARKER.split(text)[::2]]


def _opening(part: str) -> str:
    """The part's opening: what stands between its marker and its first heading."""
    return _HEADING.split(part, maxsplit=1)[0].strip()


@pytest.mark.parametrize("name", ["gradscaler", "performance"])
def test_every_part_is_named(name):
    text, attrs, _ = _parts(name)
    assert attrs, "the chapter is split"
    assert all(_TITLE.search(a) for a in attrs), attrs
    assert re.search(r'<!-- amp-docs:first-part title="[^"]+" -->', text)


@pytest.mark.parametrize("name", ["gradscaler", "performance"])
def test_each_later_part_opens_with_links_to_what_it_builds_on(name):
    _, _, parts = _parts(name)
    for k in range(1, len(parts)):
        earlier = {heading_id(h) for p in parts[:k] for h in _HEADING.findall(p)}
        opening = _opening(parts[k])
        linked = {a or b for a, b in _LOCAL_LINK.findall(opening)}
        assert linked & earlier, (k, opening[:200])
