#!/usr/bin/env python3
"""Execute the chapters on a GPU machine that cannot reach a package index.

Two halves, run on two machines:

``prepare DIR --python 3.12``, on a machine with network (from this checkout, with the library
importable): builds the library's wheel into DIR and downloads, as wheels for that Python on
manylinux x86-64, what *executing* the chapters needs beyond what the GPU machine already has
(``MACHINE_HAS``) and beyond its torch, which is never downloaded nor replaced. The site's
rendering packages (mkdocs and its plugins) stay behind: the site is rendered on the CPU side.
DIR also gets ``bundle.json``: what it was prepared for and what ``run`` installs.

``run DIR``, on the GPU machine, from a copy of this checkout, with the Python that holds torch:
installs offline from DIR (``pip install --no-index --find-links DIR``, torch pinned to the
installed version), executes every chapter with ``amp-docs execute`` under
``AMP_DOCS_SAVE_REFERENCE=1`` (a chapter that fails is recorded and the others still run) and
writes one ``.tar.gz`` to ``$OUT`` (or the current directory): the gated cells' reference results
(``docs/reference-results/<chapter>/``), the executed notebooks, each chapter's time and log, and
``amp-docs env``'s report, under ``.amp-docs-cache/gpu-build/``. docs/rebuild.md says how to use it.

Only the standard library is used before the install: ``run`` starts on a bare machine.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BUNDLE_FILE = "bundle.json"
ARCHIVE_NAME = "amp-docs-gpu-build.tar.gz"
PACKAGE_SECONDS = 150  # package-reference after the chapters: amp-docs report's sweeps at n = 4096
ARCHIVE_LIMIT = 16 * 2**20  # one file back through the device tool's $OUT (16 MiB each)
GPU_BUILD_DIR = Path(".amp-docs-cache") / "gpu-build"  # in the archive: what is not a reference result
CHAPTERS_DIR = Path("docs") / "chapters"
REFERENCE_DIR = Path("docs") / "reference-results"

# Never downloaded: the GPU machine's torch is its CUDA build, and what torch depends on
# (the NVIDIA libraries, triton, sympy, ...) comes with it.
TORCH = "torch"

# Already on the GPU machine (the device tool's image 'cuda', /work/.library/device/KINDS.md, read
# 2026-11; versions where that page gives them), within pyproject.toml's bounds: neither they nor
# what they depend on are downloaded. `prepare --also NAME` downloads one for a machine without it.
MACHINE_HAS = {
    "numpy": "2.5.2 in the image",
    "pandas": "in the image",
    "matplotlib": "in the image",
    "ml-dtypes": "in the image (JAX needs it)",
    "click": "in the image",
    "onnx": "1.23.1 in the image",
    "onnxscript": "0.7.2 in the image",
    "onnxruntime": "1.30.0 in the image",
    "scikit-learn": "in the image",
    "tqdm": "in the image",
    "transformers": "5.17.0 in the image (optional to the site)",
}

# Not needed to execute a chapter: the site is rendered on the CPU side (what the `docs` extra adds
# to the `notebook` extra, but for EXECUTE_FROM_DOCS).
RENDER_ONLY = {
    "mkdocs": "renders the site",
    "mkdocs-material": "the site's theme",
    "nbconvert": "writes the code cells of the chapter pages (docsite/notebook_page.py)",
    "mkdocstrings": "the API reference pages",
    "mkdocs-glightbox": "the site's figure viewer",
    "beautifulsoup4": "parses each built page (docsite/reader_layout.py)",
    "quickjs": "runs KaTeX: the build renders the site's math (docsite/math_render.py)",
    "setuptools": "builds the library's wheel for the site's downloads (torch brings its own)",
}
# In the `docs` extra and needed to execute: `amp-docs execute` reads the chapters' jupytext Markdown.
EXECUTE_FROM_DOCS = {"jupytext"}

# Wheels for CPython on x86-64 Linux: pip matches each manylinux_2_N tag exactly, so name them all
# up to the GPU machine's glibc (2.39: Ubuntu 24.04, as its Python 3.12.3 suggests).
PLATFORMS = [f"manylinux_2_{n}_x86_64" for n in range(39, 16, -1)] + ["manylinux2014_x86_64", "manylinux1_x86_64"]


class UsageError(Exception):
    """Bad input: the message names the bad value and the valid ones (exit status 2)."""


def canonical(name: str) -> str:
    """PEP 503 name: ``ML_Dtypes`` -> ``ml-dtypes``."""
    return re.sub(r"[-_.]+", "-", name).lower()


def requirement_name(spec: str) -> str:
    return canonical(re.split(r"[<>=!~;\[ ]", spec, maxsplit=1)[0].strip())


# ---------------------------------------------------------------- prepare (a machine with network)


def execution_requirements(pyproject: Path = REPO / "pyproject.toml") -> list[str]:
    """What executing the chapters needs besides the library's own dependencies: pyproject.toml's
    ``notebook`` extra (what a downloaded notebook needs) and ``EXECUTE_FROM_DOCS`` from the ``docs``
    extra, as written there (with their bounds)."""
    import tomllib

    extras = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    return extras["notebook"] + [spec for spec in extras["docs"] if requirement_name(spec) in EXECUTE_FROM_DOCS]


def _pip_resolve(requirements: list[str], python: str, constraints: list[str], find_links: Path | None) -> dict:
    """What pip would install for ``requirements`` on a bare Python ``python`` (wheels only, manylinux x86-64):
    ``{canonical name: (name, version)}``, resolved with ``pip install --dry-run --report``."""
    with tempfile.TemporaryDirectory(prefix="amp-docs-resolve-") as tmp:
        report, cons = Path(tmp) / "report.json", Path(tmp) / "constraints.txt"
        cons.write_text("\n".join(constraints) + "\n")
        cmd = [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--dry-run",
            "--quiet",
            "--report",
            str(report),
            "--target",
            str(Path(tmp) / "target"),  # pip takes --python-version only with --target
            "--only-binary=:all:",
            "--python-version",
            python,
            "--implementation",
            "cp",
            *[a for p in PLATFORMS for a in ("--platform", p)],
            "--constraint",
            str(cons),
        ]
        if find_links is not None:
            cmd += ["--find-links", str(find_links)]
        r = subprocess.run(cmd + requirements, capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(
                f"pip could not resolve {' '.join(requirements)} for Python {python}:\n{r.stderr[-4000:]}"
            )
        items = json.loads(report.read_text())["install"]
    return {canonical(i["metadata"]["name"]): (i["metadata"]["name"], i["metadata"]["version"]) for i in items}


def plan(python: str, torch: str, wheel: Path, also: tuple[str, ...] = ()) -> dict:
    """What ``prepare`` downloads for Python ``python`` on a machine holding torch ``torch`` and
    ``MACHINE_HAS`` (less ``also``): ``{"download": [name==version, ...], "requirements": [...],
    "machine_has": [...], "brought": [what the machine has with them]}``. Two resolutions: everything the execution needs, and what the machine
    brings (torch, ``MACHINE_HAS`` and all they depend on); the difference is downloaded."""
    unknown = sorted(set(also) - set(MACHINE_HAS))
    if unknown:
        raise UsageError(
            f"--also {', '.join(unknown)}: not a package the GPU machine is assumed to have; "
            f"valid: {', '.join(MACHINE_HAS)}"
        )
    machine = [TORCH] + [n for n in MACHINE_HAS if n not in also]
    constraints = [f"{TORCH}=={torch}"]
    requirements = execution_requirements()
    # Two independent resolutions, each mostly waiting on the index: side by side.
    with ThreadPoolExecutor(max_workers=2) as pool:
        brought_run = pool.submit(_pip_resolve, machine, python, constraints, None)
        needed_run = pool.submit(_pip_resolve, [str(wheel), *requirements, *machine], python, constraints, wheel.parent)
        brought, needed = brought_run.result(), needed_run.result()
    download = sorted(
        f"{name}=={version}"
        for key, (name, version) in needed.items()
        if key not in brought and key != canonical(wheel.name.split("-")[0])
    )
    return {
        "download": download,
        "requirements": requirements,
        "machine_has": machine,
        "brought": sorted(name for name, _ in brought.values()),
    }


def prepare(folder: Path, python: str, torch: str, also: tuple[str, ...] = ()) -> dict:
    """Fill ``folder`` with the library's wheel, the wheels of ``plan`` and ``bundle.json``; return the bundle."""
    if not re.fullmatch(r"3\.\d+", python):
        raise UsageError(f"--python {python!r}: give a CPython minor version such as 3.12")
    if not re.fullmatch(r"\d+\.\d+(\.\d+)?", torch):
        raise UsageError(f"--torch {torch!r}: give the GPU machine's torch version such as 2.11.0")
    sys.path.insert(0, str(REPO))
    from amp_docs_lib.docsite.wheel import build_wheel

    folder.mkdir(parents=True, exist_ok=True)
    wheel = build_wheel(folder)
    p = plan(python, torch, wheel, also)
    if p["download"]:
        cmd = [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--quiet",
            "--no-deps",
            "--only-binary=:all:",
            "--python-version",
            python,
            "--implementation",
            "cp",
            *[a for pl in PLATFORMS for a in ("--platform", pl)],
            "--dest",
            str(folder),
            *p["download"],
        ]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"pip download failed (exit {r.returncode}):\n{r.stderr[-4000:]}")
    bundle = {"python": python, "torch": torch, "wheel": wheel.name, **p}
    (folder / BUNDLE_FILE).write_text(json.dumps(bundle, indent=1) + "\n")
    return bundle


