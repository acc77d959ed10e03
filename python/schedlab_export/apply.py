"""apply(): torch.compile runs every graph in the order schedlab plans for it.

    import schedlab_export
    with schedlab_export.apply(memory_methods=["lpmf", "bfs"], comm_passes=["overlap_schedule"]):
        loss = torch.compile(step)(x)

For each graph Inductor schedules, through Inductor's own hooks:

* `config._post_fusion_custom_pass` records the post-fusion order (before
  Inductor's memory reordering): schedlab plans from that baseline, as
  `schedlab plan --no-fuse` does on an exported `.post.json`.
* one callable in `config.reorder_for_compute_comm_overlap_passes` (with
  `reorder_for_compute_comm_overlap=True`) is the last reordering Inductor
  runs: it exports the graph in memory (snapshot.graph_dict, the exporter's
  code), runs `schedlab plan` on it in a subprocess with a timeout, maps the
  plan's `order` back to the scheduler nodes and returns them in that order.
* Scheduler.codegen is observed (not changed): the order Inductor emits code
  in is compared with schedlab's, node for node.

With a process group of two or more ranks, every rank plans its graph, then
the ranks gather each other's plan_key (a digest of the order, or
"inductor" for a rank that fell back) and go on only when all are one
order; otherwise every rank keeps Inductor's order, with a warning naming
the ranks that differ (`disagreement`). Files in `out_dir` carry the rank
in their names (outputs.ranked), so ranks can share the folder.

When anything fails (schedlab is missing, refuses the graph, times out,
writes a malformed plan or an order that is not a permutation of the nodes;
the export raises; an output cannot be written; the options are unusable),
a warning names the graph and the reason, which names the step that failed
and its real cause, and the pass returns the nodes as it got them:
Inductor's own order. No exception leaves the pass (with `strict`, one
PlanUnavailable carrying the same reason).

The first half of this module (up to `apply`) needs no torch: finding the
binary or the bindings, planning, mapping names and checking orders are
tested in CI (tests/exporter/test_apply.py) with stand-in nodes, through
both planners.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import shutil
import sys
import tempfile
import threading
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

from .cli_run import run_cli
from .outputs import process_rank, ranked, write_atomically

DEFAULT_TIMEOUT_S = 60.0
_REPO_BUILD = Path(__file__).resolve().parents[2] / "build" / "schedlab"


class ScheduleWarning(UserWarning):
    """schedlab's order could not be applied to a graph; Inductor's is kept."""


class PlanUnavailable(RuntimeError):
    """schedlab gave no usable order for a graph (the message says why)."""


class OrderMismatch(RuntimeError):
    """The order Inductor emitted differs from schedlab's."""


# --- torch-free parts ---------------------------------------------------------
def _shipped_binary() -> str | None:
    try:
        import schedlab
    except ImportError:
        return None
    return schedlab.cli_path() if hasattr(schedlab, "cli_path") else None


def find_schedlab(binary: str | os.PathLike | None = None) -> str:
    """The schedlab binary: `binary`, else $SCHEDLAB_BIN, else the repository's
    build/schedlab, else the one the installed package ships, else
    `schedlab` on PATH. Raises PlanUnavailable."""
    candidates = [binary] if binary is not None else [os.environ.get("SCHEDLAB_BIN"), _REPO_BUILD, _shipped_binary()]
    for candidate in candidates:
        if candidate and Path(candidate).is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    if binary is None and (on_path := shutil.which("schedlab")):
        return on_path
    where = str(binary) if binary is not None else f"$SCHEDLAB_BIN, {_REPO_BUILD} or PATH"
    raise PlanUnavailable(f"schedlab binary not found ({where})")


def find_bindings():
    """The `schedlab` package when it has its in-process bindings (the
    installed wheel, or a checkout's build: python/schedlab), else None."""
    try:
        import schedlab
    except ImportError:
        return None
    return schedlab if getattr(schedlab, "bindings_available", lambda: False)() else None


def uses_bindings(in_process: bool | None, binary: str | os.PathLike | None) -> bool:
    """Which planner apply uses: the bindings when `in_process` is True, the
    CLI when False; when None, the bindings if present and no `binary` was
    named, else the CLI."""
    if in_process is not None:
        return in_process
    return binary is None and find_bindings() is not None


def without_runtimes(graph: dict) -> dict:
    """The graph with every node's `runtime_us` dropped, so that schedlab
    times nodes with its cost model: PyTorch 2.11's own estimates for matmuls
    are ~1000x too slow (docs/cost-model.md) and would mislead the comm
    passes."""
    out = dict(graph)
    out["nodes"] = [{k: v for k, v in n.items() if k != "runtime_us"} for n in graph["nodes"]]
    return out


