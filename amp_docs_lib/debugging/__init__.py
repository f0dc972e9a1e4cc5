"""Tools for finding where numerics break, laid out by workflow.

- :mod:`~amp_docs_lib.debugging.models`: a deliberately unstable model with planted faults.
- :mod:`~amp_docs_lib.debugging.locate`: forward and backward hooks naming the first module
  that produces inf or NaN, and the same run under ``torch.autograd.detect_anomaly``.
- :mod:`~amp_docs_lib.debugging.stats`: per-layer statistics (mean, std, max abs, fractions of
  zeros, subnormals, infs, NaNs) and their FP32-against-AMP comparison.
- :mod:`~amp_docs_lib.debugging.bisect`: lower precision module by module to find the
  sensitive layer.
"""
