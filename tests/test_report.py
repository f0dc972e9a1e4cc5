"""`amp-docs report`: a self-contained HTML file and a Markdown summary; clear errors for bad options."""

import re

import pytest

from amp_docs_lib.cli import main
from amp_docs_lib.bench.report import datasheet_peak, matmul_throughput
from amp_docs_lib.cli.report import markdown_table

import pandas as pd


def test_report_writes_self_contained_html_and_prints_markdown(tmp_path, capsys):
    out = tmp_path / "r.html"
    assert main(["report", "-o", str(out), "--size", "64", "--skip", "autocast"]) == 0
    cap = capsys.readouterr()
    page = out.read_text()
    assert "<script" not in page.lower()
    assert not re.search(r"""(?:src|href)\s*=\s*["']?(?:https?:)?//""", page), "external resource in the report"
    assert not re.search(r"url\(", page)
    for section in ("format table", "matmul throughput per dtype", "which features work here"):
        assert section in page and f"## {section}" in cap.out
    assert "autocast policy" not in cap.out  # skipped
    assert "[1/4] environment" in cap.err and "done in" in cap.err  # progress while running
    rows = [line for line in cap.out.splitlines() if line.startswith("| cpu | ") and "| 64 |" in line]
    assert {r.split("|")[2].strip() for r in rows} == {"fp32", "tf32", "fp16", "bf16", "fp8"}


def test_matmul_throughput_measures_every_dtype():
    df = matmul_throughput(32, devices=["cpu"], min_run_time=0.01).set_index("dtype")
    assert list(df.index) == ["fp32", "tf32", "fp16", "bf16", "fp8"]  # bench.matmul's dtype names
    ran = ["fp32", "fp16", "bf16"]  # the CPU has no TF32 and no FP8 matmul
    assert all(v > 0 for v in df.loc[ran, "GFLOP/s"]) and df.loc["fp32", "vs fp32"] == 1.0
    assert df.loc[["tf32", "fp8"], "GFLOP/s"].isna().all() and df.loc["fp8", "note"] == "no fp8 matmul on cpu here"
    with pytest.raises(ValueError, match="size must be an int >= 16"):
        matmul_throughput(8)
    with pytest.raises(ValueError, match="unknown matmul dtype"):
        matmul_throughput(32, dtypes=("float33",))


@pytest.mark.parametrize("argv, message", [
    (["--size", "4"], "size must be an int >= 16"),
    (["-o", "report.txt"], "must be an .html file"),
    (["-o", "/nonexistent-dir/r.html"], "does not exist"),
    (["--skip", "everything"], "'everything' is not one of 'formats', 'autocast', 'matmul', 'features'"),
    (["--size", "big"], "'big' is not a valid integer"),
])
def test_bad_options_get_a_clear_error(argv, message, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["report", *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and "Usage: amp-docs report" in err


def test_markdown_table_shows_none_as_na():
    md = markdown_table(pd.DataFrame([{"a": None, "b": "x|y"}], dtype=object))
    assert md.splitlines()[2] == "| n/a | x\\|y |"


def test_datasheet_peaks_match_gpu_names_and_are_absent_elsewhere():
    assert datasheet_peak("NVIDIA H100 PCIe", "bf16") < datasheet_peak("NVIDIA H100 80GB HBM3", "bf16")
    assert datasheet_peak("NVIDIA A100-SXM4-80GB", "fp8") is None  # no FP8 on Ampere
    assert datasheet_peak("AMD EPYC", "fp32") is None
    df = matmul_throughput(32, devices=["cpu"], min_run_time=0.01)
    assert df["datasheet peak GFLOP/s"].isna().all() and df["fraction of peak"].isna().all()
    with pytest.raises(TypeError):
        datasheet_peak(None, "bf16")


needs_proc = pytest.mark.skipif(not __import__("os").path.isdir("/proc/self"), reason="needs Linux's /proc")


@needs_proc
def test_an_unwritable_output_fails_before_the_work(capsys, monkeypatch):
    collected = []
    monkeypatch.setattr("amp_docs_lib.cli.report.collect", lambda *a, **k: collected.append(a))
    assert main(["report", "-o", "/proc/r.html", "--skip", "autocast"]) == 2  # /proc: no file can be created
    err = capsys.readouterr().err
    assert "--output: cannot write in '/proc'" in err and "Traceback" not in err
    assert not collected


def test_markdown_is_rounded_and_tf32_in_words():
    from amp_docs_lib.bench.report import Report
    from amp_docs_lib.cli.report import markdown_summary

    tf32 = {"float32_matmul_precision": "highest", "cuda.matmul.allow_tf32": False, "cudnn.allow_tf32": True}
    rep = Report(environment={"device": "CPU", "tf32": tf32},
                 tables={"matmul": pd.DataFrame([{"dtype": "float32", "GFLOP/s": 13.602433520815282,
                                                  "max": 3.4028234663852886e+38, "note": None}], dtype=object)})
    md = markdown_summary(rep)
    assert "| float32 | 13.6 | 3.403e+38 | n/a |" in md.splitlines()
    assert "- **tf32**: TF32 matmul off, cuDNN on" in md.splitlines()
    assert "13.602433520815282" not in md and "{" not in md
