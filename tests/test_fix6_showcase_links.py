"""The home page copies a chapter's "In this build" box: a label's link to a section of the chapter
(rewritten by the build to the part that holds it) must still reach it from the home page."""

from amp_docs_lib.docsite import generated_pages
from amp_docs_lib.page.summary import in_this_build


def test_a_box_link_to_a_section_of_the_chapter_reaches_it_from_the_home_page(tmp_path):
    box = in_this_build(
        {
            "overflow ([Where exp overflows](part-two/#where-exp-overflows))": 1,
            "same page ([Anatomy](#anatomy))": 2,
            "other chapter ([GradScaler](../gradscaler/))": 3,
            "outside ([docs](https://pytorch.org/docs/))": 4,
        }
    )._repr_html_()
    page = tmp_path / "chapters" / "formats" / "index.html"
    page.parent.mkdir(parents=True)
    page.write_text(f'<div class="md-content"><h1>Number formats</h1>{box}</div>', encoding="utf-8")
    home = generated_pages.showcase_html(tmp_path, chapters=("formats",))
    assert 'href="chapters/formats/part-two/#where-exp-overflows"' in home
    assert 'href="chapters/formats/#anatomy"' in home
    assert 'href="chapters/gradscaler/"' in home
    assert 'href="https://pytorch.org/docs/"' in home
