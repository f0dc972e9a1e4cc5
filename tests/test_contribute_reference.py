"""Contributing a reference machine: ``amp-docs package-reference`` on a build whose gated cells ran,
and reference results that belong to the project being built, not to the installed library."""

import json
import tarfile

import nbformat
import pytest

from amp_docs_lib.cli import main
from amp_docs_lib.cli.reference import package
from amp_docs_lib.docsite.execute import ChapterClient, cell_id

GATED_SOURCE = "import torch\nx = torch.ones(2, device='cuda')\nprint('ran on the GPU', x.sum().item())"


def _built_site(tmp_path):
    """A built site whose one notebook has a gated cell that ran, saved as Jupyter saves it
    (JSON, each cell's source a list of lines)."""
    nb = nbformat.v4.new_notebook(metadata={"amp_docs": {"chapter": "fmt", "seconds": 1.0, "profile": "gpu-full"}})
    nb.cells = [
        nbformat.v4.new_code_cell("print('setup')", outputs=[nbformat.v4.new_output("stream", text="setup\n")]),
        nbformat.v4.new_code_cell(
            GATED_SOURCE,
            metadata={"tags": ["requires:cuda"]},
            outputs=[nbformat.v4.new_output("stream", text="ran on the GPU 2.0\n")],
        ),
        nbformat.v4.new_code_cell(
            "print('skipped')", metadata={"tags": ["requires:sm90"], "amp_docs": {"skipped": ["sm90"]}}
        ),
    ]
    d = tmp_path / "site" / "downloads" / "chapters"
    d.mkdir(parents=True)
    (d / "fmt.ipynb").write_text(nbformat.writes(nb))
    assert isinstance(json.loads((d / "fmt.ipynb").read_text())["cells"][1]["source"], list)
    return tmp_path / "site"


@pytest.mark.slow  # package() runs the precision report
def test_package_reference_saves_the_gated_outputs_of_a_build_under_its_root(tmp_path):
    site, root = _built_site(tmp_path), tmp_path / "refs"
    dest = package(site, root, name="gpu-m", report_size=32, save_gated=True)
    saved = root / "fmt" / f"{cell_id(nbformat.v4.new_code_cell(GATED_SOURCE))}.json"
    assert saved.is_file(), sorted(str(p.relative_to(root)) for p in root.rglob("*"))
    data = json.loads(saved.read_text())
    assert data["requires"] == ["cuda"] and "ran on the GPU 2.0" in data["html"]
    assert sorted(p.name for p in (root / "fmt").iterdir()) == [saved.name]  # the skipped cell is not saved
    assert (dest / "machine.json").is_file()
    with tarfile.open(root / "gpu-m.tar.gz") as t:
        assert f"reference-results/fmt/{saved.name}" in t.getnames()


def test_a_failed_package_leaves_no_machine_folder(tmp_path, monkeypatch):
    site, root = _built_site(tmp_path), tmp_path / "refs"
    import amp_docs_lib.docsite.execute as execute

    def broken(*a, **kw):
        raise OSError("disk full")

    monkeypatch.setattr(execute, "save_reference", broken)
    with pytest.raises(OSError, match="disk full"):
        package(site, root, name="gpu-m", report_size=32, save_gated=True)
    assert not (root / "gpu-m").exists()


def test_reference_results_belong_to_the_project_being_built(tmp_path, capsys):
    client = ChapterClient(nbformat.v4.new_notebook(), "fmt", resources={"metadata": {"path": str(tmp_path)}})
    assert client.reference_root == tmp_path / "docs" / "reference-results"
    assert main(["package-reference", "--help"]) == 0
    help_text = " ".join(capsys.readouterr().out.split())
    assert "[default: docs/reference-results]" in help_text
