"""Carries graph fields from a re-export into checked-in data.

    python3 python/zoo/check_in_graph_fields.py workspaces RUN_DIR --graphs tests/data/exported \
        --measured tests/data/measured/h100 [--write-graphs]
    python3 python/zoo/check_in_graph_fields.py geometry RUN_DIR TARGET...

Both compare each checked-in graph with the re-export of the same file name
in RUN_DIR, every field but the carried ones and `runtime_us` (Inductor's
own estimate, which differs between GPUs), print the differences, and find
the re-export's nodes in the checked-in graph: by name where the graphs are
otherwise equal, else by what their call is: the kernel and the bytes of
its reads, in file order (Inductor's pad_mm benchmarks matrix products, so a
backward graph's node names can differ between two exports of one model
while its convolutions stay the same calls).

workspaces: RUN_DIR is a `run_zoo.py --measure` output whose post graphs
carry `workspace_bytes` (schedlab_export/workspaces.py). For each of them
the checked-in graph is the one beside the measured file where that GPU
compiled the graph differently, else the one in --graphs. The workspaces,
under the checked-in names, go into the checked-in measured file of
RUN_DIR's GPU as `workspace_bytes` (docs/schedmeasured-1.md), and into the
checked-in graph's nodes (`workspace_bytes`, `workspace_source:
"observed"`), post and pre: always into a graph beside the measured file,
into one in --graphs with --write-graphs.

geometry: fields written by exporters since the checked-in graphs were
exported, into each TARGET graph (a file, or every *.pre.json and
*.post.json of a folder that RUN_DIR re-exported):
* each node's `convolution` and `attention` (docs/schedgraph-1.md,
  "Convolution", "Attention"), matched as above;
* each node's `reduction_types`, by name, only where the graphs are
  otherwise equal;
* graph inputs' `dtype`, `shape` and `stride`, by name where the bytes agree
  (inputs keep their FX names between exports);
* buffers' `stride`, by name where the bytes agree, only where the graphs
  are otherwise equal (elsewhere a buffer name can be another tensor).
A field already in the checked-in graph is kept; one that differs from the
re-export's is printed. Each convolution node left without its geometry is
printed. Files are written back in their one-line form.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from schedlab_export import pricing  # noqa: E402

WORKSPACE_FIELDS = ("workspace_bytes", "workspace_source")
CALL_FIELDS = ("convolution", "attention")  # matched by call (carried_names)
NODE_FIELDS = WORKSPACE_FIELDS + CALL_FIELDS + ("reduction_types",)
INPUT_FIELDS = ("dtype", "shape", "stride")
BUFFER_FIELDS = ("stride",)


def _without(graph: dict) -> dict:
    """The graph without the fields this script carries and `runtime_us`."""
    out = json.loads(json.dumps(graph))
    for i in out["inputs"]:
        for f in INPUT_FIELDS:
            i.pop(f, None)
    for node in out["nodes"]:
        for f in NODE_FIELDS + ("runtime_us",):
            node.pop(f, None)
        for b in node.get("outputs", []):
            for f in BUFFER_FIELDS:
                b.pop(f, None)
    return out


def differences(new: dict, old: dict) -> list[str]:
    """Fields of `new` and `old` that differ, the carried ones and runtime_us aside."""
    a, b = _without(new), _without(old)
    out = [k for k in sorted(set(a) | set(b)) if k != "nodes" and a.get(k) != b.get(k)]
    if len(a["nodes"]) != len(b["nodes"]):
        out.append(f"nodes: {len(a['nodes'])} against {len(b['nodes'])}")
    else:
        out += [f"nodes[{i}] {x['name']}" for i, (x, y) in enumerate(zip(a["nodes"], b["nodes"])) if x != y]
    return out


def call_signature(node: dict) -> tuple:
    return node.get("kernel", ""), tuple(r.get("bytes", 0) for r in node.get("reads", []))


def carried_names(new: dict, old: dict, field: str = "workspace_bytes") -> dict[str, str]:
    """Each re-exported node with `field` -> its checked-in node: the node of
    its name where the graphs are otherwise equal, else the checked-in node
    of the same kind and kernel at its place in file order, whose call
    (call_signature) must be the same."""
    with_field = [n for n in new["nodes"] if field in n]
    if not differences(new, old):
        return {n["name"]: n["name"] for n in with_field}
    kinds = {(n.get("kind"), n.get("kernel", "")) for n in with_field}
    candidates = [n for n in old["nodes"] if (n.get("kind"), n.get("kernel", "")) in kinds]
    if [call_signature(n) for n in with_field] != [call_signature(n) for n in candidates]:
        raise SystemExit(f"{old['name']}: the checked-in graph's calls with {field} are not the re-export's")
    return {n["name"]: o["name"] for n, o in zip(with_field, candidates)}


def is_convolution(node: dict) -> bool:
    """A node the exporter gives a `convolution`: an extern convolution
    (forward or backward) or a template named conv (docs/cost-model.md)."""
    if node.get("kind") == "extern":
        return pricing.op_class(pricing.operator_name(node.get("kernel"))) == "convolution"
    return node.get("kind") == "template" and "conv" in (node.get("kernel", "") + node["name"]).lower()


def write_json(path: Path, data: dict, like: str) -> None:
    """Writes `data` in the form of the text `like` (the file's before): one
    line or indented, with or without a final newline."""
    text = json.dumps(data, indent=1) if like.startswith("{\n") else json.dumps(data, separators=(",", ":"))
    path.write_text(text + ("\n" if like.endswith("\n") else ""))


def _carry(into: dict, source: dict, fields: tuple[str, ...], where: str, conflicts: list[str]) -> int:
    """Sets each of `fields` that `source` has and `into` lacks, at the place
    `source` has it (after the nearest key before it there that `into` has),
    so the file reads as a fresh export would; one that both have with other
    values is kept and listed. Returns how many were set."""
    added = []
    for f in fields:
        if f not in source:
            continue
        if f not in into:
            added.append(f)
        elif into[f] != source[f]:
            conflicts.append(f"{where}.{f}")
    if added:
        order = list(into)
        keys = list(source)
        for f in sorted(added, key=keys.index):
            anchor = next((k for k in reversed(keys[:keys.index(f)]) if k in order), None)
            order.insert(order.index(anchor) + 1 if anchor is not None else 0, f)
        items = {k: into[k] if k in into else source[k] for k in order}
        into.clear()
        into.update(items)
    return len(added)


def carry_geometry(new: dict, old: dict) -> list[str]:
    """Carries the geometry fields of `new` (a re-export) into `old` in place;
    what was done, one line each."""
    diff = differences(new, old)
    lines = [f"other fields {'unchanged' if not diff else 'differ: ' + ', '.join(diff[:6]) + (' ...' if len(diff) > 6 else '')}"]
    conflicts: list[str] = []
    by_name = {n["name"]: n for n in old["nodes"]}
    source = {n["name"]: n for n in new["nodes"]}
    carried = {}
    for field in CALL_FIELDS:
        names = carried_names(new, old, field)
        carried[field] = sum(_carry(by_name[o], source[n], (field,), f"{o}", conflicts) for n, o in names.items())
    convolutions = carried["convolution"]
    reductions = 0
    if not diff:
        reductions = sum(_carry(by_name[name], node, ("reduction_types",), name, conflicts)
                         for name, node in source.items() if name in by_name)
    new_inputs = {i["name"]: i for i in new["inputs"]}
    inputs = sum(_carry(i, new_inputs[i["name"]], INPUT_FIELDS, f"inputs {i['name']}", conflicts)
                 for i in old["inputs"] if i["name"] in new_inputs and new_inputs[i["name"]]["bytes"] == i["bytes"])
    strides = 0
    if diff:
        lines.append("buffer strides and reduction types not carried: the graphs' nodes differ, so a name can be "
                     "another tensor or node")
    else:
        new_buffers = {b["name"]: b for n in new["nodes"] for b in n.get("outputs", [])}
        strides = sum(_carry(b, new_buffers[b["name"]], BUFFER_FIELDS, f"buffer {b['name']}", conflicts)
                      for n in old["nodes"] for b in n.get("outputs", [])
                      if b["name"] in new_buffers and new_buffers[b["name"]]["bytes"] == b["bytes"])
    lines.append(f"carried {convolutions} convolutions, {carried['attention']} attention calls, {inputs} input fields, "
                 f"{strides} buffer strides, {reductions} reduction types")
    if conflicts:
        lines.append(f"kept the checked-in value where the re-export's differs: {', '.join(conflicts)}")
    missing = [n["name"] for n in old["nodes"] if is_convolution(n) and "convolution" not in n]
    if missing:
        lines.append(f"convolution nodes without a geometry (not matched): {', '.join(missing)}")
    return lines


def geometry(run_dir: Path, targets: list[str]) -> int:
    files: list[Path] = []
    for t in map(Path, targets):
        if t.is_dir():
            files += sorted(p for p in t.iterdir() if p.name.endswith((".pre.json", ".post.json"))
                            and (run_dir / p.name).exists())
        else:
            files.append(t)
    unmatched = 0
    for path in files:
        source = run_dir / path.name
        if not source.exists():
            raise SystemExit(f"{path}: no re-export {source}")
        text = path.read_text()
        old = json.loads(text)
        lines = carry_geometry(json.loads(source.read_text()), old)
        unmatched += any(line.startswith("convolution nodes without") for line in lines)
        print(f"{path}: " + "; ".join(lines))
        if json.dumps(old) != json.dumps(json.loads(text)):
            write_json(path, old, like=text)
    return 1 if unmatched else 0


def workspaces(args) -> int:
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
        text = measured_path.read_text()
        measured = json.loads(text)
        measured["workspace_bytes"] = observed
        write_json(measured_path, measured, like=text)
        if args.write_graphs or graph_path == beside:
            # the pre graph too: an extern node keeps its name through fusion
            for path_of_graph in (graph_path, graph_path.with_name(f"{case}.pre.json")):
                text = path_of_graph.read_text()
                graph = json.loads(text)
                for node in graph["nodes"]:
                    if node["name"] in observed:
                        node["workspace_bytes"] = observed[node["name"]]
                        node["workspace_source"] = "observed"
                write_json(path_of_graph, graph, like=text)
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    ws = sub.add_parser("workspaces", help="observed kernel workspaces into measured files and graphs")
    ws.add_argument("run_dir")
    ws.add_argument("--graphs", required=True)
    ws.add_argument("--measured", required=True)
    ws.add_argument("--write-graphs", action="store_true")
    geo = sub.add_parser("geometry", help="convolution geometry, input layouts and buffer strides into graphs")
    geo.add_argument("run_dir")
    geo.add_argument("targets", nargs="+", help="graph files, or folders of them")
    args = parser.parse_args()
    if args.command == "workspaces":
        return workspaces(args)
    return geometry(Path(args.run_dir), args.targets)


if __name__ == "__main__":
    sys.exit(main())
