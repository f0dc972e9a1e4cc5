"""Record what a chapter's kernel reads, so that its cache key is built from what it used.

The executor starts each kernel with ``hide_site/`` first on ``PYTHONPATH`` and
``$AMP_DOCS_READS_DIR`` / ``$AMP_DOCS_READS_ROOTS`` set; ``hide_site/sitecustomize.py``
loads this file (by path: it imports only the standard library) and calls
``install()``, which adds a ``sys.addaudithook`` hook to the interpreter. Every
Python process the kernel starts inherits the variables, so examples run in a
subprocess and ``multiprocessing`` workers record too (forked children inherit the
hook itself). Each process appends lines to its own ``<pid>.reads`` file at once
(no buffering), so a worker that ends with ``os._exit`` or is killed keeps what it
recorded.

Lines (tab-separated):

``S pid``          the recorder started in process ``pid``
``R path``         a file under a root was opened for reading (a module's ``.pyc`` is
                   recorded as its ``.py``: a module imported lazily, inside a function,
                   is recorded when it is imported)
``W path``         a file under a root was opened for writing: the chapter's own output,
                   not an input even if it reads it back
``L path``         a folder under a root was listed (``glob``, ``os.listdir``; not
                   importlib's own listings of package folders)
``D kind path``    a file was read through a reader that declared it uses only part of
                   it (``kind``: e.g. ``headings``, see ``derived``)
``U reason``       something may have been read that cannot be recorded (a Python process
                   started with an environment that drops the recorder): the chapter's inputs
                   are unknown
``M path``         a module in ``sys.modules`` at the end, file under a root (``finish``)
``E pid``          the kernel's last cell ran (``finish``): the record is complete

Only reads under the roots count (the site and the library checkout); installed
packages are covered by their versions in the cache key. Writes are not inputs.
Not seen: reads that bypass Python (a C library opening a file itself, a program
that is not Python, such as ``git``); the site's chapters read their inputs through
Python.
"""

from __future__ import annotations

import os
import re
import sys

READS_DIR_ENV_VAR = "AMP_DOCS_READS_DIR"
READS_ROOTS_ENV_VAR = "AMP_DOCS_READS_ROOTS"
MODULE_NAME = "amp_docs_read_recorder"  # its name in sys.modules once installed
# Folders under a root whose files are never inputs: version control, caches, build output.
IGNORED_PARTS = frozenset({".git", ".amp-docs-cache", "__pycache__", ".pytest_cache"})
_EXEC_EVENTS = ("os.exec", "os.posix_spawn", "os.spawn")

_state = {
    "pid": None,
    "fd": None,
    "busy": False,
    "seen": set(),
    "derived": None,
    "roots": (),
    "dir": None,
    "installed": False,
}


def _open() -> None:
    """This process's record file, opened on first use (again in a forked child), starting with ``S pid``."""
    pid = os.getpid()
    if _state["pid"] != pid:
        _state["pid"] = pid
        _state["seen"] = set()
        _state["fd"] = os.open(
            os.path.join(_state["dir"], f"{pid}.reads"), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644
        )
        os.write(_state["fd"], f"S\t{pid}\n".encode())


def _emit(line: str) -> None:
    _open()
    os.write(_state["fd"], (line + "\n").encode("utf-8", "surrogateescape"))


def _emit_unknown(line: str) -> None:
    """Emit a line saying the reads became unknown; busy while it writes, so the recorder does not record its own write."""
    _state["busy"] = True
    try:
        _emit(line)
    finally:
        _state["busy"] = False


def _under_roots(path: str) -> str | None:
    """``path`` made absolute if it lies under a root and outside the ignored folders, else None."""
    path = os.path.abspath(path)
    for root in _state["roots"]:
        if path.startswith(root):
            rel = path[len(root) :]
            parts = rel.split(os.sep)
            if "__pycache__" in parts and path.endswith(".pyc"):
                # .../pkg/__pycache__/mod.cpython-311.pyc is the compiled .../pkg/mod.py
                i = parts.index("__pycache__")
                stem = parts[-1].split(".", 1)[0]
                return os.path.join(root, *parts[:i], stem + ".py")
            if IGNORED_PARTS.intersection(parts) or path.startswith(_state["dir"]):
                return None
            return path
    return None


def _record(kind: str, raw) -> None:
    if isinstance(raw, int) or raw is None:
        return
    try:
        path = _under_roots(os.fsdecode(os.fspath(raw)))
    except TypeError:
        return
    if path is None:
        return
    derived = _state["derived"]
    line = f"D\t{derived}\t{path}" if (kind == "R" and derived) else f"{kind}\t{path}"
    if line not in _state["seen"] or _state["pid"] != os.getpid():
        _emit(line)
        _state["seen"].add(line)


def _lists_for_imports(filename: str) -> bool:
    """Whether a folder listing comes from the import system: importlib finding modules or installed
    distributions (``importlib.metadata``), ``pkgutil`` walking packages. The modules it then
    imports are recorded when read, and installed packages are in the key by their versions."""
    return (
        filename.startswith("<frozen importlib")
        or filename.endswith(_IMPORT_LISTERS)
        or f"{os.sep}importlib{os.sep}metadata{os.sep}" in filename
    )


