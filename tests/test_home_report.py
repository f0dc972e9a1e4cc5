"""`amp-docs report` (architecture review, finding 5): one matmul benchmark with one dtype vocabulary,
the concept package returns data, the command renders it."""

import pandas as pd

from amp_docs_lib.bench import matmul, model_sweep, report


def test_report_times_through_the_one_matmul_benchmark(monkeypatch):
    calls = []

    def sweep(sizes, dtypes, device, **kw):
        calls.append((tuple(sizes), tuple(dtypes), device))
        return pd.DataFrame({"dtype": list(dtypes), "tflops": [0.002] * len(dtypes)})

    monkeypatch.setattr(report, "throughput_sweep", sweep)
    df = report.matmul_throughput(64, devices=["cpu"])
    assert calls == [((64,), ("fp32", "fp16", "bf16"), "cpu")]
    assert list(df["GFLOP/s"].dropna()) == [2.0, 2.0, 2.0]


def test_one_spelling_of_each_dtype():
    assert report.MATMUL_DTYPES is matmul.MATMUL_DTYPES
    assert model_sweep.TF32 in matmul.MATMUL_DTYPES  # "tf32", not a third spelling


def test_the_concept_package_renders_nothing():
    for name in ("to_html", "markdown_table", "markdown_summary", "write_report"):
        assert not hasattr(report, name), name


def test_not_applicable_and_nan_print_as_the_site_prints_them():
    from amp_docs_lib.cli.report import markdown_table

    md = markdown_table(pd.DataFrame([{"a": None, "b": float("nan")}], dtype=object))
    assert md.splitlines()[2] == "| n/a | NaN |"
