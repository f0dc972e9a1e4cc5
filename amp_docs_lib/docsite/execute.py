"""Execute one chapter (a jupytext Markdown notebook) the way the site build does.

* Cells tagged ``requires:<name>`` run only where ``gating.requirement_met``;
  elsewhere the cell's output is a visible skip note, plus the committed
  reference result for that cell if one exists.
* A chapter with a claim that cannot fail (``amp_docs_lib.page.claim_lint``) is
  refused before it runs.
* Cells tagged ``raises-exception`` must raise (their traceback is the output);
  any other cell that raises fails the chapter with ``ChapterExecutionError``,
  which names the chapter and the cell.
* What the chapter reads is recorded (``docsite/read_recorder.py`` in the kernel and
  in every Python process it starts; a hidden last cell marks the record complete),
  and ``Execution.inputs`` holds it with content hashes: the cache key of its result.

* Cells are numbered among code cells (1..n) everywhere (progress lines, errors, the
  timing table), with the line of the cell's fence in the ``.md`` source where known.
* Ctrl-C or SIGTERM stops the kernels and raises ``ChapterInterrupted`` ("interrupted at
  cell N of CHAPTER"); kernel and recording folders are removed, and those a killed
  process left (named with its pid) are removed by the next execution.

Run ``amp-docs execute docs/chapters/formats.md`` to execute one chapter (through
the cache) and print per-cell timings.
"""

from __future__ import annotations

import hashlib
import html
import json
import os
import re
import shutil
import signal
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

from amp_docs_lib.core import settings
from amp_docs_lib.core.gating import requirements_from_tags, skip_note_html, unmet_requirements
from amp_docs_lib.core.packages import hidden_packages, subprocess_env
from amp_docs_lib.core.paths import EXECUTED_DIR, REFERENCE_RESULTS, REPO_ROOT
from amp_docs_lib.core.profiles import PROFILE_ENV_VAR, active_profile
from amp_docs_lib.docsite.inputs import FINISH_CELL_SOURCE, Roots, read_records, recording_environment, snapshot
from amp_docs_lib.docsite.progress import ChapterProgress
from amp_docs_lib.docsite.store import clean_stale_temp_dirs, pid_temp_dir, sigterm_as_interrupt

FINISH_CELL_FLAG = "amp_docs_finish"  # metadata of the hidden last cell (removed after execution)
EXPECTED_ERROR_TAG = "raises-exception"
CELL_TIMEOUT_S = 900
KERNEL_DIR_PREFIX, READS_DIR_PREFIX = "amp-docs-kernel-", "amp-docs-reads-"  # + pid: see store.pid_temp_dir
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_CODE_FENCE = re.compile(r"^```python\b")  # jupytext Markdown: a code cell opens with this fence


class ChapterExecutionError(RuntimeError):
    """A chapter's example failed; the message names the chapter and the cell."""


class ChapterInterrupted(KeyboardInterrupt):
    """Ctrl-C or SIGTERM stopped execution; ``where``: (chapter id, cell number or None) of each chapter
    that was executing. The kernels are stopped and the temporary folders removed."""

    def __init__(self, where: list[tuple[str, int | None]]):
        self.where = where
        super().__init__(
            "interrupted at "
            + (
                ", ".join(f"cell {cell} of {cid}" if cell is not None else f"the start of {cid}" for cid, cell in where)
                or "a chapter's start"
            )
        )


def code_fence_lines(text: str) -> list[int]:
    """The 1-based line of each code cell's opening fence in a chapter's Markdown source, in order."""
    return [n for n, line in enumerate(text.splitlines(), start=1) if _CODE_FENCE.match(line)]


