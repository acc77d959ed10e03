// core/io — reading measured Chrome traces (`plan --measured-trace`) into
// core/measure's MeasuredTrace, under the reader policy of
// core/io/json_input.h (at most kMaxMeasuredBytes, nesting bounded).
//
// Two kinds of trace are read:
// - torch.profiler's export_chrome_trace (`profile.rankN.json`): GPU events
//   (`cat` "kernel", "gpu_memcpy", "gpu_memset"); NCCL kernels are the
//   communication. Split into the steps it profiled as
//   python/dist/trace_analysis.py split_steps and web/js/measured.js rawSteps
//   do (the twins): by the CPU time of each kernel's launch (its
//   cuda_runtime / cuda_driver event of the same `correlation`) within the
//   step annotations' CPU spans (`schedlab_step*` user annotations, else
//   torch.profiler's `ProfilerStep#N`), else at idle gaps over 1 ms.
// - python/dist's measured trace (`measured.rankN.trace.json`, one step):
//   `compute` and `comm` lanes, each event's kernel in args.kernel.
//
// Contract: load_measured_trace() refuses anything malformed with an Error
// naming the file and the place: not JSON, no `traceEvents` array, an event
// that is not an object, a GPU event or step annotation without a string
// `name` or a finite `ts` / non-negative `dur` (`traceEvents[12].dur`),
// and a trace without any GPU kernel.
#pragma once

#include <string>
#include <string_view>

#include "core/measure/measured_costs.h"

namespace schedlab {

// `where` prefixes every error (normally the file's path).
MeasuredTrace load_measured_trace(std::string_view json_text, const std::string& where);
// PATH or "-": read under the policy, then load_measured_trace.
MeasuredTrace load_measured_trace_file(const std::string& path);

}  // namespace schedlab
