"""The canonical AMP loop: autocast around forward + loss only, a GradScaler for FP16."""
# Install: pip install amp_docs_lib-*.whl  (the wheel: Downloads bar of any chapter page)
import torch
import torch.nn.functional as F

from amp_docs_lib.core.devices import default_device
from amp_docs_lib.core.profiles import active_profile
from amp_docs_lib.amp.toy_task import make_data, make_model

device = default_device()
x, y = make_data(device=device)
model = make_model().to(device)  # parameters stay FP32 (master weights)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
scaler = torch.amp.GradScaler(device)

for step in range(active_profile()["pattern_steps"]):
    optimizer.zero_grad(set_to_none=True)
    with torch.amp.autocast(device, dtype=torch.float16):
        output = model(x)
        loss = F.cross_entropy(output, y)
    scaler.scale(loss).backward()  # backward outside autocast, on the scaled loss
    scaler.step(optimizer)  # unscales; skips the step if a gradient is inf/NaN
    scaler.update()

print(f"final loss {loss.item():.4f}, output dtype {output.dtype}, loss scale {scaler.get_scale():g}")
