"""schedlab's calibrated model as the runtime estimator of Inductor's FX
overlap scheduler (torch/_inductor/fx_passes/overlap_scheduling.py):

    from torch._inductor import config
    from schedlab_export.fx_estimator import make_estimator, private_node_times

    estimator = make_estimator("h100-sxm")          # or a profile file
    with config.patch({"aten_distributed_optimizations.enable_overlap_scheduling": True,
                       "aten_distributed_optimizations.custom_runtime_estimation": estimator}), \\
            private_node_times():
        torch.compile(step)(...)
    estimator.graph_stats   # per graph: nodes schedlab priced, nodes left to Inductor

The torch side of fx_pricing.py: reads an fx.Node into the plain record
fx_pricing translates and prices through the bindings (schedlab.price).
Where schedlab prices nothing the estimator returns what Inductor would
have used without it: None for flop-counted compute nodes and collectives
(Inductor then benchmarks, or uses its analytical NCCL model); for other
nodes Inductor's memory-bound estimate (estimate_mem_bound_runtime_ms),
since there Inductor takes a None from a custom estimator as "no time" and
does not fall back itself.
"""

from __future__ import annotations

import contextlib
from math import prod
from typing import Callable

import torch
import torch.fx
import torch.utils._pytree

from . import fx_pricing
from .snapshot import _bind, _dtype_name, _sym_int


def _tensor(t) -> dict | None:
    if not isinstance(t, torch.Tensor):
        return None
    shape = [_sym_int(d) for d in t.shape]
    try:
        stride = [_sym_int(s) for s in t.stride()]
    except RuntimeError:  # sparse and other layouts without strides
        stride = None
    out = {"dtype": _dtype_name(t.dtype), "shape": shape, "bytes": prod(shape) * t.element_size()}
    if stride is not None:
        out["stride"] = stride
    return out


def _tensors(value) -> list[dict]:
    """The tensors of a node's value (a tensor, or a tuple / list of them), in order."""
    leaves = torch.utils._pytree.tree_leaves(value)
    return [t for t in (_tensor(v) for v in leaves) if t is not None]


def _group_size(node: torch.fx.Node, args: dict) -> int | None:
    size = args.get("group_size")
    if isinstance(size, int) and size > 0:
        return size
    name = args.get("group_name")
    if not isinstance(name, str):
        return None
    try:
        from torch.distributed.distributed_c10d import _resolve_process_group

        return int(_resolve_process_group(name).size())
    except Exception:  # noqa: BLE001 - a group not resolvable here: the collective stays Inductor's
        return None


def record_of(node: torch.fx.Node) -> dict:
    """fx_pricing's record of an FX node (its FxRecord)."""
    record = {"name": node.name, "target": str(node.target)}
    if node.op != "call_function":
        return record
    try:
        args = _bind(node.target, node.args, node.kwargs)
    except Exception:  # noqa: BLE001 - arguments not bindable: priced by nothing that needs them
        args = {}
    record["args"] = args
    record["inputs"] = [t for i in node.all_input_nodes for t in _tensors(i.meta.get("val"))]
    record["outputs"] = _tensors(node.meta.get("val"))
    if fx_pricing.collective_word(record["target"]) is not None:
        record["group_size"] = _group_size(node, args)
        try:
            from torch._inductor.comm_analysis import estimate_fx_collective_size

            record["inductor_size"] = int(estimate_fx_collective_size(node))
        except Exception:  # noqa: BLE001 - no size to scale an override_size by
            record["inductor_size"] = None
    return record


def records_of(graph: torch.fx.Graph) -> tuple[list[dict], int]:
    import torch.distributed as dist

    world = dist.get_world_size() if dist.is_available() and dist.is_initialized() else 1
    return [record_of(n) for n in graph.nodes if n.op == "call_function"], world


def inductor_fallback(node: torch.fx.Node) -> float | None:
    """What Inductor's overlap scheduler uses for a node without a custom
    estimator, where it would not fall back itself on a None."""
    from torch._inductor.fx_passes import overlap_scheduling

    if node.op != "call_function" or overlap_scheduling.is_compute_node(node):
        return None  # compute: Inductor benchmarks it
    if fx_pricing.collective_word(str(node.target)) is not None:
        return None  # Inductor's analytical collective model
    estimate = getattr(overlap_scheduling, "estimate_mem_bound_runtime_ms", None)
    return None if estimate is None else float(estimate(node))


def make_estimator(hardware: str | None = None, log: Callable[[str], None] = lambda line: None) -> fx_pricing.Estimator:
    """An Estimator pricing with the profile `hardware` (a built-in name or a
    profile file; None: the default). Raises schedlab.BindingsUnavailable
    without the bindings, schedlab.Error for a profile it cannot read."""
    import schedlab

    # Checked now, not inside a compile: the bindings, and the profile.
    schedlab.price({"format": "schedgraph/1", "inputs": [], "outputs": [], "nodes": []}, hardware=hardware)
    return fx_pricing.Estimator(record_of=record_of, graph_of=lambda node: node.graph, records_of=records_of,
                                price=lambda graph: schedlab.price(graph, hardware=hardware),
                                fallback=inductor_fallback, log=log)


class _NodeTimes:
    """An in-memory stand-in for the LocalCache Inductor keeps node times in."""

    def __init__(self):
        self._times: dict = {}

    def lookup(self, *keys):
        return self._times.get(keys)

    def set_value(self, *keys, value):
        self._times[keys] = value


@contextlib.contextmanager
def private_node_times():
    """Inductor's overlap scheduler looks a compute node's time up in its
    on-disk LocalCache before it asks the custom estimator, and writes the
    answer there: a node benchmarked by an earlier run would never reach
    schedlab, and schedlab's times would be read by later runs without it.
    Inside this block the scheduler keeps node times in memory, apart."""
    from torch._inductor.fx_passes import overlap_scheduling

    saved = getattr(overlap_scheduling, "get_benchmark_cache", None)
    if saved is None:
        yield
        return
    cache = _NodeTimes()
    overlap_scheduling.get_benchmark_cache = lambda: cache
    try:
        yield
    finally:
        overlap_scheduling.get_benchmark_cache = saved
