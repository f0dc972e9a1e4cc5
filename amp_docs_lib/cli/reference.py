"""``amp-docs package-reference``: package this build's results as a reference machine."""

from __future__ import annotations

import json
import os
import tarfile
from pathlib import Path

import click

from amp_docs_lib.core.machine import DISPATCH_VARIABLES
from amp_docs_lib.core.paths import CHAPTER_DOWNLOADS_DIR, REFERENCE_RESULTS

# What each dispatch variable caps. MKL runs torch's FP32 GEMMs on x86 and reads neither ATen's nor
# oneDNN's variable; ONNX Runtime's MLAS, fbgemm and torch's VNNI guard (cpuinfo) read CPUID, which no
# variable changes, so an emulated ISA is never a whole machine.
CAPPED_BY = {
    "ATEN_CPU_CAPABILITY": "ATen",
    "ONEDNN_MAX_CPU_ISA": "oneDNN",
    "MKL_ENABLE_INSTRUCTIONS": "MKL (FP32 GEMMs)",
}
NEVER_CAPPED = ("ONNX Runtime", "fbgemm", "torch's VNNI guard")


def _joined(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def emulation_label(variables: dict[str, str | None]) -> str | None:
    """What an ISA emulation caps and what still sees the real CPU, from the dispatch variables' values
    (``None``: no variable set, the machine runs as it is)."""
    caps: dict[str, list[str]] = {}
    for var, lib in CAPPED_BY.items():
        if variables.get(var):
            caps.setdefault(str(variables[var]).strip().upper(), []).append(lib)
    if not caps:
        return None
    capped = "; ".join(f"{_joined(libs)} capped to {isa}" for isa, libs in caps.items())
    set_vars = " ".join(f"{v}={variables[v]}" for v in CAPPED_BY if variables.get(v))
    real = [lib for var, lib in CAPPED_BY.items() if not variables.get(var)] + list(NEVER_CAPPED)
    return f"{capped} ({set_vars}); {_joined(real)} see the real CPU"


@click.command("package-reference", short_help="package this machine's results as a reference machine")
@click.option("--site", default="site", show_default=True, help="the built site to read results from")
@click.option("--name", default=None, help="machine folder name (default: from the GPU or CPU name)")
@click.option(
    "--root",
    default=str(REFERENCE_RESULTS),
    show_default=True,
    help="where reference machines and gated cells' outputs go (relative to the project being built, "
    "the current folder)",
)
@click.option(
    "--label",
    default=None,
    help="how the machine was run, shown beside its name (e.g. an emulated ISA and the variables that set it)",
)
@click.option("--no-archive", is_flag=True, help="do not write the .tar.gz")
@click.option(
    "--no-gated",
    is_flag=True,
    help="package the measurements only, not the outputs of gated cells (which machines lacking "
    "the hardware show in place of a skipped cell)",
)
def package_reference(
    site: str, name: str | None, root: str, label: str | None, no_archive: bool, no_gated: bool
) -> None:
    """Package the built site's published measurements and gated-cell outputs as
    docs/reference-results/<machine>/ (see the site's "Rebuild on your GPU" page)."""
    try:
        dest = package(site, root, name, archive=not no_archive, save_gated=not no_gated, label=label)
    except ValueError as e:
        raise click.UsageError(str(e)) from None
    click.echo(f"reference results written to {dest}" + ("" if no_archive else f" and {dest}.tar.gz"))


def package(
    site: str | Path = "site",
    root: str | Path = REFERENCE_RESULTS,
    name: str | None = None,
    archive: bool = True,
    report_size: int | None = None,
    save_gated: bool = True,
    label: str | None = None,
) -> Path:
    """Package this machine's results as ``<root>/<name>/`` (and ``<name>.tar.gz`` beside it).

    Reads the executed notebooks of the site built in ``site`` (build first). Also writes the
    gated cells that ran here to ``<root>/<chapter>/`` (what ``AMP_DOCS_SAVE_REFERENCE=1`` does
    during a build) unless ``save_gated`` is False. ``label``
    says how the machine was run (kept in ``machine.json``, shown on "Yours vs reference"); where a
    dispatch variable caps the ISA, :func:`emulation_label` is appended to it, and the variables are kept.
    Returns the machine's folder.
    """
    import nbformat
    from nbformat.v4.rwbase import rejoin_lines

    from amp_docs_lib.bench import report
    from amp_docs_lib.cli.report import to_html
    from amp_docs_lib.core.env import environment_report
    from amp_docs_lib.core.gating import requirements_from_tags
    from amp_docs_lib.docsite.execute import save_reference
    from amp_docs_lib.docsite.references import MACHINE_FILE, NAME_PATTERN, machine_name, measurements_from_site
    from amp_docs_lib.page.notebook import ungated_source
    from amp_docs_lib.page.stamp import stamp_text

    if label is not None and (not isinstance(label, str) or not label.strip()):
        raise ValueError(f"label must be a non-empty sentence, got {label!r}")
    name = name or machine_name()
    if not NAME_PATTERN.match(name):
        raise ValueError(f"machine name must match {NAME_PATTERN.pattern}, got {name!r}")
    site, root = Path(site), Path(root)
    meas = measurements_from_site(site)  # raises a clear error if the site is not built
    dest = root / name
    env = environment_report()
    env["stamp"] = stamp_text()
    chapters = {}
    gated = []
    for p in sorted((site / CHAPTER_DOWNLOADS_DIR).glob("*.ipynb")):
        # .ipynb files store sources and output texts as lists of lines; cell_id hashes the text
        nb = rejoin_lines(nbformat.from_dict(json.loads(p.read_text(encoding="utf-8"))))
        for cell in nb.cells:  # the download guards gated cells; their reference is keyed by the chapter's code
            cell.source = ungated_source(cell.get("source", ""))
        meta = dict(nb.metadata.get("amp_docs", {}))
        chapters[p.stem] = {k: meta.get(k) for k in ("executed_at", "seconds", "profile")}
        for cell in nb.cells:
            tags = cell.get("metadata", {}).get("tags", [])
            if (
                save_gated
                and cell.cell_type == "code"
                and requirements_from_tags(tags)
                and not cell.metadata.get("amp_docs", {}).get("skipped")
            ):
                gated.append((p.stem, cell))
    saved = [save_reference(chapter, cell, root) for chapter, cell in gated]
    dest.mkdir(parents=True, exist_ok=True)
    variables = {v: os.environ.get(v) for v in DISPATCH_VARIABLES}
    emulated = emulation_label(variables)
    label = ": ".join(x for x in (label.strip() if label else None, emulated) if x) or None
    machine = dict(env, chapters=chapters, dispatch_variables=variables, **({"label": label} if label else {}))
    (dest / MACHINE_FILE).write_text(json.dumps(machine, indent=1, default=str))
    (dest / "measurements.json").write_text(json.dumps(meas, indent=1, default=str))
    rep = report.collect(size=report_size)
    (dest / "report.html").write_text(to_html(rep), encoding="utf-8")
    (dest / "report.json").write_text(
        json.dumps(
            {k: json.loads(df.to_json(orient="records", default_handler=str)) for k, df in rep.tables.items()}, indent=1
        )
    )
    if archive:
        with tarfile.open(root / f"{name}.tar.gz", "w:gz") as tar:
            tar.add(dest, arcname=f"reference-results/{name}")
            for s in saved:
                tar.add(s, arcname=f"reference-results/{s.parent.name}/{s.name}")
    return dest
