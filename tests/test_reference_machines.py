"""Key measurements published by chapters, reference machines, and the comparison page."""

import json
import re
import tarfile

import pandas as pd
import pytest

from amp_docs_lib.cli import main
from amp_docs_lib.core.chapters import read_chapter
from amp_docs_lib.core.gating import requirements_from_tags
from amp_docs_lib.page.publish import METADATA_KEY, measurements_from_notebook, publish
from amp_docs_lib.cli.reference import package
from amp_docs_lib.docsite.references import comparison_html, machine_name, measurements_from_site, reference_machines, skipped_measurements

from conftest import CHAPTERS

# The key measurements issue 13 requires, by the chapter that publishes them (outside gated cells,
# so that every machine measures them).
REQUIRED = {
    "performance": {"performance_matmul_throughput", "performance_amp_speedup"},
    "training_regimes": {"training_regimes_summary"},
    "fp8": {"fp8_scaling_error"},
    "quantization": {"quantization_accuracy_latency"},
}
PUBLISH_CALL = re.compile(r"""\bpublish\(\s*["']([^"']+)["']""")


def _notebook(chapter, *published):
    outputs = []
    for p in published:
        data, meta = p._repr_mimebundle_()
        outputs.append({"output_type": "display_data", "data": data, "metadata": meta})
    return {"metadata": {"amp_docs": {"chapter": chapter, "seconds": 1.5, "profile": "cpu-small"}},
            "cells": [{"cell_type": "code", "outputs": outputs, "source": "", "metadata": {}}]}


def _site(tmp_path, *nbs):
    d = tmp_path / "site" / "downloads" / "chapters"
    d.mkdir(parents=True)
    for nb in nbs:
        (d / f"{nb['metadata']['amp_docs']['chapter']}.ipynb").write_text(json.dumps(nb))
    return tmp_path / "site"


def test_publish_shows_the_stamped_table_and_carries_the_data():
    df = pd.DataFrame({"dtype": ["fp32", "bf16"], "GFLOP/s": [100.0, None]}, dtype=object)
    p = publish("perf_matmul", df, "Matmul throughput")
    data, meta = p._repr_mimebundle_()
    assert "amp-stamp--measured" in data["text/html"] and "Matmul throughput" in data["text/html"]
    m = meta[METADATA_KEY]
    assert m["name"] == "perf_matmul" and m["columns"] == ["dtype", "GFLOP/s"]
    assert m["data"] == [["fp32", 100.0], ["bf16", None]] and m["stamp"] == p.stamp
    with pytest.raises(ValueError, match="measurement name must match"):
        publish("Bad Name", df, "x")


def test_comparison_puts_this_build_beside_each_reference(tmp_path):
    df = pd.DataFrame({"dtype": ["fp32"], "GFLOP/s": [12.5]})
    site = _site(tmp_path, _notebook("perf", publish("perf_matmul", df, "Matmul throughput")))
    assert set(measurements_from_notebook(json.loads(
        (site / "downloads/chapters/perf.ipynb").read_text()))) == {"perf_matmul"}
    root = tmp_path / "refs"
    (root / "gpu-x").mkdir(parents=True)
    (root / "gpu-x" / "machine.json").write_text(json.dumps({"device": "GPU X", "chapters": {"perf": {"seconds": 0.5}},
                                                            "label": "clocks locked <1980 MHz>"}))
    (root / "gpu-x" / "measurements.json").write_text(json.dumps({
        "perf_matmul": {"name": "perf_matmul", "caption": "Matmul throughput", "stamp": "measured on GPU X",
                        "columns": ["dtype", "GFLOP/s"], "data": [["fp32", 50000.0]]},
        "fp8_only": {"name": "fp8_only", "caption": "FP8 error", "stamp": "measured on GPU X",
                     "columns": ["scaling", "error"], "data": [["tensorwise", 0.01]]}}))
    assert list(reference_machines(root)) == ["gpu-x"]
    html = comparison_html(site, root)
    assert html.index("This build") < html.index("Reference: gpu-x")
    assert "12.5" in html and "5e+04" in html and "measured on GPU X" in html
    fp8 = html[html.index('id="fp8_only"'):]
    assert "not measured on this machine" in fp8.split("Reference: gpu-x")[0]  # not here, reference shown
    assert 'id="chapter-execution-time"' in html and "gpu-x (s)" in html
    # the committed machines are named at the top, each with how it was run (escaped)
    assert "<li><code>gpu-x</code>: clocks locked &lt;1980 MHz&gt;</li>" in html[:html.index("<h2")]
    # with the machine's own stamp on file, it is said once, at the top, not under every table
    machine = json.loads((root / "gpu-x" / "machine.json").read_text())
    (root / "gpu-x" / "machine.json").write_text(json.dumps(dict(machine, stamp="GPU X")))
    html = comparison_html(site, root)
    assert html.count("measured on GPU X") == 1 and "measured on GPU X" in html[:html.index("<h2")]


