"""Benchmarking precision speedups correctly, laid out by workflow.

* ``timing``: the harness (``torch.utils.benchmark.Timer`` with a deliberate
  thread count, CUDA events with synchronisation, warm-up in the measured
  precision, median and IQR);
* ``mistakes``: the classic measurement mistakes, measured;
* ``matmul``: matmul throughput per dtype against size and alignment;
* ``peaks``: datasheet dense peaks of common GPUs and a CPU peak estimate;
* ``roofline``: the roofline model and plot;
* ``model_sweep``: GPT forward+backward step time per size and precision;
* ``memory``: the training-memory calculator against measurements;
* ``compile``: ``torch.compile`` with and without AMP; the profiler's top operators with dtypes;
* ``fidelity``: the harness against a direct ``Timer.blocked_autorange``;
* ``cli``: ``amp-docs bench``.
"""
