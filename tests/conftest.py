"""Shared fixtures: the repository root, chapter sources and a tiny mkdocs project."""

from __future__ import annotations

import fnmatch
import importlib.metadata
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

# Under pytest-xdist (the fast loop's -n 2) each worker gets one core: torch sizing its thread pool to
# every core in every worker oversubscribes them (the fast loop took 98 s with -n 2, 64 s without).
if "PYTEST_XDIST_WORKER" in os.environ:
    os.environ.setdefault("OMP_NUM_THREADS", "1")

from amp_docs_lib.core.packages import KNOWN_MODULES, OPTIONAL_PACKAGES, PACKAGES, hidden_packages, subprocess_env
from amp_docs_lib.core.paths import EXECUTED_DIR
from amp_docs_lib.docsite.wheel import WHEEL_PATTERN, notebook_requirements, wheel_dependencies

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


def write_mini_site(root: Path) -> Path:
    """A two-chapter mkdocs project using the amp-docs plugin, written into ``root``."""
    (root / "docs" / "chapters").mkdir(parents=True)
    (root / "docs" / "index.md").write_text("# Home\n\n<!-- amp-docs:chapters -->\n")
    (root / "mkdocs.yml").write_text(
        textwrap.dedent("""\
        site_name: mini
        nav:
          - index.md
          - chapters/a.md
          - chapters/b.md
        plugins:
          - amp-docs
        """)
    )
    for name in "ab":
        (root / "docs" / "chapters" / f"{name}.md").write_text(
            make_chapter(f"Chapter {name}", ("", f"print('chapter {name}')"))
        )
    return root


def with_wheel(root: Path, wheel: Path) -> Path:
    """``root`` with ``wheel`` where its build looks for the library's wheel, so the build makes none
    (the wheel depends on the library's sources only, not on the project)."""
    from amp_docs_lib.docsite.wheel import cached_wheel_path

    dest = cached_wheel_path(root)
    dest.parent.mkdir(parents=True)
    shutil.copy2(wheel, dest)
    return root


@pytest.fixture
def mini_site(tmp_path: Path, site_wheel: Path) -> Path:
    """A two-chapter mkdocs project using the amp-docs plugin (never built; the
    library's wheel, which every build puts in the downloads, already in its cache)."""
    return with_wheel(write_mini_site(tmp_path), site_wheel)


@pytest.fixture(scope="session")
def _mini_site_built(tmp_path_factory, site_wheel: Path) -> Path:
    """The unedited mini_site after one ``mkdocs build --strict``, made once per session (never edited)."""
    root = with_wheel(write_mini_site(tmp_path_factory.mktemp("mini-site-cache")), site_wheel)
    mkdocs_build(root)
    return root


@pytest.fixture(scope="session")
def _mini_site_executed(_mini_site_built: Path) -> Path:
    """The execution cache of one build of the unedited mini_site."""
    return _mini_site_built / EXECUTED_DIR


@pytest.fixture
def built_mini_site(tmp_path: Path, _mini_site_built: Path) -> Path:
    """A copy of mini_site as its first build leaves it (site, caches, build log and manifest), for
    tests whose first build is set-up: what they check starts from the second build."""
    return Path(shutil.copytree(_mini_site_built, tmp_path / "built", symlinks=True))


@pytest.fixture
def warm_mini_site(mini_site: Path, _mini_site_executed: Path) -> Path:
    """mini_site with chapters a and b already in its execution cache, as one build leaves them: for
    tests whose first build is set-up, it executes nothing (cache entries are keyed on content and on
    inputs relative to the project, so they hold in any folder)."""
    shutil.copytree(_mini_site_executed, mini_site / EXECUTED_DIR)
    return mini_site


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