_ITEMSIZE = {"f64": 8, "f32": 4, "i64": 8, "i32": 4, "bf16": 2, "f16": 2, "i16": 2, "i8": 1, "u8": 1, "b8": 1}


def with_export_gaps_filled(graph: dict) -> tuple[dict, dict]:
    """The graph with two gaps of PyTorch 2.11's export filled (apply's
    `fill_export_gaps`, compare.py's `--fill-export-gaps`):
    * `mm` nodes without `flops` (estimate_flops returns None for some, e.g. a
      product of transposed views): 2 x M x N x K, M x N from the output, K
      from the two operands' read bytes (itemsize x K x (M + N)).
    * in-place `all_reduce_` nodes, whose payload is 0 in the file (their only
      outputs are a mutation and an alias): the bytes of the buffer they
      read, as native-cuda's executor moves.
    Returns the graph and how many nodes of each kind it filled."""
    nodes, filled = [], {"matmul_flops": 0, "all_reduce_payload": 0}
    for n in graph["nodes"]:
        out = n["outputs"][0] if n.get("outputs") else {}
        shape, reads = out.get("shape") or [], n.get("reads", [])
        # Only a known M x N (an unbacked size's hint may be 0): K is divided out of M + N.
        if (not n.get("flops") and n.get("kind") == "extern" and (n.get("kernel") or "").endswith(".mm")
                and len(shape) == 2 and all(type(d) is int and d > 0 for d in shape)
                and len(reads) == 2 and out.get("dtype") in _ITEMSIZE):
            m, k_n = shape
            k = sum(r.get("bytes", 0) for r in reads) / (_ITEMSIZE[out["dtype"]] * (m + k_n))
            n = dict(n, flops=int(2 * m * k_n * k))
            filled["matmul_flops"] += 1
        elif n.get("kind") == "collective" and not n["collective"].get("bytes") and "all_reduce_" in n["collective"]["op"]:
            payload = max((r.get("bytes", 0) for r in reads), default=0)
            n = dict(n, collective=dict(n["collective"], bytes=payload))
            filled["all_reduce_payload"] += 1
        nodes.append(n)
    return dict(graph, nodes=nodes), filled


def plan_command(binary: str, graph_path: str, plan_path: str, memory_methods: Sequence[str],
                 comm_passes: Sequence[str], hardware: str | None, comm_knobs: dict | None) -> list[str]:
    cmd = [binary, "plan", graph_path, "-o", plan_path, "--no-fuse", "--format", "json"]
    if memory_methods:
        cmd += ["--memory-methods", ",".join(memory_methods)]
    cmd += ["--comm-passes", ",".join(comm_passes)]
    if hardware:
        cmd += ["--hardware", hardware]
    for name, value in (comm_knobs or {}).items():
        cmd += ["--comm-knob", f"{name}={json.dumps(value)}"]
    return cmd


def timeout_seconds(timeout_s) -> float | None:
    """subprocess's timeout for apply's `timeout_s`: None (no limit) for
    None or inf; PlanUnavailable naming the value for anything that is not a
    number of seconds > 0 (NaN, 0, negative, a string)."""
    if timeout_s is None or (isinstance(timeout_s, (int, float)) and not isinstance(timeout_s, bool) and timeout_s == math.inf):
        return None
    if isinstance(timeout_s, bool) or not isinstance(timeout_s, (int, float)) or not timeout_s > 0 or not math.isfinite(timeout_s):
        raise PlanUnavailable(f"timeout_s={timeout_s!r}: expected a number of seconds > 0 (inf or None for no limit)")
    return float(timeout_s)


def run_plan(graph: dict, *, binary: str, memory_methods: Sequence[str] = (), comm_passes: Sequence[str] = (),
             hardware: str | None = None, comm_knobs: dict | None = None,
             timeout_s: float | None = DEFAULT_TIMEOUT_S) -> dict:
    """Runs `schedlab plan --no-fuse` on `graph` (a schedgraph/1 dict) and
    returns the schedplan/1 dict. Raises PlanUnavailable naming the reason:
    refused (exit 1, schedlab's error line), bad usage (exit 2), timeout,
    an unusable timeout_s, or an unreadable plan."""
    timeout = timeout_seconds(timeout_s)
    with tempfile.TemporaryDirectory(prefix="schedlab-apply-") as tmp:
        graph_path, plan_path = os.path.join(tmp, "graph.json"), os.path.join(tmp, "plan.json")
        Path(graph_path).write_text(json.dumps(graph, separators=(",", ":")))
        cmd = plan_command(binary, graph_path, plan_path, memory_methods, comm_passes, hardware, comm_knobs)
        run_cli(cmd, "schedlab plan", timeout, PlanUnavailable)
        try:
            return json.loads(Path(plan_path).read_text())
        except (OSError, ValueError) as e:
            raise PlanUnavailable(f"schedlab wrote no readable plan: {e}") from e


