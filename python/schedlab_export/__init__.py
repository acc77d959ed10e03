"""schedlab_export: export torch.compile graphs as schedgraph/1, with Inductor's
own scheduling decisions next to them (docs/exporter.md).

    import schedlab_export
    with schedlab_export.capture("out/", prefix="mymodel"):
        loss = torch.compile(model)(x).sum()
        loss.backward()

    with schedlab_export.apply(comm_passes=["overlap_schedule"]):
        loss = torch.compile(step)(x)      # runs in schedlab's order (apply.py)

or, for a whole script: python -m schedlab_export --script train_step.py --out out/

Needs PyTorch 2.11 (compat.py checks the Inductor internals it reads).
`memory_estimate` needs only the standard library.
"""

# apply.py imports torch only when its block is entered. Imported here so that
# the package's `apply` is the function, not the submodule of that name.
from .apply import apply
from .compat import SUPPORTED_RELEASE, UnsupportedTorch, check_torch, missing_internals


def capture(out_dir, prefix: str = "graph", strict: bool = False, reset_dynamo: bool = True, **measure_options):
    """See session.capture (imported lazily: this package imports without torch).
    measure_options: measure, cudagraphs, measure_on_exit, samples."""
    from .session import capture as _capture

    return _capture(out_dir, prefix=prefix, strict=strict, reset_dynamo=reset_dynamo, **measure_options)


__all__ = ["apply", "capture", "check_torch", "missing_internals", "SUPPORTED_RELEASE", "UnsupportedTorch"]
