"""``amp-docs env`` and ``amp-docs report``: what this machine is and what it does with low precision."""

from __future__ import annotations

import json
import sys

import click

REPORT_SECTIONS = ("formats", "autocast", "matmul", "features")


@click.command("env", short_help="print the environment report")
@click.option("--json", "as_json", is_flag=True, help="print JSON instead of text")
def env(as_json: bool) -> None:
    """Print the environment report the site's stamps are made of."""
    from amp_docs_lib.core.env import environment_report, format_report

    click.echo(json.dumps(environment_report(), indent=1) if as_json else format_report())


@click.command("report", short_help="write an HTML report of this machine's precision landscape")
@click.option("--output", "-o", default="amp-docs-report.html", show_default=True, help="HTML file to write")
@click.option("--size", type=int, default=None, help="matmul size n (default 256 on CPU, 4096 on CUDA; at least 16)")
@click.option(
    "--skip",
    multiple=True,
    type=click.Choice(REPORT_SECTIONS),
    metavar="SECTION",
    help=f"leave a section out (repeatable): {', '.join(REPORT_SECTIONS)}",
)
def report(output: str, size: int | None, skip: tuple[str, ...]) -> None:
    """Write a one-file HTML report of this machine's precision landscape and print it as Markdown."""
    from amp_docs_lib.cli.report import write_report as report_main

    try:
        sys.exit(report_main(output, size, tuple(skip)))
    except ValueError as e:
        raise click.UsageError(str(e)) from None
