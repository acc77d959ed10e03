"""schedlab's pricing for FX nodes: Inductor's FX overlap scheduler asks a
user runtime estimator for one node at a time
(`aten_distributed_optimizations.custom_runtime_estimation`, a callable
`(node, override_size) -> ms | None`); this module answers it with the
core's own numbers (core/cost's price_graph through the bindings,
`schedlab.price`), never a second cost model.

Standard library only: tests/exporter checks the translation and the
fallbacks without torch. fx_estimator.py reads an fx.Node into a plain
record (`FxRecord` below) and hands it here.

How a node is priced:
- collectives (`_c10d_functional` all_gather / reduce_scatter / all_reduce /
  all_to_all / broadcast): a `collective` node, payload = its outputs' bytes
  (the exporter's rule, snapshot._collective), group size from the node;
  priced by the profile's measured collective curves where it has them,
  else its collective model (what a plan simulates with). `override_size`
  (Inductor's size of the same collective at another size: 0 for its
  latency, or a bucket's) scales the payload by override_size / the size
  Inductor measures the node by.
- compute (operators priced by flops: matmuls, attention, convolutions;
  pricing.op_class): an `extern` node with the exporter's flops, attention
  and convolution records, priced by the profile's calibrated laws.
- anything else: None, and Inductor keeps its own estimate (fx_estimator.py
  says which one).

A graph is priced once, on the first node asked of it: one schedgraph/1
graph of every node priceable, one call into the core; later questions are
lookups. A node the first pricing did not see (the scheduler makes buckets
and fusion regions as it goes) is priced alone and cached.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable

from . import pricing

COLLECTIVE_WORDS = ("all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast")
COMPUTE_CLASSES = ("gemm", "attention", "convolution")

# An FX node as this module reads it (fx_estimator.record_of builds it):
#   name           the node's name
#   target         str of its target: "aten.mm.default", "_c10d_functional.all_reduce.default"
#   args           its arguments by schema name, tensors as shapes (snapshot._bind)
#   inputs         its tensor inputs: [{"dtype", "shape", "stride", "bytes"}]
#   outputs        the tensors it returns (a tuple's items in order)
#   group_size     collectives: ranks in its group (None: not known)
#   inductor_size  collectives: the bytes Inductor sizes it by
#                  (comm_analysis.estimate_fx_collective_size), which
#                  override_size replaces
FxRecord = dict


def collective_word(target: str) -> str | None:
    """The collective an FX target runs, or None (waits and everything else)."""
    if "c10d" not in target or "wait" in target:
        return None
    return next((w for w in COLLECTIVE_WORDS if w in target), None)


def compute_op(target: str) -> str | None:
    """The operator of a target priced by flops, or None."""
    op = pricing.operator_name(target)
    return op if pricing.op_class(op) in COMPUTE_CLASSES else None


def why_unpriced(record: FxRecord) -> str | None:
    """None when `record` translates to a schedlab node, else why not."""
    return _translate(record)[1]


def _buffers(record: FxRecord, side: str) -> list[dict]:
    return [t for t in record.get(side) or [] if isinstance(t, dict) and isinstance(t.get("bytes"), int)]


def _buffer(name: str, tensor: dict) -> dict:
    out = {"name": name, "bytes": int(tensor["bytes"])}
    if tensor.get("dtype"):
        out["dtype"] = tensor["dtype"]
    if isinstance(tensor.get("shape"), list):
        out["shape"] = list(tensor["shape"])
        if isinstance(tensor.get("stride"), list) and len(tensor["stride"]) == len(tensor["shape"]):
            out["stride"] = list(tensor["stride"])
    return out


def _own_payload(inputs: list[dict], outputs: list[dict]) -> int:
    """A collective's payload: its outputs' bytes, else its inputs' (the
    exporter's rule, snapshot._collective)."""
    return sum(t["bytes"] for t in outputs) or sum(t["bytes"] for t in inputs)


