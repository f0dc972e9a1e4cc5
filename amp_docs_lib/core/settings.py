"""The ``AMP_DOCS_*`` environment variables: each read by one function, all checked before any work.

| variable | valid values | unset or blank |
| --- | --- | --- |
| ``AMP_DOCS_PROFILE`` | a profile of ``core/profiles.py`` (any case) | chosen from the hardware |
| ``AMP_DOCS_JOBS`` | chapters executed at once, an integer >= 0 (0 = the default: one per core, one on a CUDA machine) | the plugin's ``jobs`` |
| ``AMP_DOCS_HIDE_PACKAGES`` | ``optional`` or optional packages of ``core/packages.py``, comma-separated | none hidden |
| ``AMP_DOCS_PROGRESS`` | ``cells``, ``chapters``, ``off`` (any case) | ``cells`` (``chapters`` under ``mkdocs -q``) |
| ``AMP_DOCS_SAVE_REFERENCE`` | ``1`` (save gated cells' outputs as reference results) or ``0`` | ``0`` |
| ``AMP_DOCS_LOAD_CHECK`` | ``measure``, or ``quiet``/``busy`` to set every load check's outcome (to walk a timing chapter's other branch; each note says it was set) | ``measure`` |

The profile and the hidden packages are read where their valid values live
(``profiles.profile_override``, ``packages.hidden_packages``: the latter is loaded by path at a
kernel's start-up, so it imports nothing of the library); the others are read here.
``check_environment`` reads every one, so that a bad value is a clear error before any work:
``amp-docs`` calls it before any command (a usage error, exit status 2) and the mkdocs plugin at
the start of ``on_config`` (a ``PluginError``), even when the site is up to date.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping

from amp_docs_lib.core import packages, profiles

PROFILE_ENV_VAR = profiles.PROFILE_ENV_VAR
HIDE_ENV_VAR = packages.HIDE_ENV_VAR
JOBS_ENV_VAR = "AMP_DOCS_JOBS"
PROGRESS_ENV_VAR = "AMP_DOCS_PROGRESS"
SAVE_REFERENCE_ENV_VAR = "AMP_DOCS_SAVE_REFERENCE"
PROGRESS_LEVELS = ("cells", "chapters", "off")
SAVE_REFERENCE_VALUES = ("1", "0")
LOAD_CHECK_ENV_VAR = "AMP_DOCS_LOAD_CHECK"
LOAD_CHECK_MODES = ("measure", "quiet", "busy")


class SettingError(ValueError):
    """A bad ``AMP_DOCS_*`` value; the message names the variable, the value and the valid values."""


def _raw(var: str, environ: Mapping[str, str] | None) -> str:
    return (os.environ if environ is None else environ).get(var, "").strip()


def jobs_override(environ: Mapping[str, str] | None = None) -> int | None:
    """``$AMP_DOCS_JOBS`` as an integer >= 0 (0 = the default: one per core, one on a CUDA machine), or None if unset or blank."""
    raw = _raw(JOBS_ENV_VAR, environ)
    if not raw:
        return None
    try:
        value = int(raw)
    except ValueError:
        value = -1
    if value < 0:
        raise SettingError(
            f"{JOBS_ENV_VAR}={raw!r} is not a number of chapters executed at once; valid: "
            f"an integer >= 0 (0 = the default: one per core, one on a CUDA machine), or unset"
        )
    return value


def progress_override(environ: Mapping[str, str] | None = None) -> str | None:
    """``$AMP_DOCS_PROGRESS`` (one of ``PROGRESS_LEVELS``, any case), or None if unset or blank."""
    raw = _raw(PROGRESS_ENV_VAR, environ)
    if not raw:
        return None
    if raw.lower() not in PROGRESS_LEVELS:
        raise SettingError(
            f"{PROGRESS_ENV_VAR}={raw!r} is not a progress level; valid: {', '.join(PROGRESS_LEVELS)}, or unset"
        )
    return raw.lower()


def load_check_override(environ: Mapping[str, str] | None = None) -> str | None:
    """``$AMP_DOCS_LOAD_CHECK`` when it sets the load checks' outcome (``quiet`` or ``busy``, any case);
    None when unset, blank or ``measure`` (the checks measure the machine)."""
    raw = _raw(LOAD_CHECK_ENV_VAR, environ)
    if raw.lower() not in ("", *LOAD_CHECK_MODES):
        raise SettingError(f"{LOAD_CHECK_ENV_VAR}={raw!r} is not valid; valid: {', '.join(LOAD_CHECK_MODES)}, or unset")
    return raw.lower() if raw.lower() in ("quiet", "busy") else None


def save_reference_requested(environ: Mapping[str, str] | None = None) -> bool:
    """Whether ``$AMP_DOCS_SAVE_REFERENCE`` is ``1``; anything but ``1``, ``0`` or blank is refused
    (a ``yes`` that saved nothing would leave a GPU owner believing it had)."""
    raw = _raw(SAVE_REFERENCE_ENV_VAR, environ)
    if raw not in ("", *SAVE_REFERENCE_VALUES):
        raise SettingError(
            f"{SAVE_REFERENCE_ENV_VAR}={raw!r} is not valid; valid: 1 (save gated cells' "
            f"outputs as reference results) or 0 (do not), or unset"
        )
    return raw == "1"


def build_hidden_packages(environ: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """``$AMP_DOCS_HIDE_PACKAGES`` for a build: optional packages only (hiding a core one would fail
    every chapter)."""
    try:
        return packages.hidden_packages(environ, allowed=packages.OPTIONAL_PACKAGES)
    except ValueError as e:
        raise SettingError(str(e)) from None


def cuda_gpu_listed() -> bool:
    """Whether ``nvidia-smi`` lists a GPU that ``CUDA_VISIBLE_DEVICES`` leaves visible (without torch:
    the up-to-date check of ``amp-docs build`` stays fast)."""
    from amp_docs_lib.core.machine import nvidia_gpus_light

    if os.environ.get("CUDA_VISIBLE_DEVICES", None) in ("", "-1"):
        return False
    listed = nvidia_gpus_light()
    return bool(listed) and not listed.startswith("nvidia-smi failed")


def _warn_to_stderr(message: str) -> None:
    print(f"amp-docs: warning: {message}", file=sys.stderr, flush=True)


def check_environment(
    environ: Mapping[str, str] | None = None,
    *,
    warn: Callable[[str], None] = _warn_to_stderr,
    cuda_available: Callable[[], bool] | None = None,
) -> None:
    """Read every ``AMP_DOCS_*`` variable; raise one ``SettingError`` naming each bad one.

    A profile meant for a device this machine lacks (``gpu-full`` without a CUDA GPU) is not an
    error but a ``warn``: the build runs the GPU sizes on the CPU, which is far slower.
    ``cuda_available`` defaults to ``cuda_gpu_listed``.
    """
    errors: list[str] = []

    def read(reader: Callable[[Mapping[str, str] | None], object]) -> object:
        try:
            return reader(environ)
        except ValueError as e:
            errors.append(str(e))
            return None

    override = read(profiles.profile_override)
    for reader in (
        jobs_override,
        build_hidden_packages,
        progress_override,
        save_reference_requested,
        load_check_override,
    ):
        read(reader)
    if errors:
        raise SettingError("\n".join(errors))
    has_cuda = cuda_available or cuda_gpu_listed
    if override is not None and profiles.get_profile(override).device == "cuda" and not has_cuda():
        warn(
            f"{PROFILE_ENV_VAR}={override} on a machine without a CUDA GPU (nvidia-smi lists none): "
            f"the chapters will run the GPU sizes on the CPU (models sized for GPU memory, far slower); "
            f"unset it, or use cpu-small"
        )
