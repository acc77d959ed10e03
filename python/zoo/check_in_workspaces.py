"""Carries observed kernel workspaces from a re-export into checked-in data.

    python3 python/zoo/check_in_workspaces.py RUN_DIR --graphs tests/data/exported \
        --measured tests/data/measured/h100 [--write-graphs]

RUN_DIR is a `run_zoo.py --measure` output whose post graphs carry
`workspace_bytes` (schedlab_export/workspaces.py). For each of them:

* the checked-in graph of the same name (the one beside the measured file
  where that GPU compiled the graph differently, else the one in --graphs)
  is compared with the re-export,
  every field but the workspace fields and `runtime_us` (Inductor's own
  estimate, which differs between GPUs); differences are printed;
* each node with an observed workspace is found in the checked-in graph by
  what its call is: the kernel and the bytes of its reads, in file order
  (Inductor's pad_mm benchmarks matrix products, so a backward graph's node
  names can differ between two exports of one model while its convolutions
  stay the same calls);
* the workspaces, under the checked-in names, go into the checked-in
  measured file of RUN_DIR's GPU as `workspace_bytes`
  (docs/schedmeasured-1.md), and into the checked-in graph's nodes
  (`workspace_bytes`, `workspace_source: "observed"`), post and pre: always
  into a graph beside the measured file, into one in --graphs with
  --write-graphs.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

WORKSPACE_FIELDS = ("workspace_bytes", "workspace_source")


def _without(graph: dict, fields: tuple[str, ...]) -> dict:
    out = json.loads(json.dumps(graph))
    for node in out["nodes"]:
        for f in fields:
            node.pop(f, None)
    return out


def differences(new: dict, old: dict) -> list[str]:
    """Fields of `new` and `old` that differ, workspaces and runtime_us aside."""
    a, b = _without(new, WORKSPACE_FIELDS + ("runtime_us",)), _without(old, WORKSPACE_FIELDS + ("runtime_us",))
    out = [k for k in sorted(set(a) | set(b)) if k != "nodes" and a.get(k) != b.get(k)]
    if len(a["nodes"]) != len(b["nodes"]):
        out.append(f"nodes: {len(a['nodes'])} against {len(b['nodes'])}")
    else:
        out += [f"nodes[{i}] {x['name']}" for i, (x, y) in enumerate(zip(a["nodes"], b["nodes"])) if x != y]
    return out


def call_signature(node: dict) -> tuple:
    return node.get("kernel", ""), tuple(r.get("bytes", 0) for r in node.get("reads", []))


def carried_names(new: dict, old: dict) -> dict[str, str]:
    """Each re-exported node with a workspace -> its checked-in node."""
    with_ws = [n for n in new["nodes"] if "workspace_bytes" in n]
    kernels = {n.get("kernel", "") for n in with_ws}
    candidates = [n for n in old["nodes"] if n.get("kind") == "extern" and n.get("kernel", "") in kernels]
    if [call_signature(n) for n in with_ws] != [call_signature(n) for n in candidates]:
        raise SystemExit(f"{old['name']}: the checked-in graph's convolutions are not the re-export's")
    return {n["name"]: o["name"] for n, o in zip(with_ws, candidates)}


def write_json(path: Path, data: dict, compact: bool) -> None:
    text = json.dumps(data, separators=(",", ":")) if compact else json.dumps(data, indent=1)
    path.write_text(text + "\n")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("run_dir")
    parser.add_argument("--graphs", required=True)
    parser.add_argument("--measured", required=True)
    parser.add_argument("--write-graphs", action="store_true")
    args = parser.parse_args()
    for path in sorted(Path(args.run_dir).glob("*.post.json")):
        new = json.loads(path.read_text())
        if not any("workspace_bytes" in n for n in new["nodes"]):
            continue
        case = path.name.removesuffix(".post.json")
        beside = Path(args.measured) / path.name  # a GPU's own graph, where it compiled differently
        graph_path = beside if beside.exists() else Path(args.graphs) / path.name
        old = json.loads(graph_path.read_text())
        diff = differences(new, old)
        names = carried_names(new, old)
        observed = {names[n["name"]]: n["workspace_bytes"] for n in new["nodes"] if "workspace_bytes" in n}
        print(f"{path.name}: {len(observed)} workspaces; other fields "
              f"{'unchanged' if not diff else 'differ: ' + ', '.join(diff[:6]) + (' ...' if len(diff) > 6 else '')}")
        measured_path = Path(args.measured) / f"{case}.measured.json"
        measured = json.loads(measured_path.read_text())
        measured["workspace_bytes"] = observed
        write_json(measured_path, measured, compact=False)
        if args.write_graphs or graph_path == beside:
            # the pre graph too: an extern node keeps its name through fusion
            for path_of_graph in (graph_path, graph_path.with_name(f"{case}.pre.json")):
                graph = old if path_of_graph == graph_path else json.loads(path_of_graph.read_text())
                for node in graph["nodes"]:
                    if node["name"] in observed:
                        node["workspace_bytes"] = observed[node["name"]]
                        node["workspace_source"] = "observed"
                write_json(path_of_graph, graph, compact=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
