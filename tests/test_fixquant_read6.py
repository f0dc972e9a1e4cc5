"""Issue 34, second read of the quantization fixes: findings 2 and 5 checked against plausible false variants."""

import pandas as pd
import torch
from quant_frames import DECISION_INPUT_COLUMNS
from torch import nn

from amp_docs_lib.quantization import results
from amp_docs_lib.quantization.speed import torchao_activation_codes

COLS = DECISION_INPUT_COLUMNS


def _row(name, payload, codes):
    return (name, "torchao", 0.97, payload, codes, 1.0, "[0.90, 1.10]", "no difference resolved")


def test_memory_cell_ranks_weight_payload_not_codes_alone():
    # the page's numbers: equal codes (unpacked Intx INT4 stores one code a byte), different payloads
    rows = [("FP32", "PyTorch eager", 0.97, 102.0, 101.0, None, None, None)]
    rows += [
        _row("torchao INT8 weight-only", 27.59, 25.25),
        _row("torchao INT4 weight-only (Intx, group 32)", 30.23, 25.25),
        _row("torchao FP8 weight-only", 27.33, 25.25),
    ]
    memory = results.decision_table(pd.DataFrame(rows, columns=COLS)).iloc[0]["memory"]
    # the old rule (codes alone) declared a three-way tie that included INT4, the largest
    assert "tie" not in memory and "INT4" not in memory
    assert memory.startswith("torchao FP8 weight-only (27.3 KiB of weight payload: 25.2 KiB of weight codes")


def test_memory_cell_ties_only_on_equal_payload():
    rows = [_row("A", 30.0, 25.0), _row("B", 30.0, 20.0), _row("C", 31.0, 10.0)]
    memory = results.decision_table(pd.DataFrame(rows, columns=COLS)).iloc[0]["memory"]
    assert memory.startswith("A = B (tie: 30.0 KiB of weight payload each")


def test_torchao_activation_codes_use_0_to_127_on_nonnegative_inputs_only():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
    x = torch.rand(32, 8)  # never negative, like the digits pixels
    for layer in ("0", "2"):
        c = torchao_activation_codes(model, x, layer)
        assert c["code min"] >= 0 and c["code max"] == 127 and c["scales (one per token)"] == 32
    # the false variant: signed inputs use the negative half too, so the page's claim would fail
    c = torchao_activation_codes(model, x - 0.5, "0")
    assert c["code min"] < 0
