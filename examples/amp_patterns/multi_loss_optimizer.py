"""Two losses and two optimizers sharing ONE GradScaler (one update per iteration)."""
# Install: pip install amp_docs_lib-*.whl  (the wheel: Downloads bar of any chapter page)
import torch
import torch.nn.functional as F

from amp_docs_lib.core.devices import default_device
from amp_docs_lib.core.profiles import active_profile
from amp_docs_lib.amp.toy_task import make_data, make_model

device = default_device()
x, y = make_data(device=device)
model = make_model().to(device)
student = make_model(hidden=16, seed=1).to(device)  # a second network, distilled from the first
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
student_optimizer = torch.optim.SGD(student.parameters(), lr=0.05, momentum=0.9)
scaler = torch.amp.GradScaler(device)

for step in range(active_profile()["pattern_steps"]):
    optimizer.zero_grad(set_to_none=True)
    student_optimizer.zero_grad(set_to_none=True)
    with torch.amp.autocast(device, dtype=torch.float16):
        output = model(x)
        loss = F.cross_entropy(output, y)
        student_loss = F.mse_loss(student(x), output.detach())
    scaler.scale(loss).backward()
    scaler.scale(student_loss).backward()
    scaler.step(optimizer)  # each optimizer is unscaled and inf-checked on its own
    scaler.step(student_optimizer)
    scaler.update()  # once, after all steps; backs off if either optimizer saw inf/NaN

print(f"final loss {loss.item():.4f}, student loss {student_loss.item():.4f}, loss scale {scaler.get_scale():g}")
