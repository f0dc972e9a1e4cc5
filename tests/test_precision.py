"""The precision switch: right pieces per name, clear errors for bad input."""

import pytest
import torch

from amp_docs_lib.amp.precision import PRECISIONS, precision_setup
from amp_docs_lib.amp.toy_task import make_data, make_model, train, train_step


@pytest.mark.parametrize("name,autocast_dtype,param_dtype,scaler", [
    ("fp32", None, torch.float32, False),
    ("amp_fp16", torch.float16, torch.float32, True),
    ("amp_bf16", torch.bfloat16, torch.float32, False),
    ("bf16", None, torch.bfloat16, False),
])
def test_setup(name, autocast_dtype, param_dtype, scaler):
    s = precision_setup(name, "cpu")
    assert (s.autocast_dtype, s.param_dtype, s.uses_scaler) == (autocast_dtype, param_dtype, scaler)
    lin = torch.nn.Linear(4, 4).to(param_dtype)
    with s.autocast():
        out = lin(torch.ones(2, 4, dtype=param_dtype))
    assert out.dtype == (autocast_dtype or param_dtype)


def test_unknown_name_lists_valid():
    with pytest.raises(ValueError) as e:
        precision_setup("fp16_amp", "cpu")
    msg = str(e.value)
    assert "fp16_amp" in msg and all(p in msg for p in PRECISIONS)


def test_wrong_types():
    with pytest.raises(TypeError, match="precision must be a str"):
        precision_setup(torch.float16, "cpu")
    with pytest.raises(TypeError, match="device"):
        precision_setup("fp32", 0)
    with pytest.raises(ValueError, match="valid device types"):
        precision_setup("fp32", "meta")


def test_amp_fp16_step_uses_scaler_and_trains():
    df = train("amp_fp16", steps=15, device="cpu")
    assert (df["scale"] > 1).all()
    assert df["loss"].iloc[-1] < df["loss"].iloc[0]


def test_train_step_clipping_path():
    s = precision_setup("amp_bf16", "cpu")
    x, y = make_data(64)
    m = make_model()
    opt = torch.optim.SGD(m.parameters(), lr=0.1)
    l0 = train_step(m, opt, x, y, s, max_norm=0.5)
    for _ in range(10):
        l1 = train_step(m, opt, x, y, s, max_norm=0.5)
    assert l1 < l0


# The copyable example drives the same switch (run in-process through amp_docs_lib.page.snippets).

@pytest.mark.parametrize("precision", PRECISIONS)
def test_amp_training_loop_example_flag(precision):
    from amp_docs_lib.page.snippets import run_snippet

    run = run_snippet("amp_training_loop.py", ["--precision", precision, "--steps", "3"])
    assert f"{precision} on " in run.output and "final loss" in run.output


def test_amp_training_loop_example_rejects_unknown_precision():
    from amp_docs_lib.page.snippets import run_snippet

    with pytest.raises(SystemExit):
        run_snippet("amp_training_loop.py", ["--precision", "fp8"])


def test_snippets_diff_and_bad_path():
    from amp_docs_lib.page.snippets import show_diff, show_source

    d = show_diff("amp_patterns/fp32_loop.py", "amp_patterns/amp_loop.py")
    assert "+scaler = torch.amp.GradScaler(device)" in d.text
    assert "-    loss.backward()" in d.text
    assert 'class="highlight"' in d._repr_html_()
    assert "ReferenceGradScaler" in show_source(__import__("amp_docs_lib.amp.grad_scaler").amp.grad_scaler.ReferenceGradScaler).text
    with pytest.raises(ValueError, match="valid examples"):
        show_source("amp_patterns/nope.py")


def test_train_tracks_lost_updates_and_the_rounding_rule_predicts_them():
    from amp_docs_lib.amp.toy_task import train

    bf16 = train("bf16", steps=6, device="cpu", track_lost_updates=True)
    frac = bf16["lost updates"] / bf16["updates"]
    pred = bf16["predicted lost"] / bf16["updates"]
    assert frac.iloc[0] > 0.5 and (frac - pred).abs().max() < 0.01
    fp32 = train("fp32", steps=3, device="cpu", track_lost_updates=True)
    assert (fp32["lost updates"] / fp32["updates"]).max() < 0.01
    # a false variant: the page's old sentence ("few of them round away") fails on the same run
    assert not frac.mean() < 0.05
