"""Peak memory of an order of a schedgraph/1 graph, as docs/schedgraph-1.md
("Memory semantics") defines it. Standard library only: it runs where torch
does not (CI, tests) and is what the exporter records as each order's peak.

It follows Inductor's memory.py (compute_memory_timeline, estimate_peak_memory)
except for one documented fix: graph outputs stay live to the last step,
where PyTorch 2.11 gives them end step -1 and so subtracts them at step 0.
"""

from __future__ import annotations

from dataclasses import dataclass


class GraphError(ValueError):
    """A graph or an order that the estimator cannot interpret."""


@dataclass
class MemoryCurve:
    peak: int
    curve: list[int]  # memory after each step's allocations; len(order) + 1 entries


def _freeable_input(inp: dict) -> bool:
    if "freeable" in inp:
        return bool(inp["freeable"])
    return not inp["name"].startswith(
        ("primals_", "arg", "fwd_rng_state", "bwd_rng_state", "tangents")
    )


def _buffer_sizes(graph: dict) -> dict[str, tuple[int, int]]:
    """(size_alloc, size_free) of every node output, per the format's table."""
    producer_outputs = {n["name"]: n.get("outputs", []) for n in graph["nodes"]}
    readers: dict[str, set[str]] = {}
    for n in graph["nodes"]:
        for d in n.get("reads", []):
            readers.setdefault(d["name"], set()).add(n["name"])
    sizes: dict[str, tuple[int, int]] = {}
    for n in graph["nodes"]:
        for b in n.get("outputs", []):
            layout = b.get("layout", "fixed")
            size = int(b.get("bytes", 0))
            if b.get("mutation_of") is not None or layout == "none":
                sizes[b["name"]] = (0, 0)
            elif layout == "multi_output":
                items = sum(
                    int(item.get("bytes", 0))
                    for reader in sorted(readers.get(b["name"], ()))
                    for item in producer_outputs[reader]
                    if item.get("layout") == "multi_output_item"
                )
                sizes[b["name"]] = (items, 0)
            elif layout == "multi_output_item":
                sizes[b["name"]] = (0, size)
            elif layout == "fixed":
                sizes[b["name"]] = (size, size)
            else:
                raise GraphError(f'buffer "{b["name"]}": unknown layout "{layout}"')
    return sizes


def estimate_peak_memory(graph: dict, order: list[str]) -> MemoryCurve:
    """Peak and per-step curve of running `graph`'s nodes in `order` (node names)."""
    nodes = {n["name"]: n for n in graph["nodes"]}
    if sorted(order) != sorted(nodes):
        raise GraphError("order is not a permutation of the graph's nodes")
    step_of = {name: step for step, name in enumerate(order)}
    last = len(order) - 1
    outputs = set(graph.get("outputs", []))
    sizes = _buffer_sizes(graph)
    producer = {b["name"]: n["name"] for n in graph["nodes"] for b in n.get("outputs", [])}
    mutation_of = {
        b["name"]: b["mutation_of"]
        for n in graph["nodes"]
        for b in n.get("outputs", [])
        if b.get("mutation_of") is not None
    }

    # Lifetime readers: nodes with an unmet, non-fake_weak dependency on a buffer.
    # Inputs are read through any dep except fake_weak; their size is the bytes
    # of the last dep reading them in the baseline (file) order.
    input_names = {i["name"] for i in graph.get("inputs", [])}
    freeable = {i["name"] for i in graph.get("inputs", []) if _freeable_input(i)}
    readers: dict[str, set[str]] = {}
    input_size: dict[str, int] = {}
    input_read_order: list[str] = []
    for n in graph["nodes"]:
        for d in n.get("reads", []):
            name = d["name"]
            if name in freeable:
                if name not in input_size:
                    input_read_order.append(name)
                input_size[name] = int(d.get("bytes", 0))
            elif name in input_names:
                continue
            elif producer.get(name) == n["name"]:
                continue  # a node's read of its own output is no unmet dependency
            if d.get("dep", "memory") != "fake_weak":
                readers.setdefault(name, set()).add(n["name"])
    # A mutation's readers keep the mutated buffer alive (latest mutation first,
    # so chains of mutations reach their root).
    for mutated, real in reversed(list(mutation_of.items())):
        if real in producer:
            readers.setdefault(real, set()).update(readers.get(mutated, ()))

    def end_step(name: str) -> int:
        steps = [step_of[r] for r in readers.get(name, ())]
        return max(steps) if steps else -1

    delta = [0] * (len(order) + 1)
    for name in input_read_order:
        size = input_size[name]
        end = last if name in outputs else end_step(name)
        delta[0] += size
        delta[end + 1] -= size
    for step, node_name in enumerate(order):
        for b in nodes[node_name].get("outputs", []):
            alloc, free = sizes[b["name"]]
            if b["name"] in outputs:
                end = last
            else:
                end = end_step(b["name"])
                if end == -1:
                    end = step
            delta[step] += alloc
            delta[end + 1] -= free

    curve, current, peak = [], 0, 0
    for change in delta:
        current += change
        curve.append(current)
        peak = max(peak, current)
    return MemoryCurve(peak=peak, curve=curve)


METHOD_ORDER = ("baseline", "lpmf", "bfs", "dfs")


def memory_section(graph: dict, orders: dict[str, list[str]]) -> dict:
    """The `memory` section of an expected file: each method's order and peak,
    the method with the lowest peak (first in METHOD_ORDER on ties) and the
    baseline curve. `orders` maps method names to node-name orders."""
    section: dict = {}
    best = None
    for method in METHOD_ORDER:
        if method not in orders:
            continue
        result = estimate_peak_memory(graph, orders[method])
        section[method] = {"peak": result.peak, "order": list(orders[method])}
        if best is None or result.peak < section[best]["peak"]:
            best = method
    section["chosen"] = best
    section["baseline_curve"] = estimate_peak_memory(graph, orders["baseline"]).curve
    return section
