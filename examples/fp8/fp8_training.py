"""FP8 training with torchao: convert a model's linears, train, compare with BF16.

convert_to_float8_training swaps nn.Linear for Float8Linear; the recipe ("tensorwise" or
"rowwise") comes from Float8LinearConfig.from_recipe_name. On a CPU or a GPU without FP8
tensor cores the FP8 GEMMs run as reference (emulated) kernels: same numerics, no speedup.
"""

import torch
from torch import nn
from torchao.float8 import Float8LinearConfig, convert_to_float8_training

device = "cuda" if torch.cuda.is_available() else "cpu"
STEPS, BATCH, WIDTH = 20, 64, 128          # FP8 GEMM dimensions must be multiples of 16


def make_model():
    torch.manual_seed(0)                    # same initialisation for every run
    return nn.Sequential(nn.Linear(WIDTH, 4 * WIDTH), nn.GELU(), nn.Linear(4 * WIDTH, WIDTH),
                         nn.GELU(), nn.Linear(WIDTH, 16)).to(device)


g = torch.Generator().manual_seed(0)        # same data for every run
teacher = torch.randn(WIDTH, 16, generator=g)
batches = [torch.randn(BATCH, WIDTH, generator=g) for _ in range(STEPS)]
batches = [(x.to(device), (x @ teacher).argmax(1).to(device)) for x in batches]

for recipe in ("bf16", "tensorwise", "rowwise"):
    model = make_model()
    if recipe != "bf16":
        convert_to_float8_training(model, config=Float8LinearConfig.from_recipe_name(recipe),
                                   module_filter_fn=lambda mod, fqn: fqn != "4")  # keep the output layer
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    for x, y in batches:
        with torch.autocast(device, dtype=torch.bfloat16):
            loss = nn.functional.cross_entropy(model(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    print(f"{recipe:10s} loss after {STEPS} steps: {loss.item():.4f}  "
          f"({type(model[0]).__name__} layers)")
