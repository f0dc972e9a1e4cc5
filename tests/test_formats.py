"""Number-format registry: bit encodings, finfo vs closed forms, decoding, bad input."""

import math

import ml_dtypes
import numpy as np
import pytest
import torch

from amp_docs_lib.numbers import formats as F


@pytest.mark.parametrize("value,fmt,expected", [
    (1.0, "FP16", 0x3C00), (-2.0, "FP16", 0xC000), (65504.0, "FP16", 0x7BFF),
    (2.0 ** -24, "FP16", 0x0001), (math.inf, "FP16", 0x7C00),
    (1.0, "BF16", 0x3F80), (math.pi, "FP32", 0x40490FDB),
    (448.0, "FP8 E4M3FN", 0x7E), (math.nan, "FP8 E4M3FN", 0x7F), (-448.0, "FP8 E4M3FN", 0xFE),
    (math.inf, "FP8 E5M2", 0x7C), (57344.0, "FP8 E5M2", 0x7B),
    (1.0, "E8M0", 0x7F), (math.nan, "E8M0", 0xFF),
    (7.5, "FP6 E2M3", 0x1F), (28.0, "FP6 E3M2", 0x1F), (6.0, "FP4 E2M1", 0x7), (-0.5, "FP4 E2M1", 0x9),
])
def test_known_encodings(value, fmt, expected):
    assert F.encode(value, fmt) == expected


def test_decode_fields_of_pi_fp32():
    d = F.decode(math.pi, "FP32")
    assert (d.sign, d.exponent_field, d.exponent, d.hidden_bit, d.cls) == (0, 128, 1, 1, "normal")
    assert d.hex == "0x40490FDB" and d.value == float(np.float32(math.pi))
    assert abs(d.error) < 2 ** -22


def test_decode_classes():
    assert F.decode(2.0 ** -24, "FP16").cls == "subnormal"
    assert F.decode(2.0 ** -24, "FP16").hidden_bit == 0
    assert F.decode(0.0, "BF16").cls == "zero"
    assert F.decode(math.inf, "FP8 E5M2").cls == "inf"
    assert F.decode(math.nan, "FP8 E4M3FN").cls == "nan"
    assert F.decode(1e-5, "FP16").cls == "subnormal"  # not zero: 1e-5 is an FP16 subnormal


