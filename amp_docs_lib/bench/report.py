"""``amp-docs report``: this machine's precision landscape in one command.

Collects, in order (progress on stderr):

1. the environment (``env.environment_report``: device, CPU capability, versions, TF32 settings);
2. the format table (``formats.format_table``);
3. where autocast's measured policy differs from the PyTorch documentation
   (``autocast_policy.probe_autocast_policy`` + ``documented_differences``), per device here;
4. matmul throughput per dtype, timed with ``torch.utils.benchmark``, with each dtype's
   speed relative to FP32 on the same device;
5. which features work here: BF16, FP16, TF32, FP8 and MX (dtype casts, matmul kernels,
   hardware), and torchao's quantization configs applied to a small ``nn.Linear``.

``write_html`` writes one self-contained HTML file (inline CSS, no scripts, no requests);
``markdown_summary`` is what the command prints.
"""

from __future__ import annotations

import datetime as _dt
import html
import importlib.util
import math
import os
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import pandas as pd

from amp_docs_lib.bench.matmul import matmul_flops
from amp_docs_lib.bench.peaks import DATASHEET_SOURCE as PEAK_SOURCE
from amp_docs_lib.bench.peaks import GPU_PEAKS, match_gpu, peak_fraction
from amp_docs_lib.core.tables import format_cell
from amp_docs_lib.core.timing import measure

MATMUL_DTYPES = ("float32", "bfloat16", "float16")
DEFAULT_CPU_SIZE = 256
DEFAULT_CUDA_SIZE = 4096
TORCHAO_CONFIGS = ("Int8WeightOnlyConfig", "Int8DynamicActivationInt8WeightConfig",
                   "Int4WeightOnlyConfig", "Float8WeightOnlyConfig",
                   "Float8DynamicActivationFloat8WeightConfig")


# Datasheet peaks come from the one table, bench/peaks.py (its dtype keys: fp32, tf32, bf16, fp16, fp8).
_PEAK_KEYS = {"float32": "fp32", "tf32": "tf32", "bfloat16": "bf16", "float16": "fp16", "float8": "fp8"}


def _rounded(fraction: float | str | None) -> float | str | None:
    return round(fraction, 3) if isinstance(fraction, float) else fraction


def datasheet_peak(device_name: str, dtype: str) -> float | None:
    """Dense peak (TFLOP/s) of a GPU for ``dtype`` (a torch dtype name or ``tf32``) from
    ``bench.peaks.GPU_PEAKS``, or None for an unlisted GPU or dtype."""
    if not isinstance(device_name, str) or not isinstance(dtype, str):
        raise TypeError("device_name and dtype must be str")
    row = match_gpu(device_name)
    return None if row is None else GPU_PEAKS[row].get(_PEAK_KEYS.get(dtype, dtype))


@dataclass
class Report:
    """The collected sections: environment dict, then titled tables."""

    environment: dict[str, Any]
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    notes: dict[str, str] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)


def _first_line(e: BaseException) -> str:
    msg = str(e).strip().splitlines()
    return f"{type(e).__name__}: {msg[0][:160] if msg else ''}"


