"""One regime vocabulary: the memory calculators of bench and distributed name their precisions as
the training regimes do (amp.precision.REGIMES), and mean the same thing by each name."""

import torch

from amp_docs_lib.amp.precision import REGIMES
from amp_docs_lib.bench import memory as bench_memory
from amp_docs_lib.distributed import memory as dist_memory

# Not a training regime of the training-regimes chapter: torchao float8 training (the FP8 chapter).
EXTRA = {"fp8"}


def _bytes(dtype: torch.dtype) -> int:
    return torch.empty((), dtype=dtype).element_size()


def test_calculators_use_the_regime_names():
    assert set(bench_memory.REGIMES) - EXTRA <= set(REGIMES), set(bench_memory.REGIMES) - EXTRA - set(REGIMES)
    assert set(dist_memory.PRECISIONS) <= set(REGIMES), set(dist_memory.PRECISIONS) - set(REGIMES)


def test_each_name_means_what_the_regime_means():
    for name, p in dist_memory.PRECISIONS.items():
        r = REGIMES[name]
        assert p["param"] == _bytes(r.param_dtype), name
        assert (p["master"] > 0) == (r.optimizer == "master_adamw"), name
    for name, b in bench_memory.REGIMES.items():
        if name in EXTRA:
            continue
        r = REGIMES[name]
        assert b["weights"] == _bytes(r.param_dtype), name
        assert (b["weight_copies"] > 0) == (r.autocast_dtype is not None), name
