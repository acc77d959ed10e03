"""Inductor scheduler nodes -> schedgraph/1 dicts (docs/schedgraph-1.md).

Runs inside Inductor's Scheduler, while V.graph is the graph being compiled:
sizes are read as Inductor's own size hints, dep bytes through
V.graph.get_dep_size_hint (what memory.py uses), runtimes through each node's
get_estimated_runtime (milliseconds; written as microseconds).
"""

from __future__ import annotations

import torch
from torch._inductor import config as inductor_config
from torch._inductor import dependencies, ir
from torch._inductor import scheduler as inductor_scheduler
from torch._inductor.comm_analysis import get_collective_group_size
from torch._inductor.utils import is_collective, is_nonfreeable_buffers, is_wait
from torch._inductor.virtualized import V

from . import pricing

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
    """Inductor's own size hint with fallback 0: what its memory planner and
    fusion see for data-dependent sizes (the `bytes`/`shape`/`size` fields
    keep it so that Inductor's decisions reproduce)."""
    return int(V.graph.sizevars.size_hint(expr, fallback=0))


def _fallback_hint(expr) -> int:
    """Inductor's fallback hint for a data-dependent size: unbacked symbols
    count config.unbacked_symint_fallback, clamped to their value ranges."""
    return int(V.graph.sizevars.size_hint(expr, fallback=inductor_config.unbacked_symint_fallback))


def _is_symbolic(expr) -> bool:
    return bool(getattr(expr, "free_symbols", None))


def _is_data_dependent(expr) -> bool:
    from torch.fx.experimental.symbolic_shapes import free_unbacked_symbols

    return bool(free_unbacked_symbols(expr)) if _is_symbolic(expr) else False


def _size_fields(byte_expr, dims=None) -> dict:
    """Additive symbolic-size fields (docs/schedgraph-1.md, "Symbolic sizes"):
    `bytes_expr` and `shape_expr` whenever the size has symbols; `size_hint` (true), `hint_bytes`
    and `hint_source` when it depends on data (unbacked symbols)."""
    out: dict = {}
    symbolic_dims = dims is not None and any(_is_symbolic(d) for d in dims)
    if not _is_symbolic(byte_expr) and not symbolic_dims:
        return out
    out["bytes_expr"] = str(byte_expr)
    if dims is not None:
        out["shape_expr"] = [str(d) for d in dims]
    if _is_data_dependent(byte_expr) or (dims is not None and any(_is_data_dependent(d) for d in dims)):
        out["size_hint"] = True
        out["hint_bytes"] = _fallback_hint(byte_expr)
        out["hint_source"] = "fallback"
    return out


def _dtype_name(dtype: torch.dtype) -> str:
    return _DTYPE_NAMES.get(dtype, str(dtype).removeprefix("torch."))


def _stride(node) -> list[int] | None:
    """The buffer's strides in elements, as its layout fixes them (size hints
    for symbols), or None where the layout has none fixed yet. They tell the
    memory format: a 4-d buffer of strides [H*W*C, 1, W*C, C] is channels-last,
    which decides whether cuDNN transposes a convolution's operands."""
    try:
        stride = node.get_stride()
    except Exception:  # noqa: BLE001 - layouts without a fixed stride
        return None
    if stride is None:
        return None
    try:
        return [_hint(s) for s in stride]
    except Exception:  # noqa: BLE001
        return None


def _viewed_buffer(layout) -> str | None:
    """The buffer whose storage a NonOwningLayout views (a slice of a
    concatenation its producer writes in place: the wrapper allocates the
    concatenation once and `reinterpret_tensor`s each slice), else None."""
    non_owning = getattr(ir, "NonOwningLayout", None)
    if non_owning is None or not isinstance(layout, non_owning):
        return None
    try:
        return layout.view.get_name()
    except Exception:  # noqa: BLE001 - a view without a named buffer behind it
        return None


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
        dims = list(node.get_size())
        out["shape"] = [_hint(s) for s in dims]
        stride = _stride(node)
        # One stride per dim, or none (a mutation's layout reports its target's).
        if stride is not None and len(stride) == len(out["shape"]):
            out["stride"] = stride
        out["bytes"] = _hint(node.get_numel()) * dtype.itemsize
        out.update(_size_fields(node.get_numel() * dtype.itemsize, dims))
    real = mutation_real_name.get(out["name"])
    if real is not None:
        out["mutation_of"] = real
    viewed = _viewed_buffer(layout)
    if viewed is not None and viewed != out["name"] and real is None:
        out["view_of"] = viewed
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
        if any(_is_symbolic(s) for s in dep.size):
            out["size_expr"] = [str(s) for s in dep.size]
            if any(_is_data_dependent(s) for s in dep.size):
                out["size_hint"] = True
    elif isinstance(dep, dependencies.StarDep):
        out["dep"] = "star"
    elif isinstance(dep, dependencies.WeakDep):
        out["dep"] = "fake_weak" if dep.is_fake else "weak"
    else:
        raise ExportError(f"dependency {dep!r}: unknown type {type(dep).__name__}")
    out["bytes"] = int(V.graph.get_dep_size_hint(dep))
    if out.get("size_hint") or (out["bytes"] == 0 and out["dep"] != "weak" and out["dep"] != "fake_weak"):
        _dep_hint(dep, out)
    return out


