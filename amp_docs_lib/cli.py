"""The ``amp-docs`` command.

``amp-docs build [--force] [mkdocs args]``  build the site (a no-op if no input changed)
``amp-docs env``          print the environment report (what the site's stamps are made of)
``amp-docs execute FILE`` execute one chapter through the build's cache and print cell timings
``amp-docs bench-build``  time a cold build, a no-op rebuild and a one-chapter rebuild
``amp-docs bench [--suite ...] [--out DIR]``  measure precision performance (``amp-docs bench --help``)
``amp-docs report``       this machine's precision landscape: HTML file plus a Markdown summary
``amp-docs package-reference``  package this machine's results as docs/reference-results/<machine>/
"""

from __future__ import annotations

import argparse
import json
import sys


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="amp-docs", description="amp-docs companion tools")
    sub = ap.add_subparsers(dest="command", required=True)
    p_env = sub.add_parser("env", help="print the environment report")
    p_env.add_argument("--json", action="store_true", help="print JSON instead of text")
    p_exec = sub.add_parser("execute", help="execute one chapter (through the cache)")
    p_exec.add_argument("chapter")
    p_exec.add_argument("--no-cache", action="store_true")
    p_bench = sub.add_parser("bench-build", help="benchmark cold, no-op and one-chapter builds")
    p_bench.add_argument("--touch", default="docs/chapters/formats.md",
                         help="chapter to touch for the incremental build")
    p_bench.add_argument("--serial", action="store_true",
                         help="also time a cold build with one job (AMP_DOCS_JOBS=1) before the parallel one")
    p_bench.add_argument("--noop-only", action="store_true",
                         help="only compare a no-op mkdocs build with mkdocs-jupyter's own no-op build, "
                              "using this checkout's execution cache (no cold build)")
    p_bench.add_argument("--rounds", type=int, default=5,
                         help="alternating rounds of the no-op comparison (default 5)")
    # amp-docs report (amp_docs_lib/report.py)
    p_rep = sub.add_parser("report", help="write an HTML report of this machine's precision landscape")
    p_rep.add_argument("--output", "-o", default="amp-docs-report.html", help="HTML file to write")
    p_rep.add_argument("--size", type=int, default=None,
                       help="matmul size n (default 256 on CPU, 4096 on CUDA; at least 16)")
    p_rep.add_argument("--skip", action="append", default=[], metavar="SECTION",
                       choices=["formats", "autocast", "matmul", "features"], help="leave a section out")
    sub.add_parser("package-reference", help="package this machine's results as a reference machine")
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["package-reference"]:  # amp_docs_lib/reference_machines.py
        from amp_docs_lib.reference_machines import main as package_main
        return package_main(argv[1:])
    if argv[:1] == ["build"]:  # everything after `build` may be an mkdocs option
        from amp_docs_lib.docsite.up_to_date import main as build_main
        return build_main(argv[1:])
    sub.add_parser("build", help="build the site unless it is up to date (other args go to mkdocs)")
    if argv[:1] == ["bench"]:  # its own parser documents the suites
        from amp_docs_lib.bench.cli import main as bench_suites_main
        return bench_suites_main(argv[1:])
    sub.add_parser("bench", help="measure precision performance on this machine (see amp-docs bench --help)")
    args = ap.parse_args(argv)

    if args.command == "env":
        from amp_docs_lib.env import environment_report, format_report
        print(json.dumps(environment_report(), indent=1) if args.json else format_report())
        return 0
    if args.command == "execute":
        from amp_docs_lib.docsite.execute import main as execute_main
        return execute_main([args.chapter] + (["--no-cache"] if args.no_cache else []))
    if args.command == "report":
        from amp_docs_lib.report import main as report_main
        try:
            return report_main(args.output, args.size, tuple(args.skip))
        except ValueError as e:
            ap.error(str(e))
    if args.command == "bench-build":
        from amp_docs_lib.docsite.benchmark import main as bench_main, noop_only
        if args.rounds < 1:
            ap.error(f"--rounds must be a positive integer, got {args.rounds}")
        if args.noop_only:
            return noop_only(args.rounds)
        return bench_main(args.touch, serial=args.serial, rounds=args.rounds)
    return 2  # unreachable: argparse rejects unknown commands


if __name__ == "__main__":
    sys.exit(main())