_IMPORT_LISTERS = (f"{os.sep}pkgutil.py", f"{os.sep}zipimport.py")


def _reading(mode, flags) -> bool:
    if isinstance(mode, str):
        return "r" in mode or "+" in mode
    if isinstance(flags, int):
        return (flags & os.O_ACCMODE) in (os.O_RDONLY, os.O_RDWR)
    return True


_PYTHON_NAME = re.compile(r"^python[0-9.]*(?:\.exe)?$")


def _is_python(executable, argv) -> bool:
    """Whether a process about to start runs a Python interpreter (only those can carry the recorder;
    other programs, such as ``ldconfig`` that ``ctypes.util`` runs with its own environment, are
    not recorded either way: see the module's docstring)."""
    exe = executable
    if exe is None and isinstance(argv, (list, tuple)) and argv:
        exe = argv[0]
    if isinstance(argv, (str, bytes)) and exe is None:
        return True  # a shell command line: cannot tell, assume the worst
    try:
        exe = os.fsdecode(os.fspath(exe))
    except TypeError:
        return True
    if _PYTHON_NAME.match(os.path.basename(exe)):
        return True
    try:
        return os.path.realpath(exe) == os.path.realpath(sys.executable)
    except OSError:
        return True


def _drops_recorder(env) -> bool:
    if env is None:
        return False  # inherits ours
    try:
        keys = {os.fsdecode(k) for k in env}
    except TypeError:
        return True
    return READS_DIR_ENV_VAR not in keys


def _hook(event: str, args: tuple) -> None:
    if _state["busy"]:
        return
    if event == "open":
        kind = "R" if _reading(args[1], args[2]) else "W"
    elif event in ("os.listdir", "os.scandir"):
        if _lists_for_imports(sys._getframe(1).f_code.co_filename):
            return
        kind = "L"
    elif event == "subprocess.Popen":
        if _is_python(args[0], args[1]) and _drops_recorder(args[3]):
            _emit_unknown(f"U\tsubprocess started without the read recorder: {args[1]!r}"[:500])
        return
    elif event.startswith(_EXEC_EVENTS):
        env = args[2] if len(args) > 2 else None
        if _is_python(args[0], args[1] if len(args) > 1 else None) and _drops_recorder(env):
            _emit_unknown(f"U\t{event} without the read recorder: {args[0]!r}"[:500])
        return
    else:
        return
    _state["busy"] = True
    try:
        _record(kind, args[0] if args else None)
    except Exception:  # never break the chapter; an unrecordable read makes the inputs unknown
        try:
            _emit(f"U\tcould not record {event} {args[:1]!r}"[:500])
        except Exception:
            pass
    finally:
        _state["busy"] = False


class derived:
    """``with derived("headings"): text = path.read_text()``: the file is read for a part of it only.

    A reader that uses only part of a file (the literature chapter reads other chapters'
    headings) declares it, and the file is recorded as ``D kind path``: the build keys the
    chapter on that part (``docsite.inputs.DERIVED``), so prose edits elsewhere in the
    file do not re-execute it. Without the recorder this does nothing.
    """

    def __init__(self, kind: str):
        self.kind = kind

    def __enter__(self):
        self._outer = _state["derived"]
        _state["derived"] = self.kind
        return self

    def __exit__(self, *exc):
        _state["derived"] = self._outer
        return False


def install(environ=None) -> bool:
    """Start recording in this interpreter if ``$AMP_DOCS_READS_DIR`` is set; True if it did."""
    environ = os.environ if environ is None else environ
    directory = environ.get(READS_DIR_ENV_VAR)
    if not directory or _state["installed"]:
        return False
    roots = [os.path.join(os.path.realpath(r), "") for r in environ.get(READS_ROOTS_ENV_VAR, "").split(os.pathsep) if r]
    # Also the un-resolved spelling of each root, as processes see it through a symlinked path.
    roots += [os.path.join(os.path.abspath(r), "") for r in environ.get(READS_ROOTS_ENV_VAR, "").split(os.pathsep) if r]
    _state.update(roots=tuple(dict.fromkeys(roots)), dir=os.path.join(os.path.abspath(directory), ""))
    os.makedirs(_state["dir"], exist_ok=True)
    _state["installed"] = True
    sys.addaudithook(_hook)
    _state["busy"] = True
    try:
        _open()  # every process that recorded says so, even if it read nothing
    finally:
        _state["busy"] = False
    return True


# Modules ``hide_site/sitecustomize.py`` loads into every process: the build's machinery, not inputs.
_MACHINERY = frozenset({"sitecustomize", "_amp_docs_hide_packages", MODULE_NAME})


def finish() -> None:
    """The kernel's last step: record the modules loaded from the roots and mark the record complete."""
    _state["busy"] = True
    try:
        for name, module in list(sys.modules.items()):
            if name in _MACHINERY:
                continue
            f = getattr(module, "__file__", None)
            if isinstance(f, str):
                path = _under_roots(f)
                if path is not None:
                    _emit(f"M\t{path}")
        _emit(f"E\t{os.getpid()}")
    finally:
        _state["busy"] = False
