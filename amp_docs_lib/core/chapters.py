"""Chapter sources: reading one as a notebook, its stable id, its headings and their anchors.

Used by the executor, the claim lint and the literature chapter's reading map; the one heading
parser of the project (it skips code fences, whose ``#`` lines are comments, not headings).
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
from pathlib import Path

from amp_docs_lib.core.paths import CHAPTERS_DIR

_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")


def read_chapter(path: str | os.PathLike):
    """Parse a jupytext Markdown chapter into a notebook (no execution)."""
    path = Path(path)
    if path.suffix != ".md":
        raise ValueError(f"chapters are jupytext Markdown files (.md), got {path.name!r}")
    return parse_chapter(path.read_text(encoding="utf-8"), path)


def parse_chapter(text: str, path: str | os.PathLike = "<chapter>"):
    """Parse the text of a jupytext Markdown chapter (``path`` names it in errors) into a notebook."""
    import jupytext

    nb = jupytext.reads(text, fmt="md")
    spec = nb.metadata.get("kernelspec", {})
    if spec.get("language") != "python":
        raise ValueError(
            f"{path}: not an executable chapter (needs a python kernelspec in its "
            f"jupytext front matter), kernelspec={spec!r}"
        )
    return nb


def chapter_id_for(path: str | os.PathLike) -> str:
    """Stable chapter name from a path: ``docs/chapters/formats.md`` -> ``formats``."""
    parts = Path(path).resolve().parts
    if "chapters" in parts:
        rel = Path(*parts[len(parts) - parts[::-1].index("chapters") :])
    else:
        rel = Path(parts[-1])
    return rel.with_suffix("").as_posix()


def _chapter_path(name: str) -> Path:
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


def _read_for_headings(path: Path) -> str:
    """A chapter's text, read for its headings only.

    In a chapter's kernel the build records what it reads (``docsite/read_recorder.py``, present
    in ``sys.modules`` under ``core.packages.READ_RECORDER_MODULE``); the read is declared as of the headings, so the reading
    chapter's cache key covers the headings and not the prose: a prose edit elsewhere does not
    re-execute it.
    """
    from amp_docs_lib.core.packages import READ_RECORDER_MODULE

    recorder = sys.modules.get(READ_RECORDER_MODULE)
    with recorder.derived("headings") if recorder is not None else contextlib.nullcontext():
        return path.read_text(encoding="utf-8")


def chapter_anchors(chapter: str | os.PathLike) -> set[str]:
    """Anchors of every heading of a chapter source (a path, or one relative to ``docs/``)."""
    path = Path(chapter)
    if not path.is_absolute():
        path = CHAPTERS_DIR.parent / path
    if not path.exists():
        raise ValueError(f"no chapter at {path}")
    return {heading_anchor(text) for _, text in headings(_read_for_headings(path))}


def heading_for_anchor(name: str, anchor: str) -> str:
    """The text of chapter ``name``'s heading whose anchor is ``anchor`` (the anchor itself if none)."""
    for _, text in headings(_read_for_headings(_chapter_path(name))):
        if heading_anchor(text) == anchor:
            return text.replace("`", "")
    return anchor
