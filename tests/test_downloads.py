"""Chapter downloads (executed notebook, source, examples) and copy buttons."""

import json
import re
import zipfile
from pathlib import Path

import pytest

from amp_docs_lib.docsite.downloads import DOWNLOADS_DIR, WHEEL_URI, companion_files, examples_used, wrap_bare_code

from conftest import CHAPTERS, FRONT_MATTER


def _examples(tmp_path, *names):
    for n in names:
        (tmp_path / n).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / n).write_text("print(1)\n")
    return tmp_path


def test_examples_are_found_in_calls_mentions_and_front_matter(tmp_path):
    ex = _examples(tmp_path, "a.py", "sub/b.py", "c.py", "d.py", "unused.py")
    src = FRONT_MATTER.replace("jupyter:\n", "jupyter:\n  amp_docs_examples: [d.py]\n") + (
        "# T\n\nSee `examples/c.py` and examples/nothere.py.\n\n"
        "```python\nshow_source(\"a.py\")\nrun_snippet('sub/b.py', ['--x'])\nshow_source(obj)\n```\n")
    assert examples_used(src, ex) == ["a.py", "c.py", "d.py", "sub/b.py"]


def test_a_front_matter_example_that_does_not_exist_is_an_error(tmp_path):
    ex = _examples(tmp_path, "a.py")
    src = FRONT_MATTER.replace("jupyter:\n", "jupyter:\n  amp_docs_examples: [zz.py]\n") + "# T\n"
    with pytest.raises(ValueError, match=r"zz\.py.*valid: \['a\.py'\]"):
        examples_used(src, ex)
    with pytest.raises(TypeError):
        examples_used(None, ex)


def test_an_example_brings_the_data_files_its_source_names():
    assert companion_files("exercises/precision_from_config.py") == ["exercises/precision.toml"]
    assert companion_files("amp_patterns/amp_loop.py") == []


def test_bare_highlighted_code_gets_a_code_element_for_the_copy_button():
    md_block = '<div class="highlight"><pre><span></span><code>z</code></pre></div>'  # a Markdown page's
    html = ('<div class="highlight-ipynb hl-python"><pre><span></span>x = 1\n</pre></div>'
            '<div class="highlight"><pre><code>y</code></pre></div><pre>output</pre>' + md_block)
    assert wrap_bare_code(html) == (
        '<div class="highlight-ipynb hl-python"><pre><code><span></span>x = 1\n</code></pre></div>'
        '<div class="highlight"><pre><code>y</code></pre></div><pre>output</pre>' + md_block)


@pytest.mark.parametrize("chapter", [c.stem for c in CHAPTERS])
def test_every_chapter_offers_its_notebook_source_and_examples(site, chapter):
    html = (site / "chapters" / chapter / "index.html").read_text(encoding="utf-8")
    bar = re.search(r'<div class="amp-downloads" data-chapter="%s">(.*?)</div>' % chapter, html, re.S)
    assert bar, "no download bar on the chapter page"
    hrefs = re.findall(r'href="([^"]+)" download', bar.group(1))
    base = site / "chapters" / chapter
    files = {h: (base / h).resolve() for h in hrefs}
    assert all(p.is_file() for p in files.values()), files
    nb = json.loads(files[f"../../{DOWNLOADS_DIR}/chapters/{chapter}.ipynb"].read_text())
    assert nb["metadata"]["amp_docs"]["chapter"] == chapter, "the bar links another chapter's notebook"
    assert any(c.get("outputs") for c in nb["cells"] if c["cell_type"] == "code"), "notebook not executed"
    src = CHAPTERS[[c.stem for c in CHAPTERS].index(chapter)]
    assert files[f"../../{DOWNLOADS_DIR}/chapters/{chapter}.md"].read_text() == src.read_text()
    used = examples_used(src.read_text())
    # A split chapter's pages each link the example programs their own cells use: together, all of them.
    linked = sorted(h.split(f"{DOWNLOADS_DIR}/examples/", 1)[1] for h in hrefs if "/examples/" in h)
    for part in sorted(base.glob("*/index.html")):
        part_bar = re.search(r'<div class="amp-downloads amp-downloads--part" data-chapter="%s">(.*?)</div>' % chapter,
                             part.read_text(encoding="utf-8"), re.S)
        assert part_bar, f"no download bar on {part.parent.name}"
        for h in re.findall(r'href="([^"]+)" download', part_bar.group(1)):
            assert (part.parent / h).resolve().is_file(), h
            if "/examples/" in h:
                linked.append(h.split(f"{DOWNLOADS_DIR}/examples/", 1)[1])
    assert sorted(set(linked)) == sorted(set(used) | {f for e in used for f in companion_files(e)})
    wheels = [h for h in hrefs if h.endswith(".whl")]
    # every bar: the one install step the notebook and the examples need
    assert wheels == [f"../../{WHEEL_URI}"], hrefs
    assert f"{Path(WHEEL_URI).name}[notebook]" in bar.group(1)
    with zipfile.ZipFile(files[wheels[0]]) as z:
        names = z.namelist()
    assert "amp_docs_lib/__init__.py" in names and "amp_docs_lib/data/references.bib" in names
    assert {f"amp_docs_lib/examples/{e}" for e in used} <= set(names)


