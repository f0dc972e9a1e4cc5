"""Bad arguments get a clear error before any work (newcomer review of 2026-11-24, finding 20).

Each call below used to return a wrong or silent answer (a NaN scale, an empty table, the
profile's size instead of the 0 asked for, a scale that grows on overflow) or fail deep inside
torch. Now each raises ValueError or TypeError naming the bad value. The example programs
refuse bad options as argparse does: exit status 2, a usage line, no traceback.
"""

from __future__ import annotations

import math
import os
import re
import subprocess
import sys
from concurrent.futures import Future

import pytest
import torch

from amp_docs_lib.amp import grad_scaler, scale_dynamics
from amp_docs_lib.amp.precision import precision_setup
from amp_docs_lib.bench import matmul
from amp_docs_lib.core import stats
from amp_docs_lib.debugging.stats import tensor_stats
from amp_docs_lib.fp8 import scaling
from amp_docs_lib.numbers import formats, numerics
from amp_docs_lib.page.claims import claim
from amp_docs_lib.quantization import affine

from conftest import REPO_ROOT, side_by_side

NAN = float("nan")


def _weight_with_nan() -> torch.Tensor:
    w = torch.randn(4, 8, generator=torch.Generator().manual_seed(0))
    w[1, 3] = NAN
    return w


def _update(**kw):
    args = dict(
        scale=1024.0, growth_tracker=0, found_inf=False, growth_factor=2.0, backoff_factor=0.5, growth_interval=10
    )
    return grad_scaler.update_scale(**{**args, **kw})


