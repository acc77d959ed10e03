"""schedlab_export: export torch.compile graphs as schedgraph/1, with Inductor's
own scheduling decisions next to them (docs/exporter.md).

    import schedlab_export
    with schedlab_export.capture("out/", prefix="mymodel"):
        loss = torch.compile(model)(x).sum()
        loss.backward()

or, for a whole script: python -m schedlab_export --script train_step.py --out out/

Needs PyTorch 2.11 (compat.py checks the Inductor internals it reads).
`memory_estimate` needs only the standard library.
"""

from .compat import SUPPORTED_RELEASE, UnsupportedTorch, check_torch, missing_internals


def capture(out_dir, prefix: str = "graph", strict: bool = False, reset_dynamo: bool = True):
    """See session.capture (imported lazily: this package imports without torch)."""
    from .session import capture as _capture

    return _capture(out_dir, prefix=prefix, strict=strict, reset_dynamo=reset_dynamo)


__all__ = ["capture", "check_torch", "missing_internals", "SUPPORTED_RELEASE", "UnsupportedTorch"]
