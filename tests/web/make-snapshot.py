"""Writes a pickle with the structure of torch.cuda.memory._snapshot()
(segments with blocks, device_traces of allocator events), as
torch.cuda.memory._dump_snapshot() does (pickle.dump), for the page's
snapshot reader's exact figures. Prints the peaks the page must find:
{"peak_allocated", "peak_reserved"} (absolute bytes); with --peaks, of a
real snapshot, also the sizes of its allocations in order.

usage: python3 tests/web/make-snapshot.py OUT.pickle
       python3 tests/web/make-snapshot.py --peaks SNAPSHOT.pickle   (the peaks and allocations of a real one)
"""

import json
import pickle
import sys


def peaks(snapshot):
    """Allocated and reserved peaks of a snapshot: its device trace replayed
    from the segments' final state backwards (the test's oracle)."""
    allocated = sum(b["size"] for seg in snapshot["segments"] for b in seg.get("blocks", []) if b["state"] == "active_allocated")
    reserved = sum(seg["total_size"] for seg in snapshot["segments"])
    traces = snapshot.get("device_traces") or [[]]
    events = max(traces, key=len)
    da = {"alloc": 1, "free_completed": -1}
    dr = {"segment_alloc": 1, "segment_map": 1, "segment_free": -1, "segment_unmap": -1}
    allocated -= sum(da.get(e["action"], 0) * e.get("size", 0) for e in events)
    reserved -= sum(dr.get(e["action"], 0) * e.get("size", 0) for e in events)
    peak_a, peak_r = allocated, reserved
    for e in events:
        allocated += da.get(e["action"], 0) * e.get("size", 0)
        reserved += dr.get(e["action"], 0) * e.get("size", 0)
        peak_a, peak_r = max(peak_a, allocated), max(peak_r, reserved)
    return {"peak_allocated": peak_a, "peak_reserved": peak_r}


def allocations(snapshot):
    """The allocations of the device trace the peaks come from, each with
    its size (the page maps them to the graph's buffers)."""
    events = max(snapshot.get("device_traces") or [[]], key=len)
    return [e["size"] for e in events if e["action"] == "alloc"]


if sys.argv[1] == "--peaks":
    with open(sys.argv[2], "rb") as f:
        snapshot = pickle.load(f)
    print(json.dumps({**peaks(snapshot), "allocations": allocations(snapshot)}))
    sys.exit(0)

MiB = 1 << 20
frames = [{"filename": "model.py", "line": 12, "name": "forward"}]
# Events: a 20 MiB segment and two blocks, a 64 MiB segment and one block
# freed, a second 64 MiB block in a new segment; then the first segment's
# blocks freed and released.
events = [
    {"action": "segment_alloc", "addr": 0x7F0000000000, "size": 20 * MiB, "stream": 0, "frames": frames},
    {"action": "alloc", "addr": 0x7F0000000000, "size": 8 * MiB, "stream": 0, "frames": frames},
    {"action": "alloc", "addr": 0x7F0000800000, "size": 4 * MiB, "stream": 0, "frames": frames},
    {"action": "segment_alloc", "addr": 0x7F1000000000, "size": 64 * MiB, "stream": 0, "frames": frames},
    {"action": "alloc", "addr": 0x7F1000000000, "size": 64 * MiB, "stream": 0, "frames": frames},
    {"action": "free_requested", "addr": 0x7F1000000000, "size": 64 * MiB, "stream": 0, "frames": frames},
    {"action": "free_completed", "addr": 0x7F1000000000, "size": 64 * MiB, "stream": 0, "frames": frames},
    {"action": "alloc", "addr": 0x7F1000000000, "size": 48 * MiB, "stream": 0, "frames": frames},
    {"action": "free_requested", "addr": 0x7F0000000000, "size": 8 * MiB, "stream": 0, "frames": frames},
    {"action": "free_completed", "addr": 0x7F0000000000, "size": 8 * MiB, "stream": 0, "frames": frames},
    {"action": "free_requested", "addr": 0x7F0000800000, "size": 4 * MiB, "stream": 0, "frames": frames},
    {"action": "free_completed", "addr": 0x7F0000800000, "size": 4 * MiB, "stream": 0, "frames": frames},
    {"action": "segment_free", "addr": 0x7F0000000000, "size": 20 * MiB, "stream": 0, "frames": []},
]
# The state at the end: a 2 MiB segment from before the trace (one 1 MiB
# block allocated all along) and the 64 MiB segment holding the 48 MiB block.
segments = [
    {"device": 0, "address": 0x7E0000000000, "total_size": 2 * MiB, "allocated_size": MiB, "active_size": MiB,
     "requested_size": MiB, "stream": 0, "segment_type": "small", "segment_pool_id": (0, 0), "is_expandable": False,
     "frames": [], "blocks": [{"address": 0x7E0000000000, "size": MiB, "requested_size": MiB, "state": "active_allocated", "frames": frames},
                              {"address": 0x7E0000100000, "size": MiB, "requested_size": 0, "state": "inactive", "frames": []}]},
    {"device": 0, "address": 0x7F1000000000, "total_size": 64 * MiB, "allocated_size": 48 * MiB, "active_size": 48 * MiB,
     "requested_size": 48 * MiB, "stream": 0, "segment_type": "large", "segment_pool_id": (0, 0), "is_expandable": False,
     "frames": frames, "blocks": [{"address": 0x7F1000000000, "size": 48 * MiB, "requested_size": 48 * MiB, "state": "active_allocated", "frames": frames},
                                  {"address": 0x7F1003000000, "size": 16 * MiB, "requested_size": 0, "state": "inactive", "frames": []}]},
]
snapshot = {"segments": segments, "device_traces": [events], "allocator_settings": {"PYTORCH_CUDA_ALLOC_CONF": "", "max_split_size": -1},
            "external_annotations": [], "fraction": 1.0, "ok": True, "ratio": 0.5, "none": None}
with open(sys.argv[1], "wb") as f:
    pickle.dump(snapshot, f)
# Allocated: 1 MiB before, peak 1 + 8 + 4 + 64 = 77 MiB; reserved: 2 before, peak 2 + 20 + 64 = 86 MiB.
assert peaks(snapshot) == {"peak_allocated": 77 * MiB, "peak_reserved": 86 * MiB}
print(json.dumps(peaks(snapshot)))
