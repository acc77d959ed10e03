"""Observed kernel workspaces: what a library kernel allocates for itself while
it runs, on the GPU the graph was measured on (`--measure`).

Two families are observed (WORKSPACE_OPS): convolutions, and the dense
backward of embeddings and embedding bags, whose CUDA kernel sorts the
indices and keeps a partial gradient row per run of equal indices, so its
transient grows with the indices and how many of them differ (DLRM's 1M-row
table's backward: 28 MB beside its 256 MB gradient).

A cuDNN convolution's transient memory is the choice of cuDNN's heuristics
for the shapes, strides, dtypes and parameters on that GPU (one engine copies
its operands into its own layout, another keeps split-K partial sums of the
weight gradient, another nothing), and no law of the shape predicts it
(docs/memory-as-executed.md, "Kernel workspace"). So it is observed, as
data-dependent sizes are:

1. one call of the compiled graph runs under a dispatch mode that notes each
   workspace operator's arguments: every tensor's sizes, strides, storage
   offset and dtype, the values of integer tensors (indices and offsets,
   whose values decide a sort's transient), and the other arguments as
   passed (`record_calls`);
2. each noted call runs again alone, on fresh random floating tensors of
   those layouts and the noted integer ones: once to warm up (cuDNN's plan
   and handle), then once with the caching allocator's history on
   (`probe`);
3. the call's transient is the highest sum of its live allocations over the
   call less the outputs it returns (`transient_bytes`): the extra bytes at
   the call's peak, beyond its results;
4. the i-th noted call of an operator is the i-th launch of that operator
   in the generated code (measure.LaunchPlan), which names its node; the
   node gets `workspace_bytes` and `workspace_source: "observed"` in the
   post graph (`apply_workspaces`; schedgraph-1.md).

`transient_bytes` and `apply_workspaces` need no torch.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

from . import pricing

# The operator a node launches (the generated code's name) -> the operators
# the dispatcher shows for its call: a composite operator runs as another
# (`_embedding_bag_backward` reaches the dispatch mode as
# `_embedding_bag_dense_backward` when its gradient is dense).
WORKSPACE_LAUNCHES: dict[str, frozenset] = {
    **{op: frozenset((op,)) for op in pricing.CONVOLUTION_OPS + pricing.CONVOLUTION_BACKWARD_OPS},
    "_embedding_bag_backward": frozenset(("_embedding_bag_backward", "_embedding_bag_dense_backward")),
    "_embedding_bag_dense_backward": frozenset(("_embedding_bag_dense_backward",)),
    "embedding_dense_backward": frozenset(("embedding_dense_backward",)),
    "embedding_backward": frozenset(("embedding_backward", "embedding_dense_backward")),
}
WORKSPACE_OPS = frozenset(WORKSPACE_LAUNCHES)
# What the dispatch mode notes: every operator some launch runs as.
_DISPATCHED = frozenset(op for ops in WORKSPACE_LAUNCHES.values() for op in ops)
WORKSPACE_SOURCE = "observed"


@dataclass(frozen=True)
class TensorSpec:
    """A tensor argument's layout, without its data."""

    size: tuple
    stride: tuple
    storage_offset: int
    dtype: object  # torch.dtype
    device: str
    values: object = None  # an integer tensor's contents (a copy), else None


@dataclass
class KernelCall:
    op: str  # the operator's name (pricing.operator_name)
    overload: object  # the OpOverload called
    args: tuple  # tensors as TensorSpec
    kwargs: dict


def transient_bytes(events: list, output_bytes: int) -> int:
    """The highest sum of live allocations over a call's allocator events
    ([action, bytes]: "a" alloc, "f" free requested; sizes as requested)
    less the bytes of the outputs the call returns, never below 0."""
    live = peak = 0
    for action, size in events:
        live += size if action == "a" else -size
        peak = max(peak, live)
    return max(0, peak - output_bytes)


def calls_match_launches(call_ops: list[str], launch_keys: list[str]) -> bool:
    """Whether the i-th noted call is the i-th launch, for every i: as many
    calls as launches, each run as an operator its launch may run as."""
    return len(call_ops) == len(launch_keys) and all(
        op in WORKSPACE_LAUNCHES.get(key, ()) for op, key in zip(call_ops, launch_keys))


def apply_workspaces(post: dict, workspaces: dict[str, int]) -> bool:
    """Writes each observed workspace into its node of the post graph.
    Returns whether anything changed."""
    changed = False
    for node in post.get("nodes", []):
        if node["name"] in workspaces:
            node["workspace_bytes"] = int(workspaces[node["name"]])
            node["workspace_source"] = WORKSPACE_SOURCE
            changed = True
    return changed


