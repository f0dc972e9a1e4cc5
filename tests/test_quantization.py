"""Quantization library: hand-written arithmetic against torchao and torch, calibration,
PTQ, QAT and ONNX Runtime on the digits task."""

import numpy as np
import pytest
import torch
from torch import nn

from amp_docs_lib.quantization import affine, calibration, kernels, ptq, qat, task

INT8_TOLERANCE = 0.01  # INT8 accuracy must stay within 1 point of FP32 on the digits test set


@pytest.fixture(scope="module")
def small_task():
    with task.single_thread():
        return task._trained(64, 10, 0)


@pytest.mark.parametrize("bits", [8, 4, 2])
@pytest.mark.parametrize("scheme", affine.SCHEMES)
@pytest.mark.parametrize("granularity", affine.GRANULARITIES)
def test_roundtrip_error_within_half_step(bits, scheme, granularity):
    w = torch.randn(16, 64, generator=torch.Generator().manual_seed(bits)) * 3
    qp = affine.choose_qparams(w, bits, scheme=scheme, granularity=granularity, group_size=16)
    q = affine.quantize(w, qp)
    assert q.dtype == torch.int8 and int(q.min()) >= qp.qmin and int(q.max()) <= qp.qmax
    err = affine._blocks((w - affine.dequantize(q, qp)).abs(), qp.block)
    assert float((err / qp.scale[:, None]).max()) <= 0.5 + 1e-5


def test_symmetric_zero_is_exact_and_asymmetric_zero_point_in_range():
    w = torch.tensor([[0.0, 1.0, 3.0, 2.0]])
    for scheme in affine.SCHEMES:
        qp = affine.choose_qparams(w, 4, scheme=scheme, granularity="per_channel")
        assert float(affine.dequantize(affine.quantize(w, qp), qp)[0, 0]) == 0.0
        assert qp.qmin <= int(qp.zero_point[0]) <= qp.qmax


def test_per_channel_scales_by_hand():
    w = torch.tensor([[1.0, -2.0, 0.5, 0.0],
                      [0.25, 0.5, 0.75, 1.0]])
    sym = affine.choose_qparams(w, 8, scheme="symmetric", granularity="per_channel")
    # max|row| / ((127 - (-128)) / 2)
    assert torch.allclose(sym.scale, torch.tensor([2.0 / 127.5, 1.0 / 127.5]))
    assert sym.zero_point.tolist() == [0, 0]
    asym = affine.choose_qparams(w, 8, scheme="asymmetric", granularity="per_channel")
    # (max(x,0) - min(x,0)) / 255; zero point = -128 - round(min(x,0) / scale)
    assert torch.allclose(asym.scale, torch.tensor([3.0 / 255, 1.0 / 255]))
    assert asym.zero_point.tolist() == [-128 - round(-2.0 / (3.0 / 255)), -128]
    # 1 / (2 / 127.5) = 63.75: 1.0 -> 64, 0.5 -> 32 (31.875), 0 -> 0; -2.0 sits on a rounding tie (-127.5)
    q = affine.quantize(w, sym)[0].tolist()
    assert [q[0], q[2], q[3]] == [64, 32, 0] and q[1] in (-128, -127)


def test_codes_match_torchao():
    w = torch.randn(32, 64, generator=torch.Generator().manual_seed(0))
    w[3] *= 30  # an outlier channel
    table = affine.compare_with_torchao(w, bits_list=(8, 4, 2))
    assert table["codes that differ"].sum() == 0
    assert table["max relative scale difference"].max() == 0.0


def test_fake_quantize_matches_torch_per_channel_and_per_tensor():
    w = torch.randn(8, 32, generator=torch.Generator().manual_seed(1))
    for scheme in affine.SCHEMES:
        qp = affine.choose_qparams(w, 8, scheme=scheme, granularity="per_channel")
        ref = torch.fake_quantize_per_channel_affine(w, qp.scale, qp.zero_point, 0, qp.qmin, qp.qmax)
        assert torch.allclose(affine.fake_quantize(w, 8, scheme=scheme, granularity="per_channel"), ref, atol=1e-6)
        qp = affine.choose_qparams(w, 8, scheme=scheme, granularity="per_tensor")
        ref = torch.fake_quantize_per_tensor_affine(w, float(qp.scale[0]), int(qp.zero_point[0]), qp.qmin, qp.qmax)
        assert torch.allclose(affine.fake_quantize(w, 8, scheme=scheme), ref, atol=1e-6)


def test_finer_granularity_isolates_an_outlier_channel():
    w = torch.randn(16, 64, generator=torch.Generator().manual_seed(2))
    t = affine.granularity_table(w, outlier_channel=0, factor=20.0, bits_list=(4,)).set_index("granularity")
    before, after = t.columns[-2], t.columns[-1]
    assert t.loc["per_tensor", after] < t.loc["per_tensor", before] - 10
    assert t.loc["per_channel", after] == pytest.approx(t.loc["per_channel", before])


@pytest.mark.parametrize("bits", [1, 9, 16, 0])
def test_invalid_bit_width_names_valid_ones(bits):
    with pytest.raises(ValueError, match=r"valid bit widths: \[2, 3, 4, 5, 6, 7, 8\]"):
        affine.choose_qparams(torch.randn(4, 4), bits)