def plan_in_process(graph: dict, *, memory_methods: Sequence[str] = (), comm_passes: Sequence[str] = (),
                    hardware: str | None = None, comm_knobs: dict | None = None,
                    timeout_s: float = DEFAULT_TIMEOUT_S) -> dict:
    """run_plan's result through the bindings: `schedlab.plan(graph,
    fuse=False, ...)`, the same options, no subprocess and no JSON text.
    Raises PlanUnavailable as run_plan does: bindings missing, refused (the
    core's message), or timed out (the plan runs on a thread, without the
    GIL; past the timeout it is left to finish, the process waiting for it
    at exit, and its result is dropped)."""
    schedlab = find_bindings()
    if schedlab is None:
        raise PlanUnavailable("schedlab's in-process bindings (schedlab._core) are not available")
    outcome: dict = {}

    def run() -> None:
        try:
            outcome["plan"] = schedlab.plan(graph, memory_methods=list(memory_methods) or None,
                                            comm_passes=list(comm_passes), comm_knobs=comm_knobs, fuse=False,
                                            hardware=hardware)
        except BaseException as e:  # noqa: BLE001 - handed to the caller's thread
            outcome["error"] = e

    # Not a daemon: Python waits for a plan still running at exit, where a
    # daemon thread coming back from C++ into a finalizing interpreter aborts.
    worker = threading.Thread(target=run, name="schedlab-plan")
    worker.start()
    worker.join(timeout_s)
    if worker.is_alive():
        raise PlanUnavailable(f"schedlab plan timed out after {timeout_s:g} s")
    error = outcome.get("error")
    if isinstance(error, schedlab.OptionError):
        raise PlanUnavailable(f"schedlab refused the options: {error}") from error
    if isinstance(error, schedlab.Error):
        raise PlanUnavailable(f"schedlab refused the graph: {error}") from error
    if isinstance(error, MemoryError):
        raise PlanUnavailable("schedlab ran out of memory") from error
    if error is not None:
        raise error
    return outcome["plan"]


def plan_order(plan: dict) -> list[str]:
    if not isinstance(plan, dict):
        raise PlanUnavailable(f"the plan is not a JSON object (a {type(plan).__name__})")
    order = plan.get("order")
    if not isinstance(order, list) or not all(isinstance(n, str) for n in order):
        raise PlanUnavailable("the plan has no `order` list of node names")
    return order


def checked_plan(plan) -> dict:
    """`plan` when the parts apply reads are well-formed (an object with an
    `order` list of names, and `memory` and `simulation` objects when
    present); else PlanUnavailable naming the part."""
    plan_order(plan)
    for key in ("memory", "simulation"):
        if plan.get(key) is not None and not isinstance(plan[key], dict):
            raise PlanUnavailable(f"the plan's `{key}` is not an object (a {type(plan[key]).__name__})")
    return plan


@contextlib.contextmanager
def failing_as(step: str):
    """Any exception in the block but PlanUnavailable becomes a
    PlanUnavailable whose reason names `step` and the exception."""
    try:
        yield
    except PlanUnavailable:
        raise
    except Exception as e:  # noqa: BLE001 - a failure of any kind must not break the compile
        raise PlanUnavailable(f"{step}: {type(e).__name__}: {e}") from e


def nodes_in_order(order: Sequence[str], nodes: Sequence, name_of: Callable[[object], str]) -> list:
    """`nodes` rearranged into `order` (names). Raises PlanUnavailable unless
    `order` names every node exactly once and nothing else."""
    by_name: dict[str, object] = {}
    for n in nodes:
        name = name_of(n)
        if name in by_name:
            raise PlanUnavailable(f"two scheduler nodes are named {name!r}")
        by_name[name] = n
    seen: set[str] = set()
    out = []
    for name in order:
        if name not in by_name:
            raise PlanUnavailable(f"the plan names {name!r}, which is no node of the graph")
        if name in seen:
            raise PlanUnavailable(f"the plan names {name!r} twice")
        seen.add(name)
        out.append(by_name[name])
    missing = [name for name in by_name if name not in seen]
    if missing:
        raise PlanUnavailable(f"the plan leaves out {len(missing)} node(s), first {missing[0]!r}")
    return out