def _dep_hint(dep, out: dict) -> None:
    """A dep whose bytes Inductor sees as 0 because they depend on data:
    the byte expression and Inductor's fallback hint beside it."""
    try:
        buf = V.graph.get_buffer(dep.name)
        if buf is None:
            return
        dtype = buf.get_dtype()
        if isinstance(dep, dependencies.MemoryDep):
            numel = dep.get_numel()
        else:
            numel = buf.get_numel()
        expr = numel * dtype.itemsize
    except Exception:  # noqa: BLE001 - no storage (multi-output containers, none layouts)
        return
    if _is_data_dependent(expr):
        out["bytes_expr"] = str(expr)
        out["size_hint"] = True
        out["hint_bytes"] = _fallback_hint(expr)
        out["hint_source"] = "fallback"


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


def _group_fields(group) -> dict:
    """`group` = [numel, rnumel]. The Triton backend's group is (device,
    (numel, rnumel)); the C++ backend's is (device, (loop sizes, reduction
    sizes)), tuples of sizes: their products, with the sizes themselves in
    `group_dims`. Symbolic groups also get `group_expr`."""
    if not (isinstance(group, tuple) and len(group) == 2 and isinstance(group[1], tuple) and len(group[1]) == 2):
        return {}
    numel, rnumel = group[1]
    out: dict = {}
    if isinstance(numel, (tuple, list)) or isinstance(rnumel, (tuple, list)):
        from torch._inductor.utils import sympy_product

        dims = [list(numel) if isinstance(numel, (tuple, list)) else [numel],
                list(rnumel) if isinstance(rnumel, (tuple, list)) else [rnumel]]
        out["group_dims"] = [[_hint(d) for d in part] for part in dims]
        numel, rnumel = sympy_product(dims[0]), sympy_product(dims[1])
    out["group"] = [_hint(numel), _hint(rnumel)]
    if _is_symbolic(numel) or _is_symbolic(rnumel):
        out["group_expr"] = [str(numel), str(rnumel)]
    return out


def _shape_value(v):
    """An FX argument as pricing.op_flops wants it: tensors as shapes
    (size hints), lists element-wise, everything else as is."""
    import torch.fx

    if isinstance(v, torch.fx.Node):
        v = v.meta.get("val")
    if isinstance(v, torch.Tensor):
        return [_sym_int(d) for d in v.shape]
    if isinstance(v, (list, tuple)):
        return [_shape_value(x) for x in v]
    if isinstance(v, torch.SymInt):
        return _sym_int(v)
    return v


def _sym_int(d) -> int:
    if isinstance(d, torch.SymInt):
        return _fallback_hint(d.node.expr)
    return int(d)


def _bind(target, args, kwargs) -> dict:
    schema = getattr(target, "_schema", None)
    if schema is None:
        return {}
    bound = {a.name: _shape_value(v) for a, v in zip(schema.arguments, args)}
    bound.update({k: _shape_value(v) for k, v in kwargs.items()})
    return bound


