"""Throwaway builds copy the checkout without its virtual environments or build outputs."""

import venv

from amp_docs_lib.docsite.checkout import copy_checkout


def test_copy_skips_venvs_git_and_site(tmp_path):
    src = tmp_path / "repo"
    (src / "docs").mkdir(parents=True)
    (src / "docs" / "index.md").write_text("# Home\n")
    (src / ".git").mkdir()
    (src / "site").mkdir()
    venv.create(src / "my-env", with_pip=False)  # any name: found by its pyvenv.cfg
    copy_checkout(src, tmp_path / "copy", ".amp-docs-cache")
    assert sorted(p.name for p in (tmp_path / "copy").iterdir()) == ["docs"]
    assert (tmp_path / "copy" / "docs" / "index.md").read_text() == "# Home\n"
