"""Number formats as data: one registry that the tables, the decoder and the tests share.

Each :class:`NumberFormat` knows its bit layout (sign, exponent, mantissa), its
bias, how it encodes infinities and NaNs, and the type that stores it (a torch
dtype where torch has one, else an ``ml_dtypes`` type). Two sets of numbers
come out of it and the tests check that they agree:

* ``fmt.finfo()`` reads the limits from ``torch.finfo`` / ``ml_dtypes.finfo`` /
  ``iinfo`` (what the libraries say), and
* ``fmt.max_finite_from_definition()`` and friends compute them in closed form
  from the bit layout (what the definition says).

``decode(value, fmt)`` rounds a value into a format with the library's own cast
and then takes the stored bits apart field by field.

Encoding families (``fmt.special``):

``ieee``    the all-ones exponent holds inf (mantissa 0) and NaN (mantissa != 0): FP32, TF32, FP16, BF16, E5M2.
``fn``      "finite": no inf; only the all-ones exponent *and* mantissa pattern is NaN: E4M3FN.
``finite``  no inf and no NaN, every pattern is a number: the MX element types FP6 and FP4.
``fnuz``    "finite, unsigned zero": no inf, no -0; the pattern of -0 (0x80) is the only NaN; bias one
            larger than IEEE's: E4M3FNUZ and E5M2FNUZ (AMD MI300, Graphcore).
``e8m0``    unsigned, exponent only, no zero, no subnormals, 0xFF is NaN: the OCP MX scale type.
``int``     two's complement integers: INT8, INT4.
"""

from __future__ import annotations

import math
import re
import struct
from dataclasses import dataclass
from typing import Any, Iterable

import ml_dtypes
import numpy as np
import pandas as pd
import torch

from amp_docs_lib.core.tables import short_dtype, table_from_rows

FLOAT_FAMILIES = ("ieee", "fn", "fnuz", "finite", "e8m0")

TF32_SOURCE = "NVIDIA A100 Tensor Core GPU Architecture whitepaper (2020): 8-bit exponent, 10-bit mantissa"
# The whitepaper fixes only the field widths; the limits and special values are this site's IEEE-style model.
TF32_LIMITS_SOURCE = ("closed form: the whitepaper's 8-bit exponent and 10-bit mantissa, with IEEE-style "
                      "subnormals, inf and NaN assumed (not stated by NVIDIA)")
OCP_MX_SOURCE = "OCP Microscaling Formats (MX) Specification v1.0 (2023)"
OCP_FP8_SOURCE = "OCP 8-bit Floating Point Specification (OFP8) rev. 1.0 (2023)"
FNUZ_SOURCE = ("Noune et al., 8-bit Numerical Formats for Deep Neural Networks (2022); "
               "AMD CDNA 3 (MI300) ISA reference guide")