def folder_size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


# ---------------------------------------------------------------- run (the GPU machine, offline)


def read_bundle(folder: Path) -> dict:
    """``bundle.json`` of a prepared folder, checked against this Python and its torch (UsageError if not)."""
    from importlib.metadata import PackageNotFoundError, version

    path = folder / BUNDLE_FILE
    if not path.is_file():
        raise UsageError(
            f"{folder}: no {BUNDLE_FILE}; give the folder `prepare` filled "
            f"(python3 scripts/gpu_build.py prepare {folder} --python 3.12)"
        )
    bundle = json.loads(path.read_text())
    here = f"{sys.version_info.major}.{sys.version_info.minor}"
    if bundle["python"] != here:
        raise UsageError(
            f"{folder} was prepared for Python {bundle['python']}, this is Python {here}: "
            f"prepare it again with --python {here}"
        )
    missing = []
    for name in bundle["machine_has"]:
        try:
            version(name)
        except PackageNotFoundError:
            missing.append(name)
    if missing:
        raise UsageError(
            f"{folder} expects this machine to have {', '.join(missing)}, which it lacks: prepare "
            f"it again with "
            + " ".join(f"--also {n}" for n in missing if n != TORCH)
            + (f" (and install torch {bundle['torch']})" if TORCH in missing else "")
        )
    have = version(TORCH).split("+")[0]  # 2.11.0+cu130: the CUDA build of 2.11.0
    if have.split(".")[:2] != bundle["torch"].split(".")[:2]:
        raise UsageError(
            f"{folder} was resolved for torch {bundle['torch']}, this machine has torch {have}: "
            f"prepare it again with --torch {have}"
        )
    return bundle


