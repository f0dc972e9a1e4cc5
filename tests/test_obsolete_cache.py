"""A checkout built before chapters became Markdown pages keeps mkdocs-jupyter's rendered-HTML cache
(18 MB here); the next build removes it, since nothing reads it now."""

from amp_docs_lib.core.paths import CACHE_DIR
from conftest import mkdocs_build


def test_a_build_removes_the_rendered_html_cache_no_version_reads(built_mini_site):
    old = built_mini_site / CACHE_DIR / "rendered" / "0123" / "a.html"
    old.parent.mkdir(parents=True)
    old.write_text("<p>mkdocs-jupyter's page</p>")
    r = mkdocs_build(built_mini_site)
    assert not old.parent.parent.exists(), r.stderr[-2000:]
    assert (built_mini_site / CACHE_DIR / "executed").is_dir()  # the execution cache stays