def test_invalid_granularity_scheme_and_group_size():
    w = torch.randn(4, 64)
    with pytest.raises(ValueError, match="valid granularities: .*per_tensor.*per_channel.*per_group"):
        affine.choose_qparams(w, 8, granularity="per_row")
    with pytest.raises(ValueError, match="valid schemes"):
        affine.choose_qparams(w, 8, scheme="signed")
    with pytest.raises(ValueError, match="group_size"):
        affine.choose_qparams(w, 8, granularity="per_group", group_size=48)
    with pytest.raises(TypeError, match="bits must be an int"):
        affine.choose_qparams(w, 8.0)


def test_calibration_rules():
    a = torch.relu(torch.randn(4000, generator=torch.Generator().manual_seed(3)))
    a[0] = 50.0  # one outlier
    assert calibration.calibrate(a, "minmax") == (0.0, 50.0)
    lo, hi = calibration.calibrate(a, "percentile", percentile=99.0)
    assert hi == pytest.approx(float(np.percentile(a.numpy(), 99.0)))
    mse = lambda r: float(((calibration.fake_quantize_range(a, *r, bits=4) - a) ** 2).mean())  # noqa: E731
    r_mse = calibration.calibrate(a, "mse", bits=4)
    assert mse(r_mse) <= mse(calibration.calibrate(a, "minmax")) and r_mse[1] < 50.0
    with pytest.raises(ValueError, match="valid methods"):
        calibration.calibrate(a, "entropy")


def test_fake_quantize_range_matches_torch():
    x = torch.linspace(-1, 5, 101)
    scale, zp = calibration.range_qparams(-0.5, 4.0, 8)
    ref = torch.fake_quantize_per_tensor_affine(x, scale, zp, -128, 127)
    assert torch.allclose(calibration.fake_quantize_range(x, -0.5, 4.0, 8), ref, atol=1e-6)


@pytest.mark.slow
def test_int8_ptq_accuracy_and_size(small_task):
    t, d = small_task, small_task.data
    fp32_bytes = task.state_dict_bytes(t.model)
    for name in ("int8_wo", "int8_dyn"):
        q = ptq.quantize_variant(t.model, name)
        assert task.state_dict_bytes(q) < 0.5 * fp32_bytes, name
        acc = task.accuracy(q, d.x_test, d.y_test)
        if name == "int8_dyn" and kernels.int8_path_probe()["saturates"]:
            # integer activations on a CPU whose int8 matmul saturates (no VNNI): the loss is real
            # and shown by the chapter; weight-only INT8 (a float matmul) must still be accurate
            continue
        assert acc >= t.fp32_accuracy - INT8_TOLERANCE, name


def test_unknown_variant_and_filter_fn(small_task):
    with pytest.raises(ValueError, match="valid variants"):
        ptq.check_variant("int3_magic")
    q = ptq.quantize_copy(small_task.model, ptq.VARIANTS["int8_wo"].make_config(), filter_fn=lambda m, fqn: fqn != "0")
    assert type(q[0].weight) is nn.Parameter or type(q[0].weight).__name__ == "Parameter"
    assert type(q[2].weight).__name__ == "Int8Tensor"
    assert type(small_task.model[2].weight).__name__ == "Parameter"  # the original is untouched


def test_qat_prepare_convert(small_task):
    base = ptq._intx_wo(torch.int2, None)
    fq_acc, m = qat.qat_model(small_task, base, epochs=1)
    assert type(m[0].weight).__name__ == "IntxUnpackedToInt8Tensor"
    d = small_task.data
    assert abs(task.accuracy(m, d.x_test, d.y_test) - fq_acc) * len(d.x_test) <= 1


@pytest.mark.slow
def test_onnx_runtime_int8_accuracy_and_size(small_task, tmp_path):
    pytest.importorskip("onnxruntime")
    from amp_docs_lib.quantization import onnx_runtime as ortq

    t, d = small_task, small_task.data
    fp32 = ortq.preprocess(ortq.export_onnx(t.model, tmp_path / "raw.onnx", d.x_test[:8]), tmp_path / "fp32.onnx")
    ref = ortq.predict(ortq.session(fp32), d.x_test)
    assert np.allclose(ref, t.model(d.x_test).detach().numpy(), atol=1e-4)
    # reduce_range (7-bit weights): no 16-bit saturation on CPUs without VNNI either
    for path in (ortq.quantize_onnx_dynamic(fp32, tmp_path / "dyn.onnx", reduce_range=True),
                 ortq.quantize_onnx_static(fp32, tmp_path / "qdq.onnx", d.x_calib, reduce_range=True)):
        acc = float((ortq.predict(ortq.session(path), d.x_test).argmax(1) == d.y_test.numpy()).mean())
        assert acc >= t.fp32_accuracy - INT8_TOLERANCE, path.name
        assert ortq.file_size(path) < 0.5 * ortq.file_size(fp32), path.name
    assert ortq.op_counts(tmp_path / "qdq.onnx").get("QuantizeLinear", 0) > 0
    with pytest.raises(ValueError, match="valid"):
        ortq.quantize_onnx_static(fp32, tmp_path / "x.onnx", d.x_calib, method="Magic")
