"""Issue 33, independent read of the literature chapter: each finding's check against a plausible false variant."""

import re
from pathlib import Path

import ml_dtypes
import pandas as pd
import pytest
import torch

from amp_docs_lib import literature as L
from amp_docs_lib.literature import verdicts as V

ROOT = Path(__file__).resolve().parent.parent
CHAPTER = (ROOT / "docs/chapters/literature.md").read_text()


# 1. lost updates: the ratio is the one of the FP16 values
@pytest.mark.parametrize("w, r", [(2.0**-13, 1400), (2.0**-10, 2000), (2.0**-4, 2047)])
def test_updates_lost_below_2048_nominally_are_at_2048_or_more_as_fp16_holds_them(w, r):
    """The reader's counterexamples: lost, because the FP16 update is at most w/2048."""
    wt = torch.tensor(w, dtype=torch.float16)
    u = (wt.double() / r).half()
    assert bool((wt + u) == wt)
    assert float(u) == 0.0 or float(wt) / float(u) >= 2048


def test_update_claim_holds_at_2048_and_rejects_1024_and_4096():
    assert V.fp16_update_lost(2048).status == L.HOLDS
    assert V.fp16_update_lost(1024).status == L.DOES_NOT_HOLD  # nothing lost just above 1024
    assert V.fp16_update_lost(4096).status == L.DOES_NOT_HOLD  # lost below 4096
    w, u, _ = V.fp16_weight_update_pairs((2048,))
    assert float(w.abs().min()) <= 2.0**-24 * 2 and bool((u < 0).any())  # subnormal weights, both signs


# 2. hardware-dependent cards: only the multiples-of-8 card becomes a measurement on a GPU
def test_only_the_multiples_of_8_card_depends_on_the_gpu_alone(monkeypatch):
    monkeypatch.setattr(V.gating, "requirement_met", lambda r: True)
    monkeypatch.setattr(V, "_machine_memory_bytes", lambda: 10**15)
    gated = [c for c in L.CLAIMS if c.hardware_dependent and c.key != "nvidia-fp16-multiples-of-8"]
    assert gated
    for c in gated:
        assert c.verdict().status == L.NOT_TESTABLE, c.key
    assert "Only one card depends on the GPU alone" in CHAPTER
    assert "on a machine that has it, the verdict changes" not in CHAPTER
    assert "GPU" not in L.get_claim("fsdp-scaling").verdict().reason.split(":")[0]


# 3. the E4M3 maxima note
def test_fp8_maxima_note_names_the_ieee_style_maximum():
    note = L.get_claim("fp8-maxima").note
    assert float(ml_dtypes.finfo(ml_dtypes.float8_e4m3).max) == 240.0 and "240" in note
    assert 1.875 * 2**8 == 480.0 and "480 (the false variant) is E4M3's maximum with IEEE" not in note


# 4. MX block: the block size comes from torchao, the false variant exercises the scale rule
def test_mx_block_rejects_the_ceiling_rule_and_another_block(monkeypatch):
    assert V.mx_block(32, "floor").status == L.HOLDS
    assert V.mx_block(32, "ceil").status == L.DOES_NOT_HOLD
    assert V.mx_block(16, "floor").status == L.DOES_NOT_HOLD
    assert L.get_claim("mx-block").false_params == {"rule": "ceil"}
    # were torchao's default 16, a claimed 32 would fail: the size is read, not chosen by the check
    monkeypatch.setattr(V, "torchao_mx_block_size", lambda: 16)
    assert V.mx_block(32, "floor").status == L.DOES_NOT_HOLD


# 5. loss scaling by 8: what it keeps, and a plausible scale that overflows
def test_loss_scaling_card_says_what_a_scale_of_8_keeps():
    c = L.get_claim("mpt-loss-scaling")
    assert "2^-25/8" in c.text and "preserving values" not in c.text
    assert c.false_verdict().status == L.DOES_NOT_HOLD and c.false_params == {"scale": 2.0**24}


# 6. one-sided bounds made two-sided
@pytest.mark.parametrize("bound, ok", [(1 / 17, True), (2.0**-4, False), (2.0**-6, False), (1.0, False), (0.25, False)])
def test_nvfp4_amax_bound_rejects_a_loose_bound(bound, ok):
    assert (V.nvfp4_amax_precision(bound).status == L.HOLDS) is ok


