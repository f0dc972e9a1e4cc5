"""Repeated blocks replaced by one helper each (architecture review, finding 27, and the duplicate scan)."""

import pytest

from amp_docs_lib.amp.precision import get_regime
from amp_docs_lib.amp.underflow import _dtype
from amp_docs_lib.core.checks import lookup
from amp_docs_lib.core.profiles import PROFILES, get_profile
from amp_docs_lib.gpt import GPTConfig
from amp_docs_lib.regimes.loop import TrainConfig


def test_lookup_names_the_kind_and_the_valid_names():
    assert lookup({"a": 1}, "a", "thing") == 1
    with pytest.raises(ValueError, match=r"unknown thing 'b'; valid things: \['a'\]"):
        lookup({"a": 1}, "b", "thing")
    with pytest.raises(TypeError, match=r"thing name must be a str, got int; valid things: \['a'\]"):
        lookup({"a": 1}, 1, "thing")


@pytest.mark.parametrize("find, what", [(get_regime, "regime"), (get_profile, "profile"), (_dtype, "dtype")])
def test_every_name_lookup_speaks_with_one_wording(find, what):
    with pytest.raises(ValueError, match=f"unknown {what} 'nope'; valid {what}s: "):
        find("nope")
    with pytest.raises(TypeError, match=f"{what} name must be a str, got NoneType; valid {what}s: "):
        find(None)


@pytest.mark.parametrize("make, field", [(GPTConfig, "n_layer"), (TrainConfig, "steps")])
def test_config_sizes_use_the_one_positive_int_check(make, field):
    # core.checks.positive_int: a bool is not a size (TypeError), zero is out of range (ValueError)
    with pytest.raises(TypeError, match=f"{make.__name__}.{field} must be an int >= 1, got True"):
        make(**{field: True})
    with pytest.raises(ValueError, match=f"{make.__name__}.{field} must be an int >= 1, got 0"):
        make(**{field: 0})


def test_profiles_keep_every_size_in_one_table():
    cpu, gpu = PROFILES["cpu-small"], PROFILES["gpu-full"]
    assert list(cpu.sizes) == list(gpu.sizes)
    assert (cpu["regimes_steps"], gpu["regimes_steps"]) == (120, 300)


def test_fault_models_check_their_layers_with_one_helper():
    from amp_docs_lib.debugging.models import CancellationMLP, FunctionalFaultMLP, UnstableMLP

    for make, least in ((UnstableMLP, 2), (FunctionalFaultMLP, 1), (CancellationMLP, 2)):
        with pytest.raises(ValueError, match=f"depth must be an int >= {least}, got 0"):
            make(depth=0)
        with pytest.raises(ValueError, match=r"hot_layer must be an int in \[0, 1\], got 2"):
            make(depth=2, hot_layer=2)