def chapters_to_run(names: str | None) -> list[Path]:
    """The chapters to execute: all of docs/chapters, or those named (UsageError naming the valid ones)."""
    every = sorted((REPO / CHAPTERS_DIR).glob("*.md"))
    if not names:
        return every
    by_name = {p.stem: p for p in every}
    wanted = [n.strip() for n in names.split(",") if n.strip()]
    bad = [n for n in wanted if n not in by_name]
    if bad or not wanted:
        raise UsageError(f"--chapters {names!r}: {', '.join(bad) or 'no chapter named'}; valid: {', '.join(by_name)}")
    return [by_name[n] for n in wanted]


def offline_env() -> dict[str, str]:
    """This environment with every package index turned off for pip."""
    env = {k: v for k, v in os.environ.items() if k not in ("PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_FIND_LINKS")}
    env["PIP_NO_INDEX"] = "1"
    return env


def install(folder: Path, bundle: dict, log: Path) -> int:
    """Install the library's wheel and the execution requirements from ``folder`` alone, torch held at
    the installed version; pip's exit status (its output in ``log``)."""
    from importlib.metadata import version

    with tempfile.TemporaryDirectory(prefix="amp-docs-install-") as tmp:
        pin = Path(tmp) / "torch.txt"
        pin.write_text(f"{TORCH}=={version(TORCH)}\n")  # never replace the machine's torch
        cmd = [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--no-index",
            "--find-links",
            str(folder),
            "--constraint",
            str(pin),
            str(folder / bundle["wheel"]),
            *bundle["requirements"],
        ]
        with log.open("w") as f:
            f.write("$ " + " ".join(cmd) + "\n")
            f.flush()
            return subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT, env=offline_env()).returncode


