"""GradScaler chapter, fixes of the independent read (issue 33): the patterns' checks measure the pattern."""

import io
import runpy
from contextlib import redirect_stdout

import torch.nn.functional as F

from amp_docs_lib.page.snippets import example_path


def _run(name: str, replace: tuple[str, str] | None = None, tmp_path=None) -> dict:
    path = example_path(f"amp_patterns/{name}")
    if replace is not None:
        text = path.read_text()
        assert replace[0] in text
        path = tmp_path / name
        path.write_text(text.replace(*replace))
    with redirect_stdout(io.StringIO()):
        return runpy.run_path(str(path), run_name="__main__")


def _penalty_matches_fp32_norm(g: dict) -> bool:  # the chapter's check
    return abs(g["penalty"].item() / g["penalty_weight"] - g["fp32_norm"].item()) <= 1e-3 * g["fp32_norm"].item()


def test_gradient_penalty_check_fails_without_the_hand_unscaling(tmp_path):
    assert _penalty_matches_fp32_norm(_run("gradient_penalty.py"))
    # false variant: the unscaling deleted, the penalty built from the scaled gradients
    forgot = _run(
        "gradient_penalty.py", ("grads = [g * inv_scale for g in scaled_grads]", "grads = scaled_grads"), tmp_path
    )
    assert not _penalty_matches_fp32_norm(forgot)


def test_custom_autograd_pattern_trains_on_a_one_vs_rest_loss(tmp_path):
    g = _run("custom_autograd.py")
    bce = F.binary_cross_entropy_with_logits(g["output"].float(), g["target"], reduction="sum") / len(g["y"])
    assert abs(g["loss"].item() - bce.item()) <= 1e-3 * bce.item()
    assert g["accuracy"] > 0.5
    # false variant (the read's finding 1): only the target's log-sigmoid, which every large logit minimises
    one_sided = _run(
        "custom_autograd.py",
        (
            "loss = -(target * log_p + (1 - target) * log_not_p).sum(1).mean()",
            "loss = -log_p.gather(1, y[:, None]).mean()",
        ),
        tmp_path,
    )
    assert one_sided["accuracy"] <= 0.5
    bce1 = F.binary_cross_entropy_with_logits(one_sided["output"].float(), one_sided["target"], reduction="sum") / len(
        one_sided["y"]
    )
    assert abs(one_sided["loss"].item() - bce1.item()) > 1e-3 * bce1.item()
