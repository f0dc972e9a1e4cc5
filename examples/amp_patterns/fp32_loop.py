"""Baseline: a plain FP32 training loop. Every AMP pattern is shown as a diff against this file."""
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

for step in range(active_profile()["pattern_steps"]):
    optimizer.zero_grad(set_to_none=True)
    output = model(x)
    loss = F.cross_entropy(output, y)
    loss.backward()
    optimizer.step()

print(f"final loss {loss.item():.4f}")
