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
from .outputs import process_rank, ranked, write_atomically

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
    device: str = "cuda"
    input_names: list[str] = field(default_factory=list)
    freeable_inputs: set[str] = field(default_factory=set)
    data_dependent: bool = False
    launch_plan: object = None  # measure.LaunchPlan, when measuring
    codegen_node: str | None = None
    codegen_members: list[str] = field(default_factory=list)
    measured: bool = False
    # Measuring: the post nodes' FX origins that add through an index, and
    # the FX module that holds them (scatter_index.observe runs it).
    scatter_origins: dict = field(default_factory=dict)
    fx_module: object = None


@dataclass
class CaptureSession:
    out_dir: Path
    prefix: str
    strict: bool
    torch_version: str
    graphs: list[ExportedGraph] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    measure: bool = False
    cudagraphs: bool = False
    samples: int = 50
    pending: list = field(default_factory=list)  # measure.PendingCall, first call of each graph
    notes: list[str] = field(default_factory=list)  # graphs that could not be measured, and why
    kept_for_rounds: list = field(default_factory=list)  # (PendingCall, measured path, WallRounds)
    last_codegen: ExportedGraph | None = None
    rank: int | None = None  # outputs.process_rank(): in every file name when ranks share out_dir

    # --- writing -------------------------------------------------------------
    def _write(self, graph: ExportedGraph, suffix: str, obj: dict, compact: bool) -> None:
        path = self.out_dir / f"{graph.case}.{suffix}.json"
        text = json.dumps(obj, separators=(",", ":")) if compact else json.dumps(obj, indent=1)
        write_atomically(path, text + "\n")
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
        case = ranked(f"{self.prefix}_{len(self.graphs)}_{_KIND_TAGS[kind]}", self.rank)
        graph = ExportedGraph(case=case, kind=kind)
        self.graphs.append(graph)
        lowering.scheduler._schedlab_export_graph = graph
        graph.pre_order = [n.get_name() for n in nodes]
        pre = graph_dict(f"{case}.pre", self.source, list(nodes), fused=False)
        graph.device = pre["device"]
        graph.input_names = [str(k) for k in lowering.graph_inputs]
        graph.freeable_inputs = {i["name"] for i in pre["inputs"] if i["freeable"]}
        graph.data_dependent = _has_hints(pre)
        if self.measure:
            from .measure import LaunchPlan

            graph.launch_plan = LaunchPlan()
        self._write(graph, "pre", pre, True)

    def on_fusion_input(self, scheduler, nodes) -> None:
        graph = getattr(scheduler, "_schedlab_export_graph", None)
        if graph is not None and graph.fusion_input is None:
            graph.fusion_input = [[m.get_name() for m in n.get_nodes()] for n in nodes]

    def on_final_order(self, scheduler) -> None:
        graph = getattr(scheduler, "_schedlab_export_graph", None)
        if graph is not None:
            self.last_codegen = graph
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
        if self.measure and graph.device == "cuda":  # only GPU graphs are measured
            from . import scatter_index

            graph.scatter_origins = scatter_index.scatter_origins(nodes)
            graph.fx_module = getattr(V.graph, "module", None) if graph.scatter_origins else None
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
            "device": torch.cuda.get_device_name() if graph.device == "cuda" else graph.device,
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

    # --- measurement hooks (measure=True) -----------------------------------------
    def on_codegen_node(self, scheduler, snode) -> None:
        from . import measure

        graph = getattr(scheduler, "_schedlab_export_graph", None)
        if graph is not None and graph.launch_plan is not None:
            measure.record_node(graph, snode)

    def on_kernel_call(self, kernel_name) -> None:
        from torch._inductor.virtualized import V

        from . import measure

        graph = getattr(getattr(V.graph, "scheduler", None), "_schedlab_export_graph", None)
        if graph is not None and graph.launch_plan is not None:
            measure.record_launch(graph, kernel_name)

    def on_compiled(self, compiled, lowering) -> None:
        """CompiledFxGraph.__init__: tie the artifact to the exported graph."""
        graph = getattr(getattr(lowering, "scheduler", None), "_schedlab_export_graph", None)
        if graph is None:
            graph = self.last_codegen
        if graph is not None and graph.has_post and graph.device == "cuda":
            compiled._schedlab_export_graph = graph
        self.last_codegen = None

    def on_first_call(self, compiled, inputs) -> None:
        """The compiled graph's first call: keep its inputs for measurement
        (freeable ones copied, since this very call frees them)."""
        import torch

        from .measure import PendingCall, copy_inputs

        graph = compiled._schedlab_export_graph
        compiled._schedlab_export_graph = None
        names = graph.input_names if len(graph.input_names) == len(inputs) else []
        freeable = [bool(names) and names[i] in graph.freeable_inputs for i in range(len(inputs))]
        with torch.no_grad():
            kept = copy_inputs(list(inputs), freeable)
        self.pending.append(
            PendingCall(graph=graph, compiled=compiled, inputs=kept, freeable=freeable,
                        disabled_cudagraphs_reason=getattr(compiled, "disabled_cudagraphs_reason", None))
        )

    def measure_pending(self, keep_for_rounds: bool = False) -> None:
        """Measures every graph called so far, one at a time, in call order.
        With `keep_for_rounds` the measured calls keep their inputs for
        `measure_wall_round` and `finish_wall_rounds`."""
        from . import measure

        pending, self.pending = self.pending, []
        for call in pending:
            try:
                measure._check_inputs_alive(call)
            except measure.NotMeasurable as e:
                self.notes.append(f"{call.graph.case}: not measured: {e}")
                print(f"schedlab_export: {self.notes[-1]}", file=sys.stderr)
                call.inputs = []
                call.graph.fx_module = None
                continue
            path = self._guard(
                f"measuring {call.graph.case}",
                lambda c=call: measure.measure_graph(c, self.out_dir, samples=self.samples,
                                                     cudagraphs=self.cudagraphs),
            )
            call.graph.fx_module = None  # measured or failed: the FX module is not needed again
            if path is not None:
                call.graph.measured = True
                call.graph.files.append(path)
                if keep_for_rounds:
                    self.kept_for_rounds.append((call, path, measure.WallRounds()))
                    continue
            call.inputs = []

    def measure_wall_round(self, samples: int) -> None:
        """One more round of wall samples of every kept graph."""
        from . import measure

        for call, _, rounds in self.kept_for_rounds:
            self._guard(f"wall round of {call.graph.case}",
                        lambda c=call, r=rounds: measure.measure_wall_round(c, r, samples))

    def finish_wall_rounds(self) -> None:
        """Writes the rounds' wall figures into the measured files and
        releases the kept inputs."""
        from . import measure

        for call, path, rounds in self.kept_for_rounds:
            if rounds.rounds:
                self._guard(f"writing the wall rounds of {call.graph.case}",
                            lambda p=path, r=rounds: measure.write_wall_rounds(p, r))
            call.inputs = []
        self.kept_for_rounds = []

    def summary(self) -> str:
        lines = [f"schedlab_export: {len(self.graphs)} graph(s) -> {self.out_dir}"]
        for g in self.graphs:
            note = "" if g.has_post else "  (no post-fusion export: memory planning did not run)"
            lines.append(f"  {g.case} ({g.kind}): {', '.join(p.name for p in g.files)}{note}")
        if self.errors:
            lines.append(f"  {len(self.errors)} error(s); see above")
        return "\n".join(lines)