def cell_label(number: int, n_cells: int, source: tuple[str, str] | None = None) -> str:
    """``cell N/M``: code cell ``number`` of ``n_cells``, with its fence's line in ``source`` (the chapter's
    path as shown, its Markdown text) where every code cell's fence was found: ``cell 2/3 (b.md line 14)``."""
    lines = code_fence_lines(source[1]) if source else []
    where = f" ({source[0]} line {lines[number - 1]})" if source and len(lines) == n_cells else ""
    return f"cell {number}/{n_cells}{where}"


# Chapters executing now (chapter id -> client): Ctrl-C in a parallel build stops their kernels.
_running: dict[str, ChapterClient] = {}
_running_lock = threading.Lock()
_stopping = threading.Event()  # set while an interrupt stops the kernels: their failures are the interrupt


def cell_id(cell: Any) -> str:
    """A stable id for a code cell: the hash of its source (edits invalidate references)."""
    return hashlib.sha256(cell.source.encode()).hexdigest()[:16]


def _outputs_to_html(outputs: list[Any]) -> str:
    parts = []
    for o in outputs:
        data = o.get("data", {})
        if "text/html" in data:
            parts.append(data["text/html"])
        elif "image/png" in data:
            parts.append(f'<img src="data:image/png;base64,{data["image/png"]}"/>')
        elif "text/plain" in data:
            parts.append(f"<pre>{html.escape(data['text/plain'])}</pre>")
        elif (
            o.get("output_type") == "stream" and o.get("name") != "stderr"
        ):  # warnings are the build log's, not a result
            parts.append(f"<pre>{html.escape(o.get('text', ''))}</pre>")
    return "\n".join(parts)


def reference_path(chapter_id: str, cell: Any, root: Path) -> Path:
    """Where a gated cell's reference result lives under ``root`` (the project's ``REFERENCE_RESULTS``)."""
    return Path(root) / chapter_id / f"{cell_id(cell)}.json"


_MEASURED_STAMP = re.compile(r'<div class="amp-stamp amp-stamp--measured"[^>]*>[^<]*</div>')  # page/stamp.py's markup
# A reference result speaks of the machine that produced it; shown on another build, "this machine" is that one.
_OTHER_MACHINE_WORDS = (
    ("On this machine (", "On that machine ("),
    ("measured on this machine", "measured on that machine"),
)


def load_reference(chapter_id: str, cell: Any, root: Path) -> str | None:
    """HTML of the committed reference result for a gated cell, if any: its machine's stamp first, and its
    machine facts worded as another machine's."""
    p = reference_path(chapter_id, cell, root)
    if not p.exists():
        return None
    data = json.loads(p.read_text())
    body = data["html"]
    for here, there in _OTHER_MACHINE_WORDS:
        body = body.replace(here, there)
    stamp = data.get("stamp")
    head = ""
    if stamp:  # said once, above the result: its tables' own stamps would repeat it
        head = f'<p class="amp-reference-stamp">Measured on {html.escape(stamp)}</p>'
        body = _MEASURED_STAMP.sub("", body)
    return f'<div class="amp-reference">{head}{body}</div>'


def save_reference(chapter_id: str, cell: Any, root: Path) -> Path:
    """Write a gated cell's outputs as its reference result under ``root``, stamped; returns the file."""
    from amp_docs_lib.page.stamp import stamp_text  # imports torch: only a build that saves references pays

    p = reference_path(chapter_id, cell, root)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(
        json.dumps(
            {
                "requires": requirements_from_tags(cell.metadata.get("tags", [])),
                "stamp": stamp_text(),  # the machine, torch, CUDA, library, profile and date it ran on
                "html": _outputs_to_html(cell.outputs),
            },
            indent=1,
        )
    )
    return p


