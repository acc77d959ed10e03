"""Inductor scheduler nodes -> schedgraph/1 dicts (docs/schedgraph-1.md).

Runs inside Inductor's Scheduler, while V.graph is the graph being compiled:
sizes are read as Inductor's own size hints, dep bytes through
V.graph.get_dep_size_hint (what memory.py uses), runtimes through each node's
get_estimated_runtime (milliseconds; written as microseconds).
"""

from __future__ import annotations

import torch
from torch._inductor import dependencies, ir
from torch._inductor import scheduler as inductor_scheduler
from torch._inductor.comm_analysis import get_collective_group_size
from torch._inductor.utils import is_collective, is_nonfreeable_buffers, is_wait
from torch._inductor.virtualized import V

_DTYPE_NAMES = {
    torch.float64: "f64",
    torch.float32: "f32",
    torch.float16: "f16",
    torch.bfloat16: "bf16",
    torch.int64: "i64",
    torch.int32: "i32",
    torch.int16: "i16",
    torch.int8: "i8",
    torch.uint8: "u8",
    torch.bool: "b8",
}


class ExportError(RuntimeError):
    """Something in a compiled graph the exporter cannot represent."""


def _hint(expr) -> int:
    return int(V.graph.sizevars.size_hint(expr, fallback=0))


def _dtype_name(dtype: torch.dtype) -> str:
    return _DTYPE_NAMES.get(dtype, str(dtype).removeprefix("torch."))


def _buffer(sbuf, mutation_real_name: dict[str, str]) -> dict:
    node = sbuf.node
    layout = node.layout
    out: dict = {"name": sbuf.get_name()}
    if isinstance(layout, ir.NoneLayout):
        out.update(layout="none", bytes=0)
    elif isinstance(layout, ir.MultiOutputLayout):
        out.update(layout="multi_output", bytes=0)
    else:
        dtype = node.get_dtype()
        out["layout"] = "multi_output_item" if isinstance(node, ir.MultiOutput) else "fixed"
        out["dtype"] = _dtype_name(dtype)
        out["shape"] = [_hint(s) for s in node.get_size()]
        out["bytes"] = _hint(node.get_numel()) * dtype.itemsize
    real = mutation_real_name.get(out["name"])
    if real is not None:
        out["mutation_of"] = real
    aliases = list(sbuf.get_aliases())
    if aliases:
        out["aliases"] = aliases
    return out


def _dep(dep) -> dict:
    out: dict = {"name": dep.name}
    if isinstance(dep, dependencies.MemoryDep):
        out["dep"] = "memory"
        out["index"] = str(dep.index)
        out["size"] = [_hint(s) for s in dep.size]
    elif isinstance(dep, dependencies.StarDep):
        out["dep"] = "star"
    elif isinstance(dep, dependencies.WeakDep):
        out["dep"] = "fake_weak" if dep.is_fake else "weak"
    else:
        raise ExportError(f"dependency {dep!r}: unknown type {type(dep).__name__}")
    out["bytes"] = int(V.graph.get_dep_size_hint(dep))
    return out


# When members of one scheduled node differ in kind, the node takes the first
# of these its members have.
_KIND_PRECEDENCE = ("collective", "wait", "template", "reduction", "extern", "pointwise", "nop")


def node_kind(snode) -> str:
    if isinstance(snode, inductor_scheduler.ExternKernelSchedulerNode):
        if is_collective(snode.node):
            return "collective"
        if is_wait(snode.node):
            return "wait"
        return "extern"
    if isinstance(snode, inductor_scheduler.NopKernelSchedulerNode):
        return "nop"
    if isinstance(snode, inductor_scheduler.SchedulerNode):
        if snode.is_template():
            return "template"
        return "reduction" if snode.is_reduction() else "pointwise"
    members = list(snode.get_nodes())
    if members == [snode] or not members:
        raise ExportError(f"node {snode.get_name()}: unknown scheduler node type {type(snode).__name__}")
    kinds = {node_kind(m) for m in members}
    return next(k for k in _KIND_PRECEDENCE if k in kinds)


def _collective(snode, outputs: list[dict], world_size: int) -> dict:
    collective_ir = next(
        (m.node for m in snode.get_nodes() if is_collective(getattr(m, "node", None))), None
    )
    if collective_ir is None:
        raise ExportError(f"node {snode.get_name()}: collective kind without a collective kernel")
    try:
        group_size = int(get_collective_group_size(collective_ir))
    except (TypeError, ValueError, RuntimeError, KeyError):
        group_size = world_size
    op = (collective_ir.python_kernel_name or type(collective_ir).__name__).removeprefix("torch.ops.")
    return {
        "op": op,
        "group_size": group_size,
        "bytes": sum(b["bytes"] for b in outputs if b.get("layout", "fixed") == "fixed"),
    }


