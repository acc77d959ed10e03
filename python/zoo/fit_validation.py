"""Will it fit? on the GPU: `plan --device-memory` against real out-of-memory
errors under torch.cuda.set_per_process_memory_fraction.

    PYTHONPATH=python python3 python/zoo/fit_validation.py --schedlab build/schedlab --out out/fit [--jobs 4] [--only NAME ...]

For each model (torchvision, timm, transformers; random weights, no
internet), in a process of its own:
  1. compile its inference call under schedlab_export.capture: one graph,
     exported as schedgraph/1;
  2. ask schedlab for the need under a cap on the caching allocator
     (`schedlab plan GRAPH --device-memory CAP -o PLAN`: device_fit's
     allocator_need_bytes, its stated margin uncertainty_bytes and, per cap,
     allocator_verdict; the rule lives in core/predict/device_fit, not here);
  3. run the compiled call uncapped (the measured reserved peak, with the
     allocator's history recorded: OUT/NAME/snapshot.pickle, which the page
     opens beside the graph), then under a cap just under the need's low end
     and one just over the need (each half the stated margin outside it),
     each after emptying the cache, and record whether it ran out of memory;
  4. find the real threshold by bisection (`--bisect` runs between the
     measured allocated peak and the uncapped reserved peak): the smallest
     cap that ran and the largest that ran out of memory, which a data test
     holds schedlab's need against without a GPU.
A cap passes unless it ran out of memory where schedlab said "fits", or ran
where schedlab said "does_not_fit": every OOM predicted, no false alarm
outside the stated margin. The parent first measures the CUDA context (the
device's used memory less torch's reserved, alone on the GPU), then runs
the models, `--jobs` at a time (each process caps only its own allocator).

Writes OUT/fit_validation.json (one row per model and the summary) and
prints the table for docs/memory-as-executed.md.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import traceback
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent


# ---- the models ------------------------------------------------------------------
# name -> (library, builder spec). Each builds (model, example input) on the
# GPU with random weights. Batches put the step's memory at 0.5 to 6 GiB.

def _torchvision(name, batch, image=224, dtype="float32", channels_last=False):
    return {"library": "torchvision", "model": name, "batch": batch, "image": image, "dtype": dtype, "channels_last": channels_last}


def _timm(name, batch, image=224, dtype="float32"):
    return {"library": "timm", "model": name, "batch": batch, "image": image, "dtype": dtype}


def _hf(name, batch, seq, dtype="float32", **config):
    return {"library": "transformers", "model": name, "batch": batch, "seq": seq, "dtype": dtype, "config": config}


MODELS = {
    "resnet18": _torchvision("resnet18", 128),
    "resnet50": _torchvision("resnet50", 64),
    "resnet50_bf16_cl": _torchvision("resnet50", 128, dtype="bfloat16", channels_last=True),
    "wide_resnet50_2": _torchvision("wide_resnet50_2", 32),
    "mobilenet_v3_large": _torchvision("mobilenet_v3_large", 128),
    "efficientnet_b0": _torchvision("efficientnet_b0", 96),
    "convnext_tiny": _torchvision("convnext_tiny", 64),
    "regnet_y_400mf": _torchvision("regnet_y_400mf", 128),
    "vgg11": _torchvision("vgg11", 32),
    "squeezenet1_1": _torchvision("squeezenet1_1", 256),
    "shufflenet_v2_x1_0": _torchvision("shufflenet_v2_x1_0", 256),
    "mnasnet1_0": _torchvision("mnasnet1_0", 128),
    "vit_b_16": _torchvision("vit_b_16", 32),
    "swin_t": _torchvision("swin_t", 32),
    "timm_resnet26d": _timm("resnet26d", 96),
    "timm_deit_small": _timm("deit_small_patch16_224", 64),
    "timm_efficientnet_b1": _timm("efficientnet_b1", 64, image=240),
    "gpt2": _hf("gpt2", 8, 512, n_layer=6, n_embd=768, n_head=12, vocab_size=50257),
    "bert_base": _hf("bert", 16, 512, num_hidden_layers=6),
    "llama_small": _hf("llama", 8, 512, dtype="bfloat16", num_hidden_layers=4, hidden_size=1024, intermediate_size=2816,
                       num_attention_heads=16, num_key_value_heads=4, vocab_size=32000),
    "t5_encoder": _hf("t5_encoder", 16, 512, num_layers=6, d_model=512, d_ff=2048, num_heads=8),
    "distilbert": _hf("distilbert", 32, 512),
}


def build(spec):
    """(model, inputs tuple) for a MODELS entry, on the GPU, random weights."""
    import torch

    dtype = getattr(torch, spec["dtype"])
    device = "cuda"
    if spec["library"] == "torchvision":
        import torchvision

        model = getattr(torchvision.models, spec["model"])(weights=None)
        x = torch.randn(spec["batch"], 3, spec["image"], spec["image"])
    elif spec["library"] == "timm":
        import timm

        model = timm.create_model(spec["model"], pretrained=False)
        x = torch.randn(spec["batch"], 3, spec["image"], spec["image"])
    else:
        import transformers as tr

        config_class, model_class = {
            "gpt2": (tr.GPT2Config, tr.GPT2Model), "bert": (tr.BertConfig, tr.BertModel),
            "llama": (tr.LlamaConfig, tr.LlamaModel), "t5_encoder": (tr.T5Config, tr.T5EncoderModel),
            "distilbert": (tr.DistilBertConfig, tr.DistilBertModel),
        }[spec["model"]]
        model = model_class(config_class(**spec["config"]))
        vocab = model.config.vocab_size
        x = torch.randint(0, vocab, (spec["batch"], spec["seq"]))
        model = model.to(device, dtype).eval()
        return model, (x.to(device),)
    model = model.to(device, dtype).eval()
    x = x.to(device, dtype)
    if spec.get("channels_last"):
        model, x = model.to(memory_format=torch.channels_last), x.to(memory_format=torch.channels_last)
    return model, (x,)


# ---- schedlab's answer (CPU side) ---------------------------------------------------

def predicted_fit(schedlab: str, graph: Path, cap_bytes: int, plan_path: Path, hardware: str) -> dict:
    """device_fit of `schedlab plan GRAPH --device-memory CAP` (schedplan/1)."""
    r = subprocess.run([schedlab, "plan", str(graph), "--hardware", hardware, "--device-memory", str(cap_bytes),
                        "-o", str(plan_path)], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"schedlab plan {graph}: {r.stderr.strip() or r.stdout.strip()}")
    return json.loads(plan_path.read_text())["device_fit"]


def caps_for(fit: dict) -> dict:
    """The caps to run under: half the stated margin below the need's low
    end and above the need."""
    need, low, margin = fit["allocator_need_bytes"], fit.get("allocator_need_low_bytes", fit["allocator_need_bytes"]), fit["uncertainty_bytes"]
    step = margin + max(margin // 2, 1)
    return {"under": max(1, low - step), "over": need + step}


def bisect_threshold(runs_at, lo: int, hi: int, steps: int) -> dict:
    """The smallest cap that ran and the largest that ran out of memory,
    by bisection between `lo` and `hi` (caps in 2 MiB units, every segment's
    multiple). `runs_at(cap)` -> (ran, record)."""
    unit = 2 << 20
    lo_u, hi_u = max(0, lo // unit), -(-hi // unit)
    runs = []
    ran_at, oom_at = None, None
    ran, record = runs_at(hi_u * unit)
    runs.append(record)
    if not ran:
        return {"ran_at": None, "oom_at": hi_u * unit, "runs": runs}
    ran_at = hi_u * unit
    ran, record = runs_at(lo_u * unit)
    runs.append(record)
    if ran:
        return {"ran_at": lo_u * unit, "oom_at": None, "runs": runs}
    oom_at = lo_u * unit
    for _ in range(steps):
        if hi_u - lo_u <= 1:
            break
        mid = (lo_u + hi_u) // 2
        ran, record = runs_at(mid * unit)
        runs.append(record)
        if ran:
            hi_u, ran_at = mid, mid * unit
        else:
            lo_u, oom_at = mid, mid * unit
    return {"ran_at": ran_at, "oom_at": oom_at, "runs": runs}


def threshold_in_band(row: dict) -> bool | None:
    """Whether the measured threshold lies inside schedlab's stated band
    [need low - margin, need + margin]; None without a measured threshold."""
    t = row.get("threshold")
    if not t or t.get("ran_at") is None or t.get("oom_at") is None:
        return None
    low = row.get("need_low_bytes", row["need_bytes"]) - row["uncertainty_bytes"]
    high = row["need_bytes"] + row["uncertainty_bytes"]
    return t["oom_at"] >= low and t["ran_at"] <= high


def judge(verdict: str, oom: bool) -> bool:
    """A cap passes unless an OOM came where schedlab said it fits, or a run
    succeeded where it said it does not fit (inside the margin, either)."""
    return not ((oom and verdict == "fits") or (not oom and verdict == "does_not_fit"))


def summarize(rows: list[dict]) -> dict:
    runs = [(row["name"], side, c) for row in rows if not row.get("error") for side, c in row["caps"].items()]
    return {
        "models": len(rows),
        "graphs_run": sum(1 for row in rows if not row.get("error")),
        "caps_run": len(runs),
        "ooms": sum(1 for _, _, c in runs if c["oom"]),
        "ooms_predicted": sum(1 for _, _, c in runs if c["oom"] and c["verdict"] != "fits"),
        "false_alarms": sum(1 for _, _, c in runs if not c["oom"] and c["verdict"] == "does_not_fit"),
        "failures": [f"{name} {side}" for name, side, c in runs if not c["pass"]],
        "thresholds_measured": sum(1 for row in rows if not row.get("error") and threshold_in_band(row) is not None),
        "thresholds_in_band": sum(1 for row in rows if not row.get("error") and threshold_in_band(row)),
        "errors": [row["name"] for row in rows if row.get("error")],
    }


def table(rows: list[dict]) -> str:
    """The Markdown table for the note."""
    mib = lambda b: f"{b / 2**20:.0f}"  # noqa: E731
    out = ["| graph | need MiB: low–high (margin) | measured threshold MiB | in band | measured reserved MiB "
           "| cap under MiB: verdict, run | cap over MiB: verdict, run | pass |",
           "|---|---|---|---|---|---|---|---|"]
    for row in rows:
        if row.get("error"):
            out.append(f"| {row['name']} | error: {row['error'].strip().splitlines()[-1][:80]} | | | | | | |")
            continue
        cell = lambda c: f"{mib(c['cap_bytes'])}: {c['verdict']}, {'OOM' if c['oom'] else 'ran'}"  # noqa: E731
        ok = all(c["pass"] for c in row["caps"].values())
        low = row.get("need_low_bytes", row["need_bytes"])
        need = f"{mib(low)}–{mib(row['need_bytes'])}" if low != row["need_bytes"] else mib(row["need_bytes"])
        t = row.get("threshold") or {}
        threshold = (f"{mib(t['oom_at'])}–{mib(t['ran_at'])}" if t.get("ran_at") is not None and t.get("oom_at") is not None
                     else "" if not t else f"ran at {mib(t['ran_at'])}" if t.get("ran_at") is not None else f"OOM at {mib(t['oom_at'])}")
        band = {None: "", True: "yes", False: "**no**"}[threshold_in_band(row)]
        out.append(f"| {row['name']} | {need} (±{mib(row['uncertainty_bytes'])}) | {threshold} | {band} | {mib(row['measured_reserved_bytes'])} "
                   f"| {cell(row['caps']['under'])} | {cell(row['caps']['over'])} | {'yes' if ok else '**no**'} |")
    return "\n".join(out)


# ---- on the GPU --------------------------------------------------------------------

def run_capped(fn, args, cap_bytes: int, total: int, snapshot: Path | None = None) -> dict:
    """One call of `fn` with the caching allocator capped at `cap_bytes`
    (with `snapshot`, the allocator's history of the call is written there)."""
    import gc

    import torch

    gc.collect()
    torch.cuda.synchronize()
    torch.cuda.set_per_process_memory_fraction(min(1.0, cap_bytes / total))
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()
    oom, message = False, ""
    if snapshot:
        torch.cuda.memory._record_memory_history(enabled="all", context=None, stacks="python", max_entries=200000)
    try:
        with torch.no_grad():
            y = fn(*args)
        torch.cuda.synchronize()
        del y
    except torch.OutOfMemoryError as e:
        oom, message = True, str(e).splitlines()[0][:200]
    if snapshot:
        torch.cuda.memory._dump_snapshot(str(snapshot))
        torch.cuda.memory._record_memory_history(enabled=None)
    result = {"cap_bytes": cap_bytes, "oom": oom, "peak_reserved_bytes": torch.cuda.max_memory_reserved(),
              "peak_allocated_bytes": torch.cuda.max_memory_allocated()}
    if message:
        result["oom_message"] = message
    gc.collect()
    torch.cuda.set_per_process_memory_fraction(1.0)
    torch.cuda.empty_cache()
    return result


def worker(name: str, out: Path, schedlab: str, hardware: str, bisect_steps: int = 0) -> dict:
    import torch

    import schedlab_export

    torch.manual_seed(0)
    row = {"name": name, "spec": MODELS[name]}
    case_dir = out / name
    started = time.time()
    model, args = build(MODELS[name])
    compiled = torch.compile(model)
    with schedlab_export.capture(case_dir, prefix=name) as session:
        with torch.no_grad():
            y = compiled(*args)
        torch.cuda.synchronize()
        del y
    posts = sorted(case_dir.glob(f"{name}_*.post.json"))
    if len(posts) != 1:
        raise RuntimeError(f"{len(posts)} graphs exported (graph breaks?): {[p.name for p in posts]}; errors: {session.errors}")
    row["graph"] = str(posts[0])
    row["compile_s"] = round(time.time() - started, 1)
    total = torch.cuda.get_device_properties(0).total_memory
    row["total_bytes"] = total
    uncapped = run_capped(compiled, args, total, total, snapshot=case_dir / "snapshot.pickle")
    row["measured_reserved_bytes"] = uncapped["peak_reserved_bytes"]
    row["measured_allocated_bytes"] = uncapped["peak_allocated_bytes"]
    fit = predicted_fit(schedlab, posts[0], total, case_dir / "plan.json", hardware)
    row["need_bytes"], row["uncertainty_bytes"] = fit["allocator_need_bytes"], fit["uncertainty_bytes"]
    row["need_low_bytes"] = fit.get("allocator_need_low_bytes", fit["allocator_need_bytes"])
    row["reserved_peak_bytes"] = fit["reserved_peak_bytes"]
    row["predicted_allocated_bytes"] = json.loads((case_dir / "plan.json").read_text())["predicted"]["peak_bytes"]
    row["caps"] = {}
    for side, cap in caps_for(fit).items():
        verdict = predicted_fit(schedlab, posts[0], cap, case_dir / f"plan.{side}.json", hardware)["allocator_verdict"]
        run = run_capped(compiled, args, cap, total)
        run.update({"verdict": verdict, "pass": judge(verdict, run["oom"])})
        row["caps"][side] = run
    if bisect_steps:
        def runs_at(cap):
            r = run_capped(compiled, args, cap, total)
            return not r["oom"], {"cap_bytes": cap, "oom": r["oom"]}
        row["threshold"] = bisect_threshold(runs_at, int(uncapped["peak_allocated_bytes"] * 0.9),
                                            uncapped["peak_reserved_bytes"] + (2 << 20), bisect_steps)
    return row


def context_bytes() -> dict:
    """The CUDA context alone on the GPU: used device memory less torch's reserved."""
    import torch

    torch.zeros(1, device="cuda")
    free, total = torch.cuda.mem_get_info()
    return {"context_bytes": total - free - torch.cuda.memory_reserved(), "total_bytes": total,
            "device": torch.cuda.get_device_name(0), "torch": torch.__version__}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--schedlab", required=True, help="the schedlab binary")
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--hardware", default="h100-sxm", help="schedlab's hardware profile (h100-sxm, h200)")
    ap.add_argument("--jobs", type=int, default=4)
    ap.add_argument("--only", nargs="*", default=None)
    ap.add_argument("--timeout", type=float, default=600, help="seconds per model")
    ap.add_argument("--bisect", type=int, default=7, help="bisection runs for the measured threshold (0: none)")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--context", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.context:
        print(json.dumps(context_bytes()))
        return 0
    if args.worker:
        args.out.mkdir(parents=True, exist_ok=True)
        try:
            row = worker(args.worker, args.out, args.schedlab, args.hardware, args.bisect)
        except Exception:  # noqa: BLE001 - reported in the row
            row = {"name": args.worker, "error": traceback.format_exc()}
        (args.out / f"{args.worker}.row.json").write_text(json.dumps(row, indent=1))
        return 0
    names = args.only or list(MODELS)
    unknown = [n for n in names if n not in MODELS]
    if unknown:
        print(f"fit_validation: unknown model(s) {unknown}; known: {', '.join(MODELS)}", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    me = [sys.executable, str(Path(__file__).resolve()), "--schedlab", args.schedlab, "--out", str(args.out),
          "--hardware", args.hardware, "--bisect", str(args.bisect)]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(HERE.parent), os.environ.get("PYTHONPATH", "")]))
    context = json.loads(subprocess.run(me + ["--context"], capture_output=True, text=True, env=env, check=True).stdout)

    def one(name):
        started = time.time()
        try:
            done = subprocess.run(me + ["--worker", name], env=env, capture_output=True, text=True, timeout=args.timeout)
            tail = done.stderr.strip().splitlines()[-1:] or [f"exit {done.returncode}"]
        except subprocess.TimeoutExpired:
            tail = [f"timed out after {args.timeout} s"]
        path = args.out / f"{name}.row.json"
        row = json.loads(path.read_text()) if path.exists() else {"name": name, "error": f"the worker wrote no row: {tail[0]}"}
        print(f"fit_validation: {name} done in {time.time() - started:.0f} s", file=sys.stderr)
        return row

    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        rows = list(pool.map(one, names))
    result = {"context": context, "hardware": args.hardware, "summary": summarize(rows), "rows": rows}
    tmp = args.out / "fit_validation.json.tmp"
    tmp.write_text(json.dumps(result, indent=1))
    tmp.replace(args.out / "fit_validation.json")
    print(table(rows))
    print(json.dumps(result["summary"], indent=1))
    return 0 if not result["summary"]["failures"] else 1


if __name__ == "__main__":
    sys.exit(main())