def matmul_throughput(size: int | None = None, dtypes=MATMUL_DTYPES, devices=None,
                      min_run_time: float = 0.2) -> pd.DataFrame:
    """GFLOP/s of an ``n x n`` matmul per device and dtype (the timing harness, ``core.timing``).

    ``size`` defaults to 256 on CPU and 4096 on CUDA. On CUDA, FP32 is timed with TF32 off and
    on, and listed GPUs get their datasheet peak (``datasheet_peak``; n/a on CPUs, which have no
    such figure here). Raises ValueError for a size below 16 or an unknown dtype name.
    """
    import torch

    from amp_docs_lib.core.devices import available_devices

    if size is not None and (not isinstance(size, int) or isinstance(size, bool) or size < 16):
        raise ValueError(f"size must be an int >= 16, got {size!r}")
    bad = [d for d in dtypes if not isinstance(getattr(torch, str(d), None), torch.dtype)]
    if bad:
        raise ValueError(f"unknown dtype(s) {bad}; valid e.g. {list(MATMUL_DTYPES)}")
    rows = []
    for dev in devices or available_devices():
        n = size or (DEFAULT_CUDA_SIZE if dev.startswith("cuda") else DEFAULT_CPU_SIZE)
        variants = [(d, None) for d in dtypes]
        if dev.startswith("cuda"):
            variants.insert(1, ("float32", "tf32"))
        base = None
        for dname, mode in variants:
            dt = getattr(torch, dname)
            a = torch.randn(n, n, device=dev).to(dt)
            b = torch.randn(n, n, device=dev).to(dt)
            saved = torch.backends.cuda.matmul.allow_tf32
            torch.backends.cuda.matmul.allow_tf32 = mode == "tf32"
            try:
                # The one harness: a deliberate thread count (Timer's own default is 1 thread),
                # warm-up, median and IQR.
                t = measure(lambda: a @ b, device=dev, label=f"{dname} matmul", min_run_time=min_run_time)
                gflops = matmul_flops(n, n, n) / t.median_s / 1e9
                err = None
            except RuntimeError as e:  # no kernel for this dtype on this device
                gflops, err = None, _first_line(e)
            finally:
                torch.backends.cuda.matmul.allow_tf32 = saved
            label = "tf32" if mode == "tf32" else dname
            if label == "float32":
                base = gflops
            peak = datasheet_peak(torch.cuda.get_device_name(dev), label) if dev.startswith("cuda") else None
            rows.append({"device": dev, "dtype": label, "size": n,
                         "GFLOP/s": gflops,  # unrounded: a slow emulated dtype can be far below 0.01
                         "vs float32": None if (gflops is None or not base) else round(gflops / base, 3),
                         "datasheet peak GFLOP/s": None if peak is None else peak * 1000,
                         "fraction of peak": _rounded(peak_fraction(gflops, None if peak is None else peak * 1e3)),
                         "note": err})
    return pd.DataFrame(rows, dtype=object)


def _try(fn: Callable[[], Any]) -> tuple[bool, str]:
    try:
        out = fn()
        return True, "" if out is None else str(out)
    except Exception as e:  # a feature that fails here is a finding, not an error of the report
        return False, _first_line(e)


def _feature_table() -> pd.DataFrame:
    """Which low-precision features work on this machine, each tried, with the reason if not."""
    import torch

    from amp_docs_lib.core.env import cpu_matmul_support
    from amp_docs_lib.core.gating import requirement_met

    cuda = torch.cuda.is_available()
    rows = []

    def add(feature, device, ok_detail):
        ok, detail = ok_detail
        rows.append({"feature": feature, "device": device, "works": "yes" if ok else "no", "detail": detail})

    def mm(dt, dev):
        a = torch.ones(16, 16, device=dev, dtype=dt)
        return f"matmul ok ({(a @ a).dtype})"

    add("BF16 matmul", "cpu", _try(lambda: mm(torch.bfloat16, "cpu")))
    add("FP16 matmul", "cpu", _try(lambda: mm(torch.float16, "cpu")))
    rows.append({"feature": "native 16-bit matmul", "device": "cpu", "works": None,
                 "detail": cpu_matmul_support()})
    add("FP8 E4M3FN / E5M2 casts", "cpu", _try(lambda: "1000.0 -> {} (E4M3FN), {} (E5M2)".format(
        *(torch.tensor([1000.0]).to(dt).float().item() for dt in (torch.float8_e4m3fn, torch.float8_e5m2)))))
    add("E8M0 (MX scale) cast", "cpu", _try(
        lambda: f"3.0 -> {torch.tensor([3.0]).to(torch.float8_e8m0fnu).float().item()}"))
    add("torchao MX formats (prototype)", "any",
        (importlib.util.find_spec("torchao") is not None
         and importlib.util.find_spec("torchao.prototype.mx_formats") is not None,
         "torchao.prototype.mx_formats importable; MX matmul kernels need sm100 (Blackwell)"))
    if cuda:
        add("BF16 (native)", "cuda", (requirement_met("cuda-bf16"), torch.cuda.get_device_name()))
        add("FP16 matmul", "cuda", _try(lambda: mm(torch.float16, "cuda")))
        add("TF32 tensor cores", "cuda", (requirement_met("sm80"), "needs compute capability 8.0+"))

        def fp8_mm():
            a = torch.ones(32, 32, device="cuda").to(torch.float8_e4m3fn)
            one = torch.tensor(1.0, device="cuda")
            return torch._scaled_mm(a, a.t(), scale_a=one, scale_b=one, out_dtype=torch.bfloat16).dtype
        add("FP8 matmul (torch._scaled_mm)", "cuda", _try(fp8_mm))
        add("MX hardware (sm100)", "cuda", (requirement_met("sm100"), "compute capability 10.0+"))
    else:
        for f in ("TF32 tensor cores", "FP8 matmul (torch._scaled_mm)"):
            rows.append({"feature": f, "device": "cuda", "works": None, "detail": "no CUDA GPU here"})
    rows += _torchao_config_rows("cuda" if cuda else "cpu")
    return pd.DataFrame(rows, dtype=object)


