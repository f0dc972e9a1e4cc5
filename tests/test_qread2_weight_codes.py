"""Weight codes count the weight format alone, and the decision table says which rows it could not compare.

Issue 34, read 2, finding 5: torchao rows counted their FP32 biases as weight codes while the torch.ao row did
not, and the memory cell left out the ONNX Runtime rows (codes not counted) without a word.
"""

import pandas as pd
from quant_frames import DECISION_INPUT_COLUMNS
from torch import nn

from amp_docs_lib.quantization import ptq, results, speed


def test_codes_exclude_biases_for_float_and_torchao_weights_alike():
    m = nn.Sequential(nn.Linear(128, 64), nn.ReLU(), nn.Linear(64, 10))
    weights = 128 * 64 + 64 * 10
    assert speed.weight_code_bytes(m) == 4 * weights
    assert speed.weight_code_bytes(ptq.quantize_variant(m, "int8_wo")) == weights
    assert speed.weight_code_bytes(speed.torch_ao_dynamic(m)) == weights


def test_memory_cell_lists_eligible_rows_whose_codes_are_not_counted():
    cols = DECISION_INPUT_COLUMNS
    df = pd.DataFrame(
        [
            ("FP32", "PyTorch eager", 0.97, 100.0, 100.0, None, None, None),
            ("A", "torchao", 0.97, 30.0, 25.0, 1.0, "[0.90, 1.10]", "no difference resolved"),
            (
                "ONNX Runtime dynamic INT8",
                "ONNX Runtime (CPU)",
                0.97,
                None,
                None,
                1.0,
                "[0.90, 1.10]",
                "no difference resolved",
            ),
        ],
        columns=cols,
    )
    memory = results.decision_table(df).iloc[0]["memory"]
    assert memory.startswith("A (")
    assert "not compared" in memory and memory.endswith("ONNX Runtime dynamic INT8")
