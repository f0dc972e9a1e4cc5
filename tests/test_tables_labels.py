"""Label columns (reader review 2026-11-24, finding 2): a text column of short values is as narrow as
its longest value instead of taking a prose column's 7em minimum, so fewer tables hide columns."""

import re

import pandas as pd

from amp_docs_lib.page.tables import SHORT_LABEL_CHARS, show_table, table_html


def classes(page: str) -> tuple[list[str], list[str]]:
    heads = re.findall(r'<th class="(amp-\w+)" scope="col">', page)
    first_row = re.findall(r'<td class="(amp-\w+)">', page)[: len(heads)]
    return heads, first_row


def test_short_text_columns_are_labels_and_prose_columns_stay_text():
    df = pd.DataFrame(
        {
            "regime": ["fp32", "amp_bf16"],
            "GradScaler": ["no", "yes"],
            "what": ["FP32 weights and math", "BF16 autocast with FP32 master weights"],
            "lr multiplier": [1.0, 1.0],
            "devices": ["cpu, cuda", None],  # None: n/a, still a label
        }
    )
    heads, cells = classes(table_html(df))
    assert heads == ["amp-label", "amp-label", "amp-text", "amp-num", "amp-label"]
    assert cells == heads


def test_the_label_limit_is_the_shown_text_not_the_value():
    at_limit, over = "x" * SHORT_LABEL_CHARS, "x" * (SHORT_LABEL_CHARS + 1)
    assert classes(table_html(pd.DataFrame({"a": [at_limit, "y"]})))[0] == ["amp-label"]
    assert classes(table_html(pd.DataFrame({"a": [over, "y"]})))[0] == ["amp-text"]
    # a column of booleans or of objects is shown as text: its formatted cells decide
    assert classes(table_html(pd.DataFrame({"ok": [True, False]})))[0] == ["amp-label"]


def test_repeated_column_names_are_classified_by_position():
    df = pd.DataFrame([["a", "a long sentence of prose, well past the label limit"]], columns=["x", "x"])
    assert classes(table_html(df))[0] == ["amp-label", "amp-text"]


def test_the_inline_key_columns_and_the_folded_full_table_classify_alike():
    df = pd.DataFrame({"recipe": ["Delayed"], "key defaults": ["margin=0, amax_history_len=1024"], "n": [3]})
    inline, fold = show_table(df, "recipes", columns=["recipe", "key defaults"])._repr_html_().split("<details")
    assert classes(inline)[0] == ["amp-label", "amp-text"]
    assert classes(fold)[0] == ["amp-label", "amp-text", "amp-num"]
