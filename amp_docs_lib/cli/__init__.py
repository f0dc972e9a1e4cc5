"""The ``amp-docs`` command (click): one module per command group.

* ``cli/site.py``: ``build``, ``execute``, ``bench-build`` (building the site);
* ``cli/machine.py``: ``env``, ``report`` (what this machine is and does);
* ``cli/bench.py``: ``bench`` (the performance suites);
* ``cli/reference.py``: ``package-reference`` (this machine as a reference machine).

Every command has ``--help``; a bad option, or a bad ``AMP_DOCS_*`` variable (checked before any
command runs, ``core/settings.py``), is a usage error naming it, with exit status 2.
Heavy imports (torch, pandas, mkdocs) happen inside the commands that need them.
"""

from __future__ import annotations

import sys

import click

from amp_docs_lib import __version__
from amp_docs_lib.cli.bench import bench
from amp_docs_lib.cli.machine import env, report
from amp_docs_lib.cli.reference import package_reference
from amp_docs_lib.cli.site import bench_build, build, execute
from amp_docs_lib.core.settings import SettingError, check_environment


class _CheckedGroup(click.Group):
    """Checks the ``AMP_DOCS_*`` variables once the command is known, before it runs: before any work,
    even a build that turns out up to date, so a bad variable is never half-used. A command's
    ``--help`` still answers."""

    def resolve_command(self, ctx, args):
        name, command, rest = super().resolve_command(ctx, args)
        if not set(rest) & set(ctx.help_option_names) and not ctx.resilient_parsing:
            try:
                check_environment(warn=lambda message: click.echo(f"amp-docs: warning: {message}", err=True))
            except SettingError as e:
                raise click.UsageError(str(e), ctx) from None
        return name, command, rest


@click.group(cls=_CheckedGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="amp-docs")
def cli() -> None:
    """amp-docs: build the executed site and measure this machine's precision landscape."""


for command in (build, execute, bench_build, env, report, bench, package_reference):
    cli.add_command(command)


def main(argv: list[str] | None = None) -> int:
    """Run the CLI with ``argv`` (default ``sys.argv[1:]``) and return its exit status."""
    try:
        cli.main(args=argv, prog_name="amp-docs", standalone_mode=False)
    except click.exceptions.Exit as e:
        return e.exit_code
    except click.ClickException as e:
        e.show()
        return e.exit_code
    except click.exceptions.Abort:
        click.echo("Aborted!", err=True)
        return 1
    except SystemExit as e:
        return e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
