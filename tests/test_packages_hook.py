"""core names the start-up hook and the read recorder once (core/packages.py); the names must match
what docsite ships, or a chapter's kernel would start without hiding packages or recording reads."""

from amp_docs_lib.core import packages
from amp_docs_lib.docsite import read_recorder


def test_core_names_the_hook_and_the_recorder_where_docsite_has_them():
    assert (packages.SITE_DIR / "sitecustomize.py").is_file()
    assert packages.READ_RECORDER_FILE.resolve() == __import__("pathlib").Path(read_recorder.__file__).resolve()
    assert packages.READ_RECORDER_MODULE == read_recorder.MODULE_NAME


def test_a_kernel_started_with_the_hook_registers_the_recorder_under_cores_name(tmp_path):
    import subprocess
    import sys

    env = packages.subprocess_env(
        {"PATH": "", "AMP_DOCS_HIDE_PACKAGES": "transformers", "AMP_DOCS_READS_DIR": str(tmp_path)}
    )
    code = (
        "import sys; from amp_docs_lib.core.packages import READ_RECORDER_MODULE as m; "
        "print(m in sys.modules); sys.modules[m].finish()"
    )
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True", out.stderr
