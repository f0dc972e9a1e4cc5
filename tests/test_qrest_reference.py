"""Issue 34 finding 26: an emulated AVX2 reference says what it capped (ATen, oneDNN, MKL) and what saw the real CPU."""

import json

import pandas as pd
import pytest
from test_reference_machines import _notebook, _site

from amp_docs_lib.cli.reference import emulation_label, package
from amp_docs_lib.core.machine import DISPATCH_VARIABLES, environment_inputs
from amp_docs_lib.core.paths import REFERENCE_RESULTS
from amp_docs_lib.page.publish import publish

AVX2_CAPS = {"ATEN_CPU_CAPABILITY": "avx2", "ONEDNN_MAX_CPU_ISA": "AVX2"}


def test_mkl_is_a_dispatch_variable_and_part_of_the_cache_key(monkeypatch):
    # torch's FP32 GEMMs on x86 run in MKL, which reads neither ATen's nor oneDNN's variable
    assert "MKL_ENABLE_INSTRUCTIONS" in DISPATCH_VARIABLES
    monkeypatch.setenv("MKL_ENABLE_INSTRUCTIONS", "AVX2")
    assert environment_inputs()["MKL_ENABLE_INSTRUCTIONS"] == "AVX2"


def test_emulation_label_names_what_was_capped_and_what_saw_the_real_cpu():
    assert emulation_label({}) is None
    assert emulation_label(dict.fromkeys(DISPATCH_VARIABLES)) is None
    partial = emulation_label(AVX2_CAPS)
    assert partial.startswith("ATen and oneDNN capped to AVX2 (ATEN_CPU_CAPABILITY=avx2 ONEDNN_MAX_CPU_ISA=AVX2)")
    assert partial.endswith("MKL (FP32 GEMMs), ONNX Runtime, fbgemm and torch's VNNI guard see the real CPU")
    full = emulation_label({**AVX2_CAPS, "MKL_ENABLE_INSTRUCTIONS": "AVX2"})
    assert full.startswith("ATen, oneDNN and MKL (FP32 GEMMs) capped to AVX2 (")
    assert full.endswith("; ONNX Runtime, fbgemm and torch's VNNI guard see the real CPU")
    # different caps are named separately, never merged into one ISA
    assert emulation_label({"ATEN_CPU_CAPABILITY": "avx2", "ONEDNN_MAX_CPU_ISA": "AVX512_CORE"}).startswith(
        "ATen capped to AVX2; oneDNN capped to AVX512_CORE ("
    )


def test_every_committed_reference_says_how_it_was_run():
    machines = sorted(REFERENCE_RESULTS.glob("*/machine.json"))
    assert machines
    for path in machines:
        machine = json.loads(path.read_text())
        assert "dispatch_variables" in machine, path  # recorded, so the label below can be checked
        emulated = emulation_label(machine["dispatch_variables"])
        if emulated:
            assert emulated in machine["label"], path
            assert "avx2-only" not in path.parent.name, path  # an emulation is not named as the hardware


@pytest.mark.slow
def test_package_records_the_caps_and_labels_the_reference(tmp_path, monkeypatch):
    for var, value in AVX2_CAPS.items():
        monkeypatch.setenv(var, value)
    monkeypatch.delenv("MKL_ENABLE_INSTRUCTIONS", raising=False)
    site = _site(tmp_path, _notebook("perf", publish("perf_x", pd.DataFrame({"x": [1]}), "X")))
    dest = package(
        site,
        tmp_path / "refs",
        name="m",
        report_size=32,
        save_gated=False,
        archive=False,
        label="the developer's machine",
    )
    machine = json.loads((dest / "machine.json").read_text())
    assert machine["dispatch_variables"] == {**AVX2_CAPS, "MKL_ENABLE_INSTRUCTIONS": None}
    assert machine["label"] == "the developer's machine: " + emulation_label(AVX2_CAPS)
