"""The ``amp-docs`` mkdocs plugin: executes chapters through the environment-aware cache.

In ``on_files`` it swaps each chapter (``docs/chapters/*.md``, jupytext Markdown) for the Markdown page of
its executed notebook (``notebook_page``: the cache's notebook as presented, Markdown cells as Markdown,
code cells and outputs as HTML blocks), which mkdocs then builds as any Markdown page; a chapter with
sub-page markers is sliced into a chapter page and sub-pages (``subpages``), which ``on_nav`` makes a
section of the nav. ``on_page_content`` and ``on_post_page`` run the page passes (``pages``) and, last,
remove the links to assets a page does not use (``page_assets``).

A build never costs the reader the site: ``on_config`` points mkdocs at a staging folder
beside the site directory, the last ``on_post_build`` swaps the complete new site into place,
and a failed (``on_build_error``) or interrupted build (at exit) removes the staging folder;
one left by a killed build is removed by the next build. ``mkdocs serve`` and ``--dirty``
builds write in place, as mkdocs does.
"""

from __future__ import annotations

import atexit
import fnmatch
import json
import logging
import shutil
import sys
import time
from pathlib import Path

from mkdocs.config import base
from mkdocs.config import config_options as c
from mkdocs.exceptions import PluginError
from mkdocs.plugins import BasePlugin, CombinedEvent, event_priority

from amp_docs_lib.core.chapters import chapter_id_for, parse_chapter
from amp_docs_lib.core.paths import (
    BUILD_LOG,
    CACHE_DIR,
    EXECUTED_DIR,
    FRAGMENTS_DIR,
    LIBRARY_ROOT,
    PRESENTED_DIR,
    REPO_ROOT,
)
from amp_docs_lib.core.settings import SettingError, check_environment
from amp_docs_lib.docsite.cache import Environment, ExecutionCache
from amp_docs_lib.docsite.env_memo import environment_report_memo
from amp_docs_lib.docsite.fragments import FragmentMemo
from amp_docs_lib.docsite.hashing import tree_hash
from amp_docs_lib.docsite.inputs import InputHasher, Roots
from amp_docs_lib.docsite.store import (
    INTERRUPTED,
    SiteDirError,
    check_site_dir,
    clean_stale_staging,
    staging_dir,
    swap_into_place,
    write_atomic,
)

log = logging.getLogger("mkdocs.plugins.amp_docs")
EVICT_AFTER_S = 3600  # unused entries survive an hour, so concurrent builds never lose theirs
# Cache folders of features gone, removed from a checkout that still has them: mkdocs-jupyter's rendered
# HTML (chapters are Markdown pages now, docsite/notebook_page.py; nothing rendered is cached).
OBSOLETE_CACHE_FOLDERS = (CACHE_DIR / "rendered",)
ENV_MARKER = "<!-- amp-docs:environment -->"
CHAPTERS_MARKER = "<!-- amp-docs:chapters -->"
PALETTE_CSS = "assets/css/palette.css"  # generated from amp_docs_lib.core.palette
API_SEARCH_PREFIX = "api/"  # the generated API reference (docsite/api_pages.API_DIR)
API_SEARCH_BOOST = 0.001  # Material's search boost: an API title match (x1000) weighs as a chapter text match


class AmpDocsConfig(base.Config):
    chapters = c.Type(str, default="chapters/*.md")
    # Chapters executed at once (one kernel each); 0 = one per core, one on CUDA. $AMP_DOCS_JOBS overrides.
    jobs = c.Type(int, default=0)
    # Generate the API reference (docsite/api_pages.py): one page per package, added to the nav.
    api_reference = c.Type(bool, default=False)


def _strict_warnings_counted() -> bool:
    """Whether ``mkdocs build --strict`` has counted a warning: it then fails right after ``on_post_build``."""
    from mkdocs.utils import CountHandler

    return any(isinstance(h, CountHandler) and h.get_counts() for h in logging.getLogger("mkdocs").handlers)


def evict_presented(folder: Path, used: set[Path], min_age_s: float) -> list[Path]:
    """Delete the presented notebooks (``presented/<entry name>``, one per executed cache entry) of the
    entries this build did not use, once untouched for ``min_age_s`` seconds (as the execution cache
    evicts its own: a concurrent build's stay); return what was removed."""
    keep = {p.stem for p in used}  # an entry's notebook and its parts (``<entry>.part<k>.ipynb``, subpages)
    cutoff = time.time() - min_age_s
    removed = []
    for p in folder.glob("*") if folder.is_dir() else ():
        try:
            stale = p.name.split(".", 1)[0] not in keep and p.stat().st_mtime <= cutoff
        except OSError:
            continue
        if stale:
            p.unlink(missing_ok=True)
            removed.append(p)
    return removed


