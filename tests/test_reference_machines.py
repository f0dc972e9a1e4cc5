"""Key measurements published by chapters, reference machines, and the comparison page."""

import json
import tarfile

import pandas as pd
import pytest

from amp_docs_lib.cli import main
from amp_docs_lib.reference_machines import (METADATA_KEY, comparison_html, machine_name,
                                             measurements_from_notebook, package, publish,
                                             reference_machines)


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
    (root / "gpu-x" / "machine.json").write_text(json.dumps({"device": "GPU X", "chapters": {"perf": {"seconds": 0.5}}}))
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
    assert "not measured here" in fp8.split("Reference: gpu-x")[0]  # skipped here, reference shown
    assert 'id="chapter-execution-time"' in html and "gpu-x (s)" in html


def test_package_writes_a_reference_machine_and_its_archive(tmp_path):
    df = pd.DataFrame({"x": [1]})
    site = _site(tmp_path, _notebook("perf", publish("perf_x", df, "X")))
    dest = package(site, tmp_path / "refs", name="test-machine", report_size=32, save_gated=False)
    machine = json.loads((dest / "machine.json").read_text())
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
    with pytest.raises(SystemExit):
        main(["package-reference", "--site", str(tmp_path), "--name", "m"])
    assert "build the site first" in capsys.readouterr().err
    site = _site(tmp_path, _notebook("perf"))
    with pytest.raises(ValueError, match="machine name must match"):
        package(site, tmp_path / "refs", name="Bad/Name")
    assert machine_name() and "/" not in machine_name()
