"""Performance reader finding 1 (issue 34): torchao's Float8Linear saves its high-precision input and weight
for backward, not FP8 copies, so the memory calculator has no FP8 row built on 1-byte activations; and
finding 4: the FP32 Adam claim compares the measured states with the calculator's count."""

import torch

from amp_docs_lib.bench import memory
from amp_docs_lib.gpt import GPTConfig


def test_the_calculator_has_no_fp8_row_with_one_byte_activations():
    assert "fp8" not in memory.CALCULATOR_REGIMES
    assert set(
        memory.calculator_table(GPTConfig(vocab_size=64, block_size=8, n_layer=1, n_head=2, n_embd=16), 2)["regime"]
    ) == set(memory.CALCULATOR_REGIMES)


def test_float8_linear_saves_its_input_and_weight_at_their_own_precision():
    saved = memory.float8_saved_for_backward((torch.float32, torch.bfloat16), features=32, tokens=16)
    assert list(saved["module dtype"]) == ["float32", "bfloat16"]
    # input (16 x 32) and weight (32 x 32) at 4 and 2 bytes: what torchao 0.18 saves (float8_linear.py:45)
    assert list(saved["saved (bytes)"]) == [(16 * 32 + 32 * 32) * 4, (16 * 32 + 32 * 32) * 2]
    assert (saved["saved (bytes)"] == saved["input + weight (bytes)"]).all()
    assert (saved["as FP8 (bytes)"] == 16 * 32 + 32 * 32).all()  # what FP8 copies would have taken


def test_model_state_bytes_is_the_calculators_count_and_fails_on_a_wrong_state_table(monkeypatch):
    cfg = GPTConfig(vocab_size=64, block_size=8, n_layer=1, n_head=2, n_embd=16)
    assert memory.model_state_bytes(cfg, "fp32") == 16 * memory.count_parameters(cfg)
    assert memory.model_state_bytes(cfg, "bf16") == 8 * memory.count_parameters(cfg)
    # a false variant of the table (Adam with one moment) changes what the page's claim compares against
    from amp_docs_lib.numbers import accounting

    monkeypatch.setitem(accounting.STATE_BYTES, "fp32", {"weights": 4, "grads": 4, "master": 0, "moments": 4})
    assert memory.model_state_bytes(cfg, "fp32") == 12 * memory.count_parameters(cfg)
