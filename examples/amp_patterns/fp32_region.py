"""An FP32 region inside autocast: autocast(enabled=False), with inputs cast by hand."""
# Install: pip install amp_docs_lib-*.whl  (the wheel: Downloads bar of any chapter page)
import torch
import torch.nn.functional as F

from amp_docs_lib.core.devices import default_device
from amp_docs_lib.core.profiles import active_profile
from amp_docs_lib.amp.toy_task import make_data, make_model

device = default_device()
x, y = make_data(device=device)
model = make_model().to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
scaler = torch.amp.GradScaler(device)

for step in range(active_profile()["pattern_steps"]):
    optimizer.zero_grad(set_to_none=True)
    with torch.amp.autocast(device, dtype=torch.float16):
        output = model(x)
        with torch.amp.autocast(device, enabled=False):  # everything here runs as written
            logits = output.float()  # FP16 inputs are NOT cast back for you: do it explicitly
            loss = F.cross_entropy(logits, y)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()

print(f"final loss {loss.item():.4f}, output dtype {output.dtype}, logits dtype {logits.dtype}")
