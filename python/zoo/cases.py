"""The model zoo the exporter runs on the GPU: what users train, small enough
that the exported graphs stay a few tens of kilobytes each.

Each case is a function that compiles and runs one training (or inference)
step; run_zoo.py wraps each in schedlab_export.capture(prefix=<case name>).
Distributed cases run on one GPU with the fake process group
(torch.testing._internal.distributed.fake_pg): collectives are compiled and
scheduled like real ones, and do nothing at run time.
"""

from __future__ import annotations

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

WORLD_SIZE = 8
DEVICE = "cuda"


# --- single GPU --------------------------------------------------------------
class Block(nn.Module):
    """Pre-LayerNorm transformer block: causal self-attention and a GELU MLP."""

    def __init__(self, dim: int, heads: int):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.ln2 = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, 4 * dim)
        self.fc2 = nn.Linear(4 * dim, dim)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).view(b, t, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(a.transpose(1, 2).reshape(b, t, d))
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))


def _transformer(dim: int, heads: int, layers: int, batch: int, seq: int, dtype: torch.dtype):
    def run():
        model = nn.Sequential(*[Block(dim, heads) for _ in range(layers)]).to(DEVICE, dtype)
        x = torch.randn(batch, seq, dim, device=DEVICE, dtype=dtype)
        torch.compile(model)(x).float().pow(2).mean().backward()

    return run


def convnet_bn():
    """Conv-BatchNorm-ReLU stack in training mode: BatchNorm updates its running
    statistics in place (mutations of graph inputs)."""
    layers = []
    channels = [3, 32, 64, 64]
    for cin, cout in zip(channels, channels[1:]):
        layers += [nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(), nn.MaxPool2d(2)]
    model = nn.Sequential(*layers, nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, 10)).to(DEVICE).train()
    x = torch.randn(16, 3, 64, 64, device=DEVICE)
    y = torch.randint(0, 10, (16,), device=DEVICE)
    F.cross_entropy(torch.compile(model)(x), y).backward()


class CheckpointedMLP(nn.Module):
    """Residual GELU MLP blocks under activation checkpointing (non-reentrant):
    the backward graph recomputes each block's activations."""

    def __init__(self, dim: int, blocks: int):
        super().__init__()
        self.blocks = nn.ModuleList(
            nn.Sequential(nn.LayerNorm(dim), nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))
            for _ in range(blocks)
        )

    def forward(self, x):
        for block in self.blocks:
            x = x + checkpoint(block, x, use_reentrant=False)
        return x


def mlp_checkpoint():
    model = CheckpointedMLP(512, 4).to(DEVICE)
    x = torch.randn(256, 512, device=DEVICE, requires_grad=True)
    torch.compile(model)(x).sum().backward()


def adamw_step():
    """A compiled AdamW step (foreach implementation) over a small model's
    parameters: foreach kernels, in-place updates of parameters and state."""
    model = nn.Sequential(nn.Linear(256, 512), nn.GELU(), nn.Linear(512, 256), nn.LayerNorm(256)).to(DEVICE)
    for p in model.parameters():
        p.grad = torch.randn_like(p)
    opt = torch.optim.AdamW(model.parameters(), lr=torch.tensor(1e-3, device=DEVICE), foreach=True, capturable=True)

    @torch.compile
    def step():
        opt.step()

    step()


# --- distributed, fake process group ------------------------------------------
def init_fake_process_group() -> None:
    from torch.testing._internal.distributed.fake_pg import FakeStore

    if not dist.is_initialized():
        dist.init_process_group("fake", store=FakeStore(), rank=0, world_size=WORLD_SIZE)


def _funcol():
    import torch.distributed._functional_collectives as funcol

    return funcol


