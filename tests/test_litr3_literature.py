"""Third independent read of the literature chapter (issue 33): each finding's check, by number."""

from pathlib import Path

from amp_docs_lib import literature as L
from amp_docs_lib.fp8 import fine_grained
from amp_docs_lib.literature import verdicts as V

CHAPTER = (Path(__file__).resolve().parent.parent / "docs/chapters/literature.md").read_text()
PROSE = " ".join(CHAPTER.split())


# 1-3. the promotion gain depends on the rounding mode; the report's 2% lies between the two modes
def test_promotion_card_separates_the_rounding_modes_and_brackets_the_reports_figure():
    c = L.get_claim("deepseek-promotion")
    v = c.verdict()
    assert v.status == L.HOLDS and "(the report: nearly 2%)" in v.measured
    # "the rounding mode does not matter" (the old note) is the false variant, and is rejected
    assert c.false_params == {"toward_zero": "below"} and c.false_verdict().status == L.DOES_NOT_HOLD
    # a round-to-nearest gain above K/N_C (the linear gain) is rejected too
    assert V.promotion_helps(128, nearest="above").status == L.DOES_NOT_HOLD


def test_promotion_verdict_fails_when_the_emulation_ignores_the_rounding_mode(monkeypatch):
    real = fine_grained.accumulation_study
    monkeypatch.setattr(fine_grained, "accumulation_study", lambda **kw: real(**{**kw, "rounding": "nearest"}))
    assert V.promotion_helps(128).status == L.DOES_NOT_HOLD


def test_promotion_prose_gives_the_reports_figure_and_not_the_data_only_story():
    assert "nearly 2%" in PROSE and "depends on the rounding mode" in PROSE
    assert "The size depends on the data:" not in PROSE
    assert "not on the rounding mode" not in L.get_claim("deepseek-promotion").note


# 4-8. definition checks are counted apart from experiments
def test_summary_counts_definition_checks_apart_from_experiments():
    table = L.reading_map([L.get_claim("bf16-conversion"), L.get_claim("mpt-fp32-accumulation")])
    s = L.verdict_summary(table).set_index("verdict")
    assert s.loc[L.HOLDS, "experiments"] == 1 and s.loc[L.HOLDS, "definition checks"] == 1
    assert s.loc[L.HOLDS, "claims"] == 2


def test_cards_fixed_by_construction_or_definition_are_labelled_so():
    for key in (
        "deepseek-fine-grained",
        "nvidia-constant-scale",
        "fp8-maxima",
        "fp8-specials",
        "mpt-underflow",
        "bf16-range",
        "mpt-master-weights",
        "mpt-loss-scaling",
        "fp8-e4m3-forward",
        "zero-16-bytes",
        "bf16-conversion",
        "nvfp4-amax",
    ):
        assert L.get_claim(key).kind == "definition", key
    assert "not a test of the report" in L.get_claim("deepseek-fine-grained").note
    assert "65,520" in L.get_claim("nvidia-constant-scale").note


# 7. the conversion card states what it tests, both ways, and its false variant is a distinct sentence
def test_bf16_conversion_card_tests_both_directions():
    c = L.get_claim("bf16-conversion")
    assert "upper 16 bits" in c.text and "BF16 -> FP32 appends 16 zero bits" in c.text
    v = c.verdict()
    assert v.status == L.HOLDS and "BF16 -> FP32" in v.measured
    assert c.false_text != c.text and c.false_verdict().status == L.DOES_NOT_HOLD


# 9. the tight NVFP4 amax bound is 1/17; 2^-4 and 0.1 are rejected
def test_nvfp4_amax_bound_is_one_seventeenth():
    c = L.get_claim("nvfp4-amax")
    assert abs(c.params["bound"] - 1 / 17) < 1e-12 and c.verdict().status == L.HOLDS
    for loose in (2.0**-4, 0.1, 0.11):
        assert V.nvfp4_amax_precision(loose).status == L.DOES_NOT_HOLD


# 13. wording: ties at half the spacing; the FP16 flush threshold is inclusive
def test_flush_and_tie_wording():
    assert "at or below 2^-25" in L.get_claim("mpt-underflow").text
    assert "smaller than half the spacing" not in PROSE and "rounding to even decides" in PROSE
    assert "the card measures both" not in PROSE
    # 10. the prose no longer says the paper gives only a constant factor of 8
    assert "example is a constant factor of 8" not in PROSE


# 11-12. unchecked prose replaced by cited or linked statements; FNUZ and the NVFP4 recipe's numerics named
def test_nvfp4_and_fnuz_prose_is_cited():
    assert "Transformer Engine stores as a subnormal" not in PROSE
    assert "nvfp4_tensor.py:838-840" in PROSE and "config.py:341-343" in PROSE and "config.py:81-88" in PROSE
    assert "float8_e4m3fnuz" in CHAPTER and "Hadamard" in PROSE and "[ocp2023ofp8]" in PROSE


# 12. the bibliography is the site's: every entry is cited by some chapter or card
def test_every_bibliography_entry_is_cited_somewhere():
    root = Path(__file__).resolve().parent.parent
    text = " ".join(p.read_text() for p in (root / "docs/chapters").glob("*.md"))
    cited_by_cards = {c.source for c in L.CLAIMS}
    uncited = [k for k in L.load_bibliography().entries if f"[{k}]" not in text and k not in cited_by_cards]
    assert uncited == []
    assert "The site's one bibliography" in PROSE
