"""The results-table columns that ``quantization.results.decision_table`` reads, for tests that build rows by hand."""

DECISION_INPUT_COLUMNS = [
    "variant",
    "runtime",
    "accuracy",
    "weight payload (KiB)",
    "weight codes (KiB)",
    "speedup vs same runtime's FP32 (x)",
    "interval vs same runtime's FP32",
    "verdict vs same runtime's FP32",
]