class ChapterClient(NotebookClient):
    """nbclient with hardware gating, expected-error checks, per-cell timing and progress lines.

    The kernel starts with ``hide_packages.subprocess_env()``: under
    ``$AMP_DOCS_HIDE_PACKAGES`` it cannot import the hidden packages.
    """

    def __init__(
        self,
        nb: Any,
        chapter_id: str,
        progress: ChapterProgress | None = None,
        kernel_env: dict[str, str] | None = None,
        source: tuple[str, str] | None = None,
        **kw: Any,
    ):
        """``source``: (the chapter's path as shown, its Markdown text), to name the line of a cell."""
        super().__init__(nb, **kw)
        code = [i for i, c in enumerate(nb.cells) if c.cell_type == "code" and not c.metadata.get(FINISH_CELL_FLAG)]
        self._cell_number = {i: n for n, i in enumerate(code, start=1)}  # 1-based among code cells
        self.n_code_cells = len(code)
        self.source = source
        self.progress = progress or ChapterProgress(chapter_id, len(code))
        # Local IPC sockets instead of TCP ports: nothing listens on the network, and the
        # kernel does not warn about unencrypted TCP in every build log.
        self._transport = "ipc" if os.name == "posix" else "tcp"
        self._socket_dir: str | None = None
        self.current_cell: int | None = None
        self.chapter_id = chapter_id
        # The project being built (the folder of mkdocs.yml, the kernel's working directory),
        # not the installed library's checkout, holds its reference results.
        cwd = (kw.get("resources") or {}).get("metadata", {}).get("path")
        self.reference_root = Path(cwd or ".").resolve() / REFERENCE_RESULTS
        self.cell_seconds: list[tuple[int, float, str]] = []
        self.kernel_env = kernel_env
        self.read_by_executor: set[Path] = set()  # what a skipped cell's output came from

    def create_kernel_manager(self):
        km = super().create_kernel_manager()
        km.transport = self._transport
        if self._transport == "ipc":
            self._socket_dir = pid_temp_dir(KERNEL_DIR_PREFIX)
            km.ip = os.path.join(self._socket_dir, "kernel")
        return km

    @property
    def interrupted(self) -> bool:
        """Whether Ctrl-C or SIGTERM stopped this execution: in the main thread nbclient's own signal
        handler shuts the kernel down (and records that it did); elsewhere ``stop_running`` kills it."""
        return _stopping.is_set() or getattr(self, "_async_cleanup_kernel_future", None) is not None

    def kill_kernel(self) -> None:
        """Kill the kernel and what it started (its own process group), from any thread."""
        pid = getattr(getattr(self.km, "provisioner", None), "pid", None)
        if pid:
            for kill in (os.killpg, os.kill):
                try:
                    kill(pid, signal.SIGKILL)
                    return
                except (ProcessLookupError, PermissionError):
                    continue

    async def _async_cleanup_kernel(self) -> None:
        if self.interrupted:  # nbclient's signal handler: kill, or the kernel reports the closed sockets
            self.kill_kernel()
        await super()._async_cleanup_kernel()

    def where(self, cell_index: int | None) -> str:
        """``cell N/M`` of notebook cell ``cell_index``, with the line of its fence (``b.md line 14``)."""
        n = self.cell_number(cell_index)
        return "before the first cell" if n is None else cell_label(n, self.n_code_cells, self.source)

    async def async_start_new_kernel(self, **kwargs: Any) -> None:
        kwargs.setdefault("env", self.kernel_env if self.kernel_env is not None else subprocess_env())
        await super().async_start_new_kernel(**kwargs)

    def cell_number(self, cell_index: int | None) -> int | None:
        """The 1-based number of notebook cell ``cell_index`` among the code cells (progress lines use it)."""
        return None if cell_index is None else self._cell_number.get(cell_index)

    async def async_execute_cell(
        self, cell: Any, cell_index: int, execution_count: int | None = None, store_history: bool = True
    ) -> Any:
        if cell.cell_type != "code":
            return cell
        if _stopping.is_set():  # interrupted while its kernel was starting: run nothing more
            raise ChapterInterrupted([(self.chapter_id, self.cell_number(cell_index))])
        if cell.metadata.get(FINISH_CELL_FLAG):
            return await super().async_execute_cell(cell, cell_index, execution_count, store_history)
        tags = cell.metadata.get("tags", [])
        unmet = unmet_requirements(tags)
        if unmet:
            # Inputs of this output: the committed reference result (or its absence) and the code that
            # writes the skip note: gating's sentence and this module's wrapper around the reference.
            import amp_docs_lib.core.gating as gating

            self.read_by_executor.update(
                {reference_path(self.chapter_id, cell, self.reference_root), Path(gating.__file__), Path(__file__)}
            )
            cell.outputs = [
                nbformat.v4.new_output(
                    "display_data",
                    data={
                        "text/html": skip_note_html(unmet, load_reference(self.chapter_id, cell, self.reference_root)),
                        "text/plain": f"skipped: needs {', '.join(unmet)}",
                    },
                )
            ]
            cell.metadata["amp_docs"] = {"skipped": unmet}
            self.cell_seconds.append((cell_index, 0.0, "skipped"))
            self.progress.cell(self.cell_number(cell_index), None, f"skipped (needs {', '.join(unmet)})")
            return cell
        self.current_cell = cell_index
        t0 = time.perf_counter()
        try:
            cell = await super().async_execute_cell(cell, cell_index, execution_count, store_history)
        except BaseException:
            if not self.interrupted:  # an interrupt is said once, by whoever stops the build
                self.progress.cell(self.cell_number(cell_index), time.perf_counter() - t0, "failed")
            raise
        dt = time.perf_counter() - t0
        self.progress.cell(self.cell_number(cell_index), dt)
        self.cell_seconds.append((cell_index, dt, "ran"))
        if EXPECTED_ERROR_TAG in tags and not any(o.output_type == "error" for o in cell.outputs):
            raise ChapterExecutionError(
                f"chapter {self.chapter_id}: {self.where(cell_index)} is tagged {EXPECTED_ERROR_TAG!r} "
                f"but raised nothing:\n{cell.source}"
            )
        if requirements_from_tags(tags) and settings.save_reference_requested():
            save_reference(self.chapter_id, cell, self.reference_root)
        return cell


