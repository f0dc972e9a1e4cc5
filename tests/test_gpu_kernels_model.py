"""Tile and wave quantization (the model), CUDA-graph and fast-accumulation entry points on a CPU."""

import itertools

import pytest
import torch

from amp_docs_lib.bench import cuda_graphs, waves
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


@pytest.mark.parametrize("m,n,sms,tile", [(1792, 1792, 108, (256, 128)), (1792, 2048, 108, (256, 128)),
                                          (1793, 1792, 108, (256, 128)), (8192, 640, 132, (256, 128)),
                                          (100, 70, 3, (32, 16))])
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
        cuda_graphs.graph_comparison(GPTConfig(vocab_size=16, block_size=8, n_layer=1, n_head=1, n_embd=8), 2,
                                     device="cpu")
    cfg = GPTConfig(vocab_size=16, block_size=8, n_layer=1, n_head=1, n_embd=8)
    model = GPT(cfg)
    with pytest.raises(ValueError, match=r"'amp_fp16' cannot be captured whole; choose one of"):
        cuda_graphs.eager_and_graphed(model, random_batch(cfg, 2, torch.device("cpu")), "amp_fp16")
    with pytest.raises(ValueError, match="need the model on a CUDA device, got 'cpu'"):
        cuda_graphs.eager_and_graphed(model, random_batch(cfg, 2, torch.device("cpu")), "fp32")


def test_fast_accum_speed_times_three_gemms_interleaved_and_compares_fast_with_slow():
    t = gemm.fast_accum_speed(32, device="cpu", rounds=5)
    assert list(t["GEMM"]) == ["BF16 torch.mm", "FP8 _scaled_mm, use_fast_accum=False",
                               "FP8 _scaled_mm, use_fast_accum=True", "fast accumulation against without"]
    assert (t["TFLOP/s"].iloc[:3] > 0).all()
    assert t["verdict"].iloc[-1].split(":")[0] in ("faster", "slower", "no difference resolved")
    with pytest.raises(ValueError, match="multiple of 16, got 30"):
        gemm.fast_accum_speed(30, device="cpu")
