"""Shared fixtures: the repository root, chapter sources and a tiny mkdocs project."""

from __future__ import annotations

import fnmatch
import importlib.metadata
import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from amp_docs_lib.core.packages import PACKAGES, hidden_packages, subprocess_env
from amp_docs_lib.docsite.wheel import WHEEL_PATTERN, wheel_dependencies

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
        fence = f"```python tags={tags}" if tags else "```python"
        parts.append(f"{fence}\n{code}\n```\n")
    return "\n".join(parts)


@pytest.fixture
def mini_site(tmp_path: Path):
    """A two-chapter mkdocs project using the amp-docs and mkdocs-jupyter plugins."""
    (tmp_path / "docs" / "chapters").mkdir(parents=True)
    (tmp_path / "docs" / "index.md").write_text("# Home\n\n<!-- amp-docs:chapters -->\n")
    (tmp_path / "mkdocs.yml").write_text(
        textwrap.dedent("""\
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
        """)
    )
    for name in "ab":
        (tmp_path / "docs" / "chapters" / f"{name}.md").write_text(
            make_chapter(f"Chapter {name}", ("", f"print('chapter {name}')"))
        )
    return tmp_path


def mkdocs_build(root: Path, *extra: str, check: bool = True, **kw) -> subprocess.CompletedProcess:
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", *extra],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        check=check,
        **kw,
    )


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


def _sys_path(python: Path | str, cwd: Path) -> list[str]:
    """``sys.path`` of ``python`` as a script started in ``cwd`` sees it (no ``PYTHONPATH``)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    out = subprocess.run(
        [str(python), "-c", "import json, sys; print(json.dumps(sys.path))"],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return json.loads(out)


def make_reader_venv(root: Path, wheel: Path) -> Path:
    """A fresh venv in ``root`` holding the library only as ``wheel``; returns its python.

    The venv has no system site packages: with them, a venv made from a venv sees the BASE
    Python's packages, not this interpreter's. Instead a ``.pth`` file lists the folders this
    interpreter imports packages from (torch is too large to install per test run) as plain
    paths, so the ``.pth`` files inside them (an editable install of amp_docs_lib) are not
    processed and the wheel stays the only amp_docs_lib. Works from a venv or a system Python.
    """
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True)
    python = venv / "bin" / "python"
    own = set(_sys_path(python, root))  # its standard library and site-packages
    # After the venv's own site-packages on sys.path, so the wheel's amp_docs_lib comes first.
    outer = [p for p in _sys_path(sys.executable, root) if p and p not in own and Path(p).is_dir()]
    site_packages = Path(
        subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    (site_packages / "_amp_docs_outer_packages.pth").write_text("".join(f"{p}\n" for p in outer))
    r = subprocess.run(
        [str(python), "-m", "pip", "install", "--no-deps", "--no-index", "--quiet", str(wheel)],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    where = subprocess.run(
        [str(python), "-c", "import amp_docs_lib, torch; print(amp_docs_lib.__file__)"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
    )
    assert where.returncode == 0, f"the reader venv cannot import amp_docs_lib and torch:\n{where.stderr[-3000:]}"
    assert Path(where.stdout.strip()).is_relative_to(venv), f"amp_docs_lib imported from {where.stdout}, not the wheel"
    return python


@pytest.fixture(scope="session")
def reader_python(tmp_path_factory) -> Path:
    """A fresh virtual environment holding the library only as its wheel, as a reader installs it.

    It sees this interpreter's packages (``make_reader_venv``); which of them a program may use
    is decided per program by the tests, by hiding the rest.
    """
    from amp_docs_lib.docsite.wheel import build_wheel

    root = tmp_path_factory.mktemp("reader")
    return make_reader_venv(root, build_wheel(root / "dist"))


def reader_env(hidden: tuple[str, ...] = ()) -> dict[str, str]:
    """The environment a reader's program runs in: cpu-small profile, ``hidden`` packages hidden."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "AMP_DOCS_HIDE_PACKAGES")}
    env.update(AMP_DOCS_PROFILE=os.environ.get("AMP_DOCS_PROFILE", "cpu-small"), MPLBACKEND="Agg")
    user_hidden = hidden_packages()  # packages this test run hides on purpose stay hidden
    if hidden or user_hidden:
        env["AMP_DOCS_HIDE_PACKAGES"] = ",".join(sorted(set(hidden) | set(user_hidden)))
    return subprocess_env(env)


def _canon(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def installed_closure(dists: set[str]) -> set[str]:
    """``dists`` and everything ``pip install`` of them brings (installed metadata, no extras), canonical names."""
    seen, todo = set(), [_canon(d) for d in dists]
    while todo:
        d = todo.pop()
        if d in seen:
            continue
        seen.add(d)
        try:
            reqs = importlib.metadata.requires(d) or []
        except importlib.metadata.PackageNotFoundError:
            continue
        for r in reqs:
            if "extra ==" in r.replace('"', "").replace("'", ""):
                continue
            todo.append(_canon(re.split(r"[<>=!~;\[ (]", r, maxsplit=1)[0]))
    return seen


def allowed_modules(install: list[str]) -> set[str]:
    """Listed packages (``PACKAGES``) a program may import after its install line: what it names,
    the wheel's dependencies if it names the wheel, and everything those bring."""
    dists = {a for a in install if not fnmatch.fnmatch(a, WHEEL_PATTERN)}
    if len(dists) < len(install):
        dists |= set(wheel_dependencies())
    closure = installed_closure(dists)
    return {p.module for p in PACKAGES if _canon(p.distribution) in closure}
