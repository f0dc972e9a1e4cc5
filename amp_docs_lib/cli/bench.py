"""``amp-docs bench``: run the performance suites, write stamped JSON and CSV."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import click

from amp_docs_lib.bench.suites import DEFAULT_SUITES, HELP, parse_suites


@click.command("bench", help=HELP)
@click.option(
    "--suite",
    "suite",
    multiple=True,
    metavar="NAME",
    help=f"suite to run (repeatable or comma-separated; 'all' for every suite; default: {','.join(DEFAULT_SUITES)})",
)
@click.option(
    "--out",
    default="bench-results",
    metavar="DIR",
    show_default=True,
    help="directory for results.json and <suite>.csv (created)",
)
@click.option("--device", default=None, help="cpu, cuda or cuda:N (default: cuda when available, else cpu)")
@click.option("--no-progress", is_flag=True, help="no progress bar (for logs)")
def bench(suite: tuple[str, ...], out: str, device: str | None, no_progress: bool) -> None:
    import pandas as pd
    import torch

    from amp_docs_lib.bench.suites import records, run_suite
    from amp_docs_lib.cli.report import check_writable
    from amp_docs_lib.core.devices import check_device, default_device
    from amp_docs_lib.core.env import environment_report, hardware_fingerprint

    try:
        suites = parse_suites(list(suite))
    except ValueError as e:
        raise click.BadParameter(str(e), param_hint="--suite") from None
    out_dir = Path(out)
    if out_dir.exists() and not out_dir.is_dir():
        raise click.BadParameter(f"{str(out_dir)!r} exists and is not a directory", param_hint="--out")
    try:
        device = str(check_device(device or default_device()))
    except (TypeError, ValueError) as e:
        raise click.BadParameter(str(e), param_hint="--device") from None
    valid_devices = [
        "cpu",
        *(["cuda"] + [f"cuda:{i}" for i in range(torch.cuda.device_count())] if torch.cuda.is_available() else []),
    ]
    if device not in valid_devices:  # check_device lets "cpu:1" and a GPU index past the last through
        raise click.BadParameter(
            f"device {device!r} does not exist here; valid: {', '.join(valid_devices)}", param_hint="--device"
        )
    try:  # last of the checks (it creates the folder), before the suites run
        out_dir.mkdir(parents=True, exist_ok=True)
        check_writable(out_dir, "--out")
    except OSError as e:
        raise click.BadParameter(f"cannot create {str(out_dir)!r} ({e.strerror or e})", param_hint="--out") from None
    except ValueError as e:
        raise click.BadParameter(str(e), param_hint="--out") from None
    env = environment_report()
    fp = hardware_fingerprint()
    stamp = {"hardware_fingerprint": fp, "device": env["device"], "torch": env["torch"], "profile": env["profile"]}
    bar = _progress(len(suites), no_progress)
    results: dict[str, Any] = {}
    summary = []
    for name in suites:
        bar.set_description(f"bench: {name}")
        t0 = time.perf_counter()
        try:
            df, line = run_suite(name, device)
        except Exception as e:  # noqa: BLE001 - one failing suite is reported, the others still run
            df, line = pd.DataFrame(), f"FAILED: {type(e).__name__}: {e}"
        secs = time.perf_counter() - t0
        results[name] = {"seconds": round(secs, 2), "summary": line, "rows": records(df)}
        summary.append((name, secs, line))
        if not df.empty:
            df.assign(**stamp).to_csv(out_dir / f"{name}.csv", index=False)
        bar.update(1)
    bar.close()
    (out_dir / "results.json").write_text(
        json.dumps({"environment": env, "hardware_fingerprint": fp, "suites": results}, indent=1, default=str)
    )
    width = max(len(n) for n, _, _ in summary)
    click.echo(f"\n{'suite':<{width}}  {'seconds':>7}  summary")
    for name, secs, line in summary:
        click.echo(f"{name:<{width}}  {secs:7.1f}  {line}")
    n_csv = len([s for s in results if results[s]["rows"]])
    click.echo(f"\nresults: {out_dir / 'results.json'} and {n_csv} CSV file(s) in {out_dir}/")
    if any(line.startswith("FAILED") for _, _, line in summary):
        sys.exit(1)


class _NoBar:
    def set_description(self, _):
        pass

    def update(self, _):
        pass

    def close(self):
        pass


def _progress(total: int, disabled: bool):
    if disabled:
        return _NoBar()
    try:
        from tqdm import tqdm
    except ImportError:  # tqdm is in the docs extra; without it there is no bar
        return _NoBar()
    return tqdm(total=total, unit="suite", file=sys.stderr)
