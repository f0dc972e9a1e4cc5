"""The autocast policy probe classifies ops honestly, and the documented lists load."""

import pandas as pd
import pytest
import torch
from torch.torch_version import TorchVersion

from amp_docs_lib.amp import autocast_policy as ap


def _cat(op, dtype=torch.bfloat16, device="cpu"):
    return ap.probe_op(op, device, dtype)["category"]


@pytest.mark.parametrize("op", ["mm", "linear", "conv2d", "matmul", "scaled_dot_product_attention"])
def test_matrix_products_are_lowered_on_cpu(op):
    row = ap.probe_op(op, "cpu", torch.bfloat16)
    assert row["category"] == "lower"
    assert row["fp32 in"] == "bfloat16"


@pytest.mark.parametrize("op", ["mse_loss", "nll_loss", "prod", "binary_cross_entropy_with_logits"])
def test_documented_cpu_fp32_ops_are_forced_to_float32(op):
    assert ap.documented_category(op, "cpu") == "fp32"
    row = ap.probe_op(op, "cpu", torch.bfloat16)
    assert row["category"] == "fp32"
    assert row["low in"] == "float32"


@pytest.mark.parametrize("op", ["cat", "stack", "index_copy"])
def test_cpu_promote_ops_promote_mixed_inputs(op):
    row = ap.probe_op(op, "cpu", torch.bfloat16)
    assert row["category"] == "promote"
    assert (row["low in"], row["mixed in"]) == ("bfloat16", "float32")


def test_unchanged_ops_follow_their_input():
    row = ap.probe_op("relu", "cpu", torch.bfloat16)
    assert row["category"] == "unchanged"
    assert (row["fp32 in"], row["low in"]) == ("float32", "bfloat16")
    # softmax is forced to fp32 on CUDA only; on CPU it follows its input
    assert _cat("softmax") == "unchanged"
    # add mixes dtypes by ordinary type promotion, not through autocast
    add = ap.probe_op("add", "cpu", torch.bfloat16)
    assert add["category"] == "unchanged" and add["mixed, no autocast"] == "float32"


def test_op_that_rejects_mixed_dtypes_is_not_promoted_on_cpu():
    row = ap.probe_op("dot", "cpu", torch.bfloat16)
    assert row["mixed in"] == "error" and row["category"] == "unchanged"


def test_float16_shares_the_cpu_lists():
    assert _cat("mm", torch.float16) == "lower"
    assert _cat("mse_loss", torch.float16) == "fp32"


def test_probe_table_shape_and_categories():
    df = ap.probe_autocast_policy(devices=["cpu"], dtypes=[torch.bfloat16], ops=["mm", "relu", "cat"])
    assert list(df["op"]) == ["mm", "relu", "cat"]
    assert set(df["category"]) <= set(ap.CATEGORIES)
    s = ap.summarize_policy(df)
    assert int(s["cpu / bfloat16"].sum()) == 3
    assert len(ap.OPS) >= 40


def test_registry_entries_are_callable_specs():
    out = ap.OPS["mm"]("cpu", [torch.float32, torch.float32])
    assert out.shape == (4, 4) and out.dtype == torch.float32


def test_documented_lists_load_with_source():
    lists = ap.documented_op_lists()
    assert "amp" in lists["source"]["url"] and lists["source"]["commit"]
    cuda, cpu = lists["devices"]["cuda"]["lists"], lists["devices"]["cpu"]["lists"]
    assert {"mm", "linear", "conv2d"} <= set(cuda["lower"])
    assert {"softmax", "layer_norm", "log_softmax"} <= set(cuda["fp32"])
    assert {"addcmul", "dot"} <= set(cuda["promote"])
    assert {"cat", "stack"} <= set(cpu["promote"])
    assert "scaled_dot_product_attention" in cpu["lower"]
    assert ap.documented_category("softmax", "cuda") == "fp32"
    assert ap.documented_category("softmax", "cpu") == "unlisted"
    assert ap.documented_category("cross_entropy", "cpu") == "fp32"  # as cross_entropy_loss


def test_cpu_vs_cuda_documented_differences():
    d = ap.documented_cpu_vs_cuda(only=["softmax", "cat", "mm"])
    assert set(d["op"]) == {"softmax", "cat"}


def test_compare_with_documented_verdicts():
    df = ap.probe_autocast_policy(devices="cpu", dtypes=[torch.bfloat16], ops=["mm", "softmax", "einsum"])
    c = ap.compare_with_documented(df).set_index("op")
    assert c.loc["mm", "verdict"] == "agree"
    assert c.loc["softmax", "verdict"] == "agree"  # unlisted on CPU and unchanged
    assert c.loc["einsum", "verdict"] == "differ" and "composite" in c.loc["einsum", "why"]