def _optional(estimate):
    """An Inductor estimate, or None where Inductor cannot make one for this
    node (its estimators raise on some node types, e.g. nodes without outputs)."""
    try:
        return estimate()
    except Exception:  # noqa: BLE001 - any failure means "no estimate"
        return None


def _node(snode, mutation_real_name: dict[str, str], world_size: int, fused: bool) -> dict:
    kind = node_kind(snode)
    out: dict = {"name": snode.get_name(), "kind": kind}
    members = list(snode.get_nodes())
    if fused and members != [snode]:
        out["members"] = [m.get_name() for m in members]
    kernel = getattr(getattr(snode, "node", None), "python_kernel_name", None)
    if kernel:
        out["kernel"] = kernel
    group = getattr(snode, "group", None)
    if isinstance(group, tuple) and len(group) == 2 and isinstance(group[1], tuple) and len(group[1]) == 2:
        out["group"] = [_hint(group[1][0]), _hint(group[1][1])]
    flops = _optional(snode.estimate_flops)
    if flops:
        out["flops"] = int(flops)
    runtime_ms = _optional(snode.get_estimated_runtime)
    if runtime_ms is not None:
        out["runtime_us"] = float(runtime_ms) * 1000.0
    out["outputs"] = [_buffer(b, mutation_real_name) for b in snode.get_outputs()]
    out["reads"] = [_dep(d) for d in snode.read_writes.reads]
    out["writes"] = [_dep(d) for d in snode.read_writes.writes]
    if kind == "collective":
        out["collective"] = _collective(snode, out["outputs"], world_size)
    return out


def _world_size() -> int:
    import torch.distributed as dist

    if dist.is_available() and dist.is_initialized():
        return int(dist.get_world_size())
    return 1


def _inputs(nodes: list[dict], outputs: list[str]) -> list[dict]:
    """Graph inputs (tensors) in Inductor's order, then constants and any other
    name that nodes read but no node produces, as non-freeable inputs."""
    produced = {b["name"] for n in nodes for b in n["outputs"]}
    inputs: list[dict] = []
    seen: set[str] = set()
    for name, value in V.graph.graph_inputs.items():
        if not isinstance(value, ir.IRNode):
            continue  # symbolic sizes are no tensors
        inputs.append(
            {
                "name": name,
                "bytes": _optional(lambda v=value: _hint(v.get_numel()) * v.get_dtype().itemsize) or 0,
                "freeable": not is_nonfreeable_buffers(dependencies.StarDep(name)),
            }
        )
        seen.add(name)
    referenced = [d["name"] for n in nodes for d in n["reads"] + n["writes"]] + list(outputs)
    for name in referenced:
        if name in seen or name in produced:
            continue
        seen.add(name)
        constant = V.graph.constants.get(name)
        size = int(constant.numel() * constant.element_size()) if isinstance(constant, torch.Tensor) else 0
        inputs.append({"name": name, "bytes": size, "freeable": False})
    return inputs


def graph_dict(name: str, source: str, snodes: list, fused: bool) -> dict:
    """One schedgraph/1 graph of `snodes` in their current order. `fused`: the
    nodes are post-fusion (fused ones get `members`; the caller adds
    `operations`)."""
    mutation_real_name = dict(V.graph.scheduler.mutation_real_name)
    world_size = _world_size()
    nodes = [_node(s, mutation_real_name, world_size, fused) for s in snodes]
    # Inductor names a graph output that is None (e.g. the gradient of an input
    # that needs none) without any storage behind it: not an output here.
    produced = {b["name"] for n in nodes for b in n["outputs"]}
    known = produced | set(V.graph.graph_inputs) | set(V.graph.constants)
    outputs = [str(o) for o in V.graph.get_output_names() if str(o) in known]
    return {
        "format": "schedgraph/1",
        "name": name,
        "source": source,
        "world_size": world_size,
        "inputs": _inputs(nodes, outputs),
        "outputs": outputs,
        "nodes": nodes,
    }


def operations(pre_order: list[str], post_snodes: list) -> list[dict]:
    """The pre-fusion operation skeleton of a fused graph, in pre-fusion order:
    each operation's outputs and the sorted names it reads (all dep kinds)."""
    by_name = {m.get_name(): m for s in post_snodes for m in s.get_nodes()}
    ops = []
    for name in pre_order + sorted(set(by_name) - set(pre_order)):
        member = by_name.get(name)
        if member is None:
            continue  # removed after fusion (e.g. a replaced template choice)
        ops.append(
            {
                "name": name,
                "outputs": [b.get_name() for b in member.get_outputs()],
                "reads": sorted({d.name for d in member.read_writes.reads}),
            }
        )
    return ops
