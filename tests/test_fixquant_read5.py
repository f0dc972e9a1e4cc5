"""The fifth expert read of the quantization chapter (/work/reads5/quantization.md): its findings as checks."""

import platform
from pathlib import Path

import pandas as pd
import pytest
import torch

from amp_docs_lib.core import timing
from amp_docs_lib.quantization import speed

CHAPTER = Path(__file__).resolve().parents[1] / "docs" / "chapters" / "quantization.md"


def _aa(lo: float, hi: float) -> timing.Comparison:
    return timing.Comparison(None, None, (lo + hi) / 2, lo, hi, 9, 0.9)


def test_finding1_an_interval_that_excludes_1_but_overlaps_the_aa_interval_is_unresolved():
    # the reader's rows: batch 256 INT8 weight-only [0.913, 0.987] against an A/A interval [0.971, 1.016]
    assert timing.verdict_for(0.913, 0.987, _aa(0.971, 1.016)) == timing.UNRESOLVED
    assert timing.verdict_for(0.850, 0.977, _aa(0.971, 1.016)) == timing.UNRESOLVED
    assert timing.verdict_for(0.850, 0.960, _aa(0.971, 1.016)) == "slower"  # wholly below the A/A interval
    # the page states that rule, not the old "excludes 1 and the A/A control resolved no difference"
    text = " ".join(CHAPTER.read_text().split())
    assert 'an interval that excludes 1 but overlaps the A/A interval reads "no difference resolved"' in text
    assert "only when that interval excludes 1 and the set's A/A control" not in text


def test_finding2_int4_weight_only_has_four_packing_formats():
    from torchao.quantization.quantize_.workflows.int4.int4_packing_format import Int4PackingFormat

    assert {f.value for f in Int4PackingFormat} == {"plain", "preshuffled", "plain_int32", "tile_packed_to_4d"}
    from torchao.quantization.quantize_.workflows.int4.int4_plain_int32_tensor import Int4PlainInt32Tensor

    with pytest.raises(NotImplementedError):  # plain_int32 builds for XPU and NPU only
        Int4PlainInt32Tensor.from_hp(torch.randn(16, 64), [1, 32])


def _row(b, v, lo, hi):
    s = (lo + hi) / 2
    verdict = timing.verdict_for(lo, hi, _aa(0.97, 1.02))
    return {
        "batch": b,
        "variant": v,
        "speedup vs FP32 (x)": s,
        "interval low": lo,
        "interval high": hi,
        "verdict": verdict,
    }


def test_finding4_a_change_resting_on_batch_1_is_shown_not_hidden():
    # the reader's INT8 dynamic: slower at 1, unresolved at 8, faster at 64, 256, 1024
    rows = [
        {
            "batch": b,
            "variant": "FP32",
            "speedup vs FP32 (x)": None,
            "interval low": None,
            "interval high": None,
            "verdict": None,
        }
        for b in (1, 8, 64, 256, 1024)
    ]
    rows += [
        _row(1, "dyn", 0.265, 0.276),
        _row(8, "dyn", 0.9, 1.1),
        _row(64, "dyn", 2.9, 3.1),
        _row(256, "dyn", 4.0, 4.6),
        _row(1024, "dyn", 2.2, 2.7),
    ]
    x = speed.crossovers(pd.DataFrame(rows)).set_index("variant")
    assert x.loc["dyn", "crossover"].startswith("none")  # the two-batch rule cannot count it on this grid
    assert x.loc["dyn", "change on a single batch (not counted)"] == "slower at 1, faster at 64"
    text = " ".join(CHAPTER.read_text().split())
    assert "the changes it leaves out, each resting on a single batch" in text


@pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64"), reason="ONNX Runtime keeps int8 QDQ on ARM")
def test_finding5_onnx_runtime_runs_the_s8s8_model_with_uint8_activations(tmp_path):
    pytest.importorskip("onnxruntime")
    pytest.importorskip("onnxscript")
    from amp_docs_lib.quantization import onnx_runtime as ort_q

    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.Linear(64, 32), torch.nn.ReLU(), torch.nn.Linear(32, 10)).eval()
    x = torch.randn(128, 64)
    fp = ort_q.preprocess(ort_q.export_onnx(m, tmp_path / "raw.onnx", x[:8]), tmp_path / "fp.onnx")
    s8 = ort_q.quantize_onnx_static(fp, tmp_path / "s8.onnx", x)
    u8 = ort_q.quantize_onnx_static(fp, tmp_path / "u8.onnx", x, activation_type="QUInt8")
    assert ort_q.activation_types(s8, optimized=False) == ["INT8"]  # the file holds S8S8
    assert ort_q.activation_types(s8) == ["UINT8"]  # the session runs U8S8 (QDQS8ToU8Transformer)
    assert ort_q.activation_types(u8) == ["UINT8"]
    # finding 8: the quantizer removed the Relu (asymmetric activations), the FP32 graph has it
    assert ort_q.op_counts(fp).get("Relu") == 1 and "Relu" not in ort_q.op_counts(s8)
    a = ort_q.predict(ort_q.session(s8), x)
    b = ort_q.predict(ort_q.session(u8), x)
    assert abs(float((a - b).__abs__().max())) < 1e-2 * float(abs(b).max())


def test_finding3_the_same_eager_layer_timed_in_two_sets_is_compared():
    sweep = pd.DataFrame(
        [
            {"batch": 1024, "variant": "FP32", "median (us)": 18300.0, "IQR (us)": 900.0},
            {"batch": 1024, "variant": "INT8 dyn", "median (us)": 7933.0, "IQR (us)": 694.0},
            {"batch": 8, "variant": "INT8 dyn", "median (us)": 100.0, "IQR (us)": 5.0},
        ]
    )
    comp = pd.DataFrame(
        [
            {"model": "FP32 (eager)", "median (us)": 18860.0, "IQR (us)": 400.0},
            {"model": "INT8 dyn (eager)", "median (us)": 4600.0, "IQR (us)": 87.0},
            {"model": "INT8 dyn (compiled)", "median (us)": 2800.0, "IQR (us)": 50.0},
        ]
    )
    t = speed.same_layer_twice(sweep, comp).set_index("layer (eager)")
    assert list(t.index) == ["FP32", "INT8 dyn"]
    assert bool(t.loc["FP32", "agree"])  # 560 us apart, within 900 + 400
    assert not bool(t.loc["INT8 dyn", "agree"])  # the reader's numbers: 3333 us apart, beyond 694 + 87
    assert t.loc["INT8 dyn", "ratio (sweep / compile)"] == pytest.approx(7933 / 4600)
