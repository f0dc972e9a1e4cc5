"""Print the number-format table: limits from torch.finfo / ml_dtypes (TF32 from its definition).

    python examples/format_table.py
"""
# Install: pip install amp_docs_lib-*.whl  (the wheel: Downloads bar of any chapter page)

import pandas as pd

from amp_docs_lib.numbers.formats import format_table


def main() -> None:
    table = format_table().drop(columns=["NaN encoding"])
    with pd.option_context("display.width", 250, "display.max_columns", None,
                           "display.float_format", "{:.6g}".format):
        print(table.to_string(index=False))
    print("\ndecimal digits = (mantissa bits + 1) * log10(2); None where a limit does not apply "
          "(min subnormal of a format without subnormals, min normal of an integer).")


if __name__ == "__main__":
    main()
