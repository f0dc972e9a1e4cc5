"""Readers run what they download and copy (CPU, ``cpu-small``), outside the repository.

* Each chapter's downloaded notebook runs top to bottom with nbclient in a reader venv holding
  only the library's wheel and what the download bar says to install (its ``notebook`` extra):
  gated cells print their skip note (each cell gated on a package the venv lacks names it: this is
  also the chapter's run without those optional packages), notebooks that run example programs find
  them in the wheel. A timing chapter whose busy load-check branch no build walked runs it here
  (``AMP_DOCS_LOAD_CHECK=busy``, checked in its notes), instead of once more in ``test_timing_branches``.
* A code cell copied with the cells above it runs as a plain script with the same installs,
  IPython hidden, and prints something.

The notebooks come from the built site (``AMP_DOCS_TEST_SITE`` or ``site/``) or, failing that,
from the execution cache (executing the chapter on a miss). They run side by side, one per core (``side_by_side``).
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import textwrap
from concurrent.futures import Future
from pathlib import Path

import pytest

from amp_docs_lib.core.chapters import parse_chapter
from amp_docs_lib.core.gating import PACKAGE_PREFIX, requirements_from_tags, unmet_requirements
from amp_docs_lib.docsite.downloads import downloadable_notebook, notebook_install_line
from amp_docs_lib.docsite.execute import EXPECTED_ERROR_TAG
from amp_docs_lib.docsite.wheel import notebook_requirements, wheel_filename
from amp_docs_lib.page.notebook import GATE_MAGIC

from conftest import (
    CHAPTERS,
    REPO_ROOT,
    build_seconds,
    built_notebook,
    notebook_hidden,
    optional_packages_used,
    reader_env,
    selected_params,
    side_by_side,
    usable_built_site,
)
from test_timing_branches import reader_load_check, runs_needed, walked_outcomes

from amp_docs_lib.core.settings import LOAD_CHECK_ENV_VAR

pytestmark = [pytest.mark.slow, pytest.mark.site]

NOTEBOOK_TIMEOUT_S = 1800
RUN_NOTEBOOK = textwrap.dedent("""\
    import sys
    import nbformat
    from nbclient import NotebookClient
    nb = nbformat.read(sys.argv[1], as_version=4)
    NotebookClient(nb, timeout=900, kernel_name="python3", resources={"metadata": {"path": "."}}).execute()
    nbformat.write(nb, "executed.ipynb")  # for the skip notes' checks
    skipped = sum("skipped: needs" in o.get("text", "") for c in nb.cells for o in c.get("outputs", []))
    print(f"ran {len(nb.cells)} cells; {skipped} gated cells skipped")
    """)


def downloaded_notebook(chapter: Path) -> str:
    """The chapter's notebook as its download bar offers it."""
    built = built_notebook(chapter)
    if built.is_file():
        return built.read_text(encoding="utf-8")
    import tempfile

    import nbformat

    from amp_docs_lib.docsite.execute import cached_execution
    from amp_docs_lib.docsite.presented import presented_notebook

    nb, _, _ = cached_execution(chapter, root=REPO_ROOT)
    with tempfile.TemporaryDirectory() as tmp:
        executed = Path(tmp) / f"{chapter.stem}.ipynb"
        nbformat.write(nb, executed)
        return downloadable_notebook(presented_notebook(executed, Path(tmp) / "presented").read_text(encoding="utf-8"))


def package_skip_problems(nb: dict, hidden: tuple[str, ...]) -> tuple[int, list[str]]:
    """In an executed downloaded notebook: how many cells are gated on a package in ``hidden``, and
    each such cell whose output is not the gate's skip line naming every hidden package it needs."""
    gated, problems = 0, []
    for i, cell in enumerate(nb["cells"]):
        source = "".join(cell.get("source", ""))
        if cell.get("cell_type") != "code" or not source.startswith(f"%%{GATE_MAGIC} "):
            continue
        needs = source.split("\n", 1)[0].split()[1:]
        missing = [r for r in needs if r.startswith(PACKAGE_PREFIX) and r[len(PACKAGE_PREFIX) :] in hidden]
        if not missing:
            continue
        gated += 1
        said = "".join("".join(o.get("text", "")) for o in cell.get("outputs", []))
        line = next((ln for ln in said.splitlines() if ln.startswith("skipped: needs ")), "")
        if not all(m in line.split("(", 1)[0] for m in missing):
            problems.append(f"cell {i} needs {', '.join(missing)} (hidden) but printed: {said[:300]!r}")
    return gated, problems