def first_difference(expected: Sequence[str], emitted: Sequence[str]) -> str | None:
    """None when the two orders are equal node for node, else where they part."""
    for i, (a, b) in enumerate(zip(expected, emitted)):
        if a != b:
            return f"step {i}: schedlab has {a!r}, Inductor emitted {b!r}"
    if len(expected) != len(emitted):
        return f"schedlab ordered {len(expected)} nodes, Inductor emitted {len(emitted)}"
    return None


INDUCTOR_KEY = "inductor"  # the agreement key of a rank that keeps Inductor's order


@dataclass(frozen=True)
class Gathered:
    """Every rank's key, rank by rank, and how long this rank waited in the
    gather for the last rank to arrive (seconds). That wait is the ranks'
    compiles differing in speed, not the agreement's cost: the ranks would
    wait as long at the step's first collective without it, so apply()
    records it apart from the agreement's own seconds."""

    keys: list[str]
    peer_wait_s: float = 0.0


def peer_wait(arrivals: Sequence[float], own: float, elapsed: float) -> float:
    """Seconds this rank (arrived at `own`, wall clock) waited for the last
    of `arrivals` (every rank's arrival, its own included), at most the
    `elapsed` seconds the gather took. Ranks of one host share the clock;
    across hosts the clocks agree as well as NTP keeps them."""
    return min(max(0.0, max(arrivals) - own), max(0.0, elapsed))


def plan_key(plan: dict | None) -> str:
    """What a rank hands the others to agree on: a digest of the order it
    would run (any rank's order of the same graph gives the same digest),
    or INDUCTOR_KEY when it fell back."""
    import hashlib

    if plan is None:
        return INDUCTOR_KEY
    return hashlib.sha256(json.dumps(plan_order(plan)).encode()).hexdigest()


def disagreement(keys: Sequence[str]) -> str | None:
    """None when every rank (keys[r] is rank r's plan_key) runs one plan;
    else why not, naming the ranks: those that kept Inductor's order and
    those whose plan differs from rank 0's. Then every rank keeps Inductor's
    order, since a collective issued in different orders on two ranks
    deadlocks."""
    keys = list(keys)
    if not keys:
        return "no rank's plan was gathered"
    fell_back = [r for r, k in enumerate(keys) if k == INDUCTOR_KEY]
    if not fell_back and all(k == keys[0] for k in keys):
        return None

    def ranks(rs: list[int]) -> str:
        return ("rank " if len(rs) == 1 else "ranks ") + ", ".join(map(str, rs))

    parts = []
    if fell_back:
        parts.append(f"{ranks(fell_back)} kept Inductor's order")
    if keys[0] != INDUCTOR_KEY:
        other = [r for r, k in enumerate(keys) if k not in (keys[0], INDUCTOR_KEY)]
        if other:
            parts.append(f"{ranks(other)} planned another order than rank 0")
    elif len(fell_back) < len(keys):
        planned = [r for r, k in enumerate(keys) if k != INDUCTOR_KEY]
        parts.append(f"{ranks(planned)} planned without rank 0")
    return f"the ranks' plans differ ({'; '.join(parts)}; all {len(keys)} ranks keep Inductor's order)"


@dataclass
class GraphRecord:
    """What happened to one graph under apply()."""

    index: int
    name: str
    inductor_order: list[str]                 # what the pass was given (Inductor's memory-planned order)
    baseline_order: list[str]                 # the post-fusion order schedlab planned from
    schedlab_order: list[str] | None = None   # None: fell back to Inductor's order
    fallback_reason: str | None = None
    planner: str | None = None                # "bindings" (in-process) or "cli" (subprocess)
    emitted_order: list[str] | None = None    # Scheduler.codegen's node order
    plan_summary: dict = field(default_factory=dict)
    # What apply() added to this graph's compile, in seconds: the export, the
    # plan (schedlab, its checks and files) and the ranks' agreement; and,
    # apart, `peer_wait`: the agreement's wait for slower ranks (Gathered).
    seconds: dict = field(default_factory=dict)

    @property
    def applied(self) -> bool:
        return self.schedlab_order is not None

    @property
    def mismatch(self) -> str | None:
        if self.emitted_order is None:
            return "Inductor emitted no code for this graph (yet)"
        expected = self.schedlab_order if self.applied else self.inductor_order
        return first_difference(expected, self.emitted_order)

    def to_json(self) -> dict:
        return {
            "index": self.index, "name": self.name, "applied": self.applied,
            "fallback_reason": self.fallback_reason, "planner": self.planner, "emitted_matches": self.mismatch is None,
            "mismatch": self.mismatch, "inductor_order": self.inductor_order,
            "baseline_order": self.baseline_order, "schedlab_order": self.schedlab_order,
            "emitted_order": self.emitted_order, "plan": self.plan_summary,
            "seconds": {k: round(v, 6) for k, v in self.seconds.items()},
        }