@dataclass
class Execution:
    """One chapter executed: the notebook, what it read (``inputs``: label -> content hash, see
    ``docsite/inputs.py``) and, if what it read could not be determined, why (``unknown``)."""

    nb: Any
    inputs: dict[str, str]
    unknown: list[str] = field(default_factory=list)
    client: Any = None


def execute_notebook(
    nb: Any,
    chapter_id: str,
    *,
    cwd: Path = REPO_ROOT,
    roots: Roots | None = None,
    reason: str | None = None,
    source: Path | None = None,
) -> tuple[Any, ChapterClient]:
    """Execute ``nb`` in a fresh kernel (working directory ``cwd``); raise ``ChapterExecutionError``
    naming the chapter and cell on failure, ``ChapterInterrupted`` on Ctrl-C or SIGTERM.
    ``client.execution`` holds what it read under ``roots`` (default: ``cwd`` and the library's
    checkout); ``reason`` (why it executes) goes on its progress line; ``source``: the chapter's
    ``.md`` file, whose fence lines name the cells in errors.

    A chapter with a claim whose check cannot fail (``amp_docs_lib.page.claim_lint``)
    is refused before anything runs.
    """
    from amp_docs_lib.page.claim_lint import lint_source

    markdown = (_shown_path(source, cwd), source.read_text(encoding="utf-8")) if source is not None else None
    code = [c for c in nb.cells if c.cell_type == "code"]
    findings = [
        f"{cell_label(n, len(code), markdown)}, {f}"
        for n, cell in enumerate(code, start=1)
        for f in lint_source(cell.source)
    ]
    if findings:
        raise ChapterExecutionError(
            f"chapter {chapter_id} has claims whose check cannot fail:\n  " + "\n  ".join(findings)
        )
    roots = Roots(cwd, REPO_ROOT) if roots is None else roots
    # The kernel runs the profile the cache key names. Set in its environment only: the build's own
    # is an input of the environment memo and the up-to-date manifest, which must not change under them.
    kernel_env = subprocess_env({**os.environ, PROFILE_ENV_VAR: active_profile().name})
    for prefix in (KERNEL_DIR_PREFIX, READS_DIR_PREFIX):  # left by a process that was killed
        clean_stale_temp_dirs(prefix)
    reads_dir = pid_temp_dir(READS_DIR_PREFIX)
    nb.cells.append(nbformat.v4.new_code_cell(FINISH_CELL_SOURCE, metadata={FINISH_CELL_FLAG: True}))
    client = ChapterClient(
        nb,
        chapter_id,
        timeout=CELL_TIMEOUT_S,
        kernel_name="python3",
        allow_errors=False,
        resources={"metadata": {"path": str(cwd)}},
        kernel_env=recording_environment(kernel_env, reads_dir, roots),
        source=markdown,
    )
    started = time.time()
    t0 = time.perf_counter()
    client.progress.started(reason)
    with _running_lock:
        _running[chapter_id] = client
    try:
        with sigterm_as_interrupt():  # (nbclient handles both signals itself while its kernel runs)
            client.execute()
    except BaseException as e:
        if isinstance(e, KeyboardInterrupt) or client.interrupted:
            client.kill_kernel()  # if the interrupt came before nbclient could shut it down
            raise ChapterInterrupted([(chapter_id, client.cell_number(client.current_cell))]) from None
        client.progress.failed(time.perf_counter() - t0, client.cell_number(client.current_cell))
        if not isinstance(e, CellExecutionError):
            raise
        plain = _ANSI.sub("", str(e))
        raise ChapterExecutionError(
            f"chapter {chapter_id} failed to execute at {client.where(client.current_cell)}:\n{plain}"
        ) from None
    finally:
        with _running_lock:
            _running.pop(chapter_id, None)
        nb.cells = [c for c in nb.cells if not c.metadata.get(FINISH_CELL_FLAG)]
        if client._socket_dir:
            shutil.rmtree(client._socket_dir, ignore_errors=True)
        recorded = read_records(reads_dir, roots)
        shutil.rmtree(reads_dir, ignore_errors=True)
    extra = {label for p in client.read_by_executor if (label := roots.label("file", p)) is not None}
    client.execution = Execution(nb, snapshot(recorded, roots, started, extra), recorded.unknown, client)
    nb.metadata.setdefault("amp_docs", {}).update(
        {
            "chapter": chapter_id,
            "profile": active_profile().name,
            "seconds": round(time.perf_counter() - t0, 2),
            "executed_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            **({"hidden_packages": list(hidden)} if (hidden := hidden_packages()) else {}),
        }
    )
    client.progress.finished(nb.metadata["amp_docs"]["seconds"])
    return nb, client