def test_figures_are_files_with_one_lightbox_link_each(site):
    for c in CHAPTERS:
        html = (site / "chapters" / c.stem / "index.html").read_text(encoding="utf-8")
        assert 'src="data:image' not in html and 'href="data:' not in html, c.stem
        assert html.count("amp-lightbox") * 2 == html.count('class="amp-fig amp-fig--'), c.stem


def test_downloaded_notebooks_and_pages_name_no_path_of_the_builder(site):
    """No absolute path of the machine that built the site, in any page, notebook, source or table."""
    from amp_docs_lib.docsite.builder_paths import builder_paths

    paths = [p.rstrip("/") for p, _ in builder_paths() if len(p.rstrip("/")) > 1]
    found = []
    for f in site.rglob("*"):
        if f.suffix in (".html", ".ipynb", ".md", ".py", ".csv", ".json", ".txt"):
            text = f.read_text(encoding="utf-8", errors="replace")
            found += [(str(f.relative_to(site)), p) for p in paths if p in text]
    assert not found, f"builder paths in the site: {found[:10]}"


def test_no_page_or_notebook_shows_native_log_lines(site):
    """Native code (the profiler's backend) writes to fd 2 past Python; none of it reaches a reader."""
    marks = ("USDT:", "profiler_start", "gpuGetDeviceCount failed")
    outputs = [*site.glob("chapters/*/index.html"), *site.glob(f"{DOWNLOADS_DIR}/chapters/*.ipynb")]
    assert len(outputs) == 2 * len(CHAPTERS)
    found = [(str(f.relative_to(site)), m) for f in outputs  # (the API reference quotes them, on purpose)
             for m in marks if m in f.read_text(encoding="utf-8", errors="replace")]
    assert not found, found


def test_an_old_setuptools_is_named_before_pip_runs(monkeypatch, tmp_path):
    # setuptools 65 has no built-in bdist_wheel: pip would fail with "invalid command 'bdist_wheel'".
    import importlib.metadata as md

    from amp_docs_lib.docsite import wheel

    real = md.version
    monkeypatch.setattr(md, "version", lambda name: "65.5.0" if name == "setuptools" else real(name))
    assert wheel.missing_build_requirements() == ["setuptools>=70.1 (installed: 65.5.0)"]
    with pytest.raises(RuntimeError, match=r"needs setuptools>=70\.1 \(installed: 65\.5\.0\).*pip install 'setuptools>=70\.1'"):
        wheel.build_wheel(tmp_path / "dist")
    assert not (tmp_path / "dist").exists()
    monkeypatch.setattr(md, "version", real)
    assert wheel.missing_build_requirements() == []
