"""schedlab in Python: plan a schedgraph/1 graph in-process, read the plan
as Python objects (docs/python.md).

    import schedlab
    plan = schedlab.plan("model_1_bwd.post.json", comm_passes=["overlap_schedule"], hardware="h200")
    plan["order"], plan["memory"]["peak"], plan["simulation"]["step_time_us"]

`plan` takes a graph as a dict or a file path and returns the schedplan/1
document (docs/schedplan-1.md) as dicts and lists, value for value what
`schedlab plan GRAPH -o PLAN.json` writes, through the bindings (pybind/,
the module `schedlab._core`): the core's one pipeline, no subprocess and no
JSON text in between. The wheel also ships the `schedlab` command line
(`cli_path()`, the `schedlab` script) and the exporter, `schedlab_export`
(`schedlab.export`; `schedlab.apply` is its `apply`).

Where the bindings come from: the installed wheel (`pip install .`), or in
a checkout the module CMake builds into `<build>/python/schedlab/` (found
through PYTHONPATH, or in the checkout's `build/` by itself).
"""

from __future__ import annotations

import os
from pathlib import Path
from pkgutil import extend_path
from typing import Sequence

# The module may sit in another folder named schedlab on sys.path (a build
# tree's <build>/python/schedlab): this package then spans both.
__path__ = extend_path(__path__, __name__)
_CHECKOUT_BUILD = Path(__file__).resolve().parents[2] / "build" / "python" / "schedlab"
if (Path(__file__).resolve().parents[2] / "CMakeLists.txt").is_file() and _CHECKOUT_BUILD.is_dir():
    __path__.append(str(_CHECKOUT_BUILD))

try:
    from . import _core
except ImportError as e:  # no bindings built for this Python: the CLI still works
    _core = None
    _CORE_MISSING = str(e)

    class Error(ValueError):
        """A graph or option schedlab refuses (the CLI's exit 1)."""

    class OptionError(Error):
        """An option schedlab refuses (the CLI's exit 2)."""
else:
    Error = _core.Error
    OptionError = _core.OptionError

try:
    from ._version import __version__  # written into the wheel by the build backend
except ImportError:
    __version__ = "0+checkout"


class BindingsUnavailable(ImportError):
    """This installation has no in-process bindings (schedlab._core)."""


def bindings_available() -> bool:
    return _core is not None


def _bindings():
    if _core is None:
        raise BindingsUnavailable(
            "schedlab's in-process bindings (schedlab._core) are not available: install the package "
            "(pip install . in the checkout) or build them (cmake --build build; needs python3-dev and pybind11-dev)"
            f" [{_CORE_MISSING}]")
    return _core


def plan_options(memory_methods: Sequence[str] | None = None, comm_passes: Sequence[str] | None = None,
                 comm_knobs: dict | None = None, fuse: bool | None = None,
                 skip_invalid_memory_methods: bool | None = None, runtime_source: str | None = None) -> dict:
    """The options document core/io reads (docs/web.md's optionsJson), with
    only the options given; the rest keep the CLI's defaults."""
    given = {"memory_methods": memory_methods, "comm_passes": comm_passes, "comm": comm_knobs, "fuse": fuse,
             "skip_invalid_memory_methods": skip_invalid_memory_methods, "runtime_source": runtime_source}
    return {k: (list(v) if k in ("memory_methods", "comm_passes") else v) for k, v in given.items() if v is not None}


def plan(graph, *, memory_methods: Sequence[str] | None = None, comm_passes: Sequence[str] | None = None,
         comm_knobs: dict | None = None, fuse: bool | None = None, hardware: str | os.PathLike | None = None,
         skip_invalid_memory_methods: bool | None = None, runtime_source: str | None = None) -> dict:
    """The plan of `graph` (a schedgraph/1 dict, or a file path) as Python
    objects: `schedlab plan GRAPH -o PLAN.json [--memory-methods ...]
    [--comm-passes ...] [--comm-knob K=V] [--no-fuse] [--hardware NAME|FILE]`
    in-process. Raises Error (the graph refused, its place named),
    OptionError, or BindingsUnavailable."""
    options = plan_options(memory_methods, comm_passes, comm_knobs, fuse, skip_invalid_memory_methods, runtime_source)
    return _bindings().plan(graph, options, None if hardware is None else os.fspath(hardware))


def price(graph, *, hardware: str | os.PathLike | None = None) -> dict:
    """Per-node times of `graph` (a dict or a file path) on a hardware
    profile (a built-in name or a profile file; None: the default), priced
    once by the core (core/cost's price_graph): {hardware, model, nodes,
    calibrated_us, pass_us, pass_sources, classes}, the lists in node order.
    calibrated_us is what a plan simulates with (the fitted laws; collectives
    by the profile's measured curves where it has them)."""
    return _bindings().price(graph, None if hardware is None else os.fspath(hardware))


def validate(graph) -> dict:
    """`schedlab validate`'s counts of a graph (a dict or a file path)."""
    return _bindings().validate(graph)


def memory_methods() -> list[dict]:
    """[{name, summary, default}]: core/memory's registry."""
    return _bindings().memory_methods()


def comm_passes() -> list[dict]:
    """[{name, summary, default}]: core/comms' registry."""
    return _bindings().comm_passes()


def hardware_profiles() -> list[str]:
    """The built-in hardware profiles' names."""
    return _bindings().hardware_profiles()


def cli_path() -> str | None:
    """The `schedlab` binary shipped in this package (the wheel's), or None."""
    path = Path(__file__).resolve().parent / "bin" / "schedlab"
    return str(path) if path.is_file() and os.access(path, os.X_OK) else None


def __getattr__(name: str):
    # The exporter, imported on first use (it imports no torch until used).
    if name in ("export", "apply", "capture"):
        import schedlab_export

        return schedlab_export if name == "export" else getattr(schedlab_export, name)
    raise AttributeError(f"module 'schedlab' has no attribute {name!r}")


__all__ = ["plan", "plan_options", "price", "validate", "memory_methods", "comm_passes", "hardware_profiles", "cli_path",
           "bindings_available", "Error", "OptionError", "BindingsUnavailable", "__version__"]
