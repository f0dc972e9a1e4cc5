"""NVFP4 (amp_docs_lib.fp8.nvfp4) and DeepSeek-V3-style tiles / accumulation (amp_docs_lib.fp8.fine_grained)."""

import pytest
import torch

from amp_docs_lib.fp8 import fine_grained as FG
from amp_docs_lib.fp8 import nvfp4 as N


def _known_tensor():
    x = torch.zeros(2, 16)
    x[0, :4] = torch.tensor([6.0, 3.0, 1.5, 0.8])
    x[1, :2] = torch.tensor([5.0, -2.5])
    return x


def test_nvfp4_of_a_known_tensor_matches_the_hand_computation():
    # Tensor scale 6 / (448 * 6). Row 0: block scale (6/6)/ts = 448 (exact in E4M3), elements x itself
    # (up to FP32 rounding of 1/ts); 0.8 rounds to FP4's nearest value, 1.0.
    # Row 1: (5/6)/ts = 373.3 -> E4M3 384; 5 * 2688/(6*384) = 5.83 -> FP4 6 -> 6 * 384 * ts = 36/7;
    # -2.5 -> -2.92 -> -3 -> -18/7.
    q = N.nvfp4_quantize(_known_tensor())
    assert float(q.tensor_scale) == pytest.approx(6 / 2688)
    assert q.block_scale_e4m3.float().tolist() == [[448.0], [384.0]]
    expected = torch.zeros(2, 16)
    expected[0, :4] = torch.tensor([6.0, 3.0, 1.5, 1.0])
    expected[1, :2] = torch.tensor([36 / 7, -18 / 7])
    torch.testing.assert_close(q.dequantized, expected, rtol=1e-6, atol=0)
    assert not q.scale_clamped.any()


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_nvfp4_agrees_with_torchao_bit_for_bit(seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(32, 256, generator=g) * 10.0 ** torch.randint(-3, 3, (32, 1), generator=g).float()
    q = N.nvfp4_quantize(x)
    scales, codes, deq = N.torchao_nvfp4(x)
    assert torch.equal(q.block_scale_e4m3.view(torch.uint8), scales.view(torch.uint8))
    assert torch.equal(q.codes, codes)
    assert torch.equal(q.dequantized, deq)
    assert torch.equal(N.torchao_nvfp4(_known_tensor())[2], N.nvfp4_quantize(_known_tensor()).dequantized)


def test_nvfp4_block_amax_within_e4m3_rounding_and_beats_mxfp4_on_gaussian():
    x = N.gaussian_blocks(64, 512, seed=3)
    df = N.fp4_block_comparison({"g": x}).set_index("scheme")
    assert df.loc["NVFP4", "max block-amax relative error"] <= 2.0 ** -4
    assert df.loc["MXFP4", "max block-amax relative error"] > 2.0 ** -4  # power-of-two scales: no such bound
    assert df.loc["NVFP4", "SQNR (dB)"] > df.loc["MXFP4", "SQNR (dB)"]
    assert df.loc["NVFP4", "bits per element"] == 4.5 and df.loc["MXFP4", "bits per element"] == 4.25
    assert df.loc["MXFP4", "blocks below E4M3's range"] is None


def test_nvfp4_blocks_far_below_the_tensor_amax_hit_e4m3s_range():
    x = N.gaussian_blocks(2, 32, seed=0)
    x[1, 16:] *= 1e-6  # block amax / tensor amax < 2^-6 / 448
    q = N.nvfp4_quantize(x)
    assert q.scale_clamped.tolist() == [[False, False], [False, True]]
    assert int(N.fp4_block_comparison({"x": x}).iloc[0]["blocks below E4M3's range"]) == 1


def test_nvfp4_rejects_bad_input():
    with pytest.raises(ValueError, match="multiple of the NVFP4 block size"):
        N.nvfp4_quantize(torch.randn(2, 24))
    with pytest.raises(ValueError, match="2-D"):
        N.nvfp4_quantize(torch.randn(2, 2, 16))
    with pytest.raises(TypeError, match="floating-point"):
        N.nvfp4_quantize(torch.ones(2, 16, dtype=torch.int32))
    with pytest.raises(ValueError, match="tensor_scale"):
        N.nvfp4_quantize(torch.randn(2, 16), tensor_scale=0.0)


def test_tiles_scale_each_tile_by_its_own_amax_and_isolate_an_outlier():
    x = torch.randn(2, 256, generator=torch.Generator().manual_seed(0))
    q = FG.quantize_tiles(x, (1, 128))
    amax = x.reshape(2, 2, 128).abs().amax(-1)
    torch.testing.assert_close(q.scale.reshape(2, 2, 128)[..., 0], 448.0 / amax)
    y = x.clone()
    y[0, 0] = 1e6
    qy = FG.quantize_tiles(y, (1, 128))
    same = torch.ones(2, 256, dtype=torch.bool)
    same[0, :128] = False  # only the outlier's tile may change
    assert torch.equal(qy.dequantized[same], q.dequantized[same])
    assert not torch.equal(qy.dequantized[0, 1:128], q.dequantized[0, 1:128])


def test_tiles_beat_per_tensor_scaling_with_outliers():
    x, mask = FG.outlier_tensor(128, 256, n_outliers=2, factor=1e4)
    t = FG.tile_vs_tensor(x, mask).set_index("scaling")
    assert t.loc["1x128 tiles", "SQNR (dB)"] > t.loc["per-tensor", "SQNR (dB)"]
    assert t.loc["1x128 tiles", "flushed to zero"] < t.loc["per-tensor", "flushed to zero"]
    assert (~mask).sum() == 2


def test_quantize_tiles_rejects_bad_tiles():
    for bad in ((1, 100), (0, 128), [1, 128], (1.0, 128)):
        with pytest.raises(ValueError, match="tile"):
            FG.quantize_tiles(torch.randn(4, 256), bad)


def test_round_significand_hand_values():
    one = torch.tensor([1 + 2.0 ** -14, 1 + 3 * 2.0 ** -14, -(1 + 3 * 2.0 ** -14), 0.0], dtype=torch.float64)
    assert FG.round_significand(one, 14).tolist() == [1.0, 1 + 2.0 ** -12, -(1 + 2.0 ** -12), 0.0]
    assert FG.round_significand(one, 14, "toward_zero").tolist() == [1.0, 1 + 2.0 ** -13, -(1 + 2.0 ** -13), 0.0]
    with pytest.raises(ValueError, match="rounding"):
        FG.round_significand(one, 14, "up")
    with pytest.raises(ValueError, match="bits"):
        FG.round_significand(one, 0)


def test_limited_accumulator_swamps_and_promotion_restores_the_sum():
    # Summing 512 ones with 8 significant bits stops at 256 (256 + 1 is a tie that rounds back to 256);
    # promoting every 128 products to FP32 gives the exact 512.
    a, b = torch.ones(1, 512), torch.ones(512, 1)
    assert FG.limited_precision_matmul(a, b, bits=8).item() == 256.0
    assert FG.limited_precision_matmul(a, b, bits=8, promote_every=128).item() == 512.0
    g = torch.Generator().manual_seed(0)
    a, b = torch.randn(3, 64, generator=g), torch.randn(64, 2, generator=g)
    torch.testing.assert_close(FG.limited_precision_matmul(a, b, bits=53), (a.double() @ b.double()).float())
    with pytest.raises(ValueError, match="promote_every"):
        FG.limited_precision_matmul(a, b, promote_every=0)
    with pytest.raises(ValueError, match="matrices"):
        FG.limited_precision_matmul(a, a)


@pytest.mark.parametrize("rounding", FG.ROUNDINGS)
def test_promotion_reduces_the_emulated_error(rounding):
    st = FG.accumulation_study(m=2, n=2, k=1024, rounding=rounding)
    assert FG.promotion_gain(st) > 1
    assert st["relative error"].iloc[2] < st["relative error"].iloc[1]  # FP32 best


def test_nvfp4_block_scale_floor_is_torchaos_choice():
    x = N.wide_range_blocks()
    clamped, free = N.nvfp4_quantize(x), N.nvfp4_quantize(x, scale_floor="none")
    low = clamped.scale_clamped
    assert bool(low.any())
    # torchao's rule: the scale of a low block is E4M3's smallest normal; without the floor it is subnormal or 0
    assert bool((clamped.block_scale_e4m3.float()[low] == 2.0 ** -6).all())
    free_low = free.block_scale_e4m3.float()[low]
    assert bool((free_low <= 2.0 ** -6).all()) and bool((free_low < 2.0 ** -6).any())  # rounding may reach 2^-6
    assert torch.equal(clamped.block_scale_e4m3[~low].view(torch.uint8), free.block_scale_e4m3[~low].view(torch.uint8))
    t = N.scale_floor_comparison({"wide": x}).set_index("block scale floor")
    assert set(t["blocks below E4M3's normal range"]) == {int(low.sum())}
    with pytest.raises(ValueError, match="valid"):
        N.nvfp4_quantize(x, scale_floor="te")