@dataclass(frozen=True)
class NumberFormat:
    """One number format: bit layout, special-value encoding and storage type.

    ``mantissa_bits`` counts the stored fraction bits (not the hidden bit).
    ``storage`` is a ``torch.dtype``, an ``ml_dtypes`` type, or ``None`` for
    TF32, which is a compute mode of NVIDIA tensor cores and has no dtype.
    """

    name: str
    special: str
    total_bits: int
    exponent_bits: int
    mantissa_bits: int
    bias: int | None
    storage: Any
    note: str
    source: str = "IEEE 754-2019"

    # ---- properties of the layout -------------------------------------------------
    @property
    def is_float(self) -> bool:
        """True for floating-point formats (everything except INT8/INT4)."""
        return self.special in FLOAT_FAMILIES

    @property
    def signed(self) -> bool:
        """Whether the format has a sign (E8M0 has none)."""
        return self.special != "e8m0"

    @property
    def sign_bits(self) -> int:
        """1 for signed floats, 0 for E8M0; ints count their sign inside ``total_bits``."""
        return 1 if (self.is_float and self.signed) else 0

    @property
    def has_inf(self) -> bool:
        """Whether some bit pattern encodes infinity."""
        return self.special == "ieee"

    @property
    def has_nan(self) -> bool:
        """Whether some bit pattern encodes NaN."""
        return self.special in ("ieee", "fn", "fnuz", "e8m0")

    @property
    def has_negative_zero(self) -> bool:
        """Whether -0 has its own pattern (FNUZ formats spend it on NaN; E8M0 and ints have no -0)."""
        return self.special in ("ieee", "fn", "finite")

    @property
    def has_subnormals(self) -> bool:
        """Whether exponent field 0 holds subnormals (E8M0 and ints have none)."""
        return self.special in ("ieee", "fn", "fnuz", "finite")

    @property
    def nan_encoding(self) -> str:
        """How NaN is encoded, in words."""
        return {
            "ieee": "exponent all ones, mantissa non-zero (many NaNs)",
            "fn": "exponent and mantissa all ones (S.1111.111), one NaN per sign",
            "fnuz": "0x80, the pattern of -0 (the only NaN; there is no -0)",
            "finite": "none: every bit pattern is a finite number",
            "e8m0": "0xFF (the only NaN; there is no zero either)",
            "int": "none",
        }[self.special]

    @property
    def torch_dtype(self) -> torch.dtype | None:
        """The torch dtype that stores this format, or None if torch has none."""
        return self.storage if isinstance(self.storage, torch.dtype) else None

    @property
    def storage_name(self) -> str:
        """Readable name of the storage type."""
        if self.storage is None:
            return "none (compute mode; values are stored as FP32)"
        if isinstance(self.storage, torch.dtype):
            return str(self.storage)
        return f"ml_dtypes.{np.dtype(self.storage).name}"

    # ---- closed forms from the definition -----------------------------------------
    def _require_float(self, what: str) -> None:
        if not self.is_float:
            raise ValueError(f"{what} is defined for floating-point formats, not {self.name!r}; "
                             f"valid: {float_format_names()}")

    def max_exponent_field(self) -> int:
        """Largest exponent field that encodes finite numbers."""
        self._require_float("max_exponent_field")
        all_ones = 2 ** self.exponent_bits - 1
        return all_ones - 1 if self.special in ("ieee", "e8m0") else all_ones  # fn, fnuz, finite: all ones

    def max_finite_from_definition(self) -> float:
        """Largest finite value from the layout: 2^(emax) * (1 + max_mantissa / 2^M)."""
        if self.special == "int":
            return float(2 ** (self.total_bits - 1) - 1)
        top_mantissa = 2 ** self.mantissa_bits - (2 if self.special == "fn" else 1)
        return math.ldexp(1 + top_mantissa / 2 ** self.mantissa_bits,
                          self.max_exponent_field() - self.bias)

    def min_normal_from_definition(self) -> float:
        """Smallest positive normal value: 2^(1 - bias), or 2^(-bias) for E8M0 (field 0 is normal)."""
        self._require_float("min_normal_from_definition")
        return math.ldexp(1.0, (0 if self.special == "e8m0" else 1) - self.bias)

    def min_subnormal_from_definition(self) -> float:
        """Smallest positive subnormal: 2^(1 - bias - M); None (not applicable) without subnormals."""
        self._require_float("min_subnormal_from_definition")
        if not self.has_subnormals:
            return None
        return math.ldexp(1.0, 1 - self.bias - self.mantissa_bits)

    def eps_from_definition(self) -> float:
        """Machine epsilon: the gap between 1.0 and the next value, 2^-M (1 for integers)."""
        return 1.0 if self.special == "int" else math.ldexp(1.0, -self.mantissa_bits)

    def decimal_digits(self) -> float | None:
        """Decimal digits of precision, defined here as (M + 1) * log10(2) (None for integers: not applicable)."""
        return None if self.special == "int" else (self.mantissa_bits + 1) * math.log10(2)

    # ---- what the libraries report ---------------------------------------------------
    def finfo(self) -> dict[str, Any]:
        """Limits as the libraries report them, with the name of the source.

        torch dtypes: ``torch.finfo`` (smallest subnormal read from the bit
        pattern 0x..01 via the dtype); ml_dtypes types: ``ml_dtypes.finfo``;
        integers: ``iinfo``; TF32: its definition (no library has it).
        """
        if self.special == "int":
            info = (torch.iinfo(self.storage) if isinstance(self.storage, torch.dtype)
                    else ml_dtypes.iinfo(self.storage))
            src = "torch.iinfo" if isinstance(self.storage, torch.dtype) else "ml_dtypes.iinfo"
            return {"max": float(info.max), "min_normal": None, "min_subnormal": None,
                    "eps": 1.0, "source": src}
        if self.storage is None:
            return {"max": self.max_finite_from_definition(),
                    "min_normal": self.min_normal_from_definition(),
                    "min_subnormal": self.min_subnormal_from_definition(),
                    "eps": self.eps_from_definition(), "source": TF32_LIMITS_SOURCE}
        if isinstance(self.storage, torch.dtype):
            fi = torch.finfo(self.storage)
            sub = bits_to_value(1, self) if self.has_subnormals else None
            return {"max": float(fi.max), "min_normal": float(fi.smallest_normal),
                    "min_subnormal": sub, "eps": float(fi.eps), "source": "torch.finfo"}
        fi = ml_dtypes.finfo(self.storage)
        sub = float(fi.smallest_subnormal) if self.has_subnormals else None
        return {"max": float(fi.max), "min_normal": float(fi.smallest_normal),
                "min_subnormal": sub, "eps": float(fi.eps), "source": "ml_dtypes.finfo"}