def amp_docs(args: list[str], log: Path, timeout: float | None) -> int:
    """``python -m amp_docs_lib ARGS`` from this checkout (its sources, not the installed wheel's:
    the library finds the docs, examples and reference results beside itself), output to ``log``."""
    env = offline_env()
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), *filter(None, [env.get("PYTHONPATH")])])
    env["AMP_DOCS_SAVE_REFERENCE"] = "1"
    with log.open("w") as f:
        try:
            return subprocess.run(
                [sys.executable, "-m", "amp_docs_lib", *args],
                cwd=REPO,
                env=env,
                stdout=f,
                stderr=subprocess.STDOUT,
                timeout=timeout,
            ).returncode
        except subprocess.TimeoutExpired:
            f.write(f"\ngpu_build: stopped after {timeout} s\n")
            return 124


def _time_left(started: float, deadline: float | None, timeout: float | None) -> float | None:
    """A step's time limit: ``timeout``, cut to what is left before ``deadline`` (seconds after ``started``)."""
    if deadline is None:
        return timeout
    left = max(1.0, deadline - (time.time() - started))
    return left if timeout is None else min(timeout, left)


def package_machine(work: Path, timeout: float) -> int:
    """``amp-docs package-reference`` on this run's executed notebooks: the machine's folder in
    docs/reference-results/ (its environment, the measurements the chapters published and
    ``amp-docs report``'s tables), as a reader's built site would give it."""
    newest: dict[str, Path] = {}
    for p in sorted((work / "executed").glob("*.ipynb"), key=lambda p: p.stat().st_mtime):
        newest[p.stem.rsplit("-", 1)[0]] = p  # <chapter>-<cache id>.ipynb
    with tempfile.TemporaryDirectory(prefix="amp-docs-site-") as site:
        downloads = Path(site) / "downloads" / "chapters"
        downloads.mkdir(parents=True)
        for chapter, p in newest.items():
            shutil.copy2(p, downloads / f"{chapter}.ipynb")
        return amp_docs(
            ["package-reference", "--site", site, "--no-archive", "--no-gated"],
            work / "package-reference.log",
            timeout,
        )


