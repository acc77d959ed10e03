"""The adversarial corpus: hostile and huge inputs, generated rather than stored.

Each case is a small recipe: the files it needs (written on demand), the
schedlab command line, the exit codes that are acceptable and a pattern the
one-line message must match. `run.py` runs them; `tests/fuzz/make_seeds.py`
takes the small graphs as fuzzing seeds. Sizes come from parameters so the
same shapes serve both a quick seed and a 100k-node stress case.
"""
from __future__ import annotations

import json
import os
import random
from dataclasses import dataclass, field
from typing import Callable

INT63_MAX = (1 << 63) - 1


def graph(nodes, inputs=(), outputs=(), **top):
    g = {"format": "schedgraph/1", "inputs": list(inputs), "outputs": list(outputs), "nodes": nodes}
    g.update(top)
    return g


def pointwise(name, out_bytes=64, reads=(), runtime_us=None, out=None, **extra):
    n = {"name": name, "kind": "pointwise", "group": [16, 1],
         "outputs": [{"name": out or "b_" + name, "bytes": out_bytes}],
         "reads": [{"name": r, "dep": "star", "bytes": 64} for r in reads]}
    if runtime_us is not None:
        n["runtime_us"] = runtime_us
    n.update(extra)
    return n


def collective_pair(i, src, group_size=4, nbytes=1024, runtime_us=10.0):
    """A collective reading `src` and its wait, as the zoo's graphs have them."""
    coll = {"name": f"ag{i}", "kind": "collective", "kernel": "torch.ops._c10d_functional.all_gather_into_tensor.default",
            "runtime_us": runtime_us, "outputs": [{"name": f"ag{i}_out", "bytes": nbytes}],
            "reads": [{"name": src, "dep": "star", "bytes": nbytes // 2}],
            "collective": {"op": "all_gather_into_tensor", "group_size": group_size, "bytes": nbytes}}
    wait = {"name": f"wait{i}", "kind": "wait", "runtime_us": 0,
            "outputs": [{"name": f"w{i}", "layout": "none", "bytes": 0, "mutation_of": f"ag{i}_out"}],
            "reads": [{"name": f"ag{i}_out", "dep": "star", "bytes": nbytes}]}
    return coll, wait


# --- graphs -----------------------------------------------------------------

def huge_group_size():
    """An all-reduce over more than 2^62 ranks, priced by the cost model (no runtime_us)."""
    coll, wait = collective_pair(0, "primals_x", group_size=(1 << 62) + 12345)
    del coll["runtime_us"]
    coll["kernel"] = "torch.ops._c10d_functional.all_reduce.default"
    coll["collective"]["op"] = "all_reduce"
    return graph([coll, wait, pointwise("use", reads=["ag0_out"])], inputs=[{"name": "primals_x", "bytes": 512}],
                 outputs=["b_use"], world_size=INT63_MAX)


def invalid_utf8_name() -> bytes:
    """A node name holding the byte 0xff, which is never valid UTF-8."""
    return json.dumps(graph([pointwise("opX")], outputs=["b_opX"])).encode().replace(b'"opX"', b'"op\xff"')


def huge_dep_index_var():
    n = {"name": "op0", "kind": "pointwise", "group": [16, 1],
         "outputs": [{"name": "buf0", "bytes": 64}],
         "reads": [{"name": "primals_1", "dep": "memory", "index": "d99999999999999999999", "size": [16], "bytes": 64}],
         "writes": [{"name": "buf0", "dep": "memory", "index": "d99999999999999999999", "size": [16], "bytes": 64}]}
    m = {"name": "op1", "kind": "pointwise", "group": [16, 1],
         "outputs": [{"name": "buf1", "bytes": 64}],
         "reads": [{"name": "buf0", "dep": "memory", "index": "d99999999999999999999", "size": [16], "bytes": 64}],
         "writes": [{"name": "buf1", "dep": "memory", "index": "d99999999999999999999", "size": [16], "bytes": 64}]}
    return graph([n, m], inputs=[{"name": "primals_1", "bytes": 64}], outputs=["buf1"])


def affine_overflow(big=str(INT63_MAX)):
    idx = f"{big}*d0 + {big}*d1 + {big}"
    n = {"name": "op0", "kind": "pointwise", "group": [INT63_MAX, 1],
         "outputs": [{"name": "buf0", "bytes": 64}],
         "reads": [{"name": "primals_1", "dep": "memory", "index": idx, "size": [INT63_MAX, INT63_MAX], "bytes": 64}],
         "writes": [{"name": "buf0", "dep": "memory", "index": idx, "size": [INT63_MAX, INT63_MAX], "bytes": 64}]}
    m = dict(n, name="op1", outputs=[{"name": "buf1", "bytes": 64}],
             reads=[{"name": "buf0", "dep": "memory", "index": idx, "size": [INT63_MAX, INT63_MAX], "bytes": 64}],
             writes=[{"name": "buf1", "dep": "memory", "index": idx, "size": [INT63_MAX, INT63_MAX], "bytes": 64}])
    return graph([n, m], inputs=[{"name": "primals_1", "bytes": 64}], outputs=["buf1"])


def fused_name_collision():
    """op0 and op1 fuse; a third node is already called op0_op1."""
    def pw(name, src, out):
        return {"name": name, "kind": "pointwise", "group": [16, 1], "outputs": [{"name": out, "bytes": 64}],
                "reads": [{"name": src, "dep": "memory", "index": "d0", "size": [16], "bytes": 64}],
                "writes": [{"name": out, "dep": "memory", "index": "d0", "size": [16], "bytes": 64}]}
    return graph([pw("op0", "primals_1", "buf0"), pw("op1", "buf0", "buf1"),
                  {"name": "op0_op1", "kind": "extern", "kernel": "extern_kernels.mm",
                   "outputs": [{"name": "buf2", "bytes": 64}], "reads": [{"name": "buf1", "dep": "star", "bytes": 64}]}],
                 inputs=[{"name": "primals_1", "bytes": 64}], outputs=["buf2"])


def runtime_sum_overflow():
    def pw(name, src, out):
        return {"name": name, "kind": "pointwise", "group": [16, 1], "runtime_us": 1.7e308,
                "outputs": [{"name": out, "bytes": 64}],
                "reads": [{"name": src, "dep": "memory", "index": "d0", "size": [16], "bytes": 64}],
                "writes": [{"name": out, "dep": "memory", "index": "d0", "size": [16], "bytes": 64}]}
    return graph([pw("op0", "primals_1", "buf0"), pw("op1", "buf0", "buf1")],
                 inputs=[{"name": "primals_1", "bytes": 64}], outputs=["buf1"])


def scatter_index_past_its_updates():
    """An observed scatter index whose hottest row takes more adds than the index has."""
    return graph([pointwise("op0", scatter_index={"updates": 8, "rows": 2, "max_row_updates": 1000, "mean_run": 1, "source": "observed"})],
                 outputs=["b_op0"])


def bom_graph() -> bytes:
    return b"\xef\xbb\xbf" + json.dumps(graph([pointwise("op0")], outputs=["b_op0"])).encode()


def small_valid():
    return graph([pointwise("op0"), pointwise("op1", reads=["b_op0"])], outputs=["b_op1"])


def profile_with(value_text: str) -> bytes:
    return ('{"name": "evil", "dram_bandwidth_gbps": ' + value_text + "}").encode()


# --- huge shapes (near-linear passes) ---------------------------------------

def one_buffer_many_readers(n):
    nodes = [pointwise("src", out="shared")]
    nodes += [pointwise(f"r{i}", reads=["shared"]) for i in range(n)]
    coll, wait = collective_pair(0, "shared")
    nodes += [coll, wait]
    return graph(nodes, outputs=[f"b_r{i}" for i in range(0, n, max(1, n // 100))] + ["w0"])


def collectives_before_waits(n):
    nodes = [pointwise("src", out="x")]
    pairs = [collective_pair(i, "x") for i in range(n)]
    nodes += [c for c, _ in pairs] + [w for _, w in pairs]
    return graph(nodes, outputs=[f"w{i}" for i in range(n)])


def fsdp2_blocks(n, wait=True):
    """n FSDP2 all-gather blocks (copy-in, getitems, all_gather_into_tensor_out,
    wait, split_with_sizes_copy) each feeding a matmul; without `wait` the
    last block has none (enforce_comm_ordering_for_fsdp refuses it)."""
    def extern(name, kernel, reads, out, **buf):
        n = {"name": name, "kind": "extern", "runtime_us": 1.0, "outputs": [dict({"name": out, "bytes": 64}, **buf)],
             "reads": [{"name": r, "dep": "star", "bytes": 64} for r in reads]}
        if kernel:
            n["kernel"] = kernel
        return n
    nodes, inputs, act = [], [{"name": "x", "bytes": 64}], "x"
    for i in range(n):
        inputs += [{"name": f"primals_{i}", "bytes": 64}, {"name": f"unsharded_{i}", "bytes": 64}]
        nodes += [extern(f"ci{i}", "torch.ops.fsdp.all_gather_copy_in.default", [f"primals_{i}"], f"copy_in{i}",
                         layout="multi_output", bytes=0),
                  extern(f"gi{i}", None, [f"copy_in{i}"], f"ag_in{i}", layout="multi_output_item"),
                  extern(f"go{i}", None, [f"copy_in{i}"], f"ag_buf{i}", layout="multi_output_item"),
                  {"name": f"ag{i}", "kind": "collective", "runtime_us": 10.0,
                   "kernel": "torch.ops._c10d_functional.all_gather_into_tensor_out.default",
                   "collective": {"op": "_c10d_functional.all_gather_into_tensor_out.default", "bytes": 128},
                   "outputs": [{"name": f"ag{i}_out", "bytes": 0, "layout": "none", "mutation_of": f"ag_buf{i}"}],
                   "reads": [{"name": f"ag_in{i}", "dep": "star", "bytes": 64}, {"name": f"ag_buf{i}", "dep": "star", "bytes": 64}]}]
        src = f"ag{i}_out"
        if wait or i + 1 < n:
            nodes.append({"name": f"wait{i}", "kind": "wait", "kernel": "torch.ops._c10d_functional.wait_tensor.default",
                          "outputs": [{"name": f"w{i}", "bytes": 0, "layout": "none", "mutation_of": f"ag_buf{i}"}],
                          "reads": [{"name": src, "dep": "star", "bytes": 128}]})
            src = f"w{i}"
        nodes.append(extern(f"co{i}", "torch.ops.fsdp.split_with_sizes_copy.default", [src], f"copy_out{i}",
                            layout="none", bytes=0, mutation_of=f"unsharded_{i}"))
        nodes.append(extern(f"mm{i}", "extern_kernels.mm", [act, f"copy_out{i}"], f"h{i}"))
        act = f"h{i}"
    return graph(nodes, inputs=inputs, outputs=[act])


def node_with_many_reads(r):
    inputs = [{"name": f"in{i}", "bytes": 64} for i in range(r)]
    sink = {"name": "sink", "kind": "pointwise", "group": [16, 1], "outputs": [{"name": "out", "bytes": 64}],
            "reads": [{"name": f"in{i}", "dep": "memory", "index": "d0", "size": [16], "bytes": 64} for i in range(r)],
            "writes": [{"name": "out", "dep": "memory", "index": "d0", "size": [16], "bytes": 64}]}
    return graph([sink], inputs=inputs, outputs=["out"])


def irregular_dag(n, seed=3):
    rng = random.Random(seed)
    nodes = []
    for i in range(n):
        k = rng.randint(0, 3) if i else 0
        srcs = sorted({rng.randrange(i) for _ in range(k)}) if i else []
        size = rng.choice([16, 32, 64])
        nodes.append({"name": f"op{i}", "kind": rng.choice(["pointwise", "pointwise", "reduction"]),
                      "group": [size, 1 if rng.random() < 0.7 else 4],
                      "outputs": [{"name": f"buf{i}", "bytes": 4 * size}],
                      "reads": [{"name": f"buf{s}", "dep": "memory", "index": "d0", "size": [size], "bytes": 4 * size}
                                for s in srcs],
                      "writes": [{"name": f"buf{i}", "dep": "memory", "index": "d0", "size": [size], "bytes": 4 * size}]})
    # Every sink leaves the graph, so dead-code elimination keeps every node and fusion sees them all.
    read = {d["name"] for node in nodes for d in node["reads"]}
    return graph(nodes, outputs=[f"buf{i}" for i in range(n) if f"buf{i}" not in read])


def fully_connected_layers(width, layers):
    nodes = []
    prev = []
    for layer in range(layers):
        cur = []
        for j in range(width):
            name = f"l{layer}_{j}"
            nodes.append({"name": name, "kind": "pointwise", "group": [16, 1],
                          "outputs": [{"name": "b" + name, "bytes": 64}],
                          "reads": [{"name": "b" + p, "dep": "memory", "index": "d0", "size": [16], "bytes": 64}
                                    for p in prev],
                          "writes": [{"name": "b" + name, "dep": "memory", "index": "d0", "size": [16], "bytes": 64}]})
            cur.append(name)
        prev = cur
    return graph(nodes, outputs=["b" + p for p in prev])


def mutation_chain(n):
    nodes = [pointwise("op0", out="v0")]
    for i in range(1, n):
        nodes.append({"name": f"op{i}", "kind": "pointwise", "group": [16, 1],
                      "outputs": [{"name": f"v{i}", "bytes": 64, "mutation_of": f"v{i - 1}"}],
                      "reads": [{"name": f"v{i - 1}", "dep": "star", "bytes": 64}]})
    return graph(nodes, outputs=[f"v{n - 1}"])


# --- the cases ----------------------------------------------------------------

@dataclass
class Case:
    name: str
    files: dict[str, Callable[[], object]]  # file name -> graph dict or bytes
    args: list[str]                          # {name} is replaced by the file's path, {dir} by the work folder
    codes: tuple[int, ...]                   # acceptable exit codes
    message: str = ""                        # regex the output must match (search)
    absent: list[str] = field(default_factory=list)  # files that must not exist afterwards
    seed: bool = True                        # small enough to seed the fuzzers
    setup: Callable[[str], None] | None = None
    before: list[list[str]] = field(default_factory=list)  # schedlab commands that make the inputs first
    unchanged: list[str] = field(default_factory=list)  # files (inputs) whose bytes must not change
    stdin: str | None = None                 # a file ({name} and {dir} expanded) fed on stdin
    rlimit_as_mb: int | None = None          # address-space limit (skipped under ASan, which cannot run in one)


def _mkfifo(d):
    p = os.path.join(d, "fifo.json")
    if not os.path.exists(p):
        os.mkfifo(p)


def _symlink_zero(d):
    p = os.path.join(d, "zero.json")
    if not os.path.lexists(p):
        os.symlink("/dev/zero", p)


def _symlink_target(d):
    p = os.path.join(d, "link.plan.json")
    if not os.path.lexists(p):
        os.symlink(os.path.join(d, "elsewhere.json"), p)


def _subdir(d):
    os.makedirs(os.path.join(d, "adir.json"), exist_ok=True)


def cases() -> list[Case]:
    return [
        Case("huge_group_size_plans", {"g.json": huge_group_size}, ["plan", "{g.json}", "-o", "{dir}/hg.plan.json"], (0,)),
        Case("huge_group_size_simulate", {"g.json": huge_group_size}, ["simulate", "{g.json}"], (0,)),
        Case("invalid_utf8_refused", {"g.json": invalid_utf8_name}, ["plan", "{g.json}", "-o", "{dir}/u.plan.json"], (1,),
             r"(?i)nodes\[0\].*utf-8", absent=["u.plan.json"]),
        Case("knob_1e400", {"g.json": small_valid}, ["plan", "{g.json}", "--comm-knob",
                                                    "reorder_iterative_peak_memory_budget=1e400"], (1, 2),
             r"reorder_iterative_peak_memory_budget"),
        Case("profile_1e400", {"g.json": small_valid, "p.json": lambda: profile_with("1e400")},
             ["plan", "{g.json}", "--hardware", "{p.json}"], (1, 2), r"(?i)dram_bandwidth_gbps|p\.json"),
        Case("profile_missing_fields", {"g.json": small_valid, "p.json": lambda: b'{"name": "half"}'},
             ["plan", "{g.json}", "--hardware", "{p.json}"], (1, 2), r"p\.json"),
        Case("dep_index_20_digits", {"g.json": huge_dep_index_var}, ["plan", "{g.json}"], (0, 1)),
        Case("affine_overflow", {"g.json": affine_overflow}, ["fuse", "{g.json}", "-o", "{dir}/af.post.json"], (0, 1)),
        # a coefficient past int64 (libFuzzer's finding: the strided rule's parse threw); priced as a stride
        Case("index_coefficient_past_int64", {"g.json": lambda: affine_overflow(str(INT63_MAX) + "7")},
             ["plan", "{g.json}", "-o", "{dir}/ic.plan.json"], (0,)),
        Case("fused_name_collision", {"g.json": fused_name_collision}, ["plan", "{g.json}", "-o", "{dir}/fc.plan.json"], (0, 1),
             # planned (the report shows a peak), or refused naming both fused members
             r'(?s)^(?!.*internal).*(peak|"op0".*"op1"|"op1".*"op0")'),
        Case("runtime_sum_overflow_reloads", {"g.json": runtime_sum_overflow},
             ["fuse", "{g.json}", "-o", "{dir}/ro.post.json"], (0,)),
        Case("bom_accepted", {"g.json": bom_graph}, ["plan", "{g.json}"], (0,)),
        # a hottest row past the index's updates: refused naming the node and the field, no plan left
        Case("scatter_index_refused", {"g.json": scatter_index_past_its_updates},
             ["plan", "{g.json}", "-o", "{dir}/si.plan.json"], (1,), r'"op0".*scatter_index\.max_row_updates', absent=["si.plan.json"]),
        Case("output_fifo_refused", {"g.json": small_valid}, ["plan", "{g.json}", "-o", "{dir}/fifo.json"], (1, 2),
             r"fifo\.json", setup=_mkfifo),
        Case("output_symlink_refused", {"g.json": small_valid}, ["plan", "{g.json}", "-o", "{dir}/link.plan.json"], (1, 2),
             r"link\.plan\.json", setup=_symlink_target, absent=["elsewhere.json"]),
        Case("trace_same_path_refused", {"g.json": small_valid},
             ["plan", "{g.json}", "-o", "{dir}/same.json", "--trace", "{dir}/same.json"], (2,), r"same\.json",
             absent=["same.json"]),
        Case("failed_trace_keeps_no_plan", {"g.json": small_valid},
             ["plan", "{g.json}", "-o", "{dir}/pair.plan.json", "--trace", "{dir}/no/such/dir/t.json"], (1, 2),
             r"t\.json", absent=["pair.plan.json"]),
        Case("input_directory_refused", {}, ["plan", "{dir}/adir.json"], (1, 2), r"adir\.json.*(?i:director|regular)",
             setup=_subdir),
        Case("input_dev_zero_refused", {}, ["plan", "{dir}/zero.json"], (1, 2), r"zero\.json", setup=_symlink_zero),
        Case("max_input_bytes", {"g.json": small_valid}, ["plan", "{g.json}", "--max-input-bytes", "10"], (1, 2),
             r"(?i)too large|larger than|exceeds"),
        Case("debug_limit_wraps", {"g.json": small_valid},
             ["plan", "{g.json}", "--comm-knob", "sink_waits_iterative_debug_limit_to_sink=4294967296"], (1, 2),
             r"debug_limit"),
        Case("world_size_overflow", {}, ["gen-dist", "fsdp", "--world-size", "4294967297", "-o", "{dir}/ws.json"], (1, 2),
             r"world-size", absent=["ws.json"]),
        Case("budget_inf", {"g.json": small_valid}, ["simulate", "{g.json}", "--budget", "inf"], (1, 2), r"budget"),
        Case("budget_trailing_junk", {"g.json": small_valid}, ["simulate", "{g.json}", "--budget", "5abc"], (1, 2), r"budget"),
        Case("fsdp_block_without_wait_refused", {"g.json": lambda: fsdp2_blocks(3, wait=False)},
             ["plan", "{g.json}", "--no-fuse", "--comm-passes", "enforce_comm_ordering_for_fsdp", "-o", "{dir}/nw.plan.json"],
             (1,), r'"ag2".*no wait', absent=["nw.plan.json"]),
        Case("option_prefix_refused", {"g.json": small_valid}, ["plan", "{g.json}", "--tracefoo", "{dir}/x.json"], (2,),
             r"tracefoo", absent=["x.json"]),
    ]


# Huge shapes: each must finish (exit 0) inside the runner's timeout; times are bench lines.
ALL_PASSES = ("sink_waits,raise_comms,reorder_compute_for_overlap,decide_global_ordering_of_comms,"
              "enforce_comm_ordering_for_fsdp,reorder_communication_preserving_peak_memory,sink_waits_iterative,"
              "overlap_schedule")


def scale_cases() -> list[Case]:
    return [
        Case("scale_all_passes_fsdp_100k", {}, ["plan", "{dir}/fsdp100k.json", "--no-fuse", "--comm-passes", ALL_PASSES,
                                               "-o", "{dir}/fsdp100k.plan.json"], (0,), seed=False,
             before=[["gen-dist", "fsdp", "--layers", "6250", "-o", "{dir}/fsdp100k.json"]]),
        Case("scale_overlap_one_buffer_20k_readers", {"g.json": lambda: one_buffer_many_readers(20000)},
             ["plan", "{g.json}", "--no-fuse", "--comm-passes", "overlap_schedule"], (0,), seed=False),
        Case("scale_20k_collectives_before_waits", {"g.json": lambda: collectives_before_waits(20000)},
             ["plan", "{g.json}", "--no-fuse", "--comm-passes", ALL_PASSES], (0,), seed=False),
        Case("scale_enforce_fsdp_20k_blocks", {"g.json": lambda: fsdp2_blocks(20000)},
             ["plan", "{g.json}", "--no-fuse", "--memory-methods", "baseline", "--comm-passes",
              "enforce_comm_ordering_for_fsdp,sink_waits"], (0,), seed=False),
        Case("scale_fuse_node_with_200k_reads", {"g.json": lambda: node_with_many_reads(200000)},
             ["fuse", "{g.json}", "-o", "{dir}/reads.post.json"], (0,), seed=False),
        # Fusion's ancestry and cycle checks search from both ends at once and remember their answers per
        # pair (docs/fusion.md "Speed"): 30k irregular nodes take about 1 s CPU (40 s two sessions ago);
        # 100k about 6 s, 300k about 24 s, still super-linear.
        Case("scale_fuse_irregular_30k", {"g.json": lambda: irregular_dag(30000)},
             ["fuse", "{g.json}", "-o", "{dir}/irr.post.json"], (0,), seed=False),
        Case("scale_fuse_fully_connected_180k_edges", {"g.json": lambda: fully_connected_layers(300, 3)},
             ["fuse", "{g.json}", "-o", "{dir}/fc.post.json"], (0,), seed=False),
        Case("scale_mutation_chain_30k", {"g.json": lambda: mutation_chain(30000)}, ["plan", "{g.json}", "--no-fuse"], (0,),
             seed=False),
    ]


def write_file(path, make):
    data = make()
    if isinstance(data, (dict, list)):
        data = json.dumps(data, separators=(",", ":")).encode()
    with open(path, "wb") as f:
        f.write(data)