def _shown_path(path: Path, cwd: Path) -> str:
    """``path`` relative to ``cwd`` where it lies under it (as the reader typed it), else as given."""
    try:
        return str(Path(path).resolve().relative_to(Path(cwd).resolve()))
    except ValueError:
        return str(path)


def stop_running() -> list[tuple[str, int | None]]:
    """Kill the kernels of the chapters executing now (Ctrl-C in a parallel build); return where each was."""
    _stopping.set()
    with _running_lock:
        clients = dict(_running)
    for client in clients.values():
        client.kill_kernel()
    return [(cid, client.cell_number(client.current_cell)) for cid, client in sorted(clients.items())]


def is_timing_sensitive(nb: Any) -> bool:
    """Whether a chapter's front matter marks it ``amp_docs: {timing_sensitive: true}``.

    Such chapters measure timings: the build executes them alone, after the others.
    """
    meta = nb.metadata.get("amp_docs", {})
    flag = meta.get("timing_sensitive", False) if isinstance(meta, dict) else False
    if not isinstance(flag, bool):
        raise ValueError(f"amp_docs.timing_sensitive must be true or false, got {flag!r}")
    return flag


def default_jobs(cores: int, cuda_devices: int) -> int:
    """Chapters executed at once when nobody says: one per core on a CPU, ONE on a CUDA machine.

    Every chapter computes on the default CUDA device, so chapters run beside each other share one
    GPU's memory and time: one doubles its batch until the GPU is full, others time GEMMs.
    """
    return 1 if cuda_devices > 0 else max(1, cores)


