#!/usr/bin/env python3
"""Copies the exporter's observed `scatter_index` marks (docs/schedgraph-1.md,
"Scatter index") from a fresh export into checked-in post graphs of the same
graphs: files of one name whose nodes are the same, in the same order. The
marks describe the index data (seeded draws, positions), not the GPU, so an
export measured before the exporter observed them gets them without a new
measurement. A graph whose nodes differ is left as it is, and said.

    scripts/copy-scatter-indices.py FROM_DIR TO_DIR [TO_DIR ...]

Writes each changed file in place (compact, as the exporter writes post
graphs, through a temporary file); prints one line per file.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path


def read_graph(path: Path) -> dict | None:
    """A post graph's JSON, or None (said on stderr) when it is not one."""
    try:
        graph = json.loads(path.read_text())
        if not isinstance(graph, dict) or not isinstance(graph.get("nodes"), list) or not all(
                isinstance(n, dict) and "name" in n for n in graph["nodes"]):
            raise ValueError("no list of named nodes")
        return graph
    except (OSError, ValueError) as e:
        print(f"copy-scatter-indices: {path}: not a graph ({e})", file=sys.stderr)
        return None


def marks_of(graph: dict) -> dict[str, dict]:
    return {n["name"]: n["scatter_index"] for n in graph["nodes"] if "scatter_index" in n}


def copy_marks(source: dict, target: dict) -> str | None:
    """Adds `source`'s marks to `target` in place; a reason when it cannot."""
    names = [n["name"] for n in source["nodes"]]
    if [n["name"] for n in target["nodes"]] != names:
        return f"its nodes differ from the export's ({len(target['nodes'])} against {len(names)})"
    marks = marks_of(source)
    for node in target["nodes"]:
        if node["name"] in marks:
            node["scatter_index"] = marks[node["name"]]
    return None


def write_compact(path: Path, graph: dict) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(json.dumps(graph, separators=(",", ":")) + "\n")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("source", type=Path, help="a folder of freshly exported *.post.json files")
    ap.add_argument("targets", type=Path, nargs="+", help="folders of checked-in *.post.json files")
    args = ap.parse_args(argv)
    for folder in (args.source, *args.targets):
        if not folder.is_dir():
            ap.error(f"{folder}: not a folder")
    status = 0
    for source_path in sorted(args.source.glob("*.post.json")):
        source = read_graph(source_path)
        if source is None:
            status = 1
            continue
        if not marks_of(source):
            continue
        for folder in args.targets:
            path = folder / source_path.name
            if not path.is_file():
                continue
            target = read_graph(path)
            if target is None:
                status = 1
                continue
            reason = copy_marks(source, target)
            if reason:
                print(f"{path}: left as it is: {reason}")
                continue
            write_compact(path, target)
            print(f"{path}: {len(marks_of(source))} nodes marked")
    return status


if __name__ == "__main__":
    sys.exit(main())