@pytest.mark.parametrize("group, ok", [(128, True), (32, False), (256, False), (512, False)])
def test_tile_extent_rejects_a_larger_group_too(group, ok):
    assert (V.tiles_contain_outliers(group).status == L.HOLDS) is ok
    assert L.get_claim("deepseek-fine-grained").kind == "definition"


# 7. multiples of 8: the false variant is "no slowdown", judged on a measured rate
@pytest.mark.parametrize("rel, slower_holds", [(0.6, True), (0.95, False), (1.0, False)])
def test_multiples_of_8_false_variant_is_no_slowdown(monkeypatch, rel, slower_holds):
    from amp_docs_lib.bench import matmul

    monkeypatch.setattr(V, "needs", lambda *a: None)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda i=0: "a GPU")
    monkeypatch.setattr(
        matmul,
        "alignment_sweep",
        lambda *a, **k: pd.DataFrame(
            {"multiple of 8": [False, True, False, True], "relative to aligned": [rel, 1.0, rel, 1.0]}
        ),
    )
    assert (V.fp16_multiples_of_8("slower").status == L.HOLDS_HERE) is slower_holds
    assert (V.fp16_multiples_of_8("as fast").status == L.HOLDS_HERE) is (not slower_holds)


# 8. NVFP4: blocks whose scale falls below E4M3's range are outside the claim, and reported
def test_nvfp4_amax_claim_excludes_blocks_below_e4m3_range():
    c = L.get_claim("nvfp4-amax")
    assert "2^-6/448" in c.text
    m = re.search(r"below E4M3's range \((\d+), one block ×10\^6\): up to ([0-9.]+)", c.verdict().measured)
    assert m and int(m.group(1)) > 0 and float(m.group(2)) > 2.0**-4


# 9. BF16 range: the top binade is sampled, where FP32's largest values overflow in BF16
def test_bf16_range_samples_the_top_binade():
    v = V.range_of_fp32("BF16")
    assert v.status == L.HOLDS and "(0 zero;" in v.measured and "2^-133" in v.measured
    assert int(re.search(r"([0-9,]+) become zero or infinite", v.measured).group(1).replace(",", "")) > 0
    assert V.range_of_fp32("FP16").status == L.DOES_NOT_HOLD


# 10. DeepSeek promotion: the factor is the site's prediction; fast accumulation is not the report's experiment
def test_promotion_card_attributes_the_factor_to_the_site():
    c = L.get_claim("deepseek-promotion")
    assert "this site's prediction" in c.text and "Figure 7(b)" not in c.location
    assert "repeats the report's experiment" not in CHAPTER


# 11. ZeRO bytes: the measured part is Adam's state; the false variant keeps 16-bit moments
def test_zero_bytes_false_variant_is_16_bit_moments():
    c = L.get_claim("zero-16-bytes")
    assert c.verdict().status == L.HOLDS and "measured: 8 bytes" in c.verdict().measured
    assert c.false_verdict().status == L.DOES_NOT_HOLD
    assert V.mixed_adam_bytes(16, 4).status == L.DOES_NOT_HOLD  # right total, wrong split


# 12. false variants read as sentences
def test_false_variants_read_as_sentences():
    nv = L.get_claim("nvfp4-vs-mxfp4")
    assert nv.false_text.startswith("NVFP4 (16-element blocks") and "less accurately than MXFP4" in nv.false_text
    bf = L.get_claim("bf16-range")  # the false variant claims FP32's subnormals, not FP16 (issue 33, read 2)
    assert "from 2^-149" in bf.false_text and bf.false_verdict().status == L.DOES_NOT_HOLD
    mx = L.get_claim("mx-block")
    assert "ceil(log2(amax))" in mx.false_text and "floor" not in mx.false_text


# 13. sizes timed and the paper's section
def test_multiples_of_8_prose_names_every_size_timed():
    assert "1023 and 1025 against their aligned neighbours 1024 and 1032" in CHAPTER
    assert L.get_claim("mpt-underflow").location.startswith("§3.1")