def run(
    folder: Path,
    chapters: list[Path],
    archive: Path,
    timeout: float | None,
    deadline: float | None = None,
    jobs: int = 1,
) -> int:
    """Install, execute ``chapters``, package the machine's reference folder, write ``archive``; 0 if
    every chapter executed, 1 otherwise. After ``deadline`` seconds no step starts and the one running
    is stopped, so that the archive is written inside a lease of known length."""
    bundle = read_bundle(folder)
    started = time.time()
    work = REPO / GPU_BUILD_DIR
    shutil.rmtree(work, ignore_errors=True)
    (work / "logs").mkdir(parents=True)
    summary: dict = {"bundle": bundle, "chapters": {}}
    rc = install(folder, bundle, work / "install.log")
    summary["install_exit"] = rc
    print(f"gpu_build: install from {folder}: exit {rc}", flush=True)
    if rc == 0:
        amp_docs(["env"], work / "env.txt", timeout)

        def execute(chapter: Path) -> None:
            if deadline is not None and time.time() - started >= deadline:
                summary["chapters"][chapter.stem] = {"exit": None, "seconds": 0.0}
                print(f"gpu_build: {chapter.stem}: not started (past the {deadline:.0f} s deadline)", flush=True)
                return
            t0 = time.perf_counter()
            code = amp_docs(
                ["execute", str(chapter.relative_to(REPO))],
                work / "logs" / f"{chapter.stem}.log",
                _time_left(started, deadline, timeout),
            )
            seconds = round(time.perf_counter() - t0, 1)
            summary["chapters"][chapter.stem] = {"exit": code, "seconds": seconds}
            print(
                f"gpu_build: {chapter.stem}: {'ok' if code == 0 else f'FAILED (exit {code})'} in {seconds} s",
                flush=True,
            )

        # jobs > 1 shares the GPU between chapters: their timings are then not of a quiet GPU
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            list(pool.map(execute, chapters))
        summary["jobs"] = jobs
    (work / "times.tsv").write_text(
        "chapter\texit\tseconds\n"
        + "".join(f"{c}\t{r['exit']}\t{r['seconds']}\n" for c, r in summary["chapters"].items())
    )
    # This run's entries only (a cache hit touches its files): a checkout's older ones would swell the archive.
    (work / "executed").mkdir()
    for p in (REPO / ".amp-docs-cache" / "executed").glob("*"):
        if p.is_file() and p.stat().st_mtime >= started:
            shutil.copy2(p, work / "executed" / p.name)
    if rc == 0:  # after the deadline too: the machine's folder is what a partial run is for
        summary["package_exit"] = package_machine(work, PACKAGE_SECONDS)
        print(f"gpu_build: package-reference: exit {summary['package_exit']}", flush=True)
    (work / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    write_archive(
        archive, work, [p for p in (REPO / REFERENCE_DIR).rglob("*") if p.is_file() and p.stat().st_mtime >= started]
    )
    size = archive.stat().st_size
    print(
        f"gpu_build: wrote {archive} ({size / 2**20:.1f} MiB)"
        + (f"; over the {ARCHIVE_LIMIT // 2**20} MiB a file can come back through $OUT" if size > ARCHIVE_LIMIT else "")
    )
    failed = [c for c, r in summary["chapters"].items() if r["exit"] != 0]
    if rc != 0 or failed:
        print(f"gpu_build: {'install failed (see install.log)' if rc else 'failed: ' + ', '.join(failed)}")
        return 1
    return 0


def write_archive(archive: Path, work: Path, references: list[Path]) -> None:
    """``archive`` (.tar.gz), paths relative to the checkout: unpacked there, the reference results
    land in docs/reference-results/ and the rest in .amp-docs-cache/gpu-build/."""
    archive.parent.mkdir(parents=True, exist_ok=True)
    tmp = archive.with_name(archive.name + ".part")
    with tarfile.open(tmp, "w:gz") as tar:
        tar.add(work, arcname=GPU_BUILD_DIR.as_posix())
        for p in sorted(references):
            tar.add(p, arcname=p.relative_to(REPO).as_posix())
    os.replace(tmp, archive)


# ---------------------------------------------------------------- command line


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="gpu_build.py", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("prepare", help="download the wheels the GPU machine needs into DIR (needs network)")
    p.add_argument("dir", type=Path)
    p.add_argument("--python", default="3.12", help="the GPU machine's Python, major.minor (default 3.12)")
    p.add_argument("--torch", default="2.11.0", help="the GPU machine's torch version (default 2.11.0)")
    p.add_argument(
        "--also",
        action="append",
        default=[],
        metavar="NAME",
        help=f"download NAME too, for a machine without it (one of: {', '.join(MACHINE_HAS)})",
    )
    r = sub.add_parser("run", help="install offline from DIR, execute the chapters, archive the results")
    r.add_argument("dir", type=Path)
    r.add_argument("--chapters", default=None, help="comma-separated chapter names (default: every chapter)")
    r.add_argument(
        "--archive",
        type=Path,
        default=None,
        help=f"where to write the archive (default: $OUT/{ARCHIVE_NAME}, or ./{ARCHIVE_NAME})",
    )
    r.add_argument("--timeout", type=float, default=None, help="stop a chapter after this many seconds")
    r.add_argument(
        "--deadline",
        type=float,
        default=None,
        help="start nothing after this many seconds from the start, and stop what runs then (a lease's length)",
    )
    r.add_argument(
        "--jobs", type=int, default=1, help="chapters executed at once (default 1: each has the GPU to itself)"
    )
    args = parser.parse_args(argv)
    try:
        if args.command == "prepare":
            t0 = time.perf_counter()
            bundle = prepare(args.dir, args.python, args.torch, tuple(canonical(n) for n in args.also))
            print(
                f"gpu_build: {args.dir}: {len(bundle['download']) + 1} wheels, "
                f"{folder_size(args.dir) / 2**20:.1f} MiB, in {time.perf_counter() - t0:.0f} s"
            )
            return 0
        if not args.dir.is_dir():
            raise UsageError(f"{args.dir}: no such folder; give the folder `prepare` filled")
        archive = args.archive or Path(os.environ.get("OUT") or ".") / ARCHIVE_NAME
        if args.jobs < 1:
            raise UsageError(f"--jobs {args.jobs}: give 1 or more chapters at once")
        return run(
            args.dir.resolve(),
            chapters_to_run(args.chapters),
            archive.resolve(),
            args.timeout,
            args.deadline,
            args.jobs,
        )
    except UsageError as e:
        parser.error(str(e))  # exit status 2


if __name__ == "__main__":
    sys.exit(main())
