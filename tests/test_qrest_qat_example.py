"""Issue 34 finding 13: the QAT program to copy has the chapter's control (PTQ of the FP32 model fine-tuned
as long) and the paired counts with the sign test's p, from the chapter's own function."""

import ast
import io
import re
import runpy
from contextlib import redirect_stdout

import torch

from amp_docs_lib.core.stats import sign_test_p
from conftest import REPO_ROOT

SCRIPT = REPO_ROOT / "examples" / "quantization" / "qat_digits.py"
PAIR = re.compile(r"^(.+) vs (.+): images only \1 gets right (\d+), only \2 (\d+), sign test p = (\S+)$", re.M)


def test_the_script_uses_the_chapters_paired_test():
    imports = {
        (n.module, a.name)
        for n in ast.walk(ast.parse(SCRIPT.read_text()))
        if isinstance(n, ast.ImportFrom)
        for a in n.names
    }
    assert ("amp_docs_lib.quantization.qat", "paired") in imports  # one source of truth, not a copy


def test_the_script_prints_the_fine_tuned_control_and_the_paired_split(tmp_path, monkeypatch):
    # Run in this process, as __main__: its imports (4 of its 5 s in a process of its own) are loaded
    # already. tests/test_examples.py runs it as a reader does, from its download in a fresh venv.
    monkeypatch.chdir(tmp_path)
    threads, printed = torch.get_num_threads(), io.StringIO()
    try:
        with torch.random.fork_rng(devices=[]), redirect_stdout(printed):  # it seeds and sets threads globally
            runpy.run_path(str(SCRIPT), run_name="__main__")
    finally:
        torch.set_num_threads(threads)
    out = printed.getvalue()
    acc = dict(re.findall(r"^(.+?) accuracy\s+(\d\.\d{3})$", out, re.M))
    assert set(acc) == {"FP32", "FP32 fine-tuned", "PTQ INT2", "PTQ INT2 of fine-tuned", "QAT INT2"}
    pairs = {(a, b): (int(wa), int(wb), float(p)) for a, b, wa, wb, p in PAIR.findall(out)}
    assert set(pairs) == {("QAT INT2", "PTQ INT2"), ("QAT INT2", "PTQ INT2 of fine-tuned")}
    n_test = int(re.search(r"test split: (\d+) images", out)[1])
    for (a, b), (a_only, b_only, p) in pairs.items():
        assert abs(p - sign_test_p(a_only, b_only)) <= 5e-3 * p  # 3 significant digits: the printed p is that split's
        # the split accounts for the accuracy difference, image for image
        assert round((float(acc[a]) - float(acc[b])) * n_test) in range(a_only - b_only - 1, a_only - b_only + 2)
