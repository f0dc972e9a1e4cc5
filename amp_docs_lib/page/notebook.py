"""What a chapter's code does in a notebook and as a plain script (a copied cell, no IPython needed).

* ``display``: IPython's ``display`` under IPython (a kernel, Jupyter); in a plain script it
  prints each object's plain-text rendering (tables as text, claims as sentences, figures as
  their caption and stamp). ``Markdown``: IPython's ``Markdown`` under IPython, else its text.
* ``shown_in_scripts``: the page functions (``show_table``, ``claim``, ``show_figure``, ...) are
  wrapped with it. A cell whose result is only displayed (its last expression) shows nothing when
  the cell runs as a script, so there a page function called from the script's own code prints
  what it returns at once; ``display`` then does not print it again.
* ``%%requires <what> ...``: a cell magic (``%load_ext amp_docs_lib.page.notebook``) that runs
  its cell only where ``core.gating`` says the machine meets every requirement and prints the
  skip note otherwise. The downloaded notebooks guard their ``requires:`` cells with it, so they
  run top to bottom on a machine without the hardware, as the site's build does.
"""

from __future__ import annotations

import functools
import sys
from typing import Any, Callable, TypeVar

F = TypeVar("F", bound=Callable[..., Any])
_PRINTED_FLAG = "_amp_docs_printed"  # set on a result a script has already printed


def in_ipython() -> bool:
    """Whether this runs under IPython (a notebook kernel); never imports IPython itself."""
    ipython = sys.modules.get("IPython")
    return ipython is not None and getattr(ipython, "get_ipython", lambda: None)() is not None


def _print_once(obj: Any) -> None:
    if getattr(obj, _PRINTED_FLAG, False):
        return
    print(obj)
    try:
        setattr(obj, _PRINTED_FLAG, True)
    except (AttributeError, TypeError):  # str, int, objects with __slots__: printed each time
        pass


def display(*objs: Any, **kwargs: Any) -> None:
    """IPython's ``display`` under IPython; otherwise print each object (not one already printed)."""
    if in_ipython():
        from IPython.display import display as ipython_display

        ipython_display(*objs, **kwargs)
        return
    for obj in objs:
        _print_once(obj)


class PlainText:
    """Text for a script, where there is no renderer (``Markdown`` outside IPython)."""

    def __init__(self, text: str):
        self.text = text

    def __repr__(self) -> str:
        return self.text


def Markdown(text: str) -> Any:  # noqa: N802 (IPython's name, so a chapter's code reads as with IPython)
    """IPython's ``Markdown`` under IPython, else the text itself (printed by ``display``)."""
    if in_ipython():
        from IPython.display import Markdown as IPythonMarkdown

        return IPythonMarkdown(text)
    return PlainText(text)


def shown_in_scripts(fn: F) -> F:
    """Wrap a page function: called from a plain script's own code (its ``__main__``, outside
    IPython), it prints its result, which no display hook would show. Calls from the library
    (the site build, another page function) and from notebooks print nothing."""
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        result = fn(*args, **kwargs)
        if sys._getframe(1).f_globals.get("__name__") == "__main__" and not in_ipython():
            _print_once(result)
        return result
    return wrapper  # type: ignore[return-value]


GATE_MAGIC = "requires"  # the cell magic's name: %%requires cuda sm89


def gated_source(source: str, requirements: list[str]) -> str:
    """``source`` guarded by the ``%%requires`` cell magic (runs only where every requirement is met)."""
    return f"%%{GATE_MAGIC} {' '.join(requirements)}\n{source}"


def ungated_source(source: str) -> str:
    """``source`` without its ``%%requires`` guard (as the chapter has it: the cell's id hashes this)."""
    first, newline, rest = source.partition("\n")
    return rest if newline and first.startswith(f"%%{GATE_MAGIC} ") else source


def _requires(line: str, cell: str) -> None:
    from IPython import get_ipython

    from amp_docs_lib.core.gating import unmet_requirements

    unmet = unmet_requirements(f"requires:{r}" for r in line.split())
    if unmet:
        print(f"skipped: needs {', '.join(unmet)} (this machine does not have it; the site's build skips "
              "this cell the same way)")
        return
    result = get_ipython().run_cell(cell)  # as IPython's %%capture does: the last expression is displayed
    result.raise_error()  # an error fails this cell, as it would unguarded


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext amp_docs_lib.page.notebook``: registers the ``%%requires`` cell magic."""
    ipython.register_magic_function(_requires, magic_kind="cell", magic_name=GATE_MAGIC)