def _translate(record: FxRecord, payload: int | None = None) -> tuple[dict | None, str | None]:
    """(the schedgraph node of `record` with its input buffers under
    "_inputs", None) or (None, why it has none). `payload` overrides a
    collective's bytes."""
    name, target = str(record.get("name", "")), str(record.get("target", ""))
    inputs, outputs = _buffers(record, "inputs"), _buffers(record, "outputs")
    node: dict[str, Any] = {"name": name, "kernel": "torch.ops." + target}
    if collective_word(target) is not None:
        group = record.get("group_size")
        if not isinstance(group, int) or group < 1:
            return None, f"{target}: group size not known"
        own = _own_payload(inputs, outputs)
        if payload is not None and payload != own:
            # The same collective at another size: its buffers scaled with it
            # (the core reads a zero payload off the buffers).
            scale = payload / own if own else 0.0
            inputs, outputs = ([{"dtype": t.get("dtype"), "bytes": round(t["bytes"] * scale)} for t in side]
                               for side in (inputs, outputs))
        else:
            payload = own
        node.update(kind="collective", collective={"op": target, "group_size": group, "bytes": int(payload)})
    else:
        op = compute_op(target)
        if op is None:
            return None, f"{target}: not a collective nor an operator priced by flops"
        args = record.get("args") or {}
        out_shape = outputs[0].get("shape") if outputs else None
        flops = pricing.op_flops(op, args, out_shape)
        if not flops:
            return None, f"{target}: flops not known from its arguments"
        node.update(kind="extern", flops=int(flops))
        attention = pricing.attention_record(op, args)
        if attention is not None:
            node["attention"] = attention
        if pricing.op_class(op) == "convolution":
            memory_format = None
            x, w = args.get("input"), args.get("weight")
            layouts = [(t.get("shape"), t.get("stride")) for t in inputs]
            by_shape = {tuple(s): st for s, st in layouts if isinstance(s, list) and isinstance(st, list)}
            if isinstance(x, list) and isinstance(w, list) and tuple(x) in by_shape and tuple(w) in by_shape:
                memory_format = pricing.convolution_memory_format(x, by_shape[tuple(x)], w, by_shape[tuple(w)])
            convolution = pricing.convolution_record(op, args, out_shape, memory_format)
            if convolution is not None:
                node["convolution"] = convolution
    ins = [_buffer(f"{name}.in{i}", t) for i, t in enumerate(inputs)]
    outs = [_buffer(f"{name}.out{i}", t) for i, t in enumerate(outputs)]
    node["outputs"] = outs
    node["reads"] = [{"name": b["name"], "dep": "star", "bytes": b["bytes"]} for b in ins]
    node["writes"] = [{"name": b["name"], "dep": "star", "bytes": b["bytes"]} for b in outs]
    node["_inputs"] = [{**b, "freeable": False} for b in ins]
    return node, None


def schedgraph_of(records: Iterable[FxRecord], world_size: int = 1, name: str = "fx") -> tuple[dict, dict[str, str]]:
    """One schedgraph/1 graph of every record that translates, each node
    standing alone (its tensor inputs are graph inputs: a node's price
    depends on the node alone), and {name: why} of those that do not."""
    nodes, inputs, unpriced = [], [], {}
    for record in records:
        node, why = _translate(record)
        if node is None:
            unpriced[str(record.get("name", ""))] = why
            continue
        inputs.extend(node.pop("_inputs"))
        nodes.append(node)
    graph = {"format": "schedgraph/1", "name": name, "source": "schedlab_export.fx_pricing",
             "world_size": max(1, int(world_size)), "inputs": inputs, "outputs": [], "nodes": nodes}
    return graph, unpriced


def override_payload(record: FxRecord, override_size: int) -> int | None:
    """A collective's payload at Inductor's `override_size`: its own payload
    scaled by override_size / the size Inductor measures it by (so either
    convention of that size, inputs or inputs and outputs, maps right);
    None where that size is not known."""
    own = _own_payload(_buffers(record, "inputs"), _buffers(record, "outputs"))
    size = record.get("inductor_size")
    if override_size == 0:
        return 0
    if not isinstance(size, int) or size <= 0:
        return None
    return round(own * override_size / size)


