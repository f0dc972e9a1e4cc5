"""Issue 34 finding 23: datasheet rows only from NVIDIA's own documents, each naming its source; the GPUs whose
figures could be read only in third-party copies have no row (and say why), and "n/a" instead of a fraction of a
peak above 1."""

import re

import pytest

from amp_docs_lib.bench import peaks

# torch.cuda.get_device_name() spellings of GPUs whose datasheets were read only in third-party copies
UNSOURCED_NAMES = (
    "NVIDIA L4",
    "NVIDIA L40S",
    "NVIDIA GeForce RTX 4090",
    "NVIDIA B200",
    "NVIDIA A10",
    "NVIDIA H100 NVL",
)


@pytest.mark.parametrize("device_name", UNSOURCED_NAMES)
def test_a_gpu_without_an_nvidia_document_gets_no_row(device_name):
    assert peaks.match_gpu(device_name) is None
    short = device_name.removeprefix("NVIDIA ")
    assert "NVIDIA" in peaks.UNSOURCED_GPUS[short]  # the document that would be needed, and why it is not used


def test_every_row_names_an_nvidia_document():
    for gpu, row in peaks.GPU_PEAKS.items():
        assert row["source"].startswith("NVIDIA ") and row["source"] in peaks.DATASHEET_SOURCE, gpu
        assert gpu.split()[0] not in peaks.UNSOURCED_GPUS  # no row for a GPU listed as unsourced
    table = peaks.datasheet_table()
    assert set(table["GPU"]) == set(peaks.GPU_PEAKS)


def test_similar_names_without_a_row_match_nothing():
    for other in ("NVIDIA L40", "NVIDIA A10G", "NVIDIA H200 NVL", "NVIDIA GeForce RTX 4090 D", "NVIDIA A100X"):
        assert peaks.match_gpu(other) is None, other
    assert re.search(r"\(r4\)", peaks.GPU_PEAKS["A100 SXM 80GB"]["source"])


def test_a_fraction_above_one_is_not_printed():
    assert peaks.peak_fraction(0.5, 1.0) == 0.5
    assert peaks.peak_fraction(1.0, 1.0) == 1.0
    assert peaks.peak_fraction(8.0, 1.0) == "above the peak"  # e.g. BF16 against an FP32 peak: no ceiling for it
    assert peaks.peak_fraction(None, 1.0) is None and peaks.peak_fraction(1.0, None) is None
    assert peaks.peak_fraction(1.0, 0.0) is None