def resolve_jobs(configured: int | None = None) -> int:
    """Chapters executed at once: ``$AMP_DOCS_JOBS``, else ``configured``, else :func:`default_jobs`.

    0 or None means "the default". Raises ``ValueError`` for a negative or non-integer value
    (``settings.SettingError``, naming the variable, for a bad ``$AMP_DOCS_JOBS``).
    """
    jobs = settings.jobs_override()
    if jobs is None:
        jobs = 0 if configured is None else configured
        if not isinstance(jobs, int) or isinstance(jobs, bool) or jobs < 0:
            raise ValueError(
                f"the plugin's 'jobs' option must be a non-negative integer (0 = the default: one "
                f"per core, one on a CUDA machine), got {configured!r}"
            )
    if jobs == 0:
        import torch

        try:
            cores = len(os.sched_getaffinity(0))
        except AttributeError:
            cores = os.cpu_count() or 1
        return default_jobs(cores, torch.cuda.device_count() if torch.cuda.is_available() else 0)
    return jobs


def execute_chapters(
    chapters: list[tuple[str, Any]],
    jobs: int,
    on_done: Callable[[int, Execution | None, ChapterExecutionError | None], None] | None = None,
    *,
    cwd: Path = REPO_ROOT,
    roots: Roots | None = None,
    reasons: dict[str, str] | None = None,
    sources: dict[str, Path] | None = None,
) -> list[tuple[Execution | None, ChapterExecutionError | None]]:
    """Execute several chapters, one kernel each, ``jobs`` at a time; timing-sensitive ones alone, last.

    ``chapters``: ``(chapter_id, notebook)`` pairs. Returns one ``(execution, error)`` pair per
    chapter, in the order given, whatever order they finished in; a failure is returned (its
    message names its chapter), not raised, so every other chapter still completes.
    ``on_done(index, execution, error)`` is called as each chapter finishes (from a worker
    thread), so its result can be cached at once: a build killed later keeps it.
    ``reasons``: chapter id -> why it executes (shown on its progress line); ``sources``: chapter
    id -> its ``.md`` file (errors name the line of the failing cell).
    Ctrl-C or SIGTERM kills every running kernel and raises ``ChapterInterrupted`` saying where each was.
    """
    from concurrent.futures import ThreadPoolExecutor

    if not isinstance(jobs, int) or jobs < 1:
        raise ValueError(f"jobs must be a positive int, got {jobs!r}")

    ended: set[str] = set()  # chapters that finished or failed: an interrupt does not name them

    def run(i: int) -> tuple[Execution | None, ChapterExecutionError | None]:
        cid, nb = chapters[i]
        try:
            res = (
                execute_notebook(
                    nb, cid, cwd=cwd, roots=roots, reason=(reasons or {}).get(cid), source=(sources or {}).get(cid)
                )[1].execution,
                None,
            )
        except ChapterExecutionError as e:
            res = None, e
        ended.add(cid)
        if on_done is not None:
            on_done(i, *res)
        return res

    results: dict[int, tuple[Execution | None, ChapterExecutionError | None]] = {}
    shared = [i for i, (_, nb) in enumerate(chapters) if not is_timing_sensitive(nb)]
    alone = [i for i in range(len(chapters)) if i not in set(shared)]
    _stopping.clear()
    try:
        with sigterm_as_interrupt():
            if len(shared) > 1 and jobs > 1:
                with ThreadPoolExecutor(max_workers=min(jobs, len(shared)), thread_name_prefix="amp-docs-exec") as pool:
                    futures = []
                    try:  # (an interrupt can come while a worker is being started)
                        for i in shared:
                            futures.append((i, pool.submit(run, i)))
                        for i, future in futures:
                            results[i] = future.result()
                    except KeyboardInterrupt:  # in this (the main) thread: stop the workers' kernels
                        previous = signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C: no traceback
                        try:
                            for _, future in futures:
                                future.cancel()
                            where = stop_running()
                            pool.shutdown(wait=True)  # each worker sees its kernel die and cleans up
                        finally:
                            signal.signal(signal.SIGINT, previous)
                        # A chapter in its last moments when the kernels were stopped may still finish
                        raise ChapterInterrupted([w for w in where if w[0] not in ended]) from None
            else:
                for i in shared:
                    results[i] = run(i)
            for i in alone:  # nothing else runs meanwhile: their timings see a quiet build
                results[i] = run(i)
    except KeyboardInterrupt as e:
        raise e if isinstance(e, ChapterInterrupted) else ChapterInterrupted(stop_running()) from None
    finally:
        _stopping.clear()
    return [results[i] for i in range(len(chapters))]


