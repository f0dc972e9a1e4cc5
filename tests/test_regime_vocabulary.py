"""One regime vocabulary: the state-bytes table (numbers.accounting.STATE_BYTES) and the memory
calculators of bench and distributed name their precisions as the training regimes do
(amp.precision.REGIMES), and mean the same thing by each name."""

import torch

from amp_docs_lib.amp.precision import REGIMES
from amp_docs_lib.bench import memory as bench_memory
from amp_docs_lib.distributed import memory as dist_memory
from amp_docs_lib.numbers.accounting import STATE_BYTES

# Not a training regime of the training-regimes chapter: torchao float8 training (the FP8 chapter).
EXTRA = {"fp8"}


def _bytes(dtype: torch.dtype) -> int:
    return torch.empty((), dtype=dtype).element_size()


def test_tables_use_the_regime_names():
    assert set(STATE_BYTES) - EXTRA <= set(REGIMES), set(STATE_BYTES) - EXTRA - set(REGIMES)
    assert set(bench_memory.CALCULATOR_REGIMES) <= set(STATE_BYTES)
    assert set(dist_memory.PRECISIONS) <= set(STATE_BYTES) - EXTRA


def test_each_name_means_what_the_regime_means():
    for name, b in STATE_BYTES.items():
        if name in EXTRA:
            continue
        r = REGIMES[name]
        assert b["weights"] == b["grads"] == _bytes(r.param_dtype), name
        assert (b["master"] > 0) == (r.optimizer == "master_adamw"), name
        moment_dtype = r.param_dtype if r.optimizer == "adamw" else torch.float32
        assert b["moments"] == 2 * _bytes(moment_dtype), name
    for name in bench_memory.CALCULATOR_REGIMES:
        if name in EXTRA:
            continue
        n = bench_memory.estimate(1, 1, name)
        assert (n["weight_copies"] > 0) == (REGIMES[name].autocast_dtype is not None), name
