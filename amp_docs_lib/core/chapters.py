"""Chapter sources: reading one as a notebook, its stable id, its headings and their anchors.

Used by the executor, the claim lint and the literature chapter's reading map; the one heading
parser of the project (it skips code fences, whose ``#`` lines are comments, not headings).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from amp_docs_lib.core.paths import CHAPTERS_DIR

_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")


def read_chapter(path: str | os.PathLike):
    """Parse a jupytext Markdown chapter into a notebook (no execution)."""
    import jupytext

    path = Path(path)
    if path.suffix != ".md":
        raise ValueError(f"chapters are jupytext Markdown files (.md), got {path.name!r}")
    nb = jupytext.read(path)
    spec = nb.metadata.get("kernelspec", {})
    if spec.get("language") != "python":
        raise ValueError(f"{path}: not an executable chapter (needs a python kernelspec in its "
                         f"jupytext front matter), kernelspec={spec!r}")
    return nb


def chapter_id_for(path: str | os.PathLike) -> str:
    """Stable chapter name from a path: ``docs/chapters/formats.md`` -> ``formats``."""
    parts = Path(path).resolve().parts
    if "chapters" in parts:
        rel = Path(*parts[len(parts) - parts[::-1].index("chapters"):])
    else:
        rel = Path(parts[-1])
    return rel.with_suffix("").as_posix()


def chapter_path(name: str) -> Path:
    """The source of chapter ``name`` (``formats`` -> ``docs/chapters/formats.md``); ValueError if none."""
    path = CHAPTERS_DIR / f"{name}.md"
    if not path.is_file():
        valid = sorted(p.stem for p in CHAPTERS_DIR.glob("*.md"))
        raise ValueError(f"no chapter named {name!r}; chapters: {', '.join(valid)}")
    return path


def heading_anchor(heading: str) -> str:
    """The anchor mkdocs' toc extension gives a Markdown heading (its own ``slugify``)."""
    from markdown.extensions.toc import slugify

    text = re.sub(r"`([^`]*)`", r"\1", heading)  # code spans render as their text
    return slugify(text, "-")


def headings(source: str) -> list[tuple[int, str]]:
    """(level, text) of every Markdown heading of a chapter's text, outside code fences."""
    out, fence = [], False
    for line in source.splitlines():
        if line.lstrip().startswith("```"):
            fence = not fence
            continue
        m = None if fence else _HEADING.match(line)
        if m:
            out.append((len(m.group(1)), m.group(2)))
    return out


def chapter_anchors(chapter: str | os.PathLike) -> set[str]:
    """Anchors of every heading of a chapter source (a path, or one relative to ``docs/``)."""
    path = Path(chapter)
    if not path.is_absolute():
        path = CHAPTERS_DIR.parent / path
    if not path.exists():
        raise ValueError(f"no chapter at {path}")
    return {heading_anchor(text) for _, text in headings(path.read_text(encoding="utf-8"))}


def heading_for_anchor(name: str, anchor: str) -> str:
    """The text of chapter ``name``'s heading whose anchor is ``anchor`` (the anchor itself if none)."""
    for _, text in headings(chapter_path(name).read_text(encoding="utf-8")):
        if heading_anchor(text) == anchor:
            return text.replace("`", "")
    return anchor
