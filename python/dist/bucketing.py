"""The hand-written bucketing plans of the real steps (steps.py), as plain
data: which parameters share one flat buffer (and so one collective), where
each lies in it, and how many tokens an expert takes. No torch: tests/exporter
/test_dist_steps.py checks it in CI; steps.py only turns it into views.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

MIB = 1024 * 1024
# torch.nn.parallel.DistributedDataParallel's defaults: bucket_cap_mb=25, and
# a first bucket (the last layers' gradients, ready first) capped at
# dist._DEFAULT_FIRST_BUCKET_BYTES = 1 MiB so that communication starts early.
DDP_BUCKET_CAP_BYTES = 25 * MIB
DDP_FIRST_BUCKET_BYTES = 1 * MIB


@dataclass(frozen=True)
class Slot:
    name: str
    shape: tuple[int, ...]
    offset: int  # in elements, into the flat buffer

    @property
    def numel(self) -> int:
        return math.prod(self.shape)


@dataclass(frozen=True)
class FlatLayout:
    """Parameters laid end to end in one flat buffer, padded so that `world`
    ranks each hold an equal contiguous shard (FSDP's flat parameter)."""
    slots: tuple[Slot, ...]
    numel: int  # padded total
    world: int

    @property
    def shard_numel(self) -> int:
        return self.numel // self.world


def flat_layout(params: Sequence[tuple[str, Sequence[int]]], world: int) -> FlatLayout:
    """`params` (name, shape) end to end; the total padded up to a multiple
    of `world`, so that an all-gather of the shards is the whole buffer."""
    if world < 1:
        raise ValueError(f"world size {world}: must be at least 1")
    slots, offset = [], 0
    for name, shape in params:
        if not shape or any(int(d) < 1 for d in shape):
            raise ValueError(f"parameter {name}: shape {tuple(shape)} has no elements")
        slot = Slot(name, tuple(int(d) for d in shape), offset)
        slots.append(slot)
        offset += slot.numel
    if not slots:
        raise ValueError("a flat buffer needs at least one parameter")
    return FlatLayout(tuple(slots), -(-offset // world) * world, world)


def fsdp_groups(blocks: Sequence[Sequence[tuple[str, Sequence[int]]]], world: int,
                per_block: bool) -> list[list[FlatLayout]]:
    """Per transformer block, its flat buffers: one holding the whole block
    (the per-block bucketing users write by hand, pytorch#184236), or one per
    parameter (what a plain per-parameter FSDP issues; Inductor's passes may
    bucket it)."""
    if per_block:
        return [[flat_layout(block, world)] for block in blocks]
    return [[flat_layout([param], world) for param in block] for block in blocks]


def ddp_bucket_assignment(sizes_bytes: Sequence[int], cap_bytes: int = DDP_BUCKET_CAP_BYTES,
                          first_cap_bytes: int = DDP_FIRST_BUCKET_BYTES) -> list[list[int]]:
    """DDP's bucket assignment (`_compute_bucket_assignment_by_size`): the
    gradients, given in the order they become ready (the parameters in
    reverse), are added to the open bucket, which closes as soon as it holds
    at least its cap (the first bucket's cap is `first_cap_bytes`). Returns
    the buckets as lists of indices into `sizes_bytes`, in issue order.
    A cap of 0 gives every gradient its own bucket."""
    buckets, current, held = [], [], 0
    for i, size in enumerate(sizes_bytes):
        if size < 0:
            raise ValueError(f"gradient {i}: negative size {size}")
        current.append(i)
        held += size
        if held >= (first_cap_bytes if not buckets else cap_bytes):
            buckets.append(current)
            current, held = [], 0
    if current:
        buckets.append(current)
    return buckets


def expert_capacity(tokens: int, experts: int, top_k: int, capacity_factor: float) -> int:
    """Tokens one expert takes from one rank (GShard/Switch capacity):
    ceil(capacity_factor * tokens * top_k / experts). Fixed, so the
    all-to-all's shapes are static; assignments past it are dropped."""
    if tokens < 1 or experts < 1 or not 1 <= top_k <= experts or capacity_factor <= 0:
        raise ValueError(f"expert capacity: tokens {tokens}, experts {experts}, top_k {top_k}, "
                         f"capacity factor {capacity_factor}")
    return math.ceil(capacity_factor * tokens * top_k / experts)