def _shape_flops(snode, kind: str) -> int | None:
    """Flops of an extern or template node from its FX origin's shapes
    (pricing.op_flops). None when no origin is priced by flops; pointwise and
    reduction nodes keep Inductor's estimate (their origins may include a
    matmul that a sibling extern node computes), and an extern node is priced
    only by origins of its own operator's class (a MultiOutput item shares
    its producer's origins but runs nothing)."""
    if kind not in ("extern", "template"):
        return None
    wanted = None  # template: any priced origin (the template computes it)
    if kind == "extern":
        # only the node that runs the operator: its MultiOutput items share its origins
        wanted = pricing.op_class(pricing.operator_name(getattr(snode.node, "python_kernel_name", None)))
        if wanted is None:
            return None
    total = None
    for origin in _node_origins(snode):
        op = pricing.operator_name(str(getattr(origin, "target", "")))
        if pricing.op_class(op) not in ("gemm", "attention", "convolution"):
            continue
        if wanted is not None and pricing.op_class(op) != wanted:
            continue
        val = origin.meta.get("val")
        out_shape = _shape_value(val) if isinstance(val, torch.Tensor) else None
        flops = pricing.op_flops(op, _bind(origin.target, origin.args, origin.kwargs), out_shape)
        if flops is not None:
            total = (total or 0) + flops
    return total


def _node_origins(snode) -> list:
    """The FX nodes a scheduler node was lowered from, by name."""
    origins = set()
    for member in snode.get_nodes():
        origins |= set(getattr(getattr(member, "node", None), "origins", None) or ())
    return sorted(origins, key=lambda o: o.name)


def _layout_of(node) -> tuple[list[int], list[int]] | None:
    """An IR node's sizes and strides (size hints), or None."""
    try:
        shape = [_hint(d) for d in node.get_size()]
    except Exception:  # noqa: BLE001 - not a tensor
        return None
    stride = _stride(node)
    if stride is None or len(stride) != len(shape):
        return None
    return shape, stride


def _fx_layout(fx_arg) -> tuple[list[int], list[int]] | None:
    """An FX argument's sizes and strides from its fake tensor, or None."""
    import torch.fx

    val = fx_arg.meta.get("val") if isinstance(fx_arg, torch.fx.Node) else None
    if not isinstance(val, torch.Tensor):
        return None
    try:
        return [_sym_int(d) for d in val.shape], [_sym_int(d) for d in val.stride()]
    except Exception:  # noqa: BLE001 - symbolic strides without a hint
        return None


def _convolution_memory_format(snode, origin, backward: bool) -> str | None:
    """The memory format cuDNN runs a convolution node in, from the layouts
    Inductor gave its input and weight (the kernel's IR inputs: x, weight
    [, bias] forward; grad_output, input, weight backward), else from the
    FX origin's fake tensors (Inductor's layout optimization may since have
    made them channels-last)."""
    first = 1 if backward else 0
    inputs = list(getattr(getattr(snode, "node", None), "inputs", None) or ())
    pair = [_layout_of(t) for t in inputs[first:first + 2]]
    if len(pair) != 2 or None in pair:
        args = list(getattr(origin, "args", ()) or ())
        pair = [_fx_layout(a) for a in args[first:first + 2]]
    if len(pair) != 2 or None in pair:
        return None
    (x_shape, x_stride), (w_shape, w_stride) = pair
    return pricing.convolution_memory_format(x_shape, x_stride, w_shape, w_stride)


def _convolution(snode, kind: str) -> dict | None:
    """The geometry of a convolution node (pricing.convolution_record), or
    None for other nodes and where its origin cannot be read."""
    if kind not in ("extern", "template"):
        return None
    if kind == "extern":
        op = pricing.operator_name(getattr(snode.node, "python_kernel_name", None))
        if pricing.op_class(op) != "convolution":
            return None
    records = []
    for origin in _node_origins(snode):
        op = pricing.operator_name(str(getattr(origin, "target", "")))
        if op not in pricing.CONVOLUTION_OPS and op not in pricing.CONVOLUTION_BACKWARD_OPS:
            continue
        try:
            val = origin.meta.get("val")
            out_shape = _shape_value(val) if isinstance(val, torch.Tensor) else None
            args = _bind(origin.target, origin.args, origin.kwargs)
            backward = op in pricing.CONVOLUTION_BACKWARD_OPS
            record = pricing.convolution_record(op, args, out_shape,
                                                _convolution_memory_format(snode, origin, backward))
        except Exception:  # noqa: BLE001 - a geometry we cannot read is left out, never guessed
            record = None
        if record is not None:
            records.append(record)
    # One call per node: the record whose shapes are the node's (its origins
    # also hold every convolution inlined before it).
    node = snode.node
    own = _layout_of(node)
    inputs = [(_layout_of(i) or (None, None))[0] for i in (getattr(node, "inputs", None) or [])]
    return pricing.own_convolution(records, own[0] if own else None, inputs[0] if len(inputs) > 0 else None,
                                   inputs[1] if len(inputs) > 1 else None)


