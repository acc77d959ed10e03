"""The model zoo the exporter runs on the GPU: what users train, small enough
that the exported graphs stay a few tens of kilobytes each.

Each case is a function that compiles and runs one training (or inference)
step; run_zoo.py wraps each in schedlab_export.capture(prefix=<case name>).
Distributed cases run on one GPU with the fake process group
(torch.testing._internal.distributed.fake_pg): collectives are compiled and
scheduled like real ones, and do nothing at run time.
"""

from __future__ import annotations

import math

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

import class_sweep  # noqa: E402 - beside this file (run_zoo.py puts python/zoo on the path)

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


def _parallel_functions(group_of):
    """Megatron's f (identity forward, all-reduce of the gradient backward) and
    g (all-reduce forward, identity backward) over the group `group_of()`
    returns when the graph is traced."""

    class CopyToParallel(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, grad):
            return _funcol().all_reduce(grad, "sum", group_of())

    class ReduceFromParallel(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return _funcol().all_reduce(x, "sum", group_of())

        @staticmethod
        def backward(ctx, grad):
            return grad

    return CopyToParallel, ReduceFromParallel


_CopyToParallel, _ReduceFromParallel = _parallel_functions(lambda: dist.group.WORLD)


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


# --- grown zoo (issue 14): what users train ------------------------------------------
class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return x * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + self.eps).to(x.dtype) * self.weight


def _rope(x, cos, sin):
    """Rotary embedding on [batch, heads, seq, head_dim] (rotate-half form)."""
    x1, x2 = x.chunk(2, dim=-1)
    return x * cos + torch.cat((-x2, x1), dim=-1) * sin


class LlamaBlock(nn.Module):
    """Llama-style block: RMSNorm, RoPE, grouped-query attention, SwiGLU MLP."""

    def __init__(self, dim: int, heads: int, kv_heads: int, hidden: int):
        super().__init__()
        self.heads, self.kv_heads, self.head_dim = heads, kv_heads, dim // heads
        self.norm1, self.norm2 = RMSNorm(dim), RMSNorm(dim)
        self.wq = nn.Linear(dim, dim, bias=False)
        self.wkv = nn.Linear(dim, 2 * kv_heads * self.head_dim, bias=False)
        self.wo = nn.Linear(dim, dim, bias=False)
        self.w_gate = nn.Linear(dim, hidden, bias=False)
        self.w_up = nn.Linear(dim, hidden, bias=False)
        self.w_down = nn.Linear(hidden, dim, bias=False)

    def forward(self, x, cos, sin):
        b, t, d = x.shape
        h = self.norm1(x)
        q = self.wq(h).view(b, t, self.heads, self.head_dim).transpose(1, 2)
        k, v = self.wkv(h).view(b, t, 2, self.kv_heads, self.head_dim).permute(2, 0, 3, 1, 4)
        q, k = _rope(q, cos, sin), _rope(k, cos, sin)
        repeat = self.heads // self.kv_heads
        k, v = k.repeat_interleave(repeat, dim=1), v.repeat_interleave(repeat, dim=1)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.wo(a.transpose(1, 2).reshape(b, t, d))
        h = self.norm2(x)
        return x + self.w_down(F.silu(self.w_gate(h)) * self.w_up(h))


def _rope_tables(seq: int, head_dim: int, dtype):
    inv = 1.0 / (10000 ** (torch.arange(0, head_dim, 2, device=DEVICE).float() / head_dim))
    angles = torch.outer(torch.arange(seq, device=DEVICE).float(), inv)
    angles = torch.cat((angles, angles), dim=-1)
    return angles.cos().to(dtype), angles.sin().to(dtype)


def llama_block():
    dim, heads, kv_heads, seq = 512, 8, 2, 256
    model = nn.ModuleList(LlamaBlock(dim, heads, kv_heads, 1408) for _ in range(2)).to(DEVICE, torch.bfloat16)
    cos, sin = _rope_tables(seq, dim // heads, torch.bfloat16)

    def forward(x):
        for block in model:
            x = block(x, cos, sin)
        return x

    x = torch.randn(2, seq, dim, device=DEVICE, dtype=torch.bfloat16)
    torch.compile(forward)(x).float().pow(2).mean().backward()


class ViT(nn.Module):
    """Vision transformer: patch-embedding convolution, class token, learned
    position embedding, pre-LN encoder blocks (non-causal SDPA), linear head."""

    def __init__(self, image: int, patch: int, dim: int, heads: int, layers: int, classes: int):
        super().__init__()
        self.heads = heads
        self.embed = nn.Conv2d(3, dim, patch, stride=patch)
        self.cls = nn.Parameter(torch.zeros(1, 1, dim))
        self.pos = nn.Parameter(torch.randn(1, (image // patch) ** 2 + 1, dim) * 0.02)
        self.blocks = nn.ModuleList(EncoderBlock(dim, heads) for _ in range(layers))
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, classes)

    def forward(self, img):
        x = self.embed(img).flatten(2).transpose(1, 2)
        x = torch.cat((self.cls.expand(x.shape[0], -1, -1), x), dim=1) + self.pos
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x[:, 0]))


class EncoderBlock(Block):
    """Block without the causal mask (encoders: ViT, BERT)."""

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).view(b, t, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        a = F.scaled_dot_product_attention(q, k, v)
        x = x + self.proj(a.transpose(1, 2).reshape(b, t, d))
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))


def vit():
    model = ViT(image=224, patch=16, dim=384, heads=6, layers=2, classes=1000).to(DEVICE, torch.bfloat16)
    img = torch.randn(8, 3, 224, 224, device=DEVICE, dtype=torch.bfloat16)
    y = torch.randint(0, 1000, (8,), device=DEVICE)
    F.cross_entropy(torch.compile(model)(img).float(), y).backward()


class UNetBlock(nn.Module):
    def __init__(self, cin: int, cout: int):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, padding=1)
        self.norm1 = nn.GroupNorm(8, cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, padding=1)
        self.norm2 = nn.GroupNorm(8, cout)
        self.skip = nn.Conv2d(cin, cout, 1) if cin != cout else nn.Identity()

    def forward(self, x):
        h = F.silu(self.norm1(self.conv1(x)))
        return F.silu(self.norm2(self.conv2(h))) + self.skip(x)


class UNet(nn.Module):
    """Two-level UNet: GroupNorm/SiLU residual blocks, strided-conv down,
    transposed-conv up, skip concatenation."""

    def __init__(self, channels: int = 32):
        super().__init__()
        c = channels
        self.inp = nn.Conv2d(3, c, 3, padding=1)
        self.down1, self.pool1 = UNetBlock(c, c), nn.Conv2d(c, c, 3, stride=2, padding=1)
        self.down2, self.pool2 = UNetBlock(c, 2 * c), nn.Conv2d(2 * c, 2 * c, 3, stride=2, padding=1)
        self.mid = UNetBlock(2 * c, 2 * c)
        self.up2, self.dec2 = nn.ConvTranspose2d(2 * c, 2 * c, 2, stride=2), UNetBlock(4 * c, c)
        self.up1, self.dec1 = nn.ConvTranspose2d(c, c, 2, stride=2), UNetBlock(2 * c, c)
        self.out = nn.Conv2d(c, 3, 1)

    def forward(self, x):
        s1 = self.down1(self.inp(x))
        s2 = self.down2(self.pool1(s1))
        h = self.mid(self.pool2(s2))
        h = self.dec2(torch.cat((self.up2(h), s2), dim=1))
        h = self.dec1(torch.cat((self.up1(h), s1), dim=1))
        return self.out(h)


def unet_gn():
    model = UNet(32).to(DEVICE)
    x = torch.randn(4, 3, 64, 64, device=DEVICE)
    F.mse_loss(torch.compile(model)(x), x).backward()


def lm_head_ce():
    """Final norm, LM head (32k vocabulary) and cross-entropy over 2k tokens."""
    dim, vocab, tokens = 512, 32000, 2048
    norm = RMSNorm(dim).to(DEVICE, torch.bfloat16)
    head = nn.Linear(dim, vocab, bias=False).to(DEVICE, torch.bfloat16)
    h = torch.randn(tokens, dim, device=DEVICE, dtype=torch.bfloat16, requires_grad=True)
    y = torch.randint(0, vocab, (tokens,), device=DEVICE)

    def loss(h, y):
        return F.cross_entropy(head(norm(h)).float(), y)

    torch.compile(loss)(h, y).backward()


def moe_static():
    """Switch-style top-1 MoE with a static capacity (GShard dispatch/combine
    einsums): the expert MLPs are batched matmuls, every size is static."""
    tokens, dim, hidden, experts = 1024, 256, 512, 8
    capacity = 2 * tokens // experts
    router = nn.Linear(dim, experts, bias=False).to(DEVICE)
    w1 = (torch.randn(experts, dim, hidden, device=DEVICE) * 0.02).requires_grad_()
    w2 = (torch.randn(experts, hidden, dim, device=DEVICE) * 0.02).requires_grad_()

    def forward(x):
        probs = F.softmax(router(x), dim=-1)
        gate, idx = probs.max(dim=-1)
        mask = F.one_hot(idx, experts).to(x.dtype)
        position = (torch.cumsum(mask, dim=0) * mask - 1).long()
        keep = (position < capacity) & (mask > 0)
        dispatch = F.one_hot(position.clamp(min=0), capacity).to(x.dtype) * keep.unsqueeze(-1)
        xe = torch.einsum("tec,td->ecd", dispatch, x)
        he = torch.bmm(F.gelu(torch.bmm(xe, w1)), w2)
        return torch.einsum("tec,ecd->td", dispatch * gate[:, None, None], he)

    x = torch.randn(tokens, dim, device=DEVICE, requires_grad=True)
    torch.compile(forward)(x).pow(2).mean().backward()


def moe_dropless():
    """Mixtral-style dropless top-2 MoE forward: each expert's tokens come from
    nonzero(), so their counts are data-dependent (unbacked symbols u0...)."""
    tokens, dim, hidden, experts = 512, 256, 512, 4
    torch._dynamo.config.capture_dynamic_output_shape_ops = True
    router = nn.Linear(dim, experts, bias=False).to(DEVICE)
    mlps = nn.ModuleList(
        nn.Sequential(nn.Linear(dim, hidden), nn.SiLU(), nn.Linear(hidden, dim)) for _ in range(experts)
    ).to(DEVICE)

    def forward(x):
        weights, chosen = torch.topk(F.softmax(router(x), dim=-1), 2, dim=-1)
        out = torch.zeros_like(x)
        for e, mlp in enumerate(mlps):
            token, slot = torch.nonzero(chosen == e, as_tuple=True)
            out = out.index_add(0, token, mlp(x[token]) * weights[token, slot].unsqueeze(-1))
        return out

    x = torch.randn(tokens, dim, device=DEVICE)
    with torch.no_grad():
        torch.compile(forward)(x)