# (id, call, exception type, text the message must contain: the bad value)
CASES = [
    # wrong or silent answers
    ("choose_qparams NaN weight", lambda: affine.choose_qparams(_weight_with_nan()), ValueError, "nan"),
    ("choose_qparams inf weight", lambda: affine.choose_qparams(torch.tensor([1.0, math.inf])), ValueError, "inf"),
    ("sqnr_db empty", lambda: affine.sqnr_db(torch.empty(0), torch.empty(0)), ValueError, "empty"),
    ("sqnr_db shapes differ", lambda: affine.sqnr_db(torch.ones(4), torch.ones(4, 4)), ValueError, "(4, 4)"),
    ("accumulation_error n_terms=0", lambda: numerics.accumulation_error(n_terms=0), ValueError, "got 0"),
    ("spacing_vs_magnitude points=0", lambda: numerics.spacing_vs_magnitude(points=0), ValueError, "got 0"),
    ("sgd_stagnation steps=0", lambda: numerics.sgd_stagnation(steps=0), ValueError, "got 0"),
    ("tf32_matmul_error n=0", lambda: numerics.tf32_matmul_error(n=0), ValueError, "got 0"),
    ("variance_cancellation n=0", lambda: numerics.variance_cancellation(n=0), ValueError, "got 0"),
    ("variance_cancellation n=1", lambda: numerics.variance_cancellation(n=1), ValueError, "got 1"),
    ("variance_cancellation std=0", lambda: numerics.variance_cancellation(std=0.0), ValueError, "got 0.0"),
    ("update_scale scale=-1", lambda: _update(scale=-1.0), ValueError, "-1.0"),
    ("update_scale scale=nan", lambda: _update(scale=NAN), ValueError, "nan"),
    ("update_scale growth_factor=0.5", lambda: _update(growth_factor=0.5), ValueError, "0.5"),
    ("update_scale backoff_factor=2", lambda: _update(backoff_factor=2.0), ValueError, "2.0"),
    ("update_scale backoff_factor=0", lambda: _update(backoff_factor=0.0), ValueError, "0.0"),
    ("update_scale growth_interval=0", lambda: _update(growth_interval=0), ValueError, "got 0"),
    ("update_scale growth_tracker=-1", lambda: _update(growth_tracker=-1), ValueError, "got -1"),
    ("update_scale growth_tracker=interval", lambda: _update(growth_tracker=10), ValueError, "got 10"),
    ("ReferenceGradScaler init_scale=-1", lambda: grad_scaler.ReferenceGradScaler(init_scale=-1.0), ValueError, "-1.0"),
    (
        "update_scale_megatron backoff_factor=2",
        lambda: scale_dynamics.update_scale_megatron(4.0, 0, 1, True, 2.0, 2.0, 10, 1.0, 2),
        ValueError,
        "2.0",
    ),
    ("compare_with_torch steps=-3", lambda: grad_scaler.compare_with_torch(steps=-3), ValueError, "got -3"),
    ("scenario steps=-1", lambda: scale_dynamics.scenario("healthy", steps=-1), ValueError, "got -1"),
    ("scenario steps=0", lambda: scale_dynamics.scenario("healthy", steps=0), ValueError, "got 0"),
    ("scenario growth_interval=0", lambda: scale_dynamics.scenario("healthy", growth_interval=0), ValueError, "got 0"),
    ("scenario init_scale=-1", lambda: scale_dynamics.scenario("healthy", init_scale=-1.0), ValueError, "-1.0"),
    ("scenario precision", lambda: scale_dynamics.scenario("healthy", precision="fp8"), ValueError, "'fp8'"),
    (
        "accumulation_error str dtypes",
        lambda: numerics.accumulation_error(n_terms=8, dtypes="FP16"),
        TypeError,
        "'FP16'",
    ),
    ("matmul_flops m=-1", lambda: matmul.matmul_flops(-1, 2, 3), ValueError, "got -1"),
    ("decode_table str formats", lambda: formats.decode_table(1.0, "FP16"), TypeError, "'FP16'"),
    ("format_table str names", lambda: formats.format_table("FP16"), TypeError, "'FP16'"),
    ("median_ci NaN", lambda: stats.median_ci([float(i) for i in range(1, 10)] + [NAN]), ValueError, "nan"),
    ("quartiles NaN", lambda: stats.quartiles([1.0, NAN, 3.0]), ValueError, "nan"),
    ("claim expected NaN", lambda: claim("x is {measured}", NAN, expected=NAN), ValueError, "nan"),
    ("claim holds NaN", lambda: claim("x is {measured}", 1.0, holds=NAN), TypeError, "nan"),
    # raw errors from deep inside torch
    ("precision_setup tpu", lambda: precision_setup("amp_bf16", "tpu"), ValueError, "'tpu'"),
    ("choose_qparams empty", lambda: affine.choose_qparams(torch.empty(0, 4)), ValueError, "(0, 4)"),
    ("quantize_tensorwise empty", lambda: scaling.quantize_tensorwise(torch.empty(0)), ValueError, "(0,)"),
    ("softmax_one_hot_rows width=0", lambda: numerics.softmax_one_hot_rows(width=0), ValueError, "got 0"),
    ("softmax_one_hot_rows rows=0", lambda: numerics.softmax_one_hot_rows(rows=0), ValueError, "got 0"),
    ("tensor_stats empty", lambda: tensor_stats(torch.empty(0)), ValueError, "(0,)"),
    ("matmul_fn m=-8", lambda: matmul.matmul_fn("fp32", -8, 8, 8), ValueError, "got -8"),
    ("time_matmul m=0", lambda: matmul.time_matmul("fp32", 8, m=0), ValueError, "got 0"),
]


