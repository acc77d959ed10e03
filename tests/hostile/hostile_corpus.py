"""Issue 30's hostile corpus: the surfaces added after the first hardening
(hardware profiles, measured files, the folders fit-profile and accuracy
walk, --host-probe-us, the generators' documented limits, the output
policy), generated rather than stored.

Each case is a tests/adversarial/corpus.py Case, run by
tests/adversarial/run.py --set hostile with its time and resident memory
bounded: the exit code, the one-line message (no control byte), the files
left behind and the inputs that must not change. `seeds(kind)` gives the
small profiles and measured files to tests/fuzz/make_seeds.py.
"""
from __future__ import annotations

import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "adversarial"))
from corpus import Case, small_valid  # noqa: E402

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data")
POST = "transformer_s_0_fwd.post.json"
MEASURED = "case_0_fwd.measured.json"


# --- measured files -------------------------------------------------------------

def measured(**changes) -> dict:
    """A synthetic measurement of tests/data/exported's transformer_s_0_fwd
    (one 10 us kernel per launching node), with `changes` applied: a
    top-level key, or `env.<key>` / `memory.<key>`, or `kernels` as a
    function of the kernel list."""
    with open(os.path.join(DATA, "exported", POST)) as f:
        g = json.load(f)
    kernels, t = [], 0.0
    for n in g["nodes"]:
        if n["kind"] == "wait" or (n["kind"] == "extern" and "kernel" not in n):
            continue
        cls = {"pointwise": "triton_pointwise", "reduction": "triton_reduction"}.get(n["kind"], "gemm")
        kernels.append({"name": "k", "node": n["name"], "class": cls, "start_us": t, "duration_us": 10.0, "stream": 7})
        t += 12
    m = {"format": "schedmeasured/1", "graph": g["name"], "env": {"device": "synthetic", "device_kind": "h100-sxm"},
         "memory": {"allocated_before_bytes": 0, "freeable_inputs_bytes": 0, "peak_allocated_bytes": 1 << 20,
                    "reserved_before_bytes": 0, "peak_reserved_bytes": 20 << 20},
         "kernels": kernels, "kernel_time_us": 10.0 * len(kernels), "wall_time_us": t + 40, "unbacked": {}}
    for key, value in changes.items():
        if key == "kernels":
            m["kernels"] = value(m["kernels"])
        elif "." in key:
            section, field = key.split(".", 1)
            m[section][field] = value
        else:
            m[key] = value
    return m


def measured_dir(make=None, extra=None):
    """setup: the graph and a measured file (`make()`: dict or bytes) in the case folder, then `extra(dir)`."""
    def setup(d):
        with open(os.path.join(DATA, "exported", POST), "rb") as src, open(os.path.join(d, "case_0_fwd.post.json"), "wb") as dst:
            dst.write(src.read())
        data = (make or measured)()
        if isinstance(data, dict):
            data = json.dumps(data).encode()
        with open(os.path.join(d, MEASURED), "wb") as f:
            f.write(data)
        if extra:
            extra(d)
    return setup


def each_kernel(field, value):
    return lambda ks: [dict(k, **{field: value}) for k in ks]


def _link(target, name):
    def make(d):
        p = os.path.join(d, name)
        if not os.path.lexists(p):
            os.symlink(target if target.startswith("/") else target, p)
    return make


def _sparse(name, size):
    def make(d):
        with open(os.path.join(d, name), "wb") as f:
            f.truncate(size)
    return make


def _fifo(name):
    def make(d):
        p = os.path.join(d, name)
        if not os.path.exists(p):
            os.mkfifo(p)
    return make


def _both(*steps):
    def make(d):
        for s in steps:
            s(d)
    return make


def _planted_datasheet(d):
    with open(os.path.join(d, "evil-datasheet"), "w") as f:
        f.write('{"base": "h100-sxm-datasheet", "name": "planted"}')
    with open(os.path.join(d, MEASURED), "w") as f:
        json.dump(measured(**{"env.device_kind": os.path.join(d, "evil")}), f)