def test_documented_differences_collapse_dtypes():
    df = ap.probe_autocast_policy(devices="cpu", ops=["einsum", "mm"])
    d = ap.documented_differences(df)
    assert list(d["op"]) == ["einsum"]
    assert set(d.iloc[0]["dtype"].split(", ")) == {"float16", "bfloat16"}


def test_registration_lookup_needs_no_gpu():
    assert ap.autocast_kernel_registered("mm", "cpu") is True
    assert ap.autocast_kernel_registered("mm", "cuda") is True
    assert ap.autocast_kernel_registered("relu", "cpu") is False
    assert ap.autocast_kernel_registered("no_such_op_xyz", "cpu") is None
    assert ap.default_autocast_dtypes() == {"cpu": "bfloat16", "cuda": "float16"}


def test_bad_inputs_raise_with_valid_choices():
    with pytest.raises(ValueError, match="valid devices"):
        ap.probe_autocast_policy(devices=["tpu"])
    with pytest.raises(ValueError, match="bfloat16"):
        ap.probe_autocast_policy(dtypes=[torch.float32])
    with pytest.raises(TypeError, match="valid"):
        ap.probe_autocast_policy(dtypes=[3])
    with pytest.raises(ValueError, match="valid ops"):
        ap.probe_autocast_policy(ops=["nope"])
    with pytest.raises(ValueError, match="valid devices"):
        ap.documented_category("mm", "xpu")
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="not available"):
            ap.probe_autocast_policy(devices=["cuda"])


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_cuda_policy_matches_documented_core_ops():
    df = ap.probe_autocast_policy(devices=["cuda"], dtypes=[torch.float16],
                                  ops=["mm", "softmax", "addcmul", "relu"])
    got = dict(zip(df["op"], df["category"]))
    assert got == {"mm": "lower", "softmax": "fp32", "addcmul": "promote", "relu": "unchanged"}


# ---- issue 20: FP32 candidates, composites, cast cache, threads, compile ------------------------
def test_installed_header_lists_agree_with_the_dispatcher():
    hdr = ap.installed_header_lists()
    if not hdr["ops"]:
        pytest.skip("this torch ships no ATen/autocast_mode.h macros")
    t = ap.fp32_candidates_table()
    col = "CUDA category (installed ATen/autocast_mode.h)"
    assert ((t[col] == "fp32") == (t["CUDA autocast kernel"] == True)).all()  # noqa: E712
    split = ap.fp32_split(t)
    assert "softmax" in split["cuda"]["fp32"]
    # rms_norm joined the CUDA fp32 list after 2.11: absent from 2.11.0's header, present in 2.15.0's
    # (the versions between were not checked).
    if torch.__version__ < TorchVersion("2.12") or torch.__version__ >= TorchVersion("2.15"):
        assert ("rms_norm" in split["cuda"]["fp32"]) == (torch.__version__ >= TorchVersion("2.15"))
    assert {"batch_norm", "mean", "var", "max"} <= set(split["cuda"]["not fp32"])
    assert split["cpu"]["fp32"] == ["prod", "quantile"]  # the review's counter-example to "none of those"


def test_composite_is_lowered_inside_and_downstream_follows_input():
    trace = ap.composite_inside_trace()
    assert trace.loc[trace["aten op"] == "bmm", "input dtypes"].tolist() == ["bfloat16, bfloat16"]
    d = ap.downstream_vs_inside()
    assert d["relu of the matmul output (downstream)"] == "bfloat16" and d["relu of an FP32 tensor"] == "float32"


def test_cast_cache_and_eligibility_and_threads():
    c = ap.cast_cache_counts(calls=3).set_index("cache_enabled")["casts"]
    assert (c[True], c[False]) == (5, 9)
    assert ap.cast_cache_counts(calls=4).set_index("cache_enabled")["casts"].tolist() == [6, 12]
    st = ap.eligibility_and_state().set_index("observation")["value"]
    assert st["float64 matmul"] == "float64" and st["float32 matmul"] == "bfloat16"
    assert st["thread: autocast enabled"] == "False" and st["main thread: autocast enabled"] == "True"


def test_compile_backward_autocast_setting_is_read_from_torch():
    cb = ap.compile_backward_autocast()
    from torch._functorch import config
    assert cb["value"] == getattr(config, "backward_pass_autocast", None)
    if cb["value"] is not None:
        line = open(config.__file__).read().splitlines()[cb["line"] - 1]
        assert line.startswith("backward_pass_autocast")
