"""What a convolution backward allocates beyond its gradients (GPU).

    python3 python/zoo/conv_memory_probe.py --out conv_memory.json

For each case, `aten.convolution_backward` runs as Inductor's generated code
calls it (a fallback kernel, cuDNN's default heuristics, no benchmarking):
once to warm up (cuDNN plans, handles), then once more with the allocator's
history on. Written per case: the convolution's shape (batch, input and
output channels, spatial size, kernel, stride, padding, groups, dtype,
memory format, which gradients are asked for), the bytes of its operands and
gradients, the allocated peak during the call minus what was allocated
before it (`peak_delta_bytes`), and the call's allocation events (action and
size), so that cuDNN's workspaces can be read off one by one. Memory as
executed (core/memory/executed) prices a convolution backward's transient
from these; the file is kept in tests/data/measured/<gpu>/conv_memory.json.
"""

from __future__ import annotations

import argparse
import json
import random

import torch

DTYPES = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16}


def shapes(count: int, seed: int = 0):
    """A fixed random sample of convolution shapes around the ones vision
    models use: stems (few input channels, large kernels), 3x3 and 1x1
    blocks, strided downsampling, grouped and depthwise convolutions."""
    rng = random.Random(seed)
    channels = (3, 8, 16, 32, 48, 64, 96, 128, 192, 256, 384, 512)
    for _ in range(count):
        kernel = rng.choice((1, 1, 3, 3, 3, 5, 7))
        stride = rng.choice((1, 1, 1, 2))
        c_in = rng.choice(channels)
        c_out = rng.choice(channels[1:])
        groups = 1
        if rng.random() < 0.1 and c_in >= 8:
            groups = c_in if rng.random() < 0.5 else 4 if c_in % 4 == 0 and c_out % 4 == 0 else 1
            if groups == c_in:
                c_out = c_in
        size = rng.choice((7, 8, 14, 16, 28, 32, 56, 64, 112, 128))
        batch = rng.choice((1, 2, 4, 8, 16, 32))
        while batch * max(c_in, c_out) * size * size > (1 << 26) and batch > 1:
            batch //= 2
        dtype = rng.choice(("f32", "f32", "bf16", "f16"))
        channels_last = rng.random() < 0.2
        mask = [rng.random() < 0.9 or c_in <= 4, True, False]
        yield batch, c_in, c_out, size, kernel, stride, groups, dtype, channels_last, mask


def probe(batch, c_in, c_out, size, kernel, stride, groups, dtype, channels_last, mask) -> dict:
    dt = DTYPES[dtype]
    fmt = torch.channels_last if channels_last else torch.contiguous_format
    pad = kernel // 2
    x = torch.randn(batch, c_in, size, size, device="cuda", dtype=dt).to(memory_format=fmt)
    w = torch.randn(c_out, c_in // groups, kernel, kernel, device="cuda", dtype=dt).to(memory_format=fmt)
    out_size = (size + 2 * pad - kernel) // stride + 1
    g = torch.randn(batch, c_out, out_size, out_size, device="cuda", dtype=dt).to(memory_format=fmt)

    def call():
        return torch.ops.aten.convolution_backward.default(g, x, w, [c_out], [stride, stride], [pad, pad], [1, 1],
                                                          False, [0, 0], groups, mask)

    grads = call()  # warm-up: cuDNN's plan and handle
    del grads
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    before = torch.cuda.memory_allocated()
    torch.cuda.memory._record_memory_history(context=None, stacks="python", max_entries=100000)
    grads = call()
    torch.cuda.synchronize()
    snap = torch.cuda.memory._snapshot()
    torch.cuda.memory._record_memory_history(enabled=None)
    peak = torch.cuda.max_memory_allocated()
    events = [[e["action"][0], e["size"]] for e in snap["device_traces"][0] if e["action"] in ("alloc", "free_requested")]
    grad_bytes = sum(t.untyped_storage().nbytes() for t in grads if t is not None)
    return {"batch": batch, "c_in": c_in, "c_out": c_out, "size": size, "kernel": kernel, "stride": stride,
            "padding": pad, "groups": groups, "dtype": dtype, "channels_last": channels_last, "mask": mask,
            "input_bytes": x.untyped_storage().nbytes(), "weight_bytes": w.untyped_storage().nbytes(),
            "grad_output_bytes": g.untyped_storage().nbytes(), "grad_bytes": grad_bytes,
            "peak_delta_bytes": peak - before, "events": events}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    parser.add_argument("--count", type=int, default=400)
    args = parser.parse_args()
    cases = []
    for shape in shapes(args.count):
        try:
            cases.append(probe(*shape))
        except Exception as e:  # noqa: BLE001 - a refused shape is data too
            cases.append({"shape": list(shape), "error": str(e)[:300]})
        torch.cuda.empty_cache()
    with open(args.out, "w") as f:
        json.dump({"device": torch.cuda.get_device_name(), "torch": torch.__version__,
                   "cudnn": torch.backends.cudnn.version(), "cases": cases}, f, separators=(",", ":"))
    ok = [c for c in cases if "error" not in c]
    print(f"conv probe: {len(ok)} of {len(cases)} cases")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
