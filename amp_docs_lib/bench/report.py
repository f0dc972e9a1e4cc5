"""``amp-docs report``: this machine's precision landscape, collected as data.

Collects, in order (progress through a callback):

1. the environment (``env.environment_report``: device, CPU capability, versions, TF32 settings);
2. the format table (``formats.format_table``);
3. where autocast's measured policy differs from the PyTorch documentation
   (``autocast_policy.probe_autocast_policy`` + ``documented_differences``), per device here;
4. matmul throughput per dtype (``bench.matmul.throughput_sweep``, its dtype names), with each dtype's
   speed relative to FP32 on the same device and, on a listed GPU, its fraction of the datasheet peak;
5. which features work here: BF16, FP16, TF32, FP8 and MX (dtype casts, matmul kernels,
   hardware), and torchao's quantization configs applied to a small ``nn.Linear``.

:func:`collect` returns a :class:`Report`; the command renders it (HTML and Markdown: ``cli/report.py``).
"""

from __future__ import annotations

import importlib.util
import time
from dataclasses import dataclass, field
from typing import Any, Callable

import pandas as pd

from amp_docs_lib.bench.matmul import MATMUL_DTYPES, dtype_supported, throughput_sweep
from amp_docs_lib.bench.peaks import GPU_PEAKS, match_gpu, peak_fraction
from amp_docs_lib.core.tables import table_from_rows

DEFAULT_CPU_SIZE = 256
DEFAULT_CUDA_SIZE = 4096
TORCHAO_CONFIGS = ("Int8WeightOnlyConfig", "Int8DynamicActivationInt8WeightConfig",
                   "Int4WeightOnlyConfig", "Float8WeightOnlyConfig",
                   "Float8DynamicActivationFloat8WeightConfig")


def _rounded(fraction: float | str | None) -> float | str | None:
    return round(fraction, 3) if isinstance(fraction, float) else fraction


def datasheet_peak(device_name: str, dtype: str) -> float | None:
    """Dense peak (TFLOP/s) of a GPU for ``dtype`` (a :data:`bench.matmul.MATMUL_DTYPES` name) from
    ``bench.peaks.GPU_PEAKS``, or None for an unlisted GPU or dtype."""
    if not isinstance(device_name, str) or not isinstance(dtype, str):
        raise TypeError("device_name and dtype must be str")
    row = match_gpu(device_name)
    return None if row is None else GPU_PEAKS[row].get(dtype)


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
    """GFLOP/s of an ``n x n`` matmul per device and dtype (:func:`bench.matmul.throughput_sweep`).

    ``size`` defaults to 256 on CPU and 4096 on CUDA. A dtype with no matmul on a device
    (``bench.matmul.dtype_supported``) gets a row saying so; listed GPUs get their datasheet peak
    (:func:`datasheet_peak`; n/a on CPUs, which have no such figure here). Raises ValueError for a
    size below 16 or an unknown dtype name.
    """
    import torch

    from amp_docs_lib.core.devices import available_devices

    if size is not None and (not isinstance(size, int) or isinstance(size, bool) or size < 16):
        raise ValueError(f"size must be an int >= 16, got {size!r}")
    dtypes = tuple(dtypes)
    rows = []
    for dev in devices or available_devices():
        n = size or (DEFAULT_CUDA_SIZE if dev.startswith("cuda") else DEFAULT_CPU_SIZE)
        here = [d for d in dtypes if dtype_supported(d, dev)]  # raises ValueError for an unknown name
        sweep = throughput_sweep([n], here, dev, min_run_time=min_run_time) if here else None
        rate = {} if sweep is None else dict(zip(sweep["dtype"], sweep["tflops"]))  # TFLOP/s per dtype
        gpu = torch.cuda.get_device_name(dev) if dev.startswith("cuda") else None
        for d in dtypes:
            gflops = rate[d] * 1e3 if d in rate else None  # unrounded: a slow emulated dtype can be far below 0.01
            base = rate.get("fp32")
            peak = None if gpu is None else datasheet_peak(gpu, d)
            rows.append({"device": dev, "dtype": d, "size": n, "GFLOP/s": gflops,
                         "vs fp32": None if gflops is None or not base else round(rate[d] / base, 3),
                         "datasheet peak GFLOP/s": None if peak is None else peak * 1e3,
                         "fraction of peak": _rounded(peak_fraction(gflops, None if peak is None else peak * 1e3)),
                         "note": None if d in rate else f"no {d} matmul on {dev} here"})
    return table_from_rows(rows)


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
            "matmul": "matmul throughput per dtype",
            "features": "which features work here"}
