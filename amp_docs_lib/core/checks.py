"""Argument checks shared by the library's modules: one wording for one kind of bad input.

Each raises before any work, naming the argument, the bad value and what is valid, so a
call with ``n=0`` or an empty tensor fails at the call instead of deep inside torch or,
worse, returning an empty table or a default size. Torch-free (``core`` imports no torch at
module level): tensors are checked through their methods.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from typing import Any


def lookup(mapping: Mapping[str, Any], name: Any, what: str, valid: list | None = None) -> Any:
    """``mapping[name]``: ``TypeError`` for a name that is not a str, ``ValueError`` for an unknown one,
    each listing the valid names (``valid``, by default the mapping's keys). ``what`` names the kind."""
    valid = list(mapping) if valid is None else valid
    if not isinstance(name, str):
        raise TypeError(f"{what} name must be a str, got {type(name).__name__}; valid {what}s: {valid}")
    try:
        return mapping[name]
    except KeyError:
        raise ValueError(f"unknown {what} {name!r}; valid {what}s: {valid}") from None


def positive_int(name: str, value: Any, *, minimum: int = 1) -> int:
    """``value`` as an int if it is an integer ``>= minimum`` (1 unless given); else ``ValueError``.

    A bool or a float (even ``4.0``) is not a size: ``TypeError``.
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an int >= {minimum}, got {value!r} ({type(value).__name__})")
    if value < minimum:
        raise ValueError(f"{name} must be an int >= {minimum}, got {value!r}")
    return int(value)


def positive_number(name: str, value: Any, *, allow_zero: bool = False) -> float:
    """``value`` as a float if it is a finite number ``> 0`` (``>= 0`` with ``allow_zero``); else ``ValueError``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a number, got {value!r} ({type(value).__name__})")
    v = float(value)
    if not math.isfinite(v) or v < 0 or (v == 0 and not allow_zero):
        valid = "a finite number >= 0" if allow_zero else "a finite number > 0"
        raise ValueError(f"{name} must be {valid}, got {value!r}")
    return v


def nonempty_tensor(name: str, t: Any) -> Any:
    """``t`` if it has at least one element; ``ValueError`` naming its shape otherwise."""
    if t.numel() == 0:
        raise ValueError(f"{name} is empty (shape {tuple(t.shape)}); it needs at least one element")
    return t


def finite_tensor(name: str, t: Any) -> Any:
    """``t`` if every element is finite; ``ValueError`` naming how many are not and the first one."""
    bad = ~t.isfinite()
    if bool(bad.any()):
        first = tuple(int(i) for i in bad.nonzero()[0].tolist())
        raise ValueError(
            f"{name} has {int(bad.sum())} non-finite value(s) (first: {float(t[first])!r} at index "
            f"{first}); it must hold finite values only"
        )
    return t
