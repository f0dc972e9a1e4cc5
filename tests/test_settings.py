"""The AMP_DOCS_* variables (core/settings.py): each bad value is a clear error before any work."""

import pytest

from amp_docs_lib.cli import main
from amp_docs_lib.core import settings
from amp_docs_lib.core.packages import HIDE_ENV_VAR, OPTIONAL_PACKAGES, hidden_packages
from amp_docs_lib.core.profiles import PROFILE_ENV_VAR, active_profile

VARIABLES = (
    PROFILE_ENV_VAR,
    settings.JOBS_ENV_VAR,
    HIDE_ENV_VAR,
    settings.PROGRESS_ENV_VAR,
    settings.SAVE_REFERENCE_ENV_VAR,
)

# (variable, bad value, text of the valid values the message must name)
BAD = [
    (PROFILE_ENV_VAR, "bogus", "cpu-small, gpu-full"),
    (settings.JOBS_ENV_VAR, "-1", "integer >= 0"),
    (settings.JOBS_ENV_VAR, "abc", "integer >= 0"),
    (settings.JOBS_ENV_VAR, "1.5", "integer >= 0"),
    (HIDE_ENV_VAR, "onnxruntme", ", ".join(OPTIONAL_PACKAGES)),  # a typo: would hide nothing, miss every key
    (HIDE_ENV_VAR, "Optional", ", ".join(OPTIONAL_PACKAGES)),
    (HIDE_ENV_VAR, "torch", ", ".join(OPTIONAL_PACKAGES)),  # listed, but every chapter needs it
    (settings.PROGRESS_ENV_VAR, "bogus", "cells, chapters, off"),
    (settings.SAVE_REFERENCE_ENV_VAR, "yes", "1 (save"),
    (settings.SAVE_REFERENCE_ENV_VAR, "true", "1 (save"),
]


@pytest.fixture
def clean_env(monkeypatch):
    for var in VARIABLES:
        monkeypatch.delenv(var, raising=False)
    return monkeypatch


@pytest.mark.parametrize("var, value, valid", BAD, ids=[f"{v}={x}" for v, x, _ in BAD])
def test_bad_variable_is_a_usage_error_naming_it_before_any_command(var, value, valid, clean_env, capsys):
    clean_env.setenv(var, value)
    ran = []
    clean_env.setattr("amp_docs_lib.core.env.format_report", lambda *a: ran.append(a) or "report")
    assert main(["env"]) == 2
    err = capsys.readouterr().err
    assert f"Error: {var}={value!r}" in err and valid in err
    assert "Traceback" not in err and not ran


@pytest.mark.parametrize("var, value, valid", BAD[:1] + BAD[4:5], ids=["profile", "hide"])
def test_build_of_an_up_to_date_site_checks_the_variables_first(var, value, valid, clean_env, capsys):
    clean_env.setenv(var, value)
    built = []
    clean_env.setattr("amp_docs_lib.docsite.up_to_date.build", lambda *a, **k: built.append(a) or 0)
    assert main(["build", "--strict"]) == 2
    assert not built and f"{var}={value!r}" in capsys.readouterr().err


def test_execute_does_not_blame_the_chapter_for_a_variable(clean_env, tmp_path):
    """The command alone, without the CLI's up-front check: the executor's own reading of a bad
    variable is reported as the variable, not as "Invalid value for CHAPTER"."""
    import click

    from amp_docs_lib.cli.site import execute
    from conftest import make_chapter

    chapter = tmp_path / "c.md"
    chapter.write_text(make_chapter("C", ("", "print(1)")))
    clean_env.chdir(tmp_path)  # the execution cache goes here
    clean_env.setenv(PROFILE_ENV_VAR, "huge")
    with pytest.raises(click.UsageError) as info:
        execute.main([str(chapter), "--no-cache"], standalone_mode=False)
    message = info.value.format_message()
    assert "AMP_DOCS_PROFILE='huge' is not a profile" in message and "CHAPTER" not in message


def test_plugin_checks_the_variables_first(clean_env):
    from mkdocs.exceptions import PluginError

    from amp_docs_lib.docsite.plugin import AmpDocsPlugin

    clean_env.setenv(settings.JOBS_ENV_VAR, "many")
    with pytest.raises(PluginError, match=r"AMP_DOCS_JOBS='many'.*integer >= 0"):
        AmpDocsPlugin().on_config(None)  # the check comes before the config is read