def _torchao_config_rows(device: str = "cpu") -> list[dict]:
    """Apply each of torchao's common quantization configs to a small Linear and run it."""
    if importlib.util.find_spec("torchao") is None:
        return [{"feature": f"torchao {c}", "device": device, "works": None, "detail": "torchao not installed"}
                for c in TORCHAO_CONFIGS]
    import torch
    import torchao.quantization as q

    rows = []
    for name in TORCHAO_CONFIGS:
        cls = getattr(q, name, None)

        def run(cls=cls):
            if cls is None:
                raise ImportError("not in this torchao version")
            lin = torch.nn.Sequential(torch.nn.Linear(128, 128)).to(device=device, dtype=torch.bfloat16)
            q.quantize_(lin, cls())
            with torch.no_grad():
                out = lin(torch.randn(4, 128, device=device, dtype=torch.bfloat16))
            return f"ran, output {tuple(out.shape)} {out.dtype}"
        ok, detail = _try(run)
        rows.append({"feature": f"torchao {name}", "device": device, "works": "yes" if ok else "no",
                     "detail": detail})
    return rows


def _autocast_differences() -> pd.DataFrame:
    """Rows where autocast's measured policy on this machine's devices differs from the docs."""
    from amp_docs_lib.amp.autocast_policy import documented_differences, probe_autocast_policy

    return documented_differences(probe_autocast_policy())


def collect(size: int | None = None, skip: tuple[str, ...] = (),
            progress: Callable[[str], None] | None = None) -> Report:
    """Run every section (except those named in ``skip``) and return the ``Report``.

    Sections: ``formats``, ``autocast``, ``matmul``, ``features`` (the environment always runs).
    """
    from amp_docs_lib.core.env import environment_report
    from amp_docs_lib.numbers.formats import format_table

    unknown = [s for s in skip if s not in SECTIONS]
    if unknown:
        raise ValueError(f"unknown section(s) {unknown}; valid: {list(SECTIONS)}")
    say = progress or (lambda s: None)
    steps: list[tuple[str, Callable[[], Any]]] = [("environment", environment_report)]
    steps += [(s, fn) for s, fn in (("formats", format_table), ("autocast", _autocast_differences),
                                    ("matmul", lambda: matmul_throughput(size)),
                                    ("features", _feature_table)) if s not in skip]
    rep: Report | None = None
    for i, (name, fn) in enumerate(steps, 1):
        say(f"[{i}/{len(steps)}] {SECTIONS.get(name, name)} ...")
        t0 = time.perf_counter()
        out = fn()
        dt = time.perf_counter() - t0
        if rep is None:
            rep = Report(environment=out)
        else:
            rep.tables[name] = out
        rep.seconds[name] = round(dt, 2)
        say(f"      done in {dt:.1f} s")
    return rep


SECTIONS = {"environment": "environment and capability", "formats": "format table",
            "autocast": "autocast policy vs documentation (probing ops)",
            "matmul": "matmul throughput per dtype (torch.utils.benchmark)",
            "features": "which features work here"}


def _value(v: Any) -> str:
    """A value as the report shows it: rounded to 4 significant digits, missing as n/a."""
    if isinstance(v, float) and math.isnan(v):
        v = None  # a gap pandas made: not applicable
    return format_cell(v)


def _cell(v: Any) -> str:
    """A value in a Markdown table cell."""
    return _value(v).replace("|", "\\|").replace("\n", " ")


def _env_value(key: str, value: Any) -> str:
    """An environment entry in words: the TF32 switches as ``env.tf32_summary`` says them, other
    mappings as ``name value`` pairs."""
    from amp_docs_lib.core.env import tf32_summary

    if key == "tf32" and isinstance(value, dict):
        return tf32_summary(value)
    if isinstance(value, dict):
        return ", ".join(f"{k} {_value(v)}" for k, v in value.items())
    return _value(value)


def markdown_table(df: pd.DataFrame, max_rows: int = 40) -> str:
    """A DataFrame as a GitHub Markdown table (None/NaN as n/a)."""
    cols = [str(c) for c in df.columns]
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for row in df.head(max_rows).itertuples(index=False):
        lines.append("| " + " | ".join(_cell(v) for v in row) + " |")
    if len(df) > max_rows:
        lines.append(f"\n... {len(df) - max_rows} more rows in the HTML report")
    return "\n".join(lines)


