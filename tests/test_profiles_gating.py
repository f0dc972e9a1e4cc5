import pytest
import torch

from amp_docs_lib.core import gating, profiles


def test_profile_from_hardware_and_override(monkeypatch):
    monkeypatch.delenv(profiles.PROFILE_ENV_VAR, raising=False)
    expected = "gpu-full" if torch.cuda.is_available() else "cpu-small"
    assert profiles.active_profile().name == expected
    monkeypatch.setenv(profiles.PROFILE_ENV_VAR, "gpu-full")
    assert profiles.active_profile().name == "gpu-full"


def test_unknown_profile_names_valid_ones(monkeypatch):
    monkeypatch.setenv(profiles.PROFILE_ENV_VAR, "huge")
    with pytest.raises(ValueError, match=r"AMP_DOCS_PROFILE='huge' is not a profile; valid: cpu-small, gpu-full"):
        profiles.active_profile()
    with pytest.raises(ValueError, match=r"unknown profile 'huge'.*cpu-small.*gpu-full"):
        profiles.get_profile("huge")
    with pytest.raises(TypeError, match="must be a str"):
        profiles.get_profile(3)


def test_profile_sizes_lookup():
    p = profiles.get_profile("cpu-small")
    assert p["matmul_size"] < profiles.get_profile("gpu-full")["matmul_size"]
    with pytest.raises(KeyError, match="valid sizes"):
        p["no_such_size"]
    assert set(p.sizes) == set(profiles.get_profile("gpu-full").sizes), "profiles must define the same sizes"


def test_requirements(monkeypatch):
    assert gating.requirement_met("pkg:numpy")
    real = gating.importlib.util.find_spec
    monkeypatch.setattr(gating.importlib.util, "find_spec", lambda n, *a: None if n == "jax" else real(n, *a))
    assert not gating.requirement_met("pkg:jax")  # a listed package that is not installed
    with pytest.raises(ValueError, match=r"unknown package 'surely_not_a_module_xyz'"):
        gating.requirement_met("pkg:surely_not_a_module_xyz")  # not in core/packages.py: refused
    assert gating.requirement_met("cuda") == torch.cuda.is_available()
    with pytest.raises(ValueError, match=r"unknown requirement 'tpu'.*cuda"):
        gating.requirement_met("tpu")
    with pytest.raises(TypeError):
        gating.requirement_met(None)


def test_unmet_requirements_from_tags(monkeypatch):
    real = gating.importlib.util.find_spec
    monkeypatch.setattr(gating.importlib.util, "find_spec", lambda n, *a: None if n == "mslk" else real(n, *a))
    tags = ["hide-input", "requires:pkg:numpy", "requires:pkg:mslk"]
    assert gating.requirements_from_tags(tags) == ["pkg:numpy", "pkg:mslk"]
    assert gating.unmet_requirements(tags) == ["pkg:mslk"]
    note = gating.skip_note_html(["cuda"])
    assert "Skipped on this machine" in note and "CUDA GPU" in note