def _plan_summary(plan: dict) -> dict:
    sim = plan.get("simulation") or {}
    return {
        "memory_method": (plan.get("memory") or {}).get("chosen"),
        "peak_bytes": (plan.get("memory") or {}).get("peak"),
        "step_time_us": sim.get("step_time_us"),
        "exposed_comm_us": sim.get("exposed_comm_us"),
    }


@dataclass
class ApplySession:
    """The decisions of one apply() block. `export(nodes) -> schedgraph dict`
    and `name_of(node)` are Inductor's in a real run and stand-ins in tests."""

    memory_methods: Sequence[str]
    comm_passes: Sequence[str]
    export: Callable[[list], dict]
    name_of: Callable[[object], str]
    binary: str | None = None
    hardware: str | None = None
    comm_knobs: dict | None = None
    timeout_s: float = DEFAULT_TIMEOUT_S
    in_process: bool | None = None  # uses_bindings: None picks the bindings when present and no binary is named
    use_graph_runtimes: bool = False
    fill_export_gaps: bool = False
    out_dir: Path | None = None
    prefix: str = "graph"
    strict: bool = False
    # With several ranks: hands this rank's plan_key to every rank and returns
    # all of them, rank by rank, with this rank's wait for the others
    # (one all_gather_object; _gather_keys).
    gather_keys: Callable[[str], Gathered] | None = None
    rank: int | None = None  # outputs.process_rank(): in every file name when ranks share out_dir
    graphs: list[GraphRecord] = field(default_factory=list)
    # bucket_collectives: the post-grad pass (`bucket`) decides each FX
    # graph's bucketing by simulated step time (fx_bucketing.py); fx_records
    # reads an FX graph (fx_bucketing.records_of_graph), fx_bucket buckets it
    # (fx_bucketing.bucket_fx_graph): Inductor's in a real run, stand-ins in tests.
    bucket_collectives: bool = False
    fx_records: Callable[[object], tuple] | None = None
    fx_bucket: Callable[[object, dict], None] | None = None
    bucketings: list[dict] = field(default_factory=list)
    _caps: dict = field(default_factory=dict)  # group size -> fx_bucketing.read_caps
    _post_fusion: list[str] | None = None

    def record_post_fusion(self, nodes: list) -> list:
        """The post-fusion custom pass: remembers the order, changes nothing."""
        self._post_fusion = [self.name_of(n) for n in nodes]
        return nodes

    def _baseline(self, nodes: list) -> list:
        names = [self.name_of(n) for n in nodes]
        recorded, self._post_fusion = self._post_fusion, None
        if recorded is not None and sorted(recorded) == sorted(names):
            return nodes_in_order(recorded, nodes, self.name_of)
        return list(nodes)  # nodes changed since fusion: plan from the order in hand

    def _write(self, record: GraphRecord, suffix: str, obj: dict) -> None:
        self._write_named(record.name, suffix, obj)

    def _write_named(self, name: str, suffix: str, obj: dict) -> None:
        if self.out_dir is None:
            return
        self.out_dir.mkdir(parents=True, exist_ok=True)
        write_atomically(self.out_dir / f"{name}.{suffix}.json", json.dumps(obj, separators=(",", ":")) + "\n")

    def _fall_back(self, record: GraphRecord, reason: str) -> None:
        record.fallback_reason = reason
        message = f"schedlab_export.apply: {record.name}: {reason}; keeping Inductor's order"
        if self.strict:
            raise PlanUnavailable(message)
        warnings.warn(message, ScheduleWarning, stacklevel=3)

    def reorder(self, nodes: list) -> list:
        """The comm-overlap pass: schedlab's order of `nodes`, or `nodes` as given."""
        nodes = list(nodes)
        record = GraphRecord(index=len(self.graphs), name=ranked(f"{self.prefix}_{len(self.graphs)}", self.rank),
                             inductor_order=[self.name_of(n) for n in nodes], baseline_order=[])
        self.graphs.append(record)
        ordered, plan, summary, reason = None, None, {}, None
        try:
            ordered, plan = self._plan(record, nodes)
            with failing_as("the plan's summary failed"):
                summary = _plan_summary(plan)
        except PlanUnavailable as e:
            ordered, plan, reason = None, None, str(e)
        # Every rank must run the same order (or all keep Inductor's): a
        # collective issued in different orders on two ranks deadlocks.
        if self.gather_keys is not None:
            started, waited = time.perf_counter(), 0.0
            try:
                gathered = self.gather_keys(plan_key(plan))
                differ, waited = disagreement(gathered.keys), gathered.peer_wait_s
            except Exception as e:  # noqa: BLE001
                differ = f"the ranks could not compare their plans: {type(e).__name__}: {e}"
            record.seconds["agree"] = time.perf_counter() - started - waited
            record.seconds["peer_wait"] = waited
            if differ is not None:
                reason = f"{reason}; {differ}" if reason else differ
                ordered = None
        if ordered is None:
            self._fall_back(record, reason)
            return nodes
        record.schedlab_order = plan_order(plan)
        record.plan_summary = summary
        return ordered

    def _plan(self, record: GraphRecord, nodes: list) -> tuple[list, dict]:
        """Each step's failure is a PlanUnavailable naming the step."""
        started = time.perf_counter()
        with failing_as("export failed"):
            baseline = self._baseline(nodes)
            record.baseline_order = [self.name_of(n) for n in baseline]
            graph = self.export(baseline)
            if not isinstance(graph, dict) or not isinstance(graph.get("nodes"), list):
                raise TypeError(f"the export is not a schedgraph dict with a `nodes` list (a {type(graph).__name__})")
            graph["name"] = f"{record.name}.post"
        with failing_as(f"writing {record.name}.post.json failed"):
            self._write(record, "post", graph)
        record.seconds["export"] = time.perf_counter() - started
        started = time.perf_counter()
        record.planner = "bindings" if uses_bindings(self.in_process, self.binary) else "cli"
        if self.fill_export_gaps:
            with failing_as("filling the export's gaps failed"):
                graph, _ = with_export_gaps_filled(graph)
        graph = graph if self.use_graph_runtimes else without_runtimes(graph)
        with failing_as("running schedlab failed"):
            plan = self._planned(graph, self.comm_passes)
        ordered = nodes_in_order(plan_order(plan), nodes, self.name_of)
        with failing_as(f"writing {record.name}.plan.json failed"):
            self._write(record, "plan", plan)
        record.seconds["plan"] = time.perf_counter() - started
        return ordered, plan

    def _planned(self, graph: dict, comm_passes: Sequence[str], comm_knobs: dict | None = None) -> dict:
        """The checked plan of `graph` with the session's planner and
        options, these comm passes, and these knobs over the session's."""
        knobs = {**(self.comm_knobs or {}), **comm_knobs} if comm_knobs else self.comm_knobs
        options = dict(memory_methods=self.memory_methods, comm_passes=comm_passes, hardware=self.hardware,
                       comm_knobs=knobs, timeout_s=self.timeout_s)
        if uses_bindings(self.in_process, self.binary):
            return checked_plan(plan_in_process(graph, **options))
        return checked_plan(run_plan(graph, binary=find_schedlab(self.binary), **options))

    def _bucket_decision(self, record: dict, fx_graph) -> dict:
        """fx_bucketing.choose's decision for one FX graph (PlanUnavailable
        naming the step that failed)."""
        from . import fx_bucketing, fx_graph as fx_schedgraph

        with failing_as("reading the FX graph failed"):
            placeholders, records, outputs = self.fx_records(fx_graph)
            present, group = fx_bucketing.bucketable_counts(records)
            record["collectives"] = dict(present)
        if group is None or max(present.values(), default=0) < 2:
            return {"chosen_mib": {}, "candidates": [], "why": "no two bucketable collectives of one kind"}
        with failing_as("exporting the FX graph failed"):
            graph = fx_schedgraph.connected_schedgraph(placeholders, records, outputs, world_size=group,
                                                       name=f"{record['name']}.fx")
        with failing_as(f"writing {record['name']}.fx.json failed"):
            self._write_named(record["name"], "fx", graph)
        with failing_as("schedlab bucket-caps failed"):
            if group not in self._caps:
                self._caps[group] = fx_bucketing.caps_from_cli(find_schedlab(self.binary), self.hardware, group,
                                                               timeout_seconds(self.timeout_s))
        record["group_size"], record["bucket_caps_mib"] = group, self._caps[group]
        with failing_as("weighing the bucketings failed"):
            return fx_bucketing.choose(graph, self._caps[group], present, self.comm_passes,
                                       lambda g, passes, knobs: self._planned(g, passes, knobs))

    def bucket(self, fx_graph) -> None:
        """The post-grad pass: buckets the FX graph's collectives as
        fx_bucketing decides, or leaves it as it is (a warning says why;
        strict raises)."""
        from . import fx_bucketing

        started, waited = time.perf_counter(), 0.0
        record: dict = {"index": len(self.bucketings), "name": ranked(f"{self.prefix}_fx{len(self.bucketings)}", self.rank)}
        self.bucketings.append(record)
        decision, reason = None, None
        try:
            decision = self._bucket_decision(record, fx_graph)
        except (PlanUnavailable, fx_bucketing.BucketingUnavailable) as e:
            reason = str(e)
        if self.gather_keys is not None:
            try:
                gathered = self.gather_keys(fx_bucketing.decision_key(decision["chosen_mib"] if decision else None))
                keys, waited = gathered.keys, gathered.peer_wait_s
                if len(set(keys)) > 1:
                    differ = [r for r, k in enumerate(keys) if k != keys[0]]
                    reason = (f"{reason}; " if reason else "") + (
                        f"the ranks' bucketings differ (rank(s) {', '.join(map(str, differ))} against rank 0); "
                        f"all {len(keys)} ranks bucket nothing")
                    decision = None
            except Exception as e:  # noqa: BLE001
                reason = f"the ranks could not compare their bucketings: {type(e).__name__}: {e}"
                decision = None
        caps = decision["chosen_mib"] if decision else {}
        if caps:
            try:
                with failing_as("Inductor's bucketing failed"):
                    self.fx_bucket(fx_graph, caps)
            except PlanUnavailable as e:
                reason, caps = str(e), {}
        # seconds: the bucketing's own time; peer_wait_s: its agreement's wait
        # for slower ranks (Gathered), apart.
        record.update(decision or {}, applied_mib=caps, fallback_reason=reason,
                      seconds=round(time.perf_counter() - started - waited, 6), peer_wait_s=round(waited, 6))
        with contextlib.suppress(PlanUnavailable):
            with failing_as("writing the bucketing failed"):
                self._write_named(record["name"], "buckets", record)
        if reason is not None:
            message = f"schedlab_export.apply: {record['name']}: {reason}; no bucketing"
            if self.strict:
                raise PlanUnavailable(message)
            warnings.warn(message, ScheduleWarning, stacklevel=2)

    def record_emitted(self, nodes: Sequence) -> None:
        """Scheduler.codegen's order for the latest graph; warns (or raises
        when strict) when it is not the order the pass returned."""
        if not self.graphs or self.graphs[-1].emitted_order is not None:
            return  # a graph the pass never saw (e.g. compiled before the block)
        record = self.graphs[-1]
        record.emitted_order = [self.name_of(n) for n in nodes]
        if record.mismatch is not None:
            message = f"schedlab_export.apply: {record.name}: emitted order differs: {record.mismatch}"
            if self.strict:
                raise OrderMismatch(message)
            warnings.warn(message, ScheduleWarning, stacklevel=2)

    def report(self) -> dict:
        return {
            "memory_methods": list(self.memory_methods), "comm_passes": list(self.comm_passes),
            "graphs": [g.to_json() for g in self.graphs],
            "bucketings": self.bucketings,
            "applied": sum(g.applied for g in self.graphs),
            "emitted_matches": sum(g.mismatch is None for g in self.graphs),
        }

    def summary(self) -> str:
        lines = [f"schedlab_export.apply: {len(self.graphs)} graph(s), {sum(g.applied for g in self.graphs)} in schedlab's order"]
        for g in self.graphs:
            state = f"schedlab's order ({g.planner})" if g.applied else f"Inductor's order ({g.fallback_reason})"
            check = "emitted as planned" if g.mismatch is None else f"MISMATCH: {g.mismatch}"
            lines.append(f"  {g.name}: {len(g.inductor_order)} nodes, {state}, {check}")
        for b in self.bucketings:
            caps = b.get("applied_mib") or {}
            chosen = ", ".join(f"{k} up to {v:.0f} MiB" for k, v in caps.items()) or "none"
            why = b.get("fallback_reason") or b.get("why")
            lines.append(f"  {b['name']}: bucketing {chosen}" + (f" ({why})" if why else ""))
        return "\n".join(lines)