@pytest.mark.parametrize("call, error, names", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_argument_raises_naming_the_value(call, error, names):
    with pytest.raises(error) as info:
        call()
    assert names.lower() in str(info.value).lower(), str(info.value)


def test_precision_setup_names_the_library_devices_not_torchs():
    with pytest.raises(ValueError) as info:
        precision_setup("amp_bf16", "tpu")
    message = str(info.value)
    assert "'cpu'" in message and "'cuda'" in message and "xla" not in message, message


def test_update_scale_accepts_the_zero_its_own_rule_reaches():
    # Backing off from a tiny scale underflows float32 to 0 (the death-spiral scenario plots it):
    # 0 is a state of torch's rule, not bad input, and the rule then stays at 0.
    scale, tracker = grad_scaler.update_scale(2.0**-149, 0, True, 2.0, 0.5, 10)
    assert scale == 0.0 and tracker == 0
    assert grad_scaler.update_scale(0.0, 0, False, 2.0, 0.5, 10) == (0.0, 1)


def test_update_scale_agrees_with_torch_on_what_torch_refuses():
    """torch.amp.GradScaler refuses growth_factor <= 1 and backoff_factor >= 1; so do we."""
    for kw in ({"growth_factor": 1.0}, {"backoff_factor": 1.0}):
        with pytest.raises(AssertionError):
            torch.amp.GradScaler("cpu", **kw)
        with pytest.raises(ValueError):
            _update(**kw)
        with pytest.raises(ValueError):
            grad_scaler.ReferenceGradScaler(**kw)


def test_checks_accept_good_values():
    from amp_docs_lib.core import checks

    assert checks.positive_int("n", 3) == 3
    assert checks.positive_number("x", 0, allow_zero=True) == 0.0
    with pytest.raises(TypeError, match=re.escape("4.0")):
        checks.positive_int("n", 4.0)
    with pytest.raises(TypeError, match="True"):
        checks.positive_int("n", True)


def test_claim_with_a_nan_measurement_is_stated_through_isnan():
    """The way to claim that a result is NaN: a bool measured, a bool expected."""
    assert claim("0/0 is NaN: {measured}", math.isnan(NAN), expected=True).holds


# ---- example programs ------------------------------------------------------------------------------
def _run(tmp_path, script: str, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "AMP_DOCS_PROFILE": "cpu-small", "OMP_NUM_THREADS": "1"}
    return subprocess.run(
        [sys.executable, str(REPO_ROOT / "examples" / script), *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


# (script, arguments, texts the usage error must contain: the option and its bad value)
EXAMPLE_CASES = [
    ("measure_amp_speedup.py", ["--width", "-1"], ["--width", "-1"]),
    ("measure_amp_speedup.py", ["--batch", "0"], ["--batch", "got 0"]),
    ("measure_amp_speedup.py", ["--rounds", "2"], ["--rounds", "got 2"]),
    ("exercises/batch_size_limit.py", ["--budget-mb", "-1"], ["--budget-mb", "-1"]),
    ("exercises/batch_size_limit.py", ["--max-batch", "0"], ["--max-batch", "got 0"]),
    ("exercises/batch_size_limit.py", ["--device", "tpu"], ["--device", "'tpu'", "'cpu'"]),
    ("exercises/precision_from_config.py", ["--config", "{steps}"], ["steps", "-5"]),
    ("exercises/precision_from_config.py", ["--config", "{lr}"], ["lr", "-0.1"]),
    ("exercises/precision_from_config.py", ["--config", "{missing}"], ["no-such.toml"]),
    ("decode_float.py", ["1.0", "FP17"], ["FP17", "FP16", "BF16"]),
]


CASE_IDS = [f"{s} {' '.join(a)}" for s, a, _ in EXAMPLE_CASES]


@pytest.fixture(scope="module")
def example_refusals(request, tmp_path_factory) -> dict[str, Future]:
    """Every selected case of the test below, run side by side (``side_by_side``): each starts Python and torch."""

    def run(case: tuple[str, list[str], list[str]]) -> subprocess.CompletedProcess:
        script, args, _ = case
        folder = tmp_path_factory.mktemp("bad-option")
        configs = {"steps": folder / "steps.toml", "lr": folder / "lr.json", "missing": folder / "no-such.toml"}
        configs["steps"].write_text('precision = "amp_bf16"\nsteps = -5\n')
        configs["lr"].write_text('{"precision": "fp32", "lr": -0.1}')
        return _run(folder, script, *(a.format(**configs) for a in args))

    pool = side_by_side(request)
    wanted = {
        item.callspec.id
        for item in request.session.items
        if item.originalname == "test_example_refuses_bad_option_without_traceback"
    }
    return {i: pool.submit(run, c) for i, c in zip(CASE_IDS, EXAMPLE_CASES, strict=True) if i in wanted}


@pytest.mark.slow
@pytest.mark.parametrize("script, args, names", EXAMPLE_CASES, ids=CASE_IDS)
def test_example_refuses_bad_option_without_traceback(script, args, names, example_refusals, request):
    r = example_refusals[request.node.callspec.id].result()
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    assert "Traceback" not in r.stderr and "usage:" in r.stderr, r.stderr
    assert all(n in r.stderr for n in names), (names, r.stderr)


def test_config_example_still_raises_valueerror_for_a_misspelt_precision():
    """The exercises chapter catches this ValueError in-process (run_snippet): it must stay one."""
    from amp_docs_lib.page.snippets import run_snippet

    with pytest.raises(ValueError, match="'fp61'.*valid precisions"):
        run_snippet("exercises/precision_from_config.py", ["--precision", "fp61"])
