"""Sweeps of collectives, alone and beside compute, issued the way
torch.compile issues them: functional collectives (`torch.ops._c10d_functional`),
each followed by `wait_tensor` on the compute stream, NCCL's defaults.
Launch with torchrun (any world size):

    NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 \\
    torchrun --nproc-per-node 4 python/dist/comm_sweep.py collectives --out OUT/collectives-w4.json
    torchrun --nproc-per-node 4 python/dist/comm_sweep.py contention --out OUT/contention-w4.json [--knob NAME]

`collectives`: all_reduce, all_gather, reduce_scatter, all_to_all_single and
broadcast over the WORLD group, `--min-bytes` to `--max-bytes` (each rank's
larger buffer: all_gather's output, reduce_scatter's input, the tensor
otherwise), bf16 and f32. Per point: the time per operation of K back-to-back
operations timed with CUDA events on the compute stream behind a GPU spin (so
the host's launches are queued before the clock starts; each operation pays
the stream handoff a compiled graph pays), and the median NCCL kernel
duration of a profiled repeat.

`contention`: a collective overlapped with one compute kernel class at a
time (cuBLAS GEMMs small to large, attention, Triton pointwise and reduction
kernels, a cuDNN convolution): the collective is issued, compute is queued
behind it, then the compute stream waits, as an overlapped step does. From a
profiled run: each side's kernel time beside the other against alone, and
how long the NCCL kernel started after it was issued (after the compute
kernel that ran before its issue ended). `--knob` runs the same with a user
knob: `high_priority` (the NCCL stream at high priority), `carveout=N`
(torch._C._set_sm_carveout_experimental, where this PyTorch has it);
NCCL_MAX_NCHANNELS is set in the environment by the caller and recorded.

Every raw figure is written (rank 0 writes the file; every rank's kernel
figures are gathered); fit and report with scripts/fit-collectives.py.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import trace_analysis  # noqa: E402
from schedlab_export.outputs import write_atomically  # noqa: E402

OPS = ("all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast")
MULTICAST_OFF = {"NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1", "NVSHMEM_DISABLE_NVLS": "1"}


def _log(msg: str) -> None:
    import torch.distributed as dist

    if dist.get_rank() == 0:
        print(f"[comm_sweep {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def buffer_bytes(op: str, size: int, world: int) -> tuple[int, int]:
    """(input, output) bytes per rank for a point whose larger buffer is `size`."""
    if op == "all_gather":
        return size // world, size
    if op == "reduce_scatter":
        return size, size // world
    return size, size


def payload_bytes(op: str, size: int, world: int) -> int:
    """The schedgraph payload convention (core/cost collective_payload):
    output bytes, so reduce_scatter's payload is its shard."""
    return buffer_bytes(op, size, world)[1]


