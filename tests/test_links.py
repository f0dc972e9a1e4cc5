"""Internal links and anchors of the built site resolve (no browser needed)."""

from types import SimpleNamespace

import pytest

from amp_docs_lib.docsite.linkcheck import check_site, main
from amp_docs_lib.docsite.links import page_url_of, rewrite_md_links


def test_internal_links_and_anchors_of_the_site_resolve(site):
    broken = check_site(site)
    assert not broken, "\n".join(map(str, broken[:20]))


def test_linkcheck_finds_missing_pages_and_anchors(tmp_path, capsys):
    (tmp_path / "a").mkdir()
    (tmp_path / "index.html").write_text(
        '<h1 id="top">x</h1><a href="a/">ok</a><a href="a/#here">ok</a><a href="#top">ok</a>'
        '<a href="https://example.org/x">external</a><a href="b/">missing page</a>'
        '<a href="a/#nowhere">missing anchor</a><a href="x.md">raw md</a>'
    )
    (tmp_path / "a" / "index.html").write_text('<p id="here">a</p><a href="../index.html#top">back</a>')
    broken = check_site(tmp_path)
    assert sorted(b.href for b in broken) == ["a/#nowhere", "b/", "x.md"]
    assert main([str(tmp_path)]) == 1
    assert "3 broken link(s)" in capsys.readouterr().out


def test_linkcheck_rejects_a_folder_that_is_not_a_site(tmp_path):
    with pytest.raises(ValueError, match="not a built site"):
        check_site(tmp_path)
    assert main([str(tmp_path / "nope")]) == 2


def test_chapter_links_become_page_urls(tmp_path):
    (tmp_path / "chapters").mkdir()
    (tmp_path / "chapters" / "formats.md").write_text("# F")
    (tmp_path / "index.md").write_text("# H")
    page = SimpleNamespace(
        url="chapters/gradscaler/",
        file=SimpleNamespace(  # a chapter's page (plugin._page_file): the HTML its code printed
            amp_docs_notebook="/cache/gradscaler-1.ipynb",
            amp_docs_chapter="chapters/gradscaler.md",
            src_uri="chapters/gradscaler.md",
        ),
    )
    config = {"docs_dir": str(tmp_path), "use_directory_urls": True}
    html = (
        '<a href="formats.md#lost-updates">x</a> <a href="../index.md">home</a> '
        '<a href="missing.md">m</a> <a href="https://x.org/a.md">ext</a>'
    )
    assert rewrite_md_links(html, page, config) == (
        '<a href="../formats/#lost-updates">x</a> <a href="../../">home</a> '
        '<a href="missing.md">m</a> <a href="https://x.org/a.md">ext</a>'
    )
    page.file = SimpleNamespace(src_uri="rebuild.md")  # a page written by hand: mkdocs did it already
    assert rewrite_md_links(html, page, config) == html
    assert page_url_of("chapters/a.md") == "chapters/a/" and page_url_of("index.md") == ""
    assert page_url_of("chapters/a.md", use_directory_urls=False) == "chapters/a.html"
