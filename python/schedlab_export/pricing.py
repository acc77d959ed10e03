"""Floating-point work of the operators whose cost depends on it, from shapes.

Standard library only: tests/exporter checks these formulas against
hand-computed values without torch. `snapshot.py` binds a scheduler node's
FX origin to its operator schema and calls `op_flops` with the arguments by
name (tensors given as their shapes, other arguments as their values).

Conventions (docs/exporter.md, "Flops"): a multiply-add counts 2; bias adds,
softmax and scaling are not counted; causal attention counts only the
unmasked scores (top-left aligned mask, as SDPA's `is_causal`), which is
what the flash / memory-efficient / cuDNN kernels compute up to tile edges;
attention backward counts 5 matrix products (the forward's S = QK^T
recomputed, dV, dP, dQ, dK) against the forward's 2, i.e. 2.5 x forward.
"""

from __future__ import annotations

from math import prod

MATMUL_OPS = ("mm", "addmm", "bmm", "baddbmm", "_scaled_mm", "_int_mm", "addmm_", "_addmm_activation")
ATTENTION_FORWARD_OPS = (
    "_scaled_dot_product_flash_attention",
    "_scaled_dot_product_efficient_attention",
    "_scaled_dot_product_cudnn_attention",
    "_scaled_dot_product_fused_attention_overrideable",
    "_flash_attention_forward",
    "_efficient_attention_forward",
)
ATTENTION_BACKWARD_OPS = tuple(op + "_backward" for op in ATTENTION_FORWARD_OPS)
CONVOLUTION_OPS = ("convolution", "_convolution", "cudnn_convolution", "convolution_overrideable")
CONVOLUTION_BACKWARD_OPS = ("convolution_backward", "convolution_backward_overrideable")

# Backward attention = this many times the forward's matrix-product work.
ATTENTION_BACKWARD_FACTOR = 2.5


def matmul_flops(m: int, k: int, n: int, batch: int = 1) -> int:
    """(batch x) an m x k by k x n product: one multiply-add per m*n*k."""
    return 2 * batch * m * n * k


def causal_scores(q_len: int, kv_len: int) -> int:
    """Unmasked entries of a top-left aligned causal mask (row i sees keys 0..i)."""
    full_rows = min(q_len, kv_len)
    # rows 0..full_rows-1 see i+1 keys; later rows (q_len > kv_len) see all kv_len
    return full_rows * (full_rows + 1) // 2 + max(0, q_len - kv_len) * kv_len


def attention_forward_flops(q_shape, k_shape, v_shape, is_causal: bool) -> int:
    """SDPA layout [batch..., heads, seq, head_dim]: S = QK^T and O = PV."""
    *lead, q_len, head_dim = q_shape
    kv_len = k_shape[-2]
    value_dim = v_shape[-1]
    rows = prod(lead)  # batch x query heads (GQA: query heads, as the kernels iterate)
    scores = causal_scores(q_len, kv_len) if is_causal else q_len * kv_len
    return 2 * rows * scores * (head_dim + value_dim)


def attention_backward_flops(q_shape, k_shape, v_shape, is_causal: bool) -> int:
    forward = attention_forward_flops(q_shape, k_shape, v_shape, is_causal)
    return int(forward * ATTENTION_BACKWARD_FACTOR)


def convolution_flops(weight_shape, out_shape, in_shape, transposed: bool) -> int:
    """Each weight element meets every output position of its batch once:
    2 * weight.numel() * batch * spatial positions (the output's for a normal
    convolution, the input's for a transposed one)."""
    batch = out_shape[0]
    spatial = prod(in_shape[2:]) if transposed else prod(out_shape[2:])
    return 2 * prod(weight_shape) * batch * spatial


def _matmul_from_args(op: str, a: dict) -> int | None:
    if op in ("mm", "_scaled_mm", "_int_mm"):
        x, w = a.get("self"), a.get("mat2")
        if x is None or w is None:
            return None
        return matmul_flops(x[-2], x[-1], w[-1])
    if op in ("addmm", "addmm_", "_addmm_activation"):
        x, w = a.get("mat1"), a.get("mat2")
        if x is None or w is None:
            return None
        return matmul_flops(x[-2], x[-1], w[-1])
    if op in ("bmm", "baddbmm"):
        x, w = (a.get("self"), a.get("mat2")) if op == "bmm" else (a.get("batch1"), a.get("batch2"))
        if x is None or w is None:
            return None
        return matmul_flops(x[-2], x[-1], w[-1], batch=prod(x[:-2]))
    return None


