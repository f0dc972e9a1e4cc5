"""The H100 build (2026-11-25, torch 2.11) failed in the Formats chapter: after ``tf32_matmul_error`` switched
``set_float32_matmul_precision`` inside ``fp32_precision_restored``, the restore left the legacy global at "high"
while the new-API attributes read "none", and the next stamp's read of ``matmul.allow_tf32`` raised torch's
"mix of the legacy and new APIs". Both halves reproduce without a GPU: reading the flags needs none."""

import pytest
import torch

from amp_docs_lib.core import env
from amp_docs_lib.numbers.numerics import fp32_precision_restored, fp32_precision_state


@pytest.fixture
def tf32_state():
    before = fp32_precision_state()
    yield
    torch.set_float32_matmul_precision("highest")  # legacy first, then the new API, as the fix does
    for path, value in before.items():
        owner, attr = path.rsplit(".", 1)
        obj = torch
        for part in owner.split(".")[1:]:
            obj = getattr(obj, part)
        setattr(obj, attr, value)


def test_restoring_after_legacy_switches_leaves_the_flags_readable(tf32_state):
    before = (fp32_precision_state(), torch.get_float32_matmul_precision())
    with fp32_precision_restored():
        for setting in ("highest", "high"):  # what tf32_matmul_error does around its two matmuls
            torch.set_float32_matmul_precision(setting)
    assert (fp32_precision_state(), torch.get_float32_matmul_precision()) == before
    assert torch.backends.cuda.matmul.allow_tf32 is False  # raised on the H100 before the fix
    assert "TF32 matmul off" in env.tf32_summary()


def test_the_stamp_survives_a_mixed_tf32_state(tf32_state):
    torch.backends.cuda.matmul.fp32_precision = "tf32"  # new API on one backend: the legacy reads now raise
    with pytest.raises(RuntimeError, match="mix of the legacy and new"):
        torch.get_float32_matmul_precision()
    settings = env.tf32_settings()
    assert settings["float32_matmul_precision"] == env.LEGACY_UNREADABLE
    assert settings["cuda.matmul.fp32_precision"] == "tf32"
    assert env.tf32_summary(settings).startswith("TF32 matmul on")  # answered by the new API
    with fp32_precision_restored():  # entering in a mixed state is allowed too
        torch.backends.cuda.matmul.fp32_precision = "ieee"
    assert torch.backends.cuda.matmul.fp32_precision == "tf32"
