"""``python -m amp_docs_lib`` is the ``amp-docs`` command."""

import sys

from amp_docs_lib.cli import main

sys.exit(main())
