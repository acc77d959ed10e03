"""Inductor's own decisions on a post-fusion node list, made by calling
Inductor's functions (never reimplementing them), recorded as node names.

Memory: the orders of topological_sort_lpmf / _bfs / _dfs on exactly the input
reorder_for_peak_memory gets. Comms: each pass of comms.py run alone on a copy
of the memory-reordered order, and the configured pipeline. Peaks are not
Inductor's: memory_estimate recomputes them under the documented semantics.
"""

from __future__ import annotations

from torch._inductor import comms, config, memory
from torch._inductor.utils import contains_collective

# comms.py passes recorded one by one, in the expected files' key order.
COMM_PASSES = (
    "sink_waits",
    "raise_comms",
    "reorder_compute_for_overlap",
    "reorder_communication_preserving_peak_memory",
    "sink_waits_iterative",
)


def names(snodes) -> list[str]:
    return [s.get_name() for s in snodes]


def memory_method_orders(nodes, name_to_buf, name_to_fused_node, graph_inputs, graph_outputs) -> dict:
    """Node-name orders of baseline and of each of Inductor's memory methods."""
    _, name_to_freeable_input_buf = memory.prepare_planning_info(
        nodes, name_to_buf, name_to_fused_node, graph_inputs, graph_outputs
    )
    return {
        "baseline": names(nodes),
        "lpmf": names(
            memory.topological_sort_lpmf(nodes, name_to_freeable_input_buf, name_to_buf, graph_outputs)
        ),
        "bfs": names(memory.topological_sort_bfs(nodes)),
        "dfs": names(memory.topological_sort_dfs(nodes)),
    }


def has_collectives(nodes) -> bool:
    return any(contains_collective(n) for n in nodes)


def _pass_name(p) -> str:
    return p if isinstance(p, str) else getattr(p, "__name__", repr(p))


def comm_orders(memory_order) -> tuple[dict, dict]:
    """Each comm pass's output on `memory_order` (the memory-reordered nodes),
    and the configured pipeline's. Returns (comm section, errors by pass)."""
    section: dict = {"input_order": names(memory_order)}
    errors: dict = {}
    for pass_name in COMM_PASSES:
        try:
            section[pass_name] = names(getattr(comms, pass_name)(list(memory_order)))
        except Exception as e:  # noqa: BLE001 - recorded, the compile goes on
            errors[pass_name] = f"{type(e).__name__}: {e}"
    section["configured_pipeline"] = [_pass_name(p) for p in config.reorder_for_compute_comm_overlap_passes]
    section["configured_pipeline_enabled"] = bool(config.reorder_for_compute_comm_overlap)
    try:
        section["configured_pipeline_output"] = names(
            comms.reorder_compute_and_comm_for_overlap(list(memory_order))
        )
    except Exception as e:  # noqa: BLE001
        errors["configured_pipeline"] = f"{type(e).__name__}: {e}"
    return section, errors


def fusion_groups(post_nodes) -> list[list[str]]:
    return [[m.get_name() for m in s.get_nodes()] for s in post_nodes]