def _f(name, special, total, e, m, bias, storage, note, source="IEEE 754-2019"):
    return NumberFormat(name, special, total, e, m, bias, storage, note, source)


FORMATS: dict[str, NumberFormat] = {f.name: f for f in (
    _f("FP32", "ieee", 32, 8, 23, 127, torch.float32, "IEEE binary32, the training baseline"),
    _f("TF32", "ieee", 19, 8, 10, 127, None,
       "NVIDIA tensor-core compute mode for FP32 matmuls (Ampere+); not a storage type, no dtype",
       TF32_SOURCE),
    _f("FP16", "ieee", 16, 5, 10, 15, torch.float16, "IEEE binary16 (half)"),
    _f("BF16", "ieee", 16, 8, 7, 127, torch.bfloat16, "bfloat16: FP32's exponent, 7 mantissa bits",
       "Google bfloat16 definition; IEEE-style special values"),
    _f("FP8 E4M3FN", "fn", 8, 4, 3, 7, torch.float8_e4m3fn, "FP8 for weights/activations; no inf",
       OCP_FP8_SOURCE),
    _f("FP8 E5M2", "ieee", 8, 5, 2, 15, torch.float8_e5m2, "FP8 for gradients; IEEE-style",
       OCP_FP8_SOURCE),
    _f("FP8 E4M3FNUZ", "fnuz", 8, 4, 3, 8, torch.float8_e4m3fnuz,
       "FP8 of AMD MI300 (and Graphcore): bias 8, no inf, no -0, one NaN", FNUZ_SOURCE),
    _f("FP8 E5M2FNUZ", "fnuz", 8, 5, 2, 16, torch.float8_e5m2fnuz,
       "FP8 of AMD MI300 (and Graphcore): bias 16, no inf, no -0, one NaN", FNUZ_SOURCE),
    _f("E8M0", "e8m0", 8, 8, 0, 127, torch.float8_e8m0fnu,
       "MX block scale: a power of two, unsigned, no zero", OCP_MX_SOURCE),
    _f("FP6 E2M3", "finite", 6, 2, 3, 1, ml_dtypes.float6_e2m3fn, "MX element type", OCP_MX_SOURCE),
    _f("FP6 E3M2", "finite", 6, 3, 2, 3, ml_dtypes.float6_e3m2fn, "MX element type", OCP_MX_SOURCE),
    _f("FP4 E2M1", "finite", 4, 2, 1, 1, ml_dtypes.float4_e2m1fn, "MX element type", OCP_MX_SOURCE),
    _f("INT8", "int", 8, 0, 0, None, torch.int8, "two's complement integer", "two's complement"),
    _f("INT4", "int", 4, 0, 0, None, ml_dtypes.int4, "two's complement integer", "two's complement"),
)}

DECODE_DEFAULT = ("FP32", "FP16", "BF16", "FP8 E4M3FN", "FP8 E5M2")
LAYOUT_DEFAULT = ("FP32", "TF32", "FP16", "BF16", "FP8 E4M3FN", "FP8 E5M2", "E8M0", "FP6 E2M3", "FP6 E3M2",
                  "FP4 E2M1")  # the bit-layout figure: FNUZ shares E4M3/E5M2's layout


def format_names() -> list[str]:
    """Names of all registered formats, in registry order."""
    return list(FORMATS)


def float_format_names() -> list[str]:
    """Names of the floating-point formats (those ``decode`` accepts)."""
    return [n for n, f in FORMATS.items() if f.is_float]


def _key(s: str) -> str:
    return re.sub(r"[\s_\-]", "", s).upper()