def usable_built_site() -> Path | None:
    """A built site the tests may read as this checkout's: ``$AMP_DOCS_TEST_SITE``, else ``site/`` when
    ``amp-docs build --strict`` finds it up to date (the README's build: the same inputs, so the same
    pages); None otherwise (nothing is built)."""
    from amp_docs_lib.docsite.up_to_date import is_up_to_date

    if os.environ.get("AMP_DOCS_TEST_SITE"):
        return Path(os.environ["AMP_DOCS_TEST_SITE"]).resolve()
    if is_up_to_date(REPO_ROOT, ["--strict"]):
        return REPO_ROOT / "site"
    return None


@pytest.fixture(scope="session")
def site(tmp_path_factory) -> Path:
    """The real site: ``site/`` when ``amp-docs build --strict`` finds it up to date (as CI leaves it
    after the README's build), else built once per test session into a temporary directory.

    ``AMP_DOCS_TEST_SITE=site`` tests an already built site instead (no build, no check).
    """
    built = usable_built_site()
    if built is not None:
        return built
    out = tmp_path_factory.mktemp("site")
    mkdocs_build(REPO_ROOT, "-d", str(out))
    return out


@pytest.fixture(scope="session")
def served(site):
    """The built site over HTTP on a loopback port, for the whole session; its base URL."""
    from browser_visits import measure_pages

    with measure_pages.serve(site) as base:
        yield base


@pytest.fixture(scope="session")
def browser():
    """Headless system Chromium (Playwright), one for the session's browser tests."""
    playwright = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    from browser_visits import ARGS, CHROMIUM

    if CHROMIUM is None:
        pytest.skip("no system Chromium (apt-get install chromium)")
    with playwright.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


@pytest.fixture(scope="session")
def screenshots(tmp_path_factory) -> Path:
    """Where the browser tests save chapter screenshots (``$AMP_DOCS_SCREENSHOTS`` or a temporary folder)."""
    from browser_visits import screenshot_folder

    return screenshot_folder(tmp_path_factory)


EVERY_PAGE_TEST = "test_every_page_is_clean_in_the_browser"


@pytest.fixture(scope="session")
def visits(request, site, served, browser, screenshots):
    """Every page loaded once per screen for all browser tests of the session (``tests/browser_visits.py``)."""
    from browser_visits import Visits, seconds_report

    tests = {item.originalname for item in request.session.items}
    visits = Visits(browser, served, tests, screenshots)
    if EVERY_PAGE_TEST in tests:  # it visits every page at two screens: two at a time, in the order it asks
        from browser_visits import DESKTOP, PHONE
        from measure_pages import page_paths

        from amp_docs_lib.docsite.execute import resolve_jobs

        only = os.environ.get("AMP_DOCS_TEST_PAGES")
        paths = [p for p in page_paths(site) if only is None or p in only.split(",")]
        # Only the pages and screens it asks for: the workers are done when it is (no Chromium runs
        # behind the tests that come after it; the other screens' visits are made when asked).
        keys = [(p, screen) for p in paths for screen in (DESKTOP, PHONE)]
        visits.visit_ahead(keys, workers=min(2, resolve_jobs()))
    yield visits
    visits.close()
    if visits._done:
        report = seconds_report(visits)
        (screenshots / "visit-seconds.txt").write_text(report + "\n")
        print("\n" + report)


@pytest.fixture(scope="session")
def reading_map():
    """``literature.reading_map()``, every claim's verdict evaluated once per session for the tests
    that read its rows and cards (none changes it; each evaluation is seconds)."""
    from amp_docs_lib import literature

    return literature.reading_map()


def pytest_collection_modifyitems(config, items):
    """A test that builds a site (the ``site``, ``mini_site``, ``warm_mini_site`` or ``built_mini_site``
    fixture) is a ``site`` test."""
    for item in items:
        if {"site", "mini_site", "warm_mini_site", "built_mini_site"} & set(getattr(item, "fixturenames", ())):
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
def site_wheel(tmp_path_factory) -> Path:
    """The library's wheel, as the build puts it in the site's downloads: built once per test session."""
    from amp_docs_lib.docsite.wheel import build_wheel

    return build_wheel(tmp_path_factory.mktemp("wheel") / "dist")


