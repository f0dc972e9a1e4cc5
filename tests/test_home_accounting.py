"""One home per fact (architecture review, finding 3): the FLOP count of a matmul, the bytes of each
model state per regime and the short name of a dtype are written once; the others call them."""

import re
from pathlib import Path

import torch

import amp_docs_lib
from amp_docs_lib.bench import memory as bench_memory
from amp_docs_lib.core.tables import short_dtype
from amp_docs_lib.literature import verdicts
from amp_docs_lib.numbers import accounting

LIB = Path(amp_docs_lib.__file__).parent

# A FLOP count typed as 2·m·n·k (or 2·n³), and a dtype's name cut out of str(dtype) by hand.
FLOP_FORMULA = re.compile(r"\b2\s*\*\s*\w+\s*\*\*\s*3\b|flops\s*=\s*2\s*\*")
DTYPE_NAME = re.compile(r"""str\([^\n]*\)\s*\.(removeprefix|replace)\(\s*["']torch\.""")


def _sources_matching(pattern: re.Pattern, home: Path) -> list[str]:
    return [
        f"{p.relative_to(LIB)}:{i}"
        for p in sorted(LIB.rglob("*.py"))
        if p != home
        for i, line in enumerate(p.read_text().splitlines(), 1)
        if pattern.search(line)
    ]


def test_one_flop_formula():
    assert _sources_matching(FLOP_FORMULA, LIB / "numbers" / "accounting.py") == []
    assert accounting.matmul_flops(2, 3, 5) == 60


def test_one_short_dtype_name():
    assert _sources_matching(DTYPE_NAME, LIB / "core" / "tables.py") == []
    assert short_dtype(torch.bfloat16) == "bfloat16" and short_dtype(None) == "-"


def test_bench_memory_has_no_second_regimes_object():
    # amp.precision.REGIMES (Regime objects) is the one regime vocabulary; no second REGIMES of another type
    assert not hasattr(bench_memory, "REGIMES")


def test_calculator_takes_state_bytes_from_the_one_table(monkeypatch):
    before = bench_memory.estimate(1000, 0, "amp_bf16")
    monkeypatch.setitem(accounting.STATE_BYTES, "amp_bf16", {**accounting.STATE_BYTES["amp_bf16"], "moments": 4})
    after = bench_memory.estimate(1000, 0, "amp_bf16")
    assert (before["optimizer"], after["optimizer"]) == (8000, 4000)


def test_distributed_precisions_are_the_tables_bytes():
    from amp_docs_lib.distributed.memory import PRECISIONS

    for name, p in PRECISIONS.items():
        s = accounting.STATE_BYTES[name]
        assert (p["param"], p["grad"], p["master"], p["optimizer"]) == (
            s["weights"],
            s["grads"],
            s["master"],
            s["moments"],
        ), name


def test_zero_bytes_claim_takes_the_recipe_from_the_one_table(monkeypatch):
    assert verdicts.mixed_adam_bytes(16, 8).status == "holds"
    monkeypatch.setitem(accounting.STATE_BYTES, "bf16_master", {**accounting.STATE_BYTES["bf16_master"], "master": 2})
    assert verdicts.mixed_adam_bytes(16, 8).status == "does not hold"
