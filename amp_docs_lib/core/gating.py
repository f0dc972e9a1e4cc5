"""Hardware gating: cells that need CUDA, BF16 hardware, a compute capability or a package.

A chapter marks such a cell with a tag in its source, e.g.
```` ```python tags=["requires:cuda"] ````. The build's executor asks
``unmet_requirements`` before running the cell; on a machine that lacks
something it skips the cell and shows ``skip_note_html`` (plus committed
reference results where they exist) instead of a gap or a traceback.
"""

from __future__ import annotations

import html
import importlib.util
import re
from collections.abc import Iterable

from amp_docs_lib.core.env import device_summary

TAG_PREFIX = "requires:"
_SM = re.compile(r"^sm(\d+)(\d)$")  # sm89 -> (8, 9), sm100 -> (10, 0)

REQUIREMENTS = {
    "cuda": "a CUDA GPU",
    "cuda-bf16": "a CUDA GPU with native bfloat16 support",
    "sm80": "a CUDA GPU of compute capability 8.0 or newer (Ampere)",
    "sm89": "a CUDA GPU of compute capability 8.9 or newer (Ada/Hopper, FP8 tensor cores)",
    "sm90": "a CUDA GPU of compute capability 9.0 or newer (Hopper)",
    "sm100": "a CUDA GPU of compute capability 10.0 or newer (Blackwell)",
    "multi-gpu": "two or more CUDA GPUs",
}
PACKAGE_PREFIX = "pkg:"


def valid_requirements() -> list[str]:
    from amp_docs_lib.core.packages import KNOWN_MODULES

    return sorted(REQUIREMENTS) + [f"{PACKAGE_PREFIX}{name}" for name in KNOWN_MODULES]


def describe(requirement: str) -> str:
    if not isinstance(requirement, str):
        raise TypeError(f"requirement must be a str, got {type(requirement).__name__}")
    if requirement.startswith(PACKAGE_PREFIX):
        from amp_docs_lib.core.packages import check_known  # only listed packages are in the cache key

        return f"the Python package {check_known(requirement[len(PACKAGE_PREFIX) :])}"
    try:
        return REQUIREMENTS[requirement]
    except KeyError:
        raise ValueError(f"unknown requirement {requirement!r}; valid: {valid_requirements()}") from None


def requirement_met(requirement: str) -> bool:
    """Whether this machine satisfies ``requirement`` (a name from ``valid_requirements()``)."""
    describe(requirement)  # validates the name
    if requirement.startswith(PACKAGE_PREFIX):
        from amp_docs_lib.core.packages import is_hidden  # $AMP_DOCS_HIDE_PACKAGES

        name = requirement[len(PACKAGE_PREFIX) :]
        return not is_hidden(name) and importlib.util.find_spec(name) is not None
    import torch  # here, not at import: the build's up-to-date path stays torch-free

    if not torch.cuda.is_available():
        return False
    if requirement == "cuda":
        return True
    if requirement == "cuda-bf16":
        return bool(torch.cuda.is_bf16_supported(including_emulation=False))
    if requirement == "multi-gpu":
        return torch.cuda.device_count() >= 2
    m = _SM.match(requirement)
    major, minor = int(m.group(1)), int(m.group(2))
    return torch.cuda.get_device_capability() >= (major, minor)


def requirements_from_tags(tags: Iterable[str]) -> list[str]:
    return [t[len(TAG_PREFIX) :] for t in tags if t.startswith(TAG_PREFIX)]


def unmet_requirements(tags: Iterable[str]) -> list[str]:
    """The requirements among a cell's tags that this machine does not meet."""
    return [r for r in requirements_from_tags(tags) if not requirement_met(r)]


def _code_spans(escaped: str) -> str:
    """`name` in already escaped text as <code>name</code> (the note is HTML, not Markdown)."""
    import re

    return re.sub(r"`([^`<>]+)`", r"<code>\1</code>", escaped)


def skip_note_html(unmet: list[str], reference_html: str | None = None) -> str:
    """The note shown in place of a skipped cell's output: one line saying what the cell needs,
    the machine in a fold (the page's provenance card names it too); a committed reference
    result, where one exists, is shown beside it, unfolded."""
    needs = "; ".join(
        describe(r) + (" (not installed in this build)" if r.startswith(PACKAGE_PREFIX) else "") for r in unmet
    )
    line = f"<strong>Skipped on this machine</strong>: needs {_code_spans(html.escape(needs))}"
    if reference_html:
        return (
            f'<div class="amp-skip amp-skip--reference"><p>{line}. Reference result, committed from a '
            f"machine that has it:</p>{reference_html}</div>"
        )
    if unmet and all(r.startswith(PACKAGE_PREFIX) for r in unmet):
        # Only a package is missing: any machine runs the cell once it is installed, this one included.
        from amp_docs_lib.core.packages import PACKAGES

        by_module = {p.module: p for p in PACKAGES}
        pkgs = [by_module[r[len(PACKAGE_PREFIX) :]] for r in unmet]
        plain = " ".join(p.distribution for p in pkgs if p.install is None)
        commands = [f"pip install {plain}"] * bool(plain) + [p.install for p in pkgs if p.install]
        needs = [p.needs for p in pkgs if p.needs]
        how = " and ".join(f"<code>{html.escape(c)}</code>" for c in commands)
        detail = (
            f"It needs {html.escape('; '.join(needs))}, then {how}"
            if needs
            else f"It needs nothing else: this machine ({html.escape(device_summary())}) runs it after {how}"
        ) + "; build again to see its output here."
    else:
        detail = (
            f"This build ran on {html.escape(device_summary())}. A build on a machine that has what the "
            "cell needs runs it and shows its numbers here."
        )
    return (
        f'<details class="amp-skip"><summary>{line}; no reference result is committed.</summary>'
        f"<p>{detail}</p></details>"
    )
