"""Designed sweeps of the finer kernel classes (docs/cost-model.md, "Kernel
classes"; issue 27): embedding bags, scatters with spread and collisions,
depthwise, grouped and 1-D convolutions forward and backward (cuDNN and
ATen's native kernels), Triton kernels over transposed operands, matmuls with
odd dimensions and f32 SIMT matmuls; attention over grids of query tiles
and head dims (the attention law's idle-wave and per-score terms). Each sweep is a zoo case (cases.py
registers them, run only when named); this script runs them through
run_zoo.py with --measure on one GPU, then checks that every graph has its
measured file beside it and writes OUT/class_sweep.json, the manifest of the
cases, their graphs and the classes each is for.

    PYTHONPATH=python python3 python/zoo/class_sweep.py --out OUT [--only NAME ...] [--jobs N] [--dry-run]

OUT then holds <case>_<i>_<kind>.post.json and .measured.json pairs, what
`schedlab fit-profile --class-sweep` reads (the command to fit from them is
printed at the end; refitting needs no GPU):

    build/schedlab fit-profile tests/data/measured/h100 --class-sweep OUT --graphs tests/data/exported \\
        --exclude /llama_block_ ... --class-laws all --sibling profiles/h200.json --name h100-sxm -o h100-classes.json

Checked in as tests/data/class_sweep/GPU, `scripts/fit-profiles.sh` fits the
built-in profiles' class laws on it.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
DEVICE = "cuda"


# --- the sweeps (torch is imported inside each: the CLI's checks run without it) ---

def embedding_bag_sweep():
    """nn.EmbeddingBag forward and backward (ATen's _embedding_bag and its
    dense backward: fallbacks Inductor generates no code for) over table
    rows, bag size and dim, sum and mean; and plain embeddings (a Triton
    gather) beside them."""
    import torch
    import torch.nn.functional as F

    # (table rows, dim, bags, bag size, mode)
    configs = [(100000, 64, 4096, 20, "sum"), (1000000, 32, 8192, 10, "sum"), (50000, 128, 2048, 50, "mean"),
               (10000, 16, 16384, 1, "sum"), (200000, 64, 1024, 100, "sum"), (4096, 256, 4096, 8, "mean")]
    gen = torch.Generator(device=DEVICE).manual_seed(0)
    tables = [torch.randn(r, d, device=DEVICE, requires_grad=True) for r, d, *_ in configs]
    indices = [torch.randint(0, r, (b * s,), device=DEVICE, generator=gen) for r, _, b, s, _ in configs]
    offsets = [torch.arange(0, b * s, s, device=DEVICE) for _, _, b, s, _ in configs]

    def forward(tables, indices, offsets):
        return sum(F.embedding_bag(i, t, o, mode=m).sum() for t, i, o, (*_, m) in zip(tables, indices, offsets, configs))

    torch.compile(forward)(tables, indices, offsets).backward()
    lookups = [(torch.randn(r, d, device=DEVICE, dtype=torch.bfloat16), torch.randint(0, r, (n,), device=DEVICE, generator=gen))
               for r, d, n in ((100000, 64, 65536), (32000, 1024, 8192), (1000000, 16, 262144))]

    def lookup(lookups):
        return [F.embedding(i, t) for t, i in lookups]

    with torch.no_grad():
        torch.compile(lookup)(lookups)


def scatter_sweep():
    """index_add and scatter_add (atomic adds) of N rows of C values into T
    table rows: the index's spread (T against N) sets the collisions, from
    every row hit once to 16 rows hit 4096 times each; and scatter_reduce
    with amax, which takes another path."""
    import torch

    # (updates N, table rows T, columns C, dtype)
    configs = [(65536, 65536, 64, torch.float32), (65536, 1024, 64, torch.float32), (65536, 16, 64, torch.float32),
               (262144, 8192, 16, torch.float32), (8192, 100000, 128, torch.float32), (65536, 4096, 64, torch.bfloat16)]
    gen = torch.Generator(device=DEVICE).manual_seed(0)
    data = [(torch.zeros(t, c, device=DEVICE, dtype=dt), torch.randint(0, t, (n,), device=DEVICE, generator=gen),
             torch.randn(n, c, device=DEVICE, dtype=dt)) for n, t, c, dt in configs]

    def index_add(data):
        return [table.index_add(0, idx, src) for table, idx, src in data]

    def scatter_add(data):
        return [table.scatter_add(0, idx[:, None].expand_as(src), src) for table, idx, src in data]

    def scatter_amax(data):
        return [table.scatter_reduce(0, idx[:, None].expand_as(src), src, "amax") for table, idx, src in data if src.dtype == torch.float32]

    with torch.no_grad():
        torch.compile(index_add)(data)
        torch.compile(scatter_add)(data)
        torch.compile(scatter_amax)(data)


def scatter_traffic_sweep():
    """Accumulating scatters (index_add: Triton atomic adds) whose cost the
    first scatter sweep cannot separate: the atomics' traffic when the
    table fits in L2 (4-32 MiB) and when it does not (128-512 MiB, where
    every touched sector is read from and written back to DRAM); rows of
    1, 8 and 256 values (one atomic per sector, or 8 per 32-byte sector);
    f32 and bf16; the same atomics behind a sum over R (a reduction
    kernel); and hot rows hit 1,024 to 65,536 times, uniformly and skewed
    (the cube of a uniform draw: a few rows take most updates)."""
    import torch

    # (updates N, table rows T, columns C, dtype)
    configs = [(262144, 4096, 256, torch.float32), (262144, 32768, 256, torch.float32), (262144, 131072, 256, torch.float32),
               (262144, 524288, 256, torch.float32), (65536, 524288, 256, torch.float32), (16777216, 1048576, 1, torch.float32),
               (16777216, 33554432, 1, torch.float32), (4194304, 131072, 8, torch.float32), (4194304, 4194304, 8, torch.float32),
               (262144, 32768, 256, torch.bfloat16), (262144, 262144, 256, torch.bfloat16), (1048576, 1024, 64, torch.float32),
               (1048576, 16, 64, torch.float32)]
    gen = torch.Generator(device=DEVICE).manual_seed(0)
    data = [(torch.zeros(t, c, device=DEVICE, dtype=dt), torch.randint(0, t, (n,), device=DEVICE, generator=gen),
             torch.randn(n, c, device=DEVICE, dtype=dt)) for n, t, c, dt in configs]
    # skewed: the same shapes as a uniform twin, rows drawn as T * u^3
    for n, t, c in ((4194304, 65536, 1), (1048576, 65536, 64)):
        u = torch.rand(n, device=DEVICE, generator=gen)
        skewed = (u ** 3 * t).long().clamp_(max=t - 1)
        data.append((torch.zeros(t, c, device=DEVICE), skewed, torch.randn(n, c, device=DEVICE)))
        data.append((torch.zeros(t, c, device=DEVICE), torch.randint(0, t, (n,), device=DEVICE, generator=gen),
                     torch.randn(n, c, device=DEVICE)))

    def index_add(data):
        return [table.index_add(0, idx, src) for table, idx, src in data]

    # (R, updates N, table rows T, columns C)
    reduced = [(4, 65536, 131072, 256), (4, 65536, 8192, 256), (8, 1048576, 1048576, 1)]
    rdata = [(torch.zeros(t, c, device=DEVICE), torch.randint(0, t, (n,), device=DEVICE, generator=gen),
              torch.randn(r, n, c, device=DEVICE)) for r, n, t, c in reduced]

    def reduced_add(rdata):
        return [table.index_add(0, idx, x.sum(0)) for table, idx, x in rdata]

    with torch.no_grad():
        torch.compile(index_add)(data)
        torch.compile(reduced_add)(rdata)


def atomic_lane_sweep():
    """Atomic adds whose consecutive updates hit one row in runs (a
    relative-position bucket over neighbouring keys, a sorted index): the
    same 64-row tables, the same adds per row, the index's runs of equal
    values 1 to 128 long, rows of 1 and of 8 floats. The exporter observes
    each index's runs (`scatter_index`)."""
    import torch

    # (updates N, columns C, run R)
    configs = [(4194304, 1, r) for r in (1, 2, 4, 8, 16, 32, 128)] + [(1048576, 8, r) for r in (1, 4, 32)]
    rows = 64
    data = [(torch.zeros(rows, c, device=DEVICE), (torch.arange(n, device=DEVICE) // r) % rows, torch.randn(n, c, device=DEVICE))
            for n, c, r in configs]

    def index_add(data):
        return [table.index_add(0, idx, src) for table, idx, src in data]

    with torch.no_grad():
        torch.compile(index_add)(data)


def message_passing_sweep():
    """A graph layer's message passing, in the kernels the scatter traffic
    sweep (plain updates) and the gather-scatter experiment leave out: what
    a scatter writes besides its atomics. Rows of node tables are gathered
    through a random edge list, scaled, and added into another table
    through the edges' other end, in five kernels over the same tables:
    the gather alone (its messages written out); gather and scatter; the
    same with the messages also written out (what a trained layer keeps for
    its backward); two gathers (both ends' rows) into one scatter; and the
    two ends' rows dotted, one sum an edge added into its node (a Triton
    scatter reduction). Tables of 2 to 256 MiB (the L2 holds 50-60 MiB),
    rows of 1 to 128 floats, no row width or edge count a library model
    has; f32 (Inductor's Triton atomics), uniform random edges, no grad.
    The fit reads the three scatter graphs (tests/data/class_sweep/h200);
    the gathers alone (Triton pointwise kernels) and the edge sums are kept
    as an experiment (tests/data/experiments/message_passing)."""
    import torch

    # (table rows N, columns C, edges E)
    configs = [(16384, 128, 524288), (65536, 128, 524288), (131072, 128, 524288), (262144, 128, 524288),
               (262144, 64, 1048576), (1048576, 64, 1048576), (1048576, 16, 4194304), (65536, 8, 4194304),
               (16777216, 1, 4194304)]
    gen = torch.Generator(device=DEVICE).manual_seed(0)
    data = []
    for n, c, e in configs:
        edges = torch.randint(0, n, (2, e), device=DEVICE, generator=gen)
        data.append((torch.randn(n, c, device=DEVICE), torch.randn(n, c, device=DEVICE), edges[0], edges[1],
                     torch.randn(e, 1, device=DEVICE)))

    def gather(data):
        return [x[src] * w for x, _, src, _, w in data]

    def gather_scatter(data):
        return [torch.zeros_like(x).index_add(0, dst, x[src] * w) for x, _, src, dst, w in data]

    def gather_scatter_kept(data):
        out = []
        for x, _, src, dst, w in data:
            message = x[src] * w
            out += [message, torch.zeros_like(x).index_add(0, dst, message)]
        return out

    def two_gathers_scatter(data):
        return [torch.zeros_like(x).index_add(0, dst, x[src] * y[dst] * w) for x, y, src, dst, w in data]

    def edge_dot_scatter(data):
        return [x.new_zeros(x.shape[0]).index_add(0, dst, (x[src] * y[dst]).sum(-1)) for x, y, src, dst, _ in data]

    with torch.no_grad():
        torch.compile(gather)(data)
        torch.compile(gather_scatter)(data)
        torch.compile(gather_scatter_kept)(data)
        torch.compile(two_gathers_scatter)(data)
        torch.compile(edge_dot_scatter)(data)


def depthwise_conv_sweep():
    """Depthwise 1-D and 2-D convolutions, forward and backward, in bf16 and
    f32 NCHW (ATen's conv_depthwise2d kernels) and bf16 channels-last
    (cuDNN): Conformer's and ConvNeXt's, MobileNet's strided ones."""
    import torch
    import torch.nn.functional as F

    # 1-D: (batch, channels, length, kernel)
    one_d = [(8, 768, 1024, 31), (16, 512, 4096, 3), (4, 1024, 512, 7)]
    # 2-D: (batch, channels, size, kernel, stride)
    two_d = [(32, 96, 56, 7, 1), (32, 384, 14, 3, 1), (64, 32, 112, 3, 2)]
    for dtype, channels_last in ((torch.bfloat16, False), (torch.float32, False), (torch.bfloat16, True)):
        fmt = torch.channels_last if channels_last else torch.contiguous_format
        xs1 = [torch.randn(b, c, n, device=DEVICE, dtype=dtype, requires_grad=True) for b, c, n, _ in one_d]
        ws1 = [torch.randn(c, 1, k, device=DEVICE, dtype=dtype, requires_grad=True) for _, c, _, k in one_d]
        xs2 = [torch.randn(b, c, s, s, device=DEVICE, dtype=dtype).to(memory_format=fmt).requires_grad_() for b, c, s, _, _ in two_d]
        ws2 = [torch.randn(c, 1, k, k, device=DEVICE, dtype=dtype).to(memory_format=fmt).requires_grad_() for _, c, _, k, _ in two_d]

        def forward(xs1, ws1, xs2, ws2):
            out = 0
            if not channels_last:  # a 3-d tensor has no channels-last layout
                out = sum(F.conv1d(x, w, padding=w.shape[-1] // 2, groups=x.shape[1]).float().mean() for x, w in zip(xs1, ws1))
            return out + sum(F.conv2d(x, w, padding=w.shape[-1] // 2, stride=cfg[4], groups=x.shape[1]).float().mean()
                             for x, w, cfg in zip(xs2, ws2, two_d))

        torch.compile(forward)(xs1, ws1, xs2, ws2).backward()


def grouped_conv_sweep():
    """Grouped convolutions (ResNeXt's, RegNet's) and dense 1-D ones
    (wav2vec's feature encoder: a 10-tap stride-5 stem, then 3-tap stride-2
    layers), forward and backward in bf16, NCHW and channels-last; and a
    stride-16 16x16 patch convolution."""
    import torch
    import torch.nn.functional as F

    # grouped: (batch, channels, size, groups)
    grouped = [(32, 256, 28, 8), (32, 256, 28, 32), (16, 512, 14, 16), (64, 128, 56, 4)]
    # 1-D dense: (batch, in channels, out channels, length, kernel, stride)
    one_d = [(8, 1, 512, 16000, 10, 5), (8, 512, 512, 3199, 3, 2), (16, 256, 256, 2048, 5, 1)]
    for channels_last in (False, True):
        fmt = torch.channels_last if channels_last else torch.contiguous_format
        xs = [torch.randn(b, c, s, s, device=DEVICE, dtype=torch.bfloat16).to(memory_format=fmt).requires_grad_() for b, c, s, _ in grouped]
        ws = [torch.randn(c, c // g, 3, 3, device=DEVICE, dtype=torch.bfloat16).to(memory_format=fmt).requires_grad_() for _, c, _, g in grouped]

        def forward(xs, ws):
            return sum(F.conv2d(x, w, padding=1, groups=cfg[3]).float().mean() for x, w, cfg in zip(xs, ws, grouped))

        torch.compile(forward)(xs, ws).backward()
    xs1 = [torch.randn(b, ci, n, device=DEVICE, dtype=torch.bfloat16, requires_grad=True) for b, ci, _, n, _, _ in one_d]
    ws1 = [torch.randn(co, ci, k, device=DEVICE, dtype=torch.bfloat16, requires_grad=True) for _, ci, co, _, k, _ in one_d]
    patch_x = torch.randn(32, 3, 224, 224, device=DEVICE, dtype=torch.bfloat16, requires_grad=True)
    patch_w = torch.randn(768, 3, 16, 16, device=DEVICE, dtype=torch.bfloat16, requires_grad=True)

    def forward1d(xs1, ws1, patch_x, patch_w):
        return (sum(F.conv1d(x, w, stride=cfg[5]).float().mean() for x, w, cfg in zip(xs1, ws1, one_d))
                + F.conv2d(patch_x, patch_w, stride=16).float().mean())

    torch.compile(forward1d)(xs1, ws1, patch_x, patch_w).backward()


def attention_grid_sweep():
    """Attention without mask or dropout through PyTorch's default backend,
    forward and backward, over grids of query tiles from a third of a wave
    (a decoder's 128 queries over a long encoder output: Whisper's and T5's
    cross-attention) to many waves, head dims 64, 96 and 128, causal and
    not, odd lengths (ViT's 197, CLIP's 77, Whisper's 1500); then f32
    (the memory-efficient kernels), with and without a per-head bias
    (Conformer's relative positions). For the attention law's wave and
    per-score terms (docs/cost-model.md, "Attention")."""
    import torch
    import torch.nn.functional as F

    # (batch, heads, query length, key length, head dim, causal)
    configs = [(8, 6, 128, 1500, 64, False), (4, 8, 128, 4096, 64, False), (2, 16, 128, 2048, 128, False),
               (8, 8, 128, 512, 64, False), (1, 16, 256, 8192, 128, False), (8, 6, 1500, 1500, 64, False),
               (4, 16, 1024, 1024, 64, False), (2, 12, 4096, 4096, 64, False), (4, 16, 2048, 2048, 128, False),
               (8, 8, 1000, 1000, 128, False), (4, 32, 1024, 1024, 96, False), (8, 12, 1024, 1024, 64, True),
               (2, 16, 4096, 4096, 64, True), (4, 32, 2048, 2048, 128, True), (16, 12, 197, 197, 64, False),
               (32, 12, 77, 77, 64, False), (1, 8, 512, 512, 64, False), (2, 4, 2048, 2048, 128, True)]
    qkv = [tuple(torch.randn(b, h, s, d, device=DEVICE, dtype=torch.bfloat16, requires_grad=True) for s in (sq, sk, sk))
           for b, h, sq, sk, d, _ in configs]

    def forward(qkv):
        return sum(F.scaled_dot_product_attention(q, k, v, is_causal=c).float().mean() for (q, k, v), (*_, c) in zip(qkv, configs))

    torch.compile(forward)(qkv).backward()
    # f32: (batch, heads, length, head dim, a [B, H, S, S] bias)
    f32 = [(16, 4, 512, 64, True), (16, 4, 512, 64, False), (8, 8, 1024, 64, False), (32, 4, 128, 32, False), (4, 8, 2048, 64, True)]
    qkv32 = [tuple(torch.randn(b, h, s, d, device=DEVICE, requires_grad=True) for _ in range(3)) for b, h, s, d, _ in f32]
    biases = [torch.randn(b, h, s, s, device=DEVICE) if bias else None for b, h, s, _, bias in f32]

    def forward32(qkv32, biases):
        return sum(F.scaled_dot_product_attention(q, k, v, attn_mask=m).mean() for (q, k, v), m in zip(qkv32, biases))

    torch.compile(forward32)(qkv32, biases).backward()


def attention_f32_mask_sweep():
    """f32 attention with an additive mask (the memory-efficient kernels:
    f32 runs no cuDNN or flash attention), forward and backward, as models
    trained without autocast pass their padding and causal masks and
    relative-position biases: masks broadcast over heads ([B, 1, S, S]),
    over batch and heads ([1, 1, S, S]) and one per head ([B, H, S, S]),
    over batch, heads, lengths and head dims. For the attention law's
    f32 mask term (docs/cost-model.md, "Attention")."""
    import torch
    import torch.nn.functional as F

    # (batch, heads, length, head dim, mask shape)
    configs = [(16, 4, 512, 64, "bh"), (8, 8, 1024, 64, "b1"), (4, 8, 2048, 64, "bh"), (32, 12, 128, 64, "b1"),
               (8, 12, 512, 64, "11"), (2, 16, 1024, 128, "b1"), (16, 8, 256, 32, "bh")]
    qkv = [tuple(torch.randn(b, h, s, d, device=DEVICE, requires_grad=True) for _ in range(3)) for b, h, s, d, _ in configs]
    masks = [torch.randn(b if m != "11" else 1, h if m == "bh" else 1, s, s, device=DEVICE) for b, h, s, _, m in configs]

    def forward(qkv, masks):
        return sum(F.scaled_dot_product_attention(q, k, v, attn_mask=m).mean() for (q, k, v), m in zip(qkv, masks))

    torch.compile(forward)(qkv, masks).backward()


def grouped_conv1d_sweep():
    """Grouped 1-D convolutions with long kernels, forward and backward in
    bf16 NCL: wav2vec 2.0's and HuBERT's positional convolution (128 taps,
    16 groups, padding 64) at several widths and lengths, and the same
    geometry with shorter kernels and other group counts, to tell where
    cuDNN runs one launch per group and a direct weight-gradient kernel."""
    import torch
    import torch.nn.functional as F

    # (batch, channels, length, groups, kernel)
    configs = [(8, 384, 99, 16, 128), (8, 768, 250, 16, 128), (4, 1024, 500, 16, 128), (8, 768, 250, 4, 128),
               (8, 768, 250, 64, 128), (8, 768, 250, 16, 32), (8, 768, 250, 16, 8), (16, 512, 1000, 8, 3)]
    xs = [torch.randn(b, c, n, device=DEVICE, dtype=torch.bfloat16, requires_grad=True) for b, c, n, _, _ in configs]
    ws = [torch.randn(c, c // g, k, device=DEVICE, dtype=torch.bfloat16, requires_grad=True) for _, c, _, g, k in configs]

    def forward(xs, ws):
        return sum(F.conv1d(x, w, padding=cfg[4] // 2, groups=cfg[3]).float().mean() for x, w, cfg in zip(xs, ws, configs))

    torch.compile(forward)(xs, ws).backward()


def conv1d_dense_sweep():
    """Dense 1-D convolutions, forward and backward, NCL, over a grid of
    what speech and sequence models vary, none a library model's shape (the
    grouped sweep's three 1-D rows are too few for a law of their own): in
    channels from 1 (raw-audio stems) to 2,048, out channels 64 to 1,536,
    lengths 100 to 32,000, kernels of 1 (pointwise) to 15 taps, strides 1
    to 5, bf16 and f32, from 8 µs to 0.8 ms."""
    import torch
    import torch.nn.functional as F

    bf16, f32 = torch.bfloat16, torch.float32
    # (batch, in channels, out channels, length, kernel, stride, dtype)
    configs = [(16, 1, 256, 32000, 7, 4, bf16), (8, 64, 128, 8192, 3, 1, bf16), (8, 128, 256, 4096, 5, 2, bf16),
               (16, 256, 256, 2000, 3, 1, bf16), (8, 256, 512, 4000, 2, 2, bf16), (4, 512, 1024, 1024, 3, 1, bf16),
               (8, 768, 768, 512, 3, 2, bf16), (32, 1024, 1024, 256, 3, 1, bf16), (8, 512, 256, 6000, 15, 1, bf16),
               (8, 160, 320, 3000, 4, 3, bf16), (8, 64, 256, 4096, 3, 1, f32), (8, 256, 256, 1500, 5, 1, f32),
               (16, 512, 512, 800, 3, 2, f32), (4, 1, 512, 16000, 10, 5, f32),
               # pointwise (1 tap), small, and narrow-input stems
               (8, 256, 512, 1024, 1, 1, f32), (8, 512, 512, 2048, 1, 1, bf16), (16, 144, 576, 512, 1, 1, f32),
               (4, 1024, 256, 1000, 1, 1, bf16), (4, 128, 128, 500, 3, 1, bf16), (2, 256, 256, 300, 5, 1, f32),
               (8, 512, 512, 100, 3, 1, bf16), (4, 64, 64, 2000, 7, 1, bf16), (8, 1, 128, 24000, 11, 5, bf16),
               (8, 2, 64, 16000, 5, 2, bf16), (8, 3, 256, 8000, 8, 4, f32), (16, 1, 64, 4000, 3, 1, bf16),
               (16, 384, 768, 1000, 2, 2, bf16), (8, 192, 192, 6000, 3, 1, bf16), (8, 384, 1536, 500, 1, 1, bf16),
               (16, 80, 256, 1000, 1, 1, f32), (4, 2048, 512, 256, 1, 1, bf16)]
    xs = [torch.randn(b, ci, n, device=DEVICE, dtype=dt, requires_grad=True) for b, ci, _, n, _, _, dt in configs]
    ws = [torch.randn(co, ci, k, device=DEVICE, dtype=dt, requires_grad=True) for _, ci, co, _, k, _, dt in configs]

    def forward(xs, ws):
        return sum(F.conv1d(x, w, stride=cfg[5], padding=cfg[4] // 2).float().mean() for x, w, cfg in zip(xs, ws, configs))

    torch.compile(forward)(xs, ws).backward()


def conv1d_layout_sweep():
    """Dense 1-D convolutions between [batch, time, channels] activations,
    forward and backward, as speech encoders run them (a Conformer's and an
    ESPnet encoder's convolution modules, a TDNN between attention layers):
    the input and the output's gradient reach the convolution as permuted
    views, [batch, time, channels] or [time, batch, channels] read as
    [batch, channels, time], which ATen copies contiguous before cuDNN (the
    output's gradient once per gradient call). Pointwise and 3- and 5-tap,
    bf16 and f32, none a library model's shape. For the 1-D laws' layout
    term (docs/cost-model.md, "Law terms")."""
    import torch
    import torch.nn.functional as F

    bf16, f32 = torch.bfloat16, torch.float32
    # (batch, time, in channels, out channels, kernel, dtype, activation layout: "btc" or "tbc")
    configs = [(8, 1024, 384, 768, 1, f32, "btc"), (32, 256, 512, 512, 1, bf16, "btc"), (8, 2000, 144, 288, 1, f32, "tbc"),
               (4, 1500, 768, 768, 3, bf16, "btc"), (16, 400, 256, 1024, 1, f32, "tbc"), (8, 800, 512, 256, 5, f32, "btc"),
               (4, 3000, 80, 384, 3, bf16, "tbc"), (12, 600, 320, 320, 1, bf16, "tbc")]

    def activation(b, t, c, dtype, layout):
        shape = (b, t, c) if layout == "btc" else (t, b, c)
        return torch.randn(*shape, device=DEVICE, dtype=dtype, requires_grad=True)

    xs = [activation(b, t, ci, dt, lay) for b, t, ci, _, _, dt, lay in configs]
    ws = [torch.randn(co, ci, k, device=DEVICE, dtype=dt, requires_grad=True) for _, _, ci, co, k, dt, _ in configs]
    scales = [torch.randn(co, device=DEVICE, dtype=dt, requires_grad=True) for _, _, _, co, _, dt, _ in configs]

    def forward(xs, ws, scales):
        out = 0
        for x, w, s, cfg in zip(xs, ws, scales, configs):
            ncl = x.transpose(1, 2) if cfg[6] == "btc" else x.permute(1, 2, 0)
            y = F.conv1d(ncl, w, padding=cfg[4] // 2)
            back = y.transpose(1, 2) if cfg[6] == "btc" else y.permute(2, 0, 1)
            out = out + (back * s).float().mean()
        return out

    torch.compile(forward)(xs, ws, scales).backward()


def strided_triton_sweep():
    """Triton kernels whose operands move with a stride along the fastest
    index: sums over columns, LayerNorm over a transposed (token-mixing)
    tensor, softmax over a middle dim, permuted copies; each beside its
    contiguous twin."""
    import torch
    import torch.nn.functional as F

    mats = [torch.randn(r, c, device=DEVICE) for r, c in ((65536, 64), (8192, 1024), (1024, 8192), (262144, 16))]
    mixer = [torch.randn(b, t, d, device=DEVICE, dtype=torch.bfloat16) for b, t, d in ((64, 196, 512), (32, 256, 768), (128, 64, 256))]
    heads = [torch.randn(b, s, h, device=DEVICE) for b, s, h in ((64, 1024, 16), (16, 4096, 8))]

    def forward(mats, mixer, heads):
        out = []
        for m in mats:
            out += [m.sum(0), m.sum(1), m.t().contiguous() * 2]
        for x in mixer:
            xt = x.transpose(1, 2)
            out += [F.layer_norm(xt, (xt.shape[-1],)), F.layer_norm(x, (x.shape[-1],))]
        for h in heads:
            out += [torch.softmax(h, dim=1), torch.softmax(h, dim=2)]
        return out

    with torch.no_grad():
        torch.compile(forward)(mats, mixer, heads)


def transposed_reduction_sweep():
    """Reductions whose operands are contiguous along different axes: one
    along the reduced axis, one along the kept one (a LayerNorm's weight
    gradient over token-mixed activations, an attention bias over permuted
    scores), so that no tile reads both coalesced; over kept rows of 256 to
    65,536 and reductions of 128 to 16,384, bf16 and f32; then LayerNorms
    over a transposed view, trained (forward and backward): 64 to 1,024
    normalized tokens over 2,048 to 32,768 rows. Each reduction reads one
    [X, R] and one [R, X] tensor."""
    import torch
    import torch.nn.functional as F

    # (kept rows X, reduced length R, dtype)
    grid = [(x, r, torch.bfloat16) for x, r in ((256, 4096), (256, 16384), (512, 2048), (512, 8192), (1024, 1024), (1024, 4096),
                                                  (2048, 512), (4096, 128), (4096, 2048), (8192, 256), (16384, 1024), (65536, 128))]
    grid += [(x, r, torch.float32) for x, r in ((256, 8192), (1024, 2048), (4096, 512), (16384, 256))]
    rowwise = [torch.randn(x, r, device=DEVICE, dtype=dt) for x, r, dt in grid]
    colwise = [torch.randn(r, x, device=DEVICE, dtype=dt) for x, r, dt in grid]

    def reduce(rowwise, colwise):
        return [(a * b.t()).float().sum(1) for a, b in zip(rowwise, colwise)]

    # trained LayerNorms over (batch, tokens, channels) normalized across
    # tokens: the weight gradient keeps `tokens` rows and reduces batch x
    # channels (2,048 to 32,768) with the upstream gradient transposed
    norms = [(b, t, 256) for t in (64, 128, 256, 512, 1024) for b in (8, 32, 128)] + [(16, 128, 384), (64, 49, 1024)]
    xs = [torch.randn(b, t, c, device=DEVICE, dtype=torch.bfloat16, requires_grad=True) for b, t, c in norms]
    ws = [torch.ones(t, device=DEVICE, dtype=torch.bfloat16, requires_grad=True) for _, t, _ in norms]

    def token_norms(xs, ws):
        return sum(F.layer_norm(x.transpose(1, 2), (w.shape[0],), w).float().square().mean() for x, w in zip(xs, ws))

    with torch.no_grad():
        torch.compile(reduce)(rowwise, colwise)
    torch.compile(token_norms)(xs, ws).backward()


def gemm_odd_sweep():
    """Matmuls with an odd dimension in bf16 (Whisper's 51,865-token
    vocabulary as K and as N; odd M), beside aligned twins; and small f32
    matmuls of graph layers (SIMT: matmuls do not use TF32 by default)."""
    import torch

    # bf16: (M, K, N)
    odd = [(4096, 51865, 512), (4096, 51864, 512), (4096, 512, 51865), (4096, 512, 51864), (4095, 1024, 1024),
           (2048, 1023, 4096), (2048, 1024, 4096)]
    # f32: (M, K, N)
    simt = [(2708, 1433, 64), (2708, 64, 7), (19717, 500, 64), (169343, 128, 128), (4096, 4096, 4096), (100000, 64, 64)]
    a = [torch.randn(m, k, device=DEVICE, dtype=torch.bfloat16) for m, k, _ in odd]
    b = [torch.randn(k, n, device=DEVICE, dtype=torch.bfloat16) for _, k, n in odd]
    af = [torch.randn(m, k, device=DEVICE) for m, k, _ in simt]
    bf = [torch.randn(k, n, device=DEVICE) for _, k, n in simt]

    def forward(a, b, af, bf):
        return [x @ y for x, y in zip(a, b)] + [x @ y for x, y in zip(af, bf)]

    with torch.no_grad():
        torch.compile(forward)(a, b, af, bf)


def gemm_pitch_sweep():
    """bf16 matmuls whose operand rows do not start on 16-byte boundaries,
    as a graph carries them when Inductor has not padded them (its shape
    padding off here: pad_mm pads only where its benchmark says so, and
    the mixer's 196-token products and a transposed view's odd pitch stay
    unpadded): K of 8n + 4, 8n + 2 and 8n + 1 (A's rows at 8, 4 and 2-byte
    alignment), the same for N (B's and the result's), and an odd M (no
    pitch), beside an aligned twin, from small to large products and the
    memory-bound skinny ones of token mixing."""
    import torch
    import torch._inductor.config as inductor_config

    bases = [(1024, 1024, 1024), (4096, 4096, 4096), (8192, 2048, 8192), (512, 16384, 192), (16384, 192, 768)]
    shapes = []
    for m, k, n in bases:
        shapes.append((m, k, n))
        shapes += [(m, k + off, n) for off in (4, 2, 1)]
        shapes += [(m, k, n + off) for off in (4, 2, 1)]
        shapes.append((m + 1, k, n))
    a = [torch.randn(m, k, device=DEVICE, dtype=torch.bfloat16) for m, k, _ in shapes]
    b = [torch.randn(k, n, device=DEVICE, dtype=torch.bfloat16) for _, k, n in shapes]

    def forward(a, b):
        return [x @ y for x, y in zip(a, b)]

    with torch.no_grad(), inductor_config.patch(shape_padding=False, comprehensive_padding=False):
        torch.compile(forward)(a, b)


def large_kernel_sweep():
    """The large end of the plain classes, on random data (what a training
    step's kernels see; tensor cores draw more power on random bits than on
    zeros): bf16 matmuls of 70 to 1100 GFLOP in the layouts a forward and a
    backward run (A @ B, A^T @ B, A @ B^T), and bf16 pointwise kernels and
    LayerNorm-style reductions over 64 to 512 MiB. The zoo's gemm_sweep stops
    at 137 GFLOP and its pointwise_sweep at 256 MiB of f32, so the fitted
    laws extrapolate into this range (on the 4-GPU steps' 275-GFLOP matmuls
    the built-in h100-sxm law prices 299 us against 330-350 measured)."""
    import torch
    import torch.nn.functional as F

    bf16 = torch.bfloat16
    # (M, K, N)
    shapes = [(8192, 4096, 4096), (8192, 4096, 12288), (8192, 12288, 4096), (16384, 4096, 4096), (4096, 8192, 8192),
              (8192, 8192, 8192), (2048, 16384, 4096), (8192, 4096, 1024), (16384, 2048, 8192), (4096, 4096, 11008)]
    gen = torch.Generator(device=DEVICE).manual_seed(0)
    plain = [(torch.randn(m, k, device=DEVICE, dtype=bf16, generator=gen), torch.randn(k, n, device=DEVICE, dtype=bf16, generator=gen))
             for m, k, n in shapes]
    # a weight gradient (x^T @ dy) and an input gradient (dy @ W^T) of a few of them
    grads = [(torch.randn(m, k, device=DEVICE, dtype=bf16, generator=gen), torch.randn(m, n, device=DEVICE, dtype=bf16, generator=gen),
              torch.randn(k, n, device=DEVICE, dtype=bf16, generator=gen)) for m, k, n in shapes[:4]]
    acts = [torch.randn(r, c, device=DEVICE, dtype=bf16, generator=gen) for r, c in ((8192, 4096), (16384, 4096), (32768, 4096), (16384, 16384))]
    weight = torch.randn(4096, device=DEVICE, dtype=bf16, generator=gen)

    def forward(plain, grads, acts, weight):
        out = [a @ b for a, b in plain]
        for x, dy, w in grads:
            out += [x.t() @ dy, dy @ w.t()]
        for x in acts:
            out += [torch.relu(x), F.gelu(x) * x, x + 1.0]
            if x.shape[-1] == weight.shape[0]:
                out.append(F.layer_norm(x, (x.shape[-1],), weight))
        return out

    with torch.no_grad():
        torch.compile(forward)(plain, grads, acts, weight)


def launch_path_sweep():
    """What Inductor's wrapper costs the host, term by term (docs/cost-model.md,
    "The host"): calls whose host terms vary apart from one another, on
    operands so small that the GPU keeps ahead of the host. In the zoo the
    multi-output items come with convolution backwards and attention calls
    (two to four each) and cannot be told from them; here they come alone
    (topk's two, sort's two, an embedding bag's four) beside matmuls (plain,
    through views, with a bias, batched), Triton launches and graph inputs
    in other proportions, and tiny transformer and convolution layers mix
    them as models do. Five calls are device-bound, a long kernel or matmul
    first after 1 to 65 inputs: their time from the call's start to the
    first kernel fits the call's prologue (fit-profile --launch-sweep)."""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    gen = torch.Generator(device=DEVICE).manual_seed(0)
    bf16 = torch.bfloat16

    def tiny(*shape, dtype=torch.float32):
        return torch.randn(*shape, device=DEVICE, dtype=dtype, generator=gen)

    def summed(xs):  # one Triton kernel reading every input
        out = xs[0]
        for x in xs[1:]:
            out = out + x
        return out

    def row_sums(x):  # one input, a reduction kernel per row length
        return [x.view(1 << i, -1).sum(-1) for i in range(1, 13)]

    def matmuls(a, bs):  # a matmul (extern) per weight, nothing else
        return [a @ b for b in bs]

    def matmuls_through_views(a, bs):  # the same on transposed operands (the wrapper's reinterpret_tensor)
        return [a.t() @ b.t() for b in bs]

    def biased_matmuls(a, ws, bias):  # addmm
        return [torch.addmm(bias, a, w) for w in ws]

    def batched_matmuls(a, bs):  # bmm
        return [torch.bmm(a, b) for b in bs]

    def topks(x):  # an extern and its two items per k
        out = []
        for k in range(1, 11):
            out += list(torch.topk(x, k, dim=-1))
        return out

    def sorts(xs):  # an extern and its two items per input
        out = []
        for x in xs:
            out += list(torch.sort(x))
        return out

    def bags(table, indices, offsets):  # a training forward: four items per bag
        return [F.embedding_bag(i, table, o, mode="sum") for i, o in zip(indices, offsets)]

    def chain(x, ws):  # a matmul and a Triton kernel per layer, buffers reused
        for w in ws:
            x = torch.relu(x @ w)
        return x

    from cases import Block  # the zoo's pre-norm transformer block (run_zoo.py puts python/zoo on the path)

    layers = nn.Sequential(*[Block(64, 4) for _ in range(3)]).to(DEVICE, bf16)  # tiny: norms, matmuls, attention, pointwise
    convs = nn.Sequential(*[nn.Sequential(nn.Conv2d(8, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU()) for _ in range(4)]).to(DEVICE).eval()

    def long_kernel(x):  # device-bound: one kernel of ~100 us first
        return torch.sigmoid(x) * x + 1.0

    def long_kernel_wide(x, xs):  # the same kernel reading 64 more inputs (their asserts come first)
        return (torch.sigmoid(x) * x).view(-1, 64) + torch.stack(xs, -1)

    def long_kernel_operands(xs):  # one long kernel over 4 full-size operands
        return torch.sigmoid(xs[0]) * xs[1] + xs[2] * xs[3]

    def long_reduction(x):  # device-bound: one long reduction first
        return x.view(4096, -1).sum(-1)

    def long_matmul(a, b):  # device-bound: one long matmul (extern) first
        return torch.relu(a @ b)

    table = tiny(1000, 16).requires_grad_()
    indices = [torch.randint(0, 1000, (64,), device=DEVICE, generator=gen) for _ in range(8)]
    offsets = [torch.arange(0, 64, 8, device=DEVICE) for _ in range(8)]
    with torch.no_grad():
        torch.compile(summed)([tiny(64) for _ in range(48)])
        torch.compile(summed)([tiny(64) for _ in range(12)])
        torch.compile(row_sums)(tiny(1 << 14))
        torch.compile(matmuls)(tiny(16, 16, dtype=bf16), [tiny(16, 16, dtype=bf16) for _ in range(12)])
        torch.compile(matmuls_through_views)(tiny(16, 16, dtype=bf16), [tiny(16, 16, dtype=bf16) for _ in range(12)])
        torch.compile(biased_matmuls)(tiny(16, 16, dtype=bf16), [tiny(16, 16, dtype=bf16) for _ in range(8)], tiny(16, dtype=bf16))
        torch.compile(batched_matmuls)(tiny(4, 16, 16, dtype=bf16), [tiny(4, 16, 16, dtype=bf16) for _ in range(8)])
        torch.compile(topks)(tiny(16, 64))
        torch.compile(sorts)([tiny(1 << i) for i in range(6, 14)])
        torch.compile(chain)(tiny(16, 64, dtype=bf16), [tiny(64, 64, dtype=bf16) for _ in range(12)])
        torch.compile(layers)(tiny(2, 32, 64, dtype=bf16))
        torch.compile(convs)(tiny(2, 8, 16, 16))
        torch.compile(long_kernel)(tiny(1 << 26))
        torch.compile(long_kernel_wide)(tiny(1 << 26), [tiny(1 << 20) for _ in range(64)])
        torch.compile(long_kernel_operands)([tiny(1 << 24) for _ in range(4)])
        torch.compile(long_reduction)(tiny(1 << 27))
        torch.compile(long_matmul)(tiny(4096, 4096), tiny(4096, 4096))
    torch.compile(bags)(table, indices, offsets)


@dataclass(frozen=True)
class Sweep:
    run: Callable[[], None]
    classes: tuple[str, ...]  # the finer kernel classes it measures (docs/cost-model.md); none: plain classes only


SWEEPS: dict[str, Sweep] = {
    "embedding_bag_sweep": Sweep(embedding_bag_sweep, ("indexing", "scatter")),
    "scatter_sweep": Sweep(scatter_sweep, ("triton_scatter", "scatter")),
    "scatter_traffic_sweep": Sweep(scatter_traffic_sweep, ("triton_scatter", "triton_scatter_reduction")),
    "atomic_lane_sweep": Sweep(atomic_lane_sweep, ("triton_scatter",)),
    "message_passing_sweep": Sweep(message_passing_sweep, ("triton_scatter",)),
    "depthwise_conv_sweep": Sweep(depthwise_conv_sweep, ("depthwise_convolution", "depthwise_convolution_native",
                                                          "depthwise_convolution_backward", "depthwise_convolution_backward_native")),
    "grouped_conv_sweep": Sweep(grouped_conv_sweep, ("grouped_convolution", "grouped_convolution_backward", "convolution_1d",
                                                      "convolution_1d_backward")),
    "attention_grid_sweep": Sweep(attention_grid_sweep, ("attention", "attention_backward")),
    "attention_f32_mask_sweep": Sweep(attention_f32_mask_sweep, ("attention", "attention_backward")),
    "grouped_conv1d_sweep": Sweep(grouped_conv1d_sweep, ("grouped_convolution", "grouped_convolution_backward")),
    "conv1d_dense_sweep": Sweep(conv1d_dense_sweep, ("convolution_1d", "convolution_1d_backward")),
    "conv1d_layout_sweep": Sweep(conv1d_layout_sweep, ("convolution_1d", "convolution_1d_backward")),
    "strided_triton_sweep": Sweep(strided_triton_sweep, ("triton_strided_pointwise", "triton_strided_reduction")),
    "transposed_reduction_sweep": Sweep(transposed_reduction_sweep, ("triton_strided_reduction",)),
    "gemm_odd_sweep": Sweep(gemm_odd_sweep, ("gemm_unaligned", "gemm_f32")),
    "gemm_pitch_sweep": Sweep(gemm_pitch_sweep, ("gemm_unaligned",)),
    "large_kernel_sweep": Sweep(large_kernel_sweep, ()),  # the plain gemm, triton_pointwise and triton_reduction classes
    "launch_path_sweep": Sweep(launch_path_sweep, ()),  # the host terms alone (fit-profile --launch-sweep)
}


# --- the run and its manifest -------------------------------------------------

class SweepError(Exception):
    """A run whose outputs are not what the fit reads: one line naming the file."""


def parse_args(argv=None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, help="the folder the exports and measured files go to")
    ap.add_argument("--only", nargs="+", metavar="NAME", help=f"sweeps to run (default all: {', '.join(SWEEPS)})")
    ap.add_argument("--jobs", type=int, default=6, help="cases compiled in parallel (default 6)")
    ap.add_argument("--dry-run", action="store_true", help="print the run_zoo.py command and exit")
    args = ap.parse_args(argv)
    unknown = [n for n in args.only or [] if n not in SWEEPS]
    if unknown:
        ap.error(f"--only: unknown sweep(s) {', '.join(unknown)} (known: {', '.join(SWEEPS)})")
    if args.jobs < 1:
        ap.error(f"--jobs: {args.jobs} is below 1")
    return args


def zoo_command(out: Path, names: list[str], jobs: int) -> list[str]:
    """run_zoo.py measuring the named sweeps (the zoo's own measurement: 50
    timed calls per graph after warm-up, 5 profiled calls per kernel map)."""
    return [sys.executable, str(HERE / "run_zoo.py"), "--out", str(out), "--measure", "--jobs", str(jobs), "--only", *names]


def manifest(out: Path, names: list[str]) -> dict:
    """The cases' graphs with their measured files, checked: every graph a
    case exported (`<case>_<i>_<kind>.post.json`) has its `.measured.json`
    beside it. Raises SweepError naming the first missing or unreadable file."""
    cases = []
    for name in names:
        graphs = sorted(out.glob(f"{name}_*.post.json"))
        if not graphs:
            raise SweepError(f"{out / (name + '_*.post.json')}: the sweep exported no graph (see {out / 'zoo_report.json'})")
        entries = []
        for post in graphs:
            stem = post.name[: -len(".post.json")]
            measured = out / f"{stem}.measured.json"
            if not measured.is_file():
                raise SweepError(f"{measured}: missing (the fit reads it beside {post.name})")
            try:
                kernels = len(json.loads(measured.read_text()).get("kernels", []))
            except (OSError, ValueError) as e:
                raise SweepError(f"{measured}: not a measured file ({e})") from None
            entries.append({"graph": post.name, "measured": measured.name, "kernels": kernels})
        cases.append({"case": name, "classes": list(SWEEPS[name].classes), "graphs": entries})
    return {"format": "class_sweep/1", "cases": cases}


def fit_command(out: Path, gpu: str) -> str:
    """The refit with the sweeps beside the zoo, as scripts/fit-profiles.sh
    fits the built-in profiles (held-out models excluded; the sweeps' nodes
    fit only the finer classes' laws), every finer class its own law."""
    held = " ".join(f"--exclude /{m}_" for m in ("llama_block", "vit", "unet_gn", "moe_dropless", "kv_decode", "bert_dynamic", "tp2d"))
    name = "h100-sxm" if gpu == "h100" else "h200"
    sibling = " --sibling profiles/h200.json" if gpu == "h100" else ""
    return (f"build/schedlab fit-profile tests/data/measured/{gpu} --class-sweep {out} --graphs tests/data/exported {held} --class-laws all"
            f"{sibling} --name {name} --comm tests/data/dist4/comm-fit.json -o {name}-classes.json")


def main(argv=None) -> int:
    args = parse_args(argv)
    out = Path(args.out)
    names = args.only or list(SWEEPS)
    cmd = zoo_command(out, names, args.jobs)
    if args.dry_run:
        print(" ".join(cmd))
        return 0
    out.mkdir(parents=True, exist_ok=True)
    rc = subprocess.call(cmd)
    try:
        m = manifest(out, names)
    except SweepError as e:
        print(f"class_sweep: {e}", file=sys.stderr)
        return 1
    (out / "class_sweep.json").write_text(json.dumps(m, indent=1) + "\n")
    graphs = sum(len(c["graphs"]) for c in m["cases"])
    print(f"class_sweep: {graphs} graphs measured in {out}; fit with (h100 shown; h200: tests/data/measured/h200, no --sibling):\n"
          f"  {fit_command(out, 'h100')}")
    return rc


if __name__ == "__main__":
    sys.exit(main())
