"""Formats chapter: fixes of the independent read of issue 33 (/work/reads/formats.md)."""

import math

import numpy as np
import pytest
import torch

from amp_docs_lib.numbers import formats as F
from amp_docs_lib.numbers import numerics as N


# ---- finding 3: reading the FP32 precision switches changes none of them ----------------------
def test_fp32_precision_settings_leave_every_attribute_as_found():
    m = torch.backends.cuda.matmul
    with N.fp32_precision_restored():
        m.fp32_precision = "none"  # the startup value the old code rewrote as "ieee"
        before = N.fp32_precision_state()
        N.fp32_precision_settings()
        N.fp32_precision_values()
        assert N.fp32_precision_state() == before
        assert m.fp32_precision == "none"


def test_fp32_precision_restored_undoes_an_old_api_write():
    with N.fp32_precision_restored():
        torch.backends.cuda.matmul.fp32_precision = "none"
        before = N.fp32_precision_state()
        with N.fp32_precision_restored():
            torch.set_float32_matmul_precision("highest")
            assert torch.backends.cuda.matmul.fp32_precision == "ieee"
        assert N.fp32_precision_state() == before
