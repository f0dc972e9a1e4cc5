"""Tile and wave quantization (the model), CUDA-graph and fast-accumulation entry points on a CPU."""

import itertools
import statistics

import pytest
import torch

from amp_docs_lib.bench import cuda_graphs, waves
from amp_docs_lib.core import timing
from amp_docs_lib.core.timing import AA_SUFFIX, NOISE_FLOOR_TOO_HIGH, UNRESOLVED, Interleaved, Timing
from amp_docs_lib.fp8 import gemm
from amp_docs_lib.gpt import GPT, GPTConfig, random_batch


def _brute_force(m, n, sms, tile):
    """Tiles and waves by enumerating the output's tiles and dealing them to SMs one wave at a time."""
    tiles = list(itertools.product(range(0, m, tile[0]), range(0, n, tile[1])))
    count, waves_, useful = len(tiles), 0, 0
    while tiles:
        wave, tiles = tiles[:sms], tiles[sms:]
        waves_ += 1
        useful += sum(min(tile[0], m - i) * min(tile[1], n - j) for i, j in wave)
    return count, waves_, useful


@pytest.mark.parametrize(
    "m,n,sms,tile",
    [
        (1792, 1792, 108, (256, 128)),
        (1792, 2048, 108, (256, 128)),
        (1793, 1792, 108, (256, 128)),
        (8192, 640, 132, (256, 128)),
        (100, 70, 3, (32, 16)),
    ],
)
def test_wave_model_matches_dealing_the_tiles_out(m, n, sms, tile):
    t, w, useful = _brute_force(m, n, sms, tile)
    got = waves.wave_model(m, n, sms, tile)
    assert (got["tiles"], got["waves"]) == (t, w)
    assert got["useful work"] == pytest.approx(useful / (w * sms * tile[0] * tile[1]))
    assert got["last wave: SMs busy"] == t - (w - 1) * sms


def test_the_guides_example_one_wave_then_two():
    # 1792 = 7 tile rows; 15 tile columns (1920) is 105 tiles, one wave on 108 SMs; 16 columns is 112 tiles, two.
    ns = waves.boundary_ns(1792, 108)
    table = waves.wave_table(1792, ns).set_index("n")
    assert table.loc[1920, "waves"] == 1 and table.loc[2048, "waves"] == 2
    assert table.loc[2048, "last wave: SMs busy"] == 4
    assert table.loc[2048, "useful work"] < 0.6 < table.loc[1920, "useful work"]
    assert ns == [1664, 1792, 1920, 2048, 2176]


@pytest.mark.parametrize("bad", [0, -5, 1.5, True, "8"])
def test_bad_sizes_are_named(bad):
    with pytest.raises(ValueError, match="must be a positive int"):
        waves.wave_model(bad, 128, 108)
    with pytest.raises(ValueError, match="sms must be a positive int"):
        waves.wave_model(128, 128, bad)


def test_gpu_only_entry_points_refuse_a_cpu_clearly():
    with pytest.raises(ValueError, match="device must be 'cuda', got 'cpu'"):
        waves.wave_sweep(64, 64, [64], device="cpu")
    with pytest.raises(ValueError, match="CUDA graphs need a CUDA device, got 'cpu'"):
        cuda_graphs.graph_comparison(
            GPTConfig(vocab_size=16, block_size=8, n_layer=1, n_head=1, n_embd=8), 2, device="cpu"
        )
    cfg = GPTConfig(vocab_size=16, block_size=8, n_layer=1, n_head=1, n_embd=8)
    model = GPT(cfg)
    with pytest.raises(ValueError, match=r"'amp_fp16' cannot be captured whole; choose one of"):
        cuda_graphs.eager_and_graphed(model, random_batch(cfg, 2, torch.device("cpu")), "amp_fp16")
    with pytest.raises(ValueError, match="need the model on a CUDA device, got 'cpu'"):
        cuda_graphs.eager_and_graphed(model, random_batch(cfg, 2, torch.device("cpu")), "fp32")


GEMMS = ["BF16 torch.mm", "FP8 _scaled_mm, use_fast_accum=False", "FP8 _scaled_mm, use_fast_accum=True"]


