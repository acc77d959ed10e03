"""What an SDPA backward allocates beyond its gradients, per backend (GPU).

    python3 python/zoo/sdpa_memory_probe.py --out sdpa_memory.json

For each backend (flash, memory-efficient, cuDNN), dtype and shape: the
forward runs under `sdpa_kernel(backend)`, then `torch.autograd.grad` runs
only the attention's backward node. Written per case: the shapes, the
allocated peak during the backward minus what was allocated before it
(`peak_delta_bytes`), the gradients' bytes, and the backward's allocation
events (size and action, from the allocator's history) so that the
transient buffers can be read off one by one. The memory-as-executed model
(core/memory/executed) prices the transient from these; the file is kept
in tests/data/measured/<gpu>/sdpa_memory.json.
"""

from __future__ import annotations

import argparse
import itertools
import json

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

BACKENDS = {"flash": SDPBackend.FLASH_ATTENTION, "efficient": SDPBackend.EFFICIENT_ATTENTION,
            "cudnn": SDPBackend.CUDNN_ATTENTION}
DTYPES = {"bf16": torch.bfloat16, "f16": torch.float16, "f32": torch.float32}


def shapes():
    # (batch, heads, query length, key length, head dim, causal)
    for b, h, s, d, causal in itertools.product((1, 4), (8, 12), (197, 512, 2048), (64, 128), (False, True)):
        yield b, h, s, s, d, causal
    yield 2, 16, 128, 1024, 64, False  # cross attention: keys longer than queries
    yield 2, 16, 1000, 1000, 80, False  # a head dim that is not a power of two


def probe(backend: str, dtype: str, b: int, h: int, sq: int, sk: int, d: int, causal: bool) -> dict:
    dt = DTYPES[dtype]
    q = torch.randn(b, h, sq, d, device="cuda", dtype=dt, requires_grad=True)
    k = torch.randn(b, h, sk, d, device="cuda", dtype=dt, requires_grad=True)
    v = torch.randn(b, h, sk, d, device="cuda", dtype=dt, requires_grad=True)
    with sdpa_kernel([BACKENDS[backend]]):
        out = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        op = out.grad_fn.name()
        g = torch.randn_like(out)
        torch.cuda.synchronize()
        # warm-up backward (workspace handles, plans) on a second graph
        out2 = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        torch.autograd.grad(out2, (q, k, v), g)
        del out2
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        before = torch.cuda.memory_allocated()
        torch.cuda.memory._record_memory_history(context=None, stacks="python", max_entries=100000)
        grads = torch.autograd.grad(out, (q, k, v), g)
        torch.cuda.synchronize()
        snap = torch.cuda.memory._snapshot()
        torch.cuda.memory._record_memory_history(enabled=None)
        peak = torch.cuda.max_memory_allocated()
    events = [{"action": e["action"], "size": e["size"]} for e in snap["device_traces"][0]
              if e["action"] in ("alloc", "free_requested")]
    grad_bytes = sum(x.untyped_storage().nbytes() for x in grads)
    return {"backend": backend, "dtype": dtype, "batch": b, "heads": h, "q_len": sq, "kv_len": sk,
            "head_dim": d, "causal": causal, "op": op, "peak_delta_bytes": peak - before,
            "grad_bytes": grad_bytes, "q_bytes": q.untyped_storage().nbytes(), "events": events}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    cases = []
    for backend, dtype in (("flash", "bf16"), ("efficient", "bf16"), ("cudnn", "bf16"), ("efficient", "f32"),
                           ("flash", "f16"), ("cudnn", "f16")):
        for shape in shapes():
            try:
                cases.append(probe(backend, dtype, *shape))
            except Exception as e:  # noqa: BLE001 - a backend refusing a shape is data too
                cases.append({"backend": backend, "dtype": dtype, "shape": list(shape), "error": str(e)[:300]})
            torch.cuda.empty_cache()
    with open(args.out, "w") as f:
        json.dump({"device": torch.cuda.get_device_name(), "torch": torch.__version__, "cases": cases}, f, indent=0)
    ok = [c for c in cases if "error" not in c]
    print(f"sdpa probe: {len(ok)} of {len(cases)} cases")
    for c in ok[:: max(1, len(ok) // 12)]:
        print(c["backend"], c["dtype"], c["batch"], c["heads"], c["q_len"], c["head_dim"], c["causal"],
              (c["peak_delta_bytes"] - c["grad_bytes"]) / c["q_bytes"])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
