"""Which PyTorch the exporter supports, and a check that names what is missing.

The exporter reads Inductor internals that change between releases. It was
written against PyTorch 2.11; on another release it runs only if every
internal below is still there, and otherwise refuses with the list of what
is missing (rather than exporting something subtly wrong).
"""

from __future__ import annotations

import importlib
import inspect
import warnings

SUPPORTED_RELEASE = "2.11"

# (module, attribute path) pairs the exporter calls or patches.
REQUIRED_INTERNALS = [
    ("torch._inductor.scheduler", "Scheduler"),
    ("torch._inductor.scheduler", "SchedulerNode"),
    ("torch._inductor.scheduler", "ExternKernelSchedulerNode"),
    ("torch._inductor.scheduler", "NopKernelSchedulerNode"),
    ("torch._inductor.scheduler", "FusedSchedulerNode"),
    ("torch._inductor.scheduler", "Scheduler.fuse_nodes"),
    ("torch._inductor.scheduler", "Scheduler.compute_last_usage"),
    ("torch._inductor.scheduler", "BaseSchedulerNode.get_estimated_runtime"),
    ("torch._inductor.scheduler", "BaseSchedulerNode.estimate_flops"),
    ("torch._inductor.debug", "log_ir_pre_fusion"),
    ("torch._inductor.memory", "reorder_for_peak_memory"),
    ("torch._inductor.memory", "prepare_planning_info"),
    ("torch._inductor.memory", "topological_sort_lpmf"),
    ("torch._inductor.memory", "topological_sort_bfs"),
    ("torch._inductor.memory", "topological_sort_dfs"),
    ("torch._inductor.comms", "sink_waits"),
    ("torch._inductor.comms", "raise_comms"),
    ("torch._inductor.comms", "reorder_compute_for_overlap"),
    ("torch._inductor.comms", "reorder_communication_preserving_peak_memory"),
    ("torch._inductor.comms", "sink_waits_iterative"),
    ("torch._inductor.comms", "reorder_compute_and_comm_for_overlap"),
    ("torch._inductor.comm_analysis", "get_collective_group_size"),
    ("torch._inductor.dependencies", "MemoryDep"),
    ("torch._inductor.dependencies", "StarDep"),
    ("torch._inductor.dependencies", "WeakDep"),
    ("torch._inductor.ir", "NoneLayout"),
    ("torch._inductor.ir", "MultiOutputLayout"),
    ("torch._inductor.ir", "MultiOutput"),
    ("torch._inductor.utils", "is_collective"),
    ("torch._inductor.utils", "is_wait"),
    ("torch._inductor.utils", "contains_collective"),
    ("torch._inductor.utils", "is_nonfreeable_buffers"),
    ("torch._inductor.graph", "GraphLowering.get_dep_size_hint"),
    ("torch._inductor.config", "reorder_for_peak_memory"),
    ("torch._inductor.config", "reorder_for_compute_comm_overlap_passes"),
    ("torch._inductor.config", "fx_graph_cache"),
]

# What --measure (capture(measure=True)) patches in addition.
MEASURE_INTERNALS = [
    ("torch._inductor.scheduler", "Scheduler.enter_context"),
    ("torch._inductor.codegen.wrapper", "PythonWrapperCodegen.generate_kernel_call"),
    ("torch._inductor.output_code", "CompiledFxGraph.__init__"),
    ("torch._inductor.output_code", "CompiledFxGraph.__call__"),
]

# Signatures the hooks rely on: name -> parameters that must come first, in order.
REQUIRED_SIGNATURES = {
    ("torch._inductor.memory", "reorder_for_peak_memory"): [
        "nodes", "name_to_buf", "name_to_fused_node", "graph_inputs", "graph_outputs",
    ],
    ("torch._inductor.memory", "topological_sort_lpmf"): [
        "nodes", "name_to_freeable_input_buf", "name_to_buf", "graph_outputs",
    ],
    ("torch._inductor.debug", "log_ir_pre_fusion"): ["nodes"],
    ("torch._inductor.scheduler", "Scheduler.fuse_nodes"): ["self", "nodes"],
    ("torch._inductor.scheduler", "Scheduler.compute_last_usage"): ["self"],
}


class UnsupportedTorch(RuntimeError):
    """This PyTorch lacks Inductor internals the exporter needs."""


def _resolve(module_name: str, path: str):
    obj = importlib.import_module(module_name)
    for part in path.split("."):
        obj = getattr(obj, part)
    return obj


def _absent(internals) -> list[str]:
    missing = []
    for module_name, path in internals:
        try:
            _resolve(module_name, path)
        except (ImportError, AttributeError):
            missing.append(f"{module_name}.{path}")
    return missing


def missing_internals() -> list[str]:
    """Names of the required internals this PyTorch lacks or changed."""
    missing = _absent(REQUIRED_INTERNALS)
    for (module_name, path), params in REQUIRED_SIGNATURES.items():
        try:
            found = list(inspect.signature(_resolve(module_name, path)).parameters)
        except (ImportError, AttributeError, TypeError, ValueError):
            continue  # already reported above
        if found[: len(params)] != params:
            missing.append(f"{module_name}.{path}({', '.join(params)}, ...) [has ({', '.join(found)})]")
    if not _weak_dep_has_is_fake():
        missing.append("torch._inductor.dependencies.WeakDep.is_fake")
    return missing


def missing_measure_internals() -> list[str]:
    """Names of the internals measurement patches that this PyTorch lacks."""
    return _absent(MEASURE_INTERNALS)


def _weak_dep_has_is_fake() -> bool:
    try:
        from torch._inductor.dependencies import WeakDep

        return "is_fake" in inspect.signature(WeakDep).parameters
    except (ImportError, TypeError, ValueError):
        return False


def check_torch() -> str:
    """Returns torch's version; raises UnsupportedTorch naming what is missing."""
    try:
        import torch
    except ImportError as e:
        raise UnsupportedTorch("schedlab_export needs PyTorch (torch is not importable)") from e
    version = torch.__version__
    missing = missing_internals()
    if missing:
        raise UnsupportedTorch(
            f"schedlab_export supports PyTorch {SUPPORTED_RELEASE}; this is {version}, "
            f"whose Inductor lacks: " + "; ".join(missing)
        )
    if not version.startswith(SUPPORTED_RELEASE + "."):
        warnings.warn(
            f"schedlab_export was written for PyTorch {SUPPORTED_RELEASE}; {version} has every "
            "internal it uses, but its decisions were not checked on this release",
            stacklevel=2,
        )
    return version