@pytest.mark.slow
@pytest.mark.parametrize("name", F.float_format_names())
def test_fields_formula_matches_library_for_every_pattern(name):
    """The definition's value for each bit pattern equals what torch/ml_dtypes read from it."""
    f = F.get_format(name)
    if f.total_bits > 16:  # FP32/TF32: a spread sample of patterns plus the edges
        n = 2 ** f.total_bits
        patterns = list(range(0, n, n // 4093)) + [1, n // 2 - 1, n // 2 + 1, n - 1]
    else:
        patterns = range(2 ** f.total_bits)
    M, E = f.mantissa_bits, f.exponent_bits
    for b in patterns:
        s = (b >> (E + M)) & 1 if f.signed else 0
        v = F.value_from_fields(s, (b >> M) & (2 ** E - 1), b & (2 ** M - 1), f)
        lib = F.bits_to_value(b, f)
        assert (math.isnan(v) and math.isnan(lib)) or v == lib, (name, hex(b), v, lib)


@pytest.mark.parametrize("name", [n for n in F.format_names() if F.get_format(n).storage is not None])
def test_library_limits_equal_definition(name):
    f = F.get_format(name)
    fi = f.finfo()
    assert fi["max"] == f.max_finite_from_definition()
    if name == "FP8 E5M2FNUZ" and fi["eps"] == 0.125:
        # torch 2.13's finfo(float8_e5m2fnuz).eps is 0.125 (torch 2.15: 0.25); the definition, 2^-2,
        # is what ml_dtypes reports, and the Formats page lists the disagreement as measured
        assert float(ml_dtypes.finfo(ml_dtypes.float8_e5m2fnuz).eps) == f.eps_from_definition() == 0.25
        assert ("FP8 E5M2FNUZ", "machine epsilon") in F.limits_disagreeing_with_definition()
    else:
        assert fi["eps"] == f.eps_from_definition()
    if f.is_float:
        assert fi["min_normal"] == f.min_normal_from_definition()
        s, d = fi["min_subnormal"], f.min_subnormal_from_definition()
        assert s == d  # both None (not applicable) where the format has no subnormals


def test_limits_against_torch_and_ml_dtypes_directly():
    assert F.get_format("FP16").max_finite_from_definition() == torch.finfo(torch.float16).max == 65504
    assert F.get_format("BF16").min_normal_from_definition() == torch.finfo(torch.float32).tiny
    assert F.get_format("FP8 E4M3FN").max_finite_from_definition() == 448
    assert F.get_format("FP8 E5M2").max_finite_from_definition() == 57344
    assert F.get_format("FP6 E3M2").max_finite_from_definition() == float(ml_dtypes.finfo(ml_dtypes.float6_e3m2fn).max)
    assert F.get_format("INT4").max_finite_from_definition() == int(ml_dtypes.iinfo(ml_dtypes.int4).max) == 7
    assert F.get_format("E8M0").max_finite_from_definition() == 2.0 ** 127


def test_tf32_is_a_compute_mode_without_dtype():
    f = F.get_format("TF32")
    assert f.torch_dtype is None and f.storage is None
    assert (f.exponent_bits, f.mantissa_bits) == (8, 10)
    assert F.decode(math.pi, "TF32").value == F.decode(math.pi, "FP16").value  # both keep 10 bits here


def test_format_table_columns_and_flags():
    t = F.format_table()
    for col in ["total bits", "exponent bits", "mantissa bits", "bias", "max finite", "min normal",
                "min subnormal", "machine epsilon", "decimal digits", "has inf", "has NaN"]:
        assert col in t.columns
    row = t.set_index("format")
    assert not row.loc["FP8 E4M3FN", "has inf"] and row.loc["FP8 E4M3FN", "has NaN"]
    assert not row.loc["FP4 E2M1", "has NaN"]
    assert row.loc["BF16", "decimal digits"] == pytest.approx(8 * math.log10(2))
    assert len(t) == len(F.FORMATS)
    # Not applicable is None, shown as "n/a", never NaN (which is a value).
    assert row.loc["INT8", "min normal"] is None and row.loc["E8M0", "min subnormal"] is None
    assert row.loc["INT8", "bias"] is None


def test_decode_table_rows():
    t = F.decode_table(1.0)
    assert list(t["format"]) == list(F.DECODE_DEFAULT)
    assert (t["value from fields"] == 1.0).all()


def test_next_up_is_bit_neighbour():
    assert F.next_up(1.0, "BF16") == 1.0 + 2 ** -7
    assert F.next_up(1.0, "FP16") == 1.0 + 2 ** -10


def test_bad_inputs_name_valid_choices():
    with pytest.raises(ValueError, match="valid names:.*FP16"):
        F.get_format("FP17")
    with pytest.raises(TypeError, match="valid names"):
        F.get_format(16)
    with pytest.raises(ValueError, match="FP16"):
        F.decode(1.0, "INT8")
    with pytest.raises(TypeError):
        F.decode("1.0", "FP16")
    with pytest.raises(ValueError, match="INT8"):
        F.get_format("INT8").min_normal_from_definition()
    assert F.get_format("fp8_e4m3fn").name == "FP8 E4M3FN"


def test_bit_layout_figure():
    import matplotlib.pyplot as plt
    fig = F.plot_bit_layout(["FP16", "BF16"], value=1.0)
    assert len(fig.axes[0].texts) >= 32  # one digit per bit plus labels
    plt.close(fig)


def test_bytes_per_element_agrees_with_torch_storage():
    import pytest
    import torch

    from amp_docs_lib.numbers.formats import bytes_per_element

    for fmt, dtype in (("FP32", torch.float32), ("FP16", torch.float16), ("BF16", torch.bfloat16),
                       ("FP8 E4M3FN", torch.float8_e4m3fn), ("FP8 E5M2", torch.float8_e5m2),
                       ("E8M0", torch.float8_e8m0fnu), ("INT8", torch.int8)):
        assert bytes_per_element(fmt) == dtype.itemsize, fmt
    assert bytes_per_element("TF32") == torch.float32.itemsize  # stored as FP32, computed in 19 bits
    assert bytes_per_element("FP4 E2M1") == torch.float4_e2m1fn_x2.itemsize / 2  # two per byte
    with pytest.raises(ValueError, match="FP7"):
        bytes_per_element("FP7")


# ---- FNUZ formats and what casts do beyond the range (issue 20) -------------------------------
def test_fnuz_formats_match_torch_finfo_and_have_one_nan_and_no_negative_zero():
    for name, dt, top in (("FP8 E4M3FNUZ", torch.float8_e4m3fnuz, 240.0), ("FP8 E5M2FNUZ", torch.float8_e5m2fnuz, 57344.0)):
        f = F.get_format(name)
        assert f.max_finite_from_definition() == torch.finfo(dt).max == top
        assert f.min_normal_from_definition() == torch.finfo(dt).smallest_normal
        assert F.decode(-0.0, name).hex == "0x00"           # no -0: the pattern is NaN
        assert F.decode(math.nan, name).hex == "0x80"
        nans = [b for b in range(256) if math.isnan(F.bits_to_value(b, name))]
        assert nans == [0x80]
        assert not f.has_inf and not f.has_negative_zero
    assert F.get_format("FP8 E4M3FN").has_negative_zero


def test_cast_rules_agree_with_a_direct_torch_cast():
    # independent of encode(): cast a tensor and look at the value
    direct = torch.tensor([1e6, math.inf]).to(torch.float8_e4m3fn).float()
    want = ["saturate" if v == 448.0 else "nan" for v in direct.tolist()]
    rules = F.cast_rules(["FP8 E4M3FN", "FP16", "FP8 E4M3FNUZ", "FP4 E2M1"])
    assert [rules["FP8 E4M3FN"]["overflow"], rules["FP8 E4M3FN"]["infinity"]] == want
    assert rules["FP16"] == {"overflow": "inf", "infinity": "inf"}
    assert rules["FP8 E4M3FNUZ"] == {"overflow": "nan", "infinity": "nan"}
    assert rules["FP4 E2M1"] == {"overflow": "saturate", "infinity": "saturate"}


def test_cast_rules_table_names_the_library():
    t = F.cast_rules_table().set_index("format")
    assert t.loc["FP6 E2M3", "cast by"] == "ml_dtypes" and t.loc["FP16", "cast by"] == "torch"
    assert set(t["beyond the largest finite value"]) <= set(F.CAST_OUTCOME_LABELS.values())
    assert t.loc["FP4 E2M1", "infinity"] == "saturate" and "nan" not in set(t["infinity"])  # written "NaN"
    assert t.loc["FP8 E4M3FN", "same for a 64-element tensor"] is True  # scalar and vectorised paths agree here
    assert t.loc["FP4 E2M1", "same for a 64-element tensor"] is None   # ml_dtypes: not a torch cast


def test_explorer_follows_the_library_in_node():
    """The format explorer's JS, run in node with this build's cast rules, agrees with decode on every
    test value (the browser test does the same in Chromium); a false rule makes it disagree."""
    import json
    import shutil
    import subprocess

    from format_cases import explorer_cases

    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    from pathlib import Path

    js_path = Path(__file__).resolve().parents[1] / "docs" / "assets" / "js" / "format-explorer.js"
    cases = [c for c in explorer_cases() if c["format"] in ("FP8 E4M3FN", "FP8 E4M3FNUZ", "FP8 E5M2FNUZ", "FP16",
                                                           "FP6 E2M3", "FP6 E3M2", "FP4 E2M1")]
    # float64 inputs just above a tie, closer than FP32's spacing: the library rounds them to FP32 first
    # (onto the tie), so an explorer that rounds the float64 once would give the upper neighbour
    assert {c["input"] for c in cases if c["format"] == "FP4 E2M1"} >= {repr(1.25 + 1.25 * 2.0 ** -40)}
    script = """
global.window = {}; global.document = {readyState: 'complete', querySelectorAll: () => []};
require(process.argv[1]);
const X = window.AmpFormatExplorer; const input = JSON.parse(require('fs').readFileSync(0, 'utf8'));
X.setCastRules(input.rules);
const num = (s) => s === 'nan' ? NaN : s === 'inf' ? Infinity : s === '-inf' ? -Infinity : Number(s);
let bad = 0;
for (const c of input.cases) if (X.encode(num(c.input), c.format) !== c.bits || X.decode(c.bits, c.format).cls !== c.cls) bad++;
console.log(bad);
"""

    def disagreements(rules):
        out = subprocess.run([node, "-e", script, str(js_path)], input=json.dumps({"cases": cases, "rules": rules}),
                             capture_output=True, text=True, check=True)
        return int(out.stdout.strip())

    rules = F.cast_rules()
    assert disagreements(rules) == 0
    flipped = {"FP8 E4M3FN": {k: ("nan" if v == "saturate" else "saturate") for k, v in rules["FP8 E4M3FN"].items()}}
    assert disagreements(flipped) > 0
