"""Issue 33, second independent read of the literature chapter: each finding's check against a plausible false variant."""

import re
from pathlib import Path

import torch

from amp_docs_lib import literature as L

ROOT = Path(__file__).resolve().parent.parent
CHAPTER = (ROOT / "docs/chapters/literature.md").read_text()
PROSE = " ".join(CHAPTER.split())  # line breaks as spaces


# 2. Mishra et al.'s rule is RCEIL, neither FLOOR (the claim) nor CEIL (the false variant)
def test_mx_false_variant_is_not_attributed_to_mishra():
    c = L.get_claim("mx-block")
    assert "which Mishra et al. propose" not in c.note and "RCEIL" in c.note
    m = re.search(
        r"RCEIL \(Mishra et al.'s rule\) equals FLOOR in (\d+) blocks and CEIL in (\d+)", c.verdict().measured
    )
    floor_n, ceil_n = int(m.group(1)), int(m.group(2))
    assert floor_n > 0 and ceil_n > 0 and floor_n + ceil_n == 128  # neither rule everywhere
    assert "pre-train with the scale rounded up" not in PROSE and "RCEIL" in PROSE


# 3. FSDP: no model size and memory that the paper's claim does not state
def test_fsdp_reason_names_no_size_it_does_not_compute():
    r = L.get_claim("fsdp-scaling").verdict().reason
    assert "trillion" not in r and "GB" not in r and r.startswith("needs scale")


# 4. the intro names only false variants that exist
def test_intro_names_no_bound_one_percent_off():
    assert "1% or 25% off" not in PROSE and "a bound 25% off" in PROSE
    assert L.get_claim("nvidia-constant-scale").false_params == {"bound": 1.25 * 65504.0}


# 5. loss scaling by 8: a definition check of the cast, not an experiment on SSD
def test_loss_scaling_card_is_a_definition_check():
    c = L.get_claim("mpt-loss-scaling")
    assert c.kind == "definition" and "not re-run here" in c.note


# 6. no false variant is the claim's baseline format; the convergence claim is not stamped "holds"
def test_bf16_cards_do_not_use_fp16_as_their_false_variant():
    for c in L.CLAIMS:
        if c.false_params and "fmt" in c.params:
            assert "fmt" not in c.false_params, c.key
    r = L.get_claim("bf16-range")
    assert r.false_params == {"log2_smallest": -149} and r.false_verdict().status == L.DOES_NOT_HOLD
    assert int(re.search(r"\(([0-9,]+) zero;", r.false_verdict().measured).group(1).replace(",", "")) > 0
    assert L.get_claim("bf16-no-scaling").verdict().status == L.NOT_TESTABLE


# 7. the MX element maxima are read back through torchao's dequantize
def test_mx_element_maxima_go_through_torchaos_dequantize(monkeypatch):
    from torchao.prototype.mx_formats.mx_tensor import MXTensor

    assert L.get_claim("mx-concrete-formats").verdict().status == L.HOLDS
    real = MXTensor.dequantize
    monkeypatch.setattr(MXTensor, "dequantize", lambda self, dt=None: real(self, dt) * 2)
    assert L.get_claim("mx-concrete-formats").verdict().status == L.DOES_NOT_HOLD


# 8. FP32 accumulation in FP16 GEMMs is not promised by torch
def test_chapter_names_reduced_precision_reductions():
    assert "allow_fp16_reduced_precision_reduction" in PROSE
    assert "formats.md#reduced-precision-reductions-in-fp16-and-bf16-gemms" in PROSE


# 9. bounds that follow from mantissa widths are definition checks, credited to the site
def test_site_derived_bounds_are_labelled():
    assert L.get_claim("mpt-master-weights").kind == "definition"
    assert "stored in FP16" not in L.get_claim("mpt-fp32-accumulation").text
    nv = L.get_claim("nvfp4-amax")
    assert "this site's" in nv.text and "this site's" in nv.location and nv.kind == "definition"


# 10. DeepSeek-V3: FP8 GEMMs, not every tensor of the model
def test_deepseek_fp8_scope():
    assert "in FP8 with E4M3 for every tensor" not in PROSE
    assert "stay in BF16 or FP32" in PROSE and "master weights in FP32" in PROSE


# 12. the dynamic-scaling card runs GradScaler; it does not re-read the defaults card's constants
def test_dynamic_scaling_card_runs_gradscaler(monkeypatch):
    from amp_docs_lib.amp import grad_scaler

    monkeypatch.setattr(grad_scaler, "torch_gradscaler_defaults", lambda: {})
    v = L.get_claim("nvidia-dynamic-scaling").verdict()
    assert v.status == L.HOLDS and "after 2000 overflow-free steps" in v.measured
    real = torch.amp.GradScaler
    monkeypatch.setattr(torch.amp, "GradScaler", lambda device: real(device, growth_interval=1000))
    assert L.get_claim("nvidia-dynamic-scaling").verdict().status == L.DOES_NOT_HOLD