class AmpDocsPlugin(BasePlugin[AmpDocsConfig]):
    staged = True  # build into a staging folder and swap it in (False under ``mkdocs serve`` and --dirty)
    site: Path | None = None  # the reader's site directory
    staging: Path | None = None  # where this build writes until it succeeds

    def on_startup(self, *, command, dirty):
        # serve builds into its own temporary folder and reloads from it; --dirty keeps what is there.
        self.staged = command != "serve" and not dirty

    def on_config(self, config):
        try:
            check_environment()  # every AMP_DOCS_* variable, before any work (core/settings.py)
        except SettingError as e:
            raise PluginError(f"amp-docs: {e}") from None
        root = Path(config.config_file_path).resolve().parent
        self.roots = Roots(root, REPO_ROOT)  # reads under these are a chapter's inputs
        self.cache = ExecutionCache(root / EXECUTED_DIR, self.roots)
        self.memo_dir = root / CACHE_DIR
        self.root = root
        self.build_log_path = root / BUILD_LOG
        if config.theme.name == "material":  # previous/next name a split chapter's part and its chapter
            config.theme.dirs.insert(0, str(Path(__file__).with_name("material_overrides")))
        if self.config.api_reference:
            from amp_docs_lib.docsite import api_pages

            nav = config.nav or []
            if not any(isinstance(e, dict) and api_pages.NAV_TITLE in e for e in nav):
                nav.append(api_pages.nav_entry())
            config.nav = nav
        if self.staged:
            try:
                self.site = check_site_dir(config.site_dir)
            except SiteDirError as e:
                raise PluginError(f"amp-docs: {e}") from None
            for p in clean_stale_staging(self.site):
                log.info("amp-docs: removed %s, left by a build that was killed", p)
            self.staging = staging_dir(self.site)
            shutil.rmtree(self.staging, ignore_errors=True)
            atexit.register(self._discard_staging)  # an interrupted build (KeyboardInterrupt, SystemExit)
            config.site_dir = str(self.staging)  # mkdocs cleans and fills this; the reader's site is untouched
        return config

    def _discard_staging(self) -> None:
        if self.staging is not None:
            shutil.rmtree(self.staging, ignore_errors=True)
            self.staging = None

    def on_build_error(self, *, error):
        self._discard_staging()  # the previous site stays as it was

    @event_priority(-50)  # after other plugins' on_files: the chapters' pages are generated files
    def on_files(self, files, config):
        # Per build, not per chapter, and never kept from one build to the next (``mkdocs serve``
        # rebuilds after an edit). With nothing changed, neither the memoised environment report
        # nor the cache hits import torch or the executor.
        self.environment = environment_report_memo(self.memo_dir)
        env = Environment.current(self.environment)
        self.fragments = FragmentMemo(self.root / FRAGMENTS_DIR, tree_hash(LIBRARY_ROOT))
        self.used: set[Path] = set()
        self.chapters: dict[str, dict] = {}
        record = {"started": time.time(), "executed": {}, "reasons": {}, "merged": [], "cached": []}
        chapters = self._look_up_chapters(files, env)
        executed = self._execute_misses(chapters, env, record)
        self._present_chapters(files, config, chapters, executed, record)
        self._add_generated_files(files, config)
        record["finished"] = time.time()
        write_atomic(self.build_log_path, json.dumps(record, indent=1))
        return files

    def _look_up_chapters(self, files, env) -> list[tuple]:
        """(file, chapter id, text, cache lookup) of every chapter among ``files``."""
        hasher = InputHasher(self.roots)
        chapters = []
        for f in list(files):
            if not f.src_uri.endswith(".md") or not fnmatch.fnmatch(f.src_uri, self.config.chapters):
                continue
            cid = chapter_id_for(Path(f.abs_src_path))
            text = Path(f.abs_src_path).read_text(encoding="utf-8")
            parse = lambda t, path=f.abs_src_path: parse_chapter(t, path)  # noqa: E731
            try:
                found = self.cache.lookup(cid, text, env, hasher, parse)
            except ValueError as e:
                raise PluginError(f"amp-docs: {e}") from None
            chapters.append((f, cid, text, found))
        return chapters

    def _execute_misses(self, chapters, env, record: dict) -> dict[str, tuple]:
        """Execute the chapters the cache missed, in parallel, each cached as soon as it finishes;
        {chapter id: (cache path, notebook)}. A failure fails the build; an interrupt exits."""
        misses = [(f, cid, text, found.reason) for f, cid, text, found in chapters if found.status == "miss"]
        executed: dict[str, tuple] = {}
        if not misses:
            return executed
        import copy

        from amp_docs_lib.docsite.execute import ChapterInterrupted, execute_chapters, resolve_jobs

        try:
            jobs = resolve_jobs(self.config.jobs)
        except ValueError as e:
            raise PluginError(f"amp-docs: {e}") from None
        log.info(
            "amp-docs: executing %d chapter(s), up to %d at once: %s",
            len(misses),
            jobs,
            "; ".join(f"{cid} ({why})" for _, cid, _, why in misses),
        )
        sources = [parse_chapter(text, f.abs_src_path) for f, _, text, _ in misses]

        def cache_result(i: int, execution, err) -> None:  # as each chapter finishes: a killed build keeps it
            if err is None:
                f, cid, text, _ = misses[i]
                path = self.cache.put(
                    cid,
                    execution.nb,
                    text=text,
                    source=sources[i],
                    inputs=execution.inputs,
                    env=env,
                    unknown=execution.unknown,
                )
                executed[cid] = (path, execution.nb)

        try:
            outcomes = execute_chapters(
                [(cid, copy.deepcopy(src)) for (_, cid, _, _), src in zip(misses, sources, strict=True)],
                jobs,
                on_done=cache_result,
                cwd=self.root,
                roots=self.roots,
                reasons={cid: why for _, cid, _, why in misses},
                sources={cid: Path(f.abs_src_path) for f, cid, _, _ in misses},
            )
        except ChapterInterrupted as e:  # one line, no traceback; kernels stopped, the site untouched
            self._discard_staging()
            print(f"amp-docs: {e}", file=sys.stderr, flush=True)
            raise SystemExit(INTERRUPTED) from None
        failures = []
        for (f, cid, _, why), (execution, err) in zip(misses, outcomes, strict=True):  # in file order
            if err is not None:
                failures.append(f"amp-docs: chapter {f.src_uri} failed to execute ({why}).\n{err}")
                continue
            record["executed"][cid] = execution.nb.metadata["amp_docs"]["seconds"]
            record["reasons"][cid] = why
            log.info("amp-docs: %s: executed in %.1f s (%s)", cid, record["executed"][cid], why)
        if failures:
            raise PluginError("\n\n".join(failures))
        return executed

    def _present_chapters(self, files, config, chapters, executed: dict, record: dict) -> None:
        """Replace each chapter's Markdown file by the Markdown page of its executed notebook as a reader gets
        it (``notebook_page``), and record what every chapter read (the up-to-date check)."""
        from amp_docs_lib.docsite.notebook_page import markdown_renderer
        from amp_docs_lib.docsite.presented import presented_notebook

        # text/markdown outputs: the site's own Markdown dialect (mkdocs.yml's markdown_extensions)
        self.render_markdown = markdown_renderer(config["markdown_extensions"], config["mdx_configs"])
        self.split_chapters: dict[str, object] = {}  # chapter src_uri: subpages.SplitChapter
        inputs: dict[str, str] = {}
        for f, cid, _text, found in chapters:
            if found.status == "miss":
                path, nb = executed[cid]
                status = "executed in this build"
            else:
                path, nb = found.path, found.nb
                record["cached" if found.status == "hit" else "merged"].append(cid)
                status = "from cache" if found.status == "hit" else "from cache, Markdown merged"
                log.info(
                    "amp-docs: %s: %s",
                    cid,
                    "cached result"
                    if found.status == "hit"
                    else "cached outputs, new Markdown merged (code cells unchanged)",
                )
            for label, h in self.cache.inputs_of(cid, path).items():
                inputs[label] = h if inputs.get(label, h) == h else "conflict"
            self.used.add(path)
            self.chapters[cid] = dict(nb.metadata["amp_docs"], status=status)
            # What readers get (page and download): deliberate errors as one line, no builder paths.
            presented = presented_notebook(path, self.root / PRESENTED_DIR)
            files.remove(f)
            self._chapter_pages(f, presented, files, config)
        record["inputs"] = dict(sorted(inputs.items()))
        from amp_docs_lib.docsite.subpages import AnchorMap

        self.anchors = AnchorMap(list(self.split_chapters.values()))

    def _page_file(self, config, src_uri: str, page_path: str, nb: dict, chapter, presented: Path, pages: int):
        """The Markdown page mkdocs builds from notebook ``nb`` (a chapter, or one part of one), known as
        ``src_uri`` (where its relative links start) and built as ``page_path`` (its URL)."""
        from mkdocs.structure.files import File, InclusionLevel

        from amp_docs_lib.docsite.notebook_page import notebook_markdown

        page_file = File.generated(config, src_uri, content=notebook_markdown(nb, self.render_markdown))
        if page_path != src_uri:  # a later part of a split chapter: on_nav adds it to the chapter's section
            built_as = File(page_path, None, config["site_dir"], config["use_directory_urls"])
            page_file.dest_uri, page_file.url = built_as.dest_uri, built_as.url
            page_file.inclusion = InclusionLevel.NOT_IN_NAV
        page_file.edit_uri = chapter.edit_uri  # "edit this page": the chapter's source
        page_file.amp_docs_chapter = chapter.src_uri  # downloads and links: the chapter's own
        page_file.amp_docs_notebook = presented  # the whole chapter's notebook: the download
        page_file.amp_docs_cells = nb["cells"]  # this page's cells (the examples its bar names)
        page_file.amp_docs_pages = pages
        return page_file

    def _chapter_pages(self, chapter, presented: Path, files, config) -> None:
        """The pages of a chapter: one, or with sub-page markers its page renders part 0 and each later part
        is a page of its own (``docsite/subpages.py``); every part offers the whole chapter's notebook."""
        from amp_docs_lib.docsite import subpages

        nb = json.loads(presented.read_text(encoding="utf-8"))
        try:
            parts = subpages.split_notebook(nb, chapter.src_uri)
        except subpages.SubpageError as e:
            raise PluginError(f"amp-docs: {e}") from None
        urls = []
        for part in parts:
            src_uri = subpages.part_src_uri(chapter.src_uri, part)
            page_path = subpages.part_page_path(chapter.src_uri, part)
            part_nb = dict(nb, cells=part.cells)
            page_file = self._page_file(config, src_uri, page_path, part_nb, chapter, presented, len(parts))
            files.append(page_file)
            urls.append(page_file.url)
        if len(parts) == 1:
            return
        title = subpages.chapter_title(parts[0]) or chapter.src_uri
        self.split_chapters[chapter.src_uri] = subpages.SplitChapter(
            chapter.src_uri, title, presented, parts, urls, [set() for _ in parts]
        )

    def on_nav(self, nav, config, files):
        """A split chapter is a section of its pages, in reading order (prev/next walk its parts)."""
        from amp_docs_lib.docsite.subpages import nav_section, set_reading_order

        self.nav = nav  # on_env names the split chapters' first pages in it
        if not getattr(self, "split_chapters", None):
            return nav
        for i, item in enumerate(nav.items):
            chapter = self.split_chapters.get(getattr(getattr(item, "file", None), "src_uri", None))
            if chapter is not None and item.is_page:
                nav.items[i] = nav_section(chapter, item, files)
        set_reading_order(nav)
        return nav

    def on_env(self, env, config, files):
        """Split chapters' first pages take their part names in the nav (their H1 set their titles); links to
        anchors that moved to another part are checked there."""
        if getattr(self, "split_chapters", None):
            from amp_docs_lib.docsite.subpages import name_first_parts

            name_first_parts(self.nav)
            self.anchors.follow_moved_anchors(files)  # what mkdocs' anchor validation checks, as the pages link
        return env

    def _add_generated_files(self, files, config) -> None:
        """The API reference pages, the palette's CSS variables and the library's wheel."""
        from mkdocs.structure.files import File

        if self.config.api_reference:
            from amp_docs_lib.docsite import api_pages

            for uri, text in api_pages.pages().items():
                files.append(File.generated(config, uri, content=text))
        # The book's palette as CSS variables, for the page CSS and the format explorer.
        from amp_docs_lib.core.palette import css_variables

        files.append(File.generated(config, PALETTE_CSS, content=css_variables()))
        # The library's wheel: the one install step every downloaded example needs.
        from amp_docs_lib.docsite.downloads import WHEEL_URI
        from amp_docs_lib.docsite.wheel import library_wheel

        try:
            wheel = library_wheel(self.root)
        except RuntimeError as e:
            raise PluginError(f"amp-docs: {e}") from None
        files.append(File.generated(config, WHEEL_URI, abs_src_path=str(wheel)))

    def on_page_markdown(self, markdown, page, config, files):
        """Fill the home page's markers with this build's environment and chapter status."""
        if page.file.src_uri.startswith(API_SEARCH_PREFIX):
            # A search for a format or API name should lead to the chapter that explains it first.
            page.meta.setdefault("search", {}).setdefault("boost", API_SEARCH_BOOST)
        if ENV_MARKER in markdown:

            def render() -> str:
                from amp_docs_lib.page.tables import environment_table  # pandas: only when the report changed

                return environment_table(self.environment)._repr_html_()

            markdown = markdown.replace(ENV_MARKER, self.fragments.html("environment", self.environment, render))
        if CHAPTERS_MARKER in markdown:
            markdown = markdown.replace(CHAPTERS_MARKER, self._chapter_status_html())
        return markdown

    def _chapter_status_html(self) -> str:
        rows = "".join(
            f"<tr><td>{cid}</td><td>{m['status']}</td><td>{m.get('executed_at', '?')}</td>"
            f"<td>{m.get('seconds', '?')}</td><td>{m.get('profile', '?')}</td></tr>"
            for cid, m in sorted(self.chapters.items())
        )
        return (
            '<div class="amp-table-scroll"><table class="amp-table"><thead><tr><th>chapter</th><th>result</th>'
            "<th>executed at (UTC)</th><th>execution seconds</th><th>profile</th></tr></thead>"
            f"<tbody>{rows}</tbody></table></div>"
        )

    def on_page_content(self, html, page, config, files):
        """Before the search index reads the page (on_page_context)."""
        from amp_docs_lib.docsite.fragments import TIMING_ANCHOR
        from amp_docs_lib.docsite.generated_pages import COMPARISON_MARKER
        from amp_docs_lib.docsite.pages import search_friendly

        if COMPARISON_MARKER in page.markdown and page.present_anchor_ids is not None:
            # The section is generated after mkdocs checks links to anchors (on_post_build): announce it.
            page.present_anchor_ids.add(TIMING_ANCHOR)
        if getattr(page.file, "amp_docs_notebook", None) is not None:  # a chapter's page (notebook_page)
            from amp_docs_lib.docsite.notebook_page import in_notebook

            html = in_notebook(html)
        html = search_friendly(html)
        if (part := self.anchors.page_of(page.url)) is not None:
            from amp_docs_lib.docsite.subpages import tab_title, with_following_pages

            html = with_following_pages(html, *part, page.url)
            page.title = page.title  # its H1, pinned: the nav names the part (mkdocs reads meta.title first)
            page.meta["title"] = tab_title(*part)  # the browser tab names the chapter (Material reads meta.title)
        self.anchors.record(page.url, html)  # every page is rendered before the first is written
        return html

    def _post_page(self, output, page, config):
        from amp_docs_lib.docsite.pages import post_page  # the page passes, in order

        return post_page(output, page, config, self.fragments, self.anchors)

    @event_priority(-100)  # after every plugin has added its assets (mkdocs-glightbox adds its own)
    def _page_assets(self, output, page, config):
        from amp_docs_lib.docsite.page_assets import without_unused_assets

        return without_unused_assets(output)

    on_post_page = CombinedEvent(_post_page, _page_assets)

    def _post_build(self, config):
        from amp_docs_lib.docsite.pages import post_build  # the "Yours vs reference" page

        post_build(config, self.fragments)
        removed = self.cache.evict_except(self.used, min_age_s=EVICT_AFTER_S)
        removed += evict_presented(self.root / PRESENTED_DIR, self.used, min_age_s=EVICT_AFTER_S)
        for p in removed:
            log.info("amp-docs: evicted stale cache entry %s", p.name)
        for folder in OBSOLETE_CACHE_FOLDERS:
            if (self.root / folder).is_dir():
                shutil.rmtree(self.root / folder, ignore_errors=True)
                log.info("amp-docs: removed %s (a cache this version no longer uses)", folder)

    @event_priority(-100)  # after every plugin has written its files
    def _publish_site(self, config):
        if self.staging is None or _strict_warnings_counted():
            return  # a --strict build with warnings fails next: on_build_error discards the staging folder
        swap_into_place(self.staging, self.site)
        log.info("amp-docs: the new site replaced %s", self.site)  # mkdocs named the staging folder above
        self.staging = None
        config.site_dir = str(self.site)

    on_post_build = CombinedEvent(_post_build, _publish_site)