class Collectives:
    """Issues one functional collective and its wait, as Inductor's code does."""

    def __init__(self, group_name: str, world: int):
        import torch

        self.c10d = torch.ops._c10d_functional
        self.group = group_name
        self.world = world

    def issue(self, op: str, x):
        c = self.c10d
        if op == "all_reduce":
            return c.all_reduce(x, "sum", self.group)
        if op == "all_gather":
            return c.all_gather_into_tensor(x, self.world, self.group)
        if op == "reduce_scatter":
            return c.reduce_scatter_tensor(x, "sum", self.world, self.group)
        if op == "all_to_all":
            split = [x.shape[0] // self.world] * self.world
            return c.all_to_all_single(x, split, split, self.group)
        if op == "broadcast":
            return c.broadcast(x, 0, self.group)
        raise ValueError(op)

    def wait(self, t):
        return self.c10d.wait_tensor(t)


def make_input(op: str, size: int, dtype, world: int):
    import torch

    elem = torch.tensor([], dtype=dtype).element_size()
    in_bytes, _ = buffer_bytes(op, size, world)
    n = max(in_bytes // elem, world)
    n -= n % world  # all_to_all and reduce_scatter split the first dim evenly
    return torch.randn(n, device="cuda", dtype=torch.float32).to(dtype)


def spin(us: float) -> None:
    """Keeps the GPU busy for about `us` so the host queues the timed work
    before its first event fires."""
    import torch

    torch.cuda._sleep(int(us * 1.9e3))  # about 1.9 GHz SM clock: cycles per us


def queue_ahead_us(k: int, host_us_per_op: float = 250.0) -> float:
    """A GPU spin long enough that the host queues k operations before the
    first one runs: the ranks then run them in lockstep, not at the pace of
    each host's Python (a functional collective costs tens of µs to issue)."""
    return 500.0 + k * host_us_per_op


def timed_per_op(run_once, k: int, repeats: int) -> tuple[list[float], list[float]]:
    """Per-operation µs of k back-to-back runs queued behind a spin, `repeats`
    times (CUDA events), and the host's µs per issue over the same loops."""
    import torch
    import torch.distributed as dist

    gpu, host = [], []
    for _ in range(repeats):
        dist.barrier()
        torch.cuda.synchronize()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        spin(queue_ahead_us(k))
        start.record()
        t = time.perf_counter()
        for _ in range(k):
            run_once()
        host.append((time.perf_counter() - t) * 1e6 / k)
        end.record()
        end.synchronize()
        gpu.append(start.elapsed_time(end) * 1e3 / k)
    return gpu, host


def profiled_kernels(run, steps: int = 1) -> list:
    """Kernels of `run()` from torch.profiler (trace_analysis.Kernel list)."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        run()
        torch.cuda.synchronize()
    fd, path = tempfile.mkstemp(suffix=".json")
    os.close(fd)
    try:
        prof.export_chrome_trace(path)
        with open(path) as f:
            trace = json.load(f)
    finally:
        os.unlink(path)
    kernels = trace_analysis.gpu_events(trace)[0]
    return kernels


def gather_all(obj):
    import torch.distributed as dist

    out = [None] * dist.get_world_size()
    dist.all_gather_object(out, obj)
    return out


def sizes(lo: int, hi: int, per_octave: int) -> list[int]:
    out, s = [], lo
    step = 2 ** (1.0 / per_octave)
    while s <= hi:
        out.append(int(s))
        s_next = int(round(s * step))
        s = s_next if s_next > s else s + 1
    return sorted({x - x % 4096 or 4096 for x in out})


def k_for(size: int) -> int:
    """Back-to-back operations per timed repeat: more for small messages."""
    if size <= 1 << 20:
        return 50
    if size <= 32 << 20:
        return 20
    return 5


def sweep_collectives(args, coll: Collectives, world: int) -> dict:
    import torch
    import torch.distributed as dist

    dtypes = {"bf16": torch.bfloat16, "f32": torch.float32}
    points, idx = [], 0
    for dname in args.dtypes:
        dtype = dtypes[dname]
        for op in args.ops:
            for size in sizes(args.min_bytes, args.max_bytes, args.per_octave):
                try:
                    x = make_input(op, size, dtype, world)
                    coll.wait(coll.issue(op, x[: world * 8].contiguous()))  # the signature check, before any timing
                except Exception as e:  # the same on every rank: nothing was issued
                    points.append({"op": op, "dtype": dname, "size_bytes": size, "error": repr(e)})
                    _log(f"{op} {dname} {size}: {e!r}")
                    break
                torch.cuda.synchronize()
                elem = x.element_size()
                out_holder = []

                def once():
                    out_holder.append(coll.wait(coll.issue(op, x)))
                    if len(out_holder) > 4:
                        out_holder.pop(0)

                for _ in range(3):
                    once()
                torch.cuda.synchronize()
                k = k_for(size)
                per_op, host_per_op = timed_per_op(once, k, args.repeats)
                dist.barrier()

                def prof_run():
                    spin(queue_ahead_us(min(k, 10)))
                    for _ in range(min(k, 10)):
                        once()

                profile_this = idx % args.profile_every == 0
                idx += 1
                nccl = [kk.dur_us for kk in profiled_kernels(prof_run) if kk.is_comm] if profile_this else []
                all_nccl = gather_all(nccl) if profile_this else []
                in_b, out_b = x.numel() * elem, x.numel() * elem * (world if op == "all_gather" else 1)
                if op == "reduce_scatter":
                    out_b = in_b // world
                points.append({
                    "op": op, "dtype": dname, "size_bytes": size, "input_bytes": in_b, "output_bytes": out_b,
                    "payload_bytes": out_b, "k": k,
                    "per_op_us": per_op,
                    "per_op_us_median": statistics.median(per_op),
                    "host_us_per_issue": [round(h, 2) for h in host_per_op],
                    "nccl_kernel_us_by_rank": all_nccl,
                    "nccl_kernel_us_median": (statistics.median([d for r in all_nccl for d in r])
                                              if any(all_nccl) else None),
                })
                del x, out_holder
                _log(f"{op} {dname} {size} B: {statistics.median(per_op):.1f} us/op (kernel "
                     f"{points[-1]['nccl_kernel_us_median']})")
    return {"points": points}


# --- contention -----------------------------------------------------------------

def compute_workloads(names: list[str]):
    """name -> (describe, fn launching one kernel's worth of work, flops, bytes)."""
    import torch
    import torch.nn.functional as F

    out = {}
    bf = torch.bfloat16

    def gemm(m, n, k):
        a = torch.randn(m, k, device="cuda", dtype=bf)
        b = torch.randn(k, n, device="cuda", dtype=bf)
        return (f"cuBLAS bf16 GEMM {m}x{n}x{k}", lambda: a @ b, 2 * m * n * k, 2 * (m * k + k * n + m * n))

    for m, n, k in ((1024, 1024, 1024), (2048, 2048, 2048), (4096, 4096, 4096), (8192, 8192, 8192),
                    (8192, 8192, 1024), (16384, 1024, 4096)):
        out[f"gemm_{m}x{n}x{k}"] = lambda m=m, n=n, k=k: gemm(m, n, k)

    def attention():
        b, h, s, d = 4, 32, 2048, 128
        q, kk, v = (torch.randn(b, h, s, d, device="cuda", dtype=bf) for _ in range(3))
        flops = 4 * b * h * s * s * d // 2  # causal
        return ("SDPA bf16 causal 4x32x2048x128",
                lambda: F.scaled_dot_product_attention(q, kk, v, is_causal=True), flops, 4 * q.numel() * 2)

    out["attention"] = attention

    def pointwise():
        x = torch.randn(64 << 20, device="cuda", dtype=bf)
        y = torch.randn(64 << 20, device="cuda", dtype=bf)
        fn = torch.compile(lambda a, b: a * torch.sigmoid(a) + b)
        fn(x, y)
        return ("Triton pointwise silu(x)+y over 64M bf16", lambda: fn(x, y), 0, 3 * x.numel() * 2)

    out["triton_pointwise"] = pointwise

    def reduction():
        x = torch.randn(16384, 8192, device="cuda", dtype=bf)
        fn = torch.compile(lambda a: (a.float() ** 2).sum(-1))
        fn(x)
        return ("Triton reduction sum(x^2) rows of 16384x8192 bf16", lambda: fn(x), 0, x.numel() * 2)

    out["triton_reduction"] = reduction

    def conv():
        x = torch.randn(32, 256, 56, 56, device="cuda", dtype=bf).to(memory_format=torch.channels_last)
        w = torch.randn(256, 256, 3, 3, device="cuda", dtype=bf).to(memory_format=torch.channels_last)
        flops = 2 * 32 * 256 * 56 * 56 * 256 * 9
        return ("cuDNN bf16 conv 32x256x56x56 3x3", lambda: F.conv2d(x, w, padding=1), flops,
                2 * (x.numel() * 2 + w.numel()))

    out["convolution"] = conv
    return {n: out[n] for n in names}


def contention_pair(coll: Collectives, op: str, x, fn, compute_per_round: int, rounds: int,
                    workload_kernels: set[str]) -> dict:
    """Issues `op`, queues `compute_per_round` compute kernels behind it,
    waits; `rounds` times, profiled. Returns this rank's kernel figures."""
    import torch

    keep = []

    def run():
        spin(queue_ahead_us(rounds * (compute_per_round + 4), 60.0))
        for _ in range(rounds):
            h = coll.issue(op, x)
            for _ in range(compute_per_round):
                keep.append(fn())
            keep.append(coll.wait(h))
            if len(keep) > 64:
                del keep[:-8]

    kernels = profiled_kernels(run)
    keep.clear()
    torch.cuda.synchronize()
    comm = [k for k in kernels if k.is_comm]
    # the workload's own kernels; the collectives' copies (a functional
    # all_reduce clones its input on the compute stream) are kept apart
    compute = [k for k in kernels if k.name in workload_kernels]
    copies = [k for k in kernels if not k.is_comm and k.name not in workload_kernels and "sleep" not in k.name.lower()]
    overlapped, lone = [], []
    for k in compute:
        ov = any(min(k.end_us, c.end_us) - max(k.start_us, c.start_us) > 0.5 * k.dur_us for c in comm)
        (overlapped if ov else lone).append(k.dur_us)
    origin = min((k.start_us for k in comm + compute), default=0.0)
    return {
        "comm_us": [c.dur_us for c in comm],
        "compute_overlapped_us": overlapped,
        "compute_lone_us": lone,
        # raw intervals relative to the first kernel: [start, end] of the NCCL
        # kernels and of the compute kernels in stream order (scripts/fit-collectives.py
        # reads the start rule from them)
        "comm_intervals": [[round(c.start_us - origin, 2), round(c.end_us - origin, 2)] for c in comm],
        "compute_intervals": [[round(k.start_us - origin, 2), round(k.end_us - origin, 2)] for k in compute],
        "other_intervals": [[round(k.start_us - origin, 2), round(k.end_us - origin, 2), k.name[:60]] for k in copies],
    }


def alone_kernels(run) -> tuple[list[float], set[str]]:
    ks = [k for k in profiled_kernels(run) if "sleep" not in k.name.lower()]
    return [k.dur_us for k in ks], {k.name for k in ks}


def sweep_contention(args, coll: Collectives, world: int) -> dict:
    import torch

    rows = []
    workloads = compute_workloads(args.compute)
    coll_points = []
    for spec in args.contention_collectives:
        op, size = spec.split(":")
        coll_points.append((op, int(size)))
    for cname, make in workloads.items():
        try:
            describe, fn, flops, nbytes = make()
        except Exception as e:  # the same on every rank: nothing was issued
            rows.append({"compute": cname, "error": repr(e)})
            _log(f"{cname}: {e!r}")
            continue
        for _ in range(5):
            fn()
        torch.cuda.synchronize()

        def compute_alone():
            spin(queue_ahead_us(20, 60.0))
            for _ in range(20):
                fn()

        comp_alone, workload_kernels = alone_kernels(compute_alone)
        kernels_per_call = max(1, round(len(comp_alone) / 20))
        comp_alone_med = statistics.median(comp_alone) * kernels_per_call  # one call's kernels
        for op, size in coll_points:
            x = make_input(op, size, torch.bfloat16, world)
            for _ in range(3):
                coll.wait(coll.issue(op, x))

            def comm_alone():
                spin(queue_ahead_us(10))
                for _ in range(10):
                    coll.wait(coll.issue(op, x))

            torch.cuda.synchronize()
            comm_alone_k = [k.dur_us for k in profiled_kernels(comm_alone) if k.is_comm]
            comm_med = statistics.median(comm_alone_k)
            # enough compute behind each collective to cover it about twice
            per_round = max(1, min(200, int(round(2 * comm_med / max(comp_alone_med, 1e-3)))))
            figs = contention_pair(coll, op, x, fn, per_round, args.rounds, workload_kernels)
            by_rank = gather_all(figs)
            rows.append({
                "compute": cname, "compute_describe": describe, "compute_flops": flops, "compute_bytes": nbytes,
                "op": op, "size_bytes": size, "dtype": "bf16", "compute_per_round": per_round,
                "kernels_per_call": kernels_per_call, "rounds": args.rounds,
                "compute_alone_us": comp_alone_med, "comm_alone_us": comm_med,
                "compute_alone_kernels_us": [round(d, 2) for d in comp_alone],
                "workload_kernels": sorted(workload_kernels),
                "comm_alone_kernels_us": [round(d, 2) for d in comm_alone_k],
                "by_rank": by_rank,
            })
            r0 = by_rank[0]
            comm_ov = statistics.median(r0["comm_us"]) if r0["comm_us"] else float("nan")
            comp_ov = statistics.median(r0["compute_overlapped_us"]) if r0["compute_overlapped_us"] else float("nan")
            _log(f"{cname} x {op} {size}: comm {comm_med:.1f} -> {comm_ov:.1f} us, compute {comp_alone_med:.1f} -> "
                 f"{comp_ov:.1f} us per kernel set")
            del x
    return {"rows": rows}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("what", choices=("collectives", "contention"))
    ap.add_argument("--out", required=True)
    ap.add_argument("--ops", nargs="+", default=list(OPS), choices=OPS)
    ap.add_argument("--dtypes", nargs="+", default=["bf16", "f32"], choices=("bf16", "f32"))
    ap.add_argument("--min-bytes", type=int, default=4096)
    ap.add_argument("--max-bytes", type=int, default=1 << 30)
    ap.add_argument("--per-octave", type=int, default=1)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--profile-every", type=int, default=2, help="profile the NCCL kernels of every Nth point")
    ap.add_argument("--compute", nargs="+", default=["gemm_1024x1024x1024", "gemm_4096x4096x4096",
                                                      "gemm_8192x8192x8192", "gemm_8192x8192x1024",
                                                      "gemm_16384x1024x4096", "attention", "triton_pointwise",
                                                      "triton_reduction", "convolution"])
    ap.add_argument("--contention-collectives", nargs="+",
                    default=["all_reduce:1048576", "all_reduce:16777216", "all_reduce:134217728",
                             "all_gather:16777216", "all_gather:134217728", "reduce_scatter:134217728"])
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--knob", default="none", help="none | high_priority | carveout=N")
    args = ap.parse_args()
    for k, v in MULTICAST_OFF.items():
        if os.environ.get(k) != v:
            print(f"comm_sweep: set {k}={v} (NVLink multicast must stay off)", file=sys.stderr)
            return 2

    import torch
    import torch.distributed as dist

    local = int(os.environ.get("LOCAL_RANK", "0"))
    torch.cuda.set_device(local)
    pg_options = None
    if args.knob == "high_priority":
        pg_options = dist.ProcessGroupNCCL.Options()
        pg_options.is_high_priority_stream = True
    dist.init_process_group("nccl", device_id=torch.device("cuda", local), pg_options=pg_options)
    world = dist.get_world_size()
    knob_applied = args.knob
    if args.knob.startswith("carveout="):
        fn = getattr(torch._C, "_set_sm_carveout_experimental", None)
        if fn is None:
            knob_applied = "carveout unavailable in this PyTorch"
        else:
            fn(int(args.knob.split("=")[1]))
    group_name = dist.group.WORLD.group_name
    coll = Collectives(group_name, world)
    torch.manual_seed(1234 + dist.get_rank())
    t0 = time.time()
    body = sweep_collectives(args, coll, world) if args.what == "collectives" else sweep_contention(args, coll, world)
    env = {
        "device_name": torch.cuda.get_device_name(),
        "device_count": torch.cuda.device_count(),
        "world_size": world,
        "torch": torch.__version__,
        "nccl": ".".join(map(str, torch.cuda.nccl.version())),
        "knob": knob_applied,
        "env": {k: os.environ[k] for k in sorted(os.environ) if k.startswith("NCCL_") or k in MULTICAST_OFF},
        "seconds": round(time.time() - t0, 1),
    }
    if dist.get_rank() == 0:
        out = Path(args.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(out, json.dumps({"format": "schedlab-comm-sweep/1", "what": args.what, "env": env, **body}))
        _log(f"wrote {out} in {env['seconds']} s")
    dist.barrier()
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