def _names(names: Iterable[str], what: str = "formats") -> Iterable[str]:
    """``names``, refusing a lone str: iterating "FP16" would look up the formats 'F', 'P', '1', '6'."""
    if isinstance(names, str):
        raise TypeError(f"{what} must be a list of format names, got the str {names!r}; for one format pass "
                        f"[{names!r}]; valid names: {format_names()}")
    return names


def get_format(name: str | NumberFormat) -> NumberFormat:
    """Look a format up by name (case, spaces, '-' and '_' ignored: "fp8_e4m3fn" works).

    Raises TypeError for a non-str and ValueError (listing valid names) for an unknown name.
    """
    if isinstance(name, NumberFormat):
        return name
    if not isinstance(name, str):
        raise TypeError(f"format name must be a str, got {type(name).__name__} ({name!r}); "
                        f"valid names: {format_names()}")
    for n, f in FORMATS.items():
        if _key(n) == _key(name):
            return f
    raise ValueError(f"unknown format {name!r}; valid names: {format_names()}")


def _float_format(fmt: str | NumberFormat) -> NumberFormat:
    f = get_format(fmt)
    if not f.is_float:
        raise ValueError(f"{f.name!r} is not a floating-point format; valid: {float_format_names()}")
    return f


def _storage_width(f: NumberFormat) -> int:
    return 32 if f.name == "TF32" else f.total_bits


def bytes_per_element(fmt: str | NumberFormat) -> float:
    """Bytes one element of ``fmt`` occupies in memory (TF32 is stored as FP32; FP4 is 0.5).

    The one source of the byte counts the memory calculators (``bench.memory``,
    ``distributed.memory``, ``fp8.memory``) multiply by. Raises ValueError for an unknown format.
    """
    bits = _storage_width(get_format(fmt))
    return bits // 8 if bits % 8 == 0 else bits / 8


# ---- bits <-> values through the libraries ----------------------------------------------
_TORCH_INT = {8: torch.uint8, 16: torch.int16, 32: torch.int32}


