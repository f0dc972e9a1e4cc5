"""The H100 build (2026-11-25) failed in the Performance chapter: ``device_peaks`` on a listed GPU returned its
whole datasheet row, and the roofline drew the row's ``source`` string as a roof (numpy refused a string in
``np.minimum``). The GPU path is walked here with the device name torch reports on an H100."""

import math

import torch

from amp_docs_lib.bench import peaks


def test_a_listed_gpu_gives_one_number_or_none_per_dtype(monkeypatch):
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda *a, **k: "NVIDIA H100 80GB HBM3")
    by_dtype, note = peaks.device_peaks("cuda")
    assert "H100 SXM row" in note
    assert set(by_dtype) == set(peaks.PEAK_DTYPES) == {"fp32", "tf32", "bf16", "fp16", "fp8", "int8"}
    assert all(v is None or (isinstance(v, float | int) and math.isfinite(v)) for v in by_dtype.values())
    assert by_dtype["bf16"] == peaks.GPU_PEAKS["H100 SXM"]["bf16"]


def test_the_roofline_draws_every_listed_peak(monkeypatch):
    import pandas as pd

    from amp_docs_lib.bench import roofline

    monkeypatch.setattr(torch.cuda, "get_device_name", lambda *a, **k: "NVIDIA H100 80GB HBM3")
    by_dtype, _ = peaks.device_peaks("cuda")
    sweep = pd.DataFrame(
        {
            "dtype": ["bf16", "fp32"],
            "n": [4096, 4096],
            "tflops": [700.0, 50.0],
            "intensity": [1365.0, 682.0],
            "bytes": [1e8, 2e8],
        }
    )
    fig = roofline.plot_roofline(
        sweep,
        by_dtype["fp32"],
        3.0,
        peak_label="FP32 peak",
        extra_roofs={k.upper(): v for k, v in by_dtype.items() if k != "fp32" and v},
    )
    texts = {t.get_text().strip() for t in fig.axes[0].texts}
    assert {"TF32", "BF16", "FP16", "FP8", "INT8"} <= texts
