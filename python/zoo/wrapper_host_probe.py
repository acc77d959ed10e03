"""Host cost of the operations an Inductor wrapper performs per call, timed
one kind at a time on the machine that measures the zoo (docs/cost-model.md,
"The host"). Each operation runs in a tight Python loop of N calls, the GPU
work (if any) queued asynchronously and synchronized once at the end, so the
per-call figure is the host's: what the fitted host costs of the time model
(per Triton launch, per extern call, per item, per view) should come near.

    PYTHONPATH=python python3 python/zoo/wrapper_host_probe.py --out FILE.json [--calls 20000] [--repeats 7]

Writes the device, the torch version, the full-speed host probe (the zoo's
fixed Python loop, run_zoo.py) and, per operation, the median over repeats of
the µs per call, with every repeat kept.
"""
import argparse
import json
import os
import statistics
import time

import torch

from schedlab_export.host_probe import probe_us


def _reinterpret():
    # What Inductor's generated wrappers bind `reinterpret_tensor` to.
    from torch._C._dynamo.guards import _reinterpret_tensor
    return _reinterpret_tensor


def _assert_size_stride():
    from torch._C._dynamo.guards import assert_size_stride
    return assert_size_stride


def operations(device):
    rt = _reinterpret()
    ass = _assert_size_stride()
    # Small operands: the GPU finishes each product before the host queues
    # the next, so the loop times the host alone.
    m, k, n = 32, 64, 128
    a = torch.randn(4, 8, k, device=device, dtype=torch.bfloat16)
    a2 = a.view(m, k)
    w = torch.randn(n, k, device=device, dtype=torch.bfloat16)
    wt = w.t().contiguous()
    bias = torch.randn(n, device=device, dtype=torch.bfloat16)
    out = torch.empty(m, n, device=device, dtype=torch.bfloat16)
    items = (out, bias, a)
    # Attention and convolution calls as ViT-S/16's wrapper makes them
    # (cuDNN attention over 197 tokens and over a multiple of 64, with the
    # log-sum-exp a training forward keeps; the patch convolution), at batch
    # 1 so that the GPU keeps ahead of the host.
    cudnn_attention_op = torch.ops.aten._scaled_dot_product_cudnn_attention.default
    convolution_op = torch.ops.aten.convolution.default
    q197 = torch.randn(1, 6, 197, 64, device=device, dtype=torch.bfloat16)
    q256 = torch.randn(1, 6, 256, 64, device=device, dtype=torch.bfloat16)
    image = torch.randn(1, 3, 224, 224, device=device, dtype=torch.bfloat16)
    patch = torch.randn(384, 3, 16, 16, device=device, dtype=torch.bfloat16)

    # An embedding bag as a recommender's wrapper calls it (DLRM: 4,096
    # bags of 20 lookups into a 100,000-row table), alone and with the four
    # items of its result taken and checked as the wrapper does.
    embedding_bag_op = torch.ops.aten._embedding_bag.default
    table = torch.randn(100_000, 64, device=device)
    bag_indices = torch.randint(0, 100_000, (4096 * 20,), device=device)
    bag_offsets = torch.arange(0, 4096 * 20, 20, device=device)

    def embedding_bag():
        return embedding_bag_op(table, bag_indices, bag_offsets, False, 0, False, None, False, -1)

    bag_items = [(tuple(t.size()), t.stride()) for t in embedding_bag()]

    def embedding_bag_items():
        r = embedding_bag()
        for i, (size, stride) in enumerate(bag_items):
            ass(r[i], size, stride)
        return r

    def cudnn_attention(q):
        return cudnn_attention_op(q, q, q, None, True, 0.0, False, False)

    ops = {
        "python_call": lambda: None,
        "reinterpret_tensor": lambda: rt(a, (m, k), (k, 1), 0),
        "empty_strided": lambda: torch.empty_strided((m, n), (n, 1), device=device, dtype=torch.bfloat16),
        "assert_size_stride": lambda: ass(out, (m, n), (n, 1)),
        "tuple_item": lambda: items[1],
        "addmm_out_plain": lambda: torch.addmm(bias, a2, wt, alpha=1, beta=1, out=out),
        "addmm_out_two_views": lambda: torch.addmm(bias, rt(a, (m, k), (k, 1), 0), rt(w, (k, n), (1, k), 0),
                                                   alpha=1, beta=1, out=out),
        "mm_out_plain": lambda: torch.mm(a2, wt, out=out),
        "mm_out_two_views": lambda: torch.mm(rt(a, (m, k), (k, 1), 0), rt(w, (k, n), (1, k), 0), out=out),
        "cudnn_attention_197": lambda: cudnn_attention(q197),
        "cudnn_attention_256": lambda: cudnn_attention(q256),
        "embedding_bag": embedding_bag,
        "embedding_bag_items": embedding_bag_items,
        "patch_convolution": lambda: convolution_op(image, patch, None, [16, 16], [0, 0], [1, 1], False, [0, 0], 1),
    }
    return ops


def time_op(fn, calls, device):
    for _ in range(200):
        fn()
    torch.cuda.synchronize(device)
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    elapsed = time.perf_counter() - start
    torch.cuda.synchronize(device)
    return elapsed / calls * 1e6


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--calls", type=int, default=20000)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    if args.calls < 1 or args.repeats < 1:
        parser.error("--calls and --repeats must be at least 1")
    if not torch.cuda.is_available():
        raise SystemExit("wrapper_host_probe: no CUDA device")
    device = torch.device("cuda", 0)
    ops = operations(device)
    samples = {name: [] for name in ops}
    probes = []
    # Interleaved repeats: a slow stretch of the host touches every operation alike.
    for _ in range(args.repeats):
        probes.append(min(probe_us() for _ in range(20)))
        for name, fn in ops.items():
            samples[name].append(round(time_op(fn, args.calls, device), 4))
    result = {
        "device": torch.cuda.get_device_name(device),
        "torch": torch.__version__,
        "calls_per_sample": args.calls,
        "host_probe_us": [round(p, 2) for p in probes],
        "us_per_call": {name: round(statistics.median(v), 4) for name, v in samples.items()},
        "samples_us": samples,
    }
    tmp = args.out + ".tmp"
    with open(tmp, "w") as f:
        json.dump(result, f, indent=1)
        f.write("\n")
    os.replace(tmp, args.out)
    print(json.dumps(result["us_per_call"], indent=1))


if __name__ == "__main__":
    main()