class Estimator:
    """Inductor's `custom_runtime_estimation`: called as (node, override_size)
    (2.11; older releases pass the node alone), returns milliseconds or None.

    record_of(node) -> FxRecord; graph_of(node) -> the graph it belongs to
    (what the cache is keyed by); records_of(graph) -> (the records of all
    its nodes, its world size), read once per graph; price(schedgraph) ->
    schedlab.price's dict; fallback(node) -> what to return for a node
    schedlab does not price (None: Inductor's own estimate). Counts per
    graph in `stats` (priced, unpriced, asked), and `log` gets one line per
    graph when it is first priced."""

    def __init__(self, record_of: Callable[[Any], FxRecord], graph_of: Callable[[Any], Any],
                 records_of: Callable[[Any], tuple[list[FxRecord], int]],
                 price: Callable[[dict], dict], fallback: Callable[[Any], float | None] = lambda node: None,
                 log: Callable[[str], None] = lambda line: None):
        self._record_of, self._graph_of, self._records_of, self._price = record_of, graph_of, records_of, price
        self._fallback, self._log = fallback, log
        self._graphs: dict[Any, dict] = {}  # graph key -> {"us": {name: us}, "stats": {...}}
        self._sized: dict[tuple, float] = {}  # (target, group, payload) -> us
        self.graph_stats: list[dict] = []

    def _priced(self, graph: dict) -> dict[str, float]:
        if not graph["nodes"]:
            return {}
        result = self._price(graph)
        return dict(zip(result["nodes"], result["calibrated_us"]))

    def _graph(self, node) -> dict:
        key = self._graph_of(node)
        entry = self._graphs.get(key)
        if entry is None:
            records, world_size = self._records_of(key)
            graph, unpriced = schedgraph_of(records, world_size, name=f"fx graph {len(self._graphs)}")
            us = self._priced(graph)
            kinds = {n["name"]: n["kind"] for n in graph["nodes"]}
            stats = {"graph": len(self._graphs), "nodes": len(records),
                     "priced_collectives": sum(k == "collective" for k in kinds.values()),
                     "priced_compute": sum(k == "extern" for k in kinds.values()), "unpriced": len(unpriced),
                     "asked": 0, "asked_unpriced": 0, "priced_later": 0}
            entry = self._graphs[key] = {"us": us, "unpriced": unpriced, "stats": stats, "world_size": world_size}
            self.graph_stats.append(stats)
            self._log(f"schedlab estimator: graph {stats['graph']}: {len(records)} nodes, schedlab prices "
                      f"{stats['priced_compute']} compute and {stats['priced_collectives']} collectives, "
                      f"{stats['unpriced']} left to Inductor")
        return entry

    def _alone(self, record: FxRecord, world_size: int, payload: int | None = None) -> float | None:
        """A node priced by itself (in a graph of its graph's world size)."""
        node, _ = _translate(record, payload)
        if node is None:
            return None
        key = (world_size, record.get("target"), record.get("group_size"), node.get("collective", {}).get("bytes"),
               node.get("flops"), repr(record.get("inputs")), repr(record.get("outputs")), repr(node.get("attention")),
               repr(node.get("convolution")))
        if key not in self._sized:
            graph, _ = schedgraph_of([], world_size, name="fx node")
            graph["inputs"] = node.pop("_inputs")
            graph["nodes"] = [node]
            self._sized[key] = self._priced(graph)[node["name"]]
        return self._sized[key]

    def __call__(self, node, override_size: int | None = None) -> float | None:
        entry = self._graph(node)
        stats = entry["stats"]
        stats["asked"] += 1
        name = str(getattr(node, "name", ""))
        if override_size is not None:
            record = self._record_of(node)
            if collective_word(str(record.get("target", ""))) is None:
                us = None
            else:
                payload = override_payload(record, int(override_size))
                us = None if payload is None else self._alone(record, entry["world_size"], payload)
        elif name in entry["us"]:
            us = entry["us"][name]
        elif name in entry["unpriced"]:
            us = None
        else:  # a node made after the graph was priced
            us = self._alone(self._record_of(node), entry["world_size"])
            if us is not None:
                entry["us"][name] = us
                stats["priced_later"] += 1
            else:
                entry["unpriced"][name] = "made after the graph was priced; not priceable"
        if us is None:
            stats["asked_unpriced"] += 1
            return self._fallback(node)
        return us / 1000.0
