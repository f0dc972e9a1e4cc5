"""amp_docs_lib: the companion library of the amp-docs site.

Layered packages in two branches on ``core`` that meet in ``cli`` (ARCHITECTURE.md draws them, the
import-linter contracts in pyproject.toml enforce them): the concepts, ``gpt`` → ``numbers`` →
``amp`` → (``regimes``, ``bench``, ``fp8``, ``quantization``, ``distributed``, ``debugging``) →
``literature``; the presentation, ``page`` → ``docsite`` → ``devtools``. The chapters, the examples and the tests
all call into it.
"""

import logging as _logging

__version__ = "0.1.0"

# torchao registers Enum pytree constants, which torch logs a deprecation warning for at import
# (torch.utils._pytree), and torch.utils.benchmark's import logs "No CUDA runtime is found" on a
# CPU-only machine (torch.utils.cpp_extension). Neither is actionable by a reader; both would
# otherwise print into chapter outputs. Only these two loggers are quietened, to errors.
for _name in ("torch.utils._pytree", "torch.utils.cpp_extension"):
    _logging.getLogger(_name).setLevel(_logging.ERROR)
