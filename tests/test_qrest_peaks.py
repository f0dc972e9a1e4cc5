"""Issue 34 finding 23: datasheet rows for the GPUs readers rebuild on, each naming its source and
revision or year, and "n/a" instead of a fraction of a peak above 1."""

import re

import pytest

from amp_docs_lib.bench import peaks

NEW_ROWS = {
    "NVIDIA L4": "L4",
    "NVIDIA L40S": "L40S",
    "NVIDIA GeForce RTX 4090": "GeForce RTX 4090",
    "NVIDIA B200": "B200 (HGX)",
}


@pytest.mark.parametrize("device_name", sorted(NEW_ROWS))
def test_common_rebuild_gpus_have_a_sourced_row(device_name):
    row = peaks.GPU_PEAKS[peaks.match_gpu(device_name)]
    assert peaks.match_gpu(device_name) == NEW_ROWS[device_name]
    assert re.search(r"\b(v\d+\.\d+|r\d+|20\d\d)\b", row["source"]), row["source"]  # its revision or year
    assert row["fp32"] and row["bandwidth_tbs"]
    # a Tensor Core peak is at least the FP32 one (RTX 4090: TF32 = FP32); INT8 may be unsourced (None), never guessed
    assert all(row[k] is None or row[k] >= row["fp32"] for k in ("tf32", "bf16", "fp16", "fp8", "int8"))
    assert row["source"] in peaks.DATASHEET_SOURCE


def test_similar_names_without_a_row_match_nothing():
    for other in ("NVIDIA L40", "NVIDIA A10", "NVIDIA A10G", "NVIDIA H100 NVL", "NVIDIA GeForce RTX 4090 D"):
        assert peaks.match_gpu(other) is None, other


def test_dense_figures_from_their_tables():
    assert peaks.GPU_PEAKS["L4"]["bf16"] == 121.0  # 242 with sparsity / 2
    assert peaks.GPU_PEAKS["L40S"]["bf16"] == 362.05  # printed dense (733 with sparsity is not exactly twice)
    assert peaks.GPU_PEAKS["GeForce RTX 4090"]["bf16"] == pytest.approx(165.2)  # FP32 accumulate
    assert peaks.GPU_PEAKS["B200 (HGX)"]["fp8"] == 4500.0


def test_a_fraction_above_one_is_not_printed():
    assert peaks.peak_fraction(0.5, 1.0) == 0.5
    assert peaks.peak_fraction(1.0, 1.0) == 1.0
    assert peaks.peak_fraction(8.0, 1.0) == "above the peak"  # e.g. BF16 against an FP32 peak: no ceiling for it
    assert peaks.peak_fraction(None, 1.0) is None and peaks.peak_fraction(1.0, None) is None
    assert peaks.peak_fraction(1.0, 0.0) is None