def test_fast_accum_speed_times_three_gemms_on_a_cpu():
    t = gemm.fast_accum_speed(32, device="cpu", rounds=5)
    assert list(t["GEMM"]) == [*GEMMS, "fast accumulation against without"]
    assert (t["TFLOP/s"].iloc[:3] > 0).all()
    with pytest.raises(ValueError, match="multiple of 16, got 30"):
        gemm.fast_accum_speed(30, device="cpu")


# Constructed timings (issue 35 finding 23): per-round block means where every ratio is known, so the
# verdict the table prints is the one its inputs determine, not any of the three.
BF16_S = [1.0, 1.03, 0.98, 1.01, 0.99, 1.02, 0.97, 1.0, 1.04]  # the baseline's block mean per round (s)
QUIET_AA = [1.01, 0.99, 1.02, 0.98, 1.0, 1.01, 0.99, 1.02, 0.98]  # its A/A arm / itself: an interval holding 1
NOISY_AA = [1.2] * 9  # an A/A arm 20% slower every round: the control resolves a difference


def _constructed(fast_over_slow, aa=QUIET_AA):
    """A stand-in for ``core.timing.interleaved``: FP8 without fast accumulation takes 0.8 of BF16's time
    each round, with it ``fast_over_slow`` (per round) of that; the GEMMs themselves still run once."""

    def interleaved(fns, *, baseline, device, rounds):
        assert list(fns) == GEMMS and baseline == GEMMS[0] and rounds == len(BF16_S)
        for fn in fns.values():
            fn()
        slow = [t * 0.8 for t in BF16_S]
        blocks = dict(
            zip(GEMMS, [BF16_S, slow, [s * k for s, k in zip(slow, fast_over_slow, strict=True)]], strict=True)
        )
        timings = {
            n: Timing(n, statistics.median(b), 0.0, len(b), 1, 1, "cpu", "constructed") for n, b in blocks.items()
        }
        aa_blocks = [t * k for t, k in zip(BF16_S, aa, strict=True)]
        aa_timing = Timing(GEMMS[0] + AA_SUFFIX, statistics.median(aa_blocks), 0.0, 9, 1, 1, "cpu", "constructed")
        return Interleaved(timings, blocks, baseline, aa_timing=aa_timing, aa_block_times=aa_blocks)

    return interleaved


@pytest.mark.parametrize(
    "fast_over_slow,aa,verdict",
    [
        ([0.5] * 9, QUIET_AA, "faster: 2.00x [2.00, 2.00]"),
        ([1.25] * 9, QUIET_AA, "slower: 0.80x [0.80, 0.80]"),
        # ratios from 1/1.1 to 1/0.9, median 1.05: the interval overlaps the A/A control's, so no verdict
        ([0.9, 1.1, 0.95, 0.95, 0.95, 0.9, 1.1, 1.05, 1.0], QUIET_AA, f"{UNRESOLVED}: 1.05x [0.90, 1.12]"),
        # a factor of two, but the set's own control resolved a difference: no verdict on it
        ([0.5] * 9, NOISY_AA, f"{NOISE_FLOOR_TOO_HIGH}: 2.00x [2.00, 2.00]"),
    ],
)
def test_fast_accum_speed_prints_the_verdict_its_timings_determine(monkeypatch, fast_over_slow, aa, verdict):
    monkeypatch.setattr(timing, "interleaved", _constructed(fast_over_slow, aa))
    t = gemm.fast_accum_speed(32, device="cpu", rounds=len(BF16_S)).set_index("GEMM")
    assert t.loc["fast accumulation against without", "verdict"] == verdict
    # each FP8 GEMM against BF16: 1 / 0.8 without fast accumulation, 1 / (0.8 * k) with it
    assert t.loc[GEMMS[1], "speed vs BF16"] == "1.25x [1.25, 1.25]"
    expected_vs_bf16 = "faster" if aa is QUIET_AA else NOISE_FLOOR_TOO_HIGH
    assert t.loc[GEMMS[1], "verdict"] == expected_vs_bf16