def cached_execution(
    chapter: str | os.PathLike, *, use_cache: bool = True, root: Path | None = None
) -> tuple[Any, str, Execution | None]:
    """Chapter ``chapter`` executed through the build's cache in ``root`` (default: the current
    directory), as the site build does: ``(notebook, status, execution)``, status ``hit``,
    ``merged`` or ``executed (<why>)``; execution is None unless it executed here."""
    from amp_docs_lib.core.chapters import chapter_id_for, parse_chapter
    from amp_docs_lib.docsite.cache import Environment, ExecutionCache
    from amp_docs_lib.docsite.inputs import InputHasher

    chapter = Path(chapter)
    root = Path.cwd() if root is None else Path(root)
    text = chapter.read_text(encoding="utf-8")
    source = parse_chapter(text, chapter)  # ValueError for anything but a chapter
    cid = chapter_id_for(chapter)
    roots = Roots(root, REPO_ROOT)
    cache, env = ExecutionCache(root / EXECUTED_DIR, roots), Environment.current()
    found = cache.lookup(cid, text, env, InputHasher(roots), lambda t: parse_chapter(t, chapter))
    if use_cache and found.status != "miss":
        return found.nb, found.status, None
    reason = found.reason if use_cache else "--no-cache"
    import copy

    nb, client = execute_notebook(copy.deepcopy(source), cid, cwd=root, roots=roots, reason=reason, source=chapter)
    ex = client.execution
    cache.put(cid, nb, text=text, source=source, inputs=ex.inputs, env=env, unknown=ex.unknown)
    return nb, f"executed ({reason})", ex


def execute_one(chapter: Path, *, use_cache: bool = True) -> int:
    """``amp-docs execute``: execute one chapter through the cache and print per-cell timings."""
    try:
        nb, status, ex = cached_execution(chapter, use_cache=use_cache)
    except ChapterExecutionError as e:
        print(e, file=sys.stderr)
        return 1
    if ex is None:
        print(f"{chapter}: {'cache hit' if status == 'hit' else 'cached outputs, new Markdown merged'}")
        return 0
    for idx, secs, what in ex.client.cell_seconds:  # numbered as the progress lines number them
        first = nb.cells[idx].source.strip().splitlines()[0][:70] if nb.cells[idx].source.strip() else ""
        print(f"  cell {ex.client.cell_number(idx):3d} {secs:7.2f}s {what:7s} {first}")
    print(
        f"{chapter}: {status} in {nb.metadata['amp_docs']['seconds']} s; "
        f"{len(ex.inputs)} inputs recorded" + (f" (unknown: {'; '.join(ex.unknown)})" if ex.unknown else "")
    )
    return 0