@pytest.mark.slow
def test_package_writes_a_reference_machine_and_its_archive(tmp_path):
    df = pd.DataFrame({"x": [1]})
    site = _site(tmp_path, _notebook("perf", publish("perf_x", df, "X")))
    dest = package(site, tmp_path / "refs", name="test-machine", report_size=32, save_gated=False,
                   label="an AVX2-only build")
    machine = json.loads((dest / "machine.json").read_text())
    assert machine["label"] == "an AVX2-only build"
    assert machine["chapters"] == {"perf": {"executed_at": None, "seconds": 1.5, "profile": "cpu-small"}}
    assert "torch" in machine["stamp"] and machine["device"] in machine["stamp"]
    assert set(json.loads((dest / "measurements.json").read_text())) == {"perf_x"}
    assert set(json.loads((dest / "report.json").read_text())) >= {"formats", "matmul", "features"}
    with tarfile.open(tmp_path / "refs" / "test-machine.tar.gz") as t:
        assert "reference-results/test-machine/machine.json" in t.getnames()
    assert list(reference_machines(tmp_path / "refs")) == ["test-machine"]


def test_package_refuses_an_unbuilt_site_and_bad_names(tmp_path, capsys):
    with pytest.raises(ValueError, match="build the site first"):
        package(tmp_path, tmp_path / "refs", name="m")
    assert main(["package-reference", "--site", str(tmp_path), "--name", "m"]) == 2
    assert "build the site first" in capsys.readouterr().err
    site = _site(tmp_path, _notebook("perf"))
    with pytest.raises(ValueError, match="machine name must match"):
        package(site, tmp_path / "refs", name="Bad/Name")
    with pytest.raises(ValueError, match="label must be a non-empty sentence, got ' '"):
        package(site, tmp_path / "refs", name="m", label=" ")
    assert machine_name() and "/" not in machine_name()


def _ref(root, machine, **measurements):
    (root / machine).mkdir(parents=True)
    (root / machine / "machine.json").write_text(json.dumps({"device": machine, "chapters": {}}))
    (root / machine / "measurements.json").write_text(json.dumps({
        n: {"name": n, "caption": (rest or [n])[0], "stamp": f"measured on {machine}", "columns": cols, "data": data}
        for n, (cols, data, *rest) in measurements.items()}))


def test_comparison_with_two_references_different_rows_columns_and_a_gated_cell(tmp_path):
    """A GPU reference has rows (FP8) and a gated measurement this CPU build lacks, and vice versa."""
    mine = publish("perf_matmul", pd.DataFrame({"dtype": ["fp32", "bf16"], "TFLOP/s": [0.15, float("nan")]},
                                               dtype=object), "Matmul")
    nb = _notebook("perf", mine)
    nb["cells"].append({"cell_type": "code", "source": 'publish("perf_cuda_mem", df, "Peak CUDA memory")',
                        "metadata": {"tags": ["requires:cuda"], "amp_docs": {"skipped": ["cuda"]}},
                        "outputs": [{"output_type": "display_data", "metadata": {},
                                     "data": {"text/html": "skipped", "text/plain": "skipped: needs cuda"}}]})
    site = _site(tmp_path, nb)
    assert set(measurements_from_site(site)) == {"perf_matmul"}
    assert skipped_measurements(site) == {"perf_cuda_mem": ["cuda"]}
    assert measurements_from_site(site)["perf_matmul"]["data"][1] == ["bf16", "NaN"]  # NaN is not n/a
    root = tmp_path / "refs"
    _ref(root, "h100", perf_matmul=(["dtype", "TFLOP/s", "fraction of peak"],
                                    [["fp32", 51.0, 0.76], ["bf16", 700.0, None], ["fp8", 1300.0, 0.66]], "Matmul"),
         perf_cuda_mem=(["regime", "peak CUDA mem (MB)"], [["fp32", 120.5]]))
    _ref(root, "a100", perf_matmul=(["dtype", "TFLOP/s"], [["fp32", 19.0], ["bf16", 250.0]], "Matmul at n = 8192"),
         other_only=(["x"], [[1]]))
    html = comparison_html(site, root)

    def section(name):
        rest = html[html.index(f'id="{name}"'):]
        return rest[:rest.index("<h2", 5)]

    def block(sec, label):
        return sec[sec.index(f"<figcaption>{label}"):].split("<figcaption>")[1]

    m = section("perf_matmul")
    assert "NaN" in block(m, "This build") and "1300" in block(m, "Reference: h100") and "250" in block(m, "Reference: a100")
    assert "n/a" in block(m, "Reference: h100") and "NaN" not in block(m, "Reference: h100")  # null is n/a
    assert "Rows (by <code>dtype</code>) not on every machine: <code>fp8</code> (Reference: h100)." in m
    assert "Columns not on every machine: <code>fraction of peak</code> (Reference: h100)." in m
    assert "<figcaption>Reference: a100: Matmul at n = 8192</figcaption>" in m  # its own caption differs
    gated = section("perf_cuda_mem")
    assert "not measured on this machine: its cell needs a CUDA GPU" in block(gated, "This build")
    assert "120.5" in block(gated, "Reference: h100") and "measured on h100" in gated
    assert "not measured on this reference machine" in block(gated, "Reference: a100")
    assert "<table" not in block(gated, "Reference: a100")
    other = section("other_only")
    assert "no chapter of this build published it" in block(other, "This build")
    assert html.count("<h2") == 4  # three measurements and the timing table