def _fp32_bits(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", x))[0]


def _tf32_encode(x: float) -> int:
    """Round an FP32 value to TF32 (round to nearest even on the 13 dropped bits); 19-bit pattern."""
    with np.errstate(over="ignore"):  # beyond FP32's range: inf, as the FP32 cast gives
        b = _fp32_bits(float(np.float32(x)))
    if (b >> 23) & 0xFF == 0xFF:  # inf / NaN keep their class
        return (b >> 13) | (1 if (b & 0x7FFFFF) else 0)
    b += 0xFFF + ((b >> 13) & 1)
    return (b >> 13) & 0x7FFFF


def encode(value: float, fmt: str | NumberFormat) -> int:
    """Round ``value`` into ``fmt`` with the storage library's cast; return the bit pattern as an int.

    torch dtypes use torch's cast, ml_dtypes types ml_dtypes' cast; both round a float64 to FP32
    first, then to the format (each round to nearest even), so a float64 within half an FP32 step
    of a tie is rounded twice (:func:`double_rounding` measures it). What a cast does beyond the
    range depends on the format and, for E4M3FN, on the torch version: see :func:`cast_rules`.
    TF32 is emulated by rounding the FP32 bits to nearest even (a model: see the chapter).
    """
    f = _float_format(fmt)
    if not isinstance(value, (int, float, np.floating, np.integer)) or isinstance(value, bool):
        raise TypeError(f"value must be a real number, got {type(value).__name__}")
    if f.name == "TF32":
        return _tf32_encode(float(value))
    if isinstance(f.storage, torch.dtype):
        t = torch.tensor([float(value)], dtype=torch.float64).to(f.storage)
        raw = int(t.view(_TORCH_INT[f.total_bits]).item())
        return raw & ((1 << f.total_bits) - 1)
    a = np.array([float(value)], dtype=np.float64).astype(f.storage)
    return int(a.view(np.uint8)[0]) & ((1 << f.total_bits) - 1)


def bits_to_value(bits: int, fmt: str | NumberFormat) -> float:
    """The value the storage library assigns to bit pattern ``bits`` (as float64)."""
    f = _float_format(fmt)
    if not isinstance(bits, (int, np.integer)) or not 0 <= int(bits) < 2 ** f.total_bits:
        raise ValueError(f"bits must be an int in [0, 2**{f.total_bits}) for {f.name}, got {bits!r}")
    bits = int(bits)
    if f.name == "TF32":
        return struct.unpack("<f", struct.pack("<I", bits << 13))[0]
    if isinstance(f.storage, torch.dtype):
        w = f.total_bits
        signed = bits - (1 << w) if (w > 8 and bits >= 1 << (w - 1)) else bits
        return float(torch.tensor([signed], dtype=_TORCH_INT[w]).view(f.storage).to(torch.float64).item())
    return float(np.array([bits], dtype=np.uint8).view(f.storage).astype(np.float64)[0])


def value_from_fields(sign: int, exponent_field: int, mantissa_field: int,
                      fmt: str | NumberFormat) -> float:
    """The value the *definition* assigns to (sign, exponent field, mantissa field).

    normal: (-1)^s * 2^(e - bias) * (1 + m / 2^M); subnormal (e = 0): (-1)^s * 2^(1 - bias) * (m / 2^M);
    plus each family's inf/NaN rules.
    """
    f = _float_format(fmt)
    cls = classify_fields(exponent_field, mantissa_field, f, sign=sign)
    s = -1.0 if sign else 1.0
    if cls == "nan":
        return math.nan
    if cls == "inf":
        return s * math.inf
    M = f.mantissa_bits
    if f.special == "e8m0":
        return math.ldexp(1.0, exponent_field - f.bias)
    if exponent_field == 0:
        return s * math.ldexp(mantissa_field / 2 ** M, 1 - f.bias)
    return s * math.ldexp(1 + mantissa_field / 2 ** M, exponent_field - f.bias)


def classify_fields(exponent_field: int, mantissa_field: int, fmt: str | NumberFormat, sign: int = 0) -> str:
    """Class of an encoding: 'normal', 'subnormal', 'zero', 'inf' or 'nan' (FNUZ: sign 1 with zero fields is NaN)."""
    f = _float_format(fmt)
    all_e, all_m = 2 ** f.exponent_bits - 1, 2 ** f.mantissa_bits - 1
    if f.special == "fnuz" and sign and exponent_field == 0 and mantissa_field == 0:
        return "nan"
    if f.special == "e8m0":
        return "nan" if exponent_field == all_e else "normal"
    if f.special == "ieee" and exponent_field == all_e:
        return "inf" if mantissa_field == 0 else "nan"
    if f.special == "fn" and exponent_field == all_e and mantissa_field == all_m:
        return "nan"
    if exponent_field == 0:
        return "zero" if mantissa_field == 0 else "subnormal"
    return "normal"


@dataclass
class Decoded:
    """The fields of one value stored in one format, all computed from the stored bits."""

    format: str
    input: float
    bits: str            # grouped "s eeeee mmmmmmmmmm"
    hex: str
    sign: int
    exponent_field: int  # biased
    exponent: int | None  # unbiased (1 - bias for subnormals); None for inf/NaN
    hidden_bit: int | None
    mantissa_field: int
    mantissa_bits: str
    cls: str
    value: float         # reconstructed from the fields with the definition
    stored: float        # what the library reads back from the bits
    error: float         # value - input
    rel_error: float

    def as_dict(self) -> dict[str, Any]:
        """The fields as a plain dict (one table row)."""
        return dict(self.__dict__)


def decode(value: float, fmt: str | NumberFormat) -> Decoded:
    """Round ``value`` into ``fmt`` and take the stored bits apart.

    Works for every floating-point format in the registry (TF32 emulated).
    """
    f = _float_format(fmt)
    b = encode(value, f)
    M, E = f.mantissa_bits, f.exponent_bits
    sign = (b >> (E + M)) & 1 if f.signed else 0
    e_field = (b >> M) & (2 ** E - 1)
    m_field = b & (2 ** M - 1)
    cls = classify_fields(e_field, m_field, f, sign=sign)
    v = value_from_fields(sign, e_field, m_field, f)
    width = f.total_bits
    raw = format(b, f"0{width}b")
    parts = ([raw[0]] if f.signed else []) + [raw[f.sign_bits:f.sign_bits + E]] + ([raw[-M:]] if M else [])
    if cls in ("inf", "nan"):
        exp, hidden = None, None
    elif f.special == "e8m0":
        exp, hidden = e_field - f.bias, 1
    elif cls in ("zero", "subnormal"):
        exp, hidden = 1 - f.bias, 0
    else:
        exp, hidden = e_field - f.bias, 1
    x = float(value)
    err = v - x if (math.isfinite(v) and math.isfinite(x)) else (0.0 if v == x else math.nan)
    rel = abs(err) / abs(x) if x not in (0.0,) and math.isfinite(err) else (0.0 if err == 0 else math.nan)
    return Decoded(format=f.name, input=x, bits=" ".join(parts),
                   hex=f"0x{b:0{(width + 3) // 4}X}", sign=sign, exponent_field=e_field,
                   exponent=exp, hidden_bit=hidden, mantissa_field=m_field,
                   mantissa_bits=raw[-M:] if M else "", cls=cls, value=v,
                   stored=bits_to_value(b, f), error=err, rel_error=rel)


def decode_table(value: float, formats: Iterable[str] = DECODE_DEFAULT) -> pd.DataFrame:
    """One row per format: the bit fields of ``value`` rounded into that format."""
    rows = []
    for name in _names(formats):
        d = decode(value, name)
        rows.append({"format": d.format, "bits (s e m)": d.bits, "hex": d.hex, "sign": d.sign,
                     "exponent field": d.exponent_field,
                     "exponent": d.exponent, "hidden bit": d.hidden_bit,  # None for inf/NaN: n/a
                     "mantissa field": d.mantissa_field, "class": d.cls,
                     "value from fields": d.value, "rounding error": d.error,
                     "relative error": d.rel_error})
    return table_from_rows(rows)


def next_up(value: float, fmt: str | NumberFormat) -> float:
    """The next representable value above a positive finite ``value`` in ``fmt`` (its bit neighbour)."""
    f = _float_format(fmt)
    b = encode(value, f)
    nxt = bits_to_value(b + 1, f)
    return nxt


DOUBLE_ROUNDING_DEFAULT = ("FP16", "BF16", "FP8 E4M3FN", "FP8 E5M2", "FP6 E2M3", "FP6 E3M2", "FP4 E2M1")


def double_rounding(names: Iterable[str] = DOUBLE_ROUNDING_DEFAULT, offset: float = 2.0 ** -40) -> pd.DataFrame:
    """Cast a float64 just above the tie between 1 and its upper neighbour, per format.

    The input is ``tie + offset`` with ``offset`` far below FP32's spacing at 1 (2^-23), so the
    value nearest to it in the format is the upper neighbour. A cast that goes through FP32 first
    lands on the tie and then, ties to even, on 1: the column "rounded twice" says which happened
    for the library's path (:func:`encode`: a float64 tensor's ``.to`` in torch, a float64 array's
    ``.astype`` in ml_dtypes). The same input through the ml_dtypes (numpy for FP16) scalar
    constructor, a different conversion path, is the last two columns.
    """
    import ml_dtypes

    rows = []
    for name in _names(names):
        f = _float_format(name)
        upper = next_up(1.0, f)
        value = (1.0 + upper) / 2 + offset
        cast = bits_to_value(encode(value, f), f)
        # the scalar type of the same format: ml_dtypes names its types as torch does (numpy for float16)
        type_name = short_dtype(f.storage) if isinstance(f.storage, torch.dtype) else None
        scalar_type = (np.float16 if type_name == "float16" else getattr(ml_dtypes, type_name)) if type_name \
            else np.dtype(f.storage).type
        scalar = float(scalar_type(value))
        rows.append({"format": name, "input (float64)": value, "nearest value (one rounding)": upper,
                     "cast from float64": cast, "rounded twice": cast == 1.0,
                     "scalar constructor": scalar, "scalar rounded twice": scalar == 1.0})
    return pd.DataFrame(rows)


def format_table(names: Iterable[str] | None = None, mark_disagreements: bool = False) -> pd.DataFrame:
    """The format table. Limits come from torch.finfo / ml_dtypes.finfo / iinfo (TF32: definition).

    "decimal digits" is (mantissa bits + 1) * log10(2); cells that do not
    apply (min subnormal of a format without subnormals, min normal of an
    integer) are None, shown as "n/a"; for integers "mantissa bits" counts the
    value bits (total bits minus the sign) and "machine epsilon" is their spacing, 1.
    ``mark_disagreements=True`` turns each limit that differs from the closed-form definition
    (:func:`limits_disagreeing_with_definition`) into a text cell naming both values, so a wrong
    library value is never shown as if it were right.
    """
    rows = []
    for name in (format_names() if names is None else _names(names, "names")):
        f = get_format(name)
        fi = f.finfo()
        rows.append({
            "format": f.name, "total bits": f.total_bits,
            "exponent bits": f.exponent_bits if f.is_float else 0,
            "mantissa bits": f.mantissa_bits if f.is_float else f.total_bits - 1,
            "bias": f.bias,
            "max finite": fi["max"], "min normal": fi["min_normal"],
            "min subnormal": fi["min_subnormal"], "machine epsilon": fi["eps"],
            "decimal digits": f.decimal_digits(), "has inf": f.has_inf, "has NaN": f.has_nan,
            "NaN encoding": f.nan_encoding, "storage": f.storage_name, "values from": fi["source"],
        })
    table = table_from_rows(rows)
    if mark_disagreements:
        defs = definition_table().set_index("format")
        for name, column in limits_disagreeing_with_definition():
            at = table.index[table["format"] == name]
            if len(at):
                table[column] = table[column].astype(object)
                source = table.at[at[0], "values from"]
                table.at[at[0], column] = (f"{table.at[at[0], column]:g} (wrong in {source}; "
                                           f"{defs.loc[name, column]:g} by definition)")
    return table


def torch_header_line(header: str, needle: str) -> tuple[str, int | None]:
    """Where ``needle`` first appears in an installed torch header under ``torch/include``.

    Returns the path relative to site-packages (``torch/include/...``) and the 1-based line,
    or None where the header is absent or the text is not in it (another torch version).
    """
    import os

    rel = os.path.join("torch", "include", *header.split("/"))
    path = os.path.join(os.path.dirname(os.path.dirname(torch.__file__)), rel)
    if not os.path.exists(path):
        return rel, None
    with open(path) as fh:
        return rel, next((i for i, text in enumerate(fh, 1) if needle in text), None)


def definition_table(names: Iterable[str] | None = None) -> pd.DataFrame:
    """The same limits computed in closed form from each layout (floats only)."""
    rows = []
    for name in (float_format_names() if names is None else _names(names, "names")):
        f = _float_format(name)
        rows.append({"format": f.name, "max finite": f.max_finite_from_definition(),
                     "min normal": f.min_normal_from_definition(),
                     "min subnormal": f.min_subnormal_from_definition(),
                     "machine epsilon": f.eps_from_definition()})
    return table_from_rows(rows)


def limits_disagreeing_with_definition() -> list[tuple[str, str]]:
    """(format, limit) pairs where the library's value differs from the closed form.

    Covers every float format that a library stores (TF32 has no storage); "not applicable"
    (None) matches only "not applicable".
    """
    lib = format_table().set_index("format")
    defs = definition_table().set_index("format")
    cols = ["max finite", "min normal", "min subnormal", "machine epsilon"]
    return [(n, c) for n in defs.index if get_format(n).storage is not None for c in cols
            if not ((lib.loc[n, c] is None and defs.loc[n, c] is None) or lib.loc[n, c] == defs.loc[n, c])]


def plot_bit_layout(names: Iterable[str] = DECODE_DEFAULT, value: float | None = None):
    """A matplotlib Figure: one row of boxes per format (sign / exponent / mantissa).

    With ``value`` given, each box shows that value's stored bit.
    """
    import matplotlib.pyplot as plt
    from matplotlib.patches import Rectangle

    fmts = [_float_format(n) for n in _names(names, "names")]
    from amp_docs_lib.core.palette import BIT_FIELD_COLORS as colors  # the format explorer uses the same
    widest = max(f.total_bits for f in fmts)
    fig, ax = plt.subplots(figsize=(min(14, 1.6 + 0.36 * widest), 0.55 * len(fmts) + 0.9))
    for row, f in enumerate(fmts):
        y = len(fmts) - 1 - row
        kinds = ["sign"] * f.sign_bits + ["exponent"] * f.exponent_bits + ["mantissa"] * f.mantissa_bits
        bits = format(encode(value, f), f"0{f.total_bits}b") if value is not None else None
        for i, k in enumerate(kinds):
            ax.add_patch(Rectangle((i, y + 0.1), 0.94, 0.8, color=colors[k]))
            if bits is not None:
                ax.text(i + 0.47, y + 0.5, bits[i], ha="center", va="center", fontsize=8, color="white")
        label = f"{f.name}  (1+{f.exponent_bits}+{f.mantissa_bits})" if f.signed else \
            f"{f.name}  ({f.exponent_bits}+{f.mantissa_bits})"
        ax.text(-0.4, y + 0.5, label, ha="right", va="center", fontsize=9)
    for k, c in colors.items():
        ax.add_patch(Rectangle((0, 0), 0, 0, color=c, label=k))
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.02), ncol=3, frameon=False, fontsize=8)
    ax.set_xlim(-0.2, widest + 0.2)
    ax.set_ylim(0, len(fmts))
    ax.axis("off")
    title = "Bit layout (most significant bit left)"
    ax.set_title(title + (f": stored bits of {value:g}" if value is not None else ""), fontsize=10)
    fig.subplots_adjust(left=0.22)
    return fig


