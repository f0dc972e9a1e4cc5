"""Chapters take display and Markdown from amp_docs_lib.page.notebook, which works without IPython.

A chapter that imports them from IPython breaks a copied cell run as a plain script (the reader has
only the wheel's [notebook] extra and no IPython): the autocast chapter did, and the downloads test
caught it only in the full suite.
"""

import re

import pytest

from conftest import CHAPTERS

IPYTHON_IMPORT = re.compile(r"^\s*from IPython(?:\.display)? import (.+)$", re.M)
# The format explorer's widget is raw HTML for the notebook page; a script has nothing to show it in.
ALLOWED = {"HTML"}


@pytest.mark.parametrize("chapter", CHAPTERS, ids=[c.stem for c in CHAPTERS])
def test_chapters_take_display_and_markdown_from_the_library(chapter):
    names = {n.strip() for m in IPYTHON_IMPORT.finditer(chapter.read_text()) for n in m.group(1).split(",")}
    assert names <= ALLOWED, f"{chapter.stem} imports {sorted(names - ALLOWED)} from IPython"
