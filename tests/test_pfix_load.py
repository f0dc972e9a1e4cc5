"""Performance reader finding 2 (issue 34): where the load check found the machine busy, no table of the
page shows a verdict: LoadCheck.withhold_verdicts is the one place, and the CPU peak table withholds the FMA
units it would infer from a rate measured on a busy machine."""

import pandas as pd

from amp_docs_lib.bench import load, peaks


def _check(runnable):
    return load.LoadCheck(
        cores=2, threads=1, before=[1e-3, 1e-3], load_before=None, runnable=[runnable], after=[1e-3, 1e-3]
    )


def test_a_busy_check_withholds_every_verdict_column_and_keeps_the_numbers(monkeypatch):
    monkeypatch.delenv("AMP_DOCS_LOAD_CHECK", raising=False)
    df = pd.DataFrame(
        {
            "n": [255, 256],
            "interval": ["[1.64, 2.44]", None],
            "verdict": ["higher rate", None],
            "verdict fp16": ["faster", "slower"],
        }
    )
    busy, quiet = _check(runnable=9), _check(runnable=1)
    assert not busy.quiet and quiet.quiet
    shown = busy.withhold_verdicts(df)
    assert shown["verdict"].iloc[0] == load.WITHHELD and pd.isna(shown["verdict"].iloc[1])  # empty cells stay empty
    assert list(shown["verdict fp16"]) == [load.WITHHELD, load.WITHHELD]
    assert shown[["n", "interval"]].equals(df[["n", "interval"]])
    assert df["verdict"].iloc[0] == "higher rate"  # the caller's frame is left alone
    assert quiet.withhold_verdicts(df) is df


def test_the_cpu_peak_table_withholds_its_inference_from_a_busy_rate():
    def units(table):
        return table.set_index("quantity").loc["FMA units per core, from the measurement", "value"]

    assert units(peaks.cpu_peak_table(1e-3, quiet=False)) == load.WITHHELD
    assert units(peaks.cpu_peak_table(1e-3, quiet=True)) != load.WITHHELD


def test_the_check_log_counts_the_busy_checks(monkeypatch):
    # performance reader finding 12: the page says how many of its load checks found the machine busy
    monkeypatch.delenv("AMP_DOCS_LOAD_CHECK", raising=False)
    log = load.CheckLog([_check(runnable=9), _check(runnable=1), _check(runnable=9)])
    assert log.summary().startswith("2 of the 3 load checks of this chapter found the machine busy")
    assert load.CheckLog([_check(runnable=9)]).summary().startswith("1 of the 1 ")
    unfinished = load.LoadCheck(cores=2, threads=1, before=[1e-3], load_before=None, runnable=[9])
    assert load.CheckLog([unfinished]).summary().startswith("0 of the 0 ")
