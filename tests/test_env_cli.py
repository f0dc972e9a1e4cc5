import json
import subprocess
import sys

import pytest
import torch

from amp_docs_lib.core.env import environment_report, format_report, hardware_description, hardware_fingerprint
from amp_docs_lib.page.stamp import stamp_text
from amp_docs_lib.page.tables import show_table


def test_report_names_device_versions_and_profile():
    r = environment_report()
    assert r["torch"] == torch.__version__
    assert r["profile"] in ("cpu-small", "gpu-full")
    text = format_report(r)
    for needle in ("device", "torch", "TF32", "profile", "hardware fingerprint", "package: numpy"):
        assert needle in text


def test_fingerprint_is_stable_and_hardware_sensitive():
    d = hardware_description()
    assert hardware_fingerprint(d) == hardware_fingerprint()
    other = dict(d, gpus=[{"name": "NVIDIA H100", "compute_capability": "9.0", "memory_gib": 79.1}])
    assert hardware_fingerprint(other) != hardware_fingerprint(d)


def test_stamp_names_everything():
    s = stamp_text()
    for needle in ("torch", "amp_docs_lib", "TF32", "profile"):
        assert needle in s


@pytest.mark.slow
def test_amp_docs_env_command():
    out = subprocess.run(
        [sys.executable, "-m", "amp_docs_lib", "env", "--json"], capture_output=True, text=True, check=True
    ).stdout
    assert json.loads(out)["torch"] == torch.__version__


def test_show_table_rejects_non_frames():
    import pytest

    with pytest.raises(TypeError, match="DataFrame"):
        show_table([[1, 2]])


def test_cpu_capability_and_16_bit_matmul_support_are_reported_stamped_and_fingerprinted():
    from amp_docs_lib.core.env import cpu_capability, cpu_matmul_support
    from amp_docs_lib.core.machine import cpu_native_matmul, machine_light

    cap = str(torch.backends.cpu.get_cpu_capability())
    assert cpu_capability() == cap
    r = environment_report()
    assert r["cpu_capability"] == cap and r["cpu_matmul"] == cpu_matmul_support()
    assert "CPU capability" in format_report(r)
    if not torch.cuda.is_available():
        assert cap in stamp_text() and cpu_matmul_support() in stamp_text()
    d = hardware_description()
    assert d["cpu_capability"] == cap and hardware_fingerprint(
        dict(d, cpu_capability="AVX2-other")
    ) != hardware_fingerprint(d)
    assert machine_light()["cpu_native_matmul"] == cpu_native_matmul()


def test_native_matmul_flags_are_read_from_cpu_flags():
    from amp_docs_lib.core.machine import cpu_native_matmul

    assert cpu_native_matmul(frozenset({"avx2", "fma"})) == {"bf16": "none", "fp16": "none"}
    assert cpu_native_matmul(frozenset({"avx512_bf16", "amx_bf16", "amx_fp16"})) == {
        "bf16": "amx_bf16",
        "fp16": "amx_fp16",
    }


def test_a_onednn_isa_cap_below_bf16_reports_emulated_matmul():
    from amp_docs_lib.core.machine import cpu_native_matmul

    flags = frozenset({"avx512_bf16", "avx512_fp16"})
    assert cpu_native_matmul(flags, max_isa="") == {"bf16": "avx512_bf16", "fp16": "avx512_fp16"}
    capped = cpu_native_matmul(flags, max_isa="AVX2")
    assert capped == {"bf16": "none (ONEDNN_MAX_CPU_ISA=AVX2)", "fp16": "none (ONEDNN_MAX_CPU_ISA=AVX2)"}
    assert cpu_native_matmul(flags, max_isa="AVX512_CORE_BF16")["bf16"] == "avx512_bf16"


@pytest.mark.parametrize(
    "argv, message",
    [
        (["bench-build", "--rounds", "-1"], "-1 is not in the range x>=0"),
        (["execute", "no-such-chapter.md"], "does not exist"),
        (["bench", "--suite", "nope"], "unknown suite 'nope'; valid suites:"),
        (["no-such-command"], "No such command 'no-such-command'"),
    ],
)
def test_cli_bad_options_are_usage_errors(argv, message, capsys):
    from amp_docs_lib.cli import main

    assert main(argv) == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize("command", ["build", "execute", "bench-build", "env", "report", "bench", "package-reference"])
def test_every_command_has_help(command, capsys):
    from amp_docs_lib.cli import main

    assert main([command, "--help"]) == 0
    assert f"Usage: amp-docs {command}" in capsys.readouterr().out