# --- profiles ---------------------------------------------------------------------

def fitted_profile(**time_model) -> dict:
    with open(os.path.join(DATA, "..", "..", "profiles", "h200.json")) as f:
        p = json.load(f)
    p["time_model"].update(time_model)
    return p


def profile_text(text: str):
    return lambda: text.encode()


DEEP = 20 << 20  # 20 MB of '[': 1.5 GB in the reader without a nesting limit
DEEP_PROFILE = 8 << 20  # within a profile's 16 MiB, so that the nesting limit refuses it
SPARSE = 2 << 30


def trace_text(events: str) -> bytes:
    """A Chrome trace whose traceEvents are `events` (JSON text)."""
    return ('{"traceEvents": [' + events + "]}").encode()


def traced(trace: str) -> list[str]:
    """`plan` of g.json with the measured trace `trace` fed back, its plan to p.json."""
    return ["plan", "{g.json}", "-o", "{dir}/p.json", "--measured-trace", "{" + trace + "}"]


def bad_peer_wait(name: str, law: str, message: str) -> Case:
    """`plan` with an h200-based profile whose collectives carry the peer
    wait law `law` (a JSON member): refused, naming `message`, no plan written."""
    return Case(name, {"g.json": small_valid, "p.json": profile_text(
        '{"base": "h200", "collectives": {"curves": {}, ' + law + '}}')},
        ["plan", "{g.json}", "-o", "{dir}/out.json", "--hardware", "{p.json}"], (1, 2), message, absent=["out.json"])