# ---- what a cast does beyond the range (torch-version dependent for E4M3FN) ---------------------
CAST_OUTCOMES = ("inf", "saturate", "nan")
CAST_OUTCOME_LABELS = {"inf": "inf", "saturate": "saturate", "nan": "NaN"}  # as the page's tables write them


def _cast_outcome(value: float, f: NumberFormat) -> str:
    cls = decode(value, f).cls
    if cls in ("inf", "nan"):
        return cls
    stored = abs(decode(value, f).stored)
    if stored == f.max_finite_from_definition():
        return "saturate"
    raise AssertionError(f"{f.name}: casting {value!r} gave {stored!r}, neither inf, NaN nor the largest value")


def overflow_probe(fmt: str | NumberFormat) -> float:
    """A value whose nearest value in ``fmt`` (unbounded exponent) is beyond its largest finite one,
    and that is still finite in FP32, since every cast goes through FP32 first.

    Twice the largest value where that fits in FP32; FP32's largest value for the formats whose
    range reaches FP32's (BF16, TF32, E8M0: it rounds up to 2^128 in each). For FP32 itself, a
    float64 beyond its range: the cast from float64 is the overflow.
    """
    f = _float_format(fmt)
    fp32_max = float(np.finfo(np.float32).max)
    if f.name == "FP32":
        return 2 * fp32_max
    return min(2 * f.max_finite_from_definition(), fp32_max)


