"""FP8 training with torchao: convert a model's linears, train, compare with BF16.

convert_to_float8_training swaps nn.Linear for Float8Linear; the recipe ("tensorwise" or
"rowwise") comes from Float8LinearConfig.from_recipe_name.

Where the FP8 GEMMs run: torch._scaled_mm (what torchao calls) runs on CUDA GPUs of compute
capability 8.9 or 9.0 and newer, and on the CPU; on an older CUDA GPU (A100, T4, ...) it raises.
There this script says so and asks torchao to emulate the FP8 GEMMs (Float8LinearConfig(emulate=True):
operands are still quantized to FP8, the product is a high-precision matmul), so the numerics are
FP8's and the speed is not.
"""
# Install: pip install torch torchao  (self-contained: no amp_docs_lib needed)

import dataclasses

import torch
from torch import nn
from torchao.float8 import Float8LinearConfig, convert_to_float8_training

STEPS, BATCH, WIDTH = 20, 64, 128          # FP8 GEMM dimensions must be multiples of 16


def fp8_setup(capability):
    """(device, emulate, reason) for a GPU of this compute capability; None means no CUDA GPU."""
    if capability is None:
        return "cpu", False, "no CUDA GPU: torch._scaled_mm runs on the CPU"
    sm = f"sm{capability[0]}{capability[1]}"
    if capability == (8, 9) or capability >= (9, 0):
        return "cuda", False, f"{sm}: FP8 tensor cores"
    return "cuda", True, (f"{sm} has no FP8 tensor cores: torch._scaled_mm raises there (it needs sm89 or "
                          "sm90+); falling back to torchao's emulated FP8 GEMMs (emulate=True)")


def rowwise_scales_run(device):
    """Whether this torch's _scaled_mm takes rowwise scales here (torch 2.11's CPU kernel takes
    per-tensor scales only); a 16x16 call tells."""
    a = torch.ones(16, 16, device=device).to(torch.float8_e4m3fn)
    try:
        torch._scaled_mm(a, a.t(), scale_a=torch.ones(16, 1, device=device), scale_b=torch.ones(1, 16, device=device),
                         out_dtype=torch.bfloat16)
    except RuntimeError:
        return False
    return True


def make_model(device):
    torch.manual_seed(0)                    # same initialisation for every run
    return nn.Sequential(nn.Linear(WIDTH, 4 * WIDTH), nn.GELU(), nn.Linear(4 * WIDTH, WIDTH),
                         nn.GELU(), nn.Linear(WIDTH, 16)).to(device)


def main():
    capability = torch.cuda.get_device_capability() if torch.cuda.is_available() else None
    device, emulate, reason = fp8_setup(capability)
    print(f"FP8 GEMMs: {reason}")
    g = torch.Generator().manual_seed(0)    # same data for every run
    teacher = torch.randn(WIDTH, 16, generator=g)
    batches = [torch.randn(BATCH, WIDTH, generator=g) for _ in range(STEPS)]
    batches = [(x.to(device), (x @ teacher).argmax(1).to(device)) for x in batches]

    for recipe in ("bf16", "tensorwise", "rowwise"):
        model = make_model(device)
        if recipe != "bf16":
            emulate_this = emulate
            if recipe == "rowwise" and not emulate and not rowwise_scales_run(device):
                print(f"rowwise: torch {torch.__version__}'s {device} _scaled_mm takes per-tensor scales only; "
                      "emulating its FP8 GEMMs (emulate=True)")
                emulate_this = True
            config = dataclasses.replace(Float8LinearConfig.from_recipe_name(recipe), emulate=emulate_this)
            convert_to_float8_training(model, config=config,
                                       module_filter_fn=lambda mod, fqn: fqn != "4")  # keep the output layer
        opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
        for x, y in batches:
            with torch.autocast(device, dtype=torch.bfloat16):
                loss = nn.functional.cross_entropy(model(x), y)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
        print(f"{recipe:10s} loss after {STEPS} steps: {loss.item():.4f}  ({type(model[0]).__name__} layers)")


if __name__ == "__main__":
    main()
