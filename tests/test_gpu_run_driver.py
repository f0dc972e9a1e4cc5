"""Issue 32: a reference result is stamped with the driver it ran on. ``nvidia-smi`` is faked here: the path
is the one a GPU machine takes (the H100 of 2026-11-25 reported driver 580.159.04)."""

import os
import stat
import types

import pytest
import torch

from amp_docs_lib.core import env, machine


def _fake_smi(tmp_path, monkeypatch, out: str, rc: int = 0):
    smi = tmp_path / "nvidia-smi"
    smi.write_text(f"#!/bin/sh\nprintf '{out}'\nexit {rc}\n")
    smi.chmod(smi.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")


def test_the_driver_is_read_from_nvidia_smi(tmp_path, monkeypatch):
    _fake_smi(tmp_path, monkeypatch, "580.159.04\\n")
    assert machine.nvidia_driver_version() == "580.159.04"
    _fake_smi(tmp_path, monkeypatch, "", rc=9)
    assert machine.nvidia_driver_version() is None


@pytest.fixture
def driver_read_afresh():
    """The driver is read once per process: this test's fake nvidia-smi must be the one read, and no other test's."""
    env._nvidia_driver.cache_clear()
    yield
    env._nvidia_driver.cache_clear()


def test_a_gpu_stamp_names_its_driver(tmp_path, monkeypatch, driver_read_afresh):
    _fake_smi(tmp_path, monkeypatch, "580.159.04\\n")
    props = types.SimpleNamespace(name="NVIDIA H100 80GB HBM3", major=9, minor=0, total_memory=85 * 2**30)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda i: props)
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda *a, **k: True)
    assert env.gpus()[0]["driver"] == "580.159.04"
    assert env.device_summary() == "NVIDIA H100 80GB HBM3 (sm 9.0, driver 580.159.04)"
