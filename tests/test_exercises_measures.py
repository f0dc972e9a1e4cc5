"""Exercises 2 and 3 measure what their worked answers reason about (review 2026-11-24, findings 28, 29)."""

import pytest

from amp_docs_lib.page.snippets import run_snippet

pytestmark = pytest.mark.slow


def _run(name, args, capsys):
    """Run an exercise as the page does (``run_snippet``): its RESULT and what it printed."""
    run = run_snippet(f"exercises/{name}", args)
    return run.globals["RESULT"], run.output


@pytest.mark.parametrize("args", [["--epochs", "30", "--hidden", "128"], []])  # the page's sizes and the defaults
def test_quantize_model_ranks_schemes_by_logit_error_not_net_accuracy(args, capsys):
    """Net lost samples tied at the page's sizes and reversed at the defaults; the logit error ranks them."""
    res, out = _run("quantize_model.py", [*args, "--min-time", "0.01", "--predict", "dynamic"], capsys)
    assert 0 < res["logit error"]["weight-only"] < res["logit error"]["dynamic"]
    assert res["further from fp32"] == "dynamic" and "dynamic -> held" in out
    assert set(res["changed"]) == {"weight-only", "dynamic"}  # predictions changed either way, not net


def test_batch_size_limit_prints_the_model_state_share(capsys):
    res, out = _run(
        "batch_size_limit.py",
        ["--device", "cpu", "--budget-mb", "8", "--max-batch", "8192", "--width", "128", "--predict-ratio", "1"],
        capsys,
    )
    assert res["ratio"] == 1 and "1 -> held" in out
    assert all(0 < res["largest"][n]["state share"] < 0.2 for n in ("fp32", "amp_bf16"))
    assert "model state share" in out


def test_fix_clipping_checker_rejects_the_shipped_bug_and_accepts_the_solution(capsys):
    """The checker must fail exactly when the clipping is wrong: the shipped order clips scaled gradients."""
    bug, out = _run("fix_clipping.py", ["--device", "cpu"], capsys)
    assert not bug["fixed"] and "not fixed" in out
    assert bug["norm handed to the optimizer"] == pytest.approx(bug["max_norm"] / bug["scale"], rel=1e-3)
    fixed, out = _run("fix_clipping.py", ["--device", "cpu", "--solution"], capsys)
    assert fixed["fixed"] and "-> fixed" in out
    assert fixed["norm handed to the optimizer"] == pytest.approx(fixed["max_norm"], rel=1e-3)
