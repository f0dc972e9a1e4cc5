"""Show and run the example programs from a chapter.

Paths are relative to the repository's ``examples/`` folder (found next to
the package). ``show_source`` and ``show_diff`` render highlighted code;
``run_snippet`` executes a program and returns its printed output, stamped.
"""

from __future__ import annotations

import contextlib
import difflib
import html
import inspect
import io
import runpy
import sys
from pathlib import Path
from typing import Any

from amp_docs_lib.page.notebook import shown_in_scripts
from amp_docs_lib.page.stamp import Stamped

from amp_docs_lib.core.paths import EXAMPLES_DIR


def example_path(path: str | Path) -> Path:
    """Resolve ``path`` against ``examples/``; raise ``ValueError`` naming what exists if missing."""
    if not isinstance(path, (str, Path)):
        raise TypeError(f"path must be a str or Path, got {type(path).__name__}")
    p = Path(path)
    p = p if p.is_absolute() else EXAMPLES_DIR / p
    if not p.is_file():
        have = sorted(str(q.relative_to(EXAMPLES_DIR)) for q in EXAMPLES_DIR.rglob("*.py"))
        raise ValueError(f"no example {str(path)!r}; valid examples: {have}")
    return p


class Code:
    """Highlighted code for a notebook output (HTML) with a plain-text fallback."""

    def __init__(self, text: str, lexer: str, title: str | None = None):
        self.text, self.lexer, self.title = text, lexer, title

    def _repr_html_(self) -> str:
        from pygments import highlight
        from pygments.formatters import HtmlFormatter
        from pygments.lexers import get_lexer_by_name

        body = highlight(self.text, get_lexer_by_name(self.lexer), HtmlFormatter(cssclass="highlight"))
        title = f'<span class="filename">{html.escape(self.title)}</span>' if self.title else ""
        # A Material code block (pre > code gets the copy button); a diff is left out of search.
        return f'<div class="amp-code amp-code--{html.escape(self.lexer)}">{title}{body}</div>'

    def __repr__(self) -> str:
        return self.text


@shown_in_scripts
def show_source(obj: str | Path | Any) -> Code:
    """Highlighted source of an example file (path under ``examples/``) or of a Python object."""
    if isinstance(obj, (str, Path)):
        p = example_path(obj)
        return Code(p.read_text(), "python", f"examples/{p.relative_to(EXAMPLES_DIR)}")
    try:
        src = inspect.getsource(obj)
    except TypeError:
        raise TypeError(f"show_source takes an example path or a module/class/function, "
                        f"got {type(obj).__name__}") from None
    return Code(src, "python", f"{obj.__module__}.{obj.__qualname__}" if hasattr(obj, "__qualname__") else None)


@shown_in_scripts
def show_diff(base_path: str | Path, path: str | Path, context: int = 3) -> Code:
    """Unified diff from ``base_path`` to ``path`` (both under ``examples/``), highlighted."""
    a, b = example_path(base_path), example_path(path)
    diff = difflib.unified_diff(a.read_text().splitlines(keepends=True),
                                b.read_text().splitlines(keepends=True),
                                fromfile=f"examples/{a.relative_to(EXAMPLES_DIR)}",
                                tofile=f"examples/{b.relative_to(EXAMPLES_DIR)}", n=context)
    return Code("".join(diff), "diff", None)


class _Tabs:
    """Alternative views of one piece of code as Material content tabs (a diff and the full file)."""

    def __init__(self, views: dict[str, Code]):
        if not views:
            raise ValueError("Tabs needs at least one view")
        self.views = views

    def _repr_html_(self) -> str:
        import hashlib

        group = "amp-tabs-" + hashlib.sha256("|".join(c.text for c in self.views.values()).encode()).hexdigest()[:10]
        ids = [f"{group}-{i}" for i in range(len(self.views))]
        inputs = "".join(f'<input{" checked" if i == 0 else ""} id="{ids[i]}" name="{group}" type="radio">'
                         for i in range(len(ids)))
        labels = "".join(f'<label for="{ids[i]}">{html.escape(label)}</label>' for i, label in enumerate(self.views))
        blocks = "".join(f'<div class="tabbed-block">{code._repr_html_()}</div>' for code in self.views.values())
        return (f'<div class="tabbed-set tabbed-alternate amp-tabs" data-tabs="1:{len(ids)}">{inputs}'
                f'<div class="tabbed-labels">{labels}</div><div class="tabbed-content">{blocks}</div></div>')

    def __repr__(self) -> str:
        return "\n\n".join(f"# {label}\n{code.text}" for label, code in self.views.items())


@shown_in_scripts
def show_pattern(base_path: str | Path, path: str | Path, context: int = 3) -> _Tabs:
    """A training pattern as two tabs: its diff from ``base_path``, and the full program ``path``."""
    return _Tabs({"What changes": show_diff(base_path, path, context), "Full program": show_source(path)})


class SnippetRun(Stamped):
    """The printed output of a run, with the namespace it left behind in ``.globals``."""

    def __init__(self, path: Path, output: str, globals_: dict[str, Any]):
        super().__init__(f'<pre class="amp-output">{html.escape(output)}</pre>',
                         f"output of examples/{path.relative_to(EXAMPLES_DIR)}", "output")
        self.output = output
        self.globals = globals_

    def __repr__(self) -> str:
        return self.output


@shown_in_scripts
def run_snippet(path: str | Path, args: list[str] | tuple[str, ...] = ()) -> SnippetRun:
    """Run an example as ``__main__`` (runpy, ``sys.argv = [path, *args]``) and capture what it prints."""
    p = example_path(path)
    buf = io.StringIO()
    saved_argv = sys.argv
    sys.argv = [str(p), *args]
    try:
        with contextlib.redirect_stdout(buf):
            ns = runpy.run_path(str(p), run_name="__main__")
    finally:
        sys.argv = saved_argv
    return SnippetRun(p, buf.getvalue(), ns)
