"""Collective bucketing decided by schedlab's simulated step time and done by
Inductor's own FX bucketing passes: schedlab_export.apply(...,
bucket_collectives=True).

Inductor 2.11 buckets in its post-grad FX passes, before lowering: it merges
runs of all-gathers, reduce-scatters or all-reduces of one group and dtype,
greedily up to a size its determinator gives (2000 MB by default,
bucketing.py's bucket_*_by_mb), with copy kernels in and out of one flat
buffer. Merging saves a collective's fixed latency and the host's issue; it
costs the copies, and a bucket's first reader waits for all of it. So
whether to bucket, and how far, depends on the graph. For each graph the
post-grad pass (apply's) does:

1. the graph as schedlab sees it (fx_graph.connected_schedgraph);
2. the candidates: no bucketing; every kind up to `schedlab bucket-caps`'s
   cap (the largest bucket two equal members still gain from on the
   profile, core/comms/bucketing.h); all-gathers alone; reduce-scatters and
   all-reduces alone;
3. each candidate planned as the bucketed graph will be: Inductor's greedy
   bucketing at those caps (the `bucket_collectives_inductor` pass, caps as
   its knobs), then apply's own comm passes, simulated with contention on
   the profile; the lowest simulated step wins, ties going to less
   bucketing (no bucketing when nothing gains);
4. the ranks agree on the decision (a rank that fell back buckets nothing,
   and then none does);
5. Inductor's bucket_reduce_scatter / bucket_all_reduce / bucket_all_gather
   run with constant determinators at the chosen caps (its own order:
   all-gathers last), then its stable topological sort, as its post-grad
   passes do after bucketing.

The first half (up to the torch part) is standard library only: CI checks
the candidates and the choice with a stand-in planner
(tests/exporter/test_fx_bucketing.py).
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Callable, Sequence

from .cli_run import run_cli

KINDS = ("all_gather", "reduce_scatter", "all_reduce")
# The knobs of core/comms/knobs.def that hold bucket_collectives_inductor's caps.
CAP_KNOBS = {"all_gather": "bucket_all_gathers_fx_bucket_cap_mib",
             "reduce_scatter": "bucket_reduce_scatters_fx_bucket_cap_mib",
             "all_reduce": "bucket_all_reduces_fx_bucket_cap_mib"}
# Inductor's functions (torch/_inductor/fx_passes/bucketing.py), in the order its post-grad passes run them.
INDUCTOR_FUNCTIONS = (("reduce_scatter", "bucket_reduce_scatter"), ("all_reduce", "bucket_all_reduce"),
                      ("all_gather", "bucket_all_gather"))


class BucketingUnavailable(RuntimeError):
    """No bucketing decision could be taken for a graph (the message says why)."""


def bucketable_kind(target: str) -> str | None:
    """The kind Inductor's FX passes bucket an FX target as, or None: its
    functional all_gather_into_tensor, reduce_scatter_tensor and all_reduce."""
    for word, kind in (("all_gather_into_tensor", "all_gather"), ("reduce_scatter_tensor", "reduce_scatter"),
                       ("all_reduce.", "all_reduce")):
        if "c10d_functional" in target and word in target and "coalesced" not in target:
            return kind
    return None


def bucketable_counts(records: Sequence[dict]) -> tuple[Counter, int | None]:
    """How many collectives of each bucketable kind the records hold, and
    their most common group size (None: none)."""
    kinds, groups = Counter(), Counter()
    for r in records:
        kind = bucketable_kind(str(r.get("target", "")))
        if kind is not None:
            kinds[kind] += 1
            if isinstance(r.get("group_size"), int) and r["group_size"] >= 2:
                groups[r["group_size"]] += 1
    return kinds, (groups.most_common(1)[0][0] if groups else None)


def read_caps(caps_json: dict) -> dict[str, float]:
    """{kind: cap in MiB as Inductor sizes a bucket} of a
    schedlab-bucket-caps/1 document; a kind whose merging never pays maps
    to 0. BucketingUnavailable naming the field for anything else."""
    if not isinstance(caps_json, dict) or caps_json.get("format") != "schedlab-bucket-caps/1":
        raise BucketingUnavailable("`schedlab bucket-caps` wrote no schedlab-bucket-caps/1 document")
    caps = caps_json.get("caps")
    out = {}
    for kind in KINDS:
        entry = caps.get(kind) if isinstance(caps, dict) else None
        mib = entry.get("inductor_mib") if isinstance(entry, dict) else None
        if isinstance(mib, bool) or not isinstance(mib, (int, float)) or not mib >= 0 or mib != mib or mib == float("inf"):
            raise BucketingUnavailable(f"bucket caps: caps.{kind}.inductor_mib is not a size in MiB >= 0")
        out[kind] = float(mib)
    return out


def caps_from_cli(binary: str, hardware: str | None, group_size: int, timeout_s: float | None) -> dict[str, float]:
    """read_caps of `schedlab bucket-caps --group-size G --format json`."""
    cmd = [binary, "bucket-caps", "--group-size", str(group_size), "--format", "json"]
    if hardware:
        cmd += ["--hardware", hardware]
    done = run_cli(cmd, "schedlab bucket-caps", timeout_s, BucketingUnavailable)
    try:
        return read_caps(json.loads(done.stdout))
    except ValueError as e:
        raise BucketingUnavailable(f"schedlab bucket-caps wrote no JSON: {e}") from e


def candidates(caps_mib: dict[str, float], present: Counter) -> list[dict[str, float]]:
    """The bucketings to weigh, least first: none; every kind at its cap;
    all-gathers alone; reduce-scatters and all-reduces alone. Only kinds the
    graph holds two or more of, at a cap above 0; no candidate twice."""
    usable = {k: caps_mib[k] for k in KINDS if present.get(k, 0) >= 2 and caps_mib.get(k, 0) > 0}
    out: list[dict[str, float]] = [{}]
    for subset in (KINDS, ("all_gather",), ("reduce_scatter", "all_reduce")):
        c = {k: usable[k] for k in subset if k in usable}
        if c and c not in out:
            out.append(c)
    return out


def plan_options(candidate: dict[str, float], order_passes: Sequence[str]) -> tuple[list[str], dict]:
    """The comm passes and knobs that plan a graph bucketed as `candidate`:
    Inductor's greedy bucketing at its caps (0: that kind left alone), then
    the order passes."""
    if not candidate:
        return list(order_passes), {}
    return ["bucket_collectives_inductor", *order_passes], {CAP_KNOBS[k]: candidate.get(k, 0.0) for k in KINDS}


def choose(graph: dict, caps_mib: dict[str, float], present: Counter, order_passes: Sequence[str],
           plan: Callable[[dict, list[str], dict], dict]) -> dict:
    """The decision for one graph: {"chosen_mib": the chosen candidate ({}:
    no bucketing), "candidates": [{"caps_mib", "step_time_us", "buckets"}]}.
    `plan(graph, comm_passes, comm_knobs)` returns the schedplan/1 dict."""
    weighed = []
    for candidate in candidates(caps_mib, present):
        passes, knobs = plan_options(candidate, order_passes)
        result = plan(graph, passes, knobs)
        step = (result.get("simulation") or {}).get("step_time_us") if isinstance(result, dict) else None
        if isinstance(step, bool) or not isinstance(step, (int, float)):
            raise BucketingUnavailable("the plan has no simulation.step_time_us")
        buckets = sum(len(p.get("buckets") or []) for p in ((result.get("comm") or {}).get("passes") or [])
                      if isinstance(p, dict))
        weighed.append({"caps_mib": candidate, "step_time_us": float(step), "buckets": buckets})
    best = min(weighed, key=lambda c: c["step_time_us"])  # min keeps the first of equals: less bucketing
    return {"chosen_mib": best["caps_mib"], "candidates": weighed}


def decision_key(caps_mib: dict[str, float] | None) -> str:
    """What a rank hands the others to agree on ("none" for a rank that
    buckets nothing)."""
    return json.dumps(caps_mib or {}, sort_keys=True)


# --- torch part -----------------------------------------------------------------
def records_of_graph(graph) -> tuple[list[dict], list[dict], list[str]]:
    """(placeholders, call_function records with input_names, output names)
    of an fx.Graph, as fx_graph.connected_schedgraph reads them."""
    from .fx_estimator import _tensors, record_of

    placeholders, records, outputs = [], [], []
    for node in graph.nodes:
        if node.op == "placeholder":
            placeholders.append({"name": node.name, "outputs": _tensors(node.meta.get("val"))})
        elif node.op == "call_function":
            record = record_of(node)
            record["input_names"] = [i.name for i in node.all_input_nodes]
            records.append(record)
        elif node.op == "output":
            outputs = [i.name for i in node.all_input_nodes]
        elif node.op == "get_attr":
            placeholders.append({"name": node.name, "outputs": []})
    return placeholders, records, outputs


def bucket_fx_graph(graph, caps_mib: dict[str, float]) -> None:
    """Inductor's own bucketing of the fx.Graph `graph` (its GraphModule's)
    at `caps_mib` (constant determinators), then its stable topological
    sort. BucketingUnavailable when the installed torch lacks a function."""
    from torch._inductor.fx_passes import bucketing
    from torch._inductor.pattern_matcher import stable_topological_sort

    gm = graph.owning_module
    if gm is None:
        raise BucketingUnavailable("the FX graph has no GraphModule to bucket in")

    for kind, function in INDUCTOR_FUNCTIONS:
        if kind not in caps_mib:
            continue
        fn = getattr(bucketing, function, None)
        if fn is None:
            raise BucketingUnavailable(f"torch._inductor.fx_passes.bucketing has no {function}")
        fn(gm, lambda bucket_index, mib=caps_mib[kind]: mib)
    stable_topological_sort(gm.graph)
