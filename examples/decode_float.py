"""Decode a number into sign / exponent / mantissa fields in several formats.

    python examples/decode_float.py            # pi
    python examples/decode_float.py 1e-5
    python examples/decode_float.py 65520 FP16 BF16
"""
# Install: pip install amp_docs_lib-*.whl  (the wheel: Downloads bar of any chapter page)

import argparse
import math

import pandas as pd

from amp_docs_lib.numbers.formats import DECODE_DEFAULT, decode_table, float_format_names


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("value", nargs="?", type=float, default=math.pi, help="the number to decode (default: pi)")
    p.add_argument("formats", nargs="*", default=list(DECODE_DEFAULT),
                   help=f"formats to decode into (default: {' '.join(DECODE_DEFAULT)}); "
                        f"valid: {', '.join(float_format_names())}")
    args = p.parse_args()
    unknown = [f for f in args.formats if f not in float_format_names()]
    if unknown:
        p.error(f"unknown format(s) {', '.join(unknown)}; valid: {', '.join(float_format_names())}")
    table = decode_table(args.value, args.formats)
    with pd.option_context("display.width", 200, "display.max_columns", None,
                           "display.float_format", "{:.10g}".format):
        print(f"{args.value!r} stored in each format, fields read from the stored bits:\n")
        print(table.to_string(index=False))


if __name__ == "__main__":
    main()