def _attention(snode, kind: str) -> dict | None:
    """What an attention node computes (pricing.attention_record), or None
    for other nodes and where its origin cannot be read."""
    if kind != "extern":
        return None
    op = pricing.operator_name(getattr(getattr(snode, "node", None), "python_kernel_name", None))
    if pricing.op_class(op) != "attention":
        return None
    records = []
    for origin in _node_origins(snode):
        origin_op = pricing.operator_name(str(getattr(origin, "target", "")))
        if origin_op != op:
            continue
        try:
            record = pricing.attention_record(origin_op, _bind(origin.target, origin.args, origin.kwargs))
        except Exception:  # noqa: BLE001 - a call we cannot read is left out, never guessed
            record = None
        if record is not None:
            records.append(record)
    return records[0] if len(records) == 1 else None


def _reduction_types(snode) -> list[str]:
    """The reduction types (Inductor's `reduction_type`: sum, max,
    welford_reduce, online_softmax_reduce, ...) of a node's members, sorted
    and distinct; empty for a node without reductions."""
    types = set()
    for member in snode.get_nodes():
        get = getattr(getattr(member, "node", None), "get_reduction_type", None)
        try:
            t = get() if callable(get) else None
        except Exception:  # noqa: BLE001 - not a computed buffer
            t = None
        if t:
            types.add(str(t))
    return sorted(types)


def _foreach_groups() -> dict[str, int]:
    """Operation name -> foreach group id: V.graph.lists in order (the lists
    Inductor turns into ForeachKernelSchedulerNodes), ids 0, 1, ... over the
    lists that name any operation."""
    cached = getattr(V.graph, "_schedlab_foreach", None)
    if cached is not None:
        return cached
    groups: dict[str, int] = {}
    next_id = 0
    for names in getattr(V.graph, "lists", {}).values():
        names = [n for n in names if n not in groups]
        if not names:
            continue
        for n in names:
            groups[n] = next_id
        next_id += 1
    V.graph._schedlab_foreach = groups
    return groups


def _foreach_id(snode) -> int | None:
    groups = _foreach_groups()
    if not groups:
        return None
    for member in snode.get_nodes():
        gid = groups.get(member.get_name())
        if gid is not None:
            return gid
    return None


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
    payload = sum(b["bytes"] for b in outputs if b.get("layout", "fixed") == "fixed")
    if payload == 0:
        # In-place collectives (all_reduce_, all_reduce_coalesced_, ...) produce
        # no new storage: their payload is the tensors they update.
        payload = sum(_ir_bytes(t) for t in getattr(collective_ir, "inputs", ()) or ())
    return {"op": op, "group_size": group_size, "bytes": payload}


def _ir_bytes(node) -> int:
    try:
        return _hint(node.get_numel()) * node.get_dtype().itemsize
    except Exception:  # noqa: BLE001 - not a tensor (e.g. a constant argument)
        return 0


def _optional(estimate):
    """An Inductor estimate, or None where Inductor cannot make one for this
    node (its estimators raise on some node types, e.g. nodes without outputs)."""
    try:
        return estimate()
    except Exception:  # noqa: BLE001 - any failure means "no estimate"
        return None


def _node(snode, mutation_real_name: dict[str, str], world_size: int, fused: bool, runtimes: bool) -> dict:
    kind = node_kind(snode)
    out: dict = {"name": snode.get_name(), "kind": kind}
    members = list(snode.get_nodes())
    if fused and members != [snode]:
        out["members"] = [m.get_name() for m in members]
    kernel = getattr(getattr(snode, "node", None), "python_kernel_name", None)
    if kernel:
        out["kernel"] = kernel
    out.update(_group_fields(getattr(snode, "group", None)))
    flops = _shape_flops(snode, kind)
    if flops is None:
        flops = _optional(snode.estimate_flops)
    if flops:
        out["flops"] = int(flops)
    convolution = _convolution(snode, kind)
    if convolution is not None:
        out["convolution"] = convolution
    attention = _attention(snode, kind)
    if attention is not None:
        out["attention"] = attention
    reduction_types = _reduction_types(snode)
    if reduction_types:
        out["reduction_types"] = reduction_types
    foreach = _foreach_id(snode)
    if foreach is not None:
        out["foreach"] = foreach
    runtime_ms = _optional(snode.get_estimated_runtime) if runtimes else None
    if runtime_ms is not None:
        out["runtime_us"] = float(runtime_ms) * 1000.0
    out["outputs"] = [_buffer(b, mutation_real_name) for b in snode.get_outputs()]
    out["reads"] = [_dep(d) for d in snode.read_writes.reads]
    out["writes"] = [_dep(d) for d in snode.read_writes.writes]
    if kind == "collective":
        out["collective"] = _collective(snode, out["outputs"], world_size)
    return out


