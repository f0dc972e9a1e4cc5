import math

import pytest

from amp_docs_lib.page.claims import ClaimContradicted, Statement, check_statements, claim, on_this_machine, values_match


def test_true_claim_renders_measured_value():
    c = claim("FP16's largest finite value is {measured}.", 65504.0, 65504)
    assert c.holds
    assert c.text == "FP16's largest finite value is 65504."
    assert "65504" in c._repr_html_() and "checked in this build" in c._repr_html_()


def test_false_hardware_independent_claim_fails():
    with pytest.raises(ClaimContradicted, match="largest finite value is 65000"):
        claim("FP16's largest finite value is {measured}.", 65000.0, 65504)


@pytest.mark.parametrize("holds", [True, False])
def test_hardware_fact_renders_neutrally_either_way(holds):
    fact = on_this_machine("BF16 matmul is native ({measured}).", "BF16 matmul is emulated ({measured}).",
                           holds=holds, measured="avx512_bf16" if holds else "none")
    page = fact._repr_html_()
    expected = "BF16 matmul is native (avx512_bf16)." if holds else "BF16 matmul is emulated (none)."
    assert fact.text.startswith("On this machine (") and fact.text.endswith(expected)
    # One neutral style and mark for both outcomes; nothing that reads as a failure.
    assert "amp-claim--machine" in page and "◆" in page and "measured on this machine" in page
    assert "✗" not in page and "✓" not in page and "does not hold" not in page and "fails" not in page


def test_hardware_fact_argument_checks():
    with pytest.raises(TypeError, match="if_false must be a str"):
        on_this_machine("yes", None, holds=True)
    with pytest.raises(TypeError, match="holds must be a bool"):
        on_this_machine("yes", "no", holds="maybe")


def test_holds_verdict_and_argument_checks():
    assert claim("E4M3FN has no infinity.", 0, holds=True).holds
    with pytest.raises(ClaimContradicted):
        claim("always false", 1, holds=False)
    with pytest.raises(ValueError, match="exactly one"):
        claim("both", 1, 1, holds=True)
    with pytest.raises(ValueError, match="exactly one"):
        claim("neither", 1)
    with pytest.raises(TypeError, match="statement must be a str"):
        claim(42, 1, 1)


def test_values_match_handles_nan_and_tolerance():
    assert values_match(math.nan, math.nan)
    assert not values_match(math.nan, 1.0)
    assert values_match(3.3113, 3.31, rel_tol=1e-3)
    assert not values_match(3.3113, 3.31)


def test_check_statements_gives_verdicts_without_raising():
    t = check_statements([
        Statement("FP16 max is 65504", "commonly quoted", 65504, 65504.0),
        Statement("1e-5 is zero in FP16", "commonly quoted", 0.0, 1.0013580322265625e-05),
    ], "checked")
    assert list(t.df["verdict"]) == ["correct", "wrong: use the measured value"]
    assert "amp-stamp" in t._repr_html_()


def test_claim_text_renders_code_spans_and_links_and_escapes_the_rest():
    """Findings 22 and 25: backticks and [text](page.md) were printed raw in claim boxes."""
    from amp_docs_lib.page.claims import claim

    page = claim("On a GPU without it, use `amp_fp16`; the [GradScaler](gradscaler.md) page measures {measured}.",
                 "<b>x</b>", "<b>x</b> ".strip())._repr_html_()
    assert "<code>amp_fp16</code>" in page and '<a href="gradscaler.md">GradScaler</a>' in page
    assert "`" not in page and "](" not in page
    assert "<b>" not in page and "&lt;b&gt;x&lt;/b&gt;" in page, "a measured value is text, never markup"