def markdown_summary(rep: Report) -> str:
    """The summary the command prints: environment lines, then each section's table."""
    env = rep.environment
    out = ["# Precision landscape of this machine", ""]
    for k in ("device", "cpu_capability", "cpu_matmul", "tf32", "profile"):
        if k in env:
            out.append(f"- **{k}**: {_env_value(k, env[k])}")
    pk = env.get("packages") or {}
    if pk:
        out.append("- **versions**: " + _env_value("packages", pk))
    for name, df in rep.tables.items():
        out += ["", f"## {SECTIONS[name]}", ""]
        if name == "matmul":
            out.append(f"Datasheet peaks: {PEAK_SOURCE}.\n")
        if name == "autocast" and df.empty:
            out.append("The measured policy matches the documentation on every probed op.")
        else:
            out.append(markdown_table(df))
    out += ["", "Section times (s): " + ", ".join(f"{k} {v}" for k, v in rep.seconds.items())]
    return "\n".join(out)


_CSS = """body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:2em auto;max-width:70em;
padding:0 1em;color:#1d1d1f}table{border-collapse:collapse;margin:.6em 0 1.6em;font-size:12.5px}
th,td{border-bottom:1px solid #ddd;padding:.25em .7em;text-align:left;font-variant-numeric:tabular-nums}
th{background:#f3f4f8}h1{font-size:1.6em}h2{font-size:1.2em;margin-top:1.6em}
.stamp{color:#666;font-size:12px}@media (prefers-color-scheme:dark){body{background:#16171d;color:#ddd}
th{background:#262833}th,td{border-color:#3a3d4a}}"""


def to_html(rep: Report) -> str:
    """One self-contained HTML document (inline CSS; no scripts, fonts or images to fetch)."""
    env_rows = "".join(f"<tr><th>{html.escape(str(k))}</th><td>{html.escape(_env_value(k, v))}</td></tr>"
                       for k, v in rep.environment.items())
    parts = [f"<!doctype html><html lang='en'><head><meta charset='utf-8'>"
             f"<title>amp-docs report</title><style>{_CSS}</style></head><body>",
             "<h1>Precision landscape of this machine</h1>",
             f"<p class='stamp'>amp-docs report, {_dt.datetime.now(_dt.timezone.utc):%Y-%m-%d %H:%M} UTC; "
             f"section times (s): {html.escape(str(rep.seconds))}</p>",
             f"<h2>{SECTIONS['environment']}</h2><table>{env_rows}</table>"]
    for name, df in rep.tables.items():
        parts.append(f"<h2>{html.escape(SECTIONS[name])}</h2>")
        if name == "autocast" and df.empty:
            parts.append("<p>The measured policy matches the documentation on every probed op.</p>")
        else:
            parts.append(df.astype(object).map(_value).to_html(index=False, border=0, escape=True))
    parts.append("</body></html>")
    return "\n".join(parts)


def check_writable(folder: Path, what: str) -> None:
    """Raise ValueError unless a file can be created in ``folder`` (a probe, removed at once), so that
    an output that cannot be written fails before the work, not after it. ``what`` names the option."""
    try:
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".amp-docs-probe-"):
            pass
    except OSError as e:
        raise ValueError(f"{what}: cannot write in {str(folder)!r} ({e.strerror or e})") from None


def write_report(output: str = "amp-docs-report.html", size: int | None = None, skip: tuple[str, ...] = ()) -> int:
    """Collect the report, write ``output`` and print the Markdown summary."""
    out = Path(output)
    if out.suffix.lower() not in (".html", ".htm"):
        raise ValueError(f"--output must be an .html file, got {output!r}")
    if not out.parent.resolve().is_dir():
        raise ValueError(f"--output's folder {str(out.parent)!r} does not exist")
    check_writable(out.parent, "--output")
    if out.exists() and not os.access(out, os.W_OK):
        raise ValueError(f"--output {output!r} exists and cannot be written")
    t0 = time.perf_counter()
    rep = collect(size=size, skip=skip, progress=lambda s: print(s, file=sys.stderr, flush=True))
    out.write_text(to_html(rep), encoding="utf-8")
    print(markdown_summary(rep))
    print(f"\nHTML report written to {out} ({time.perf_counter() - t0:.1f} s in all)", file=sys.stderr)
    return 0