def _node_named(snode, mutation_real_name, world_size: int, fused: bool, runtimes: bool) -> dict:
    """_node, with any failure reported as an ExportError naming the node."""
    try:
        return _node(snode, mutation_real_name, world_size, fused, runtimes)
    except ExportError:
        raise
    except Exception as e:  # noqa: BLE001 - re-raised with the node's name
        origin = getattr(getattr(snode, "node", None), "python_kernel_name", None) or type(snode).__name__
        raise ExportError(
            f"node {snode.get_name()} ({origin}): cannot export: {type(e).__name__}: {e}"
        ) from e


def graph_device() -> str:
    """"cuda" when the graph runs any kernel on a GPU, else "cpu"."""
    types = set(getattr(V.graph, "device_types", ()) or ())
    for t in ("cuda", "xpu", "mps"):
        if t in types:
            return t
    return "cpu" if not types or "cpu" in types else sorted(types)[0]


def _world_size() -> int:
    import torch.distributed as dist

    if dist.is_available() and dist.is_initialized():
        return int(dist.get_world_size())
    return 1


def _donated(name: str) -> bool | None:
    """Whether AOTAutograd donated the graph input `name` (Inductor's
    DonatedBuffer, which the scheduler's in-place decision may write into);
    None where this Inductor has no such notion."""
    donated_type = getattr(ir, "DonatedBuffer", None)
    originals = getattr(V.graph, "graph_inputs_original", None)
    if donated_type is None or not isinstance(originals, dict):
        return None
    return isinstance(originals.get(name), donated_type)


def _inputs(nodes: list[dict], outputs: list[str]) -> list[dict]:
    """Graph inputs (tensors) in Inductor's order, then constants and any other
    name that nodes read but no node produces, as non-freeable inputs."""
    produced = {b["name"] for n in nodes for b in n["outputs"]}
    inputs: list[dict] = []
    seen: set[str] = set()
    for name, value in V.graph.graph_inputs.items():
        if not isinstance(value, ir.IRNode):
            continue  # symbolic sizes are no tensors
        record = {
            "name": name,
            "bytes": _optional(lambda v=value: _hint(v.get_numel()) * v.get_dtype().itemsize) or 0,
            "freeable": not is_nonfreeable_buffers(dependencies.StarDep(name)),
        }
        donated = _donated(name)
        if donated is not None:
            record["donated"] = donated
        # Informative (docs/schedgraph-1.md): the tensor's dtype, shape and
        # strides, as for node outputs.
        dtype = _optional(value.get_dtype)
        if dtype is not None:
            record["dtype"] = _dtype_name(dtype)
        shape = _optional(lambda v=value: [_hint(d) for d in v.get_size()])
        if shape is not None:
            record["shape"] = shape
            stride = _stride(value)
            if stride is not None and len(stride) == len(shape):
                record["stride"] = stride
        inputs.append(record)
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


def graph_dict(name: str, source: str, snodes: list, fused: bool, runtimes: bool = True) -> dict:
    """One schedgraph/1 graph of `snodes` in their current order. `fused`: the
    nodes are post-fusion (fused ones get `members`; the caller adds
    `operations`). `runtimes`: each node's `runtime_us` is Inductor's own
    estimate (get_estimated_runtime); without, no node has one. Inductor's
    estimate is most of an export's time (it may compile and benchmark the
    node's kernels), so a caller that drops the field never asks for it."""
    mutation_real_name = dict(V.graph.scheduler.mutation_real_name)
    world_size = _world_size()
    nodes = [_node_named(s, mutation_real_name, world_size, fused, runtimes) for s in snodes]
    # Inductor names a graph output that is None (e.g. the gradient of an input
    # that needs none) without any storage behind it: not an output here.
    produced = {b["name"] for n in nodes for b in n["outputs"]}
    known = produced | set(V.graph.graph_inputs) | set(V.graph.constants)
    outputs = [str(o) for o in V.graph.get_output_names() if str(o) in known]
    return {
        "format": "schedgraph/1",
        "name": name,
        "source": source,
        "device": graph_device(),
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
