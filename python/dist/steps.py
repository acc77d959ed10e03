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

Each builder takes the world size and a dtype and returns a `Step`: `run()`
runs one step (compiled forward, and backward where autograd does it) and
returns the tensors whose values the schedules must agree on.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F

DEVICE = "cuda"

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "zoo"))
# Megatron's f and g (all-reduce of the gradient / of the output), as the zoo
# traces them with the fake process group; here over the real WORLD group.
from cases import _CopyToParallel, _ReduceFromParallel  # noqa: E402


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


STEPS = {"tp_block": tp_block, "fsdp": fsdp, "ddp": ddp, "fsdp_fwd_bwd": fsdp_fwd_bwd, "tp_microbatch": tp_microbatch}
