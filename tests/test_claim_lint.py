"""Claims whose check cannot fail are found before a chapter runs, and no chapter has one."""


import nbformat
import pytest

from amp_docs_lib.page.claim_lint import lint_chapter, lint_source
from amp_docs_lib.docsite.execute import ChapterExecutionError, execute_notebook
from conftest import CHAPTERS


# The three claims the expert review found, in the form they had before they were rewritten.
TF32_DEFINITION = '''Statement("TF32 has a 10-bit mantissa", "NVIDIA A100 whitepaper (2020)", 10,
          F.get_format("TF32").mantissa_bits)'''
SELF_COMPARISON = '''claim("FP16 has {measured} mantissa bits.", fmt.mantissa, fmt.mantissa)'''
CONSTANT = '''claim("Scaled, FP16 flushes {measured}.", t.loc["fp16", "to zero"], holds=True)'''
# The architecture review's three cases the lint missed: through a name assigned once, and on_this_machine.
ALIASED_SELF = "y = x\nclaim('s', x, y)"
ALIASED_DEFINITION = "m = fmt.mantissa_bits\nclaim('s', m, 10)"
MACHINE_CONSTANT = "ok = True\non_this_machine('a', 'b', holds=ok)"


@pytest.mark.parametrize("code, rule", [(TF32_DEFINITION, "definition as measurement"),
                                        (SELF_COMPARISON, "self-comparison"),
                                        (CONSTANT, "constant verdict"),
                                        (ALIASED_SELF, "self-comparison"),
                                        (ALIASED_DEFINITION, "definition as measurement"),
                                        (MACHINE_CONSTANT, "constant verdict")])
def test_lint_flags_claims_that_cannot_fail(code, rule):
    findings = lint_source(code)
    assert [f.rule for f in findings] == [rule]
    assert findings[0].line == (2 if code in (ALIASED_SELF, ALIASED_DEFINITION, MACHINE_CONSTANT) else 1)


def test_lint_passes_claims_compared_with_independent_values():
    ok = '''
display(claim("FP16's largest value is {measured}.", torch.finfo(torch.float16).max, expected=65504),
        claim("x", measured_fraction, expected=predicted_fraction(2.0 ** -25), rel_tol=0.02),
        Statement("FP16 range", "commonly quoted", 65504.0, fmt_tab.loc["FP16", "max finite"]))
display(on_this_machine("a", "b", holds=bool(native)))
m = measure()
m = m * 2  # assigned twice: the lint does not guess which value reaches the claim
claim("s", m, y)
'''
    assert lint_source(ok) == []
    assert lint_source("%timeit x  # not Python") == []
    with pytest.raises(TypeError, match="code must be a str"):
        lint_source(None)


@pytest.mark.parametrize("chapter", CHAPTERS, ids=[c.stem for c in CHAPTERS])
def test_no_chapter_has_a_claim_that_cannot_fail(chapter):
    assert lint_chapter(chapter) == []


def test_executor_refuses_a_chapter_with_such_a_claim():
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1"),
                                         nbformat.v4.new_code_cell(CONSTANT)])
    with pytest.raises(ChapterExecutionError, match=r"(?s)chapter bad-claims .*cell 2/2, line 1: constant verdict"):
        execute_notebook(nb, "bad-claims")


def test_lint_flags_a_shown_result_the_cell_throws_away():
    """Finding 28 of the reader review: a listing, table or figure not the cell's last expression is
    never shown. Its false variant, the same call last or passed to display, passes."""
    discarded = 'show_source(static.static_quantize)\nq = static.run()\nshow_table(q, "t")'
    assert [(f.rule, f.line) for f in lint_source(discarded)] == [("discarded result", 1)]
    loop = 'for n in (1, 2):\n    show_figure(plot(n), "f")\nx = 1'
    assert [f.rule for f in lint_source(loop)] == ["discarded result"]
    assert lint_source('display(show_source(static.static_quantize))\nq = static.run()\nshow_table(q, "t")') == []
    assert lint_source('run_snippet("a.py")\nx = 1') == [], "a run may be for its side effects"