def test_every_bad_variable_is_named_at_once(clean_env):
    env = {PROFILE_ENV_VAR: "huge", settings.PROGRESS_ENV_VAR: "loud"}
    with pytest.raises(settings.SettingError) as info:
        settings.check_environment(env)
    assert "AMP_DOCS_PROFILE='huge'" in str(info.value) and "AMP_DOCS_PROGRESS='loud'" in str(info.value)


def test_valid_values_are_read(clean_env):
    assert settings.check_environment({}) is None
    env = {
        PROFILE_ENV_VAR: " CPU-Small ",
        settings.JOBS_ENV_VAR: "0",
        HIDE_ENV_VAR: "optional,jax",
        settings.PROGRESS_ENV_VAR: "Chapters",
        settings.SAVE_REFERENCE_ENV_VAR: "1",
    }
    settings.check_environment(env, warn=pytest.fail)
    assert settings.jobs_override(env) == 0 and settings.jobs_override({settings.JOBS_ENV_VAR: " "}) is None
    assert settings.progress_override(env) == "chapters"
    assert settings.save_reference_requested(env) and not settings.save_reference_requested(
        {settings.SAVE_REFERENCE_ENV_VAR: "0"}
    )
    assert settings.build_hidden_packages(env) == tuple(sorted(OPTIONAL_PACKAGES))
    clean_env.setenv(PROFILE_ENV_VAR, "CPU-SMALL")  # any case
    assert active_profile().name == "cpu-small"


def test_hidden_packages_outside_a_build_may_name_any_listed_package():
    # The example tests hide core packages to mimic a reader's venv; unlisted names are refused everywhere.
    assert hidden_packages({HIDE_ENV_VAR: "torchao"}) == ("torchao",)
    with pytest.raises(ValueError, match=r"'onnxruntme' is not a package it can hide; valid: 'optional'"):
        hidden_packages({HIDE_ENV_VAR: "onnxruntme"})


def test_gpu_profile_without_cuda_warns_what_it_will_do(clean_env, capsys):
    warnings = []
    settings.check_environment({PROFILE_ENV_VAR: "gpu-full"}, warn=warnings.append, cuda_available=lambda: False)
    assert len(warnings) == 1 and "GPU sizes on the CPU" in warnings[0] and "cpu-small" in warnings[0]
    settings.check_environment({PROFILE_ENV_VAR: "gpu-full"}, warn=pytest.fail, cuda_available=lambda: True)
    settings.check_environment({PROFILE_ENV_VAR: "cpu-small"}, warn=pytest.fail, cuda_available=lambda: False)
    clean_env.setenv(PROFILE_ENV_VAR, "gpu-full")
    clean_env.setattr(settings, "cuda_gpu_listed", lambda: False)
    clean_env.setattr("amp_docs_lib.core.env.format_report", lambda *a: "report")
    assert main(["env"]) == 0
    assert "amp-docs: warning: AMP_DOCS_PROFILE=gpu-full on a machine without a CUDA GPU" in capsys.readouterr().err


def test_plain_mkdocs_build_stops_on_a_bad_variable_and_keeps_the_built_site(mini_site, monkeypatch):
    from conftest import mkdocs_build

    built = mini_site / "site" / "index.html"  # a reader's earlier build
    built.parent.mkdir()
    built.write_text("<p>built</p>")
    monkeypatch.setenv(PROFILE_ENV_VAR, "bogus")
    r = mkdocs_build(mini_site, check=False, timeout=300)
    assert r.returncode == 1
    assert "AMP_DOCS_PROFILE='bogus' is not a profile; valid: cpu-small, gpu-full" in r.stderr
    assert "Traceback" not in r.stderr
    assert built.read_text() == "<p>built</p>"  # the plugin refused before mkdocs cleaned the site folder


def test_a_commands_help_answers_whatever_the_variables(clean_env, capsys):
    clean_env.setenv(PROFILE_ENV_VAR, "bogus")
    assert main(["report", "--help"]) == 0
    assert "Usage: amp-docs report" in capsys.readouterr().out