def _published_in_source(path):
    """(name, gated) for each publish("name", ...) call in a chapter's code cells."""
    out = []
    for cell in read_chapter(path).cells:
        if cell.cell_type == "code":
            gated = bool(requirements_from_tags(cell.metadata.get("tags", [])))
            out += [(n, gated) for n in PUBLISH_CALL.findall(cell.source)]
    return out


def test_chapters_publish_the_required_key_measurements():
    by_chapter = {c.stem: _published_in_source(c) for c in CHAPTERS}
    for chapter, names in REQUIRED.items():
        ungated = {n for n, gated in by_chapter[chapter] if not gated}
        assert names <= ungated, f"{chapter} must publish {sorted(names - ungated)} outside gated cells"
    all_names = [n for pubs in by_chapter.values() for n, _ in pubs]
    assert len(all_names) == len(set(all_names)), f"measurement names must be unique: {sorted(all_names)}"
    for chapter, pubs in by_chapter.items():
        for n, _ in pubs:
            assert n.startswith(chapter + "_"), f"{chapter} publishes {n!r}, not prefixed {chapter + '_'!r}"
            publish(n, pd.DataFrame({"x": [1]}), "a valid name")  # raises ValueError otherwise


def test_built_site_carries_every_published_measurement(site):
    """The built site's notebooks carry each measurement their chapters publish outside gated cells."""
    nbs = {p.stem: json.loads(p.read_text(encoding="utf-8"))
           for p in sorted((site / "downloads" / "chapters").glob("*.ipynb"))}
    for c in CHAPTERS:  # the `site` fixture builds from the current chapters: nothing may be missing or stale
        built = [n for cell in nbs.get(c.stem, {}).get("cells", []) if cell["cell_type"] == "code"
                 for n in PUBLISH_CALL.findall("".join(cell["source"]))]
        assert sorted(built) == sorted(n for n, _ in _published_in_source(c)), f"{c.stem}: the site's notebook is stale"
    have = measurements_from_site(site)
    skipped = skipped_measurements(site)
    for c in CHAPTERS:
        for n, gated in _published_in_source(c):
            assert n in have or (gated and n in skipped), f"{c.stem}: {n} is not in the built notebook"
            if n in have:
                assert have[n]["chapter"] == c.stem and have[n]["stamp"] and have[n]["columns"]
    assert set().union(*REQUIRED.values()) <= set(have)


def test_side_by_side_puts_each_number_beside_the_references_with_a_ratio():
    """Reader finding 42: the tables were stacked, so comparing meant scrolling between them."""
    from amp_docs_lib.docsite.references import side_by_side

    mine = pd.DataFrame({"dtype": ["fp32", "bf16"], "TFLOP/s": [0.15, "NaN"]}, dtype=object)
    h100 = pd.DataFrame({"dtype": ["fp32", "bf16", "fp8"], "TFLOP/s": [51.0, 700.0, 1300.0],
                         "fraction of peak": [0.76, None, 0.66]}, dtype=object)
    df = side_by_side([("This build", mine), ("Reference: h100", h100)])
    rows = {(r["dtype"], r["quantity"]): r for r in df.to_dict("records")}
    assert rows[("fp32", "TFLOP/s")]["This build"] == 0.15 and rows[("fp32", "TFLOP/s")]["Reference: h100"] == 51.0
    assert abs(rows[("fp32", "TFLOP/s")]["this build ÷ h100"] - 0.15 / 51.0) < 1e-12
    assert rows[("bf16", "TFLOP/s")]["this build ÷ h100"] is None  # NaN here: no ratio
    assert rows[("fp8", "TFLOP/s")]["This build"] is None and rows[("fp8", "fraction of peak")]["Reference: h100"] == 0.66
    # tables whose rows cannot be matched (different keys) are shown one under the other instead
    other = pd.DataFrame({"regime": ["fp32"], "TFLOP/s": [1.0]}, dtype=object)
    assert side_by_side([("This build", mine), ("Reference: x", other)]) is None
    assert side_by_side([("This build", mine)]) is None