def bert_dynamic():
    """BERT-style encoder compiled with a dynamic sequence length
    (mark_dynamic): sizes are symbols s0..., hinted by the example input."""
    model = nn.Sequential(*[EncoderBlock(256, 4) for _ in range(2)]).to(DEVICE)
    x = torch.randn(8, 128, 256, device=DEVICE)
    torch._dynamo.mark_dynamic(x, 1)
    torch.compile(model)(x).pow(2).mean().backward()


class DecodeLayer(nn.Module):
    """One decode step of a GQA attention layer with a static KV cache:
    in-place cache writes (index_copy_) at a tensor position, masked SDPA."""

    def __init__(self, dim: int, heads: int, kv_heads: int, max_len: int, batch: int):
        super().__init__()
        self.heads, self.kv_heads, self.head_dim = heads, kv_heads, dim // heads
        self.wq = nn.Linear(dim, dim, bias=False)
        self.wk = nn.Linear(dim, kv_heads * self.head_dim, bias=False)
        self.wv = nn.Linear(dim, kv_heads * self.head_dim, bias=False)
        self.wo = nn.Linear(dim, dim, bias=False)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))
        self.register_buffer("cache_k", torch.zeros(batch, kv_heads, max_len, self.head_dim))
        self.register_buffer("cache_v", torch.zeros(batch, kv_heads, max_len, self.head_dim))

    def forward(self, x, pos):
        b = x.shape[0]
        q = self.wq(x).view(b, 1, self.heads, self.head_dim).transpose(1, 2)
        k = self.wk(x).view(b, 1, self.kv_heads, self.head_dim).transpose(1, 2)
        v = self.wv(x).view(b, 1, self.kv_heads, self.head_dim).transpose(1, 2)
        self.cache_k.index_copy_(2, pos, k)
        self.cache_v.index_copy_(2, pos, v)
        mask = (torch.arange(self.cache_k.shape[2], device=x.device) <= pos).view(1, 1, 1, -1)
        repeat = self.heads // self.kv_heads
        keys = self.cache_k.repeat_interleave(repeat, dim=1)
        values = self.cache_v.repeat_interleave(repeat, dim=1)
        a = F.scaled_dot_product_attention(q, keys, values, attn_mask=mask)
        x = x + self.wo(a.transpose(1, 2).reshape(b, 1, -1))
        return x + self.mlp(x)


def kv_decode():
    layers = nn.ModuleList(DecodeLayer(1024, 16, 4, 1024, 8) for _ in range(2)).to(DEVICE, torch.bfloat16)

    def step(x, pos):
        for layer in layers:
            x = layer(x, pos)
        return x

    x = torch.randn(8, 1, 1024, device=DEVICE, dtype=torch.bfloat16)
    pos = torch.tensor([300], device=DEVICE)
    with torch.no_grad():
        torch.compile(step)(x, pos)


def _sdpa_case(backend_name: str, dtype, causal: bool, batch: int, heads: int, seq: int, head_dim: int):
    """One attention layer through a chosen SDPA backend, forward and backward."""

    def run():
        from torch.nn.attention import SDPBackend, sdpa_kernel

        backend = getattr(SDPBackend, backend_name)
        proj = nn.Linear(heads * head_dim, 3 * heads * head_dim).to(DEVICE, dtype)
        out = nn.Linear(heads * head_dim, heads * head_dim).to(DEVICE, dtype)

        def forward(x):
            b, t, d = x.shape
            q, k, v = proj(x).view(b, t, 3, heads, head_dim).permute(2, 0, 3, 1, 4)
            with sdpa_kernel(backend):
                a = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
            return out(a.transpose(1, 2).reshape(b, t, d))

        x = torch.randn(batch, seq, heads * head_dim, device=DEVICE, dtype=dtype, requires_grad=True)
        torch.compile(forward)(x).float().pow(2).mean().backward()

    return run


def gemm_sweep():
    """Matrix products over a range of shapes and dtypes in one graph (each its
    own extern kernel): GEMM efficiency against size for the time model."""
    shapes = [(64, 64, 64), (128, 512, 256), (256, 256, 1024), (512, 1024, 512), (1024, 1024, 1024),
              (2048, 512, 2048), (2048, 2048, 2048), (4096, 1024, 4096), (4096, 4096, 4096),
              (8192, 2048, 1024), (16384, 256, 512), (333, 777, 555)]
    operands = []
    for dtype in (torch.bfloat16, torch.float32):
        for m, k, n in shapes:
            operands.append((torch.randn(m, k, device=DEVICE, dtype=dtype),
                             torch.randn(k, n, device=DEVICE, dtype=dtype)))
    batched = (torch.randn(32, 256, 128, device=DEVICE, dtype=torch.bfloat16),
               torch.randn(32, 128, 256, device=DEVICE, dtype=torch.bfloat16))

    def products(operands, batched):
        return [a @ b for a, b in operands] + [torch.bmm(*batched)]

    with torch.no_grad():
        torch.compile(products)(operands, batched)


def pointwise_sweep():
    """Pointwise and reduction kernels over sizes from 4 KiB to 256 MiB (each
    size its own kernel): Triton efficiency against size for the time model."""
    sizes = [1 << k for k in range(10, 27, 2)]
    xs = [torch.randn(n, device=DEVICE) for n in sizes]
    rows = [torch.randn(r, c, device=DEVICE) for r, c in
            ((64, 64), (1024, 1024), (4096, 512), (512, 8192), (32768, 128), (8, 1 << 20), (8192, 4096))]

    def kernels(xs, rows):
        out = [torch.sigmoid(x) * x + 1.0 for x in xs]
        out += [r.softmax(dim=-1) for r in rows]
        out += [r.sum(dim=0) for r in rows]
        return out

    with torch.no_grad():
        torch.compile(kernels)(xs, rows)


