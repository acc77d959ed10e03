"""The spread of the indices a graph's accumulating scatters add through,
observed under --measure (docs/exporter.md, "Scatter indices").

An accumulating scatter (index_put with accumulate, index_add, scatter_add,
an embedding's dense gradient) adds with atomics, and the adds into one
address run one after another: what it costs depends on how its index
spreads, which the graph does not say (a relative-position bucket or a
token's frequency is data). At export, `scatter_origins` finds each fused
node's FX origins that scatter; under --measure, `observe` runs the graph's
FX module on the call's inputs and summarizes each origin's index:

* `updates`: the index's elements (the rows added, one per element);
* `rows`: the distinct rows they add into;
* `max_row_updates`: the most any one row takes;
* `mean_run`: the index's elements over its runs of equal consecutive
  values, in the order the kernel walks them (its row-major order).

`apply_scatter_indices` writes them into the post graph's nodes as
`scatter_index` (docs/schedgraph-1.md), the origin with the most updates
where a node has several.
"""

from __future__ import annotations

import sys

import torch

# aten operators that add through an index, and where their index is. An
# index_put adds only with accumulate=True.
_INDEX_PUT = ("index_put", "index_put_", "_unsafe_index_put", "_index_put_impl_")
_INDEX_ADD = ("index_add", "index_add_")
_SCATTER_ADD = ("scatter_add", "scatter_add_")
_EMBEDDING_BACKWARD = ("embedding_dense_backward",)
SCATTER_OPS = _INDEX_PUT + _INDEX_ADD + _SCATTER_ADD + _EMBEDDING_BACKWARD
SOURCE = "observed"


def _op_name(target) -> str:
    """aten.index_put_.default -> "index_put_"."""
    name = getattr(target, "_opname", None) or getattr(getattr(target, "_overloadpacket", None), "__name__", None)
    return str(name or getattr(target, "__name__", "") or "")


def _adds_through_index(node) -> bool:
    """Whether an FX node adds through an index: one of SCATTER_OPS, an
    index_put only with accumulate=True."""
    name = _op_name(getattr(node, "target", None))
    if name in _INDEX_PUT:
        return bool(node.args[3] if len(node.args) > 3 else node.kwargs.get("accumulate", False))
    return name in SCATTER_OPS


def scatter_origins(snodes) -> dict[str, list[str]]:
    """Per scheduler node (by name), its FX origins that add through an
    index (by name)."""
    from .snapshot import _node_origins

    found: dict[str, list[str]] = {}
    for snode in snodes:
        names = [o.name for o in _node_origins(snode) if _adds_through_index(o)]
        if names:
            found[snode.get_name()] = names
    return found


def _row_keys(name: str, args: tuple, kwargs: dict) -> torch.Tensor | None:
    """The row each element of the operator's index adds into, as one
    integer per element (several index tensors raveled into one key)."""
    def arg(i, key):
        return args[i] if len(args) > i else kwargs.get(key)

    if name in _INDEX_PUT:
        table, indices = arg(0, "self"), arg(1, "indices")
        dims = [(d, ix) for d, ix in enumerate(indices or []) if ix is not None]
        if not dims or not isinstance(table, torch.Tensor):
            return None
        tensors = torch.broadcast_tensors(*[ix.long() for _, ix in dims])
        key = torch.zeros_like(tensors[0])
        for (d, _), ix in zip(dims, tensors):
            size = table.shape[d]
            key = key * size + torch.remainder(ix, size)
        return key.flatten()
    if name in _INDEX_ADD:
        return arg(2, "index").long().flatten()
    if name in _EMBEDDING_BACKWARD:
        return arg(1, "indices").long().flatten()
    if name in _SCATTER_ADD:
        table, dim, index = arg(0, "self"), int(arg(1, "dim")), arg(2, "index")
        dim = dim % index.dim()
        # The address of each element: its coordinates, the index in place of the one along `dim`.
        key = torch.zeros(index.shape, dtype=torch.long, device=index.device)
        for d in range(index.dim()):
            coord = index.long() if d == dim else torch.arange(index.shape[d], device=index.device).view(
                [-1 if e == d else 1 for e in range(index.dim())])
            key = key * table.shape[d] + coord
        return key.flatten()
    return None


def index_spread(keys: torch.Tensor) -> dict:
    """The four figures of one index (module docstring)."""
    updates = int(keys.numel())
    if updates == 0:
        return {"updates": 0, "rows": 0, "max_row_updates": 0, "mean_run": 0.0, "source": SOURCE}
    _, counts = torch.unique(keys, return_counts=True)
    runs = 1 + int((keys[1:] != keys[:-1]).sum().item())
    return {"updates": updates, "rows": int(counts.numel()), "max_row_updates": int(counts.max().item()),
            "mean_run": round(updates / runs, 3), "source": SOURCE}


class _Observer(torch.fx.Interpreter):
    """Runs the module, summarizing the index of each wanted node before it runs."""

    def __init__(self, module, wanted: set[str]):
        super().__init__(module)
        self.wanted = wanted
        self.seen: dict[str, dict] = {}

    def run_node(self, n):
        if n.name in self.wanted:
            args, kwargs = self.fetch_args_kwargs_from_env(n)
            keys = _row_keys(_op_name(n.target), tuple(args), dict(kwargs))
            if keys is not None:
                self.seen[n.name] = index_spread(keys)
        return super().run_node(n)


def observe(module, args: list, origins: dict[str, list[str]]) -> dict[str, dict]:
    """Per post node with scatter origins, the spread of its largest index,
    from running `module` (the FX graph Inductor compiled) on `args` (the
    call's inputs; tensors copied, since the module may add in place). Empty,
    with a line on stderr, when the module cannot be run."""
    if not origins or module is None:
        return {}
    placeholders = sum(1 for n in module.graph.nodes if n.op == "placeholder")
    if placeholders != len(args):
        print(f"schedlab_export: scatter indices not observed: the graph takes {placeholders} inputs, "
              f"the call {len(args)}", file=sys.stderr)
        return {}
    copies = [a.clone() if isinstance(a, torch.Tensor) else a for a in args]
    observer = _Observer(module, {name for names in origins.values() for name in names})
    try:
        with torch.no_grad():
            observer.run(*copies)
    except Exception as e:  # noqa: BLE001 - an observation, never an export failure
        print(f"schedlab_export: scatter indices not observed: {type(e).__name__}: {e}", file=sys.stderr)
        return {}
    observed = {}
    for node, names in origins.items():
        spreads = [observer.seen[n] for n in names if n in observer.seen]
        if spreads:
            observed[node] = max(spreads, key=lambda s: s["updates"])
    return observed


def apply_scatter_indices(post: dict, observed: dict[str, dict]) -> bool:
    """Writes each observed spread into its node of the post graph. Returns
    whether anything changed."""
    changed = False
    for node in post["nodes"]:
        spread = observed.get(node["name"])
        if spread is not None and node.get("scatter_index") != spread:
            node["scatter_index"] = spread
            changed = True
    return changed
