"""``amp-docs build``, ``execute`` and ``bench-build``: building the site."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import click


@click.command(
    "build",
    context_settings={"ignore_unknown_options": True, "allow_extra_args": True},
    short_help="build the site unless it is up to date",
)
@click.option("--force", is_flag=True, help="run mkdocs even if nothing changed")
@click.argument("mkdocs_args", nargs=-1, type=click.UNPROCESSED)
def build(force: bool, mkdocs_args: tuple[str, ...]) -> None:
    """Build the site with `mkdocs build MKDOCS_ARGS` unless no input changed since the last build.

    Other arguments go to `mkdocs build` (e.g. --strict, -d DIR).
    """
    from amp_docs_lib.docsite.store import INTERRUPTED, SiteDirError
    from amp_docs_lib.docsite.up_to_date import build as build_site

    t0 = time.perf_counter()
    try:
        rc = build_site(list(mkdocs_args), force=force)
    except SiteDirError as e:
        raise click.BadParameter(str(e), param_hint="'-d' / '--site-dir'") from None
    if rc != INTERRUPTED:  # an interrupted build has said so in one line
        click.echo(f"amp-docs build: finished in {time.perf_counter() - t0:.1f} s (exit {rc})")
    sys.exit(rc)


@click.command("execute", short_help="execute one chapter through the cache")
@click.argument("chapter", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--no-cache", is_flag=True, help="execute even if a cached result exists")
def execute(chapter: Path, no_cache: bool) -> None:
    """Execute CHAPTER (a docs/chapters/*.md file) through the build's cache; print per-cell timings."""
    from amp_docs_lib.core.settings import SettingError, check_environment
    from amp_docs_lib.docsite.execute import ChapterInterrupted, execute_one
    from amp_docs_lib.docsite.store import INTERRUPTED, sigterm_as_interrupt

    try:
        with sigterm_as_interrupt():
            rc = execute_one(chapter, use_cache=not no_cache)
    except ValueError as e:
        try:  # a bad AMP_DOCS_* variable is named as such, not blamed on the chapter
            check_environment(warn=lambda message: None)
        except SettingError as bad:
            raise click.UsageError(str(bad)) from None
        raise click.BadParameter(str(e), param_hint="CHAPTER") from None
    except ChapterInterrupted as e:  # the kernel and temporary folders are already gone
        click.echo(f"amp-docs: {e}", err=True)
        sys.exit(INTERRUPTED)
    sys.exit(rc)


@click.command("bench-build", short_help="time cold, no-op and incremental builds")
@click.option(
    "--touch", default="docs/chapters/formats.md", show_default=True, help="chapter whose prose gets a one-word edit"
)
@click.option(
    "--serial", is_flag=True, help="also time a cold build with one job (AMP_DOCS_JOBS=1) before the parallel one"
)
@click.option(
    "--noop-only",
    is_flag=True,
    help="only compare a no-op mkdocs build with mkdocs alone building the same pages, "
    "using this checkout's execution cache (no cold build)",
)
@click.option(
    "--rounds",
    type=click.IntRange(min=0),
    default=5,
    show_default=True,
    help="alternating rounds of the no-op comparison (0: skip it)",
)
def bench_build(touch: str, serial: bool, noop_only: bool, rounds: int) -> None:
    """Time a cold build, no-op rebuilds and rebuilds after a prose edit, a library edit, a site
    machinery edit and an example edit, on a copy of this checkout; say what executed and why."""
    from amp_docs_lib.devtools import build_bench

    if not noop_only:
        try:
            build_bench.check_touch(Path.cwd(), touch)
        except ValueError as e:
            raise click.BadParameter(str(e), param_hint="'--touch'") from None
    sys.exit(build_bench.noop_only(rounds) if noop_only else build_bench.main(touch, serial=serial, rounds=rounds))