def conv_sweep():
    """Convolutions forward and backward over channel counts and resolutions
    (fp32 with TF32, and bf16): convolution efficiency for the time model."""
    configs = [(3, 64, 128, 7, 2), (64, 64, 56, 3, 1), (128, 128, 28, 3, 1), (256, 256, 14, 3, 1),
               (64, 256, 56, 1, 1), (512, 512, 7, 3, 1)]
    for dtype in (torch.float32, torch.bfloat16):
        convs = nn.ModuleList(nn.Conv2d(cin, cout, k, stride=s, padding=k // 2, bias=False)
                              for cin, cout, _, k, s in configs).to(DEVICE, dtype)
        xs = [torch.randn(8, cin, hw, hw, device=DEVICE, dtype=dtype, requires_grad=True)
              for cin, _, hw, _, _ in configs]

        def forward(xs):
            return sum(conv(x).float().mean() for conv, x in zip(convs, xs))

        torch.compile(forward)(xs).backward()


def conv_narrow_sweep():
    """Convolutions whose input channels are narrower than 16 bytes (RGB and
    grayscale stems, patch embeddings of several patch sizes), forward and
    backward in fp32 and bf16: cuDNN pads their channels and runs a gather
    kernel, the time model's narrow-channel term."""
    # (cin, cout, hw, kernel, stride, batch); patch sizes 4, 8, 14, 32, not
    # the held-out ViT's 16.
    configs = [(3, 128, 224, 4, 4, 4), (3, 256, 256, 8, 8, 4), (3, 768, 224, 14, 14, 2), (3, 512, 256, 32, 32, 8),
               (1, 64, 128, 3, 1, 8), (4, 64, 96, 3, 1, 8), (3, 32, 112, 3, 2, 16), (6, 96, 64, 5, 1, 4)]
    for dtype in (torch.float32, torch.bfloat16):
        convs = nn.ModuleList(nn.Conv2d(cin, cout, k, stride=s, padding=0 if s == k else k // 2, bias=False)
                              for cin, cout, _, k, s, _ in configs).to(DEVICE, dtype)
        xs = [torch.randn(b, cin, hw, hw, device=DEVICE, dtype=dtype, requires_grad=True)
              for cin, _, hw, _, _, b in configs]

        def forward(xs):
            return sum(conv(x).float().mean() for conv, x in zip(convs, xs))

        torch.compile(forward)(xs).backward()


def conv_small_sweep():
    """Small convolutions as mobile and residual networks run them, forward
    and backward: depthwise, grouped and 1x1 convolutions in bf16
    channels-last, and 3x3 and strided 1x1 convolutions in fp32 NCHW at
    batch 16. cuDNN runs these in a few short kernels each, so their time is
    mostly per-call and per-byte cost, which the other sweeps (larger, or
    fp32 with layout transposes) do not show. Measured, not yet fitted:
    tests/data/conv_small_sweep/README.md."""
    # (cin, cout, hw, kernel, stride, groups)
    bf16_channels_last = [(24, 24, 96, 3, 1, 24), (48, 48, 48, 5, 2, 48), (120, 120, 24, 5, 1, 120),
                          (320, 320, 12, 3, 1, 320), (640, 640, 6, 3, 1, 640), (24, 96, 48, 1, 1, 1),
                          (96, 40, 24, 1, 1, 1), (320, 80, 12, 1, 1, 1), (192, 192, 14, 3, 1, 8), (48, 48, 28, 3, 1, 4)]
    fp32_nchw = [(48, 48, 48, 3, 1, 1), (96, 96, 24, 3, 1, 1), (192, 192, 12, 3, 1, 1), (384, 384, 6, 3, 1, 1),
                 (48, 96, 48, 3, 2, 1), (96, 192, 24, 1, 2, 1), (192, 384, 12, 3, 2, 1)]
    for dtype, configs, fmt in ((torch.bfloat16, bf16_channels_last, torch.channels_last),
                                (torch.float32, fp32_nchw, torch.contiguous_format)):
        convs = nn.ModuleList(nn.Conv2d(cin, cout, k, stride=s, padding=k // 2, groups=groups, bias=False)
                              for cin, cout, _, k, s, groups in configs).to(DEVICE, dtype, memory_format=fmt)
        xs = [torch.randn(16, cin, hw, hw, device=DEVICE, dtype=dtype).to(memory_format=fmt).requires_grad_()
              for cin, _, hw, _, _, _ in configs]

        def forward(xs):
            return sum(conv(x).float().mean() for conv, x in zip(convs, xs))

        torch.compile(forward)(xs).backward()


def _conv_grid(configs, dtype, memory_format, batch_first=True):
    """One compiled forward and backward over independent convolutions:
    each config (batch, cin, cout, hw, kernel, stride, groups) convolves its
    own input (padding kernel // 2, no bias), laid out in `memory_format`."""
    convs = nn.ModuleList(nn.Conv2d(cin, cout, k, stride=s, padding=k // 2, groups=g, bias=False)
                          for _, cin, cout, _, k, s, g in configs).to(DEVICE, dtype, memory_format=memory_format)
    xs = [torch.randn(b, cin, hw, hw, device=DEVICE, dtype=dtype).to(memory_format=memory_format).requires_grad_()
          for b, cin, _, hw, _, _, _ in configs]

    def forward(xs):
        return sum(conv(x).float().mean() for conv, x in zip(convs, xs))

    torch.compile(forward)(xs).backward()


# (batch, cin, cout, hw, kernel, stride, groups): the convolutions of residual,
# mobile and ConvNeXt-style networks at training batch sizes, from a few
# microseconds to compute-bound calls of 100+ GFLOP, so that the time laws
# see every regime (docs/cost-model.md, "Convolutions").
_GRID_DENSE = [(32, 64, 64, 56, 3, 1, 1), (32, 128, 128, 28, 3, 1, 1), (32, 256, 256, 14, 3, 1, 1),
               (32, 512, 512, 7, 3, 1, 1), (32, 64, 256, 56, 1, 1, 1), (32, 256, 64, 56, 1, 1, 1),
               (32, 512, 1024, 28, 1, 2, 1), (32, 128, 128, 56, 3, 2, 1), (128, 256, 256, 28, 3, 1, 1),
               (64, 1024, 256, 14, 1, 1, 1), (8, 32, 32, 128, 3, 1, 1), (16, 96, 96, 32, 5, 1, 1),
               (32, 3, 64, 224, 7, 2, 1), (16, 48, 48, 64, 3, 1, 1), (256, 2048, 512, 7, 1, 1, 1)]
_GRID_GROUPED = [(32, 96, 96, 56, 3, 1, 96), (32, 144, 144, 56, 3, 2, 144), (32, 240, 240, 28, 5, 1, 240),
                 (32, 384, 384, 28, 7, 1, 384), (32, 768, 768, 14, 7, 1, 768), (64, 32, 32, 112, 3, 1, 32),
                 (32, 1152, 1152, 7, 5, 1, 1152), (32, 128, 128, 56, 3, 1, 32), (32, 512, 512, 14, 3, 1, 32),
                 (16, 256, 256, 28, 3, 1, 2), (32, 96, 96, 56, 3, 1, 4), (32, 224, 224, 28, 3, 1, 28)]
_GRID_F32 = [(32, 64, 64, 56, 3, 1, 1), (32, 256, 256, 14, 3, 1, 1), (32, 64, 256, 56, 1, 1, 1),
             (32, 512, 1024, 28, 1, 2, 1), (8, 3, 64, 224, 7, 2, 1), (64, 128, 128, 28, 3, 1, 1),
             (16, 32, 32, 64, 3, 1, 1), (32, 96, 96, 56, 3, 1, 96), (32, 144, 144, 28, 5, 2, 144),
             (32, 128, 128, 28, 3, 1, 32)]


def conv_grid_dense():
    """Dense (one-group) convolutions, bf16 channels-last: 3x3, 1x1,
    strided, 5x5, a 7x7 RGB stem, small to compute-bound."""
    _conv_grid(_GRID_DENSE, torch.bfloat16, torch.channels_last)


def conv_grid_grouped():
    """Depthwise (3x3 to 7x7, stride 1 and 2) and grouped (2 to 32 groups)
    convolutions, bf16 channels-last."""
    _conv_grid(_GRID_GROUPED, torch.bfloat16, torch.channels_last)


def conv_grid_nchw():
    """f32 and bf16 convolutions kept in NCHW (Inductor's layout
    optimization off, as in a graph it decides against): cuDNN transposes
    the operands of its tensor-core kernels."""
    from torch._inductor import config as inductor_config

    with inductor_config.patch(layout_optimization=False):
        _conv_grid(_GRID_F32, torch.float32, torch.contiguous_format)
        _conv_grid(_GRID_F32[:4] + _GRID_F32[7:8], torch.bfloat16, torch.contiguous_format)


def conv_grid_f32_channels_last():
    """f32 convolutions in channels-last (TF32 tensor cores, no transposes)."""
    _conv_grid([_GRID_F32[i] for i in (0, 1, 2, 3, 5, 7, 9)], torch.float32, torch.channels_last)


# (batch, cin, cout, hw, kernel, stride, transposed): small-batch f32
# convolutions as UNet-style diffusion and segmentation models run them when
# Inductor keeps NCHW (its layout optimization declines channels-last for
# graphs with group norms): calls of 10 MFLOP to 2 GFLOP at 8x8 to 128x128,
# 3x3 stride 1 and 2, 1x1 projections, a narrow stem and transposed 2x2
# stride-2 upsamplers. None is a shape of the held-out unet_gn.
_GRID_NCHW_SMALL = [(2, 64, 64, 32, 3, 1, False), (8, 32, 32, 16, 3, 1, False), (4, 128, 128, 8, 3, 1, False),
                    (2, 96, 96, 24, 3, 1, False), (4, 48, 48, 48, 3, 2, False), (8, 64, 128, 16, 3, 2, False),
                    (2, 32, 64, 128, 3, 1, False), (8, 160, 160, 12, 3, 1, False), (4, 96, 48, 16, 1, 1, False),
                    (2, 256, 128, 16, 1, 1, False), (2, 48, 4, 96, 1, 1, False), (4, 4, 48, 96, 3, 1, False),
                    (2, 128, 64, 16, 2, 2, True), (8, 48, 48, 24, 2, 2, True), (4, 96, 96, 8, 2, 2, True)]


def conv_grid_nchw_small():
    """Small-batch f32 convolutions kept in NCHW, forward and backward,
    transposed ones included: cuDNN runs each in several short kernels
    (layout transposes, split-K reductions, Winograd or FFMA paths), the
    regime of UNet-style models that the larger grids do not reach."""
    from torch._inductor import config as inductor_config

    def make(cin, cout, k, s, transposed):
        if transposed:
            return nn.ConvTranspose2d(cin, cout, k, stride=s, bias=False)
        return nn.Conv2d(cin, cout, k, stride=s, padding=k // 2, bias=False)

    convs = nn.ModuleList(make(cin, cout, k, s, t) for _, cin, cout, _, k, s, t in _GRID_NCHW_SMALL).to(DEVICE)
    xs = [torch.randn(b, cin, hw, hw, device=DEVICE, requires_grad=True) for b, cin, _, hw, _, _, _ in _GRID_NCHW_SMALL]

    def forward(xs):
        return sum(conv(x).mean() for conv, x in zip(convs, xs))

    with inductor_config.patch(layout_optimization=False):
        torch.compile(forward)(xs).backward()


def gemm_unaligned_sweep():
    """bf16 matrix products with a dimension that is not a multiple of 8
    elements (16 bytes): language-model heads over odd vocabularies and their
    weight gradients, odd inner dimensions. cuBLAS cannot use its TMA kernels
    on such operands and falls back to slower aligned-by-one kernels.
    Inductor's shape padding is off, as for the products it decides not to
    pad."""
    from torch._inductor import config as inductor_config

    shapes = [(4096, 768, 50257), (50257, 4096, 768), (4096, 50257, 768), (2048, 1000, 4095),
              (8191, 1024, 1024), (1024, 1023, 1024), (333, 555, 777), (16384, 129, 512), (8192, 4096, 1001)]
    operands = [(torch.randn(m, k, device=DEVICE, dtype=torch.bfloat16),
                 torch.randn(k, n, device=DEVICE, dtype=torch.bfloat16)) for m, k, n in shapes]

    def products(operands):
        return [a @ b for a, b in operands]

    with torch.no_grad(), inductor_config.patch(shape_padding=False):
        torch.compile(products)(operands)


def reduction_sweep():
    """Large Triton reductions, most beyond the L2 cache: log-softmax over
    language-model vocabularies, layer norm, column sums, batch-norm
    statistics of a channels-last activation, long rows."""
    bf16 = dict(device=DEVICE, dtype=torch.bfloat16)
    logits = [torch.randn(4096, 50257, **bf16), torch.randn(8192, 32000, **bf16), torch.randn(1024, 128256, **bf16)]
    norm_in = torch.randn(65536, 1024, **bf16)
    columns = torch.randn(65536, 1024, device=DEVICE)
    activation = torch.randn(32, 256, 56, 56, **bf16).to(memory_format=torch.channels_last)
    rows = torch.randn(1024, 262144, device=DEVICE)

    def reductions(logits, norm_in, columns, activation, rows):
        out = [x.float().log_softmax(dim=-1) for x in logits]
        out.append(F.layer_norm(norm_in, (1024,)))
        out.append(columns.sum(dim=0))
        out.append(torch.var_mean(activation.float(), dim=(0, 2, 3)))
        out.append(rows.amax(dim=-1))
        return out

    with torch.no_grad():
        torch.compile(reductions)(logits, norm_in, columns, activation, rows)


def loss_vocab_sweep():
    """Cross-entropy over language-model vocabularies, forward and backward,
    in pairs whose row lengths differ by a few logits: one not a multiple of
    16 elements (GPT-2's 50,257, BERT's 30,522, 32,001, 151,937) beside one
    that is (50,264, 30,528, 32,000, 151,936). Triton specializes a
    reduction on its length's divisibility by 16; an odd vocabulary gives up
    the aligned, vectorized loads. bf16 logits, f32 loss, as Hugging Face
    models compute it."""
    rows_vocab = [(4096, 50257), (4096, 50264), (4096, 30522), (4096, 30528), (4096, 32001), (4096, 32000),
                  (1024, 151937), (1024, 151936)]
    logits = [torch.randn(r, v, device=DEVICE, dtype=torch.bfloat16, requires_grad=True) for r, v in rows_vocab]
    targets = [torch.randint(0, v, (r,), device=DEVICE) for r, v in rows_vocab]

    def losses(logits, targets):
        return sum(F.cross_entropy(x.float(), y) for x, y in zip(logits, targets))

    torch.compile(losses)(logits, targets).backward()


def attention_dropout_sweep():
    """bf16 attention with dropout, forward and backward, as language models
    train it (GPT-2 style), over batch, heads, lengths and head dims, causal
    and not."""
    # (batch, heads, seq, head_dim, causal)
    configs = [(8, 12, 512, 64, True), (4, 16, 1024, 64, True), (2, 32, 2048, 128, True), (16, 8, 256, 64, True),
               (8, 16, 1024, 128, True), (4, 12, 2048, 64, False), (16, 16, 512, 64, False)]
    qkv = [tuple(torch.randn(b, h, s, d, device=DEVICE, dtype=torch.bfloat16, requires_grad=True) for _ in range(3))
           for b, h, s, d, _ in configs]

    def forward(qkv):
        return sum(F.scaled_dot_product_attention(q, k, v, dropout_p=0.1, is_causal=c).float().mean()
                   for (q, k, v), (*_, c) in zip(qkv, configs))

    torch.compile(forward)(qkv).backward()


def attention_bias_sweep():
    """bf16 attention with an additive mask (attn_mask as a float tensor),
    forward and backward, as Hugging Face models pass their causal and
    padding masks, and per-head biases (ALiBi, T5-style relative positions):
    the mask broadcast over heads ([B, 1, S, S]), over batch and heads
    ([1, 1, S, S]) or one per head ([B, H, S, S]), over batch, heads,
    lengths and head dims."""
    # (batch, heads, seq, head_dim, mask shape: "b1" [B,1,S,S], "11" [1,1,S,S], "bh" [B,H,S,S])
    configs = [(8, 12, 512, 64, "b1"), (4, 16, 1024, 64, "b1"), (2, 32, 2048, 128, "b1"), (16, 8, 256, 64, "bh"),
               (8, 16, 1024, 128, "11"), (4, 12, 2048, 64, "bh"), (16, 16, 512, 64, "b1")]
    qkv = [tuple(torch.randn(b, h, s, d, device=DEVICE, dtype=torch.bfloat16, requires_grad=True) for _ in range(3))
           for b, h, s, d, _ in configs]
    causal = {s: torch.full((s, s), float("-inf"), device=DEVICE).triu(1).to(torch.bfloat16) for _, _, s, _, _ in configs}
    masks = [causal[s].expand(b if m != "11" else 1, h if m == "bh" else 1, s, s).contiguous() for b, h, s, _, m in configs]

    def forward(qkv, masks):
        return sum(F.scaled_dot_product_attention(q, k, v, attn_mask=m).float().mean() for (q, k, v), m in zip(qkv, masks))

    torch.compile(forward)(qkv, masks).backward()


def conv1d_sweep():
    """An experiment kept out of the fit (tests/data/experiments/conv1d):
    1-D convolutions as speech models run them, forward and backward.
    Dense ones over mel bins and raw-audio features (Whisper's 3-tap stem
    and stride-2 layer, wav2vec 2.0's 2-tap stride-2 layers, wider and
    narrower channels, bf16 and f32), and grouped ones with long kernels
    (the positional convolutions of wav2vec 2.0 / HuBERT: 128 taps in 16
    groups over a few hundred frames) and neighbours, which cuDNN runs
    mostly one group at a time, at times 10x apart for shapes no law
    feature separates."""
    # dense: (batch, in channels, out channels, length, kernel, stride, dtype)
    dense = [(8, 80, 384, 3000, 3, 1, torch.bfloat16), (8, 384, 384, 3000, 3, 2, torch.bfloat16),
             (16, 80, 512, 1500, 3, 1, torch.float32), (8, 512, 512, 1600, 2, 2, torch.bfloat16),
             (4, 256, 1024, 8192, 5, 1, torch.bfloat16), (32, 128, 128, 1024, 9, 1, torch.float32),
             (8, 1024, 1024, 400, 3, 1, torch.bfloat16)]
    # grouped: (batch, channels, length, kernel, groups, dtype)
    grouped = [(8, 384, 99, 128, 16, torch.bfloat16), (8, 768, 249, 128, 16, torch.bfloat16),
               (4, 1024, 499, 128, 16, torch.bfloat16), (16, 512, 200, 64, 16, torch.bfloat16),
               (8, 768, 249, 128, 16, torch.float32), (8, 256, 1000, 32, 8, torch.bfloat16)]
    xd = [torch.randn(b, ci, n, device=DEVICE, dtype=dt, requires_grad=True) for b, ci, _, n, _, _, dt in dense]
    wd = [torch.randn(co, ci, k, device=DEVICE, dtype=dt, requires_grad=True) for _, ci, co, _, k, _, dt in dense]
    xg = [torch.randn(b, c, n, device=DEVICE, dtype=dt, requires_grad=True) for b, c, n, _, _, dt in grouped]
    wg = [torch.randn(c, c // g, k, device=DEVICE, dtype=dt, requires_grad=True) for _, c, _, k, g, dt in grouped]

    def forward(xd, wd, xg, wg):
        out = sum(F.conv1d(x, w, stride=cfg[5], padding=cfg[4] // 2).float().mean() for x, w, cfg in zip(xd, wd, dense))
        return out + sum(F.conv1d(x, w, padding=cfg[3] // 2, groups=cfg[4]).float().mean()
                         for x, w, cfg in zip(xg, wg, grouped))

    torch.compile(forward)(xd, wd, xg, wg).backward()


def outer_reduction_sweep():
    """An experiment kept out of the fit (tests/data/experiments/
    outer_reduction): sums into few outputs, alone. Per-channel sums of
    N x C x S tensors over N and S (a batch norm's or a 1-D layer norm's
    weight and bias gradients without the rest of their backward: 32 to
    2,048 channels, 784 to 25,088 elements each), of one to three operands,
    bf16 and f32; and sums of [R, C] matrices over their rows (Inductor
    splits those into two kernels). The library models' few-output
    reductions that miss are fused with a full-size epilogue; these are
    not."""
    bf16, f32 = torch.bfloat16, torch.float32
    # (batch N, channels C, spatial S, operands, dtype)
    per_channel = [(32, 512, 196, 3, bf16), (32, 320, 196, 2, bf16), (8, 256, 1024, 2, f32), (64, 64, 3136, 1, bf16),
                   (16, 1024, 49, 2, bf16), (128, 128, 256, 1, f32), (8, 768, 197, 3, bf16), (4, 2048, 64, 1, bf16),
                   (32, 96, 3136, 2, bf16), (16, 384, 784, 3, f32), (64, 192, 512, 1, bf16), (8, 128, 8192, 3, bf16),
                   (256, 32, 1024, 2, bf16), (2, 640, 4096, 1, f32)]
    # (outputs C, rows R, operands, dtype)
    rows = [(64, 4096, 1, bf16), (512, 6272, 3, bf16), (1024, 4096, 2, bf16), (128, 8192, 2, f32), (320, 6272, 2, bf16),
            (96, 16384, 1, bf16)]

    def operands(shape, k, dt, broadcast):
        ops = [torch.randn(*shape, device=DEVICE, dtype=dt) for _ in range(min(k, 2))]
        return ops + ([torch.randn(*broadcast, device=DEVICE, dtype=dt)] if k == 3 else [])

    data = [(operands((n, c, s), k, dt, (n, 1, s)), (0, 2)) for n, c, s, k, dt in per_channel]
    data += [(operands((r, c), k, dt, (r, 1)), (0,)) for c, r, k, dt in rows]

    def forward(data):
        out = []
        for ops, dims in data:
            prod = ops[0].float()
            for o in ops[1:]:
                prod = prod * o.float()
            out.append(prod.sum(dims))
        return out

    with torch.no_grad():
        torch.compile(forward)(data)


def gather_scatter_sweep():
    """An experiment kept out of the fit (tests/data/experiments/
    gather_scatter): graph layers' message passing (one Triton kernel each:
    rows gathered through an index, combined, and added into a table with
    atomics), over what the scatter traffic sweep leaves out: gathered
    tables of 8 to 512 MiB (the L2 holds about 50 MiB) read through 1 to 4
    indices, their re-read rows beside an atomic table that fits the L2 and
    beside one that does not, rows of 128 B to 1 KiB, and the messages also
    written out (a graph attention layer's forward)."""
    # (edges E, gathered rows N, columns C, atomic table rows: None = N, gathers G, messages written)
    configs = [(524288, 8192, 256, 4096, 1, False), (524288, 65536, 256, 4096, 1, False), (524288, 262144, 256, 4096, 1, False),
               (524288, 524288, 256, 4096, 1, False), (524288, 1048576, 64, 4096, 1, False), (524288, 262144, 256, 4096, 2, False),
               (524288, 65536, 256, 4096, 4, False), (524288, 262144, 256, 4096, 4, False), (524288, 16384, 256, None, 2, False),
               (524288, 65536, 256, None, 1, False), (524288, 262144, 256, None, 1, False), (524288, 65536, 256, None, 1, True),
               (524288, 65536, 256, None, 4, False), (2097152, 1048576, 32, None, 1, False)]
    gen = torch.Generator(device=DEVICE).manual_seed(0)

    def layer_data(e, n, c, rows):
        rows = rows or n
        return (torch.randn(n, c, device=DEVICE), torch.randn(n, c, device=DEVICE), torch.randint(0, n, (e,), device=DEVICE, generator=gen),
                torch.randint(0, n, (e,), device=DEVICE, generator=gen), torch.randint(0, rows, (e,), device=DEVICE, generator=gen),
                torch.randn(e, device=DEVICE, generator=gen), rows)

    data = [layer_data(e, n, c, rows) for e, n, c, rows, _, _ in configs]
    shape = [(g, written) for *_, g, written in configs]

    def message_passing(data):
        out = []
        for (x, y, src, dst, into, w, rows), (gathers, written) in zip(data, shape):
            if gathers == 1:
                msg = x[src] * w[:, None]
            elif gathers == 2:
                msg = x[src] * y[dst]
            else:
                msg = x[src] * y[dst] + y[src] * x[dst]
            out.append(x.new_zeros(rows, x.shape[1]).index_add(0, into, msg))
            if written:
                out.append(msg)
        return out

    with torch.no_grad():
        torch.compile(message_passing)(data)


def gemm_token_sweep():
    """bf16 matmuls over a vision or audio model's token count, which no
    padding aligns (CLIP's 50, ViT's 145, 197 and 577 tokens): the token
    dim as the reduction of a token-mixing product ([rows, tokens] @
    [tokens, N]) and as the weight-gradient's reduction read transposed
    ([tokens, rows]^T @ [tokens, N]), rows 4,096 to 65,536, N 64 to 1,536,
    5 to 120 µs: the small and skinny products whose floor the pitch sweep's
    large shapes leave loose. None a library model's shape (MLP-Mixer's
    are 196 tokens into 384 and 768). An experiment kept out of the fit
    (tests/data/experiments/gemm_token): fitted, it lowers the unaligned
    law's floor and prices Swin-T's odd-row window products short."""
    import torch
    import torch._inductor.config as inductor_config

    tokens = (50, 145, 197, 577)
    rows_out = ((4096, 768), (32768, 256), (8192, 1536), (65536, 64))
    shapes = [(m, k, n) for k in tokens for m, n in rows_out]
    a = [torch.randn(m, k, device=DEVICE, dtype=torch.bfloat16) for m, k, _ in shapes]
    b = [torch.randn(k, n, device=DEVICE, dtype=torch.bfloat16) for _, k, n in shapes]
    at = [torch.randn(k, m, device=DEVICE, dtype=torch.bfloat16) for m, k, _ in shapes[::2]]
    bt = [torch.randn(k, n, device=DEVICE, dtype=torch.bfloat16) for _, k, n in shapes[::2]]

    def forward(a, b, at, bt):
        return [x @ y for x, y in zip(a, b)] + [x.t() @ y for x, y in zip(at, bt)]

    with torch.no_grad(), inductor_config.patch(shape_padding=False, comprehensive_padding=False):
        torch.compile(forward)(a, b, at, bt)


def attention_f32_bias_sweep():
    """An experiment kept out of the fit (tests/data/experiments/
    attention_f32_bias): f32 attention (the memory-efficient kernels) at one
    score count (33.5 M) over lengths 256 to 2,048, head dim 64, without a
    bias, with one per head ([B, H, S, S]) and with one broadcast over heads
    ([B, 1, S, S]); and head dim 32 at 512, forward and backward: what a
    bias costs per score against per query row, which the f32 sweeps'
    shapes do not separate."""
    # (batch, heads, length, head dim, bias: None, "bh" or "b1")
    configs = [(b, 8, s, 64, m) for b, s in ((64, 256), (16, 512), (4, 1024), (1, 2048)) for m in (None, "bh", "b1")]
    configs += [(16, 8, 512, 32, None), (16, 8, 512, 32, "bh")]
    gen = torch.Generator(device=DEVICE).manual_seed(0)
    qkv = [tuple(torch.randn(b, h, s, d, device=DEVICE, generator=gen, requires_grad=True) for _ in range(3)) for b, h, s, d, _ in configs]
    masks = [None if m is None else torch.randn(b, h if m == "bh" else 1, s, s, device=DEVICE, generator=gen) for b, h, s, _, m in configs]

    def forward(qkv, masks):
        return sum(F.scaled_dot_product_attention(q, k, v, attn_mask=m).mean() for (q, k, v), m in zip(qkv, masks))

    torch.compile(forward)(qkv, masks).backward()


def embedding_bag_walk_sweep():
    """An experiment kept out of the fit (tests/data/experiments/
    embedding_bag): embedding-bag forwards (ATen's fallback, one kernel of
    1,024 blocks of 32 x 8 threads) in shapes the class sweep's six do not
    have: 1 to 60 lookups a bag, 1 to 8 chunks of 32 columns a warp,
    tables the L2 holds and tables of 0.3 GB, bf16 tables, sum and mean."""
    # (table rows, columns, bags, lookups a bag, mode, dtype)
    configs = [(2_000_000, 64, 8192, 16, "sum", torch.float32), (20_000, 128, 4096, 25, "sum", torch.float32),
               (500_000, 32, 32768, 4, "sum", torch.float32), (100_000, 64, 2048, 60, "mean", torch.float32),
               (1_000_000, 128, 1024, 30, "sum", torch.bfloat16), (50_000, 512, 2048, 12, "sum", torch.float32),
               (5_000_000, 16, 65536, 2, "sum", torch.float32), (300_000, 96, 4096, 50, "sum", torch.bfloat16),
               (8_000, 64, 16384, 40, "mean", torch.float32), (1_000_000, 64, 4096, 1, "sum", torch.float32)]
    gen = torch.Generator(device=DEVICE).manual_seed(0)
    tables = [torch.randn(rows, cols, device=DEVICE, dtype=dtype, generator=gen) for rows, cols, _, _, _, dtype in configs]
    indices = [torch.randint(0, rows, (bags * lookups,), device=DEVICE, generator=gen) for rows, _, bags, lookups, _, _ in configs]
    offsets = [torch.arange(0, bags * lookups, lookups, device=DEVICE) for _, _, bags, lookups, _, _ in configs]
    modes = [mode for *_, mode, _ in configs]

    def bags(tables, indices, offsets):
        return [F.embedding_bag(i, t, o, mode=m) for t, i, o, m in zip(tables, indices, offsets, modes)]

    with torch.no_grad():
        torch.compile(bags)(tables, indices, offsets)


def norm_backward_sweep():
    """An experiment kept out of the fit (tests/data/experiments/
    norm_backward): the kernels outer_reduction_sweep's sums left out, a
    norm's backward with its weight and bias gradients and a full-size
    gradient in one Triton reduction. Layer norms whose output a
    token-mixing linear reads transposed (MLP-Mixer's pattern: the
    backward's operands move fastest along different loop indices) and
    channels-last batch norms (RegNetY's, the Conformer's), training steps
    in bf16 over shapes no library model has."""
    bf16 = torch.bfloat16
    # (batch, tokens, channels) of a layer norm feeding a token-mixing linear
    mixing = [(16, 256, 384), (64, 64, 768), (8, 1024, 256), (32, 49, 1024), (128, 144, 128), (4, 2048, 512),
              (16, 576, 320), (32, 100, 640)]
    # (batch, channels, height = width) of a channels-last batch norm behind a 1x1 convolution
    batch_norms = [(32, 64, 56), (16, 256, 28), (64, 512, 7), (8, 96, 112), (32, 384, 14)]

    class TokenMixing(nn.Module):
        def __init__(self, t, c):
            super().__init__()
            self.norm, self.mix = nn.LayerNorm(c), nn.Linear(t, t)

        def forward(self, x):
            return x + self.mix(self.norm(x).transpose(1, 2)).transpose(1, 2)

    class ConvNorm(nn.Module):
        def __init__(self, c):
            super().__init__()
            self.conv, self.norm = nn.Conv2d(c, c, 1, bias=False), nn.BatchNorm2d(c)

        def forward(self, x):
            return F.relu(self.norm(self.conv(x)))

    blocks = nn.ModuleList([TokenMixing(t, c) for _, t, c in mixing] + [ConvNorm(c) for _, c, _ in batch_norms])
    blocks = blocks.to(DEVICE, bf16).to(memory_format=torch.channels_last)
    xs = [torch.randn(b, t, c, device=DEVICE, dtype=bf16, requires_grad=True) for b, t, c in mixing]
    xs += [torch.randn(b, c, hw, hw, device=DEVICE, dtype=bf16).to(memory_format=torch.channels_last).requires_grad_()
           for b, c, hw in batch_norms]

    def step(xs):
        return sum(block(x).float().square().mean() for block, x in zip(blocks, xs))

    torch.compile(step)(xs).backward()


def scatter_add_sweep():
    """Accumulating scatters (index_put with accumulate=True, which Inductor
    lowers to a Triton kernel of atomic adds) of N rows of C values into a
    table of T rows, in bf16 and f32: few rows hit many times (a relative
    position bias gradient: Swin's 16 windows x 2401 positions onto 169
    offsets), and many rows hit rarely (an embedding's gradient)."""
    # (updates N, table rows T, columns C, dtype)
    configs = [(38416, 169, 24, torch.bfloat16), (38416, 169, 24, torch.float32), (65536, 4096, 64, torch.bfloat16),
               (65536, 4096, 64, torch.float32), (65536, 64, 64, torch.bfloat16), (65536, 64, 64, torch.float32),
               (8192, 32000, 1024, torch.float32), (8192, 32000, 1024, torch.bfloat16), (262144, 1024, 8, torch.bfloat16)]
    gen = torch.Generator(device=DEVICE).manual_seed(0)
    data = [(torch.zeros(t, c, device=DEVICE, dtype=dt), torch.randint(0, t, (n,), device=DEVICE, generator=gen),
             torch.randn(n, c, device=DEVICE, dtype=dt)) for n, t, c, dt in configs]

    def forward(data):
        return [table.index_put((idx,), vals, accumulate=True) for table, idx, vals in data]

    # The same fused behind a reduction, as in Swin's backward: each row is
    # a sum over R first (reduction, then an atomic add per output element).
    # (R, updates N, table rows T, columns C, dtype)
    reduced = [(16, 2401, 169, 24, torch.bfloat16), (16, 2401, 169, 24, torch.float32), (16, 4096, 64, 64, torch.bfloat16),
               (8, 65536, 1024, 8, torch.bfloat16), (4, 16384, 8192, 64, torch.float32)]
    rdata = [(torch.zeros(t, c, device=DEVICE, dtype=dt), torch.randint(0, t, (n,), device=DEVICE, generator=gen),
              torch.randn(r, n, c, device=DEVICE, dtype=dt)) for r, n, t, c, dt in reduced]

    def reduced_forward(rdata):
        return [table.index_put((idx,), x.sum(0), accumulate=True) for table, idx, x in rdata]

    with torch.no_grad():
        torch.compile(forward)(data)
        torch.compile(reduced_forward)(rdata)


def attention_sweep():
    """Scaled-dot-product attention through PyTorch's default backend choice
    over batch, heads, sequence lengths and head dims, forward and backward
    in bf16 and fp32, and memory-bound decoding (one query against a KV
    cache): attention efficiency for the time model."""
    # (batch, heads, seq_q, seq_k, head_dim, causal)
    configs = [(8, 16, 512, 512, 64, True), (2, 8, 2048, 2048, 128, False), (16, 12, 256, 256, 64, False),
               (4, 32, 1024, 1024, 128, True), (32, 4, 128, 128, 32, False)]
    for dtype in (torch.bfloat16, torch.float32):
        shapes = configs if dtype == torch.bfloat16 else configs[::2]
        qkv = [tuple(torch.randn(b, h, s, d, device=DEVICE, dtype=dtype, requires_grad=True) for s in (sq, sk, sk))
               for b, h, sq, sk, d, _ in shapes]

        def forward(qkv):
            return sum(F.scaled_dot_product_attention(q, k, v, is_causal=c and q.shape[2] == k.shape[2]).float().mean()
                       for (q, k, v), (*_, c) in zip(qkv, shapes))

        torch.compile(forward)(qkv).backward()
    # Decoding: (batch, heads, cache length, head_dim), bf16, no grad.
    decode = [(8, 32, 2048, 128), (4, 16, 8192, 64), (16, 8, 1024, 128), (1, 32, 4096, 128)]
    caches = [(torch.randn(b, h, 1, d, device=DEVICE, dtype=torch.bfloat16),
               torch.randn(b, h, s, d, device=DEVICE, dtype=torch.bfloat16),
               torch.randn(b, h, s, d, device=DEVICE, dtype=torch.bfloat16)) for b, h, s, d in decode]

    def decode_step(caches):
        return [F.scaled_dot_product_attention(q, k, v) for q, k, v in caches]

    with torch.no_grad():
        torch.compile(decode_step)(caches)


def extern_sweep():
    """ATen fallbacks Inductor does not generate code for (topk, sort,
    nonzero) over a range of sizes: the extern class of the time
    model, which launches several library kernels per call."""
    torch._dynamo.config.capture_dynamic_output_shape_ops = True
    xs = [torch.randn(n, device=DEVICE) for n in (4096, 65536, 1 << 20)]
    ms = [torch.randn(r, c, device=DEVICE) for r, c in ((256, 64), (1024, 1024), (4096, 512))]

    def forward(xs, ms):
        out = []
        for m in ms:
            out += list(torch.topk(m, 8, dim=-1))
        for x in xs:
            out += list(torch.sort(x))
            out.append(torch.nonzero(x > 0.5))
        return out

    with torch.no_grad():
        torch.compile(forward)(xs, ms)


def cpu_mlp():
    """A CPU-compiled MLP, forward and backward (Inductor's C++ backend)."""
    model = nn.Sequential(nn.Linear(256, 1024), nn.GELU(), nn.Linear(1024, 256), nn.LayerNorm(256))
    x = torch.randn(128, 256)
    torch.compile(model)(x).pow(2).mean().backward()


def cpu_convnet():
    """A CPU-compiled conv/BatchNorm/ReLU stack in inference."""
    model = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(),
                          nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
                          nn.Flatten(), nn.Linear(32, 10)).eval()
    with torch.no_grad():
        torch.compile(model)(torch.randn(4, 3, 32, 32))


SINGLE_GPU_CASES = {
    "transformer_s": _transformer(256, 4, 1, 4, 128, torch.float32),
    "transformer_m": _transformer(512, 8, 2, 4, 256, torch.bfloat16),
    "transformer_l": _transformer(1024, 16, 4, 2, 512, torch.bfloat16),
    "convnet_bn": convnet_bn,
    "mlp_checkpoint": mlp_checkpoint,
    "adamw_step": adamw_step,
    "llama_block": llama_block,
    "vit": vit,
    "unet_gn": unet_gn,
    "lm_head_ce": lm_head_ce,
    "moe_static": moe_static,
    "moe_dropless": moe_dropless,
    "bert_dynamic": bert_dynamic,
    "kv_decode": kv_decode,
    "sdpa_flash": _sdpa_case("FLASH_ATTENTION", torch.bfloat16, True, 4, 16, 1024, 64),
    "sdpa_efficient": _sdpa_case("EFFICIENT_ATTENTION", torch.float32, False, 4, 8, 512, 64),
    "sdpa_cudnn": _sdpa_case("CUDNN_ATTENTION", torch.bfloat16, True, 4, 16, 1024, 128),
    "gemm_sweep": gemm_sweep,
    "pointwise_sweep": pointwise_sweep,
    "conv_sweep": conv_sweep,
    "conv_narrow_sweep": conv_narrow_sweep,
    "conv_small_sweep": conv_small_sweep,
    "conv_grid_dense": conv_grid_dense,
    "conv_grid_grouped": conv_grid_grouped,
    "conv_grid_nchw": conv_grid_nchw,
    "conv_grid_f32_channels_last": conv_grid_f32_channels_last,
    "conv_grid_nchw_small": conv_grid_nchw_small,
    "gemm_unaligned_sweep": gemm_unaligned_sweep,
    "reduction_sweep": reduction_sweep,
    "attention_dropout_sweep": attention_dropout_sweep,
    "attention_bias_sweep": attention_bias_sweep,
    "loss_vocab_sweep": loss_vocab_sweep,
    "attention_sweep": attention_sweep,
    "extern_sweep": extern_sweep,
}

CPU_CASES = {
    "cpu_mlp": cpu_mlp,
    "cpu_convnet": cpu_convnet,
}

def tp2d():
    """2-D parallelism on a (dp=2, tp=4) device mesh: FSDP-style all-gather of
    weight shards over the dp group, Megatron MLP (column then row parallel)
    with all-reduces over the tp group: two process groups in one graph."""
    from torch.distributed.device_mesh import init_device_mesh

    mesh = init_device_mesh(DEVICE, (2, 4), mesh_dim_names=("dp", "tp"))
    dp, tp = mesh.get_group("dp"), mesh.get_group("tp")
    funcol = _funcol()
    copy_to, reduce_from = _parallel_functions(lambda: tp)
    dim, hidden, layers = 1024, 4096 // 4, 2
    shards = []
    for _ in range(layers):
        shards.append((torch.randn(hidden * dim // 2, device=DEVICE, dtype=torch.bfloat16) * 0.02).requires_grad_())
        shards.append((torch.randn(dim * hidden // 2, device=DEVICE, dtype=torch.bfloat16) * 0.02).requires_grad_())

    def forward(x, *shards):
        for up_shard, down_shard in zip(shards[::2], shards[1::2]):
            w_up = funcol.all_gather_tensor_autograd(up_shard, 0, dp).view(hidden, dim)
            w_down = funcol.all_gather_tensor_autograd(down_shard, 0, dp).view(dim, hidden)
            h = F.gelu(copy_to.apply(x) @ w_up.t())
            x = x + reduce_from.apply(h @ w_down.t())
        return x

    x = torch.randn(2048, dim, device=DEVICE, dtype=torch.bfloat16, requires_grad=True)
    torch.compile(forward)(x, *shards).float().pow(2).mean().backward()


class _FSDP2Block(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(dim, 4 * dim), nn.Linear(4 * dim, dim)

    def forward(self, x):
        return x + self.fc2(F.gelu(self.fc1(x)))


def _fsdp2_model(dim: int = 1024, blocks: int = 2):
    from torch.distributed.fsdp import fully_shard

    model = nn.Sequential(*[_FSDP2Block(dim) for _ in range(blocks)]).to(DEVICE)
    for block in model:
        fully_shard(block)
    fully_shard(model)
    return model


def fsdp2_eager_hooks():
    """FSDP2 (fully_shard) with each block compiled (block.compile(), the
    documented pattern) and default settings: FSDP2's hooks run eagerly, so
    the compiled graphs hold no all-gather (exporter docs, "FSDP2")."""
    model = _fsdp2_model()
    for block in model:
        block.compile()
    model(torch.randn(512, 1024, device=DEVICE)).pow(2).mean().backward()


def fsdp2_traced():
    """FSDP2 with its hooks traced (torch._dynamo.config.skip_fsdp_hooks=False),
    the whole model compiled with fullgraph=True and compiled autograd for the
    backward: all-gathers and reduce-scatters inside the compiled graphs."""
    import functools

    model = _fsdp2_model()
    x = torch.randn(512, 1024, device=DEVICE)
    model(x).pow(2).mean().backward()  # FSDP2's lazy init must run eagerly
    with torch._dynamo.config.patch(skip_fsdp_hooks=False), \
            torch._dynamo.compiled_autograd._enable(functools.partial(torch.compile, fullgraph=True)):
        torch.compile(model, fullgraph=True)(x).pow(2).mean().backward()


DISTRIBUTED_CASES = {
    "fsdp_train": fsdp_train,
    "fsdp_step": fsdp_step,
    "ddp_step": ddp_step,
    "tp_block": tp_block,
    "tp2d": tp2d,
    "fsdp2_eager_hooks": fsdp2_eager_hooks,
}

# Run only when named (run_zoo.py --only NAME): in PyTorch 2.11 this fails to
# compile (docs/exporter.md, "FSDP2 and torch.compile"); kept to re-check.
EXPERIMENT_CASES = {
    "fsdp2_traced": fsdp2_traced,
}


def resnet_step():
    """Out of the zoo (tests/data/outside_zoo): torchvision ResNet-18, one
    compiled f32 training step, as its README exports it."""
    import torchvision

    model = torchvision.models.resnet18(weights=None).to(DEVICE)
    x = torch.randn(16, 3, 128, 128, device=DEVICE)
    torch.compile(model)(x).square().mean().backward()


def mobilenet_step():
    """Out of the zoo: torchvision MobileNetV3-small, bf16, channels-last,
    one compiled training step."""
    import torchvision

    model = torchvision.models.mobilenet_v3_small(weights=None).to(DEVICE).to(
        dtype=torch.bfloat16, memory_format=torch.channels_last)
    x = torch.randn(16, 3, 160, 160, device=DEVICE, dtype=torch.bfloat16).to(memory_format=torch.channels_last)
    torch.compile(model)(x).float().square().mean().backward()


def _torchvision_step(name: str, dtype, batch: int, image: int, channels_last: bool):
    import torchvision

    model = getattr(torchvision.models, name)(weights=None).to(DEVICE, dtype)
    x = torch.randn(batch, 3, image, image, device=DEVICE, dtype=dtype)
    if channels_last:
        model, x = model.to(memory_format=torch.channels_last), x.to(memory_format=torch.channels_last)
    torch.compile(model)(x).float().square().mean().backward()


def resnet50_step():
    """Out of the zoo: torchvision ResNet-50, bf16 channels-last, batch 32 at
    224x224, one compiled training step (compute-bound convolutions)."""
    _torchvision_step("resnet50", torch.bfloat16, 32, 224, True)


def efficientnet_step():
    """Out of the zoo: torchvision EfficientNet-B0, f32 as constructed
    (NCHW; Inductor decides the layout), batch 32 at 224x224: depthwise
    convolutions, squeeze-excitation, SiLU."""
    _torchvision_step("efficientnet_b0", torch.float32, 32, 224, False)


def convnext_step():
    """Out of the zoo: torchvision ConvNeXt-Tiny, bf16, batch 16 at 224x224:
    7x7 depthwise convolutions, LayerNorm and linear MLPs."""
    _torchvision_step("convnext_tiny", torch.bfloat16, 16, 224, False)


def regnet_step():
    """Out of the zoo: torchvision RegNetY-800MF, bf16 NCHW, batch 32 at
    224x224: grouped convolutions (group width 16) and squeeze-excitation."""
    _torchvision_step("regnet_y_800mf", torch.bfloat16, 32, 224, False)


def gpt2_step():
    """Out of the zoo: Hugging Face GPT-2 (6 layers, randomly initialised),
    bf16, batch 8 of 512 tokens, one compiled training step."""
    from transformers import GPT2Config, GPT2LMHeadModel

    config = GPT2Config(n_layer=6)
    model = GPT2LMHeadModel(config).to(DEVICE, torch.bfloat16)
    tokens = torch.randint(0, config.vocab_size, (8, 512), device=DEVICE)

    def step(tokens):
        return model(tokens, labels=tokens).loss

    torch.compile(step)(tokens).backward()


class _DiffusionResBlock(nn.Module):
    def __init__(self, cin: int, cout: int, tdim: int):
        super().__init__()
        self.norm1, self.conv1 = nn.GroupNorm(32, cin), nn.Conv2d(cin, cout, 3, padding=1)
        self.time = nn.Linear(tdim, cout)
        self.norm2, self.conv2 = nn.GroupNorm(32, cout), nn.Conv2d(cout, cout, 3, padding=1)
        self.skip = nn.Conv2d(cin, cout, 1) if cin != cout else nn.Identity()

    def forward(self, x, t):
        h = self.conv1(F.silu(self.norm1(x))) + self.time(F.silu(t))[:, :, None, None]
        return self.conv2(F.silu(self.norm2(h))) + self.skip(x)


class _DiffusionAttention(nn.Module):
    def __init__(self, c: int, heads: int):
        super().__init__()
        self.heads, self.norm = heads, nn.GroupNorm(32, c)
        self.qkv, self.proj = nn.Conv2d(c, 3 * c, 1), nn.Conv2d(c, c, 1)

    def forward(self, x):
        b, c, hh, ww = x.shape
        q, k, v = self.qkv(self.norm(x)).reshape(b, 3, self.heads, c // self.heads, hh * ww).unbind(1)
        o = F.scaled_dot_product_attention(q.transpose(-1, -2), k.transpose(-1, -2), v.transpose(-1, -2))
        return x + self.proj(o.transpose(-1, -2).reshape(b, c, hh, ww))


class DiffusionUNet(nn.Module):
    """A DDPM-style denoiser (Ho et al.'s CIFAR-10 UNet, narrowed): timestep
    embedding MLP, GroupNorm/SiLU residual blocks with the embedding added,
    self-attention at 16x16 and 8x8, strided-conv down and nearest-upsample
    + conv up, skip concatenation."""

    def __init__(self, c: int = 64):
        super().__init__()
        self.c, tdim = c, 4 * c
        self.temb = nn.Sequential(nn.Linear(c, tdim), nn.SiLU(), nn.Linear(tdim, tdim))
        self.inp = nn.Conv2d(3, c, 3, padding=1)
        self.d1, self.down1 = _DiffusionResBlock(c, c, tdim), nn.Conv2d(c, c, 3, stride=2, padding=1)
        self.d2, self.a2 = _DiffusionResBlock(c, 2 * c, tdim), _DiffusionAttention(2 * c, 4)
        self.down2 = nn.Conv2d(2 * c, 2 * c, 3, stride=2, padding=1)
        self.m1, self.ma, self.m2 = _DiffusionResBlock(2 * c, 2 * c, tdim), _DiffusionAttention(2 * c, 4), _DiffusionResBlock(2 * c, 2 * c, tdim)
        self.up2, self.u2, self.ua2 = nn.Conv2d(2 * c, 2 * c, 3, padding=1), _DiffusionResBlock(4 * c, 2 * c, tdim), _DiffusionAttention(2 * c, 4)
        self.up1, self.u1 = nn.Conv2d(2 * c, 2 * c, 3, padding=1), _DiffusionResBlock(3 * c, c, tdim)
        self.out_norm, self.out = nn.GroupNorm(32, c), nn.Conv2d(c, 3, 3, padding=1)

    def forward(self, x, steps):
        half = self.c // 2
        freqs = torch.exp(-math.log(10000.0) * torch.arange(half, device=x.device) / half)
        angles = steps[:, None].float() * freqs[None]
        t = self.temb(torch.cat((angles.sin(), angles.cos()), dim=1))
        s1 = self.d1(self.inp(x), t)
        s2 = self.a2(self.d2(self.down1(s1), t))
        h = self.m2(self.ma(self.m1(self.down2(s2), t)), t)
        h = self.ua2(self.u2(torch.cat((self.up2(F.interpolate(h, scale_factor=2.0)), s2), dim=1), t))
        h = self.u1(torch.cat((self.up1(F.interpolate(h, scale_factor=2.0)), s1), dim=1), t)
        return self.out(F.silu(self.out_norm(h)))


def diffusion_unet_step():
    """Out of the zoo: a DDPM-style UNet denoiser (f32, batch 8 of 3x32x32,
    64 base channels), one compiled training step on the noise-prediction
    loss."""
    model = DiffusionUNet(64).to(DEVICE)
    x = torch.randn(8, 3, 32, 32, device=DEVICE)
    steps = torch.randint(0, 1000, (8,), device=DEVICE)
    noise = torch.randn_like(x)

    def step(x, steps, noise):
        return F.mse_loss(model(x + noise, steps), noise)

    torch.compile(step)(x, steps, noise).backward()


def hf_llama_step():
    """Out of the zoo (session 10): Hugging Face Llama (4 layers of 1024
    wide, 16 heads over 4 key/value heads, SwiGLU 2816, RMSNorm, rotary,
    32,000-token vocabulary; randomly initialised), bf16, batch 4 of 1024
    tokens, SDPA attention, one compiled training step."""
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(hidden_size=1024, intermediate_size=2816, num_hidden_layers=4, num_attention_heads=16,
                         num_key_value_heads=4, vocab_size=32000, max_position_embeddings=2048)
    config._attn_implementation = "sdpa"
    model = LlamaForCausalLM(config).to(DEVICE, torch.bfloat16)
    tokens = torch.randint(0, config.vocab_size, (4, 1024), device=DEVICE)

    def step(tokens):
        return model(input_ids=tokens, labels=tokens).loss

    torch.compile(step)(tokens).backward()


def hf_bert_step():
    """Out of the zoo (session 10): Hugging Face BERT (6 layers of 768, 12
    heads; randomly initialised) for sequence classification, bf16, batch
    16 of 512 tokens with padding (half the batch padded after 448 tokens,
    so the attention gets the padding mask as an additive bias), SDPA
    attention, one compiled training step."""
    from transformers import BertConfig, BertForSequenceClassification

    config = BertConfig(num_hidden_layers=6, attn_implementation="sdpa")
    model = BertForSequenceClassification(config).to(DEVICE, torch.bfloat16)
    tokens = torch.randint(0, config.vocab_size, (16, 512), device=DEVICE)
    mask = torch.ones(16, 512, dtype=torch.long, device=DEVICE)
    mask[8:, 448:] = 0
    labels = torch.randint(0, 2, (16,), device=DEVICE)

    def step(tokens, mask, labels):
        return model(input_ids=tokens, attention_mask=mask, labels=labels).loss

    torch.compile(step)(tokens, mask, labels).backward()


def swin_step():
    """Out of the zoo (session 10): torchvision Swin-T (shifted-window
    attention with relative position bias), bf16, batch 16 of 224x224, one
    compiled training step."""
    import torchvision

    model = torchvision.models.swin_t().to(DEVICE, torch.bfloat16)
    x = torch.randn(16, 3, 224, 224, device=DEVICE, dtype=torch.bfloat16)
    labels = torch.randint(0, 1000, (16,), device=DEVICE)

    def step(x, labels):
        return F.cross_entropy(model(x), labels)

    torch.compile(step)(x, labels).backward()


# --- real library models for issue 27 (tests/data/library_models) -----------
# Each exercises a kernel class the zoo lacks. LIBRARY_FIT_CASES may be fitted
# (scripts/fit-profiles.sh); the others are held out: no fit ever sees them.


class _DLRM(nn.Module):
    """A DLRM-style recommender: a bottom MLP over the dense features, one
    sum-mode EmbeddingBag per sparse feature (dense gradients, as
    nn.EmbeddingBag trains by default), the pairwise dot-product interaction
    of the stacked features, and a top MLP."""

    def __init__(self, rows: list[int], dim: int = 64, dense_in: int = 13):
        super().__init__()
        self.tables = nn.ModuleList(nn.EmbeddingBag(r, dim, mode="sum") for r in rows)
        self.bottom = nn.Sequential(nn.Linear(dense_in, 512), nn.ReLU(), nn.Linear(512, 256), nn.ReLU(),
                                    nn.Linear(256, dim), nn.ReLU())
        features = len(rows) + 1
        self.register_buffer("pairs", torch.triu_indices(features, features, offset=1))
        self.top = nn.Sequential(nn.Linear(dim + features * (features - 1) // 2, 512), nn.ReLU(),
                                 nn.Linear(512, 256), nn.ReLU(), nn.Linear(256, 1))

    def forward(self, dense, indices, offsets):
        x = self.bottom(dense)
        stacked = torch.stack([x] + [t(i, o) for t, i, o in zip(self.tables, indices, offsets)], dim=1)
        dots = torch.bmm(stacked, stacked.transpose(1, 2))
        flat = dots[:, self.pairs[0], self.pairs[1]]
        return self.top(torch.cat([x, flat], dim=1)).squeeze(1)


def dlrm_step():
    """Held out (issue 27): the DLRM-style recommender above, f32, batch
    4096, eight tables of 5k-1M rows x 64, bags of 1-40 lookups whose
    indices are skewed toward the first rows (u^3: hot rows collide in the
    backward), binary cross-entropy; one compiled training step."""
    rows = [1_000_000, 500_000, 200_000, 100_000, 50_000, 20_000, 10_000, 5_000]
    bags = [20, 1, 40, 10, 5, 2, 8, 30]
    batch = 4096
    model = _DLRM(rows).to(DEVICE)
    gen = torch.Generator(device=DEVICE).manual_seed(0)
    indices = [(r * torch.rand(batch * b, device=DEVICE, generator=gen).pow(3)).long().clamp_(max=r - 1)
               for r, b in zip(rows, bags)]
    offsets = [torch.arange(0, batch * b, b, device=DEVICE) for b in bags]
    dense = torch.randn(batch, 13, device=DEVICE)
    labels = torch.randint(0, 2, (batch,), device=DEVICE).float()

    def step(dense, indices, offsets, labels):
        return F.binary_cross_entropy_with_logits(model(dense, indices, offsets), labels)

    torch.compile(step)(dense, indices, offsets, labels).backward()


def gat_step():
    """Held out (issue 27): torch_geometric's GATConv, two layers (8 heads of
    32, then one of 16 classes), f32, 50,000 nodes of 128 features, 800,000
    random edges plus self loops: attention softmax and aggregation by
    scatters over the edges' destinations; node classification, one compiled
    training step."""
    from torch_geometric.nn import GATConv

    class GAT(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = GATConv(128, 32, heads=8, add_self_loops=False)
            self.conv2 = GATConv(256, 16, heads=1, add_self_loops=False)

        def forward(self, x, edge_index):
            return self.conv2(F.elu(self.conv1(x, edge_index)), edge_index)

    nodes, edges = 50_000, 800_000
    gen = torch.Generator(device=DEVICE).manual_seed(0)
    random_edges = torch.randint(0, nodes, (2, edges), device=DEVICE, generator=gen)
    loops = torch.arange(nodes, device=DEVICE).expand(2, nodes)
    edge_index = torch.cat([random_edges, loops], dim=1)
    x = torch.randn(nodes, 128, device=DEVICE)
    labels = torch.randint(0, 16, (nodes,), device=DEVICE)
    model = GAT().to(DEVICE)

    def step(x, edge_index, labels):
        return F.cross_entropy(model(x, edge_index), labels)

    torch.compile(step)(x, edge_index, labels).backward()


def _pyg_node_classification(make_convs, nodes: int, edges: int, features: int, classes: int):
    """One compiled training step of a two-layer torch_geometric network
    (the two layers `make_convs()` returns, a ReLU between) classifying
    `nodes` nodes of `features` f32 features over `edges` random edges
    (seeded); the layers are made after the data, as the measured runs did."""

    class TwoLayers(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1, self.conv2 = make_convs()

        def forward(self, x, edge_index):
            return self.conv2(F.relu(self.conv1(x, edge_index)), edge_index)

    gen = torch.Generator(device=DEVICE).manual_seed(0)
    edge_index = torch.randint(0, nodes, (2, edges), device=DEVICE, generator=gen)
    x = torch.randn(nodes, features, device=DEVICE)
    labels = torch.randint(0, classes, (nodes,), device=DEVICE)
    model = TwoLayers().to(DEVICE)

    def step(x, edge_index, labels):
        return F.cross_entropy(model(x, edge_index), labels)

    torch.compile(step)(x, edge_index, labels).backward()


def sage_step():
    """Held out (issue 27, session 16): torch_geometric's GraphSAGE (two
    SAGEConv layers, mean aggregation: a scatter-add of neighbour rows into
    a table larger than the L2, divided by the in-degrees), f32, 200,000
    nodes of 128 features, 2,000,000 random edges; node classification,
    one compiled training step."""
    from torch_geometric.nn import SAGEConv

    _pyg_node_classification(lambda: (SAGEConv(128, 128), SAGEConv(128, 16)), nodes=200_000, edges=2_000_000, features=128, classes=16)


def gcn_step():
    """Held out (issue 27, session 16): torch_geometric's GCN (two GCNConv
    layers: degrees by a scatter-add, symmetric normalization with self
    loops, a weighted scatter-add of 256-wide rows), f32, 65,536 nodes of
    256 features, 1,000,000 random edges; one compiled training step."""
    from torch_geometric.nn import GCNConv

    _pyg_node_classification(lambda: (GCNConv(256, 256), GCNConv(256, 32)), nodes=65_536, edges=1_000_000, features=256, classes=32)


def conformer_step():
    """Held out (issue 27): torchaudio's Conformer (4 layers of 256, 4 heads,
    feed-forward 1024, depthwise 1-D convolutions of 31 taps: ATen's native
    depthwise kernels in f32), f32, batch 16 of 512 frames (half of them
    400 long, so the attention gets a padding mask), one compiled training
    step."""
    from torchaudio.models import Conformer

    model = Conformer(input_dim=256, num_heads=4, ffn_dim=1024, num_layers=4,
                      depthwise_conv_kernel_size=31).to(DEVICE)
    x = torch.randn(16, 512, 256, device=DEVICE)
    lengths = torch.full((16,), 512, device=DEVICE, dtype=torch.int32)
    lengths[8:] = 400

    def step(x, lengths):
        out, _ = model(x, lengths)
        return out.square().mean()

    torch.compile(step)(x, lengths).backward()


def wav2vec2_step():
    """Fitted (issue 27): Hugging Face Wav2Vec2 (the base model's seven 1-D
    convolutions of 512 channels over raw audio, its 128-tap positional
    convolution in 16 groups, 4 transformer layers of 384; randomly
    initialised, no time masking or layer drop), bf16, batch 8 of 2 s at 16
    kHz, SDPA attention, one compiled training step."""
    from transformers import Wav2Vec2Config, Wav2Vec2Model

    config = Wav2Vec2Config(hidden_size=384, num_hidden_layers=4, num_attention_heads=6, intermediate_size=1536,
                            mask_time_prob=0.0, layerdrop=0.0)
    config._attn_implementation = "sdpa"
    model = Wav2Vec2Model(config).to(DEVICE, torch.bfloat16)
    audio = torch.randn(8, 32000, device=DEVICE, dtype=torch.bfloat16)

    def step(audio):
        return model(audio).last_hidden_state.float().square().mean()

    torch.compile(step)(audio).backward()


def mixer_step():
    """Held out (issue 27): timm's MLP-Mixer S/16 (token mixing: MLPs over
    the transposed token dimension, LayerNorms beside transposes; a 16x16
    stride-16 patch convolution), bf16, batch 32 of 224x224, one compiled
    training step."""
    import timm

    model = timm.create_model("mixer_s16_224", pretrained=False).to(DEVICE, torch.bfloat16)
    x = torch.randn(32, 3, 224, 224, device=DEVICE, dtype=torch.bfloat16)
    labels = torch.randint(0, 1000, (32,), device=DEVICE)

    def step(x, labels):
        return F.cross_entropy(model(x), labels)

    torch.compile(step)(x, labels).backward()


def whisper_step():
    """Held out (issue 27): Hugging Face Whisper (tiny's shape: 4 encoder and
    4 decoder layers of 384, 6 heads, two 1-D convolutions over 80 mel
    bins; randomly initialised), bf16, batch 8 of 30 s (3000 frames) with
    128 target tokens over its 51,865-token vocabulary (an odd reduction
    dimension in the head's gradient), SDPA attention, one compiled
    training step."""
    from transformers import WhisperConfig, WhisperForConditionalGeneration

    config = WhisperConfig(d_model=384, encoder_layers=4, decoder_layers=4, encoder_attention_heads=6,
                           decoder_attention_heads=6, encoder_ffn_dim=1536, decoder_ffn_dim=1536, vocab_size=51865)
    config._attn_implementation = "sdpa"
    model = WhisperForConditionalGeneration(config).to(DEVICE, torch.bfloat16)
    features = torch.randn(8, 80, 3000, device=DEVICE, dtype=torch.bfloat16)
    labels = torch.randint(0, 51865, (8, 128), device=DEVICE)

    def step(features, labels):
        return model(input_features=features, labels=labels).loss

    torch.compile(step)(features, labels).backward()


def t5_step():
    """Fitted (issue 27): Hugging Face T5 (encoder-decoder, 4 + 4 layers of
    512, 8 heads, relative position biases looked up from a 32-bucket table
    whose gradient scatters back; randomly initialised, dropout 0.1), bf16,
    batch 8 of 512 source and 128 target tokens, one compiled training step."""
    from transformers import T5Config, T5ForConditionalGeneration

    config = T5Config(d_model=512, d_kv=64, d_ff=2048, num_layers=4, num_decoder_layers=4, num_heads=8,
                      vocab_size=32128, decoder_start_token_id=0, pad_token_id=0)
    model = T5ForConditionalGeneration(config).to(DEVICE, torch.bfloat16)
    source = torch.randint(0, 32128, (8, 512), device=DEVICE)
    labels = torch.randint(0, 32128, (8, 128), device=DEVICE)

    def step(source, labels):
        return model(input_ids=source, labels=labels).loss

    torch.compile(step)(source, labels).backward()


LIBRARY_CASES = {
    "dlrm_step": dlrm_step,
    "gat_step": gat_step,
    "conformer_step": conformer_step,
    "wav2vec2_step": wav2vec2_step,
    "mixer_step": mixer_step,
    "whisper_step": whisper_step,
    "t5_step": t5_step,
    "sage_step": sage_step,
    "gcn_step": gcn_step,
}
# The library models a fit may see; every other one is held out.
LIBRARY_FIT_CASES = ("wav2vec2_step", "t5_step")


# Models outside the zoo (tests/data/outside_zoo), never fitted: run only when
# named, so that their walls are sampled in the zoo's interleaved rounds.
OUTSIDE_CASES = {
    "resnet_step": resnet_step,
    "mobilenet_step": mobilenet_step,
    "resnet50_step": resnet50_step,
    "efficientnet_step": efficientnet_step,
    "convnext_step": convnext_step,
    "regnet_step": regnet_step,
    "gpt2_step": gpt2_step,
    "diffusion_unet_step": diffusion_unet_step,
    "hf_llama_step": hf_llama_step,
    "hf_bert_step": hf_bert_step,
    "swin_step": swin_step,
    # Not a model: an experiment kept out of the fit (tests/data/experiments/scatter_add).
    "scatter_add_sweep": scatter_add_sweep,
    # Not a model either: an experiment kept out of the fit (tests/data/experiments/conv1d).
    "conv1d_sweep": conv1d_sweep,
    # An experiment too (tests/data/experiments/outer_reduction).
    "outer_reduction_sweep": outer_reduction_sweep,
    # And one more (tests/data/experiments/norm_backward).
    "norm_backward_sweep": norm_backward_sweep,
    # And another (tests/data/experiments/gather_scatter).
    "gather_scatter_sweep": gather_scatter_sweep,
    # And the embedding bags' (tests/data/experiments/embedding_bag).
    "embedding_bag_walk_sweep": embedding_bag_walk_sweep,
    # And the token-count matmuls' (tests/data/experiments/gemm_token).
    "gemm_token_sweep": gemm_token_sweep,
    # And f32 attention's biases (tests/data/experiments/attention_f32_bias).
    "attention_f32_bias_sweep": attention_f32_bias_sweep,
}


def case_device(name: str) -> str:
    return "cpu" if name in CPU_CASES else DEVICE


# The finer kernel classes' sweeps (class_sweep.py, issue 27): run only when
# named, by class_sweep.py.
CLASS_SWEEP_CASES = {name: sweep.run for name, sweep in class_sweep.SWEEPS.items()}

ALL_CASES = {**SINGLE_GPU_CASES, **CPU_CASES, **DISTRIBUTED_CASES}
KNOWN_CASES = {**ALL_CASES, **EXPERIMENT_CASES, **OUTSIDE_CASES, **LIBRARY_CASES, **CLASS_SWEEP_CASES}


def is_distributed(name: str) -> bool:
    return name in DISTRIBUTED_CASES or name in EXPERIMENT_CASES

# Time-model fitting split (tests/data/measured/README.md): these models are
# held out; every other measured graph may be fitted on.
HELD_OUT = ("llama_block", "vit", "unet_gn", "moe_dropless", "kv_decode", "bert_dynamic", "tp2d")
