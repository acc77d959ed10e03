"""The smallest "bring your own model" script: one compiled training step.

    PYTHONPATH=python python3 -m schedlab_export --script python/zoo/train_step_example.py --out out/example
"""

import torch
import torch.nn as nn

model = nn.Sequential(nn.Linear(512, 2048), nn.GELU(), nn.Linear(2048, 512)).cuda()
x = torch.randn(64, 512, device="cuda")
torch.compile(model)(x).square().mean().backward()
