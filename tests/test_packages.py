"""One list of the packages that matter (core/packages.py), and every key that must follow it."""

import importlib.metadata
import re

import pytest

from amp_docs_lib.core import gating, packages
from amp_docs_lib.core.packages import KNOWN_MODULES, OPTIONAL_PACKAGES, PACKAGES, installed_versions
from amp_docs_lib.docsite.env_memo import light_key
from amp_docs_lib.docsite.up_to_date import input_manifest
from conftest import CHAPTERS, REPO_ROOT

_PKG_TAG = re.compile(r"requires:pkg:([A-Za-z0-9_]+)")


def tagged_packages() -> set[str]:
    return {name for c in CHAPTERS for name in _PKG_TAG.findall(c.read_text(encoding="utf-8"))}


def test_every_package_a_chapter_gates_on_is_listed():
    missing = tagged_packages() - set(KNOWN_MODULES)
    assert not missing, f"requires:pkg: names missing from core/packages.py PACKAGES: {sorted(missing)}"
    assert {"jax", "tensorflow", "mslk"} <= tagged_packages()  # the ones the review found unlisted


def test_gating_refuses_an_unlisted_package_naming_the_valid_ones():
    with pytest.raises(ValueError, match=r"unknown package 'nosuchpkg'.*one of: torch"):
        gating.requirement_met("pkg:nosuchpkg")
    assert "pkg:jax" in gating.valid_requirements()


def test_list_is_consistent():
    assert len(set(KNOWN_MODULES)) == len(KNOWN_MODULES)
    assert all(p.role in packages.ROLES for p in PACKAGES)
    assert set(OPTIONAL_PACKAGES) >= {"transformers", "onnxruntime", "transformer_engine", "jax", "tensorflow", "mslk"}


def _pretend_installed(monkeypatch, distribution: str, version: str):
    real = importlib.metadata.version

    def version_of(name):
        return version if name == distribution else real(name)

    monkeypatch.setattr(packages.importlib.metadata, "version", version_of)


@pytest.mark.parametrize("module", sorted(OPTIONAL_PACKAGES))
def test_installing_a_gated_package_changes_every_key(module, monkeypatch):
    """Installing (or upgrading) any package a chapter gates on changes the versions in the chapter
    cache key, the environment memo's key and the up-to-date manifest: no stale skip note."""
    dist = next(p.distribution for p in PACKAGES if p.module == module)
    before = (installed_versions(), light_key(), input_manifest(REPO_ROOT, []))
    _pretend_installed(monkeypatch, dist, "999.0")
    after = (installed_versions(), light_key(), input_manifest(REPO_ROOT, []))
    assert after[0][dist] == "999.0" and before[0][dist] != "999.0"
    assert after[1] != before[1] and after[2] != before[2]


@pytest.mark.parametrize("module", sorted(OPTIONAL_PACKAGES))
def test_hiding_a_gated_package_changes_every_key(module, monkeypatch):
    dist = next(p.distribution for p in PACKAGES if p.module == module)
    _pretend_installed(monkeypatch, dist, "1.0")
    monkeypatch.delenv(packages.HIDE_ENV_VAR, raising=False)
    before = (installed_versions(), light_key(), input_manifest(REPO_ROOT, []))
    monkeypatch.setenv(packages.HIDE_ENV_VAR, module)
    after = (installed_versions(), light_key(), input_manifest(REPO_ROOT, []))
    assert after[0][dist] == "absent (hidden)"
    assert after[1] != before[1] and after[2] != before[2]
    assert not gating.requirement_met(f"pkg:{module}")


def test_chapter_key_follows_the_package_versions(monkeypatch):
    from amp_docs_lib.core import env
    from amp_docs_lib.docsite.cache import Environment

    report = {"packages": env.package_versions(), "hardware_fingerprint": "h", "profile": "p"}
    before = Environment.current(report).key()
    _pretend_installed(monkeypatch, "jax", "999.0")
    report = dict(report, packages=env.package_versions())
    assert Environment.current(report).key() != before