def op_flops(op: str, args: dict, out_shape=None) -> int | None:
    """Flops of one call of aten operator `op` (name without namespace and
    overload), given its arguments by schema name: tensors as shapes (lists
    of int), everything else as values. None when `op` is not priced by flops
    or an argument it needs is missing."""
    if op in MATMUL_OPS:
        return _matmul_from_args(op, args)
    if op in ATTENTION_FORWARD_OPS or op in ATTENTION_BACKWARD_OPS:
        q, k, v = args.get("query"), args.get("key"), args.get("value")
        if q is None or k is None or v is None:
            return None
        q, k, v = (_sdpa_layout(op, s) for s in (q, k, v))
        causal = _is_causal(args)
        if op in ATTENTION_BACKWARD_OPS:
            return attention_backward_flops(q, k, v, causal)
        return attention_forward_flops(q, k, v, causal)
    if op in CONVOLUTION_OPS:
        x, w = args.get("input"), args.get("weight")
        if x is None or w is None or out_shape is None:
            return None
        return convolution_flops(w, out_shape, x, bool(args.get("transposed", False)))
    if op in CONVOLUTION_BACKWARD_OPS:
        grad_out, x, w = args.get("grad_output"), args.get("input"), args.get("weight")
        if grad_out is None or x is None or w is None:
            return None
        mask = list(args.get("output_mask") or [True, True, True])
        one = convolution_flops(w, grad_out, x, bool(args.get("transposed", False)))
        return one * (int(bool(mask[0])) + int(bool(mask[1])))
    return None


def _seq_before_heads(op: str) -> bool:
    """Whether an attention operator is a low-level flash / memory-efficient
    kernel, whose operands are [batch, seq, heads, dim]."""
    return op.startswith("_flash_attention") or op.startswith("_efficient_attention")


def _sdpa_layout(op: str, shape):
    """An attention operand's shape in SDPA layout [batch..., heads, seq,
    dim]: heads moved before seq for the low-level kernels."""
    if _seq_before_heads(op):
        return [*shape[:-3], shape[-2], shape[-3], shape[-1]]
    return list(shape)


def _is_causal(args: dict) -> bool:
    """SDPA's `is_causal`, or the memory-efficient kernel's top-left mask type (1)."""
    return bool(args.get("is_causal", False)) or int(args.get("custom_mask_type", 0) or 0) == 1


def attention_record(op: str, args: dict) -> dict | None:
    """What one attention call computes (schedgraph node field `attention`,
    docs/schedgraph-1.md), from its arguments by schema name (tensors as
    shapes): the query, key and value shapes in SDPA layout, whether the mask
    is causal, whether an additive bias is read, and the dropout
    probability (the kernels then draw one random number per unmasked
    score). None for other operators and where an argument is missing or
    malformed."""
    if op not in ATTENTION_FORWARD_OPS and op not in ATTENTION_BACKWARD_OPS:
        return None
    shapes = [args.get(name) for name in ("query", "key", "value")]
    if any(not isinstance(s, list) or len(s) < 3 or not all(isinstance(d, int) and not isinstance(d, bool) for d in s)
           for s in shapes):
        return None
    if _seq_before_heads(op) and any(len(s) < 4 for s in shapes):
        return None
    dropout = args.get("dropout_p", 0.0)
    if isinstance(dropout, bool) or not isinstance(dropout, (int, float)) or not 0.0 <= float(dropout) <= 1.0:
        return None
    causal = _is_causal(args)
    bias = args.get("attn_bias", args.get("bias"))
    q, k, v = (_sdpa_layout(op, s) for s in shapes)
    return {"query": q, "key": k, "value": v, "causal": causal, "bias": bias is not None,
            "dropout_p": float(dropout)}


def _int_list(v, rank: int, name: str) -> list[int] | None:
    """A convolution argument of one int per spatial dim: ATen accepts a
    single int for all of them (broadcast here) or a list of that length."""
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return [v] * rank
    if isinstance(v, (list, tuple)) and len(v) == rank and all(isinstance(x, int) and not isinstance(x, bool) for x in v):
        return [int(x) for x in v]
    if isinstance(v, (list, tuple)) and len(v) == 1 and isinstance(v[0], int):
        return [int(v[0])] * rank
    return None


