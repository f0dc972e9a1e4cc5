"""Issue 34 finding 17 (rest): the wave sweep times every n in the same interleaved rounds and gives each rate
relative to the last one-wave size with an interval. GPU-only entry point; the comparison runs on the CPU."""

import pytest

from amp_docs_lib.bench import waves
from amp_docs_lib.core import timing

pytestmark = pytest.mark.gpu_readiness


def test_every_n_is_timed_in_one_interleaved_call_against_the_last_one_wave_n(monkeypatch):
    calls = []
    real = timing.interleaved

    def recording(fns, **kw):
        calls.append((list(fns), kw["baseline"], kw["rounds"]))
        return real(fns, **{**kw, "min_block_s": 0.001, "warmup": 1})

    monkeypatch.setattr(waves, "interleaved", recording)
    sms = 4
    ns = waves.boundary_ns(64, sms, tile=(32, 16), steps=1)  # m=64: 2 tile rows, 2 columns fill one wave
    wv = waves.wave_comparison(64, 32, ns, sms, tile=(32, 16), rounds=5)
    assert ns == [16, 32, 48] and list(wv["waves"]) == [1, 1, 2]
    assert calls == [(["16", "32", "48"], "32", 5)]  # one call, all sizes, the last one-wave n as baseline
    base = wv.set_index("n").loc[32]
    assert base["verdict"] == "the baseline" and base["rate relative to the last one-wave n"] == 1.0
    for n in (16, 48):
        row = wv.set_index("n").loc[n]
        lo, hi = (float(x) for x in row["interval"].strip("[]").split(","))
        assert lo <= row["rate relative to the last one-wave n"] <= hi
        assert row["verdict"] in ("lower rate", "higher rate", "no difference resolved", timing.NOISE_FLOOR_TOO_HIGH)


def test_the_gpu_entry_point_still_refuses_a_cpu():
    with pytest.raises(ValueError, match="device must be 'cuda', got 'cpu'"):
        waves.wave_sweep(64, 64, [64, 128], device="cpu")
    with pytest.raises(ValueError, match="at least two values of n"):
        waves.wave_comparison(64, 64, [64], 4)