def fsdp_train():
    """FSDP-style: each layer's weight is a 1/world shard, all-gathered before
    use (autograd: its backward is a reduce-scatter of the weight's gradient)."""
    funcol = _funcol()
    group = dist.group.WORLD
    dim, layers = 1024, 4
    shards = [
        (torch.randn(dim * dim // WORLD_SIZE, device=DEVICE, dtype=torch.bfloat16) * 0.02).requires_grad_()
        for _ in range(layers)
    ]

    def forward(x, *shards):
        for shard in shards:
            w = funcol.all_gather_tensor_autograd(shard, 0, group).view(dim, dim)
            x = F.relu(x @ w)
        return x

    x = torch.randn(2048, dim, device=DEVICE, dtype=torch.bfloat16)
    torch.compile(forward)(x, *shards).float().sum().backward()


def fsdp_step():
    """FSDP-style step written out: all-gather every layer's weight up front,
    a matmul chain, then reduce-scatter of per-layer gradient stand-ins. Compiled
    with Inductor's recommended comm reordering pipeline enabled."""
    funcol = _funcol()
    group = dist.group.WORLD
    dim, layers = 1024, 6

    def step(x, *shards):
        outs = []
        for shard in shards:
            w = funcol.all_gather_tensor(shard, 0, group).view(dim, dim)
            x = F.relu(x @ w)
            outs.append(funcol.reduce_scatter_tensor((x.t() @ x).flatten(), "sum", 0, group))
        return x, outs

    shards = [torch.randn(dim * dim // WORLD_SIZE, device=DEVICE, dtype=torch.bfloat16) for _ in range(layers)]
    x = torch.randn(2048, dim, device=DEVICE, dtype=torch.bfloat16)
    passes = [
        "reorder_communication_preserving_peak_memory",
        "sink_waits_iterative",
        "reorder_communication_preserving_peak_memory",
    ]
    with torch._inductor.config.patch(
        reorder_for_compute_comm_overlap=True, reorder_for_compute_comm_overlap_passes=passes
    ):
        torch.compile(step)(x, *shards)


def ddp_step():
    """DDP-style: the backward of a linear stack written out, each weight
    gradient all-reduced in place (dist.all_reduce) as soon as it exists."""
    dim, layers = 1024, 6

    def backward(acts, weights, dy):
        grads = []
        for a, w in zip(reversed(acts), reversed(weights)):
            g = a.t() @ dy
            dist.all_reduce(g)
            grads.append(g)
            dy = (dy @ w.t()) * (a > 0)
        return [g / WORLD_SIZE for g in grads]

    acts = [torch.relu(torch.randn(2048, dim, device=DEVICE)) for _ in range(layers)]
    weights = [torch.randn(dim, dim, device=DEVICE) * 0.02 for _ in range(layers)]
    dy = torch.randn(2048, dim, device=DEVICE)
    torch.compile(backward)(acts, weights, dy)


class _CopyToParallel(torch.autograd.Function):
    """Megatron's f: identity forward, all-reduce of the gradient backward."""

    @staticmethod
    def forward(ctx, x):
        return x

    @staticmethod
    def backward(ctx, grad):
        return _funcol().all_reduce(grad, "sum", dist.group.WORLD)


class _ReduceFromParallel(torch.autograd.Function):
    """Megatron's g: all-reduce forward, identity backward."""

    @staticmethod
    def forward(ctx, x):
        return _funcol().all_reduce(x, "sum", dist.group.WORLD)

    @staticmethod
    def backward(ctx, grad):
        return grad


class TensorParallelBlock(nn.Module):
    """A transformer block sharded Megatron-style over WORLD_SIZE ranks: column-
    parallel QKV and fc1, row-parallel projection and fc2, one all-reduce after
    each (backward: one before each)."""

    def __init__(self, dim: int, heads: int):
        super().__init__()
        self.local_heads = heads // WORLD_SIZE
        self.head_dim = dim // heads
        local = self.local_heads * self.head_dim
        self.ln1 = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * local)
        self.proj = nn.Linear(local, dim, bias=False)
        self.ln2 = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, 4 * dim // WORLD_SIZE)
        self.fc2 = nn.Linear(4 * dim // WORLD_SIZE, dim, bias=False)

    def forward(self, x):
        b, t, _ = x.shape
        h = _CopyToParallel.apply(self.ln1(x))
        q, k, v = self.qkv(h).view(b, t, 3, self.local_heads, self.head_dim).permute(2, 0, 3, 1, 4)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(b, t, -1)
        x = x + _ReduceFromParallel.apply(self.proj(a))
        h = _CopyToParallel.apply(self.ln2(x))
        return x + _ReduceFromParallel.apply(self.fc2(F.gelu(self.fc1(h))))


def tp_block():
    model = TensorParallelBlock(1024, 16).to(DEVICE, torch.bfloat16)
    x = torch.randn(4, 256, 1024, device=DEVICE, dtype=torch.bfloat16)
    torch.compile(model)(x).float().sum().backward()


SINGLE_GPU_CASES = {
    "transformer_s": _transformer(256, 4, 1, 4, 128, torch.float32),
    "transformer_m": _transformer(512, 8, 2, 4, 256, torch.bfloat16),
    "transformer_l": _transformer(1024, 16, 4, 2, 512, torch.bfloat16),
    "convnet_bn": convnet_bn,
    "mlp_checkpoint": mlp_checkpoint,
    "adamw_step": adamw_step,
}

DISTRIBUTED_CASES = {
    "fsdp_train": fsdp_train,
    "fsdp_step": fsdp_step,
    "ddp_step": ddp_step,
    "tp_block": tp_block,
}