@pytest.fixture(scope="session")
def reader_python(tmp_path_factory, site_wheel) -> Path:
    """A fresh virtual environment holding the library only as its wheel, as a reader installs it.

    It sees this interpreter's packages (``make_reader_venv``); which of them a program may use
    is decided per program by the tests, by hiding the rest.
    """
    return make_reader_venv(tmp_path_factory.mktemp("reader"), site_wheel)


def side_by_side(request) -> ThreadPoolExecutor:
    """Workers that run chapters or readers' programs (one process each) side by side, as many as the
    build executes chapters at once (``resolve_jobs``: one per core on a CPU, one on a CUDA machine, or
    ``$AMP_DOCS_JOBS``); work not yet started is cancelled when ``request``'s scope ends.

    A module submits its runs when its first test asks for them; each test then waits for its own
    result, so that both cores of a 2-core machine work while the suite waits on subprocesses."""
    from amp_docs_lib.docsite.execute import resolve_jobs

    pool = ThreadPoolExecutor(max_workers=resolve_jobs())
    request.addfinalizer(lambda: pool.shutdown(cancel_futures=True))
    return pool


def built_notebook(chapter: Path) -> Path:
    """Where the built site (``AMP_DOCS_TEST_SITE`` or ``site/``) offers the chapter's notebook."""
    site = Path(os.environ.get("AMP_DOCS_TEST_SITE") or REPO_ROOT / "site")
    return site / "downloads" / "chapters" / f"{chapter.stem}.ipynb"


def build_seconds(chapter: Path) -> float:
    """How long the build took to execute the chapter (its built notebook's ``amp_docs.seconds``); 0 if unknown."""
    try:
        meta = json.loads(built_notebook(chapter).read_text(encoding="utf-8"))["metadata"].get("amp_docs", {})
        return float(meta.get("seconds", 0))
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return 0.0


def selected_params(request, test_name: str, param: str) -> list:
    """The values of ``param`` of the ``test_name`` items this session runs (after ``-k``, ``-m``, ...)."""
    return [
        item.callspec.params[param]
        for item in request.session.items
        if item.originalname == test_name and param in getattr(getattr(item, "callspec", None), "params", {})
    ]


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


def run_example_edited(tmp_path, example: str, replace=None) -> dict:
    """Run ``examples/<example>`` as ``__main__`` (output swallowed) and return its globals; with
    ``replace=(old, new)``, a copy with that text replaced (``old`` must occur), to try a false variant."""
    import io
    import runpy
    from contextlib import redirect_stdout

    from amp_docs_lib.page.snippets import example_path

    path = example_path(example)
    if replace is not None:
        text = path.read_text()
        assert replace[0] in text
        path = tmp_path / path.name
        path.write_text(text.replace(*replace))
    with redirect_stdout(io.StringIO()):
        return runpy.run_path(str(path), run_name="__main__")


def notebook_hidden() -> tuple[str, ...]:
    """Every listed package the download bar's install line (the wheel and its notebook extra) does not
    bring: what a reader's venv lacks, hidden when the downloaded notebooks run."""
    return tuple(sorted(set(KNOWN_MODULES) - allowed_modules([WHEEL_PATTERN, *notebook_requirements()])))


_USES = re.compile(r"requires:pkg:(\w+)|^\s*(?:import|from)\s+(\w+)", re.M)


def optional_packages_used(chapter: Path) -> set[str]:
    """The optional packages a chapter gates a cell on or imports."""
    return {a or b for a, b in _USES.findall(chapter.read_text(encoding="utf-8"))} & set(OPTIONAL_PACKAGES)


OPTIONAL_CHAPTERS = [c for c in CHAPTERS if optional_packages_used(c)]
