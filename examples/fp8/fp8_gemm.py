"""FP8 GEMM with torch._scaled_mm: quantize, multiply, and the scale convention.

scaled_mm computes (A_fp8 @ B_fp8) * scale_a * scale_b, so the scales it takes are
DEQUANTIZATION scales: 1 / s, where s = 448 / amax was used to make A_fp8 = fp8(A * s).
Runs on the CPU and on CUDA GPUs with FP8 (compute capability 8.9 or 9.0+). On other CUDA GPUs
torch._scaled_mm raises ("only supported on CUDA devices with compute capability >= 9.0 or 8.9"),
so there this script runs on the CPU, and says so. Older torch releases (2.11) accept only
per-tensor scales on the CPU; the rowwise case then says so instead of running.
"""
# Install: pip install torch  (self-contained: no amp_docs_lib needed)

import torch

E4M3_MAX = torch.finfo(torch.float8_e4m3fn).max  # 448.0
capability = torch.cuda.get_device_capability() if torch.cuda.is_available() else None
fp8_gpu = capability is not None and (capability == (8, 9) or capability >= (9, 0))
device = "cuda" if fp8_gpu else "cpu"
if capability is not None and not fp8_gpu:
    print(f"sm{capability[0]}{capability[1]} has no FP8 GEMMs (torch._scaled_mm would raise): running on the CPU")


def to_fp8(x, rowwise=False):
    """Return (x_fp8, dequant_scale): per-tensor or per-row scaling into E4M3."""
    amax = x.abs().amax(dim=1, keepdim=True) if rowwise else x.abs().amax()
    s = E4M3_MAX / amax.float().clamp(min=1e-12)       # quantization scale
    x_fp8 = (x * s).clamp(-E4M3_MAX, E4M3_MAX).to(torch.float8_e4m3fn)
    return x_fp8, (1.0 / s).float()                     # scaled_mm wants 1 / s


torch.manual_seed(0)
M = K = N = 256
a = torch.randn(M, K, device=device)          # activations (row-major)
w = torch.randn(N, K, device=device) * 0.02   # weight (row-major, as nn.Linear stores it)
ref = a.double() @ w.double().t()

for rowwise in (False, True):
    a8, sa = to_fp8(a, rowwise)
    w8, sw = to_fp8(w, rowwise)
    sw = sw.reshape(1, -1) if rowwise else sw     # rowwise: (M, 1) for A, (1, N) for B
    # mat_b must be column-major: the transpose of a row-major (N, K) tensor is.
    try:
        out = torch._scaled_mm(a8, w8.t(), scale_a=sa, scale_b=sw, out_dtype=torch.bfloat16)
    except RuntimeError as e:  # older torch (2.11): the CPU kernel takes per-tensor scales only
        print(f"rowwise    not supported by this torch's {device} _scaled_mm ({torch.__version__}): "
              f"{str(e).splitlines()[0][:90]}")
        continue
    err = ((out.double() - ref).norm() / ref.norm()).item()
    print(f"{'rowwise' if rowwise else 'tensorwise':10s} relative error vs float64: {err:.4f}")

# The classic mistake: passing the quantization scales s instead of 1 / s.
a8, sa = to_fp8(a)
w8, sw = to_fp8(w)
wrong = torch._scaled_mm(a8, w8.t(), scale_a=1 / sa, scale_b=1 / sw, out_dtype=torch.float32)
factor = ((wrong.double() * ref).sum() / (ref * ref).sum()).item()
print(f"wrong convention: output is {factor:.3g} x too large; expected (s_a * s_b)^2 = "
      f"{((1 / sa) * (1 / sw)).item() ** 2:.3g}")