@pytest.fixture(scope="module")
def reader_runs(request, reader_python, tmp_path_factory) -> dict[tuple[str, str], Future]:
    """Every selected chapter's downloaded notebook, run in the reader venv, then every selected copied
    cell run as a script (``copied_cell_run``), side by side (``side_by_side``): ``("notebook"|"copied", stem)``."""
    jupyter_data = tmp_path_factory.mktemp("jupyter")
    env = dict(reader_env(notebook_hidden()), JUPYTER_DATA_DIR=str(jupyter_data))
    env.pop(LOAD_CHECK_ENV_VAR, None)
    needed = runs_needed(usable_built_site())
    notebooks = selected_params(
        request, "test_downloaded_notebook_runs_top_to_bottom_outside_the_repository", "chapter"
    )
    copied = selected_params(request, "test_a_copied_cell_runs_as_a_script_without_ipython_and_prints", "chapter")
    if notebooks:
        # The "python3" kernel is the reader venv's (the user data folder comes first in Jupyter's search).
        subprocess.run(
            [str(reader_python), "-m", "ipykernel", "install", "--user", "--name", "python3"],
            env=env,
            check=True,
            capture_output=True,
        )

    def run(chapter: Path) -> tuple[subprocess.CompletedProcess, Path]:
        folder = tmp_path_factory.mktemp(f"reader-{chapter.stem}")
        (folder / f"{chapter.stem}.ipynb").write_text(downloaded_notebook(chapter), encoding="utf-8")
        (folder / "run_notebook.py").write_text(RUN_NOTEBOOK)
        forced = reader_load_check(chapter.stem, needed)  # the timing branch no build walked, walked here
        return (
            subprocess.run(
                [str(reader_python), "run_notebook.py", f"{chapter.stem}.ipynb"],
                cwd=folder,
                env=env if forced is None else dict(env, **{LOAD_CHECK_ENV_VAR: forced}),
                capture_output=True,
                text=True,
                timeout=NOTEBOOK_TIMEOUT_S,
            ),
            folder,
            forced,
        )

    pool = side_by_side(request)
    # The longest first (as long as the build took), so that no long notebook runs alone at the end.
    runs = {("notebook", c.stem): pool.submit(run, c) for c in sorted(notebooks, key=build_seconds, reverse=True)}
    for c in CHAPTERS:  # queued behind the notebooks: they keep both workers busy while the last notebooks run
        if c in copied and copied_cells(c) is not None:
            runs["copied", c.stem] = pool.submit(copied_cell_run, c, reader_python, tmp_path_factory.mktemp(c.stem))
    return runs


@pytest.mark.parametrize("chapter", CHAPTERS, ids=[c.stem for c in CHAPTERS])
def test_downloaded_notebook_runs_top_to_bottom_outside_the_repository(chapter, reader_runs):
    r, folder, forced = reader_runs["notebook", chapter.stem].result()
    assert r.returncode == 0, (
        f"downloaded {chapter.stem}.ipynb failed in a venv holding only "
        f"{notebook_install_line()} (hidden: {', '.join(notebook_hidden())}):\n"
        f"{r.stdout[-2000:]}\n{r.stderr[-6000:]}"
    )
    # every cell gated on hardware this machine lacks printed its skip note and the notebook went on
    unmet_hardware = sum(
        any(not u.startswith("pkg:") for u in unmet_requirements(c.metadata.get("tags", [])))
        for c in parse_chapter(chapter.read_text(encoding="utf-8"), chapter).cells
    )
    skipped = int(re.search(r"ran \d+ cells; (\d+) gated cells skipped", r.stdout).group(1))
    assert skipped >= unmet_hardware, r.stdout
    # Every optional package but those the notebook extra brings is hidden here, so this run is also the
    # chapter's run without them (test_hidden_packages runs the build path only for the rest): each cell
    # gated on a hidden package printed the gate's skip line naming it, and none failed (above).
    if forced is not None:  # this run stands for test_timing_branches' run of that branch: it was taken
        assert walked_outcomes(folder / "executed.ipynb") == {forced}, f"{chapter.stem}: not every load check {forced}"
        assert f"{LOAD_CHECK_ENV_VAR}={forced} set this check" in (folder / "executed.ipynb").read_text()
    executed = json.loads((folder / "executed.ipynb").read_text(encoding="utf-8"))
    gated, problems = package_skip_problems(executed, notebook_hidden())
    assert not problems, "\n".join(problems)
    if optional_packages_used(chapter) & set(notebook_hidden()):
        assert gated, f"{chapter.stem} uses a hidden optional package but no cell is gated on it"


