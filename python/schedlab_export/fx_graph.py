"""An FX graph (Inductor's post-grad graph, before lowering) as one
connected schedgraph/1 graph, for decisions schedlab takes before Inductor
lowers and fuses it: which collectives to bucket (fx_bucketing.py).

Standard library only (tests/exporter checks it without torch): the torch
side reads each FX node into fx_pricing's record (fx_estimator.record_of),
with the names of the nodes it reads (`input_names`), and each placeholder
into an input record; this module connects them.

What each node becomes (the graph is coarser than the scheduler's: one
node per ATen operator, nothing fused, so pointwise work is priced per
operator and launches are overcounted; the decisions compare orders of one
graph, where that bias is shared):
- collectives and operators priced by flops: fx_pricing's translation
  (the same collective and extern nodes the FX estimator prices);
- a collective's wait (`wait_tensor`): a `wait` node;
- views, tuple items and other operators that move no data (VIEW_OPS): a
  `nop` node whose output has no storage (layout `none`);
- anything else: a `pointwise` node reading its inputs' bytes and writing
  its outputs' (a reduction's smaller output makes it a `reduction`).
"""

from __future__ import annotations

from typing import Iterable

from . import fx_pricing, pricing

# Operators that only re-describe their input's storage.
VIEW_OPS = frozenset({
    "view", "_unsafe_view", "reshape", "permute", "t", "transpose", "expand", "squeeze", "unsqueeze", "slice",
    "select", "split", "split_with_sizes", "unbind", "getitem", "alias", "as_strided", "detach", "view_as",
    "unflatten", "flatten", "narrow", "chunk", "_reshape_alias", "numpy_T", "lift_fresh",
})

# A placeholder as this module reads it: {"name", "outputs": [tensor, ...]}
# (fx_pricing's tensor dicts); an FX node: fx_pricing's FxRecord plus
# "input_names", the names of the nodes and placeholders it reads, in order.


def _storage_free(target: str) -> bool:
    if "getitem" in target:
        return True
    return pricing.operator_name(target) in VIEW_OPS


def _buffer(name: str, tensor: dict, storage_of: str | None) -> dict:
    """A node's output (fx_pricing's buffer): its own storage (storage_of
    None), or none, standing for the storage of `storage_of` (a view, a
    wait's completed tensor): its readers then keep that buffer alive, as
    the format's mutations do."""
    out = fx_pricing._buffer(name, tensor)
    if storage_of is not None:
        out.update(bytes=0, layout="none", mutation_of=storage_of)
    return out


def _kind(record: dict, target: str) -> tuple[dict, bool]:
    """(the node without buffers, whether its outputs have storage of their own)."""
    fx_name = str(record.get("name", ""))
    translated, _ = fx_pricing._translate(record)
    if translated is not None:
        return {k: v for k, v in translated.items() if k not in ("_inputs", "reads", "writes", "outputs")}, True
    if "wait_tensor" in target:  # the collective's buffer, completed
        return {"name": fx_name, "kind": "wait", "kernel": "torch.ops." + target}, False
    if _storage_free(target):
        return {"name": fx_name, "kind": "nop", "kernel": "torch.ops." + target}, False
    outs, ins = fx_pricing._buffers(record, "outputs"), fx_pricing._buffers(record, "inputs")
    reduces = bool(outs and ins) and sum(t["bytes"] for t in outs) < max(t["bytes"] for t in ins) // 2
    return {"name": fx_name, "kind": "reduction" if reduces else "pointwise", "kernel": "torch.ops." + target}, True


def connected_schedgraph(placeholders: Iterable[dict], records: Iterable[dict], output_names: Iterable[str] = (),
                         world_size: int = 1, name: str = "fx") -> dict:
    """One schedgraph/1 graph of an FX graph: placeholders as inputs, every
    call_function record as a node in graph order, each reading the outputs
    of the nodes named in its input_names; the graph's outputs are those of
    `output_names`. A name that is neither an earlier node nor a placeholder
    raises ValueError naming it."""
    inputs: list[dict] = []
    produced: dict[str, list[str]] = {}  # FX name -> the buffers (or the input) it stands for
    sizes: dict[str, int] = {}           # buffer or input -> the bytes a reader reads of it
    storage: dict[str, str] = {}         # buffer -> the input or buffer whose storage it is (views of views: the first)

    def buffers_of(source: str, reader: str) -> list[str]:
        if source not in produced:
            raise ValueError(f"FX node {reader!r} reads {source!r}, which is no earlier node nor placeholder")
        return produced[source]

    for p in placeholders:
        total = sum(t["bytes"] for t in fx_pricing._buffers(p, "outputs"))
        inputs.append({"name": str(p["name"]), "bytes": total, "freeable": False})
        produced[str(p["name"])] = [str(p["name"])]
        sizes[str(p["name"])] = total
    nodes: list[dict] = []
    for record in records:
        fx_name, target = str(record.get("name", "")), str(record.get("target", ""))
        read_names: list[str] = []
        for source in record.get("input_names") or []:
            read_names += [b for b in buffers_of(source, fx_name) if b not in read_names]
        node, own_storage = _kind(record, target)
        storage_of = None if own_storage or not read_names else storage.get(read_names[0], read_names[0])
        tensors = fx_pricing._buffers(record, "outputs")
        outputs = [_buffer(f"{fx_name}.out{i}", t, storage_of) for i, t in enumerate(tensors)]
        if not outputs:  # a node that returns nothing still orders its readers
            outputs = [{"name": f"{fx_name}.out", "bytes": 0, "layout": "none"}]
        for b in outputs:
            sizes[b["name"]] = 0
            if b.get("mutation_of"):
                storage[b["name"]] = b["mutation_of"]
        for b, t in zip(outputs, tensors):
            sizes[b["name"]] = int(t["bytes"])
        node["outputs"] = outputs
        node["reads"] = [{"name": b, "dep": "star", "bytes": sizes[b]} for b in read_names]
        nodes.append(node)
        produced[fx_name] = [b["name"] for b in outputs]
    outputs: list[str] = []
    for source in output_names:
        outputs += [b for b in buffers_of(source, "output") if b not in outputs]
    return {"format": "schedgraph/1", "name": name, "source": "schedlab_export.fx_graph",
            "world_size": max(1, int(world_size)), "inputs": inputs, "outputs": outputs, "nodes": nodes}
