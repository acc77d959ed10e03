"""capture(): export every graph Inductor schedules while the block runs.

Hooks on Inductor module attributes that the Scheduler looks up at call time
(so patching them reaches it) and on two Scheduler methods, in the order
Scheduler._init reaches them:

* debug.log_ir_pre_fusion(nodes): once per graph after dependency analysis
  and dead-node elimination, before fusion -> `<case>.pre.json`.
* Scheduler.fuse_nodes(nodes): what fusion starts from, i.e. the pre-fusion
  nodes after Inductor grouped foreach operations and re-sorted them
  -> `fusion_input` in the expected file.
* memory.reorder_for_peak_memory(nodes, ...): the post-fusion nodes (after
  fusion and loop merging), before any reordering. Records the post-fusion
  graph, Inductor's memory methods' orders on it, the order Inductor returns,
  and (when the graph has collectives) each comm pass's order
  -> `<case>.post.json`, `<case>.expected.json`.
* Scheduler.compute_last_usage(): the scheduler's final order, after every
  reordering pass -> `final_order` in the expected file.

Caches are disabled inside the block (a cached graph is never scheduled, so
it could not be exported), and Dynamo is reset on entry so that functions
compiled before the block compile again inside it.
"""

from __future__ import annotations

import contextlib
import json
import sys
import traceback
from dataclasses import dataclass, field
from pathlib import Path

from . import memory_estimate
from .compat import check_torch

_ACTIVE: "CaptureSession | None" = None
_KIND_TAGS = {"forward": "fwd", "backward": "bwd", "inference": "inf"}


@dataclass
class ExportedGraph:
    case: str
    kind: str  # "forward", "backward" or "inference"
    pre_order: list[str] = field(default_factory=list)
    fusion_input: list[list[str]] | None = None
    expected: dict | None = None
    files: list[Path] = field(default_factory=list)
    has_post: bool = False


@dataclass
class CaptureSession:
    out_dir: Path
    prefix: str
    strict: bool
    torch_version: str
    graphs: list[ExportedGraph] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    # --- writing -------------------------------------------------------------
    def _write(self, graph: ExportedGraph, suffix: str, obj: dict, compact: bool) -> None:
        path = self.out_dir / f"{graph.case}.{suffix}.json"
        text = json.dumps(obj, separators=(",", ":")) if compact else json.dumps(obj, indent=1)
        tmp = path.with_suffix(".json.tmp")
        tmp.write_text(text + "\n")
        tmp.replace(path)
        if path not in graph.files:
            graph.files.append(path)

    def _guard(self, what: str, fn):
        """Runs exporter work; a failure never breaks the user's compile unless strict."""
        try:
            return fn()
        except Exception:  # noqa: BLE001 - reported in the summary
            message = f"{what}:\n{traceback.format_exc()}"
            self.errors.append(message)
            print(f"schedlab_export: error in {message}", file=sys.stderr)
            if self.strict:
                raise
            return None

    @property
    def source(self) -> str:
        return f"torch {self.torch_version} inductor"

    # --- hooks ---------------------------------------------------------------
    def on_pre_fusion(self, nodes) -> None:
        from torch._inductor.virtualized import V

        from .snapshot import graph_dict

        lowering = V.graph
        kind = "backward" if lowering.is_backward else ("inference" if lowering.is_inference else "forward")
        case = f"{self.prefix}_{len(self.graphs)}_{_KIND_TAGS[kind]}"
        graph = ExportedGraph(case=case, kind=kind)
        self.graphs.append(graph)
        lowering.scheduler._schedlab_export_graph = graph
        graph.pre_order = [n.get_name() for n in nodes]
        self._write(graph, "pre", graph_dict(f"{case}.pre", self.source, list(nodes), fused=False), True)

    def on_fusion_input(self, scheduler, nodes) -> None:
        graph = getattr(scheduler, "_schedlab_export_graph", None)
        if graph is not None and graph.fusion_input is None:
            graph.fusion_input = [[m.get_name() for m in n.get_nodes()] for n in nodes]

    def on_final_order(self, scheduler) -> None:
        graph = getattr(scheduler, "_schedlab_export_graph", None)
        if graph is not None and graph.expected is not None:
            graph.expected["final_order"] = [n.get_name() for n in scheduler.nodes]
            self._write(graph, "expected", graph.expected, False)

    def before_memory_planning(self, nodes, name_to_buf, name_to_fused_node, graph_inputs, graph_outputs):
        from torch._inductor.virtualized import V

        from . import decisions
        from .snapshot import graph_dict, operations

        graph = getattr(V.graph.scheduler, "_schedlab_export_graph", None)
        if graph is None:
            return None  # the scheduler started before the capture did
        post = graph_dict(f"{graph.case}.post", self.source, list(nodes), fused=True)
        post["operations"] = operations(graph.pre_order, list(nodes))
        orders = decisions.memory_method_orders(
            nodes, name_to_buf, name_to_fused_node, graph_inputs, graph_outputs
        )
        return graph, post, orders, decisions.fusion_groups(nodes)

    def after_memory_planning(self, state, result) -> None:
        import torch

        from . import decisions

        graph, post, orders, groups = state
        memory = memory_estimate.memory_section(post, orders)
        returned = decisions.names(result)
        memory["inductor_pick"] = next(
            (m for m in memory_estimate.METHOD_ORDER if orders.get(m) == returned), None
        )
        expected = {
            "format": "schedexpected/1",
            "case": graph.case,
            "source": self.source,
            "graph_kind": graph.kind,
            "device": torch.cuda.get_device_name() if torch.cuda.is_available() else "cpu",
            "fusion_input": graph.fusion_input,
            "fusion_groups": groups,
            "memory": memory,
        }
        if decisions.has_collectives(result):
            comm, errors = decisions.comm_orders(result)
            expected["comm"] = comm
            if errors:
                expected["comm_errors"] = errors
        self._write(graph, "post", post, True)
        self._write(graph, "expected", expected, False)
        graph.expected = expected
        graph.has_post = True

    def summary(self) -> str:
        lines = [f"schedlab_export: {len(self.graphs)} graph(s) -> {self.out_dir}"]
        for g in self.graphs:
            note = "" if g.has_post else "  (no post-fusion export: memory planning did not run)"
            lines.append(f"  {g.case} ({g.kind}): {', '.join(p.name for p in g.files)}{note}")
        if self.errors:
            lines.append(f"  {len(self.errors)} error(s); see above")
        return "\n".join(lines)