def cases() -> list[Case]:
    fit, acc = ["fit-profile", "{dir}", "-o", "{dir}/fitted.json"], ["accuracy", "{dir}", "--hardware", "h100-sxm"]
    plan_with = lambda name: ["plan", "{g.json}", "--hardware", "{" + name + "}"]  # noqa: E731
    return [
        # 1. hangs
        Case("measured_durations_sum_past_finite", {}, acc, (1,), r"kernels\[0\]\.duration_us: expected a finite number",
             setup=measured_dir(lambda: measured(kernels=each_kernel("duration_us", 1e308)))),
        Case("measured_start_1e308", {}, acc, (1,), r"kernels\[0\]\.start_us",
             setup=measured_dir(lambda: measured(kernels=each_kernel("start_us", 1e308)))),
        Case("walk_link_to_dot", {}, fit, (0,), r" from 1 graphs ", setup=measured_dir(extra=_link(".", "self")),
             absent=[]),
        Case("walk_link_to_parent", {}, acc, (0,), r"accuracy on h100-sxm: 1 graphs", setup=measured_dir(extra=_link("..", "up"))),
        Case("walk_link_to_proc_self", {}, acc, (0,), r"accuracy on h100-sxm: 1 graphs", setup=measured_dir(extra=_link("/proc/self", "proc"))),
        Case("walk_link_to_root", {}, fit, (0,), r" from 1 graphs ", setup=measured_dir(extra=_link("/", "root"))),
        # 2. silently wrong results: each real file once
        Case("walk_same_folder_twice", {}, ["fit-profile", "{dir}", "{dir}/", "{dir}/.", "-o", "{dir}/fitted.json"], (0,),
             r" from 1 graphs ", setup=measured_dir()),
        Case("walk_file_link", {}, fit, (0,), r" from 1 graphs ",
             setup=measured_dir(extra=_both(lambda d: os.makedirs(os.path.join(d, "sub"), exist_ok=True),
                                            lambda d: _link(os.path.join(d, MEASURED), os.path.join("sub", MEASURED))(d)))),
        Case("walk_fifo_measured_skipped", {}, acc, (0,), r"accuracy on h100-sxm: 1 graphs", setup=measured_dir(extra=_fifo("f.measured.json"))),
        Case("walk_dev_zero_measured_skipped", {}, acc, (0,), r"accuracy on h100-sxm: 1 graphs",
             setup=measured_dir(extra=_link("/dev/zero", "z.measured.json"))),
        # 3. inputs destroyed
        Case("plan_o_input", {"g.json": small_valid}, ["plan", "{g.json}", "-o", "{g.json}"], (2,), r"is an input of this command",
             unchanged=["g.json"]),
        Case("plan_o_input_other_spelling", {"g.json": small_valid}, ["plan", "{g.json}", "-o", "{dir}/./g.json"], (2,),
             r"is an input", unchanged=["g.json"]),
        Case("plan_stdin_o_input", {"g.json": small_valid}, ["plan", "-", "-o", "{g.json}"], (2,), r"is an input",
             unchanged=["g.json"], stdin="{g.json}"),
        Case("simulate_trace_input", {"g.json": small_valid}, ["simulate", "{g.json}", "--trace", "{g.json}"], (2,),
             r"is an input", unchanged=["g.json"]),
        Case("plan_trace_input_keeps_no_plan", {"g.json": small_valid},
             ["plan", "{g.json}", "-o", "{dir}/p.json", "--trace", "{g.json}"], (2,), r"is an input",
             unchanged=["g.json"], absent=["p.json"]),
        Case("fit_profile_o_measured", {}, ["fit-profile", "{dir}", "-o", "{dir}/" + MEASURED], (2,), r"is an input",
             setup=measured_dir(), unchanged=[MEASURED]),
        Case("fit_profile_sibling_terms_unknown", {}, ["fit-profile", "{dir}", "-o", "{dir}/p.json", "--sibling", "h200",
                                                       "--sibling-terms", "score_factor,nope"], (2,),
             r'--sibling-terms: "nope" is not a law term', setup=measured_dir(), absent=["p.json"]),
        Case("fit_profile_sibling_terms_base", {}, ["fit-profile", "{dir}", "-o", "{dir}/p.json", "--sibling", "h200",
                                                    "--sibling-terms", "compute_factor"], (2,),
             r'--sibling-terms: "compute_factor" is not a law term the fit may carry', setup=measured_dir(), absent=["p.json"]),
        Case("fit_profile_sibling_terms_without_sibling", {}, ["fit-profile", "{dir}", "-o", "{dir}/p.json",
                                                               "--sibling-terms", "score_factor"], (2,),
             r"--sibling-terms: needs --sibling", setup=measured_dir(), absent=["p.json"]),
        Case("fit_profile_carry_classes_without_laws_from", {}, ["fit-profile", "{dir}", "-o", "{dir}/p.json",
                                                                 "--carry-classes", "gemm_unaligned"], (2,),
             r"--carry-classes: needs --class-laws-from", setup=measured_dir(), absent=["p.json"]),
        Case("fit_profile_carry_classes_unknown", {}, ["fit-profile", "{dir}", "-o", "{dir}/p.json", "--class-laws-from", "h200",
                                                       "--carry-classes", "gemm_unaligned,nope"], (2,),
             r'--carry-classes: "nope" is not one of the finer kernel classes', setup=measured_dir(), absent=["p.json"]),
        Case("fit_profile_wrapper_costs_negative_item", {"w.json": profile_text(
                 '{"us_per_call": {"tuple_item": -0.04, "assert_size_stride": 0.35}, "host_probe_us": [90]}')},
             ["fit-profile", "{dir}", "-o", "{dir}/p.json", "--wrapper-costs", "{w.json}"], (1,),
             r"w\.json: us_per_call\.tuple_item: expected a finite number", setup=measured_dir(), absent=["p.json"]),
        Case("fit_profile_wrapper_costs_probe_not_a_number", {"w.json": profile_text(
                 '{"us_per_call": {"tuple_item": 0.04, "assert_size_stride": 0.35}, "host_probe_us": [90, null]}')},
             ["fit-profile", "{dir}", "-o", "{dir}/p.json", "--wrapper-costs", "{w.json}"], (1,),
             r"w\.json: host_probe_us\[1\]", setup=measured_dir(), absent=["p.json"]),
        Case("fit_profile_wrapper_costs_dev_zero", {}, ["fit-profile", "{dir}", "-o", "{dir}/p.json", "--wrapper-costs", "/dev/zero"],
             (1, 2), r"/dev/zero", setup=measured_dir(), absent=["p.json"]),
        Case("bucket_caps_group_of_one", {}, ["bucket-caps", "--hardware", "h200", "--group-size", "1"], (2,),
             r"--group-size: .*1"),
        Case("bucket_caps_group_not_a_number", {}, ["bucket-caps", "--group-size", "4x"], (2,), r"--group-size"),
        Case("bucket_caps_without_group", {}, ["bucket-caps", "--hardware", "h200"], (2,), r"--group-size"),
        Case("bucket_caps_unknown_profile", {}, ["bucket-caps", "--hardware", "h300", "--group-size", "4"], (2,),
             r"h300"),
        Case("bucket_caps_bad_profile_file", {"p.json": profile_text('{"base": "h200", "dram_bytes_per_s": -1}')},
             ["bucket-caps", "--hardware", "{p.json}", "--group-size", "4"], (1, 2), r"dram_bytes_per_s"),
        Case("bucket_caps_bad_format", {}, ["bucket-caps", "--group-size", "4", "--format", "yaml"], (2,), r"--format"),
        bad_peer_wait("plan_profile_bad_peer_wait", '"peer_wait_us": {"all_gather": {"4": -1}}',
                      r"collectives\.peer_wait_us\.all_gather\.4"),
        bad_peer_wait("plan_profile_peer_wait_unknown_operation", '"peer_wait_us": {"allgather": {"4": 9}}',
                      r"unknown operation \"allgather\""),
        bad_peer_wait("plan_profile_bad_peer_wait_beside", '"peer_wait_beside_us": {"reduce_scatter": {"4": "slow"}}',
                      r"collectives\.peer_wait_beside_us\.reduce_scatter\.4"),
        bad_peer_wait("plan_profile_peer_wait_beside_bad_group", '"peer_wait_beside_us": {"all_reduce": {"0x4": 9}}',
                      r"peer_wait_beside_us\.all_reduce: group size \"0x4\""),
        Case("plan_unknown_comm_pass_names_it", {"g.json": small_valid},
             ["plan", "{g.json}", "-o", "{dir}/out.json", "--comm-passes", "overlap_schedule_step,defer_stalled"], (1, 2),
             r"defer_stalled.*defer_stalled_compute", absent=["out.json"]),
        Case("accuracy_nodes_over_graph", {}, acc + ["--nodes", "{dir}/case_0_fwd.post.json"], (2,), r"is an input",
             setup=measured_dir(), unchanged=["case_0_fwd.post.json"]),
        Case("plan_hardware_profile_as_output", {"g.json": small_valid, "p.json": profile_text('{"base": "h200"}')},
             ["plan", "{g.json}", "--hardware", "{p.json}", "-o", "{p.json}"], (2,), r"is an input", unchanged=["p.json"]),
        # 4. generators: exact sizes, limits refused before allocating
        Case("gen_dist_fsdp_flops_zero", {}, ["gen-dist", "fsdp", "--layers", "1", "--hidden", "524288", "--tokens", "16777216",
                                             "-o", "{dir}/f.json"], (2,), r"a matmul's flops .* overflows 63 bits", absent=["f.json"]),
        Case("gen_dist_fsdp_flops_negative", {}, ["gen-dist", "fsdp", "--layers", "1", "--hidden", "1000000", "--tokens",
                                                 "16000000", "-o", "{dir}/f.json"], (2,), r"overflows 63 bits", absent=["f.json"]),
        Case("gen_layered_documented_max", {}, ["gen", "layered", "--nodes", "50000000", "--fan-in", "64", "-o", "{dir}/l.json"],
             (2,), r"more than this machine's \d+ bytes of memory", absent=["l.json"], rlimit_as_mb=4096),
        Case("gen_dist_tp_documented_max", {}, ["gen-dist", "tp", "--layers", "100000", "--microbatches", "64",
                                               "-o", "{dir}/t.json"], (2,), r"more than this machine's", absent=["t.json"],
             rlimit_as_mb=4096),
        # 5. apply: tests/exporter/test_apply.py EveryFailureFallsBack (Python, torch-free)
        # 6. memory far beyond the input
        Case("stdin_dev_zero", {}, ["validate", "-"], (1,), r"-: not valid JSON: line 1, column 1: a control character",
             stdin="/dev/zero"),
        Case("stdin_brackets", {"deep.json": lambda: b"[" * DEEP}, ["validate", "-"], (1,), r"nested deeper than 64 levels",
             stdin="{deep.json}"),
        Case("profile_brackets", {"g.json": small_valid, "deep.json": lambda: b"[" * DEEP_PROFILE}, plan_with("deep.json"), (1,),
             r"deep\.json: not valid JSON: line 1, column 65: nested deeper than 64 levels"),
        Case("profile_brackets_20mb", {"g.json": small_valid, "deep.json": lambda: b"[" * DEEP}, plan_with("deep.json"), (1,),
             r"deep\.json: input too large: larger than the limit of 16777216 bytes"),
        Case("profile_sparse_2g", {"g.json": small_valid}, ["plan", "{g.json}", "--hardware", "{dir}/sparse.json"], (1,),
             r"sparse\.json: input too large", setup=_sparse("sparse.json", SPARSE)),
        Case("measured_brackets", {}, acc, (1,), r"not valid JSON: line 1, column 65: nested deeper",
             setup=measured_dir(lambda: b"[" * DEEP)),
        Case("measured_sparse_2g", {}, acc, (1,), r"input too large", setup=measured_dir(extra=_sparse(MEASURED, SPARSE))),
        Case("measured_objects_deep", {}, acc, (1,), r"nested deeper",
             setup=measured_dir(lambda: b'{"a":' * 100000)),
        # 7. a data file chooses no file
        Case("measured_device_kind_path", {}, fit, (1,), r"env\.device_kind: expected a device kind",
             setup=measured_dir(extra=_planted_datasheet), absent=["fitted.json"]),
        Case("measured_device_kind_unknown", {}, fit, (1,),
             r"case_0_fwd\.measured\.json: env\.device_kind: \"tpu-v5\" has no built-in datasheet profile",
             setup=measured_dir(lambda: measured(**{"env.device_kind": "tpu-v5"})), absent=["fitted.json"]),
        # 8. one line, naming the file and the field
        Case("profile_key_newline_escape", {"g.json": small_valid,
                                            "k.json": profile_text('{"base": "h200", "a\\nb\\u001b[31m": 1}')},
             plan_with("k.json"), (1,), r'k\.json: hardware profile: unknown field "a\?b\?\[31m"'),
        Case("profile_dtype_newline", {"g.json": small_valid,
                                       "k.json": profile_text('{"base": "h200", "flops_per_s": {"f32": 1e14, "a\\nb": 0}}')},
             plan_with("k.json"), (1,), r'flops_per_s\."a\?b"'),
        Case("profile_host_costs_sum_past_finite",
             {"g.json": small_valid, "h.json": lambda: fitted_profile(host_us_per_kernel=1e308)},
             ["simulate", "{g.json}", "--hardware", "{h.json}"], (1,), r"h\.json: hardware profile: time_model\.host_us_per_kernel"),
        Case("profile_call_epilogue_past_the_call",
             {"g.json": small_valid, "h.json": lambda: fitted_profile(host_call_epilogue_us=1e6)},
             ["simulate", "{g.json}", "--hardware", "{h.json}"], (1,),
             r"h\.json: hardware profile: time_model\.host_call_epilogue_us: .* is more than host_call_us"),
        Case("profile_sustained_rate_tiny",
             {"g.json": small_valid, "h.json": lambda: fitted_profile(sustained_tensor_flops_per_s=1e-300)},
             plan_with("h.json"), (1,), r"h\.json: hardware profile: time_model\.sustained_tensor_flops_per_s"),
        Case("fit_profile_sustained_not_a_rate", {"s.json": profile_text('{"sustained_tensor_flops_per_s": "fast"}')},
             ["fit-profile", "{dir}", "-o", "{dir}/fitted.json", "--sustained", "{s.json}"], (1,),
             r"s\.json: sustained_tensor_flops_per_s: expected FLOP/s", setup=measured_dir(), absent=["fitted.json"]),
        Case("profile_rate_tiny", {"g.json": small_valid, "r.json": profile_text('{"base": "h200", "dram_bytes_per_s": 1e-300}')},
             plan_with("r.json"), (1,), r"r\.json: hardware profile: dram_bytes_per_s"),
        Case("profile_name_two_lines", {"g.json": small_valid, "n.json": profile_text('{"base": "h200", "name": "a\\nb"}')},
             plan_with("n.json"), (1,), r"n\.json: hardware profile: name"),
        Case("profile_base_is_a_file", {"g.json": small_valid, "b.json": profile_text('{"base": "/etc/passwd"}')},
             plan_with("b.json"), (1,), r"b\.json: hardware profile: base"),
        Case("profile_dev_zero", {"g.json": small_valid}, ["plan", "{g.json}", "--hardware", "{dir}/z.json"], (1,),
             r"z\.json: a device", setup=_link("/dev/zero", "z.json")),
        Case("measured_node_escape", {}, acc, (1,), r'kernels\[0\]\.node: no node "op\?\?\[2Jx"',
             setup=measured_dir(lambda: measured(kernels=lambda ks: [dict(ks[0], node="op\n\x1b[2Jx")] + ks[1:]))),
        Case("measured_unbacked_key_escape", {}, acc, (1,), r'unbacked\."u\?\?\[2J": expected an integer',
             setup=measured_dir(lambda: measured(unbacked={"u\n\x1b[2J": -1}))),
        Case("measured_graph_name_escape", {}, acc, (1,), r'graph: measured "g\?\?\[2J"',
             setup=measured_dir(lambda: measured(graph="g\n\x1b[2J"))),
        Case("measured_bytes_2_62", {}, acc, (1,), r"memory\.peak_allocated_bytes: expected an integer in 0\.\.2\^53",
             setup=measured_dir(lambda: measured(**{"memory.peak_allocated_bytes": 1 << 62}))),
        Case("host_probe_us_tiny", {"g.json": small_valid}, ["plan", "{g.json}", "--host-probe-us", "1e-300"], (2,),
             r"--host-probe-us"),
        Case("host_probe_us_inf", {"g.json": small_valid}, ["simulate", "{g.json}", "--host-probe-us", "inf"], (2,),
             r"--host-probe-us"),
        # measured traces fed back (plan/simulate --measured-trace): one line naming the file and the field
        Case("trace_not_json", {"g.json": small_valid, "t.json": lambda: b"{not json"}, traced("t.json"), (1,),
             r"t\.json: not valid JSON"),
        Case("trace_no_events", {"g.json": small_valid, "t.json": lambda: b'{"schemaVersion": 1}'}, traced("t.json"), (1,),
             r"t\.json: traceEvents: missing"),
        Case("trace_event_without_dur", {"g.json": small_valid, "t.json": lambda: trace_text(
            '{"ph": "X", "cat": "kernel", "name": "triton_poi_0", "ts": 0, "dur": 1}, '
            '{"ph": "X", "cat": "kernel", "name": "triton_poi_1", "ts": 5}')}, traced("t.json"), (1,),
             r"t\.json: traceEvents\[1\]\.dur: missing"),
        Case("trace_event_ts_nan", {"g.json": small_valid, "t.json": lambda: trace_text(
            '{"ph": "X", "cat": "kernel", "name": "k", "ts": 1e400, "dur": 1}')}, traced("t.json"), (1,),
             r"t\.json: (not valid JSON|traceEvents\[0\]\.ts)"),
        Case("trace_name_escape", {"g.json": small_valid, "t.json": lambda: trace_text(
            '{"ph": "X", "cat": "kernel", "name": 7, "ts": 0, "dur": 1}')}, ["simulate", "{g.json}", "--measured-trace", "{t.json}"],
             (1,), r"t\.json: traceEvents\[0\]\.name: expected a string"),
        Case("trace_no_gpu_kernels", {"g.json": small_valid, "t.json": lambda: trace_text(
            '{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": 0, "dur": 1}')}, traced("t.json"), (1,),
             r"t\.json: traceEvents: no GPU kernels"),
        Case("trace_of_another_graph", {"g.json": small_valid, "t.json": lambda: trace_text(
            '{"ph": "X", "cat": "kernel", "name": "nvjet_sm90_gemm", "ts": 0, "dur": 1}')}, traced("t.json"), (1,),
             r"t\.json: no kernel of its 1 step\(s\) maps to a node of graph", absent=["p.json"]),
        Case("trace_brackets", {"g.json": small_valid, "t.json": lambda: b"[" * 100000}, traced("t.json"), (1,),
             r"t\.json: not valid JSON: .*nested deeper than 64"),
        Case("trace_graph_without_trace", {"g.json": small_valid}, ["plan", "{g.json}", "--measured-trace-graph", "{g.json}"],
             (2,), r"--measured-trace-graph: needs --measured-trace"),
        # 9. one output policy
        Case("plan_stdout_twice", {"g.json": small_valid}, ["plan", "{g.json}", "-o", "-", "--trace", "-"], (2,),
             r"-: stdout is given for 2 outputs"),
        Case("plan_o_empty", {"g.json": small_valid}, ["plan", "{g.json}", "-o", ""], (2,), r"expected a file name"),
        Case("simulate_trace_empty", {"g.json": small_valid}, ["simulate", "{g.json}", "--trace", ""], (2,),
             r"expected a file name"),
        Case("accuracy_svg_nodes_same", {}, acc + ["--svg", "{dir}/x", "--nodes", "{dir}/x"], (2,),
             r"the same path is given for two outputs", setup=measured_dir(), absent=["x"]),
        Case("accuracy_both_or_neither", {}, acc + ["--svg", "{dir}/ok.svg", "--nodes", "{dir}/no/such/x.tsv"], (1,),
             r"x\.tsv", setup=measured_dir(), absent=["ok.svg"]),
        Case("fit_profile_o_folder", {}, ["fit-profile", "{dir}", "-o", "{dir}"], (1, 2), r"(?i)refusing to replace a directory",
             setup=measured_dir()),
    ]