# --- inside torch.compile -----------------------------------------------------
def _gather_keys() -> Callable[[str], Gathered] | None:
    """With a process group of two or more ranks: every rank's plan_key,
    rank by rank, and this rank's wait for the last to arrive (one
    all_gather_object per graph, during compile, of each rank's key and
    arrival time)."""
    import torch.distributed as dist

    if not (dist.is_available() and dist.is_initialized()) or dist.get_world_size() < 2:
        return None

    def gather(key: str) -> Gathered:
        arrived, started = time.time(), time.perf_counter()
        pairs = [None] * dist.get_world_size()
        dist.all_gather_object(pairs, (key, arrived))
        return Gathered([k for k, _ in pairs], peer_wait([t for _, t in pairs], arrived, time.perf_counter() - started))

    return gather


def _post_grad_pass(bucket: Callable[[object], None], users_pass):
    """Inductor's post_grad_custom_post_pass running the user's pass (if
    any), then `bucket`: a CustomGraphPass, as Inductor's caches ask of it."""
    from torch._inductor.custom_graph_pass import CustomGraphPass

    class SchedlabBucketing(CustomGraphPass):
        def __call__(self, graph) -> None:
            if users_pass is not None:
                users_pass(graph)
            bucket(graph)

        def uuid(self):
            return ("schedlab_export.apply bucketing", users_pass.uuid() if hasattr(users_pass, "uuid") else repr(users_pass))

    return SchedlabBucketing()


