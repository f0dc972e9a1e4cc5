"""Generated HTML fragments of the site, memoised by their inputs.

Three pages hold tables the build generates: the home page (the environment
report), "Rebuild on your GPU" (the problem sizes of each profile) and "Yours vs
reference" (this build's key measurements beside the reference machines'). Their
HTML is a pure function of a few inputs (the report, the profiles, the executed
notebooks and committed reference results) and of the library code that renders
it. ``FragmentMemo.html(name, inputs, render)`` returns the stored HTML while
those are unchanged and calls ``render`` otherwise, so a build with nothing
changed does not import pandas to draw tables it drew last time.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any, Callable

from amp_docs_lib.docsite.store import read_keyed, write_keyed

# The heading id of the generated "Chapter execution time" section ("Yours vs reference"): pages link to
# it, and the plugin declares it to mkdocs' link check, which runs before the section is generated.
TIMING_ANCHOR = "chapter-execution-time"


class FragmentMemo:
    """HTML fragments in ``directory``, one JSON file each, keyed by inputs and library version."""

    def __init__(self, directory: str | os.PathLike, library_hash: str):
        self.directory = Path(directory)
        self.library_hash = library_hash

    def html(self, name: str, inputs: Any, render: Callable[[], str]) -> str:
        """``render()``'s HTML, from the memo when ``inputs`` (JSON-able) and the library are unchanged."""
        if not isinstance(name, str) or not name.replace("-", "").replace("_", "").isalnum():
            raise ValueError(f"fragment name must be letters, digits, '-' or '_', got {name!r}")
        key = hashlib.sha256(json.dumps({"inputs": inputs, "library": self.library_hash},
                                        sort_keys=True, default=str).encode()).hexdigest()
        path = self.directory / f"{name}.json"
        memo = read_keyed(path, key)
        if isinstance(memo, str):
            return memo
        out = render()
        write_keyed(path, key, out)
        return out