def cast_rules(names: Iterable[str] | None = None) -> dict[str, dict[str, str]]:
    """What this build's cast does, per float format, to a finite value beyond the range and to infinity.

    Measured by casting (``encode``) a finite value beyond the range (``overflow_probe``) and +inf
    with the storage library; each outcome is "inf", "saturate" (the largest finite value) or "nan". torch's
    E4M3FN cast saturates in recent torch and gave NaN before (pytorch/pytorch#178817), so the
    Formats page, its explorer and the tests read these outcomes instead of assuming one.
    """
    rules = {}
    for name in (float_format_names() if names is None else _names(names, "names")):
        f = _float_format(name)
        rules[f.name] = {"overflow": _cast_outcome(overflow_probe(f), f),
                         "infinity": _cast_outcome(math.inf, f)}
    return rules


def cast_rules_table(names: Iterable[str] | None = None) -> pd.DataFrame:
    """``cast_rules`` as a table, with the library that does the cast (outcomes as the page writes them: "NaN")."""
    rows = []
    for name, r in cast_rules(names).items():
        f = get_format(name)
        lib = ("none (emulated rounding)" if f.storage is None else
               "torch" if isinstance(f.storage, torch.dtype) else "ml_dtypes")
        rows.append({"format": name, "cast by": lib, "finite value cast": overflow_probe(f),
                     "beyond the largest finite value": CAST_OUTCOME_LABELS[r["overflow"]],
                     "infinity": CAST_OUTCOME_LABELS[r["infinity"]],
                     "same for a 64-element tensor": _long_cast_agrees(f)})
    return table_from_rows(rows)


def _long_cast_agrees(f: NumberFormat) -> bool | None:
    """Whether a 64-element torch cast (the vectorised CPU path) gives the same bits as ``encode``'s
    one-element cast for ``overflow_probe`` and for inf; None where torch does not cast.

    Both casts start from float64, as ``encode`` does, so that only the length differs.
    """
    if not isinstance(f.storage, torch.dtype):
        return None
    for v in (overflow_probe(f), math.inf):
        bits = torch.full((64,), v, dtype=torch.float64).to(f.storage)
        raw = bits.view(_TORCH_INT[f.total_bits]).to(torch.int64) & ((1 << f.total_bits) - 1)
        if set(raw.tolist()) != {encode(v, f)}:
            return False
    return True
