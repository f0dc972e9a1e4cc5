"""Checkpointing with AMP: save and restore the GradScaler's state with model and optimizer."""
# Install: pip install amp_docs_lib-*.whl  (the wheel: Downloads bar of any chapter page)
import io

import torch
import torch.nn.functional as F

from amp_docs_lib.core.devices import default_device
from amp_docs_lib.core.profiles import active_profile
from amp_docs_lib.amp.toy_task import make_data, make_model

device = default_device()
x, y = make_data(device=device)
model = make_model().to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
scaler = torch.amp.GradScaler(device, growth_interval=10)  # short interval so the state changes

for step in range(active_profile()["pattern_steps"]):
    optimizer.zero_grad(set_to_none=True)
    with torch.amp.autocast(device, dtype=torch.float16):
        output = model(x)
        loss = F.cross_entropy(output, y)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()

checkpoint = io.BytesIO()  # a file path in real training
torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
            "scaler": scaler.state_dict()}, checkpoint)  # after update(), never mid-iteration

checkpoint.seek(0)
state = torch.load(checkpoint, map_location=device)
resumed = torch.amp.GradScaler(device)  # constructor defaults are overwritten by load_state_dict
resumed.load_state_dict(state["scaler"])
print(f"final loss {loss.item():.4f}")
print(f"saved scaler state   {scaler.state_dict()}")
print(f"restored scaler state {resumed.state_dict()}")