def seeds(kind: str) -> list[tuple[str, bytes]]:
    """The small hostile files of `kind` ("profile", "measured" or "trace") as fuzzing seeds."""
    out = []
    if kind == "profile":
        for text in ('{"base": "h200", "a\\nb": 1}', '{"base": "h200", "kernel_launch_us": 1e308}',
                     '{"base": "h200", "flops_per_s": {"f32": 1e-300}}', '{"base": "/etc/passwd"}', "[" * 200):
            out.append((f"profile_{len(out)}", text.encode()))
        out.append(("fitted_host_1e308", json.dumps(fitted_profile(host_call_us=1e308)).encode()))
    elif kind == "trace":
        for events in ('{"ph": "X", "cat": "kernel", "name": "triton_poi_1", "ts": 5}',
                       '{"ph": "X", "cat": "kernel", "name": "k", "ts": 1e308, "dur": 1e308}',
                       '{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "ts": 0, "dur": 9}, '
                       '{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": 1, "dur": 1, "args": {"correlation": 1}}, '
                       '{"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllGather", "ts": 2, "dur": 3, "args": {"correlation": 1}}'):
            out.append((f"trace_{len(out)}", trace_text(events)))
        out.append(("brackets", b"[" * 200))
    else:
        for m in (measured(kernels=each_kernel("duration_us", 1e308)), measured(unbacked={"u\n": -1}),
                  measured(**{"env.device_kind": "../x"}), measured(**{"memory.peak_allocated_bytes": 1 << 62})):
            out.append((f"measured_{len(out)}", json.dumps(m).encode()))
        out.append(("brackets", b"[" * 200))
    return out
