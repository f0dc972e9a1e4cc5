"""Markup of mkdocs-jupyter's notebook template that the site replaces: cell ids and copy buttons.

nbconvert's random cell ids (a new page on every build) become positions; the template's own copy
buttons and hidden copies of every cell go (Material's copy button is the one button).
"""

from __future__ import annotations

import re

# It starts with a literal (no \b, no lookbehind) so that re searches megabyte pages fast.
_CELL_ID = re.compile(r'id="cell-id=[0-9a-f-]+"')


def stable_cell_ids(output: str) -> str:
    """Replace the random cell ids nbconvert puts on cells (jupytext draws new ones on every
    read) with their position, so that two builds of the same chapter give the same page."""
    counter = iter(range(1_000_000))
    return _CELL_ID.sub(lambda m: f'id="cell-{next(counter)}"', output)


# ---- one copy button per code block ---------------------------------------------------------
# mkdocs-jupyter's template adds its own clipboard button and a hidden plain-text copy of every
# code cell (which search indexes, "Copied!" included); Material's copy button already does the job.
_NB_COPY_BUTTON = re.compile(r'<div class="zeroclipboard-container">.*?</clipboard-copy>\s*</div>', re.S)
_NB_COPY_TEXT = re.compile(r'<div class="clipboard-copy-txt" id="[^"]*">.*?</div>', re.S)
_NB_COPY_SCRIPT = re.compile(
    r"<script>(?:(?!</script>).)*?(?:clipboard-copy|ClipboardCopyElement)(?:(?!</script>).)*</script>", re.S
)


def one_copy_button(output: str) -> str:
    output = _NB_COPY_BUTTON.sub("", output)
    output = _NB_COPY_TEXT.sub("", output)
    return _NB_COPY_SCRIPT.sub("", output)