def _patch(module, name: str, replacement, restore: list) -> None:
    restore.append((module, name, getattr(module, name)))
    setattr(module, name, replacement)


@contextlib.contextmanager
def capture(out_dir, prefix: str = "graph", strict: bool = False, reset_dynamo: bool = True):
    """Export every graph Inductor compiles inside the block into `out_dir`:
    `<prefix>_<k>_<fwd|bwd|inf>.{pre,post,expected}.json`. Yields the session
    (its `graphs` and `errors`). With strict=True an exporter failure raises
    instead of being reported and skipped."""
    global _ACTIVE
    version = check_torch()
    import torch
    import torch._dynamo
    from torch._inductor import config as inductor_config
    from torch._inductor import debug as inductor_debug
    from torch._inductor import memory as inductor_memory
    from torch._inductor.scheduler import Scheduler

    if _ACTIVE is not None:
        raise RuntimeError("schedlab_export.capture() blocks do not nest")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    session = CaptureSession(out_dir=out, prefix=prefix, strict=strict, torch_version=version)
    if not inductor_config.reorder_for_peak_memory:
        print(
            "schedlab_export: torch._inductor.config.reorder_for_peak_memory is off; "
            "only pre-fusion graphs can be exported",
            file=sys.stderr,
        )

    original_pre_fusion = inductor_debug.log_ir_pre_fusion
    original_reorder = inductor_memory.reorder_for_peak_memory
    original_fuse_nodes = Scheduler.fuse_nodes
    original_compute_last_usage = Scheduler.compute_last_usage

    def log_ir_pre_fusion(nodes, *args, **kwargs):
        original_pre_fusion(nodes, *args, **kwargs)
        session._guard("pre-fusion export", lambda: session.on_pre_fusion(nodes))

    def fuse_nodes(self, nodes, *args, **kwargs):
        session._guard("fusion input", lambda: session.on_fusion_input(self, nodes))
        return original_fuse_nodes(self, nodes, *args, **kwargs)

    def compute_last_usage(self, *args, **kwargs):
        session._guard("final order", lambda: session.on_final_order(self))
        return original_compute_last_usage(self, *args, **kwargs)

    def reorder_for_peak_memory(nodes, name_to_buf, name_to_fused_node, graph_inputs, graph_outputs, *args, **kwargs):
        state = session._guard(
            "post-fusion export",
            lambda: session.before_memory_planning(
                nodes, name_to_buf, name_to_fused_node, graph_inputs, graph_outputs
            ),
        )
        result = original_reorder(nodes, name_to_buf, name_to_fused_node, graph_inputs, graph_outputs, *args, **kwargs)
        if state is not None:
            session._guard("decisions export", lambda: session.after_memory_planning(state, result))
        return result

    restore: list = []
    with contextlib.ExitStack() as stack:
        stack.enter_context(inductor_config.patch(fx_graph_cache=False, force_disable_caches=True))
        if reset_dynamo:
            torch._dynamo.reset()
        try:
            _patch(inductor_debug, "log_ir_pre_fusion", log_ir_pre_fusion, restore)
            _patch(inductor_memory, "reorder_for_peak_memory", reorder_for_peak_memory, restore)
            _patch(Scheduler, "fuse_nodes", fuse_nodes, restore)
            _patch(Scheduler, "compute_last_usage", compute_last_usage, restore)
            _ACTIVE = session
            yield session
        finally:
            _ACTIVE = None
            for module, name, value in reversed(restore):
                setattr(module, name, value)
    print(session.summary(), file=sys.stderr)
