"""Shared fixtures: the repository root, chapter sources and a tiny mkdocs project."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = sorted((REPO_ROOT / "docs" / "chapters").glob("*.md"))

FRONT_MATTER = textwrap.dedent("""\
    ---
    jupyter:
      jupytext:
        text_representation:
          extension: .md
          format_name: markdown
      kernelspec:
        display_name: Python 3
        language: python
        name: python3
    ---
    """)


def make_chapter(title: str, *cells: tuple[str, str]) -> str:
    """A chapter source: front matter, a title, then (tags, code) cells."""
    parts = [FRONT_MATTER, f"# {title}\n"]
    for tags, code in cells:
        fence = f'```python tags={tags}' if tags else "```python"
        parts.append(f"{fence}\n{code}\n```\n")
    return "\n".join(parts)


@pytest.fixture
def mini_site(tmp_path: Path):
    """A two-chapter mkdocs project using the amp-docs and mkdocs-jupyter plugins."""
    (tmp_path / "docs" / "chapters").mkdir(parents=True)
    (tmp_path / "docs" / "index.md").write_text("# Home\n\n<!-- amp-docs:chapters -->\n")
    (tmp_path / "mkdocs.yml").write_text(textwrap.dedent("""\
        site_name: mini
        nav:
          - index.md
          - chapters/a.md
          - chapters/b.md
        plugins:
          - amp-docs
          - mkdocs-jupyter:
              include: ["*.ipynb"]
              execute: false
        """))
    for name in "ab":
        (tmp_path / "docs" / "chapters" / f"{name}.md").write_text(
            make_chapter(f"Chapter {name}", ("", f"print('chapter {name}')")))
    return tmp_path


def mkdocs_build(root: Path, *extra: str, check: bool = True, **kw) -> subprocess.CompletedProcess:
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", *extra],
                          cwd=root, env=env, capture_output=True, text=True, check=check, **kw)


@pytest.fixture(scope="session")
def site(tmp_path_factory) -> Path:
    """The real site, built once per test session into a temporary directory.

    Cheap when the execution cache is warm, as it is in CI right after the README's build.
    ``AMP_DOCS_TEST_SITE=site`` tests an already built site instead (no build).
    """
    if os.environ.get("AMP_DOCS_TEST_SITE"):
        return Path(os.environ["AMP_DOCS_TEST_SITE"]).resolve()
    out = tmp_path_factory.mktemp("site")
    mkdocs_build(REPO_ROOT, "-d", str(out))
    return out


def pytest_collection_modifyitems(config, items):
    """A test that builds a site (the ``site`` or ``mini_site`` fixture) is a ``site`` test."""
    for item in items:
        if {"site", "mini_site"} & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.site)
