"""FP8 and microscaling (MX) formats, laid out by workflow.

* :mod:`~amp_docs_lib.fp8.formats`: every code of the FP8 and MX element formats, the library's
  saturating cast, rounding error against magnitude.
* :mod:`~amp_docs_lib.fp8.capture`: real activation and gradient tensors from the library's GPT.
* :mod:`~amp_docs_lib.fp8.scaling`: per-tensor (current and delayed), per-row and MX block scaling,
  and their error metrics.
* :mod:`~amp_docs_lib.fp8.nvfp4`: NVFP4's two-level block scaling against MXFP4.
* :mod:`~amp_docs_lib.fp8.fine_grained`: DeepSeek-V3's tile/block scaling and promoted accumulation, emulated.
* :mod:`~amp_docs_lib.fp8.gemm`: ``torch._scaled_mm`` / ``torch.nn.functional.scaled_mm`` and the
  scale-convention checker.
* :mod:`~amp_docs_lib.fp8.float8_training`: torchao float8 training of the GPT against BF16.
* :mod:`~amp_docs_lib.fp8.memory`: bytes per element, block-scale overhead included.
* :mod:`~amp_docs_lib.fp8.transformer_engine`: Transformer Engine's recipes, read from its source.

Format facts (bit layouts, limits, storage types) come from :mod:`amp_docs_lib.numbers.formats`; this
package does not repeat them.
"""

import logging as _logging

# torchao 0.18 registers Enum pytree constants, which torch 2.14 logs a deprecation warning for at
# import (torch.utils._pytree), and torch.utils.benchmark's import logs "No CUDA runtime is found"
# on a CPU-only machine (torch.utils.cpp_extension). Neither is actionable by a reader; both would
# otherwise print into the chapter's outputs. Only these two loggers are quietened, to errors.
for _name in ("torch.utils._pytree", "torch.utils.cpp_extension"):
    _logging.getLogger(_name).setLevel(_logging.ERROR)