def convolution_record(op: str, args: dict, out_shape, memory_format: str | None) -> dict | None:
    """The geometry of one convolution call (schedgraph node field
    `convolution`, docs/schedgraph-1.md), from its arguments by schema name
    (tensors as shapes): the forward's input, weight and output shapes, the
    per-spatial-dim stride, padding, dilation and output padding, groups,
    whether it is transposed, and the memory format cuDNN sees
    (`channels_last` or `contiguous`); a backward call also says which
    gradients it computes (`output_mask`: input, weight, bias). None when an
    argument is missing or malformed: the time model then falls back to what
    shapes alone tell (docs/cost-model.md)."""
    backward = op in CONVOLUTION_BACKWARD_OPS
    if op not in CONVOLUTION_OPS and not backward:
        return None
    x, w = args.get("input"), args.get("weight")
    out = args.get("grad_output") if backward else out_shape
    shapes = (x, w, out)
    if any(not isinstance(s, list) or not all(isinstance(d, int) for d in s) for s in shapes):
        return None
    rank = len(x) - 2
    if rank < 1 or len(w) != rank + 2 or len(out) != rank + 2:
        return None
    fields = {}
    for name, default in (("stride", 1), ("padding", 0), ("dilation", 1), ("output_padding", 0)):
        value = _int_list(args.get(name, default), rank, name)
        if value is None:
            return None
        fields[name] = value
    groups = args.get("groups", 1)
    if isinstance(groups, bool) or not isinstance(groups, int) or groups < 1:
        return None
    record = {
        "input": list(x),
        "weight": list(w),
        "output": list(out),
        **fields,
        "groups": groups,
        "transposed": bool(args.get("transposed", False)),
    }
    if memory_format in ("channels_last", "contiguous"):
        record["memory_format"] = memory_format
    if backward:
        mask = args.get("output_mask") or [True, True, True]
        if not isinstance(mask, (list, tuple)) or len(mask) != 3:
            return None
        record["output_mask"] = [bool(m) for m in mask]
    return record


def channels_last(shape, stride) -> bool:
    """Whether ATen reads a 4-d (5-d) tensor of `shape` and `stride`
    (elements) as channels-last: its rule for strides (c10's
    is_channels_last_strides_2d/3d), which walks the dims from channels
    outward (C, then the spatial dims from the last, then N), each stride at
    least the previous one times its size, and calls the ambiguous layouts
    (every non-channel dim of size 1, N111) contiguous."""
    rank = len(shape)
    if rank not in (4, 5) or len(stride) != rank or stride[1] == 0:
        return False
    smallest = 0
    for d in [1, *range(rank - 1, 1, -1), 0]:
        if shape[d] == 0 or stride[d] < smallest:
            return False
        if d == 0 and smallest == stride[1]:
            return False
        smallest = stride[d] * (shape[d] if shape[d] > 1 else 1)
    return True


def own_convolution(records: list[dict], output, input_, weight) -> dict | None:
    """The one geometry among a convolution node's origin records that is the
    node's own: Inductor's origins of a buffer also hold what was inlined
    before it (an inference graph's conv node lists every earlier
    convolution, pooling and activation), so a record counts only when its
    forward output, input and weight shapes are the node's (shapes it does
    not know, None, match anything). Identical records are one; None when
    no record, or several different ones, remain."""
    def fits(r: dict) -> bool:
        if "output_mask" in r:  # a backward: its node's shapes are a tuple's items
            return True
        return all(want is None or list(want) == r[key] for key, want in (("output", output), ("input", input_), ("weight", weight)))
    own = []
    for r in records:
        if fits(r) and r not in own:
            own.append(r)
    return own[0] if len(own) == 1 else None


def convolution_memory_format(input_shape, input_stride, weight_shape, weight_stride) -> str:
    """The memory format ATen's cuDNN path runs a convolution in
    (cudnn_conv_suggest_memory_format): channels-last when the input or the
    weight is laid out so, else contiguous (NCHW), where cuDNN's
    tensor-core kernels transpose the operands."""
    if channels_last(input_shape, input_stride) or channels_last(weight_shape, weight_stride):
        return "channels_last"
    return "contiguous"


def op_class(op: str | None) -> str | None:
    """The time-model class of an extern operator (docs/schedmeasured-1.md)."""
    if op is None:
        return None
    if op in MATMUL_OPS:
        return "gemm"
    if op in ATTENTION_FORWARD_OPS or op in ATTENTION_BACKWARD_OPS or "attention" in op:
        return "attention"
    if op in CONVOLUTION_OPS or op in CONVOLUTION_BACKWARD_OPS:
        return "convolution"
    if op in ("copy_", "clone", "_to_copy", "copy"):
        return "copy"
    return None


def operator_name(kernel: str | None) -> str | None:
    """The operator of a kernel or FX target, without namespace or overload:
    `extern_kernels.mm`, `torch.ops.aten.mm.default`, `aten.mm.default`
    (str of an OpOverload) and `aten::mm` (profiler) all give `mm`."""
    if not kernel:
        return None
    if "::" in kernel:
        return kernel.split("::", 1)[1].split(".", 1)[0]
    parts = kernel.removeprefix("torch.ops.").split(".")
    if parts[0] == "extern_kernels" or len(parts) == 1:
        return parts[-1]
    return parts[1]
