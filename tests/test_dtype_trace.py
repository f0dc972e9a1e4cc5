"""dtype flow through the GPT under autocast, and what one training step keeps in FP32."""

import pytest
import torch

from amp_docs_lib.amp import dtype_trace as dt
from amp_docs_lib.gpt import GPT, GPTConfig, random_batch

CFG = GPTConfig(vocab_size=32, block_size=8, n_layer=1, n_head=2, n_embd=16)


def _model_and_run():
    torch.manual_seed(0)
    model = GPT(CFG)
    idx, tgt = random_batch(CFG, 2)
    return model, (lambda m: m(idx, tgt)[1])


def test_gpt_forward_shapes_and_tied_head():
    model, _ = _model_and_run()
    idx, tgt = random_batch(CFG, 2)
    logits, loss = model(idx, tgt)
    assert logits.shape == (2, 8, 32) and loss.ndim == 0
    assert model.lm_head.weight is model.wte.weight


def test_linear_is_lowered_and_layernorm_is_not_under_bf16_autocast():
    model, run = _model_and_run()
    t = dt.trace_dtypes(model, run, "cpu", "amp_bf16")
    lin = t[t["type"] == "Linear"]
    assert set(lin["out"]) == {"bfloat16"}
    assert set(t[t["type"] == "LayerNorm"]["out"]) == {"float32"}
    assert t.iloc[-1]["module"] == "loss" and t.iloc[-1]["out"] == "float32"
    t32 = dt.trace_dtypes(model, run, "cpu", "fp32")
    assert set(t32[t32["type"] == "Linear"]["out"]) == {"float32"}


def test_dtype_flow_table_has_one_column_per_mode():
    model, run = _model_and_run()
    with torch.no_grad():
        f = dt.dtype_flow(model, run, "cpu", modes=("fp32", "amp_bf16"))
    row = f.set_index("module type").loc["Linear"]
    assert row["fp32"] == "float32 → float32"
    assert "float32 → bfloat16" in row["amp_bf16"]


@pytest.mark.parametrize("mode", ["amp_bf16", "amp_fp16"])
def test_parameters_grads_and_adamw_state_stay_fp32(mode):
    model, run = _model_and_run()
    s = dt.training_state_dtypes(model, run, "cpu", mode).set_index("tensors")
    n_params = len(list(model.parameters()))
    for kind in ("parameters", "gradients (.grad)", "AdamW exp_avg", "AdamW exp_avg_sq"):
        assert s.loc[kind, "dtypes"] == "float32"
        assert s.loc[kind, "count"] == n_params


def test_bad_mode_and_device_raise():
    model, run = _model_and_run()
    with pytest.raises(ValueError, match="valid modes"):
        dt.trace_dtypes(model, run, "cpu", "fp8")
    with pytest.raises(ValueError, match="valid devices"):
        dt.precision_context("tpu", "amp_bf16")
    with pytest.raises(TypeError):
        dt.trace_dtypes("not a model", run)
    with pytest.raises(ValueError, match="divisible"):
        GPTConfig(n_embd=10, n_head=4)


def test_plot_dtype_flow_returns_figure():
    import matplotlib.figure
    model, run = _model_and_run()
    with torch.no_grad():
        f = dt.dtype_flow(model, run, "cpu", modes=("fp32", "amp_bf16"))
    fig = dt.plot_dtype_flow(f)
    assert isinstance(fig, matplotlib.figure.Figure)
    import matplotlib.pyplot as plt
    plt.close(fig)


def test_gpt2_trace_requires_transformers_or_runs():
    try:
        import transformers  # noqa: F401
    except ImportError:
        with pytest.raises(ImportError, match="transformers"):
            dt.gpt2_dtype_flow()
        return
    f = dt.gpt2_dtype_flow(modes=("fp32", "amp_bf16"), n_positions=8)
    assert (f["amp_bf16"].str.contains("bfloat16")).any()
