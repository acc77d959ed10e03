"""Real distributed training steps whose collectives are inside the compiled
graph (functional collectives, as python/zoo/cases.py traces them), for any
world size:
  tp_block       Megatron-style tensor-parallel transformer blocks (autograd:
                 a forward and a backward graph)
  fsdp           FSDP-style: each layer's weight all-gathered from its shard,
                 autograd reduce-scatters its gradient
  ddp            DDP-style: the backward written out, an all-reduce per
                 weight gradient as soon as it exists
  fsdp_fwd_bwd   gen-dist's FSDP pattern, forward and backward in one graph
  tp_microbatch  gen-dist's tensor-parallel pattern, 2 micro-batches in one graph

Steps with the bucketing users write by hand (pytorch#184236's manual plan),
each the baseline that Inductor's or schedlab's automatic bucketing of its
unbucketed twin is measured against:
  fsdp_fwd_bwd_bucketed  fsdp_fwd_bwd with one all-gather of each layer's
                         whole weight set and one reduce-scatter of its
                         gradients (twin: fsdp_fwd_bwd)
  llama_fsdp             Llama-style decoder, FSDP with one all-gather and one
                         reduce-scatter per transformer block
                         (twin: llama_fsdp_per_param)
  llama_fsdp_per_param   the same model and values, one all-gather and one
                         reduce-scatter per parameter
  ddp_buckets            DDP backward of a linear stack, gradients flattened
                         into DDP's 25 MiB buckets, one all-reduce per bucket
                         (twin: ddp_per_grad)
  ddp_per_grad           the same, one all-reduce per gradient
and further parallelism patterns:
  tp_sp_block            Megatron tensor + sequence parallel blocks
                         (all-gather / reduce-scatter along the sequence)
  moe_a2a                expert-parallel MoE layers, all-to-all dispatch and
                         combine with fixed expert capacity
The bucket plans themselves are torch-free data (bucketing.py).

Each builder takes the world size and a dtype and returns a `Step`: `run()`
runs one step (compiled forward, and backward where autograd does it) and
returns the tensors whose values the schedules must agree on.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, NamedTuple

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F

DEVICE = "cuda"

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "zoo"))
# Megatron's f and g (all-reduce of the gradient / of the output), as the zoo
# traces them with the fake process group; here over the real WORLD group.
from cases import _CopyToParallel, _ReduceFromParallel  # noqa: E402

import bucketing  # noqa: E402


def _funcol():
    import torch.distributed._functional_collectives as funcol

    return funcol


@dataclass
class Step:
    name: str
    run: Callable[[], list]  # one step; returns the tensors to compare across schedules
    describe: str


def _seeded(seed: int) -> torch.Generator:
    g = torch.Generator(device=DEVICE)
    g.manual_seed(seed)
    return g


# --- tensor parallel ------------------------------------------------------------
class TensorParallelBlock(nn.Module):
    def __init__(self, dim: int, heads: int, world: int):
        super().__init__()
        self.local_heads, self.head_dim = heads // world, dim // heads
        local = self.local_heads * self.head_dim
        self.ln1, self.ln2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * local)
        self.proj = nn.Linear(local, dim, bias=False)
        self.fc1 = nn.Linear(dim, 4 * dim // world)
        self.fc2 = nn.Linear(4 * dim // world, dim, bias=False)

    def forward(self, x):
        b, t, _ = x.shape
        h = _CopyToParallel.apply(self.ln1(x))
        q, k, v = self.qkv(h).view(b, t, 3, self.local_heads, self.head_dim).permute(2, 0, 3, 1, 4)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(b, t, -1)
        x = x + _ReduceFromParallel.apply(self.proj(a))
        h = _CopyToParallel.apply(self.ln2(x))
        return x + _ReduceFromParallel.apply(self.fc2(F.gelu(self.fc1(h))))


def tp_block(world: int, dtype=torch.bfloat16, dim=4096, heads=32, layers=2, batch=4, seq=2048) -> Step:
    torch.manual_seed(1234 + dist.get_rank())  # each rank holds its own shard
    model = nn.Sequential(*[TensorParallelBlock(dim, heads, world) for _ in range(layers)]).to(DEVICE, dtype)
    x = torch.randn(batch, seq, dim, device=DEVICE, dtype=dtype, generator=_seeded(7))  # replicated input

    def run():
        model.zero_grad(set_to_none=True)
        compiled = _compiled(model)
        out = compiled(x)
        out.float().pow(2).mean().backward()
        return [out] + [p.grad for p in model.parameters()]

    return Step("tp_block", run, f"{layers} Megatron blocks, dim {dim}, {heads} heads, {batch}x{seq} tokens, {dtype}")


# --- FSDP-style -----------------------------------------------------------------
def fsdp(world: int, dtype=torch.bfloat16, dim=4096, layers=8, tokens=8192) -> Step:
    funcol = _funcol()
    torch.manual_seed(99 + dist.get_rank())
    shards = [(torch.randn(dim * dim // world, device=DEVICE, dtype=dtype) * 0.02).requires_grad_() for _ in range(layers)]
    x = torch.randn(tokens, dim, device=DEVICE, dtype=dtype, generator=_seeded(11))

    def forward(x, *shards):
        for shard in shards:
            w = funcol.all_gather_tensor_autograd(shard, 0, dist.group.WORLD).view(dim, dim)
            x = F.relu(x @ w)
        return x

    def run():
        for s in shards:
            s.grad = None
        out = _compiled(forward)(x, *shards)
        out.float().pow(2).mean().backward()
        return [out] + [s.grad for s in shards]

    return Step("fsdp", run, f"{layers} layers dim {dim}, {tokens} tokens, weights sharded 1/{world}, {dtype}")


# --- DDP-style ------------------------------------------------------------------
def ddp(world: int, dtype=torch.bfloat16, dim=4096, layers=8, tokens=8192) -> Step:
    funcol = _funcol()
    torch.manual_seed(5)  # replicated weights, per-rank data
    weights = [torch.randn(dim, dim, device=DEVICE, dtype=dtype) * 0.02 for _ in range(layers)]
    gen = _seeded(17 + dist.get_rank())
    acts = [torch.relu(torch.randn(tokens, dim, device=DEVICE, dtype=dtype, generator=gen)) for _ in range(layers)]
    dy = torch.randn(tokens, dim, device=DEVICE, dtype=dtype, generator=gen)

    def backward(acts, weights, dy):
        grads = []
        for a, w in zip(reversed(acts), reversed(weights)):
            grads.append(funcol.all_reduce(a.t() @ dy, "sum", dist.group.WORLD))
            dy = (dy @ w.t()) * (a > 0)
        return [g / world for g in grads] + [dy]

    def run():
        return list(_compiled(backward)(acts, weights, dy))

    return Step("ddp", run, f"backward of {layers} linear layers dim {dim}, {tokens} tokens, one all-reduce per gradient, {dtype}")


# --- FSDP-style, forward and backward in one graph ------------------------------
def fsdp_fwd_bwd(world: int, dtype=torch.bfloat16, dim=4096, layers=4, tokens=4096) -> Step:
    """gen-dist's FSDP pattern as a real step (core/comms/gen_distributed.h):
    per layer an MLP block h -> 4h -> h whose two weights are all-gathered
    from 1/world shards before use, the backward written out in the same
    graph with a second all-gather (reshard after forward) and a
    reduce-scatter of each weight gradient. Every all-gather reads only a
    graph input, so Inductor's passes may hoist them all, memory permitting."""
    funcol = _funcol()
    torch.manual_seed(2024 + dist.get_rank())
    shards = [torch.randn(4 * dim * dim // world, device=DEVICE, dtype=dtype) * 0.02 for _ in range(2 * layers)]
    gen = _seeded(31 + dist.get_rank())
    x = torch.randn(tokens, dim, device=DEVICE, dtype=dtype, generator=gen)
    dy = torch.randn(tokens, dim, device=DEVICE, dtype=dtype, generator=gen)
    group = dist.group.WORLD

    def weights(shards, layer):
        w1 = funcol.all_gather_tensor(shards[2 * layer], 0, group).view(4 * dim, dim)
        w2 = funcol.all_gather_tensor(shards[2 * layer + 1], 0, group).view(dim, 4 * dim)
        return w1, w2

    def step(x, dy, *shards):
        saved, h = [], x
        for layer in range(layers):
            w1, w2 = weights(shards, layer)
            a = h @ w1.t()
            r = torch.relu(a)
            saved.append((h, a, r))
            h = r @ w2.t()
        grads, g = [], dy
        for layer in reversed(range(layers)):
            w1, w2 = weights(shards, layer)
            h_in, a, r = saved[layer]
            gw2 = g.t() @ r
            ga = (g @ w2) * (a > 0)
            gw1 = ga.t() @ h_in
            g = ga @ w1
            grads += [funcol.reduce_scatter_tensor(gw2.flatten(), "sum", 0, group),
                      funcol.reduce_scatter_tensor(gw1.flatten(), "sum", 0, group)]
        return [h, g] + grads

    def run():
        return list(_compiled(step)(x, dy, *shards))

    return Step("fsdp_fwd_bwd", run, f"{layers} MLP blocks h{dim} (h->4h->h), {tokens} tokens, forward and backward "
                                     f"in one graph, weights all-gathered twice and gradients reduce-scattered, {dtype}")


# --- tensor parallel, micro-batches in one graph --------------------------------
def tp_microbatch(world: int, dtype=torch.bfloat16, dim=4096, layers=8, tokens=4096, microbatches=2) -> Step:
    """gen-dist's tensor-parallel pattern as a real step: per layer a
    column-parallel (h -> 4h/world) and a row-parallel (4h/world -> h) matmul
    and an all-reduce, over independent micro-batches in one graph, so one
    micro-batch's all-reduce can hide behind the other's matmuls."""
    funcol = _funcol()
    torch.manual_seed(77 + dist.get_rank())
    w_col = [torch.randn(4 * dim // world, dim, device=DEVICE, dtype=dtype) * 0.02 for _ in range(layers)]
    w_row = [torch.randn(dim, 4 * dim // world, device=DEVICE, dtype=dtype) * 0.02 for _ in range(layers)]
    xs = [torch.randn(tokens, dim, device=DEVICE, dtype=dtype, generator=_seeded(5 + m)) for m in range(microbatches)]

    def forward(xs, w_col, w_row):
        outs = []
        for x in xs:
            for wc, wr in zip(w_col, w_row):
                x = x + funcol.all_reduce(F.gelu(x @ wc.t()) @ wr.t(), "sum", dist.group.WORLD)
            outs.append(x)
        return outs

    def run():
        return list(_compiled(forward)(xs, w_col, w_row))

    return Step("tp_microbatch", run, f"{layers} tensor-parallel MLP layers h{dim}, {microbatches} micro-batches of "
                                      f"{tokens} tokens in one graph, an all-reduce per layer, {dtype}")


# --- hand-written bucketing: flat buffers --------------------------------------
class FlatSpec(NamedTuple):
    """A flat buffer's views as plain ints and tuples (what the compiled
    function reads; Dynamo takes them as constants)."""
    views: tuple  # (name, offset, numel, shape) per parameter
    pad: int  # elements after the last parameter


def _flat_spec(layout: bucketing.FlatLayout) -> FlatSpec:
    last = layout.slots[-1]
    return FlatSpec(tuple((s.name, s.offset, s.numel, s.shape) for s in layout.slots),
                    layout.numel - last.offset - last.numel)


def _unflatten(flat: torch.Tensor, spec: FlatSpec) -> dict:
    """Views of the parameters a flat buffer holds (its padding unused)."""
    return {name: flat[offset:offset + numel].view(shape) for name, offset, numel, shape in spec.views}


def _flatten(tensors: list, spec: FlatSpec) -> torch.Tensor:
    """`tensors` (one per parameter, in the buffer's order) end to end,
    padded as the buffer is: the copy-in of a bucketed collective."""
    parts = [t.reshape(-1) for t in tensors]
    if spec.pad:
        parts.append(parts[0].new_zeros(spec.pad))
    return torch.cat(parts) if len(parts) > 1 else parts[0]


def _shard_of(full: torch.Tensor, world: int) -> torch.Tensor:
    return full.view(world, -1)[dist.get_rank()].clone()


# --- FSDP-style, forward and backward in one graph, bucketed per layer ---------
def fsdp_fwd_bwd_bucketed(world: int, dtype=torch.bfloat16, dim=4096, layers=4, tokens=4096) -> Step:
    """fsdp_fwd_bwd with the per-layer bucketing written in the step (the
    baseline of automatic bucketing on fsdp_fwd_bwd): each layer's two
    weights are one flat buffer [w1; w2] (bucketing.flat_layout) sharded
    1/world, so the forward and the backward each all-gather it once, and the
    layer's two weight gradients are concatenated into one reduce-scatter.
    Same shapes and flops as fsdp_fwd_bwd; the weights' values differ (drawn
    per layer, not per weight)."""
    funcol = _funcol()
    layout = bucketing.flat_layout([("w1", (4 * dim, dim)), ("w2", (dim, 4 * dim))], world)
    spec = _flat_spec(layout)
    torch.manual_seed(2024 + dist.get_rank())
    shards = [torch.randn(layout.shard_numel, device=DEVICE, dtype=dtype) * 0.02 for _ in range(layers)]
    gen = _seeded(31 + dist.get_rank())
    x = torch.randn(tokens, dim, device=DEVICE, dtype=dtype, generator=gen)
    dy = torch.randn(tokens, dim, device=DEVICE, dtype=dtype, generator=gen)
    group = dist.group.WORLD

    def weights(shard):
        w = _unflatten(funcol.all_gather_tensor(shard, 0, group), spec)
        return w["w1"], w["w2"]

    def step(x, dy, *shards):
        saved, h = [], x
        for layer in range(layers):
            w1, w2 = weights(shards[layer])
            a = h @ w1.t()
            r = torch.relu(a)
            saved.append((h, a, r))
            h = r @ w2.t()
        grads, g = [], dy
        for layer in reversed(range(layers)):
            w1, w2 = weights(shards[layer])
            h_in, a, r = saved[layer]
            gw2 = g.t() @ r
            ga = (g @ w2) * (a > 0)
            gw1 = ga.t() @ h_in
            g = ga @ w1
            grads.append(funcol.reduce_scatter_tensor(_flatten([gw1, gw2], spec), "sum", 0, group))
        return [h, g] + grads

    def run():
        return list(_compiled(step)(x, dy, *shards))

    return Step("fsdp_fwd_bwd_bucketed", run,
                f"{layers} MLP blocks h{dim} (h->4h->h), {tokens} tokens, forward and backward in one graph, "
                f"one all-gather per layer (twice) and one reduce-scatter per layer, {dtype}")


# --- Llama-style decoder, FSDP --------------------------------------------------
def _llama_block_params(dim: int, ffn: int) -> list:
    return [("attn_norm", (dim,)), ("wq", (dim, dim)), ("wk", (dim, dim)), ("wv", (dim, dim)), ("wo", (dim, dim)),
            ("ffn_norm", (dim,)), ("w1", (ffn, dim)), ("w3", (ffn, dim)), ("w2", (dim, ffn))]


def _rotary_tables(seq: int, head_dim: int, dtype) -> tuple[torch.Tensor, torch.Tensor]:
    inv_freq = 1.0 / (10000.0 ** (torch.arange(0, head_dim, 2, device=DEVICE, dtype=torch.float32) / head_dim))
    freqs = torch.outer(torch.arange(seq, device=DEVICE, dtype=torch.float32), inv_freq)
    angles = torch.cat([freqs, freqs], dim=-1)  # (seq, head_dim)
    return angles.cos().to(dtype), angles.sin().to(dtype)


def _rotary(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    x1, x2 = x.chunk(2, dim=-1)
    return x * cos + torch.cat([-x2, x1], dim=-1) * sin


def _llama_block(x, p: dict, cos, sin, heads: int):
    b, s, d = x.shape
    hd = d // heads
    h = F.rms_norm(x, (d,), p["attn_norm"], eps=1e-5)
    q = (h @ p["wq"].t()).view(b, s, heads, hd).transpose(1, 2)
    k = (h @ p["wk"].t()).view(b, s, heads, hd).transpose(1, 2)
    v = (h @ p["wv"].t()).view(b, s, heads, hd).transpose(1, 2)
    q, k = _rotary(q, cos, sin), _rotary(k, cos, sin)
    a = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(b, s, d)
    x = x + a @ p["wo"].t()
    h = F.rms_norm(x, (d,), p["ffn_norm"], eps=1e-5)
    return x + (F.silu(h @ p["w1"].t()) * (h @ p["w3"].t())) @ p["w2"].t()


def _llama_fsdp(name: str, per_block: bool, world: int, dtype=torch.bfloat16, dim=4096, ffn=11008, heads=32,
                layers=2, batch=2, seq=2048) -> Step:
    """A Llama-style decoder (RMSNorm, rotary attention through SDPA, SwiGLU
    MLP) under FSDP: every rank holds 1/world of each flat buffer
    (bucketing.fsdp_groups) and all-gathers it, with autograd, right before
    its block; autograd reduce-scatters the flat buffer's gradient in the
    backward graph (a forward and a backward graph, as FSDP2 under
    torch.compile gives). The model is the same on every rank and in both
    variants (drawn parameter by parameter from one seed); the data differ
    per rank."""
    funcol = _funcol()
    rank = dist.get_rank()
    groups = bucketing.fsdp_groups([_llama_block_params(dim, ffn)] * layers, world, per_block)
    gen = _seeded(4096)  # the same model on every rank
    shards = []
    for block in groups:
        for layout in block:
            full = torch.zeros(layout.numel, device=DEVICE, dtype=dtype)
            for slot in layout.slots:
                view = full[slot.offset:slot.offset + slot.numel]
                if slot.name.endswith("norm"):
                    view.fill_(1.0)
                else:
                    view.copy_(torch.randn(slot.numel, device=DEVICE, dtype=dtype, generator=gen) * 0.02)
            shards.append(_shard_of(full, world).requires_grad_())
            del full
    cos, sin = _rotary_tables(seq, dim // heads, dtype)
    x = torch.randn(batch, seq, dim, device=DEVICE, dtype=dtype, generator=_seeded(41 + rank))
    group = dist.group.WORLD
    specs = [_flat_spec(layout) for block in groups for layout in block]
    block_of = [b for b, block in enumerate(groups) for _ in block]  # per flat buffer, its block

    def forward(x, cos, sin, *shards):
        for b in range(layers):
            params = {}
            for i in range(len(specs)):
                if block_of[i] == b:
                    params.update(_unflatten(funcol.all_gather_tensor_autograd(shards[i], 0, group), specs[i]))
            x = _llama_block(x, params, cos, sin, heads)
        return x

    def run():
        for s in shards:
            s.grad = None
        out = _compiled(forward)(x, cos, sin, *shards)
        out.float().pow(2).mean().backward()
        return [out] + [s.grad for s in shards]

    collectives = "one all-gather and one reduce-scatter per block" if per_block else \
        "one all-gather and one reduce-scatter per parameter"
    return Step(name, run, f"{layers} Llama blocks dim {dim}, ffn {ffn}, {heads} heads, {batch}x{seq} tokens per rank, "
                           f"FSDP 1/{world}, {collectives}, {dtype}")


def llama_fsdp(world: int, dtype=torch.bfloat16) -> Step:
    """Per-block bucketing written by hand: the baseline of automatic
    bucketing on llama_fsdp_per_param."""
    return _llama_fsdp("llama_fsdp", True, world, dtype)


def llama_fsdp_per_param(world: int, dtype=torch.bfloat16) -> Step:
    return _llama_fsdp("llama_fsdp_per_param", False, world, dtype)


# --- tensor + sequence parallel (Megatron SP) -----------------------------------
def tp_sp_block(world: int, dtype=torch.bfloat16, dim=4096, heads=32, layers=2, batch=2, seq=2048) -> Step:
    """Megatron-style tensor and sequence parallel blocks: activations are
    sharded along the sequence (layout seq x batch x dim); before each
    column-parallel matmul (QKV, fc1) an all-gather along the sequence, after
    each row-parallel one (attention out, fc2) a reduce-scatter along it;
    autograd makes the backward's reduce-scatters and all-gathers. The norms
    carry no weight (Megatron all-reduces sequence-parallel norm weights'
    gradients; left out here)."""
    if heads % world or seq % world or (4 * dim) % world:
        raise ValueError(f"tp_sp_block: heads {heads}, seq {seq} and 4*dim {4 * dim} must divide by world {world}")
    funcol = _funcol()
    rank = dist.get_rank()
    local_heads, head_dim = heads // world, dim // heads
    local, ffn_local = local_heads * head_dim, 4 * dim // world
    torch.manual_seed(1234 + rank)  # each rank holds its own shard

    def weight(*shape):
        return (torch.randn(*shape, device=DEVICE, dtype=dtype) * 0.02).requires_grad_()

    weights = [w for _ in range(layers) for w in (weight(3 * local, dim), weight(dim, local),
                                                  weight(ffn_local, dim), weight(dim, ffn_local))]
    chunk = seq // world
    x = torch.randn(seq, batch, dim, device=DEVICE, dtype=dtype, generator=_seeded(7))[rank * chunk:(rank + 1) * chunk]
    x = x.contiguous()
    group = dist.group.WORLD

    def forward(x, *weights):
        for layer in range(layers):
            wqkv, wo, w1, w2 = weights[4 * layer:4 * layer + 4]
            h = funcol.all_gather_tensor_autograd(F.rms_norm(x, (dim,), eps=1e-5), 0, group)  # (seq, batch, dim)
            q, k, v = (h @ wqkv.t()).view(seq, batch, 3, local_heads, head_dim).permute(2, 1, 3, 0, 4)
            a = F.scaled_dot_product_attention(q, k, v, is_causal=True).permute(2, 0, 1, 3).reshape(seq, batch, local)
            x = x + funcol.reduce_scatter_tensor_autograd(a @ wo.t(), "sum", 0, group)
            h = funcol.all_gather_tensor_autograd(F.rms_norm(x, (dim,), eps=1e-5), 0, group)
            x = x + funcol.reduce_scatter_tensor_autograd(F.gelu(h @ w1.t()) @ w2.t(), "sum", 0, group)
        return x

    def run():
        for w in weights:
            w.grad = None
        out = _compiled(forward)(x, *weights)
        out.float().pow(2).mean().backward()
        return [out] + [w.grad for w in weights]

    return Step("tp_sp_block", run, f"{layers} tensor+sequence parallel blocks dim {dim}, {heads} heads, "
                                    f"{batch}x{seq} tokens sharded 1/{world} along the sequence, {dtype}")


# --- expert parallel MoE ----------------------------------------------------------
def moe_a2a(world: int, dtype=torch.bfloat16, dim=4096, ffn=8192, layers=2, tokens=4096, experts_per_rank=2,
            top_k=2, capacity_factor=1.25) -> Step:
    """Expert-parallel MoE layers (forward and autograd backward): a top-k
    router (fp32 softmax), fixed expert capacity (bucketing.expert_capacity:
    assignments past it dropped, empty slots zero), an all_to_all_single that
    sends each expert's slots to the rank holding it, the rank's experts as
    batched SwiGLU-free MLPs (bmm, silu, bmm), and an all_to_all_single back,
    weighted by the router's gates. Shapes are static: every rank sends and
    receives the same bytes, whatever the routing (uneven token counts per
    rank would need variable splits; not modelled here). Slots are filled and
    read by gathers, so the forward is deterministic; the router's gradient
    stays local (its data-parallel all-reduce is not part of the step)."""
    funcol = _funcol()
    rank = dist.get_rank()
    experts = experts_per_rank * world
    cap = bucketing.expert_capacity(tokens, experts, top_k, capacity_factor)
    torch.manual_seed(4242)  # the router is replicated
    routers = [(torch.randn(experts, dim, device=DEVICE, dtype=dtype) * 0.02).requires_grad_() for _ in range(layers)]
    torch.manual_seed(4343 + rank)  # each rank its own experts

    def weight(*shape):
        return (torch.randn(*shape, device=DEVICE, dtype=dtype) * 0.02).requires_grad_()

    w_in = [weight(experts_per_rank, dim, ffn) for _ in range(layers)]
    w_out = [weight(experts_per_rank, ffn, dim) for _ in range(layers)]
    x = torch.randn(tokens, dim, device=DEVICE, dtype=dtype, generator=_seeded(61 + rank))
    group = dist.group.WORLD
    splits = [experts_per_rank * cap] * world

    def layer(x, router, w1, w2):
        h = F.rms_norm(x, (dim,), eps=1e-5)
        probs = torch.softmax(h.float() @ router.float().t(), dim=-1)  # (tokens, experts)
        gate, expert = torch.topk(probs, top_k, dim=-1)  # (tokens, top_k)
        assigned = expert.t().reshape(-1)  # (top_k * tokens,): first choices first
        onehot = (assigned[:, None] == torch.arange(experts, device=x.device)[None, :]).long()
        position = (torch.cumsum(onehot, 0) * onehot).sum(1) - 1  # the assignment's place in its expert
        slot = torch.where(position < cap, assigned * cap + position, experts * cap)  # experts * cap: dropped
        token = torch.arange(tokens, device=x.device).repeat(top_k)
        slot_token = torch.full((experts * cap + 1,), tokens, dtype=torch.long, device=x.device)
        slot_token = slot_token.scatter(0, slot, token)[:experts * cap]  # `tokens`: an empty slot
        dispatched = torch.cat([h, h.new_zeros(1, dim)])[slot_token]  # (experts * cap, dim), expert-major
        received = funcol.all_to_all_single_autograd(dispatched, splits, splits, group)
        y = received.view(world, experts_per_rank, cap, dim).transpose(0, 1).reshape(experts_per_rank, world * cap, dim)
        y = torch.bmm(F.silu(torch.bmm(y, w1)), w2)
        y = y.view(experts_per_rank, world, cap, dim).transpose(0, 1).reshape(world * experts_per_rank * cap, dim)
        returned = funcol.all_to_all_single_autograd(y, splits, splits, group)  # in `dispatched`'s order
        picked = torch.cat([returned, returned.new_zeros(1, dim)])[slot].view(top_k, tokens, dim)
        return x + (picked * gate.t().to(picked.dtype).unsqueeze(-1)).sum(0)

    def forward(x, *params):
        for i in range(layers):
            x = layer(x, *params[3 * i:3 * i + 3])
        return x

    params = [p for i in range(layers) for p in (routers[i], w_in[i], w_out[i])]

    def run():
        for p in params:
            p.grad = None
        out = _compiled(forward)(x, *params)
        out.float().pow(2).mean().backward()
        return [out] + [p.grad for p in params]

    return Step("moe_a2a", run, f"{layers} MoE layers dim {dim}, ffn {ffn}, {experts} experts ({experts_per_rank} "
                                f"per rank), top-{top_k}, capacity {cap} per expert and rank, {tokens} tokens "
                                f"per rank, all_to_all_single dispatch and combine, {dtype}")


# --- DDP with gradient buckets ----------------------------------------------------
def _ddp_linear_stack(name: str, world: int, cap_bytes: int, dtype=torch.bfloat16, dim=2048, layers=24,
                      tokens=16384) -> Step:
    """DDP's backward of a stack of linear layers (weight and bias), written
    out like `ddp`: gradients, in the order they become ready (last layer
    first, its bias before its weight: the parameters reversed), are grouped
    by DDP's bucket rule (bucketing.ddp_bucket_assignment), and each bucket
    is flattened into one buffer and all-reduced as soon as its last gradient
    exists; the reduced buffer is split back into gradients. cap_bytes 0:
    one all-reduce per gradient."""
    funcol = _funcol()
    torch.manual_seed(5)  # replicated weights, per-rank data
    weights = [torch.randn(dim, dim, device=DEVICE, dtype=dtype) * 0.02 for _ in range(layers)]
    gen = _seeded(17 + dist.get_rank())
    acts = [torch.relu(torch.randn(tokens, dim, device=DEVICE, dtype=dtype, generator=gen)) for _ in range(layers)]
    dy = torch.randn(tokens, dim, device=DEVICE, dtype=dtype, generator=gen)
    shapes = [s for _ in range(layers) for s in ((dim,), (dim, dim))]  # ready order: (bias, weight) per layer
    elem = torch.tensor([], dtype=dtype).element_size()
    sizes = [elem * (s[0] if len(s) == 1 else s[0] * s[1]) for s in shapes]
    buckets = bucketing.ddp_bucket_assignment(sizes, cap_bytes) if cap_bytes else [[i] for i in range(len(sizes))]
    closing = {bucket[-1]: bucket for bucket in buckets}
    group = dist.group.WORLD

    def backward(acts, weights, dy):
        grads, reduced = [], []
        for a, w in zip(reversed(acts), reversed(weights)):
            grads += [dy.sum(0), a.t() @ dy]
            for i in (len(grads) - 2, len(grads) - 1):
                if i in closing:
                    members = [grads[j] for j in closing[i]]
                    if len(members) == 1:
                        reduced.append(funcol.all_reduce(members[0], "sum", group))
                        continue
                    flat = funcol.all_reduce(torch.cat([g.reshape(-1) for g in members]), "sum", group)
                    parts = flat.split([g.numel() for g in members])
                    reduced += [p.view(g.shape) for p, g in zip(parts, members)]
            dy = (dy @ w.t()) * (a > 0)
        return [g / world for g in reduced] + [dy]

    def run():
        return list(_compiled(backward)(acts, weights, dy))

    plan = f"{len(buckets)} all-reduces in DDP's {cap_bytes / bucketing.MIB:.0f} MiB buckets" if cap_bytes else \
        f"{len(buckets)} all-reduces, one per gradient"
    return Step(name, run, f"backward of {layers} linear layers (weight and bias) dim {dim}, {tokens} tokens, "
                           f"{plan}, {dtype}")


def ddp_buckets(world: int, dtype=torch.bfloat16) -> Step:
    """DDP's bucketing written by hand: the baseline of automatic bucketing
    on ddp_per_grad."""
    return _ddp_linear_stack("ddp_buckets", world, bucketing.DDP_BUCKET_CAP_BYTES, dtype)


def ddp_per_grad(world: int, dtype=torch.bfloat16) -> Step:
    return _ddp_linear_stack("ddp_per_grad", world, 0, dtype)


_COMPILED: dict[int, Callable] = {}


def _compiled(fn):
    """One torch.compile wrapper per function for the current schedule
    (reset_compiled() between schedules, with torch._dynamo.reset())."""
    key = id(fn)
    if key not in _COMPILED:
        _COMPILED[key] = torch.compile(fn)
    return _COMPILED[key]


def reset_compiled() -> None:
    _COMPILED.clear()
    torch._dynamo.reset()


STEPS = {"tp_block": tp_block, "fsdp": fsdp, "ddp": ddp, "fsdp_fwd_bwd": fsdp_fwd_bwd, "tp_microbatch": tp_microbatch,
         "fsdp_fwd_bwd_bucketed": fsdp_fwd_bwd_bucketed, "llama_fsdp": llama_fsdp,
         "llama_fsdp_per_param": llama_fsdp_per_param, "tp_sp_block": tp_sp_block, "moe_a2a": moe_a2a,
         "ddp_buckets": ddp_buckets, "ddp_per_grad": ddp_per_grad}
# What run_steps.py runs unless --steps names others: the five steps that
# scripts/dist-validate.sh's time budget and the checked-in runs are sized for.
DEFAULT_STEPS = ("tp_block", "fsdp", "ddp", "fsdp_fwd_bwd", "tp_microbatch")