def test_the_download_bar_install_line_names_an_extra_the_wheel_declares(site_wheel):
    """The bar's ``pip install "<wheel>[notebook]"``: the wheel declares that extra, with the requirements
    the notebook test above ran with (pip's own resolution is left to pip: it needs an index)."""
    import zipfile

    from packaging.requirements import Requirement

    wheel = site_wheel  # the wheel the reader venv holds
    assert wheel.name == wheel_filename() and f'"{wheel.name}[notebook]"' in notebook_install_line()
    with zipfile.ZipFile(wheel) as z:
        meta = z.read(next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))).decode()
    assert "Provides-Extra: notebook" in meta
    declared = {
        Requirement(line.split(":", 1)[1]).name
        for line in meta.splitlines()
        if line.startswith("Requires-Dist:") and 'extra == "notebook"' in line
    }
    assert declared == set(notebook_requirements()) and {"ipykernel", "nbclient", "torchao"} <= declared


# --- copied cells -------------------------------------------------------------------------------

PAGE_CALL = re.compile(
    r"\b(show_table|show_cards|show_figure|claim|on_this_machine|check_statements|publish|"
    r"show_source|show_diff|show_pattern|run_snippet|display)\s*\("
)


def copied_cells(chapter: Path) -> tuple[list[str], str] | None:
    """The cells above a chapter's first displaying cell (a page call) and that cell; None when a
    gated or deliberately failing cell comes first."""
    cells = [c for c in parse_chapter(chapter.read_text(encoding="utf-8"), chapter).cells if c.cell_type == "code"]
    for i, cell in enumerate(cells[1:], start=1):
        tags = cell.metadata.get("tags", [])
        if requirements_from_tags(tags) or EXPECTED_ERROR_TAG in tags:
            return None
        if PAGE_CALL.search(cell.source):
            return [c.source for c in cells[:i]], cell.source
    return None


def _no_ipython(folder: Path) -> Path:
    """A folder that, first on ``PYTHONPATH``, makes ``import IPython`` fail as where it is absent."""
    (folder / "IPython.py").write_text("raise ModuleNotFoundError(\"No module named 'IPython'\", name='IPython')\n")
    return folder


MARK = "<<< the copied cell >>>"


def copied_cell_run(chapter: Path, reader_python: Path, folder: Path) -> subprocess.CompletedProcess:
    """The chapter's ``copied_cells`` as one script in ``folder``, run by the reader venv with only the
    bar's install line and IPython hidden."""
    above, cell = copied_cells(chapter)
    (folder / "copied.py").write_text("\n\n".join(above) + f"\n\nprint({MARK!r})\n" + cell + "\n")
    env = reader_env(notebook_hidden())
    (folder / "no_ipython").mkdir()
    env["PYTHONPATH"] = os.pathsep.join(
        [str(_no_ipython(folder / "no_ipython")), *filter(None, [env.get("PYTHONPATH")])]
    )
    return subprocess.run(
        [str(reader_python), "copied.py"], cwd=folder, env=env, capture_output=True, text=True, timeout=600
    )


@pytest.mark.parametrize("chapter", CHAPTERS, ids=[c.stem for c in CHAPTERS])
def test_a_copied_cell_runs_as_a_script_without_ipython_and_prints(chapter, reader_runs):
    """Only the wheel and the bar's install line, with IPython hidden: a script has no display."""
    found = copied_cells(chapter)
    assert found is not None, f"{chapter.stem}: no displaying cell before its first gated cell"
    above, cell = found
    ast.parse(cell)
    r = reader_runs["copied", chapter.stem].result()
    assert r.returncode == 0, f"{chapter.stem}: copied cells failed as a script:\n{cell}\n{r.stderr[-4000:]}"
    printed = r.stdout.split(MARK, 1)[-1].strip()
    assert MARK in r.stdout and printed, f"{chapter.stem}: the copied cell printed nothing:\n{cell}"