def _has_hints(graph: dict) -> bool:
    return any(
        item.get("size_hint")
        for n in graph["nodes"]
        for item in n.get("outputs", []) + n.get("reads", []) + n.get("writes", [])
    )


def _patch(module, name: str, replacement, restore: list) -> None:
    restore.append((module, name, getattr(module, name)))
    setattr(module, name, replacement)


@contextlib.contextmanager
def capture(out_dir, prefix: str = "graph", strict: bool = False, reset_dynamo: bool = True,
            measure: bool = False, cudagraphs: bool = False, measure_on_exit: bool = True,
            samples: int = 50):
    """Export every graph Inductor compiles inside the block into `out_dir`:
    `<prefix>_<k>_<fwd|bwd|inf>.{pre,post,expected}.json`, with `.rank<r>`
    after the graph's kind in a job of several ranks (outputs.ranked), so
    ranks sharing `out_dir` never write one file. Yields the session
    (its `graphs` and `errors`). With strict=True an exporter failure raises
    instead of being reported and skipped.

    measure=True also measures each GPU graph's compiled call (its first
    call's inputs are kept) -> `<case>.measured.json`, one graph at a time
    when the block ends (measure_on_exit=False: when the caller calls
    session.measure_pending()); cudagraphs=True adds the CUDA-graph replay
    time; `samples` timed calls per figure."""
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
    session = CaptureSession(out_dir=out, prefix=prefix, strict=strict, torch_version=version,
                             measure=measure, cudagraphs=cudagraphs, samples=max(20, int(samples)),
                             rank=process_rank())
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
            if measure:
                _patch_measurement_hooks(session, restore)
            _ACTIVE = session
            yield session
        finally:
            _ACTIVE = None
            for module, name, value in reversed(restore):
                setattr(module, name, value)
    if measure and measure_on_exit:
        session.measure_pending()
    print(session.summary(), file=sys.stderr)


def _patch_measurement_hooks(session: CaptureSession, restore: list) -> None:
    """Codegen: which node emits which kernel call; compile: which artifact is
    which graph; run: the first call's inputs (module docstring of measure.py)."""
    from .compat import UnsupportedTorch, missing_measure_internals

    missing = missing_measure_internals()
    if missing:
        raise UnsupportedTorch("measuring needs Inductor internals this PyTorch lacks: " + "; ".join(missing))
    from torch._inductor.codegen.wrapper import PythonWrapperCodegen
    from torch._inductor.output_code import CompiledFxGraph
    from torch._inductor.scheduler import Scheduler

    original_enter_context = Scheduler.enter_context
    original_kernel_call = PythonWrapperCodegen.generate_kernel_call
    original_init = CompiledFxGraph.__init__
    original_call = CompiledFxGraph.__call__

    def enter_context(self, node, *args, **kwargs):
        session._guard("codegen node", lambda: session.on_codegen_node(self, node))
        return original_enter_context(self, node, *args, **kwargs)

    def generate_kernel_call(self, kernel_name, *args, **kwargs):
        session._guard("kernel call", lambda: session.on_kernel_call(kernel_name))
        return original_kernel_call(self, kernel_name, *args, **kwargs)

    def init(self, *args, **kwargs):
        original_init(self, *args, **kwargs)
        lowering = kwargs.get("graph", args[1] if len(args) > 1 else None)
        session._guard("compiled graph", lambda: session.on_compiled(self, lowering))

    def call(self, inputs, *args, **kwargs):
        if getattr(self, "_schedlab_export_graph", None) is not None:
            session._guard("first call", lambda: session.on_first_call(self, inputs))
        return original_call(self, inputs, *args, **kwargs)

    _patch(Scheduler, "enter_context", enter_context, restore)
    _patch(PythonWrapperCodegen, "generate_kernel_call", generate_kernel_call, restore)
    _patch(CompiledFxGraph, "__init__", init, restore)
    _patch(CompiledFxGraph, "__call__", call, restore)
