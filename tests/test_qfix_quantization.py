"""Issue 34, independent read of the quantization chapter: the fixes' checks fail on the old code."""

from functools import partial

import pandas as pd
import torch
from torch import nn

from amp_docs_lib.core.timing import AA_SUFFIX, interleaved
from amp_docs_lib.quantization import ptq, speed

FAST_TIMER = partial(interleaved, rounds=5, min_block_s=0.001, num_threads=1)


def _mlp(out: int = 16):
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, out)).eval()


def test_packed_int4_verdicts_are_per_activation_dtype():
    # finding 1: the FP32 row slower and the BF16 row faster must stay two separate verdicts
    p4 = pd.DataFrame(
        {
            "layer": ["FP32", "packed INT4, FP32 activations", "BF16", "packed INT4, BF16 activations"],
            "vs the same dtype's float layer": [
                None,
                "0.04x [0.03, 0.05] (slower)",
                None,
                "1.85x [1.42, 2.44] (faster)",
            ],
        }
    )
    assert speed.packed_int4_verdicts(p4) == {
        "FP32": {"interval": "0.04x [0.03, 0.05]", "verdict": "slower"},
        "BF16": {"interval": "1.85x [1.42, 2.44]", "verdict": "faster"},
    }


def test_packed_int4_verdicts_read_the_real_table():
    v = speed.packed_int4_verdicts(speed.packed_int4_cpu(64, 1, FAST_TIMER))
    assert set(v) == {"FP32", "BF16"}
    assert all("x [" in d["interval"] and d["verdict"] for d in v.values())


def test_aa_intervals_are_rounded_outward_so_a_one_inside_stays_visible():
    # finding 8: 0.9961 printed as 1.00 made an interval that holds 1 look as if it excluded it
    df = pd.DataFrame(
        [
            {
                "batch": 1,
                "variant": "FP32" + AA_SUFFIX,
                "interval low": 0.9961,
                "interval high": 1.2901,
                "verdict": "no difference resolved",
            }
        ]
    )
    assert speed.aa_summary(df)["intervals"] == "batch 1: [0.99, 1.30]"


def test_torch_ao_dynamic_linear_uses_seven_bit_activations(monkeypatch):
    # finding 3: measured, so a module that quantizes activations to 8 bits is told apart
    x = torch.rand(32, 64) * 4
    assert speed.torch_ao_reduce_range(_mlp(), x)["7-bit activations"]
    make = speed.torch_ao_dynamic

    def eight_bit(model):  # version < 4: the forward calls linear_dynamic without reduce_range (8-bit)
        q = make(model)
        for m in q.modules():
            if hasattr(m, "_packed_params"):
                m.version = 3
        return q

    monkeypatch.setattr(speed, "torch_ao_dynamic", eight_bit)
    r = speed.torch_ao_reduce_range(_mlp(), x)
    assert not r["7-bit activations"] and r["equals reduce_range=False"]


def test_bf16_variants_get_the_bf16_model_so_their_error_is_the_devices():
    # finding 5: the results table tried the tile-packed config on the FP32 model and reported a dtype error
    m, xi = ptq.model_and_input_for("int4_wo_tile", _mlp(), torch.randn(4, 64))
    assert xi.dtype == torch.bfloat16 and next(m.parameters()).dtype == torch.bfloat16
    if not torch.cuda.is_available():
        _, err = ptq.try_variant(m, "int4_wo_tile", xi)
        assert err is not None and "Only bfloat16" not in err
    m, xi = ptq.model_and_input_for("int8_wo", _mlp(), torch.randn(4, 64))
    assert xi.dtype == torch.float32


def test_weight_storage_counts_codes_per_byte():
    # finding 6: "one code per byte" is checked by counting, which a packed format fails
    assert (ptq.weight_storage(ptq.quantize_variant(_mlp(), "int4_wo"))["weights per data byte"] == 1).all()
    packed = ptq.weight_storage(ptq.quantize_copy(_mlp(), ptq.check_variant("int4_cpu_packed").make_config()))
    assert (packed["weights per data byte"] == 2).all()