# --- on the GPU -----------------------------------------------------------------
def _spec(x):
    import torch

    if isinstance(x, torch.Tensor):
        # Indices and offsets keep their values: an embedding backward's sort
        # and its partial rows depend on them, and random or zero indices
        # could address outside the table.
        values = x.clone() if not (x.is_floating_point() or x.is_complex()) else None
        return TensorSpec(tuple(x.shape), tuple(x.stride()), x.storage_offset(), x.dtype, str(x.device), values)
    return x


def record_calls(fn, args) -> list[KernelCall]:
    """Runs fn(args) once, noting the arguments of every workspace operator
    it calls (layouts only: the tensors are not kept)."""
    import torch
    from torch.utils._pytree import tree_map
    from torch.utils._python_dispatch import TorchDispatchMode

    calls: list[KernelCall] = []

    class Recorder(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, a=(), kw=None):
            kw = kw or {}
            op = pricing.operator_name(str(func))
            if op in _DISPATCHED:
                calls.append(KernelCall(op, func, tree_map(_spec, tuple(a)), tree_map(_spec, dict(kw))))
            return func(*a, **kw)

    with torch.no_grad(), Recorder():
        out = fn(args)
    torch.cuda.synchronize()
    del out
    return calls


def _materialize(x):
    """A fresh tensor of a TensorSpec's layout, filled with random values."""
    import torch

    if not isinstance(x, TensorSpec):
        return x
    if x.values is not None:
        return x.values
    extent = x.storage_offset + sum((n - 1) * s for n, s in zip(x.size, x.stride)) + 1 if all(x.size) else 0
    storage = torch.empty(max(extent, 1), dtype=x.dtype, device=x.device)
    if storage.is_floating_point():
        storage.normal_()
    else:
        storage.zero_()
    return storage.as_strided(x.size, x.stride, x.storage_offset)


def probe(call: KernelCall) -> int:
    """The call's transient bytes, run alone: warm, then with the allocator's
    history on."""
    import torch
    from torch.utils._pytree import tree_flatten, tree_map

    args = tree_map(_materialize, call.args)
    kwargs = tree_map(_materialize, call.kwargs)
    with torch.no_grad():
        out = call.overload(*args, **kwargs)  # warm-up: cuDNN's plan and handle
        del out
        torch.cuda.synchronize()
        torch.cuda.memory._record_memory_history(context=None, stacks="python", max_entries=100000)
        try:
            out = call.overload(*args, **kwargs)
            torch.cuda.synchronize()
            snapshot = torch.cuda.memory._snapshot()
        finally:
            torch.cuda.memory._record_memory_history(enabled=None)
    device = torch.cuda.current_device()
    traces = snapshot["device_traces"][device] if len(snapshot["device_traces"]) > device else []
    events = [[e["action"][0], e["size"]] for e in traces if e["action"] in ("alloc", "free_requested")]
    storages = {t.untyped_storage().data_ptr(): t.untyped_storage().nbytes()
                for t in tree_flatten(out)[0] if isinstance(t, torch.Tensor)}
    del out, args, kwargs
    return transient_bytes(events, sum(storages.values()))


def observe_workspaces(fn, args, launch_plan, post_nodes: dict[str, dict]) -> dict[str, int]:
    """Per node of the post graph that runs a workspace operator, its observed
    transient bytes. Empty when the graph has none, or when the noted calls
    do not line up with the generated code's launches; a node whose probe
    fails (out of memory, say) is left out. Each of these leaves a note on
    stderr, and memory as executed prices what is left out by its rule."""
    launches = [(node, key) for node, kind, key in launch_plan.entries if kind == "extern" and key in WORKSPACE_OPS]
    if not launches:
        return {}
    try:
        calls = record_calls(fn, args)
    except Exception as e:  # noqa: BLE001 - the other measurements stand; the rule prices these nodes
        print(f"schedlab_export: workspaces not observed: {type(e).__name__}: {e}", file=sys.stderr)
        return {}
    if not calls_match_launches([c.op for c in calls], [key for _, key in launches]):
        print(f"schedlab_export: workspaces not observed: the call ran {[c.op for c in calls]}, "
              f"the code launches {[key for _, key in launches]}", file=sys.stderr)
        return {}
    member_to_post = {m: name for name, n in post_nodes.items() for m in n.get("members", [name])}
    observed: dict[str, int] = {}
    for (node, _), call in zip(launches, calls):
        post = node if node in post_nodes else member_to_post.get(node)
        if post is None:
            continue
        try:
            observed[post] = max(observed.get(post, 0), probe(call))
        except Exception as e:  # noqa: BLE001 - e.g. out of memory: this node keeps the rule
            print(f"schedlab_export: workspace of {post} not observed: {type(e).__name__}: {e}", file=sys.stderr)
    return observed