@contextlib.contextmanager
def apply(memory_methods: Sequence[str] = ("baseline", "lpmf", "bfs", "dfs"),
          comm_passes: Sequence[str] = ("overlap_schedule",), *, binary: str | None = None,
          hardware: str | None = None, comm_knobs: dict | None = None, timeout_s: float = DEFAULT_TIMEOUT_S,
          in_process: bool | None = None, use_graph_runtimes: bool = False, fill_export_gaps: bool = False, out_dir=None,
          prefix: str = "graph", strict: bool = False, bucket_collectives: bool = False,
          reset_dynamo: bool = True, quiet: bool = False):
    """Compile inside the block with schedlab's orders (see the module doc).
    Yields the ApplySession: `graphs` (one GraphRecord each), `report()`.
    `hardware`: a built-in profile name or a profile file for the cost
    model (`schedlab plan --hardware`); `out_dir`: also write each graph
    (`<prefix>_<k>.post.json`; `<prefix>_<k>.rank<r>.post.json` in a job of
    several ranks) and its plan (`.plan.json`) there; `strict`:
    raise instead of warning and falling back; `in_process`: plan through
    the bindings (True), the CLI (False), or the bindings when present and
    no `binary` is named (None, uses_bindings); `fill_export_gaps`: plan with
    matmul flops and in-place all-reduce payloads the export lacks filled in
    (with_export_gaps_filled; not yet measured on GPUs, docs/gpu-validation.md);
    `bucket_collectives`: also bucket each graph's collectives where schedlab's
    simulation says it pays, with Inductor's FX bucketing passes
    (fx_bucketing.py; the decisions in `bucketings`, and in out_dir as
    `<prefix>_fx<k>.buckets.json` beside the FX graph `<prefix>_fx<k>.fx.json`)."""
    from .compat import check_torch

    check_torch()
    import torch._dynamo
    from torch._inductor import config as inductor_config
    from torch._inductor.scheduler import Scheduler

    from .snapshot import graph_dict

    def export(snodes: list) -> dict:
        # Inductor's runtime estimates only when the plan prices by them.
        return graph_dict("graph", f"torch {torch.__version__} inductor (schedlab_export.apply)", snodes, fused=True,
                          runtimes=use_graph_runtimes)

    session = ApplySession(
        memory_methods=list(memory_methods), comm_passes=list(comm_passes), export=export,
        name_of=lambda n: n.get_name(), binary=binary, hardware=hardware, comm_knobs=comm_knobs,
        timeout_s=timeout_s, in_process=in_process, use_graph_runtimes=use_graph_runtimes, fill_export_gaps=fill_export_gaps,
        out_dir=Path(out_dir) if out_dir is not None else None, prefix=prefix, strict=strict,
        bucket_collectives=bucket_collectives)

    def schedlab_order(nodes):  # Inductor prints a pass's __name__ in its logs
        return session.reorder(nodes)

    session.gather_keys = _gather_keys()
    session.rank = process_rank()
    original_codegen = Scheduler.codegen

    def codegen(self, *args, **kwargs):
        session.record_emitted(self.nodes)
        return original_codegen(self, *args, **kwargs)

    changes = dict(reorder_for_compute_comm_overlap=True, reorder_for_compute_comm_overlap_passes=[schedlab_order],
                   _post_fusion_custom_pass=session.record_post_fusion, fx_graph_cache=False, force_disable_caches=True)
    if bucket_collectives:
        from . import fx_bucketing

        session.fx_records, session.fx_bucket = fx_bucketing.records_of_graph, fx_bucketing.bucket_fx_graph
        changes["post_grad_custom_post_pass"] = _post_grad_pass(session.bucket, inductor_config.post_grad_custom_post_pass)
    with contextlib.ExitStack() as stack:
        stack.enter_context(inductor_config.patch(**changes))
        if reset_dynamo:
            torch._dynamo.reset()
        Scheduler.codegen = codegen
        try:
            yield session
        finally:
            Scheduler.codegen = original_codegen
    if not quiet:
        print(session.summary(), file=sys.stderr)
